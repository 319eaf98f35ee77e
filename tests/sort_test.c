/*
 * sort_test.c - the chunk builder's radix sort (src/sort.c) against a
 * stable reference sort, on the key shapes a slice produces: addresses in a
 * few far-apart regions (the high parts are renamed to ranks), more distinct
 * regions than can be renamed, uniformly random keys, keys at both ends of
 * the 64-bit space, many equal keys (stability), and tiny inputs.
 */
#include <string.h>

#include "internal.h"
#include "testutil.h"

typedef struct pair {
    uint64_t key;
    uint32_t val;
} pair;

static int cmp_pair(const void *x, const void *y) {
    const pair *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->val > b->val) - (a->val < b->val); /* stable: payload = index */
}

/* One scratch for every sort, as a builder has: each call must work from
 * whatever the previous one left in it. main() fills it with garbage first
 * (its contents need no initialisation). */
static mh_sort_scratch scratch;

/* Sorts key[0..n) with mh_radix_sort and checks keys and payloads against
 * qsort of (key, original index). */
static void check_sort(const uint64_t *in, size_t n, const char *what) {
    uint64_t *key = malloc((n ? n : 1) * sizeof *key);
    uint64_t *tmpk = malloc((n ? n : 1) * sizeof *tmpk);
    uint32_t *val = malloc((n ? n : 1) * sizeof *val);
    uint32_t *tmpv = malloc((n ? n : 1) * sizeof *tmpv);
    pair *ref = malloc((n ? n : 1) * sizeof *ref);
    CHECK(key && tmpk && val && tmpv && ref);
    for (size_t i = 0; i < n; i++) {
        key[i] = in[i];
        val[i] = (uint32_t)i;
        ref[i] = (pair){in[i], (uint32_t)i};
    }
    mh_radix_sort(&scratch, key, val, tmpk, tmpv, n);
    qsort(ref, n, sizeof *ref, cmp_pair);
    for (size_t i = 0; i < n; i++)
        CHECKF(key[i] == ref[i].key && val[i] == ref[i].val,
               "%s (n=%zu): position %zu holds key %#llx payload %u, want "
               "%#llx %u", what, n, i, (unsigned long long)key[i], val[i],
               (unsigned long long)ref[i].key, ref[i].val);
    /* mh_radix_order (the builder's and the address set's word sort):
     * the same order of indexes, keys read with a stride of 2, or a
     * refusal exactly when the high parts take more than 1024 values */
    uint64_t *pairs = malloc((n ? 2 * n : 1) * sizeof *pairs);
    uint64_t *word = malloc((n ? n : 1) * sizeof *word);
    uint64_t *wtmp = malloc((n ? n : 1) * sizeof *wtmp);
    CHECK(pairs && word && wtmp);
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = in[i];
        pairs[2 * i + 1] = ~in[i]; /* never read */
    }
    int done = mh_radix_order(&scratch, pairs, 2, n, word, wtmp);
    size_t highs = 0;
    for (size_t i = 0; i < n; i++)
        highs += i == 0 || ref[i].key >> 16 != ref[i - 1].key >> 16;
    CHECKF(done == (highs <= 1024), "%s (n=%zu): mh_radix_order returned %d "
           "for %zu high parts", what, n, done, highs);
    for (size_t i = 0; done && i < n; i++)
        CHECKF((uint32_t)word[i] == ref[i].val,
               "%s (n=%zu): mh_radix_order position %zu holds index %u, want "
               "%u", what, n, i, (uint32_t)word[i], ref[i].val);
    free(pairs);
    free(word);
    free(wtmp);
    free(key);
    free(tmpk);
    free(val);
    free(tmpv);
    free(ref);
}

/* n keys in `regions` regions spread over the 64-bit space, each `width`
 * bytes wide; with dup > 0 every key is repeated about dup times. */
static void clustered(tu_rng *rng, uint64_t *k, size_t n, unsigned regions,
                      uint64_t width, unsigned dup) {
    uint64_t base[4096];
    for (unsigned r = 0; r < regions; r++)
        base[r] = tu_next(rng) & ~(uint64_t)0xffff;
    base[0] = 0;                     /* the bottom of the space */
    if (regions > 1)                 /* and its top: device windows */
        base[1] = UINT64_MAX - width + 1;
    for (size_t i = 0; i < n; i++) {
        if (dup && i > 0 && tu_below(rng, dup) != 0) {
            k[i] = k[tu_below(rng, i)];
            continue;
        }
        uint64_t b = base[tu_below(rng, regions)];
        uint64_t off = tu_below(rng, width);
        k[i] = b + off < b ? UINT64_MAX : b + off;
    }
}

int main(void) {
    tu_rng rng = {0x5eed5011u};
    size_t cap = 70000;
    uint64_t *k = malloc(cap * sizeof *k);
    CHECK(k);
    memset(&scratch, 0xa5, sizeof scratch);

    /* few regions: renamed to ranks (1 .. 1024 distinct high parts) */
    const unsigned regions[] = {1, 2, 3, 7, 64, 200};
    const uint64_t widths[] = {256, 1u << 16, 1u << 20, (uint64_t)1 << 30};
    for (size_t r = 0; r < sizeof regions / sizeof *regions; r++)
        for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
            clustered(&rng, k, 32768, regions[r], widths[w], 0);
            check_sort(k, 32768, "clustered");
            clustered(&rng, k, 32768, regions[r], widths[w], 4);
            check_sort(k, 32768, "clustered with repeats");
        }
    /* exactly at and just past the renaming limit (1024 high parts) */
    for (unsigned d = 1023; d <= 1025; d++) {
        for (size_t i = 0; i < 40000; i++)
            k[i] = ((uint64_t)(tu_below(&rng, d) * 7919u) << 16) |
                   tu_below(&rng, 1u << 16);
        check_sort(k, 40000, "around the rank limit");
    }
    /* random 64-bit keys: far too many high parts, sorted as they are */
    for (size_t i = 0; i < cap; i++)
        k[i] = tu_next(&rng);
    check_sort(k, cap, "random");
    /* every key equal (stability only), and equal high parts */
    for (size_t i = 0; i < cap; i++)
        k[i] = 0xfeedfacecafebeefu;
    check_sort(k, cap, "all equal");
    for (size_t i = 0; i < cap; i++)
        k[i] = 0x7fff00000000u | tu_below(&rng, 64);
    check_sort(k, cap, "one region, many repeats");
    /* small inputs take the plain path */
    for (size_t n = 0; n < 40; n++) {
        for (size_t i = 0; i < n; i++)
            k[i] = tu_below(&rng, 4) ? tu_next(&rng) : UINT64_MAX;
        check_sort(k, n, "small");
    }
    free(k);
    printf("sort: all checks passed\n");
    return 0;
}
