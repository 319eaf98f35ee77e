/*
 * oracle_merge.c - the merged order of several producers (oracle_merge.h).
 */
#include "oracle_merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int rec_cmp(const void *a, const void *b) {
    const oracle_rec *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void oracle_merge_sort(oracle_rec *r, size_t n) {
    if (n > 1)
        qsort(r, n, sizeof *r, rec_cmp);
}

int oracle_merge_compare(const char *what, const mh_access *got, const oracle_rec *want,
                         size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t s = ORACLE_PHY_STREAM(got[i].physical);
        uint64_t seq = ORACLE_PHY_SEQ(got[i].physical);
        if (got[i].id != i) {
            fprintf(stderr, "%s: access %zu has id %" PRIu64 "\n", what, i, got[i].id);
            return -1;
        }
        if (got[i].transition != want[i].t || s != want[i].s || seq != want[i].seq) {
            fprintf(stderr, "%s: id %zu is (t %" PRIu64 ", stream %" PRIu32 ", seq %" PRIu64
                    "), the merged order has (t %" PRIu64 ", stream %" PRIu32 ", seq %" PRIu64
                    ")\n", what, i, got[i].transition, s, seq, want[i].t, want[i].s,
                    want[i].seq);
            return -1;
        }
    }
    return 0;
}
