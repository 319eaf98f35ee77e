/*
 * oracle.h - the half-axis query by brute force over an in-memory trace:
 * the obviously right answer both stores are checked against in the quick
 * benchmark and the baseline's own test.
 */
#ifndef MH_BENCH_ORACLE_H
#define MH_BENCH_ORACLE_H

#include <stddef.h>
#include "memhist.h"

/* trace[i] is the access with id i (its id field is ignored). Writes at most
 * max matches of q to out, with ids set; *n gets how many. Returns MH_EINVAL
 * for a query mh_query_run would refuse. */
int mhb_oracle_query(const mh_access *trace, size_t count, const mh_query *q,
                     mh_access *out, size_t max, size_t *n);

/* 1 when the two result lists are equal field by field (id, transition,
 * has_linear and linear, physical, size, op); else 0 and *at is the first
 * differing index (or the shorter length). */
int mhb_results_equal(const mh_access *a, size_t na, const mh_access *b,
                      size_t nb, size_t *at);

#endif
