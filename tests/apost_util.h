/*
 * apost_util.h - what the address postings' tests (apost.c: section 10,
 * apost_wide.c: section 14) share: the (op, granule, slice) triples a
 * section's keys stand for, decoded through the reader, and a store
 * written with the writer's options those tests vary.
 */
#ifndef MH_TESTS_APOST_UTIL_H
#define MH_TESTS_APOST_UTIL_H

#include "internal.h"

typedef struct trip {
    uint64_t w;
    uint32_t op, s;
} trip;

/* qsort order: (op, granule, slice). */
int tu_cmp_trip(const void *x, const void *y);

/* Every key of v (a section 10, or a section 14's body) as triples in
 * section order, through the reader's decoder (each run must decode; the
 * postings must add up to the header's count): a malloc'd array, its
 * length returned. */
size_t tu_apost_decode(const mh_apost_view *v, trip **out);

/* Segment i of an open reader (the test fails if it cannot be read). */
const mh_seg *tu_seg_of(const mh_reader *r, size_t i);

/* Writes all[0 .. n) into dir (slices of slice_accesses, blocks of 64,
 * segments of commit accesses, address_postings = postings, the streams of
 * the accesses declared as threads), in batches of 777; with discard, a segment and a half first, then back to a segment
 * and a quarter (mh_writer_discard_from, in a segment that has slices).
 * Returns the store's accesses in id order (malloc'd), *nout of them. */
mh_access *tu_apost_write(const char *dir, const mh_access *all, size_t n, size_t commit,
                          uint32_t slice_accesses, int discard, int postings, size_t *nout);

#endif
