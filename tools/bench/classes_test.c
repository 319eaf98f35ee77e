/*
 * classes_test.c - mhb_classes_bench's warm pass with made-up
 * implementations: an untimed checker (the brute-force scan's role, slot
 * -1, a limit of 2 queries) asks its questions before the reference asks
 * any, so that what a scan of the whole trace leaves in the caches meets
 * the warm pass and never the first timed one; its answers are still
 * compared with the reference's (a wrong one is a mismatch), and so are a
 * timed implementation's, which asks after the reference; with by_impl
 * each implementation's timed passes come back to back, after an untimed
 * pass of its own.
 */
#include <string.h>

#include "bench.h"
#include "testutil.h" /* CHECK, CHECKF: fail fast */

/* every ask, in order: the implementation's tag and the query's start */
static char who[256];
static uint64_t what[256];
static size_t nlog;

typedef struct fake {
    char tag;
    uint64_t wrong; /* its answer to the query of this start is off by one */
} fake;

static int fake_run(void *h, const mh_query *q, mh_access *out, size_t max, size_t *n)
{
    const fake *f = h;
    if (nlog < sizeof who) {
        who[nlog] = f->tag;
        what[nlog++] = q->start;
    }
    *n = 0;
    if (max == 0)
        return MH_OK;
    memset(&out[0], 0, sizeof out[0]);
    out[0].id = q->start + (q->start == f->wrong);
    out[0].transition = q->start;
    out[0].physical = q->addr_first;
    out[0].size = 8;
    out[0].op = MH_OP_WRITE;
    *n = 1;
    return MH_OK;
}

int main(void)
{
    enum { NQ = 4 };
    mh_query q[NQ];
    for (size_t i = 0; i < NQ; i++) {
        mh_query_init(&q[i]);
        q[i].start = 100 + i;
        q[i].addr_first = 0x1000 + 8 * i;
        q[i].addr_last = q[i].addr_first + 7;
    }
    mhb_class c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "point max1 fwd rw");
    c.max = 1;
    c.pages = 1;
    c.nq = NQ;
    c.q = q;
    fake ref = {'r', UINT64_MAX}, other = {'o', UINT64_MAX}, chk = {'c', 101};
    mhb_impl impl[3] = {
        {"ref", fake_run, &ref, MHB_MH, SIZE_MAX, 1, NULL},
        {"other", fake_run, &other, MHB_SQL, SIZE_MAX, 1, NULL},
        {"scan", fake_run, &chk, -1, 2, 1, NULL},
    };
    /* the order: the checker's 2, the reference's 4, other's 4 (warm
     * pass), then one timed pass: taking turns, the reference's 4 and
     * other's 4; by implementation, each one's untimed 4 before its timed
     * 4 (neither timed pass follows the other implementation's asks) */
    static const char *const want[2] = {"ccrrrroooorrrroooo",
                                        "ccrrrroooorrrrrrrroooooooo"};
    for (int by_impl = 0; by_impl < 2; by_impl++) {
        uint64_t compared = 0, mismatches = 0;
        nlog = 0;
        fprintf(stderr, "classes_test: one MISMATCH report below is expected\n");
        CHECK_OK(mhb_classes_bench(&c, 1, impl, 3, 1, by_impl, 0, NULL, 60.0, &compared,
                                   &mismatches));
        /* other: 4 answers in the warm pass and 4 in the timed one (the
         * untimed pass's are not compared); the checker: its 2, the
         * second wrong */
        CHECKF(compared == 2 * NQ + 2, "%llu answers compared", (unsigned long long)compared);
        CHECKF(mismatches == 1, "%llu mismatches", (unsigned long long)mismatches);
        CHECK(c.nrun == NQ);
        CHECKF(nlog == strlen(want[by_impl]) && memcmp(who, want[by_impl], nlog) == 0,
               "asks %.*s, want %s", (int)nlog, who, want[by_impl]);
        CHECK(what[0] == 100 && what[1] == 101 && what[2] == 100 && what[5] == 103);
        /* by implementation the timed pass asks in the same order again */
        CHECK(!by_impl || (what[10] == 100 && what[14] == 100 && what[17] == 103));
    }
    return 0;
}
