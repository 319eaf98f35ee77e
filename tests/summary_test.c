/*
 * summary_test.c - the address summary (src/summary_build.c,
 * src/summary_read.c) against brute force: the keys a slice builder computes
 * (granules met by each row, multi-granule and top-of-space rows, huge
 * rows up to the overflow), the serialized section parsed back, the
 * candidate slices of random ranges (forward and backward lazy merges)
 * against the slices whose rows meet the range's granules, fsck's exactness
 * check, and every field of the section corrupted in turn. Then stores
 * written by the writer: every answer the same with the summary used and
 * ignored, and the oracle's; the summary narrows the slices of a narrow
 * query; a damaged summary fails the queries that use it (MH_ECHECKSUM)
 * and no other.
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
        /* the builder's keys are unique, in no order */
        qsort(b->sum_keys.p, nk, 8, cmp_u64);
        CHECK(memcmp(b->sum_keys.p, bk, nb * 8) == 0);
        /* fsck's way, from rows in any order: the same keys, sorted */
        mh_buf sb = {0};
        mh_sumset set;
        CHECK_OK(mh_sumset_begin(&set, &sb, (uint32_t)tu_below(rng, n)));
        for (uint32_t i = 0; i < n; i++) {
            const mh_rec *x = &a[n - 1 - i]; /* another order */
            CHECK_OK(mh_sumset_add(&set, x->physical, x->size, x->op));
        }
        CHECK_OK(mh_sumset_end(&set, tu_below(rng, 2) ? &b->sort : NULL));
        CHECKF(sb.n == nb * 8 && memcmp(sb.p, bk, nb * 8) == 0,
               "slice %u: sumset %zu keys, brute force %zu", s, sb.n / 8, nb);
        mh_buf_free(&sb);
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
static unsigned g_extra; /* the section's shift above SHIFT */

static int brute_candidate(const segkeys *sk, uint32_t s, uint64_t ga,
                           uint64_t gb, uint32_t ops) {
    for (uint32_t i = sk->first[s]; i < sk->first[s + 1]; i++) {
        uint64_t g = sk->keys[i] >> 2 >> g_extra;
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
            if (tu_below(rng, 2) && a > (3ull << v->shift))
                a -= 3ull << v->shift;
        } else {
            a = tu_next(rng);
        }
        uint64_t len = tu_below(rng, 3) == 0 ? tu_below(rng, 80ull << v->shift)
                                              : tu_below(rng, 4096);
        uint64_t b = a + len < a ? UINT64_MAX : a + len;
        uint32_t ops = (uint32_t)tu_range(rng, 1, 7);
        snprintf(tu_context, sizeof tu_context,
                 "query %d [0x%llx, 0x%llx] ops %u", qi, (unsigned long long)a,
                 (unsigned long long)b, ops);
        mh_sum_iter it;
        uint64_t ga = a >> v->shift, gb = b >> v->shift;
        g_extra = v->shift - SHIFT;
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

static void serialize(const segkeys *sk, uint64_t count, mh_buf *out) {
    out->n = 0;
    CHECK_OK(mh_summary_serialize(sk->keys, sk->first, sk->nslices, count, out));
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
    CHECK_OK(mh_summary_parse(p, size, 0, MHF_VERSION_MINOR + 1, nslices, &v, &d));
    CHECK_RC(mh_summary_parse(p, size, 0, MHF_VERSION_MINOR, nslices, &v, &d), MH_ECORRUPT);
    free(p);
#undef BAD
}

static void check_exactness(const segkeys *sk, const mh_sum_view *v) {
    mh_diag d = {0, 0, ""};
    uint64_t total = 0;
    for (uint32_t s = 0; s < sk->nslices; s++) {
        uint32_t n = sk->first[s + 1] - sk->first[s];
        qsort(sk->keys + sk->first[s], n, 8, cmp_u64);
        uint64_t listed = 0;
        CHECK_OK(mh_summary_check_slice(v, s, sk->keys + sk->first[s], n, 0,
                                        &listed, &d));
        CHECK(v->shift > SHIFT ? listed <= n : listed == n);
        total += listed;
    }
    CHECK(total == v->nposting);
    /* a key the slice does not have: refused */
    uint64_t k = sk->keys[0] ^ 1;
    uint32_t s = 0;
    g_extra = v->shift - SHIFT;
    if (!brute_candidate(sk, s, k >> 2 >> g_extra, k >> 2 >> g_extra, 1u << (k & 3)) &&
        (k & 3) < 3)
        CHECK_RC(mh_summary_check_slice(v, s, &k, 1, 0, &total, &d), MH_ECORRUPT);
    k = UINT64_MAX >> 2; /* a granule no slice meets */
    CHECK_RC(mh_summary_check_slice(v, 0, &k, 1, 0, &total, &d), MH_ECORRUPT);
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
    /* a budget that lets it be (shift 16), then the tightest one (the
     * granules grow until it fits, or to shift 60) */
    for (int pass = 0; pass < 2; pass++) {
        serialize(&sk, pass ? 0 : UINT64_MAX / 2, &out);
        mh_sum_view v;
        mh_diag d = {0, 0, ""};
        CHECK_OK(mh_summary_parse(out.p, out.n, 0, 0, sk.nslices, &v, &d));
        CHECK(pass ? v.shift > SHIFT && (out.n <= 4096 || v.shift == 60)
                   : v.shift == SHIFT && v.nposting == sk.first[sk.nslices]);
        /* one slice fewer than the postings name: refused */
        if (sk.nslices > 1 && v.nentries)
            CHECK_RC(mh_summary_parse(out.p, out.n, 0, 0, sk.nslices - 1, &v, &d),
                     MH_ECORRUPT);
        CHECK_OK(mh_summary_parse(out.p, out.n, 0, 0, sk.nslices, &v, &d));
        check_queries(&rng, &sk, &v);
        check_exactness(&sk, &v);
        if (mhf_load_u32(out.p + MHF_SUM_ENTRY_COUNT) >= 3)
            check_corruptions(out.p, out.n, sk.nslices);
    }
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
    mh_buf sb = {0};
    mh_sumset set;
    CHECK_OK(mh_sumset_begin(&set, &sb, n));
    for (uint32_t i = 0; i < n; i++)
        CHECK_OK(mh_sumset_add(&set, a[i].physical, a[i].size, a[i].op));
    CHECK_OK(mh_sumset_end(&set, NULL));
    CHECK(sb.n == 8);
    memcpy(&k, sb.p, 8);
    CHECK(k == MH_SUM_OVERFLOW);
    mh_buf_free(&sb);
    uint64_t keys[3] = {5, MH_SUM_OVERFLOW, 9};
    uint32_t first[4] = {0, 1, 2, 3};
    mh_buf out = {0};
    CHECK_OK(mh_summary_serialize(keys, first, 3, 1000, &out));
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

/* A trace whose working set drifts (region k for a while, then k + 1),
 * with a hot stack shared by all slices, scattered stray accesses and some
 * wide ones: narrow queries then touch few slices. */
static void drift_trace(tu_rng *rng, mh_access *all, size_t n) {
    for (size_t i = 0; i < n; i++) {
        mh_access *x = &all[i];
        memset(x, 0, sizeof *x);
        x->id = i;
        x->transition = i / 3;
        unsigned kind = (unsigned)tu_below(rng, 100);
        uint64_t region = (uint64_t)(i / 3000) << 22;
        if (kind < 60)
            x->physical = 0x10000000u + region + tu_below(rng, 1u << 18);
        else if (kind < 98)
            x->physical = 0x7fff0000u + tu_below(rng, 4096); /* the stack */
        else if (kind < 99 && tu_below(rng, 4) == 0)
            x->physical = tu_below(rng, 1ull << 32); /* strays */
        else if (kind < 99)
            x->physical = 0x7fff0000u + tu_below(rng, 4096);
        else
            x->physical = 0x20000000u + region + tu_below(rng, 1u << 20);
        x->size = kind == 99 ? (uint32_t)tu_range(rng, 1, 1u << 18)
                             : 1u << tu_below(rng, 4);
        if (x->physical > UINT64_MAX - (x->size - 1u))
            x->physical = UINT64_MAX - (x->size - 1u);
        x->op = (uint8_t)(kind % 3 == 0 ? MH_OP_WRITE : MH_OP_READ);
        if (tu_below(rng, 50) == 0)
            x->op = MH_OP_EXEC;
        x->linear = x->physical;
        x->has_linear = 1;
    }
}

static void write_store(const char *dir, const mh_access *all, size_t n) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 1000;
    o.block_accesses = 64;
    o.commit_accesses = 30000;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    for (size_t i = 0; i < n; i += 777)
        CHECK_OK(mh_writer_append_batch(w, all + i, n - i < 777 ? n - i : 777, NULL));
    CHECK_OK(mh_writer_close(w));
}

/* Runs q with the summary used and ignored; both must be the oracle's. */
static size_t both_ways(mh_reader *r, const mh_access *all, size_t n,
                        const mh_query *q, size_t max) {
    r->summary_off = 0;
    size_t got = tu_check_query(r, all, n, q, max);
    r->summary_off = 1;
    CHECK(tu_check_query(r, all, n, q, max) == got);
    r->summary_off = 0;
    return got;
}

typedef struct problems {
    int n, summary_code;
} problems;
static problems run_fsck(const char *dir);

/* Segment i of r, opened. */
static const mh_seg *seg_of(const mh_reader *r, size_t i) {
    const mh_seg *s = NULL;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_reader_seg(r, i, &s, &d));
    return s;
}

static void test_store(void) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "summary");
    tu_rng rng = {77};
    size_t n = 120000;
    mh_access *all = malloc(n * sizeof *all);
    CHECK(all);
    drift_trace(&rng, all, n);
    write_store(dir, all, n);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(r->nsegs >= 4);
    size_t narrowed = 0, narrow = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_section *sec;
        CHECK_OK(mh_seg_section(seg_of(r, i), MHF_SECT_SUMMARY, &sec));
        CHECK(sec->flags == 0); /* optional */
        /* a few hundredths of a byte per access at most (the writer's
         * budget: count / 32 + 4 KiB) */
        CHECKF(sec->size <= seg_of(r, i)->count / 32 + 4096,
               "segment %zu: summary of %llu bytes for %llu accesses", i,
               (unsigned long long)sec->size,
               (unsigned long long)seg_of(r, i)->count);
    }
    /* narrow queries on touched addresses: answers, and slices skipped */
    for (int k = 0; k < 600; k++) {
        const mh_access *x = &all[tu_below(&rng, n)];
        mh_query q;
        mh_query_init(&q);
        uint64_t width = tu_below(&rng, 2) ? 8 : 4096;
        q.addr_first = x->physical & ~(width - 1);
        q.addr_last = q.addr_first + (width - 1);
        q.ops = (uint32_t)tu_range(&rng, 1, 7);
        q.direction = tu_below(&rng, 2) ? MH_FORWARD : MH_BACKWARD;
        q.start = all[tu_below(&rng, n)].transition;
        size_t max = (size_t)tu_range(&rng, 1, 20);
        snprintf(tu_context, sizeof tu_context, "narrow query %d", k);
        both_ways(r, all, n, &q, max);
        for (size_t i = 0; i < r->nsegs; i++) {
            mh_sum_iter it;
            mh_diag d = {0, 0, ""};
            int on = mh_summary_query(seg_of(r, i), q.addr_first, q.addr_last,
                                      q.ops, &it, &d);
            CHECK(on == 1);
            uint32_t c = 0, s = 0;
            while ((s = mh_sum_next(&it, s)) != UINT32_MAX) {
                c++;
                s++;
            }
            narrow++;
            narrowed += c < seg_of(r, i)->nslices;
        }
    }
    tu_context[0] = 0;
    CHECKF(narrowed * 2 > narrow, "the summary narrowed %zu of %zu segment "
           "walks", narrowed, narrow);
    /* never touched: nothing, both ways */
    for (int k = 0; k < 200; k++) {
        mh_query q;
        mh_query_init(&q);
        q.addr_first = 0x40000000u + (tu_below(&rng, 1u << 20) << 4);
        q.addr_last = q.addr_first + tu_below(&rng, 64);
        q.ops = MH_OPS_ALL;
        q.direction = tu_below(&rng, 2) ? MH_FORWARD : MH_BACKWARD;
        q.start = q.direction == MH_FORWARD ? 0 : UINT64_MAX;
        int hit = 0;
        for (size_t i = 0; i < n && !hit; i++)
            hit = all[i].physical <= q.addr_last &&
                  all[i].physical + (all[i].size - 1u) >= q.addr_first;
        size_t got = both_ways(r, all, n, &q, 10);
        CHECK(hit || got == 0);
    }
    /* random queries of every shape, plain, chains and cursors */
    for (int k = 0; k < 800; k++) {
        mh_query q;
        size_t max;
        tu_random_query(&rng, all, n, &q, &max);
        snprintf(tu_context, sizeof tu_context, "random query %d", k);
        both_ways(r, all, n, &q, max);
        r->summary_off = (int)tu_below(&rng, 2);
        if (k % 8 == 0)
            tu_check_chain(r, all, n, &q, 4, &rng);
        if (k % 8 == 4)
            tu_check_cursor(r, all, n, &q, 300, &rng);
        r->summary_off = 0;
    }
    tu_context[0] = 0;
    /* the summary of the second segment damaged: its narrow queries fail
     * with the checksum error, wide ones and other segments' still work */
    const mh_section *sec;
    CHECK_OK(mh_seg_section(seg_of(r, 1), MHF_SECT_SUMMARY, &sec));
    uint64_t off = sec->offset + sec->size - 2;
    char path[600];
    tu_join(path, sizeof path, dir, seg_of(r, 1)->name);
    uint64_t s1_first = seg_of(r, 1)->id_first, s1_t = seg_of(r, 1)->t_first;
    mh_reader_close(r);
    size_t len;
    unsigned char *bytes = tu_read_file(path, &len);
    CHECK(bytes && off < len);
    bytes[off] ^= 0x40;
    tu_write_file(path, bytes, len);
    free(bytes);
    problems x = run_fsck(dir);
    CHECKF(x.n == 1 && x.summary_code == MH_ECHECKSUM,
           "fsck: %d problems, summary code %d", x.n, x.summary_code);
    CHECK_OK(mh_reader_open(dir, &r));
    mh_query q;
    mh_query_init(&q);
    q.start_kind = MH_FROM_ID;
    q.start = s1_first;
    q.addr_first = 0x7fff0000u;
    q.addr_last = 0x7fff0007u;
    mh_access out[4];
    size_t got;
    CHECK_RC(mh_query_run(r, &q, out, 4, &got), MH_ECHECKSUM);
    char msg[MH_ERRMSG_MAX];
    mh_reader_errmsg(r, msg, sizeof msg);
    CHECKF(strstr(msg, "address summary") && strstr(msg, "checksum"),
           "detail: %s", msg);
    r->summary_off = 1;
    CHECK(tu_check_query(r, all, n, &q, 4) == 4);
    r->summary_off = 0;
    q.addr_first = 0;
    q.addr_last = UINT64_MAX; /* wide: the summary is not read */
    CHECK(tu_check_query(r, all, n, &q, 4) == 4);
    q.start_kind = MH_FROM_TRANSITION;
    q.start = s1_t;
    q.direction = MH_BACKWARD; /* segment 0 and the start of 1: */
    q.addr_first = 0x7fff0000u;
    q.addr_last = 0x7fff0007u;
    CHECK_RC(mh_query_run(r, &q, out, 4, &got), MH_ECHECKSUM);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}


/* fsck's problems, kept. */
static void on_problem(void *ctx, const mh_problem *p) {
    problems *x = ctx;
    x->n++;
    if (strstr(p->message, "address summary"))
        x->summary_code = p->code;
}

static problems run_fsck(const char *dir) {
    problems x = {0, 0};
    mh_verify_result res = {.struct_size = sizeof res};
    mh_verify(dir, 0, on_problem, &x, &res);
    return x;
}

/* Rewrites segment `name` of dir with its summary's bytes edited by `edit`
 * and every checksum after them (directory entry, directory, header, the
 * MANIFEST's copy) made right again: damage only fsck's exactness check
 * can see. */
static void resum_segment(const char *dir, const char *name,
                          void (*edit)(uint8_t *sec, uint64_t size, uint32_t nslices),
                          uint32_t nslices) {
    char path[600];
    tu_join(path, sizeof path, dir, name);
    size_t len;
    uint8_t *b = tu_read_file(path, &len);
    CHECK(b);
    uint32_t ndir = mhf_load_u32(b + MHF2_SEG_DIR_COUNT);
    uint64_t doff = mhf_load_u64(b + MHF2_SEG_DIR_OFF);
    int found = 0;
    for (uint32_t i = 0; i < ndir; i++) {
        uint8_t *e = b + doff + (size_t)i * MHF2_DIR_SIZE;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) != MHF_SECT_SUMMARY)
            continue;
        uint64_t off = mhf_load_u64(e + MHF2_DIR_OFFSET);
        uint64_t size = mhf_load_u64(e + MHF2_DIR_BYTES);
        edit(b + off, size, nslices);
        mhf_store_u64(e + MHF2_DIR_SUM, mh_hash(b + off, size));
        found = 1;
    }
    CHECK(found);
    mhf_store_u64(b + MHF2_SEG_DIR_SUM, mh_hash(b + doff, (size_t)ndir * MHF2_DIR_SIZE));
    uint64_t hsum = mh_hash(b, MHF_SEG_HEADER_SUM);
    mhf_store_u64(b + MHF_SEG_HEADER_SUM, hsum);
    tu_write_file(path, b, len);
    free(b);
    mh_manifest m;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_manifest_load(dir, &m, &d));
    for (size_t i = 0; i < m.nrecs; i++) {
        char nm[MHF_SEGMENT_NAME_LEN + 1];
        mh_segment_name(nm, m.recs[i].seq);
        if (!strcmp(nm, name))
            m.recs[i].header_sum = hsum;
    }
    CHECK_OK(mh_manifest_store(dir, &m, &d));
    mh_manifest_free(&m);
}

/* The last posting of the first entry that can take it moves to the last
 * slice: that slice is listed where it has no row, and the slice it was
 * loses a granule it meets. */
static void move_posting(uint8_t *p, uint64_t size, uint32_t nslices) {
    (void)size;
    uint32_t ne = mhf_load_u32(p + MHF_SUM_ENTRY_COUNT);
    uint8_t *post = p + MHF_SUM_HEADER_SIZE + (size_t)ne * MHF_SUM_ENTRY_SIZE;
    for (uint32_t i = 0; i < ne; i++) {
        uint8_t *e = p + MHF_SUM_HEADER_SIZE + (size_t)i * MHF_SUM_ENTRY_SIZE;
        uint64_t last = mhf_load_u64(e + MHF_SUM_E_POSTING_FIRST) +
                        mhf_load_u32(e + MHF_SUM_E_POSTING_COUNT) - 1;
        if (mhf_load_u32(post + last * 4) < nslices - 1) {
            mhf_store_u32(post + last * 4, nslices - 1);
            return;
        }
    }
    CHECK(0);
}

static void test_fsck(void) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "summary-fsck");
    tu_rng rng = {78};
    size_t n = 40000;
    mh_access *all = malloc(n * sizeof *all);
    CHECK(all);
    drift_trace(&rng, all, n);
    write_store(dir, all, n);
    problems x = run_fsck(dir);
    CHECKF(x.n == 0, "%d problems in a fresh store", x.n);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    char name[MHF_SEGMENT_NAME_LEN + 1];
    memcpy(name, seg_of(r, 0)->name, sizeof name);
    uint32_t nslices = seg_of(r, 0)->nslices;
    mh_reader_close(r);
    resum_segment(dir, name, move_posting, nslices);
    x = run_fsck(dir);
    CHECKF(x.n == 1 && x.summary_code == MH_ECORRUPT,
           "%d problems, summary code %d", x.n, x.summary_code);
    free(all);
    tu_rmtree(dir);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    for (int i = 0; i < rounds; i++)
        test_random(0x5eed0000u + (uint64_t)i);
    test_overflow();
    test_store();
    test_fsck();
    printf("summary: %d random segments, overflow, store: ok\n", rounds);
    return 0;
}
