/*
 * verify_aset.c - fsck's check of a segment's address set (SPEC.md
 * "Address set"): the section's sum and structure as a query checks them,
 * every run decoded to its end, and, when the segment's slices verified,
 * the set equal (exact, not a bound) to the union of the rows' ranges of
 * each operation, which it rebuilds with the writer's own accumulator from
 * the rows verify_slice decodes (verify.c: one decode of each block for
 * all the checks).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Rows whose ranges are handed to the accumulator at once, per op. */
#define BATCH 1024u

typedef struct rows_union {
    mh_aset_acc *acc;
    uint64_t pile; /* the accumulator's give-up count (see below) */
    uint64_t buf[MHF_OP_COUNT][2 * BATCH];
    uint32_t n[MHF_OP_COUNT];
} rows_union;

static int flush(rows_union *u, unsigned op) {
    int rc = mh_aset_acc_add(u->acc, op, u->buf[op], u->n[op], u->pile);
    u->n[op] = 0;
    return rc;
}

int mh_aset_view_compare(const mh_aset_view *v, const uint64_t *const pairs[MHF_OP_COUNT],
                         const size_t n[MHF_OP_COUNT], const char *what, uint64_t off,
                         const char *source, mh_diag *d) {
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        if (v->nivals[o] != n[o])
            return mh_diag_fail(d, MH_ECORRUPT, v->off + MHF_ASET_OPS + o * MHF_ASET_OP_SIZE,
                                "%s at byte %llu: op %u has %llu intervals, %s make %zu",
                                what, (unsigned long long)off, o,
                                (unsigned long long)v->nivals[o], source, n[o]);
        size_t i = 0;
        for (uint32_t r = 0; r < v->run_count[o]; r++) {
            mh_aset_cur c;
            mh_aset_run_open(v, o, r, &c);
            while (mh_aset_run_step(&c, NULL) == 1) {
                if (c.lo != pairs[o][2 * i] || c.hi != pairs[o][2 * i + 1])
                    return mh_diag_fail(d, MH_ECORRUPT, c.off,
                                        "%s at byte %llu: op %u interval %zu is [0x%llx, "
                                        "0x%llx], %s make [0x%llx, 0x%llx]",
                                        what, (unsigned long long)off, o, i,
                                        (unsigned long long)c.lo, (unsigned long long)c.hi,
                                        source, (unsigned long long)pairs[o][2 * i],
                                        (unsigned long long)pairs[o][2 * i + 1]);
                i++;
            }
        }
    }
    return MH_OK;
}
struct mh_aset_chk {
    int rc;         /* the view's verdict */
    mh_diag d;
    mh_aset_view v;
    int nomem;      /* the rows' union ran out of memory */
    rows_union *u;  /* NULL without a section */
};

int mh_aset_fsck_begin(mh_aset_chk **out, const mh_seg *seg) {
    mh_aset_chk *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return MH_ENOMEM;
    c->d = (mh_diag){0, 0, ""};
    c->rc = mh_aset_view_whole(seg, &c->v, &c->d);
    if (c->rc != MH_OK)
        return MH_OK; /* none, or end's first problem */
    c->u = calloc(1, sizeof *c->u);
    if (!c->u || mh_aset_acc_create(&c->u->acc) != MH_OK) {
        c->nomem = 1;
        return MH_OK;
    }
    /* the accumulator gives up past count / 16 + 64 Ki merged intervals:
     * with 16 x the stored count it gives up only when the rows make more
     * intervals than the set lists, which then cannot be equal */
    uint64_t stored = c->v.nivals[0] + c->v.nivals[1] + c->v.nivals[2];
    c->u->pile = stored < UINT64_MAX / 32 ? 16 * stored + 16 : UINT64_MAX;
    return MH_OK;
}

void mh_aset_fsck_rows(mh_aset_chk *c, const uint64_t *trip, size_t n) {
    if (!c || c->rc != MH_OK || c->nomem)
        return;
    rows_union *u = c->u;
    for (size_t i = 0; i < n && !c->nomem; i++) {
        unsigned op = (unsigned)trip[3 * i];
        uint64_t *p = u->buf[op] + 2 * u->n[op];
        p[0] = trip[3 * i + 1];
        p[1] = trip[3 * i + 2];
        if (++u->n[op] == BATCH && flush(u, op) != MH_OK)
            c->nomem = 1;
    }
}

int mh_aset_fsck_end(mh_aset_chk *c, int rows_ok, mh_diag *d) {
    if (!c)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the address set");
    int rc;
    mh_aset_view v = c->v;
    if (!mh_fsck_view_ok(c->rc, &c->d, d, &rc))
        goto out;
    /* every run decodes, whatever the rows say */
    for (unsigned o = 0; rc == MH_OK && o < MHF_OP_COUNT; o++)
        for (uint32_t r = 0; rc == MH_OK && r < v.run_count[o]; r++) {
            mh_aset_cur cur;
            mh_aset_run_open(&v, o, r, &cur);
            while ((rc = mh_aset_run_step(&cur, d)) == 1)
                ;
            if (rc < 0) {
                if (d)
                    mh_diag_prefix(d, "address set at byte %llu",
                                   (unsigned long long)v.off);
            } else {
                rc = MH_OK;
            }
        }
    if (rc != MH_OK || !rows_ok)
        goto out;
    for (unsigned o = 0; !c->nomem && o < MHF_OP_COUNT; o++)
        if (flush(c->u, o) != MH_OK)
            c->nomem = 1;
    if (c->nomem) {
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the address set");
        goto out;
    }
    const uint64_t *pairs[MHF_OP_COUNT];
    size_t n[MHF_OP_COUNT];
    int fin = mh_aset_acc_finish(c->u->acc, pairs, n);
    uint64_t stored = v.nivals[0] + v.nivals[1] + v.nivals[2];
    if (fin < 0)
        rc = mh_diag_fail(d, fin, 0, "out of memory checking the address set");
    else if (fin)
        rc = mh_diag_fail(d, MH_ECORRUPT, v.off,
                          "address set at byte %llu: %llu intervals, the rows "
                          "make more than %llu", (unsigned long long)v.off,
                          (unsigned long long)stored,
                          (unsigned long long)(c->u->pile / 16 + 65536));
    else
        rc = mh_aset_view_compare(&v, pairs, n, "address set", v.off, "its rows", d);
out:
    if (c->u) {
        mh_aset_acc_destroy(c->u->acc);
        free(c->u);
    }
    free(c);
    return rc;
}
