/*
 * oracle_test.c - the oracle's own test: every query parameter on a
 * hand-made trace whose answers are written out by hand (ids at 0 and last,
 * transitions and addresses at 0 and UINT64_MAX, an access whose last byte
 * is UINT64_MAX, end bounds before the start), the 2.0 filters (streams, pc
 * range, window), refused queries, the resume rule and the comparison
 * helpers; then the bounds oracle_run skips by against its own per-access
 * predicate on random queries over a trace with repeated transitions.
 */
#include "oracle.h"

#include <string.h>

#include "testutil.h"

#define N 6
#define P4 (UINT64_MAX - 0xfffffffeull) /* access 4 ends at UINT64_MAX */

/* The hand-made trace (the id fields hold junk: the oracle must not read
 * them). */
static mh_access trace[N];

static void make_trace(void) {
    static const struct {
        uint64_t t, phys, pc;
        uint32_t size, stream;
        uint8_t op, has_pc;
    } rows[N] = {
        {0, 0, 0, 1, 0, MH_OP_READ, 1},
        {5, 0x1000, 0x400, 8, 1, MH_OP_WRITE, 1},
        {5, 0x1004, 0x400, 4, 2, MH_OP_READ, 0},
        {9, UINT64_MAX - 3, UINT64_MAX, 4, 1, MH_OP_EXEC, 1},
        {UINT64_MAX, P4, 7, UINT32_MAX, 0, MH_OP_READ, 0},
        {UINT64_MAX, UINT64_MAX, 0, 1, 3, MH_OP_WRITE, 0},
    };
    for (size_t i = 0; i < N; i++) {
        mh_access *a = &trace[i];
        memset(a, 0, sizeof *a);
        a->id = 1000 + i;
        a->transition = rows[i].t;
        a->physical = rows[i].phys;
        a->size = rows[i].size;
        a->op = rows[i].op;
        a->stream = rows[i].stream;
        a->has_pc = rows[i].has_pc;
        a->pc = rows[i].pc;
        a->has_linear = i % 2;
        a->linear = a->physical + 0x10;
    }
}

static mh_query query(uint32_t kind, uint32_t dir, uint64_t start) {
    mh_query q;
    mh_query_init(&q);
    q.start_kind = kind;
    q.direction = dir;
    q.start = start;
    q.ops = MH_OPS_ALL;
    return q;
}

/* The answer's ids as "1,2,3" (or "EINVAL"), also checking that every
 * answer is the trace's access with its index as id. */
static const char *ids(const mh_access *all, size_t n, const oracle_query *oq,
                       size_t max) {
    static char buf[256];
    mh_access out[16];
    size_t got = 99;
    if (max > 16)
        max = 16;
    if (oracle_run(all, n, oq, out, max, &got) != MH_OK) {
        CHECKF(got == 0, "a refused query reports %zu accesses", got);
        return "EINVAL";
    }
    CHECKF(got <= max, "%zu > max %zu", got, max);
    buf[0] = '\0';
    for (size_t i = 0; i < got; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof buf - len, "%s%llu", i ? "," : "",
                 (unsigned long long)out[i].id);
        mh_access want = all[out[i].id];
        want.id = out[i].id;
        CHECKF(out[i].id < n && !memcmp(&out[i], &want, sizeof want),
              "answer %zu is not a copy of the trace's access", i);
    }
    return buf;
}

static void expect_q(int line, const oracle_query *oq, size_t max, const char *want) {
    const char *got = ids(trace, N, oq, max);
    if (strcmp(got, want) != 0) {
        oracle_format_query(tu_context, sizeof tu_context, oq);
        tu_fail(__FILE__, line, "max %zu: got \"%s\", want \"%s\"", max, got, want);
    }
}

static void expect(int line, const mh_query *q, const char *want) {
    oracle_query oq;
    oracle_query_wrap(&oq, q);
    expect_q(line, &oq, 16, want);
}
#define EXPECT(q, want) expect(__LINE__, &(q), want)
#define EXPECT_Q(oq, max, want) expect_q(__LINE__, &(oq), max, want)

/* One query of the axes (start, direction, end) with its answer. */
typedef struct axis_case {
    uint32_t kind, dir;
    uint64_t start;
    uint32_t end_kind;
    uint64_t end;
    const char *want;
} axis_case;

#define T MH_FROM_TRANSITION
#define I MH_FROM_ID
#define FW MH_FORWARD
#define BW MH_BACKWARD
#define ET MH_END_TRANSITION
#define EI MH_END_ID
#define MAX UINT64_MAX
static const axis_case axis_cases[] = {
    /* a transition start is inclusive */
    {T, FW, 0, 0, 0, "0,1,2,3,4,5"},    {T, FW, 5, 0, 0, "1,2,3,4,5"},
    {T, FW, 6, 0, 0, "3,4,5"},          {T, FW, MAX, 0, 0, "4,5"},
    {T, BW, MAX, 0, 0, "5,4,3,2,1,0"},  {T, BW, MAX - 1, 0, 0, "3,2,1,0"},
    {T, BW, 5, 0, 0, "2,1,0"},          {T, BW, 4, 0, 0, "0"},
    {T, BW, 0, 0, 0, "0"},
    /* an id start is exclusive */
    {I, FW, 0, 0, 0, "1,2,3,4,5"},      {I, FW, 4, 0, 0, "5"},
    {I, FW, 5, 0, 0, ""},               {I, FW, MAX, 0, 0, ""},
    {I, BW, 0, 0, 0, ""},               {I, BW, 1, 0, 0, "0"},
    {I, BW, 5, 0, 0, "4,3,2,1,0"},      {I, BW, 6, 0, 0, "5,4,3,2,1,0"},
    {I, BW, MAX, 0, 0, "5,4,3,2,1,0"},
    /* end bounds are inclusive, in query order; an end before the start
     * gives nothing; without an end kind the end is ignored */
    {T, FW, 0, ET, 5, "0,1,2"},         {T, FW, 0, ET, 4, "0"},
    {T, FW, 0, ET, 0, "0"},             {T, FW, 0, ET, MAX, "0,1,2,3,4,5"},
    {T, FW, 6, ET, 5, ""},              {T, FW, 0, EI, 0, "0"},
    {T, FW, 0, EI, 2, "0,1,2"},         {T, FW, 0, EI, 5, "0,1,2,3,4,5"},
    {T, FW, 0, EI, MAX, "0,1,2,3,4,5"}, {I, FW, 2, EI, 2, ""},
    {I, FW, 2, EI, 3, "3"},             {I, FW, 2, EI, 1, ""},
    {I, FW, 2, ET, 5, ""},              {I, FW, 2, ET, 9, "3"},
    {T, BW, MAX, ET, 9, "5,4,3"},       {T, BW, MAX, ET, 6, "5,4,3"},
    {T, BW, MAX, ET, 0, "5,4,3,2,1,0"}, {T, BW, MAX, ET, MAX, "5,4"},
    {T, BW, 5, ET, 9, ""},              {T, BW, 5, EI, 1, "2,1"},
    {I, BW, MAX, EI, 4, "5,4"},         {I, BW, MAX, EI, 0, "5,4,3,2,1,0"},
    {I, BW, MAX, EI, 6, ""},            {I, BW, MAX, EI, MAX, ""},
    {I, BW, 3, EI, 3, ""},              {I, BW, 3, EI, 2, "2"},
    {I, BW, 3, MH_END_NONE, 2, "2,1,0"},
};
#undef T
#undef I
#undef FW
#undef BW
#undef ET
#undef EI
#undef MAX

static void test_axes(void) {
    for (size_t i = 0; i < sizeof axis_cases / sizeof axis_cases[0]; i++) {
        const axis_case *c = &axis_cases[i];
        mh_query q = query(c->kind, c->dir, c->start);
        q.end_kind = c->end_kind;
        q.end = c->end;
        EXPECT(q, c->want);
    }
}

static void test_ops_and_ranges(void) {
    mh_query q = query(MH_FROM_TRANSITION, MH_FORWARD, 0);
    q.ops = MH_OPS_READ; EXPECT(q, "0,2,4");
    q.ops = MH_OPS_WRITE; EXPECT(q, "1,5");
    q.ops = MH_OPS_EXEC; EXPECT(q, "3");
    q.ops = MH_OPS_READ | MH_OPS_EXEC; EXPECT(q, "0,2,3,4");
    q.ops = MH_OPS_ALL;
    q.addr_first = q.addr_last = 0; EXPECT(q, "0");
    q.addr_first = 1; q.addr_last = 0xfff; EXPECT(q, "");
    /* one byte inside both 1 (0x1000..0x1007) and 2 (0x1004..0x1007) */
    q.addr_first = q.addr_last = 0x1007; EXPECT(q, "1,2");
    q.addr_first = q.addr_last = 0x1008; EXPECT(q, "");
    q.addr_first = 0xfff; q.addr_last = 0x1000; EXPECT(q, "1");
    q.addr_first = q.addr_last = UINT64_MAX; EXPECT(q, "3,4,5");
    q.addr_first = q.addr_last = P4; EXPECT(q, "4");
    q.addr_first = 0; q.addr_last = P4 - 1; EXPECT(q, "0,1,2");
    q.addr_first = UINT64_MAX - 3; q.addr_last = UINT64_MAX - 1; EXPECT(q, "3,4");
    q.addr_first = 0; q.addr_last = UINT64_MAX; EXPECT(q, "0,1,2,3,4,5");
}

static void test_max(void) {
    mh_query q;
    /* max */
    oracle_query oq;
    q = query(MH_FROM_TRANSITION, MH_FORWARD, 0);
    oracle_query_wrap(&oq, &q);
    EXPECT_Q(oq, 2, "0,1");
    EXPECT_Q(oq, 1, "0");
    EXPECT_Q(oq, 0, "");
    size_t got = 9;
    CHECKF(oracle_run(trace, N, &oq, NULL, 0, &got) == MH_OK && got == 0, "NULL out, max 0");
    CHECKF(oracle_run(trace, N, &oq, NULL, 1, &got) == MH_EINVAL && got == 0, "NULL out, max 1");
    /* an empty trace */
    mh_access out[1];
    CHECKF(oracle_run(trace, 0, &oq, out, 1, &got) == MH_OK && got == 0, "empty trace");
    q.direction = MH_BACKWARD; q.start = UINT64_MAX;
    oracle_query_wrap(&oq, &q);
    CHECKF(oracle_run(trace, 0, &oq, out, 1, &got) == MH_OK && got == 0, "empty trace");
}

static void test_filters(void) {
    mh_query q = query(MH_FROM_TRANSITION, MH_FORWARD, 0);
    oracle_query oq;
    oracle_query_wrap(&oq, &q);
    static const uint32_t one[] = {1}, two[] = {2, 0}, big[] = {UINT32_MAX, 3};
    oq.streams = one; oq.nstreams = 1; EXPECT_Q(oq, 16, "1,3");
    oq.streams = two; oq.nstreams = 2; EXPECT_Q(oq, 16, "0,2,4");
    oq.nstreams = 1; EXPECT_Q(oq, 16, "2");
    oq.streams = big; oq.nstreams = 2; EXPECT_Q(oq, 16, "5");
    oq.nstreams = 0; EXPECT_Q(oq, 16, ""); /* an empty set matches nothing */
    oq.streams = NULL; EXPECT_Q(oq, 16, "0,1,2,3,4,5");
    oq.nstreams = 1; EXPECT_Q(oq, 16, "EINVAL");
    oq.nstreams = 0;
    /* pc: only accesses that have one (4 has pc 7 but no has_pc) */
    oq.has_pc = 1;
    oq.pc_first = 0; oq.pc_last = UINT64_MAX; EXPECT_Q(oq, 16, "0,1,3");
    oq.pc_last = 0; EXPECT_Q(oq, 16, "0");
    oq.pc_first = 7; oq.pc_last = 7; EXPECT_Q(oq, 16, "");
    oq.pc_first = 0x400; oq.pc_last = 0x400; EXPECT_Q(oq, 16, "1");
    oq.pc_first = oq.pc_last = UINT64_MAX; EXPECT_Q(oq, 16, "3");
    oq.pc_first = 1; oq.pc_last = 0; EXPECT_Q(oq, 16, "EINVAL");
    oq.has_pc = 0; EXPECT_Q(oq, 16, "0,1,2,3,4,5"); /* ignored when off */
    /* the window, in both directions and with the other bounds */
    oq.has_window = 1;
    oq.id_first = 1; oq.id_last = 3; EXPECT_Q(oq, 16, "1,2,3");
    oq.id_first = 0; oq.id_last = 0; EXPECT_Q(oq, 16, "0");
    oq.id_first = 5; oq.id_last = UINT64_MAX; EXPECT_Q(oq, 16, "5");
    oq.id_first = 6; oq.id_last = 10; EXPECT_Q(oq, 16, "");
    oq.id_first = UINT64_MAX; oq.id_last = UINT64_MAX; EXPECT_Q(oq, 16, "");
    oq.id_first = 3; oq.id_last = 2; EXPECT_Q(oq, 16, "EINVAL");
    oq.id_first = 1; oq.id_last = 4;
    oq.q.start = 6; EXPECT_Q(oq, 16, "3,4");
    oq.q.end_kind = MH_END_ID; oq.q.end = 3; EXPECT_Q(oq, 16, "3");
    oq.q = query(MH_FROM_TRANSITION, MH_BACKWARD, UINT64_MAX);
    EXPECT_Q(oq, 16, "4,3,2,1");
    EXPECT_Q(oq, 2, "4,3");
    oq.q.start = 5; EXPECT_Q(oq, 16, "2,1");
    oq.streams = one; oq.nstreams = 1; EXPECT_Q(oq, 16, "1");
    oq.q.start = UINT64_MAX; oq.has_pc = 1; oq.pc_first = 0x401; oq.pc_last = UINT64_MAX;
    EXPECT_Q(oq, 16, "3");
}

static void test_refused(void) {
    mh_query good = query(MH_FROM_TRANSITION, MH_FORWARD, 0), q;
    q = good; q.addr_first = 1; q.addr_last = 0; EXPECT(q, "EINVAL");
    q = good; q.ops = 0; EXPECT(q, "EINVAL");
    q = good; q.ops = 8; EXPECT(q, "EINVAL");
    q = good; q.ops = MH_OPS_ALL | (1u << 31); EXPECT(q, "EINVAL");
    q = good; q.start_kind = 2; EXPECT(q, "EINVAL");
    q = good; q.direction = 2; EXPECT(q, "EINVAL");
    q = good; q.end_kind = 3; EXPECT(q, "EINVAL");
    q = good; q.reserved = 1; EXPECT(q, "EINVAL");
    q = good; q.addr_first = q.addr_last = UINT64_MAX; EXPECT(q, "3,4,5");
}

/* oracle_matches judges an access by its own id field; unknown ops and
 * size 0 never crash it. */
static void test_matches(void) {
    mh_query q = query(MH_FROM_ID, MH_FORWARD, 6);
    oracle_query oq;
    oracle_query_wrap(&oq, &q);
    mh_access a = trace[0];
    a.id = 7;
    CHECKF(oracle_matches(&oq, &a), "id 7 after id 6");
    a.id = 6;
    CHECKF(!oracle_matches(&oq, &a), "id 6 is the exclusive start");
    a.id = 7;
    a.op = 3;
    CHECKF(!oracle_matches(&oq, &a), "unknown op 3");
    a.op = 200;
    CHECKF(!oracle_matches(&oq, &a), "unknown op 200");
    a.op = MH_OP_READ;
    a.size = 0; /* wraps to a 2^32-byte access; judged, not trusted */
    CHECKF(oracle_matches(&oq, &a), "size 0 at 0");
}

/* Pages of any size, each resumed after the last access, give the whole
 * answer: the resume rule is the one the library documents. */
static void test_resume(void) {
    for (uint32_t dir = 0; dir < 2; dir++)
        for (size_t page = 1; page <= 4; page++) {
            mh_query q = query(MH_FROM_TRANSITION, dir, dir ? UINT64_MAX : 0);
            q.ops = MH_OPS_READ | MH_OPS_WRITE;
            mh_access whole[N], chain[N + 4];
            size_t nw = oracle_answer(trace, N, &q, whole, N), nc = 0;
            for (int p = 0; p < 8; p++) {
                size_t k = oracle_answer(trace, N, &q, chain + nc, page);
                nc += k;
                if (k < page)
                    break;
                oracle_resume(&q, &chain[nc - 1]);
                CHECKF(q.start_kind == MH_FROM_ID && q.start == chain[nc - 1].id, "resume");
            }
            CHECKF(nw == 5 && oracle_compare("resume chain", chain, nc, whole, nw) == 0,
                  "dir %u page %zu", dir, page);
        }
}

static void test_compare(void) {
    mh_access a[3], b[3];
    memcpy(a, trace, sizeof a);
    memcpy(b, trace, sizeof b);
    size_t at = 99;
    CHECKF(oracle_equal(a, 3, b, 3, &at) && at == 3, "equal lists");
    CHECKF(oracle_equal(a, 0, b, 0, NULL), "empty lists");
    CHECKF(!a[0].has_linear && a[0].has_pc && !a[2].has_pc, "the trace changed");
    b[0].linear ^= 1; /* has_linear 0: not compared */
    b[2].pc ^= 5;     /* has_pc 0: not compared */
    b[1].reserved[0] = 1;
    CHECKF(oracle_equal(a, 3, b, 3, &at), "absent linear, absent pc, reserved ignored");
    b[0].pc ^= 1; /* has_pc 1 */
    CHECKF(!oracle_equal(a, 3, b, 3, &at) && at == 0, "pc at 0: %zu", at);
    memcpy(b, a, sizeof b);
    b[1].linear ^= 1; /* has_linear 1 */
    CHECKF(!oracle_equal(a, 3, b, 3, &at) && at == 1, "linear at 1: %zu", at);
    b[1] = a[1];
    static const size_t offs[] = {offsetof(mh_access, id), offsetof(mh_access, transition),
                                  offsetof(mh_access, physical), offsetof(mh_access, size),
                                  offsetof(mh_access, op), offsetof(mh_access, has_linear),
                                  offsetof(mh_access, stream), offsetof(mh_access, has_pc)};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        memcpy(b, a, sizeof b);
        ((unsigned char *)&b[2])[offs[i]] ^= 1;
        CHECKF(!oracle_equal(a, 3, b, 3, &at) && at == 2, "field at %zu", offs[i]);
    }
    memcpy(b, a, sizeof b);
    CHECKF(!oracle_equal(a, 3, b, 2, &at) && at == 2, "prefix");
    CHECKF(!oracle_equal(a, 1, b, 2, &at) && at == 1, "prefix");
    fprintf(stderr, "(two expected difference lines follow)\n");
    CHECKF(oracle_compare("self-test", a, 3, b, 2) == -1, "compare a prefix");
    b[0].id = 77;
    CHECKF(oracle_compare("self-test", a, 3, b, 3) == -1, "compare");
    CHECKF(oracle_compare("self-test", a, 3, a, 3) == 0, "compare");
}

/* The query's one-line text, whole and truncated. */
static void test_format(void) {
    static const uint32_t set[] = {4, 0};
    mh_query q = query(MH_FROM_ID, MH_BACKWARD, 7);
    q.end_kind = MH_END_TRANSITION;
    q.end = UINT64_MAX;
    q.addr_first = 0x10;
    q.addr_last = 0x1f;
    oracle_query oq;
    oracle_query_wrap(&oq, &q);
    oq.streams = set;
    oq.nstreams = 2;
    oq.has_pc = 1;
    oq.pc_last = 0xff;
    oq.has_window = 1;
    oq.id_first = 1;
    oq.id_last = 2;
    const char *want = "backward from id 7 until transition 18446744073709551615 "
                       "addr [0x10, 0x1f] ops 0x7 streams {4,0} pc [0x0, 0xff] ids [1, 2]";
    char buf[200], small[11];
    size_t len = oracle_format_query(buf, sizeof buf, &oq);
    CHECKF(len == strlen(want) && !strcmp(buf, want), "got \"%s\"", buf);
    CHECKF(oracle_format_query(small, sizeof small, &oq) == len && !strcmp(small, "backward f"),
           "truncated: \"%s\"", small);
    CHECKF(oracle_format_query(NULL, 0, &oq) == len, "length only");
    q.direction = 9;
    oracle_query_wrap(&oq, &q);
    oracle_format_query(buf, sizeof buf, &oq);
    CHECKF(strstr(buf, "(direction 9 ") != NULL, "a bad field is shown: \"%s\"", buf);
}

/* The skipped bounds never change an answer: every query equals a scan of
 * the whole trace through oracle_matches. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(uint64_t n) {
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

static void test_bounds_against_scan(void) {
    enum { M = 200 };
    static mh_access all[M], out[M], want[M];
    uint64_t t = 0;
    for (size_t i = 0; i < M; i++) {
        memset(&all[i], 0, sizeof all[i]);
        t += next(4) == 0 ? next(3) : 0;
        all[i].transition = t;
        all[i].id = i;
        all[i].physical = next(64) * 8;
        all[i].size = 1 + (uint32_t)next(16);
        all[i].op = (uint8_t)next(3);
        all[i].stream = (uint32_t)next(3);
        all[i].has_pc = (uint8_t)next(2);
        all[i].pc = next(8);
    }
    static const uint32_t set[] = {2, 0};
    for (int k = 0; k < 20000; k++) {
        oracle_query oq;
        mh_query q = query((uint32_t)next(2), (uint32_t)next(2), 0);
        uint64_t span = q.start_kind == MH_FROM_ID ? M + 2 : t + 2;
        q.start = next(8) == 0 ? UINT64_MAX : next(span);
        q.ops = 1 + (uint32_t)next(7);
        q.addr_first = next(520);
        q.addr_last = q.addr_first + next(64);
        q.end_kind = (uint32_t)next(3);
        span = q.end_kind == MH_END_ID ? M + 2 : t + 2;
        q.end = next(8) == 0 ? UINT64_MAX : next(span);
        oracle_query_wrap(&oq, &q);
        if (next(3) == 0) {
            oq.streams = set;
            oq.nstreams = 1 + next(2);
        }
        if ((oq.has_pc = next(3) == 0)) {
            oq.pc_first = next(8);
            oq.pc_last = oq.pc_first + next(4);
        }
        if ((oq.has_window = next(3) == 0)) {
            oq.id_first = next(M + 2);
            oq.id_last = next(6) == 0 ? UINT64_MAX : oq.id_first + next(80);
        }
        size_t max = 1 + next(M), got = 0, nw = 0;
        CHECKF(oracle_run(all, M, &oq, out, max, &got) == MH_OK, "run");
        int fwd = q.direction == MH_FORWARD;
        for (size_t j = 0; j < M && nw < max; j++) {
            const mh_access *a = &all[fwd ? j : M - 1 - j];
            if (oracle_matches(&oq, a))
                want[nw++] = *a;
        }
        if (oracle_compare("bounds vs whole scan", out, got, want, nw) != 0) {
            oracle_format_query(tu_context, sizeof tu_context, &oq);
            tu_fail(__FILE__, __LINE__, "max %zu: the bounds change the answer", max);
        }
    }
}

/* oracle_query_from: mh_query's own 1.2 fields, refused as mh_query_run
 * refuses them. */
static void test_from(void) {
    static const oracle_window w[] = {{3, 1, 2}, {7, 4, 0}, {9, 4, 2}};
    static const uint32_t one[] = {1};
    mh_query q = query(MH_FROM_TRANSITION, MH_FORWARD, 0);
    oracle_query oq;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_OK, "plain");
    EXPECT_Q(oq, 16, "0,1,2,3,4,5");
    q.streams = one;
    q.nstreams = 1;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_OK, "streams");
    EXPECT_Q(oq, 16, "1,3");
    q.filter = MH_FILTER_PC;
    q.pc_first = 0x400;
    q.pc_last = 0x400;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_OK, "pc");
    EXPECT_Q(oq, 16, "1");
    q.streams = NULL;
    q.nstreams = 0;
    q.filter = MH_FILTER_WINDOW;
    q.window = 3;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_OK, "window 3");
    EXPECT_Q(oq, 16, "1,2");
    q.window = 7; /* empty */
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_OK, "window 7");
    EXPECT_Q(oq, 16, "");
    q.window = 9;
    q.direction = MH_BACKWARD;
    q.start = UINT64_MAX;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_OK, "window 9");
    EXPECT_Q(oq, 16, "5,4");
    q.window = 8;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_ENOTFOUND, "window 8");
    q.filter = 4;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_EINVAL, "unknown filter bit");
    q.filter = MH_FILTER_PC;
    q.pc_first = 2;
    q.pc_last = 1;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_EINVAL, "pc_first > pc_last");
    q.filter = 0; /* pc fields ignored without the filter */
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_OK, "pc off");
    q.nstreams = 1;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_EINVAL, "NULL streams, nstreams 1");
    q.streams = one;
    q.nstreams = 0;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_EINVAL, "streams, nstreams 0");
    q.nstreams = 65537;
    CHECKF(oracle_query_from(&oq, &q, w, 3) == MH_EINVAL, "nstreams 65537");
}

int main(void) {
    make_trace();
    test_axes();
    test_ops_and_ranges();
    test_max();
    test_filters();
    test_from();
    test_refused();
    test_matches();
    test_resume();
    test_compare();
    test_format();
    test_bounds_against_scan();
    printf("oracle_test: ok\n");
    return 0;
}
