/*
 * verify_sspan.c - fsck's check of a segment's span stream address set
 * (SPEC.md §9e.1, section type 16): the section as a query checks it
 * (sum, header, entries, every set, its place in the MANIFEST), every run
 * decoded, and each entry against what its L covered segments give, each
 * read on its own (never through the other nodes): the streams listed
 * are the streams with rows there, and a set, at its shift, is exactly
 * the union of the granules of its stream's bodies in their stream
 * postings (section 15) or, in a segment of that one stream, of its
 * address set (section 8). fsck proves those against the rows
 * (verify_spost.c, verify_aset.c), so a node passing is exact.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define WHAT "span stream address set"

/* Segment j's granules into col (seg itself when j == ri). */
static int add_segment(const char *dir, const mh_seg *self, size_t j, size_t ri,
                       const mh_manrec *recs, mh_seg *const *open, mh_sspan_col *col,
                       uint64_t off, mh_diag *d) {
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, recs[j].seq);
    mh_seg other;
    const mh_seg *s;
    mh_diag od = {0, 0, ""};
    if (mh_store_seg_covered(dir, self, j, ri, recs, open, &other, &s, &od) != MH_OK)
        /* its own fsck lines say why */
        return mh_diag_fail(d, MH_ECORRUPT, off,
                            WHAT " at byte %llu: covered segment %s cannot be "
                            "read (%s)", (unsigned long long)off, name, od.msg);
    int rc = mh_sspan_col_segment(col, s, &od);
    if (rc == MH_ENOTFOUND)
        rc = mh_diag_fail(d, MH_ECORRUPT, off,
                          WHAT " at byte %llu: covered segment %s has rows of "
                          "several streams and no stream postings, or of one "
                          "and no address set", (unsigned long long)off, name);
    else if (rc == MH_ENOMEM)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the " WHAT);
    else if (rc != MH_OK)
        rc = mh_diag_fail(d, MH_ECORRUPT, off,
                          WHAT " at byte %llu: covered segment %s's stream "
                          "postings or address set are damaged (%s)",
                          (unsigned long long)off, name, od.msg);
    mh_store_seg_done(s, &other);
    return rc;
}

/* Every run of every set decodes. */
static int decode_all(const mh_sspan_view *v, mh_diag *d) {
    for (uint32_t e = 0; e < v->n; e++) {
        mh_aset_view set;
        if (!mh_sspan_set(v, e, &set))
            continue;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++)
            for (uint32_t r = 0; r < set.run_count[o]; r++) {
                mh_aset_cur c;
                mh_aset_run_open(&set, o, r, &c);
                int rc;
                while ((rc = mh_aset_run_step(&c, d)) == 1)
                    ;
                if (rc < 0) {
                    if (d)
                        mh_diag_prefix(d, WHAT " at byte %llu: entry %u",
                                       (unsigned long long)v->off, e);
                    return rc;
                }
            }
    }
    return MH_OK;
}

/* The entries against the collected sources. */
static int compare(const mh_sspan_view *v, mh_sspan_col *col, mh_diag *d) {
    uint64_t off = v->off;
    size_t at = 0;
    uint32_t t = mh_sspan_col_next(col, 0);
    for (uint32_t e = 0; e < v->n; e++) {
        const uint8_t *x = v->ents + (size_t)e * v->esz;
        uint32_t st = mhf_load_u32(x + MHF_SSPAN_E_STREAM);
        uint64_t eo = off + MHF_SSPAN_HEADER_SIZE + (uint64_t)e * v->esz;
        if (t != st)
            return mh_diag_fail(d, MH_ECORRUPT, eo,
                                t < st ? WHAT " at byte %llu: stream %u has rows in "
                                         "the covered segments and no entry"
                                       : WHAT " at byte %llu: entry %u lists stream "
                                         "%u, which has no row in the covered "
                                         "segments",
                                (unsigned long long)off, t < st ? t : e, st);
        mh_aset_view set;
        uint32_t g = mh_sspan_set(v, e, &set);
        int noset;
        uint32_t need = mh_sspan_col_shift(col, st, &noset);
        if (g && noset)
            return mh_diag_fail(d, MH_ECORRUPT, eo,
                                WHAT " at byte %llu: stream %u has a set but a "
                                "covered segment has no granules of it (a stream "
                                "postings entry without a body)",
                                (unsigned long long)off, st);
        if (g && g < need)
            return mh_diag_fail(d, MH_ECORRUPT, eo + MHF_SSPAN_E_SHIFT,
                                WHAT " at byte %llu: stream %u's set has shift %u, "
                                "finer than its covered segments' %u",
                                (unsigned long long)off, st, g, need);
        if (g) {
            const uint64_t *pairs[MHF_OP_COUNT];
            size_t n[MHF_OP_COUNT];
            int rc = mh_sspan_col_stream(col, &at, st, g, pairs, n);
            if (rc != MH_OK)
                return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the " WHAT);
            char what[64];
            snprintf(what, sizeof what, WHAT " (stream %u)", st);
            MH_TRY(mh_aset_view_compare(&set, pairs, n, what, off,
                                        "the covered segments' granules", d));
        }
        t = st == MH_STREAM_MAX ? UINT32_MAX : mh_sspan_col_next(col, st + 1);
    }
    if (t != UINT32_MAX)
        return mh_diag_fail(d, MH_ECORRUPT, off,
                            WHAT " at byte %llu: stream %u has rows in the "
                            "covered segments and no entry",
                            (unsigned long long)off, t);
    return MH_OK;
}

int mh_sspan_fsck(const char *dir, const mh_seg *seg, size_t ri,
                  const mh_manrec *recs, size_t nrecs, mh_seg *const *open,
                  mh_diag *d) {
    const mh_section *sec;
    if (mh_sspan_section(seg, &sec) != MH_OK)
        return MH_OK;
    mh_sspan_view v;
    int stale = mh_sspan_check(seg, sec, ri, recs, nrecs, &v, d);
    if (stale != MH_OK && stale != MH_SPAN_STALE)
        return stale;
    mh_diag sd = d ? *d : (mh_diag){0, 0, ""}; /* why it is stale */
    MH_TRY(decode_all(&v, d));
    if (stale) { /* whole, but not of this position: not compared */
        if (d)
            *d = sd;
        return MH_SPAN_STALE;
    }
    mh_sspan_col *col;
    if (mh_sspan_col_create(&col) != MH_OK)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the " WHAT);
    int rc = MH_OK;
    for (size_t j = ri + 1 - v.segments; rc == MH_OK && j <= ri; j++)
        if (recs[j].count)
            rc = add_segment(dir, seg, j, ri, recs, open, col, v.off, d);
    if (rc == MH_OK) {
        mh_sspan_col_sort(col);
        rc = compare(&v, col, d);
    }
    mh_sspan_col_destroy(col);
    return rc;
}
