/*
 * verify_spost.c - fsck's check of a segment's stream address postings
 * (SPEC.md "Stream address postings", section type 15): the section's sum
 * and structure (the reader's own parse, spost_read.c), every body's runs
 * decoded and its posting_count, and, when the segment's slices verified,
 * exactness: the streams listed are those with a row in the segment, and
 * each body equals the postings of its stream's rows alone, built by the
 * writer's accumulator at the body's shift (verify_apost.c compares them).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct mh_spost_chk {
    int rc;          /* the view's verdict */
    mh_diag d;
    mh_spost_view v;
    mh_apost_view *body; /* per entry (shift 0: no body) */
    mh_apost_acc **acc;  /* per entry with a body */
    uint64_t *rows;      /* per entry: the rows of its stream */
    uint64_t unlisted;   /* rows of a stream without an entry */
    uint32_t unlisted_stream;
    mh_apost_sorter *as;
    mh_buf mine;         /* a slice's triples, grouped by entry */
    mh_buf at;           /* a slice's rows' entries */
    uint32_t *cnt;       /* n + 1 */
    int nomem;
    int slice_rc;
    mh_diag sd;
};

#define SP_NOMEM(d) mh_diag_fail((d), MH_ENOMEM, 0, "out of memory checking the stream postings")

int mh_spost_fsck_begin(mh_spost_chk **out, const mh_seg *seg) {
    mh_spost_chk *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return MH_ENOMEM;
    c->d = c->sd = (mh_diag){0, 0, ""};
    c->rc = mh_spost_view_whole(seg, &c->v, &c->d);
    if (c->rc != MH_OK)
        return MH_OK; /* none, or end's first problem */
    uint32_t n = c->v.n;
    c->body = calloc(n, sizeof *c->body);
    c->acc = calloc(n, sizeof *c->acc);
    c->rows = calloc(n, sizeof *c->rows);
    c->cnt = calloc((size_t)n + 1, sizeof *c->cnt);
    c->as = mh_apost_sorter_new();
    if (!c->body || !c->acc || !c->rows || !c->cnt || !c->as) {
        c->nomem = 1;
        return MH_OK;
    }
    for (uint32_t i = 0; i < n && !c->nomem; i++) {
        uint32_t st = mhf_load_u32(c->v.ents + (size_t)i * c->v.esz + MHF_SPOST_E_STREAM);
        if (mh_spost_body(&c->v, st, &c->body[i]) == 1 &&
            mh_apost_acc_create(&c->acc[i], c->body[i].shift) != MH_OK)
            c->nomem = 1;
    }
    return MH_OK;
}

void mh_spost_fsck_slice(mh_spost_chk *c, const uint64_t *trip, const uint32_t *strm,
                         size_t m) {
    if (!c || c->rc != MH_OK || c->nomem || c->slice_rc != MH_OK)
        return;
    uint32_t n = c->v.n;
    /* the slice's triples grouped by entry (a counting sort: each entry's
     * in row order), then each entry's added (none: an empty slice) */
    if (mh_buf_reserve(&c->mine, m * 24 + 24) != MH_OK ||
        mh_buf_reserve(&c->at, (m + 1) * sizeof(uint32_t)) != MH_OK) {
        c->nomem = 1;
        return;
    }
    uint32_t *at = (uint32_t *)(void *)c->at.p;
    memset(c->cnt, 0, ((size_t)n + 1) * sizeof *c->cnt);
    for (size_t i = 0; i < m; i++) {
        uint32_t e = mh_spost_entry(&c->v, strm[i]);
        at[i] = e;
        if (e == n) {
            if (c->unlisted++ == 0)
                c->unlisted_stream = strm[i];
            continue;
        }
        c->rows[e]++;
        c->cnt[e + 1]++;
    }
    for (uint32_t e = 0; e < n; e++)
        c->cnt[e + 1] += c->cnt[e]; /* cnt[e]: where entry e's begin */
    uint64_t *p = (uint64_t *)(void *)c->mine.p;
    for (size_t i = 0; i < m; i++)
        if (at[i] < n)
            memcpy(p + 3 * (size_t)c->cnt[at[i]]++, trip + 3 * i, 24);
    /* cnt[e] now where entry e's end: entry e's from cnt[e - 1] */
    for (uint32_t e = 0; e < n && c->slice_rc == MH_OK; e++) {
        uint32_t b = e ? c->cnt[e - 1] : 0;
        if (c->acc[e])
            c->slice_rc = mh_apost_merge_add(c->as, c->acc[e], p + 3 * (size_t)b,
                                             c->cnt[e] - b, &c->sd);
    }
}

int mh_spost_fsck_end(mh_spost_chk *c, int rows_ok, mh_diag *d) {
    if (!c)
        return SP_NOMEM(d);
    int rc;
    if (!mh_fsck_view_ok(c->rc, &c->d, d, &rc))
        goto out;
    for (uint32_t e = 0; rc == MH_OK && c->body && e < c->v.n; e++)
        if (c->acc && c->acc[e])
            rc = mh_apost_compare(&c->body[e], NULL, d);
    if (rc != MH_OK || !rows_ok)
        goto out;
    if (c->nomem) {
        rc = SP_NOMEM(d);
        goto out;
    }
    if (c->slice_rc != MH_OK) {
        rc = c->slice_rc;
        if (d)
            *d = c->sd;
        goto out;
    }
    if (c->unlisted) {
        rc = mh_diag_fail(d, MH_ECORRUPT, c->v.off,
                          "stream postings at byte %llu: stream %u has rows in "
                          "the segment and no entry", (unsigned long long)c->v.off,
                          c->unlisted_stream);
        goto out;
    }
    for (uint32_t e = 0; rc == MH_OK && e < c->v.n; e++) {
        uint64_t eo = c->v.off + MHF_SPOST_HEADER_SIZE + (uint64_t)e * c->v.esz;
        uint32_t st = mhf_load_u32(c->v.ents + (size_t)e * c->v.esz + MHF_SPOST_E_STREAM);
        if (c->rows[e] == 0)
            rc = mh_diag_fail(d, MH_ECORRUPT, eo,
                              "stream postings at byte %llu: entry %u lists stream "
                              "%u, which has no row in the segment",
                              (unsigned long long)eo, e, st);
        else if (c->acc[e])
            rc = mh_apost_compare(&c->body[e], c->acc[e], d);
    }
    if (rc == MH_ENOMEM)
        rc = SP_NOMEM(d);
out:
    for (uint32_t e = 0; c->acc && e < c->v.n; e++)
        mh_apost_acc_destroy(c->acc[e]);
    free(c->acc);
    free(c->body);
    free(c->rows);
    mh_apost_sorter_free(c->as);
    mh_buf_free(&c->mine);
    mh_buf_free(&c->at);
    free(c->cnt);
    free(c);
    return rc;
}
