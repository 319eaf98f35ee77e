/*
 * clock.h - the benchmark tools' clocks and page-fault counters, shared by
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

/* CPU time of the process so far, every thread, in seconds (getrusage):
 * user into *user, system into *sys; 0, or -1 (both left alone) if
 * unknown. */
static inline int mhb_cpu_parts(double *user, double *sys) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    return 0;
}

/* CPU time of the process so far (user + system, every thread), in
 * seconds (getrusage), -1 if unknown. */
static inline double mhb_cpu(void) {
    double user, sys;
    return mhb_cpu_parts(&user, &sys) == 0 ? user + sys : -1;
}

#endif
