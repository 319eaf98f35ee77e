/*
 * arena.c - the query cache's memory (src/arena.c: mh_arena). Pieces of
 * many sizes carved from one mapping, each writable over its whole size
 * without touching another (a pattern per piece, checked after every
 * other piece was written), 64-byte aligned, inside the mapping; a freed
 * piece is the one the next piece of its class gets, and a piece of
 * another class does not; once the mapping is carved, pieces are
 * malloc'd (outside it; freed by mh_arena_free: ASan and valgrind see
 * their free() or a leak) and still served; an arena asked under 2 MiB,
 * and a NULL arena, are malloc and free; mh_rows in an arena: every
 * column writable, reserves that change the kind (ids and transitions,
 * then every column, then stream and pc) keep what they must, and
 * mh_rows_free keeps the arena; under ASan, the bytes past a piece and
 * a freed piece are poisoned.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#endif
#ifdef T_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define NP 400

static int in_map(const mh_arena *a, const void *p) {
    const uint8_t *q = p;
    return a->base && q >= a->base && q < a->end;
}

/* Under ASan: the bytes past a piece of the mapping and a freed piece
 * are poisoned, a piece in use is not. */
static void poisoned(void) {
#ifdef T_ASAN
    mh_arena a;
    mh_arena_init(&a, (size_t)2 << 20);
    uint8_t *p = mh_arena_alloc(&a, 1000);
    CHECK(p && in_map(&a, p));
    CHECK(!__asan_region_is_poisoned(p, 1000));
    CHECK(__asan_address_is_poisoned(p + 1000));
    CHECK(__asan_address_is_poisoned(p - 1));
    mh_arena_free(&a, p);
    CHECK(__asan_address_is_poisoned(p + 100));
    uint8_t *q = mh_arena_alloc(&a, 990); /* the same class */
    CHECK(q == p && !__asan_region_is_poisoned(q, 990) && __asan_address_is_poisoned(q + 992));
    mh_arena_free(&a, q);
    mh_arena_destroy(&a);
#endif
}

static uint8_t pat(size_t piece, size_t i) { return (uint8_t)(piece * 131 + i * 7 + 1); }


static void pieces(void) {
    mh_arena a;
    mh_arena_init(&a, (size_t)4 << 20);
    CHECK(a.base != NULL && a.end - a.base == (ptrdiff_t)4 << 20);
    CHECK(((uintptr_t)a.base & (MH_ARENA_ALIGN - 1)) == 0);
    static uint8_t *p[NP];
    static size_t n[NP];
    size_t inside = 0, outside = 0;
    for (size_t i = 0; i < NP; i++) {
        n[i] = 1 + (i * 2654435761u) % 60000; /* 1 B .. 60 KB: past the 4 MiB */
        p[i] = mh_arena_alloc(&a, n[i]);
        CHECK(p[i] != NULL);
        if (in_map(&a, p[i])) {
            CHECKF(((uintptr_t)p[i] & 63) == 0, "piece %zu at %p", i, (void *)p[i]);
            CHECK(p[i] + n[i] <= a.end);
            inside++;
        } else {
            outside++;
        }
        for (size_t j = 0; j < n[i]; j++)
            p[i][j] = pat(i, j);
    }
    CHECKF(inside > 50 && outside > 50, "inside %zu outside %zu", inside, outside);
    CHECK(mh_arena_touched(&a) <= (size_t)4 << 20);
    for (size_t i = 0; i < NP; i++)
        for (size_t j = 0; j < n[i]; j++)
            CHECKF(p[i][j] == pat(i, j), "piece %zu byte %zu of %zu", i, j, n[i]);
    /* a freed piece of the mapping is the next of its class, not of
     * another's */
    size_t k = 0;
    while (!in_map(&a, p[k]))
        k++;
    uint8_t *freed = p[k];
    mh_arena_free(&a, freed);
    size_t carved = mh_arena_touched(&a);
    uint8_t *other = mh_arena_alloc(&a, n[k] * 4 + 4096);
    CHECK(other != NULL && other != freed);
    uint8_t *again = mh_arena_alloc(&a, n[k]);
    CHECK(again == freed);
    CHECK(mh_arena_touched(&a) >= carved);
    p[k] = again;
    mh_arena_free(&a, other);
    for (size_t i = 0; i < NP; i++)
        mh_arena_free(&a, p[i]);
    mh_arena_free(&a, NULL);
    /* everything back: the same sizes again carve nothing new */
    carved = mh_arena_touched(&a);
    for (size_t i = 0; i < NP; i++) {
        p[i] = mh_arena_alloc(&a, n[i]);
        CHECK(p[i] != NULL);
        memset(p[i], 0xa5, n[i]);
    }
    CHECK(mh_arena_touched(&a) == carved);
    for (size_t i = 0; i < NP; i++)
        mh_arena_free(&a, p[i]);
    mh_arena_destroy(&a);
    CHECK(a.base == NULL && a.map == NULL);
}

static void malloc_only(void) {
    mh_arena a;
    mh_arena_init(&a, MH_ARENA_ALIGN - 1); /* under a huge page: none */
    CHECK(a.base == NULL && mh_arena_touched(&a) == 0);
    uint8_t *p = mh_arena_alloc(&a, 100);
    CHECK(p != NULL);
    memset(p, 1, 100);
    mh_arena_free(&a, p);
    mh_arena_destroy(&a);
    p = mh_arena_alloc(NULL, 0);
    CHECK(p != NULL);
    mh_arena_free(NULL, p);
}

static void rows_in_arena(void) {
    mh_arena a;
    mh_arena_init(&a, (size_t)2 << 20);
    mh_rows r = {0};
    r.ar = &a;
    const uint32_t cap = 700;
    CHECK(mh_rows_reserve_idt(&r, cap) == MH_OK);
    CHECK(in_map(&a, r.id_off) && in_map(&a, r.t) && r.phy == NULL && r.idt);
    for (uint32_t i = 0; i < cap; i++) {
        r.id_off[i] = i;
        r.t[i] = (uint64_t)i << 33;
    }
    /* every column added, the ids and transitions kept */
    CHECK(mh_rows_reserve_lazy(&r, cap) == MH_OK);
    CHECK(!r.idt && r.phy && r.lin && r.size && r.has_lin);
    for (uint32_t i = 0; i < cap; i++) {
        CHECKF(r.id_off[i] == i && r.t[i] == (uint64_t)i << 33, "row %u", i);
        r.phy[i] = r.lin[i] = ~(uint64_t)i;
        r.size[i] = i + 1;
        r.has_lin[i] = (uint8_t)(i & 1);
    }
    for (uint32_t i = 0; i < cap; i++)
        CHECKF(r.id_off[i] == i && r.t[i] == (uint64_t)i << 33 && r.phy[i] == ~(uint64_t)i &&
                   r.lin[i] == ~(uint64_t)i && r.size[i] == i + 1 && r.has_lin[i] == (i & 1),
               "row %u", i);
    /* a bigger reserve of every column, stream and pc zeroed */
    CHECK(mh_rows_reserve(&r, 2 * cap) == MH_OK);
    CHECK(r.cap == 2 * cap && r.opt_cap == 2 * cap);
    for (uint32_t i = 0; i < 2 * cap; i++)
        CHECKF(r.stream[i] == 0 && r.pc[i] == 0 && r.has_pc[i] == 0, "row %u", i);
    mh_rows_free(&r);
    CHECK(r.ar == &a && r.cap == 0 && r.id_off == NULL && r.mem[0] == NULL);
    /* the pieces went back: the same reserve carves nothing new */
    size_t carved = mh_arena_touched(&a);
    CHECK(mh_rows_reserve(&r, 2 * cap) == MH_OK);
    CHECK(mh_arena_touched(&a) == carved);
    mh_rows_free(&r);
    mh_arena_destroy(&a);
    /* without an arena: malloc'd, as before */
    mh_rows m = {0};
    CHECK(mh_rows_reserve(&m, cap) == MH_OK && m.ar == NULL);
    memset(m.pc, 1, cap * sizeof *m.pc);
    mh_rows_free(&m);
}

int main(void) {
    pieces();
    malloc_only();
    rows_in_arena();
    poisoned();
    return 0;
}
