/*
 * idmap_query.c - the id-order path of the query engine (src/query_idmap.c,
 * SPEC.md 14 step 2b) against the brute-force oracle.
 *
 * Every query is answered three ways on one reader: forced through the id
 * order path wherever a segment has an id map (mh_reader.idmap_off -1),
 * never through it (1: the chunk walk of steps 3-6), and by the reference
 * reader's cost choice (0); each answer must be the oracle's. Synthetic
 * traces of several streams (masks alias), with a pc on most accesses and
 * windows, written with small slices (many slices, a label group each) and
 * with slices of several label groups; queries over the whole space, 1 MiB
 * and 4 KiB, max 1, 10 and 100, every op set, both directions, start by
 * transition and by id, end bounds of both kinds, stream / pc / window
 * filters, plain runs and cursors read in small pieces (the label group
 * kept between calls). Then a real recording (qemu, made by the test;
 * exit 77 without qemu) the same way, and corrupt id maps: a label
 * rewritten to another chunk (section sums fixed) must give MH_ECORRUPT,
 * never a wrong answer or a crash. Label groups are cached with the decoded
 * blocks: a repeated query decodes none (mh_reader.idmap_groups_decoded).
 *
 * Usage: idmap_query [QUERIES]          synthetic traces and corrupt labels
 *        idmap_query --real MEMHIST     a qemu recording made with MEMHIST
 */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "seg_edit.h"
#include "testutil.h"

#define IDMAP_SECTION 7 /* SPEC.md 9a */

typedef struct config {
    const char *name;
    uint64_t seed;
    size_t total;
    uint32_t slice, block, chunk_min;
    int commits;
} config;

static const config configs[] = {
    {"small slices", 1, 40000, 300, 64, 4, 3},
    {"slices of several label groups", 2, 120000, 30000, 128, 16, 1},
};

static const uint32_t stream_ids[] = {0, 1, 33, 65, 100};
#define NSTREAMS (sizeof stream_ids / sizeof stream_ids[0])
static const uint64_t pcs[] = {0x400000, 0x400010, 0x401000, 0x7fff0000};
#define NPCS (sizeof pcs / sizeof pcs[0])

typedef struct trace {
    mh_access *all;
    size_t n;
    oracle_window *win;
    size_t nwin;
} trace;

static void make_trace(const config *c, trace *tr) {
    tu_rng rng = {c->seed * 7919 + 17};
    tr->n = c->total;
    tr->all = calloc(tr->n, sizeof *tr->all);
    CHECK(tr->all != NULL);
    uint64_t t = tu_below(&rng, 1000);
    uint32_t cur = 0;
    size_t left = 0;
    /* a stack-like hot spot, a heap and a sparse region: 1 MiB and 4 KiB
     * ranges around them hold several chunks, the whole space all */
    static const uint64_t clusters[] = {0x1000, 0x7fff00000000ull, 0x10000000ull};
    for (size_t i = 0; i < tr->n; i++) {
        mh_access *a = &tr->all[i];
        uint64_t r = tu_below(&rng, 100);
        if (r < 40)
            t += 1;
        else if (r < 41)
            t += tu_below(&rng, 1u << 16);
        a->transition = t;
        if (left == 0) {
            cur = stream_ids[tu_below(&rng, NSTREAMS)];
            left = 1 + tu_below(&rng, 2000);
        }
        left--;
        a->stream = tu_below(&rng, 4) ? cur : stream_ids[tu_below(&rng, NSTREAMS)];
        size_t cl = tu_below(&rng, 8);
        cl = cl < 5 ? 0 : cl < 7 ? 1 : 2;
        a->physical = clusters[cl] + tu_below(&rng, cl == 0 ? 1u << 12 : 1u << 21);
        a->size = 1 + (uint32_t)tu_below(&rng, 8);
        a->op = (uint8_t)tu_below(&rng, MH_OP_COUNT);
        a->has_linear = tu_below(&rng, 4) != 0;
        a->linear = a->has_linear ? a->physical ^ 0x5000 : 0;
        a->has_pc = tu_below(&rng, 10) < 7;
        a->pc = a->has_pc ? pcs[tu_below(&rng, NPCS)] : 0;
    }
}

static void write_store(const char *dir, const config *c, trace *tr) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = c->slice;
    o.block_accesses = c->block;
    o.chunk_min_accesses = c->chunk_min;
    o.commit_accesses = 0;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    for (size_t k = 1; k < NSTREAMS; k++) {
        mh_stream_info s;
        mh_stream_info_init(&s);
        s.id = stream_ids[k];
        s.kind = MH_STREAM_THREAD;
        s.tid = 1000 + k;
        CHECK_OK(mh_writer_stream_declare(w, &s));
    }
    /* windows: [n/10, n/3), an empty one at n/2, [n/2 + 7, 9n/10) */
    tr->nwin = 3;
    tr->win = calloc(tr->nwin, sizeof *tr->win);
    CHECK(tr->win != NULL);
    tr->win[0] = (oracle_window){5, tr->n / 10, tr->n / 3 - tr->n / 10};
    tr->win[1] = (oracle_window){6, tr->n / 2, 0};
    tr->win[2] = (oracle_window){9, tr->n / 2 + 7, tr->n * 9 / 10 - tr->n / 2 - 7};
    size_t cuts[] = {tr->n / 10, tr->n / 3, tr->n / 2, tr->n / 2 + 7, tr->n * 9 / 10, tr->n};
    tu_rng rng = {c->seed * 101 + 3};
    size_t i = 0;
    int commits = 0;
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        while (i < cuts[k]) {
            size_t len = 1 + (size_t)tu_below(&rng, 700);
            if (i + len > cuts[k])
                len = cuts[k] - i;
            CHECK_OK(mh_writer_append_batch(w, tr->all + i, len, NULL));
            i += len;
            if (commits < c->commits && tu_below(&rng, tr->n / 700 / (c->commits + 1)) == 0) {
                CHECK_OK(mh_writer_commit(w));
                commits++;
            }
        }
        switch (k) {
        case 0: CHECK_OK(mh_writer_window_begin(w, 5)); break;
        case 1: CHECK_OK(mh_writer_window_end(w)); break;
        case 2:
            CHECK_OK(mh_writer_window_begin(w, 6));
            CHECK_OK(mh_writer_window_end(w));
            break;
        case 3: CHECK_OK(mh_writer_window_begin(w, 9)); break;
        case 4: CHECK_OK(mh_writer_window_end(w)); break;
        default: break;
        }
    }
    CHECK_OK(mh_writer_close(w));
}

/* Every segment of r has an id map: the forced runs do take the path. */
static void check_present(const mh_reader *r) {
    for (size_t i = 0; i < r->nlive; i++) {
        const mh_seg *seg = NULL;
        CHECK_OK(mh_reader_seg(r, r->live[i], &seg, NULL));
        CHECKF(mh_idmap_present(seg), "segment %s has no id map", seg->name);
    }
}

static const char *mode_name(int mode) {
    return mode < 0 ? "id order" : mode > 0 ? "chunk walk" : "cost choice";
}

/* q's answer with each mode against the oracle; returns the oracle's count. */
static size_t check_modes(mh_reader *r, const trace *tr, const mh_query *q, size_t max,
                          mh_access *got, mh_access *want) {
    oracle_query oq;
    int orc = oracle_query_from(&oq, q, tr->win, tr->nwin);
    size_t nw = 0;
    if (orc == MH_OK)
        CHECK_OK(oracle_run(tr->all, tr->n, &oq, want, max, &nw));
    for (int mode = -1; mode <= 1; mode++) {
        r->idmap_off = mode;
        size_t ng = 0;
        int rc = mh_query_run(r, q, got, max, &ng);
        if (orc == MH_OK)
            oracle_format_query(tu_context, sizeof tu_context, &oq);
        CHECKF(rc == orc, "%s: %s, want %s", mode_name(mode), mh_error_name(rc),
               mh_error_name(orc));
        if (rc == MH_OK && oracle_compare(mode_name(mode), got, ng, want, nw) != 0)
            tu_fail(__FILE__, __LINE__, "%s: answers differ (max %zu)", mode_name(mode), max);
    }
    r->idmap_off = 0;
    return nw;
}

/* A cursor read in pieces of 1 .. 7 up to limit, each mode, against the
 * oracle's answer of limit. */
static void check_cursor(mh_reader *r, const trace *tr, const mh_query *q, size_t limit,
                         tu_rng *rng, mh_access *got, mh_access *want) {
    oracle_query oq;
    if (oracle_query_from(&oq, q, tr->win, tr->nwin) != MH_OK)
        return;
    size_t nw = 0;
    CHECK_OK(oracle_run(tr->all, tr->n, &oq, want, limit, &nw));
    for (int mode = -1; mode <= 1; mode++) {
        r->idmap_off = mode;
        mh_cursor *cur = NULL;
        CHECK_OK(mh_cursor_open(r, q, &cur));
        size_t ng = 0;
        for (;;) {
            size_t piece = 1 + (size_t)tu_below(rng, 7), k = 0;
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
        oracle_format_query(tu_context, sizeof tu_context, &oq);
        if (oracle_compare(mode_name(mode), got, ng, want, nw) != 0)
            tu_fail(__FILE__, __LINE__, "cursor, %s: answers differ", mode_name(mode));
    }
    r->idmap_off = 0;
}

/* Random queries of the classes the id path is for, and the others. */
static void random_queries(mh_reader *r, const trace *tr, size_t count, uint64_t seed) {
    tu_rng rng = {seed};
    static const size_t maxes[] = {1, 10, 100};
    mh_access *got = malloc(1000 * sizeof *got), *want = malloc(1000 * sizeof *want);
    CHECK(got && want);
    size_t hits = 0;
    for (size_t k = 0; k < count; k++) {
        mh_query q;
        mh_query_init(&q);
        const mh_access *anchor = &tr->all[tu_below(&rng, tr->n)];
        switch (tu_below(&rng, 3)) {
        case 0: /* the whole space */
            break;
        case 1:
            q.addr_first = anchor->physical & ~(uint64_t)0xfffff;
            q.addr_last = q.addr_first + 0xfffff;
            break;
        default:
            q.addr_first = anchor->physical & ~(uint64_t)0xfff;
            q.addr_last = q.addr_first + 0xfff;
            break;
        }
        q.ops = 1 + (uint32_t)tu_below(&rng, MH_OPS_ALL);
        q.direction = tu_below(&rng, 2) ? MH_FORWARD : MH_BACKWARD;
        const mh_access *at = &tr->all[tu_below(&rng, tr->n)];
        size_t ati = (size_t)(at - tr->all);
        if (tu_below(&rng, 2)) {
            q.start_kind = MH_FROM_TRANSITION;
            q.start = at->transition + (tu_below(&rng, 4) == 0 ? tu_below(&rng, 3) : 0);
        } else {
            q.start_kind = MH_FROM_ID;
            q.start = tu_below(&rng, 50) == 0 ? (tu_below(&rng, 2) ? 0 : tr->n + 5) : ati;
        }
        if (tu_below(&rng, 3) == 0) { /* an end bound a little way off */
            size_t d = (size_t)tu_below(&rng, 3000);
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
        if (tu_below(&rng, 2))
            tu_random_filters(&rng, tr->all, tr->n, tr->win, tr->nwin, &q, set);
        size_t max = maxes[tu_below(&rng, 3)];
        if (check_modes(r, tr, &q, max, got, want))
            hits++;
        if (k % 16 == 0)
            check_cursor(r, tr, &q, 1 + (size_t)tu_below(&rng, 60), &rng, got, want);
    }
    printf("  %zu queries, %zu with matches\n", count, hits);
    CHECK(hits > count / 3);
    free(got);
    free(want);
}

/* Every access, read through the chunk walk: a recording's trace. */
/* ---- a damaged id map ---------------------------------------------------- */
/* The section's groups decoded, for rewriting. */
typedef struct idmap_sec {
    uint32_t g, ngroups, gsize;
    unsigned char *rec;   /* the records as stored */
    unsigned char **lab;  /* each group's label bytes */
    uint32_t *count, *width, *slice;
} idmap_sec;

static uint32_t ld32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const unsigned char *p) { return ld32(p) | (uint64_t)ld32(p + 4) << 32; }
static void st32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}
static void st64(unsigned char *p, uint64_t v) {
    st32(p, (uint32_t)v);
    st32(p + 4, (uint32_t)(v >> 32));
}

static void idmap_parse(const se_buf *b, idmap_sec *m) {
    CHECK(b->len >= 32);
    m->g = ld32(b->p);
    m->ngroups = ld32(b->p + 4);
    m->gsize = ld32(b->p + 8);
    CHECK(m->gsize >= 32 && b->len >= 32 + (size_t)m->ngroups * m->gsize);
    const unsigned char *data = b->p + 32 + (size_t)m->ngroups * m->gsize;
    m->rec = malloc((size_t)m->ngroups * m->gsize);
    m->lab = calloc(m->ngroups, sizeof *m->lab);
    m->count = calloc(m->ngroups, sizeof *m->count);
    m->width = calloc(m->ngroups, sizeof *m->width);
    m->slice = calloc(m->ngroups, sizeof *m->slice);
    CHECK(m->rec && m->lab && m->count && m->width && m->slice);
    memcpy(m->rec, b->p + 32, (size_t)m->ngroups * m->gsize);
    for (uint32_t i = 0; i < m->ngroups; i++) {
        const unsigned char *r = m->rec + (size_t)i * m->gsize;
        uint64_t off = ld64(r);
        m->slice[i] = ld32(r + 8);
        uint32_t comp = ld32(r + 16);
        m->count[i] = ld32(r + 20);
        m->width[i] = r[24];
        size_t raw = (size_t)m->count[i] * m->width[i];
        m->lab[i] = malloc(raw);
        CHECK(m->lab[i] != NULL);
        CHECK(LZ4_decompress_safe((const char *)data + off, (char *)m->lab[i], (int)comp,
                                  (int)raw) == (int)raw);
    }
}

/* The section again from m (groups recompressed). */
static se_buf idmap_emit(const idmap_sec *m) {
    size_t cap = 32 + (size_t)m->ngroups * m->gsize;
    for (uint32_t i = 0; i < m->ngroups; i++)
        cap += (size_t)LZ4_compressBound((int)(m->count[i] * m->width[i]));
    se_buf b = {calloc(1, cap), 0};
    CHECK(b.p != NULL);
    unsigned char *data = b.p + 32 + (size_t)m->ngroups * m->gsize;
    uint64_t off = 0;
    for (uint32_t i = 0; i < m->ngroups; i++) {
        int raw = (int)(m->count[i] * m->width[i]);
        int c = LZ4_compress_default((const char *)m->lab[i], (char *)data + off, raw,
                                     LZ4_compressBound(raw));
        CHECK(c > 0);
        unsigned char *r = b.p + 32 + (size_t)i * m->gsize;
        memcpy(r, m->rec + (size_t)i * m->gsize, m->gsize);
        st64(r, off);
        st32(r + 16, (uint32_t)c);
        off += (uint64_t)c;
    }
    st32(b.p, m->g);
    st32(b.p + 4, m->ngroups);
    st32(b.p + 8, m->gsize);
    st64(b.p + 16, off);
    b.len = 32 + (size_t)m->ngroups * m->gsize + off;
    return b;
}

static void idmap_free(idmap_sec *m) {
    for (uint32_t i = 0; i < m->ngroups; i++)
        free(m->lab[i]);
    free(m->lab);
    free(m->rec);
    free(m->count);
    free(m->width);
    free(m->slice);
}

static uint32_t lab_get(const idmap_sec *m, uint32_t g, uint32_t i) {
    uint32_t v = 0;
    for (uint32_t k = 0; k < m->width[g]; k++)
        v |= (uint32_t)m->lab[g][(size_t)i * m->width[g] + k] << 8 * k;
    return v;
}
static void lab_set(idmap_sec *m, uint32_t g, uint32_t i, uint32_t v) {
    for (uint32_t k = 0; k < m->width[g]; k++)
        m->lab[g][(size_t)i * m->width[g] + k] = (unsigned char)(v >> 8 * k);
}

/* The one segment of dir: its file name. */
static void only_segment(const char *dir, char *name, size_t cap) {
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK(mh_reader_segment_count(r) == 1);
    mh_segment_info si = {.struct_size = sizeof si};
    CHECK_OK(mh_reader_segment_info(r, 0, &si));
    snprintf(name, cap, "%s", si.file_name);
    mh_reader_close(r);
}

/* A store of one segment whose slices have many chunks; then in a copy,
 * label `victim` of group 0 of its slice rewritten (new = label + 1 mod
 * the slice's chunk count, or `bad` when not 0: a label past its chunks),
 * sums fixed. Queries that follow the label must fail with MH_ECORRUPT and
 * a detail naming the id map; the chunk walk still answers right. */
static void check_corrupt(void) {
    printf("corrupt labels\n");
    config c = {"corrupt", 7, 50000, 50000, 128, 16, 0};
    trace tr;
    make_trace(&c, &tr);
    char dir[4096], bad[4096];
    tu_mkdtemp(dir, sizeof dir, "idmap-corrupt");
    write_store(dir, &c, &tr);
    for (size_t i = 0; i < tr.n; i++)
        tr.all[i].id = i;
    char name[256];
    only_segment(dir, name, sizeof name);
    /* variant 3's label: a chunk of slice 0 that begins past victim + 50
     * (so past the end bound of its query) */
    const uint32_t victim3 = 1077;
    uint32_t late = UINT32_MAX;
    {
        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(dir, &r));
        mh_slice_info sl = {.struct_size = sizeof sl};
        CHECK_OK(mh_reader_slice_info(r, 0, 0, &sl));
        for (uint32_t k = 0; k < sl.chunks && late == UINT32_MAX; k++) {
            mh_chunk_info ci = {.struct_size = sizeof ci};
            CHECK_OK(mh_reader_chunk_info(r, 0, sl.chunk_first + k, &ci));
            if (ci.id_first > sl.id_first + victim3 + 50)
                late = k;
        }
        CHECK(late != UINT32_MAX);
        mh_reader_close(r);
    }
    for (int variant = 0; variant < 4; variant++) {
        tu_mkdtemp(bad, sizeof bad, "idmap-corrupt-copy");
        tu_copy_dir(dir, bad);
        se_buf file = se_load(bad, name);
        se_seg s;
        se_seg_parse(&file, &s);
        se_section *sec = se_seg_find(&s, IDMAP_SECTION);
        CHECKF(sec != NULL, "no id map section in %s", name);
        idmap_sec m;
        idmap_parse(&sec->data, &m);
        CHECK(m.ngroups >= 2 && m.slice[0] == 0 && m.count[0] > 1000);
        /* the slice's chunk count: one more than its largest label */
        uint32_t nck = 0;
        for (uint32_t g = 0; g < m.ngroups && m.slice[g] == 0; g++)
            for (uint32_t i = 0; i < m.count[g]; i++) {
                uint32_t l = lab_get(&m, g, i);
                nck = l + 1 > nck ? l + 1 : nck;
            }
        CHECK(nck > 2);
        uint32_t victim = variant == 3 ? victim3 : 777 + 100 * (uint32_t)variant;
        uint32_t old = lab_get(&m, 0, victim);
        uint32_t neu = variant == 2 ? nck + 5 : variant == 3 ? late
                                                             : (old + 1 + (uint32_t)variant) % nck;
        CHECK(neu != old);
        lab_set(&m, 0, victim, neu);
        se_buf ns = idmap_emit(&m);
        free(sec->data.p);
        sec->data = ns;
        idmap_free(&m);
        se_buf out = se_seg_emit(&s);
        se_save(bad, name, &out);
        se_manifest_fix(bad);
        free(out.p);
        free(file.p);
        se_seg_free(&s);

        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(bad, &r));
        mh_query q;
        mh_query_init(&q);
        q.start_kind = MH_FROM_ID;
        q.start = victim - 1; /* the first id after it is the victim */
        q.ops = MH_OPS_ALL;
        if (variant == 3) { /* the label's chunk begins past the end */
            q.end_kind = MH_END_ID;
            q.end = victim + 20;
        }
        mh_access a[10];
        size_t n = 99;
        for (int mode = -1; mode <= (variant == 3 ? -1 : 0); mode++) {
            r->idmap_off = mode;
            int rc = mh_query_run(r, &q, a, 1, &n);
            char msg[MH_ERRMSG_MAX];
            mh_reader_errmsg(r, msg, sizeof msg);
            CHECKF(rc == MH_ECORRUPT && n == 0 && strstr(msg, "id map") != NULL,
                   "variant %d, %s: %s (%d), %zu accesses: %s", variant, mode_name(mode),
                   mh_error_name(rc), rc, n, msg);
        }
        /* and a cursor that walks onto it */
        r->idmap_off = -1;
        q.start = victim > 5 ? victim - 5 : 0;
        mh_cursor *cur = NULL;
        CHECK_OK(mh_cursor_open(r, &q, &cur));
        int rc = MH_OK;
        for (int k = 0; k < 10 && rc == MH_OK; k++)
            rc = mh_cursor_next(cur, a, 1, &n);
        CHECKF(rc == MH_ECORRUPT, "cursor: %s", mh_error_name(rc));
        mh_cursor_close(cur);
        /* the chunk walk does not read the id map */
        r->idmap_off = 1;
        mh_access *got = malloc(100 * sizeof *got), *want = malloc(100 * sizeof *want);
        CHECK(got && want);
        q.start = victim - 1;
        size_t nw = oracle_answer(tr.all, tr.n, &q, want, 100);
        CHECK_OK(mh_query_run(r, &q, got, 100, &n));
        CHECK(oracle_compare("chunk walk on a damaged id map", got, n, want, nw) == 0);
        free(got);
        free(want);
        mh_reader_close(r);
        tu_rmtree(bad);
    }
    tu_rmtree(dir);
    free(tr.all);
    free(tr.win);
}

/* Decoded label groups stay in the reader's block cache: queries A, B, A,
 * B over far-apart ids (forced through the id path) decode A's and B's
 * groups on the first pass and none on the second (one group per context
 * would decode A's again after B). Every answer is the oracle's. Then the
 * same with a cache of two entries (the label group walked pinned while
 * its blocks come and go) over random queries. */
static uint64_t run_forced(mh_reader *r, const trace *tr, const mh_query *q, size_t max,
                           mh_access *got, mh_access *want) {
    oracle_query oq;
    CHECK_OK(oracle_query_from(&oq, q, tr->win, tr->nwin));
    size_t nw = 0, ng = 0;
    CHECK_OK(oracle_run(tr->all, tr->n, &oq, want, max, &nw));
    uint64_t before = atomic_load(&r->idmap_groups_decoded);
    r->idmap_off = -1;
    CHECK_OK(mh_query_run(r, q, got, max, &ng));
    r->idmap_off = 0;
    oracle_format_query(tu_context, sizeof tu_context, &oq);
    if (oracle_compare("id order, cached labels", got, ng, want, nw) != 0)
        tu_fail(__FILE__, __LINE__, "answers differ (max %zu)", max);
    CHECK(nw > 0);
    return atomic_load(&r->idmap_groups_decoded) - before;
}

static void check_label_cache(const char *dir, const trace *tr) {
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    mh_access *got = malloc(1000 * sizeof *got), *want = malloc(1000 * sizeof *want);
    CHECK(got && want);
    mh_query q[2];
    for (int k = 0; k < 2; k++) {
        mh_query_init(&q[k]);
        q[k].start_kind = MH_FROM_ID;
        q[k].start = k ? tr->n * 3 / 4 : tr->n / 4;
        q[k].direction = k ? MH_BACKWARD : MH_FORWARD;
        q[k].ops = MH_OPS_RW;
    }
    uint64_t first = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < 2; k++) {
            uint64_t d = run_forced(r, tr, &q[k], 10, got, want);
            tu_context[0] = '\0';
            if (pass == 0)
                CHECKF(d >= 1, "query %d: %llu label groups decoded, expected some", k,
                       (unsigned long long)d);
            else
                CHECKF(d == 0, "query %d again: %llu label groups decoded, expected none "
                       "(cached)", k, (unsigned long long)d);
            first += d;
        }
    }
    printf("  label cache: %llu groups decoded by the first pass, none by the second\n",
           (unsigned long long)first);
    /* two entries: a label group and a block */
    CHECK_OK(mh_reader_set_cache(r, 1));
    random_queries(r, tr, 200, 99);
    uint64_t d = run_forced(r, tr, &q[0], 10, got, want);
    tu_context[0] = '\0';
    CHECK(d <= 1);
    free(got);
    free(want);
    mh_reader_close(r);
}

/* The slices' first groups the searches remember (seg->slice_memo, 1.13.5):
 * every slot a query set holds 1 + the group the records say (a whole
 * view's search), and the queries above set some (their id maps and id
 * transitions are read by piece sums, the lazy views that remember). */
static void check_group_memo(const mh_reader *r) {
    size_t set = 0;
    for (size_t i = 0; i < r->nlive; i++) {
        if (atomic_load(&r->seg_state[r->live[i]]) != MH_SEG_OPEN)
            continue;
        const mh_seg *seg = &r->segs[r->live[i]];
        const _Atomic uint32_t *t = atomic_load(&seg->slice_memo);
        if (!t)
            continue;
        mh_idmap_view mv;
        mh_idtime_view tv;
        const int has_m = mh_idmap_view_whole(seg, &mv, NULL) == MH_OK;
        const int has_t = mh_idtime_view_whole(seg, &tv, NULL) == MH_OK;
        for (uint32_t si = 0; si < seg->nslices; si++) {
            const uint32_t m = atomic_load(&t[(size_t)MH_MEMO_IDMAP_G0 * seg->nslices + si]),
                           tt = atomic_load(&t[(size_t)MH_MEMO_IDTIME_G0 * seg->nslices + si]);
            CHECKF(!m || (has_m && m - 1 == mh_idmap_first_group(&mv, si)),
                   "segment %zu slice %u: id map group %u remembered", i, si, m - 1);
            CHECKF(!tt || (has_t && tt - 1 == mh_idtime_first_group(&tv, si)),
                   "segment %zu slice %u: id transitions group %u remembered", i, si, tt - 1);
            set += (m != 0) + (tt != 0);
        }
    }
    CHECKF(set > 0, "no slice's first group remembered");
    printf("  first groups remembered: %zu\n", set);
}

static void run_config(const config *c, size_t queries) {
    printf("%s: %zu accesses\n", c->name, c->total);
    trace tr;
    make_trace(c, &tr);
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "idmap-query");
    write_store(dir, c, &tr);
    for (size_t i = 0; i < tr.n; i++)
        tr.all[i].id = i;
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    check_present(r);
    random_queries(r, &tr, queries, c->seed * 1000003);
    check_group_memo(r);
    mh_reader_close(r);
    check_label_cache(dir, &tr);
    tu_rmtree(dir);
    free(tr.all);
    free(tr.win);
}

/* The cost choice between the chunk walk and the id path (query_idmap.c,
 * IDQ_COVER_DIV): one slice of 65536 accesses, an address a chunk, one
 * write in `every` to `addrs` addresses 1 MiB apart in turn (each write
 * chunk spans the slice, so a start in its middle cuts them all), reads of
 * 64 other addresses the rest. A whole-space write max-1 question from the
 * middle on a fresh reader (no block cached), where the chunk walk costs
 * more than the id path by the model (a block decoded a chunk with 1/16,
 * 8 chunks of a block each; 2 blocks and 62 chunks more with 1/64): with
 * writes 1/16 of the rows (under the eighth 1.9.7 asked for) the id path
 * is taken, a label group decoded; with 1/64 (under the 1/32 it asks for
 * now) the chunk walk, none. With IDQ_COVER_DIV 8 the first fails, with 64
 * the second. The answers are the oracle's either way. */
static void check_cover_choice(void) {
    const size_t n = 65536;
    const unsigned every[2] = {16, 64}, addrs[2] = {8, 64};
    for (int k = 0; k < 2; k++) {
        mh_access *all = calloc(n, sizeof *all);
        CHECK(all != NULL);
        for (size_t i = 0; i < n; i++) {
            mh_access *a = &all[i];
            a->transition = 1 + i;
            a->size = 4;
            if (i % every[k] == 0) {
                a->op = MH_OP_WRITE;
                a->physical = 0x100000000ull + (uint64_t)(i / every[k] % addrs[k]) * (1u << 20);
            } else {
                a->op = MH_OP_READ;
                a->physical = 0x200000000ull + (uint64_t)(i % 64) * 64;
            }
        }
        char dir[4096];
        tu_mkdtemp(dir, sizeof dir, "idmap-cover");
        mh_writer_options o;
        mh_writer_options_init(&o);
        o.slice_accesses = (uint32_t)n;
        o.chunk_min_accesses = 4; /* an address a chunk */
        tu_write_store(dir, &o, all, n);
        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(dir, &r));
        check_present(r);
        mh_query q;
        mh_query_init(&q);
        q.start_kind = MH_FROM_TRANSITION;
        q.start = n / 2;
        q.direction = MH_FORWARD;
        q.ops = MH_OPS_WRITE;
        uint64_t before = atomic_load(&r->idmap_groups_decoded);
        CHECK(tu_check_query(r, all, n, &q, 1) == 1);
        uint64_t d = atomic_load(&r->idmap_groups_decoded) - before;
        if (k == 0)
            CHECKF(d >= 1, "writes 1/%u of the slice: the chunk walk taken, expected the id path",
                   every[k]);
        else
            CHECKF(d == 0, "writes 1/%u of the slice: the id path taken, expected the chunk walk",
                   every[k]);
        printf("  cover choice: writes 1/%u of the slice, %s\n", every[k],
               d ? "id path" : "chunk walk");
        mh_reader_close(r);
        tu_rmtree(dir);
        free(all);
    }
}

/* Entries taken from the least recently used end keep only the buffers
 * of what they hold now (query.c entry_fit): a cache filled with whole
 * blocks by page questions (the chunk walk), then whole-space max-10
 * questions by the id path (located blocks: ids, transitions and the raw
 * block), asked twice, with a cache of 5 MiB. Counted with the whole
 * blocks' columns on top of their own, the located blocks of the second
 * set did not fit and cycled through it, each decoded again at every pass
 * (230 of 271 blocks at 6 MiB, 352 of 374 at 4 MiB; none at 8 MiB); now
 * the second pass decodes none. The answers are the oracle's. */
static void check_fit(void) {
    const size_t n = 300000;
    mh_access *all = calloc(n, sizeof *all);
    CHECK(all != NULL);
    tu_rng rng = {31};
    for (size_t i = 0; i < n; i++)
        all[i] = (mh_access){.transition = 1 + i, .size = 8,
                             .physical = 0x10000000u + 8 * tu_below(&rng, 1u << 18),
                             .op = (uint8_t)(tu_below(&rng, 3) ? MH_OP_READ : MH_OP_WRITE)};
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "idmap-fit");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 65536;
    tu_write_store(dir, &o, all, n);
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK_OK(mh_reader_set_cache(r, 5u << 20));
    /* whole blocks: page questions by the chunk walk */
    r->idmap_off = 1;
    for (int i = 0; i < 400; i++) {
        mh_query q;
        mh_query_init(&q);
        q.start = 1 + tu_below(&rng, n);
        q.direction = tu_below(&rng, 2) ? MH_BACKWARD : MH_FORWARD;
        q.addr_first = all[tu_below(&rng, n)].physical & ~(uint64_t)4095;
        q.addr_last = q.addr_first + 4095;
        (void)tu_check_query(r, all, n, &q, 10);
    }
    /* located blocks: whole-space questions by the id path, twice */
    r->idmap_off = -1;
    uint64_t decoded[2];
    for (int pass = 0; pass < 2; pass++) {
        tu_rng qr = {77};
        uint64_t before = atomic_load(&r->blocks_decoded);
        for (int i = 0; i < 60; i++) {
            mh_query q;
            mh_query_init(&q);
            q.start = 1 + tu_below(&qr, n);
            q.direction = tu_below(&qr, 2) ? MH_BACKWARD : MH_FORWARD;
            (void)tu_check_query(r, all, n, &q, 10);
        }
        decoded[pass] = atomic_load(&r->blocks_decoded) - before;
    }
    tu_context[0] = '\0';
    printf("  entry fit: %llu blocks decoded by the first pass, %llu by the second\n",
           (unsigned long long)decoded[0], (unsigned long long)decoded[1]);
    CHECKF(decoded[0] > 0 && decoded[1] == 0, "whole-space questions after page ones: %llu "
           "blocks decoded by the first pass, %llu by the second (expected none: cached)",
           (unsigned long long)decoded[0], (unsigned long long)decoded[1]);
    mh_reader_close(r);
    tu_rmtree(dir);
    free(all);
}

/* A small qemu recording (sort of a generated file), upgraded through the
 * CLI's recorder as a user would make it, queried the three ways. */
static int run_real(const char *memhist, size_t queries) {
    char dir[4096], store[4096];
    tu_mkdtemp(dir, sizeof dir, "idmap-real");
    int rc = tu_record_sort(memhist, dir, 3000, 104729, 1000003, store, sizeof store, "idmap_query --real");
    if (rc != 0) {
        tu_rmtree(dir);
        return rc;
    }
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    check_present(r);
    trace tr = {0};
    r->idmap_off = 1; /* the trace read without the path under test */
    tr.all = tu_read_all(r, &tr.n);
    r->idmap_off = 0;
    for (size_t i = 0; i < tr.n; i++)
        CHECK(tr.all[i].id == i);
    printf("real: %zu accesses recorded\n", tr.n);
    CHECK(tr.n > 100000);
    random_queries(r, &tr, queries, 4242);
    /* a small cache: located blocks (with their raw bytes) and whole ones
     * take turns in the same entries; the bytes held stay counted exactly
     * and within the budget and the quarter over it a trim waits for (but
     * the entry just filled) */
    const size_t budget = 256u << 10;
    CHECK_OK(mh_reader_set_cache(r, budget));
    for (unsigned round = 0; round < 6; round++) {
        random_queries(r, &tr, queries / 6 + 1, 777 + round);
        size_t held, sum, largest;
        CHECK(mh_query_cache_audit(r, &held, &sum, &largest) >= 1);
        CHECKF(held == sum, "cache says %zu bytes, its entries hold %zu", held, sum);
        CHECKF(held <= budget + budget / 4 + largest,
               "cache holds %zu bytes, budget %zu (largest entry %zu)", held, budget, largest);
    }
    mh_reader_close(r);
    free(tr.all);
    tu_rmtree(dir);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "--real")) {
        int rc = run_real(argv[2], argc > 3 ? strtoull(argv[3], NULL, 10) : 1500);
        if (rc == 0)
            printf("idmap_query --real: ok\n");
        return rc;
    }
    size_t queries = argc > 1 ? strtoull(argv[1], NULL, 10) : 1500;
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        run_config(&configs[i], queries);
    check_cover_choice();
    check_fit();
    check_corrupt();
    printf("idmap_query: ok\n");
    return 0;
}
