/*
 * span_build.c - the span address set's writing half (SPEC.md §9e, section
 * type 11, format 2.3): the node of the segment being sealed at MANIFEST
 * position k with L = lowbit(k) >= 2, the union per operation of its own
 * address set and of its children's nodes: k - 1, k - 2, ..., k - L / 2
 * (sizes 1, 2, ..., L / 2; a size-1 child is that segment's own set).
 *
 * So a node reads log2(L) sections of earlier segments, never L. Those are
 * sealed files (one seal runs at a time, and the MANIFEST records the seal
 * holds list them), but read as any file: checked as a query checks them.
 * A child missing or failing a check, a union past its budget (the address
 * set's, on span_accesses), or no memory: no node. The section is
 * optional; a query without it asks each segment's own set as before.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Intervals handed to the accumulator at once. */
#define BATCH 1024u
/* Intervals per run of a node's set: MHF_SPAN_K (a segment's own set has
 * 64). */

static int add_pairs(mh_aset_acc *acc, unsigned op, const uint64_t *p,
                     size_t n, uint64_t budget) {
    while (n) {
        size_t m = n < BATCH ? n : BATCH;
        MH_TRY(mh_aset_acc_add(acc, op, p, m, budget));
        p += 2 * m;
        n -= m;
    }
    return MH_OK;
}

/* Child at position c (record c - 1) of size lowbit(c) into acc: its own
 * set (size 1) or its node. MH_OK, or any failure (then no node). */
static int add_child(const char *dir, const mh_manrec *recs, size_t nrecs,
                     uint64_t c, mh_aset_acc *acc, uint64_t budget) {
    const mh_manrec *rec = &recs[c - 1];
    uint64_t size = mh_lowbit(c);
    if (size == 1 && rec->count == 0)
        return MH_OK; /* an empty segment's set is empty */
    mh_seg seg;
    mh_diag d = {0, 0, ""}; /* not reported: a child failing means no node */
    int rc = mh_store_seg_open_rec(dir, rec, &seg, &d);
    if (rc != MH_OK)
        return rc;
    if (size == 1) {
        mh_aset_view v;
        rc = mh_section_defined(seg.major, seg.minor, MHF_SECT_ASET)
                 ? mh_aset_view_whole(&seg, &v, &d)
                 : MH_ENOTFOUND;
        if (rc == MH_OK)
            rc = mh_aset_acc_add_view(acc, &v, budget, NULL);
    } else {
        const mh_section *sec;
        mh_span_view v;
        rc = mh_span_section(&seg, &sec);
        if (rc == MH_OK)
            rc = mh_span_check(&seg, sec, (size_t)(c - 1), recs, nrecs, &v,
                               &d);
        if (rc == MH_OK)
            rc = mh_aset_acc_add_view(acc, &v.set, budget, NULL);
    }
    mh_seg_close(&seg);
    return rc;
}

int mh_span_build(const char *dir, const mh_manrec *recs, size_t ri,
                  uint64_t count, int have_own,
                  const uint64_t *const own[MHF_OP_COUNT],
                  const size_t nown[MHF_OP_COUNT], mh_buf *out) {
    uint64_t k = (uint64_t)ri + 1, L = mh_lowbit(k);
    if (L < 2 || L > UINT32_MAX || !have_own)
        return MH_OK;
    uint64_t accesses = count;
    for (size_t i = ri + 1 - L; i < ri; i++)
        accesses += recs[i].count;
    mh_aset_acc *acc;
    MH_TRY(mh_aset_acc_create(&acc));
    int rc = MH_OK;
    for (unsigned o = 0; rc == MH_OK && o < MHF_OP_COUNT; o++)
        rc = add_pairs(acc, o, own[o], nown[o], accesses);
    for (uint64_t s = 1; rc == MH_OK && s < L; s *= 2)
        rc = add_child(dir, recs, ri, k - s, acc, accesses);
    if (rc != MH_OK) {
        mh_aset_acc_destroy(acc);
        return rc == MH_ENOMEM ? MH_ENOMEM : MH_OK; /* no node */
    }
    size_t start = out->n;
    rc = mh_buf_reserve(out, MHF_SPAN_HEADER_SIZE);
    if (rc == MH_OK) {
        uint8_t *h = out->p + start;
        memset(h, 0, MHF_SPAN_HEADER_SIZE);
        mhf_store_u32(h + MHF_SPAN_SEGMENTS, (uint32_t)L);
        mhf_store_u64(h + MHF_SPAN_FIRST_SEQ, recs[ri + 1 - L].seq);
        mhf_store_u64(h + MHF_SPAN_ACCESSES, accesses);
        out->n += MHF_SPAN_HEADER_SIZE;
        /* the address set's own budget, on the accesses it covers: nothing
         * appended past it (or when the accumulator gave up). Runs of
         * MHF_SPAN_K intervals: a node is asked by every query passing its
         * segments, and a question decodes half a run on average */
        const uint64_t *pairs[MHF_OP_COUNT];
        size_t np[MHF_OP_COUNT];
        int fin = mh_aset_acc_finish(acc, pairs, np);
        rc = fin < 0 ? fin : fin ? MH_OK : mh_aset_encode(pairs, np, MHF_SPAN_K, out);
        if (rc == MH_EINVAL)
            rc = MH_OK; /* more runs than a u32 counts: no node */
        if (rc != MH_OK || fin ||
            out->n - start - MHF_SPAN_HEADER_SIZE > accesses / 16u + 4096u)
            out->n = start;
    }
    mh_aset_acc_destroy(acc);
    return rc;
}
