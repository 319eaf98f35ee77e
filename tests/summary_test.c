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
 * and no other. Both sections: 9 (the fine one, keys at shift 10) and 6
 * (derived from them), each parsed, queried and checked; stores queried
 * with section 9, with section 6 only and with none; a store whose slice
 * overflows at shift 10 gets neither and still answers.
 */
#include <string.h>

#include "internal.h"
#include "resum.h"
#include "testutil.h"

/* the keys' shift, the writer's (section 9's least; section 6's are
 * derived from them) */
#define SHIFT MHF_SUM_FINE_SHIFT

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The keys of rows a[0..n), the slow way: every granule of every row,
 * sorted, duplicates dropped. */
static size_t brute_keys_at(const mh_rec *a, uint32_t n, unsigned shift,
                            uint64_t **out) {
    size_t cap = 16, m = 0;
    uint64_t *k = malloc(cap * 8);
    CHECK(k);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t g0 = a[i].physical >> shift;
        uint64_t g1 = (a[i].physical + (a[i].size - 1u)) >> shift;
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

static size_t brute_keys(const mh_rec *a, uint32_t n, uint64_t **out) {
    return brute_keys_at(a, n, SHIFT, out);
}

/* The keys the items it[0..n) stand for (a key, or MH_SUM_RANGE | first
 * then last: every key between, a granule apart), sorted; checks the
 * items' contract on the way: each op's items increasing, a range of one
 * op over more than two keys. */
static size_t expand_items(const void *items, size_t n, uint64_t **out) {
    const uint64_t *it = items;
    size_t cap = 16, m = 0;
    uint64_t *k = malloc(cap * 8);
    uint64_t prev[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    CHECK(k);
    for (size_t i = 0; i < n; i++) {
        uint64_t a = it[i], z = a;
        if (mh_sum_is_range(a)) {
            CHECKF(i + 1 < n, "a range's first word ends the list (%zu items)", n);
            a &= ~MH_SUM_RANGE;
            z = it[++i];
            CHECKF((z & 3) == (a & 3) && z > a + 4,
                   "range 0x%llx .. 0x%llx", (unsigned long long)a,
                   (unsigned long long)z);
        }
        CHECK(a < (UINT64_C(1) << 56));
        unsigned op = (unsigned)(a & 3);
        CHECKF(prev[op] == UINT64_MAX || a > prev[op],
               "op %u: key 0x%llx after 0x%llx", op, (unsigned long long)a,
               (unsigned long long)prev[op]);
        prev[op] = z;
        for (uint64_t c = a;; c += 4) {
            if (m == cap) {
                cap *= 2;
                k = realloc(k, cap * 8);
                CHECK(k);
            }
            k[m++] = c;
            if (c == z)
                break;
        }
    }
    qsort(k, m, 8, cmp_u64);
    *out = k;
    return m;
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

/* A slice builder with the summary hooks, small blocks and chunks. */
static mh_builder *summary_builder(void) {
    mh_segw_config cfg = {.rows_per_block = 256, .chunk_min_accesses = 16,
                          .lz4_acceleration = 1,
                          .summary = mh_summary_hooks_default()};
    mh_builder *b;
    CHECK_OK(mh_builder_create(&cfg, &b));
    return b;
}

/* A segment's worth of slices built through the builder's hook. */
typedef struct segkeys {
    uint64_t *keys; /* each slice's keys, sorted */
    uint32_t *first;
    uint64_t *items; /* each slice's items, as the builder made them */
    uint32_t *ifirst;
    uint32_t nslices;
    mh_rec **rows;
    uint32_t *nrows;
} segkeys;

static void build_segment(tu_rng *rng, mh_builder *b, segkeys *sk,
                          uint32_t nslices, uint32_t maxrows) {
    sk->nslices = nslices;
    sk->first = calloc(nslices + 1, 4);
    sk->ifirst = calloc(nslices + 1, 4);
    sk->rows = calloc(nslices, sizeof *sk->rows);
    sk->nrows = calloc(nslices, 4);
    size_t cap = 1024, icap = 1024;
    sk->keys = malloc(cap * 8);
    sk->items = malloc(icap * 8);
    CHECK(sk->first && sk->ifirst && sk->rows && sk->nrows && sk->keys && sk->items);
    for (uint32_t s = 0; s < nslices; s++) {
        uint32_t n = (uint32_t)tu_range(rng, 1, maxrows);
        mh_rec *a = malloc(n * sizeof *a);
        CHECK(a);
        gen_rows(rng, a, n, (unsigned)tu_range(rng, 1, 8), 0);
        CHECK_OK(mh_builder_run(b, a, n, 0));
        uint64_t *bk;
        size_t nb = brute_keys(a, n, &bk);
        size_t ni = b->sum_keys.n / 8;
        uint64_t *ek;
        size_t nk = expand_items(b->sum_keys.p, ni, &ek);
        CHECKF(nk == nb, "slice %u: %zu keys, brute force %zu", s, nk, nb);
        CHECK(b->sum_nkeys == nk);
        CHECK(memcmp(ek, bk, nb * 8) == 0);
        /* fsck's way, from rows in any order: the same keys, sorted */
        mh_buf sb = {0}, wb = {0};
        mh_sumset set;
        CHECK_OK(mh_sumset_begin(&set, &sb, &wb, (uint32_t)tu_below(rng, n), SHIFT));
        for (uint32_t i = 0; i < n; i++) {
            const mh_rec *x = &a[n - 1 - i]; /* another order */
            CHECK_OK(mh_sumset_add(&set, x->physical, x->size, x->op));
        }
        CHECK_OK(mh_sumset_end(&set, tu_below(rng, 2) ? &b->sort : NULL));
        uint64_t *sk2;
        size_t ns = expand_items(sb.p, sb.n / 8, &sk2);
        CHECKF(ns == nb && memcmp(sk2, bk, nb * 8) == 0,
               "slice %u: sumset %zu keys, brute force %zu", s, ns, nb);
        free(sk2);
        mh_buf_free(&sb);
        mh_buf_free(&wb);
        free(bk);
        while (sk->first[s] + nk > cap) {
            cap *= 2;
            sk->keys = realloc(sk->keys, cap * 8);
            CHECK(sk->keys);
        }
        memcpy(sk->keys + sk->first[s], ek, nk * 8);
        sk->first[s + 1] = sk->first[s] + (uint32_t)nk;
        free(ek);
        while (sk->ifirst[s] + ni > icap) {
            icap *= 2;
            sk->items = realloc(sk->items, icap * 8);
            CHECK(sk->items);
        }
        memcpy(sk->items + sk->ifirst[s], b->sum_keys.p, ni * 8);
        sk->ifirst[s + 1] = sk->ifirst[s] + (uint32_t)ni;
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
    free(sk->ifirst);
    free(sk->items);
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

/* The ops the iterator says list candidate c (right after next / prev
 * returned it): each asked op with a key of the range in c, none other. */
static void check_ops_at(const segkeys *sk, const mh_sum_iter *it, uint32_t c,
                         uint64_t ga, uint64_t gb, uint32_t ops, int fwd) {
    unsigned want = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        if ((ops >> o & 1u) && brute_candidate(sk, c, ga, gb, 1u << o))
            want |= 1u << o;
    unsigned got = mh_sum_ops_at(it, c, fwd);
    CHECKF(got == want, "%s(..) = %u: ops %u, expected %u", fwd ? "next" : "prev", c, got,
           want);
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
            check_ops_at(sk, &it, c, ga, gb, ops, 1);
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
            check_ops_at(sk, &it, c, ga, gb, ops, 0);
            if (c == 0)
                break;
            s = c - 1;
        }
    }
    tu_context[0] = 0;
}

/* The pairs at `extra` bits above SHIFT, the slow way: each slice's
 * keys (sorted, at SHIFT) taken coarser, each distinct one once. */
static size_t brute_pairs(const uint64_t *keys, const uint32_t *first,
                          uint32_t nslices, unsigned extra, size_t *widest) {
    size_t m = 0;
    *widest = 0;
    for (uint32_t s = 0; s < nslices; s++) {
        uint32_t n = first[s + 1] - first[s];
        uint64_t *c = malloc(n * 8 + 8);
        CHECK(c);
        for (uint32_t i = 0; i < n; i++) {
            uint64_t k = keys[first[s] + i];
            c[i] = (k >> 2 >> extra) << 2 | (k & 3);
        }
        qsort(c, n, 8, cmp_u64);
        size_t u = 0;
        for (uint32_t i = 0; i < n; i++)
            u += i == 0 || c[i] != c[i - 1];
        free(c);
        m += u;
        if (u > *widest)
            *widest = u;
    }
    return m;
}

/* mh_summary_count_pairs on the items and on their keys against
 * brute_pairs at every shift the sections may take. */
static void check_counts(const segkeys *sk) {
    for (unsigned extra = 0; extra <= 63 - SHIFT; extra++) {
        size_t wb, wi, wk;
        int oi, ok;
        size_t mb = brute_pairs(sk->keys, sk->first, sk->nslices, extra, &wb);
        size_t mi = mh_summary_count_pairs(sk->items, sk->ifirst, sk->nslices, extra,
                                           &wi, &oi);
        size_t mk = mh_summary_count_pairs(sk->keys, sk->first, sk->nslices, extra,
                                           &wk, &ok);
        CHECKF(oi && ok && mi == mb && wi == wb && mk == mb && wk == wb,
               "extra %u: %zu / %zu pairs (widest %zu / %zu) from the items / "
               "keys, %zu (%zu) by brute force", extra, mi, mk, wi, wk, mb, wb);
    }
}

/* Both sections from the builder's items: out[MH_SUM_COARSE] (6),
 * out[MH_SUM_FINE] (9); each alone is the same bytes, and so are both made
 * from the keys the items stand for, one by one (ranges counted and
 * listed as their keys would be). */
static void serialize(const segkeys *sk, uint64_t count, mh_buf out[2]) {
    out[0].n = out[1].n = 0;
    CHECK_OK(mh_summary_serialize(sk->items, sk->ifirst, sk->nslices, count,
                                  &out[0], &out[1]));
    for (unsigned k = 0; k < MH_SUM_KINDS; k++) {
        mh_buf one = {0};
        CHECK_OK(mh_summary_serialize(sk->items, sk->ifirst, sk->nslices, count,
                                      k ? NULL : &one, k ? &one : NULL));
        CHECK(one.n == out[k].n && memcmp(one.p, out[k].p, one.n) == 0);
        mh_buf_free(&one);
    }
    mh_buf keys[2] = {{0}, {0}};
    CHECK_OK(mh_summary_serialize(sk->keys, sk->first, sk->nslices, count,
                                  &keys[0], &keys[1]));
    for (unsigned k = 0; k < MH_SUM_KINDS; k++) {
        CHECKF(keys[k].n == out[k].n && memcmp(keys[k].p, out[k].p, out[k].n) == 0,
               "section %s: %zu bytes from the items, %zu from their keys",
               k ? "9" : "6", out[k].n, keys[k].n);
        mh_buf_free(&keys[k]);
    }
}

static int parse_kind(unsigned kind, const uint8_t *p, uint64_t size,
                      uint64_t base_off, uint16_t minor, uint32_t nslices,
                      mh_sum_view *v, mh_diag *d) {
    return kind == MH_SUM_FINE
               ? mh_summary_parse_fine(p, size, base_off, minor, nslices, v, d)
               : mh_summary_parse(p, size, base_off, minor, nslices, v, d);
}

/* Each corruption of a good section must be refused, with MH_ECORRUPT. */
static void check_corruptions(const uint8_t *good, size_t size, uint32_t nslices,
                              unsigned kind) {
    uint8_t *p = malloc(size);
    mh_sum_view v;
    mh_diag d = {0, 0, ""};
    CHECK(p);
#define BAD(what, edit, minor)                                                 \
    do {                                                                       \
        memcpy(p, good, size);                                                 \
        edit;                                                                  \
        d.code = 0;                                                            \
        int rc_ = parse_kind(kind, p, size, 1000, (minor), nslices, &v, &d);   \
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
    if (kind == MH_SUM_FINE) { /* 10 .. 63; section 6 is read at any */
        BAD("shift 9", mhf_store_u32(p + MHF_SUM_SHIFT, 9), 0);
    } else {
        memcpy(p, good, size);
        mhf_store_u32(p + MHF_SUM_SHIFT, 9);
        CHECK_OK(mh_summary_parse(p, size, 0, 0, nslices, &v, &d));
    }
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
    CHECK_OK(parse_kind(kind, p, size, 0, MHF_VERSION_MINOR + 1, nslices, &v, &d));
    CHECK_RC(parse_kind(kind, p, size, 0, MHF_VERSION_MINOR, nslices, &v, &d),
             MH_ECORRUPT);
    free(p);
#undef BAD
}

static void check_exactness(const segkeys *sk, const mh_sum_view *v,
                            unsigned min_shift) {
    mh_diag d = {0, 0, ""};
    uint64_t total = 0;
    for (uint32_t s = 0; s < sk->nslices; s++) {
        uint32_t n = sk->first[s + 1] - sk->first[s];
        qsort(sk->keys + sk->first[s], n, 8, cmp_u64);
        uint64_t listed = 0;
        CHECK_OK(mh_summary_check_slice(v, min_shift, s, sk->keys + sk->first[s],
                                        n, SHIFT, 0, &listed, &d));
        CHECK(v->shift > SHIFT ? listed <= n : listed == n);
        total += listed;
        /* the builder's items: the same postings */
        uint64_t from_items = 0;
        CHECK_OK(mh_summary_check_slice(v, min_shift, s, sk->items + sk->ifirst[s],
                                        sk->ifirst[s + 1] - sk->ifirst[s], SHIFT,
                                        0, &from_items, &d));
        CHECK(from_items == listed);
    }
    CHECK(total == v->nposting);
    /* a key the slice does not have: refused */
    uint64_t k = sk->keys[0] ^ 1;
    uint32_t s = 0;
    g_extra = v->shift - SHIFT;
    if (!brute_candidate(sk, s, k >> 2 >> g_extra, k >> 2 >> g_extra, 1u << (k & 3)) &&
        (k & 3) < 3)
        CHECK_RC(mh_summary_check_slice(v, min_shift, s, &k, 1, SHIFT, 0, &total, &d),
                 MH_ECORRUPT);
    k = UINT64_MAX >> 2; /* a granule no slice meets */
    CHECK_RC(mh_summary_check_slice(v, min_shift, 0, &k, 1, SHIFT, 0, &total, &d),
             MH_ECORRUPT);
    /* a section below its type's least shift: refused whatever it lists */
    mh_sum_view low = *v;
    low.shift = min_shift - 1;
    CHECK_RC(mh_summary_check_slice(&low, min_shift, 0, sk->keys, 0, low.shift, 0,
                                    &total, &d), MH_ECORRUPT);
}

static void test_random(uint64_t seed) {
    tu_rng rng = {seed};
    mh_builder *b = summary_builder();
    segkeys sk;
    build_segment(&rng, b, &sk, (uint32_t)tu_range(&rng, 1, 40), 2000);
    check_counts(&sk);
    mh_buf two[2] = {{0}, {0}};
    /* a budget that lets them be (section 6 at shift 16, 9 at 10), then
     * the tightest one (the granules grow until it fits, or to shift 60
     * for 6, 4 bits at a time, 62 for 9, 2 bits at a time) */
    for (int pass = 0; pass < 2; pass++) {
        serialize(&sk, pass ? 0 : UINT64_MAX / 2, two);
        for (unsigned kind = 0; kind < MH_SUM_KINDS; kind++) {
            const mh_buf *out = &two[kind];
            unsigned least = kind ? MHF_SUM_FINE_SHIFT : MHF_SUM_GRANULE_SHIFT;
            unsigned last = kind ? 62 : 60, step = kind ? 2 : 4;
            mh_sum_view v;
            mh_diag d = {0, 0, ""};
            snprintf(tu_context, sizeof tu_context, "seed %llx pass %d section %s",
                     (unsigned long long)seed, pass, kind ? "9" : "6");
            CHECK_OK(parse_kind(kind, out->p, out->n, 0, 0, sk.nslices, &v, &d));
            CHECK((v.shift - least) % step == 0);
            CHECK(pass ? v.shift > least && (out->n <= 4096 || v.shift == last)
                       : v.shift == least);
            CHECK(v.shift != SHIFT || v.nposting == sk.first[sk.nslices]);
            /* one slice fewer than the postings name: refused */
            if (sk.nslices > 1 && v.nentries)
                CHECK_RC(parse_kind(kind, out->p, out->n, 0, 0, sk.nslices - 1, &v, &d),
                         MH_ECORRUPT);
            CHECK_OK(parse_kind(kind, out->p, out->n, 0, 0, sk.nslices, &v, &d));
            check_queries(&rng, &sk, &v);
            check_exactness(&sk, &v, least);
            if (mhf_load_u32(out->p + MHF_SUM_ENTRY_COUNT) >= 3)
                check_corruptions(out->p, out->n, sk.nslices, kind);
        }
        tu_context[0] = 0;
    }
    mh_buf_free(&two[0]);
    mh_buf_free(&two[1]);
    free_segment(&sk);
    mh_builder_destroy(b);
}

/* The set's keys of rows a[0..n) (added last to first), sorted. */
static void sumset_keys(const mh_rec *a, uint32_t n, mh_buf *sb, mh_buf *wb) {
    mh_sumset set;
    CHECK_OK(mh_sumset_begin(&set, sb, wb, n, SHIFT));
    for (uint32_t i = 0; i < n; i++)
        CHECK_OK(mh_sumset_add(&set, a[n - 1 - i].physical, a[n - 1 - i].size,
                               a[n - 1 - i].op));
    CHECK_OK(mh_sumset_end(&set, NULL));
}

/* fsck's set (mh_sumset) merges rows over several granules as ranges per
 * op: rows crowded into a few hundred granules, most of them wide, many
 * overlapping, touching or repeating one another, against brute force. */
static void test_sumset_wide(uint64_t seed) {
    tu_rng rng = {seed};
    uint32_t n = (uint32_t)tu_range(&rng, 1, 3000);
    mh_rec *a = calloc(n, sizeof *a);
    CHECK(a);
    uint64_t base = tu_below(&rng, 2) ? UINT64_MAX - (300ull << SHIFT) : 1ull << 36;
    for (uint32_t i = 0; i < n; i++) {
        a[i].transition = i;
        a[i].op = (uint8_t)tu_below(&rng, 3);
        if (i && tu_below(&rng, 4) == 0) { /* continues or repeats the last */
            a[i].physical = a[i - 1].physical + (tu_below(&rng, 2) ? a[i - 1].size : 0);
            a[i].op = a[i - 1].op;
        } else {
            a[i].physical = base + tu_below(&rng, 200ull << SHIFT);
        }
        a[i].size = tu_below(&rng, 4) ? (uint32_t)tu_range(&rng, 1, 5u << SHIFT)
                                      : (uint32_t)tu_range(&rng, 1, 16);
        if (a[i].physical > UINT64_MAX - (a[i].size - 1u))
            a[i].physical = UINT64_MAX - (a[i].size - 1u);
    }
    uint64_t *bk;
    size_t nb = brute_keys(a, n, &bk);
    mh_buf sb = {0}, wb = {0};
    sumset_keys(a, n, &sb, &wb);
    uint64_t *ek;
    size_t ne = expand_items(sb.p, sb.n / 8, &ek);
    CHECKF(ne == nb && memcmp(ek, bk, nb * 8) == 0,
           "seed %llx: sumset %zu keys, brute force %zu", (unsigned long long)seed,
           ne, nb);
    free(ek);
    mh_buf_free(&sb);
    mh_buf_free(&wb);
    free(bk);
    free(a);
}

/* Exactly MH_SUM_SLICE_KEYS_MAX keys is a list, one more an overflow, for
 * the writer and for fsck alike; a key met again (a row inside a wide
 * one) is not one more. */
static void test_overflow_exact(void) {
#if MH_SUM_SLICE_KEYS_MAX >= (1u << (32 - SHIFT))
    mh_builder *b = summary_builder();
    /* 2^(32 - SHIFT) granules each */
    uint32_t wide = MH_SUM_SLICE_KEYS_MAX >> (32 - SHIFT);
    mh_rec *a = calloc(wide + 2, sizeof *a);
    CHECK(a);
    for (uint32_t i = 0; i < wide; i++) {
        a[i].transition = i;
        a[i].physical = (uint64_t)i << 32;
        a[i].size = UINT32_MAX;
    }
    /* a read inside the first wide row, then (a third case) a write */
    a[wide].transition = wide;
    a[wide].physical = 12345;
    a[wide].size = 4;
    a[wide + 1] = a[wide];
    a[wide + 1].transition = wide + 1;
    a[wide + 1].op = MH_OP_WRITE;
    for (uint32_t extra = 0; extra < 3; extra++) {
        uint32_t n = wide + (extra ? extra : 0);
        int over = extra == 2;
        CHECK_OK(mh_builder_run(b, a, n, 0));
        uint64_t k0;
        memcpy(&k0, b->sum_keys.p, 8);
        /* one more key at 1 KiB: the writer lists the slice at 64 KiB
         * (behind the mark): the wide rows' granules and the write's */
        size_t coarse = ((size_t)wide << (32 - MHF_SUM_GRANULE_SHIFT)) + 1;
        /* the items are the wide rows' ranges, two words each, and the
         * write: not their millions of keys */
        uint64_t *ek;
        size_t ni = b->sum_keys.n / 8, skip = over ? 1 : 0;
        size_t ne = expand_items((const uint64_t *)(const void *)b->sum_keys.p + skip,
                                 ni - skip, &ek);
        CHECKF(over ? k0 == MH_SUM_COARSE_MARK && ne == coarse && b->sum_nkeys == coarse
                    : ne == MH_SUM_SLICE_KEYS_MAX && b->sum_nkeys == ne,
               "writer, %u rows: %zu keys", n, ne);
        CHECKF(ni <= 2 * (size_t)wide + 2, "writer, %u rows: %zu words", n, ni);
        free(ek);
        mh_buf sb = {0}, wb = {0};
        sumset_keys(a, n, &sb, &wb);
        memcpy(&k0, sb.p, 8);
        CHECKF(over ? sb.n == 8 && k0 == MH_SUM_OVERFLOW
                    : sb.n <= (2 * (size_t)wide + 2) * 8,
               "fsck's set, %u rows: %zu words", n, sb.n / 8);
        if (!over) {
            ne = expand_items(sb.p, sb.n / 8, &ek);
            CHECK(ne == MH_SUM_SLICE_KEYS_MAX);
            for (size_t i = 0; i < ne; i++)
                CHECK(ek[i] == (uint64_t)i << 2); /* op 0, granules 0 .. max - 1 */
            free(ek);
        }
        mh_buf_free(&sb);
        mh_buf_free(&wb);
    }
    free(a);
    mh_builder_destroy(b);
#endif
}

/* A slice over MH_SUM_SLICE_KEYS_MAX keys at 1 KiB through its last ops'
 * wide rows: the items of the ops listed before (small rows crowded into
 * a few 64 KiB granules, many sharing one) are taken to 64 KiB in place,
 * the rest listed there; against brute force at 64 KiB, and section 6
 * from the items the same bytes as from their keys. */
static void test_coarse_items(uint64_t seed) {
#if MH_SUM_SLICE_KEYS_MAX >= (1u << (32 - SHIFT))
    tu_rng rng = {seed};
    mh_builder *b = summary_builder();
    uint32_t wide = (MH_SUM_SLICE_KEYS_MAX >> (32 - SHIFT)) + 1;
    uint32_t n = wide + (uint32_t)tu_range(&rng, 1, 3000);
    mh_rec *a = calloc(n, sizeof *a);
    CHECK(a);
    for (uint32_t i = 0; i < n; i++) {
        a[i].transition = i;
        if (i < wide) { /* the last op's: listed after the others */
            a[i].op = MH_OP_EXEC;
            a[i].physical = (1ull << 40) + ((uint64_t)i << 33) + tu_below(&rng, 1u << 20);
            a[i].size = UINT32_MAX - (uint32_t)tu_below(&rng, 1u << 20);
            continue;
        }
        a[i].op = (uint8_t)tu_below(&rng, 2);
        a[i].physical = (tu_below(&rng, 4) << 24) + tu_below(&rng, 3u << 16);
        a[i].size = tu_below(&rng, 8) ? (uint32_t)tu_range(&rng, 1, 64)
                                      : (uint32_t)tu_range(&rng, 1, 20000);
    }
    CHECK_OK(mh_builder_run(b, a, n, 0));
    const uint64_t *it = (const uint64_t *)(const void *)b->sum_keys.p;
    size_t ni = b->sum_keys.n / 8;
    CHECK(ni >= 1 && it[0] == MH_SUM_COARSE_MARK);
    uint64_t *ek, *bk;
    size_t ne = expand_items(it + 1, ni - 1, &ek);
    size_t nb = brute_keys_at(a, n, MHF_SUM_GRANULE_SHIFT, &bk);
    CHECKF(ne == nb && memcmp(ek, bk, nb * 8) == 0 && b->sum_nkeys == nb,
           "seed %llx: %zu keys at 64 KiB (counted %llu), brute force %zu",
           (unsigned long long)seed, ne, (unsigned long long)b->sum_nkeys, nb);
    CHECKF(ni <= 2 * (size_t)(n - wide) + 2 * (size_t)wide + 1,
           "seed %llx: %zu words", (unsigned long long)seed, ni);
    /* section 6 only (the slice is listed at 64 KiB), from the items and
     * from their keys behind the mark */
    uint64_t *kk = malloc((ne + 1) * 8);
    CHECK(kk);
    kk[0] = MH_SUM_COARSE_MARK;
    memcpy(kk + 1, ek, ne * 8);
    uint32_t f1[2] = {0, (uint32_t)ni}, f2[2] = {0, (uint32_t)ne + 1};
    uint32_t f3[2] = {0, (uint32_t)ne};
    for (unsigned extra = MHF_SUM_GRANULE_SHIFT - SHIFT; extra <= 63 - SHIFT; extra++) {
        size_t wb, wi;
        int oi;
        size_t mb = brute_pairs(ek, f3, 1, extra - (MHF_SUM_GRANULE_SHIFT - SHIFT), &wb);
        size_t mi = mh_summary_count_pairs(it, f1, 1, extra, &wi, &oi);
        CHECKF(oi && mi == mb && wi == wb, "seed %llx extra %u: %zu pairs, brute %zu",
               (unsigned long long)seed, extra, mi, mb);
    }
    for (int pass = 0; pass < 2; pass++) {
        uint64_t count = pass ? 1000 : UINT64_MAX / 2;
        mh_buf o1 = {0}, o2 = {0}, fine = {0};
        CHECK_OK(mh_summary_serialize(it, f1, 1, count, &o1, &fine));
        CHECK(o1.n > 0 && fine.n == 0);
        CHECK_OK(mh_summary_serialize(kk, f2, 1, count, &o2, &fine));
        CHECK(o1.n == o2.n && memcmp(o1.p, o2.p, o1.n) == 0 && fine.n == 0);
        mh_sum_view v;
        mh_diag d = {0, 0, ""};
        CHECK_OK(mh_summary_parse(o1.p, o1.n, 0, 0, 1, &v, &d));
        CHECK(pass || v.nposting == nb);
        uint64_t listed = 0;
        CHECK_OK(mh_summary_check_slice(&v, MHF_SUM_GRANULE_SHIFT, 0, it + 1, ni - 1,
                                        MHF_SUM_GRANULE_SHIFT, 0, &listed, &d));
        CHECK(listed == v.nposting);
        mh_buf_free(&o1);
        mh_buf_free(&o2);
    }
    free(kk);
    free(ek);
    free(bk);
    free(a);
    mh_builder_destroy(b);
#else
    (void)seed;
#endif
}

/* Rows so wide that a slice meets more than MH_SUM_SLICE_KEYS_MAX keys
 * even at 64 KiB: the slice says so and the segment gets no section. */
static void test_overflow(void) {
    mh_builder *b = summary_builder();
    uint32_t n = (MH_SUM_SLICE_KEYS_MAX >> (32 - MHF_SUM_GRANULE_SHIFT)) + 2;
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
    mh_buf sb = {0}, wb = {0};
    mh_sumset set;
    CHECK_OK(mh_sumset_begin(&set, &sb, &wb, n, MHF_SUM_GRANULE_SHIFT));
    for (uint32_t i = 0; i < n; i++)
        CHECK_OK(mh_sumset_add(&set, a[i].physical, a[i].size, a[i].op));
    CHECK_OK(mh_sumset_end(&set, NULL));
    CHECK(sb.n == 8);
    memcpy(&k, sb.p, 8);
    CHECK(k == MH_SUM_OVERFLOW);
    mh_buf_free(&sb);
    mh_buf_free(&wb);
    uint64_t keys[3] = {5, MH_SUM_OVERFLOW, 9};
    uint32_t first[4] = {0, 1, 2, 3};
    mh_buf out = {0}, fine = {0};
    CHECK_OK(mh_summary_serialize(keys, first, 3, 1000, &out, &fine));
    CHECK(out.n == 0 && fine.n == 0);
    /* a slice listed at 64 KiB: section 6 only, its keys as they are, the
     * others' taken from 1 KiB to 64 KiB */
    uint64_t mixed[4] = {64u << 2 | 1, MH_SUM_COARSE_MARK, 7u << 2 | 2, 65u << 2 | 1};
    uint32_t mfirst[4] = {0, 1, 3, 4};
    CHECK_OK(mh_summary_serialize(mixed, mfirst, 3, 1000, &out, &fine));
    CHECK(out.n > 0 && fine.n == 0);
    mh_sum_view v;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_summary_parse(out.p, out.n, 0, 0, 3, &v, &d));
    /* entries (granule 1, op 1): slices 0 and 2; (7, op 2): slice 1 */
    CHECK(v.shift == MHF_SUM_GRANULE_SHIFT && v.nentries == 2 && v.nposting == 3);
    CHECK(mhf_load_u64(v.entries + MHF_SUM_E_GRANULE) == 1 &&
          v.entries[MHF_SUM_E_OP] == 1 &&
          mhf_load_u32(v.postings) == 0 && mhf_load_u32(v.postings + 4) == 2);
    CHECK(mhf_load_u64(v.entries + 24 + MHF_SUM_E_GRANULE) == 7 &&
          mhf_load_u32(v.postings + 8) == 1);
    mh_buf_free(&out);
    mh_buf_free(&fine);
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

/* Runs q with the summaries used (section 9 where present), with section
 * 6 only, and with none; each must be the oracle's. */
static size_t both_ways(mh_reader *r, const mh_access *all, size_t n,
                        const mh_query *q, size_t max) {
    r->summary_off = 0;
    size_t got = tu_check_query(r, all, n, q, max);
    r->summary_off = 2;
    CHECK(tu_check_query(r, all, n, q, max) == got);
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
    size_t narrowed = 0, narrow = 0, finer = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        for (unsigned kind = 0; kind < MH_SUM_KINDS; kind++) {
            const mh_section *sec = mh_summary_section(seg_of(r, i), kind);
            CHECK(sec && sec->flags == 0); /* both, optional */
            /* a few hundredths of a byte per access at most (the writer's
             * budgets: count / 32 + 4 KiB for 6, count / 16 + 4 KiB for 9) */
            uint64_t budget = seg_of(r, i)->count / (kind ? 16 : 32) + 4096;
            CHECKF(sec->size <= budget,
                   "segment %zu: summary %u of %llu bytes for %llu accesses", i,
                   kind, (unsigned long long)sec->size,
                   (unsigned long long)seg_of(r, i)->count);
            mh_sum_view v;
            mh_diag d = {0, 0, ""};
            CHECK_OK(mh_summary_view(seg_of(r, i), kind, &v, &d));
            CHECK(kind ? v.shift >= 10 && v.shift % 2 == 0
                       : v.shift >= 16 && v.shift % 4 == 0);
        }
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
            /* section 9's candidates are among section 6's (its granules
             * are no coarser here) */
            uint32_t c[2] = {0, 0};
            for (int coarse = 0; coarse < 2; coarse++) {
                mh_sum_iter it;
                mh_diag d = {0, 0, ""};
                int on = mh_summary_query(seg_of(r, i), q.addr_first, q.addr_last,
                                          q.ops, coarse, &it, &d);
                CHECK(on == 1);
                uint32_t s = 0;
                while ((s = mh_sum_next(&it, s)) != UINT32_MAX) {
                    c[coarse]++;
                    s++;
                }
            }
            CHECKF(c[0] <= c[1], "segment %zu: section 9 has %u candidates, 6 %u",
                   i, c[0], c[1]);
            narrow++;
            narrowed += c[0] < seg_of(r, i)->nslices;
            finer += c[0] < c[1];
        }
    }
    tu_context[0] = 0;
    CHECKF(narrowed * 2 > narrow, "the summary narrowed %zu of %zu segment "
           "walks", narrowed, narrow);
    CHECKF(finer > 0, "section 9 never narrowed a walk more than section 6 "
           "(%zu walks)", narrow);
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
        r->summary_off = (int)tu_below(&rng, 3);
        if (k % 8 == 0)
            tu_check_chain(r, all, n, &q, 4, &rng);
        if (k % 8 == 4)
            tu_check_cursor(r, all, n, &q, 300, &rng);
        r->summary_off = 0;
    }
    tu_context[0] = 0;
    /* the fine summary of the second segment damaged: its narrow queries
     * that walk past their start slice fail with the checksum error (the
     * start slice is scanned before the summary is asked), wide ones, those
     * that use section 6 only and other segments' still work */
    const mh_section *sec = mh_summary_section(seg_of(r, 1), MH_SUM_FINE);
    CHECK(sec);
    uint64_t off = sec->offset + sec->size - 2;
    char path[600];
    tu_join(path, sizeof path, dir, seg_of(r, 1)->name);
    uint64_t s1_first = seg_of(r, 1)->id_first, s1_t = seg_of(r, 1)->t_first;
    uint64_t s1_last = s1_first + seg_of(r, 1)->count - 1;
    CHECK(seg_of(r, 1)->nslices >= 2);
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
    mh_access *out = malloc(n * sizeof *out);
    CHECK(out != NULL);
    size_t got;
    /* every match wanted: the walk goes on past the start slice, into the
     * slices of segment 1 the summary picks */
    CHECK_RC(mh_query_run(r, &q, out, n, &got), MH_ECHECKSUM);
    char msg[MH_ERRMSG_MAX];
    mh_reader_errmsg(r, msg, sizeof msg);
    CHECKF(strstr(msg, "fine address summary") && strstr(msg, "checksum"),
           "detail: %s", msg);
    r->summary_off = 1;
    CHECK(tu_check_query(r, all, n, &q, 4) == 4);
    r->summary_off = 2;
    CHECK(tu_check_query(r, all, n, &q, 4) == 4);
    r->summary_off = 0;
    q.addr_first = 0;
    q.addr_last = UINT64_MAX; /* wide: the summary is not read */
    CHECK(tu_check_query(r, all, n, &q, 4) == 4);
    q.start_kind = MH_FROM_TRANSITION;
    q.start = s1_t;
    q.direction = MH_BACKWARD; /* the start slice of 1, then segment 0: */
    q.addr_first = 0x7fff0000u;
    q.addr_last = 0x7fff0007u;
    /* segment 1's summary is never asked (its start slice is scanned
     * without it, then the walk leaves the segment), so the damage does
     * not show and the answers are the oracle's */
    CHECK(tu_check_query(r, all, n, &q, 4) == 4);
    q.start_kind = MH_FROM_ID;
    q.start = s1_last; /* from the end of segment 1: past its last slice,
                          the summary is asked */
    CHECK_RC(mh_query_run(r, &q, out, n, &got), MH_ECHECKSUM);
    free(out);
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


/* The last posting of the first entry that can take it moves to the last
 * slice: that slice is listed where it has no row, and the slice it was
 * loses a granule it meets. */
static void move_posting(uint8_t *p, uint64_t size, void *ctx) {
    (void)size;
    uint32_t nslices = *(const uint32_t *)ctx;
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
    /* section 6 wrong, then section 9 too: each is held to the rows */
    tu_resum_segment(dir, name, MHF_SECT_SUMMARY, move_posting, &nslices);
    x = run_fsck(dir);
    CHECKF(x.n == 1 && x.summary_code == MH_ECORRUPT,
           "%d problems, summary code %d", x.n, x.summary_code);
    tu_resum_segment(dir, name, MHF_SECT_SUMMARY_FINE, move_posting, &nslices);
    x = run_fsck(dir);
    CHECKF(x.n == 2 && x.summary_code == MH_ECORRUPT,
           "%d problems, summary code %d", x.n, x.summary_code);
    free(all);
    tu_rmtree(dir);
}

/* A store of three segments: the first has a slice too scattered to list
 * even at 64 KiB (66 accesses of 4 GiB: over 2^22 granules of 64 KiB): no
 * section; the second a slice of two (2^23 granules of 1 KiB, 2^17 of
 * 64 KiB): section 6 only; the third both. Every answer is the oracle's
 * with 9, with 6 only and with none, and fsck finds nothing. */
static void test_store_overflow(void) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "summary-over");
    tu_rng rng = {79};
    size_t n = 9000;
    mh_access *all = malloc(n * sizeof *all);
    CHECK(all);
    drift_trace(&rng, all, n);
    size_t huge[] = {10, 75, 3010, 3020};
    for (size_t i = 10; i < 76; i++) { /* 66 in slice 0 of segment 0 */
        all[i].physical = (uint64_t)i << 36;
        all[i].size = UINT32_MAX;
    }
    for (size_t i = 3010; i <= 3020; i += 10) { /* 2 in segment 1 */
        all[i].physical = (uint64_t)i << 36;
        all[i].size = UINT32_MAX;
    }
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 1000;
    o.block_accesses = 64;
    o.commit_accesses = 3000;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    CHECK_OK(mh_writer_append_batch(w, all, n, NULL));
    CHECK_OK(mh_writer_close(w));
    problems x = run_fsck(dir);
    CHECKF(x.n == 0, "%d problems", x.n);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(r->nsegs == 3);
    CHECK(mh_summary_section(seg_of(r, 0), MH_SUM_COARSE) == NULL);
    CHECK(mh_summary_section(seg_of(r, 0), MH_SUM_FINE) == NULL);
    CHECK(mh_summary_section(seg_of(r, 1), MH_SUM_COARSE) != NULL);
    CHECK(mh_summary_section(seg_of(r, 1), MH_SUM_FINE) == NULL);
    CHECK(mh_summary_section(seg_of(r, 2), MH_SUM_COARSE) != NULL);
    CHECK(mh_summary_section(seg_of(r, 2), MH_SUM_FINE) != NULL);
    for (int k = 0; k < 300; k++) {
        mh_query q;
        size_t max;
        if (k % 2) {
            tu_random_query(&rng, all, n, &q, &max);
        } else { /* narrow, on an address of the trace (the huge ones too) */
            const mh_access *a =
                &all[k % 10 == 0 ? huge[k / 10 % 4] : tu_below(&rng, n)];
            mh_query_init(&q);
            q.addr_first = a->physical + tu_below(&rng, a->size);
            q.addr_last = q.addr_first + tu_below(&rng, 64);
            q.ops = MH_OPS_ALL;
            q.direction = tu_below(&rng, 2) ? MH_FORWARD : MH_BACKWARD;
            q.start = all[tu_below(&rng, n)].transition;
            max = (size_t)tu_range(&rng, 1, 10);
        }
        snprintf(tu_context, sizeof tu_context, "overflow store query %d", k);
        both_ways(r, all, n, &q, max);
    }
    tu_context[0] = 0;
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    for (int i = 0; i < rounds; i++)
        test_random(0x5eed0000u + (uint64_t)i);
    for (int i = 0; i < rounds * 5; i++)
        test_sumset_wide(0x91de0000u + (uint64_t)i);
    test_overflow();
    test_overflow_exact();
    for (int i = 0; i < 4; i++)
        test_coarse_items(0xc0a40000u + (uint64_t)i);
    test_store();
    test_fsck();
    test_store_overflow();
    printf("summary: %d random segments, overflow, store: ok\n", rounds);
    return 0;
}
