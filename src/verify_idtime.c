/*
 * verify_idtime.c - fsck's check of a segment's id transitions (SPEC.md
 * §9g): the section's sum and structure as a reader checks them, every
 * group decoded with its coding checked, then every sample against the
 * truth taken from the rows themselves (the transition of the row of each
 * id offset), which verify_slice's pass (verify.c) gives from its one
 * decode of the blocks.
 *
 * A slice whose own records or blocks are damaged, or whose rows do not
 * give every id once, is left to verify_slice (it reports them) and its
 * samples are not judged.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

void mh_idtime_fsck_begin(mh_idtime_chk *c, const mh_seg *seg) {
    memset(c, 0, sizeof *c);
    c->d = (mh_diag){0, 0, ""};
    c->rc = mh_idtime_view_whole(seg, &c->v, &c->d);
    if (c->rc == MH_ENOTFOUND) {
        c->rc = MH_OK; /* none: a segment before 2.5, or written without */
        return;
    }
    if (c->rc != MH_OK)
        return;
    c->t = malloc((size_t)c->v.s * sizeof *c->t);
    if (!c->t)
        c->rc = mh_diag_fail(&c->d, MH_ENOMEM, 0, "out of memory checking the id transitions");
    else
        c->on = 1;
}

void mh_idtime_fsck_slice(mh_idtime_chk *c, uint32_t si, const mh_slice *s,
                          const uint64_t *t_of) {
    if (!c->on)
        return;
    c->rc = check_slice(&c->v, si, s, t_of, c->t, &c->d);
    if (c->rc != MH_OK)
        c->on = 0;
}

int mh_idtime_fsck_end(mh_idtime_chk *c, mh_diag *d) {
    free(c->t);
    c->t = NULL;
    c->on = 0;
    if (c->rc != MH_OK && d)
        *d = c->d;
    return c->rc;
}
