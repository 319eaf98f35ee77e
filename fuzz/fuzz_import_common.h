/*
 * fuzz_import_common.h - the driver shared by the import parser targets.
 *
 * A parser is a push parser (tools/import.h): the same bytes fed whole or in
 * pieces of any sizes must give the same accesses, the same error and the
 * same counters. The driver feeds the input whole, then cut at places drawn
 * from the input's tail (empty feeds included), compares the two parses,
 * checks that every access handed to the sink already satisfies
 * mh_writer_append_batch()'s rules, and that a sink error stops the parser
 * and comes back unchanged.
 */
#ifndef FUZZ_IMPORT_COMMON_H
#define FUZZ_IMPORT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "import.h"

/* The parser API with the parser type erased (wrappers, not casts of
 * function pointers). */
typedef struct fuzz_import_ops {
    const char *name;
    void *(*create)(unsigned flags, mh_import_sink_fn fn, void *ctx);
    int (*feed)(void *p, const char *buf, size_t len);
    int (*finish)(void *p);
    const char *(*error)(const void *p);
    uint64_t (*accesses)(const void *p);
    uint64_t (*lines)(const void *p);
    void (*destroy)(void *p);
} fuzz_import_ops;

/* One parse. */
typedef struct fuzz_parse {
    int rc;
    char err[512];
    uint64_t accesses, lines;
    mh_access *v; /* everything the sink accepted */
    size_t n, cap;
} fuzz_parse;

/* Parses text[0 .. len) with the given flags, fed in pieces of the sizes
 * pieces[0 .. npieces) and then the rest in one piece (npieces = 0: whole).
 * The sink refuses with MH_EIO the batch that would take it past fail_after
 * accesses (SIZE_MAX: never). */
void fuzz_import_parse(const fuzz_import_ops *ops, unsigned flags,
                       const uint8_t *text, size_t len, const size_t *pieces,
                       size_t npieces, size_t fail_after, fuzz_parse *out);
void fuzz_parse_free(fuzz_parse *p);

/* Asserts that two parses are the same. */
void fuzz_parse_compare(const fuzz_parse *a, const fuzz_parse *b,
                        const char *what);

/* The whole target: draws pieces and a flag set (flags_mask bits) from the
 * input's tail and runs every check above. */
void fuzz_import_run(const fuzz_import_ops *ops, unsigned flags_mask,
                     const uint8_t *data, size_t size);

#endif /* FUZZ_IMPORT_COMMON_H */
