/*
 * fuzz_check.c - see fuzz_check.h.
 *
 * Everything here is written against memhist.h only: a target must be able
 * to tell a wrong answer from a right one without knowing how the library
 * found it.
 */
#include "fuzz_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_helpers.h"

static int g_lenient_input; /* fuzz_set_lenient: this input only */

int fuzz_lenient(void) {
    static int lenient = -1;
    if (lenient < 0) {
        const char *e = getenv("MH_FUZZ_LENIENT");
        lenient = e && *e && strcmp(e, "0") != 0;
    }
    return lenient || g_lenient_input;
}

void fuzz_set_lenient(int on) { g_lenient_input = on; }

void fuzz_vec_push(fuzz_vec *v, const mh_access *a) {
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 256;
        v->v = fuzz_realloc(v->v, v->cap * sizeof *v->v);
    }
    v->v[v->n++] = *a;
}

void fuzz_vec_free(fuzz_vec *v) {
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

static void print_access(const char *tag, const mh_access *a) {
    fprintf(stderr, "  %s: ", tag);
    oracle_print_access(stderr, a);
    fputc('\n', stderr);
}

static void print_query(const mh_query *q) {
    oracle_query oq;
    oracle_query_wrap(&oq, q);
    fputs("  query: ", stderr);
    oracle_print_query(stderr, &oq);
    fputc('\n', stderr);
}

void fuzz_assert_same(const mh_access *got, const mh_access *want,
                      const char *what, size_t index) {
    if (oracle_same_access(got, want))
        return;
    fprintf(stderr, "fuzz: %s differs at answer index %zu\n", what, index);
    print_access("got ", got);
    print_access("want", want);
    abort();
}

void fuzz_assert_equal(const fuzz_vec *got, const fuzz_vec *want,
                       const char *what, const mh_query *q) {
    if (oracle_compare(what, got->v, got->n, want->v, want->n) == 0)
        return;
    if (q)
        print_query(q);
    abort();
}

void fuzz_chain_init(fuzz_chain *c, const mh_query *q, const mh_stats *st) {
    memset(c, 0, sizeof *c);
    oracle_query_wrap(&c->oq, q);
    c->st = *st;
}

#define CHAIN_ASSERT(c, a, cond)                                               \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: answer invariant failed: %s\n", __FILE__, \
                    __LINE__, #cond);                                          \
            print_query(&(c)->oq.q);                                           \
            print_access("access", (a));                                       \
            if ((c)->have_last)                                                \
                print_access("previous", &(c)->last);                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

void fuzz_chain_check(fuzz_chain *c, const mh_access *batch, size_t n) {
    int fwd = c->oq.q.direction == MH_FORWARD;
    for (size_t i = 0; i < n; i++) {
        const mh_access *a = &batch[i];
        CHAIN_ASSERT(c, a, a->size >= 1);
        CHAIN_ASSERT(c, a, a->physical + (a->size - 1) >= a->physical);
        CHAIN_ASSERT(c, a, a->op < MH_OP_COUNT);
        CHAIN_ASSERT(c, a, a->has_linear <= 1);
        /* format 2.0: a pc only with has_pc, a stream id in range (1.x:
         * stream 0, no pc, which these allow) */
        CHAIN_ASSERT(c, a, a->has_pc <= 1 && (a->has_pc || a->pc == 0));
        CHAIN_ASSERT(c, a, a->stream <= MH_STREAM_MAX);
        CHAIN_ASSERT(c, a, !memcmp(a->reserved, (uint8_t[5]){0}, 5));
        CHAIN_ASSERT(c, a, oracle_matches(&c->oq, a));
        CHAIN_ASSERT(c, a, a->id < c->st.accesses);
        CHAIN_ASSERT(c, a, a->transition >= c->st.transition_first &&
                               a->transition <= c->st.transition_last);
        if (c->have_last && !fuzz_lenient()) {
            int check_t = i > 0 || c->across_batches;
            if (fwd) {
                CHAIN_ASSERT(c, a, a->id > c->last.id);
                CHAIN_ASSERT(c, a, !check_t || a->transition >= c->last.transition);
            } else {
                CHAIN_ASSERT(c, a, a->id < c->last.id);
                CHAIN_ASSERT(c, a, !check_t || a->transition <= c->last.transition);
            }
        }
        c->last = *a;
        c->have_last = 1;
        c->seen++;
    }
}

/* A small deterministic generator for batch sizes. */
static uint32_t next_rand(uint32_t *s) {
    *s = *s * 1103515245u + 12345u;
    return *s >> 16;
}

int fuzz_cursor_scan(const mh_reader *r, const mh_query *q, uint64_t limit,
                     uint32_t seed, fuzz_vec *out, int *complete) {
    mh_stats st = {.struct_size = sizeof st};
    FUZZ_OK(mh_reader_stats(r, &st));
    *complete = 0;
    mh_cursor *cur = NULL;
    int rc = mh_cursor_open(r, q, &cur);
    FUZZ_ASSERT_NAMED(rc);
    if (rc != MH_OK) {
        FUZZ_ASSERT(rc != MH_EINVAL);
        return rc;
    }
    FUZZ_ASSERT(cur != NULL);
    fuzz_chain chain;
    fuzz_chain_init(&chain, q, &st);
    chain.across_batches = 1;
    mh_access buf[97];
    uint64_t got = 0;
    for (;;) {
        /* mostly mid-sized batches, now and then a single access: every
         * call costs the engine a slice walk, so all-ones would be slow */
        uint32_t x = next_rand(&seed);
        size_t max = (x & 15) == 0 ? 1 : 1 + x % 97;
        size_t n = SIZE_MAX;
        rc = mh_cursor_next(cur, buf, max, &n);
        FUZZ_ASSERT_NAMED(rc);
        if (rc != MH_OK) {
            FUZZ_ASSERT(rc != MH_EINVAL);
            /* after an error the cursor stays at the error */
            size_t n2 = 0;
            FUZZ_ASSERT(mh_cursor_next(cur, buf, max, &n2) == rc);
            break;
        }
        FUZZ_ASSERT(n <= max);
        fuzz_chain_check(&chain, buf, n);
        for (size_t i = 0; out && i < n; i++)
            fuzz_vec_push(out, &buf[i]);
        got += n;
        if (n == 0) {
            /* the end stays the end */
            FUZZ_OK(mh_cursor_next(cur, buf, 5, &n));
            FUZZ_ASSERT(n == 0);
            *complete = 1;
            break;
        }
        if (got >= limit)
            break;
    }
    mh_cursor_close(cur);
    return rc;
}

int fuzz_resume_scan(const mh_reader *r, const mh_query *q, size_t step,
                     uint64_t limit, fuzz_vec *out, int *complete) {
    mh_stats st = {.struct_size = sizeof st};
    FUZZ_OK(mh_reader_stats(r, &st));
    FUZZ_ASSERT(step >= 1);
    *complete = 0;
    fuzz_chain chain;
    fuzz_chain_init(&chain, q, &st);
    mh_access *buf = fuzz_malloc(step * sizeof *buf);
    mh_query cur = *q;
    uint64_t got = 0;
    int rc = MH_OK, short_answer = 0;
    for (;;) {
        size_t n = SIZE_MAX;
        rc = mh_query_run(r, &cur, buf, step, &n);
        FUZZ_ASSERT_NAMED(rc);
        if (rc != MH_OK) {
            FUZZ_ASSERT(rc != MH_EINVAL);
            break;
        }
        FUZZ_ASSERT(n <= step);
        /* fewer than asked means there is nothing more */
        FUZZ_ASSERT_MSG(!short_answer || n == 0,
                        "a resumed query found more after a short answer");
        fuzz_chain_check(&chain, buf, n);
        for (size_t i = 0; out && i < n; i++)
            fuzz_vec_push(out, &buf[i]);
        got += n;
        if (n == 0) {
            *complete = 1;
            break;
        }
        short_answer = n < step;
        if (got >= limit)
            break;
        oracle_resume(&cur, &buf[n - 1]);
    }
    free(buf);
    return rc;
}

void fuzz_brute_query(const mh_access *all, size_t n, const mh_query *q,
                      size_t max, fuzz_vec *out) {
    size_t cap = max < n ? max : n;
    mh_access *buf = fuzz_malloc((cap ? cap : 1) * sizeof *buf);
    size_t k = oracle_answer(all, n, q, buf, cap);
    for (size_t i = 0; i < k; i++)
        fuzz_vec_push(out, &buf[i]);
    free(buf);
}

/* ---- reader exercise -------------------------------------------------- */

static void check_stats(const mh_stats *st) {
    uint64_t sum = 0;
    for (int op = 0; op < MH_OP_COUNT; op++) {
        FUZZ_ASSERT(st->op_counts[op] <= st->accesses);
        sum += st->op_counts[op];
    }
    FUZZ_ASSERT_MSG(sum == st->accesses, "op counts do not add up");
    if (st->accesses == 0)
        FUZZ_ASSERT(st->transition_first == 0);
    else
        FUZZ_ASSERT(st->transition_first <= st->transition_last);
}

static void check_meta(const mh_reader *r) {
    size_t n = mh_reader_meta_count(r);
    for (size_t i = 0; i < n && i < 4096; i++) {
        const char *k = NULL, *v = NULL;
        FUZZ_OK(mh_reader_meta_get(r, i, &k, &v));
        FUZZ_ASSERT(k != NULL && v != NULL);
        (void)strlen(v);
        const char *found = mh_reader_meta_find(r, k);
        FUZZ_ASSERT_MSG(found != NULL, "a listed key is not found");
    }
    const char *k = NULL, *v = NULL;
    FUZZ_EXPECT_RC(mh_reader_meta_get(r, n, &k, &v), MH_EINVAL);
}

static void check_dictionary(const mh_reader *r) {
    size_t ns = mh_reader_string_count(r);
    for (size_t i = 0; i < ns && i < 4096; i++)
        FUZZ_ASSERT(mh_reader_string(r, i) != NULL);
    size_t nc = mh_reader_column_count(r);
    for (size_t i = 0; i < nc && i < 256; i++) {
        mh_column_info ci = {.struct_size = sizeof ci};
        FUZZ_OK(mh_reader_column(r, i, &ci));
        FUZZ_ASSERT(ci.name != NULL);
    }
    mh_column_info ci = {.struct_size = sizeof ci};
    FUZZ_EXPECT_RC(mh_reader_column(r, nc, &ci), MH_EINVAL);
    for (unsigned op = 0; op < 8; op++) {
        const char *name = mh_reader_op_name(r, op);
        if (name)
            (void)strlen(name);
    }
}

static void note(int *err, int rc) {
    if (*err == MH_OK && rc != MH_OK)
        *err = rc;
}

static void check_introspection(const mh_reader *r, const mh_stats *st,
                                int *err) {
    size_t nseg = mh_reader_segment_count(r);
    FUZZ_ASSERT(nseg == st->segments);
    mh_segment_info si = {.struct_size = sizeof si};
    FUZZ_EXPECT_RC(mh_reader_segment_info(r, nseg, &si), MH_EINVAL);
    for (size_t s = 0; s < nseg && s < 64; s++) {
        int rc = mh_reader_segment_info(r, s, &si);
        FUZZ_ASSERT_NAMED(rc);
        note(err, rc);
        if (rc != MH_OK) {
            FUZZ_ASSERT_MSG(fuzz_is_data_error(rc), mh_error_name(rc));
            continue;
        }
        FUZZ_ASSERT(si.file_name != NULL);
        FUZZ_ASSERT(si.id_first <= st->accesses &&
                    si.accesses <= st->accesses - si.id_first);
        mh_slice_info sl = {.struct_size = sizeof sl};
        FUZZ_EXPECT_RC(mh_reader_slice_info(r, s, si.slices, &sl), MH_EINVAL);
        mh_chunk_info ch = {.struct_size = sizeof ch};
        FUZZ_EXPECT_RC(mh_reader_chunk_info(r, s, si.chunks, &ch), MH_EINVAL);
        for (uint32_t k = 0; k < si.slices && k < 256; k++) {
            rc = mh_reader_slice_info(r, s, k, &sl);
            FUZZ_ASSERT_NAMED(rc);
            note(err, rc);
            if (rc != MH_OK) {
                FUZZ_ASSERT_MSG(fuzz_is_data_error(rc), mh_error_name(rc));
                continue;
            }
            FUZZ_ASSERT(sl.transition_first <= sl.transition_last);
            FUZZ_ASSERT(sl.chunk_first <= si.chunks &&
                        sl.chunks <= si.chunks - sl.chunk_first);
            FUZZ_ASSERT(sl.block_first <= si.blocks &&
                        sl.blocks <= si.blocks - sl.block_first);
            for (uint32_t c = 0; c < sl.chunks && c < 64; c++) {
                rc = mh_reader_chunk_info(r, s, sl.chunk_first + c, &ch);
                FUZZ_ASSERT_NAMED(rc);
                note(err, rc);
                if (rc != MH_OK) {
                    FUZZ_ASSERT_MSG(fuzz_is_data_error(rc), mh_error_name(rc));
                    continue;
                }
                FUZZ_ASSERT(ch.phy_first <= ch.phy_last);
                FUZZ_ASSERT(ch.transition_first <= ch.transition_last);
                FUZZ_ASSERT(ch.id_first <= ch.id_last);
                FUZZ_ASSERT(ch.op < MH_OP_COUNT);
                FUZZ_ASSERT(ch.accesses >= 1);
            }
        }
    }
}

static void check_bad_queries(const mh_reader *r) {
    mh_access out[2];
    size_t n;
    mh_query q;
    mh_query_init(&q);
    FUZZ_OK(mh_query_run(r, &q, NULL, 0, &n));
    FUZZ_ASSERT(n == 0);
    FUZZ_EXPECT_RC(mh_query_run(r, &q, NULL, 1, &n), MH_EINVAL);
    q.addr_first = 10;
    q.addr_last = 9;
    FUZZ_EXPECT_RC(mh_query_run(r, &q, out, 2, &n), MH_EINVAL);
    mh_query_init(&q);
    q.ops = 0;
    FUZZ_EXPECT_RC(mh_query_run(r, &q, out, 2, &n), MH_EINVAL);
    q.ops = 8;
    FUZZ_EXPECT_RC(mh_query_run(r, &q, out, 2, &n), MH_EINVAL);
    mh_query_init(&q);
    q.start_kind = 2;
    FUZZ_EXPECT_RC(mh_query_run(r, &q, out, 2, &n), MH_EINVAL);
    mh_query_init(&q);
    q.direction = 2;
    FUZZ_EXPECT_RC(mh_query_run(r, &q, out, 2, &n), MH_EINVAL);
    mh_cursor *c = NULL;
    FUZZ_EXPECT_RC(mh_cursor_open(r, &q, &c), MH_EINVAL);
}

/* One query checked three ways: cursor, resume chain, one bounded
 * mh_query_run; and against a brute-force scan when the whole store was
 * read. */
static void check_query(const mh_reader *r, const mh_query *q, uint64_t limit,
                        const fuzz_vec *all, uint32_t seed, int *err) {
    fuzz_vec cur = {0}, res = {0}, want = {0};
    int cur_done = 0, res_done = 0;
    int rc1 = fuzz_cursor_scan(r, q, limit, seed, &cur, &cur_done);
    /* each resumed run walks a slice again: bound the chain, compare what
     * it got with the same head of the cursor's answer */
    size_t step = 1 + (seed % 5) * 7;
    uint64_t rlimit = step * 48 < limit ? step * 48 : limit;
    int rc2 = fuzz_resume_scan(r, q, step, rlimit, &res, &res_done);
    if (fuzz_lenient())
        all = NULL;
    if (!fuzz_lenient() && rc1 == MH_OK && rc2 == MH_OK) {
        if (cur_done && res_done) {
            fuzz_assert_equal(&res, &cur, "resume chain vs cursor", q);
        } else {
            size_t k = res.n < cur.n ? res.n : cur.n;
            for (size_t i = 0; i < k; i++)
                fuzz_assert_same(&res.v[i], &cur.v[i],
                                 "resume chain vs cursor (head)", i);
        }
    }
    if (rc1 == MH_OK && all) {
        fuzz_brute_query(all->v, all->n, q, cur_done ? SIZE_MAX : cur.n, &want);
        fuzz_assert_equal(&cur, &want, "cursor vs brute force", q);
    }
    /* a bounded run gives the head of the answer */
    mh_access head[5];
    size_t n = SIZE_MAX;
    int rc3 = mh_query_run(r, q, head, 5, &n);
    FUZZ_ASSERT_NAMED(rc3);
    note(err, rc1);
    note(err, rc2);
    note(err, rc3);
    if (rc3 == MH_OK && rc1 == MH_OK && !fuzz_lenient()) {
        FUZZ_ASSERT(n <= 5);
        FUZZ_ASSERT(n == (cur.n < 5 ? cur.n : 5) || (!cur_done && cur.n < 5));
        for (size_t i = 0; i < n && i < cur.n; i++)
            fuzz_assert_same(&head[i], &cur.v[i], "bounded run vs cursor", i);
    }
    fuzz_vec_free(&cur);
    fuzz_vec_free(&res);
    fuzz_vec_free(&want);
}

static void make_query(mh_query *q, uint32_t kind, uint32_t dir, uint64_t start,
                       uint64_t a, uint64_t b, uint32_t ops) {
    mh_query_init(q);
    q->start_kind = kind;
    q->direction = dir;
    q->start = start;
    q->addr_first = a;
    q->addr_last = b;
    q->ops = ops;
}

int fuzz_exercise_reader(const mh_reader *r, uint64_t limit) {
    int err = MH_OK;
    mh_stats st = {.struct_size = sizeof st};
    FUZZ_EXPECT_RC(mh_reader_stats(NULL, &st), MH_EINVAL);
    /* the open read the MANIFEST only: the statistics open every segment
     * and are where a damaged one is met first; later calls meet it again */
    int src = mh_reader_stats(r, &st);
    if (src != MH_OK) {
        FUZZ_ASSERT_MSG(fuzz_is_data_error(src), mh_error_name(src));
        FUZZ_EXPECT_RC(mh_reader_stats(r, &st), src);
        return src;
    }
    check_stats(&st);
    check_meta(r);
    check_dictionary(r);
    check_introspection(r, &st, &err);
    check_bad_queries(r);

    /* everything, forward then backward */
    mh_query q;
    make_query(&q, MH_FROM_TRANSITION, MH_FORWARD, 0, 0, UINT64_MAX, MH_OPS_ALL);
    fuzz_vec fwd = {0};
    int done = 0;
    int rc = fuzz_cursor_scan(r, &q, limit, 1, &fwd, &done);
    note(&err, rc);
    int have_all = rc == MH_OK && done && !fuzz_lenient();
    if (have_all) {
        FUZZ_ASSERT_MSG(fwd.n == st.accesses,
                        "a full scan disagrees with stats.accesses");
        uint64_t counts[MH_OP_COUNT] = {0};
        for (size_t i = 0; i < fwd.n; i++) {
            FUZZ_ASSERT_MSG(fwd.v[i].id == i, "ids of a full scan have a gap");
            counts[fwd.v[i].op]++;
        }
        for (int op = 0; op < MH_OP_COUNT; op++)
            FUZZ_ASSERT_MSG(counts[op] == st.op_counts[op],
                            "a full scan disagrees with stats.op_counts");
        if (fwd.n) {
            FUZZ_ASSERT(fwd.v[0].transition == st.transition_first);
            FUZZ_ASSERT(fwd.v[fwd.n - 1].transition == st.transition_last);
        }
    }
    fuzz_vec bwd = {0};
    make_query(&q, MH_FROM_TRANSITION, MH_BACKWARD, UINT64_MAX, 0, UINT64_MAX,
               MH_OPS_ALL);
    rc = fuzz_cursor_scan(r, &q, limit, 2, &bwd, &done);
    note(&err, rc);
    if (have_all && rc == MH_OK && done) {
        FUZZ_ASSERT_MSG(bwd.n == fwd.n, "full scans differ by direction");
        for (size_t i = 0; i < bwd.n; i++)
            fuzz_assert_same(&bwd.v[i], &fwd.v[fwd.n - 1 - i],
                             "backward full scan vs forward", i);
    }
    fuzz_vec_free(&bwd);

    const fuzz_vec *all = have_all ? &fwd : NULL;
    if (have_all && fwd.n > 0) {
        size_t n = fwd.n;
        size_t picks[3] = {0, n / 2, n - 1};
        for (int i = 0; i < 3; i++) {
            const mh_access *a = &fwd.v[picks[i]];
            uint64_t last = a->physical + (a->size - 1);
            uint32_t s = (uint32_t)i * 4u;
            make_query(&q, MH_FROM_TRANSITION, MH_FORWARD, a->transition,
                       a->physical, last, 1u << a->op);
            check_query(r, &q, limit, all, s + 1, &err);
            make_query(&q, MH_FROM_TRANSITION, MH_BACKWARD, a->transition,
                       a->physical, last, MH_OPS_ALL);
            check_query(r, &q, limit, all, s + 2, &err);
            make_query(&q, MH_FROM_ID, MH_FORWARD, a->id, a->physical,
                       UINT64_MAX, MH_OPS_RW);
            check_query(r, &q, limit, all, s + 3, &err);
            make_query(&q, MH_FROM_ID, MH_BACKWARD, a->id, 0, a->physical,
                       MH_OPS_ALL);
            check_query(r, &q, limit, all, s + 4, &err);
        }
    } else {
        /* no full answer to compare with: query what the index claims */
        size_t nseg = mh_reader_segment_count(r);
        uint32_t s = 100;
        for (size_t seg = 0; seg < nseg && seg < 4; seg++) {
            mh_segment_info si = {.struct_size = sizeof si};
            if (mh_reader_segment_info(r, seg, &si) != MH_OK)
                continue;
            for (uint32_t c = 0; c < si.chunks && c < 6; c++) {
                mh_chunk_info ch = {.struct_size = sizeof ch};
                if (mh_reader_chunk_info(r, seg, c, &ch) != MH_OK)
                    continue;
                if (ch.op >= MH_OP_COUNT)
                    continue;
                make_query(&q, MH_FROM_TRANSITION, MH_FORWARD,
                           ch.transition_first, ch.phy_first, ch.phy_last,
                           1u << ch.op);
                check_query(r, &q, limit, NULL, s++, &err);
                make_query(&q, MH_FROM_TRANSITION, MH_BACKWARD,
                           ch.transition_last, ch.phy_first, ch.phy_last,
                           MH_OPS_ALL);
                check_query(r, &q, limit, NULL, s++, &err);
                make_query(&q, MH_FROM_ID, MH_BACKWARD, ch.id_last + 1, 0,
                           UINT64_MAX, MH_OPS_ALL);
                check_query(r, &q, limit, NULL, s++, &err);
            }
        }
    }
    fuzz_vec_free(&fwd);
    return err;
}

typedef struct verify_ctx {
    uint64_t problems, actions;
} verify_ctx;

static void on_problem(void *ctx, const mh_problem *p) {
    verify_ctx *v = ctx;
    FUZZ_ASSERT(p != NULL);
    FUZZ_ASSERT(p->struct_size == sizeof *p);
    FUZZ_ASSERT_NAMED(p->code);
    FUZZ_ASSERT(p->file != NULL && p->message != NULL);
    FUZZ_ASSERT_MSG(strchr(p->message, '\n') == NULL,
                    "a problem message has a newline");
    if (p->code == MH_OK)
        v->actions++;
    else
        v->problems++;
}

int fuzz_verify(const char *dir, unsigned flags, mh_verify_result *res) {
    verify_ctx v = {0, 0};
    memset(res, 0, sizeof *res);
    res->struct_size = sizeof *res;
    int rc = mh_verify(dir, flags, on_problem, &v, res);
    FUZZ_ASSERT_NAMED(rc);
    FUZZ_ASSERT_MSG(rc == MH_OK || rc == MH_ECORRUPT || rc == MH_ENOMEM,
                    mh_error_name(rc));
    if (rc == MH_OK)
        FUZZ_ASSERT_MSG(res->problems == 0 || (flags & MH_VERIFY_REPAIR),
                        "verify is clean but counted problems");
    if (rc == MH_ECORRUPT)
        FUZZ_ASSERT_MSG(res->problems > 0, "verify failed without a problem");
    FUZZ_ASSERT_MSG(v.problems == res->problems || (flags & MH_VERIFY_REPAIR),
                    "reported problems differ from the count");
    return rc;
}
