/*
 * verify_span.c - fsck's check of a segment's span address set (SPEC.md
 * §9e, section type 11): the section as a query checks it (sum, header,
 * its place in the MANIFEST, the embedded set), every run decoded, and the
 * set equal, interval for interval and per operation, to the union of the
 * own address sets (section 8) of the segments it covers. fsck proves each
 * of those equal to its rows (verify_aset.c), so a node passing both is
 * the exact union of its segments' accesses, which is what lets a query
 * skip them.
 */
#include <stdlib.h>

#include "internal.h"



/* Segment j's own set into acc (seg itself when j == ri). */
static int add_own(const char *dir, const mh_seg *self, size_t j, size_t ri,
                   const mh_manrec *recs, mh_seg *const *open, mh_aset_acc *acc,
                   uint64_t node_off, mh_diag *d) {
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, recs[j].seq);
    mh_seg other;
    const mh_seg *s;
    mh_diag od = {0, 0, ""};
    if (mh_store_seg_covered(dir, self, j, ri, recs, open, &other, &s, &od) != MH_OK)
        /* its own fsck lines say why */
        return mh_diag_fail(d, MH_ECORRUPT, node_off,
                            "span address set at byte %llu: covered "
                            "segment %s cannot be read (%s)",
                            (unsigned long long)node_off, name, od.msg);
    mh_aset_view v;
    int rc = mh_section_defined(s->major, s->minor, MHF_SECT_ASET)
                 ? mh_aset_view_whole(s, &v, &od)
                 : MH_ENOTFOUND;
    if (rc == MH_ENOTFOUND)
        rc = mh_diag_fail(d, MH_ECORRUPT, node_off,
                          "span address set at byte %llu: covered segment %s "
                          "has %llu accesses and no address set",
                          (unsigned long long)node_off, name,
                          (unsigned long long)recs[j].count);
    else if (rc != MH_OK)
        rc = mh_diag_fail(d, MH_ECORRUPT, node_off,
                          "span address set at byte %llu: covered segment "
                          "%s's address set is damaged (%s)",
                          (unsigned long long)node_off, name, od.msg);
    else if ((rc = mh_aset_acc_add_view(acc, &v, UINT64_MAX / 2, &od)) != MH_OK)
        rc = mh_diag_fail(d, rc == MH_ENOMEM ? MH_ENOMEM : MH_ECORRUPT,
                          node_off, "span address set at byte %llu: covered "
                          "segment %s's address set: %s",
                          (unsigned long long)node_off, name, od.msg);
    mh_store_seg_done(s, &other);
    return rc;
}

int mh_span_fsck(const char *dir, const mh_seg *seg, size_t ri,
                 const mh_manrec *recs, size_t nrecs, mh_seg *const *open,
                 mh_diag *d) {
    const mh_section *sec;
    if (mh_span_section(seg, &sec) != MH_OK)
        return MH_OK;
    uint64_t off = sec->offset;
    mh_span_view v;
    int stale = mh_span_check(seg, sec, ri, recs, nrecs, &v, d);
    if (stale != MH_OK && stale != MH_SPAN_STALE)
        return stale;
    mh_diag sd = d ? *d : (mh_diag){0, 0, ""}; /* why it is stale */
    /* every run decodes, whatever the covered segments say */
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        for (uint32_t r = 0; r < v.set.run_count[o]; r++) {
            mh_aset_cur c;
            mh_aset_run_open(&v.set, o, r, &c);
            int rc;
            while ((rc = mh_aset_run_step(&c, d)) == 1)
                ;
            if (rc < 0) {
                if (d)
                    mh_diag_prefix(d, "span address set at byte %llu",
                                   (unsigned long long)off);
                return rc;
            }
        }
    if (stale) { /* whole, but not of this position: not compared */
        if (d)
            *d = sd;
        return MH_SPAN_STALE;
    }
    mh_aset_acc *acc;
    if (mh_aset_acc_create(&acc) != MH_OK)
        return mh_diag_fail(d, MH_ENOMEM, 0,
                            "out of memory checking the span address set");
    int rc = MH_OK;
    for (size_t j = ri + 1 - v.segments; rc == MH_OK && j <= ri; j++)
        if (recs[j].count)
            rc = add_own(dir, seg, j, ri, recs, open, acc, off, d);
    const uint64_t *pairs[MHF_OP_COUNT];
    size_t n[MHF_OP_COUNT];
    if (rc == MH_OK && mh_aset_acc_finish(acc, pairs, n) != 0)
        rc = mh_diag_fail(d, MH_ENOMEM, 0,
                          "out of memory checking the span address set");
    if (rc == MH_OK)
        rc = mh_aset_view_compare(&v.set, pairs, n, "span address set", off,
                                  "the covered segments' sets", d);
    mh_aset_acc_destroy(acc);
    return rc;
}
