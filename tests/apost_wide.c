/*
 * apost_wide.c - the address postings with wide ranges (section type 14,
 * format 2.6, SPEC.md §9d.1: src/apost_build.c, src/apost_read.c,
 * src/verify_apost.c) against brute force.
 *   test_apost_wide                  (ctest apost_wide: 1 to 3)
 *   test_apost_wide real MEMHIST_CLI (ctest apost_wide.qemu: 4)
 *
 * 1. Stores whose slices hold accesses of 64 KiB to 4 GiB, runs of 4 KiB
 *    writes that merge into ranges past 1 MiB, two touching accesses that
 *    merge to exactly 2^16 bytes, and ranges of 2^16 - 1 bytes (not wide),
 *    with and without a discard: a segment has section 14 exactly when
 *    brute force finds a wide range in it (else section 10); its records
 *    are the brute-force wide ranges, its body's keys the granules of the
 *    other ranges; mh_apost_query's candidates equal brute force's on
 *    narrow ranges at every wide range's edges and elsewhere; queries at
 *    those edges and random ones (runs, resumes, cursors, both directions)
 *    equal the oracle with the postings used and ignored; fsck clean.
 * 2. Damage with every sum made right: a record moved by a byte or given
 *    another slice (well formed: fsck's ECORRUPT, the reader serves);
 *    wide_log2 11, a span, the order, a slice past the segment, body_bytes,
 *    a reserved field, a range shorter than 2^16 bytes (the reader's
 *    ECORRUPT for a point query, and fsck's), each with its detail.
 * 3. address_postings = 0: neither section; a segment whose every range
 *    is wide (a body of no key); one with more wide ranges than count / 64
 *    + 4096 (none).
 * 4. A real recording (sort under memhist record --engine qemu; exit 77
 *    without it) with writes of 64 KiB-8 MiB added where its program writes
 *    (a read(2) filling a buffer, as a recorder of system calls would
 *    store it): exact as in 1, the oracle's answers, fsck clean.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apost_util.h"
#include "internal.h"
#include "resum.h"
#include "testutil.h"

#define WIDE_LOG2 MHF_APOSTW_LOG2_DEFAULT
#define WIDE_MIN (((uint64_t)1 << WIDE_LOG2) - 1u) /* hi - lo of the least wide */

typedef struct wide {
    uint64_t lo, hi;
    uint32_t s, op;
} wide;

static int cmp_wide(const void *x, const void *y) {
    const wide *a = x, *b = y;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->s > b->s) - (a->s < b->s);
}

/* ranges as (op, lo, hi) sorted by (op, lo) */
static int cmp_rng(const void *x, const void *y) {
    const uint64_t *a = x, *b = y;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* Brute force over one segment's accesses (acc[0 .. n), slice_of[k] the
 * slice of acc[k]): each slice's maximal ranges per op, the wide ones into
 * *wout, the granules at shift g of the others into *tout (distinct,
 * sorted). */
typedef struct truth {
    trip *t;
    size_t nt;
    wide *w;
    size_t nw;
} truth;

static void push_trip(truth *x, size_t *cap, trip t) {
    if (x->nt == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        x->t = realloc(x->t, *cap * sizeof *x->t);
        CHECK(x->t);
    }
    x->t[x->nt++] = t;
}

static truth brute(const mh_access *acc, const uint32_t *slice_of, size_t n, unsigned g) {
    truth x = {NULL, 0, malloc((n + 1) * sizeof(wide)), 0};
    uint64_t *r = malloc((n + 1) * 3 * sizeof *r);
    CHECK(x.w && r);
    size_t cap = 0;
    for (size_t k = 0; k < n;) {
        size_t e = k, m = 0;
        while (e < n && slice_of[e] == slice_of[k])
            e++;
        for (size_t i = k; i < e; i++) {
            r[3 * m] = acc[i].op;
            r[3 * m + 1] = acc[i].physical;
            r[3 * m + 2] = acc[i].physical + (acc[i].size - 1u);
            m++;
        }
        qsort(r, m, 3 * sizeof *r, cmp_rng);
        for (size_t i = 0; i < m;) {
            uint64_t op = r[3 * i], lo = r[3 * i + 1], hi = r[3 * i + 2];
            size_t j = i + 1;
            while (j < m && r[3 * j] == op && (hi == UINT64_MAX || r[3 * j + 1] <= hi + 1)) {
                if (r[3 * j + 2] > hi)
                    hi = r[3 * j + 2];
                j++;
            }
            if (hi - lo >= WIDE_MIN) {
                x.w[x.nw++] = (wide){lo, hi, slice_of[k], (uint32_t)op};
            } else {
                for (uint64_t w = lo >> g;; w++) {
                    push_trip(&x, &cap, (trip){w, (uint32_t)op, slice_of[k]});
                    if (w == hi >> g)
                        break;
                }
            }
            i = j;
        }
        k = e;
    }
    free(r);
    if (x.nt)
        qsort(x.t, x.nt, sizeof *x.t, tu_cmp_trip);
    size_t u = 0;
    for (size_t i = 0; i < x.nt; i++)
        if (!u || tu_cmp_trip(&x.t[u - 1], &x.t[i]) != 0)
            x.t[u++] = x.t[i];
    x.nt = u;
    if (x.nw)
        qsort(x.w, x.nw, sizeof *x.w, cmp_wide);
    return x;
}

/* The candidates of [a, b] for ops from brute force, against the reader's. */
static void check_candidates(const mh_seg *seg, const mh_apost_view *v, const truth *x,
                             uint64_t a, uint64_t b, uint32_t ops, uint64_t **scratch,
                             size_t *cap, uint8_t *want) {
    mh_apost_iter it;
    mh_diag d = {0, 0, ""};
    int rc = mh_apost_query(seg, a, b, ops, &it, scratch, cap, &d);
    if ((b >> v->shift) - (a >> v->shift) >= MHF_APOST_SPAN) {
        CHECK(rc == 0);
        return;
    }
    CHECKF(rc == 1, "[0x%llx, 0x%llx]: %d %s", (unsigned long long)a, (unsigned long long)b,
           rc, d.msg);
    memset(want, 0, v->nslices);
    uint64_t wa = a >> v->shift, wb = b >> v->shift;
    for (size_t i = 0; i < x->nt; i++)
        if ((ops >> x->t[i].op & 1u) && x->t[i].w >= wa && x->t[i].w <= wb)
            want[x->t[i].s] |= (uint8_t)(1u << x->t[i].op);
    for (size_t i = 0; i < x->nw; i++)
        if ((ops >> x->w[i].op & 1u) && x->w[i].lo <= b && x->w[i].hi >= a)
            want[x->w[i].s] |= (uint8_t)(1u << x->w[i].op);
    for (uint32_t s = 0; s < v->nslices; s++)
        CHECKF(mh_apost_ops_at(&it, s) == want[s],
               "[0x%llx, 0x%llx] ops %u: slice %u has ops %u, brute force %u",
               (unsigned long long)a, (unsigned long long)b, ops, s,
               mh_apost_ops_at(&it, s), want[s]);
}

/* Narrow ranges at the edges of every wide range, inside them and around
 * the segment's other accesses. */
static void check_queries(const mh_seg *seg, const mh_apost_view *v, const truth *x,
                          const mh_access *acc, size_t n, tu_rng *rng) {
    uint64_t *scratch = NULL;
    size_t cap = 0;
    uint8_t *want = malloc((size_t)v->nslices + 1);
    CHECK(want);
    for (size_t i = 0; i < x->nw; i++) {
        const wide *w = &x->w[i];
        uint64_t pts[] = {w->lo - 1u, w->lo, w->lo + 1u, w->lo + (w->hi - w->lo) / 2,
                          w->hi - 1u, w->hi, w->hi + 1u};
        for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++)
            for (uint32_t ops = 1; ops <= 7; ops++) {
                uint64_t span = tu_below(rng, 3) == 0 ? tu_below(rng, 64) : 0;
                uint64_t b = pts[k] + span < pts[k] ? UINT64_MAX : pts[k] + span;
                check_candidates(seg, v, x, pts[k], b, ops, &scratch, &cap, want);
            }
    }
    for (int q = 0; q < 300 && n > 0; q++) {
        const mh_access *y = &acc[tu_below(rng, n)];
        uint64_t a = y->physical + tu_below(rng, 16), span = tu_below(rng, 40);
        if (tu_below(rng, 2) && a >= 20)
            a -= tu_below(rng, 20);
        uint64_t b = a + span < a ? UINT64_MAX : a + span;
        check_candidates(seg, v, x, a, b, (uint32_t)tu_range(rng, 1, 7), &scratch, &cap,
                         want);
    }
    free(want);
    free(scratch);
}

/* Segment seg (its accesses from acc[seg->id_first]) against brute force:
 * returns its wide ranges' count. */
static size_t check_segment(const mh_seg *seg, const mh_access *acc, tu_rng *rng) {
    mh_apost_view v;
    mh_diag d = {0, 0, ""};
    uint32_t *slice_of = malloc(seg->count * sizeof *slice_of);
    CHECK(slice_of);
    for (uint32_t s = 0; s < seg->nslices; s++) {
        mh_slice sl;
        mh_seg_slice(seg, s, &sl);
        for (uint32_t k = 0; k < sl.count; k++)
            slice_of[sl.id_first - seg->id_first + k] = s;
    }
    int rc = mh_apost_view_get(seg, &v, &d);
    CHECKF(rc == MH_OK, "segment %s: %d %s", seg->name, rc, d.msg);
    truth x = brute(acc + seg->id_first, slice_of, seg->count, v.shift);
    const mh_section *sec;
    int t = mh_apost_section(seg, &sec);
    CHECKF(t == (int)(x.nw ? MHF_SECT_APOSTW : MHF_SECT_APOST),
           "%s: section type %d with %zu wide ranges", seg->name, t, x.nw);
    const mh_section *other;
    CHECK(mh_seg_section(seg, x.nw ? MHF_SECT_APOST : MHF_SECT_APOSTW, &other) ==
          MH_ENOTFOUND);
    CHECK(sec->flags == 0);
    /* the records */
    CHECK((v.wide != NULL) == (x.nw > 0));
    size_t k = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint64_t span = 0;
        for (uint64_t j = 0; j < v.wide_n[o]; j++, k++) {
            const uint8_t *r = v.wide + (v.wide_first[o] + j) * v.wide_rsz;
            wide got = {mhf_load_u64(r + MHF_APOSTW_R_FIRST), mhf_load_u64(r + MHF_APOSTW_R_LAST),
                        mhf_load_u32(r + MHF_APOSTW_R_SLICE), o};
            CHECKF(k < x.nw && cmp_wide(&got, &x.w[k]) == 0 && got.hi == x.w[k].hi,
                   "%s: record %zu: op %u [0x%llx, 0x%llx] slice %u, brute force has "
                   "%zu records", seg->name, k, o, (unsigned long long)got.lo,
                   (unsigned long long)got.hi, got.s, x.nw);
            span = got.hi - got.lo > span ? got.hi - got.lo : span;
        }
        CHECK(span == v.wide_span[o]);
    }
    CHECKF(k == x.nw, "%s: %zu records, brute force %zu", seg->name, k, x.nw);
    if (x.nw)
        CHECK(v.wide_log2 == WIDE_LOG2);
    /* the body */
    trip *b;
    size_t nb = tu_apost_decode(&v, &b);
    size_t i = 0;
    while (i < nb && i < x.nt && tu_cmp_trip(&b[i], &x.t[i]) == 0)
        i++;
    CHECKF(i == nb && i == x.nt,
           "%s: %zu keys' triples vs brute force %zu, first difference at %zu", seg->name,
           nb, x.nt, i);
    check_queries(seg, &v, &x, acc + seg->id_first, seg->count, rng);
    /* the segment info counts the whole section */
    free(b);
    free(x.t);
    free(x.w);
    free(slice_of);
    return k;
}

/* Queries on the edges of the trace's wide accesses and random ones,
 * against the oracle, the postings used and ignored. */
static void check_answers(mh_reader *r, const mh_access *all, size_t n, tu_rng *rng) {
    for (int way = 0; way < 2; way++) {
        r->apost_off = way;
        snprintf(tu_context, sizeof tu_context, "postings %s", way ? "ignored" : "used");
        size_t asked = 0;
        for (size_t i = 0; i < n && asked < 60; i++) {
            if (all[i].size < ((uint32_t)1 << 16))
                continue;
            asked++;
            uint64_t lo = all[i].physical, hi = lo + (all[i].size - 1u);
            uint64_t pts[] = {lo - 1u, lo, lo + all[i].size / 2, hi, hi + 1u};
            for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++) {
                mh_query q;
                mh_query_init(&q);
                q.addr_first = q.addr_last = pts[k];
                q.ops = (uint32_t)tu_range(rng, 1, 7);
                q.direction = (int)tu_below(rng, 2);
                q.start = q.direction == MH_BACKWARD ? all[n - 1].transition
                                                     : all[tu_below(rng, n)].transition;
                tu_check_query(r, all, n, &q, 1 + tu_below(rng, 20));
            }
        }
        tu_random_queries(r, all, n, 400, 7 + (uint64_t)way);
    }
    r->apost_off = 0;
    tu_context[0] = 0;
}

/* ---- 1. the writer's stores -------------------------------------------- */

/* A trace of n accesses: hot words and a sweep (as tests/apost.c's), with
 * wide ones (v = the writer's wide_log2, 16): accesses of 2^v bytes .. 4
 * GiB, runs of 300 4 KiB writes (1.2 MiB merged, or two ranges when a
 * slice ends inside), two touching accesses of 2^(v - 1) bytes (2^v
 * merged: wide) and ranges of 2^v - 1 bytes (not). */
static void make_trace(tu_rng *rng, mh_access *all, size_t n) {
    size_t i = 0;
    uint64_t t = 1;
    while (i < n) {
        mh_access *x = &all[i];
        memset(x, 0, sizeof *x);
        x->transition = t;
        t += tu_below(rng, 3) == 0;
        unsigned k = (unsigned)tu_below(rng, 1000);
        x->op = (uint8_t)(tu_below(rng, 4) == 0 ? MH_OP_WRITE
                          : tu_below(rng, 12) == 0 ? MH_OP_EXEC
                                                   : MH_OP_READ);
        x->size = (uint32_t)tu_range(rng, 1, 16);
        if (k < 4) { /* a wide access */
            static const uint64_t sizes[] = {(1u << WIDE_LOG2), (1u << WIDE_LOG2) + 5,
                                             3u << 22, (uint64_t)1 << 31, 0xffffffffu};
            x->size = (uint32_t)sizes[tu_below(rng, 5)];
            x->physical = tu_below(rng, 4) == 0 ? UINT64_MAX - (x->size - 1u)
                                                : (tu_next(rng) >> 8) & ~(uint64_t)0xfff;
        } else if (k < 6 && n - i > 300) { /* 300 writes of 4 KiB, one range */
            uint64_t base = 0x10000000 + (tu_below(rng, 64) << 24);
            for (size_t j = 0; j < 300; j++, i++) {
                mh_access *y = &all[i];
                memset(y, 0, sizeof *y);
                y->transition = t++;
                y->physical = base + j * 4096;
                y->size = 4096;
                y->op = MH_OP_WRITE;
            }
            continue;
        } else if (k < 8 && n - i > 2) { /* touching halves of 2^v bytes */
            uint64_t base = 0x40000000 + (tu_below(rng, 64) << 24);
            for (size_t j = 0; j < 2; j++, i++) {
                mh_access *y = &all[i];
                memset(y, 0, sizeof *y);
                y->transition = t;
                y->physical = base + (j ? 1u << (WIDE_LOG2 - 1) : 0);
                y->size = 1u << (WIDE_LOG2 - 1);
                y->op = MH_OP_READ;
            }
            continue;
        } else if (k < 10) { /* one byte short of wide */
            x->size = (1u << WIDE_LOG2) - 1u;
            x->physical = 0x80000000 + (tu_below(rng, 64) << 24) + tu_below(rng, 4096);
        } else if (k < 500) {
            x->physical = 0x601000 + 8 * tu_below(rng, 300) + tu_below(rng, 3);
        } else {
            x->physical = 0x7f0000001000 + tu_below(rng, 6000);
        }
        x->linear = x->physical;
        x->has_linear = 1;
        i++;
    }
}

static void test_store(int discard) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "apost-wide");
    tu_rng rng = {discard ? 71u : 17u};
    size_t n = 40000;
    mh_access *all = malloc(n * sizeof *all);
    CHECK(all);
    make_trace(&rng, all, n);
    size_t m;
    mh_access *acc = tu_apost_write(dir, all, n, 10000, 1000, discard, 1, &m);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(r->nsegs >= 4);
    size_t wides = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        snprintf(tu_context, sizeof tu_context, "discard %d segment %zu", discard, i);
        wides += check_segment(tu_seg_of(r, i), acc, &rng);
        mh_segment_info si = {.struct_size = sizeof si};
        const mh_section *sec;
        CHECK_OK(mh_reader_segment_info(r, i, &si));
        CHECK(mh_apost_section(tu_seg_of(r, i), &sec) > 0 && si.apost_bytes == sec->size);
    }
    CHECKF(wides >= 20, "only %zu wide ranges", wides);
    check_answers(r, acc, m, &rng);
    mh_reader_close(r);
    tu_problems x = tu_fsck(dir);
    CHECKF(x.n == 0, "fsck of a fresh store: %d problems (%s)", x.n, x.msg);
    printf("discard %d: %zu accesses, %zu wide ranges, exact; queries agree; fsck clean\n",
           discard, m, wides);
    free(all);
    free(acc);
    tu_rmtree(dir);
}

/* ---- 2. damage ----------------------------------------------------------- */

typedef void (*edit_fn)(uint8_t *p, uint64_t size, void *ctx);

static uint8_t *wrec(uint8_t *p, uint64_t i) {
    return p + MHF_APOSTW_HEADER_SIZE + i * MHF_APOSTW_REC_SIZE;
}
static uint64_t wcount(const uint8_t *p, unsigned o) {
    return mhf_load_u64(p + MHF_APOSTW_OPS + o * MHF_APOSTW_OP_SIZE + MHF_APOSTW_OP_COUNT);
}
/* well formed, not exact (the second record of op 0 or 1 keeps order) */
static void e_move(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    uint8_t *r = wrec(p, 0);
    mhf_store_u64(r + MHF_APOSTW_R_FIRST, mhf_load_u64(r + MHF_APOSTW_R_FIRST) - 1);
    mhf_store_u64(r + MHF_APOSTW_R_LAST, mhf_load_u64(r + MHF_APOSTW_R_LAST) - 1);
}
static void e_slice(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    uint8_t *r = wrec(p, 0);
    uint32_t s = mhf_load_u32(r + MHF_APOSTW_R_SLICE);
    mhf_store_u32(r + MHF_APOSTW_R_SLICE, s ? s - 1 : s + 1);
}
static void e_log2(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_APOSTW_LOG2, 11);
}
static void e_span(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    uint8_t *o = p + MHF_APOSTW_OPS + MHF_APOSTW_OP_SPAN;
    mhf_store_u64(o, mhf_load_u64(o) + 1);
}
static void e_order(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    CHECK(wcount(p, 0) >= 2);
    uint8_t t[MHF_APOSTW_REC_SIZE];
    memcpy(t, wrec(p, 0), sizeof t);
    memcpy(wrec(p, 0), wrec(p, 1), sizeof t);
    memcpy(wrec(p, 1), t, sizeof t);
}
static void e_slice_past(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(wrec(p, 0) + MHF_APOSTW_R_SLICE, 100000);
}
static void e_body(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u64(p + MHF_APOSTW_BODY_BYTES, mhf_load_u64(p + MHF_APOSTW_BODY_BYTES) - 1);
}
static void e_reserved(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(wrec(p, 1) + MHF_APOSTW_R_RESERVED, 1);
}
static void e_short(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    /* a record shorter than the least wide range */
    uint8_t *r = wrec(p, 0);
    mhf_store_u64(r + MHF_APOSTW_R_LAST, mhf_load_u64(r + MHF_APOSTW_R_FIRST) + WIDE_MIN - 1);
}

/* A store of one segment: three slices, op 0 with three wide ranges (the
 * first two in slice 1 and 2 at the same place), op 1 with one, and small
 * reads around them. */
static size_t small_store(const char *dir, mh_access *all) {
    size_t n = 0;
    for (uint64_t i = 0; i < 3000; i++) {
        mh_access *x = &all[n++];
        memset(x, 0, sizeof *x);
        x->transition = i;
        x->physical = 0x5000 + 8 * (i % 512);
        x->size = 8;
        x->op = MH_OP_READ;
        if (i == 1100 || i == 2100) { /* slices 1 and 2 */
            x->physical = 0x100000000;
            x->size = 1u << 21;
        } else if (i == 2200) {
            x->physical = 0x200000000;
            x->size = 1u << 20;
        } else if (i == 1500) {
            x->physical = 0x100000000;
            x->size = 1u << 22;
            x->op = MH_OP_WRITE;
        }
    }
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 1000;
    o.block_accesses = 64;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    CHECK_OK(mh_writer_append_batch(w, all, n, NULL));
    CHECK_OK(mh_writer_close(w));
    return n;
}

static void test_damage(void) {
    static const struct {
        const char *name;
        edit_fn fn;
        int reader; /* 1: a point query in a wide range refuses it */
        const char *detail;
    } e[] = {
        {"move", e_move, 0, "op 0 range [0xffffffff, 0x1001ffffe] of slice 1 is not a maximal range"},
        {"slice", e_slice, 0, "op 0 range [0x100000000, 0x1001fffff] of slice 0 is not a maximal range"},
        {"log2", e_log2, 1, "wide_log2 11, not 12 ... 63"},
        {"span", e_span, 1, "op 0: largest span 0x200000, its records' is 0x1fffff"},
        {"order", e_order, 1, "does not follow"},
        {"slice-past", e_slice_past, 1, "op 0: slice 100000 of 3"},
        {"body", e_body, 1, "records of 24 bytes and a body of"},
        {"reserved", e_reserved, 1, "reserved field not 0"},
        {"short", e_short, 1, "is not at least 2^16 bytes"},
    };
    char dir[512], copy[600];
    tu_mkdtemp(dir, sizeof dir, "apost-wide-damage");
    tu_join(copy, sizeof copy, dir, "c");
    char orig[600];
    tu_join(orig, sizeof orig, dir, "o");
    mh_access *all = malloc(4000 * sizeof *all);
    CHECK(all);
    size_t n = small_store(orig, all);
    {
        mh_reader *r;
        CHECK_OK(mh_reader_open(orig, &r));
        CHECK(r->nsegs == 1);
        const mh_section *sec;
        CHECK(mh_apost_section(tu_seg_of(r, 0), &sec) == (int)MHF_SECT_APOSTW);
        tu_rng rng = {5};
        CHECK(check_segment(tu_seg_of(r, 0), all, &rng) == 4);
        mh_reader_close(r);
    }
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
        snprintf(tu_context, sizeof tu_context, "damage %s", e[i].name);
        tu_rmtree(copy);
        CHECK(mkdir(copy, 0755) == 0);
        tu_copy_dir(orig, copy);
        tu_resum_segment(copy, "seg-0000000000000000.mhs", MHF_SECT_APOSTW, e[i].fn, NULL);
        mh_reader *r;
        CHECK_OK(mh_reader_open(copy, &r));
        mh_query q;
        mh_query_init(&q);
        q.addr_first = q.addr_last = 0x100000010;
        q.ops = MH_OPS_ALL;
        mh_access got[8];
        size_t k = 0;
        int rc = mh_query_run(r, &q, got, 8, &k);
        if (e[i].reader) {
            CHECK_RC(rc, MH_ECORRUPT);
            char msg[MH_ERRMSG_MAX];
            mh_reader_errmsg(r, msg, sizeof msg);
            CHECKF(strstr(msg, "address postings (wide ranges) at byte ") &&
                       strstr(msg, e[i].detail),
                   "%s: reader detail \"%s\"", e[i].name, msg);
        } else {
            CHECK_OK(rc);
        }
        mh_reader_close(r);
        tu_problems x = tu_fsck(copy);
        CHECKF(x.n >= 1 && x.code == MH_ECORRUPT && strstr(x.msg, e[i].detail),
               "%s: fsck %d problems, code %d, \"%s\"", e[i].name, x.n, x.code, x.msg);
    }
    tu_context[0] = 0;
    /* address_postings = 0: neither section */
    char none[600];
    tu_join(none, sizeof none, dir, "none");
    size_t m;
    mh_access *acc = tu_apost_write(none, all, n, 0, 1000, 0, 0, &m);
    mh_reader *r;
    CHECK_OK(mh_reader_open(none, &r));
    const mh_section *sec;
    CHECK(mh_apost_section(tu_seg_of(r, 0), &sec) == MH_ENOTFOUND);
    mh_reader_close(r);
    printf("damage: %zu edits refused with their details\n", sizeof e / sizeof e[0]);
    free(acc);
    free(all);
    tu_rmtree(dir);
}

/* A segment whose every range is wide: section 14 with a body of no key
 * (no run, no data), exact, answering, clean (fuzz_differential found its
 * seal copying from a buffer never allocated). */
static void test_only_wide(void) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "apost-wide-only");
    mh_access all[6];
    memset(all, 0, sizeof all);
    for (size_t i = 0; i < 6; i++) {
        all[i].transition = 10 + i;
        all[i].physical = 0x1000000 * (i + 1);
        all[i].size = (1u << WIDE_LOG2) << (i % 3);
        all[i].op = (uint8_t)(i % 3);
    }
    size_t m;
    mh_access *acc = tu_apost_write(dir, all, 6, 0, 1000, 0, 1, &m);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    mh_apost_view v;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_apost_view_get(tu_seg_of(r, 0), &v, &d));
    CHECK(v.wide && v.nruns == 0 && v.data_bytes == 0);
    tu_rng rng = {3};
    CHECK(check_segment(tu_seg_of(r, 0), acc, &rng) == 6);
    check_answers(r, acc, m, &rng);
    mh_reader_close(r);
    tu_problems x = tu_fsck(dir);
    CHECKF(x.n == 0, "fsck: %d %s", x.n, x.msg);
    printf("only wide ranges: a body of no key, exact, queries agree, fsck clean\n");
    free(acc);
    tu_rmtree(dir);
}

/* More wide ranges than count / 64 + 4096 (each a record every narrow
 * question of its op may read): the segment gets no postings, as a pile
 * past its limit does; the answers are the same. */
static void test_too_many_wide(void) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "apost-wide-many");
    size_t n = 6000;
    mh_access *all = calloc(n, sizeof *all);
    CHECK(all);
    for (size_t i = 0; i < n; i++) {
        all[i].transition = i;
        all[i].physical = (uint64_t)(i * 7919 % n) << (WIDE_LOG2 + 1); /* apart */
        all[i].size = 1u << WIDE_LOG2;
        all[i].op = MH_OP_WRITE;
    }
    size_t m;
    mh_access *acc = tu_apost_write(dir, all, n, 0, 1000, 0, 1, &m);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(r->nsegs == 1);
    const mh_section *sec;
    CHECKF(mh_apost_section(tu_seg_of(r, 0), &sec) == MH_ENOTFOUND,
           "%zu wide ranges in %zu accesses: postings written", n, n);
    tu_rng rng = {11};
    check_answers(r, acc, m, &rng);
    mh_reader_close(r);
    tu_problems x = tu_fsck(dir);
    CHECKF(x.n == 0, "fsck: %d %s", x.n, x.msg);
    printf("%zu wide ranges in %zu accesses: no postings, queries agree, fsck clean\n", n, n);
    free(acc);
    free(all);
    tu_rmtree(dir);
}

/* ---- 4. a real recording with wide writes added ----------------------- */

static int test_real(const char *cli) {
    char dir[512], rec[600], store[600];
    tu_mkdtemp(dir, sizeof dir, "apost-wide-real");
    size_t n = 0;
    int rc = 0;
    mh_access *rac = tu_record_sort_all(cli, dir, 3000, rec, sizeof rec, "apost_wide", &n, &rc);
    if (!rac) {
        tu_rmtree(dir);
        return rc;
    }
    CHECKF(n > 100000, "a real recording of %zu accesses", n);
    /* every 50,000th access, a write of 64 KiB-8 MiB just after it, at the
     * page of a write the program made (a buffer read(2) filled) */
    size_t extra = n / 50000 + 1, m = 0;
    mh_access *all = malloc((n + extra) * sizeof *all), *acc = malloc((n + extra) * sizeof *acc);
    CHECK(all && acc);
    tu_rng rng = {2026};
    for (size_t i = 0; i < n; i++) {
        all[m++] = rac[i];
        if (i % 50000 == 49999 && rac[i].op == MH_OP_WRITE) {
            mh_access x = rac[i];
            x.physical &= ~(uint64_t)0xfff;
            x.linear = x.physical;
            x.size = (uint32_t)tu_range(&rng, 1u << WIDE_LOG2, 8u << 20);
            x.has_pc = 0;
            all[m++] = x;
        } else if (i % 50000 == 49999) {
            mh_access x = rac[i];
            x.op = MH_OP_WRITE;
            x.physical = (x.physical & ~(uint64_t)0xfff) + 0x1000;
            x.linear = x.physical;
            x.size = 1u << WIDE_LOG2;
            x.has_pc = 0;
            all[m++] = x;
        }
    }
    tu_join(store, sizeof store, dir, "wide.store");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 4096;
    o.commit_accesses = m / 4 + 1;
    mh_writer *w;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &o, &w));
    for (size_t i = 0; i < m; i += 4096)
        CHECK_OK(mh_writer_append_batch(w, all + i, m - i < 4096 ? m - i : 4096, NULL));
    CHECK_OK(mh_writer_close(w));
    memcpy(acc, all, m * sizeof *acc);
    mh_reader *r;
    CHECK_OK(mh_reader_open(store, &r));
    size_t wides = 0, nsegs = r->nsegs;
    for (size_t i = 0; i < r->nsegs; i++) {
        snprintf(tu_context, sizeof tu_context, "real segment %zu", i);
        wides += check_segment(tu_seg_of(r, i), acc, &rng);
    }
    CHECKF(wides >= extra / 2, "%zu wide ranges for %zu wide writes", wides, extra);
    check_answers(r, acc, m, &rng);
    mh_reader_close(r);
    tu_problems x = tu_fsck(store);
    CHECKF(x.n == 0, "fsck: %d %s", x.n, x.msg);
    printf("real recording: %zu accesses and %zu wide writes, %zu wide ranges in %zu "
           "segments: exact, queries agree, fsck clean\n", n, m - n, wides, nsegs);
    free(rac);
    free(all);
    free(acc);
    tu_rmtree(dir);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "real"))
        return test_real(argv[2]);
    test_store(0);
    test_store(1);
    test_only_wide();
    test_too_many_wide();
    test_damage();
    printf("apost_wide: ok\n");
    return 0;
}
