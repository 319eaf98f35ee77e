/*
 * buf.c - the growable buffer (errors.c: mh_buf): malloc'd below
 * MH_BUF_BIG bytes of capacity, a mapping of its own from there on. Grown
 * by appends of odd sizes from empty to 5 x MH_BUF_BIG (the step from
 * malloc to a mapping and the mremap steps after it), by one reserve
 * straight past MH_BUF_BIG, and by appends that land exactly on it: the
 * bytes always those appended, those past n too as realloc keeps them; mh_buf_detach gives malloc'd memory (free()
 * under ASan proves it) of a small and of a big buffer; mh_buf_free of
 * either leaves { 0 }; a reserve that would overflow size_t is MH_ENOMEM.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static uint8_t byte_at(size_t i) { return (uint8_t)(i * 2654435761u >> 13); }

static void check_bytes(const mh_buf *b, size_t from) {
    for (size_t i = from; i < b->n; i++)
        CHECKF(b->p[i] == byte_at(i), "byte %zu of %zu (cap %zu)", i, b->n, b->cap);
}

static void append_to(mh_buf *b, size_t total, size_t step) {
    static uint8_t piece[70001];
    while (b->n < total) {
        size_t k = total - b->n < step ? total - b->n : step;
        for (size_t i = 0; i < k; i++)
            piece[i] = byte_at(b->n + i);
        size_t before = b->n, cap = b->cap;
        CHECK(mh_buf_append(b, piece, k) == MH_OK);
        CHECK(b->n == before + k && b->cap >= b->n);
        if (b->cap != cap) /* grown: the bytes before moved whole */
            check_bytes(b, 0);
    }
    check_bytes(b, 0);
}

int main(void) {
    /* odd steps from empty past the threshold, several mremap steps */
    mh_buf b = {0};
    append_to(&b, 5 * MH_BUF_BIG + 12345, 70001);
    CHECK(b.cap >= MH_BUF_BIG * 5);
    uint8_t *d = mh_buf_detach(&b);
    CHECK(d != NULL && b.p == NULL && b.n == 0 && b.cap == 0);
    for (size_t i = 0; i < 5 * MH_BUF_BIG + 12345; i += 4099)
        CHECK(d[i] == byte_at(i));
    free(d);

    /* exactly the threshold, then one byte more */
    append_to(&b, MH_BUF_BIG, 4096);
    CHECK(b.cap == MH_BUF_BIG);
    append_to(&b, MH_BUF_BIG + 1, 1);
    CHECK(b.cap == 2 * MH_BUF_BIG);
    mh_buf_free(&b);
    CHECK(b.p == NULL && b.n == 0 && b.cap == 0);

    /* a small buffer reserved straight past it, then used */
    append_to(&b, 1000, 333);
    CHECK(b.cap < MH_BUF_BIG);
    CHECK(mh_buf_reserve(&b, 3 * MH_BUF_BIG) == MH_OK);
    CHECK(b.cap >= 3 * MH_BUF_BIG + 1000 && b.n == 1000);
    check_bytes(&b, 0);
    memset(b.p + b.n, 0x5a, b.cap - b.n); /* every byte of the capacity is writable */
    append_to(&b, 3 * MH_BUF_BIG, 65536);
    CHECK(mh_buf_reserve(&b, SIZE_MAX) == MH_ENOMEM && b.n == 3 * MH_BUF_BIG);
    check_bytes(&b, 0);
    mh_buf_free(&b);

    /* as realloc: what lies past n, within the old capacity, is kept by a
     * growth (summary_build.c sets n back and reads on); small to small,
     * small to big, big to big */
    static const size_t fills[][2] = {{3000, 2000},
                                      {MH_BUF_BIG / 2 - 100, MH_BUF_BIG},
                                      {MH_BUF_BIG + 100, 2 * MH_BUF_BIG}};
    for (size_t f = 0; f < sizeof fills / sizeof *fills; f++) {
        append_to(&b, fills[f][0], 65536);
        size_t had = b.n, cap = b.cap;
        b.n = 0;
        CHECK(mh_buf_reserve(&b, had + fills[f][1]) == MH_OK);
        CHECK(b.cap > cap && b.cap >= had + fills[f][1]);
        CHECK((cap >= MH_BUF_BIG) == (f == 2) && (b.cap >= MH_BUF_BIG) == (f > 0));
        b.n = had;
        check_bytes(&b, 0);
        mh_buf_free(&b);
    }

    /* a small one detached is its own malloc'd block; an empty one NULL */
    append_to(&b, 100, 7);
    d = mh_buf_detach(&b);
    CHECK(d != NULL && d[99] == byte_at(99) && b.p == NULL);
    free(d);
    CHECK(mh_buf_detach(&b) == NULL);
    mh_buf_free(&b);
    printf("buf: ok\n");
    return 0;
}
