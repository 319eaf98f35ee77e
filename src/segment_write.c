/*
 * segment_write.c - builds slices into a segment file being written
 * (seg-<seq>.mhs.tmp) and seals it (SPEC.md "Segment file", "Writing").
 *
 * A slice is built in five steps: group its accesses by operation, sort each
 * group by address (radix sort), merge overlapping and touching ranges into
 * chunks (then nearby chunks across the smallest gaps, so a slice has at
 * most accesses / chunk_min_accesses chunks per operation), order the rows
 * by (operation, chunk, id), and cut the rows into blocks that are encoded,
 * LZ4-compressed and checksummed. Index records stay in memory until seal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4.h>

#include "internal.h"

struct mh_segw {
    mh_segw_config cfg;
    char *dir;
    char name[MHF_SEGMENT_NAME_LEN + 1];
    char *tmp_path, *final_path;
    int fd;
    uint64_t data_end;
    uint64_t count, t_first, t_last, raw_total;
    uint64_t op_counts[MHF_OP_COUNT];
    mh_buf slices, chunks, blocks;
    /* scratch, grown to the largest slice seen */
    uint32_t cap;
    uint64_t *key, *tmpk;
    uint32_t *val, *tmpv, *chunk_of, *perm;
    uint64_t *ck_lo, *ck_hi; /* chunk ranges under construction */
    uint32_t *ck_start;
    uint64_t *gaps;
    mh_rows cols;            /* one block's columns */
    uint8_t *raw, *comp;
    size_t raw_cap, comp_cap;
    mh_buf data;             /* one slice's compressed blocks */
};

static int grow(void **p, size_t n, size_t elem) {
    size_t bytes = n * elem;
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q)
        return MH_ENOMEM;
    *p = q;
    return MH_OK;
}

static int reserve_scratch(mh_segw *w, uint32_t n) {
    if (n <= w->cap)
        return MH_OK;
    if (grow((void **)&w->key, n, 8) || grow((void **)&w->tmpk, n, 8) ||
        grow((void **)&w->val, n, 4) || grow((void **)&w->tmpv, n, 4) ||
        grow((void **)&w->chunk_of, n, 4) || grow((void **)&w->perm, n, 4) ||
        grow((void **)&w->ck_lo, n, 8) || grow((void **)&w->ck_hi, n, 8) ||
        grow((void **)&w->ck_start, (size_t)n + 1, 4) ||
        grow((void **)&w->gaps, n, 8))
        return MH_ENOMEM;
    w->cap = n;
    return MH_OK;
}

int mh_segw_create(const mh_segw_config *cfg, mh_segw **out) {
    mh_segw *w = calloc(1, sizeof *w);
    if (!w)
        return MH_ENOMEM;
    w->cfg = *cfg;
    w->fd = -1;
    mh_segment_name(w->name, cfg->seq);
    char tmp[MHF_SEGMENT_NAME_LEN + sizeof MHF_TMP_SUFFIX];
    snprintf(tmp, sizeof tmp, "%s" MHF_TMP_SUFFIX, w->name);
    w->dir = strdup(cfg->dir);
    w->tmp_path = mh_path_join(cfg->dir, tmp);
    w->final_path = mh_path_join(cfg->dir, w->name);
    int rc = (w->dir && w->tmp_path && w->final_path) ? MH_OK : MH_ENOMEM;
    uint32_t r = cfg->rows_per_block;
    if (rc == MH_OK)
        rc = mh_rows_reserve(&w->cols, r);
    if (rc == MH_OK) {
        w->raw_cap = mh_block_raw_bound(r);
        w->comp_cap = (size_t)LZ4_compressBound((int)w->raw_cap);
        w->raw = malloc(w->raw_cap);
        w->comp = malloc(w->comp_cap);
        if (!w->raw || !w->comp)
            rc = MH_ENOMEM;
    }
    if (rc == MH_OK) {
        w->fd = open(w->tmp_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (w->fd < 0)
            rc = mh_io_error();
    }
    uint8_t zero[MHF_SEG_HEADER_SIZE] = {0};
    if (rc == MH_OK)
        rc = mh_write_all(w->fd, zero, sizeof zero); /* header comes at seal */
    if (rc != MH_OK) {
        mh_segw_destroy(w);
        return rc;
    }
    w->data_end = MHF_SEG_HEADER_SIZE;
    *out = w;
    return MH_OK;
}

uint64_t mh_segw_count(const mh_segw *w) { return w->count; }
uint64_t mh_segw_next_id(const mh_segw *w) { return w->cfg.id_first + w->count; }
uint64_t mh_segw_t_last(const mh_segw *w) { return w->t_last; }

/* k-th largest (0-based) of n values; reorders v. */
static uint64_t select_kth_largest(uint64_t *v, size_t n, size_t k) {
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot)
                i++;
            while (v[j] < pivot)
                j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* Forms the chunks of one operation from its rows sorted by address
 * (w->val[0..m) = row indexes). Writes chunk ranges starting at *nck and
 * sets chunk_of[row]. */
static void form_chunks(mh_segw *w, const mh_access *a, uint32_t m,
                        uint32_t *nck) {
    uint32_t first = *nck, nint = 0;
    uint64_t *lo = w->ck_lo + first, *hi = w->ck_hi + first;
    uint32_t *start = w->ck_start + first;
    for (uint32_t i = 0; i < m; i++) {
        const mh_access *x = &a[w->val[i]];
        uint64_t end = x->physical + (x->size - 1u);
        if (nint && (hi[nint - 1] == UINT64_MAX ||
                     x->physical <= hi[nint - 1] + 1u)) {
            if (end > hi[nint - 1])
                hi[nint - 1] = end;
        } else {
            lo[nint] = x->physical;
            hi[nint] = end;
            start[nint] = i;
            nint++;
        }
    }
    uint32_t limit = m / (w->cfg.chunk_min_accesses ? w->cfg.chunk_min_accesses : 1);
    if (limit < 1)
        limit = 1;
    if (nint > limit) {
        /* keep the limit-1 widest gaps as chunk boundaries */
        uint32_t ngaps = nint - 1, keep = limit - 1;
        uint64_t thr = 0;
        size_t above = 0;
        if (keep > 0) {
            for (uint32_t i = 0; i < ngaps; i++)
                w->gaps[i] = lo[i + 1] - hi[i] - 1u;
            thr = select_kth_largest(w->gaps, ngaps, keep - 1);
            for (uint32_t i = 0; i < ngaps; i++)
                above += (lo[i + 1] - hi[i] - 1u) > thr;
        }
        size_t ties = keep - above; /* gaps equal to thr that still split */
        uint32_t out = 0;
        for (uint32_t i = 1; i < nint; i++) {
            /* hi[i - 1] still holds interval i-1's own end (see above) */
            uint64_t g = lo[i] - hi[i - 1] - 1u;
            int split = keep > 0 && (g > thr || (g == thr && ties > 0));
            if (split && g == thr)
                ties--;
            if (split) {
                out++;
                lo[out] = lo[i];
                hi[out] = hi[i];
                start[out] = start[i];
            } else {
                hi[out] = hi[i]; /* intervals are sorted and disjoint */
            }
        }
        nint = out + 1;
    }
    for (uint32_t c = 0; c < nint; c++) {
        uint32_t end = c + 1 < nint ? start[c + 1] : m;
        for (uint32_t i = start[c]; i < end; i++)
            w->chunk_of[w->val[i]] = first + c;
    }
    *nck = first + nint;
}

static int put_block(mh_segw *w, const mh_access *a, const uint32_t *rows,
                     uint32_t n, uint64_t t_base) {
    mh_rows *c = &w->cols;
    uint64_t pmin = UINT64_MAX, pmax = 0;
    for (uint32_t i = 0; i < n; i++) {
        const mh_access *x = &a[rows[i]];
        c->id_off[i] = rows[i];
        c->t[i] = x->transition;
        c->phy[i] = x->physical;
        c->lin[i] = x->linear;
        c->has_lin[i] = x->has_linear;
        c->size[i] = x->size;
        uint64_t end = x->physical + (x->size - 1u);
        if (x->physical < pmin)
            pmin = x->physical;
        if (end > pmax)
            pmax = end;
    }
    size_t raw = mh_block_encode_raw(w->raw, n, c->id_off, c->t, c->phy, c->lin,
                                     c->has_lin, c->size, t_base);
    int comp = LZ4_compress_fast((const char *)w->raw, (char *)w->comp,
                                 (int)raw, (int)w->comp_cap,
                                 w->cfg.lz4_acceleration);
    if (comp <= 0)
        return MH_ENOMEM;
    uint8_t rec[MHF_BLOCK_SIZE] = {0};
    mhf_store_u64(rec + MHF_BLOCK_OFFSET, w->data_end + w->data.n);
    mhf_store_u32(rec + MHF_BLOCK_COMP_SIZE, (uint32_t)comp);
    mhf_store_u32(rec + MHF_BLOCK_RAW_SIZE, (uint32_t)raw);
    mhf_store_u64(rec + MHF_BLOCK_SUM, mh_hash(w->comp, (size_t)comp));
    mhf_store_u64(rec + MHF_BLOCK_PHY_MIN, pmin);
    mhf_store_u64(rec + MHF_BLOCK_PHY_MAX, pmax);
    mhf_store_u64(rec + MHF_BLOCK_FIRST_T, c->t[0]);
    mhf_store_u32(rec + MHF_BLOCK_FIRST_ID, c->id_off[0]);
    w->raw_total += raw;
    MH_TRY(mh_buf_append(&w->data, w->comp, (size_t)comp));
    return mh_buf_append(&w->blocks, rec, sizeof rec);
}

int mh_segw_add_slice(mh_segw *w, const mh_access *a, uint32_t n) {
    if (n == 0)
        return MH_OK;
    MH_TRY(reserve_scratch(w, n));
    uint64_t id_base = mh_segw_next_id(w);
    uint32_t op_n[MHF_OP_COUNT] = {0};
    for (uint32_t i = 0; i < n; i++)
        op_n[a[i].op]++;
    /* group rows by operation (ids ascending inside each group) */
    uint32_t op_start[MHF_OP_COUNT + 1] = {0};
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        op_start[o + 1] = op_start[o] + op_n[o];
    uint32_t fill[MHF_OP_COUNT];
    memcpy(fill, op_start, sizeof fill);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pos = fill[a[i].op]++;
        w->val[pos] = i;
        w->key[pos] = a[i].physical;
    }
    uint32_t nck = 0;
    uint32_t op_ck[MHF_OP_COUNT + 1] = {0};
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint32_t s = op_start[o], m = op_n[o];
        mh_radix_sort(w->key + s, w->val + s, w->tmpk, w->tmpv, m);
        /* form_chunks reads w->val from 0: shift the view */
        uint32_t *saved = w->val;
        w->val = saved + s;
        form_chunks(w, a, m, &nck);
        w->val = saved;
        op_ck[o + 1] = nck;
    }
    /* counting sort of rows by chunk, ids ascending inside a chunk */
    uint32_t *cnt = w->ck_start; /* reuse: nck + 1 entries */
    memset(cnt, 0, ((size_t)nck + 1) * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++)
        cnt[w->chunk_of[i] + 1]++;
    for (uint32_t c = 0; c < nck; c++)
        cnt[c + 1] += cnt[c];
    /* cnt[c] = row_first of chunk c; fill perm with a moving copy in tmpv */
    memcpy(w->tmpv, cnt, (size_t)nck * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++)
        w->perm[w->tmpv[w->chunk_of[i]]++] = i;
    /* chunk records */
    uint8_t rec[MHF_CHUNK_SIZE];
    size_t chunk_rec_start = w->chunks.n;
    for (uint32_t c = 0; c < nck; c++) {
        uint32_t r0 = cnt[c], r1 = cnt[c + 1];
        const mh_access *f = &a[w->perm[r0]], *l = &a[w->perm[r1 - 1]];
        unsigned op = 0;
        while (c >= op_ck[op + 1])
            op++;
        memset(rec, 0, sizeof rec);
        mhf_store_u64(rec + MHF_CHUNK_PHY_FIRST, w->ck_lo[c]);
        mhf_store_u64(rec + MHF_CHUNK_PHY_LAST, w->ck_hi[c]);
        mhf_store_u64(rec + MHF_CHUNK_T_FIRST, f->transition);
        mhf_store_u64(rec + MHF_CHUNK_T_LAST, l->transition);
        mhf_store_u32(rec + MHF_CHUNK_ID_FIRST, w->perm[r0]);
        mhf_store_u32(rec + MHF_CHUNK_ID_LAST, w->perm[r1 - 1]);
        mhf_store_u32(rec + MHF_CHUNK_ROW_FIRST, r0);
        mhf_store_u32(rec + MHF_CHUNK_ROW_COUNT, r1 - r0);
        rec[MHF_CHUNK_OP] = (uint8_t)op;
        MH_TRY(mh_buf_append(&w->chunks, rec, sizeof rec));
    }
    /* blocks */
    uint32_t R = w->cfg.rows_per_block, nblocks = (n + R - 1) / R;
    size_t block_rec_start = w->blocks.n;
    uint32_t block_first = (uint32_t)(block_rec_start / MHF_BLOCK_SIZE);
    w->data.n = 0;
    uint64_t t_base = a[0].transition;
    for (uint32_t b = 0; b < nblocks; b++) {
        uint32_t r0 = b * R, m = n - r0 < R ? n - r0 : R;
        MH_TRY(put_block(w, a, w->perm + r0, m, t_base));
    }
    MH_TRY(mh_pwrite_all(w->fd, w->data.p, w->data.n, w->data_end));
    w->data_end += w->data.n;
    /* slice record */
    uint8_t s[MHF_SLICE_SIZE] = {0};
    mhf_store_u64(s + MHF_SLICE_T_FIRST, a[0].transition);
    mhf_store_u64(s + MHF_SLICE_T_LAST, a[n - 1].transition);
    mhf_store_u64(s + MHF_SLICE_ID_FIRST, id_base);
    mhf_store_u32(s + MHF_SLICE_COUNT, n);
    mhf_store_u32(s + MHF_SLICE_CHUNK_FIRST,
                  (uint32_t)(chunk_rec_start / MHF_CHUNK_SIZE));
    mhf_store_u32(s + MHF_SLICE_CHUNK_COUNT, nck);
    mhf_store_u32(s + MHF_SLICE_BLOCK_FIRST, block_first);
    mhf_store_u32(s + MHF_SLICE_BLOCK_COUNT, nblocks);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        mhf_store_u32(s + MHF_SLICE_OP_COUNTS + 4 * o, op_n[o]);
    uint64_t bsum = mh_hash(w->blocks.p + block_rec_start,
                            w->blocks.n - block_rec_start);
    mhf_store_u64(s + MHF_SLICE_INDEX_SUM,
                  mh_hash_seeded(w->chunks.p + chunk_rec_start,
                                 w->chunks.n - chunk_rec_start, bsum));
    MH_TRY(mh_buf_append(&w->slices, s, sizeof s));
    if (w->count == 0)
        w->t_first = a[0].transition;
    w->t_last = a[n - 1].transition;
    w->count += n;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        w->op_counts[o] += op_n[o];
    return MH_OK;
}

/* Reads back and decodes slice i of the segment being written, in id
 * order, into a malloc'd array. */
static int read_back_slice(mh_segw *w, size_t i, mh_access **out,
                           uint32_t *nout) {
    const uint8_t *s = w->slices.p + i * MHF_SLICE_SIZE;
    uint32_t n = mhf_load_u32(s + MHF_SLICE_COUNT);
    uint32_t cf = mhf_load_u32(s + MHF_SLICE_CHUNK_FIRST);
    uint32_t cn = mhf_load_u32(s + MHF_SLICE_CHUNK_COUNT);
    uint32_t bf = mhf_load_u32(s + MHF_SLICE_BLOCK_FIRST);
    uint32_t bn = mhf_load_u32(s + MHF_SLICE_BLOCK_COUNT);
    uint64_t t_base = mhf_load_u64(s + MHF_SLICE_T_FIRST);
    uint32_t R = w->cfg.rows_per_block;
    mh_access *acc = calloc(n, sizeof *acc);
    uint8_t *comp = malloc(w->comp_cap);
    int rc = (acc && comp) ? MH_OK : MH_ENOMEM;
    for (uint32_t b = 0; rc == MH_OK && b < bn; b++) {
        const uint8_t *br = w->blocks.p + (size_t)(bf + b) * MHF_BLOCK_SIZE;
        uint64_t off = mhf_load_u64(br + MHF_BLOCK_OFFSET);
        uint32_t cs = mhf_load_u32(br + MHF_BLOCK_COMP_SIZE);
        uint32_t rs = mhf_load_u32(br + MHF_BLOCK_RAW_SIZE);
        uint32_t m = n - b * R < R ? n - b * R : R;
        ssize_t got = pread(w->fd, comp, cs, (off_t)off);
        if (got != (ssize_t)cs) {
            rc = MH_EIO;
            break;
        }
        rc = mh_block_decode(comp, cs, mhf_load_u64(br + MHF_BLOCK_SUM), rs, m,
                             t_base, w->raw, &w->cols, NULL);
        for (uint32_t k = 0; rc == MH_OK && k < m; k++) {
            uint32_t id = w->cols.id_off[k];
            if (id >= n) {
                rc = MH_ECORRUPT;
                break;
            }
            mh_access *x = &acc[id];
            x->transition = w->cols.t[k];
            x->physical = w->cols.phy[k];
            x->linear = w->cols.lin[k];
            x->has_linear = w->cols.has_lin[k];
            x->size = w->cols.size[k];
            uint32_t row = b * R + k;
            for (uint32_t c = 0; c < cn; c++) {
                const uint8_t *cr = w->chunks.p + (size_t)(cf + c) * MHF_CHUNK_SIZE;
                uint32_t r0 = mhf_load_u32(cr + MHF_CHUNK_ROW_FIRST);
                if (row >= r0 && row - r0 < mhf_load_u32(cr + MHF_CHUNK_ROW_COUNT)) {
                    x->op = cr[MHF_CHUNK_OP];
                    break;
                }
            }
        }
    }
    free(comp);
    if (rc != MH_OK) {
        free(acc);
        return rc;
    }
    *out = acc;
    *nout = n;
    return MH_OK;
}

int mh_segw_discard_from(mh_segw *w, uint64_t t, mh_access **kept,
                         uint32_t *nkept) {
    *kept = NULL;
    *nkept = 0;
    size_t ns = w->slices.n / MHF_SLICE_SIZE, i = 0;
    while (i < ns && mhf_load_u64(w->slices.p + i * MHF_SLICE_SIZE +
                                  MHF_SLICE_T_LAST) < t)
        i++;
    if (i == ns)
        return MH_OK;
    mh_access *acc = NULL;
    uint32_t n = 0;
    MH_TRY(read_back_slice(w, i, &acc, &n));
    uint32_t keep = 0;
    while (keep < n && acc[keep].transition < t)
        keep++;
    /* forget slices i.. and their records, data and counts */
    const uint8_t *s = w->slices.p + i * MHF_SLICE_SIZE;
    uint32_t cf = mhf_load_u32(s + MHF_SLICE_CHUNK_FIRST);
    uint32_t bf = mhf_load_u32(s + MHF_SLICE_BLOCK_FIRST);
    uint64_t data_from = mhf_load_u64(w->blocks.p + (size_t)bf * MHF_BLOCK_SIZE +
                                      MHF_BLOCK_OFFSET);
    uint64_t id_from = mhf_load_u64(s + MHF_SLICE_ID_FIRST);
    for (size_t j = i; j < ns; j++) {
        const uint8_t *sj = w->slices.p + j * MHF_SLICE_SIZE;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++)
            w->op_counts[o] -= mhf_load_u32(sj + MHF_SLICE_OP_COUNTS + 4 * o);
    }
    for (size_t b = bf; b < w->blocks.n / MHF_BLOCK_SIZE; b++)
        w->raw_total -= mhf_load_u32(w->blocks.p + b * MHF_BLOCK_SIZE +
                                     MHF_BLOCK_RAW_SIZE);
    w->slices.n = i * MHF_SLICE_SIZE;
    w->chunks.n = (size_t)cf * MHF_CHUNK_SIZE;
    w->blocks.n = (size_t)bf * MHF_BLOCK_SIZE;
    w->count = id_from - w->cfg.id_first;
    w->t_last = i ? mhf_load_u64(w->slices.p + (i - 1) * MHF_SLICE_SIZE +
                                 MHF_SLICE_T_LAST)
                  : 0;
    if (w->count == 0)
        w->t_first = 0;
    w->data_end = data_from;
    if (ftruncate(w->fd, (off_t)data_from) != 0) {
        free(acc);
        return mh_io_error();
    }
    *kept = acc;
    *nkept = keep;
    return MH_OK;
}

int mh_segw_seal(mh_segw *w, const mh_kv *meta, size_t nmeta, mh_manrec *rec) {
    uint8_t *dict;
    size_t dict_size;
    MH_TRY(mh_dict_build(meta, nmeta, &dict, &dict_size));
    uint64_t off = w->data_end;
    uint64_t dict_off = off;
    uint64_t slice_off = dict_off + dict_size;
    uint64_t chunk_off = slice_off + w->slices.n;
    uint64_t block_off = chunk_off + w->chunks.n;
    uint64_t file_size = block_off + w->blocks.n;
    int rc = mh_pwrite_all(w->fd, dict, dict_size, dict_off);
    if (rc == MH_OK)
        rc = mh_pwrite_all(w->fd, w->slices.p, w->slices.n, slice_off);
    if (rc == MH_OK)
        rc = mh_pwrite_all(w->fd, w->chunks.p, w->chunks.n, chunk_off);
    if (rc == MH_OK)
        rc = mh_pwrite_all(w->fd, w->blocks.p, w->blocks.n, block_off);
    uint8_t h[MHF_SEG_HEADER_SIZE] = {0};
    memcpy(h, MHF_SEG_MAGIC, 8);
    mhf_store_u16(h + MHF_SEG_MAJOR, MHF_VERSION_MAJOR);
    mhf_store_u16(h + MHF_SEG_MINOR, MHF_VERSION_MINOR);
    mhf_store_u32(h + MHF_SEG_BOM, MHF_BYTE_ORDER_MARK);
    mhf_store_u32(h + MHF_SEG_HEADER_SIZE_OFF, MHF_SEG_HEADER_SIZE);
    mhf_store_u64(h + MHF_SEG_SEQ, w->cfg.seq);
    mhf_store_u64(h + MHF_SEG_ID_FIRST, w->cfg.id_first);
    mhf_store_u64(h + MHF_SEG_COUNT, w->count);
    mhf_store_u64(h + MHF_SEG_T_FIRST, w->t_first);
    mhf_store_u64(h + MHF_SEG_T_LAST, w->t_last);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        mhf_store_u64(h + MHF_SEG_OP_COUNTS + 8 * o, w->op_counts[o]);
    mhf_store_u32(h + MHF_SEG_ROWS_PER_BLOCK, w->cfg.rows_per_block);
    mhf_store_u64(h + MHF_SEG_DATA_OFF, MHF_SEG_HEADER_SIZE);
    mhf_store_u64(h + MHF_SEG_DATA_SIZE, w->data_end - MHF_SEG_HEADER_SIZE);
    mhf_store_u64(h + MHF_SEG_DICT_OFF, dict_off);
    mhf_store_u64(h + MHF_SEG_DICT_SIZE, dict_size);
    mhf_store_u64(h + MHF_SEG_SLICE_OFF, slice_off);
    mhf_store_u32(h + MHF_SEG_SLICE_COUNT, (uint32_t)(w->slices.n / MHF_SLICE_SIZE));
    mhf_store_u32(h + MHF_SEG_SLICE_RECSZ, MHF_SLICE_SIZE);
    mhf_store_u64(h + MHF_SEG_CHUNK_OFF, chunk_off);
    mhf_store_u32(h + MHF_SEG_CHUNK_COUNT, (uint32_t)(w->chunks.n / MHF_CHUNK_SIZE));
    mhf_store_u32(h + MHF_SEG_CHUNK_RECSZ, MHF_CHUNK_SIZE);
    mhf_store_u64(h + MHF_SEG_BLOCK_OFF, block_off);
    mhf_store_u32(h + MHF_SEG_BLOCK_COUNT, (uint32_t)(w->blocks.n / MHF_BLOCK_SIZE));
    mhf_store_u32(h + MHF_SEG_BLOCK_RECSZ, MHF_BLOCK_SIZE);
    mhf_store_u64(h + MHF_SEG_FILE_SIZE, file_size);
    mhf_store_u64(h + MHF_SEG_RAW_SIZE, w->raw_total);
    mhf_store_u64(h + MHF_SEG_DICT_SUM, mh_hash(dict, dict_size));
    mhf_store_u64(h + MHF_SEG_SLICE_SUM, mh_hash(w->slices.p, w->slices.n));
    mhf_store_u64(h + MHF_SEG_CHUNK_SUM, mh_hash(w->chunks.p, w->chunks.n));
    mhf_store_u64(h + MHF_SEG_BLOCK_SUM, mh_hash(w->blocks.p, w->blocks.n));
    uint64_t hsum = mh_hash(h, MHF_SEG_HEADER_SUM);
    mhf_store_u64(h + MHF_SEG_HEADER_SUM, hsum);
    free(dict);
    if (rc == MH_OK)
        rc = mh_pwrite_all(w->fd, h, sizeof h, 0);
    if (rc == MH_OK && fsync(w->fd) != 0)
        rc = mh_io_error();
    if (rc == MH_OK && rename(w->tmp_path, w->final_path) != 0)
        rc = mh_io_error();
    if (rc == MH_OK)
        rc = mh_fsync_dir(w->dir);
    if (rc != MH_OK)
        return rc;
    rec->seq = w->cfg.seq;
    rec->id_first = w->cfg.id_first;
    rec->count = w->count;
    rec->t_first = w->t_first;
    rec->t_last = w->t_last;
    rec->file_size = file_size;
    rec->header_sum = hsum;
    close(w->fd);
    w->fd = -1;
    free(w->tmp_path);
    w->tmp_path = NULL; /* sealed: nothing to remove on destroy */
    return MH_OK;
}

void mh_segw_destroy(mh_segw *w) {
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    if (w->tmp_path) {
        int saved = errno;
        unlink(w->tmp_path);
        errno = saved;
    }
    free(w->dir);
    free(w->tmp_path);
    free(w->final_path);
    free(w->key);
    free(w->tmpk);
    free(w->val);
    free(w->tmpv);
    free(w->chunk_of);
    free(w->perm);
    free(w->ck_lo);
    free(w->ck_hi);
    free(w->ck_start);
    free(w->gaps);
    mh_rows_free(&w->cols);
    free(w->raw);
    free(w->comp);
    mh_buf_free(&w->data);
    mh_buf_free(&w->slices);
    mh_buf_free(&w->chunks);
    mh_buf_free(&w->blocks);
    free(w);
}
