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

#define BATCH 1024u

/* Every interval of the checked set v into acc. */
static int add_view(mh_aset_acc *acc, const mh_aset_view *v, mh_diag *d) {
    uint64_t buf[2 * BATCH];
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        size_t n = 0;
        for (uint32_t r = 0; r < v->run_count[o]; r++) {
            mh_aset_cur c;
            mh_aset_run_open(v, o, r, &c);
            int rc;
            while ((rc = mh_aset_run_step(&c, d)) == 1) {
                buf[2 * n] = c.lo;
                buf[2 * n + 1] = c.hi;
                if (++n == BATCH) {
                    MH_TRY(mh_aset_acc_add(acc, o, buf, n, UINT64_MAX / 2));
                    n = 0;
                }
            }
            if (rc < 0)
                return rc;
        }
        MH_TRY(mh_aset_acc_add(acc, o, buf, n, UINT64_MAX / 2));
    }
    return MH_OK;
}

/* Segment j's own set into acc (seg itself when j == ri). */
static int add_own(const char *dir, const mh_seg *self, size_t j, size_t ri,
                   const mh_manrec *recs, mh_aset_acc *acc, uint64_t node_off,
                   mh_diag *d) {
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, recs[j].seq);
    mh_seg other;
    const mh_seg *s = self;
    mh_diag od = {0, 0, ""};
    if (j != ri) {
        int rc = mh_store_seg_open(dir, name, &other, 0, &od);
        if (rc == MH_OK && (rc = mh_store_seg_check(&other, &recs[j], 0, &od)) != MH_OK)
            mh_seg_close(&other);
        if (rc != MH_OK) /* its own fsck lines say why */
            return mh_diag_fail(d, MH_ECORRUPT, node_off,
                                "span address set at byte %llu: covered "
                                "segment %s cannot be read (%s)",
                                (unsigned long long)node_off, name, od.msg);
        s = &other;
    }
    mh_aset_view v;
    int rc = mh_section_defined(s->major, s->minor, MHF_SECT_ASET)
                 ? mh_aset_view_get(s, &v, &od)
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
    else if ((rc = add_view(acc, &v, &od)) != MH_OK)
        rc = mh_diag_fail(d, rc == MH_ENOMEM ? MH_ENOMEM : MH_ECORRUPT,
                          node_off, "span address set at byte %llu: covered "
                          "segment %s's address set: %s",
                          (unsigned long long)node_off, name, od.msg);
    if (s == &other)
        mh_seg_close(&other);
    return rc;
}

int mh_span_fsck(const char *dir, const mh_seg *seg, size_t ri,
                 const mh_manrec *recs, size_t nrecs, mh_diag *d) {
    const mh_section *sec;
    if (mh_span_section(seg, &sec) != MH_OK)
        return MH_OK;
    uint64_t off = sec->offset;
    mh_span_view v;
    MH_TRY(mh_span_check(seg, sec, ri, recs, nrecs, &v, d));
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
    mh_aset_acc *acc;
    if (mh_aset_acc_create(&acc) != MH_OK)
        return mh_diag_fail(d, MH_ENOMEM, 0,
                            "out of memory checking the span address set");
    int rc = MH_OK;
    for (size_t j = ri + 1 - v.segments; rc == MH_OK && j <= ri; j++)
        if (recs[j].count)
            rc = add_own(dir, seg, j, ri, recs, acc, off, d);
    const uint64_t *pairs[MHF_OP_COUNT];
    size_t n[MHF_OP_COUNT];
    if (rc == MH_OK && mh_aset_acc_finish(acc, pairs, n) != 0)
        rc = mh_diag_fail(d, MH_ENOMEM, 0,
                          "out of memory checking the span address set");
    for (unsigned o = 0; rc == MH_OK && o < MHF_OP_COUNT; o++) {
        if (v.set.nivals[o] != n[o]) {
            rc = mh_diag_fail(d, MH_ECORRUPT, v.set.off + MHF_ASET_OPS +
                                                  o * MHF_ASET_OP_SIZE,
                              "span address set at byte %llu: op %u has %llu "
                              "intervals, the covered segments' sets make %zu",
                              (unsigned long long)off, o,
                              (unsigned long long)v.set.nivals[o], n[o]);
            break;
        }
        size_t i = 0;
        for (uint32_t r = 0; rc == MH_OK && r < v.set.run_count[o]; r++) {
            mh_aset_cur c;
            mh_aset_run_open(&v.set, o, r, &c);
            while (mh_aset_run_step(&c, NULL) == 1) {
                if (c.lo != pairs[o][2 * i] || c.hi != pairs[o][2 * i + 1]) {
                    rc = mh_diag_fail(d, MH_ECORRUPT, c.off,
                                      "span address set at byte %llu: op %u "
                                      "interval %zu is [0x%llx, 0x%llx], the "
                                      "covered segments' sets make [0x%llx, "
                                      "0x%llx]", (unsigned long long)off, o, i,
                                      (unsigned long long)c.lo,
                                      (unsigned long long)c.hi,
                                      (unsigned long long)pairs[o][2 * i],
                                      (unsigned long long)pairs[o][2 * i + 1]);
                    break;
                }
                i++;
            }
        }
    }
    mh_aset_acc_destroy(acc);
    return rc;
}
