/*
 * verify_idmap.c - fsck's check of a segment's id map (SPEC.md "Id map"):
 * the section's sum and structure as a reader checks them, then, slice by
 * slice, every label against the truth taken from the rows themselves (the
 * chunk whose row range holds the row of each id offset), and each chunk's
 * label count against its row_count.
 *
 * The truth comes from verify_slice's pass (verify.c), which decodes every
 * block once for the checks that need the rows (until library 1.9.10 each
 * of them decoded the blocks again): a slice whose own records or blocks
 * are damaged, or whose rows do not give every id once, is left to
 * verify_slice (it reports them) and its labels are not judged.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

void mh_idmap_fsck_begin(mh_idmap_chk *c, const mh_seg *seg) {
    memset(c, 0, sizeof *c);
    c->d = (mh_diag){0, 0, ""};
    c->rc = mh_idmap_view_whole(seg, &c->v, &c->d);
    if (c->rc == MH_ENOTFOUND) {
        c->rc = MH_OK; /* none: a 2.0 or 1.0 segment, or written without */
        return;
    }
    if (c->rc != MH_OK)
        return;
    uint32_t maxk = 1;
    for (uint32_t i = 0; i < seg->nslices; i++) {
        mh_slice s;
        mh_seg_slice(seg, i, &s);
        if (s.chunk_count > maxk)
            maxk = s.chunk_count;
    }
    c->labels = malloc(MH_IDMAP_GROUP_MAX * sizeof *c->labels);
    c->per_chunk = malloc((size_t)maxk * sizeof *c->per_chunk);
    if (!c->labels || !c->per_chunk)
        c->rc = mh_diag_fail(&c->d, MH_ENOMEM, 0, "out of memory checking the id map");
    else
        c->on = 1;
}

void mh_idmap_fsck_slice(mh_idmap_chk *c, const mh_seg *seg, uint32_t si,
                         const mh_slice *s, const uint32_t *chunk_of) {
    if (!c->on)
        return;
    c->rc = check_slice(seg, &c->v, si, s, chunk_of, c->labels, c->per_chunk, &c->d);
    if (c->rc != MH_OK)
        c->on = 0;
}

int mh_idmap_fsck_end(mh_idmap_chk *c, mh_diag *d) {
    free(c->labels);
    free(c->per_chunk);
    c->labels = c->per_chunk = NULL;
    c->on = 0;
    if (c->rc != MH_OK && d)
        *d = c->d;
    return c->rc;
}
