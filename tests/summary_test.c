/*
 * summary_test.c - the address summary (src/summary_build.c,
 * src/summary_read.c) against brute force: the keys a slice builder computes
 * (granules met by each row, multi-granule and top-of-space rows, huge
 * rows up to the overflow), the serialized section parsed back, the
 * candidate slices of random ranges (forward and backward lazy merges)
 * against the slices whose rows meet the range's granules, fsck's exactness
 * check, and every field of the section corrupted in turn.
 */
#include <string.h>

#include "internal.h"
#include "testutil.h"

#define SHIFT MHF_SUM_GRANULE_SHIFT

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The keys of rows a[0..n), the slow way: every granule of every row,
 * sorted, duplicates dropped. */
static size_t brute_keys(const mh_rec *a, uint32_t n, uint64_t **out) {
    size_t cap = 16, m = 0;
    uint64_t *k = malloc(cap * 8);
    CHECK(k);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t g0 = a[i].physical >> SHIFT;
        uint64_t g1 = (a[i].physical + (a[i].size - 1u)) >> SHIFT;
        for (uint64_t g = g0;; g++) {
            if (m == cap) {
                cap *= 2;
                k = realloc(k, cap * 8);
                CHECK(k);
            }
            k[m++] = g << 2 | a[i].op;
            if (g == g1)
                break;
        }
    }
    qsort(k, m, 8, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || k[i] != k[u - 1])
            k[u++] = k[i];
    *out = k;
    return u;
}

/* Rows of one slice in `regions` clusters, some spanning granules, some at
 * the top of the address space. */
static void gen_rows(tu_rng *rng, mh_rec *a, uint32_t n, unsigned regions,
                     int huge) {
    uint64_t base[8];
    for (unsigned r = 0; r < regions; r++)
        base[r] = tu_below(rng, 4) == 0 ? UINT64_MAX - tu_below(rng, 1u << 20)
                                        : tu_below(rng, 1ull << 40);
    for (uint32_t i = 0; i < n; i++) {
        memset(&a[i], 0, sizeof a[i]);
        a[i].transition = i;
        a[i].op = (uint8_t)tu_below(rng, 3);
        uint64_t b = base[tu_below(rng, regions)];
        uint32_t size = 1u << tu_below(rng, 4);
        if (tu_below(rng, 50) == 0)
            size = (uint32_t)tu_range(rng, 1, 300000); /* several granules */
        if (huge && tu_below(rng, 20) == 0)
            size = UINT32_MAX - (uint32_t)tu_below(rng, 5);
        uint64_t off = tu_below(rng, 1u << 22);
        uint64_t phy = b + off < b ? b : b + off; /* no wrap of b + off */
        if (phy > UINT64_MAX - (size - 1u))
            phy = UINT64_MAX - (size - 1u);
        a[i].physical = phy;
        a[i].size = size;
    }
}

/* A segment's worth of slices built through the builder's hook. */
typedef struct segkeys {
    uint64_t *keys;
    uint32_t *first;
    uint32_t nslices;
    mh_rec **rows;
    uint32_t *nrows;
} segkeys;

static void build_segment(tu_rng *rng, mh_builder *b, segkeys *sk,
                          uint32_t nslices, uint32_t maxrows) {
    sk->nslices = nslices;
    sk->first = calloc(nslices + 1, 4);
    sk->rows = calloc(nslices, sizeof *sk->rows);
    sk->nrows = calloc(nslices, 4);
    size_t cap = 1024;
    sk->keys = malloc(cap * 8);
    CHECK(sk->first && sk->rows && sk->nrows && sk->keys);
    for (uint32_t s = 0; s < nslices; s++) {
        uint32_t n = (uint32_t)tu_range(rng, 1, maxrows);
        mh_rec *a = malloc(n * sizeof *a);
        CHECK(a);
        gen_rows(rng, a, n, (unsigned)tu_range(rng, 1, 8), 0);
        CHECK_OK(mh_builder_run(b, a, n, 0));
        uint64_t *bk;
        size_t nb = brute_keys(a, n, &bk);
        size_t nk = b->sum_keys.n / 8;
        CHECKF(nk == nb, "slice %u: %zu keys, brute force %zu", s, nk, nb);
        CHECK(memcmp(b->sum_keys.p, bk, nb * 8) == 0);
        free(bk);
        while (sk->first[s] + nk > cap) {
            cap *= 2;
            sk->keys = realloc(sk->keys, cap * 8);
            CHECK(sk->keys);
        }
        memcpy(sk->keys + sk->first[s], b->sum_keys.p, nk * 8);
        sk->first[s + 1] = sk->first[s] + (uint32_t)nk;
        sk->rows[s] = a;
        sk->nrows[s] = n;
    }
}

static void free_segment(segkeys *sk) {
    for (uint32_t s = 0; s < sk->nslices; s++)
        free(sk->rows[s]);
    free(sk->rows);
    free(sk->nrows);
    free(sk->first);
    free(sk->keys);
}

/* Does slice s have a key of [ga, gb] with an op of ops? */
static int brute_candidate(const segkeys *sk, uint32_t s, uint64_t ga,
                           uint64_t gb, uint32_t ops) {
    for (uint32_t i = sk->first[s]; i < sk->first[s + 1]; i++) {
        uint64_t g = sk->keys[i] >> 2;
        if (g >= ga && g <= gb && (ops >> (sk->keys[i] & 3) & 1))
            return 1;
    }
    return 0;
}

/* And is it needed: does a row of s of ops overlap [a, b]? (a candidate
 * set must hold every such slice) */
static int brute_match(const segkeys *sk, uint32_t s, uint64_t a, uint64_t b,
                       uint32_t ops) {
    for (uint32_t i = 0; i < sk->nrows[s]; i++) {
        const mh_rec *x = &sk->rows[s][i];
        if ((ops >> x->op & 1) && x->physical <= b &&
            x->physical + (x->size - 1u) >= a)
            return 1;
    }
    return 0;
}

static void check_queries(tu_rng *rng, const segkeys *sk, const mh_sum_view *v) {
    for (int qi = 0; qi < 400; qi++) {
        /* around a key of the segment most of the time, else anywhere */
        uint64_t a;
        uint32_t nk = sk->first[sk->nslices];
        if (tu_below(rng, 4) && nk) {
            uint64_t key = sk->keys[tu_below(rng, nk)];
            a = ((key >> 2) << SHIFT) + tu_below(rng, 1u << SHIFT);
            if (tu_below(rng, 2) && a > (3u << SHIFT))
                a -= 3u << SHIFT;
        } else {
            a = tu_next(rng);
        }
        uint64_t len = tu_below(rng, 3) == 0 ? tu_below(rng, 80ull << SHIFT)
                                              : tu_below(rng, 4096);
        uint64_t b = a + len < a ? UINT64_MAX : a + len;
        uint32_t ops = (uint32_t)tu_range(rng, 1, 7);
        snprintf(tu_context, sizeof tu_context,
                 "query %d [0x%llx, 0x%llx] ops %u", qi, (unsigned long long)a,
                 (unsigned long long)b, ops);
        mh_sum_iter it;
        uint64_t ga = a >> SHIFT, gb = b >> SHIFT;
        int on = mh_sum_iter_init(&it, v, a, b, ops);
        CHECK(on == (gb - ga < MH_SUM_MAX_GRANULES));
        if (!on)
            continue;
        /* forward from a random slice, stepping as the slice walk does */
        uint32_t s0 = (uint32_t)tu_below(rng, sk->nslices);
        uint32_t s = s0;
        for (;;) {
            uint32_t c = mh_sum_next(&it, s);
            uint32_t want = s;
            while (want < sk->nslices && !brute_candidate(sk, want, ga, gb, ops))
                want++;
            if (want == sk->nslices) {
                CHECKF(c == UINT32_MAX, "next(%u) = %u, expected none", s, c);
                break;
            }
            CHECKF(c == want, "next(%u) = %u, expected %u", s, c, want);
            s = c + 1 + (uint32_t)tu_below(rng, 2); /* sometimes skip one */
            if (s >= sk->nslices)
                break;
        }
        for (uint32_t t = 0; t < sk->nslices; t++)
            if (brute_match(sk, t, a, b, ops))
                CHECKF(brute_candidate(sk, t, ga, gb, ops),
                       "slice %u matches but is no candidate", t);
        /* backward */
        CHECK(mh_sum_iter_init(&it, v, a, b, ops) == 1);
        s = s0;
        for (;;) {
            uint32_t c = mh_sum_prev(&it, s);
            int64_t want = s;
            while (want >= 0 && !brute_candidate(sk, (uint32_t)want, ga, gb, ops))
                want--;
            if (want < 0) {
                CHECKF(c == UINT32_MAX, "prev(%u) = %u, expected none", s, c);
                break;
            }
            CHECKF(c == (uint32_t)want, "prev(%u) = %u, expected %lld", s, c,
                   (long long)want);
            if (c == 0)
                break;
            s = c - 1;
        }
    }
    tu_context[0] = 0;
}

static void serialize(const segkeys *sk, mh_buf *out) {
    out->n = 0;
    CHECK_OK(mh_summary_serialize(sk->keys, sk->first, sk->nslices, out));
}

/* Each corruption of a good section must be refused, with MH_ECORRUPT. */
static void check_corruptions(const uint8_t *good, size_t size, uint32_t nslices) {
    uint8_t *p = malloc(size);
    mh_sum_view v;
    mh_diag d = {0, 0, ""};
    CHECK(p);
#define BAD(what, edit, minor)                                                 \
    do {                                                                       \
        memcpy(p, good, size);                                                 \
        edit;                                                                  \
        d.code = 0;                                                            \
        int rc_ = mh_summary_parse(p, size, 1000, (minor), nslices, &v, &d);   \
        CHECKF(rc_ == MH_ECORRUPT && d.msg[0], "%s: got %s", what,             \
               mh_error_name(rc_));                                            \
    } while (0)
    uint32_t ne = mhf_load_u32(good + MHF_SUM_ENTRY_COUNT);
    uint8_t *e0 = p + MHF_SUM_HEADER_SIZE;
    uint8_t *post = p + MHF_SUM_HEADER_SIZE + (size_t)ne * MHF_SUM_ENTRY_SIZE;
    CHECK(ne >= 3);
    BAD("reserved0", p[MHF_SUM_RESERVED0] = 1, 0);
    BAD("reserved1", p[MHF_SUM_RESERVED1 + 7] = 1, 0);
    BAD("shift", mhf_store_u32(p + MHF_SUM_SHIFT, 64), 0);
    BAD("entry_size", mhf_store_u32(p + MHF_SUM_ENTRY_SIZE_OFF, 32), 0);
    BAD("entry_size small", mhf_store_u32(p + MHF_SUM_ENTRY_SIZE_OFF, 16), 1);
    BAD("entry_count", mhf_store_u32(p + MHF_SUM_ENTRY_COUNT, ne + 1), 0);
    BAD("entry_count huge", mhf_store_u32(p + MHF_SUM_ENTRY_COUNT, UINT32_MAX), 1);
    BAD("posting_count", mhf_store_u64(p + MHF_SUM_POSTING_COUNT,
                                      mhf_load_u64(good + MHF_SUM_POSTING_COUNT) - 1), 0);
    BAD("posting_count huge", mhf_store_u64(p + MHF_SUM_POSTING_COUNT, UINT64_MAX / 2), 1);
    BAD("op", e0[MHF_SUM_E_OP] = 3, 0);
    BAD("entry reserved", e0[MHF_SUM_E_RESERVED + 1] = 1, 0);
    BAD("order", memcpy(e0 + MHF_SUM_ENTRY_SIZE + MHF_SUM_E_GRANULE,
                        e0 + MHF_SUM_E_GRANULE, 8);
        e0[MHF_SUM_ENTRY_SIZE + MHF_SUM_E_OP] = e0[MHF_SUM_E_OP], 0);
    BAD("posting_first", mhf_store_u64(e0 + MHF_SUM_ENTRY_SIZE +
                                           MHF_SUM_E_POSTING_FIRST, 0), 0);
    BAD("posting_count 0", mhf_store_u32(e0 + MHF_SUM_E_POSTING_COUNT, 0), 0);
    BAD("slice out of range", mhf_store_u32(post, nslices), 0);
    size_t keep = size;
    BAD("short", size = MHF_SUM_HEADER_SIZE - 1, 0);
    size = keep;
    BAD("truncated", size -= 4, 0);
    size = keep;
    /* postings not increasing: the first entry with two */
    for (uint32_t i = 0; i < ne; i++) {
        const uint8_t *e = good + MHF_SUM_HEADER_SIZE + (size_t)i * MHF_SUM_ENTRY_SIZE;
        if (mhf_load_u32(e + MHF_SUM_E_POSTING_COUNT) >= 2) {
            uint64_t f = mhf_load_u64(e + MHF_SUM_E_POSTING_FIRST);
            BAD("postings order",
                mhf_store_u32(post + f * 4 + 4, mhf_load_u32(post + f * 4)), 0);
            break;
        }
    }
    /* a later minor: reserved ignored, longer section accepted */
    memcpy(p, good, size);
    p[MHF_SUM_RESERVED0] = 1;
    e0[MHF_SUM_E_RESERVED] = 7;
    CHECK_OK(mh_summary_parse(p, size, 0, 1, nslices, &v, &d));
    CHECK_RC(mh_summary_parse(p, size, 0, 0, nslices, &v, &d), MH_ECORRUPT);
    free(p);
#undef BAD
}

static void check_exactness(const segkeys *sk, const mh_sum_view *v) {
    mh_diag d = {0, 0, ""};
    uint64_t total = 0;
    for (uint32_t s = 0; s < sk->nslices; s++) {
        uint32_t n = sk->first[s + 1] - sk->first[s];
        CHECK_OK(mh_summary_check_slice(v, s, sk->keys + sk->first[s], n, 0, &d));
        total += n;
    }
    CHECK(total == v->nposting);
    /* a key the slice does not have: refused */
    uint64_t k = sk->keys[0] ^ 1;
    uint32_t s = 0;
    if (!brute_candidate(sk, s, k >> 2, k >> 2, 1u << (k & 3)) && (k & 3) < 3)
        CHECK_RC(mh_summary_check_slice(v, s, &k, 1, 0, &d), MH_ECORRUPT);
    k = UINT64_MAX >> 2; /* a granule no slice meets */
    CHECK_RC(mh_summary_check_slice(v, 0, &k, 1, 0, &d), MH_ECORRUPT);
}

static void test_random(uint64_t seed) {
    tu_rng rng = {seed};
    mh_segw_config cfg = {.rows_per_block = 256, .chunk_min_accesses = 16,
                          .lz4_acceleration = 1,
                          .summary = mh_summary_hooks_default()};
    mh_builder *b;
    CHECK_OK(mh_builder_create(&cfg, &b));
    segkeys sk;
    build_segment(&rng, b, &sk, (uint32_t)tu_range(&rng, 1, 40), 2000);
    mh_buf out = {0};
    serialize(&sk, &out);
    mh_sum_view v;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_summary_parse(out.p, out.n, 0, 0, sk.nslices, &v, &d));
    CHECK(v.nposting == sk.first[sk.nslices]);
    CHECK(v.shift == SHIFT);
    /* one slice fewer than the postings name: refused */
    if (sk.nslices > 1)
        CHECK_RC(mh_summary_parse(out.p, out.n, 0, 0, sk.nslices - 1, &v, &d),
                 MH_ECORRUPT);
    CHECK_OK(mh_summary_parse(out.p, out.n, 0, 0, sk.nslices, &v, &d));
    check_queries(&rng, &sk, &v);
    check_exactness(&sk, &v);
    if (mhf_load_u32(out.p + MHF_SUM_ENTRY_COUNT) >= 3)
        check_corruptions(out.p, out.n, sk.nslices);
    mh_buf_free(&out);
    free_segment(&sk);
    mh_builder_destroy(b);
}

/* Rows so wide that a slice meets more than MH_SUM_SLICE_KEYS_MAX keys:
 * the slice says so and the segment gets no section. */
static void test_overflow(void) {
    mh_segw_config cfg = {.rows_per_block = 256, .chunk_min_accesses = 16,
                          .lz4_acceleration = 1,
                          .summary = mh_summary_hooks_default()};
    mh_builder *b;
    CHECK_OK(mh_builder_create(&cfg, &b));
    uint32_t n = MH_SUM_SLICE_KEYS_MAX / 65536 + 2;
    mh_rec *a = calloc(n, sizeof *a);
    CHECK(a);
    for (uint32_t i = 0; i < n; i++) {
        a[i].transition = i;
        a[i].physical = (uint64_t)i << 33;
        a[i].size = UINT32_MAX;
    }
    CHECK_OK(mh_builder_run(b, a, n, 0));
    CHECK(b->sum_keys.n == 8);
    uint64_t k;
    memcpy(&k, b->sum_keys.p, 8);
    CHECK(k == MH_SUM_OVERFLOW);
    uint64_t keys[3] = {5, MH_SUM_OVERFLOW, 9};
    uint32_t first[4] = {0, 1, 2, 3};
    mh_buf out = {0};
    CHECK_OK(mh_summary_serialize(keys, first, 3, &out));
    CHECK(out.n == 0);
    /* the builder goes on with normal slices after it */
    a[0].size = 8;
    CHECK_OK(mh_builder_run(b, a, 1, 0));
    CHECK(b->sum_keys.n == 8);
    memcpy(&k, b->sum_keys.p, 8);
    CHECK(k == 0);
    free(a);
    mh_builder_destroy(b);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    for (int i = 0; i < rounds; i++)
        test_random(0x5eed0000u + (uint64_t)i);
    test_overflow();
    printf("summary: %d random segments, overflow: ok\n", rounds);
    return 0;
}
