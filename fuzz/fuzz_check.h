/*
 * fuzz_check.h - the documented invariants of query answers (memhist.h,
 * OVERVIEW), checked on every access a target gets back, and a routine that
 * drives an open reader through everything it claims to hold.
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "memhist.h"
#include "oracle.h"

/* 1 when the environment sets MH_FUZZ_LENIENT (not "0"): the ordering and
 * cross-answer checks are skipped, only per-access validity, error codes
 * and memory safety stay. For hunting other bugs while a known consistency
 * bug of the library is open; never set in CI. */
int fuzz_lenient(void);
/* Makes fuzz_lenient() true (on) or as the environment says (off), for a
 * target whose store fsck already found damaged in a way no query can see
 * (an address summary that lies consistently: SPEC.md 9 leaves it to fsck):
 * then answers may miss rows, yet every call must still fail cleanly. */
void fuzz_set_lenient(int on);

/* A growable array of accesses. */
typedef struct fuzz_vec {
    mh_access *v;
    size_t n, cap;
} fuzz_vec;

void fuzz_vec_push(fuzz_vec *v, const mh_access *a);
void fuzz_vec_free(fuzz_vec *v);

/* Aborts with both accesses printed when they differ (oracle_same_access:
 * linear compared only when present). */
void fuzz_assert_same(const mh_access *got, const mh_access *want,
                      const char *what, size_t index);
/* Aborts when the two answers differ, after oracle_compare's line and q
 * (when not NULL). */
void fuzz_assert_equal(const fuzz_vec *got, const fuzz_vec *want,
                       const char *what, const mh_query *q);

/* State of one answer being checked batch by batch (a cursor's batches, or a
 * resume chain of mh_query_run calls: the same ordering rules hold). */
typedef struct fuzz_chain {
    oracle_query oq; /* the query; oracle_matches judges each access */
    mh_stats st;
    uint64_t seen;
    int have_last;
    mh_access last;
    /* transitions checked across batches (a cursor), or only within one
     * (a resume chain: each mh_query_run answers its own query, and rows of
     * distinct chunks that disagree are only seen together by fsck) */
    int across_batches;
} fuzz_chain;

void fuzz_chain_init(fuzz_chain *c, const mh_query *q, const mh_stats *st);
/* Checks n accesses that continue the answer: each access valid (size >= 1,
 * no wrap, op known and in the set, has_linear 0/1, reserved 0, overlap with
 * [A, B], start condition, id < st.accesses, transition within the store's
 * bounds), ids strictly monotone and transitions monotone in the direction
 * (within each batch, and across batches when across_batches is set). */
void fuzz_chain_check(fuzz_chain *c, const mh_access *a, size_t n);

/* Runs q through a cursor with batch sizes drawn from seed, checking every
 * batch; stops after limit accesses. Appends what it got to out (if not
 * NULL). Returns the first error (a named MH_E* code, checked) or MH_OK;
 * *complete = 1 when the cursor reported its end within the limit. */
int fuzz_cursor_scan(const mh_reader *r, const mh_query *q, uint64_t limit,
                     uint32_t seed, fuzz_vec *out, int *complete);

/* Answers q by mh_query_run calls of at most step accesses, each resuming
 * from the last id returned; same contract as fuzz_cursor_scan. */
int fuzz_resume_scan(const mh_reader *r, const mh_query *q, size_t step,
                     uint64_t limit, fuzz_vec *out, int *complete);

/* The oracle's answer (oracle.h) to the valid query q over all[0 .. n)
 * (all[i].id == i, transitions non-decreasing): appends at most max matches
 * to out. */
void fuzz_brute_query(const mh_access *all, size_t n, const mh_query *q,
                      size_t max, fuzz_vec *out);

/* Drives an open reader through its stats, metadata, introspection records
 * and a set of queries derived from its own index, checking every invariant
 * and that the answers agree with each other; limit bounds the accesses
 * read per query so a small hostile file cannot make a run slow. Returns
 * MH_OK when every call succeeded, else the first (named) error met. */
int fuzz_exercise_reader(const mh_reader *r, uint64_t limit);

/* mh_verify with a report callback that checks every problem it is given
 * (named code, file and message set, one line) and counts them; asserts the
 * count matches res->problems and that the result code agrees with it
 * (MH_OK exactly when no problem is left). */
int fuzz_verify(const char *dir, unsigned flags, mh_verify_result *res);

#endif /* FUZZ_CHECK_H */
