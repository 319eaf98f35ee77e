/*
 * apost.c - the address postings (section type 10: src/apost_build.c,
 * src/apost_read.c, src/verify_apost.c) against brute force.
 *   test_apost                    (ctest apost: 1 to 4)
 *   test_apost real MEMHIST_CLI   (ctest apost_real: 5)
 *
 * 1. Stores written by the writer (several segments; gaps of 1, 7, 8, 9
 *    bytes; accesses crossing granule edges; ranges at 0 and 2^64 - 1; a
 *    discard): every segment's section decoded by the reader equals the
 *    (op, granule, slice) triples recomputed from the input accesses at
 *    the section's shift, and mh_apost_query / next / prev equal the brute
 *    force candidates of random narrow ranges; fsck clean.
 * 2. Coarsening: the accumulator with a tiny budget and with a slice wider
 *    than 2^22 granules at shift 3: the shift chosen is coarser and the
 *    section still exact at it; past shift 10, none.
 * 3. Damage: every header, run and key field broken in turn: MH_ECORRUPT
 *    with "address postings at byte N: ..." from the reader; fsck finds a
 *    wrong posting, a missing and an extra key with every sum fixed, also
 *    in slices meeting more 64 KiB regions than fsck's radix sort ranks.
 * 4. address_postings = 0: no section.
 * 6. The golden variants apost-*: the reader's and fsck's exact details.
 * 5. A real recording (memhist record --engine qemu; exit 77 without
 *    qemu-x86_64 or the plugin) rewritten into segments: exact as in 1.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apost_util.h"
#include "internal.h"
#include "resum.h"
#include "testutil.h"

/* Brute force: the distinct (op, granule, slice) of rows of one segment;
 * acc[k] is the segment's k-th access, slice_of[k] its slice. */
static size_t brute(const mh_access *acc, const uint32_t *slice_of, size_t n,
                    unsigned g, trip **out) {
    size_t cap = 1024, m = 0;
    trip *t = malloc(cap * sizeof *t);
    CHECK(t);
    for (size_t k = 0; k < n; k++) {
        uint64_t lo = acc[k].physical >> g;
        uint64_t hi = (acc[k].physical + (acc[k].size - 1u)) >> g;
        for (uint64_t w = lo;; w++) {
            if (m == cap) {
                cap *= 2;
                t = realloc(t, cap * sizeof *t);
                CHECK(t);
            }
            t[m++] = (trip){w, acc[k].op, slice_of[k]};
            if (w == hi)
                break;
        }
    }
    qsort(t, m, sizeof *t, tu_cmp_trip);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (!u || tu_cmp_trip(&t[u - 1], &t[i]) != 0)
            t[u++] = t[i];
    *out = t;
    return u;
}

static void same_trips(const trip *a, size_t na, const trip *b, size_t nb,
                       const char *what) {
    size_t i = 0;
    while (i < na && i < nb && tu_cmp_trip(&a[i], &b[i]) == 0)
        i++;
    CHECKF(i == na && i == nb,
           "%s: %zu vs %zu triples, first difference at %zu: section (op %u, "
           "w 0x%llx, s %u), rows (op %u, w 0x%llx, s %u)", what, na, nb, i,
           i < na ? a[i].op : 9, i < na ? (unsigned long long)a[i].w : 0ull,
           i < na ? a[i].s : 0, i < nb ? b[i].op : 9,
           i < nb ? (unsigned long long)b[i].w : 0ull, i < nb ? b[i].s : 0);
}

/* Random narrow queries: mh_apost_query's candidates equal the brute
 * force's (the slices with a triple of an asked op in the range's
 * granules), walked with next and prev from every slice, and each slice's
 * ops (mh_apost_ops_at) the asked ops with a triple there. */
static void check_queries(const mh_seg *seg, const mh_apost_view *v,
                          const trip *t, size_t nt, tu_rng *rng) {
    uint64_t *scratch = NULL;
    size_t cap = 0;
    uint8_t *want = malloc(v->nslices + 1);
    CHECK(want);
    int nq = nt > 100000 ? 20 : 400;
    /* the same queries twice: the second pass finds every run it reads
     * checked, and walks it from its marks (apost_read.c) */
    tu_rng again = *rng;
    for (int q = 0; q < 2 * nq; q++) {
        if (q == nq)
            *rng = again;
        const trip *x = &t[tu_below(rng, nt)];
        uint64_t span = tu_below(rng, 4) == 0 ? tu_below(rng, 200) : tu_below(rng, 24);
        uint64_t a = (x->w << v->shift) + tu_below(rng, (uint64_t)1 << v->shift);
        if (tu_below(rng, 2) && a >= span)
            a -= span;
        uint64_t b = a + span < a ? UINT64_MAX : a + span;
        uint32_t ops = (uint32_t)tu_range(rng, 1, 7);
        mh_apost_iter it;
        mh_diag d = {0, 0, ""};
        int rc = mh_apost_query(seg, a, b, ops, &it, &scratch, &cap, &d);
        uint64_t wa = a >> v->shift, wb = b >> v->shift;
        if (wb - wa >= MHF_APOST_SPAN) {
            CHECK(rc == 0);
            continue;
        }
        CHECKF(rc == 1, "query [0x%llx, 0x%llx]: %d %s", (unsigned long long)a,
               (unsigned long long)b, rc, d.msg);
        memset(want, 0, v->nslices);
        for (size_t i = 0; i < nt; i++)
            if ((ops >> t[i].op & 1u) && t[i].w >= wa && t[i].w <= wb)
                want[t[i].s] |= (uint8_t)(1u << t[i].op);
        /* each slice's ops: those asked whose own postings list it */
        for (uint32_t s = 0; s <= v->nslices; s++)
            CHECKF(mh_apost_ops_at(&it, s) == (s < v->nslices ? want[s] : 0u),
                   "ops_at(%u) = %u, want %u (ops %u)", s, mh_apost_ops_at(&it, s),
                   s < v->nslices ? want[s] : 0u, ops);
        uint32_t nxt = UINT32_MAX;
        for (uint32_t s = v->nslices; s-- > 0;) {
            if (want[s])
                nxt = s;
            CHECKF(mh_apost_next(&it, s) == nxt, "next(%u) = %u, want %u", s,
                   mh_apost_next(&it, s), nxt);
        }
        uint32_t prv = UINT32_MAX;
        for (uint32_t s = 0; s < v->nslices; s++) {
            if (want[s])
                prv = s;
            CHECK(mh_apost_prev(&it, s) == prv);
        }
        CHECK(mh_apost_next(&it, v->nslices) == UINT32_MAX);
        CHECK(mh_apost_prev(&it, UINT32_MAX - 1) == prv);
    }
    free(want);
    free(scratch);
}

/* Segment i of a store against the accesses it holds (acc[0 .. n): the
 * store's accesses in id order). */
static void check_segment(const mh_seg *seg, const mh_access *acc, size_t n,
                          tu_rng *rng, unsigned *shift) {
    mh_apost_view v;
    mh_diag d = {0, 0, ""};
    int rc = mh_apost_view_get(seg, &v, &d);
    CHECKF(rc == MH_OK, "segment %s: %d %s", seg->name, rc, d.msg);
    const mh_section *sec;
    CHECK_OK(mh_seg_section(seg, MHF_SECT_APOST, &sec));
    CHECK(sec->flags == 0);
    CHECKF(sec->size <= seg->count / 2 + 4096, "%llu bytes for %llu accesses",
           (unsigned long long)sec->size, (unsigned long long)seg->count);
    uint32_t *slice_of = malloc(seg->count * sizeof *slice_of);
    CHECK(slice_of);
    for (uint32_t s = 0; s < seg->nslices; s++) {
        mh_slice sl;
        mh_seg_slice(seg, s, &sl);
        for (uint32_t k = 0; k < sl.count; k++)
            slice_of[sl.id_first - seg->id_first + k] = s;
    }
    CHECK(seg->id_first + seg->count <= n);
    trip *a, *b;
    size_t na = tu_apost_decode(&v, &a);
    size_t nb = brute(acc + seg->id_first, slice_of, seg->count, v.shift, &b);
    same_trips(a, na, b, nb, seg->name);
    check_queries(seg, &v, b, nb, rng);
    *shift = v.shift;
    free(a);
    free(b);
    free(slice_of);
}

typedef struct problems {
    int n, code;
    char msg[320];
} problems;

static void on_problem(void *ctx, const mh_problem *p) {
    problems *x = ctx;
    x->n++;
    x->code = p->code;
    snprintf(x->msg, sizeof x->msg, "%s", p->message);
}

static problems run_fsck(const char *dir) {
    problems x = {0, 0, ""};
    mh_verify_result res = {.struct_size = sizeof res};
    mh_verify(dir, 0, on_problem, &x, &res);
    return x;
}

/* A synthetic trace: hot words, a sweep with gaps of 1, 7, 8, 9 bytes,
 * accesses of 1-16 bytes at any alignment (crossing granule edges), and
 * some at 0 and at 2^64 - 1. */
static void make_trace(tu_rng *rng, mh_access *all, size_t n) {
    static const uint64_t gaps[] = {1, 7, 8, 9, 1, 7, 8, 9, 40, 3000};
    const uint64_t base = 0x7f0000001003u;
    uint64_t pos = base;
    for (size_t i = 0; i < n; i++) {
        mh_access *x = &all[i];
        memset(x, 0, sizeof *x);
        x->transition = i / 3;
        unsigned k = (unsigned)tu_below(rng, 100);
        x->size = (uint32_t)tu_range(rng, 1, 16);
        if (k < 40) {
            x->physical = 0x601000 + 8 * tu_below(rng, 300) + tu_below(rng, 3);
        } else if (k < 97) {
            /* a sweep over a 6 KiB window, again and again (a stack) */
            x->physical = pos;
            pos += x->size + gaps[tu_below(rng, sizeof gaps / sizeof gaps[0])];
            if (pos - base > 6000)
                pos = base + tu_below(rng, 16);
        } else if (k < 98) {
            x->physical = tu_below(rng, 20);
        } else if (k < 99) {
            x->physical = UINT64_MAX - (x->size - 1u) - tu_below(rng, 20);
        } else if (tu_below(rng, 4) == 0) {
            x->physical = tu_next(rng) & ~(uint64_t)0xfff; /* scattered */
        } else {
            x->physical = 0x601000 + 8 * tu_below(rng, 300) + tu_below(rng, 3);
        }
        x->op = (uint8_t)(tu_below(rng, 4) == 0 ? MH_OP_WRITE
                          : tu_below(rng, 12) == 0 ? MH_OP_EXEC
                                                   : MH_OP_READ);
        x->linear = x->physical;
        x->has_linear = 1;
    }
}

static void test_store(int discard) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "apost");
    tu_rng rng = {discard ? 31u : 13u};
    size_t n = 60000;
    mh_access *all = malloc(n * sizeof *all);
    CHECK(all);
    make_trace(&rng, all, n);
    size_t m;
    mh_access *acc = tu_apost_write(dir, all, n, 15000, 1000, discard, 1, &m);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(r->nsegs >= 4);
    unsigned gmin = 64;
    for (size_t i = 0; i < r->nsegs; i++) {
        unsigned g;
        snprintf(tu_context, sizeof tu_context, "segment %zu", i);
        check_segment(tu_seg_of(r, i), acc, m, &rng, &g);
        gmin = g < gmin ? g : gmin;
        /* the segment info gives the section's size (since 1.5) */
        mh_segment_info si = {.struct_size = sizeof si};
        const mh_section *sec;
        CHECK_OK(mh_reader_segment_info(r, i, &si));
        CHECK_OK(mh_seg_section(tu_seg_of(r, i), MHF_SECT_APOST, &sec));
        CHECK(si.apost_bytes == sec->size);
        CHECK_OK(mh_seg_section(tu_seg_of(r, i), MHF_SECT_ASET, &sec));
        CHECK(si.aset_bytes == sec->size);
    }
    /* a 6 KiB sweep and 300 hot words fit at word granules */
    CHECKF(gmin <= 4, "no segment at shift 3 or 4 (%u)", gmin);
    tu_context[0] = 0;
    mh_reader_close(r);
    problems x = run_fsck(dir);
    CHECKF(x.n == 0, "fsck of a fresh store: %d problems (%s)", x.n, x.msg);
    free(acc);
    free(all);
    tu_rmtree(dir);
}

/* ---- 2. coarsening ---------------------------------------------------- */

/* A fake segment of nslices slices holding only the section in b. */
typedef struct fake {
    mh_seg seg;
    mh_section sec;
} fake;

static void fake_seg(fake *f, const mh_buf *b, uint32_t nslices) {
    memset(f, 0, sizeof *f);
    f->sec.type = MHF_SECT_APOST;
    f->sec.size = b->n;
    f->sec.sum = mh_hash(b->p, b->n);
    f->seg.base = b->p;
    f->seg.size = b->n;
    f->seg.sections = &f->sec;
    f->seg.nsections = 1;
    f->seg.nslices = nslices;
    f->seg.major = MHF_VERSION_MAJOR;
    f->seg.minor = MHF_VERSION_MINOR;
}

/* What the reader allocated on the fake segment (its runs' checked
 * flags, marks and search tops), as mh_seg_close frees it. */
static void fake_done(fake *f) {
    free((void *)atomic_load(&f->seg.apost_run_ok));
    f->seg.apost_run_ok = NULL;
    free((void *)atomic_load(&f->seg.apost_top));
    f->seg.apost_top = NULL;
    mh_marks_free(atomic_load(&f->seg.apost_marks));
    f->seg.apost_marks = NULL;
}

/* Every run of v stepped with mh_apost_run_step (its postings listed)
 * and with mh_apost_run_step_in over [wa, wb]: the same keys, counts,
 * bytes used and outcome (on a damaged run the same detail); on a clean
 * section the bits ORed are exactly the postings of the keys in [wa, wb].
 * Returns the number of keys stepped. */
static size_t same_step_in(const mh_apost_view *v, uint64_t wa, uint64_t wb,
                           const char *what) {
    size_t words = ((size_t)v->nslices + 63) / 64 + 1;
    uint64_t *want = calloc(words, 8), *got = calloc(words, 8);
    uint32_t *list = malloc(((size_t)v->nslices + 1) * sizeof *list);
    CHECK(want && got && list);
    size_t keys = 0;
    int failed = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        for (uint32_t r = 0; r < v->run_count[o]; r++) {
            mh_apost_cur c1, c2;
            mh_apost_run_open(v, o, r, &c1);
            mh_apost_run_open(v, o, r, &c2);
            for (;;) {
                mh_diag d1 = {0, 0, ""}, d2 = {0, 0, ""};
                uint32_t n1 = 0, n2 = 0;
                int rc1 = mh_apost_run_step(&c1, NULL, list, &n1, &d1);
                int rc2 = mh_apost_run_step_in(&c2, wa, wb, got, &n2, &d2);
                CHECKF(rc1 == rc2 && !strcmp(d1.msg, d2.msg),
                       "%s: op %u run %u [%llu, %llu]: %d \"%s\", step_in %d \"%s\"", what, o,
                       r, (unsigned long long)wa, (unsigned long long)wb, rc1, d1.msg, rc2,
                       d2.msg);
                if (rc1 < 0)
                    failed = 1;
                if (rc1 <= 0)
                    break;
                CHECKF(c1.w == c2.w && n1 == n2 && c1.p == c2.p,
                       "%s: op %u run %u key %u: granule %llu / %llu, %u / %u postings", what,
                       o, r, c1.i, (unsigned long long)c1.w, (unsigned long long)c2.w, n1, n2);
                keys++;
                if (c1.w >= wa && c1.w <= wb)
                    for (uint32_t i = 0; i < n1; i++)
                        want[list[i] >> 6] |= (uint64_t)1 << (list[i] & 63);
            }
        }
    for (size_t i = 0; !failed && i < words; i++)
        CHECKF(want[i] == got[i], "%s: [%llu, %llu] word %zu: 0x%llx, want 0x%llx", what,
               (unsigned long long)wa, (unsigned long long)wb, i, (unsigned long long)got[i],
               (unsigned long long)want[i]);
    free(want);
    free(got);
    free(list);
    return keys;
}

/* Slices of random accesses through the accumulator (ranges merged per
 * op as the builder does), serialized with budget; the section's shift
 * returned (0: none) and its keys checked against brute force. The same
 * slices go through a second accumulator whose merge is the tournament
 * alone: the two sections must be the same bytes. mode: the first one's
 * merge (mh_apost_acc_set_merge); *grouped: the ops it grouped. */
static unsigned acc_roundtrip_mode(tu_rng *rng, uint32_t nslices, uint32_t per,
                                   uint64_t spread, uint32_t maxsize,
                                   uint64_t budget, int wide, int mode,
                                   uint32_t *grouped) {
    size_t n = (size_t)nslices * per;
    mh_access *acc = calloc(n, sizeof *acc);
    uint32_t *slice_of = malloc(n * sizeof *slice_of);
    uint64_t *pairs = malloc(n * 16);
    CHECK(acc && slice_of && pairs);
    mh_apost_acc *a, *b;
    CHECK_OK(mh_apost_acc_create(&a, 0));
    CHECK_OK(mh_apost_acc_create(&b, 0));
    mh_apost_acc_set_merge(a, mode);
    mh_apost_acc_set_merge(b, -1);
    for (uint32_t s = 0; s < nslices; s++) {
        mh_access *x = acc + (size_t)s * per;
        for (uint32_t i = 0; i < per; i++) {
            x[i].physical = 0x10000 + tu_below(rng, spread);
            x[i].size = (uint32_t)tu_range(rng, 1, maxsize);
            x[i].op = (uint8_t)tu_below(rng, 3);
            slice_of[(size_t)s * per + i] = s;
        }
        if (wide && s == 1) /* about 2^23 granules at shift 3, 2^22 - 1024 at 4 */
            x[0].size = (1u << 26) - (1u << 14);
        /* per op: sorted, merged */
        uint32_t cnt[MHF_OP_COUNT] = {0};
        size_t m = 0;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
            size_t m0 = m;
            for (uint32_t i = 0; i < per; i++)
                if (x[i].op == o) {
                    pairs[2 * m] = x[i].physical;
                    pairs[2 * m + 1] = x[i].physical + x[i].size - 1;
                    m++;
                }
            /* insertion sort by lo (small) then merge */
            for (size_t i = m0 + 1; i < m; i++)
                for (size_t j = i; j > m0 && pairs[2 * j] < pairs[2 * j - 2]; j--) {
                    uint64_t t0 = pairs[2 * j], t1 = pairs[2 * j + 1];
                    pairs[2 * j] = pairs[2 * j - 2];
                    pairs[2 * j + 1] = pairs[2 * j - 1];
                    pairs[2 * j - 2] = t0;
                    pairs[2 * j - 1] = t1;
                }
            size_t u = m0;
            for (size_t i = m0; i < m; i++) {
                if (u > m0 && pairs[2 * i] <= pairs[2 * u - 1] + 1) {
                    if (pairs[2 * i + 1] > pairs[2 * u - 1])
                        pairs[2 * u - 1] = pairs[2 * i + 1];
                } else {
                    pairs[2 * u] = pairs[2 * i];
                    pairs[2 * u + 1] = pairs[2 * i + 1];
                    u++;
                }
            }
            cnt[o] = (uint32_t)(u - m0);
            m = u;
        }
        /* wide: as if the slices were large (the pile limit is count / 2
         * + 1 MiB bytes), so only the 2^22 rule decides the shift */
        mh_apost_acc_add(a, pairs, cnt, (uint64_t)(s + 1) * per * (wide ? 100000 : 1));
        mh_apost_acc_add(b, pairs, cnt, (uint64_t)(s + 1) * per * (wide ? 100000 : 1));
    }
    mh_buf out = {0}, tour = {0};
    CHECK_OK(mh_apost_acc_serialize(a, n, budget, &out));
    CHECK_OK(mh_apost_acc_serialize(b, n, budget, &tour));
    CHECKF(out.n == tour.n && (!out.n || !memcmp(out.p, tour.p, out.n)),
           "grouped merge: %zu bytes, the tournament's %zu", out.n, tour.n);
    CHECK(mh_apost_acc_grouped(b) == 0);
    if (grouped)
        *grouped = mh_apost_acc_grouped(a);
    mh_buf_free(&tour);
    mh_apost_acc_destroy(b);
    unsigned g = 0;
    if (out.n) {
        CHECKF(out.n <= budget, "%zu bytes, budget %llu", out.n,
               (unsigned long long)budget);
        fake f;
        fake_seg(&f, &out, nslices);
        mh_apost_view v;
        mh_diag d = {0, 0, ""};
        int rc = mh_apost_view_get(&f.seg, &v, &d);
        CHECKF(rc == MH_OK, "%d %s", rc, d.msg);
        g = v.shift;
        trip *t1, *t2;
        size_t n1 = tu_apost_decode(&v, &t1);
        size_t n2 = brute(acc, slice_of, n, g, &t2);
        same_trips(t1, n1, t2, n2, "accumulator");
        check_queries(&f.seg, &v, t2, n2, rng);
        /* the one-pass step over windows: none, all, around keys */
        CHECK(same_step_in(&v, 0, UINT64_MAX, "step_in all") > 0 || n1 == 0);
        same_step_in(&v, 1, 0, "step_in none");
        for (int k = 0; k < 20 && n2; k++) {
            uint64_t w = t2[tu_below(rng, n2)].w, span = tu_below(rng, 300);
            same_step_in(&v, w > span / 2 ? w - span / 2 : 0, w + span, "step_in window");
        }
        free(t1);
        free(t2);
        fake_done(&f);
    }
    mh_buf_free(&out);
    mh_apost_acc_destroy(a);
    free(acc);
    free(slice_of);
    free(pairs);
    return g;
}

static unsigned acc_roundtrip(tu_rng *rng, uint32_t nslices, uint32_t per,
                              uint64_t spread, uint32_t maxsize, uint64_t budget,
                              int wide) {
    return acc_roundtrip_mode(rng, nslices, per, spread, maxsize, budget, wide,
                              0, NULL);
}

/* The seal's merge by grouping (apost_build.c) against the tournament:
 * ops dense enough are grouped, the others not, the bytes the same. */
static void test_grouped_merge(void) {
    tu_rng rng = {11};
    uint32_t grouped = 0;
    /* 120 slices of 1,000 accesses over 16 KiB (2 K granules), grouped
     * by default; then in windows of 128 postings (mode 2) */
    CHECK(acc_roundtrip_mode(&rng, 120, 1000, 1 << 14, 8, 1 << 24, 0, 0,
                             &grouped) == 3);
    CHECKF(grouped == 3, "%u ops grouped", grouped); /* execute too */
    CHECK(acc_roundtrip_mode(&rng, 120, 1000, 1 << 14, 8, 1 << 24, 0, 2,
                             &grouped) == 3);
    CHECKF(grouped == 3, "%u ops grouped", grouped);
    /* the same with a budget that stops the first shifts midway */
    unsigned g = acc_roundtrip_mode(&rng, 120, 1000, 1 << 14, 8, 12000, 0, 2,
                                    &grouped);
    CHECKF(g > 3 && grouped >= 6, "shift %u, %u ops grouped", g, grouped);
    /* small: the tournament by default, grouped when asked */
    CHECK(acc_roundtrip_mode(&rng, 10, 300, 1 << 8, 4, 1 << 20, 0, 0,
                             &grouped) == 3);
    CHECK(grouped == 0);
    CHECK(acc_roundtrip_mode(&rng, 10, 300, 1 << 8, 4, 1 << 20, 0, 1,
                             &grouped) == 3);
    CHECK(grouped == 3);
    /* sparse (2^30 bytes: few postings a key): never grouped */
    CHECK(acc_roundtrip_mode(&rng, 40, 2000, (uint64_t)1 << 30, 8, 1 << 22, 0,
                             1, &grouped) == 3);
    CHECK(grouped == 0);
    /* more keys than the table takes (2^16), dense all the same: given up
     * midway, the tournament merges */
    CHECK(acc_roundtrip_mode(&rng, 50, 2000, (uint64_t)1 << 22, 64, 1 << 24, 0,
                             1, &grouped) == 3);
    CHECK(grouped == 0);
}

static void test_coarsen(void) {
    tu_rng rng = {5};
    /* plenty of budget: shift 3 */
    CHECK(acc_roundtrip(&rng, 40, 500, 1 << 16, 16, 1 << 20, 0) == 3);
    /* a tight budget: coarser */
    unsigned g = acc_roundtrip(&rng, 40, 500, 1 << 16, 16, 12000, 0);
    CHECKF(g > 3 && g <= 10, "shift %u", g);
    /* a slice meeting 2^23 granules at shift 3: from 4 on */
    g = acc_roundtrip(&rng, 6, 300, 1 << 14, 8, (uint64_t)1 << 30, 1);
    CHECKF(g == 4, "shift %u", g);
    /* scattered over 2^40 bytes with a tiny budget: none */
    CHECK(acc_roundtrip(&rng, 20, 500, (uint64_t)1 << 40, 8, 2000, 0) == 0);
    /* 300 slices, keys in many slices: bitmaps */
    CHECK(acc_roundtrip(&rng, 300, 200, 1 << 10, 4, 1 << 22, 0) == 3);
    /* sparse keys over many slices: gaps of one, two and three varint
     * bytes (20,000 slices: gaps past 2^14), the one-pass step's fast
     * loop and its hand-over to the checked one */
    CHECK(acc_roundtrip(&rng, 600, 6, 1 << 9, 4, 1 << 22, 0) == 3);
    CHECK(acc_roundtrip(&rng, 20000, 1, 1 << 8, 4, 1 << 24, 0) == 3);
}

/* ---- 3. damage -------------------------------------------------------- */

/* A small section: op 0 keys 10, 11, 20, 40, 41 (K 2: runs of 2, 2, 1),
 * op 1 key 5 with a bitmap, op 2 none; 16 slices. */
static void small_section(mh_buf *b) {
    static const uint64_t g0[] = {10, 11, 20, 40, 41}, g1[] = {5};
    static const uint32_t f0[] = {0, 1, 3, 4, 5, 7}, f1[] = {0, 9};
    static const uint32_t p0[] = {3, 0, 15, 2, 7, 1, 2}, p1[] = {0, 1, 2, 3, 4, 5, 6, 7, 15};
    static const uint8_t fo0[] = {0, 0, 0, 0, 0}, fo1[] = {1};
    const uint64_t *gran[3] = {g0, g1, NULL};
    const uint32_t *first[3] = {f0, f1, NULL};
    const uint32_t *post[3] = {p0, p1, NULL};
    const size_t nk[3] = {5, 1, 0};
    const uint8_t *form[3] = {fo0, fo1, NULL};
    b->n = 0;
    CHECK_OK(mh_apost_encode(3, 2, 16, gran, first, post, nk, form, b));
}

static uint8_t *rec(uint8_t *p, uint32_t i) {
    return p + MHF_APOST_HEADER_SIZE + i * MHF_APOST_RUN_SIZE;
}
static uint8_t *dat(uint8_t *p) {
    return p + MHF_APOST_HEADER_SIZE + mhf_load_u32(p + MHF_APOST_RUN_COUNT) * MHF_APOST_RUN_SIZE;
}
static void d_shift2(uint8_t *p) { mhf_store_u32(p + MHF_APOST_SHIFT, 2); }
static void d_shift64(uint8_t *p) { mhf_store_u32(p + MHF_APOST_SHIFT, 64); }
static void d_k0(uint8_t *p) { mhf_store_u32(p + MHF_APOST_RUN_KEYS, 0); }
static void d_rsz(uint8_t *p) { mhf_store_u32(p + MHF_APOST_RUN_SIZE_OFF, 25); }
static void d_data(uint8_t *p) { mhf_store_u64(p + MHF_APOST_DATA_BYTES, mhf_load_u64(p + MHF_APOST_DATA_BYTES) - 1); }
static void d_post(uint8_t *p) { mhf_store_u64(p + MHF_APOST_POSTINGS, 100000); }
static void d_first(uint8_t *p) { mhf_store_u32(p + MHF_APOST_OPS + MHF_APOST_OP_SIZE + MHF_APOST_OP_RUN_FIRST, 2); }
static void d_keys(uint8_t *p) { mhf_store_u64(p + MHF_APOST_OPS + MHF_APOST_OP_KEYS, 7); }
static void d_runkeys(uint8_t *p) { mhf_store_u32(rec(p, 0) + MHF_APOST_R_KEYS, 1); }
static void d_order(uint8_t *p) { mhf_store_u64(rec(p, 1) + MHF_APOST_R_GRANULE, 11); }
static void d_gmax(uint8_t *p) { mhf_store_u64(rec(p, 2) + MHF_APOST_R_GRANULE, UINT64_MAX); }
static void d_off(uint8_t *p) { mhf_store_u64(rec(p, 1) + MHF_APOST_R_OFFSET, 0); }
static void d_bytes0(uint8_t *p) { mhf_store_u32(rec(p, 3) + MHF_APOST_R_BYTES, 0); }
/* data: run 0 = h(1,0)=2, s 3; gap 0, h(2,0)=4, 0, 14 */
static void d_n0(uint8_t *p) { dat(p)[0] = 0; }              /* n = 0 */
static void d_spast(uint8_t *p) { dat(p)[1] = 16; }          /* slice 16 of 16 */
static void d_gpast(uint8_t *p) { dat(p)[2] = 9; }           /* granule 20 = run 1's */
static void d_vpast(uint8_t *p) { dat(p)[5] = 0x80; }        /* varint past the run */
static void d_left(uint8_t *p) { dat(p)[3] = 2; } /* key 11's n 1: a byte left */
static void d_pop(uint8_t *p) { uint8_t *q = p + mhf_load_u64(p + MHF_APOST_DATA_BYTES) + (dat(p) - p) - 2; q[0] ^= 0x01; } /* bitmap bit 8 cleared: popcount 8 */

static void test_damage(void) {
    static const struct {
        const char *name;
        void (*edit)(uint8_t *);
        const char *want;
    } cases[] = {
        {"shift 2", d_shift2, "granule shift 2"},
        {"shift 64", d_shift64, "granule shift 64"},
        {"K 0", d_k0, "0 keys per run"},
        {"run_size 25", d_rsz, "run_size 25"},
        {"data bytes", d_data, "bytes"},
        {"posting_count", d_post, "posting_count 100000"},
        {"run_first", d_first, "do not follow"},
        {"key count", d_keys, "7 keys in 3 runs"},
        {"run keys", d_runkeys, "1 keys, expected 2"},
        {"run order", d_order, "not above the previous run's"},
        {"run granule max", d_gmax, "within"},
        {"run offset", d_off, "do not continue"},
        {"run bytes 0", d_bytes0, "do not continue"},
        {"n 0", d_n0, "0 postings"},
        {"slice past", d_spast, "passes slice 15"},
        {"granule past run bound", d_gpast, "passes the run's bound"},
        {"varint past", d_vpast, "runs past the run's bytes"},
        {"bytes left", d_left, "left after its keys"},
        {"popcount", d_pop, "bits set"},
    };
    mh_buf b = {0};
    small_section(&b);
    {
        fake f;
        fake_seg(&f, &b, 16);
        mh_apost_view v;
        mh_diag d = {0, 0, ""};
        int rc = mh_apost_view_get(&f.seg, &v, &d);
        CHECKF(rc == MH_OK, "clean: %d %s", rc, d.msg);
        trip *t;
        size_t nt = tu_apost_decode(&v, &t);
        CHECK(nt == 16);
        CHECK(t[0].op == 0 && t[0].w == 10 && t[0].s == 3);
        CHECK(t[15].op == 1 && t[15].w == 5 && t[15].s == 15);
        free(t);
        fake_done(&f);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mh_buf c = {0};
        CHECK_OK(mh_buf_append(&c, b.p, b.n));
        cases[i].edit(c.p);
        fake f;
        fake_seg(&f, &c, 16);
        /* a run's bytes damaged: the one-pass step says what the
         * checked step says, at the same key */
        {
            mh_apost_view v;
            mh_diag dv = {0, 0, ""};
            if (mh_apost_view_get(&f.seg, &v, &dv) == MH_OK) {
                same_step_in(&v, 0, UINT64_MAX, cases[i].name);
                same_step_in(&v, 11, 20, cases[i].name);
            }
            fake_done(&f);
            fake_seg(&f, &c, 16);
        }
        /* every query touching the section, or fsck's full decode */
        mh_diag d = {0, 0, ""};
        int rc = MH_OK;
        uint64_t *scratch = NULL;
        size_t cap = 0;
        for (uint64_t w = 0; w < 64 && rc >= 0; w++) {
            mh_apost_iter it;
            rc = mh_apost_query(&f.seg, w << 3, (w << 3) + 7, 7, &it, &scratch, &cap, &d);
        }
        free(scratch);
        if (rc >= 0)
            rc = mh_apost_fsck(&f.seg, 0, &d);
        CHECKF(rc == MH_ECORRUPT && strstr(d.msg, "address postings at byte ") &&
                   strstr(d.msg, cases[i].want),
               "%s: %d %s", cases[i].name, rc, d.msg);
        fake_done(&f);
        mh_buf_free(&c);
    }
    /* a flipped byte: MH_ECHECKSUM */
    b.p[b.n - 1] ^= 1;
    fake f;
    fake_seg(&f, &b, 16);
    f.sec.sum ^= 1;
    mh_apost_view v;
    mh_diag d = {0, 0, ""};
    CHECK_RC(mh_apost_view_get(&f.seg, &v, &d), MH_ECHECKSUM);
    CHECK(strstr(d.msg, "address postings at byte 0: checksum mismatch"));
    fake_done(&f);
    mh_buf_free(&b);
}


/* The slice count of the segment being edited (the bitmaps' width). */
static uint32_t edit_nslices;

static uint64_t get_v(uint8_t **q) {
    uint64_t v = 0;
    for (unsigned s = 0;; s += 7) {
        v |= (uint64_t)(**q & 0x7f) << s;
        if (*(*q)++ < 0x80)
            return v;
    }
}

/* A key of op 0's first run: one posting moved to a slice it did not
 * list (form 0: s_0 or the gap after it one lower or higher; form 1: one
 * bit moved; a key in every slice is passed over), so still well formed,
 * no longer exact. */
static void wrong_posting(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    uint8_t *q = dat(p);
    uint32_t keys = mhf_load_u32(rec(p, 0) + MHF_APOST_R_KEYS);
    for (uint32_t k = 0; k < keys; k++) {
        if (k)
            get_v(&q);
        uint64_t h = get_v(&q);
        if ((h & 1) == 0) {
            CHECK(q[0] < 0x7f);
            if (h == 2)
                q[0] = q[0] ? (uint8_t)(q[0] - 1) : 1;
            else if (q[0])
                q[0]--;
            else
                q[1] = q[1] ? (uint8_t)(q[1] - 1) : 1;
            return;
        }
        uint32_t set = UINT32_MAX, clear = UINT32_MAX;
        for (uint32_t s = 0; s < edit_nslices; s++)
            if (q[s >> 3] >> (s & 7) & 1)
                set = set == UINT32_MAX ? s : set;
            else
                clear = clear == UINT32_MAX ? s : clear;
        if (clear != UINT32_MAX) {
            q[set >> 3] ^= (uint8_t)(1u << (set & 7));
            q[clear >> 3] ^= (uint8_t)(1u << (clear & 7));
            return;
        }
        q += (edit_nslices + 7) / 8;
    }
    CHECK(!"a key to edit");
}

/* The second key of op 0's first run one granule later (its gap + 1): a
 * key listed that no row meets, or a real one missing. */
static void shift_key(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    uint8_t *q = dat(p);
    uint64_t h = get_v(&q);
    if ((h & 1) == 0)
        for (uint64_t i = 0; i < (h >> 1); i++)
            get_v(&q);
    else
        q += (edit_nslices + 7) / 8;
    CHECK((*q & 0x7f) != 0x7f);
    (*q)++;
}

/* spread: three accesses in four moved to 64 KiB regions of a 1 GiB
 * window and slices of 4,000 rows, so a slice meets more regions than
 * fsck's radix sort ranks (MH_SORT_RANK_MAX) and its rows' ranges are
 * sorted the other way. */
static void test_fsck_exact(int spread) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "apostf");
    tu_rng rng = {spread ? 82u : 77u};
    size_t n = 20000, m;
    uint32_t slice_accesses = 1000;
    mh_access *all = malloc(n * sizeof *all);
    make_trace(&rng, all, n);
    if (spread) {
        /* 1,500 words in as many 64 KiB regions of a 1 GiB window, read
         * again and again: about 1,300 regions a slice, and few enough
         * keys for the section's budget at shift 10 */
        enum { POOL = 1500 };
        static uint64_t pool[POOL];
        for (size_t k = 0; k < POOL; k++)
            pool[k] = 0x40000000u + ((uint64_t)tu_below(&rng, 16384) << 16) +
                      8 * tu_below(&rng, 8);
        for (size_t i = 0; i < n; i++)
            if (i % 4 != 0) {
                all[i].physical = all[i].linear = pool[tu_below(&rng, POOL)];
                all[i].size = 8;
                all[i].op = MH_OP_READ;
            }
        slice_accesses = 4000;
    }
    mh_access *acc = tu_apost_write(dir, all, n, 10000, slice_accesses, 0, 1, &m);
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, 0);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    edit_nslices = tu_seg_of(r, 0)->nslices;
    CHECK(mh_apost_fsck(tu_seg_of(r, 0), 1, NULL) == MH_OK);
    mh_reader_close(r);
    static void (*const edits[])(uint8_t *, uint64_t, void *) = {wrong_posting, shift_key};
    static const char *const want[] = {"slice", "granule"};
    for (int e = 0; e < 2; e++) {
        char copy[600];
        snprintf(copy, sizeof copy, "%s.copy%d", dir, e);
        CHECK(mkdir(copy, 0755) == 0);
        tu_copy_dir(dir, copy);
        tu_resum_segment(copy, name, MHF_SECT_APOST, edits[e], NULL);
        problems x = run_fsck(copy);
        CHECKF(x.n == 1 && x.code == MH_ECORRUPT &&
                   strstr(x.msg, "address postings at byte ") && strstr(x.msg, want[e]),
               "edit %d: %d problems, %d %s", e, x.n, x.code, x.msg);
        tu_rmtree(copy);
    }
    problems x = run_fsck(dir);
    CHECKF(x.n == 0, "%d %s", x.n, x.msg);
    /* 4. the option off: no section, fsck clean */
    char dir2[600];
    snprintf(dir2, sizeof dir2, "%s.off", dir);
    free(tu_apost_write(dir2, all, n, 10000, slice_accesses, 0, 0, &m));
    CHECK_OK(mh_reader_open(dir2, &r));
    const mh_section *sec;
    CHECK(mh_seg_section(tu_seg_of(r, 0), MHF_SECT_APOST, &sec) == MH_ENOTFOUND);
    mh_reader_close(r);
    tu_rmtree(dir2);
    free(acc);
    free(all);
    tu_rmtree(dir);
}

/* ---- 5. a real recording ---------------------------------------------- */

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
        return TU_SKIP;
    char dir[512], rec[600], multi[600];
    tu_mkdtemp(dir, sizeof dir, "apost-real");
    tu_join(rec, sizeof rec, dir, "rec.store");
    tu_join(multi, sizeof multi, dir, "multi.store");
    char *argv[] = {(char *)cli, "record", "-q", "--engine", "qemu", "-o", rec,
                    "--", "/bin/ls", "-la", "/usr", NULL};
    int rc = run_cmd(argv);
    if (rc != 0) {
        fprintf(stderr, "memhist record failed (%d): skipped\n", rc);
        tu_rmtree(dir);
        return TU_SKIP;
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
    /* several segments of many slices */
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 4096;
    o.commit_accesses = n / 4 + 1;
    mh_writer *w;
    CHECK_OK(mh_writer_open(multi, MH_CREATE, &o, &w));
    for (size_t i = 0; i < n; i += 4096)
        CHECK_OK(mh_writer_append_batch(w, all + i, n - i < 4096 ? n - i : 4096, NULL));
    CHECK_OK(mh_writer_close(w));
    CHECK_OK(mh_reader_open(multi, &r));
    tu_rng rng = {99};
    size_t bytes = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        unsigned g;
        snprintf(tu_context, sizeof tu_context, "real segment %zu", i);
        check_segment(tu_seg_of(r, i), all, n, &rng, &g);
        const mh_section *sec;
        CHECK_OK(mh_seg_section(tu_seg_of(r, i), MHF_SECT_APOST, &sec));
        bytes += sec->size;
        printf("real recording: segment %zu: %llu accesses, shift %u, %llu "
               "bytes\n", i, (unsigned long long)tu_seg_of(r, i)->count, g,
               (unsigned long long)sec->size);
    }
    printf("real recording: %zu accesses, address postings %.4f bytes per "
           "access\n", n, (double)bytes / (double)n);
    tu_context[0] = 0;
    mh_reader_close(r);
    problems x = run_fsck(multi);
    CHECKF(x.n == 0, "fsck: %d %s", x.n, x.msg);
    free(all);
    tu_rmtree(dir);
    return 0;
}

/* ---- 6. the golden variants (format/golden/corrupt/apost-*) ----------- */
/* Each variant's segment 1 through the reader (a point query at address 0,
 * whose granule 0 of op 0 every variant's section has or should have) and
 * through fsck's check, with their exact detail lines. */
static void test_golden(void) {
    static const struct {
        const char *name;
        const char *query; /* NULL: the query is served */
        const char *fsck;
    } v[] = {
        {"apost-posting", NULL,
         "address postings at byte 3195: op 0 granule 0x0: slice 0 is listed, none of "
         "its rows meets it"},
        {"apost-missing-key", NULL,
         "address postings at byte 3195: op 0 granule 0x0 (slice 1 meets it) is missing"},
        {"apost-extra-key", NULL,
         "address postings at byte 3197: op 0 granule 0x1 is listed, no row of its op "
         "meets it"},
        {"apost-popcount",
         "address postings at byte 3196: run 0: key 0 (granule 0x0): bitmap has 1 bits "
         "set, its count says 2", NULL},
        {"apost-granule-order",
         "address postings at byte 3147: run 1 (op 0): first granule 0x0 with 2 keys is "
         "not above the previous run's (0x1) and within 0x1fffffffffffffff", NULL},
        {"apost-shift", "address postings at byte 3043: granule shift 2, not 3 ... 63", NULL},
        {"apost-run-bounds",
         "address postings at byte 3131: run 0: bytes [0, +75) do not continue the runs "
         "before it (at 0) inside the 74 data bytes", NULL},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/corrupt/%s.store", MH_GOLDEN_DIR, v[i].name);
        snprintf(tu_context, sizeof tu_context, "golden %s", v[i].name);
        mh_reader *r;
        CHECK_OK(mh_reader_open(path, &r));
        const mh_seg *seg = tu_seg_of(r, 1);
        mh_apost_iter it;
        uint64_t *scratch = NULL;
        size_t cap = 0;
        mh_diag d = {0, 0, ""};
        int rc = mh_apost_query(seg, 0, 0, 1, &it, &scratch, &cap, &d);
        free(scratch);
        scratch = NULL;
        cap = 0;
        if (v[i].query) {
            CHECKF(rc == MH_ECORRUPT && !strcmp(d.msg, v[i].query), "query: %d '%s'", rc,
                   d.msg);
            /* and again: a failed check is not remembered as passed */
            CHECK(mh_apost_query(seg, 0, 0, 1, &it, &scratch, &cap, &d) == MH_ECORRUPT);
            free(scratch);
        } else {
            CHECKF(rc == 1, "query: %d %s", rc, d.msg);
        }
        d = (mh_diag){0, 0, ""};
        rc = mh_apost_fsck(seg, 1, &d);
        const char *want = v[i].fsck ? v[i].fsck : v[i].query;
        CHECKF(rc == MH_ECORRUPT && !strcmp(d.msg, want), "fsck: %d '%s'", rc, d.msg);
        /* segment 0's postings (a section 14) are sound in every variant */
        CHECK(mh_apost_fsck(tu_seg_of(r, 0), 1, &d) == MH_OK);
        mh_reader_close(r);
    }
    tu_context[0] = 0;
    /* the committed 2.2 tiny.store: segment 1's section is exact and serves */
    char path[1024];
    snprintf(path, sizeof path, "%s/tiny.store", MH_GOLDEN_DIR);
    mh_reader *r;
    CHECK_OK(mh_reader_open(path, &r));
    const mh_section *sec;
    CHECK(mh_apost_section(tu_seg_of(r, 0), &sec) == (int)MHF_SECT_APOSTW); /* 2.6 */
    CHECK_OK(mh_seg_section(tu_seg_of(r, 1), MHF_SECT_APOST, &sec));
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_apost_fsck(tu_seg_of(r, 1), 1, &d));
    mh_reader_close(r);
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "real"))
        return test_real(argv[2]);
    test_coarsen();
    test_grouped_merge();
    test_damage();
    test_golden();
    test_store(0);
    test_store(1);
    test_fsck_exact(0);
    test_fsck_exact(1);
    printf("apost: ok\n");
    return 0;
}
