/*
 * query_cands.c - the chunk walk's matches put in query order
 * (src/query_cands.c) against brute force. Walks are simulated as
 * scan_slice makes them: chunks append runs of distinct ids, each run in
 * query order (or, to reach the fallback, not), and the candidates are
 * ordered with a keep at random points and at the end. After every call
 * the candidates must be the first min(n, keep) of all ids added so far
 * in query order (those dropped are later than every one kept), each
 * access whole (its other fields travel with its id). Shapes cover the
 * three ways of ordering: a few placed one by one (n <= 64), one long run
 * merged into the ordered ones, and many runs of many (qsort), in both
 * directions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"
#include "testutil.h"

static tu_rng rng = {0x2545f4914f6cdd1du};
static uint32_t below(uint32_t n) { return (uint32_t)tu_below(&rng, n); }

static mh_access access_of(uint64_t id) {
    mh_access a;
    memset(&a, 0, sizeof a);
    a.id = id;
    a.transition = id * 3 + 1;
    a.physical = id ^ 0x5a5a5a5a5a5aULL;
    a.linear = ~id;
    a.pc = id * 7;
    a.size = (uint32_t)(id % 13) + 1;
    a.stream = (uint32_t)(id % 5);
    a.op = (uint8_t)(id % 3);
    return a;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* every id added so far, and how many */
static uint64_t *all;
static size_t nall;

/* c must hold the first min(nall, keep) of all in query order */
static void check(const mhq_cands *c, uint32_t dir, size_t keep, const char *shape) {
    uint64_t *s = malloc((nall ? nall : 1) * sizeof *s);
    memcpy(s, all, nall * sizeof *s);
    qsort(s, nall, sizeof *s, cmp_u64);
    size_t want = nall < keep ? nall : keep;
    CHECKF(c->n == want && c->sorted == want, "%s: %zu kept, %zu sorted, want %zu", shape,
           c->n, c->sorted, want);
    for (size_t i = 0; i < want && i < c->n; i++) {
        uint64_t id = dir == MH_FORWARD ? s[i] : s[nall - 1 - i];
        mh_access a = access_of(id);
        CHECKF(memcmp(&c->v[i], &a, sizeof a) == 0, "%s: candidate %zu has id %llu, want %llu",
               shape, i, (unsigned long long)c->v[i].id, (unsigned long long)id);
    }
    free(s);
}

/* One walk: runs of 1 .. run_len distinct ids (small ones near each other
 * when span is small), each
 * run in query order unless shuffled, ordered after every run once n
 * reaches trigger (as scan_slice does), and at the end. */
static void walk(uint32_t dir, size_t keep, unsigned runs, unsigned run_len, size_t trigger,
                 int shuffled, uint64_t span, const char *shape) {
    mhq_cands c;
    memset(&c, 0, sizeof c);
    nall = 0;
    uint64_t seq = 0;
    for (unsigned r = 0; r < runs; r++) {
        unsigned len = 1 + below(run_len);
        uint64_t *ids = malloc(len * sizeof *ids);
        for (unsigned i = 0; i < len; i++) /* distinct: a walk's sequence number below */
            ids[i] = tu_below(&rng, span) << 20 | seq++;
        qsort(ids, len, sizeof *ids, cmp_u64);
        if (dir == MH_BACKWARD)
            for (unsigned i = 0; i < len / 2; i++) {
                uint64_t t = ids[i];
                ids[i] = ids[len - 1 - i];
                ids[len - 1 - i] = t;
            }
        if (shuffled && len > 1) {
            uint32_t x = below(len), y = below(len);
            uint64_t t = ids[x];
            ids[x] = ids[y];
            ids[y] = t;
        }
        for (unsigned i = 0; i < len; i++) {
            mh_access a = access_of(ids[i]);
            if (mhq_cands_add(&c, &a) != MH_OK) {
                fprintf(stderr, "out of memory\n");
                exit(2);
            }
            all[nall++] = ids[i];
        }
        free(ids);
        if (c.n >= trigger) {
            mhq_cands_order(&c, dir, keep);
            check(&c, dir, keep, shape);
            /* what was dropped can never come back: the oracle drops it too */
            uint64_t *s = malloc(nall * sizeof *s);
            memcpy(s, all, nall * sizeof *s);
            qsort(s, nall, sizeof *s, cmp_u64);
            size_t k = nall < keep ? nall : keep;
            for (size_t i = 0; i < k; i++)
                all[i] = dir == MH_FORWARD ? s[i] : s[nall - 1 - i];
            nall = k;
            free(s);
        }
    }
    mhq_cands_order(&c, dir, keep);
    check(&c, dir, keep, shape);
    mhq_cands_free(&c);
}

int main(void) {
    all = malloc(100000 * sizeof *all);
    unsigned walks = 0;
    for (uint32_t dir = MH_FORWARD; dir <= MH_BACKWARD; dir++) {
        for (int rep = 0; rep < 200; rep++) {
            /* a few: max 1 and 10, one by one */
            walk(dir, 1, 1 + below(20), 3, 1, 0, 1000, "max 1");
            walk(dir, 10, 1 + below(20), 12, 10, 0, 1000, "max 10");
            walk(dir, 16, 1 + below(20), 20, 16, 0, 100000, "max 16");
            /* one long run into the ordered ones (keep 100: n reaches
             * 2 * keep at the second run of 100) */
            walk(dir, 100, 2 + below(4), 100, 200, 0, 1u << 20, "one run of 100");
            walk(dir, 100, 2, 200, 100, 0, 1u << 20, "runs of 200");
            /* many runs of many */
            walk(dir, 100, 30 + below(30), 12, 200, 0, 1u << 20, "many runs");
            walk(dir, 1000, 100, 40, 2000, 0, 1u << 24, "max 1000");
            /* runs out of order: qsort however many */
            walk(dir, 10, 1 + below(10), 30, 10, 1, 1000, "shuffled, few");
            walk(dir, 100, 3 + below(5), 100, 200, 1, 1u << 20, "shuffled, many");
            /* ids close together: runs interleave everywhere */
            walk(dir, 64, 4 + below(8), 40, 64, 0, 400, "dense");
            walks += 10;
        }
    }
    /* the run after the ordered ones wholly later: nothing to move */
    {
        mhq_cands c;
        memset(&c, 0, sizeof c);
        for (uint64_t id = 0; id < 300; id++) {
            mh_access a = access_of(id);
            CHECKF(mhq_cands_add(&c, &a) == MH_OK, "add");
            if (id == 149)
                mhq_cands_order(&c, MH_FORWARD, 1000);
        }
        mhq_cands_order(&c, MH_FORWARD, 200);
        nall = 300;
        for (uint64_t id = 0; id < 300; id++)
            all[id] = id;
        check(&c, MH_FORWARD, 200, "in order");
        mhq_cands_free(&c);
        walks++;
    }
    free(all);
    printf("query_cands: %u walks ordered as brute force does\n", walks);
    return 0;
}
