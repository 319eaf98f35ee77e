/*
 * verify_idmap.c - fsck's check of a segment's id map (SPEC.md "Id map"):
 * the section's sum and structure as a reader checks them, then, slice by
 * slice, every label against the truth taken from the rows themselves (the
 * chunk whose row range holds the row of each id offset, found by decoding
 * the slice's blocks), and each chunk's label count against its row_count.
 *
 * The truth is rebuilt here from the blocks rather than taken from
 * verify_slice's pass, so the two checks share no code path: a slice whose
 * own records or blocks are damaged is left to verify_slice (it reports
 * them) and its labels are not judged.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The chunk (relative) of every id offset of slice s, from its blocks:
 * 0 when the rows give a complete answer, 1 when the slice's own records
 * or blocks are damaged (verify_slice's to report), or MH_ENOMEM. */
static int truth(const mh_seg *seg, uint32_t si, const mh_slice *s,
                 mh_rows *rows, uint8_t *scratch, uint32_t *chunk_of) {
    mh_diag d = {0, 0, ""};
    if (mh_seg_slice_check(seg, si, s, &d) != MH_OK)
        return 1;
    for (uint32_t x = 0; x < s->count; x++)
        chunk_of[x] = UINT32_MAX;
    uint32_t c = 0;
    mh_chunk ck;
    if (s->chunk_count == 0 ||
        mh_seg_chunk(seg, s, s->chunk_first, &ck, &d) != MH_OK)
        return 1;
    for (uint32_t b = 0; b < s->block_count; b++) {
        if (mh_seg_decode_block(seg, s, b, scratch, rows, &d) != MH_OK)
            return d.code == MH_ENOMEM ? MH_ENOMEM : 1;
        for (uint32_t k = 0; k < rows->n; k++) {
            uint32_t row = b * seg->rows_per_block + k;
            while (row - ck.row_first >= ck.row_count) {
                if (++c >= s->chunk_count ||
                    mh_seg_chunk(seg, s, s->chunk_first + c, &ck, &d) != MH_OK ||
                    row < ck.row_first)
                    return 1;
            }
            uint32_t id = rows->id_off[k];
            if (id >= s->count || chunk_of[id] != UINT32_MAX)
                return 1;
            chunk_of[id] = c;
        }
    }
    for (uint32_t x = 0; x < s->count; x++)
        if (chunk_of[x] == UINT32_MAX)
            return 1;
    return 0;
}

/* One slice's labels against the truth; the first problem in d. */
static int check_slice(const mh_seg *seg, const mh_idmap_view *v, uint32_t si,
                       const mh_slice *s, const uint32_t *chunk_of,
                       uint32_t *labels, uint32_t *per_chunk, mh_diag *d) {
    memset(per_chunk, 0, (size_t)s->chunk_count * sizeof *per_chunk);
    uint32_t g0 = mh_idmap_first_group(v, si);
    for (uint32_t x0 = 0, gi = g0; x0 < s->count; x0 += v->g, gi++) {
        MH_TRY(mh_idmap_decode(v, gi, s->chunk_count, labels, d));
        const uint8_t *r = v->recs + (size_t)gi * v->group_size;
        uint32_t n = mhf_load_u32(r + MHF_IDMAP_G_COUNT);
        uint64_t at = v->off + MHF_IDMAP_HEADER_SIZE +
                      (uint64_t)v->ngroups * v->group_size +
                      mhf_load_u64(r + MHF_IDMAP_G_DATA_OFFSET);
        for (uint32_t i = 0; i < n; i++) {
            MH_CHECK(labels[i] == chunk_of[x0 + i], MH_ECORRUPT, d, at,
                     "id map: slice %u id offset %u: label %u, its row is in "
                     "chunk %u of the slice", si, x0 + i, labels[i],
                     chunk_of[x0 + i]);
            per_chunk[labels[i]]++;
        }
    }
    for (uint32_t c = 0; c < s->chunk_count; c++) {
        mh_chunk ck;
        MH_TRY(mh_seg_chunk(seg, s, s->chunk_first + c, &ck, d));
        MH_CHECK(per_chunk[c] == ck.row_count, MH_ECORRUPT, d,
                 seg->chunk_off + (uint64_t)(s->chunk_first + c) * seg->chunk_recsz,
                 "id map: slice %u: chunk %u labelled %u times, it holds %u rows",
                 si, c, per_chunk[c], ck.row_count);
    }
    return MH_OK;
}

int mh_idmap_fsck(const mh_seg *seg, mh_diag *d) {
    mh_idmap_view v;
    int rc = mh_idmap_view_whole(seg, &v, d);
    if (rc == MH_ENOTFOUND)
        return MH_OK; /* none: a 2.0 or 1.0 segment, or written without */
    if (rc != MH_OK)
        return rc;
    uint32_t maxc = 1, maxk = 1;
    for (uint32_t i = 0; i < seg->nslices; i++) {
        mh_slice s;
        mh_seg_slice(seg, i, &s);
        if (s.count > maxc)
            maxc = s.count;
        if (s.chunk_count > maxk)
            maxk = s.chunk_count;
    }
    mh_rows rows = {0};
    uint8_t *scratch = malloc(mh_block_raw_bound(seg->rows_per_block));
    uint32_t *chunk_of = malloc((size_t)maxc * sizeof *chunk_of);
    uint32_t *labels = malloc(MH_IDMAP_GROUP_MAX * sizeof *labels);
    uint32_t *per_chunk = malloc((size_t)maxk * sizeof *per_chunk);
    if (!scratch || !chunk_of || !labels || !per_chunk ||
        mh_rows_reserve(&rows, seg->rows_per_block) != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the id map");
    for (uint32_t i = 0; rc == MH_OK && i < seg->nslices; i++) {
        mh_slice s;
        mh_seg_slice(seg, i, &s);
        int t = truth(seg, i, &s, &rows, scratch, chunk_of);
        if (t == MH_ENOMEM)
            rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the id map");
        else if (t == 0)
            rc = check_slice(seg, &v, i, &s, chunk_of, labels, per_chunk, d);
    }
    mh_rows_free(&rows);
    free(scratch);
    free(chunk_of);
    free(labels);
    free(per_chunk);
    return rc;
}
