/*
 * spost.c - the stream address postings (SPEC.md §9d.2, section type 15,
 * format 2.7) on multi-stream stores: each body's keys equal brute force
 * over its stream's rows (with and without a discard, with 40 streams, so
 * that stream masks alias); a stream-filtered query's candidates equal the
 * slices brute force finds at the body's shift; every query (stream
 * filters drawn at random) equals the oracle with the section used and
 * ignored; the section does not serve a question whose postings pass the
 * volume bound (at its edge, and not below 16 granules); fsck is clean; a
 * one-stream store has none; damage is refused
 * with its detail. `spost real MEMHIST VICTIM` does the same on a qemu
 * recording of a program of 8 threads (skipped without qemu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apost_util.h"
#include "resum.h"
#include "testutil.h"

/* A multi-stream trace: stream s (of ns) writes and reads its own stack
 * (s MiB up) and heap (s x 64 KiB past 2^32), and all share a table at
 * 0x10000 read and written by everyone (rarely by the odd streams). */
static mh_access *make_trace_solo(size_t n, uint32_t ns, uint64_t seed, size_t solo);
static mh_access *make_trace(size_t n, uint32_t ns, uint64_t seed) {
    return make_trace_solo(n, ns, seed, 0);
}

/* ... whose first `solo` accesses are stream 0's alone (a program before
 * its threads start), a few of them buffers of 64-300 KiB (the address
 * postings' wide ranges, which the stream postings take from them) */
static mh_access *make_trace_solo(size_t n, uint32_t ns, uint64_t seed, size_t solo) {
    mh_access *a = calloc(n, sizeof *a);
    CHECK(a);
    tu_rng rng = {seed};
    uint64_t t = 100;
    for (size_t i = 0; i < n; i++) {
        t += tu_below(&rng, 3);
        uint32_t s = i < solo ? 0 : (uint32_t)tu_below(&rng, ns);
        uint64_t r = tu_below(&rng, 100), phy;
        if (r < 45)
            phy = 0x7f000000u + ((uint64_t)s << 20) - 8 * tu_range(&rng, 1, 64);
        else if (r < 80)
            phy = ((uint64_t)1 << 32) + ((uint64_t)s << 16) + tu_below(&rng, 8192);
        else if (s % 2 == 0 || tu_below(&rng, 10) == 0)
            phy = 0x10000 + 8 * tu_below(&rng, 4096);
        else
            phy = 0x7f000000u + ((uint64_t)s << 20) - 8;
        a[i].transition = t;
        a[i].physical = phy;
        /* now and then a buffer of up to 9,000 bytes: ranges that reach
         * into the next 4 KiB granules */
        a[i].size = tu_below(&rng, 20) == 0 ? (uint32_t)tu_range(&rng, 1, 9000)
                                             : (uint32_t)(1u << tu_below(&rng, 4));
        if (i < solo && tu_below(&rng, 200) == 0)
            a[i].size = (uint32_t)tu_range(&rng, 65536, 300000);
        a[i].op = (uint8_t)(tu_below(&rng, 3) == 0 ? MH_OP_WRITE : MH_OP_READ);
        a[i].stream = s;
    }
    return a;
}

/* The slice of each access id of segment g, from the slice records. */
static uint32_t *slice_of_ids(const mh_seg *seg, uint64_t *id0) {
    uint32_t *so = malloc((seg->count ? seg->count : 1) * sizeof *so);
    CHECK(so);
    *id0 = seg->id_first;
    for (uint32_t si = 0; si < seg->nslices; si++) {
        mh_slice s;
        mh_seg_slice(seg, si, &s);
        for (uint32_t k = 0; k < s.count; k++)
            so[s.id_first - seg->id_first + k] = si;
    }
    return so;
}

/* Every body of every segment against brute force over its stream's rows
 * (all: the store's accesses in id order); returns the bodies checked. */
static size_t check_bodies(const mh_reader *r, const mh_access *all, size_t n) {
    size_t bodies = 0;
    (void)n;
    for (size_t g = 0; g < mh_reader_segment_count(r); g++) {
        const mh_seg *seg = tu_seg_of(r, g);
        mh_spost_view v;
        mh_diag d = {0, 0, ""};
        int rc = mh_spost_view_get(seg, &v, &d);
        /* which streams have rows here */
        uint8_t *has = calloc(MH_STREAM_MAX + 1, 1);
        CHECK(has);
        uint32_t nhas = 0;
        for (uint64_t i = 0; i < seg->count; i++) {
            uint32_t s = all[seg->id_first + i].stream;
            nhas += !has[s];
            has[s] = 1;
        }
        if (nhas < 2) {
            CHECKF(rc == MH_ENOTFOUND, "segment %zu of one stream has stream postings", g);
            free(has);
            continue;
        }
        CHECKF(rc == MH_OK, "segment %zu: %s", g, d.msg);
        CHECKF(v.n == nhas, "segment %zu: %u entries for %u streams", g, v.n, nhas);
        uint64_t id0;
        uint32_t *so = slice_of_ids(seg, &id0);
        for (uint32_t e = 0; e < v.n; e++) {
            uint32_t st = mhf_load_u32(v.ents + (size_t)e * v.esz + MHF_SPOST_E_STREAM);
            CHECKF(has[st], "segment %zu lists stream %u, which has no row there", g, st);
            mh_apost_view b;
            CHECKF(mh_spost_body(&v, st, &b) == 1, "stream %u has no body", st);
            CHECKF(b.shift == MHF_SPOST_SHIFT_DEFAULT, "stream %u's body at shift %u", st,
                   b.shift);
            trip *got;
            size_t ng = tu_apost_decode(&b, &got);
            /* brute force: (op, granule, slice) of the stream's rows */
            size_t cap = 1024, nw = 0;
            trip *want = malloc(cap * sizeof *want);
            CHECK(want);
            for (uint64_t i = 0; i < seg->count; i++) {
                const mh_access *x = &all[seg->id_first + i];
                if (x->stream != st)
                    continue;
                uint64_t lo = x->physical >> b.shift,
                         hi = (x->physical + x->size - 1) >> b.shift;
                for (uint64_t w = lo; w <= hi; w++) {
                    if (nw == cap) {
                        cap *= 2;
                        want = realloc(want, cap * sizeof *want);
                        CHECK(want);
                    }
                    want[nw++] = (trip){w, x->op, so[i]};
                }
            }
            qsort(want, nw, sizeof *want, tu_cmp_trip);
            size_t u = 0;
            for (size_t i = 0; i < nw; i++)
                if (u == 0 || tu_cmp_trip(&want[u - 1], &want[i]) != 0)
                    want[u++] = want[i];
            CHECKF(u == ng, "segment %zu stream %u: %zu keys' postings, brute force %zu", g,
                   st, ng, u);
            for (size_t i = 0; i < u; i++)
                CHECKF(tu_cmp_trip(&want[i], &got[i]) == 0,
                       "segment %zu stream %u: posting %zu (op %u granule 0x%llx slice %u), "
                       "brute force (op %u granule 0x%llx slice %u)", g, st, i, got[i].op,
                       (unsigned long long)got[i].w, got[i].s, want[i].op,
                       (unsigned long long)want[i].w, want[i].s);
            free(want);
            free(got);
            bodies++;
        }
        free(so);
        free(has);
    }
    return bodies;
}

/* Bytes of the runs of the body of `stream` holding keys of [a, b] and
 * ops, found by a walk over every run record (a run holds the keys from
 * its first granule to the next run's first, exclusive). */
static uint64_t volume_of(const mh_seg *seg, uint32_t stream, uint64_t a, uint64_t b,
                          uint32_t ops) {
    mh_spost_view v;
    mh_diag d = {0, 0, ""};
    if (mh_spost_view_get(seg, &v, &d) != MH_OK)
        return 0; /* no section */
    mh_apost_view body;
    if (mh_spost_body(&v, stream, &body) != 1)
        return 0;
    uint64_t wa = a >> body.shift, wb = b >> body.shift, vol = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        if (!(ops >> o & 1u))
            continue;
        for (uint32_t r = 0; r < body.run_count[o]; r++) {
            const uint8_t *rec = body.runs + (size_t)(body.run_first[o] + r) * body.run_size;
            uint64_t first = mhf_load_u64(rec + MHF_APOST_R_GRANULE);
            uint64_t next = r + 1 < body.run_count[o]
                                ? mhf_load_u64(rec + body.run_size + MHF_APOST_R_GRANULE)
                                : UINT64_MAX;
            if (first <= wb && (next == UINT64_MAX || next - 1 >= wa))
                vol += mhf_load_u32(rec + MHF_APOST_R_BYTES);
        }
    }
    return vol;
}

/* For random ranges and stream sets: mh_spost_query's candidates are the
 * slices with a row of the streams and ops meeting [A >> g, B >> g]. */
static void check_candidates(const mh_reader *r, const mh_access *all, size_t n,
                             uint32_t ns, uint64_t seed) {
    tu_rng rng = {seed};
    uint64_t *scratch = NULL;
    size_t cap = 0;
    size_t served = 0;
    for (int q = 0; q < 400; q++) {
        const mh_access *x = &all[tu_below(&rng, n)];
        uint64_t width = (uint64_t)1 << tu_below(&rng, 21);
        uint64_t a = x->physical > width / 2 ? x->physical - width / 2 : 0, b = a + width - 1;
        uint32_t set[3], k = 1 + (uint32_t)tu_below(&rng, 3);
        for (uint32_t i = 0; i < k; i++)
            set[i] = (uint32_t)tu_below(&rng, ns);
        /* sorted, distinct */
        for (uint32_t i = 1; i < k; i++)
            for (uint32_t j = i; j > 0 && set[j - 1] > set[j]; j--) {
                uint32_t t = set[j];
                set[j] = set[j - 1];
                set[j - 1] = t;
            }
        uint32_t m = 0;
        for (uint32_t i = 0; i < k; i++)
            if (m == 0 || set[m - 1] != set[i])
                set[m++] = set[i];
        uint32_t ops = 1 + (uint32_t)tu_below(&rng, 3);
        for (size_t g = 0; g < mh_reader_segment_count(r); g++) {
            const mh_seg *seg = tu_seg_of(r, g);
            mh_apost_iter it;
            mh_diag d = {0, 0, ""};
            int rc = mh_spost_query(seg, a, b, ops, set, m, &it, &scratch, &cap, &d);
            CHECKF(rc >= 0, "segment %zu: %s", g, d.msg);
            if (rc == 0) {
                uint64_t vol = 0; /* at 16 granules or more (a body at the first shift) */
                for (uint32_t j = 0; j < m; j++)
                    if ((b >> MHF_SPOST_SHIFT_DEFAULT) - (a >> MHF_SPOST_SHIFT_DEFAULT) >= 16)
                        vol += volume_of(seg, set[j], a, b, ops);
                CHECKF(((b >> MHF_SPOST_SHIFT_DEFAULT) - (a >> MHF_SPOST_SHIFT_DEFAULT) >=
                        MHF_SPOST_SPAN) || vol > MH_SPOST_VOLUME_MAX ||
                           mh_spost_section(seg, &(const mh_section *){0}) != MH_OK,
                       "segment %zu: the postings do not serve [0x%llx, 0x%llx]", g,
                       (unsigned long long)a, (unsigned long long)b);
                continue;
            }
            served++;
            uint64_t id0;
            uint32_t *so = slice_of_ids(seg, &id0);
            uint8_t *want = calloc(seg->nslices + 1, 1);
            CHECK(want);
            unsigned gsh = it.shift;
            for (uint64_t i = 0; i < seg->count; i++) {
                const mh_access *y = &all[seg->id_first + i];
                int in = 0;
                for (uint32_t j = 0; j < m; j++)
                    in |= y->stream == set[j];
                uint64_t lo = y->physical >> gsh, hi = (y->physical + y->size - 1) >> gsh;
                if (in && (ops >> y->op & 1u) && lo <= (b >> gsh) && hi >= (a >> gsh))
                    want[so[i]] = 1;
            }
            for (uint32_t s = 0; s < seg->nslices; s++) {
                int got = mh_apost_next(&it, s) == s;
                CHECKF(got == want[s], "segment %zu slice %u: candidate %d, brute force %d "
                       "([0x%llx, 0x%llx], ops %u, %u streams from %u)", g, s, got, want[s],
                       (unsigned long long)a, (unsigned long long)b, ops, m, set[0]);
            }
            free(want);
            free(so);
        }
    }
    free(scratch);
    CHECKF(served > 100, "the stream postings served %zu segment questions of 400", served);
}

/* Random queries with stream filters, against the oracle, with the
 * section used and ignored. */
static void check_oracle(mh_reader *r, const mh_access *all, size_t n, uint64_t seed) {
    for (int way = 0; way < 2; way++) {
        r->spost_off = way;
        size_t hits = tu_random_filtered_queries(r, all, n, NULL, 0, 300, seed + (uint64_t)way);
        CHECKF(hits >= 3, "%zu filtered queries had matches", hits);
        /* one-stream questions of every width the section serves */
        tu_rng rng = {seed ^ 0x5151};
        size_t answered = 0;
        for (int q = 0; q < 300; q++) {
            const mh_access *x = &all[tu_below(&rng, n)];
            mh_query qq;
            mh_query_init(&qq);
            uint64_t width = (uint64_t)8 << tu_below(&rng, 18);
            qq.addr_first = x->physical > width / 2 ? x->physical - width / 2 : 0;
            qq.addr_last = qq.addr_first + width - 1;
            qq.ops = 1 + (uint32_t)tu_below(&rng, 3);
            qq.direction = tu_below(&rng, 2) ? MH_BACKWARD : MH_FORWARD;
            qq.start = all[tu_below(&rng, n)].transition;
            uint32_t s = tu_below(&rng, 2) ? x->stream : all[tu_below(&rng, n)].stream;
            qq.streams = &s;
            qq.nstreams = 1;
            /* the oracle with the stream set (tu_check_query's has none) */
            size_t max = 1 + tu_below(&rng, 20), ng = 0, nw = 0;
            mh_access got[20], want[20];
            oracle_query oq;
            CHECK_OK(oracle_query_from(&oq, &qq, NULL, 0));
            CHECK_OK(oracle_run(all, n, &oq, want, max, &nw));
            CHECK_OK(mh_query_run(r, &qq, got, max, &ng));
            snprintf(tu_context, sizeof tu_context, "one-stream question %d: stream %u, "
                     "[0x%llx, 0x%llx], ops %u, %s from %llu, max %zu", q, s,
                     (unsigned long long)qq.addr_first, (unsigned long long)qq.addr_last,
                     qq.ops, qq.direction ? "bwd" : "fwd", (unsigned long long)qq.start, max);
            CHECK(oracle_compare("one-stream query", got, ng, want, nw) == 0);
            answered += ng > 0;
        }
        CHECKF(answered >= 60, "%zu of 300 one-stream questions had matches", answered);
    }
    r->spost_off = 0;
}

static void test_store(uint32_t ns, int discard, uint64_t seed, size_t solo) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "spost");
    snprintf(tu_context, sizeof tu_context, "%u streams, discard %d, seed %llu, %zu accesses "
             "of stream 0 first", ns, discard, (unsigned long long)seed, solo);
    size_t n = 60000, m;
    mh_access *src = make_trace_solo(n, ns, seed, solo);
    mh_access *all = tu_apost_write(dir, src, n, 25000, 400, discard, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    size_t nb = check_bodies(r, all, m);
    CHECKF(nb >= ns, "%zu bodies checked for %u streams", nb, ns);
    check_candidates(r, all, m, ns, seed + 1);
    check_oracle(r, all, m, seed + 2);
    mh_reader_close(r);
    tu_problems p = tu_fsck(dir);
    CHECKF(p.n == 0, "fsck: %d problems: %s", p.n, p.msg);
    free(all);
    tu_rmtree(dir);
}

/* The postings' volume (SPEC.md §9d.2, use by a query): a thread that
 * writes every page of a 1 MiB buffer in each of 600 slices has postings
 * of ~80 bytes a page there (a bitmap of 600 slices), ~20 KiB over the
 * buffer: its 1 MiB questions go without the section (the walk meets its
 * rows in the first slice it enters), its 64 KiB ones and the other
 * thread's 1 MiB ones (no posting there) with it; every answer as the
 * oracle's, with the section used and ignored. */
static void test_volume(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "spost-vol");
    snprintf(tu_context, sizeof tu_context, "postings volume");
    const uint64_t buf = 0x40000000u, MiB = 1u << 20;
    size_t n = 600 * 512, m;
    mh_access *src = calloc(n, sizeof *src);
    CHECK(src);
    tu_rng rng = {77};
    for (size_t i = 0; i < n; i++) {
        size_t k = i % 512;
        src[i].transition = 10 + i;
        src[i].size = 8;
        if (k % 2 == 0) { /* stream 1: page k / 2 of the buffer */
            src[i].stream = 1;
            src[i].op = MH_OP_WRITE;
            src[i].physical = buf + (uint64_t)(k / 2) * 4096 + 8 * tu_below(&rng, 512);
        } else {
            src[i].stream = 0;
            src[i].op = MH_OP_READ;
            src[i].physical = 0x10000000u + 8 * tu_below(&rng, 8192);
        }
    }
    mh_access *all = tu_apost_write(dir, src, n, n, 512, 0, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(mh_reader_segment_count(r) == 1);
    const mh_seg *seg = tu_seg_of(r, 0);
    uint64_t *scratch = NULL;
    size_t cap = 0;
    struct {
        uint32_t stream;
        uint64_t a, b;
        int serves;
    } k[] = {
        {1, buf, buf + MiB - 1, 0},       /* ~20 KiB of postings */
        {1, buf, buf + 64 * 1024 - 1, 1}, /* 16 pages: ~1.3 KiB */
        {0, buf, buf + MiB - 1, 1},       /* none */
        {1, buf, 0, 1},                   /* the most pages within the bound */
        {1, buf, 0, 0},                   /* and one more */
    };
    /* the edge: the first run of pages whose postings pass the bound */
    uint64_t pages = 1;
    while (pages < 256 && volume_of(seg, 1, buf, buf + pages * 4096 - 1, MH_OPS_ALL) <=
                              MH_SPOST_VOLUME_MAX)
        pages++;
    CHECKF(pages > 16 && pages < 256, "the bound passed at %llu pages",
           (unsigned long long)pages);
    k[3].b = buf + (pages - 1) * 4096 - 1;
    k[4].b = buf + pages * 4096 - 1;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        uint64_t vol = volume_of(seg, k[i].stream, k[i].a, k[i].b, MH_OPS_ALL);
        CHECKF((vol > MH_SPOST_VOLUME_MAX) == !k[i].serves,
               "case %zu: %llu bytes of postings against %u", i, (unsigned long long)vol,
               MH_SPOST_VOLUME_MAX);
        mh_apost_iter it;
        mh_diag d = {0, 0, ""};
        int rc = mh_spost_query(seg, k[i].a, k[i].b, MH_OPS_ALL, &k[i].stream, 1, &it,
                                &scratch, &cap, &d);
        CHECKF(rc == k[i].serves, "case %zu: stream %u, [0x%llx, 0x%llx]: %d, expected %d (%s)",
               i, k[i].stream, (unsigned long long)k[i].a, (unsigned long long)k[i].b, rc,
               k[i].serves, d.msg);
    }
    free(scratch);
    check_oracle(r, all, m, 78);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}

/* ... counted only at 16 granules or more: in 9,000 slices of 20
 * accesses, a thread writing the same 17 pages in each has postings of
 * ~1.1 KiB a page (bitmaps), over 16,384 bytes on 16 pages already; its
 * questions over 16 pages (15 granules apart) are served still, over 17
 * (16 apart) not. */
static void test_volume_span(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "spost-vspan");
    snprintf(tu_context, sizeof tu_context, "postings volume, narrow ranges");
    const uint64_t buf = 0x40000000u;
    size_t n = 9000 * 20, m;
    mh_access *src = calloc(n, sizeof *src);
    CHECK(src);
    for (size_t i = 0; i < n; i++) {
        size_t k = i % 20;
        src[i].transition = 10 + i;
        src[i].size = 8;
        src[i].op = MH_OP_WRITE;
        src[i].stream = k < 17;
        src[i].physical = k < 17 ? buf + (uint64_t)k * 4096 + 8 * (i % 7) : 0x10000000u + 8 * k;
    }
    mh_access *all = tu_apost_write(dir, src, n, n, 20, 0, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(mh_reader_segment_count(r) == 1);
    const mh_seg *seg = tu_seg_of(r, 0);
    CHECKF(seg->nslices >= 8900, "%u slices", seg->nslices);
    uint64_t *scratch = NULL;
    size_t cap = 0;
    uint32_t one = 1;
    for (int pages = 16; pages <= 17; pages++) {
        uint64_t b = buf + (uint64_t)pages * 4096 - 1;
        uint64_t vol = volume_of(seg, 1, buf, b, MH_OPS_WRITE);
        CHECKF(vol > MH_SPOST_VOLUME_MAX, "%d pages: %llu bytes of postings", pages,
               (unsigned long long)vol);
        mh_apost_iter it;
        mh_diag d = {0, 0, ""};
        int rc = mh_spost_query(seg, buf, b, MH_OPS_WRITE, &one, 1, &it, &scratch, &cap, &d);
        CHECKF(rc == (pages < 17), "%d pages: %d (%s)", pages, rc, d.msg);
    }
    free(scratch);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}

/* One stream (stream 3 only, declared): no section, queries as before. */
static void test_one_stream(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "spost-one");
    size_t n = 20000, m;
    mh_access *src = make_trace(n, 1, 9);
    for (size_t i = 0; i < n; i++)
        src[i].stream = 3;
    mh_access *all = tu_apost_write(dir, src, n, 8000, 400, 0, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(check_bodies(r, all, m) == 0);
    check_oracle(r, all, m, 11);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}

/* ---- damage ------------------------------------------------------------ */
typedef struct dmg {
    const char *name;
    void (*edit)(uint8_t *p, uint64_t size, void *ctx);
    int fsck_code;
    const char *detail; /* in fsck's first problem */
} dmg;

static uint8_t *body0(uint8_t *p) {
    uint32_t n = mhf_load_u32(p + MHF_SPOST_COUNT);
    return p + MHF_SPOST_HEADER_SIZE + (size_t)n * MHF_SPOST_ENTRY_SIZE;
}
static void e_count(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_SPOST_COUNT, 0);
}
static void e_esize(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_SPOST_ENTRY_SIZE_OFF, 25);
}
static void e_order(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* entry 1's stream that of entry 0 */
    mhf_store_u32(p + MHF_SPOST_HEADER_SIZE + MHF_SPOST_ENTRY_SIZE + MHF_SPOST_E_STREAM,
                  mhf_load_u32(p + MHF_SPOST_HEADER_SIZE + MHF_SPOST_E_STREAM));
}
static void e_offset(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* entry 1's body a byte later */
    uint8_t *e = p + MHF_SPOST_HEADER_SIZE + MHF_SPOST_ENTRY_SIZE + MHF_SPOST_E_OFFSET;
    mhf_store_u64(e, mhf_load_u64(e) + 1);
}
static void e_reserved(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_SPOST_HEADER_SIZE + MHF_SPOST_E_RESERVED, 1);
}
static void e_stream(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* the last entry names a stream with no row */
    uint32_t n = mhf_load_u32(p + MHF_SPOST_COUNT);
    mhf_store_u32(p + MHF_SPOST_HEADER_SIZE + (size_t)(n - 1) * MHF_SPOST_ENTRY_SIZE +
                      MHF_SPOST_E_STREAM, 60000);
}
static void e_shift(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* body 0 at shift 13: well formed, not its rows' */
    mhf_store_u32(body0(p) + MHF_APOST_SHIFT, 13);
}
static void e_posting(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* body 0's posting_count one more than its keys' */
    uint8_t *b = body0(p);
    mhf_store_u64(b + MHF_APOST_POSTINGS, mhf_load_u64(b + MHF_APOST_POSTINGS) + 1);
}

static void test_damage(void) {
    char dir[4096], copy[4096];
    tu_mkdtemp(dir, sizeof dir, "spost-dmg");
    size_t n = 30000, m;
    mh_access *src = make_trace(n, 6, 21);
    mh_access *all = tu_apost_write(dir, src, n, 100000, 400, 0, 1, &m);
    free(src);
    /* an access to a stack page (one stream's, few chunks): a page query
     * there walks slices (the id-order path takes the shared table's) */
    size_t stk = 0;
    while (stk < m && !(all[stk].physical >= 0x7e000000u && all[stk].physical < 0x80000000u))
        stk++;
    CHECK(stk < m);
    static const dmg ds[] = {
        {"count", e_count, MH_ECORRUPT, "0 entries, not 1"},
        {"entry size", e_esize, MH_ECORRUPT, "entry size 25, this reader knows 24"},
        {"order", e_order, MH_ECORRUPT, "not above the entry before it"},
        {"offset", e_offset, MH_ECORRUPT, "where the bodies before it end at"},
        {"reserved", e_reserved, MH_ECORRUPT, "reserved field is not 0"},
        {"stream", e_stream, MH_ECORRUPT, "has rows in the segment and no entry"},
        {"shift", e_shift, MH_ECORRUPT, "is missing"},
        {"posting", e_posting, MH_ECORRUPT, "posting_count"},
    };
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        snprintf(tu_context, sizeof tu_context, "damage %s", ds[i].name);
        char name[64];
        snprintf(name, sizeof name, "spost-dmg-%zu", i);
        tu_problems p = tu_damaged_copy(dir, name, "seg-0000000000000000.mhs", MHF_SECT_SPOST, ds[i].edit, copy, sizeof copy);
        CHECKF(p.n >= 1 && p.code == ds[i].fsck_code && strstr(p.msg, ds[i].detail),
               "fsck: %d problems, first %s: %s (want %s: %s)", p.n, mh_error_name(p.code),
               p.msg, mh_error_name(ds[i].fsck_code), ds[i].detail);
        /* a query without a stream set does not read the section */
        mh_reader *r;
        CHECK_OK(mh_reader_open(copy, &r));
        mh_query q;
        mh_query_init(&q);
        q.addr_first = q.addr_last = all[5].physical;
        mh_access out[4];
        size_t got;
        CHECK_OK(mh_query_run(r, &q, out, 4, &got));
        /* a structural damage is refused by a stream query that reads the
         * section: another stream's question on one stream's stack page
         * (its first listed slice holds no match, so section 15 is asked,
         * at once or then); an inexact section is well formed (fsck only) */
        q.addr_first = all[stk].physical & ~(uint64_t)0xfff;
        q.addr_last = q.addr_first + 0xfff;
        uint32_t s = (all[stk].stream + 1) % 6;
        q.streams = &s;
        q.nstreams = 1;
        int rc = mh_query_run(r, &q, out, 4, &got);
        char msg[MH_ERRMSG_MAX];
        mh_reader_errmsg(r, msg, sizeof msg);
        int structural = i < 5;
        if (structural)
            CHECKF(rc == MH_ECORRUPT && strstr(msg, ds[i].detail), "stream query: %s: %s",
                   mh_error_name(rc), msg);
        else
            CHECKF(rc == MH_OK, "stream query: %s: %s", mh_error_name(rc), msg);
        mh_reader_close(r);
        tu_rmtree(copy);
    }
    /* a byte flipped, sums not made right: the section's sum */
    snprintf(tu_context, sizeof tu_context, "damage: a flipped byte");
    tu_mkdtemp(copy, sizeof copy, "spost-flip");
    tu_copy_dir(dir, copy);
    tu_flip_section_byte(copy, "seg-0000000000000000.mhs", MHF_SECT_SPOST);
    tu_problems p = tu_fsck(copy);
    CHECKF(p.n >= 1 && p.code == MH_ECHECKSUM, "fsck of a flipped byte: %s: %s",
           mh_error_name(p.code), p.msg);
    mh_reader *r;
    CHECK_OK(mh_reader_open(copy, &r));
    mh_query q;
    mh_query_init(&q);
    q.addr_first = all[stk].physical & ~(uint64_t)0xfff; /* section 15 is read (above) */
    q.addr_last = q.addr_first + 0xfff;
    uint32_t s = (all[stk].stream + 1) % 6;
    q.streams = &s;
    q.nstreams = 1;
    mh_access out[4];
    size_t got;
    int rc = mh_query_run(r, &q, out, 4, &got);
    char msg[MH_ERRMSG_MAX];
    mh_reader_errmsg(r, msg, sizeof msg);
    CHECKF(rc == MH_ECHECKSUM && strstr(msg, "stream postings"),
           "stream query on a flipped byte: %s: %s", mh_error_name(rc), msg);
    mh_reader_close(r);
    tu_rmtree(copy);
    free(all);
    tu_rmtree(dir);
}

/* ---- a real recording --------------------------------------------------- */
static int test_real(const char *memhist, const char *victim) {
    char dir[4096], rec[4200];
    mh_reader *r;
    mh_access *all;
    size_t n;
    uint32_t ns;
    int rc = tu_record_threads(memhist, victim, "spost-real", dir, sizeof dir, &r, &all, &n, &ns);
    if (rc != 0)
        return rc;
    tu_join(rec, sizeof rec, dir, "rec.mh");
    CHECKF(mh_reader_stream_count(r) >= 9, "%zu streams", mh_reader_stream_count(r));
    size_t nb = check_bodies(r, all, n);
    CHECKF(nb >= 9, "%zu bodies in the recording of 8 threads", nb);
    check_candidates(r, all, n, ns, 31);
    check_oracle(r, all, n, 33);
    mh_reader_close(r);
    tu_problems p = tu_fsck(rec);
    CHECKF(p.n == 0, "fsck: %d problems: %s", p.n, p.msg);
    printf("spost real: %zu accesses, %zu bodies: exact, oracle, fsck clean\n", n, nb);
    free(all);
    tu_rmtree(dir);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "real") == 0)
        return test_real(argv[2], argv[3]);
    test_store(4, 0, 1, 0);
    test_store(4, 1, 2, 0);
    test_store(40, 0, 3, 0); /* stream masks alias: 40 streams on 32 bits */
    /* segments of one stream first, then of several: its body from the
     * address postings (with wide ranges), in the first segment, across a
     * discard, and a whole segment of one stream (section 15 absent) */
    test_store(4, 0, 4, 3000);
    test_store(4, 1, 5, 33000);
    test_store(6, 0, 6, 26000);
    test_one_stream();
    test_volume();
    test_volume_span();
    test_damage();
    printf("spost: ok\n");
    return 0;
}
