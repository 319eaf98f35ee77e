/*
 * bench.h - pieces of mh_bench shared by its files: query classes and how
 * they are run and checked (bench_query.c), the figures of one workload and
 * their report (bench_report.c), orchestration (bench.c).
 */
#ifndef MH_BENCH_H
#define MH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "memhist.h"

#define MHB_OUT_CAP 1000u  /* most accesses one query (or chain) returns */
#define MHB_CHAIN_PAGES 10u
#define MHB_CHAIN_MAX 100u /* accesses per page of a resume chain */

enum mhb_range { MHB_POINT, MHB_PAGE, MHB_MIB, MHB_WHOLE, MHB_RANGES };

/* Latencies of one class on one implementation, microseconds. */
typedef struct mhb_lat {
    double p50, p99, max;
    size_t count;
} mhb_lat;

/* One query class: every query shares range kind, direction, op set and
 * max; starts and ranges differ, drawn from the trace. */
typedef struct mhb_class {
    char name[48];
    int range;
    unsigned dir, ops;
    size_t max;     /* per page */
    unsigned pages; /* 1, or MHB_CHAIN_PAGES for a resume chain */
    size_t nq;
    mh_query *q;
    size_t nrun;    /* queries compared and timed: nq, or fewer when an
                       implementation exceeded the class time budget */
    mhb_lat lat[2]; /* [0] memhist, [1] SQLite */
    int has_lat[2];
    double mean_results; /* accesses returned per query (or chain) */
} mhb_class;

/* A store under test: run one query, mh_query_run's contract. */
typedef int (*mhb_run_fn)(void *h, const mh_query *q, mh_access *out,
                          size_t max, size_t *n);
typedef struct mhb_impl {
    const char *name;
    mhb_run_fn run;
    void *h;
    int slot; /* index in mhb_class.lat, or -1 when never timed (oracle) */
    size_t limit; /* compare only the first `limit` queries of each class */
} mhb_impl;

/* Brute force over the trace, as an implementation. */
typedef struct mhb_oracle_ctx {
    const mh_access *trace;
    size_t n;
} mhb_oracle_ctx;
int mhb_oracle_run(void *h, const mh_query *q, mh_access *out, size_t max,
                   size_t *n);

/* Builds the classes (every range x max x direction x op set, then the
 * resume chains), per_class queries each, drawn deterministically from the
 * trace with seed. Returns MH_ENOMEM or MH_OK. */
int mhb_classes_make(const mh_access *trace, size_t n, size_t per_class,
                     uint64_t seed, mhb_class **out, size_t *count);
void mhb_classes_free(mhb_class *c, size_t count);

/* Runs every class: impl[0] is the reference; each other implementation's
 * answers are compared with it query by query (a warm pass), then the
 * implementations with a slot are timed in a second pass whose answers are
 * compared again. Mismatches are described on stderr and counted. An
 * implementation still running a class's warm pass after budget seconds
 * stops there, and the class keeps only the queries every implementation
 * finished (nrun): a whole-space query of the SQLite design walks every
 * chunk of a slice and can take seconds. Returns MH_OK, or the first error
 * code of a query. */
int mhb_classes_bench(mhb_class *c, size_t count, const mhb_impl *impl,
                      size_t nimpl, int timed, double budget,
                      uint64_t *compared, uint64_t *mismatches);

/* Runs the queries of every class once on impl (within budget seconds a
 * class), answers discarded: the reader-memory children. */
int mhb_classes_run_once(const mhb_class *c, size_t count, const mhb_impl *impl,
                         double budget);

/* Figures of one workload. Negative values mean "not measured". */
typedef struct mhb_workload {
    char name[64];
    uint64_t accesses;
    int sqlite_ran;
    double ingest_rate[3];   /* accesses/s: memhist bg on, bg off, SQLite */
    double bytes_per_access[2];
    uint64_t store_bytes[2];
    double open_ms[2];
    double writer_mib[3];    /* as ingest_rate */
    double reader_mib[2];
    uint64_t mh_slices, mh_chunks, mh_blocks, sql_slices, sql_chunks;
    mhb_class *cls;
    size_t ncls;
    uint64_t compared, mismatches;
} mhb_workload;

typedef struct mhb_machine {
    long nproc;
    char cpu[128];
    char kernel[400];
    char date[32];
} mhb_machine;

void mhb_machine_get(mhb_machine *m);
void mhb_report_markdown(FILE *f, const mhb_machine *m, const mhb_workload *w,
                         size_t nw);
int mhb_report_json(const char *path, const mhb_machine *m,
                    const mhb_workload *w, size_t nw);

double mhb_now(void); /* CLOCK_MONOTONIC, seconds */

#endif /* MH_BENCH_H */
