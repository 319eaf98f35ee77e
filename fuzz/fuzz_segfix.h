/*
 * fuzz_segfix.h - makes fuzzed segment bytes pass the checks a fuzzer
 * cannot guess: every checksum is recomputed from the bytes it covers, and
 * a MANIFEST is derived from a segment's header. With them a normal build
 * (checksums enforced) replaying the corpus reaches the same parsers as the
 * fuzz build, and the fuzz build reaches a reader whose manifest agrees with
 * the segment.
 *
 * Uses the library's internal.h for the hash and the manifest encoder, so
 * the harness computes exactly what the format defines (XXH3-64, SPEC.md).
 */
#ifndef FUZZ_SEGFIX_H
#define FUZZ_SEGFIX_H

#include <stddef.h>
#include <stdint.h>

/* In place, for an image of at least a header: sets the header's file size
 * to size, then recomputes the block sums, the slice index sums, the
 * section sums (1.0: the header's four; 2.0: each directory entry's and
 * dir_sum) and the header sum, each where the fields locating its bytes
 * point inside the image (the rest is left as it is). */
void fuzz_segment_fix(uint8_t *seg, size_t size);

/* A 2.0 segment (a fixture: its directory must be sound) with section
 * `type` replaced by bytes[0 .. len) (flags set, record count len / its
 * record size), or appended as a new last section when it has none; the
 * sections laid out again and every checksum fixed. The data section is
 * first, so block records stay valid unless type is the data section. */
uint8_t *fuzz_segment_put_section(const uint8_t *seg, size_t size, uint32_t type,
                                  uint32_t flags, const uint8_t *bytes, size_t len,
                                  size_t *out_size);

/* MANIFEST bytes (malloc'd) listing one segment of size bytes whose fields
 * are read from its header (zero-padded when shorter): sequence number,
 * count, transitions and header sum; its first id is 0, its file size is
 * size. The file name to use is fuzz_segment_name(*seq). */
uint8_t *fuzz_manifest_for(const uint8_t *seg, size_t size, uint64_t *seq,
                           size_t *out_size);

/* Recomputes a MANIFEST's trailing checksum in place (size >= 8). */
void fuzz_manifest_fix(uint8_t *man, size_t size);

#endif /* FUZZ_SEGFIX_H */
