/*
 * draw.c - the query draw shared by mh_bench and mh_probe (draw.h).
 */
#include "draw.h"

#include <string.h>

uint64_t mhb_mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void mhb_draw_query(const mh_access *t, size_t n, unsigned ops, unsigned dir,
                    uint64_t range_bytes, uint64_t *rng, mh_query *q)
{
    size_t j = (size_t)(mhb_mix(rng) % n);
    for (int tries = 0; tries < 256 && !(ops & (1u << t[j].op)); tries++)
        j = (size_t)(mhb_mix(rng) % n);
    unsigned bits = 0;
    while (bits < 63 && ((uint64_t)1 << bits) < n)
        bits++;
    unsigned r = (unsigned)(mhb_mix(rng) % (bits + 1));
    uint64_t d = r == 0 ? 0 : mhb_mix(rng) & (((uint64_t)1 << r) - 1);
    size_t k;
    if (dir == MH_FORWARD)
        k = d > j ? 0 : j - (size_t)d;
    else
        k = d >= n - 1 - j ? n - 1 : j + (size_t)d;
    mh_query_init(q); /* every field, struct_size included, then ours */
    q->start_kind = MH_FROM_TRANSITION;
    q->direction = dir;
    q->start = t[k].transition;
    q->ops = ops;
    if (range_bytes == 0) {
        q->addr_first = 0;
        q->addr_last = UINT64_MAX;
    } else {
        q->addr_first = t[j].physical & ~(range_bytes - 1);
        q->addr_last = q->addr_first + (range_bytes - 1);
    }
}
