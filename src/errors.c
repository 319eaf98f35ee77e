/*
 * errors.c - the error table generated from MH_ERROR_LIST, diagnostics,
 * operation names, and the small helpers every file uses (hash, buffer).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "internal.h"

const char *mh_strerror(int code) {
    switch (code) {
#define MH_ERROR_TEXT_(name, value, text)                                      \
    case value:                                                                \
        return text;
        MH_ERROR_LIST(MH_ERROR_TEXT_)
#undef MH_ERROR_TEXT_
    default:
        return "unknown error";
    }
}

const char *mh_error_name(int code) {
    switch (code) {
#define MH_ERROR_NAME_(name, value, text)                                      \
    case value:                                                                \
        return #name;
        MH_ERROR_LIST(MH_ERROR_NAME_)
#undef MH_ERROR_NAME_
    default:
        return "MH_UNKNOWN";
    }
}

const char *mh_op_name(unsigned op) {
    static const char *const names[MH_OP_COUNT] = {"read", "write", "execute"};
    return op < MH_OP_COUNT ? names[op] : NULL;
}

void mh_diag_set(mh_diag *d, uint64_t offset, const char *fmt, ...) {
    if (!d)
        return;
    d->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
}

uint64_t mh_hash(const void *p, size_t n) { return XXH3_64bits(p, n); }

uint64_t mh_hash_seeded(const void *p, size_t n, uint64_t seed) {
    return XXH3_64bits_withSeed(p, n, seed);
}

int mh_buf_reserve(mh_buf *b, size_t extra) {
    if (extra > SIZE_MAX - b->n)
        return MH_ENOMEM;
    size_t need = b->n + extra;
    if (need <= b->cap)
        return MH_OK;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return MH_ENOMEM;
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return MH_ENOMEM;
    b->p = p;
    b->cap = cap;
    return MH_OK;
}

int mh_buf_append(mh_buf *b, const void *p, size_t n) {
    MH_TRY(mh_buf_reserve(b, n));
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
    return MH_OK;
}

void mh_buf_free(mh_buf *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}
