/*
 * verify_aset.c - fsck's check of a segment's address set (SPEC.md
 * "Address set"): the section's sum and structure as a query checks them,
 * every run decoded to its end, and, when the segment's slices verified,
 * the set equal (exact, not a bound) to the union of the rows' ranges of
 * each operation, which it rebuilds by decoding every block with the
 * writer's own accumulator.
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

/* Every row of the segment into u (its op from the chunk holding it). */
static int collect(const mh_seg *seg, rows_union *u, mh_diag *d) {
    mh_rows rows = {0};
    uint8_t *scratch = malloc(mh_block_raw_bound(seg->rows_per_block));
    int rc = scratch ? mh_rows_reserve(&rows, seg->rows_per_block) : MH_ENOMEM;
    if (rc != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the address set");
    uint32_t R = seg->rows_per_block;
    for (uint32_t si = 0; rc == MH_OK && si < seg->nslices; si++) {
        mh_slice s;
        mh_seg_slice(seg, si, &s);
        rc = mh_seg_slice_check(seg, si, &s, d);
        uint32_t ck = s.chunk_first;
        mh_chunk c;
        if (rc == MH_OK)
            rc = mh_seg_chunk(seg, &s, ck, &c, d);
        for (uint32_t b = 0; rc == MH_OK && b < s.block_count; b++) {
            rc = mh_seg_decode_block(seg, &s, b, scratch, &rows, d);
            for (uint32_t k = 0; rc == MH_OK && k < rows.n; k++) {
                uint32_t row = b * R + k;
                /* the chunks tile the slice's rows in order */
                while (rc == MH_OK && row - c.row_first >= c.row_count &&
                       ck + 1 < s.chunk_first + s.chunk_count)
                    rc = mh_seg_chunk(seg, &s, ++ck, &c, d);
                unsigned op = c.op;
                uint64_t *p = u->buf[op] + 2 * u->n[op];
                p[0] = rows.phy[k];
                p[1] = rows.phy[k] + (rows.size[k] - 1u);
                if (++u->n[op] == BATCH && flush(u, op) != MH_OK)
                    rc = mh_diag_fail(d, MH_ENOMEM, 0,
                                      "out of memory checking the address set");
            }
        }
    }
    for (unsigned o = 0; rc == MH_OK && o < MHF_OP_COUNT; o++)
        if (flush(u, o) != MH_OK)
            rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the address set");
    mh_rows_free(&rows);
    free(scratch);
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
int mh_aset_fsck(const mh_seg *seg, int rows_ok, mh_diag *d) {
    mh_aset_view v;
    int rc = mh_aset_view_whole(seg, &v, d);
    if (rc == MH_ENOTFOUND)
        return MH_OK;
    MH_TRY(rc);
    /* every run decodes, whatever the rows say */
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        for (uint32_t r = 0; r < v.run_count[o]; r++) {
            mh_aset_cur c;
            mh_aset_run_open(&v, o, r, &c);
            while ((rc = mh_aset_run_step(&c, d)) == 1)
                ;
            if (rc < 0) {
                if (d)
                    mh_diag_prefix(d, "address set at byte %llu",
                                   (unsigned long long)v.off);
                return rc;
            }
        }
    if (!rows_ok)
        return MH_OK;
    rows_union *u = calloc(1, sizeof *u);
    if (!u || mh_aset_acc_create(&u->acc) != MH_OK) {
        free(u);
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the address set");
    }
    /* the accumulator gives up past count / 16 + 64 Ki merged intervals:
     * with 16 x the stored count it gives up only when the rows make more
     * intervals than the set lists, which then cannot be equal */
    uint64_t stored = v.nivals[0] + v.nivals[1] + v.nivals[2];
    u->pile = stored < UINT64_MAX / 32 ? 16 * stored + 16 : UINT64_MAX;
    rc = collect(seg, u, d);
    const uint64_t *pairs[MHF_OP_COUNT];
    size_t n[MHF_OP_COUNT];
    int fin = rc == MH_OK ? mh_aset_acc_finish(u->acc, pairs, n) : 0;
    if (fin < 0)
        rc = mh_diag_fail(d, fin, 0, "out of memory checking the address set");
    else if (fin)
        rc = mh_diag_fail(d, MH_ECORRUPT, v.off,
                          "address set at byte %llu: %llu intervals, the rows "
                          "make more than %llu", (unsigned long long)v.off,
                          (unsigned long long)stored,
                          (unsigned long long)(u->pile / 16 + 65536));
    if (rc == MH_OK)
        rc = mh_aset_view_compare(&v, pairs, n, "address set", v.off, "its rows", d);
    mh_aset_acc_destroy(u->acc);
    free(u);
    return rc;
}
