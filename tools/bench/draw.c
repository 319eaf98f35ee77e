/*
 * draw.c - the query draw shared by mh_bench and mh_probe (draw.h).
 */
#include "draw.h"

#include <stdlib.h>
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

typedef struct ivl {
    uint64_t lo, hi;
} ivl;

static int cmp_ivl(const void *x, const void *y)
{
    const ivl *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

int mhb_trace_index_make(const mh_access *t, size_t n, mhb_trace_index *x)
{
    memset(x, 0, sizeof *x);
    size_t nt = 0;
    for (size_t i = 0; i < n; i++)
        nt += i == 0 || t[i].transition != t[i - 1].transition;
    ivl *v = malloc((n ? n : 1) * sizeof *v);
    x->trans = malloc((nt ? nt : 1) * sizeof *x->trans);
    if (v == NULL || x->trans == NULL) {
        free(v);
        mhb_trace_index_free(x);
        return MH_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || t[i].transition != t[i - 1].transition)
            x->trans[x->ntrans++] = t[i].transition;
        v[i].lo = t[i].physical;
        v[i].hi = t[i].physical + (t[i].size - 1); /* accesses never wrap */
    }
    qsort(v, n, sizeof *v, cmp_ivl);
    /* merge in place: overlapping or touching intervals become one */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && (v[m - 1].hi == UINT64_MAX || v[i].lo <= v[m - 1].hi + 1)) {
            if (v[i].hi > v[m - 1].hi)
                v[m - 1].hi = v[i].hi;
        } else {
            v[m++] = v[i];
        }
    }
    x->lo = malloc((m ? m : 1) * sizeof *x->lo);
    x->hi = malloc((m ? m : 1) * sizeof *x->hi);
    if (x->lo == NULL || x->hi == NULL) {
        free(v);
        mhb_trace_index_free(x);
        return MH_ENOMEM;
    }
    for (size_t i = 0; i < m; i++) {
        x->lo[i] = v[i].lo;
        x->hi[i] = v[i].hi;
    }
    x->nivl = m;
    free(v);
    return MH_OK;
}

void mhb_trace_index_free(mhb_trace_index *x)
{
    free(x->trans);
    free(x->lo);
    free(x->hi);
    memset(x, 0, sizeof *x);
}

int mhb_untouched(const mhb_trace_index *x, uint64_t a, uint64_t b)
{
    /* the first interval ending at or after a: earlier ones end before a
     * and later ones start after it ends, so [a, b] is untouched exactly
     * when there is none or it starts after b */
    size_t lo = 0, hi = x->nivl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->hi[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == x->nivl || x->lo[lo] > b;
}

static void set_start(const mhb_trace_index *x, unsigned ops, unsigned dir,
                      uint64_t *rng, mh_query *q)
{
    mh_query_init(q); /* every field, struct_size included, then ours */
    q->start_kind = MH_FROM_TRANSITION;
    q->direction = dir;
    q->start = x->ntrans ? x->trans[mhb_mix(rng) % x->ntrans] : 0;
    q->ops = ops;
}

#define MHB_NEAR_BYTES 65536u /* "a random address near one": +- 64 KiB */

void mhb_draw_user(const mh_access *t, size_t n, const mhb_trace_index *x,
                   unsigned ops, unsigned dir, uint64_t range_bytes,
                   uint64_t *rng, mh_query *q)
{
    set_start(x, ops, dir, rng, q);
    uint64_t a = t[mhb_mix(rng) % n].physical;
    if (mhb_mix(rng) % 5 == 0) { /* 20 %: near an accessed address */
        uint64_t off = mhb_mix(rng) % (2u * MHB_NEAR_BYTES + 1);
        a = off >= MHB_NEAR_BYTES ? a + (off - MHB_NEAR_BYTES) /* may wrap: */
                                  : a - (MHB_NEAR_BYTES - off); /* any address is one */
    }
    if (range_bytes == 0) {
        q->addr_first = 0;
        q->addr_last = UINT64_MAX;
    } else {
        q->addr_first = a & ~(range_bytes - 1);
        q->addr_last = q->addr_first + (range_bytes - 1);
    }
}

/* The first aligned range of w bytes inside [glo, ghi], drawn among those
 * that fit; 0 when none fits. */
static int fit(uint64_t glo, uint64_t ghi, uint64_t w, uint64_t *rng,
               uint64_t *first)
{
    uint64_t a = (glo + (w - 1)) & ~(w - 1);
    if (a < glo || a > ghi || ghi - a < w - 1) /* wrapped, or too small */
        return 0;
    uint64_t slots = (ghi - a - (w - 1)) / w + 1;
    *first = a + (mhb_mix(rng) % slots) * w;
    return 1;
}

int mhb_draw_never(const mhb_trace_index *x, unsigned ops, unsigned dir,
                   uint64_t range_bytes, uint64_t *rng, mh_query *q)
{
    if (range_bytes == 0)
        return 0;
    /* gap g lies between interval g - 1 and interval g: gap 0 below the
     * lowest, gap nivl above the highest */
    size_t ngaps = x->nivl + 1;
    for (int tries = 0; tries < 4096; tries++) {
        size_t g = (size_t)(mhb_mix(rng) % ngaps);
        if (g > 0 && x->hi[g - 1] == UINT64_MAX)
            continue;
        if (g < x->nivl && x->lo[g] == 0)
            continue;
        uint64_t glo = g == 0 ? 0 : x->hi[g - 1] + 1;
        uint64_t ghi = g == x->nivl ? UINT64_MAX : x->lo[g] - 1;
        uint64_t a;
        if (!fit(glo, ghi, range_bytes, rng, &a))
            continue;
        /* proven against the address set, not trusted from the arithmetic */
        if (!mhb_untouched(x, a, a + (range_bytes - 1)))
            continue;
        set_start(x, ops, dir, rng, q);
        q->addr_first = a;
        q->addr_last = a + (range_bytes - 1);
        return 1;
    }
    return 0;
}
