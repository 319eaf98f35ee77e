/*
 * draw.h - how mh_bench and mh_probe draw a query from a trace, so that a
 * class profiled with mh_probe is the class mh_bench measures.
 */
#ifndef MH_BENCH_DRAW_H
#define MH_BENCH_DRAW_H

#include <stddef.h>
#include <stdint.h>
#include "memhist.h"

/* splitmix64 step: the next value of the generator whose state is *s. */
uint64_t mhb_mix(uint64_t *s);

/* Fills q with a query that the access at a random index j of t[0..n)
 * matches: an operation of ops, the range_bytes-aligned range around its
 * address (range_bytes a power of two; 0 = the whole 64-bit space), and a
 * start (transition) a log-uniform distance (0 .. n) before j (forward)
 * or after it (backward), so queries reach both near and far. n > 0. */
void mhb_draw_query(const mh_access *t, size_t n, unsigned ops, unsigned dir,
                    uint64_t range_bytes, uint64_t *rng, mh_query *q);

/* What the user distribution needs from a trace: its distinct transitions
 * (the trace is in transition order, so they come out sorted) and the set
 * of bytes it touched, as sorted disjoint intervals [lo[i], hi[i]] that
 * neither overlap nor touch (hi[i] + 1 < lo[i + 1]). */
typedef struct mhb_trace_index {
    uint64_t *trans;
    size_t ntrans;
    uint64_t *lo, *hi;
    size_t nivl;
} mhb_trace_index;

/* Builds x from t[0..n). Returns MH_ENOMEM or MH_OK (x zeroed on failure).
 * Sorts a copy of the n intervals: 16 bytes an access while it runs. */
int mhb_trace_index_make(const mh_access *t, size_t n, mhb_trace_index *x);
void mhb_trace_index_free(mhb_trace_index *x);

/* 1 when no access of the indexed trace touches a byte of [a, b] (a <= b). */
int mhb_untouched(const mhb_trace_index *x, uint64_t a, uint64_t b);

/* The distribution users ask (issue 10): the start is a transition drawn
 * uniformly from the trace's distinct transitions; the range (range_bytes
 * aligned, a power of two; 0 = the whole 64-bit space) is anchored on the
 * address of an access drawn uniformly from the whole trace (80 %), or on
 * a random address within 64 KiB of one (20 %). The answer may be empty,
 * as a user's often is. n > 0. */
void mhb_draw_user(const mh_access *t, size_t n, const mhb_trace_index *x,
                   unsigned ops, unsigned dir, uint64_t range_bytes,
                   uint64_t *rng, mh_query *q);

/* A query on a range_bytes-aligned range (range_bytes a power of two, not 0)
 * that the trace never touched, proven with mhb_untouched: inside a gap
 * between touched intervals drawn uniformly (the gaps below the lowest and
 * above the highest count), so the range lies among the addresses the
 * program used; start as mhb_draw_user. Returns 1, or 0 when no gap holds
 * such a range (q untouched then). */
int mhb_draw_never(const mhb_trace_index *x, unsigned ops, unsigned dir,
                   uint64_t range_bytes, uint64_t *rng, mh_query *q);

#endif /* MH_BENCH_DRAW_H */
