/*
 * group_masks.c - the chunk walk's group masks (src/query.c, scan_chunk:
 * groups of 32 rows of a decoded block wholly within one chunk, passed
 * unread when no granule of theirs meets the query's) against the
 * brute-force oracle.
 *
 * The trace puts most accesses in a few hot regions, so that chunks hold
 * thousands of rows over a few KiB: a hot line of 2 KiB (its granules
 * alias modulo 64, so masks share bits), a region ending at 2^64 - 1 (the
 * granule of a row's last byte computed without overflow), rows of 64 and
 * 4096 bytes in some stretches (blocks whose largest size spans more than
 * one granule, and more than 64 of them) and scattered rare addresses.
 * Narrow questions (1 to 16 bytes, on accessed addresses, next to them and
 * in gaps; ranges straddling granules) from a transition or an id, both
 * directions, every op set, max 1, 10 and 100, end bounds; each asked
 * three times on one reader (the first computes the masks of the groups
 * it enters, the others pass groups by them), then cursors read in pieces
 * and resume chains; again with a cache of one block, so that masks are
 * dropped and recomputed as blocks are decoded again. The reader's count
 * of groups passed must grow: a run that never took the path fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

#define N 240000

static mh_access all[N];

static void make_trace(void) {
    tu_rng g = {2026};
    uint64_t t = 5;
    for (size_t i = 0; i < N; i++) {
        mh_access *a = &all[i];
        memset(a, 0, sizeof *a);
        t += tu_below(&g, 3) == 0 ? 1 + tu_below(&g, 2) : 0;
        a->transition = t;
        a->id = i;
        a->op = (uint8_t)tu_below(&g, 2); /* read, write */
        unsigned k = (unsigned)tu_below(&g, 100);
        a->size = 1u << tu_below(&g, 4);
        if (k < 70) { /* the hot line */
            a->physical = 0x7ffe0000u + (tu_below(&g, 2048) & ~(uint64_t)(a->size - 1u));
        } else if (k < 82) { /* the top of the space */
            a->physical = UINT64_MAX - 1023 + tu_below(&g, 1024);
            if (a->physical > UINT64_MAX - (a->size - 1u))
                a->physical = UINT64_MAX - (a->size - 1u);
        } else if (k < 88 && (i / 20000) % 3 == 1) { /* wide rows */
            a->size = tu_below(&g, 2) ? 64 : 4096;
            a->physical = 0x7ffe0000u + tu_below(&g, 2048);
        } else if (k < 95) { /* a second, wider hot region */
            a->physical = 0x10000000u + 8 * tu_below(&g, 4096);
        } else { /* rare */
            a->physical = 0x400000u + 16 * tu_below(&g, 1u << 20);
        }
        if (tu_below(&g, 2)) {
            a->has_linear = 1;
            a->linear = a->physical ^ 0x1000;
        }
    }
}

static uint64_t passed(const mh_reader *r) {
    return atomic_load(&((mh_reader *)r)->groups_passed);
}

static void one_query(tu_rng *g, mh_query *q) {
    mh_query_init(q);
    const mh_access *a = &all[tu_below(g, N)];
    uint64_t w = 1 + tu_below(g, 16);
    uint64_t at = a->physical;
    uint64_t how = tu_below(g, 4), d = tu_below(g, 9);
    if (how == 1) /* inside or just past it */
        at = at > UINT64_MAX - d ? UINT64_MAX : at + d;
    else if (how == 2) /* just before it */
        at = at > d ? at - d : 0;
    else if (how == 3) /* anywhere in the hot line */
        at = 0x7ffe0000u + tu_below(g, 2048);
    q->addr_first = at;
    q->addr_last = at > UINT64_MAX - (w - 1) ? UINT64_MAX : at + (w - 1);
    q->direction = tu_below(g, 2) ? MH_FORWARD : MH_BACKWARD;
    q->ops = 1u + (uint32_t)tu_below(g, 3); /* read, write, both */
    if (tu_below(g, 5) == 0) {
        q->start_kind = MH_FROM_ID;
        q->start = tu_below(g, N + 2);
    } else {
        q->start_kind = MH_FROM_TRANSITION;
        q->start = all[0].transition + tu_below(g, all[N - 1].transition + 2);
    }
    if (tu_below(g, 6) == 0) {
        const mh_access *e = &all[tu_below(g, N)];
        q->end_kind = tu_below(g, 2) ? MH_END_TRANSITION : MH_END_ID;
        q->end = q->end_kind == MH_END_TRANSITION ? e->transition : e->id;
    }
}

static void queries(const mh_reader *r, uint64_t seed, size_t count) {
    tu_rng g = {seed};
    static const size_t maxes[] = {1, 10, 100};
    uint64_t before = passed(r);
    for (size_t i = 0; i < count; i++) {
        mh_query q;
        one_query(&g, &q);
        size_t max = maxes[tu_below(&g, 3)];
        for (int k = 0; k < 3; k++)
            tu_check_query(r, all, N, &q, max);
        if (i % 16 == 0)
            tu_check_cursor(r, all, N, &q, 300, &g);
        if (i % 16 == 8)
            tu_check_chain(r, all, N, &q, 4, &g);
    }
    CHECK(passed(r) > before);
}

int main(int argc, char **argv) {
    size_t count = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 1500;
    make_trace();
    char dir[256], store[300];
    tu_mkdtemp(dir, sizeof dir, "gmask");
    tu_join(store, sizeof store, dir, "s");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.commit_accesses = N / 2; /* two segments */
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &o, &w));
    for (size_t i = 0; i < N; i += 10000)
        CHECK_OK(mh_writer_append_batch(w, all + i, N - i < 10000 ? N - i : 10000, NULL));
    CHECK_OK(mh_writer_close(w));
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    queries(r, 1, count);
    CHECK_OK(mh_reader_set_cache(r, 1));
    queries(r, 2, count / 3);
    mh_reader_close(r);
    tu_rmtree(dir);
    printf("group_masks: ok (%zu questions)\n", count);
    return 0;
}
