/* The query cache's thrash resistance (src/query.c, cache_admit): a set of
 * questions whose blocks outgrow the cache, asked again and again, keeps
 * part of them cached where the plain LRU kept none; a small set asked
 * after it is cached whole again; and with every new block on probation
 * the answers stay the oracle's, down to a cache of two entries.
 *
 *   test_cache_probation            a synthetic trace
 *   test_cache_probation --real M   a qemu recording of sort made with the
 *                                   CLI M (exit 77 without qemu) */
#include "internal.h"
#include "testutil.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASSES 6

/* count point max-10 questions on addresses of all[], from anywhere */
static mh_query *draw(const mh_access *all, size_t n, size_t count, uint64_t seed) {
    mh_query *q = calloc(count, sizeof *q);
    CHECK(q != NULL);
    tu_rng rng = {seed};
    for (size_t i = 0; i < count; i++) {
        mh_query_init(&q[i]);
        q[i].start = all[tu_below(&rng, n)].transition;
        q[i].direction = tu_below(&rng, 2) ? MH_BACKWARD : MH_FORWARD;
        q[i].addr_first = all[tu_below(&rng, n)].physical & ~(uint64_t)7;
        q[i].addr_last = q[i].addr_first + 7;
    }
    return q;
}

/* Blocks decoded by one pass over q[0 .. count) (answers checked against
 * the oracle when check). */
static uint64_t pass(mh_reader *r, const mh_access *all, size_t n, const mh_query *q,
                     size_t count, int check) {
    uint64_t before = atomic_load(&r->blocks_decoded);
    mh_access out[10];
    for (size_t i = 0; i < count; i++) {
        if (check) {
            (void)tu_check_query(r, all, n, &q[i], 10);
        } else {
            size_t got;
            CHECK_OK(mh_query_run(r, &q[i], out, 10, &got));
        }
    }
    return atomic_load(&r->blocks_decoded) - before;
}

/* The bytes the cache holds once q's blocks are all in it. */
static size_t working_set(const char *dir, const mh_access *all, size_t n, const mh_query *q,
                          size_t count) {
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    CHECK_OK(mh_reader_set_cache(r, (size_t)1 << 30));
    (void)pass(r, all, n, q, count, 0);
    size_t held, sum, largest;
    CHECK(mh_query_cache_audit(r, &held, &sum, &largest) == 1);
    mh_reader_close(r);
    return held;
}

/* Asks q PASSES times with a cache of half its blocks, the LRU (policy
 * -1) and the reference reader's choice (0): the LRU decodes (nearly)
 * every block at every pass, the reader keeps a part; then, on the second
 * reader, a small set asked 5 times is cached whole again. */
static void check_loop(const char *dir, const mh_access *all, size_t n, const char *what) {
    const size_t count = 200, small = 8;
    mh_query *q = draw(all, n, count, 4242);
    size_t ws = working_set(dir, all, n, q, count);
    uint64_t last[2] = {0, 0}, warm[2] = {0, 0};
    mh_reader *keep = NULL;
    for (int k = 0; k < 2; k++) {
        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(dir, &r));
        CHECK_OK(mh_reader_set_cache(r, ws / 2));
        r->cache_probation = k == 0 ? -1 : 0;
        uint64_t d[PASSES];
        for (int p = 0; p < PASSES; p++)
            d[p] = pass(r, all, n, q, count, p == 0 || p == PASSES - 1);
        /* the LRU lets none in on probation; the reader does, once
         * the blocks it evicted come back */
        uint64_t in = atomic_load(&r->probation_in);
        CHECKF(k == 0 ? in == 0 : in > 0, "%s: %llu blocks let in on probation", what,
               (unsigned long long)in);
        warm[k] = d[1];
        last[k] = d[PASSES - 1];
        printf("  %s, %zu questions, %zu KiB of blocks, cache %zu KiB, %s: blocks decoded "
               "a pass %llu %llu %llu %llu %llu %llu\n",
               what, count, ws >> 10, (ws / 2) >> 10, k == 0 ? "LRU" : "probation",
               (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2],
               (unsigned long long)d[3], (unsigned long long)d[4], (unsigned long long)d[5]);
        if (k == 0)
            mh_reader_close(r);
        else
            keep = r;
    }
    CHECKF(last[0] * 10 >= warm[0] * 9, "%s: the plain LRU decoded %llu blocks at the last "
           "pass, %llu at the second: the set does not outgrow the cache", what,
           (unsigned long long)last[0], (unsigned long long)warm[0]);
    CHECKF(last[1] * 4 <= last[0] * 3, "%s: with probation the last pass decoded %llu "
           "blocks, the LRU %llu (expected at most three quarters)", what,
           (unsigned long long)last[1], (unsigned long long)last[0]);
    /* a small set after the big one: its blocks kept again (the evicted
     * ones come back soon, votes against probation; a block used again by
     * a later question leaves it) */
    mh_query *s = draw(all, n, small, 99);
    uint64_t d[5];
    for (int p = 0; p < 5; p++)
        d[p] = pass(keep, all, n, s, small, p == 4);
    printf("  %s, then %zu questions 5 times: blocks decoded a pass %llu %llu %llu %llu %llu\n",
           what, small, (unsigned long long)d[0], (unsigned long long)d[1],
           (unsigned long long)d[2], (unsigned long long)d[3], (unsigned long long)d[4]);
    CHECKF(d[0] > 0 && d[4] == 0, "%s: a small set after a thrashing one decoded %llu blocks "
           "at its fifth pass (expected none: cached)", what, (unsigned long long)d[4]);
    mh_reader_close(keep);
    free(s);
    free(q);
}

/* Every new block on probation, caches of two entries, 64 KiB and the
 * default: random questions, chains and cursors against the oracle. */
static void check_forced(const char *dir, const mh_access *all, size_t n, size_t count) {
    static const size_t caches[3] = {0, 64u << 10, MH_READER_CACHE_DEFAULT};
    for (int i = 0; i < 3; i++) {
        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(dir, &r));
        CHECK_OK(mh_reader_set_cache(r, caches[i]));
        r->cache_probation = 1;
        snprintf(tu_context, sizeof tu_context, "every block on probation, cache %zu bytes",
                 caches[i]);
        tu_random_queries(r, all, n, count, 1000 + (uint64_t)i);
        /* the two small caches fill: probation served them */
        CHECKF(caches[i] == MH_READER_CACHE_DEFAULT || atomic_load(&r->probation_in) > 0,
               "cache %zu bytes: no block let in on probation", caches[i]);
        mh_reader_close(r);
    }
    tu_context[0] = '\0';
}

static void run_synthetic(void) {
    const size_t n = 300000;
    mh_access *all = calloc(n, sizeof *all);
    CHECK(all != NULL);
    tu_rng rng = {5};
    for (size_t i = 0; i < n; i++)
        all[i] = (mh_access){.transition = 1 + i + i / 7, .size = 8,
                             .physical = 0x40000000u + 8 * tu_below(&rng, 1u << 13),
                             .op = (uint8_t)(tu_below(&rng, 3) ? MH_OP_READ : MH_OP_WRITE)};
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "cache-probation");
    tu_write_store(dir, NULL, all, n);
    check_loop(dir, all, n, "synthetic");
    check_forced(dir, all, n, 300);
    tu_rmtree(dir);
    free(all);
}

static int run_real(const char *memhist) {
    char dir[4096], store[4096];
    tu_mkdtemp(dir, sizeof dir, "cache-probation-real");
    int rc = 0;
    size_t n = 0;
    mh_access *all = tu_record_sort_all(memhist, dir, 3000, store, sizeof store,
                                        "cache_probation --real", &n, &rc);
    if (!all) {
        tu_rmtree(dir);
        return rc;
    }
    printf("real: %zu accesses recorded\n", n);
    check_loop(store, all, n, "sort recorded");
    check_forced(store, all, n, 150);
    free(all);
    tu_rmtree(dir);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "--real")) {
        int rc = run_real(argv[2]);
        if (rc == 0)
            printf("cache_probation --real: ok\n");
        return rc;
    }
    run_synthetic();
    printf("cache_probation: ok\n");
    return 0;
}
