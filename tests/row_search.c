/*
 * row_search.c - the id path's search of a block's id column from a guess
 * (mhq_row_search_near, src/query_int.h) against a scan: strictly
 * increasing ids of runs from 1 to 600 rows (dense, with gaps, with one
 * long jump), ranges [a, b) anywhere in them, every guess in the range,
 * ids sought below, inside (present and absent), on both ends and above.
 * The answer must be the first row of [a, b) whose id is at least the one
 * sought (b when none), as mhq_row_search and a scan give it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "query_int.h"
#include "testutil.h"

static tu_rng rng = {0x2545f4914f6cdd1du};
static uint32_t below(uint32_t n) { return (uint32_t)tu_below(&rng, n); }

#define NROW 600

int main(void) {
    static uint32_t id[NROW];
    unsigned asks = 0;
    for (unsigned round = 0; round < 400; round++) {
        const uint32_t n = 1 + (round < 40 ? round : below(NROW));
        /* the ids: steps of 1 (a dense chunk), random gaps, or one jump */
        const unsigned shape = round % 3;
        uint32_t v = below(1000);
        const uint32_t jump_at = below(n);
        for (uint32_t i = 0; i < n; i++) {
            id[i] = v;
            v += shape == 0 ? 1 : shape == 1 ? 1 + below(20) : (i == jump_at ? 100000 : 1);
        }
        for (unsigned t = 0; t < 8; t++) {
            const uint32_t a = below(n), b = a + 1 + below(n - a);
            /* sought: below, each end, inside (present or not), above */
            uint32_t xs[6] = {id[a] ? id[a] - 1 : 0, id[a], id[b - 1], id[b - 1] + 1,
                              id[a + below(b - a)], id[a + below(b - a)] + 1};
            for (unsigned xi = 0; xi < 6; xi++) {
                const uint32_t x = xs[xi];
                uint32_t want = a;
                while (want < b && id[want] < x)
                    want++;
                CHECKF(mhq_row_search(id, a, b, x) == want, "binary search [%u, %u) for %u", a,
                       b, x);
                for (uint32_t g = a; g < b; g++) {
                    const uint32_t got = mhq_row_search_near(id, a, b, x, g);
                    CHECKF(got == want, "n %u shape %u: [%u, %u) for %u from guess %u: %u, want %u",
                           n, shape, a, b, x, g, got, want);
                    asks++;
                }
            }
        }
    }
    printf("row_search: %u searches from a guess, as a scan\n", asks);
    return 0;
}
