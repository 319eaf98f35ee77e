/*
 * resum.h - a segment's section edited in place with every checksum after
 * it made right again (the section's directory sum, the piece sums of
 * section 12 when the segment has them, the directory, the header, the
 * MANIFEST's copy of the header sum): damage that only a structural or
 * exactness check can see.
 */
#ifndef MH_TESTS_RESUM_H
#define MH_TESTS_RESUM_H

#include <stddef.h>
#include <stdint.h>

#include "testutil.h"

/* Calls edit(section bytes, size, ctx) on every section of `type` of
 * segment file dir/name (the test fails when there is none), then resums
 * (the piece sums too, unless `type` is theirs: then they stay as edited,
 * only their directory sum made right). */
void tu_resum_segment(const char *dir, const char *name, uint32_t type,
                      void (*edit)(uint8_t *sec, uint64_t size, void *ctx),
                      void *ctx);
/* A copy of the store dir in a new temporary directory (its path in copy,
 * cap bytes; tag names it) whose segment `name` had section `type` edited
 * (tu_resum_segment), and fsck's verdict on it (tu_fsck). The caller
 * removes the copy. */
tu_problems tu_damaged_copy(const char *dir, const char *tag, const char *name, uint32_t type,
                            void (*edit)(uint8_t *sec, uint64_t size, void *ctx), char *copy,
                            size_t cap);
/* The piece sums (SPEC.md §9f) of the n bytes of segment file b made
 * right for its sections as they are now, and section 12's directory sum:
 * written from the spec (entries' types, pieces of 2^shift bytes). */
void tu_resum_pieces(uint8_t *b, size_t n);

#endif
