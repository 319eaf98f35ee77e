/*
 * oracle.c - memhist against a brute-force scan, on synthetic traces.
 *
 * Each configuration generates a trace with mh_synth, writes it with a mix of
 * single and batch appends, commits at random points (several segments),
 * throws away a run of junk accesses with mh_writer_discard_from, and checks
 * a reader opened in the middle of writing still sees its committed prefix.
 * Then thousands of random queries (plain, resume chains, cursors) must give
 * exactly what oracle_answer() (oracle.h) gives, from one thread and from two at once.
 *
 * Usage: oracle [QUERIES_PER_CONFIG [SEED_OFFSET]] (defaults 2000, 0); a
 * failure prints the query and its seed so it can be replayed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "testutil.h"

typedef struct config {
    const char *name;
    uint64_t seed;
    size_t total;
    unsigned flags;     /* MH_SYNTH_* */
    int default_opts;   /* the library defaults, else the fields below */
    uint32_t slice, block, chunk_min;
    int32_t background;  /* builder threads; -1 = the default */
    int commits;        /* random commit points besides the close */
    int discard;        /* junk runs to append and discard */
    uint64_t auto_commit; /* commit_accesses (0: commits only where the test says) */
} config;

/* Not a synth flag: a trace without locality, made to stress chunking. */
#define HOSTILE 0x100u

static const config configs[] = {
    {"small slices", 1, 60000, 0, 0, 300, 64, 4, 1, 3, 1, 0},
    {"exec, tiny chunks, 2 builders", 2, 60000, MH_SYNTH_EXEC, 0, 300, 64, 1, 2, 4, 2, 0},
    {"no linear, sparse", 3, 40000, MH_SYNTH_NO_LINEAR | MH_SYNTH_SPARSE_T, 0, 300, 64, 64, 0, 2, 1, 0},
    {"everything, foreground", 4, 50000, MH_SYNTH_EXEC | MH_SYNTH_SPARSE_T | MH_SYNTH_NO_LINEAR,
     0, 1000, 100, 16, 0, 3, 2, 0},
    {"everything, 8 builders", 7, 50000, MH_SYNTH_EXEC | MH_SYNTH_SPARSE_T, 0, 257, 64, 2, 8, 5, 2, 0},
    /* no discards here: an automatic commit may take the junk first */
    {"automatic commits", 10, 60000, MH_SYNTH_EXEC, 0, 300, 64, 4, 2, 0, 0, 4000},
    {"hostile", 8, 30000, HOSTILE, 0, 200, 64, 3, 1, 3, 1, 0},
    {"hostile, big chunks", 9, 30000, HOSTILE, 0, 500, 128, 100, 0, 2, 1, 0},
    {"default options", 5, 300000, MH_SYNTH_EXEC, 1, 0, 0, 0, -1, 2, 1, 0},
    {"default options, sparse", 6, 150000, MH_SYNTH_SPARSE_T, 1, 0, 0, 0, -1, 0, 0, 0},
};

static size_t g_queries = 2000;

/* Few distinct transitions, addresses in a handful of narrow clusters (at 0,
 * in the middle, at the top of the space) so ranges overlap and touch all
 * the time, sizes from 1 byte to 2^32 - 1 (one access may cover a whole
 * cluster and more), random ops and linear presence. */
static void hostile_trace(uint64_t seed, mh_access *all, size_t n) {
    static const uint64_t clusters[] = {0, 0x1000, 0x7fffffffffff0000ull, 1ull << 63,
                                        UINT64_MAX - 0xffff};
    tu_rng rng = {seed};
    uint64_t t = tu_below(&rng, 3) == 0 ? 0 : tu_next(&rng) >> 8;
    for (size_t i = 0; i < n; i++) {
        mh_access *a = &all[i];
        memset(a, 0, sizeof *a);
        a->id = i;
        uint64_t r = tu_below(&rng, 100);
        if (r < 25)
            t += 1;
        else if (r < 28)
            t += tu_below(&rng, 1ull << 40); /* below 2^40: 30000 of them cannot wrap */
        a->transition = t;
        uint64_t base = clusters[tu_below(&rng, 5)];
        uint64_t s = tu_below(&rng, 100);
        a->size = s < 70 ? 1 + (uint32_t)tu_below(&rng, 8)
                  : s < 95 ? 1 + (uint32_t)tu_below(&rng, 4096)
                           : 1 + (uint32_t)tu_below(&rng, UINT32_MAX);
        uint64_t top = UINT64_MAX - (a->size - 1); /* keeps the range from wrapping */
        if (base > top)
            base = top;
        uint64_t room = top - base;
        a->physical = base + tu_below(&rng, room < 0x10000 ? room + 1 : 0x10000);
        a->op = (uint8_t)tu_below(&rng, MH_OP_COUNT);
        a->has_linear = (uint8_t)tu_below(&rng, 2);
        a->linear = a->has_linear ? tu_next(&rng) : 0;
    }
}
static uint64_t g_seed_offset = 0;

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Appends junk after position pos (which starts a new transition) and
 * discards it again: the writer must come back to exactly pos accesses. */
static void append_and_discard(mh_writer *w, const mh_access *all, size_t pos,
                               uint32_t slice, tu_rng *rng) {
    uint64_t t0 = all[pos].transition;
    size_t junk = 1 + (size_t)tu_below(rng, 3 * (uint64_t)slice);
    mh_access a = {0};
    a.transition = t0;
    for (size_t j = 0; j < junk; j++) {
        if (tu_below(rng, 4) == 0 && a.transition < UINT64_MAX)
            a.transition++;
        a.physical = tu_next(rng) >> 1;
        a.size = 1 + (uint32_t)tu_below(rng, 16);
        a.op = (uint8_t)tu_below(rng, MH_OP_COUNT);
        a.has_linear = (uint8_t)tu_below(rng, 2);
        a.linear = tu_next(rng);
        CHECK_OK(mh_writer_append(w, &a));
    }
    CHECK(mh_writer_next_id(w) == pos + junk);
    CHECK_OK(mh_writer_discard_from(w, t0));
    CHECKF(mh_writer_next_id(w) == pos, "after discarding %zu junk accesses the next id is "
           "%llu, expected %zu", junk, (unsigned long long)mh_writer_next_id(w), pos);
}

/* A reader thread that keeps opening the store while the writer appends
 * and commits: every reader must see exactly one committed prefix. */
typedef struct watcher {
    const char *store;
    const mh_access *all;
    const size_t *prefixes; /* the committed totals the writer went through */
    size_t nprefixes;
    atomic_int done;
    size_t opened;
    uint64_t seed;
} watcher;

static void *watch_thread(void *arg) {
    watcher *wt = arg;
    tu_rng rng = {wt->seed};
    while (!atomic_load(&wt->done)) {
        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(wt->store, &r));
        mh_stats st = {.struct_size = sizeof st};
        CHECK_OK(mh_reader_stats(r, &st));
        int known = 0;
        for (size_t i = 0; i < wt->nprefixes; i++)
            known |= st.accesses == wt->prefixes[i];
        CHECKF(known, "a reader opened during writing sees %llu accesses, not a commit",
               (unsigned long long)st.accesses);
        size_t k = (size_t)st.accesses;
        tu_check_stats(r, wt->all, k);
        for (int i = 0; i < 10; i++) {
            mh_query q;
            size_t max;
            tu_random_query(&rng, wt->all, k, &q, &max);
            tu_check_query(r, wt->all, k, &q, max);
        }
        mh_reader_close(r);
        wt->opened++;
    }
    return NULL;
}

typedef struct qjob {
    const mh_reader *r;
    const mh_access *all;
    size_t n, count;
    uint64_t seed;
} qjob;

static void *query_thread(void *arg) {
    qjob *j = arg;
    tu_random_queries(j->r, j->all, j->n, j->count, j->seed);
    return NULL;
}

static void run_config(const config *c) {
    uint64_t seed = c->seed + g_seed_offset;
    printf("config '%s' seed %llu: %zu accesses\n", c->name, (unsigned long long)seed,
           c->total);
    fflush(stdout);
    snprintf(tu_note, sizeof tu_note, "config '%s' seed %llu (replay: oracle QUERIES %llu)",
             c->name, (unsigned long long)seed, (unsigned long long)g_seed_offset);

    mh_access *all = calloc(c->total, sizeof *all);
    CHECK(all != NULL);
    size_t n = 0;
    if (c->flags & HOSTILE) {
        hostile_trace(seed, all, c->total);
        n = c->total;
    } else {
        mh_synth *s = mh_synth_new(seed, c->total, c->flags);
        CHECK(s != NULL);
        size_t k;
        while ((k = mh_synth_next(s, all + n, c->total - n)) > 0)
            n += k;
        mh_synth_free(s);
    }
    CHECK(n == c->total);

    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "oracle");
    char store[4096];
    tu_join(store, sizeof store, dir, "store");

    mh_writer_options opt;
    mh_writer_options_init(&opt);
    if (!c->default_opts) {
        opt.slice_accesses = c->slice;
        opt.block_accesses = c->block;
        opt.chunk_min_accesses = c->chunk_min;
    }
    if (c->background >= 0)
        opt.background = c->background;
    opt.commit_accesses = c->auto_commit;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &opt, &w));
    char seedtxt[32];
    snprintf(seedtxt, sizeof seedtxt, "%llu", (unsigned long long)seed);
    CHECK_OK(mh_writer_set_meta(w, "tracer", "mh_synth"));
    CHECK_OK(mh_writer_set_meta(w, "seed", seedtxt));

    tu_rng rng = {seed * 7919 + 1};
    /* commit and discard points, in ascending order */
    size_t commit_at[8], discard_at[8];
    for (int i = 0; i < c->commits; i++)
        commit_at[i] = 1 + (size_t)tu_below(&rng, n - 1);
    qsort(commit_at, (size_t)c->commits, sizeof commit_at[0], cmp_size);
    for (int i = 0; i < c->discard; i++)
        discard_at[i] = 1 + (size_t)tu_below(&rng, n - 1);
    qsort(discard_at, (size_t)c->discard, sizeof discard_at[0], cmp_size);

    int ci = 0, di = 0;
    size_t pos = 0;
    mh_reader *early = NULL; /* opened after the first commit */
    size_t early_n = 0;
    /* the watcher starts after the first commit and may see any later one */
    size_t prefixes[10];
    size_t nprefixes = 0;
    for (int i = 0; i < c->commits; i++)
        prefixes[nprefixes++] = commit_at[i];
    prefixes[nprefixes++] = n;
    watcher wt = {store, all, prefixes, nprefixes, 0, 0, seed + 4242};
    pthread_t wth;
    int watching = 0;
    while (pos < n) {
        while (ci < c->commits && commit_at[ci] <= pos) {
            CHECK_OK(mh_writer_commit(w));
            CHECK(mh_writer_committed(w) == pos);
            if (!early) {
                CHECK_OK(mh_reader_open(store, &early));
                early_n = pos;
                tu_check_stats(early, all, early_n);
                CHECK(pthread_create(&wth, NULL, watch_thread, &wt) == 0);
                watching = 1;
            }
            ci++;
        }
        while (di < c->discard && discard_at[di] <= pos) {
            if (all[pos].transition > all[pos - 1].transition)
                append_and_discard(w, all, pos, c->default_opts ? opt.slice_accesses : c->slice,
                                   &rng);
            di++;
        }
        /* the next piece ends before the next commit or discard point */
        size_t limit = n;
        if (ci < c->commits && commit_at[ci] < limit)
            limit = commit_at[ci];
        if (di < c->discard && discard_at[di] < limit)
            limit = discard_at[di];
        size_t piece = tu_below(&rng, 5) == 0 ? 1 : 1 + (size_t)tu_below(&rng, 5000);
        if (piece > limit - pos)
            piece = limit - pos;
        if (piece == 1) {
            CHECK_OK(mh_writer_append(w, &all[pos]));
        } else {
            size_t bad = 12345;
            CHECK_OK(mh_writer_append_batch(w, &all[pos], piece, &bad));
        }
        pos += piece;
        CHECK(mh_writer_next_id(w) == pos);
    }
    CHECK_OK(mh_writer_close(w));
    if (watching) {
        atomic_store(&wt.done, 1);
        CHECK(pthread_join(wth, NULL) == 0);
        printf("  %zu readers opened while writing saw whole commits\n", wt.opened);
    }

    /* fsck's backend decodes everything: a clean store, every access */
    mh_verify_result res = {.struct_size = sizeof res};
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &res));
    CHECK(res.problems == 0 && res.accesses == n);
    CHECK_OK(mh_verify(store, MH_VERIFY_REPAIR, NULL, NULL, &res));
    CHECK(res.problems == 0 && res.repaired == 0);

    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    /* decoded-block caches of every size: the minimum (two blocks, evicting
     * all the time), a few dozen blocks, the default */
    static const size_t caches[3] = {0, 64 << 10, MH_READER_CACHE_DEFAULT};
    size_t cache = caches[c->seed % 3];
    printf("  decoded-block cache %zu bytes\n", cache);
    CHECK_OK(mh_reader_set_cache(r, cache));
    tu_check_stats(r, all, n);
    CHECK(mh_reader_meta_find(r, "seed") && !strcmp(mh_reader_meta_find(r, "seed"), seedtxt));
    CHECK(mh_reader_meta_find(r, "tracer") &&
          !strcmp(mh_reader_meta_find(r, "tracer"), "mh_synth"));
    if (c->commits > 0)
        CHECKF(mh_reader_segment_count(r) >= 2, "%zu commits left %zu segments",
               (size_t)c->commits, mh_reader_segment_count(r));
    if (c->auto_commit) {
        /* each automatic commit waited for commit_accesses pending accesses */
        size_t segs = mh_reader_segment_count(r);
        CHECKF(segs >= n / (2 * c->auto_commit), "%zu automatic commits for %zu accesses",
               segs, n);
        for (size_t i = 0; i + 1 < segs; i++) {
            mh_segment_info si = {.struct_size = sizeof si};
            CHECK_OK(mh_reader_segment_info(r, i, &si));
            CHECKF(si.accesses >= c->auto_commit, "segment %zu holds %llu accesses, "
                   "committed before %llu were pending", i,
                   (unsigned long long)si.accesses, (unsigned long long)c->auto_commit);
        }
    }

    /* the early reader still sees only its prefix */
    if (early) {
        tu_check_stats(early, all, early_n);
        tu_random_queries(early, all, early_n, g_queries / 10, seed + 1000);
        mh_reader_close(early);
    }

    /* one thread, then two at once on the same reader; big slices make
     * whole-space queries decode more, so they get fewer */
    size_t count = c->default_opts ? g_queries / 4 : g_queries;
    tu_random_queries(r, all, n, count, seed + 1);
    qjob jobs[2] = {{r, all, n, count / 4, seed + 2}, {r, all, n, count / 4, seed + 3}};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, query_thread, &jobs[1]) == 0);
    query_thread(&jobs[0]);
    CHECK(pthread_join(th, NULL) == 0);

    mh_reader_close(r);
    tu_rmtree(dir);
    free(all);
    tu_context[0] = 0;
}

int main(int argc, char **argv) {
    if (argc > 1)
        g_queries = strtoull(argv[1], NULL, 0);
    if (argc > 2)
        g_seed_offset = strtoull(argv[2], NULL, 0);
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        run_config(&configs[i]);
    printf("oracle: all configurations agree\n");
    return 0;
}
