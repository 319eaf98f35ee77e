/*
 * clock.h - the benchmark tools' clock and page-fault counters, shared by
 * mh_bench (bench.h) and mh_probe, which links none of mh_bench's files.
 */
#ifndef MH_BENCH_CLOCK_H
#define MH_BENCH_CLOCK_H

#include <sys/resource.h>
#include <time.h>

/* CLOCK_MONOTONIC, in seconds. */
static inline double mhb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Major page faults of the process so far (getrusage), -1 if unknown. */
static inline long mhb_major_faults(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_majflt : -1;
}

/* Minor page faults of the process so far (getrusage), -1 if unknown. */
static inline long mhb_minor_faults(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : -1;
}

#endif
