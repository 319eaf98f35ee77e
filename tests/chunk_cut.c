/*
 * chunk_cut.c - the reference writer's hot-chunk cut (SPEC.md §5.4): every
 * chunk record checked against the rows it must hold, recomputed by brute
 * force from the trace, and queries into the cut pieces against the oracle.
 *
 *   chunk_cut                 a synthetic slice with a hot stack-like
 *                             interval, a word touched thousands of times,
 *                             16-byte accesses that straddle every 8-byte
 *                             boundary of a sub-range, and sparse accesses
 *   chunk_cut --real MEMHIST  the same checks on a qemu recording (sort)
 *
 * Per slice and operation, the chunk's rows are the slice's accesses of
 * that op inside [phy_first, phy_last]; the checks: their number is the
 * record's, the bounds are tight (lowest physical, highest last byte), a
 * chunk of more than C = 2 R rows has no address past C rows in it that no row
 * before straddles (the writer would have cut there), chunks do not exceed
 * accesses / chunk_min_accesses per op, and a hot interval was cut.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memhist.h"
#include "testutil.h"

typedef struct row {
    uint64_t phy, end, id;
} row;

static int cmp_row(const void *x, const void *y) {
    const row *a = x, *b = y;
    if (a->phy != b->phy)
        return (a->phy > b->phy) - (a->phy < b->phy);
    return (a->id > b->id) - (a->id < b->id);
}

typedef struct figures {
    size_t chunks, cut_chunks, over_cap, hot_pieces;
} figures;

/* Checks every chunk of every slice against all[] (ids 0 .. n-1 in order);
 * counts the chunks meeting [hot_lo, hot_hi] of op hot_op. */
static figures check_chunks(const mh_reader *r, const mh_access *all, size_t n,
                            uint32_t min_acc, unsigned hot_op, uint64_t hot_lo,
                            uint64_t hot_hi) {
    figures f = {0, 0, 0, 0};
    row *rows = malloc((n + 1) * sizeof *rows);
    CHECK(rows != NULL);
    for (size_t s = 0; s < mh_reader_segment_count(r); s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        CHECK_OK(mh_reader_segment_info(r, s, &si));
        for (uint32_t k = 0; k < si.slices; k++) {
            mh_slice_info sl = {.struct_size = sizeof sl};
            CHECK_OK(mh_reader_slice_info(r, s, k, &sl));
            uint32_t per_op[MH_OP_COUNT] = {0};
            for (uint32_t c = 0; c < sl.chunks; c++) {
                mh_chunk_info ci = {.struct_size = sizeof ci};
                CHECK_OK(mh_reader_chunk_info(r, s, sl.chunk_first + c, &ci));
                per_op[ci.op]++;
                size_t m = 0;
                for (uint64_t id = sl.id_first; id < sl.id_first + sl.accesses; id++) {
                    const mh_access *a = &all[id];
                    if (a->op != ci.op || a->physical < ci.phy_first ||
                        a->physical > ci.phy_last)
                        continue;
                    rows[m++] = (row){a->physical, a->physical + (a->size - 1u), id};
                }
                CHECKF(m == ci.accesses, "slice %u chunk %u: %zu rows in [%llx, %llx], record %u",
                       k, c, m, (unsigned long long)ci.phy_first,
                       (unsigned long long)ci.phy_last, ci.accesses);
                qsort(rows, m, sizeof *rows, cmp_row);
                uint64_t reach = rows[0].end;
                for (size_t i = 1; i < m; i++)
                    if (rows[i].end > reach)
                        reach = rows[i].end;
                CHECKF(ci.phy_first == rows[0].phy && ci.phy_last == reach,
                       "slice %u chunk %u: bounds [%llx, %llx], rows [%llx, %llx]", k, c,
                       (unsigned long long)ci.phy_first, (unsigned long long)ci.phy_last,
                       (unsigned long long)rows[0].phy, (unsigned long long)reach);
                if (m > 2 * si.rows_per_block) {
                    /* no cut left: past C = 2 R rows, every row starts
                     * inside the reach of the rows before it */
                    reach = rows[0].end;
                    for (size_t i = 1; i < m; i++) {
                        CHECKF(i < 2 * si.rows_per_block || rows[i].phy <= reach,
                               "slice %u chunk %u (%zu rows): row %zu at %llx starts past "
                               "every row before it (%llx): not cut", k, c, m, i,
                               (unsigned long long)rows[i].phy, (unsigned long long)reach);
                        if (rows[i].end > reach)
                            reach = rows[i].end;
                    }
                    f.over_cap++;
                }
                f.chunks++;
                if (ci.op == hot_op && ci.phy_first <= hot_hi && ci.phy_last >= hot_lo)
                    f.hot_pieces++;
                /* a cut piece: it touches its neighbour of the same op */
                if (c + 1 < sl.chunks) {
                    mh_chunk_info nx = {.struct_size = sizeof nx};
                    CHECK_OK(mh_reader_chunk_info(r, s, sl.chunk_first + c + 1, &nx));
                    if (nx.op == ci.op && nx.phy_first == ci.phy_last + 1)
                        f.cut_chunks++;
                }
            }
            for (unsigned o = 0; o < MH_OP_COUNT; o++) {
                uint32_t lim = sl.op_counts[o] / min_acc;
                CHECKF(per_op[o] <= (lim ? lim : 1), "slice %u op %u: %u chunks for %u accesses",
                       k, o, per_op[o], sl.op_counts[o]);
            }
        }
    }
    free(rows);
    return f;
}

/* Point queries on each word of [lo, hi] of op `op`, from transitions
 * drawn over the trace, both directions, max 1 and 10, against the oracle. */
static size_t point_queries(const mh_reader *r, const mh_access *all, size_t n,
                            unsigned op, uint64_t lo, uint64_t hi, size_t count,
                            uint64_t seed) {
    tu_rng rng = {seed};
    size_t hits = 0;
    for (size_t i = 0; i < count; i++) {
        mh_query q;
        mh_query_init(&q);
        uint64_t a = lo + (tu_below(&rng, (hi - lo) / 8 + 1) * 8);
        q.addr_first = a;
        q.addr_last = a + 7;
        q.ops = tu_below(&rng, 2) ? 1u << op : MH_OPS_ALL;
        q.direction = tu_below(&rng, 2) ? MH_FORWARD : MH_BACKWARD;
        q.start = all[tu_below(&rng, n)].transition;
        hits += tu_check_query(r, all, n, &q, tu_below(&rng, 2) ? 1 : 10) > 0;
    }
    return hits;
}

static void run_synthetic(void) {
    enum { N = 60000 };
    mh_access *all = calloc(N, sizeof *all);
    CHECK(all != NULL);
    tu_rng rng = {7};
    const uint64_t stack = 0x7ffe0000, hotword = 0x600040, wide = 0x7ffe1000;
    for (size_t i = 0; i < N; i++) {
        mh_access *a = &all[i];
        a->id = i;
        a->transition = 10 + i * 3 + tu_below(&rng, 3);
        a->op = MH_OP_READ;
        a->size = 8;
        uint64_t k = tu_below(&rng, 100);
        if (k < 60) { /* a 2 KiB frame, 8-byte words, mostly reads */
            a->physical = stack + tu_below(&rng, 256) * 8;
            a->op = tu_below(&rng, 4) ? MH_OP_READ : MH_OP_WRITE;
        } else if (k < 75) { /* one word read again and again */
            a->physical = hotword;
        } else if (k < 85) { /* 16-byte reads straddling each 8-byte boundary */
            a->physical = wide + tu_below(&rng, 64) * 8;
            a->size = 16;
        } else { /* sparse: scattered, a few odd sizes */
            a->physical = 0x10000000 + tu_below(&rng, 1u << 24);
            a->size = 1u << tu_below(&rng, 4);
            a->op = (unsigned)tu_below(&rng, 3);
        }
        a->linear = a->physical;
    }
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "chunk-cut");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 16384;
    o.commit_accesses = N / 2;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    CHECK_OK(mh_writer_append_batch(w, all, N, NULL));
    CHECK_OK(mh_writer_close(w));
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    figures f = check_chunks(r, all, N, o.chunk_min_accesses, MH_OP_READ, stack,
                             stack + 2047);
    /* 6,100 to 7,400 frame reads a slice: cut into at least 5 pieces */
    CHECKF(f.hot_pieces >= 4 * 5, "%zu pieces of the hot frame", f.hot_pieces);
    CHECKF(f.over_cap >= 4, "%zu chunks over C rows (the hot word cannot be cut)",
           f.over_cap);
    size_t hits = point_queries(r, all, N, MH_OP_READ, stack, stack + 2047, 1500, 11);
    hits += point_queries(r, all, N, MH_OP_READ, wide, wide + 520, 500, 12);
    hits += point_queries(r, all, N, MH_OP_READ, hotword, hotword, 100, 13);
    CHECKF(hits > 1800, "%zu of 2100 point queries with matches", hits);
    tu_random_queries(r, all, N, 1500, 14);
    printf("synthetic: %zu chunks, %zu cut, %zu over C rows, %zu pieces of the frame, "
           "%zu point queries with matches\n", f.chunks, f.cut_chunks, f.over_cap,
           f.hot_pieces, hits);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}

/* A qemu recording of sort, as `memhist record` writes it (the default
 * writer: 32 Ki-access slices); its hottest read chunk's range gets the
 * point queries. */
static int run_real(const char *memhist) {
    char dir[4096], rec[4096];
    tu_mkdtemp(dir, sizeof dir, "chunk-cut-real");
    int rc = tu_record_sort(memhist, dir, 6000, 7919, 100003, rec, sizeof rec,
                            "chunk_cut --real");
    if (rc != 0) {
        tu_rmtree(dir);
        return rc;
    }
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(rec, &r));
    size_t n = 0;
    mh_access *all = tu_read_all(r, &n);
    CHECK(n > 200000);
    for (size_t i = 0; i < n; i++)
        CHECK(all[i].id == i);
    /* the hot range: the longest run of read pieces, each touching the
     * next (one interval before the cut), in the first segment */
    mh_writer_options o;
    mh_writer_options_init(&o);
    uint64_t best_lo = 0, best_hi = 0, run_lo = 0;
    uint32_t best = 0, run = 0;
    mh_segment_info si = {.struct_size = sizeof si};
    CHECK_OK(mh_reader_segment_info(r, 0, &si));
    mh_chunk_info prev = {.struct_size = sizeof prev};
    for (uint32_t c = 0; c < si.chunks; c++) {
        mh_chunk_info ci = {.struct_size = sizeof ci};
        CHECK_OK(mh_reader_chunk_info(r, 0, c, &ci));
        int cont = c > 0 && ci.op == MH_OP_READ && prev.op == MH_OP_READ &&
                   ci.phy_first == prev.phy_last + 1;
        run = cont ? run + 1 : 1;
        if (!cont)
            run_lo = ci.phy_first;
        if (ci.op == MH_OP_READ && run > best) {
            best = run;
            best_lo = run_lo;
            best_hi = ci.phy_last;
        }
        prev = ci;
    }
    figures fg = check_chunks(r, all, n, o.chunk_min_accesses, MH_OP_READ, best_lo,
                              best_hi);
    CHECKF(fg.cut_chunks > 0 && best > 2, "a %zu-access recording with no cut chunk", n);
    size_t hits = point_queries(r, all, n, MH_OP_READ, best_lo & ~(uint64_t)7, best_hi,
                                600, 21);
    tu_random_queries(r, all, n, 600, 22);
    printf("real: %zu accesses, %zu chunks, %zu cut, %zu over C rows; %zu of 600 point "
           "queries in [%llx, %llx] with matches\n", n, fg.chunks, fg.cut_chunks,
           fg.over_cap, hits, (unsigned long long)best_lo, (unsigned long long)best_hi);
    CHECK(hits > 100);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "--real")) {
        int rc = run_real(argv[2]);
        if (rc == 0)
            printf("chunk_cut --real: ok\n");
        return rc;
    }
    run_synthetic();
    printf("chunk_cut: ok\n");
    return 0;
}
