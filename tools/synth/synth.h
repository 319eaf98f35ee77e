/*
 * synth.h - a deterministic synthetic memory trace with realistic locality
 * (stack pushes and pops, heap objects, streaming over arrays, a few hot
 * globals, occasional large copies), for tests and the benchmark.
 * Same seed and parameters give the same accesses on every host.
 */
#ifndef MH_SYNTH_H
#define MH_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include "memhist.h"

#define MH_SYNTH_EXEC 1u       /* also emit one execute access per transition */
#define MH_SYNTH_NO_LINEAR 2u  /* leave has_linear = 0 on every access */
#define MH_SYNTH_SPARSE_T 4u   /* leave large gaps between some transitions */

typedef struct mh_synth mh_synth;

/* Returns NULL on allocation failure. total: accesses to produce. */
mh_synth *mh_synth_new(uint64_t seed, uint64_t total, unsigned flags);
/* Writes up to max next accesses (id = order of appearance); returns how
 * many, 0 at the end. Transitions are non-decreasing. */
size_t mh_synth_next(mh_synth *s, mh_access *out, size_t max);
void mh_synth_free(mh_synth *s);

#endif
