/*
 * errors.c - the error table generated from MH_ERROR_LIST, diagnostics,
 * operation names, the library's version, the growable-struct rule of the
 * ABI, and the small helpers every file uses (hash, buffer).
 */
#ifdef __linux__
#define _GNU_SOURCE /* mremap */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <xxhash.h>

#include "internal.h"

unsigned mh_version_number(void) { return MH_VERSION_NUMBER; }

const char *mh_version_string(void) { return MH_VERSION_STRING; }

/* The caller's struct_size: the first 4 bytes of every growable struct. */
static uint32_t struct_size_of(const void *p) {
    uint32_t n;
    memcpy(&n, p, sizeof n);
    return n;
}

int mh_struct_in(const void *in, size_t min_size, size_t lib_size,
                 void *local) {
    if (!in)
        return MH_EINVAL;
    uint32_t n = struct_size_of(in);
    if (n < min_size)
        return MH_EINVAL;
    /* a newer caller's fields this library lacks must be left at zero:
     * a non-zero one asks for something that would be silently ignored */
    const unsigned char *b = in;
    for (size_t i = lib_size; i < n; i++)
        if (b[i])
            return MH_EINVAL;
    memcpy(local, in, n < lib_size ? n : lib_size);
    memcpy(local, &(uint32_t){(uint32_t)lib_size}, sizeof(uint32_t));
    return MH_OK;
}

int mh_struct_out_ok(const void *out, size_t min_size) {
    return out && struct_size_of(out) >= min_size ? MH_OK : MH_EINVAL;
}

int mh_struct_out(void *out, const void *full, size_t min_size,
                  size_t lib_size) {
    MH_TRY(mh_struct_out_ok(out, min_size));
    uint32_t n = struct_size_of(out);
    size_t k = n < lib_size ? n : lib_size;
    /* struct_size stays as the caller set it */
    memcpy((unsigned char *)out + sizeof(uint32_t),
           (const unsigned char *)full + sizeof(uint32_t), k - sizeof(uint32_t));
    return MH_OK;
}

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

int mh_diag_fail(mh_diag *d, int code, uint64_t offset, const char *fmt, ...) {
    if (!d)
        return code;
    d->code = code;
    d->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return code;
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

void mh_diag_prefix(mh_diag *d, const char *fmt, ...) {
    if (!d)
        return;
    char old[sizeof d->msg];
    if (d->msg[0])
        memcpy(old, d->msg, sizeof old);
    else
        snprintf(old, sizeof old, "%s", mh_strerror(d->code));
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    /* then ": " and the old message, cut where the buffer ends */
    size_t used = (size_t)n < sizeof d->msg ? (size_t)n : sizeof d->msg - 1;
    const char *tail[2] = {": ", old};
    for (int k = 0; k < 2; k++) {
        size_t len = strlen(tail[k]), room = sizeof d->msg - 1 - used;
        if (len > room)
            len = room;
        memcpy(d->msg + used, tail[k], len);
        used += len;
    }
    d->msg[used] = '\0';
}

int mh_diag_os(mh_diag *d, int code, const char *what, const char *path) {
    int e = errno;
    if (code == 0)
        code = mh_io_error();
    mh_diag_fail(d, code, 0, "%s %s: %s", what, path ? path : "", strerror(e));
    errno = e;
    return code;
}

size_t mh_diag_copy(const mh_diag *d, char *buf, size_t size) {
    const char *m = d ? d->msg : "";
    size_t len = strlen(m);
    if (buf && size) {
        size_t k = len < size - 1 ? len : size - 1;
        memcpy(buf, m, k);
        buf[k] = '\0';
    }
    return len;
}

int mh_diag_code(mh_diag *d, int code) {
    if (d && code < 0 && d->code == 0)
        mh_diag_fail(d, code, 0, "%s", mh_strerror(code));
    return code;
}

uint64_t mh_hash(const void *p, size_t n) { return XXH3_64bits(p, n); }

uint64_t mh_hash_seeded(const void *p, size_t n, uint64_t seed) {
    return XXH3_64bits_withSeed(p, n, seed);
}

/* A buffer of MH_BUF_BIG bytes or more is a mapping of its own, asked
 * for in huge pages, and grows by mremap: page faults, not copies, were
 * the writer's cost there (a fresh 4 KiB page cost 14 us on the
 * benchmark's VM, a 2 MiB page 133 us: 64 MiB grown by doubling took 258
 * ms through realloc, 7-98 ms so). Smaller ones are malloc'd. */
static uint8_t *big_alloc(size_t cap) {
    void *q = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(q, cap, MADV_HUGEPAGE); /* advice: without it, 4 KiB pages */
#endif
    return q;
}

static uint8_t *big_grow(uint8_t *p, size_t old, size_t cap) {
#ifdef MREMAP_MAYMOVE
    void *q = mremap(p, old, cap, MREMAP_MAYMOVE);
    if (q == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(q, cap, MADV_HUGEPAGE);
#endif
    return q;
#else
    uint8_t *q = big_alloc(cap);
    if (q) {
        memcpy(q, p, old);
        munmap(p, old);
    }
    return q;
#endif
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
    uint8_t *p;
    if (cap < MH_BUF_BIG) {
        p = realloc(b->p, cap);
    } else if (b->cap >= MH_BUF_BIG) {
        p = big_grow(b->p, b->cap, cap);
    } else if ((p = big_alloc(cap)) != NULL) {
        /* the whole old capacity, as realloc keeps it: a caller may set n
         * back and still read what lies past it (summary_build.c) */
        if (b->cap)
            memcpy(p, b->p, b->cap);
        free(b->p);
    }
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

uint8_t *mh_buf_detach(mh_buf *b) {
    if (b->n == 0) {
        mh_buf_free(b);
        return NULL;
    }
    uint8_t *p = b->p;
    if (b->cap >= MH_BUF_BIG) {
        if ((p = malloc(b->n)) == NULL)
            return NULL;
        memcpy(p, b->p, b->n);
        munmap(b->p, b->cap);
    }
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

void mh_buf_free(mh_buf *b) {
    if (b->cap >= MH_BUF_BIG)
        munmap(b->p, b->cap);
    else
        free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* ABI 1: every growable struct is its first published size. When one grows,
 * its assert here goes (the _SIZE_1 macro keeps the old size). */
_Static_assert(sizeof(mh_access) == 56, "mh_access is 56 bytes, fixed");
_Static_assert(MH_STATS_SIZE_1 == sizeof(mh_stats), "ABI 1 mh_stats");
_Static_assert(MH_CHUNK_INFO_SIZE_1 == sizeof(mh_chunk_info),
               "ABI 1 mh_chunk_info");
_Static_assert(MH_COLUMN_INFO_SIZE_1 == sizeof(mh_column_info),
               "ABI 1 mh_column_info");
/* mh_verify_result grew by threads in 1.10.0 */
