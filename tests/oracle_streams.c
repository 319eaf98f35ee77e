/*
 * oracle_streams.c - the format 2.0 query filters against the brute-force
 * oracle: synthetic traces of several streams (ids above 31 too, so that
 * the 32-bit masks alias), a pc on most accesses, and windows (empty ones,
 * ones that span commits and so segments), written in several segments.
 * Random queries over every parameter -- start, direction, range, ops, end
 * bound, stream set (unknown ids included), pc range, window (absent ones
 * included) -- must give exactly the oracle's answer (oracle_query_from),
 * as plain runs, resume chains and cursors. The store-level stream and
 * window tables must be what the trace says.
 *
 * Usage: oracle_streams [QUERIES_PER_CONFIG [SEED_OFFSET]] (defaults 1500, 0).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct config {
    const char *name;
    uint64_t seed;
    size_t total;
    int runs;          /* 1: streams come in runs (masks skip), 0: interleaved */
    uint32_t slice, block, chunk_min;
    int commits;       /* random commit points besides the close */
} config;

static const config configs[] = {
    {"interleaved, small slices", 1, 40000, 0, 300, 64, 4, 3},
    {"runs, small slices", 2, 40000, 1, 300, 64, 4, 4},
    {"runs, default-ish slices", 3, 120000, 1, 4096, 256, 64, 2},
    {"interleaved, one segment", 4, 30000, 0, 500, 128, 16, 0},
};

/* Stream ids: 0 and ids that alias it and each other modulo 32. */
static const uint32_t stream_ids[] = {0, 1, 2, 33, 34, 65, 100, MH_STREAM_MAX};
#define NSTREAMS (sizeof stream_ids / sizeof stream_ids[0])
static const uint64_t pcs[] = {0, 0x400000, 0x400010, 0x400020, 0x401000,
                               0x7fff0000, UINT64_MAX};
#define NPCS (sizeof pcs / sizeof pcs[0])

static size_t g_queries = 1500;
static uint64_t g_seed_offset = 0;

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
    static const uint64_t clusters[] = {0x1000, 0x7fff00000000ull, 0x10000000ull};
    for (size_t i = 0; i < tr->n; i++) {
        mh_access *a = &tr->all[i];
        uint64_t r = tu_below(&rng, 100);
        if (r < 30)
            t += 1;
        else if (r < 32)
            t += tu_below(&rng, 1u << 20);
        a->transition = t;
        if (c->runs) {
            if (left == 0) {
                cur = stream_ids[tu_below(&rng, NSTREAMS)];
                left = 1 + tu_below(&rng, 3000);
            }
            left--;
            a->stream = cur;
        } else {
            a->stream = stream_ids[tu_below(&rng, NSTREAMS)];
        }
        a->physical = clusters[tu_below(&rng, 3)] + tu_below(&rng, 1u << 16);
        a->size = 1 + (uint32_t)tu_below(&rng, 16);
        a->op = (uint8_t)tu_below(&rng, MH_OP_COUNT);
        a->has_linear = tu_below(&rng, 4) != 0;
        a->linear = a->has_linear ? a->physical ^ 0x5000 : 0;
        a->has_pc = tu_below(&rng, 10) < 7;
        if (a->has_pc) { /* a few exact values, some just above them */
            size_t k = (size_t)tu_below(&rng, NPCS);
            a->pc = pcs[k] + (k + 1 < NPCS && tu_below(&rng, 4) == 0 ? tu_below(&rng, 4) : 0);
        }
    }
}

/* Window plan: at access i, end the current window (-1), begin a new one
 * (its id), or nothing (0). Windows: some empty, some long; ids increase
 * with gaps. */
typedef struct wplan {
    size_t at;
    int begin; /* 1 begin, 0 end */
    uint64_t window;
} wplan;

static size_t plan_windows(const config *c, trace *tr, wplan *plan, size_t cap) {
    tu_rng rng = {c->seed * 31 + 5};
    size_t np = 0;
    uint64_t next = tu_below(&rng, 3);
    size_t i = tu_below(&rng, 200);
    int open = 0;
    tr->win = calloc(cap, sizeof *tr->win);
    tr->nwin = 0;
    CHECK(tr->win != NULL);
    while (i < tr->n && np + 2 < cap) {
        if (open && tu_below(&rng, 3) == 0) {
            plan[np++] = (wplan){i, 0, 0};
            tr->win[tr->nwin - 1].count = i - tr->win[tr->nwin - 1].id_first;
            open = 0;
        } else {
            if (open)
                tr->win[tr->nwin - 1].count = i - tr->win[tr->nwin - 1].id_first;
            plan[np++] = (wplan){i, 1, next};
            tr->win[tr->nwin++] = (oracle_window){next, i, 0};
            next += 1 + tu_below(&rng, 4);
            open = 1;
            if (tu_below(&rng, 8) == 0) { /* an empty window: begin again */
                tr->win[tr->nwin - 1].count = 0;
                plan[np++] = (wplan){i, 1, next};
                tr->win[tr->nwin++] = (oracle_window){next, i, 0};
                next += 1;
            }
        }
        i += tu_below(&rng, 4) == 0 ? 1 + tu_below(&rng, 30)
                                    : 1 + tu_below(&rng, tr->n / 8);
    }
    if (open)
        tr->win[tr->nwin - 1].count = tr->n - tr->win[tr->nwin - 1].id_first;
    return np;
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
        s.parent = 0;
        s.name = k % 2 ? "worker" : NULL;
        CHECK_OK(mh_writer_stream_declare(w, &s));
        if (k == 3) {
            CHECK_OK(mh_writer_stream_set_meta(w, s.id, "role", "io"));
            CHECK_OK(mh_writer_stream_set_meta(w, s.id, "cpu-hint", "3"));
        }
    }
    wplan plan[512];
    size_t np = plan_windows(c, tr, plan, sizeof plan / sizeof plan[0]);
    tu_rng rng = {c->seed * 101 + 3};
    size_t commit_at[16], nc = 0;
    for (int k = 0; k < c->commits; k++)
        commit_at[nc++] = 1 + (size_t)tu_below(&rng, tr->n - 1);
    size_t p = 0, i = 0;
    while (i < tr->n) {
        while (p < np && plan[p].at == i) {
            if (plan[p].begin)
                CHECK_OK(mh_writer_window_begin(w, plan[p].window));
            else
                CHECK_OK(mh_writer_window_end(w));
            p++;
        }
        size_t stop = p < np ? plan[p].at : tr->n;
        for (size_t k = 0; k < nc; k++)
            if (commit_at[k] > i && commit_at[k] < stop)
                stop = commit_at[k];
        size_t len = 1 + (size_t)tu_below(&rng, 500);
        if (i + len > stop)
            len = stop - i;
        CHECK_OK(mh_writer_append_batch(w, tr->all + i, len, NULL));
        i += len;
        for (size_t k = 0; k < nc; k++)
            if (commit_at[k] == i)
                CHECK_OK(mh_writer_commit(w));
    }
    CHECK_OK(mh_writer_close(w));
}

/* The store-level tables against the trace. */
static void check_tables(const mh_reader *r, const trace *tr) {
    CHECK(mh_reader_stream_count(r) == NSTREAMS);
    for (size_t k = 0; k < NSTREAMS; k++) {
        uint64_t count = 0, tf = 0, tl = 0;
        for (size_t i = 0; i < tr->n; i++)
            if (tr->all[i].stream == stream_ids[k]) {
                if (count++ == 0)
                    tf = tr->all[i].transition;
                tl = tr->all[i].transition;
            }
        size_t at = 99;
        CHECK_OK(mh_reader_stream_find(r, stream_ids[k], &at));
        CHECK(at == k);
        mh_stream_info si = {.struct_size = sizeof si};
        CHECK_OK(mh_reader_stream_info(r, k, &si));
        CHECKF(si.id == stream_ids[k] && si.accesses == count &&
                   si.transition_first == tf && si.transition_last == tl,
               "stream %u: %llu accesses [%llu, %llu], want %llu [%llu, %llu]", si.id,
               (unsigned long long)si.accesses, (unsigned long long)si.transition_first,
               (unsigned long long)si.transition_last, (unsigned long long)count,
               (unsigned long long)tf, (unsigned long long)tl);
        if (k) {
            CHECK(si.kind == MH_STREAM_THREAD && si.tid == 1000 + k && si.parent == 0);
            CHECK(si.pid == MH_NONE64 && si.cpu == MH_NONE32);
            CHECK(k % 2 ? si.name && !strcmp(si.name, "worker") : si.name == NULL);
        }
        size_t nm = mh_reader_stream_meta_count(r, k);
        CHECK(nm == (k == 3 ? 2u : 0u));
        for (size_t m = 0; m < nm; m++) {
            const char *key, *value;
            CHECK_OK(mh_reader_stream_meta_get(r, k, m, &key, &value));
            CHECK((!strcmp(key, "role") && !strcmp(value, "io")) ||
                  (!strcmp(key, "cpu-hint") && !strcmp(value, "3")));
        }
        const char *key, *value;
        CHECK_RC(mh_reader_stream_meta_get(r, k, nm, &key, &value), MH_EINVAL);
    }
    size_t at;
    CHECK_RC(mh_reader_stream_find(r, 3, &at), MH_ENOTFOUND);
    mh_stream_info si = {.struct_size = sizeof si};
    CHECK_RC(mh_reader_stream_info(r, NSTREAMS, &si), MH_EINVAL);

    CHECKF(mh_reader_window_count(r) == tr->nwin, "%zu windows, want %zu",
           mh_reader_window_count(r), tr->nwin);
    for (size_t k = 0; k < tr->nwin; k++) {
        const oracle_window *ow = &tr->win[k];
        mh_window_info wi = {.struct_size = sizeof wi}, wf = {.struct_size = sizeof wf};
        CHECK_OK(mh_reader_window_info(r, k, &wi));
        CHECK_OK(mh_reader_window_find(r, ow->window, &wf));
        CHECK(memcmp(&wi, &wf, sizeof wi) == 0);
        uint64_t tf = ow->count ? tr->all[ow->id_first].transition : 0;
        uint64_t tl = ow->count ? tr->all[ow->id_first + ow->count - 1].transition : 0;
        CHECKF(wi.window == ow->window && wi.id_first == ow->id_first &&
                   wi.accesses == ow->count && wi.transition_first == tf &&
                   wi.transition_last == tl,
               "window %llu: ids %llu + %llu, want %llu + %llu",
               (unsigned long long)wi.window, (unsigned long long)wi.id_first,
               (unsigned long long)wi.accesses, (unsigned long long)ow->id_first,
               (unsigned long long)ow->count);
    }
    mh_window_info wi = {.struct_size = sizeof wi};
    CHECK_RC(mh_reader_window_find(r, UINT64_MAX, &wi), MH_ENOTFOUND);
    CHECK_RC(mh_reader_window_info(r, tr->nwin, &wi), MH_EINVAL);

    /* every segment has its directory; slice masks are exact */
    for (size_t s = 0; s < mh_reader_segment_count(r); s++) {
        mh_segment_info sg = {.struct_size = sizeof sg};
        CHECK_OK(mh_reader_segment_info(r, s, &sg));
        CHECK(sg.version_major == 2 && sg.has_pc == 1 && sg.streams == NSTREAMS);
        CHECK(mh_reader_section_count(r, s) >= 5);
        for (size_t i = 0; i < mh_reader_section_count(r, s); i++) {
            mh_section_info x = {.struct_size = sizeof x};
            CHECK_OK(mh_reader_section_info(r, s, i, &x));
            CHECK(x.name != NULL && (x.type > 5 || (x.flags & 1)));
        }
        for (uint32_t k = 0; k < sg.slices; k++) {
            mh_slice_info sl = {.struct_size = sizeof sl};
            CHECK_OK(mh_reader_slice_info(r, s, k, &sl));
            uint32_t mask = 0;
            for (uint64_t i = sl.id_first; i < sl.id_first + sl.accesses; i++)
                mask |= UINT32_C(1) << (tr->all[i].stream & 31);
            CHECKF(sl.stream_mask == mask, "segment %zu slice %u mask 0x%x, want 0x%x",
                   s, k, sl.stream_mask, mask);
        }
    }
}

static void random_queries(const mh_reader *r, const trace *tr, size_t count,
                           uint64_t seed) {
    size_t hits = tu_random_filtered_queries(r, tr->all, tr->n, tr->win, tr->nwin,
                                             count, seed);
    printf("  %zu queries, %zu filtered ones with matches\n", count, hits);
    CHECK(hits > count / 10);
}

/* The 1.2 fields are validated. */
static void check_refused(const mh_reader *r) {
    mh_query q;
    mh_access out[4];
    size_t n;
    static const uint32_t one[] = {1};
    mh_query_init(&q);
    q.nstreams = 1;
    CHECK_RC(mh_query_run(r, &q, out, 4, &n), MH_EINVAL);
    q.streams = one;
    q.nstreams = 0;
    CHECK_RC(mh_query_run(r, &q, out, 4, &n), MH_EINVAL);
    q.nstreams = 65537;
    CHECK_RC(mh_query_run(r, &q, out, 4, &n), MH_EINVAL);
    mh_query_init(&q);
    q.filter = 4;
    CHECK_RC(mh_query_run(r, &q, out, 4, &n), MH_EINVAL);
    q.filter = MH_FILTER_PC;
    q.pc_first = 2;
    q.pc_last = 1;
    CHECK_RC(mh_query_run(r, &q, out, 4, &n), MH_EINVAL);
    char msg[MH_ERRMSG_MAX];
    mh_reader_errmsg(r, msg, sizeof msg);
    CHECKF(strstr(msg, "pc_first") != NULL, "'%s'", msg);
    q.filter = MH_FILTER_WINDOW;
    q.window = UINT64_MAX;
    CHECK_RC(mh_query_run(r, &q, out, 4, &n), MH_ENOTFOUND);
    mh_cursor *c = NULL;
    CHECK_RC(mh_cursor_open(r, &q, &c), MH_ENOTFOUND);
    CHECK(c == NULL);
}

/* Threads that query a freshly opened reader at once race for the lazy
 * segment opens (and the window table): every answer must still be the
 * oracle's. */
typedef struct racer {
    const mh_reader *r;
    const trace *tr;
    uint64_t seed;
} racer;

static void *race(void *arg) {
    const racer *x = arg;
    tu_random_filtered_queries(x->r, x->tr->all, x->tr->n, x->tr->win, x->tr->nwin, 150,
                               x->seed);
    return NULL;
}

static void check_race(const char *dir, const trace *tr, uint64_t seed) {
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    pthread_t th[4];
    racer x[4];
    for (int i = 0; i < 4; i++) {
        x[i] = (racer){r, tr, seed + (uint64_t)i};
        CHECK(pthread_create(&th[i], NULL, race, &x[i]) == 0);
    }
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    mh_reader_close(r);
}

static void run_config(const config *c) {
    printf("%s: %zu accesses\n", c->name, c->total);
    trace tr;
    make_trace(c, &tr);
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "oracle-streams");
    write_store(dir, c, &tr);
    for (size_t i = 0; i < tr.n; i++)
        tr.all[i].id = i;
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    check_race(dir, &tr, c->seed * 77 + g_seed_offset);
    check_tables(r, &tr);
    check_refused(r);
    random_queries(r, &tr, g_queries, c->seed * 1000003 + g_seed_offset);
    mh_reader_close(r);
    tu_rmtree(dir);
    free(tr.all);
    free(tr.win);
}

int main(int argc, char **argv) {
    if (argc > 1)
        g_queries = strtoull(argv[1], NULL, 10);
    if (argc > 2)
        g_seed_offset = strtoull(argv[2], NULL, 10);
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        run_config(&configs[i]);
    printf("oracle_streams: ok\n");
    return 0;
}
