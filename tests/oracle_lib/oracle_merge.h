/*
 * oracle_merge.h - the order several producers' accesses must have once
 * the writer's merge (src/merge.c) has put them into one store, shared by
 * tests/streams_producers.c and tests/robust/producers_kill_test.c. Test
 * support only: not part of libmemhist, never installed.
 *
 * Every access the tests append carries who made it in its address:
 * physical = (stream + 1) << 40 | seq << 3, seq its index in its stream,
 * so the store's order can be read back through the query API. The merged
 * order is all accepted accesses sorted by (transition, stream, seq): ties
 * at one transition go to the lower stream id, and within a stream the
 * producer's own order is kept.
 */
#ifndef MH_ORACLE_MERGE_H
#define MH_ORACLE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "memhist.h"

#define ORACLE_PHY(s, seq) ((((uint64_t)(s) + 1) << 40) | ((uint64_t)(seq) << 3))
#define ORACLE_PHY_STREAM(p) ((uint32_t)(((p) >> 40) - 1))
#define ORACLE_PHY_SEQ(p) (((p) & ((UINT64_C(1) << 40) - 1)) >> 3)

/* One access as the merge orders it: transition, stream, seq. */
typedef struct oracle_rec {
    uint64_t t;
    uint32_t s;
    uint64_t seq;
} oracle_rec;

/* Sorts r[0 .. n) into the merged order. */
void oracle_merge_sort(oracle_rec *r, size_t n);

/* 0 when got[0 .. n) (a store's accesses in id order, addresses made with
 * ORACLE_PHY) are want[0 .. n) in that order with ids 0 .. n-1; else one
 * line to stderr -- "WHAT: id I is (t, stream, seq), the merged order has
 * (t, stream, seq)", or "WHAT: access I has id J" -- and -1. */
int oracle_merge_compare(const char *what, const mh_access *got, const oracle_rec *want,
                         size_t n);

#endif /* MH_ORACLE_MERGE_H */
