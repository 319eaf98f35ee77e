/*
 * sspan.c - the span stream address set (SPEC.md §9e.1, section type 16,
 * format 2.8) on multi-stream stores of many segments: every stream node
 * equals brute force over the rows of the segments it covers (the
 * streams listed, each stream's 4 KiB granules per op as whole-granule
 * intervals), with segments of one stream (their granules from the
 * address set) and streams that start late; one-stream questions equal
 * the oracle with the nodes used and ignored, and with them fewer
 * segments are opened; fsck is clean; damage is refused with its detail.
 * `sspan real MEMHIST VICTIM` does the same on a qemu recording of a
 * program of 8 threads, rewritten in segments of 30,000 accesses (skipped
 * without qemu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apost_util.h"
#include "resum.h"
#include "testutil.h"

/* Stream s (of ns) uses its own stack (s MiB up) and heap (s x 64 KiB
 * past 2^32), everyone a shared table at 0x10000; the first `solo`
 * accesses are stream 0's alone, and stream s >= 1 starts at id
 * solo + s * 2000. */
static mh_access *make_trace(size_t n, uint32_t ns, uint64_t seed, size_t solo) {
    mh_access *a = calloc(n, sizeof *a);
    CHECK(a);
    tu_rng rng = {seed};
    uint64_t t = 100;
    for (size_t i = 0; i < n; i++) {
        t += tu_below(&rng, 3);
        uint32_t s = 0;
        if (i >= solo) {
            uint32_t live = (uint32_t)((i - solo) / 2000 + 1);
            s = (uint32_t)tu_below(&rng, live < ns ? live : ns);
        }
        uint64_t r = tu_below(&rng, 100), phy;
        if (r < 50)
            phy = 0x7f000000u + ((uint64_t)s << 20) - 8 * tu_range(&rng, 1, 700);
        else if (r < 85)
            phy = ((uint64_t)1 << 32) + ((uint64_t)s << 16) + tu_below(&rng, 30000);
        else
            phy = 0x10000 + 8 * tu_below(&rng, 4096);
        a[i].transition = t;
        a[i].physical = phy;
        a[i].size = tu_below(&rng, 50) == 0 ? (uint32_t)tu_range(&rng, 1, 9000)
                                             : (uint32_t)(1u << tu_below(&rng, 4));
        a[i].op = (uint8_t)(tu_below(&rng, 3) == 0 ? MH_OP_WRITE : MH_OP_READ);
        a[i].stream = s;
    }
    return a;
}

/* (stream, op, granule) */
typedef struct sog {
    uint64_t w;
    uint32_t s, op;
} sog;
static int cmp_sog(const void *x, const void *y) {
    const sog *a = x, *b = y;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    return a->w < b->w ? -1 : a->w > b->w;
}

/* Every stream node against brute force over the rows of its segments
 * (all: the store's accesses in id order); returns the nodes checked. */
static size_t check_nodes(mh_reader *r, const mh_access *all) {
    size_t nodes = 0;
    for (size_t g = 0; g < r->nsegs; g++) {
        uint64_t L = mh_lowbit(g + 1);
        const mh_seg *seg = tu_seg_of(r, g);
        const mh_section *sec;
        int has = mh_sspan_section(seg, &sec) == MH_OK;
        if (L < 2) {
            CHECKF(!has, "segment %zu at an odd position has a stream node", g);
            continue;
        }
        CHECKF(has, "segment %zu (position %zu) has no stream node", g, g + 1);
        mh_sspan_view v;
        mh_diag d = {0, 0, ""};
        CHECKF(mh_sspan_check(seg, sec, g, r->recs, r->nsegs, &v, &d) == MH_OK,
               "segment %zu: %s", g, d.msg);
        CHECK(v.segments == L);
        /* brute force over the covered rows at 4 KiB */
        size_t cap = 4096, nw = 0;
        sog *want = malloc(cap * sizeof *want);
        CHECK(want);
        for (size_t j = g + 1 - L; j <= g; j++)
            for (uint64_t i = 0; i < r->recs[j].count; i++) {
                const mh_access *x = &all[r->recs[j].id_first + i];
                for (uint64_t w = x->physical >> 12; w <= (x->physical + x->size - 1) >> 12;
                     w++) {
                    if (nw == cap) {
                        cap *= 2;
                        want = realloc(want, cap * sizeof *want);
                        CHECK(want);
                    }
                    want[nw++] = (sog){w, x->stream, x->op};
                }
            }
        qsort(want, nw, sizeof *want, cmp_sog);
        size_t u = 0;
        for (size_t i = 0; i < nw; i++)
            if (u == 0 || cmp_sog(&want[u - 1], &want[i]) != 0)
                want[u++] = want[i];
        /* the entries: exactly the streams, each set at shift 12 */
        size_t i = 0;
        for (uint32_t e = 0; e < v.n; e++) {
            uint32_t st = mhf_load_u32(v.ents + (size_t)e * v.esz + MHF_SSPAN_E_STREAM);
            CHECKF(i < u && want[i].s == st, "node %zu entry %u: stream %u, brute force %u",
                   g, e, st, i < u ? want[i].s : UINT32_MAX);
            mh_aset_view set;
            CHECKF(mh_sspan_set(&v, e, &set) == 12, "node %zu stream %u: shift not 12", g, st);
            for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
                /* brute force's runs of granules of (st, o) */
                size_t k = 0;
                mh_aset_cur c;
                uint32_t run = 0;
                int more = 0;
                if (set.run_count[o]) {
                    mh_aset_run_open(&set, o, 0, &c);
                    more = 1;
                }
                while (i < u && want[i].s == st && want[i].op == o) {
                    uint64_t w0 = want[i].w, w1 = w0;
                    for (i++; i < u && want[i].s == st && want[i].op == o && want[i].w == w1 + 1;
                         i++)
                        w1++;
                    int rc = 0;
                    while (more && (rc = mh_aset_run_step(&c, &d)) == 0) {
                        if (++run >= set.run_count[o]) {
                            more = 0;
                            break;
                        }
                        mh_aset_run_open(&set, o, run, &c);
                    }
                    CHECKF(more && rc == 1, "node %zu stream %u op %u: %zu intervals, brute "
                           "force has more", g, st, o, k);
                    CHECKF(c.lo == w0 << 12 && c.hi == ((w1 + 1) << 12) - 1,
                           "node %zu stream %u op %u interval %zu: [0x%llx, 0x%llx], brute "
                           "force [0x%llx, 0x%llx]", g, st, o, k, (unsigned long long)c.lo,
                           (unsigned long long)c.hi, (unsigned long long)(w0 << 12),
                           (unsigned long long)(((w1 + 1) << 12) - 1));
                    k++;
                }
                int rc = 0;
                while (more && (rc = mh_aset_run_step(&c, &d)) == 0 &&
                       ++run < set.run_count[o])
                    mh_aset_run_open(&set, o, run, &c);
                CHECKF(!more || rc == 0, "node %zu stream %u op %u: more than brute force's "
                       "%zu intervals", g, st, o, k);
            }
        }
        CHECKF(i == u, "node %zu: brute force has stream %u, the node does not", g,
               want[i].s);
        free(want);
        nodes++;
    }
    return nodes;
}

/* One-stream (and two-stream) questions against the oracle, the nodes
 * used (way 0) and ignored. */
static void check_oracle(mh_reader *r, const mh_access *all, size_t n, uint64_t seed) {
    for (int way = 0; way < 2; way++) {
        r->sspan_off = way;
        tu_rng rng = {seed};
        size_t answered = 0;
        for (int q = 0; q < 400; q++) {
            const mh_access *x = &all[tu_below(&rng, n)];
            mh_query qq;
            mh_query_init(&qq);
            uint64_t width = (uint64_t)8 << tu_below(&rng, 20);
            qq.addr_first = x->physical > width / 2 ? x->physical - width / 2 : 0;
            qq.addr_last = qq.addr_first + width - 1;
            qq.ops = 1 + (uint32_t)tu_below(&rng, 3);
            qq.direction = tu_below(&rng, 2) ? MH_BACKWARD : MH_FORWARD;
            qq.start = all[tu_below(&rng, n)].transition;
            uint32_t s[2];
            s[0] = tu_below(&rng, 2) ? x->stream : all[tu_below(&rng, n)].stream;
            s[1] = all[tu_below(&rng, n)].stream;
            qq.streams = s;
            qq.nstreams = 1 + (uint32_t)(tu_below(&rng, 4) == 0);
            size_t max = 1 + tu_below(&rng, 20), ng = 0, nw = 0;
            mh_access got[20], want[20];
            oracle_query oq;
            CHECK_OK(oracle_query_from(&oq, &qq, NULL, 0));
            CHECK_OK(oracle_run(all, n, &oq, want, max, &nw));
            CHECK_OK(mh_query_run(r, &qq, got, max, &ng));
            snprintf(tu_context, sizeof tu_context, "way %d question %d: streams %u/%u, "
                     "[0x%llx, 0x%llx], ops %u, %s from %llu, max %zu", way, q, s[0],
                     qq.nstreams, (unsigned long long)qq.addr_first,
                     (unsigned long long)qq.addr_last, qq.ops, qq.direction ? "bwd" : "fwd",
                     (unsigned long long)qq.start, max);
            CHECK(oracle_compare("one-stream query", got, ng, want, nw) == 0);
            answered += ng > 0;
        }
        CHECKF(answered >= 80, "%zu of 400 one-stream questions had matches", answered);
    }
    r->sspan_off = 0;
}

/* Segments opened by a question of stream `s` on [a, b] from the first
 * (forward) or last (backward) access, on a fresh reader; *got its
 * answers. */
static uint64_t opened_by(const char *dir, int fwd, int off, uint32_t s, uint64_t a,
                          uint64_t b, size_t *got) {
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    r->sspan_off = off;
    /* the whole store's union, built on a first walk, opens every segment
     * whose section 11 node is missing (this trace's scattered heaps pass
     * their budget): not asked, so that the count is the walk's */
    r->union_off = 1;
    mh_query q;
    mh_query_init(&q);
    q.addr_first = a;
    q.addr_last = b;
    q.direction = fwd ? MH_FORWARD : MH_BACKWARD;
    q.start = fwd ? 0 : UINT64_MAX;
    q.streams = &s;
    q.nstreams = 1;
    mh_access out[4];
    CHECK_OK(mh_query_run(r, &q, out, 4, got));
    uint64_t n = atomic_load(&r->segs_opened);
    mh_reader_close(r);
    return n;
}

/* A page of stream 1's stack asked for stream 2, which never touched it:
 * with the stream nodes the walk opens O(log n) segments (the nodes'
 * own), without them every segment whose section 11 does not exclude. */
static void check_opens(const char *dir, size_t nsegs) {
    uint64_t a = 0x7f000000u + ((uint64_t)1 << 20) - 4096, b = a + 4095;
    unsigned lg = 0;
    while ((1ull << lg) < nsegs)
        lg++;
    for (int fwd = 0; fwd < 2; fwd++) {
        size_t got_on = 9, got_off = 9;
        uint64_t on = opened_by(dir, fwd, 0, 2, a, b, &got_on);
        uint64_t off = opened_by(dir, fwd, 1, 2, a, b, &got_off);
        CHECKF(got_on == 0 && got_off == 0, "stream 2 on stream 1's stack: %zu / %zu answers",
               got_on, got_off);
        CHECKF(on <= 2 * lg + 2 && on < off, "%s: %llu segments opened with the stream nodes "
               "(%zu segments), %llu without", fwd ? "forward" : "backward",
               (unsigned long long)on, nsegs, (unsigned long long)off);
    }
}

static void test_store(uint32_t ns, uint64_t seed, size_t solo) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "sspan");
    snprintf(tu_context, sizeof tu_context, "%u streams, seed %llu, %zu accesses of "
             "stream 0 first", ns, (unsigned long long)seed, solo);
    size_t n = 96000, m;
    mh_access *src = make_trace(n, ns, seed, solo);
    mh_access *all = tu_apost_write(dir, src, n, 6000, 400, 0, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    size_t nsegs = r->nsegs;
    size_t nodes = check_nodes(r, all);
    CHECKF(nodes >= nsegs / 2 - 1, "%zu stream nodes checked of %zu segments", nodes, nsegs);
    check_oracle(r, all, m, seed + 2);
    mh_reader_close(r);
    check_opens(dir, nsegs);
    tu_problems p = tu_fsck(dir);
    CHECKF(p.n == 0, "fsck: %d problems: %s", p.n, p.msg);
    free(all);
    tu_rmtree(dir);
}

/* A store without declared streams (stream 0 alone): no stream node. */
static void test_one_stream(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "sspan-one");
    size_t n = 30000, m;
    mh_access *src = make_trace(n, 1, 9, 0);
    mh_access *all = tu_apost_write(dir, src, n, 5000, 400, 0, 1, &m);
    free(src);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    for (size_t g = 0; g < r->nsegs; g++)
        CHECKF(mh_sspan_section(tu_seg_of(r, g), &(const mh_section *){0}) == MH_ENOTFOUND,
               "segment %zu of a one-stream store has a stream node", g);
    check_oracle(r, all, m, 11);
    mh_reader_close(r);
    free(all);
    tu_rmtree(dir);
}

/* ---- damage ------------------------------------------------------------ */
typedef struct dmg {
    const char *name;
    void (*edit)(uint8_t *p, uint64_t size, void *ctx);
    const char *detail; /* in fsck's first problem */
    int structural;     /* a stream question through the node refuses it */
} dmg;

static uint8_t *entry(uint8_t *p, uint32_t e) {
    return p + MHF_SSPAN_HEADER_SIZE + (size_t)e * MHF_SSPAN_ENTRY_SIZE;
}
static void e_count(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_SSPAN_COUNT, 0);
}
static void e_esize(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(p + MHF_SSPAN_ENTRY_SIZE_OFF, 25);
}
static void e_order(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u32(entry(p, 1) + MHF_SSPAN_E_STREAM, mhf_load_u32(entry(p, 0) + MHF_SSPAN_E_STREAM));
}
static void e_shift0(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* shift 0 with a set */
    mhf_store_u32(entry(p, 0) + MHF_SSPAN_E_SHIFT, 0);
}
static void e_offset(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    uint8_t *e = entry(p, 1) + MHF_SSPAN_E_OFFSET;
    mhf_store_u64(e, mhf_load_u64(e) + 1);
}
static void e_reserved(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx;
    mhf_store_u64(p + MHF_SSPAN_RESERVED1, 1);
}
static void e_stream(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* the last entry names a stream with no row */
    uint32_t n = mhf_load_u32(p + MHF_SSPAN_COUNT);
    mhf_store_u32(entry(p, n - 1) + MHF_SSPAN_E_STREAM, 60000);
}
static void e_shift13(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* well formed, its intervals not granules of 8 KiB */
    mhf_store_u32(entry(p, 0) + MHF_SSPAN_E_SHIFT, 13);
}
static void e_interval(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* entry 0's first run starts a granule lower */
    uint8_t *set = p + MHF_SSPAN_HEADER_SIZE +
                   (size_t)mhf_load_u32(p + MHF_SSPAN_COUNT) * MHF_SSPAN_ENTRY_SIZE;
    uint8_t *run0 = set + MHF_ASET_HEADER_SIZE;
    mhf_store_u64(run0 + MHF_ASET_R_LO, mhf_load_u64(run0 + MHF_ASET_R_LO) - 4096);
}
static void e_stale(uint8_t *p, uint64_t size, void *ctx) {
    (void)size, (void)ctx; /* written for other segments */
    mhf_store_u64(p + MHF_SSPAN_ACCESSES, mhf_load_u64(p + MHF_SSPAN_ACCESSES) + 1);
}

static void on_note(void *ctx, const mh_problem *pr) {
    tu_problems *x = ctx;
    if (x->n++ == 0) {
        x->code = pr->code;
        snprintf(x->msg, sizeof x->msg, "%s", pr->message);
    }
}

static void test_damage(void) {
    char dir[4096], copy[4096];
    tu_mkdtemp(dir, sizeof dir, "sspan-dmg");
    size_t n = 40000, m;
    mh_access *src = make_trace(n, 4, 21, 0);
    mh_access *all = tu_apost_write(dir, src, n, 5000, 400, 0, 1, &m);
    free(src);
    static const dmg ds[] = {
        {"count", e_count, "0 entries, not 1", 1},
        {"entry size", e_esize, "entry size 25, this reader knows 24", 1},
        {"order", e_order, "not above the entry before it", 1},
        {"shift 0", e_shift0, "shift 0 with a set", 1},
        {"offset", e_offset, "where the sets before it end at", 1},
        {"reserved", e_reserved, "reserved header field not zero", 1},
        {"stream", e_stream, "has rows in the covered segments and no entry", 0},
        {"shift 13", e_shift13, "the covered segments' granules make", 0},
        {"interval", e_interval, "the covered segments' granules make", 0},
    };
    /* the node of position 8 (segment 7) covers segments 0-7 */
    const char *seg7 = "seg-0000000000000007.mhs";
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        snprintf(tu_context, sizeof tu_context, "damage %s", ds[i].name);
        char name[64];
        snprintf(name, sizeof name, "sspan-dmg-%zu", i);
        tu_problems p = tu_damaged_copy(dir, name, seg7, MHF_SECT_SSPAN, ds[i].edit, copy, sizeof copy);
        CHECKF(p.n >= 1 && p.code == MH_ECORRUPT && strstr(p.msg, ds[i].detail),
               "fsck: %d problems, first %s: %s (want %s)", p.n, mh_error_name(p.code),
               p.msg, ds[i].detail);
        /* stream 2 on stream 1's stack page, forward from the start: the
         * walk's climb asks the stream nodes of positions 2, 4 and 8 */
        mh_reader *r;
        CHECK_OK(mh_reader_open(copy, &r));
        mh_query q;
        mh_query_init(&q);
        q.addr_first = 0x7f000000u + ((uint64_t)1 << 20) - 4096;
        q.addr_last = q.addr_first + 4095;
        q.start = 0;
        uint32_t s = 2;
        q.streams = &s;
        q.nstreams = 1;
        mh_access out[4];
        size_t got;
        int rc = mh_query_run(r, &q, out, 4, &got);
        char msg[MH_ERRMSG_MAX];
        mh_reader_errmsg(r, msg, sizeof msg);
        if (ds[i].structural)
            CHECKF(rc == MH_ECORRUPT && strstr(msg, ds[i].detail) && strstr(msg, seg7),
                   "stream query: %s: %s", mh_error_name(rc), msg);
        else
            CHECKF(rc == MH_OK, "stream query: %s: %s", mh_error_name(rc), msg);
        /* a question without a stream set does not read the section */
        s = 1;
        q.streams = NULL;
        q.nstreams = 0;
        CHECK_OK(mh_query_run(r, &q, out, 4, &got));
        CHECK(got >= 1);
        mh_reader_close(r);
        tu_rmtree(copy);
    }
    /* stale: a note of fsck, not a problem; never used */
    snprintf(tu_context, sizeof tu_context, "damage: stale node");
    tu_mkdtemp(copy, sizeof copy, "sspan-stale");
    tu_copy_dir(dir, copy);
    tu_resum_segment(copy, seg7, MHF_SECT_SSPAN, e_stale, NULL);
    tu_problems p = {0, 0, ""};
    mh_verify_result res = {.struct_size = sizeof res};
    int vrc = mh_verify(copy, 0, on_note, &p, &res);
    CHECKF(vrc == MH_OK && res.problems == 0 && p.n == 1 && p.code == MH_OK /* a note */ &&
               strstr(p.msg, "span stream address set") && strstr(p.msg, "is stale (not used)"),
           "fsck of a stale node: %s, %llu problems, %d lines, first %s", mh_error_name(vrc),
           (unsigned long long)res.problems, p.n, p.msg);
    mh_reader *r;
    CHECK_OK(mh_reader_open(copy, &r));
    check_oracle(r, all, m, 41);
    mh_reader_close(r);
    tu_rmtree(copy);
    /* a byte flipped, sums not made right: the section's sum */
    snprintf(tu_context, sizeof tu_context, "damage: a flipped byte");
    tu_mkdtemp(copy, sizeof copy, "sspan-flip");
    tu_copy_dir(dir, copy);
    tu_flip_section_byte(copy, seg7, MHF_SECT_SSPAN);
    p = tu_fsck(copy);
    CHECKF(p.n >= 1 && p.code == MH_ECHECKSUM, "fsck of a flipped byte: %s: %s",
           mh_error_name(p.code), p.msg);
    free(all);
    tu_rmtree(copy);
    tu_rmtree(dir);
}

/* ---- a real recording --------------------------------------------------- */
static int test_real(const char *memhist, const char *victim) {
    char dir[4096], cut[4200];
    mh_reader *r;
    mh_access *src;
    size_t n;
    uint32_t ns;
    int rc = tu_record_threads(memhist, victim, "sspan-real", dir, sizeof dir, &r, &src, &n, &ns);
    if (rc != 0)
        return rc;
    mh_reader_close(r);
    tu_join(cut, sizeof cut, dir, "cut.mh");
    /* the same accesses in segments of 30,000 */
    size_t m;
    mh_access *all = tu_apost_write(cut, src, n, 30000, 4096, 0, 1, &m);
    free(src);
    CHECK_OK(mh_reader_open(cut, &r));
    size_t nsegs = r->nsegs, nodes = check_nodes(r, all);
    CHECKF(nodes >= 4, "%zu stream nodes in %zu segments", nodes, nsegs);
    check_oracle(r, all, m, 33);
    mh_reader_close(r);
    tu_problems p = tu_fsck(cut);
    CHECKF(p.n == 0, "fsck: %d problems: %s", p.n, p.msg);
    printf("sspan real: %zu accesses in %zu segments, %zu stream nodes: exact, oracle, "
           "fsck clean\n", m, nsegs, nodes);
    free(all);
    tu_rmtree(dir);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "real") == 0)
        return test_real(argv[2], argv[3]);
    test_store(4, 1, 0);
    test_store(6, 2, 20000); /* one-stream segments first: their address sets */
    test_store(40, 3, 6000);
    test_one_stream();
    test_damage();
    printf("sspan: ok\n");
    return 0;
}
