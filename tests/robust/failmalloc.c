/*
 * failmalloc.c - an LD_PRELOAD shim that makes allocations fail on demand.
 *
 * Environment:
 *   FAILMALLOC_N     successful allocations allowed once armed; negative or
 *                    absent: never fail (count only)
 *   FAILMALLOC_ONCE  when set: only allocation number N+1 fails, the ones
 *                    after it succeed again (tests recovery paths); default:
 *                    every allocation after the first N fails
 * Nothing fails before the program calls failmalloc_arm() (looked up with
 * dlsym(RTLD_DEFAULT, ...), so the program also runs without the shim):
 * the loader's and libc's start-up allocations are left alone.
 * failmalloc_disarm() stops failing and reports the allocations made while
 * armed, how many failed, and how many are still live (a leak, once the
 * program has freed everything it allocated while armed).
 *
 * The real allocator is glibc's __libc_* entry points, so the shim needs
 * no dlsym(RTLD_NEXT) (which itself allocates). Not usable together with
 * AddressSanitizer, which replaces malloc itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

void failmalloc_arm(void);
void failmalloc_disarm(unsigned long *allocs, unsigned long *failed, unsigned long *live);

static atomic_int armed;
static atomic_long budget_left; /* successful allocations still allowed */
static atomic_ulong n_allocs, n_failed;
static int once;
static long limit = -1;

/* live pointers allocated while armed: open addressing, tombstones */
#define TRACK_SLOTS (1u << 16)
#define TOMB ((void *)1)
static void *track[TRACK_SLOTS];
static void *track_caller[TRACK_SLOTS]; /* who allocated it, for leak reports */
static unsigned long track_live;
static int track_overflow;
static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(void *p) {
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 20) & (TRACK_SLOTS - 1);
}

static void track_add(void *p, void *caller) {
    pthread_mutex_lock(&track_lock);
    size_t i = slot_of(p);
    for (size_t k = 0; k < TRACK_SLOTS; k++, i = (i + 1) & (TRACK_SLOTS - 1)) {
        if (track[i] == NULL || track[i] == TOMB) {
            track[i] = p;
            track_caller[i] = caller;
            track_live++;
            pthread_mutex_unlock(&track_lock);
            return;
        }
    }
    track_overflow = 1;
    pthread_mutex_unlock(&track_lock);
}

static void track_del(void *p) {
    if (p == NULL)
        return;
    pthread_mutex_lock(&track_lock);
    size_t i = slot_of(p);
    for (size_t k = 0; k < TRACK_SLOTS && track[i] != NULL; k++, i = (i + 1) & (TRACK_SLOTS - 1)) {
        if (track[i] == p) {
            track[i] = TOMB;
            track_live--;
            break;
        }
    }
    pthread_mutex_unlock(&track_lock);
}

/* 1 when this allocation must fail */
static int should_fail(void) {
    if (!atomic_load(&armed))
        return 0;
    atomic_fetch_add(&n_allocs, 1);
    if (limit < 0)
        return 0;
    long left = atomic_fetch_sub(&budget_left, 1);
    if (left > 0)
        return 0;
    if (once && left < 0)
        return 0; /* only the first allocation past the budget fails */
    atomic_fetch_add(&n_failed, 1);
    return 1;
}

#define done(p) done_((p), __builtin_return_address(0))
static void *done_(void *p, void *caller) {
    if (p != NULL && atomic_load(&armed))
        track_add(p, caller);
    return p;
}

void failmalloc_arm(void) {
    const char *n = getenv("FAILMALLOC_N");
    limit = n ? strtol(n, NULL, 10) : -1;
    once = getenv("FAILMALLOC_ONCE") != NULL;
    atomic_store(&budget_left, limit < 0 ? 0 : limit);
    atomic_store(&n_allocs, 0);
    atomic_store(&n_failed, 0);
    pthread_mutex_lock(&track_lock);
    memset(track, 0, sizeof track);
    track_live = 0;
    track_overflow = 0;
    pthread_mutex_unlock(&track_lock);
    atomic_store(&armed, 1);
}

void failmalloc_disarm(unsigned long *allocs, unsigned long *failed, unsigned long *live) {
    atomic_store(&armed, 0);
    *allocs = atomic_load(&n_allocs);
    *failed = atomic_load(&n_failed);
    pthread_mutex_lock(&track_lock);
    /* The dynamic loader keeps what it allocates for a thread's TLS (glibc
     * caches thread descriptors for reuse): not a leak of the program. */
    unsigned long loader = 0;
    for (size_t i = 0; i < TRACK_SLOTS && track_live > 0; i++)
        if (track[i] != NULL && track[i] != TOMB) {
            Dl_info di;
            if (dladdr(track_caller[i], &di) && di.dli_fname && strstr(di.dli_fname, "/ld-"))
                loader++;
        }
    *live = track_overflow ? (unsigned long)-1 : track_live - loader;
    if (*live > 0 && getenv("FAILMALLOC_DEBUG") != NULL) {
        /* the allocating call site, by symbol and object */
        for (size_t i = 0; i < TRACK_SLOTS; i++)
            if (track[i] != NULL && track[i] != TOMB) {
                Dl_info di;
                memset(&di, 0, sizeof di);
                dladdr(track_caller[i], &di);
                char line[512];
                int n = snprintf(line, sizeof line, "failmalloc: live %p from %p (%s+0x%lx, %s)\n",
                                 track[i], track_caller[i], di.dli_sname ? di.dli_sname : "?",
                                 (unsigned long)((char *)track_caller[i] - (char *)(di.dli_saddr ? di.dli_saddr : di.dli_fbase)),
                                 di.dli_fname ? di.dli_fname : "?");
                ssize_t rc = write(2, line, (size_t)n);
                (void)rc;
            }
    }
    pthread_mutex_unlock(&track_lock);
}

void *malloc(size_t n) {
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return done(__libc_malloc(n));
}

void *calloc(size_t a, size_t b) {
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return done(__libc_calloc(a, b));
}

void *realloc(void *p, size_t n) {
    if (n != 0 && should_fail()) {
        errno = ENOMEM;
        return NULL; /* p stays valid, as with a real failure */
    }
    void *q = __libc_realloc(p, n);
    if (q != NULL || n == 0)
        track_del(p);
    return done(q);
}

int posix_memalign(void **out, size_t align, size_t n) {
    if (should_fail())
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (p == NULL)
        return ENOMEM;
    *out = done(p);
    return 0;
}

void *aligned_alloc(size_t align, size_t n) {
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return done(__libc_memalign(align, n));
}

void free(void *p) {
    track_del(p);
    __libc_free(p);
}
