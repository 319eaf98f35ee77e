/*
 * robust_util.h - shared pieces of the robustness tests (tests/robust/):
 * a seeded RNG, random queries checked against the shared brute-force
 * oracle (oracle.h, included), whole-store reads through the public API,
 * flat-directory file helpers and child-process helpers.
 */
#ifndef RB_UTIL_H
#define RB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "memhist.h"
#include "oracle.h"

/* ctest's SKIP_RETURN_CODE for every robust test */
#define RB_SKIP 77

/* Fails the test with file, line, the condition and a formatted reason. */
#define RB_CHECK(cond, ...)                                                    \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,  \
                    #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* Fails the test when an API call returns an error. */
#define RB_OK(expr)                                                            \
    do {                                                                       \
        int rb_ok_rc_ = (expr);                                                \
        RB_CHECK(rb_ok_rc_ == MH_OK, "%s returned %s", #expr,                  \
                 mh_error_name(rb_ok_rc_));                                    \
    } while (0)

/* ---- RNG (splitmix64: same sequence on every host) -------------------- */
typedef struct rb_rng {
    uint64_t s;
} rb_rng;
uint64_t rb_rand(rb_rng *r);
uint64_t rb_below(rb_rng *r, uint64_t n); /* uniform-ish in [0, n), n > 0 */

/* ---- synthetic accesses ------------------------------------------------
 * n accesses with locality (stack, heap objects, streams), transitions
 * non-decreasing, ids 0..n-1, all three operations, some without linear.
 * Returns a malloc'd array (exits on allocation failure). */
mh_access *rb_gen_accesses(uint64_t seed, size_t n);

/* ---- queries against the oracle (tests/oracle_lib/oracle.h) ------------ */
/* A random valid query aimed at the content all[0..n) (n may be 0). */
void rb_random_query(rb_rng *rng, const mh_access *all, size_t n, mh_query *q);

/* Runs count random queries on r and compares each answer, and a resume
 * chain, with the oracle over all[0..n). Returns MH_OK, -100 on a wrong
 * answer (described on stderr), or the library's error code. */
int rb_check_queries(const mh_reader *r, const mh_access *all, size_t n,
                     rb_rng *rng, int count);

/* Reads every access of r (forward from transition 0, all operations, the
 * whole address space) with a cursor. *out is malloc'd (may be NULL when
 * *n == 0). Returns MH_OK or the library's error code. */
int rb_read_all(const mh_reader *r, mh_access **out, size_t *n);

/* Opens path, reads everything; returns the open/read error or MH_OK.
 * *n gets the number of accesses. On success *out is malloc'd. */
int rb_load_store(const char *path, mh_access **out, size_t *n);

/* 1 for the codes a damaged store may legitimately produce. */
int rb_is_data_error(int rc);

/* mh_verify wrappers: problems found (0 = clean), printing each problem
 * when verbose. rc gets mh_verify's return value. */
uint64_t rb_verify(const char *path, unsigned flags, int verbose, int *rc);

/* ---- files (stores are flat directories) ------------------------------ */
unsigned char *rb_read_file(const char *path, size_t *len); /* NULL if absent */
void rb_write_file(const char *path, const void *buf, size_t len);
void rb_rm_dir(const char *dir);   /* removes a flat directory, if present */
void rb_copy_dir(const char *from, const char *to); /* flat copy; to is replaced */
int rb_exists(const char *path);
/* Sorted names of the regular files in dir (excluding "." and ".."); count
 * in *n. Free with rb_free_names. */
char **rb_list_dir(const char *dir, size_t *n);
void rb_free_names(char **names, size_t n);
/* snprintf into a static-sized caller buffer, exiting on truncation */
void rb_path(char *buf, size_t len, const char *dir, const char *name);

/* ---- child processes -------------------------------------------------- */
/* fork + execv argv; stdout to out_fd (-1 = inherit), stderr to err_path
 * (NULL = inherit). Returns the pid. */
pid_t rb_spawn(char *const argv[], int out_fd, const char *err_path);
/* Runs argv to completion with stdout/stderr to the given files (NULL =
 * /dev/null); returns the exit status (128 + signal when killed). */
int rb_run(char *const argv[], const char *out_path, const char *err_path);



/* ---- traces ------------------------------------------------------------
 * Records a real trace: valgrind --tool=lackey --trace-mem=yes of tracee
 * (run with the argument tracee_arg) into dir/trace.lackey, and sets
 * *format to "lackey". When valgrind is not on PATH, writes a synthetic
 * CSV trace of synth_accesses accesses to dir/trace.csv instead, sets
 * *format to "csv" and returns 0; returns 1 for a real trace. path gets
 * the trace file's path. */
int rb_make_trace(const char *dir, const char *tracee, const char *tracee_arg,
                  size_t synth_accesses, char *path, size_t path_len,
                  const char **format);
/* Full path of prog found on PATH into buf; 0 when found, -1 otherwise. */
int rb_which(const char *prog, char *buf, size_t len);
#endif /* RB_UTIL_H */
