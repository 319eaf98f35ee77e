/*
 * fuzz_build.h - small deterministic stores made with the writer API: the
 * fixtures some targets need at start-up and the seeds of the corpus.
 * The same kind always gives the same bytes (background building is off).
 */
#ifndef FUZZ_BUILD_H
#define FUZZ_BUILD_H

#include <stddef.h>
#include <stdint.h>

enum fuzz_store_kind {
    FUZZ_STORE_THREE_SEGMENTS = 0, /* 3 commits of 120 accesses, small slices, metadata */
    FUZZ_STORE_ONE_BLOCK = 1,      /* one segment, one slice, one block of 50 rows */
    FUZZ_STORE_EXEC_SPARSE = 2,    /* executes, absent linears, sparse transitions */
    FUZZ_STORE_EMPTY = 3,          /* created and closed: no access */
    FUZZ_STORE_META_ONLY = 4,      /* metadata committed, no access */
    FUZZ_STORE_STREAMS = 5,        /* format 2.0: 3 streams, pcs, windows over 2 commits */
    FUZZ_STORE_KINDS = 6
};

/* Writes store kind at dir (which must not exist). When manifests is not
 * NULL, the MANIFEST after each commit is saved there as "MANIFEST.<n>"
 * (a directory that exists). Returns the number of accesses. Aborts on any
 * error: a fixture that cannot be built is a harness failure. */
uint64_t fuzz_build_store(const char *dir, enum fuzz_store_kind kind,
                          const char *manifests);

#endif /* FUZZ_BUILD_H */
