/*
 * verify_sruns.c - fsck's check of a segment's stream id runs (SPEC.md
 * §9d.3, section type 17): the section as a query checks it (sum, header,
 * entries, bodies' headers and group records), every group decoded, and,
 * when every row was read, each listed stream's runs equal to the runs its
 * rows fill, from verify.c's one pass (each slice's streams by id offset).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct crun {
    uint64_t a, b;
    uint32_t stream, pad;
} crun;

struct mh_sruns_chk {
    const mh_seg *seg;
    int present;
    crun *r;
    size_t n, cap;
    uint64_t base; /* the next slice's first id offset */
    int lost;      /* a slice not whole, or out of memory */
};

int mh_sruns_fsck_begin(mh_sruns_chk **out, const mh_seg *seg) {
    const mh_section *sec;
    mh_sruns_chk *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return MH_ENOMEM;
    c->seg = seg;
    c->present = mh_sruns_section(seg, &sec) == MH_OK;
    return MH_OK;
}

void mh_sruns_fsck_slice(mh_sruns_chk *c, const uint32_t *sby, uint32_t count, int whole) {
    if (!c || !c->present)
        return;
    if (!whole)
        c->lost = 1;
    for (uint32_t i = 0; i < count && !c->lost; i++) {
        uint64_t x = c->base + i;
        if (c->n && c->r[c->n - 1].stream == sby[i] && c->r[c->n - 1].b + 1 == x) {
            c->r[c->n - 1].b = x;
            continue;
        }
        if (c->n == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 1024;
            crun *p = realloc(c->r, cap * sizeof *p);
            if (!p) {
                c->lost = 1;
                break;
            }
            c->r = p;
            c->cap = cap;
        }
        c->r[c->n++] = (crun){x, x, sby[i], 0};
    }
    c->base += count;
}

static int cmp_crun(const void *x, const void *y) {
    const crun *p = x, *q = y;
    if (p->stream != q->stream)
        return p->stream < q->stream ? -1 : 1;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* Every group of body b decodes; with want (its stream's runs, n of them)
 * each equals. */
static int check_body(const mh_sruns_body_view *b, uint32_t stream, const crun *want,
                      size_t n, mh_diag *d) {
    uint64_t runs[2 * 256];
    uint64_t *rr = runs;
    uint64_t *big = NULL;
    if ((size_t)b->k * 2 > sizeof runs / sizeof runs[0]) {
        big = malloc((size_t)b->k * 2 * sizeof *big);
        if (!big)
            return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the stream id runs");
        rr = big;
    }
    if (want && b->runs != n) {
        free(big);
        return mh_diag_fail(d, MH_ECORRUPT, b->off, "stream id runs at byte %llu: stream "
                            "%u has %llu runs, its rows make %zu",
                            (unsigned long long)b->off, stream,
                            (unsigned long long)b->runs, n);
    }
    uint64_t k = 0;
    int rc = MH_OK;
    for (uint32_t g = 0; g < b->groups && rc == MH_OK; g++) {
        uint32_t m;
        rc = mh_sruns_group(b, g, rr, &m, d);
        for (uint32_t i = 0; rc == MH_OK && want && i < m; i++, k++)
            if (rr[2 * i] != want[k].a || rr[2 * i + 1] != want[k].b)
                rc = mh_diag_fail(d, MH_ECORRUPT, b->off, "stream id runs at byte %llu: "
                                  "stream %u: run %llu is [%llu, %llu], its rows make "
                                  "[%llu, %llu]", (unsigned long long)b->off, stream,
                                  (unsigned long long)k, (unsigned long long)rr[2 * i],
                                  (unsigned long long)rr[2 * i + 1],
                                  (unsigned long long)want[k].a,
                                  (unsigned long long)want[k].b);
    }
    free(big);
    return rc;
}

int mh_sruns_fsck_end(mh_sruns_chk *c, int rows_ok, mh_diag *d) {
    if (!c)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the stream id runs");
    int rc = MH_OK;
    mh_sruns_view v = {0};
    if (c->present)
        rc = mh_sruns_view_whole(c->seg, &v, d);
    int compare = rc == MH_OK && c->present && rows_ok && !c->lost &&
                  c->base == c->seg->count;
    if (compare)
        qsort(c->r, c->n, sizeof *c->r, cmp_crun);
    size_t i = 0;
    for (uint32_t e = 0; rc == MH_OK && c->present && e < v.n; e++) {
        uint32_t st = mhf_load_u32(v.ents + (size_t)e * v.esz + MHF_SRUNS_E_STREAM);
        size_t j = i;
        if (compare) {
            if (i < c->n && c->r[i].stream < st) {
                rc = mh_diag_fail(d, MH_ECORRUPT, v.off, "stream id runs at byte %llu: "
                                  "stream %u has rows in the segment and no entry",
                                  (unsigned long long)v.off, c->r[i].stream);
                break;
            }
            while (j < c->n && c->r[j].stream == st)
                j++;
            if (j == i) {
                rc = mh_diag_fail(d, MH_ECORRUPT, v.off, "stream id runs at byte %llu: "
                                  "entry %u lists stream %u, which has no row in the "
                                  "segment", (unsigned long long)v.off, e, st);
                break;
            }
        }
        mh_sruns_body_view b;
        mh_sruns_body(&v, e, &b);
        if (b.bytes)
            rc = check_body(&b, st, compare ? c->r + i : NULL, j - i, d);
        i = j;
    }
    if (rc == MH_OK && compare && i < c->n)
        rc = mh_diag_fail(d, MH_ECORRUPT, v.off, "stream id runs at byte %llu: stream %u "
                          "has rows in the segment and no entry", (unsigned long long)v.off,
                          c->r[i].stream);
    free(c->r);
    free(c);
    return rc;
}
