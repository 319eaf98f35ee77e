/*
 * baseline_test.c - checks the SQLite baseline against the brute-force
 * oracle on small traces built to hit its edge cases: several slices, slices
 * cut inside one long transition, overlapping and touching accesses, the
 * chunk cap, every operation set, both directions and both start kinds,
 * values and bounds on both sides of 2^63 up to 2^64 - 1, and refusals.
 * Needs only sqlite3: it runs before the memhist library exists.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oracle.h"
#include "sqlite_baseline.h"

static int failures;
static char dir[256];

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static mhb_sql_reader *build(const char *name, const mh_access *t, size_t n,
                             uint64_t slice, uint64_t chunk)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mhb_sql_options o;
    mhb_sql_options_init(&o);
    o.slice_accesses = slice;
    o.chunk_accesses = chunk;
    o.cache_kib = 1024;
    mhb_sql_writer *w = NULL;
    char err[256] = "";
    int rc = mhb_sql_writer_open(path, &o, &w, err, sizeof err);
    CHECK(rc == MH_OK, "open %s: %s", path, err);
    if (rc != MH_OK)
        exit(1);
    /* uneven batches, so slices close in the middle of a batch */
    for (size_t i = 0; i < n;) {
        size_t k = 1 + (size_t)(rnd() % 37);
        if (k > n - i)
            k = n - i;
        rc = mhb_sql_writer_append(w, t + i, k);
        CHECK(rc == MH_OK, "append: %s", mhb_sql_writer_error(w));
        i += k;
    }
    rc = mhb_sql_writer_close(w);
    CHECK(rc == MH_OK, "close %d", rc);
    mhb_sql_reader *r = NULL;
    rc = mhb_sql_reader_open(path, &o, &r, err, sizeof err);
    CHECK(rc == MH_OK, "reader open: %s", err);
    if (rc != MH_OK)
        exit(1);
    mhb_sql_stats st;
    CHECK(mhb_sql_reader_stats(r, &st) == MH_OK && st.accesses == n, "stats");
    printf("%s: %zu accesses, %" PRIu64 " slices, %" PRIu64 " chunks\n", name, n,
           st.slices, st.chunks);
    return r;
}

static long queries_run;

static void check_query(mhb_sql_reader *r, const mh_access *t, size_t n,
                        const mh_query *q, size_t max)
{
    static mh_access want[512], got[512];
    size_t nw = 0, ng = 0, at = 0;
    oracle_query oq;
    oracle_query_wrap(&oq, q);
    int rw = oracle_run(t, n, &oq, want, max, &nw);
    int rg = mhb_sql_query(r, q, got, max, &ng);
    queries_run++;
    CHECK(rw == rg, "codes %d %d", rw, rg);
    if (!oracle_equal(want, nw, got, ng, &at)) {
        CHECK(0,
              "kind %u dir %u start %" PRIu64 " [%" PRIx64 ",%" PRIx64
              "] ops %u max %zu: oracle %zu, sqlite %zu, differ at %zu (%s)",
              q->start_kind, q->direction, q->start, q->addr_first, q->addr_last,
              q->ops, max, nw, ng, at, mhb_sql_reader_error(r));
        if (failures > 20)
            exit(1);
    }
}

/* Every query shape over a grid of starts and ranges. */
static void sweep(mhb_sql_reader *r, const mh_access *t, size_t n,
                  const uint64_t *addrs, size_t naddr, const uint64_t *starts,
                  size_t nstart)
{
    static const size_t maxes[] = {1, 2, 3, 7, 500};
    for (unsigned kind = 0; kind < 2; kind++)
        for (unsigned dir_ = 0; dir_ < 2; dir_++)
            for (uint64_t si = 0; si < (kind ? n + 2 : nstart); si++)
                for (size_t a = 0; a < naddr; a++)
                    for (size_t b = a; b < naddr; b++) {
                        uint64_t s = kind ? si : starts[si];
                        if (kind && si == n + 1)
                            s = UINT64_MAX;
                        mh_query q = {.struct_size = sizeof q,
                                      .start_kind = kind,
                                      .direction = dir_,
                                      .ops = (unsigned)(1 + rnd() % 7),
                                      .start = s,
                                      .addr_first = addrs[a],
                                      .addr_last = addrs[b]};
                        check_query(r, t, n, &q, maxes[rnd() % 5]);
                    }
}

static mh_access acc(uint64_t t, uint64_t phys, uint32_t size, unsigned op)
{
    mh_access a;
    memset(&a, 0, sizeof a);
    a.transition = t;
    a.physical = phys;
    a.linear = phys + 0x1000;
    a.has_linear = (uint8_t)(phys & 1);
    a.size = size;
    a.op = (uint8_t)op;
    return a;
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/mh_baseline_test.XXXXXX");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    rng_state = 42;

    /* 1. hand-made: touching and overlapping runs, a transition of 9
     * accesses (slices of 3 are cut inside it at 6), all operations. */
    mh_access h[48];
    size_t hn = 0;
    h[hn++] = acc(0, 100, 4, MH_OP_WRITE);
    h[hn++] = acc(0, 104, 4, MH_OP_WRITE);   /* touches */
    h[hn++] = acc(1, 102, 1, MH_OP_WRITE);   /* inside */
    h[hn++] = acc(1, 200, 8, MH_OP_READ);
    h[hn++] = acc(2, 0x1000, 2, MH_OP_EXEC);
    for (int i = 0; i < 9; i++)
        h[hn++] = acc(3, 96 + (uint64_t)i * 2, 3, i % 3 == 2 ? MH_OP_READ : MH_OP_WRITE);
    h[hn++] = acc(5, 108, 1, MH_OP_READ);
    h[hn++] = acc(5, 109, 1, MH_OP_READ);
    h[hn++] = acc(9, 99, 2, MH_OP_WRITE);
    h[hn++] = acc(9, 0, 1, MH_OP_WRITE);
    h[hn++] = acc(12, (1ull << 63) - 8, 8, MH_OP_READ); /* last byte 2^63-1 */
    h[hn++] = acc(12, 100, 16, MH_OP_EXEC);
    h[hn++] = acc((1ull << 63) - 1, (1ull << 63) - 4, 8, MH_OP_READ); /* crosses */
    h[hn++] = acc(1ull << 63, 1ull << 63, 1, MH_OP_WRITE);
    h[hn++] = acc((1ull << 63) + 1, UINT64_MAX - 7, 8, MH_OP_WRITE);
    h[hn++] = acc(UINT64_MAX, UINT64_MAX, 1, MH_OP_READ);
    h[hn++] = acc(UINT64_MAX, 5, 2, MH_OP_READ);
    static const uint64_t ha[] = {0, 1, 98, 100, 103, 104, 108, 110, 150, 203,
                                  0x1001, (1ull << 63) - 1, 1ull << 63,
                                  UINT64_MAX - 1, UINT64_MAX};
    uint64_t hs[20];
    size_t hsn = 0;
    for (uint64_t s = 0; s <= 13; s++)
        hs[hsn++] = s;
    hs[hsn++] = (1ull << 63) - 1;
    hs[hsn++] = 1ull << 63;
    hs[hsn++] = (1ull << 63) + 1;
    hs[hsn++] = UINT64_MAX - 1;
    hs[hsn++] = UINT64_MAX;
    for (uint64_t chunk = 1; chunk <= 4; chunk++) {
        char name[32];
        snprintf(name, sizeof name, "hand-c%" PRIu64, chunk);
        mhb_sql_reader *r = build(name, h, hn, 3, chunk);
        sweep(r, h, hn, ha, sizeof ha / sizeof ha[0], hs, hsn);
        mh_query q = {.struct_size = sizeof q,
                      .start_kind = MH_FROM_TRANSITION,
                      .direction = MH_BACKWARD,
                      .ops = MH_OPS_ALL,
                      .start = UINT64_MAX,
                      .addr_last = UINT64_MAX};
        check_query(r, h, hn, &q, 500);
        q.direction = MH_FORWARD;
        check_query(r, h, hn, &q, 500);
        q.start_kind = MH_FROM_ID;
        check_query(r, h, hn, &q, 500);
        q.direction = MH_BACKWARD;
        check_query(r, h, hn, &q, 500);
        mh_access out[4];
        size_t n = 9;
        q.addr_first = 5;
        q.addr_last = 4;
        CHECK(mhb_sql_query(r, &q, out, 4, &n) == MH_EINVAL && n == 0, "A > B");
        q.addr_last = 5;
        q.ops = 0;
        CHECK(mhb_sql_query(r, &q, out, 4, &n) == MH_EINVAL, "empty ops");
        mhb_sql_reader_close(r);
    }

    /* 2. random: a small address window (many overlaps), bursts of equal
     * transitions, slices of 150 and chunk caps of 5. */
    size_t rn = 4000;
    mh_access *rt = calloc(rn, sizeof *rt);
    uint64_t t = 0;
    for (size_t i = 0; i < rn; i++) {
        if (rnd() % 4 == 0)
            t += 1 + rnd() % 3;
        rt[i] = acc(t, 4096 + rnd() % 512, (uint32_t)(1 + rnd() % 16),
                    (unsigned)(rnd() % 3));
    }
    mhb_sql_reader *r = build("random", rt, rn, 150, 5);
    for (int i = 0; i < 20000; i++) {
        uint64_t a = 4096 + rnd() % 560 - 16, len = rnd() % 4 ? rnd() % 24 : rnd() % 600;
        mh_query q = {.struct_size = sizeof q,
                      .start_kind = (uint32_t)(rnd() % 2),
                      .direction = (uint32_t)(rnd() % 2),
                      .ops = (unsigned)(1 + rnd() % 7),
                      .addr_first = a,
                      .addr_last = a + len};
        q.start = q.start_kind ? rnd() % (rn + 2) : rnd() % (t + 2);
        static const size_t maxes[] = {1, 10, 100, 512};
        check_query(r, rt, rn, &q, maxes[rnd() % 4]);
    }
    mhb_sql_reader_close(r);
    free(rt);

    /* 3. refusals */
    {
        char path[512], err[256];
        snprintf(path, sizeof path, "%s/refuse.db", dir);
        mhb_sql_writer *w = NULL;
        CHECK(mhb_sql_writer_open(path, NULL, &w, err, sizeof err) == MH_OK, "%s", err);
        mh_access wrap = acc(0, UINT64_MAX - 3, 8, MH_OP_READ);
        CHECK(mhb_sql_writer_append(w, &wrap, 1) == MH_EINVAL, "wrapping range accepted");
        mh_access badop = acc(0, 0, 1, 7);
        CHECK(mhb_sql_writer_append(w, &badop, 1) == MH_EINVAL, "bad op accepted");
        mh_access two[2] = {acc(5, 0, 1, MH_OP_READ), acc(4, 0, 1, MH_OP_READ)};
        CHECK(mhb_sql_writer_append(w, two, 2) == MH_EORDER, "order");
        mh_access zero = acc(6, 0, 0, MH_OP_READ);
        CHECK(mhb_sql_writer_append(w, &zero, 1) == MH_EINVAL, "size 0");
        CHECK(mhb_sql_writer_close(w) == MH_OK, "close");
        CHECK(mhb_sql_writer_open(path, NULL, &w, err, sizeof err) == MH_EEXIST, "exists");
        mhb_sql_reader *rr = NULL;
        snprintf(path, sizeof path, "%s/none.db", dir);
        CHECK(mhb_sql_reader_open(path, NULL, &rr, err, sizeof err) == MH_ENOENT, "enoent");
    }

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    printf("%ld queries checked, %d failures\n", queries_run, failures);
    return failures ? 1 : 0;
}
