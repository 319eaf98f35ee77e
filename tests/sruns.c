/*
 * sruns.c - the stream id runs (SPEC.md §9d.3, section type 17, format
 * 2.8) on multi-stream stores: a segment has the section, and a stream a
 * body, exactly when the writer's rule says (a slice's runs at its cap and
 * one past it, recomputed by brute force), and every body's runs equal
 * brute force over its stream's ids (runs across slices, after a discard,
 * a stream of one-row runs without a body); questions of one or two
 * streams over wide and narrow ranges equal the oracle with the section
 * used and ignored, and with it a question whose stream waits long decodes fewer rows; fsck is
 * clean; damage is refused with its detail. `sruns real MEMHIST VICTIM`
 * does the same on a qemu recording of a program of 8 threads (skipped
 * without qemu), whose segment may have no section when the host ran its
 * threads side by side access by access.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apost_util.h"
#include "resum.h"
#include "testutil.h"

/* Streams 0 .. ns - 2 take turns in bursts of 1-300 accesses, stream 0 now
 * and then waiting for thousands; stream ns - 1 (chatty) slips single
 * accesses in between (its runs are one row: no body). Addresses: each
 * stream's stack, a shared heap. */
static mh_access *make_trace(size_t n, uint32_t ns, uint64_t seed) {
    mh_access *a = calloc(n, sizeof *a);
    CHECK(a);
    tu_rng rng = {seed};
    uint64_t t = 100;
    uint32_t s = 0;
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        if (left == 0) {
            s = (uint32_t)tu_below(&rng, ns - 1);
            left = 1 + tu_below(&rng, 300);
            if (s == 0 && tu_below(&rng, 4) == 0)
                s = 1 + (uint32_t)tu_below(&rng, ns - 2); /* stream 0 waits */
        }
        left--;
        uint32_t st = tu_below(&rng, 100) == 0 ? ns - 1 : s;
        t += tu_below(&rng, 3);
        uint64_t phy = tu_below(&rng, 2) ? 0x7f000000u + ((uint64_t)st << 20) - 8 * tu_range(&rng, 1, 200)
                                         : ((uint64_t)1 << 32) + 8 * tu_below(&rng, 20000);
        a[i] = (mh_access){.transition = t, .physical = phy, .size = 8,
                           .op = (uint8_t)(tu_below(&rng, 3) == 0 ? MH_OP_WRITE : MH_OP_READ),
                           .stream = st};
    }
    return a;
}

/* The size of a body of stream st's runs in x[0 .. count), as
 * sruns_build.c's put_body writes it (groups of MHF_SRUNS_K_DEFAULT runs, a
 * gap and a length a run, varints), and the rows they hold. */
static uint64_t varint_len(uint64_t v) {
    uint64_t k = 1;
    for (; v >= 0x80; v >>= 7)
        k++;
    return k;
}

static uint64_t body_size(const mh_access *x, uint64_t count, uint32_t st, uint64_t *rows) {
    uint64_t runs = 0, data = 0, prev_b = 0;
    *rows = 0;
    for (uint64_t i = 0; i < count;) {
        if (x[i].stream != st) {
            i++;
            continue;
        }
        uint64_t a = i;
        while (i < count && x[i].stream == st)
            i++;
        data += (runs % MHF_SRUNS_K_DEFAULT == 0 ? 1 : varint_len(a - prev_b - 2)) +
                varint_len(i - 1 - a);
        *rows += i - a;
        prev_b = i - 1;
        runs++;
    }
    uint64_t groups = (runs + MHF_SRUNS_K_DEFAULT - 1) / MHF_SRUNS_K_DEFAULT;
    return MHF_SRUNS_B_HEADER_SIZE + groups * MHF_SRUNS_G_SIZE + data;
}

/* What the writer keeps of a multi-stream segment's runs (sruns_build.c,
 * SPEC.md §9d.3): nothing once, at the end of one of its slices, the runs
 * of its rows so far (joined across slices) number more than rows / 8 +
 * MH_SRUNS_SLACK (rows: those so far), else a body for each stream whose
 * body fits rows / 8 + 256 bytes, and no section when none fits. Sets
 * fits[st] per stream of has[] and returns whether the segment has a
 * section; *why tells a reader of a failure which rule applied. A
 * recording's threads interleave as the host schedules them, so a real
 * segment may have either. */
static uint64_t densest_runs, densest_rows; /* the densest slice seen (real) */

static int expect_section(const mh_seg *seg, const mh_access *x, const uint8_t *has,
                          uint8_t *fits, const char **why) {
    uint64_t runs = 0;
    for (uint32_t si = 0; si < seg->nslices; si++) {
        mh_slice sl;
        mh_seg_slice(seg, si, &sl);
        uint64_t a = sl.id_first - seg->id_first, e = a + sl.count, own = sl.count > 0;
        for (uint64_t i = a; i < e; i++) {
            runs += i == 0 || x[i].stream != x[i - 1].stream;
            own += i > a && x[i].stream != x[i - 1].stream;
        }
        if (own * densest_rows >= densest_runs * sl.count) {
            densest_runs = own;
            densest_rows = sl.count;
        }
        if (runs > e / 8 + MH_SRUNS_SLACK) {
            *why = "runs past rows / 8 + MH_SRUNS_SLACK at a slice's end";
            return 0;
        }
    }
    int any = 0;
    for (uint32_t st = 0; st <= MH_STREAM_MAX; st++) {
        if (!has[st])
            continue;
        uint64_t rows, size = body_size(x, seg->count, st, &rows);
        fits[st] = size <= rows / 8 + 256;
        any |= fits[st];
    }
    *why = any ? "a stream's body within its budget" : "no stream's body within its budget";
    return any;
}

/* Every segment's section against brute force over all (the store's
 * accesses in id order): present exactly when expect_section says so, a
 * body exactly for the streams whose runs fit. Returns the bodies checked,
 * *nobody the entries without one, *absent the multi-stream segments
 * without a section. */
static size_t check_runs(mh_reader *r, const mh_access *all, size_t *nobody, size_t *absent) {
    size_t bodies = 0;
    uint8_t *has = malloc(MH_STREAM_MAX + 1), *fits = malloc(MH_STREAM_MAX + 1);
    CHECK(has && fits);
    for (size_t g = 0; g < r->nsegs; g++) {
        const mh_seg *seg = tu_seg_of(r, g);
        mh_sruns_view v;
        mh_diag d = {0, 0, ""};
        int rc = mh_sruns_view_get(seg, &v, &d);
        const mh_access *x = all + seg->id_first;
        memset(has, 0, MH_STREAM_MAX + 1);
        memset(fits, 0, MH_STREAM_MAX + 1);
        uint32_t nhas = 0;
        for (uint64_t i = 0; i < seg->count; i++) {
            nhas += !has[x[i].stream];
            has[x[i].stream] = 1;
        }
        if (nhas < 2) {
            CHECKF(rc == MH_ENOTFOUND, "segment %zu of one stream has stream id runs", g);
            continue;
        }
        const char *why;
        int want = expect_section(seg, x, has, fits, &why);
        if (!want) {
            CHECKF(rc == MH_ENOTFOUND, "segment %zu has stream id runs despite %s", g, why);
            (*absent)++;
            continue;
        }
        CHECKF(rc == MH_OK, "segment %zu (%s): %s %s", g, why, mh_error_name(rc), d.msg);
        CHECKF(v.n == nhas, "segment %zu: %u entries for %u streams", g, v.n, nhas);
        for (uint32_t e = 0; e < v.n; e++) {
            uint32_t st = mhf_load_u32(v.ents + (size_t)e * v.esz + MHF_SRUNS_E_STREAM);
            CHECKF(has[st], "segment %zu lists stream %u, which has no row there", g, st);
            mh_sruns_body_view b;
            mh_sruns_body(&v, e, &b);
            CHECKF(!b.bytes == !fits[st], "segment %zu: stream %u %s a body, its runs %s "
                   "their budget", g, st, b.bytes ? "has" : "has no",
                   fits[st] ? "fit" : "pass");
            if (!b.bytes) {
                (*nobody)++;
                continue;
            }
            uint64_t k = 0, i = 0;
            uint64_t runs[2 * MHF_SRUNS_K_DEFAULT];
            for (uint32_t gr = 0; gr < b.groups; gr++) {
                uint32_t m;
                CHECKF(mh_sruns_group(&b, gr, runs, &m, &d) == MH_OK, "%s", d.msg);
                for (uint32_t j = 0; j < m; j++, k++) {
                    while (i < seg->count && x[i].stream != st)
                        i++;
                    uint64_t a0 = i;
                    while (i < seg->count && x[i].stream == st)
                        i++;
                    CHECKF(runs[2 * j] == a0 && runs[2 * j + 1] == i - 1,
                           "segment %zu stream %u run %llu: [%llu, %llu], brute force "
                           "[%llu, %llu]", g, st, (unsigned long long)k,
                           (unsigned long long)runs[2 * j], (unsigned long long)runs[2 * j + 1],
                           (unsigned long long)a0, (unsigned long long)(i - 1));
                }
            }
            while (i < seg->count && x[i].stream != st)
                i++;
            CHECKF(i == seg->count && k == b.runs, "segment %zu stream %u: more runs than "
                   "its %llu", g, st, (unsigned long long)b.runs);
            bodies++;
        }
    }
    free(has);
    free(fits);
    return bodies;
}

/* Questions of one or two streams, every width (a third the whole space),
 * against the oracle with the section used (way 0) and ignored. */
static void check_oracle(mh_reader *r, const mh_access *all, size_t n, uint32_t ns,
                         uint64_t seed) {
    for (int way = 0; way < 2; way++) {
        r->sruns_off = way;
        tu_rng rng = {seed};
        size_t answered = 0;
        for (int q = 0; q < 400; q++) {
            const mh_access *x = &all[tu_below(&rng, n)];
            mh_query qq;
            mh_query_init(&qq);
            if (tu_below(&rng, 3) == 0) {
                qq.addr_first = 0;
                qq.addr_last = UINT64_MAX;
            } else {
                uint64_t width = (uint64_t)8 << tu_below(&rng, 30);
                qq.addr_first = x->physical > width / 2 ? x->physical - width / 2 : 0;
                qq.addr_last = qq.addr_first + width - 1;
            }
            qq.ops = 1 + (uint32_t)tu_below(&rng, 3);
            qq.direction = tu_below(&rng, 2) ? MH_BACKWARD : MH_FORWARD;
            qq.start = all[tu_below(&rng, n)].transition;
            uint32_t s[2] = {(uint32_t)tu_below(&rng, ns), (uint32_t)tu_below(&rng, ns)};
            qq.streams = s;
            qq.nstreams = 1 + (uint32_t)(tu_below(&rng, 4) == 0);
            size_t max = 1 + tu_below(&rng, 20), ng = 0, nw = 0;
            mh_access got[20], want[20];
            oracle_query oq;
            CHECK_OK(oracle_query_from(&oq, &qq, NULL, 0));
            CHECK_OK(oracle_run(all, n, &oq, want, max, &nw));
            CHECK_OK(mh_query_run(r, &qq, got, max, &ng));
            snprintf(tu_context, sizeof tu_context, "way %d question %d: streams %u/%u of %u, "
                     "[0x%llx, 0x%llx], ops %u, %s from %llu, max %zu", way, q, s[0],
                     qq.nstreams, ns, (unsigned long long)qq.addr_first,
                     (unsigned long long)qq.addr_last, qq.ops, qq.direction ? "bwd" : "fwd",
                     (unsigned long long)qq.start, max);
            CHECK(oracle_compare("stream question", got, ng, want, nw) == 0);
            answered += ng > 0;
        }
        CHECKF(answered >= 150, "%zu of 400 stream questions had matches", answered);
    }
    r->sruns_off = 0;
}

/* Stream 0's next access, anywhere, from the start of each of its waits:
 * with the runs the walk decodes fewer blocks than without. */
static void check_jumps(const char *dir, const mh_access *all, size_t n) {
    uint64_t blocks[2] = {0, 0};
    for (int way = 0; way < 2; way++) {
        mh_reader *r;
        CHECK_OK(mh_reader_open(dir, &r));
        r->sruns_off = way;
        size_t asked = 0;
        for (size_t i = 1; i < n && asked < 200; i++) {
            if (!(all[i - 1].stream == 0 && all[i].stream != 0))
                continue;
            mh_query q;
            mh_query_init(&q);
            q.start_kind = MH_FROM_ID;
            q.start = i - 1; /* ids are the indexes */
            uint32_t s = 0;
            q.streams = &s;
            q.nstreams = 1;
            mh_access a;
            size_t got;
            CHECK_OK(mh_query_run(r, &q, &a, 1, &got));
            size_t j = i;
            while (j < n && all[j].stream != 0)
                j++;
            CHECK(got == (j < n) && (!got || a.id == j));
            asked++;
        }
        blocks[way] = atomic_load(&r->blocks_decoded);
        mh_reader_close(r);
    }
    CHECKF(blocks[0] < blocks[1], "stream 0's next accesses decoded %llu blocks with the "
           "runs, %llu without", (unsigned long long)blocks[0], (unsigned long long)blocks[1]);
}

/* Stream 0's last 10 accesses, anywhere, from the end of each of its
 * waits (backward from a transition: the slices before hold every
 * stream's chunks, stream 0's rows a part of each): with the runs the
 * question walks the stream's ids and decodes fewer blocks than the
 * chunk walk, which takes candidates from every chunk of the slice. */
static void check_back(const char *dir, const mh_access *all, size_t n) {
    uint64_t blocks[2] = {0, 0}, walks[2] = {0, 0};
    for (int way = 0; way < 2; way++) {
        mh_reader *r;
        CHECK_OK(mh_reader_open(dir, &r));
        r->sruns_off = way;
        size_t asked = 0;
        for (size_t i = 1; i < n && asked < 200; i++) {
            if (!(all[i - 1].stream != 0 && all[i].stream == 0))
                continue;
            mh_query q;
            mh_query_init(&q);
            q.start = all[i - 1].transition;
            q.direction = MH_BACKWARD;
            uint32_t s = 0;
            q.streams = &s;
            q.nstreams = 1;
            mh_access a[10];
            size_t got;
            CHECK_OK(mh_query_run(r, &q, a, 10, &got));
            /* again, its blocks and label groups cached: */
            uint64_t w0 = atomic_load(&r->idmap_walks);
            CHECK_OK(mh_query_run(r, &q, a, 10, &got));
            walks[way] += atomic_load(&r->idmap_walks) - w0;
            size_t j = i, k = 0;
            while (j < n && all[j].transition <= q.start)
                j++; /* ids are the indexes: j - 1 the last at or before */
            for (; j-- > 0 && k < 10;) {
                if (all[j].stream != 0)
                    continue;
                CHECKF(k < got && a[k].id == j, "backward from %llu: answer %zu is %llu, "
                       "want %zu", (unsigned long long)q.start, k,
                       k < got ? (unsigned long long)a[k].id : 0ull, j);
                k++;
            }
            CHECK(got == k);
            asked++;
        }
        blocks[way] = atomic_load(&r->blocks_decoded);
        mh_reader_close(r);
    }
    CHECKF(blocks[0] < blocks[1], "stream 0's last accesses decoded %llu blocks with the "
           "runs, %llu without", (unsigned long long)blocks[0], (unsigned long long)blocks[1]);
    /* asked again, every block cached: the chunk walk of a slice wholly
     * before the start would look cheap (no block to decode), but it takes
     * candidates from each of the stream's chunks, passing the other
     * streams' rows; with the runs the id path is taken there too */
    CHECKF(walks[0] > walks[1], "asked again, the id path walked %llu slices with the runs, "
           "%llu without", (unsigned long long)walks[0], (unsigned long long)walks[1]);
}

/* Four streams in bursts of 1-300 accesses for 48,000, then streams 1-3
 * alone for 48,000 (stream 0 waits three slices of 16,000), twice; four
 * accesses in five on the stream's own stack regions, the others on
 * shared heap regions (32 each, 16 MiB apart: a slice holds about 190
 * chunks, stream 0's rows in 70-80 of them, where a real recording's
 * 32,768-row slices hold about 110): check_back. */
static void test_back(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "sruns-back");
    snprintf(tu_context, sizeof tu_context, "backward, waits of three slices");
    size_t n = 192000, m;
    mh_access *src = calloc(n, sizeof *src);
    CHECK(src);
    tu_rng rng = {23};
    uint64_t t = 100;
    uint32_t st = 0;
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        int waiting = i / 48000 % 2 == 1;
        if (left == 0 || (waiting && st == 0)) {
            st = waiting ? 1 + (uint32_t)tu_below(&rng, 3) : (uint32_t)tu_below(&rng, 4);
            left = 1 + tu_below(&rng, 300);
        }
        left--;
        t += tu_below(&rng, 3);
        uint64_t region = tu_below(&rng, 5) ? st * 32 + tu_below(&rng, 32) : 128 + tu_below(&rng, 32);
        src[i] = (mh_access){.transition = t, .physical = (region << 24) + 8 * tu_below(&rng, 4096),
                             .size = 8, .op = (uint8_t)(tu_below(&rng, 3) == 0 ? MH_OP_WRITE
                                                                                 : MH_OP_READ),
                             .stream = st};
    }
    mh_access *all = tu_apost_write(dir, src, n, 96000, 16000, 0, 1, &m);
    free(src);
    check_back(dir, all, m);
    free(all);
    tu_rmtree(dir);
}

/* Streams 1-3 in bursts of 1-300 accesses, stream 0 slipping single
 * accesses in near the start of each slice of 8,000 (one in 8 of 200
 * rows), as a real recording's main thread does between its waits: its
 * one-row runs pass their budget, so the segments have the section with
 * no body for stream 0. A question of stream 0 must then go as if the
 * segment had none (the runs cannot skip a row for it): the same slices
 * walked in id order and the same blocks decoded with the section read
 * and ignored. Up to 1.13.9 the section's presence alone sent its
 * whole-space questions down the id path, which then tested every row
 * back to the stream's: a real recording's main thread, 10x slower. */
static void test_nobody(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "sruns-nobody");
    snprintf(tu_context, sizeof tu_context, "stream 0 without a body");
    size_t n = 96000, m;
    mh_access *src = make_trace(n, 4, 29);
    tu_rng rng = {31};
    uint32_t st = 1;
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        if (left == 0) {
            st = 1 + (uint32_t)tu_below(&rng, 3);
            left = 1 + tu_below(&rng, 300);
        }
        left--;
        src[i].stream = i % 8000 >= 100 && i % 8000 < 300 && tu_below(&rng, 8) == 0 ? 0 : st;
    }
    mh_access *all = tu_apost_write(dir, src, n, 48000, 8000, 0, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    size_t none = 0, absent = 0, nb = check_runs(r, all, &none, &absent);
    CHECKF(nb >= 3 && none == r->nsegs && absent == 0, "%zu bodies, %zu entries without, "
           "%zu segments without a section", nb, none, absent);
    mh_reader_close(r);
    uint64_t walks[2] = {0, 0}, blocks[2] = {0, 0};
    for (int way = 0; way < 2; way++) {
        CHECK_OK(mh_reader_open(dir, &r));
        r->sruns_off = way;
        tu_rng qr = {37};
        for (int k = 0; k < 200; k++) {
            mh_query q;
            mh_query_init(&q);
            q.start = all[tu_below(&qr, m)].transition;
            q.direction = k % 2 ? MH_BACKWARD : MH_FORWARD;
            uint32_t s0 = 0;
            q.streams = &s0;
            q.nstreams = 1;
            mh_access a[10];
            size_t got;
            CHECK_OK(mh_query_run(r, &q, a, 10, &got));
            CHECK_OK(mh_query_run(r, &q, a, 10, &got)); /* again, blocks cached */
        }
        walks[way] = atomic_load(&r->idmap_walks);
        blocks[way] = atomic_load(&r->blocks_decoded);
        mh_reader_close(r);
    }
    CHECKF(walks[0] == walks[1] && blocks[0] == blocks[1], "stream 0 without a body: "
           "the id path walked %llu slices and %llu blocks were decoded with the section, "
           "%llu and %llu without", (unsigned long long)walks[0],
           (unsigned long long)blocks[0], (unsigned long long)walks[1],
           (unsigned long long)blocks[1]);
    CHECK_OK(mh_reader_open(dir, &r));
    check_oracle(r, all, m, 4, 41);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}

static void test_store(uint32_t ns, int discard, uint64_t seed) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "sruns");
    snprintf(tu_context, sizeof tu_context, "%u streams, discard %d, seed %llu", ns, discard,
             (unsigned long long)seed);
    size_t n = 60000, m;
    mh_access *src = make_trace(n, ns, seed);
    mh_access *all = tu_apost_write(dir, src, n, 25000, 400, discard, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    size_t none = 0, absent = 0, nb = check_runs(r, all, &none, &absent);
    CHECKF(nb >= ns - 1 && none >= 1 && absent == 0, "%zu bodies checked for %u streams, "
           "%zu entries without, %zu segments without a section", nb, ns, none, absent);
    check_oracle(r, all, m, ns, seed + 1);
    mh_reader_close(r);
    check_jumps(dir, all, m);
    tu_problems p = tu_fsck(dir);
    CHECKF(p.n == 0, "fsck: %d problems: %s", p.n, p.msg);
    free(all);
    tu_rmtree(dir);
}

/* A segment of 150,000 where stream 0 runs 1,000 accesses at a time and
 * streams 1-3 take turns access by access in the 4,000 between: stream 0's
 * runs would fit their budget, but the segment's runs (one a row for the
 * others) pass rows / 8 + MH_SRUNS_SLACK by its sixth slice, so the writer
 * stops keeping them and the segment has no section; answers as before. */
static void test_interleaved(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "sruns-interleaved");
    snprintf(tu_context, sizeof tu_context, "stream 0 in runs of 1,000, streams 1-3 interleaved");
    size_t n = 150000, m;
    mh_access *src = make_trace(n, 5, 7);
    for (size_t i = 0; i < n; i++)
        src[i].stream = i % 5000 < 1000 ? 0 : (uint32_t)(1 + i % 3);
    mh_access *all = tu_apost_write(dir, src, n, 200000, 4096, 0, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(r->nsegs == 1);
    CHECKF(mh_sruns_section(tu_seg_of(r, 0), &(const mh_section *){0}) == MH_ENOTFOUND,
           "a segment of 120,000 one-row runs has stream id runs");
    check_oracle(r, all, m, 4, 9);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}

/* Slices of 4,096 rows: the first five streams 0 and 1 taking turns in
 * runs of one or two rows, exactly 18,944 runs (5 x 4,096 / 8 +
 * MH_SRUNS_SLACK: the budget at the fifth slice's end), then 48 slices of
 * stream 0 with one run of 100 stream 1 rows in the middle; stream 0's
 * body within its budget (stream 1's not), so the segment keeps its
 * section, where a cap of rows / 16 + 64 a slice (1.13.9) gave it up in
 * the first slice; then the same with 18,945 runs: none. check_runs holds
 * the writer to the rule at both sides of the budget. */
static void test_budget(void) {
    for (int over = 0; over < 2; over++) {
        char dir[4096];
        tu_mkdtemp(dir, sizeof dir, "sruns-budget");
        size_t dense = 5 * 4096, n = dense + 48 * 4096, m;
        size_t want = 5 * 4096 / 8 + MH_SRUNS_SLACK + (size_t)over;
        snprintf(tu_context, sizeof tu_context, "%zu runs in the first 5 slices", want);
        mh_access *src = make_trace(n, 3, 11);
        for (size_t i = 0; i < n; i++) {
            src[i].transition = 100 + 2 * i; /* no slice ends inside a transition */
            src[i].stream = i >= dense && i % 4096 >= 2000 && i % 4096 < 2100;
        }
        size_t i = 0;
        for (size_t run = 0; run < want; run++)
            for (size_t j = 0; j < 1 + (run < dense - want); j++)
                src[i++].stream = run % 2;
        CHECK(i == dense);
        mh_access *all = tu_apost_write(dir, src, n, 1000000, 4096, 0, 1, &m);
        free(src);
        mh_reader *r;
        CHECK_OK(mh_reader_open(dir, &r));
        CHECK(r->nsegs == 1 && tu_seg_of(r, 0)->nslices == 53);
        size_t none = 0, absent = 0, nb = check_runs(r, all, &none, &absent);
        CHECKF(over ? absent == 1 : nb == 1 && none == 1, "%zu bodies, %zu entries without, "
               "%zu segments without a section", nb, none, absent);
        check_oracle(r, all, m, 2, 13);
        mh_reader_close(r);
        free(all);
        tu_rmtree(dir);
    }
}

/* ---- damage ------------------------------------------------------------ */
typedef struct dmg {
    const char *name;
    void (*edit)(uint8_t *p, uint64_t size, void *ctx);
    const char *detail; /* in fsck's first problem */
    int structural;     /* refused by a stream question through the section */
} dmg;

static uint8_t *body0(uint8_t *p) {
    uint32_t n = mhf_load_u32(p + MHF_SRUNS_COUNT);
    return p + MHF_SRUNS_HEADER_SIZE + (size_t)n * MHF_SRUNS_ENTRY_SIZE;
}
static void e_count(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_SRUNS_COUNT, 0);
}
static void e_esize(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_SRUNS_ENTRY_SIZE_OFF, 25);
}
static void e_k(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(body0(p) + MHF_SRUNS_B_K, 0);
}
static void e_reserved(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_SRUNS_HEADER_SIZE + MHF_SRUNS_E_RESERVED, 1);
}
static void e_stream(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* the last entry names a stream with no row */
    uint32_t n = mhf_load_u32(p + MHF_SRUNS_COUNT);
    mhf_store_u32(p + MHF_SRUNS_HEADER_SIZE + (size_t)(n - 1) * MHF_SRUNS_ENTRY_SIZE +
                      MHF_SRUNS_E_STREAM, 60000);
}
static void e_first(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* body 0's last run one id shorter: well formed */
    uint64_t bytes = mhf_load_u64(p + MHF_SRUNS_HEADER_SIZE + MHF_SRUNS_E_BYTES);
    uint8_t *last = body0(p) + bytes - 1; /* its length's varint, one byte */
    CHECKF(*last > 0 && *last < 0x80, "body 0's last run is %u long", *last);
    (*last)--;
}

static void test_damage(void) {
    char dir[4096], copy[4096];
    tu_mkdtemp(dir, sizeof dir, "sruns-dmg");
    size_t n = 30000, m;
    mh_access *src = make_trace(n, 5, 21);
    mh_access *all = tu_apost_write(dir, src, n, 100000, 400, 0, 1, &m);
    free(src);
    static const dmg ds[] = {
        {"count", e_count, "0 entries, not 1", 1},
        {"entry size", e_esize, "entry size 25, this reader knows 24", 1},
        {"K", e_k, "0 a group", 1},
        {"reserved", e_reserved, "reserved field is not 0", 1},
        {"stream", e_stream, "has rows in the segment and no entry", 0},
        {"last run", e_first, "its rows make", 0},
    };
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        snprintf(tu_context, sizeof tu_context, "damage %s", ds[i].name);
        char name[64];
        snprintf(name, sizeof name, "sruns-dmg-%zu", i);
        tu_problems p = tu_damaged_copy(dir, name, "seg-0000000000000000.mhs", MHF_SECT_SRUNS, ds[i].edit, copy, sizeof copy);
        CHECKF(p.n >= 1 && p.code == MH_ECORRUPT && strstr(p.msg, ds[i].detail),
               "fsck: %d problems, first %s: %s (want %s)", p.n, mh_error_name(p.code),
               p.msg, ds[i].detail);
        /* stream 1's next access anywhere: the id-order walk reads the section */
        mh_reader *r;
        CHECK_OK(mh_reader_open(copy, &r));
        mh_query q;
        mh_query_init(&q);
        q.start = all[m / 2].transition;
        uint32_t s = 1;
        q.streams = &s;
        q.nstreams = 1;
        mh_access out[4];
        size_t got;
        int rc = mh_query_run(r, &q, out, 4, &got);
        char msg[MH_ERRMSG_MAX];
        mh_reader_errmsg(r, msg, sizeof msg);
        if (ds[i].structural)
            CHECKF(rc == MH_ECORRUPT && strstr(msg, ds[i].detail), "stream query: %s: %s",
                   mh_error_name(rc), msg);
        else
            CHECKF(rc == MH_OK, "stream query: %s: %s", mh_error_name(rc), msg);
        /* without a stream set it is not read */
        q.streams = NULL;
        q.nstreams = 0;
        CHECK_OK(mh_query_run(r, &q, out, 4, &got));
        mh_reader_close(r);
        tu_rmtree(copy);
    }
    snprintf(tu_context, sizeof tu_context, "damage: a flipped byte");
    tu_mkdtemp(copy, sizeof copy, "sruns-flip");
    tu_copy_dir(dir, copy);
    tu_flip_section_byte(copy, "seg-0000000000000000.mhs", MHF_SECT_SRUNS);
    tu_problems p = tu_fsck(copy);
    CHECKF(p.n >= 1 && p.code == MH_ECHECKSUM, "fsck of a flipped byte: %s: %s",
           mh_error_name(p.code), p.msg);
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
    int rc = tu_record_threads(memhist, victim, "sruns-real", dir, sizeof dir, &r, &all, &n, &ns);
    if (rc != 0)
        return rc;
    tu_join(rec, sizeof rec, dir, "rec.mh");
    size_t none = 0, absent = 0, nb = check_runs(r, all, &none, &absent);
    size_t nsegs = r->nsegs;
    check_oracle(r, all, n, ns, 33);
    mh_reader_close(r);
    tu_problems p = tu_fsck(rec);
    CHECKF(p.n == 0, "fsck: %d problems: %s", p.n, p.msg);
    printf("sruns real: %zu accesses, %zu segments (%zu without a section: threads the "
           "host ran side by side), %zu bodies, %zu entries without, the densest slice %llu "
           "runs in %llu rows: exact, oracle, fsck clean\n", n, nsegs, absent, nb, none,
           (unsigned long long)densest_runs, (unsigned long long)densest_rows);
    free(all);
    tu_rmtree(dir);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "real") == 0)
        return test_real(argv[2], argv[3]);
    test_store(4, 0, 1);
    test_store(6, 1, 2);
    test_store(40, 0, 3);
    test_interleaved();
    test_budget();
    test_nobody();
    test_back();
    test_damage();
    printf("sruns: ok\n");
    return 0;
}
