/*
 * point_c.c - the C side of bench_python.py's point-query comparison: runs
 * the very queries the Python side ran (read from a file) on the same store
 * through the same libmemhist.so.1, once untimed (warm cache), then timed,
 * and prints "p50_ns p99_ns matches bulk_maps" so that the two figures
 * differ only by what Python adds; bulk_maps is one whole-store query (all
 * operations) into one buffer, in M accesses/s, the C side of the bulk figure.
 *
 * Usage: point_c STORE QUERIES_FILE REPS
 *   QUERIES_FILE: one query a line, decimal: first last start direction ops max
 * Exit status: 0 done, 1 failure, 2 bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "memhist.h"

typedef struct {
    unsigned long long first, last, start;
    unsigned dir, ops;
    size_t max;
} q_t;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: point_c STORE QUERIES_FILE REPS\n");
        return 2;
    }
    int reps = atoi(argv[3]);
    FILE *f = fopen(argv[2], "r");
    if (!f || reps < 1) {
        fprintf(stderr, "point_c: cannot read %s\n", argv[2]);
        return 1;
    }
    size_t n = 0, cap = 1024;
    q_t *qs = malloc(cap * sizeof *qs);
    q_t q;
    while (qs && fscanf(f, "%llu %llu %llu %u %u %zu", &q.first, &q.last, &q.start,
                        &q.dir, &q.ops, &q.max) == 6) {
        if (n == cap)
            qs = realloc(qs, (cap *= 2) * sizeof *qs);
        if (qs)
            qs[n++] = q;
    }
    fclose(f);
    mh_reader *r = NULL;
    int rc = mh_reader_open(argv[1], &r);
    long long *t = malloc((n * (size_t)reps + 1) * sizeof *t);
    mh_access *out = malloc(4096 * sizeof *out);
    if (rc || !qs || !t || !out || n == 0) {
        fprintf(stderr, "point_c: %s\n", rc ? mh_strerror(rc) : "no queries or no memory");
        return 1;
    }
    unsigned long long matches = 0;
    for (int pass = -1; pass < reps; pass++) { /* pass -1 warms the cache */
        for (size_t i = 0; i < n; i++) {
            mh_query mq;
            mh_query_init(&mq);
            mq.start_kind = MH_FROM_TRANSITION;
            mq.direction = qs[i].dir;
            mq.start = qs[i].start;
            mq.addr_first = qs[i].first;
            mq.addr_last = qs[i].last;
            mq.ops = qs[i].ops;
            size_t got = 0;
            long long t0 = now_ns();
            rc = mh_query_run(r, &mq, out, qs[i].max < 4096 ? qs[i].max : 4096, &got);
            long long t1 = now_ns();
            if (rc) {
                fprintf(stderr, "point_c: query %zu: %s\n", i, mh_strerror(rc));
                return 1;
            }
            if (pass >= 0) {
                t[(size_t)pass * n + i] = t1 - t0;
                matches += got;
            }
        }
    }
    size_t m = n * (size_t)reps;
    qsort(t, m, sizeof *t, cmp_ll);

    mh_stats st = {.struct_size = sizeof st};
    mh_access *all = NULL;
    double maps = 0;
    if (mh_reader_stats(r, &st) == 0 && (all = malloc((st.accesses + 1) * sizeof *all))) {
        mh_query mq;
        mh_query_init(&mq);
        mq.ops = MH_OPS_ALL;
        size_t got = 0;
        long long t0 = now_ns();
        rc = mh_query_run(r, &mq, all, st.accesses, &got);
        long long t1 = now_ns();
        if (rc || got != st.accesses) {
            fprintf(stderr, "point_c: whole-store query: %s\n", mh_strerror(rc));
            return 1;
        }
        maps = (double)got / ((double)(t1 - t0) * 1e-9) / 1e6;
    }
    free(all);
    printf("%lld %lld %llu %.2f\n", t[m / 2], t[m * 99 / 100],
           matches / (unsigned long long)reps, maps);
    mh_reader_close(r);
    free(t);
    free(out);
    free(qs);
    return 0;
}
