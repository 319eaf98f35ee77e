/*
 * edge.c - the boundaries of the data model and of the writer, each checked
 * against the oracle with every start near the data, both kinds, both
 * directions and every op set: an empty store, one access, a transition
 * holding more than two slices, gaps between slices, 0 and UINT64_MAX as
 * transitions and addresses, sizes up to 2^32 - 1 ending at UINT64_MAX,
 * accesses straddling chunk boundaries, reopening and appending, discarding
 * (in the buffer, across flushed slices, refused once committed), metadata,
 * and stats and introspection equal to what was appended.
 */
#include <string.h>

#include "mh_format.h"
#include "testutil.h"

static char g_dir[4096];
static int g_store_no;

/* ---- a growable trace and the stores written from it --------------------- */
typedef struct trace {
    mh_access *a;
    size_t n, cap;
} trace;

static void add(trace *t, uint64_t tr, uint64_t phys, uint32_t size, uint8_t op,
                int has_linear, uint64_t linear) {
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->a = realloc(t->a, t->cap * sizeof *t->a);
        CHECK(t->a != NULL);
    }
    mh_access *a = &t->a[t->n];
    memset(a, 0, sizeof *a);
    a->id = t->n;
    a->transition = tr;
    a->physical = phys;
    a->size = size;
    a->op = op;
    a->has_linear = (uint8_t)has_linear;
    a->linear = has_linear ? linear : 0;
    t->n++;
}

static void new_store(char *buf, size_t cap, const char *tag) {
    char name[64];
    snprintf(name, sizeof name, "%02d-%s.store", g_store_no++, tag);
    tu_join(buf, cap, g_dir, name);
}

static mh_writer_options small_opts(uint32_t slice, uint32_t chunk_min, int background) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = slice;
    o.block_accesses = 64;
    o.chunk_min_accesses = chunk_min;
    o.background = background;
    o.commit_accesses = 0;
    return o;
}

/* Writes t (committing at each of the ncommit ids in commits) and opens it. */
static mh_reader *write_store(const char *path, const trace *t, const mh_writer_options *o,
                              const size_t *commits, size_t ncommit) {
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(path, MH_CREATE, o, &w));
    size_t pos = 0;
    for (size_t c = 0; c <= ncommit; c++) {
        size_t end = c < ncommit ? commits[c] : t->n;
        if (end > pos) {
            size_t bad = 0;
            CHECK_OK(mh_writer_append_batch(w, t->a + pos, end - pos, &bad));
            pos = end;
        }
        if (c < ncommit)
            CHECK_OK(mh_writer_commit(w));
    }
    CHECK_OK(mh_writer_close(w));
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(path, &r));
    tu_check_stats(r, t->a, t->n);
    return r;
}

/* ---- exhaustive queries around the data ---------------------------------- */
static uint64_t sadd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t ssub(uint64_t a, uint64_t b) { return a < b ? 0 : a - b; }

/* a small set: exhaustive means every combination, so each axis stays short */
typedef struct u64set {
    uint64_t v[48];
    size_t n;
} u64set;

static void put(u64set *s, uint64_t x) {
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == x)
            return;
    if (s->n < sizeof s->v / sizeof s->v[0])
        s->v[s->n++] = x;
}

/* Starts: every distinct transition (up to a bound) and its neighbours,
 * ids at the ends and at every transition change, and the extremes. Ranges:
 * every access's first and last byte and the bytes beside them, whole
 * ranges, and extra ranges given by the caller. */
static void exhaustive(const mh_reader *r, const trace *t, const uint64_t (*extra)[2],
                       size_t nextra) {
    u64set ts = {0}, ids = {0};
    size_t ranges_cap = 64 + nextra;
    uint64_t(*ranges)[2] = calloc(ranges_cap, sizeof *ranges);
    CHECK(ranges != NULL);
    size_t nr = 0;
    put(&ts, 0);
    put(&ts, 1);
    put(&ts, UINT64_MAX);
    put(&ts, UINT64_MAX - 1);
    put(&ids, 0);
    put(&ids, 1);
    put(&ids, t->n);
    put(&ids, t->n + 1);
    put(&ids, UINT64_MAX);
    put(&ids, ssub(t->n, 1));
    size_t step = t->n / 12 + 1;
    for (size_t i = 0; i < t->n; i++) {
        int change = i == 0 || t->a[i].transition != t->a[i - 1].transition;
        if (change && (i % step == 0 || ts.n < 16)) {
            put(&ts, ssub(t->a[i].transition, 1));
            put(&ts, t->a[i].transition);
            put(&ts, sadd(t->a[i].transition, 1));
            put(&ids, i);
            put(&ids, ssub(i, 1));
        }
    }
    ranges[nr][0] = 0, ranges[nr++][1] = UINT64_MAX;
    ranges[nr][0] = 0, ranges[nr++][1] = 0;
    ranges[nr][0] = UINT64_MAX, ranges[nr++][1] = UINT64_MAX;
    for (size_t i = 0; i < t->n && nr + 4 < 32; i += step) {
        const mh_access *a = &t->a[i];
        uint64_t last = a->physical + (a->size - 1);
        ranges[nr][0] = a->physical, ranges[nr++][1] = a->physical;
        ranges[nr][0] = last, ranges[nr++][1] = last;
        ranges[nr][0] = ssub(a->physical, 1), ranges[nr++][1] = ssub(a->physical, 1);
        ranges[nr][0] = sadd(last, 1), ranges[nr++][1] = sadd(last, 1);
    }
    for (size_t i = 0; i < nextra; i++)
        ranges[nr][0] = extra[i][0], ranges[nr++][1] = extra[i][1];

    static const size_t maxes[] = {1, 2, 7, 100000};
    size_t runs = 0;
    for (int kind = 0; kind < 2; kind++) {
        const u64set *starts = kind == MH_FROM_TRANSITION ? &ts : &ids;
        for (size_t si = 0; si < starts->n; si++) {
            for (int dir = 0; dir < 2; dir++) {
                for (size_t ri = 0; ri < nr; ri++) {
                    for (uint32_t ops = 1; ops <= MH_OPS_ALL; ops++) {
                        mh_query q;
                        mh_query_init(&q);
                        q.start_kind = (uint32_t)kind;
                        q.direction = (uint32_t)dir;
                        q.start = starts->v[si];
                        q.addr_first = ranges[ri][0];
                        q.addr_last = ranges[ri][1];
                        q.ops = ops;
                        size_t max = maxes[(si + ri + ops) % 4];
                        if (max > t->n + 1)
                            max = t->n + 1;
                        snprintf(tu_context, sizeof tu_context,
                                 "%s %s %llu [0x%llx, 0x%llx] ops %u max %zu",
                                 dir ? "backward" : "forward", kind ? "id" : "transition",
                                 (unsigned long long)q.start, (unsigned long long)q.addr_first,
                                 (unsigned long long)q.addr_last, ops, max);
                        tu_check_query(r, t->a, t->n, &q, max);
                        runs++;
                    }
                }
            }
        }
    }
    tu_context[0] = 0;
    free(ranges);
    printf("  %zu exhaustive queries agree\n", runs);
}

static int count_shared_boundaries(const mh_reader *r) {
    int shared = 0;
    uint64_t prev_last = 0;
    int have = 0;
    for (size_t s = 0; s < mh_reader_segment_count(r); s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        CHECK_OK(mh_reader_segment_info(r, s, &si));
        for (size_t k = 0; k < si.slices; k++) {
            mh_slice_info sl = {.struct_size = sizeof sl};
            CHECK_OK(mh_reader_slice_info(r, s, k, &sl));
            if (have && sl.transition_first == prev_last)
                shared++;
            prev_last = sl.transition_last;
            have = 1;
        }
    }
    return shared;
}

/* ---- the cases ------------------------------------------------------------ */
static void test_empty(void) {
    printf("empty store\n");
    char path[4096];
    new_store(path, sizeof path, "empty");
    trace t = {0};
    mh_writer_options o = small_opts(100, 1, 1);
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(path, MH_CREATE, &o, &w));
    CHECK(mh_writer_next_id(w) == 0 && mh_writer_committed(w) == 0);
    CHECK_OK(mh_writer_commit(w)); /* nothing new: nothing happens */
    CHECK_OK(mh_writer_discard_from(w, 0));
    CHECK_OK(mh_writer_close(w));
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(path, &r));
    tu_check_stats(r, NULL, 0);
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    CHECK(st.accesses == 0 && st.transition_first == 0 && st.transition_last == 0 &&
          st.slices == 0 && st.chunks == 0 && st.blocks == 0);
    CHECK(mh_reader_segment_count(r) == 0);
    CHECK(mh_reader_meta_count(r) == 0);
    exhaustive(r, &t, NULL, 0);
    mh_cursor *c = NULL;
    mh_query q;
    mh_query_init(&q);
    CHECK_OK(mh_cursor_open(r, &q, &c));
    mh_access out[4];
    size_t n = 9;
    CHECK_OK(mh_cursor_next(c, out, 4, &n));
    CHECK(n == 0);
    mh_cursor_close(c);
    mh_reader_close(r);
    mh_verify_result res = {.struct_size = sizeof res};
    CHECK_OK(mh_verify(path, 0, NULL, NULL, &res));
    CHECK(res.accesses == 0 && res.problems == 0);

    /* metadata alone: a segment without accesses */
    new_store(path, sizeof path, "meta-only");
    CHECK_OK(mh_writer_open(path, MH_CREATE, &o, &w));
    CHECK_OK(mh_writer_set_meta(w, "tracer", "none"));
    CHECK_OK(mh_writer_close(w));
    CHECK_OK(mh_reader_open(path, &r));
    tu_check_stats(r, NULL, 0);
    CHECK(mh_reader_meta_find(r, "tracer") && !strcmp(mh_reader_meta_find(r, "tracer"), "none"));
    exhaustive(r, &t, NULL, 0);
    mh_reader_close(r);
    CHECK_OK(mh_verify(path, 0, NULL, NULL, &res));
}

static void test_one(void) {
    static const struct {
        uint64_t t, phys;
        uint32_t size;
        uint8_t op;
        int lin;
    } cases[] = {
        {0, 0, 1, MH_OP_READ, 1},
        {UINT64_MAX, UINT64_MAX, 1, MH_OP_WRITE, 0},
        {12345, UINT64_MAX - (UINT32_MAX - 1ull), UINT32_MAX, MH_OP_EXEC, 1},
        {UINT64_MAX, 0, UINT32_MAX, MH_OP_READ, 1},
        {1ull << 63, 1ull << 63, 4096, MH_OP_WRITE, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        printf("one access: t=%llu phys=0x%llx size=%u\n", (unsigned long long)cases[i].t,
               (unsigned long long)cases[i].phys, cases[i].size);
        char path[4096];
        new_store(path, sizeof path, "one");
        trace t = {0};
        add(&t, cases[i].t, cases[i].phys, cases[i].size, cases[i].op, cases[i].lin,
            cases[i].phys ^ 0xabcdef);
        mh_writer_options o = small_opts(100, 1, (int)(i & 1));
        mh_reader *r = write_store(path, &t, &o, NULL, 0);
        exhaustive(r, &t, NULL, 0);
        mh_reader_close(r);
        free(t.a);
    }
}

static void test_one_transition(void) {
    printf("a transition longer than two slices\n");
    char path[4096];
    new_store(path, sizeof path, "one-transition");
    trace t = {0};
    for (int i = 0; i < 30; i++)
        add(&t, 3, 0x1000 + 8u * (unsigned)i, 8, MH_OP_READ, 1, 0x401000 + 8u * (unsigned)i);
    for (int i = 0; i < 750; i++) /* > 2 x 100: cut inside the transition, twice */
        add(&t, 7, 0x2000 + 4u * (unsigned)(i % 300), 4, (uint8_t)(i % 3), i % 2, 0x9000 + (unsigned)i);
    for (int i = 0; i < 40; i++)
        add(&t, 9 + (uint64_t)i / 8, 0x1000 + 8u * (unsigned)i, 8, MH_OP_WRITE, 1, 0x401000);
    mh_writer_options o = small_opts(100, 4, 1);
    mh_reader *r = write_store(path, &t, &o, NULL, 0);
    int shared = count_shared_boundaries(r);
    CHECKF(shared >= 3, "750 accesses at one transition with 100-access slices: %d slice "
           "boundaries inside it", shared);
    exhaustive(r, &t, NULL, 0);
    /* resume chains through the shared transition, page by page */
    tu_rng rng = {7};
    for (int dir = 0; dir < 2; dir++) {
        for (uint32_t ops = 1; ops <= MH_OPS_ALL; ops++) {
            mh_query q;
            mh_query_init(&q);
            q.direction = (uint32_t)dir;
            q.start = 7;
            q.ops = ops;
            tu_check_chain(r, t.a, t.n, &q, 40, &rng);
            tu_check_cursor(r, t.a, t.n, &q, t.n + 1, &rng);
        }
    }
    tu_random_queries(r, t.a, t.n, 500, 77);
    mh_reader_close(r);
    free(t.a);
}

/* Where the writer cuts slices of soft accesses (SPEC: at the first new
 * transition once a slice holds soft, anywhere at 2 x soft): the sizes of
 * t's slices, computed here from the rule alone. */
static size_t expected_cuts(const trace *t, uint32_t soft, uint32_t *sizes) {
    size_t ns = 0, n = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (n == 2u * soft || (n >= soft && t->a[i].transition != t->a[i - 1].transition)) {
            sizes[ns++] = (uint32_t)n;
            n = 0;
        }
        n++;
    }
    if (n)
        sizes[ns++] = (uint32_t)n;
    return ns;
}

static void test_slice_cuts(void) {
    printf("slice cuts do not depend on how the accesses are handed in\n");
    trace t = {0};
    tu_rng rng = {2024};
    static const unsigned long_runs[] = {150, 99, 250, 1, 450, 100, 201};
    uint64_t tr = 1;
    for (size_t k = 0; k < sizeof long_runs / sizeof long_runs[0]; k++) {
        for (int i = 0; i < 120; i++) { /* short transitions in between */
            unsigned run = 1 + (unsigned)tu_below(&rng, 4);
            for (unsigned j = 0; j < run; j++)
                add(&t, tr, 0x1000 + 8 * tu_below(&rng, 4096), 8, (uint8_t)tu_below(&rng, 3),
                    (int)tu_below(&rng, 2), 0x7000);
            tr++;
        }
        for (unsigned j = 0; j < long_runs[k]; j++)
            add(&t, tr, 0x1000 + 4 * tu_below(&rng, 4096), 4, (uint8_t)tu_below(&rng, 3), 0, 0);
        tr += 1 + tu_below(&rng, 3);
    }
    uint32_t *want = malloc(t.n * sizeof *want), *got = malloc(t.n * sizeof *got);
    CHECK(want && got);
    size_t nwant = expected_cuts(&t, 100, want);
    /* one at a time; batches that fit the buffer's room; one batch longer
     * than the buffer; random pieces of both kinds */
    for (int mode = 0; mode < 4; mode++) {
        for (int bg = 0; bg < 2; bg++) {
            char path[4096], tag[32];
            snprintf(tag, sizeof tag, "cuts-%d-%d", mode, bg);
            new_store(path, sizeof path, tag);
            mh_writer_options o = small_opts(100, 4, bg);
            mh_writer *w = NULL;
            CHECK_OK(mh_writer_open(path, MH_CREATE, &o, &w));
            for (size_t pos = 0; pos < t.n;) {
                size_t piece = mode == 0 ? 1 : mode == 1 ? 37 : mode == 2 ? t.n
                               : 1 + (size_t)tu_below(&rng, 500);
                if (piece > t.n - pos)
                    piece = t.n - pos;
                size_t bad = 0;
                CHECK_OK(mh_writer_append_batch(w, t.a + pos, piece, &bad));
                pos += piece;
                CHECK(mh_writer_next_id(w) == pos);
            }
            CHECK_OK(mh_writer_close(w));
            mh_reader *r = NULL;
            CHECK_OK(mh_reader_open(path, &r));
            size_t ngot = 0;
            for (size_t sg = 0; sg < mh_reader_segment_count(r); sg++) {
                mh_segment_info si = {.struct_size = sizeof si};
                CHECK_OK(mh_reader_segment_info(r, sg, &si));
                for (size_t k = 0; k < si.slices && ngot < t.n; k++) {
                    mh_slice_info sl = {.struct_size = sizeof sl};
                    CHECK_OK(mh_reader_slice_info(r, sg, k, &sl));
                    got[ngot++] = sl.accesses;
                }
            }
            CHECKF(ngot == nwant && memcmp(got, want, nwant * sizeof *want) == 0,
                   "mode %d, background %d: %zu slices, %zu by the rule", mode, bg, ngot,
                   nwant);
            exhaustive(r, &t, NULL, 0);
            mh_reader_close(r);
        }
    }
    free(want);
    free(got);
    free(t.a);
}

static void test_gaps(void) {
    printf("gaps between slices, extreme transitions and addresses\n");
    char path[4096];
    new_store(path, sizeof path, "gaps");
    trace t = {0};
    static const uint64_t bases[] = {0, 1000, 1ull << 40, (1ull << 63) + 5, UINT64_MAX - 21};
    for (size_t b = 0; b < 5; b++) {
        for (uint64_t i = 0; i < 150; i++) {
            uint64_t tr = bases[b] + i / 7;
            switch (i % 6) {
            case 0: add(&t, tr, 0, 1, MH_OP_READ, 1, 0x1000); break;
            case 1: add(&t, tr, UINT64_MAX, 1, MH_OP_WRITE, 0, 0); break;
            case 2: add(&t, tr, UINT64_MAX - (UINT32_MAX - 1ull), UINT32_MAX, MH_OP_READ, 1, 7); break;
            case 3: add(&t, tr, 0, UINT32_MAX, MH_OP_EXEC, 1, 0); break;
            case 4: add(&t, tr, 0x10000 + 64 * i, 64, MH_OP_WRITE, 1, 0x7f0000010000 + 64 * i); break;
            default: add(&t, tr, (1ull << 63) - 2, 4, (uint8_t)(i % 3), 0, 0); break;
            }
        }
    }
    mh_writer_options o = small_opts(64, 1, 0);
    size_t commits[] = {150, 300, 600};
    mh_reader *r = write_store(path, &t, &o, commits, 3);
    CHECK(mh_reader_segment_count(r) == 4);
    uint64_t extra[][2] = {
        {500, 500}, {2, 999}, {UINT64_MAX - 1, UINT64_MAX}, {(1ull << 63) - 1, 1ull << 63},
        {1, UINT64_MAX - 1}, {UINT32_MAX - 1ull, UINT32_MAX}, {UINT32_MAX, UINT32_MAX},
    };
    exhaustive(r, &t, extra, sizeof extra / sizeof extra[0]);
    /* starts in the middle of every gap */
    for (size_t b = 0; b + 1 < 5; b++) {
        uint64_t mid = bases[b] + 50 + (bases[b + 1] - bases[b] - 50) / 2;
        for (int dir = 0; dir < 2; dir++) {
            for (uint32_t ops = 1; ops <= MH_OPS_ALL; ops++) {
                mh_query q;
                mh_query_init(&q);
                q.direction = (uint32_t)dir;
                q.start = mid;
                q.ops = ops;
                /* every cluster has every op: the next one is always found */
                CHECK(tu_check_query(r, t.a, t.n, &q, 1) == 1);
                tu_check_query(r, t.a, t.n, &q, 1000);
            }
        }
    }
    tu_random_queries(r, t.a, t.n, 1000, 78);
    mh_reader_close(r);
    free(t.a);
}

static void test_straddle(void) {
    printf("accesses straddling chunk boundaries\n");
    char path[4096];
    new_store(path, sizeof path, "straddle");
    trace t = {0};
    tu_rng rng = {31};
    /* clusters of overlapping and touching accesses separated by gaps of
     * 0..3 bytes, many crossing 4 KiB page boundaries */
    for (uint64_t tr = 0; tr < 400; tr++) {
        int per = (int)tu_below(&rng, 4);
        for (int k = 0; k < per; k++) {
            uint64_t page = 0x100000 + 4096 * tu_below(&rng, 6);
            uint64_t phys = page - 16 + tu_below(&rng, 32);
            uint32_t size = 1 + (uint32_t)tu_below(&rng, 24);
            add(&t, tr, phys, size, (uint8_t)tu_below(&rng, 3), 1, phys + 0x1000);
        }
    }
    for (int chunk_min = 1; chunk_min <= 64; chunk_min *= 8) {
        mh_writer_options o = small_opts(120, (uint32_t)chunk_min, 1);
        char p2[4200];
        snprintf(p2, sizeof p2, "%s-%d", path, chunk_min);
        mh_reader *r = write_store(p2, &t, &o, NULL, 0);
        /* every chunk edge, its neighbours, from the start of every slice */
        mh_segment_info si = {.struct_size = sizeof si};
        CHECK_OK(mh_reader_segment_info(r, 0, &si));
        size_t runs = 0;
        for (size_t s = 0; s < si.slices; s++) {
            mh_slice_info sl = {.struct_size = sizeof sl};
            CHECK_OK(mh_reader_slice_info(r, 0, s, &sl));
            for (uint32_t c = 0; c < sl.chunks; c++) {
                mh_chunk_info ci = {.struct_size = sizeof ci};
                CHECK_OK(mh_reader_chunk_info(r, 0, sl.chunk_first + c, &ci));
                uint64_t edges[6] = {ci.phy_first - 1, ci.phy_first, ci.phy_first + 1,
                                     ci.phy_last - 1, ci.phy_last, ci.phy_last + 1};
                for (int e = 0; e < 6; e++) {
                    for (int width = 1; width <= 2; width++) {
                        for (int dir = 0; dir < 2; dir++) {
                            mh_query q;
                            mh_query_init(&q);
                            q.direction = (uint32_t)dir;
                            q.start = dir ? sl.transition_last : sl.transition_first;
                            q.addr_first = edges[e];
                            q.addr_last = edges[e] + (uint64_t)width - 1;
                            q.ops = (uint32_t)(1u << ci.op) | (uint32_t)(e & 1 ? MH_OPS_ALL : 0);
                            tu_check_query(r, t.a, t.n, &q, 1 + (size_t)(e * 3));
                            runs++;
                        }
                    }
                }
            }
        }
        printf("  chunk_min %d: %llu chunks, %zu edge queries agree\n", chunk_min,
               (unsigned long long)si.chunks, runs);
        tu_random_queries(r, t.a, t.n, 500, 79);
        mh_reader_close(r);
    }
    free(t.a);
}

static void test_reopen_append(void) {
    printf("reopen after commit, append to an existing store\n");
    char path[4096];
    new_store(path, sizeof path, "append");
    trace t = {0};
    tu_rng rng = {41};
    for (uint64_t i = 0; i < 3000; i++)
        add(&t, 10 + i / 2, 0x4000 + 8 * tu_below(&rng, 200), 8, (uint8_t)(i % 3), (int)(i & 1),
            0x7000000 + i);
    mh_writer_options o = small_opts(100, 2, 1);
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(path, MH_CREATE, &o, &w));
    CHECK_OK(mh_writer_set_meta(w, "tracer", "edge"));
    CHECK_OK(mh_writer_set_meta(w, "session", "1"));
    CHECK_OK(mh_writer_append_batch(w, t.a, 1000, NULL));
    CHECK_OK(mh_writer_commit(w));
    mh_reader *ra = NULL;
    CHECK_OK(mh_reader_open(path, &ra));
    CHECK_OK(mh_writer_append_batch(w, t.a + 1000, 1000, NULL));
    /* appended but not committed: invisible to a new reader too */
    mh_reader *rb = NULL;
    CHECK_OK(mh_reader_open(path, &rb));
    tu_check_stats(rb, t.a, 1000);
    mh_reader_close(rb);
    CHECK_OK(mh_writer_commit(w));
    CHECK_OK(mh_reader_open(path, &rb));
    tu_check_stats(ra, t.a, 1000); /* the old reader keeps its snapshot */
    tu_check_stats(rb, t.a, 2000);
    tu_random_queries(ra, t.a, 1000, 200, 80);
    tu_random_queries(rb, t.a, 2000, 200, 81);
    mh_reader_close(ra);
    mh_reader_close(rb);
    CHECK_OK(mh_writer_close(w));

    /* a second session, with other options: segments of one store may
     * differ in rows per block and slicing */
    mh_writer_options o2 = small_opts(37, 1, 0);
    o2.block_accesses = 128;
    CHECK_OK(mh_writer_open(path, MH_APPEND, &o2, &w));
    CHECK(mh_writer_next_id(w) == 2000 && mh_writer_committed(w) == 2000);
    mh_access before = t.a[1999];
    before.transition--;
    CHECK_RC(mh_writer_append(w, &before), MH_EORDER); /* the store's last transition counts */
    CHECK_RC(mh_writer_discard_from(w, t.a[1999].transition), MH_ECOMMITTED);
    CHECK_OK(mh_writer_set_meta(w, "session", "2"));
    for (size_t i = 2000; i < 3000; i++)
        CHECK_OK(mh_writer_append(w, &t.a[i]));
    CHECK_OK(mh_writer_close(w));
    CHECK_OK(mh_reader_open(path, &rb));
    tu_check_stats(rb, t.a, t.n);
    CHECK(mh_reader_segment_count(rb) == 3);
    mh_segment_info s1 = {.struct_size = sizeof s1}, s2 = {.struct_size = sizeof s2};
    CHECK_OK(mh_reader_segment_info(rb, 1, &s1));
    CHECK_OK(mh_reader_segment_info(rb, 2, &s2));
    CHECK(s1.rows_per_block == 64 && s2.rows_per_block == 128);
    CHECK(!strcmp(mh_reader_meta_find(rb, "tracer"), "edge")); /* carried over */
    CHECK(!strcmp(mh_reader_meta_find(rb, "session"), "2"));  /* replaced */
    CHECK(mh_reader_meta_count(rb) == 2);
    tu_random_queries(rb, t.a, t.n, 500, 82);
    mh_reader_close(rb);
    free(t.a);
}

static void test_discard(int background) {
    printf("discard (background %d)\n", background);
    char path[4096];
    new_store(path, sizeof path, "discard");
    trace kept = {0};
    mh_writer_options o = small_opts(100, 2, background);
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(path, MH_CREATE, &o, &w));
    mh_access a = {0};
    a.size = 4;
    /* everything uncommitted goes with discard_from(0) */
    for (uint64_t i = 0; i < 30; i++) {
        a.transition = i;
        a.physical = 0x100 + i;
        CHECK_OK(mh_writer_append(w, &a));
    }
    CHECK_OK(mh_writer_discard_from(w, 0));
    CHECK(mh_writer_next_id(w) == 0);
    /* transitions may start lower again: nothing is left to order against */
    for (uint64_t i = 0; i < 50; i++)
        add(&kept, 5 + i, 0x1000 + 4 * i, 4, (uint8_t)(i % 2), 1, 0x1000 + 4 * i);
    CHECK_OK(mh_writer_append_batch(w, kept.a, 50, NULL));
    /* inside the buffer: the last 10 go */
    CHECK_OK(mh_writer_discard_from(w, 5 + 40));
    CHECK(mh_writer_next_id(w) == 40);
    kept.n = 40;
    /* a later transition than everything: nothing goes */
    CHECK_OK(mh_writer_discard_from(w, 1000));
    CHECK(mh_writer_next_id(w) == 40);
    /* across slices already built (and written when background) */
    size_t mark = kept.n;
    for (uint64_t i = 0; i < 450; i++)
        add(&kept, 45 + i / 3, 0x2000 + 8 * (i % 50), 8, (uint8_t)(i % 3), 0, 0);
    CHECK_OK(mh_writer_append_batch(w, kept.a + mark, kept.n - mark, NULL));
    uint64_t cut = kept.a[mark + 120].transition; /* 120 / 3: a transition start */
    CHECK(kept.a[mark + 119].transition < cut);
    CHECK_OK(mh_writer_discard_from(w, cut));
    kept.n = mark + 120;
    CHECK(mh_writer_next_id(w) == kept.n);
    /* the same transition may be appended again after a discard */
    add(&kept, cut, 0x3000, 2, MH_OP_EXEC, 1, 0x3000);
    CHECK_OK(mh_writer_append(w, &kept.a[kept.n - 1]));
    CHECK_OK(mh_writer_commit(w));
    uint64_t committed = mh_writer_committed(w);
    CHECK(committed == kept.n);
    /* committed accesses cannot go; uncommitted ones after them can */
    CHECK_RC(mh_writer_discard_from(w, cut), MH_ECOMMITTED);
    CHECK_RC(mh_writer_discard_from(w, 0), MH_ECOMMITTED);
    size_t mark2 = kept.n;
    for (uint64_t i = 0; i < 350; i++)
        add(&kept, cut + 1 + i / 2, 0x5000 + i, 1, MH_OP_WRITE, 1, 0x5000 + i);
    CHECK_OK(mh_writer_append_batch(w, kept.a + mark2, kept.n - mark2, NULL));
    CHECK_RC(mh_writer_discard_from(w, cut), MH_ECOMMITTED);
    CHECK(mh_writer_next_id(w) == kept.n); /* a refused discard discards nothing */
    CHECK_OK(mh_writer_discard_from(w, cut + 1));
    CHECK(mh_writer_next_id(w) == committed);
    kept.n = mark2;
    for (uint64_t i = 0; i < 20; i++)
        add(&kept, cut + 1, 0x6000 + i, 1, MH_OP_READ, 1, 0x6000 + i);
    CHECK_OK(mh_writer_append_batch(w, kept.a + mark2, 20, NULL));
    CHECK_OK(mh_writer_close(w));
    for (size_t i = 0; i < kept.n; i++)
        kept.a[i].id = i;
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(path, &r));
    tu_check_stats(r, kept.a, kept.n);
    exhaustive(r, &kept, NULL, 0);
    mh_reader_close(r);
    free(kept.a);
}

static void test_meta(void) {
    printf("metadata\n");
    char path[4096];
    new_store(path, sizeof path, "meta");
    mh_writer_options o = small_opts(100, 1, 1);
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(path, MH_CREATE, &o, &w));
    static const char *keys[] = {"tracer", "command", "empty", "utf8 \xc3\xa9\xe2\x9c\x93", "pid"};
    static const char *vals[] = {"edge", "./edge --all", "", "h\xc3\xa9llo \xe2\x9c\x93", "1234"};
    for (int i = 0; i < 5; i++)
        CHECK_OK(mh_writer_set_meta(w, keys[i], i == 0 ? "replaced later" : vals[i]));
    CHECK_OK(mh_writer_set_meta(w, keys[0], vals[0]));
    mh_access a = {0};
    a.size = 1;
    CHECK_OK(mh_writer_append(w, &a));
    CHECK_OK(mh_writer_commit(w));
    CHECK_OK(mh_writer_commit(w)); /* nothing new */
    CHECK_OK(mh_writer_close(w));
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(path, &r));
    CHECK(mh_reader_segment_count(r) == 1);
    CHECK(mh_reader_meta_count(r) == 5);
    int seen[5] = {0};
    for (size_t i = 0; i < 5; i++) {
        const char *k = NULL, *v = NULL;
        CHECK_OK(mh_reader_meta_get(r, i, &k, &v));
        CHECK(k && v);
        int found = 0;
        for (int j = 0; j < 5; j++) {
            if (!strcmp(k, keys[j])) {
                CHECKF(!strcmp(v, vals[j]), "meta %s = '%s', expected '%s'", k, v, vals[j]);
                CHECK(!seen[j]);
                seen[j] = found = 1;
            }
        }
        CHECKF(found, "unexpected metadata key '%s'", k);
        CHECK(mh_reader_meta_find(r, k) == v || !strcmp(mh_reader_meta_find(r, k), v));
    }
    mh_reader_close(r);
    /* a metadata change alone is a commit of its own */
    CHECK_OK(mh_writer_open(path, MH_APPEND, &o, &w));
    CHECK_OK(mh_writer_set_meta(w, "pid", "5678"));
    CHECK_OK(mh_writer_commit(w));
    CHECK_OK(mh_writer_close(w));
    CHECK_OK(mh_reader_open(path, &r));
    CHECK(mh_reader_segment_count(r) == 2);
    CHECK(mh_reader_meta_count(r) == 5);
    CHECK(!strcmp(mh_reader_meta_find(r, "pid"), "5678"));
    CHECK(!strcmp(mh_reader_meta_find(r, "command"), "./edge --all"));
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    CHECK(st.accesses == 1);
    mh_reader_close(r);
}

static void test_dictionary(void) {
    printf("dictionary and introspection\n");
    char path[4096];
    new_store(path, sizeof path, "dict");
    trace t = {0};
    for (uint64_t i = 0; i < 500; i++)
        add(&t, i / 4, 0x8000 + 16 * (i % 37), 1 + (uint32_t)(i % 16), (uint8_t)(i % 3),
            (int)(i % 5 != 0), 0xffff800000000000ull + i);
    mh_writer_options o = small_opts(100, 1, 1);
    size_t commits[] = {250};
    mh_reader *r = write_store(path, &t, &o, commits, 1);
    /* SPEC 7.3: version 1.0 has exactly these columns and operations */
    static const struct {
        const char *name;
        uint8_t type, width, encoding, nullable;
    } cols[] = {{"id", 1, 8, 1, 0},       {"transition", 1, 8, 1, 0}, {"physical", 1, 8, 1, 0},
                {"linear", 1, 8, 2, 1},   {"size", 1, 4, 3, 0},       {"operation", 2, 1, 4, 0}};
    CHECK(mh_reader_column_count(r) == 6);
    for (size_t i = 0; i < 6; i++) {
        mh_column_info c = {.struct_size = sizeof c};
        CHECK_OK(mh_reader_column(r, i, &c));
        CHECKF(c.name && !strcmp(c.name, cols[i].name), "column %zu is '%s'", i,
               c.name ? c.name : "(null)");
        CHECK(c.type == cols[i].type && c.width == cols[i].width &&
              c.encoding == cols[i].encoding && c.nullable == cols[i].nullable);
    }
    for (unsigned op = 0; op < MH_OP_COUNT; op++)
        CHECK(mh_reader_op_name(r, op) && !strcmp(mh_reader_op_name(r, op), mh_op_name(op)));
    size_t ns = mh_reader_string_count(r);
    CHECK(ns >= 9); /* six column names and three operation names at least */
    for (size_t i = 0; i < ns; i++)
        CHECK(mh_reader_string(r, i) != NULL);
    /* segment figures: sizes add up, files exist with the given names */
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    uint64_t sum = 0;
    for (size_t s = 0; s < mh_reader_segment_count(r); s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        CHECK_OK(mh_reader_segment_info(r, s, &si));
        CHECK(si.seq == s);
        char name[64];
        snprintf(name, sizeof name, "seg-%016llx.mhs", (unsigned long long)si.seq);
        CHECK(!strcmp(si.file_name, name));
        char file[4096];
        tu_join(file, sizeof file, path, si.file_name);
        size_t len = 0;
        unsigned char *data = tu_read_file(file, &len);
        CHECK(data != NULL);
        free(data);
        CHECK(si.file_bytes == len);
        CHECK(si.compressed_bytes + si.dict_bytes + si.index_bytes + 256 <= si.file_bytes);
        CHECK(si.rows_per_block == 64);
        sum += si.file_bytes;
    }
    char man[4096];
    tu_join(man, sizeof man, path, "MANIFEST");
    size_t mlen = 0;
    unsigned char *mdata = tu_read_file(man, &mlen);
    CHECK(mdata != NULL);
    free(mdata);
    CHECK(st.file_bytes == sum + mlen);
    exhaustive(r, &t, NULL, 0);
    mh_reader_close(r);
    free(t.a);
}

/* ---- end bounds ---------------------------------------------------------- */
/* Every start against every end (at, before, after, between accesses, the
 * extremes), both kinds and directions, plain runs, cursors and chains. */
static void exhaustive_ends(const mh_reader *r, const trace *t) {
    u64set ts = {0}, ids = {0};
    put(&ts, 0);
    put(&ts, UINT64_MAX);
    put(&ids, 0);
    put(&ids, UINT64_MAX);
    put(&ids, t->n);
    for (size_t i = 0; i < t->n; i += t->n / 14 + 1 + i % 3) {
        put(&ts, ssub(t->a[i].transition, 1));
        put(&ts, t->a[i].transition);
        put(&ts, sadd(t->a[i].transition, 1));
        put(&ids, i);
        put(&ids, i + 1);
    }
    tu_rng rng = {77};
    size_t runs = 0, nonempty = 0;
    for (int kind = 0; kind < 2; kind++)
        for (int ek = 1; ek <= 2; ek++)
            for (int dir = 0; dir < 2; dir++) {
                const u64set *starts = kind == MH_FROM_TRANSITION ? &ts : &ids;
                const u64set *ends = ek == MH_END_TRANSITION ? &ts : &ids;
                for (size_t si = 0; si < starts->n; si++)
                    for (size_t ei = 0; ei < ends->n; ei++) {
                        mh_query q;
                        mh_query_init(&q);
                        q.start_kind = (uint32_t)kind;
                        q.direction = (uint32_t)dir;
                        q.start = starts->v[si];
                        q.end_kind = (uint32_t)ek;
                        q.end = ends->v[ei];
                        q.ops = (uint32_t)(1 + (si + ei) % MH_OPS_ALL);
                        snprintf(tu_context, sizeof tu_context,
                                 "%s from %s %llu to %s %llu ops %u", dir ? "backward" : "forward",
                                 kind ? "id" : "transition", (unsigned long long)q.start,
                                 ek == MH_END_ID ? "id" : "transition",
                                 (unsigned long long)q.end, q.ops);
                        size_t max = (si + ei) % 5 == 0 ? 3 : t->n + 1;
                        nonempty += tu_check_query(r, t->a, t->n, &q, max) > 0;
                        if ((si + ei) % 7 == 0)
                            tu_check_cursor_pieces(r, t->a, t->n, &q, t->n + 1, 5, &rng);
                        if ((si + ei) % 11 == 0)
                            tu_check_chain(r, t->a, t->n, &q, 4, &rng);
                        runs++;
                    }
            }
    tu_context[0] = 0;
    printf("  %zu bounded queries agree (%zu with matches)\n", runs, nonempty);
    CHECK(nonempty > runs / 10);
}

/* Flips one byte of file path at offset off. */
static void flip(const char *path, uint64_t off) {
    size_t len = 0;
    unsigned char *p = tu_read_file(path, &len);
    CHECK(p != NULL && off < len);
    p[off] ^= 0x40;
    tu_write_file(path, p, len);
    free(p);
}

/* File offset of the compressed bytes of block b of segment file path. */
static uint64_t block_data_off(const char *path, uint32_t b) {
    size_t len = 0;
    unsigned char *p = tu_read_file(path, &len);
    uint64_t so = 0, ss = 0;
    uint32_t sn = 0;
    CHECK(p != NULL && mhf_seg_find(p, len, MHF_SECT_BLOCKS, &so, &ss, &sn));
    CHECK(b < sn);
    uint64_t rec = so + (uint64_t)b * MHF_BLOCK_SIZE;
    CHECK(rec + MHF_BLOCK_SIZE <= len);
    uint64_t off = mhf_load_u64(p + rec + MHF_BLOCK_OFFSET);
    uint32_t comp = mhf_load_u32(p + rec + MHF_BLOCK_COMP_SIZE);
    free(p);
    return off + comp / 2;
}

/* File offset of chunk record k of segment file path. */
static uint64_t chunk_rec_off(const char *path, uint32_t k) {
    size_t len = 0;
    unsigned char *p = tu_read_file(path, &len);
    uint64_t so = 0, ss = 0;
    uint32_t sn = 0;
    CHECK(p != NULL && mhf_seg_find(p, len, MHF_SECT_CHUNKS, &so, &ss, &sn));
    CHECK(k < sn);
    uint64_t off = so + (uint64_t)k * MHF_CHUNK_SIZE;
    free(p);
    return off;
}

static void seg_path(char *buf, size_t cap, const char *store, const mh_reader *r, size_t seg) {
    mh_segment_info si = {.struct_size = sizeof si};
    CHECK_OK(mh_reader_segment_info(r, seg, &si));
    tu_join(buf, cap, store, si.file_name);
}

/* q against the oracle (prefix t[0, n) is what the damaged store still
 * answers correctly), as a plain run and as a cursor. */
static void bounded_ok(const mh_reader *r, const trace *t, const mh_query *q) {
    snprintf(tu_context, sizeof tu_context, "past a damaged block: %s from %s %llu to %s %llu",
             q->direction ? "backward" : "forward", q->start_kind ? "id" : "transition",
             (unsigned long long)q->start, q->end_kind == MH_END_ID ? "id" : "transition",
             (unsigned long long)q->end);
    tu_check_query(r, t->a, t->n, q, t->n + 1);
    tu_rng rng = {5};
    tu_check_cursor_pieces(r, t->a, t->n, q, t->n + 1, 100, &rng);
    tu_context[0] = 0;
}

/* The query engine stops at the end bound: data past it is never read. A
 * damaged block past the end proves it: bounded queries still answer, the
 * same queries without the bound meet the damage. */
static void test_end_stops(void) {
    printf("end bounds stop the walk\n");
    /* three segments of 600 accesses: transitions 0..599, 1000..1599,
     * 2000..2599, one address and op (so a slice is one chunk and its
     * blocks hold ids in order), slices of 200 ids, blocks of 64 */
    trace t = {0};
    for (uint64_t s = 0; s < 3; s++)
        for (uint64_t i = 0; i < 600; i++)
            add(&t, s * 1000 + i, 0x1000, 8, MH_OP_WRITE, 1, 0x7000);
    size_t commits[2] = {600, 1200};
    mh_writer_options o = small_opts(200, 1, 0);
    char fwd_store[4096], bwd_store[4096], path[4096];
    new_store(fwd_store, sizeof fwd_store, "end-fwd");
    new_store(bwd_store, sizeof bwd_store, "end-bwd");
    mh_reader *r = write_store(fwd_store, &t, &o, commits, 2);
    exhaustive_ends(r, &t);
    /* damage the last segment for forward queries (a block, and the first
     * slice's chunk records: checked when a query first enters the slice)
     * ... */
    seg_path(path, sizeof path, fwd_store, r, 2);
    mh_reader_close(r);
    flip(path, block_data_off(path, 0));
    flip(path, chunk_rec_off(path, 0) + MHF_CHUNK_PHY_FIRST);
    r = write_store(bwd_store, &t, &o, commits, 2);
    /* ... and the first one for backward queries */
    seg_path(path, sizeof path, bwd_store, r, 0);
    mh_reader_close(r);
    flip(path, block_data_off(path, 1));

    mh_reader *rf = NULL, *rb = NULL;
    CHECK_OK(mh_reader_open(fwd_store, &rf));
    CHECK_OK(mh_reader_open(bwd_store, &rb));
    mh_access *out = calloc(t.n + 1, sizeof *out);
    CHECK(out != NULL);
    size_t n = 0;
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    /* forward: the damage is reached without a bound */
    CHECK_RC(mh_query_run(rf, &q, out, t.n + 1, &n), MH_ECHECKSUM);
    static const uint64_t fwd_t_ends[] = {0, 599, 1000, 1599, 1999};
    for (size_t i = 0; i < 5; i++) {
        q.end_kind = MH_END_TRANSITION, q.end = fwd_t_ends[i];
        bounded_ok(rf, &t, &q);
    }
    static const uint64_t fwd_id_ends[] = {0, 599, 1199};
    for (size_t i = 0; i < 3; i++) {
        q.end_kind = MH_END_ID, q.end = fwd_id_ends[i];
        bounded_ok(rf, &t, &q);
    }
    q.start_kind = MH_FROM_ID, q.start = 700; /* resumed */
    bounded_ok(rf, &t, &q);
    q.end_kind = MH_END_NONE;
    CHECK_RC(mh_query_run(rf, &q, out, t.n + 1, &n), MH_ECHECKSUM);

    /* backward */
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    q.direction = MH_BACKWARD;
    q.start = UINT64_MAX;
    CHECK_RC(mh_query_run(rb, &q, out, t.n + 1, &n), MH_ECHECKSUM);
    /* block 1 of segment 0 holds ids 64..127: ends above it and an id end
     * at the first row after it never decode it (a transition end at that
     * row would: only the block's rows tell whether more rows of that
     * transition precede it) */
    static const uint64_t bwd_t_ends[] = {2599, 1000, 600, 129, 200};
    for (size_t i = 0; i < 5; i++) {
        q.end_kind = MH_END_TRANSITION, q.end = bwd_t_ends[i];
        bounded_ok(rb, &t, &q);
    }
    static const uint64_t bwd_id_ends[] = {1799, 600, 128};
    for (size_t i = 0; i < 3; i++) {
        q.end_kind = MH_END_ID, q.end = bwd_id_ends[i];
        bounded_ok(rb, &t, &q);
    }
    q.start_kind = MH_FROM_ID, q.start = 1500;
    bounded_ok(rb, &t, &q);
    q.end_kind = MH_END_NONE;
    CHECK_RC(mh_query_run(rb, &q, out, t.n + 1, &n), MH_ECHECKSUM);
    mh_reader_close(rf);
    mh_reader_close(rb);

    /* inside one slice and one chunk: a damaged block after the end */
    trace u = {0};
    for (uint64_t i = 0; i < 1000; i++)
        add(&u, i, 0x2000, 8, MH_OP_READ, 0, 0);
    char one[4096];
    new_store(one, sizeof one, "end-block");
    mh_writer_options o1 = small_opts(5000, 128, 0);
    r = write_store(one, &u, &o1, NULL, 0);
    mh_segment_info si = {.struct_size = sizeof si};
    CHECK_OK(mh_reader_segment_info(r, 0, &si));
    CHECK(si.slices == 1 && si.chunks == 1 && si.blocks == 16);
    seg_path(path, sizeof path, one, r, 0);
    mh_reader_close(r);
    flip(path, block_data_off(path, 15)); /* rows 960..999 */
    flip(path, block_data_off(path, 0));  /* rows 0..63 */
    CHECK_OK(mh_reader_open(one, &r));
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    q.start = 100; /* inside block 1: block 0 is not needed for the start */
    CHECK_RC(mh_query_run(r, &q, out, u.n + 1, &n), MH_ECHECKSUM);
    q.end_kind = MH_END_TRANSITION, q.end = 959;
    bounded_ok(r, &u, &q);
    q.end_kind = MH_END_ID, q.end = 900;
    bounded_ok(r, &u, &q);
    q.direction = MH_BACKWARD, q.start = 959, q.end_kind = MH_END_NONE;
    CHECK_RC(mh_query_run(r, &q, out, u.n + 1, &n), MH_ECHECKSUM);
    q.end_kind = MH_END_TRANSITION, q.end = 65;
    bounded_ok(r, &u, &q);
    q.end_kind = MH_END_ID, q.end = 64; /* the first row of block 1 */
    bounded_ok(r, &u, &q);
    mh_reader_close(r);
    free(out);
    free(t.a);
    free(u.a);
}

int main(void) {
    tu_mkdtemp(g_dir, sizeof g_dir, "edge");
    test_empty();
    test_one();
    test_one_transition();
    test_slice_cuts();
    test_gaps();
    test_straddle();
    test_reopen_append();
    test_discard(0);
    test_discard(1);
    test_meta();
    test_dictionary();
    test_end_stops();
    tu_rmtree(g_dir);
    printf("edge: ok\n");
    return 0;
}
