/*
 * span.c - the span address sets (section type 11, format 2.3:
 * src/span_build.c, src/span_read.c, src/verify_span.c) against brute force
 * and the oracle.
 *   test_span                    (ctest span: 1 to 5)
 *   test_span real MEMHIST_CLI   (ctest span.qemu: 6)
 *
 * 1. Stores of many small segments (37 and 64, and one written by three
 *    writer sessions): addresses localized per segment, some ranges touched
 *    in three segments only, some never; every node (position k with
 *    lowbit(k) >= 2) present and equal to the union of the covered
 *    segments' accesses recomputed from the trace; its header as SPEC §9e.
 * 2. Queries (both directions, max 1 / 10 / 1000, every op set, end bounds,
 *    cursors, resumed chains, streams of a window): every answer the
 *    oracle's, the span sets used and ignored.
 * 3. A never-accessed address opens O(log n) segments with the span sets
 *    (both directions, from the first segment), every segment without.
 * 4. A scattered segment (no address set): the nodes covering it are
 *    absent, the others present, answers exact.
 * 5. Damage (a set byte, L not a power of two, the section's sum, an
 *    inexact union): the exact error for queries that use the node, and
 *    for fsck; a whole node whose first_seq, L or span_accesses name other
 *    positions is stale: queries pass it as absent, fsck notes it. A
 *    MANIFEST rebuilt by repair without two lost empty segments: every
 *    later node stale, fsck clean, answers exact, appends build new nodes.
 * 6. A qemu recording of sort (tu_record_sort) rewritten in about 24
 *    segments: every node against brute force, never-accessed gaps and
 *    random queries against the oracle with span sets on and off, fsck
 *    clean (exit 77 without qemu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "seg_edit.h"
#include "testutil.h"

static uint64_t lowbit(uint64_t x) { return x & (~x + 1); }

/* ---- traces ------------------------------------------------------------- */

/* Segment s of the trace (seg_len accesses each) uses its own 64 KiB
 * window of addresses plus a hot page shared by all; the addresses RARE_A,
 * RARE_B (reads, writes) are touched in segments 3, 17 and 40 only. */
#define RARE_A 0x7000000000ull
#define RARE_B 0x7000100000ull
static void make_trace(tu_rng *rng, mh_access *all, size_t n, size_t seg_len,
                       size_t scattered_seg) {
    for (size_t i = 0; i < n; i++) {
        mh_access *x = &all[i];
        memset(x, 0, sizeof *x);
        x->id = i;
        x->transition = i / 3;
        size_t s = i / seg_len;
        unsigned k = (unsigned)tu_below(rng, 100);
        if (s == scattered_seg) {
            x->physical = tu_next(rng) & ~0xfull;
        } else if (k < 20) {
            x->physical = 0x1000 + tu_below(rng, 512) * 8; /* hot */
        } else {
            x->physical = 0x100000 * (s + 2) + tu_below(rng, 24) * 16;
        }
        x->size = 1u << tu_below(rng, 4);
        x->op = (uint8_t)(k % 7 == 0 ? MH_OP_WRITE : k % 13 == 0 ? MH_OP_EXEC
                                                                 : MH_OP_READ);
        if ((s == 3 || s == 17 || s == 40) && i % seg_len == seg_len / 2) {
            x->physical = (i & 1) ? RARE_B : RARE_A;
            x->op = (i & 1) ? MH_OP_WRITE : MH_OP_READ;
            x->size = 4;
        }
        x->linear = x->physical;
        x->has_linear = 1;
    }
}

/* Writes all[from, to) into dir in segments of seg_len accesses (a commit
 * after each), by a writer with nthreads background threads. */
static void write_part(const char *dir, const mh_access *all, size_t from,
                       size_t to, size_t seg_len, int create, int nthreads) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 500;
    o.block_accesses = 64;
    o.commit_accesses = seg_len;
    o.background = nthreads;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, create ? MH_CREATE : MH_APPEND, &o, &w));
    for (size_t i = from; i < to; i += 333)
        CHECK_OK(mh_writer_append_batch(w, all + i, to - i < 333 ? to - i : 333,
                                        NULL));
    CHECK_OK(mh_writer_close(w));
}

/* ---- nodes against brute force ----------------------------------------- */

typedef struct pairs {
    uint64_t *p;
    size_t n;
} pairs;

static int cmp_u64x2(const void *x, const void *y) {
    const uint64_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* The union of op's ranges of all[from, to), merged maximal. */
static pairs brute_union(const mh_access *all, size_t from, size_t to,
                         unsigned op) {
    pairs u = {malloc((to - from + 1) * 16), 0};
    CHECK(u.p);
    size_t m = 0;
    for (size_t i = from; i < to; i++)
        if (all[i].op == op) {
            u.p[2 * m] = all[i].physical;
            u.p[2 * m + 1] = all[i].physical + (all[i].size - 1u);
            m++;
        }
    qsort(u.p, m, 16, cmp_u64x2);
    for (size_t i = 0; i < m; i++) {
        uint64_t lo = u.p[2 * i], hi = u.p[2 * i + 1];
        if (u.n && (u.p[2 * u.n - 1] == UINT64_MAX || lo <= u.p[2 * u.n - 1] + 1)) {
            if (hi > u.p[2 * u.n - 1])
                u.p[2 * u.n - 1] = hi;
        } else {
            u.p[2 * u.n] = lo;
            u.p[2 * u.n + 1] = hi;
            u.n++;
        }
    }
    return u;
}

static const mh_seg *seg_of(const mh_reader *r, size_t i) {
    const mh_seg *s = NULL;
    mh_diag d = {0, 0, ""};
    CHECKF(mh_reader_seg(r, i, &s, &d) == MH_OK, "%s", d.msg);
    return s;
}

/* Every node of r's store: present unless a covered segment (with
 * accesses) has no address set (scattered), equal to the union of the
 * covered segments' accesses. Returns the nodes seen. */
/* Bytes of the exact union of all[from, to)'s ranges as a node's set. */
static size_t union_bytes(const mh_access *all, size_t from, size_t to) {
    pairs u[MHF_OP_COUNT];
    const uint64_t *p[MHF_OP_COUNT];
    size_t n[MHF_OP_COUNT];
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        u[o] = brute_union(all, from, to, o);
        p[o] = u[o].p;
        n[o] = u[o].n;
    }
    mh_buf b = {0};
    CHECK_OK(mh_aset_encode(p, n, MHF_SPAN_K, &b));
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        free(u[o].p);
    size_t bytes = b.n;
    mh_buf_free(&b);
    return bytes;
}

static int check_nodes(const mh_reader *r, const mh_access *all) {
    int seen = 0;
    char *present = calloc(r->nsegs + 1, 1); /* by position */
    CHECK(present);
    for (size_t ri = 0; ri < r->nsegs; ri++) {
        uint64_t k = ri + 1, L = lowbit(k);
        const mh_seg *s = seg_of(r, ri);
        const mh_section *sec;
        int has = mh_span_section(s, &sec) == MH_OK;
        present[k] = (char)has;
        /* what the public API says of it (since 1.7) */
        mh_segment_info si = {.struct_size = sizeof si};
        CHECK(mh_reader_segment_info(r, ri, &si) == MH_OK);
        CHECKF(si.span_bytes == (has ? sec->size : 0),
               "segment %zu: span_bytes %llu, section %llu bytes", ri,
               (unsigned long long)si.span_bytes,
               (unsigned long long)(has ? sec->size : 0));
        /* SPEC 9e: its own set (or no access), each child (k - 1: a set,
         * k - 2, k - 4, ...: nodes), and the union within its budget */
        const mh_section *as;
        int want = L >= 2 && (r->recs[ri].count == 0 ||
                              mh_seg_section(s, MHF_SECT_ASET, &as) == MH_OK);
        for (uint64_t c = 1; want && c < L; c *= 2) {
            size_t j = ri - c;
            if (c == 1)
                want = r->recs[j].count == 0 ||
                       mh_seg_section(seg_of(r, j), MHF_SECT_ASET, &as) == MH_OK;
            else
                want = present[k - c];
        }
        if (want) {
            size_t r0 = ri + 1 - L;
            uint64_t acc = 0;
            for (size_t j = r0; j <= ri; j++)
                acc += r->recs[j].count;
            size_t from = r->recs[r0].id_first, to = r->recs[ri].id_first + r->recs[ri].count;
            want = union_bytes(all, from, to) <= acc / 16 + 4096;
        }
        CHECKF(has == want, "segment %zu (position %llu): node %s, expected %s",
               ri, (unsigned long long)k, has ? "present" : "absent",
               want ? "present" : "absent");
        if (!has)
            continue;
        seen++;
        mh_span_view v;
        mh_diag d = {0, 0, ""};
        CHECKF(mh_span_check(s, sec, ri, r->recs, r->nsegs, &v, &d) == MH_OK,
               "%s", d.msg);
        size_t r0 = ri + 1 - L;
        uint64_t acc = 0;
        for (size_t j = r0; j <= ri; j++)
            acc += r->recs[j].count;
        CHECK(v.segments == L && v.first_seq == r->recs[r0].seq &&
              v.accesses == acc);
        CHECK(sec->size == MHF_SPAN_HEADER_SIZE + MHF_ASET_HEADER_SIZE +
                               (uint64_t)v.set.nruns * v.set.run_size +
                               v.set.data_bytes);
        size_t from = r->recs[r0].id_first, to = r->recs[ri].id_first + r->recs[ri].count;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
            pairs u = brute_union(all, from, to, o);
            CHECKF(v.set.nivals[o] == u.n, "node %llu op %u: %llu intervals, brute %zu",
                   (unsigned long long)k, o, (unsigned long long)v.set.nivals[o], u.n);
            size_t i = 0;
            for (uint32_t rr = 0; rr < v.set.run_count[o]; rr++) {
                mh_aset_cur c;
                mh_aset_run_open(&v.set, o, rr, &c);
                int rc;
                while ((rc = mh_aset_run_step(&c, &d)) == 1) {
                    CHECKF(i < u.n && c.lo == u.p[2 * i] && c.hi == u.p[2 * i + 1],
                           "node %llu op %u interval %zu", (unsigned long long)k, o, i);
                    i++;
                }
                CHECK(rc == 0);
            }
            CHECK(i == u.n);
            free(u.p);
        }
    }
    free(present);
    return seen;
}

/* ---- queries ------------------------------------------------------------ */

/* q with the span sets used and ignored: both the oracle's answer. */
static size_t both_ways(mh_reader *r, const mh_access *all, size_t n,
                        const mh_query *q, size_t max) {
    r->span_off = 0;
    size_t got = tu_check_query(r, all, n, q, max);
    r->span_off = 1;
    CHECK(tu_check_query(r, all, n, q, max) == got);
    r->span_off = 0;
    return got;
}

static void random_queries(mh_reader *r, const mh_access *all, size_t n,
                           tu_rng *rng, int count) {
    static const size_t maxes[] = {1, 10, 1000};
    for (int k = 0; k < count; k++) {
        mh_query q;
        mh_query_init(&q);
        unsigned kind = (unsigned)tu_below(rng, 6);
        uint64_t a, b;
        if (kind == 0) { /* the rare addresses */
            a = tu_below(rng, 2) ? RARE_A : RARE_B;
            a += tu_below(rng, 6);
            b = a + tu_below(rng, 4);
        } else if (kind == 1) { /* never accessed: between the windows */
            a = 0x100000 * (tu_below(rng, 70) + 2) + 0x10000 + tu_below(rng, 0x1000);
            b = a + (tu_below(rng, 2) ? 0 : tu_below(rng, 0x8000));
        } else if (kind == 2) { /* far above everything (a scattered segment
                                   may hit it) */
            a = 0x8000000000ull + tu_below(rng, 1ull << 40);
            b = a + tu_below(rng, 64);
        } else if (kind == 3) { /* one segment's window */
            a = 0x100000 * (tu_below(rng, 70) + 2) + tu_below(rng, 24) * 16;
            b = a + tu_below(rng, 16);
        } else if (kind == 4) { /* an access's address */
            const mh_access *x = &all[tu_below(rng, n)];
            a = x->physical;
            b = a + tu_below(rng, 8);
        } else { /* wide */
            a = tu_below(rng, 0x100000);
            b = a + tu_below(rng, 1ull << 26);
        }
        q.addr_first = a;
        q.addr_last = b;
        q.ops = (uint32_t)tu_range(rng, 1, 7);
        q.direction = tu_below(rng, 2) ? MH_FORWARD : MH_BACKWARD;
        unsigned st = (unsigned)tu_below(rng, 4);
        if (st == 0)
            q.start = q.direction == MH_FORWARD ? 0 : UINT64_MAX;
        else if (st == 1) {
            q.start_kind = MH_FROM_ID;
            q.start = tu_below(rng, n);
        } else
            q.start = all[tu_below(rng, n)].transition;
        if (tu_below(rng, 4) == 0) {
            q.end_kind = tu_below(rng, 2) ? MH_END_TRANSITION : MH_END_ID;
            q.end = q.end_kind == MH_END_ID ? tu_below(rng, n)
                                            : all[tu_below(rng, n)].transition;
        }
        size_t max = maxes[tu_below(rng, 3)];
        snprintf(tu_context, sizeof tu_context,
                 "query %d kind %u [0x%llx, 0x%llx] ops %u dir %u start %llu max %zu",
                 k, kind, (unsigned long long)a, (unsigned long long)b, q.ops,
                 q.direction, (unsigned long long)q.start, max);
        both_ways(r, all, n, &q, max);
        if (k % 16 == 0) {
            r->span_off = (int)tu_below(rng, 2);
            tu_check_cursor(r, all, n, &q, 300, rng);
            tu_check_chain(r, all, n, &q, 4, rng);
            r->span_off = 0;
        }
    }
    tu_context[0] = 0;
}

/* Segments a never-accessed point query opens on a fresh reader. */
static uint64_t opened_by_never(const char *dir, int fwd, int span_off,
                                int middle, size_t *got) {
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    r->span_off = span_off;
    mh_query q;
    mh_query_init(&q);
    q.addr_first = q.addr_last = 0x6000000000ull;
    q.ops = MH_OPS_ALL;
    q.direction = fwd ? MH_FORWARD : MH_BACKWARD;
    q.start = fwd ? 0 : UINT64_MAX;
    if (middle) { /* from an id in segment `middle` */
        q.start_kind = MH_FROM_ID;
        q.start = r->recs[middle].id_first + 1;
    }
    mh_access a[4];
    CHECK_OK(mh_query_run(r, &q, a, 4, got));
    uint64_t n = atomic_load(&r->segs_opened);
    mh_reader_close(r);
    return n;
}

static void check_opens(const char *dir, size_t nsegs) {
    unsigned lg = 0;
    while ((1ull << lg) < nsegs)
        lg++;
    for (int k = 0; k < 4; k++) {
        int fwd = k & 1;
        /* from the first / last segment, or from one in the middle whose
         * position is odd (forward: the nodes starting after it are short,
         * the climb passes them) */
        int middle = k >= 2 ? (int)(nsegs / 2) | 0 : 0;
        if (middle && (middle + 1) % 2 == 0)
            middle++;
        size_t got = 9;
        uint64_t on = opened_by_never(dir, fwd, 0, middle, &got);
        CHECK(got == 0);
        uint64_t off = opened_by_never(dir, fwd, 1, middle, &got);
        CHECK(got == 0);
        uint64_t all = middle ? (fwd ? nsegs - (size_t)middle : (size_t)middle + 1) : nsegs;
        /* backward: the prefix decomposition, <= lg nodes + the start and
         * its neighbour's own sets; forward: the climb (<= lg nodes), then
         * nodes halving from its end (<= lg), the start and the last one */
        uint64_t bound = fwd ? 2 * (uint64_t)lg + 4 : (uint64_t)lg + 3;
        printf("span: %zu segments, never-accessed %s from segment %d: %llu "
               "opened (%llu without span sets, bound %llu)\n", nsegs,
               fwd ? "fwd" : "bwd", middle ? middle : fwd ? 0 : (int)nsegs - 1,
               (unsigned long long)on, (unsigned long long)off,
               (unsigned long long)bound);
        CHECKF(on <= bound, "%s: %llu segments opened, bound %llu",
               fwd ? "fwd" : "bwd", (unsigned long long)on,
               (unsigned long long)bound);
        CHECKF(off == all, "without span sets: %llu opened, expected %llu",
               (unsigned long long)off, (unsigned long long)all);
    }
}

typedef struct problems {
    int n, code;
    char msg[400];
} problems;

static void on_problem(void *ctx, const mh_problem *p) {
    problems *x = ctx;
    if (x->n++ == 0) {
        x->code = p->code;
        snprintf(x->msg, sizeof x->msg, "%s: %s", p->file, p->message);
    }
}

/* The whole store's union (store_union.c) after the random queries: built
 * and equal to brute force, and the never-accessed ranges answered by it;
 * unavailable where a segment has no address set (scattered). */
static void check_union(mh_reader *r, const mh_access *all, size_t n,
                        int scattered) { /* 1, 0, or -1: a real store, any */
    size_t noset = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        mh_aset_view v;
        mh_diag d = {0, 0, ""};
        if (r->recs[i].count && mh_aset_view_get(seg_of(r, i), &v, &d) == MH_ENOTFOUND)
            noset++;
    }
    printf("span: %zu of %zu segments without an address set\n", noset, r->nsegs);
    int st = atomic_load(&r->union_state);
    uint64_t answered = atomic_load(&r->union_answered);
    printf("span: union %s, %llu questions answered by it\n",
           st == 1 ? "built" : st < 0 ? "unavailable" : "not asked",
           (unsigned long long)answered);
    /* the scattered segment has no set: its summary's granules stand for
     * it, so wide that the never-accessed ranges may all meet them */
    CHECKF(st == 1 && (scattered == 1 || answered > 0), "union state %d, %llu answered",
           st, (unsigned long long)answered);
    CHECK(scattered < 0 || noset == (size_t)scattered);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        pairs u = brute_union(all, 0, n, o);
        const uint64_t *iv = r->union_iv[o];
        size_t m = r->union_n[o];
        if (noset == 0) { /* exact: the sets' union */
            CHECKF(u.n == m, "op %u: %zu intervals, brute force %zu", o, m, u.n);
            CHECKF(u.n == 0 || memcmp(u.p, iv, u.n * 16) == 0,
                   "op %u: the union differs from brute force", o);
        } else { /* a superset: the summaries' granules of the set-less */
            CHECKF(m <= u.n, "op %u: %zu intervals, brute force %zu", o, m, u.n);
            size_t j = 0;
            for (size_t i = 0; i < u.n; i++) {
                while (j < m && iv[2 * j + 1] < u.p[2 * i])
                    j++;
                CHECKF(j < m && iv[2 * j] <= u.p[2 * i] && iv[2 * j + 1] >= u.p[2 * i + 1],
                       "op %u: [0x%llx, 0x%llx] not in the union", o,
                       (unsigned long long)u.p[2 * i], (unsigned long long)u.p[2 * i + 1]);
            }
        }
        free(u.p);
    }
}

/* ---- one store ---------------------------------------------------------- */

static void run_store(size_t nseg, size_t seg_len, int sessions,
                      size_t scattered, int queries, uint64_t seed) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "span");
    size_t n = nseg * seg_len;
    mh_access *all = calloc(n, sizeof *all);
    CHECK(all);
    tu_rng rng = {seed};
    make_trace(&rng, all, n, seg_len, scattered);
    /* sessions: the tree continues across reopen-and-append */
    size_t per = (nseg + sessions - 1) / sessions;
    for (int s = 0; s < sessions; s++) {
        size_t from = (size_t)s * per * seg_len, to = from + per * seg_len;
        if (to > n)
            to = n;
        if (from < to)
            write_part(dir, all, from, to, seg_len, s == 0, s % 3);
    }
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECKF(r->nsegs == nseg, "%zu segments, expected %zu", r->nsegs, nseg);
    int nodes = check_nodes(r, all);
    printf("span: %zu segments (%d sessions%s): %d nodes checked\n", nseg,
           sessions, scattered < nseg ? ", one scattered" : "", nodes);
    CHECK(nodes > 0);
    random_queries(r, all, n, &rng, queries);
    check_union(r, all, n, scattered < nseg);
    mh_reader_close(r);
    /* fsck: clean */
    problems pr = {0, 0, ""};
    mh_verify_result res = {.struct_size = sizeof res};
    int vrc = mh_verify(dir, 0, on_problem, &pr, &res);
    CHECKF(vrc == MH_OK && pr.n == 0, "fsck: %d problems, first %s", pr.n, pr.msg);
    if (scattered >= nseg)
        check_opens(dir, nseg);
    tu_rmtree(dir);
    free(all);
}

/* ---- damage ------------------------------------------------------------- */


enum { D_SETBYTE, D_FIRST_SEQ, D_L, D_ACCESSES, D_SUM, D_INEXACT, D_L3, D_COUNT };

/* The store in src with node `pos`'s section 11 damaged (sums fixed but
 * for D_SUM) into dst. */
static void damage(const char *src, const char *dst, const mh_reader *r,
                   uint64_t pos, int how) {
    tu_copy_dir(src, dst);
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, r->recs[pos - 1].seq);
    se_buf file = se_load(dst, name);
    se_seg s;
    se_seg_parse(&file, &s);
    se_section *sec = se_seg_find(&s, MHF_SECT_SPAN);
    CHECK(sec);
    uint8_t *p = sec->data.p;
    switch (how) {
    case D_SETBYTE: /* the embedded set's reserved field */
        p[MHF_SPAN_HEADER_SIZE + MHF_ASET_RESERVED0] = 1;
        break;
    case D_FIRST_SEQ:
        mhf_store_u64(p + MHF_SPAN_FIRST_SEQ, mhf_load_u64(p + MHF_SPAN_FIRST_SEQ) + 1);
        break;
    case D_L:
        mhf_store_u32(p + MHF_SPAN_SEGMENTS, mhf_load_u32(p + MHF_SPAN_SEGMENTS) * 2);
        break;
    case D_L3: /* no power of two: no position has it */
        mhf_store_u32(p + MHF_SPAN_SEGMENTS, 3);
        break;
    case D_ACCESSES:
        mhf_store_u64(p + MHF_SPAN_ACCESSES, mhf_load_u64(p + MHF_SPAN_ACCESSES) - 1);
        break;
    case D_INEXACT: { /* the last interval one byte longer or shorter:
                         well formed, only fsck's union check sees it */
        uint8_t *last = p + sec->data.len - 1;
        CHECK(*last < 0x80);
        *last = *last < 0x7f ? (uint8_t)(*last + 1) : (uint8_t)(*last - 1);
        break;
    }
    default:
        break;
    }
    se_buf out = se_seg_emit(&s);
    if (how == D_SUM) {
        /* a byte of the set's data after the sums were computed */
        size_t off = 0;
        CHECK(out.len > 64);
        /* the section's place: found by its bytes */
        for (size_t i = 256; i + sec->data.len <= out.len; i++)
            if (memcmp(out.p + i, sec->data.p, sec->data.len) == 0) {
                off = i;
                break;
            }
        CHECK(off);
        out.p[off + sec->data.len - 1] ^= 0x40;
    }
    se_save(dst, name, &out);
    se_manifest_fix(dst);
    free(out.p);
    free(file.p);
    se_seg_free(&s);
}

static void test_damage(void) {
    char dir[512], bad[600];
    tu_mkdtemp(dir, sizeof dir, "span-dmg");
    size_t nseg = 16, seg_len = 2000, n = nseg * seg_len;
    mh_access *all = calloc(n, sizeof *all);
    CHECK(all);
    tu_rng rng = {77};
    make_trace(&rng, all, n, seg_len, SIZE_MAX);
    write_part(dir, all, 0, n, seg_len, 1, 0);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(r->nsegs == nseg);
    /* a forward never-accessed query from position 5 asks node 6
     * (covering 5, 6) first: damage that one */
    uint64_t pos = 6;
    /* stale: whole, but its header names other positions than its own
     * (what a MANIFEST rebuilt without a lost segment makes of every later
     * node, test_repair_stale): not used, not an error, a note of fsck's */
    static const struct {
        int how, code, stale;
        const char *needle;
    } cases[] = {
        {D_SETBYTE, MH_ECORRUPT, 0, "address set: reserved header field not zero"},
        {D_FIRST_SEQ, MH_OK, 1, "first_seq 5, MANIFEST position 5 has seq 4"},
        {D_L, MH_OK, 1, "covers 4 segments, its MANIFEST position 6 covers 2"},
        {D_ACCESSES, MH_OK, 1, NULL}, /* "span_accesses N - 1, its 2 segments hold N" */
        {D_SUM, MH_ECHECKSUM, 0, "checksum mismatch"},
        {D_INEXACT, MH_ECORRUPT, 0, "the covered segments' sets make"},
        {D_L3, MH_ECORRUPT, 0, "covers 3 segments, not a power of two"},
    };
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, r->recs[pos - 1].seq);
    char acc_needle[128];
    uint64_t held = r->recs[pos - 2].count + r->recs[pos - 1].count;
    snprintf(acc_needle, sizeof acc_needle,
             "span_accesses %llu, its 2 segments hold %llu",
             (unsigned long long)(held - 1), (unsigned long long)held);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *needle = cases[c].needle ? cases[c].needle : acc_needle;
        snprintf(bad, sizeof bad, "%s.bad%zu", dir, c);
        tu_rmtree(bad);
        CHECK(mkdir(bad, 0755) == 0);
        damage(dir, bad, r, pos, cases[c].how);
        mh_reader *b;
        CHECK_OK(mh_reader_open(bad, &b));
        mh_query q;
        mh_query_init(&q);
        q.addr_first = q.addr_last = 0x6000000000ull;
        q.ops = MH_OPS_ALL;
        q.start_kind = MH_FROM_ID;
        q.start = r->recs[4].id_first + 1; /* in position 5: node 6 next */
        mh_access a[4];
        size_t got;
        /* the whole store's union (node 16, whole) answers without
         * asking node 6: none, no error, nothing marked */
        CHECK_OK(mh_query_run(b, &q, a, 4, &got));
        CHECK(got == 0);
        CHECKF(atomic_load(&b->union_answered) == 1 && atomic_load(&b->union_state) == 1,
               "case %zu: the union did not answer", c);
        CHECK(atomic_load(&seg_of(b, pos - 1)->span_stale) == 0);
        /* the walk's own reading of node 6, from here on */
        b->union_off = 1;
        /* a node well formed but not exact: queries cannot tell */
        for (int rep = 0; cases[c].stale && rep < 2; rep++) {
            /* stale: answers as if absent, and marked so */
            CHECK_OK(mh_query_run(b, &q, a, 4, &got));
            CHECK(got == 0);
            CHECKF(atomic_load(&seg_of(b, pos - 1)->span_stale) == 1, "case %zu: not stale", c);
        }
        for (int rep = 0; !cases[c].stale && cases[c].how != D_INEXACT && rep < 2; rep++) {
            int rc = mh_query_run(b, &q, a, 4, &got);
            char msg[MH_ERRMSG_MAX];
            mh_reader_errmsg(b, msg, sizeof msg);
            CHECKF(rc == cases[c].code && strstr(msg, name) &&
                       strstr(msg, "span address set at byte") &&
                       strstr(msg, needle),
                   "case %zu: %s (%d) %s", c, mh_error_name(rc), rc, msg);
            if (rep == 0)
                printf("span: damage %zu: %s: %s\n", c, mh_error_name(rc), msg);
        }
        /* ignoring the span sets, the same query answers (none) */
        b->span_off = cases[c].how != D_INEXACT;
        CHECK_OK(mh_query_run(b, &q, a, 4, &got));
        CHECK(got == 0);
        /* a query whose end bound lies before the node's segment never
         * asks it (nothing past the end bound is read) */
        b->span_off = 0;
        q.end_kind = MH_END_ID;
        q.end = r->recs[4].id_first + r->recs[4].count - 1;
        CHECK_OK(mh_query_run(b, &q, a, 4, &got));
        CHECK(got == 0);
        q.end_kind = MH_END_NONE;
        /* a query starting past the node never asks it */
        q.start = r->recs[7].id_first + 1;
        CHECK_OK(mh_query_run(b, &q, a, 4, &got));
        mh_reader_close(b);
        /* fsck names it: a problem, or (stale) a note and a clean store */
        problems pr = {0, 0, ""};
        mh_verify_result res = {.struct_size = sizeof res};
        int vrc = mh_verify(bad, 0, on_problem, &pr, &res);
        CHECKF(vrc == (cases[c].stale ? MH_OK : MH_ECORRUPT) &&
                   res.problems == (cases[c].stale ? 0u : res.problems) && res.repaired == 0,
               "fsck case %zu: %s, %llu problems", c, mh_error_name(vrc),
               (unsigned long long)res.problems);
        CHECKF(pr.n >= 1 && pr.code == cases[c].code && strstr(pr.msg, name) &&
                   strstr(pr.msg, needle) &&
                   (!cases[c].stale || strstr(pr.msg, "is stale (not used)")),
               "fsck case %zu: %d problems, first %d %s", c, pr.n, pr.code, pr.msg);
        tu_rmtree(bad);
    }
    mh_reader_close(r);
    tu_rmtree(dir);
    free(all);
}

/* ---- a MANIFEST rebuilt without lost empty segments ---------------------- */

/* The reports of one fsck: problems and notes (code MH_OK) counted apart. */
typedef struct fsck_tally {
    int problems, notes;
    char first_note[320];
} fsck_tally;

static void on_tally(void *ctx, const mh_problem *p) {
    fsck_tally *t = ctx;
    if (p->code != MH_OK) {
        t->problems++;
        printf("span: unexpected fsck problem: %s: %s\n", p->file, p->message);
    } else if (strstr(p->message, "is stale (not used)") && t->notes++ == 0) {
        snprintf(t->first_note, sizeof t->first_note, "%s", p->message);
    }
}

/* 24 segments, those of seq 2, 4 and 9 holding no access (metadata commits);
 * the MANIFEST lost with the files of seq 2 and 4: fsck --repair adopts the
 * rest, and every later position moves back by one or two, so every node
 * after them names other segments than its new position's. The store stays
 * whole: fsck clean with notes, every answer the oracle's, the stale nodes
 * never used; a writer appending afterwards builds nodes again from
 * children that are not stale (and none over stale ones). */
static void test_repair_stale(void) {
    char dir[512], cut[600];
    tu_mkdtemp(dir, sizeof dir, "span-stale");
    const size_t nseg = 21, seg_len = 1500, n = nseg * seg_len, extra = 6;
    mh_access *all = calloc(n + extra * seg_len, sizeof *all);
    CHECK(all);
    tu_rng rng = {91};
    make_trace(&rng, all, n + extra * seg_len, seg_len, SIZE_MAX);
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 500;
    o.block_accesses = 64;
    o.commit_accesses = 0;
    o.background = 0;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    for (size_t s = 0, seq = 0; s < nseg; seq++) {
        if (seq == 2 || seq == 4 || seq == 9) { /* a segment of count 0 */
            CHECK_OK(mh_writer_set_meta(w, "empty", seq == 2 ? "2" : seq == 4 ? "4" : "9"));
        } else {
            CHECK_OK(mh_writer_append_batch(w, all + s * seg_len, seg_len, NULL));
            s++;
        }
        CHECK_OK(mh_writer_commit(w));
    }
    CHECK_OK(mh_writer_close(w));
    snprintf(cut, sizeof cut, "%s.cut", dir);
    tu_rmtree(cut);
    CHECK(mkdir(cut, 0755) == 0);
    tu_copy_dir(dir, cut);
    static const char *const lost[] = {"MANIFEST", "seg-0000000000000002.mhs",
                                       "seg-0000000000000004.mhs"};
    for (size_t i = 0; i < 3; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", cut, lost[i]);
        CHECK(unlink(p) == 0);
    }
    fsck_tally t = {0, 0, ""};
    mh_verify_result res = {.struct_size = sizeof res};
    CHECK_OK(mh_verify(cut, MH_VERIFY_REPAIR, on_tally, &t, &res));
    CHECKF(t.problems == 0 && t.notes >= 4, "repair: %d problems, %d notes", t.problems,
           t.notes);
    printf("span: repaired without 2 empty segments: %d stale nodes, e.g. %s\n", t.notes,
           t.first_note);
    t = (fsck_tally){0, 0, ""};
    CHECK_OK(mh_verify(cut, 0, on_tally, &t, &res));
    CHECKF(t.problems == 0 && t.notes >= 4 && res.problems == 0 && res.repaired == 0,
           "fsck after repair: %d problems, %d notes", t.problems, t.notes);
    mh_reader *r;
    CHECK_OK(mh_reader_open(cut, &r));
    CHECK(r->nsegs == nseg + 1); /* the empty segment of seq 9 stays */
    random_queries(r, all, n, &rng, 300);
    int stale = 0;
    for (size_t i = 0; i < r->nsegs; i++)
        stale += atomic_load(&seg_of(r, i)->span_stale);
    CHECK(stale >= 1); /* the walks met some, and passed them as absent */
    mh_reader_close(r);
    /* appended after the repair: new nodes only over children that are not
     * stale, each the exact union (check_nodes), answers exact */
    write_part(cut, all, n, n + extra * seg_len, seg_len, 0, 0);
    CHECK_OK(mh_reader_open(cut, &r));
    int fresh = 0;
    for (size_t ri = nseg + 1; ri < r->nsegs; ri++) {
        const mh_section *sec;
        mh_span_view v;
        if (mh_span_section(seg_of(r, ri), &sec) != MH_OK)
            continue;
        CHECK_OK(mh_span_check(seg_of(r, ri), sec, ri, r->recs, r->nsegs, &v, NULL));
        fresh++;
    }
    printf("span: %zu segments appended after the repair: %d new nodes\n", extra, fresh);
    CHECK(fresh >= 1);
    random_queries(r, all, n + extra * seg_len, &rng, 300);
    mh_reader_close(r);
    t = (fsck_tally){0, 0, ""};
    CHECK_OK(mh_verify(cut, 0, on_tally, &t, &res));
    CHECK(t.problems == 0 && t.notes >= 4);
    tu_rmtree(cut);
    tu_rmtree(dir);
    free(all);
}

/* ---- a real recording ---------------------------------------------------- */

/* Never-accessed ranges between the recording's accessed intervals (every
 * op at once), queried both ways with the span sets on and off. */
static void real_gaps(mh_reader *r, const mh_access *all, size_t n, tu_rng *rng,
                      int count) {
    uint64_t *u = malloc(n * 16 + 16);
    CHECK(u);
    size_t m = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) { /* the ops' unions, merged */
        pairs x = brute_union(all, 0, n, o);
        memcpy(u + 2 * m, x.p, x.n * 16);
        m += x.n;
        free(x.p);
    }
    qsort(u, m, 16, cmp_u64x2);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k && u[2 * i] <= u[2 * k - 1] + 1) {
            if (u[2 * i + 1] > u[2 * k - 1])
                u[2 * k - 1] = u[2 * i + 1];
        } else {
            u[2 * k] = u[2 * i];
            u[2 * k + 1] = u[2 * i + 1];
            k++;
        }
    }
    CHECK(k > 10);
    for (int j = 0; j < count; j++) {
        mh_query q;
        mh_query_init(&q);
        size_t g = (size_t)tu_below(rng, k - 1);
        uint64_t a = u[2 * g + 1] + 1, b = u[2 * g + 2] - 1;
        if (tu_below(rng, 2))
            a = b = tu_range(rng, a, b);
        if (tu_below(rng, 6) == 0) /* reaching the next accessed byte */
            b = u[2 * g + 2];
        q.addr_first = a;
        q.addr_last = b;
        q.ops = (uint32_t)tu_range(rng, 1, 7);
        q.direction = tu_below(rng, 2) ? MH_FORWARD : MH_BACKWARD;
        q.start = all[tu_below(rng, n)].transition;
        snprintf(tu_context, sizeof tu_context, "real gap query %d [0x%llx, 0x%llx]",
                 j, (unsigned long long)a, (unsigned long long)b);
        both_ways(r, all, n, &q, (size_t)tu_range(rng, 1, 10));
    }
    tu_context[0] = 0;
    free(u);
}

/* A qemu recording of sort rewritten in about 24 segments. */
static int run_real(const char *memhist) {
    char dir[4096], rec[4096], multi[4200];
    tu_mkdtemp(dir, sizeof dir, "span-real");
    size_t n = 0;
    int rc;
    mh_access *all = tu_record_sort_all(memhist, dir, 6000, rec, sizeof rec, "span real",
                                        &n, &rc);
    if (!all) {
        tu_rmtree(dir);
        return rc;
    }
    CHECK(n > 200000);
    mh_reader *r = NULL;
    tu_join(multi, sizeof multi, dir, "multi.store");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.commit_accesses = n / 24 + 1;
    mh_writer *w;
    CHECK_OK(mh_writer_open(multi, MH_CREATE, &o, &w));
    for (size_t i = 0; i < n; i += 4096)
        CHECK_OK(mh_writer_append_batch(w, all + i, n - i < 4096 ? n - i : 4096, NULL));
    CHECK_OK(mh_writer_close(w));
    CHECK_OK(mh_reader_open(multi, &r));
    int nodes = check_nodes(r, all);
    printf("span real: %zu accesses in %zu segments, %d nodes equal to brute force\n",
           n, r->nsegs, nodes);
    CHECK(r->nsegs >= 20 && nodes >= 4);
    tu_rng rng = {11};
    real_gaps(r, all, n, &rng, 300);
    random_queries(r, all, n, &rng, 200);
    check_union(r, all, n, -1);
    mh_reader_close(r);
    problems pr = {0, 0, ""};
    mh_verify_result res = {.struct_size = sizeof res};
    int vrc = mh_verify(multi, 0, on_problem, &pr, &res);
    CHECKF(vrc == MH_OK && pr.n == 0, "fsck: %d problems, first %s", pr.n, pr.msg);
    free(all);
    tu_rmtree(dir);
    return 0;
}

/* The writer option: span_sets 0 writes no node (and 2 is refused). */
static void test_option(void) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "span-opt");
    size_t nseg = 8, seg_len = 2000, n = nseg * seg_len;
    mh_access *all = calloc(n, sizeof *all);
    CHECK(all);
    tu_rng rng = {5};
    make_trace(&rng, all, n, seg_len, SIZE_MAX);
    mh_writer_options o;
    mh_writer_options_init(&o);
    CHECK(o.span_sets == 1);
    o.span_sets = 2;
    mh_writer *w = NULL;
    char sub[600];
    snprintf(sub, sizeof sub, "%s/s", dir);
    CHECK_RC(mh_writer_open(sub, MH_CREATE, &o, &w), MH_EINVAL);
    o.span_sets = 0;
    o.slice_accesses = 500;
    o.block_accesses = 64;
    o.commit_accesses = seg_len;
    CHECK_OK(mh_writer_open(sub, MH_CREATE, &o, &w));
    CHECK_OK(mh_writer_append_batch(w, all, n, NULL));
    CHECK_OK(mh_writer_close(w));
    mh_reader *r;
    CHECK_OK(mh_reader_open(sub, &r));
    CHECK(r->nsegs == nseg);
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_section *sec;
        CHECK(mh_span_section(seg_of(r, i), &sec) == MH_ENOTFOUND);
    }
    random_queries(r, all, n, &rng, 50);
    mh_reader_close(r);
    tu_rmtree(dir);
    free(all);
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "real") == 0) /* ctest span.qemu */
        return run_real(argv[2]);
    run_store(37, 4000, 1, SIZE_MAX, 600, 1);
    run_store(64, 3000, 1, SIZE_MAX, 600, 2);
    run_store(45, 3000, 3, SIZE_MAX, 300, 3); /* reopen and append */
    run_store(40, 3000, 1, 21, 300, 4);       /* segment 21 scattered */
    test_damage();
    test_repair_stale();
    test_option();
    printf("span: ok\n");
    return 0;
}
