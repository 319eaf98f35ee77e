/*
 * verify_idtime.c - fsck's check of a segment's id transitions (SPEC.md
 * §9g): the section's sum and structure as a reader checks them, every
 * group decoded with its coding checked, then every sample against the
 * truth taken from the rows themselves (the transition of the row of each
 * id offset, found by decoding the slice's blocks).
 *
 * A slice whose own records or blocks are damaged is left to verify_slice
 * (it reports them) and its samples are not judged.
 */
#include <stdlib.h>

#include "internal.h"

/* The transition of every id offset of slice s, from its blocks: 0 when
 * the rows give a complete answer, 1 when the slice's own records or
 * blocks are damaged, or MH_ENOMEM. */
static int truth(const mh_seg *seg, uint32_t si, const mh_slice *s,
                 mh_rows *rows, uint8_t *scratch, uint64_t *t_of, uint8_t *seen) {
    mh_diag d = {0, 0, ""};
    if (mh_seg_slice_check(seg, si, s, &d) != MH_OK)
        return 1;
    for (uint32_t x = 0; x < s->count; x++)
        seen[x] = 0;
    for (uint32_t b = 0; b < s->block_count; b++) {
        if (mh_seg_decode_block(seg, s, b, scratch, rows, &d) != MH_OK)
            return d.code == MH_ENOMEM ? MH_ENOMEM : 1;
        for (uint32_t k = 0; k < rows->n; k++) {
            uint32_t id = rows->id_off[k];
            if (id >= s->count || seen[id])
                return 1;
            seen[id] = 1;
            t_of[id] = rows->t[k];
        }
    }
    for (uint32_t x = 0; x < s->count; x++)
        if (!seen[x])
            return 1;
    return 0;
}

static int check_slice(const mh_idtime_view *v, uint32_t si, const mh_slice *s,
                       const uint64_t *t_of, uint64_t *t, mh_diag *d) {
    const uint32_t ns = (uint32_t)(((uint64_t)s->count + v->k - 1) / v->k);
    uint32_t g = mh_idtime_first_group(v, si);
    for (uint64_t j64 = 0; j64 < ns; j64 += v->s, g++) {
        const uint32_t j0 = (uint32_t)j64;
        const uint32_t c = ns - j0 < v->s ? ns - j0 : v->s;
        MH_TRY(mh_idtime_decode(v, g, c, t, d));
        const uint8_t *r = v->recs + (size_t)g * v->group_size;
        const uint64_t at = v->off + MHF_IDTIME_HEADER_SIZE +
                            (uint64_t)v->ngroups * v->group_size +
                            mhf_load_u64(r + MHF_IDTIME_G_DATA_OFFSET);
        /* sample 0 is the record's t_first: a wrong one is the record's */
        const uint64_t rec_at = v->off + MHF_IDTIME_HEADER_SIZE +
                                (uint64_t)g * v->group_size + MHF_IDTIME_G_T_FIRST;
        for (uint32_t i = 0; i < c; i++) {
            const uint64_t x = (uint64_t)(j0 + i) * v->k;
            MH_CHECK(t[i] == t_of[x], MH_ECORRUPT, d, i == 0 ? rec_at : at,
                     "id transitions: slice %u id offset %llu: sample says "
                     "transition %llu, its row's is %llu", si,
                     (unsigned long long)x, (unsigned long long)t[i],
                     (unsigned long long)t_of[x]);
        }
    }
    return MH_OK;
}

int mh_idtime_fsck(const mh_seg *seg, mh_diag *d) {
    mh_idtime_view v;
    int rc = mh_idtime_view_whole(seg, &v, d);
    if (rc == MH_ENOTFOUND)
        return MH_OK; /* none: a segment before 2.5, or written without */
    if (rc != MH_OK)
        return rc;
    uint32_t maxc = 1;
    for (uint32_t i = 0; i < seg->nslices; i++) {
        mh_slice s;
        mh_seg_slice(seg, i, &s);
        if (s.count > maxc)
            maxc = s.count;
    }
    mh_rows rows = {0};
    uint8_t *scratch = malloc(mh_block_raw_bound(seg->rows_per_block));
    uint64_t *t_of = malloc((size_t)maxc * sizeof *t_of);
    uint8_t *seen = malloc(maxc);
    uint64_t *t = malloc((size_t)v.s * sizeof *t);
    if (!scratch || !t_of || !seen || !t ||
        mh_rows_reserve(&rows, seg->rows_per_block) != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the id transitions");
    for (uint32_t i = 0; rc == MH_OK && i < seg->nslices; i++) {
        mh_slice s;
        mh_seg_slice(seg, i, &s);
        int tr = truth(seg, i, &s, &rows, scratch, t_of, seen);
        if (tr == MH_ENOMEM)
            rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the id transitions");
        else if (tr == 0)
            rc = check_slice(&v, i, &s, t_of, t, d);
    }
    mh_rows_free(&rows);
    free(scratch);
    free(t_of);
    free(seen);
    free(t);
    return rc;
}
