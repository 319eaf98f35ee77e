/*
 * fuzz_differential.c - the writer and the query engine against a model.
 *
 * The input is a program: each step (drawn from the input's tail by the data
 * producer) is a writer call - append, append_batch (sometimes with a bad
 * access), commit, discard_from, set_meta, close and reopen, abandon and
 * reopen - or a reader check. The writer runs with tiny slices, blocks and
 * automatic commits so a few hundred accesses make many slices, blocks and
 * segments. The model is the list of accesses appended and not discarded,
 * with the count committed, and the metadata.
 *
 * Every reader check compares against that model by brute force: stats,
 * metadata, a full round trip in both directions, and drawn queries answered
 * by mh_query_run, by a cursor with random batch sizes and by a resume
 * chain. A reader kept open across later writes must keep answering from the
 * prefix it saw. The store is finally closed and checked again, also with
 * the generic reader checks of fuzz_check.c; fsck (mh_verify) must find it
 * clean, and fsck --repair must find nothing to do.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_data_producer.h"
#include "fuzz_helpers.h"
#include "fuzz_store.h"
#include "internal.h" /* mh_reader.cache_probation */

#define MAX_ACCESSES 1500 /* keeps the brute force and the checks cheap */
#define MAX_STEPS 300
#define NKEYS 4
#define BATCH_MAX 48

static const char *const keys[NKEYS] = {"tool", "k1", "a.b", "key with spaces"};

typedef struct model {
    fuzz_vec all;          /* appended, not discarded; all.v[i].id == i */
    size_t committed;      /* all.v[0 .. committed) are durable */
    char *meta[NKEYS];     /* pending values (NULL = absent) */
    char *meta_done[NKEYS]; /* committed values */
    mh_reader *old;        /* a reader kept open across writes */
    size_t old_n;          /* the prefix it saw */
    char *meta_old[NKEYS]; /* the metadata it saw */
} model;

static char *dup_or_null(const char *s) {
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = fuzz_malloc(n);
    memcpy(d, s, n);
    return d;
}

static void meta_copy(char **dst, char *const *src) {
    for (int k = 0; k < NKEYS; k++) {
        free(dst[k]);
        dst[k] = dup_or_null(src[k]);
    }
}

static void meta_free(char **m) {
    for (int k = 0; k < NKEYS; k++) {
        free(m[k]);
        m[k] = NULL;
    }
}

/* ---- drawing ---------------------------------------------------------- */

static void draw_options(fuzz_producer *p, mh_writer_options *o) {
    static const uint32_t slices[] = {1, 2, 3, 5, 16, 64, 200, 1000};
    mh_writer_options_init(o);
    o->slice_accesses = slices[fuzz_producer_u32_range(p, 0, 7)];
    o->block_accesses = fuzz_producer_one_in(p, 4)
                            ? fuzz_producer_u32_range(p, 64, 300)
                            : 64;
    o->chunk_min_accesses = fuzz_producer_u32_range(p, 1, 8);
    o->lz4_acceleration = (int32_t)fuzz_producer_u32_range(p, 1, 4);
    /* automatic commits of 8 accesses or more: at most ~190 segments from
     * MAX_ACCESSES (a commit every access or two made 750, each reader
     * check opening them all: 6 s an input under ASan alone, 13 s beside
     * another fuzzer, over libFuzzer's 10 s slow-unit limit); commit steps
     * still make segments of any size */
    o->commit_accesses =
        fuzz_producer_bool(p) ? 0 : fuzz_producer_u32_range(p, 8, 300);
    o->background = fuzz_producer_one_in(p, 8) ? (int32_t)fuzz_producer_u32_range(p, 1, 2) : 0;
}

/* Options or flags mh_writer_open must refuse with MH_EINVAL. */
static void draw_bad_open(fuzz_producer *p, mh_writer_options *o,
                          unsigned *flags) {
    draw_options(p, o);
    *flags = MH_APPEND;
    switch (fuzz_producer_u32_range(p, 0, 8)) {
    case 0: o->slice_accesses = 0; break;
    case 1: o->block_accesses = fuzz_producer_u32_range(p, 0, 63); break;
    case 2: o->block_accesses = fuzz_producer_u32_range(p, 65537, UINT32_MAX); break;
    case 3: o->chunk_min_accesses = 0; break;
    case 4: o->lz4_acceleration = -(int32_t)fuzz_producer_u32_range(p, 0, 100); break;
    case 5: o->background = -1; break;
    case 6: o->reserved = (int32_t)fuzz_producer_u32_range(p, 1, 1000); break;
    case 7: *flags = 0; break;
    default: *flags = 4u << fuzz_producer_u32_range(p, 0, 29); break;
    }
}

static uint64_t last_transition(const model *m) {
    return m->all.n ? m->all.v[m->all.n - 1].transition : 0;
}

/* Draws an access after transition prev. Returns the error append must give:
 * MH_OK, MH_EINVAL or MH_EORDER (never when valid_only). */
static int draw_access(fuzz_producer *p, uint64_t prev, mh_access *a,
                       int valid_only) {
    static const uint64_t bases[] = {0,           0x1000,    0x7ffff000,
                                     0xffffffffu, 1ull << 40, UINT64_MAX - 0x1ff};
    memset(a, 0, sizeof *a);
    uint64_t dt;
    switch (fuzz_producer_u32_range(p, 0, 7)) {
    case 0: case 1: case 2: dt = 0; break;
    case 3: case 4: dt = 1; break;
    case 5: dt = fuzz_producer_u64_range(p, 1, 16); break;
    case 6: dt = fuzz_producer_u64_range(p, 1, 1u << 20); break;
    default: dt = fuzz_producer_one_in(p, 4) ? UINT64_MAX : fuzz_producer_u64(p);
    }
    a->transition = dt > UINT64_MAX - prev ? UINT64_MAX : prev + dt;
    a->physical = bases[fuzz_producer_u32_range(p, 0, 5)] +
                  fuzz_producer_u64_range(p, 0, 0x1ff);
    switch (fuzz_producer_u32_range(p, 0, 3)) {
    case 0: a->size = 1u << fuzz_producer_u32_range(p, 0, 3); break;
    case 1: a->size = fuzz_producer_u32_range(p, 1, 64); break;
    case 2: a->size = fuzz_producer_u32_range(p, 1, 4096); break;
    default: a->size = fuzz_producer_u32_range(p, 1, UINT32_MAX);
    }
    if (UINT64_MAX - a->physical < (uint64_t)a->size - 1)
        a->physical = UINT64_MAX - ((uint64_t)a->size - 1);
    a->op = (uint8_t)fuzz_producer_u32_range(p, 0, 2);
    a->has_linear = (uint8_t)fuzz_producer_bool(p);
    /* linear is ignored when absent: give it garbage then */
    a->linear = a->has_linear ? a->physical ^ fuzz_producer_u64_range(p, 0, 0xffff)
                              : fuzz_producer_u64(p);
    if (!a->has_pc)
        a->pc = fuzz_producer_one_in(p, 8) ? fuzz_producer_u64(p) : 0; /* ignored */
    if (valid_only || !fuzz_producer_one_in(p, 20))
        return MH_OK;
    switch (fuzz_producer_u32_range(p, 0, 5)) {
    case 0: a->size = 0; return MH_EINVAL;
    case 1:
        a->size = fuzz_producer_u32_range(p, 2, UINT32_MAX);
        a->physical = UINT64_MAX - fuzz_producer_u64_range(p, 0, a->size - 2);
        return MH_EINVAL;
    case 2: a->op = (uint8_t)fuzz_producer_u32_range(p, 3, 255); return MH_EINVAL;
    case 3: a->has_linear = (uint8_t)fuzz_producer_u32_range(p, 2, 255); return MH_EINVAL;
    case 4:
        /* a stream never declared (this model declares none), a has_pc
         * that is not 0/1, and reserved bytes */
        switch (fuzz_producer_u32_range(p, 0, 2)) {
        case 0: a->stream = fuzz_producer_u32_range(p, 1, UINT32_MAX); return MH_ENOSTREAM;
        case 1: a->has_pc = (uint8_t)fuzz_producer_u32_range(p, 2, 255); break;
        default:
            a->reserved[fuzz_producer_u32_range(p, 0, 4)] =
                (uint8_t)fuzz_producer_u32_range(p, 1, 255);
        }
        return MH_EINVAL;
    default:
        if (prev == 0)
            return MH_OK;
        a->transition = prev - fuzz_producer_u64_range(p, 1, prev);
        return MH_EORDER;
    }
}

/* The first published size of mh_query (1.0: the fields up to end). */
#define QUERY_SIZE_1 ((uint32_t)(offsetof(mh_query, end) + sizeof(uint64_t)))

/* Draws a query; *expect is MH_EINVAL when the query is invalid. */
static void draw_query(fuzz_producer *p, const model *m, size_t n, mh_query *q,
                       int *expect) {
    const mh_access *all = m->all.v;
    mh_query_init(q);
    *expect = MH_OK;
    q->start_kind = fuzz_producer_u32_range(p, 0, 1);
    q->direction = fuzz_producer_u32_range(p, 0, 1);
    size_t k = n ? (size_t)fuzz_producer_u64_range(p, 0, n - 1) : 0;
    if (q->start_kind == MH_FROM_TRANSITION) {
        switch (fuzz_producer_u32_range(p, 0, 4)) {
        case 0: q->start = 0; break;
        case 1: q->start = UINT64_MAX; break;
        case 2: q->start = fuzz_producer_u64(p); break;
        default:
            q->start = n ? all[k].transition : 0;
            if (fuzz_producer_bool(p))
                q->start += q->start < UINT64_MAX;
            else if (fuzz_producer_bool(p))
                q->start -= q->start > 0;
        }
    } else {
        switch (fuzz_producer_u32_range(p, 0, 3)) {
        case 0: q->start = 0; break;
        case 1: q->start = UINT64_MAX; break;
        default: q->start = fuzz_producer_u64_range(p, 0, n + 1);
        }
    }
    switch (fuzz_producer_u32_range(p, 0, 4)) {
    case 0:
        q->addr_first = 0;
        q->addr_last = UINT64_MAX;
        break;
    case 1:
        q->addr_first = fuzz_producer_u64(p);
        q->addr_last = q->addr_first + fuzz_producer_u64_range(
                                           p, 0, UINT64_MAX - q->addr_first);
        break;
    default: {
        uint64_t c = n ? all[k].physical : 0x1000;
        uint64_t d1 = fuzz_producer_u64_range(p, 0, 64);
        uint64_t d2 = fuzz_producer_u64_range(p, 0, 64);
        q->addr_first = c > d1 ? c - d1 : 0;
        q->addr_last = UINT64_MAX - c < d2 ? UINT64_MAX : c + d2;
    }
    }
    q->ops = fuzz_producer_u32_range(p, 1, 7);
    /* an end bound, half of the time: near the start (either side, equal),
     * at an access, or anywhere */
    if (fuzz_producer_bool(p)) {
        q->end_kind = fuzz_producer_u32_range(p, MH_END_TRANSITION, MH_END_ID);
        int by_t = q->end_kind == MH_END_TRANSITION;
        uint64_t at = by_t ? (n ? all[k].transition : 0) : k;
        if (by_t == (q->start_kind == MH_FROM_TRANSITION) && fuzz_producer_bool(p))
            at = q->start;
        uint64_t d = fuzz_producer_u64_range(p, 0, fuzz_producer_bool(p) ? 3 : 64);
        switch (fuzz_producer_u32_range(p, 0, 4)) {
        case 0: q->end = at; break;
        case 1: q->end = at > UINT64_MAX - d ? UINT64_MAX : at + d; break;
        case 2: q->end = at < d ? 0 : at - d; break;
        case 3: q->end = fuzz_producer_bool(p) ? 0 : UINT64_MAX; break;
        default: q->end = by_t ? fuzz_producer_u64(p) : fuzz_producer_u64_range(p, 0, n + 1);
        }
    } else if (fuzz_producer_one_in(p, 4)) {
        q->end = fuzz_producer_u64(p); /* ignored without an end kind */
    }
    if (fuzz_producer_one_in(p, 40)) {
        *expect = MH_EINVAL;
        switch (fuzz_producer_u32_range(p, 0, 7)) {
        case 5: q->end_kind = fuzz_producer_u32_range(p, 3, UINT32_MAX); break;
        case 6: q->reserved = fuzz_producer_u32_range(p, 1, UINT32_MAX); break;
        case 7:
            if (fuzz_producer_bool(p)) {
                q->struct_size = fuzz_producer_u32_range(p, 0, QUERY_SIZE_1 - 1);
                break;
            }
            /* a caller built against an older header (memhist.h, STRUCTS
             * THAT GROW): any struct_size from the first published one up
             * is valid, the fields it did not send take their defaults,
             * and bytes past it are not the caller's to read (garbage
             * here, from the next whole field on; the oracle reads only
             * the fields of the first published size, all sent) */
            *expect = MH_OK;
            q->struct_size = fuzz_producer_u32_range(p, QUERY_SIZE_1,
                                                     (uint32_t)sizeof *q - 1);
            for (size_t i = (q->struct_size + 7u) & ~(size_t)7; i < sizeof *q; i++)
                ((unsigned char *)q)[i] = (unsigned char)fuzz_producer_u32_range(p, 0, 255);
            break;
        case 0: q->ops = 0; break;
        case 1: q->ops |= 8u << fuzz_producer_u32_range(p, 0, 28); break;
        case 2: q->start_kind = fuzz_producer_u32_range(p, 2, UINT32_MAX); break;
        case 3: q->direction = fuzz_producer_u32_range(p, 2, UINT32_MAX); break;
        default:
            if (q->addr_first == UINT64_MAX)
                q->addr_first = 0;
            q->addr_last = q->addr_first;
            q->addr_first++;
        }
    }
}

/* ---- checks ----------------------------------------------------------- */

/* One drawn query, answered three ways, against the model prefix [0, n). */
static void check_one_query(fuzz_producer *p, const mh_reader *r,
                            const model *m, size_t n) {
    mh_query q;
    int expect;
    draw_query(p, m, n, &q, &expect);
    size_t max = fuzz_producer_one_in(p, 4) ? SIZE_MAX
                                            : fuzz_producer_u32_range(p, 0, 40);
    size_t cap = max < n + 1 ? max : n + 1;
    mh_access *out = fuzz_malloc((cap ? cap : 1) * sizeof *out);
    size_t got = SIZE_MAX;
    int rc = mh_query_run(r, &q, cap ? out : NULL, cap ? max : 0, &got);
    if (expect != MH_OK) {
        FUZZ_EXPECT_RC(rc, expect);
        mh_cursor *c = NULL;
        FUZZ_EXPECT_RC(mh_cursor_open(r, &q, &c), expect);
        free(out);
        return;
    }
    FUZZ_OK(rc);
    fuzz_vec want = {0}, have = {0};
    fuzz_brute_query(m->all.v, n, &q, cap ? max : 0, &want);
    FUZZ_ASSERT(got <= cap);
    for (size_t i = 0; i < got; i++)
        fuzz_vec_push(&have, &out[i]);
    fuzz_assert_equal(&have, &want, "mh_query_run vs brute force", &q);
    free(out);

    fuzz_vec_free(&want);
    fuzz_brute_query(m->all.v, n, &q, SIZE_MAX, &want);
    fuzz_vec_free(&have);
    int done = 0;
    FUZZ_OK(fuzz_cursor_scan(r, &q, UINT64_MAX,
                             fuzz_producer_u32_range(p, 0, 1000), &have, &done));
    FUZZ_ASSERT(done);
    fuzz_assert_equal(&have, &want, "cursor vs brute force", &q);
    fuzz_vec_free(&have);
    FUZZ_OK(fuzz_resume_scan(r, &q,
                             fuzz_producer_u32_range(p, 1, want.n < 100 ? 9 : 200),
                             UINT64_MAX, &have, &done));
    FUZZ_ASSERT(done);
    fuzz_assert_equal(&have, &want, "resume chain vs brute force", &q);
    fuzz_vec_free(&have);
    fuzz_vec_free(&want);
}

static void check_meta(const mh_reader *r, char *const *meta) {
    size_t want = 0;
    for (int k = 0; k < NKEYS; k++) {
        const char *v = mh_reader_meta_find(r, keys[k]);
        if (!meta[k]) {
            FUZZ_ASSERT_MSG(v == NULL, keys[k]);
            continue;
        }
        want++;
        FUZZ_ASSERT_MSG(v != NULL, keys[k]);
        FUZZ_ASSERT_MSG(strcmp(v, meta[k]) == 0, keys[k]);
    }
    FUZZ_ASSERT(mh_reader_meta_count(r) == want);
}

/* Checks reader r against the model prefix [0, n). */
static void check_reader(fuzz_producer *p, const mh_reader *r, const model *m,
                         size_t n, char *const *meta) {
    mh_stats st = {.struct_size = sizeof st};
    FUZZ_OK(mh_reader_stats(r, &st));
    FUZZ_ASSERT(st.accesses == n);
    uint64_t counts[MH_OP_COUNT] = {0};
    for (size_t i = 0; i < n; i++)
        counts[m->all.v[i].op]++;
    for (int op = 0; op < MH_OP_COUNT; op++)
        FUZZ_ASSERT(st.op_counts[op] == counts[op]);
    FUZZ_ASSERT(st.transition_first == (n ? m->all.v[0].transition : 0));
    if (n)
        FUZZ_ASSERT(st.transition_last == m->all.v[n - 1].transition);
    if (meta)
        check_meta(r, meta);

    /* round trip, both directions */
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    fuzz_vec want = {0}, have = {0};
    int done = 0;
    for (int dir = 0; dir < 2; dir++) {
        q.direction = (uint32_t)dir;
        q.start = dir == MH_FORWARD ? 0 : UINT64_MAX;
        fuzz_brute_query(m->all.v, n, &q, SIZE_MAX, &want);
        FUZZ_OK(fuzz_cursor_scan(r, &q, UINT64_MAX,
                                 fuzz_producer_u32_range(p, 0, 1000), &have,
                                 &done));
        FUZZ_ASSERT(done);
        fuzz_assert_equal(&have, &want, "round trip", &q);
        fuzz_vec_free(&have);
        fuzz_vec_free(&want);
    }
    uint32_t nq = fuzz_producer_u32_range(p, 1, 4);
    for (uint32_t i = 0; i < nq; i++)
        check_one_query(p, r, m, n);
}

/* Opens a reader while the writer w (may be NULL) holds the store. */
static void reader_step(fuzz_producer *p, model *m, const char *dir,
                        mh_writer *w) {
    mh_reader *r = NULL;
    FUZZ_OK(mh_reader_open(dir, &r));
    /* the query cache as a user may set it, or at its smallest (two
     * entries: every block evicted in turn), and with every new block on
     * probation (query.c, cache_admit): the answers stay the model's */
    switch (fuzz_producer_u32_range(p, 0, 3)) {
    case 1:
        FUZZ_OK(mh_reader_set_cache(r, 0));
        break;
    case 2:
        FUZZ_OK(mh_reader_set_cache(r, 0));
        r->cache_probation = 1;
        break;
    case 3:
        FUZZ_OK(mh_reader_set_cache(r, 16u << 10));
        r->cache_probation = 1;
        break;
    default:
        break;
    }
    mh_stats st = {.struct_size = sizeof st};
    FUZZ_OK(mh_reader_stats(r, &st));
    FUZZ_ASSERT_MSG(st.accesses == m->committed,
                    "a new reader does not see exactly the committed prefix");
    if (w)
        FUZZ_ASSERT(mh_writer_committed(w) == m->committed);
    check_reader(p, r, m, m->committed, m->meta_done);
    if (fuzz_producer_bool(p)) {
        mh_reader_close(m->old);
        m->old = r;
        m->old_n = m->committed;
        meta_copy(m->meta_old, m->meta_done);
    } else {
        mh_reader_close(r);
    }
}

/* ---- writer steps ----------------------------------------------------- */

/* After any successful writer call: ids and the committed count agree with
 * the model; an automatic commit also saved the pending metadata. */
static void sync_writer(model *m, mh_writer *w) {
    FUZZ_ASSERT(mh_writer_next_id(w) == m->all.n);
    uint64_t c = mh_writer_committed(w);
    FUZZ_ASSERT(c >= m->committed && c <= m->all.n);
    if (c > m->committed) {
        m->committed = (size_t)c;
        meta_copy(m->meta_done, m->meta);
    }
}

static void step_append(fuzz_producer *p, model *m, mh_writer *w) {
    mh_access a;
    int expect = draw_access(p, last_transition(m), &a, 0);
    int rc = mh_writer_append(w, &a);
    FUZZ_EXPECT_RC(rc, expect);
    if (rc == MH_OK) {
        a.id = m->all.n;
        fuzz_vec_push(&m->all, &a);
    }
    sync_writer(m, w);
}

static void step_batch(fuzz_producer *p, model *m, mh_writer *w) {
    mh_access batch[BATCH_MAX];
    size_t k = fuzz_producer_u32_range(p, 0, BATCH_MAX);
    size_t first_bad = SIZE_MAX;
    int expect = MH_OK;
    uint64_t prev = last_transition(m);
    for (size_t i = 0; i < k; i++) {
        int e = draw_access(p, prev, &batch[i], 0);
        if (e != MH_OK && first_bad == SIZE_MAX) {
            first_bad = i;
            expect = e;
        }
        if (e == MH_OK)
            prev = batch[i].transition;
    }
    size_t bad = SIZE_MAX;
    int rc = mh_writer_append_batch(w, k ? batch : NULL, k, &bad);
    FUZZ_EXPECT_RC(rc, expect);
    if (rc == MH_OK) {
        for (size_t i = 0; i < k; i++) {
            batch[i].id = m->all.n;
            fuzz_vec_push(&m->all, &batch[i]);
        }
    } else {
        FUZZ_ASSERT(bad == first_bad);
    }
    sync_writer(m, w);
}

/* Many valid accesses from a few input bytes: the fields come from a
 * generator seeded by the input, read through a producer of its own, so
 * stores get large enough for many slices, blocks and segments. */
static void step_bulk(fuzz_producer *p, model *m, mh_writer *w) {
    size_t k = fuzz_producer_u32_range(p, 1, 600);
    if (m->all.n + k > MAX_ACCESSES)
        k = MAX_ACCESSES - m->all.n;
    uint64_t s = fuzz_producer_u64(p);
    size_t len = k * 40;
    uint8_t *bytes = fuzz_malloc(len);
    for (size_t i = 0; i < len; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        bytes[i] = (uint8_t)(s >> 56);
    }
    fuzz_producer g;
    fuzz_producer_init(&g, bytes, len);
    mh_access *batch = fuzz_malloc(k * sizeof *batch);
    uint64_t prev = last_transition(m);
    for (size_t i = 0; i < k; i++) {
        draw_access(&g, prev, &batch[i], 1);
        prev = batch[i].transition;
    }
    size_t bad = SIZE_MAX;
    FUZZ_OK(mh_writer_append_batch(w, batch, k, &bad));
    for (size_t i = 0; i < k; i++) {
        batch[i].id = m->all.n;
        fuzz_vec_push(&m->all, &batch[i]);
    }
    free(batch);
    free(bytes);
    sync_writer(m, w);
}

static void step_commit(model *m, mh_writer *w) {
    FUZZ_OK(mh_writer_commit(w));
    FUZZ_ASSERT(mh_writer_committed(w) == m->all.n);
    m->committed = m->all.n;
    meta_copy(m->meta_done, m->meta);
    sync_writer(m, w);
}

static void step_discard(fuzz_producer *p, model *m, mh_writer *w) {
    uint64_t t;
    if (m->all.n && !fuzz_producer_one_in(p, 4)) {
        size_t k = (size_t)fuzz_producer_u64_range(p, 0, m->all.n - 1);
        t = m->all.v[k].transition;
        if (t < UINT64_MAX)
            t += fuzz_producer_u32_range(p, 0, 1);
    } else {
        t = fuzz_producer_u64(p);
    }
    int blocked = m->committed > 0 && m->all.v[m->committed - 1].transition >= t;
    int rc = mh_writer_discard_from(w, t);
    if (blocked) {
        FUZZ_EXPECT_RC(rc, MH_ECOMMITTED);
    } else {
        FUZZ_OK(rc);
        while (m->all.n > m->committed && m->all.v[m->all.n - 1].transition >= t)
            m->all.n--;
    }
    sync_writer(m, w);
}

static void step_meta(fuzz_producer *p, model *m, mh_writer *w) {
    if (fuzz_producer_one_in(p, 16)) {
        /* an empty key is refused and changes nothing */
        FUZZ_EXPECT_RC(mh_writer_set_meta(w, "", "x"), MH_EINVAL);
        return;
    }
    int k = (int)fuzz_producer_u32_range(p, 0, NKEYS - 1);
    size_t len;
    if (fuzz_producer_one_in(p, 64))
        len = 65535 + fuzz_producer_u32_range(p, 0, 1);
    else
        len = fuzz_producer_u32_range(p, 0, 40);
    char *v = fuzz_malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        v[i] = (char)(' ' + (i < 64 ? fuzz_producer_u32_range(p, 0, 94)
                                    : (uint32_t)(i % 95)));
    v[len] = '\0';
    int rc = mh_writer_set_meta(w, keys[k], v);
    if (len > 65535) {
        FUZZ_EXPECT_RC(rc, MH_EINVAL);
        free(v);
        return;
    }
    FUZZ_OK(rc);
    free(m->meta[k]);
    m->meta[k] = v;
    sync_writer(m, w);
}

static mh_writer *reopen(fuzz_producer *p, model *m, const char *dir) {
    mh_writer_options o;
    draw_options(p, &o);
    mh_writer *w = NULL;
    FUZZ_OK(mh_writer_open(dir, MH_APPEND, &o, &w));
    FUZZ_ASSERT(mh_writer_next_id(w) == m->all.n);
    FUZZ_ASSERT(mh_writer_committed(w) == m->committed);
    return w;
}

static void step_misuse(fuzz_producer *p, const char *dir) {
    mh_writer *w2 = NULL;
    mh_writer_options o;
    if (fuzz_producer_one_in(p, 4)) {
        unsigned flags;
        draw_bad_open(p, &o, &flags);
        FUZZ_EXPECT_RC(mh_writer_open(dir, flags, &o, &w2), MH_EINVAL);
        FUZZ_ASSERT(w2 == NULL);
        return;
    }
    draw_options(p, &o);
    /* the defaults make large buffers: only now and then */
    const mh_writer_options *opt = fuzz_producer_one_in(p, 8) ? NULL : &o;
    if (fuzz_producer_bool(p)) {
        FUZZ_EXPECT_RC(mh_writer_open(dir, MH_APPEND, opt, &w2), MH_ELOCKED);
    } else {
        FUZZ_EXPECT_RC(mh_writer_open(dir, MH_CREATE, opt, &w2), MH_EEXIST);
    }
    FUZZ_ASSERT(w2 == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_producer p;
    fuzz_producer_init(&p, data, size);
    char dir[FUZZ_PATH_MAX];
    fuzz_join(dir, sizeof dir, fuzz_workdir(), "store");
    fuzz_rmtree(dir);

    model m;
    memset(&m, 0, sizeof m);
    mh_writer_options o;
    draw_options(&p, &o);
    mh_writer *w = NULL;
    FUZZ_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    sync_writer(&m, w);

    for (int step = 0; step < MAX_STEPS && !fuzz_producer_empty(&p); step++) {
        uint32_t what = fuzz_producer_u32_range(&p, 0, 21);
        if (m.all.n + BATCH_MAX > MAX_ACCESSES && (what < 9 || what > 19))
            what = 9; /* full: no more appends */
        switch (what) {
        case 0: case 1: case 2: case 3: case 4:
            step_append(&p, &m, w);
            break;
        case 5: case 6: case 7: case 8:
            step_batch(&p, &m, w);
            break;
        case 9: case 10:
            step_commit(&m, w);
            break;
        case 11: case 12:
            step_discard(&p, &m, w);
            break;
        case 13:
            step_meta(&p, &m, w);
            break;
        case 14: case 15:
            reader_step(&p, &m, dir, w);
            break;
        case 16:
            if (m.old)
                check_reader(&p, m.old, &m, m.old_n, m.meta_old);
            break;
        case 17:
            FUZZ_OK(mh_writer_close(w));
            m.committed = m.all.n;
            meta_copy(m.meta_done, m.meta);
            w = reopen(&p, &m, dir);
            break;
        case 18:
            mh_writer_abandon(w);
            m.all.n = m.committed;
            meta_copy(m.meta, m.meta_done);
            w = reopen(&p, &m, dir);
            break;
        case 19:
            step_misuse(&p, dir);
            break;
        default:
            step_bulk(&p, &m, w);
            break;
        }
    }

    FUZZ_OK(mh_writer_close(w));
    m.committed = m.all.n;
    meta_copy(m.meta_done, m.meta);
    reader_step(&p, &m, dir, NULL);
    if (m.old) {
        check_reader(&p, m.old, &m, m.old_n, m.meta_old);
        mh_reader_close(m.old);
        m.old = NULL;
    }
    mh_verify_result res = {.struct_size = sizeof res};
    FUZZ_OK(fuzz_verify(dir, 0, &res));
    FUZZ_ASSERT(res.problems == 0);
    FUZZ_ASSERT(res.accesses == m.all.n);
    /* the generic reader checks (introspection records, derived queries)
     * hold on a store the writer made, with no error at all */
    mh_reader *r = NULL;
    FUZZ_OK(mh_reader_open(dir, &r));
    FUZZ_OK(fuzz_exercise_reader(r, MAX_ACCESSES + 1));
    mh_reader_close(r);
    /* on a clean store, repair has nothing to do and changes nothing */
    FUZZ_OK(fuzz_verify(dir, MH_VERIFY_REPAIR, &res));
    FUZZ_ASSERT_MSG(res.repaired == 0, "fsck --repair changed a clean store");
    reader_step(&p, &m, dir, NULL);
    mh_reader_close(m.old);
    m.old = NULL;

    fuzz_vec_free(&m.all);
    meta_free(m.meta);
    meta_free(m.meta_done);
    meta_free(m.meta_old);
    fuzz_rmtree(dir);
    return 0;
}
