/*
 * arena.c - the query cache's memory: one mapping reserved per query
 * context, asked for in 2 MiB huge pages, carved into pieces of a few
 * size classes that go back to their class's free list when freed.
 *
 * Why: a decoded block's rows were malloc'd, and the heap's fresh pages
 * were most of what a question cost the first time it was asked in a
 * process (a 4 KiB page's first touch cost 14 us on the benchmark's VM, a
 * 2 MiB page's 133 us; python's point questions took 9 minor faults each,
 * two thirds of them in the rows' malloc). Pieces of the arena share huge
 * pages: a cache of 16 MiB touches at most 16 of them, once.
 *
 * The mapping is address space only (MAP_NORESERVE) until touched; what
 * does not fit in it (the cache grown past its budget, or a mapping that
 * could not be made) is malloc'd. A piece of the arena is told from a
 * malloc'd one by its address, and knows its class from the 64 bytes
 * before it. Not thread-safe: a context is one thread's at a time.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* Under AddressSanitizer the mapping is poisoned but for the n bytes of
 * each piece in use: a read or write past a piece, or of a freed one, is
 * reported as it would be of malloc'd memory. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MH_ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MH_ARENA_ASAN 1
#endif
#ifdef MH_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* The class sizes, header included: 256, 384, 512, 768, ... (each a
 * half or a third over the one before: a piece wastes under a third). */
static size_t class_size(unsigned k) {
    return ((size_t)(k & 1u ? 384 : 256)) << (k >> 1);
}

/* The smallest class holding m bytes; MH_ARENA_CLASSES: none. */
static unsigned class_of(size_t m) {
    unsigned k = 0;
    while (k < MH_ARENA_CLASSES && class_size(k) < m)
        k++;
    return k;
}

void mh_arena_init(mh_arena *a, size_t bytes) {
    memset(a, 0, sizeof *a);
    size_t huge = MH_ARENA_ALIGN;
    if (bytes < huge || bytes > SIZE_MAX / 2)
        return; /* too small for a huge page: malloc serves */
    bytes = (bytes + huge - 1) & ~(huge - 1);
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
    flags |= MAP_NORESERVE;
#endif
    /* a huge page's worth more, to start on a 2 MiB boundary */
    void *m = mmap(NULL, bytes + huge, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (m == MAP_FAILED)
        return;
    a->map = m;
    a->map_size = bytes + huge;
    uintptr_t base = ((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1);
    a->base = a->next = (uint8_t *)base;
    a->end = a->base + bytes;
    POISON(a->base, bytes);
#ifdef MADV_HUGEPAGE
    (void)madvise(a->base, bytes, MADV_HUGEPAGE); /* advice: else 4 KiB pages */
#endif
}

void *mh_arena_alloc(mh_arena *a, size_t n) {
    if (!a || !a->base || n > SIZE_MAX - MH_ARENA_HEAD)
        return malloc(n ? n : 1);
    unsigned k = class_of(n + MH_ARENA_HEAD);
    if (k >= MH_ARENA_CLASSES)
        return malloc(n);
    uint8_t *p = a->free_list[k];
    if (p) {
        void *link; /* the next free piece, kept in this one's first bytes */
        UNPOISON(p, sizeof link);
        memcpy(&link, p, sizeof link);
        a->free_list[k] = link;
        UNPOISON(p, n);
        return p;
    }
    size_t sz = class_size(k);
    if (sz > (size_t)(a->end - a->next))
        return malloc(n);
    uint8_t *h = a->next;
    a->next += sz;
    uint32_t kk = k;
    UNPOISON(h, sizeof kk);
    memcpy(h, &kk, sizeof kk);
    POISON(h, sizeof kk); /* read by mh_arena_free alone */
    UNPOISON(h + MH_ARENA_HEAD, n);
    return h + MH_ARENA_HEAD;
}

void mh_arena_free(mh_arena *a, void *p) {
    if (!p)
        return;
    uint8_t *q = p;
    if (!a || !a->base || q < a->base || q >= a->end) {
        free(p);
        return;
    }
    uint32_t k;
    UNPOISON(q - MH_ARENA_HEAD, sizeof k);
    memcpy(&k, q - MH_ARENA_HEAD, sizeof k);
    POISON(q - MH_ARENA_HEAD, sizeof k);
    POISON(q, class_size(k) - MH_ARENA_HEAD);
    void *link = a->free_list[k]; /* the list's link */
    UNPOISON(q, sizeof link);
    memcpy(q, &link, sizeof link);
    POISON(q, sizeof link);
    a->free_list[k] = q;
}

size_t mh_arena_touched(const mh_arena *a) {
    return a && a->base ? (size_t)(a->next - a->base) : 0;
}

void mh_arena_destroy(mh_arena *a) {
    if (a->base)
        UNPOISON(a->base, (size_t)(a->end - a->base));
    if (a->map)
        munmap(a->map, a->map_size);
    memset(a, 0, sizeof *a);
}
