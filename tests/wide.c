/*
 * wide.c - the query engine's wide path (src/query_wide.c, SPEC.md 11 step
 * 2a) against a brute-force scan: whole-space and near-whole-space queries
 * that want many rows (the wide path) or few (the chunk walk), both
 * directions, from a transition and from an id, op subsets, end bounds,
 * resume chains and cursors of batches around the path's threshold, on a
 * store of several segments with small slices and blocks; then damaged
 * copies, whose errors must come out of the wide path as the chunk walk
 * gives them (a flipped block: MH_ECHECKSUM naming the file and the
 * block), while queries that only touch an undamaged segment still answer.
 * The committed corrupt golden variants, read whole, give their codes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mh_format.h"
#include "testutil.h"

#define N 30000
#define COMMIT_EVERY 11000 /* three segments */

static mh_access all[N];

static void make_trace(void) {
    tu_rng g = {7};
    uint64_t t = 1000;
    for (size_t i = 0; i < N; i++) {
        mh_access *a = &all[i];
        memset(a, 0, sizeof *a);
        t += tu_below(&g, 4) == 0 ? tu_below(&g, 3) : 0; /* repeats */
        a->transition = t;
        unsigned region = (unsigned)tu_below(&g, 4);
        uint64_t base = region == 0 ? 0x1000 : region == 1 ? 0x7fff0000ull
                      : region == 2 ? (1ull << 63) - 0x100 : UINT64_MAX - 0x4000;
        a->size = 1u << tu_below(&g, 4);
        a->physical = base + tu_below(&g, 0x3000);
        a->op = (uint8_t)tu_below(&g, 3);
        if (tu_below(&g, 2)) {
            a->has_linear = 1;
            a->linear = a->physical ^ 0x5550000;
        }
        a->id = i;
    }
}

static int matches(const mh_access *a, const mh_query *q) {
    if (!(q->ops & (1u << a->op)) || a->physical > q->addr_last ||
        a->physical + (a->size - 1u) < q->addr_first)
        return 0;
    int fwd = q->direction == MH_FORWARD;
    if (q->start_kind == MH_FROM_TRANSITION) {
        if (fwd ? a->transition < q->start : a->transition > q->start)
            return 0;
    } else if (fwd ? a->id <= q->start : a->id >= q->start) {
        return 0;
    }
    if (q->end_kind != MH_END_NONE) {
        uint64_t v = q->end_kind == MH_END_TRANSITION ? a->transition : a->id;
        if (fwd ? v > q->end : v < q->end)
            return 0;
    }
    return 1;
}

/* The first max matches of q, in query order, into out. */
static size_t oracle(const mh_query *q, mh_access *out, size_t max) {
    size_t n = 0;
    int fwd = q->direction == MH_FORWARD;
    for (size_t k = 0; k < N && n < max; k++) {
        const mh_access *a = &all[fwd ? k : N - 1 - k];
        if (matches(a, q))
            out[n++] = *a;
    }
    return n;
}

/* Every field a query returns; linear only when present. */
static int same_access(const mh_access *a, const mh_access *b) {
    return a->id == b->id && a->transition == b->transition &&
           a->physical == b->physical && a->size == b->size && a->op == b->op &&
           a->has_linear == b->has_linear && (!a->has_linear || a->linear == b->linear) &&
           a->pc == b->pc && a->has_pc == b->has_pc && a->stream == b->stream;
}

static mh_access got[N + 4096], want[N + 1]; /* got: room for a batch past N */

static void same(const mh_access *x, size_t nx, const mh_access *y, size_t ny) {
    CHECKF(nx == ny, "%s: %zu accesses, expected %zu", tu_context, nx, ny);
    for (size_t i = 0; i < nx; i++)
        CHECKF(same_access(&x[i], &y[i]), "%s: answer %zu is id %llu, expected %llu",
               tu_context, i, (unsigned long long)x[i].id, (unsigned long long)y[i].id);
}

static void one(const mh_reader *r, const mh_query *q, size_t max) {
    size_t n = 0;
    CHECK_OK(mh_query_run(r, q, got, max, &n));
    same(got, n, want, oracle(q, want, max));
}

/* Resumed mh_query_run calls of `batch` (forward after / backward before the
 * last id), and a cursor of the same batch, give the whole answer. */
static void chain(const mh_reader *r, const mh_query *q0, size_t batch) {
    size_t total = oracle(q0, want, N);
    mh_query q = *q0;
    size_t n = 0, k;
    for (;;) {
        CHECKF(n <= N && batch < 4096, "%s: chain of %zu goes past %d accesses",
               tu_context, batch, N);
        CHECK_OK(mh_query_run(r, &q, got + n, batch, &k));
        n += k;
        if (k < batch)
            break;
        q.start_kind = MH_FROM_ID;
        q.start = got[n - 1].id;
    }
    same(got, n, want, total);
    mh_cursor *c = NULL;
    CHECK_OK(mh_cursor_open(r, q0, &c));
    n = 0;
    do {
        CHECKF(n <= N && batch < 4096, "%s: cursor of %zu goes past %d accesses",
               tu_context, batch, N);
        CHECK_OK(mh_cursor_next(c, got + n, batch, &k));
        n += k;
    } while (k == batch);
    mh_cursor_close(c);
    same(got, n, want, total);
}

static void queries(const mh_reader *r) {
    static const uint32_t ops[] = {MH_OPS_ALL, MH_OPS_RW, MH_OPS_READ,
                                   MH_OPS_WRITE, MH_OPS_EXEC};
    static const size_t maxes[] = {N + 1, N, 1, 10, 255, 256, 300, 999, 1000, 1001, 4000};
    const uint64_t ranges[][2] = {{0, UINT64_MAX},
                                  {0, 1ull << 63},      /* three regions of four */
                                  {0x1800, UINT64_MAX}, /* chunks cut at A */
                                  {0x1000, 0x2000}};   /* a narrow one */
    const uint64_t t_lo = all[0].transition, t_hi = all[N - 1].transition;
    tu_rng g = {11};
    for (unsigned dir = 0; dir < 2; dir++)
        for (unsigned kind = 0; kind < 2; kind++)
            for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
                for (size_t ra = 0; ra < sizeof ranges / sizeof ranges[0]; ra++)
                    for (unsigned e = 0; e < 3; e++)
                        for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++) {
                            mh_query q;
                            mh_query_init(&q);
                            q.direction = dir;
                            q.start_kind = kind;
                            q.ops = ops[o];
                            q.addr_first = ranges[ra][0];
                            q.addr_last = ranges[ra][1];
                            /* the store's ends, and a random point */
                            unsigned which = (unsigned)tu_below(&g, 3);
                            if (kind == MH_FROM_TRANSITION)
                                q.start = which == 0 ? (dir ? t_hi : t_lo)
                                          : which == 1 ? (dir ? UINT64_MAX : 0)
                                                       : tu_range(&g, t_lo, t_hi);
                            else
                                q.start = which == 0 ? (dir ? N : UINT64_MAX)
                                          : which == 1 ? (dir ? N - 1 : 0)
                                                       : tu_below(&g, N);
                            if (kind == MH_FROM_ID && which == 0 && !dir)
                                q.start = 0; /* forward after id 0 */
                            q.end_kind = e;
                            if (e == MH_END_TRANSITION)
                                q.end = tu_range(&g, t_lo, t_hi);
                            else if (e == MH_END_ID)
                                q.end = tu_below(&g, N);
                            snprintf(tu_context, sizeof tu_context,
                                     "dir %u kind %u start %llu ops %u [%llx,%llx] "
                                     "end %u:%llu max %zu", dir, kind,
                                     (unsigned long long)q.start, q.ops,
                                     (unsigned long long)q.addr_first,
                                     (unsigned long long)q.addr_last, e,
                                     (unsigned long long)q.end, maxes[m]);
                            one(r, &q, maxes[m]);
                            if (m == 0 && o < 3 && ra < 2)
                                for (size_t b = 256; b <= 2048; b *= 2)
                                    chain(r, &q, b + (b & 256 ? 1 : 0));
                        }
}

/* Byte offset of the compressed bytes of block `block`, and of its record,
 * in segment file path. */
static void block_at(const char *path, uint32_t block, size_t *data, size_t *rec) {
    size_t len = 0;
    unsigned char *f = tu_read_file(path, &len);
    uint64_t so = 0, ss = 0;
    uint32_t sn = 0;
    CHECK(f && mhf_seg_find(f, len, MHF_SECT_BLOCKS, &so, &ss, &sn) && block < sn);
    *rec = (size_t)so + (size_t)block * MHF_BLOCK_SIZE;
    CHECK(*rec + MHF_BLOCK_SIZE <= len);
    *data = (size_t)mhf_load_u64(f + *rec + MHF_BLOCK_OFFSET) +
            mhf_load_u32(f + *rec + MHF_BLOCK_COMP_SIZE) / 2;
    free(f);
}

static void flip(const char *path, size_t off, unsigned char mask) {
    size_t len = 0;
    unsigned char *f = tu_read_file(path, &len);
    CHECK(f && off < len);
    f[off] ^= mask;
    tu_write_file(path, f, len);
    free(f);
}

/* A whole scan of the damaged copy fails with code, naming `what`; a query
 * that only touches the last segment still answers. */
static void damaged(const char *store, int code, const char *what) {
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    for (unsigned dir = 0; dir < 2; dir++) {
        q.direction = dir;
        q.start = dir ? UINT64_MAX : 0;
        size_t n = 7;
        CHECK_RC(mh_query_run(r, &q, got, N, &n), code);
        CHECK(n == 0);
        char msg[MH_ERRMSG_MAX];
        mh_reader_errmsg(r, msg, sizeof msg);
        CHECKF(strstr(msg, what) && strstr(msg, "seg-0000000000000000"),
               "detail \"%s\" does not name %s in segment 0", msg, what);
        mh_cursor *c = NULL;
        CHECK_OK(mh_cursor_open(r, &q, &c));
        int rc;
        do /* backward, the damage lies some batches away */
            rc = mh_cursor_next(c, got, 4096, &n);
        while (rc == MH_OK && n == 4096);
        CHECK_RC(rc, code);
        mh_cursor_errmsg(c, msg, sizeof msg);
        CHECKF(strstr(msg, what), "cursor detail \"%s\" does not name %s", msg, what);
        mh_cursor_close(c);
    }
    q.direction = MH_FORWARD;
    q.start_kind = MH_FROM_ID;
    q.start = 2 * COMMIT_EVERY; /* the last segment */
    size_t n = 0;
    snprintf(tu_context, sizeof tu_context, "damaged %s, last segment", store);
    CHECK_OK(mh_query_run(r, &q, got, N, &n));
    same(got, n, want, oracle(&q, want, N));
    mh_reader_close(r);
}

/* The committed corrupt variants that open (format/golden/README.md), read
 * whole by queries that want more than their 40 accesses: the wide path
 * meets the damage and must give the code the table gives, naming the
 * damaged file. */
static void golden_variants(void) {
    static const struct {
        const char *name;
        int code;
    } v[] = {{"segment-newer-minor", MH_OK},
             {"chunk-record-flip", MH_ECHECKSUM},
             {"block-flip", MH_ECHECKSUM},
             {"block-raw-size", MH_ECORRUPT},
             {"block-phy-range", MH_ECORRUPT},
             {"block-first-row", MH_ECORRUPT},
             {"chunk-row-outside", MH_ECORRUPT}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (unsigned dir = 0; dir < 2; dir++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/corrupt/%s.store", MH_GOLDEN_DIR, v[i].name);
            snprintf(tu_context, sizeof tu_context, "golden %s dir %u", v[i].name, dir);
            mh_reader *r = NULL;
            CHECK_OK(mh_reader_open(path, &r));
            mh_query q;
            mh_query_init(&q);
            q.ops = MH_OPS_ALL;
            q.direction = dir;
            q.start = dir ? UINT64_MAX : 0;
            size_t n = 0;
            CHECK_RC(mh_query_run(r, &q, got, 4096, &n), v[i].code);
            if (v[i].code == MH_OK) {
                CHECK(n == 40);
                for (size_t k = 0; k < n; k++)
                    CHECK(got[k].id == (dir ? 39 - k : k));
            } else {
                char msg[MH_ERRMSG_MAX];
                mh_reader_errmsg(r, msg, sizeof msg);
                CHECKF(strstr(msg, "seg-0000000000000000"), "%s: detail \"%s\"",
                       tu_context, msg);
            }
            mh_reader_close(r);
        }
}

int main(void) {
    golden_variants();
    make_trace();
    char dir[256], store[300], copy[300], seg0[400];
    tu_mkdtemp(dir, sizeof dir, "wide");
    tu_join(store, sizeof store, dir, "s");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 1000; /* about 30 slices of 16 blocks */
    o.block_accesses = 64;
    o.chunk_min_accesses = 16;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &o, &w));
    for (size_t i = 0; i < N; i += COMMIT_EVERY) {
        size_t k = N - i < COMMIT_EVERY ? N - i : COMMIT_EVERY;
        CHECK_OK(mh_writer_append_batch(w, all + i, k, NULL));
        CHECK_OK(mh_writer_commit(w));
    }
    CHECK_OK(mh_writer_close(w));
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    CHECK(st.accesses == N && st.segments == 3);
    queries(r);
    /* a small cache, so the wide path meets blocks both in and out of it */
    CHECK_OK(mh_reader_set_cache(r, 1));
    queries(r);
    mh_reader_close(r);

    /* a flipped byte in the compressed bytes of a block of segment 0 */
    tu_join(copy, sizeof copy, dir, "flip");
    CHECK(mkdir(copy, 0755) == 0);
    tu_copy_dir(store, copy);
    snprintf(seg0, sizeof seg0, "%s/seg-0000000000000000.mhs", copy);
    size_t data, rec;
    block_at(seg0, 37, &data, &rec);
    flip(seg0, data, 0x10);
    damaged(copy, MH_ECHECKSUM, "block 37");
    tu_rmtree(copy);
    tu_rmtree(dir);
    printf("wide: ok\n");
    return 0;
}
