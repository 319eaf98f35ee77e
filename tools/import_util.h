/*
 * import_util.h - pieces shared by the text parsers (internal to mh_import):
 * the batch that collects accesses for the sink, hand-written number
 * parsers (no scanf, no strtoull: they are on the hot path of a 5M-line
 * import) and the error-message helper.
 */
#ifndef MH_IMPORT_UTIL_H
#define MH_IMPORT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "import.h"

typedef struct mh_batch {
    mh_import_sink_fn fn;
    void *ctx;
    uint64_t total; /* accesses handed to the sink */
    size_t n;
    size_t limit;   /* hand over at this many (1 .. MH_IMPORT_BATCH; 0 = full) */
    mh_access a[MH_IMPORT_BATCH];
} mh_batch;

/* Hands the pending accesses to the sink. */
static inline int mh_batch_flush(mh_batch *b) {
    if (b->n == 0)
        return 0;
    int rc = b->fn(b->ctx, b->a, b->n);
    if (rc == 0)
        b->total += b->n;
    b->n = 0;
    return rc;
}

/* Next free slot, flushing first when the batch is full; NULL after a sink
 * error (*rc holds it). */
static inline mh_access *mh_batch_slot(mh_batch *b, int *rc) {
    if (b->n == MH_IMPORT_BATCH || (b->limit != 0 && b->n >= b->limit)) {
        *rc = mh_batch_flush(b);
        if (*rc != 0)
            return NULL;
    }
    mh_access *a = &b->a[b->n++];
    /* fields the importers do not set (id, pc, stream, reserved) are 0 */
    *a = (mh_access){0};
    return a;
}

/* Sets the batch limit (see mh_lackey_set_batch). */
static inline void mh_batch_set_limit(mh_batch *b, size_t n) {
    b->limit = (n == 0 || n > MH_IMPORT_BATCH) ? 0 : n;
}

/* Value of a hex digit, or -1. */
static inline int mh_hex_digit(unsigned char c) {
    if ((unsigned)(c - '0') <= 9u)
        return c - '0';
    c |= 0x20; /* lower case */
    if ((unsigned)(c - 'a') <= 5u)
        return c - 'a' + 10;
    return -1;
}

/* Parses [s, e) entirely as a number: decimal, or hexadecimal after 0x/0X
 * (or always hexadecimal when hex_only). Returns 0 and *v, or -1 on an empty
 * field, a bad digit or overflow of 64 bits. */
int mh_parse_u64_field(const char *s, const char *e, int hex_only, uint64_t *v);

/* Writes "line N: <what>: '<up to 40 chars of the line>'" into buf. */
void mh_format_line_error(char *buf, size_t len, uint64_t line, const char *s,
                          const char *e, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif /* MH_IMPORT_UTIL_H */
