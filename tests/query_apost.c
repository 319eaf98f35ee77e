/*
 * query_apost.c - the address postings (section 10, SPEC.md 9d) used by the
 * query engine (src/query.c fill(): the candidate slices of a narrow range)
 * against the brute-force oracle.
 *
 * Every query is answered three ways on one reader: postings used (the
 * reference reader), postings ignored (mh_reader.apost_off: the address set
 * and summaries as in 2.1), and postings used with the summaries ignored
 * (summary_off 1: a posting that missed a slice could not be covered by
 * them); each answer must be the oracle's. Synthetic traces with a hot
 * stack-like line, a heap, rare addresses, accesses at address 0 and at
 * 2^64 - 1, several streams, pcs and windows, written with small slices in
 * several segments; narrow queries (1 byte .. 16 granules, and ranges
 * of exactly 15 and 16 granules of the segment's shift, where the postings
 * stop serving) anchored on accessed addresses, on gaps between them and at
 * the ends of the space; max 1, 10 and 1000; every op set; both directions;
 * starts by transition and id; end bounds; stream / pc / window filters;
 * resume chains and cursors read in pieces. The test counts the segment
 * visits the postings served (so a run that never took the path fails),
 * and the reader's count of address sets asked after them (only once a
 * listed slice held no match: fewer than the visits served, some passing
 * their segment).
 * A flipped byte in a segment's section: MH_ECHECKSUM for a narrow query,
 * detail naming the address postings, never an answer; a whole-space query
 * (which would not use the section) answers.
 *
 * Usage: query_apost [QUERIES]          synthetic stores
 *        query_apost --real MEMHIST     a qemu recording made with MEMHIST
 *                                       (exit 77 without qemu)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

static const uint32_t stream_ids[] = {0, 1, 33};
#define NSTREAMS (sizeof stream_ids / sizeof stream_ids[0])

typedef struct trace {
    mh_access *all;
    size_t n;
    oracle_window *win;
    size_t nwin;
} trace;

static void make_trace(uint64_t seed, size_t n, trace *tr) {
    tu_rng rng = {seed * 7919 + 11};
    tr->n = n;
    tr->all = calloc(n, sizeof *tr->all);
    CHECK(tr->all != NULL);
    uint64_t t = 1;
    for (size_t i = 0; i < n; i++) {
        mh_access *a = &tr->all[i];
        if (tu_below(&rng, 3) == 0)
            t += 1 + tu_below(&rng, 4);
        a->transition = t;
        a->stream = stream_ids[tu_below(&rng, 8) == 0 ? tu_below(&rng, NSTREAMS) : (i / 3000) % NSTREAMS];
        uint64_t k = tu_below(&rng, 1000);
        /* (few distinct words, so that the postings fit the writer's
         * budget at a fine shift) */
        if (k < 600) /* a hot line, word-aligned and not */
            a->physical = 0x7ffd0000 + tu_below(&rng, 256);
        else if (k < 975) /* a heap, in 8-byte words with gaps */
            a->physical = 0x5000000 + 24 * tu_below(&rng, 600) + tu_below(&rng, 3);
        else if (k < 990) /* rare, scattered */
            a->physical = tu_next(&rng) >> 12;
        else if (k < 995)
            a->physical = tu_below(&rng, 16);
        else
            a->physical = UINT64_MAX - 15 + tu_below(&rng, 16);
        uint64_t room = UINT64_MAX - a->physical + 1; /* 0: the whole 2^64 */
        a->size = 1u << tu_below(&rng, 4);
        if (room && room < a->size)
            a->size = (uint32_t)room;
        a->op = (uint8_t)(tu_below(&rng, 4) == 0 ? MH_OP_WRITE
                          : tu_below(&rng, 10) == 0 ? MH_OP_EXEC : MH_OP_READ);
        a->has_pc = tu_below(&rng, 4) != 0;
        a->pc = a->has_pc ? 0x400000 + 16 * tu_below(&rng, 8) : 0;
    }
}

static void write_store(const char *dir, trace *tr, uint32_t slice, size_t commit) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = slice;
    o.block_accesses = 64;
    o.commit_accesses = commit;
    CHECK(o.address_postings == 1);
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    for (size_t k = 1; k < NSTREAMS; k++) {
        mh_stream_info s;
        mh_stream_info_init(&s);
        s.id = stream_ids[k];
        s.kind = MH_STREAM_THREAD;
        s.tid = 500 + (uint32_t)k;
        CHECK_OK(mh_writer_stream_declare(w, &s));
    }
    tr->nwin = 2;
    tr->win = calloc(tr->nwin, sizeof *tr->win);
    CHECK(tr->win != NULL);
    tr->win[0] = (oracle_window){3, tr->n / 5, tr->n / 2 - tr->n / 5};
    tr->win[1] = (oracle_window){4, tr->n / 2 + 9, tr->n - tr->n / 2 - 9 - 100};
    size_t cuts[] = {tr->n / 5, tr->n / 2, tr->n / 2 + 9, tr->n - 100, tr->n};
    size_t i = 0;
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        while (i < cuts[k]) {
            size_t len = cuts[k] - i < 999 ? cuts[k] - i : 999;
            CHECK_OK(mh_writer_append_batch(w, tr->all + i, len, NULL));
            i += len;
        }
        if (k == 0 || k == 2)
            CHECK_OK(mh_writer_window_begin(w, k == 0 ? 3 : 4));
        else if (k == 1 || k == 3)
            CHECK_OK(mh_writer_window_end(w));
    }
    CHECK_OK(mh_writer_close(w));
}

/* The postings' shift of every segment (all must have the section). */
static uint32_t check_present(const mh_reader *r, uint32_t *max_shift) {
    uint32_t min_shift = 64;
    *max_shift = 0;
    for (size_t i = 0; i < r->nlive; i++) {
        const mh_seg *seg = NULL;
        CHECK_OK(mh_reader_seg(r, r->live[i], &seg, NULL));
        mh_apost_view v;
        mh_diag d = {0, 0, ""};
        int rc = mh_apost_view_get(seg, &v, &d);
        CHECKF(rc == MH_OK, "segment %s: address postings: %s %s", seg->name,
               mh_error_name(rc), d.msg);
        if (v.shift < min_shift)
            min_shift = v.shift;
        if (v.shift > *max_shift)
            *max_shift = v.shift;
    }
    return min_shift;
}

/* How many live segments the postings serve q's range in. */
static size_t served(const mh_reader *r, const mh_query *q) {
    size_t k = 0;
    uint64_t *bits = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < r->nlive; i++) {
        const mh_seg *seg = NULL;
        CHECK_OK(mh_reader_seg(r, r->live[i], &seg, NULL));
        mh_apost_iter it;
        mh_diag d = {0, 0, ""};
        int rc = mh_apost_query(seg, q->addr_first, q->addr_last, q->ops, &it, &bits, &cap, &d);
        CHECKF(rc >= 0, "mh_apost_query: %s %s", mh_error_name(rc), d.msg);
        k += rc == 1;
    }
    free(bits);
    return k;
}

static const char *const way_name[3] = {"postings", "postings off", "postings, summaries off"};

static void set_way(mh_reader *r, int way) {
    r->apost_off = way == 1;
    r->summary_off = way == 2;
}

/* q's answer each way against the oracle's; returns the oracle's count. */
static size_t check_ways(mh_reader *r, const trace *tr, const mh_query *q, size_t max,
                         mh_access *got, mh_access *want) {
    oracle_query oq;
    int orc = oracle_query_from(&oq, q, tr->win, tr->nwin);
    size_t nw = 0;
    if (orc == MH_OK)
        CHECK_OK(oracle_run(tr->all, tr->n, &oq, want, max, &nw));
    for (int way = 0; way < 3; way++) {
        set_way(r, way);
        size_t ng = 0;
        int rc = mh_query_run(r, q, got, max, &ng);
        if (orc == MH_OK)
            oracle_format_query(tu_context, sizeof tu_context, &oq);
        CHECKF(rc == orc, "%s: %s, want %s", way_name[way], mh_error_name(rc),
               mh_error_name(orc));
        if (rc == MH_OK && oracle_compare(way_name[way], got, ng, want, nw) != 0)
            tu_fail(__FILE__, __LINE__, "%s: answers differ (max %zu)", way_name[way], max);
    }
    set_way(r, 0);
    return nw;
}

/* A cursor in pieces of 1 .. 5 up to limit, and a resume chain of max-1
 * runs (each from the last id returned), each way, against the oracle. */
static void check_resume(mh_reader *r, const trace *tr, const mh_query *q, size_t limit,
                         tu_rng *rng, mh_access *got, mh_access *want) {
    oracle_query oq;
    if (oracle_query_from(&oq, q, tr->win, tr->nwin) != MH_OK)
        return;
    size_t nw = 0;
    CHECK_OK(oracle_run(tr->all, tr->n, &oq, want, limit, &nw));
    oracle_format_query(tu_context, sizeof tu_context, &oq);
    for (int way = 0; way < 3; way++) {
        set_way(r, way);
        mh_cursor *cur = NULL;
        CHECK_OK(mh_cursor_open(r, q, &cur));
        size_t ng = 0;
        for (;;) {
            size_t piece = 1 + (size_t)tu_below(rng, 5), k = 0;
            if (piece > limit - ng)
                piece = limit - ng;
            if (piece == 0)
                break;
            CHECK_OK(mh_cursor_next(cur, got + ng, piece, &k));
            ng += k;
            if (k < piece)
                break;
        }
        mh_cursor_close(cur);
        if (oracle_compare(way_name[way], got, ng, want, nw) != 0)
            tu_fail(__FILE__, __LINE__, "cursor, %s: answers differ", way_name[way]);
        /* the resume chain: start after the last id returned */
        mh_query c = *q;
        ng = 0;
        while (ng < limit) {
            size_t k = 0;
            CHECK_OK(mh_query_run(r, &c, got + ng, 1, &k));
            if (k == 0)
                break;
            c.start_kind = MH_FROM_ID;
            c.start = got[ng].id;
            ng++;
        }
        if (oracle_compare(way_name[way], got, ng, want, nw) != 0)
            tu_fail(__FILE__, __LINE__, "resume chain, %s: answers differ", way_name[way]);
    }
    set_way(r, 0);
}

/* A narrow range around x: 1 byte .. 16 granules of 2^shift, or exactly 15
 * or 16 granules apart (the postings serve below 16). */
static void narrow_range(tu_rng *rng, uint64_t x, uint32_t shift, mh_query *q) {
    uint64_t g = UINT64_C(1) << shift;
    uint64_t lo, hi;
    switch (tu_below(rng, 6)) {
    case 0: /* one byte */
        lo = hi = x;
        break;
    case 1: /* an aligned 8-byte word */
        lo = x & ~UINT64_C(7);
        hi = lo + 7;
        break;
    case 2: /* a few bytes either side */
        lo = x - (x < 5 ? x : tu_below(rng, 5));
        hi = lo + tu_below(rng, 24);
        break;
    case 3: { /* up to 16 granules, unaligned */
        uint64_t w = tu_below(rng, 16 * g);
        lo = x - (x < w / 2 ? x : w / 2);
        hi = lo + w;
        break;
    }
    case 4: /* granules lo >> shift .. + 15: served */
        lo = (x >> shift << shift) + tu_below(rng, g);
        hi = ((lo >> shift) + 15) << shift | tu_below(rng, g);
        break;
    default: /* + 16: not served, the summaries answer */
        lo = (x >> shift << shift) + tu_below(rng, g);
        hi = ((lo >> shift) + 16) << shift | tu_below(rng, g);
        break;
    }
    if (hi < lo) /* wrapped past 2^64 - 1 */
        hi = UINT64_MAX;
    q->addr_first = lo;
    q->addr_last = hi;
}

static size_t random_queries(mh_reader *r, const trace *tr, uint32_t shift, size_t count,
                             uint64_t seed, size_t *nserved) {
    tu_rng rng = {seed};
    static const size_t maxes[] = {1, 10, 1000};
    mh_access *got = malloc(1000 * sizeof *got), *want = malloc(1000 * sizeof *want);
    CHECK(got && want);
    size_t hits = 0;
    *nserved = 0;
    for (size_t k = 0; k < count; k++) {
        mh_query q;
        mh_query_init(&q);
        const mh_access *anchor = &tr->all[tu_below(&rng, tr->n)];
        uint64_t x = anchor->physical;
        uint64_t how = tu_below(&rng, 10);
        if (how < 2) /* a gap near an access: most never accessed */
            x += anchor->size + tu_below(&rng, 40);
        else if (how == 2)
            x = tu_below(&rng, 2) ? tu_below(&rng, 8) : UINT64_MAX - tu_below(&rng, 8);
        narrow_range(&rng, x, shift, &q);
        q.ops = 1 + (uint32_t)tu_below(&rng, MH_OPS_ALL);
        q.direction = tu_below(&rng, 2) ? MH_FORWARD : MH_BACKWARD;
        const mh_access *at = &tr->all[tu_below(&rng, tr->n)];
        size_t ati = (size_t)(at - tr->all);
        if (tu_below(&rng, 2)) {
            q.start_kind = MH_FROM_TRANSITION;
            q.start = at->transition + (tu_below(&rng, 4) == 0 ? tu_below(&rng, 3) : 0);
        } else {
            q.start_kind = MH_FROM_ID;
            q.start = tu_below(&rng, 40) == 0 ? (tu_below(&rng, 2) ? 0 : tr->n + 5) : ati;
        }
        if (tu_below(&rng, 4) == 0) { /* an end bound, near or far */
            size_t d = (size_t)tu_below(&rng, tu_below(&rng, 2) ? 3000 : tr->n);
            size_t e = q.direction == MH_FORWARD ? (ati + d < tr->n ? ati + d : tr->n - 1)
                                                 : (ati > d ? ati - d : 0);
            if (tu_below(&rng, 2)) {
                q.end_kind = MH_END_TRANSITION;
                q.end = tr->all[e].transition;
            } else {
                q.end_kind = MH_END_ID;
                q.end = e;
            }
        }
        uint32_t set[8];
        if (tu_below(&rng, 3) == 0)
            tu_random_filters(&rng, tr->all, tr->n, tr->win, tr->nwin, &q, set);
        size_t max = maxes[tu_below(&rng, 3)];
        *nserved += served(r, &q) > 0;
        if (check_ways(r, tr, &q, max, got, want))
            hits++;
        if (k % 8 == 0)
            check_resume(r, tr, &q, 1 + (size_t)tu_below(&rng, 40), &rng, got, want);
    }
    free(got);
    free(want);
    return hits;
}

/* A byte of the first segment's section flipped (sums left): a narrow query
 * reaching it fails with MH_ECHECKSUM naming the postings. */
static void check_damage(const char *dir, const trace *tr) {
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    const mh_seg *seg = NULL;
    CHECK_OK(mh_reader_seg(r, r->live[0], &seg, NULL));
    const mh_section *sec;
    CHECK_OK(mh_seg_section(seg, MHF_SECT_APOST, &sec));
    uint64_t at = sec->offset + sec->size / 2;
    char path[4096], name[MHF_SEGMENT_NAME_LEN + 1];
    tu_join(path, sizeof path, dir, seg->name);
    /* seg is the closed reader's: its name is kept */
    snprintf(name, sizeof name, "%s", seg->name);
    mh_reader_close(r);
    size_t len = 0;
    unsigned char *b = tu_read_file(path, &len);
    CHECK(b && at < len);
    b[at] ^= 0x10;
    tu_write_file(path, b, len);
    free(b);
    CHECK_OK(mh_reader_open(dir, &r));
    mh_query q;
    mh_query_init(&q);
    q.start_kind = MH_FROM_ID;
    q.start = 0;
    q.addr_first = tr->all[0].physical;
    q.addr_last = q.addr_first + 7;
    mh_access out[4];
    size_t n = 99;
    CHECK_RC(mh_query_run(r, &q, out, 4, &n), MH_ECHECKSUM);
    CHECK(n == 0);
    char msg[MH_ERRMSG_MAX];
    mh_reader_errmsg(r, msg, sizeof msg);
    CHECKF(strstr(msg, "address postings") && strstr(msg, name), "detail: %s", msg);
    /* a range too wide for the postings neither reads nor checks them:
     * answered (SPEC 9d: refused only by the queries that would use it) */
    mh_query wide = q;
    wide.addr_first = 0;
    wide.addr_last = UINT64_MAX;
    tu_check_query(r, tr->all, tr->n, &wide, 4);
    /* ignored, the same store answers (the oracle's answer) */
    r->apost_off = 1;
    tu_check_query(r, tr->all, tr->n, &q, 4);
    mh_reader_close(r);
}

/* The address set asked after the postings (query.c fill, SPEC 14 step
 * 2): never for a question answered in its first listed slice (1 byte of
 * an access, forward after the id before it: the access's own slice);
 * and, on a store where a segment has a set, it passes segments for the
 * never-accessed byte just past an access, whose word the postings list. */
static void check_late_aset(mh_reader *r, const trace *tr, uint64_t seed) {
    tu_rng rng = {seed};
    uint64_t asks0 = atomic_load(&r->aset_late_asks);
    for (size_t k = 0; k < 200; k++) {
        size_t i = 1 + (size_t)tu_below(&rng, tr->n - 1);
        const mh_access *x = &tr->all[i];
        mh_query q;
        mh_query_init(&q);
        q.addr_first = q.addr_last = x->physical;
        q.ops = 1u << x->op;
        q.direction = MH_FORWARD;
        q.start_kind = MH_FROM_ID;
        q.start = i - 1;
        CHECK(tu_check_query(r, tr->all, tr->n, &q, 1) == 1);
    }
    CHECKF(atomic_load(&r->aset_late_asks) == asks0,
           "address set asked %llu times by questions answered in their first listed slice",
           (unsigned long long)(atomic_load(&r->aset_late_asks) - asks0));
    int has_set = 0;
    for (size_t j = 0; j < r->nlive; j++) {
        const mh_seg *seg = NULL;
        const mh_section *sec;
        CHECK_OK(mh_reader_seg(r, r->live[j], &seg, NULL));
        has_set |= mh_seg_section(seg, MHF_SECT_ASET, &sec) == MH_OK;
    }
    uint64_t passes0 = atomic_load(&r->aset_late_passes);
    size_t never = 0;
    for (size_t k = 0; k < 2000 && never < 100; k++) {
        const mh_access *x = &tr->all[tu_below(&rng, tr->n)];
        if (x->physical > UINT64_MAX - x->size)
            continue;
        uint64_t b = x->physical + x->size; /* the byte past it */
        size_t j = 0;
        for (; j < tr->n; j++) {
            const mh_access *y = &tr->all[j];
            if (y->op == x->op && y->physical <= b && y->physical + (y->size - 1) >= b)
                break;
        }
        if (j < tr->n)
            continue; /* accessed: not the case asked here */
        never++;
        mh_query q;
        mh_query_init(&q);
        q.addr_first = q.addr_last = b;
        q.ops = 1u << x->op;
        q.direction = tu_below(&rng, 2) ? MH_FORWARD : MH_BACKWARD;
        q.start_kind = MH_FROM_TRANSITION;
        q.start = q.direction == MH_FORWARD ? 0 : UINT64_MAX;
        CHECK(tu_check_query(r, tr->all, tr->n, &q, 1) == 0);
    }
    uint64_t passes = atomic_load(&r->aset_late_passes) - passes0;
    printf("  %zu never-accessed bytes past an access: %llu segments passed by the address "
           "set after the postings (a segment with a set: %s)\n", never,
           (unsigned long long)passes, has_set ? "yes" : "no");
    CHECK(never > 0);
    if (has_set)
        CHECK(passes > 0);
}

static void run_synthetic(size_t queries) {
    static const struct {
        uint64_t seed;
        size_t n;
        uint32_t slice;
        size_t commit;
    } cfg[] = {{1, 60000, 1000, 20000}, {2, 40000, 333, 0}};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        char dir[4096];
        tu_mkdtemp(dir, sizeof dir, "query-apost");
        trace tr = {0};
        make_trace(cfg[c].seed, cfg[c].n, &tr);
        write_store(dir, &tr, cfg[c].slice, cfg[c].commit);
        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(dir, &r));
        uint32_t maxs, shift = check_present(r, &maxs);
        size_t ns = 0;
        size_t hits = random_queries(r, &tr, maxs, queries, cfg[c].seed * 31, &ns);
        uint64_t asks = atomic_load(&r->aset_late_asks), passes = atomic_load(&r->aset_late_passes);
        printf("store %zu: %zu accesses, %zu segments, shift %u..%u: %zu queries, %zu with "
               "matches, %zu served by the postings; address set asked after them %llu "
               "times, %llu segments passed\n", c, tr.n, r->nlive, shift, maxs,
               queries, hits, ns, (unsigned long long)asks, (unsigned long long)passes);
        CHECK(hits > queries / 4);
        CHECK(ns > queries / 2);
        /* the set is asked where a listed slice held no match (gaps next
         * to accessed words) and passes segments there, but not at every
         * segment the postings served: one answered in its first listed
         * slice never asks it */
        CHECK(asks >= passes);
        check_late_aset(r, &tr, cfg[c].seed * 41);
        mh_reader_close(r);
        if (c == 0)
            check_damage(dir, &tr);
        free(tr.all);
        free(tr.win);
        tu_rmtree(dir);
    }
}

/* The run marks of the address sets and postings (aset_read.c,
 * apost_read.c) come out of the reader's budget, its cache option: every
 * opened segment's mark tables and the pages of them its queries touched
 * are charged, and (since 1.10.4) the postings' checked-run flags and run
 * search tops, (since 1.13.5) the slices' first groups and op chunks and the id map's
 * and id transitions' checked groups, what is left is the
 * option less those, and with no budget (0) none is kept. */
static void check_marks_budget(mh_reader *r, int64_t budget, int64_t *marks_out,
                               int64_t *bits_out) {
    int64_t spent = 0, marks = 0;
    size_t with = 0;
    for (size_t i = 0; i < r->nlive; i++) {
        if (atomic_load(&r->seg_state[r->live[i]]) != MH_SEG_OPEN)
            continue;
        const mh_seg *seg = &r->segs[r->live[i]];
        const mh_marks *am = atomic_load(&seg->aset_marks), *pm = atomic_load(&seg->apost_marks);
        if (am) {
            mh_aset_view av;
            CHECK_OK(mh_aset_view_get(seg, &av, NULL));
            CHECK(am->runs == (av.nruns ? av.nruns : 1) && am->words == 6);
            spent += (int64_t)mh_marks_bytes(am);
            marks += (int64_t)mh_marks_bytes(am);
            with++;
        }
        if (pm) {
            mh_apost_view pv;
            CHECK_OK(mh_apost_view_get(seg, &pv, NULL));
            CHECK(pm->runs == (pv.nruns ? pv.nruns : 1) && pm->words == 3);
            spent += (int64_t)mh_marks_bytes(pm);
            marks += (int64_t)mh_marks_bytes(pm);
            with++;
        }
        if (atomic_load(&seg->apost_run_ok)) { /* checked postings runs (1.10.4) */
            mh_apost_view pv;
            CHECK_OK(mh_apost_view_get(seg, &pv, NULL));
            spent += (int64_t)(pv.nruns ? pv.nruns : 1);
            with++;
        }
        if (atomic_load(&seg->apost_top)) { /* the run searches' tops (1.10.4): an aid */
            spent += (int64_t)MH_APOST_TOP_BYTES;
            marks += (int64_t)MH_APOST_TOP_BYTES;
            with++;
        }
        if (atomic_load(&seg->slice_memo)) { /* the slices' first id-map and
                                                 id-transition groups and op
                                                 chunks (1.13.5): an aid */
            spent += (int64_t)((size_t)MH_MEMO_KINDS * seg->nslices * sizeof(uint32_t));
            marks += (int64_t)((size_t)MH_MEMO_KINDS * seg->nslices * sizeof(uint32_t));
            with++;
        }
        if (atomic_load(&seg->idmap_grp_ok)) { /* checked id map groups (1.13.5) */
            mh_idmap_view mv;
            CHECK_OK(mh_idmap_view_get(seg, &mv, NULL));
            spent += (int64_t)((mv.ngroups + 63) / 64 ? (mv.ngroups + 63) / 64 : 1) * 8;
            with++;
        }
        if (atomic_load(&seg->idtime_grp_ok)) { /* checked id transition groups (1.13.5) */
            mh_idtime_view tv;
            CHECK_OK(mh_idtime_view_get(seg, &tv, NULL));
            spent += (int64_t)((tv.ngroups + 63) / 64 ? (tv.ngroups + 63) / 64 : 1) * 8;
            with++;
        }
        if (atomic_load(&seg->block_ok)) { /* the checked-blocks bitmap (since 1.7) */
            spent += (int64_t)((seg->nblocks + 63) / 64) * 8;
            with++;
        }
        if (atomic_load(&seg->aset_run_ok)) { /* checked runs of the sets (1.9.2) */
            mh_aset_view av;
            CHECK_OK(mh_aset_view_get(seg, &av, NULL));
            size_t words = ((size_t)av.nruns + 63) / 64;
            spent += (int64_t)(words ? words : 1) * 8;
            with++;
        }
        if (atomic_load(&seg->span_run_ok)) {
            const mh_section *ss;
            CHECK_OK(mh_seg_section(seg, MHF_SECT_SPAN, &ss));
            uint32_t nr = mhf_load_u32(seg->base + ss->offset + MHF_SPAN_HEADER_SIZE +
                                       MHF_ASET_RUN_COUNT);
            size_t words = ((size_t)nr + 63) / 64;
            spent += (int64_t)(words ? words : 1) * 8;
            with++;
        }
        for (unsigned kind = 0; kind < 2; kind++) /* summaries' checked entries (1.9.2) */
            if (atomic_load(&seg->summary_post_ok[kind])) {
                mh_sum_view sv;
                CHECK_OK(mh_summary_view(seg, kind, &sv, NULL));
                size_t words = ((size_t)sv.nentries + 63) / 64;
                spent += (int64_t)(words ? words : 1) * 8;
                with++;
            }
        const mh_psum_tab *pt = atomic_load(&seg->psum);
        if (pt) { /* the piece sums' table and checked bits (since 1.8) */
            spent += (int64_t)(sizeof *pt + (size_t)((pt->nsums + 63) / 64) * 8);
            with++;
        }
        CHECKF(budget > 0 || (!atomic_load(&seg->aset_marks) && !atomic_load(&seg->apost_marks) &&
                              !atomic_load(&seg->apost_run_ok) && !atomic_load(&seg->apost_top) &&
                              !atomic_load(&seg->slice_memo) && !atomic_load(&seg->idmap_grp_ok) &&
                              !atomic_load(&seg->idtime_grp_ok) &&
                              !atomic_load(&seg->block_ok) && !pt &&
                              !atomic_load(&seg->summary_post_ok[0]) &&
                              !atomic_load(&seg->summary_post_ok[1]) &&
                              !atomic_load(&seg->aset_run_ok) && !atomic_load(&seg->span_run_ok)),
               "segment %zu keeps marks without a budget", i);
    }
    CHECKF(budget == 0 || with > 0, "no segment kept marks with a budget of %lld",
           (long long)budget);
    CHECKF(atomic_load(&r->marks_left) == budget - spent,
           "marks budget left %lld, expected %lld - %lld", (long long)atomic_load(&r->marks_left),
           (long long)budget, (long long)spent);
    /* run marks stop at the floor: a quarter stays for the check bits */
    CHECKF(marks <= budget - budget / 4, "run marks took %lld of a %lld-byte budget",
           (long long)marks, (long long)budget);
    if (marks_out)
        *marks_out = marks;
    if (bits_out)
        *bits_out = spent - marks;
}

/* A small qemu recording (sort of a generated file), rewritten into several
 * segments of small slices, queried the three ways. */
static int run_real(const char *memhist, size_t queries) {
    char dir[4096], rec[4096], multi[4096];
    tu_mkdtemp(dir, sizeof dir, "query-apost-real");
    tu_join(multi, sizeof multi, dir, "multi.mh");
    int rc = tu_record_sort(memhist, dir, 2000, 7919, 100003, rec, sizeof rec, "query_apost --real");
    if (rc != 0) {
        tu_rmtree(dir);
        return rc;
    }
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(rec, &r));
    trace tr = {0};
    tr.all = tu_read_all(r, &tr.n);
    mh_reader_close(r);
    CHECK(tr.n > 100000);
    for (size_t i = 0; i < tr.n; i++) /* one stream: none declared below */
        tr.all[i].stream = 0;
    /* several segments of 4096-access slices: postings per segment */
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 4096;
    o.commit_accesses = tr.n / 6 + 1;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(multi, MH_CREATE, &o, &w));
    for (size_t i = 0; i < tr.n; i += 4096)
        CHECK_OK(mh_writer_append_batch(w, tr.all + i, tr.n - i < 4096 ? tr.n - i : 4096, NULL));
    CHECK_OK(mh_writer_close(w));
    for (size_t i = 0; i < tr.n; i++) /* the oracle's trace: ids as rewritten */
        tr.all[i].id = i;
    CHECK_OK(mh_reader_open(multi, &r));
    uint32_t maxs, shift = check_present(r, &maxs);
    size_t ns = 0;
    size_t hits = random_queries(r, &tr, maxs, queries, 4243, &ns);
    printf("real: %zu accesses, %zu segments, shift %u..%u: %zu queries, %zu with matches, "
           "%zu served by the postings\n", tr.n, r->nlive, shift, maxs, queries, hits, ns);
    CHECK(hits > queries / 4);
    CHECK(ns > queries / 2);
    check_late_aset(r, &tr, 4247);
    int64_t marks = 0, bits = 0;
    check_marks_budget(r, (int64_t)MH_READER_CACHE_DEFAULT, &marks, &bits);
    mh_reader_close(r);
    /* no budget (a cache of 0 bytes): no segment keeps marks, and every
     * answer is still the oracle's */
    CHECK_OK(mh_reader_open(multi, &r));
    CHECK_OK(mh_reader_set_cache(r, 0));
    random_queries(r, &tr, maxs, queries / 4 + 1, 4243, &ns);
    check_marks_budget(r, 0, NULL, NULL);
    mh_reader_close(r);
    /* a budget the run marks overflow: they stop at its floor, and every
     * segment still finds room for its check bits (the piece sums' table:
     * without it its sections would be hashed whole), the answers the
     * oracle's. 1.9.0 charged each segment's whole marks arrays up front:
     * the default budget was spent by the 17th segment of 10^9 accesses,
     * and the later ones lost their check bits too. */
    int64_t small = bits * 4 + 4096;
    printf("real: marks %lld bytes, check bits %lld bytes; a budget of %lld\n",
           (long long)marks, (long long)bits, (long long)small);
    CHECKF(marks > small, "the marks (%lld bytes) fit the small budget (%lld)",
           (long long)marks, (long long)small);
    CHECK_OK(mh_reader_open(multi, &r));
    CHECK_OK(mh_reader_set_cache(r, (size_t)small));
    random_queries(r, &tr, maxs, queries, 4243, &ns);
    int64_t marks2 = 0, bits2 = 0;
    check_marks_budget(r, small, &marks2, &bits2);
    CHECK(marks2 > 0);
    for (size_t i = 0; i < r->nlive; i++) {
        const mh_seg *seg = &r->segs[r->live[i]];
        const mh_section *sec;
        if (atomic_load(&r->seg_state[r->live[i]]) == MH_SEG_OPEN &&
            mh_seg_section(seg, MHF_SECT_PSUM, &sec) == MH_OK)
            CHECKF(atomic_load(&seg->psum_state) == 1 && atomic_load(&seg->psum),
                   "segment %zu lost its piece sums' table to the run marks", i);
    }
    mh_reader_close(r);
    free(tr.all);
    tu_rmtree(dir);
    return 0;
}

/* A rw question searches, in a slice the postings list, only the ops
 * whose own postings list it (query.c fill). One slice: writes go to the
 * 31 words around x + 32 (one chunk spanning them), reads hit x + 32
 * (never written) and many lines above them (so
 * that the write rows, last in the slice, lie in another block). A rw point
 * question on the read word must decode the blocks the read question
 * decodes and no more: the write chunk spans the word, so a search of the
 * writes would decode its block for no match. Answers: the oracle's. */
static void check_ops_narrowed(void) {
    const size_t n = 1u << 16;
    const uint64_t x = 0x7f0000001000ull;
    mh_access *all = calloc(n, sizeof *all);
    CHECK(all != NULL);
    for (size_t i = 0; i < n; i++) {
        mh_access *a = &all[i];
        a->transition = 1 + i;
        a->size = 8;
        if (i % 512 < 3) { /* the words around x + 32, never it */
            uint64_t j = (i / 512 * 2 + i % 512) % 31;
            a->op = MH_OP_WRITE;
            a->physical = i % 512 == 2 ? x + 65536 : x + (j < 4 ? j : j + 1) * 8;
        } else if (i % 512 < 5) {
            a->op = MH_OP_READ;
            a->physical = x + 32;
        } else {
            a->op = MH_OP_READ;
            a->physical = 0x7f1000000000ull + (uint64_t)(i % 4096) * 64;
        }
        a->linear = a->physical;
    }
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "apost-narrow");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = (uint32_t)n;
    o.chunk_min_accesses = 8192; /* few chunks: the writes' gaps merged */
    tu_write_store(dir, &o, all, n);
    uint64_t dec[2];
    for (int k = 0; k < 2; k++) {
        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(dir, &r));
        mh_query q;
        mh_query_init(&q);
        q.start_kind = MH_FROM_TRANSITION;
        q.start = n / 3;
        q.direction = MH_FORWARD;
        q.addr_first = x + 32;
        q.addr_last = x + 39;
        q.ops = k ? MH_OPS_READ | MH_OPS_WRITE : MH_OPS_READ;
        uint64_t before = atomic_load(&r->blocks_decoded);
        CHECK(tu_check_query(r, all, n, &q, 1) == 1);
        dec[k] = atomic_load(&r->blocks_decoded) - before;
        mh_reader_close(r);
    }
    CHECKF(dec[0] >= 1 && dec[1] == dec[0],
           "rw point question decoded %llu blocks, the read question %llu: the "
           "write chunk spanning the word was searched",
           (unsigned long long)dec[1], (unsigned long long)dec[0]);
    printf("  ops narrowed: rw point question decoded %llu block(s), as the read one\n",
           (unsigned long long)dec[1]);
    tu_rmtree(dir);
    free(all);
}

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "--real")) {
        int rc = run_real(argv[2], argc > 3 ? strtoull(argv[3], NULL, 10) : 1500);
        if (rc == 0)
            printf("query_apost --real: ok\n");
        return rc;
    }
    size_t queries = argc > 1 ? strtoull(argv[1], NULL, 10) : 1500;
    run_synthetic(queries);
    check_ops_narrowed();
    printf("query_apost: ok\n");
    return 0;
}
