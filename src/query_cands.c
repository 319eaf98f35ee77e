/*
 * query_cands.c - the chunk walk's matches in a slice put in query order
 * (query.c, scan_slice). Each chunk's walk appends its matches, in query
 * order, to the ones ordered before; the walk orders them once it holds
 * as many as a question wants (then its cutoff), and at the slice's end.
 */
#include "query_int.h"

#include <stdlib.h>
#include <string.h>

/* what the ones placed one by one come to at most */
#define CANDS_INSERT 64

int mhq_cands_grow(mhq_cands *c) {
    size_t cap = c->cap ? c->cap * 2 : 64;
    mh_access *p = realloc(c->v, cap * sizeof *p);
    if (!p)
        return MH_ENOMEM;
    c->v = p;
    c->cap = cap;
    return MH_OK;
}

static int cmp_id_asc(const void *x, const void *y) {
    uint64_t a = ((const mh_access *)x)->id, b = ((const mh_access *)y)->id;
    return (a > b) - (a < b);
}

static int cmp_id_desc(const void *x, const void *y) { return cmp_id_asc(y, x); }

/* Does a come after b in query order? (ids are unique) */
static inline int later(uint32_t dir, const mh_access *a, const mh_access *b) {
    return dir == MH_FORWARD ? a->id > b->id : a->id < b->id;
}

/* Room for m accesses in c->run; 0 when out of memory. */
static int run_room(mhq_cands *c, size_t m) {
    if (c->caprun >= m)
        return 1;
    mh_access *p = realloc(c->run, m * sizeof *p);
    if (!p)
        return 0;
    c->run = p;
    c->caprun = m;
    return 1;
}

/* A few are put in place one by one (those past the first keep dropped);
 * one long run after the ordered ones is merged with them from the back,
 * O(n); qsort, which glibc runs indirectly on 56-byte elements, is left
 * for many runs of many. It had ordered them all: a 1 MiB max-10 write
 * question on sort spent ~5,800 instructions of its ~18,000 there
 * (callgrind), now ~800. */
void mhq_cands_merge(mhq_cands *c, uint32_t dir, size_t keep) {
    mh_access *v = c->v;
    const size_t n = c->n, s = c->sorted < n ? c->sorted : n, m = n - s;
    if (n <= CANDS_INSERT) {
        /* v[0 .. len - 1] in order; each one after put in place */
        size_t len = s ? s : 1;
        for (size_t i = len; i < n; i++) {
            size_t p = len;
            while (p > 0 && later(dir, &v[p - 1], &v[i]))
                p--;
            if (p >= keep)
                continue;
            mh_access x = v[i];
            size_t moved = len < keep ? len - p : len - 1 - p;
            if (moved)
                memmove(v + p + 1, v + p, moved * sizeof *v);
            v[p] = x;
            len = p + 1 + moved;
        }
        c->n = c->sorted = len;
        return;
    }
    size_t j = 1; /* the length of the run at s */
    while (s + j < n && later(dir, &v[s + j], &v[s + j - 1]))
        j++;
    if (j == m && (!s || !later(dir, &v[s - 1], &v[s]))) {
        /* already in order */
    } else if (j == m && run_room(c, m)) {
        const mh_access *run = c->run;
        memcpy(c->run, v + s, m * sizeof *v);
        size_t i = s, r = m, w = n;
        while (r > 0) /* the later of the two ends goes last */
            v[--w] = i > 0 && later(dir, &v[i - 1], &run[r - 1]) ? v[--i] : run[--r];
    } else { /* many runs, or no memory for the run's copy */
        qsort(v, n, sizeof *v, dir == MH_FORWARD ? cmp_id_asc : cmp_id_desc);
    }
    c->n = c->sorted = n < keep ? n : keep;
}

void mhq_cands_free(mhq_cands *c) {
    free(c->v);
    free(c->run);
    memset(c, 0, sizeof *c);
}
