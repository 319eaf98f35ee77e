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
#define MH_SYNTH_PC 8u         /* set has_pc and pc (the instruction's address) */

typedef struct mh_synth mh_synth;

/* Returns NULL on allocation failure. total: accesses to produce. */
mh_synth *mh_synth_new(uint64_t seed, uint64_t total, unsigned flags);
/* One thread of a multi-threaded program: stream `thread` (set on every
 * access), its own stack (thread k's is k x 2 MiB below thread 0's) and its
 * own heap arena (k x 4 MiB into the heap, k < 64), sharing code, globals,
 * arrays and device registers with the others. mh_synth_new(seed, total,
 * flags) is mh_synth_new_thread(seed, total, flags, 0). NULL on allocation
 * failure or thread > MH_STREAM_MAX. */
mh_synth *mh_synth_new_thread(uint64_t seed, uint64_t total, unsigned flags,
                              uint32_t thread);
/* Writes up to max next accesses (id = order of appearance); returns how
 * many, 0 at the end. Transitions are non-decreasing. */
size_t mh_synth_next(mh_synth *s, mh_access *out, size_t max);
void mh_synth_free(mh_synth *s);

#endif
