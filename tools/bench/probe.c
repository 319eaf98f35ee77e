/*
 * probe.c - mh_probe: one query class on one synthetic store, for profiling
 * (perf record, callgrind) and for trying writer options, without the
 * SQLite side or the other classes of mh_bench.
 *
 *   mh_probe [--size N] [--store DIR] [--slice N] [--queries N] [--reps N]
 *            [--max N] [--range BYTES] [--dir fwd|bwd] [--ops r|w|rw]
 *
 * Generates the synthetic trace (tools/synth, seed 1, N accesses), writes
 * it to DIR unless DIR already holds a store (reporting the ingest rate),
 * draws --queries queries the way mh_bench does (an access j of an
 * operation of the set gives the range, aligned around its address; the
 * start lies a log-uniform distance before or after it), runs them once
 * untimed, then --reps times timed, and prints p50 / p99 / max in us.
 * With --reps 1 the figures are comparable to mh_bench's warm pass; with
 * more, every line the queries touch is hot in the CPU caches.
 *
 * Exit status: 0 done, 1 a failure, 2 bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "draw.h"
#include "memhist.h"
#include "synth.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int usage(const char *why, const char *what) {
    if (why)
        fprintf(stderr, "mh_probe: %s%s%s\n", why, what ? ": " : "", what ? what : "");
    fprintf(stderr,
            "usage: mh_probe [--size N] [--store DIR] [--slice N] [--queries N]\n"
            "                [--reps N] [--max N] [--range BYTES] [--dir fwd|bwd]\n"
            "                [--ops r|w|rw]\n");
    return 2;
}

static int number(const char *s, uint64_t *out) {
    char *end = NULL;
    double d = strtod(s, &end); /* 1e7 as well as 10000000 */
    if (!*s || *end || d < 0 || d > 1e18)
        return -1;
    *out = (uint64_t)d;
    return 0;
}

int main(int argc, char **argv) {
    uint64_t size = 10000000, slice = 0, nq = 100, reps = 1, max = 1, range = 8;
    const char *store = "/tmp/mh_probe.store";
    unsigned dir = MH_BACKWARD, ops = MH_OPS_WRITE;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t *num = !strcmp(a, "--size")      ? &size
                        : !strcmp(a, "--slice")   ? &slice
                        : !strcmp(a, "--queries") ? &nq
                        : !strcmp(a, "--reps")    ? &reps
                        : !strcmp(a, "--max")     ? &max
                        : !strcmp(a, "--range")   ? &range
                                                  : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(NULL, NULL);
            return 0;
        }
        if (!num && strcmp(a, "--store") && strcmp(a, "--dir") && strcmp(a, "--ops"))
            return usage("unknown option", a);
        if (!v)
            return usage("missing value", a);
        if (num) {
            if (number(v, num))
                return usage("bad number", v);
        } else if (!strcmp(a, "--store")) {
            store = v;
        } else if (!strcmp(a, "--dir")) {
            if (strcmp(v, "fwd") && strcmp(v, "bwd"))
                return usage("--dir is fwd or bwd", v);
            dir = !strcmp(v, "fwd") ? MH_FORWARD : MH_BACKWARD;
        } else if (!strcmp(a, "--ops")) {
            ops = !strcmp(v, "r") ? MH_OPS_READ : !strcmp(v, "w") ? MH_OPS_WRITE
                  : !strcmp(v, "rw") ? MH_OPS_RW : 0;
            if (!ops)
                return usage("--ops is r, w or rw", v);
        }
    }
    if (size == 0 || nq == 0 || reps == 0 || max == 0 || max > 100000 || slice > (1u << 30) ||
        (range & (range - 1)) != 0)
        return usage("--size, --queries, --reps, --max (<= 100000) must be > 0, "
                     "--range 0 (whole space) or a power of two", NULL);

    mh_access *t = malloc(size * sizeof *t);
    mh_access *out = malloc(max * sizeof *out);
    mh_query *qs = calloc(nq, sizeof *qs);
    double *lat = malloc(nq * reps * sizeof *lat);
    mh_synth *g = mh_synth_new(1, size, 0);
    if (!t || !out || !qs || !lat || !g) {
        fprintf(stderr, "mh_probe: out of memory\n");
        return 1;
    }
    size_t n = 0;
    while (n < size) {
        size_t k = mh_synth_next(g, t + n, size - n);
        if (!k)
            break;
        n += k;
    }
    mh_synth_free(g);

    struct stat st;
    if (stat(store, &st) != 0) {
        mh_writer_options o;
        mh_writer_options_init(&o);
        if (slice)
            o.slice_accesses = (uint32_t)slice;
        mh_writer *w = NULL;
        int rc = mh_writer_open(store, MH_CREATE, &o, &w);
        double t0 = now();
        for (size_t i = 0; rc == MH_OK && i < n; i += 65536)
            rc = mh_writer_append_batch(w, t + i, n - i < 65536 ? n - i : 65536, NULL);
        if (w) {
            int rc2 = mh_writer_close(w);
            rc = rc == MH_OK ? rc2 : rc;
        }
        if (rc != MH_OK) {
            fprintf(stderr, "mh_probe: writing %s: %s\n", store, mh_strerror(rc));
            return 1;
        }
        printf("wrote %zu accesses to %s: %.2f M accesses/s\n", n, store,
               (double)n / (now() - t0) / 1e6);
    }
    mh_reader *r = NULL;
    int rc = mh_reader_open(store, &r);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_probe: %s: %s\n", store, mh_strerror(rc));
        return 1;
    }
    mh_stats stats = {.struct_size = sizeof stats};
    if (mh_reader_stats(r, &stats) != MH_OK || stats.accesses != n) {
        fprintf(stderr, "mh_probe: %s does not hold the %zu-access trace (another "
                        "--size wrote it?)\n", store, n);
        return 1;
    }

    uint64_t rng = 42;
    for (size_t i = 0; i < nq; i++)
        mhb_draw_query(t, n, ops, dir, range, &rng, &qs[i]);
    size_t got = 0;
    for (size_t i = 0; i < nq; i++) /* the warm pass */
        if ((rc = mh_query_run(r, &qs[i], out, max, &got)) != MH_OK)
            break;
    for (size_t p = 0; rc == MH_OK && p < reps; p++)
        for (size_t i = 0; rc == MH_OK && i < nq; i++) {
            double a = now();
            rc = mh_query_run(r, &qs[i], out, max, &got);
            lat[p * nq + i] = (now() - a) * 1e6;
        }
    mh_reader_close(r);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_probe: query: %s\n", mh_strerror(rc));
        return 1;
    }
    size_t m = nq * reps;
    qsort(lat, m, sizeof *lat, cmp_double);
    printf("%zu queries x %llu: p50 %.2f us, p99 %.2f us, max %.2f us\n", (size_t)nq,
           (unsigned long long)reps, lat[(m - 1) / 2], lat[(m * 99 + 99) / 100 - 1],
           lat[m - 1]);
    free(t);
    free(out);
    free(qs);
    free(lat);
    return 0;
}
