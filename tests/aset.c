/*
 * aset.c - the address set (section type 8: src/aset_build.c,
 * src/aset_read.c, src/verify_aset.c) against brute force.
 *   test_aset                    (ctest aset: 1 to 3)
 *   test_aset real MEMHIST_CLI   (ctest aset_real: 4)
 *
 * 1. The accumulator and encoder: random ranges (touching, overlapping,
 *    gaps of 1, 7, 8, 9 bytes, at 0 and at 2^64 - 1) merged, encoded with
 *    several run lengths, decoded back equal to a brute-force union, and
 *    mh_aset_meets equal to "some range of the ops meets [A, B]".
 * 2. Every header and run field damaged in turn: MH_ECORRUPT with its line.
 * 3. Stores written by the writer (several segments, a discard): every
 *    answer the same with the set used and ignored and the oracle's, for
 *    never-accessed gaps, both directions, every op set; the set passes
 *    most segments of a never-accessed query; fsck clean, and it finds a
 *    set damaged with its sums fixed (the exactness check) or not.
 * 4. A real recording (memhist record --engine qemu; exit 77 without
 *    qemu-x86_64 or the plugin), rewritten into several segments: the gaps
 *    between its accessed intervals queried both ways.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "resum.h"
#include "testutil.h"

typedef struct iv {
    uint64_t lo, hi;
    unsigned op;
} iv;

static int cmp_iv(const void *x, const void *y) {
    const iv *a = x, *b = y;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Brute force: does some range of an op in ops meet [a, b]? */
static int brute_meets(const iv *r, size_t n, uint64_t a, uint64_t b,
                       uint32_t ops) {
    for (size_t i = 0; i < n; i++)
        if ((ops >> r[i].op & 1u) && r[i].lo <= b && r[i].hi >= a)
            return 1;
    return 0;
}

/* The union of op's ranges, the slow way: sorted, then merged. */
static size_t brute_union(const iv *r, size_t n, unsigned op, uint64_t *out) {
    iv *c = malloc((n + 1) * sizeof *c);
    CHECK(c);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].op == op)
            c[m++] = r[i];
    qsort(c, m, sizeof *c, cmp_iv);
    size_t u = 0;
    for (size_t i = 0; i < m; i++) {
        if (u && (out[2 * u - 1] == UINT64_MAX || c[i].lo <= out[2 * u - 1] + 1)) {
            if (c[i].hi > out[2 * u - 1])
                out[2 * u - 1] = c[i].hi;
        } else {
            out[2 * u] = c[i].lo;
            out[2 * u + 1] = c[i].hi;
            u++;
        }
    }
    free(c);
    return u;
}

/* Random ranges: clusters of small ones with gaps of 0 (touching), 1, 7,
 * 8, 9 or more bytes, overlaps, and some at 0 and at the top. */
static size_t gen_ranges(tu_rng *rng, iv *r, size_t n) {
    static const uint64_t gaps[] = {0, 1, 7, 8, 9, 64, 4096};
    size_t m = 0;
    uint64_t pos = 0;
    while (m < n) {
        unsigned kind = (unsigned)tu_below(rng, 10);
        if (kind == 0)
            pos = 0;
        else if (kind == 1)
            pos = UINT64_MAX - tu_below(rng, 200);
        else if (kind < 4)
            pos = tu_below(rng, 1ull << 40);
        size_t run = (size_t)tu_range(rng, 1, 40);
        for (size_t k = 0; k < run && m < n; k++) {
            uint64_t len = tu_below(rng, 4) ? tu_below(rng, 8) : tu_below(rng, 300);
            uint64_t lo = pos, hi = lo + len < lo ? UINT64_MAX : lo + len;
            r[m].lo = lo;
            r[m].hi = hi;
            r[m].op = (unsigned)tu_below(rng, 3);
            m++;
            if (hi == UINT64_MAX)
                break;
            uint64_t g = gaps[tu_below(rng, sizeof gaps / sizeof gaps[0])];
            if (tu_below(rng, 8) == 0) /* an overlap */
                pos = lo + tu_below(rng, len + 1);
            else
                pos = hi + 1 + g < hi ? UINT64_MAX : hi + 1 + g;
        }
    }
    return m;
}

/* A section in memory as a segment holding only it. */
typedef struct fake {
    mh_seg seg;
    mh_section sec;
} fake;

/* What the reader allocated on the fake segment (its runs' marks), as
 * mh_seg_close frees it. */
static void fake_done(fake *f) {
    mh_marks_free(atomic_load(&f->seg.aset_marks));
    f->seg.aset_marks = NULL;
}

static void fake_seg(fake *f, const mh_buf *b) {
    memset(f, 0, sizeof *f);
    f->sec.type = MHF_SECT_ASET;
    f->sec.size = b->n;
    f->sec.sum = mh_hash(b->p, b->n);
    f->seg.base = b->p;
    f->seg.size = b->n;
    f->seg.sections = &f->sec;
    f->seg.nsections = 1;
    f->seg.major = MHF_VERSION_MAJOR;
    f->seg.minor = MHF_VERSION_MINOR;
}

/* Every interval of op, decoded. */
static size_t decode_op(const mh_aset_view *v, unsigned op, uint64_t *out) {
    size_t m = 0;
    for (uint32_t r = 0; r < v->run_count[op]; r++) {
        mh_aset_cur c;
        mh_aset_run_open(v, op, r, &c);
        int rc;
        mh_diag d = {0, 0, ""};
        while ((rc = mh_aset_run_step(&c, &d)) == 1) {
            out[2 * m] = c.lo;
            out[2 * m + 1] = c.hi;
            m++;
        }
        CHECKF(rc == 0, "run %u of op %u: %d %s", r, op, rc, d.msg);
    }
    return m;
}

static void test_roundtrip(void) {
    tu_rng rng = {8};
    for (int round = 0; round < 60; round++) {
        size_t n = (size_t)tu_range(&rng, 0, round < 10 ? 20 : 3000);
        iv *r = malloc((n + 1) * sizeof *r);
        CHECK(r);
        n = gen_ranges(&rng, r, n);
        mh_aset_acc *acc;
        CHECK_OK(mh_aset_acc_create(&acc));
        /* in random pieces, as slices would hand them over */
        for (size_t i = 0; i < n;) {
            size_t k = (size_t)tu_range(&rng, 1, 50);
            for (size_t j = i; j < i + k && j < n; j++) {
                uint64_t p[2] = {r[j].lo, r[j].hi};
                CHECK_OK(mh_aset_acc_add(acc, r[j].op, p, 1, 1000000));
            }
            i += k;
        }
        uint64_t *want = malloc((n + 1) * 16), *got = malloc((n + 1) * 16);
        CHECK(want && got);
        uint32_t k = round % 3 == 0 ? 1 : round % 3 == 1 ? 3 : MHF_ASET_K;
        const uint64_t *pairs[MHF_OP_COUNT];
        size_t np[MHF_OP_COUNT];
        CHECK(mh_aset_acc_finish(acc, pairs, np) == 0);
        mh_buf b = {0};
        CHECK_OK(mh_aset_encode(pairs, np, k, &b));
        fake f;
        fake_seg(&f, &b);
        mh_aset_view v;
        mh_diag d = {0, 0, ""};
        CHECKF(mh_aset_view_get(&f.seg, &v, &d) == MH_OK, "%s", d.msg);
        for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
            size_t w = brute_union(r, n, o, want);
            CHECK(np[o] == w && v.nivals[o] == w);
            CHECK(w == 0 || memcmp(pairs[o], want, w * 16) == 0);
            CHECK(decode_op(&v, o, got) == w);
            CHECK(w == 0 || memcmp(got, want, w * 16) == 0);
            /* maximal: consecutive intervals leave a gap of >= 1 byte */
            for (size_t i = 1; i < w; i++)
                CHECK(want[2 * i] >= want[2 * i - 1] + 2);
        }
        /* meets against brute force: around every endpoint, in gaps, at
         * the ends of the space, wide; the same queries twice, the second
         * time resuming from the marks the first recorded (aset_read.c) */
        tu_rng again = rng;
        for (int q = 0; q < 800; q++) {
            if (q == 400)
                rng = again;
            uint64_t x = n ? (tu_below(&rng, 2) ? r[tu_below(&rng, n)].lo
                                                : r[tu_below(&rng, n)].hi)
                           : tu_next(&rng);
            int64_t dx = (int64_t)tu_below(&rng, 5) - 2;
            uint64_t a = x + (uint64_t)dx;
            if (dx < 0 && a > x)
                a = 0;
            if (dx > 0 && a < x)
                a = UINT64_MAX;
            uint64_t wdt = tu_below(&rng, 4) ? tu_below(&rng, 10) : tu_next(&rng);
            uint64_t bq = a + wdt < a ? UINT64_MAX : a + wdt;
            switch (tu_below(&rng, 12)) {
            case 0: a = 0, bq = tu_below(&rng, 3); break;
            case 1: bq = UINT64_MAX, a = UINT64_MAX - tu_below(&rng, 3); break;
            case 2: a = 0, bq = UINT64_MAX; break;
            default: break;
            }
            uint32_t ops = (uint32_t)tu_range(&rng, 1, 7);
            int m = mh_aset_meets(&f.seg, a, bq, ops, &d);
            CHECKF(m == brute_meets(r, n, a, bq, ops),
                   "round %d: [0x%llx, 0x%llx] ops %u: %d", round,
                   (unsigned long long)a, (unsigned long long)bq, ops, m);
        }
        fake_done(&f);
        mh_buf_free(&b);
        mh_aset_acc_destroy(acc);
        free(want);
        free(got);
        free(r);
    }
}

/* The accumulator gives up on a scattered segment, and its serialization
 * leaves the section out when over budget. */
static void test_budget(void) {
    mh_aset_acc *a;
    CHECK_OK(mh_aset_acc_create(&a));
    tu_rng rng = {3};
    for (uint64_t i = 0; i < 200000; i++) {
        uint64_t x = tu_next(&rng) & ~0xfull, p[2] = {x, x};
        CHECK_OK(mh_aset_acc_add(a, 0, p, 1, i + 1));
    }
    const uint64_t *pairs[MHF_OP_COUNT];
    size_t np[MHF_OP_COUNT];
    CHECK(mh_aset_acc_finish(a, pairs, np) == 1);
    mh_buf b = {0};
    CHECK_OK(mh_aset_acc_serialize(a, 200000, &b));
    CHECK(b.n == 0);
    /* reset: a dense set fits */
    mh_aset_acc_reset(a);
    for (uint64_t i = 0; i < 200000; i++) {
        uint64_t p[2] = {0x1000 + (i % 5000) * 16, 0x1000 + (i % 5000) * 16 + 7};
        CHECK_OK(mh_aset_acc_add(a, (unsigned)(i % 3), p, 1, i + 1));
    }
    CHECK_OK(mh_aset_acc_serialize(a, 200000, &b));
    CHECK(b.n == 0); /* 15,000 intervals of 2 bytes: over 200000 / 16 + 4 KiB */
    CHECK_OK(mh_aset_acc_serialize(a, 2000000, &b));
    CHECK(b.n > 30000 && b.n <= 2000000 / 16 + 4096);
    mh_buf_free(&b);
    mh_aset_acc_destroy(a);
}

/* The accumulator's table of pairs seen (aset_build.c) is zeroed memory
 * untouched until used: a zeroed slot must match no pair (the first pair
 * of a fresh accumulator, at address 0, is kept), and a reset must forget
 * every pair (the same pairs, added again for the next segment, are kept
 * again). Each round adds every pair twice, the second time dropped as
 * seen: the union is the same. */
/* Whether test_seen's round adds edge pair i to op o: half of them in
 * rounds 0 and 1 (the other half each time), all in round 2. */
static int seen_picks(size_t i, unsigned o, int round) {
    return (i + o + (size_t)round) % 2 == 0 || round == 2;
}

static void test_seen(void) {
    static const uint64_t edge[][2] = {
        {0, 0}, {1, 1}, {0, 1}, {1, UINT64_MAX}, {UINT64_MAX, UINT64_MAX}, {2, 7}};
    const size_t ne = sizeof edge / sizeof edge[0];
    mh_aset_acc *a;
    CHECK_OK(mh_aset_acc_create(&a));
    for (int round = 0; round < 3; round++) {
        for (unsigned o = 0; o < MHF_OP_COUNT; o++)
            for (int twice = 0; twice < 2; twice++)
                for (size_t i = 0; i < ne; i++)
                    if (seen_picks(i, o, round))
                        CHECK_OK(mh_aset_acc_add(a, o, edge[i], 1, 1000));
        const uint64_t *pairs[MHF_OP_COUNT];
        size_t np[MHF_OP_COUNT];
        CHECK(mh_aset_acc_finish(a, pairs, np) == 0);
        for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
            /* the brute union of the pairs this round added to op */
            iv r[8];
            size_t n = 0;
            for (size_t i = 0; i < ne; i++)
                if (seen_picks(i, o, round))
                    r[n++] = (iv){edge[i][0], edge[i][1], o};
            uint64_t want[16];
            size_t w = brute_union(r, n, o, want);
            CHECKF(np[o] == w, "round %d op %u: %zu pairs, want %zu", round, o, np[o], w);
            CHECK(w == 0 || memcmp(pairs[o], want, w * 16) == 0);
        }
        mh_aset_acc_reset(a);
    }
    mh_aset_acc_destroy(a);
}

/* A small valid section to damage: op 0 with 5 intervals in runs of 2, op
 * 2 with one, op 1 with none. */
static void small_section(mh_buf *b) {
    static const uint64_t r0[] = {0, 3, 10, 10, 20, 29, 1000, 1000, 5000, 6000};
    static const uint64_t r2[] = {UINT64_MAX - 4, UINT64_MAX};
    const uint64_t *pairs[3] = {r0, NULL, r2};
    size_t n[3] = {5, 0, 1};
    b->n = 0;
    CHECK_OK(mh_aset_encode(pairs, n, 2, b));
}

typedef void (*damage_fn)(uint8_t *p, size_t size);
static void d_k0(uint8_t *p, size_t s) { (void)s; mhf_store_u32(p + MHF_ASET_RUN_IVALS, 0); }
static void d_rsz(uint8_t *p, size_t s) { (void)s; mhf_store_u32(p + MHF_ASET_RUN_SIZE_OFF, 23); }
static void d_res(uint8_t *p, size_t s) { (void)s; p[MHF_ASET_RESERVED1 + 3] = 1; }
static void d_data(uint8_t *p, size_t s) { (void)s; mhf_store_u64(p + MHF_ASET_DATA_BYTES, mhf_load_u64(p + MHF_ASET_DATA_BYTES) - 1); }
static void d_first(uint8_t *p, size_t s) { (void)s; mhf_store_u32(p + MHF_ASET_OPS + 2 * MHF_ASET_OP_SIZE + MHF_ASET_OP_RUN_FIRST, 2); }
static void d_nivals(uint8_t *p, size_t s) { (void)s; mhf_store_u64(p + MHF_ASET_OPS + MHF_ASET_OP_IVALS, 7); }
static uint8_t *run_rec(uint8_t *p, uint32_t i) { return p + MHF_ASET_HEADER_SIZE + i * MHF_ASET_RUN_SIZE; }
static void d_runiv(uint8_t *p, size_t s) { (void)s; mhf_store_u32(run_rec(p, 0) + MHF_ASET_R_IVALS, 1); }
static void d_order(uint8_t *p, size_t s) { (void)s; mhf_store_u64(run_rec(p, 1) + MHF_ASET_R_LO, 1); }
static void d_off(uint8_t *p, size_t s) { (void)s; mhf_store_u64(run_rec(p, 1) + MHF_ASET_R_OFFSET, 0); }
static void d_bytes0(uint8_t *p, size_t s) { (void)s; mhf_store_u32(run_rec(p, 3) + MHF_ASET_R_BYTES, 0); }
/* run 0's data: [0,3] then [10,10]: varints 3 | gap 5, len 0 */
static uint8_t *data_of(uint8_t *p) { return p + MHF_ASET_HEADER_SIZE + 4 * MHF_ASET_RUN_SIZE; }
static void d_vpast(uint8_t *p, size_t s) { (void)s; data_of(p)[2] = 0x80; }
static void d_vbound(uint8_t *p, size_t s) { (void)s; data_of(p)[0] = 17; } /* [0,17] passes run 1's 20 */

static void test_damage(void) {
    static const struct {
        const char *name;
        damage_fn fn;
        int at_parse; /* 1: the view fails; 0: decoding fails */
        const char *needle;
    } cases[] = {
        {"k 0", d_k0, 1, "intervals per run"},
        {"run_size 23", d_rsz, 1, "run_size 23"},
        {"reserved", d_res, 1, "reserved header field"},
        {"data_bytes - 1", d_data, 1, "bytes, its header says"},
        {"op 2 run_first", d_first, 1, "do not follow the previous op's"},
        {"op 0 intervals 7", d_nivals, 1, "7 intervals in 3 runs"},
        {"run 0 intervals 1", d_runiv, 1, "1 intervals, expected 2"},
        {"run 1 lo 1", d_order, 1, "not past the previous run's"},
        {"run 1 offset 0", d_off, 1, "do not follow the previous run's"},
        {"run 3 bytes 0", d_bytes0, 1, "do not follow the previous run's"},
        {"varint past the run", d_vpast, 0, "runs past the run's bytes"},
        {"interval past the next run", d_vbound, 0, "passes the next run's start"},
    };
    mh_buf b = {0};
    small_section(&b);
    fake f;
    fake_seg(&f, &b);
    mh_aset_view v;
    mh_diag d = {0, 0, ""};
    CHECKF(mh_aset_view_get(&f.seg, &v, &d) == MH_OK, "%s", d.msg);
    CHECK(v.nruns == 4 && v.run_count[0] == 3 && v.run_count[1] == 0 &&
          v.run_count[2] == 1);
    CHECK(mh_aset_meets(&f.seg, 4, 9, 1, &d) == 0);
    CHECK(mh_aset_meets(&f.seg, 4, 10, 1, &d) == 1);
    CHECK(mh_aset_meets(&f.seg, 4, 10, 6, &d) == 0);
    CHECK(mh_aset_meets(&f.seg, UINT64_MAX, UINT64_MAX, 4, &d) == 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mh_buf c = {0};
        CHECK_OK(mh_buf_append(&c, b.p, b.n));
        cases[i].fn(c.p, c.n);
        fake g;
        fake_seg(&g, &c);
        memset(&d, 0, sizeof d);
        int rc = mh_aset_view_get(&g.seg, &v, &d);
        if (!cases[i].at_parse) {
            CHECKF(rc == MH_OK, "%s: %s", cases[i].name, d.msg);
            /* every query that reads the run fails; fsck's walk too */
            rc = mh_aset_meets(&g.seg, 21, 22, 1, &d);
            if (rc == MH_OK || rc == 1) { /* the run read stopped early: */
                uint64_t got[64];
                (void)got;
                rc = MH_OK;
                for (uint32_t r = 0; r < v.run_count[0] && rc >= 0; r++) {
                    mh_aset_cur cu;
                    mh_aset_run_open(&v, 0, r, &cu);
                    while ((rc = mh_aset_run_step(&cu, &d)) == 1)
                        ;
                }
            }
        }
        CHECKF(rc == MH_ECORRUPT && strstr(d.msg, cases[i].needle),
               "%s: %d %s", cases[i].name, rc, d.msg);
        CHECKF(!cases[i].at_parse || strstr(d.msg, "address set at byte"),
               "%s: %s", cases[i].name, d.msg);
        fake_done(&g);
        mh_buf_free(&c);
    }
    /* a later minor: longer run records and non-zero reserved are read */
    {
        fake g;
        fake_seg(&g, &b);
        g.seg.minor = MHF_VERSION_MINOR + 1;
        mh_buf c = {0};
        CHECK_OK(mh_buf_append(&c, b.p, b.n));
        c.p[MHF_ASET_RESERVED0] = 7;
        g.seg.base = c.p;
        g.sec.sum = mh_hash(c.p, c.n);
        CHECK(mh_aset_meets(&g.seg, 4, 10, 1, &d) == 1);
        g.seg.minor = MHF_VERSION_MINOR;
        g.seg.aset_ok = 0;
        CHECK(mh_aset_meets(&g.seg, 4, 10, 1, &d) == MH_ECORRUPT);
        fake_done(&g);
        mh_buf_free(&c);
    }
    /* the section's sum: MH_ECHECKSUM */
    f.sec.sum ^= 1;
    f.seg.aset_ok = 0;
    CHECK(mh_aset_meets(&f.seg, 4, 10, 1, &d) == MH_ECHECKSUM);
    CHECK(strstr(d.msg, "address set") && strstr(d.msg, "checksum"));
    fake_done(&f);
    mh_buf_free(&b);
}

/* ---- stores ------------------------------------------------------------- */

/* Slots of 1 .. 8 bytes separated by gaps of 1, 7, 8, 9 or more bytes; each
 * slot has its own op, so a gap of one op may be a hit of another. Every
 * segment-sized stretch of the trace uses its own window of slots (the
 * working set drifts) plus a hot set shared by all; an access at 0 and one
 * at the top of the space now and then. */
#define NSLOTS 20000u
typedef struct slot {
    uint64_t at;
    uint32_t size;
    uint8_t op;
} slot;

static void make_slots(tu_rng *rng, slot *s) {
    static const uint64_t gaps[] = {1, 7, 8, 9, 1, 7, 8, 9, 40, 3000};
    uint64_t pos = 0x10000;
    for (uint32_t i = 0; i < NSLOTS; i++) {
        s[i].size = 1u << tu_below(rng, 4);
        s[i].at = pos;
        s[i].op = (uint8_t)(tu_below(rng, 5) == 0 ? MH_OP_WRITE
                                                 : tu_below(rng, 9) == 0 ? MH_OP_EXEC
                                                                         : MH_OP_READ);
        pos += s[i].size + gaps[tu_below(rng, sizeof gaps / sizeof gaps[0])];
    }
}

static void slot_trace(tu_rng *rng, const slot *s, mh_access *all, size_t n,
                       size_t seg_len) {
    for (size_t i = 0; i < n; i++) {
        mh_access *x = &all[i];
        memset(x, 0, sizeof *x);
        x->id = i;
        x->transition = i / 2;
        unsigned k = (unsigned)tu_below(rng, 200);
        const slot *sl;
        if (k < 60)
            sl = &s[tu_below(rng, 200)]; /* hot */
        else
            sl = &s[200 + ((i / seg_len) * 1500 + tu_below(rng, 1500)) % (NSLOTS - 200)];
        x->physical = sl->at;
        x->size = sl->size;
        x->op = sl->op;
        if (k == 198) {
            x->physical = 0;
            x->size = (uint32_t)tu_range(rng, 1, 4);
        } else if (k == 199) {
            x->size = (uint32_t)tu_range(rng, 1, 4);
            x->physical = UINT64_MAX - (x->size - 1u);
        }
        x->linear = x->physical;
        x->has_linear = 1;
    }
}

static void write_all(const char *dir, const mh_access *all, size_t n,
                      size_t commit, int discard) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 1000;
    o.block_accesses = 64;
    o.commit_accesses = commit;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    size_t i = 0;
    if (discard) {
        /* half a segment, then a discard back to a quarter of it, in a
         * segment that already has slices: the set is rebuilt */
        size_t h = commit + commit / 2;
        CHECK_OK(mh_writer_append_batch(w, all, h, NULL));
        CHECK_OK(mh_writer_discard_from(w, all[commit + commit / 4].transition));
        i = commit + commit / 4;
        while (i > 0 && all[i - 1].transition == all[i].transition)
            i--;
    }
    for (; i < n; i += 777)
        CHECK_OK(mh_writer_append_batch(w, all + i, n - i < 777 ? n - i : 777, NULL));
    CHECK_OK(mh_writer_close(w));
}

static const mh_seg *seg_of(const mh_reader *r, size_t i) {
    const mh_seg *s = NULL;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_reader_seg(r, i, &s, &d));
    return s;
}

/* q both ways (the set used, ignored); both the oracle's answer. */
static size_t both_ways(mh_reader *r, const mh_access *all, size_t n,
                        const mh_query *q, size_t max) {
    r->aset_off = 0;
    size_t got = tu_check_query(r, all, n, q, max);
    r->aset_off = 1;
    CHECK(tu_check_query(r, all, n, q, max) == got);
    r->aset_off = 0;
    return got;
}

/* Never-accessed ranges (by the ops asked) between accessed intervals:
 * uniform over the gaps of the union of every op's ranges, inside. */
static void gap_queries(mh_reader *r, const mh_access *all, size_t n,
                        tu_rng *rng, int count, size_t *passed, size_t *asked) {
    iv *rr = malloc(n * sizeof *rr);
    uint64_t *u = malloc(n * 16 + 16);
    CHECK(rr && u);
    for (size_t i = 0; i < n; i++) {
        rr[i].lo = all[i].physical;
        rr[i].hi = all[i].physical + (all[i].size - 1u);
        rr[i].op = 0; /* every op at once */
    }
    size_t m = brute_union(rr, n, 0, u);
    CHECK(m > 10);
    for (int k = 0; k < count; k++) {
        mh_query q;
        mh_query_init(&q);
        size_t g = (size_t)tu_below(rng, m - 1);
        uint64_t a = u[2 * g + 1] + 1, b = u[2 * g + 2] - 1; /* the gap */
        if (tu_below(rng, 2)) { /* a point in it */
            a = tu_range(rng, a, b);
            b = a;
        }
        if (tu_below(rng, 6) == 0) /* and now and then reaching a hit */
            b = u[2 * g + 2];
        q.addr_first = a;
        q.addr_last = b;
        q.ops = (uint32_t)tu_range(rng, 1, 7);
        q.direction = tu_below(rng, 2) ? MH_FORWARD : MH_BACKWARD;
        q.start = tu_below(rng, 3) ? all[tu_below(rng, n)].transition
                  : q.direction == MH_FORWARD ? 0 : UINT64_MAX;
        if (tu_below(rng, 4) == 0) {
            q.start_kind = MH_FROM_ID;
            q.start = tu_below(rng, n);
        }
        size_t max = (size_t)tu_range(rng, 1, 10);
        snprintf(tu_context, sizeof tu_context, "gap query %d [0x%llx, 0x%llx]",
                 k, (unsigned long long)a, (unsigned long long)b);
        both_ways(r, all, n, &q, max);
        for (size_t i = 0; i < r->nsegs; i++) {
            mh_diag d = {0, 0, ""};
            int on = mh_aset_meets(seg_of(r, i), a, b, q.ops, &d);
            CHECKF(on == 0 || on == 1, "meets: %d %s", on, d.msg);
            (*asked)++;
            *passed += on == 0;
        }
    }
    tu_context[0] = 0;
    free(rr);
    free(u);
}

typedef struct problems {
    int n, code;
    char msg[320];
} problems;

static void on_problem(void *ctx, const mh_problem *p) {
    problems *x = ctx;
    x->n++;
    if (strstr(p->message, "address set")) {
        x->code = p->code;
        snprintf(x->msg, sizeof x->msg, "%s", p->message);
    }
}

static problems run_fsck(const char *dir) {
    problems x = {0, 0, ""};
    mh_verify_result res = {.struct_size = sizeof res};
    mh_verify(dir, 0, on_problem, &x, &res);
    return x;
}


/* The first interval of op 0 one byte shorter or longer (its first run's
 * first varint, hi - lo): still well formed, no longer exact. */
static void shorten_first(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    uint32_t nruns = mhf_load_u32(p + MHF_ASET_RUN_COUNT);
    uint8_t *data = p + MHF_ASET_HEADER_SIZE + (size_t)nruns * MHF_ASET_RUN_SIZE;
    uint64_t off = mhf_load_u64(p + MHF_ASET_HEADER_SIZE + MHF_ASET_R_OFFSET);
    CHECK(data[off] < 0x80); /* a one-byte varint: rows of a few bytes */
    if (data[off])
        data[off]--;
    else
        data[off]++;
}

static void test_store(int discard) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "aset");
    tu_rng rng = {discard ? 21u : 12u};
    slot *s = malloc(NSLOTS * sizeof *s);
    size_t n = 100000, seg_len = 15000;
    mh_access *all = malloc(n * sizeof *all);
    CHECK(s && all);
    make_slots(&rng, s);
    slot_trace(&rng, s, all, n, seg_len);
    write_all(dir, all, n, seg_len, discard);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(r->nsegs >= 5);
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_section *sec;
        CHECKF(mh_seg_section(seg_of(r, i), MHF_SECT_ASET, &sec) == MH_OK,
               "segment %zu has no address set", i);
        CHECK(sec->flags == 0); /* optional */
        CHECK(sec->size <= seg_of(r, i)->count / 16 + 4096);
    }
    size_t passed = 0, asked = 0;
    gap_queries(r, all, n, &rng, 500, &passed, &asked);
    /* most segments are passed: a gap's bytes are never accessed, though
     * reaching into a hit (1 query in 6) or the hot slots keep some */
    CHECKF(passed * 2 > asked, "the set passed %zu of %zu segments", passed, asked);
    /* the ends of the space, the whole space, and random queries */
    static const uint64_t ends[][2] = {{0, 0}, {0, 3}, {1, 1}, {UINT64_MAX, UINT64_MAX},
                                       {UINT64_MAX - 3, UINT64_MAX}, {0, UINT64_MAX},
                                       {4, 0xffff}};
    for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++)
        for (uint32_t ops = 1; ops <= 7; ops++)
            for (int dir2 = 0; dir2 < 2; dir2++) {
                mh_query q;
                mh_query_init(&q);
                q.addr_first = ends[e][0];
                q.addr_last = ends[e][1];
                q.ops = ops;
                q.direction = dir2 ? MH_BACKWARD : MH_FORWARD;
                q.start = dir2 ? UINT64_MAX : 0;
                both_ways(r, all, n, &q, 7);
            }
    for (int k = 0; k < 300; k++) {
        mh_query q;
        size_t max;
        tu_random_query(&rng, all, n, &q, &max);
        snprintf(tu_context, sizeof tu_context, "random query %d", k);
        both_ways(r, all, n, &q, max);
        if (k % 10 == 0)
            tu_check_cursor(r, all, n, &q, 200, &rng);
    }
    tu_context[0] = 0;
    char name1[MHF_SEGMENT_NAME_LEN + 1];
    snprintf(name1, sizeof name1, "%s", seg_of(r, 1)->name);
    uint64_t s1_id = seg_of(r, 1)->id_first;
    const mh_section *sec;
    CHECK_OK(mh_seg_section(seg_of(r, 1), MHF_SECT_ASET, &sec));
    uint64_t flip_at = sec->offset + sec->size - 1;
    /* the first byte of the last run (the damaged one) */
    const uint8_t *set1 = seg_of(r, 1)->base + sec->offset;
    uint32_t nruns1 = mhf_load_u32(set1 + MHF_ASET_RUN_COUNT);
    CHECK(nruns1 >= 1);
    uint64_t last_lo = mhf_load_u64(set1 + MHF_ASET_HEADER_SIZE +
                                    (size_t)(nruns1 - 1) * MHF_ASET_RUN_SIZE + MHF_ASET_R_LO);
    mh_reader_close(r);
    problems x = run_fsck(dir);
    CHECKF(x.n == 0, "fsck of a fresh store: %d problems (%s)", x.n, x.msg);
    if (!discard) {
        free(all);
        free(s);
        tu_rmtree(dir);
        return;
    }
    /* exactness: a set one byte short, every sum right: fsck says so */
    char copy[600];
    snprintf(copy, sizeof copy, "%s.copy", dir);
    CHECK(mkdir(copy, 0755) == 0);
    tu_copy_dir(dir, copy);
    tu_resum_segment(copy, name1, MHF_SECT_ASET, shorten_first, NULL);
    x = run_fsck(copy);
    CHECKF(x.n == 1 && x.code == MH_ECORRUPT && strstr(x.msg, "its rows make"),
           "fsck of a shortened set: %d problems, %d %s", x.n, x.code, x.msg);
    tu_rmtree(copy);
    /* a flipped byte (the last run's last): fsck reports it; the queries
     * that decode that run in segment 1 fail with MH_ECHECKSUM, naming its
     * piece (the set read by its piece sums, SPEC.md 9f); read whole (the
     * piece sums ignored), every query that consults the set fails; the
     * set ignored, the query answers */
    char path[600];
    tu_join(path, sizeof path, dir, name1);
    size_t len;
    unsigned char *bytes = tu_read_file(path, &len);
    CHECK(bytes && flip_at < len);
    bytes[flip_at] ^= 0x20;
    tu_write_file(path, bytes, len);
    free(bytes);
    x = run_fsck(dir);
    CHECKF(x.n == 1 && x.code == MH_ECHECKSUM, "fsck: %d problems, %d %s", x.n,
           x.code, x.msg);
    CHECK_OK(mh_reader_open(dir, &r));
    r->apost_off = 1; /* a point query asks the postings (2.2) before the set */
    mh_query q;
    mh_query_init(&q);
    q.start_kind = MH_FROM_ID;
    q.start = s1_id;
    q.addr_first = q.addr_last = s[5].at;
    mh_access out[4];
    size_t got;
    char msg[MH_ERRMSG_MAX];
    mh_query top = q; /* its run: the damaged one */
    top.addr_first = top.addr_last = last_lo;
    top.ops = MH_OPS_ALL;
    CHECK_RC(mh_query_run(r, &top, out, 4, &got), MH_ECHECKSUM);
    mh_reader_errmsg(r, msg, sizeof msg);
    CHECKF(strstr(msg, "address set at byte") && strstr(msg, "piece") &&
               strstr(msg, "checksum mismatch") && strstr(msg, name1), "detail: %s", msg);
    mh_reader_close(r);
    CHECK_OK(mh_reader_open(dir, &r));
    r->apost_off = 1;
    r->psum_off = 1;
    CHECK_RC(mh_query_run(r, &q, out, 4, &got), MH_ECHECKSUM);
    mh_reader_errmsg(r, msg, sizeof msg);
    CHECKF(strstr(msg, "address set") && strstr(msg, "checksum") &&
               strstr(msg, name1), "detail: %s", msg);
    r->aset_off = 1;
    tu_check_query(r, all, n, &q, 4);
    mh_reader_close(r);
    free(all);
    free(s);
    tu_rmtree(dir);
}

/* ---- a real recording ------------------------------------------------- */

static int run_cmd(char *const argv[]) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int test_real(const char *cli) {
    if (!cli || access("/usr/bin/qemu-x86_64", X_OK) != 0 ||
        !getenv("MEMHIST_QEMU_PLUGIN"))
        return 77;
    char dir[512], rec[600], multi[600];
    tu_mkdtemp(dir, sizeof dir, "aset-real");
    tu_join(rec, sizeof rec, dir, "rec.store");
    tu_join(multi, sizeof multi, dir, "multi.store");
    char *argv[] = {(char *)cli, "record", "-q", "--engine", "qemu", "-o", rec,
                    "--", "/bin/ls", "-la", "/usr", NULL};
    int rc = run_cmd(argv);
    if (rc != 0) {
        fprintf(stderr, "memhist record failed (%d): skipped\n", rc);
        tu_rmtree(dir);
        return 77;
    }
    /* every access, in id order */
    mh_reader *r;
    CHECK_OK(mh_reader_open(rec, &r));
    mh_query q;
    mh_query_init(&q);
    mh_cursor *c;
    CHECK_OK(mh_cursor_open(r, &q, &c));
    size_t cap = 1 << 20, n = 0, got;
    mh_access *all = malloc(cap * sizeof *all);
    CHECK(all);
    for (;;) {
        if (cap - n < 4096) {
            cap *= 2;
            all = realloc(all, cap * sizeof *all);
            CHECK(all);
        }
        CHECK_OK(mh_cursor_next(c, all + n, 4096, &got));
        if (!got)
            break;
        n += got;
    }
    mh_cursor_close(c);
    mh_reader_close(r);
    CHECKF(n > 50000, "a real recording of %zu accesses", n);
    /* several segments, so the set can pass some */
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 4096;
    o.commit_accesses = n / 8 + 1;
    mh_writer *w;
    CHECK_OK(mh_writer_open(multi, MH_CREATE, &o, &w));
    for (size_t i = 0; i < n; i += 4096)
        CHECK_OK(mh_writer_append_batch(w, all + i, n - i < 4096 ? n - i : 4096, NULL));
    CHECK_OK(mh_writer_close(w));
    CHECK_OK(mh_reader_open(multi, &r));
    tu_rng rng = {5};
    size_t passed = 0, asked = 0;
    gap_queries(r, all, n, &rng, 150, &passed, &asked);
    printf("real recording: %zu accesses, %zu segments; the set passed %zu of "
           "%zu segment visits of gap queries\n", n, r->nsegs, passed, asked);
    CHECK(passed > 0);
    size_t bytes = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_section *sec;
        if (mh_seg_section(seg_of(r, i), MHF_SECT_ASET, &sec) == MH_OK)
            bytes += sec->size;
    }
    printf("real recording: address sets %zu bytes, %.4f per access\n", bytes,
           (double)bytes / (double)n);
    mh_reader_close(r);
    problems x = run_fsck(multi);
    CHECKF(x.n == 0, "fsck: %d problems (%s)", x.n, x.msg);
    free(all);
    tu_rmtree(dir);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "real")) /* ctest aset_real */
        return test_real(argv[2]);
    test_roundtrip();
    test_budget();
    test_seen();
    test_damage();
    test_store(0);
    test_store(1);
    printf("aset: ok\n");
    return 0;
}
