/*
 * fuzz_helpers.h - assertions shared by every fuzz target.
 *
 * FUZZ_ASSERT and friends abort() whatever NDEBUG says: a fuzz target's
 * checks are the point of the target, so a release build must keep them
 * (the same reason zstd's tests/fuzz/fuzz_helpers.h does not use assert()).
 * abort() is what libFuzzer and the replay driver both report as a crash.
 */
#ifndef FUZZ_HELPERS_H
#define FUZZ_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memhist.h"

/* Every target defines it; the replay driver and libFuzzer call it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT_MSG(cond, msg)                                             \
    ((cond) ? (void)0                                                          \
            : (fprintf(stderr, "%s:%d: fuzz assertion failed: %s (%s)\n",     \
                       __FILE__, __LINE__, #cond, (msg)),                      \
               abort()))
#define FUZZ_ASSERT(cond) FUZZ_ASSERT_MSG((cond), "")

/* expr must return MH_OK. */
#define FUZZ_OK(expr)                                                          \
    do {                                                                       \
        int fuzz_rc_ = (expr);                                                 \
        if (fuzz_rc_ != MH_OK) {                                               \
            fprintf(stderr, "%s:%d: %s returned %d %s (%s)\n", __FILE__,      \
                    __LINE__, #expr, fuzz_rc_, mh_error_name(fuzz_rc_),        \
                    mh_strerror(fuzz_rc_));                                    \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* expr must return exactly code. */
#define FUZZ_EXPECT_RC(expr, code)                                             \
    do {                                                                       \
        int fuzz_rc_ = (expr);                                                 \
        if (fuzz_rc_ != (code)) {                                              \
            fprintf(stderr, "%s:%d: %s returned %d %s, expected %s\n",        \
                    __FILE__, __LINE__, #expr, fuzz_rc_,                       \
                    mh_error_name(fuzz_rc_), mh_error_name(code));             \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* rc must be MH_OK or one of the named negative MH_E* codes. */
#define FUZZ_ASSERT_NAMED(rc)                                                  \
    do {                                                                       \
        int fuzz_named_ = (rc);                                                \
        if (fuzz_named_ > 0 ||                                                 \
            strcmp(mh_error_name(fuzz_named_), "MH_UNKNOWN") == 0) {           \
            fprintf(stderr, "%s:%d: unnamed return code %d from %s\n",        \
                    __FILE__, __LINE__, fuzz_named_, #rc);                     \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* An error a reader may return for bad bytes on disk (memhist.h, SAFETY
 * PROMISE), plus the resource errors any call may meet. */
static inline int fuzz_is_data_error(int rc) {
    return rc == MH_ECORRUPT || rc == MH_ECHECKSUM || rc == MH_ETRUNCATED ||
           rc == MH_EVERSION || rc == MH_ENOTSTORE;
}

/* Allocation that cannot fail quietly: a fuzz target has nothing to do
 * without its memory. */
static inline void *fuzz_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    FUZZ_ASSERT_MSG(p != NULL, "out of memory in the fuzz harness");
    return p;
}
static inline void *fuzz_realloc(void *old, size_t n) {
    void *p = realloc(old, n ? n : 1);
    FUZZ_ASSERT_MSG(p != NULL, "out of memory in the fuzz harness");
    return p;
}

#endif /* FUZZ_HELPERS_H */
