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

#endif /* MH_BENCH_DRAW_H */
