/*
 * segment_write.c - the segment file being written (seg-<seq>.mhs.tmp):
 * appends built slices in id order, keeps their index records in memory,
 * and seals the file (SPEC.md "Segment file", "Commit protocol"); also
 * undoes uncommitted slices for mh_writer_discard_from().
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
    mh_rows cols;        /* for reading slices back (discard) */
    uint8_t *raw;
};

int mh_segw_create(const mh_segw_config *cfg, mh_segw **out, mh_diag *d) {
    mh_segw *w = calloc(1, sizeof *w);
    if (!w)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for a segment writer");
    w->cfg = *cfg;
    w->fd = -1;
    mh_segment_name(w->name, cfg->seq);
    char tmp[MHF_SEGMENT_NAME_LEN + sizeof MHF_TMP_SUFFIX];
    snprintf(tmp, sizeof tmp, "%s" MHF_TMP_SUFFIX, w->name);
    w->dir = strdup(cfg->dir);
    w->tmp_path = mh_path_join(cfg->dir, tmp);
    w->final_path = mh_path_join(cfg->dir, w->name);
    int rc = (w->dir && w->tmp_path && w->final_path)
                 ? MH_OK
                 : mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for a segment writer");
    if (rc == MH_OK) {
        w->fd = open(w->tmp_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (w->fd < 0)
            rc = mh_diag_os(d, 0, "cannot create", w->tmp_path);
    }
    uint8_t zero[MHF_SEG_HEADER_SIZE] = {0};
    if (rc == MH_OK) {
        rc = mh_write_all(w->fd, zero, sizeof zero); /* header comes at seal */
        if (rc != MH_OK)
            mh_diag_os(d, rc, "cannot write", w->tmp_path);
    }
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

int mh_segw_append(mh_segw *w, const mh_builder *b, mh_diag *d) {
    if (b->n == 0)
        return MH_OK;
    size_t c0 = w->chunks.n, b0 = w->blocks.n;
    if (mh_buf_append(&w->chunks, b->chunks.p, b->chunks.n) != MH_OK ||
        mh_buf_append(&w->blocks, b->blocks.p, b->blocks.n) != MH_OK) {
        w->chunks.n = c0;
        w->blocks.n = b0;
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for the index of %s",
                            w->name);
    }
    for (size_t off = b0; off < w->blocks.n; off += MHF_BLOCK_SIZE) {
        uint8_t *r = w->blocks.p + off + MHF_BLOCK_OFFSET;
        mhf_store_u64(r, mhf_load_u64(r) + w->data_end);
    }
    uint8_t s[MHF_SLICE_SIZE];
    memcpy(s, b->slice, sizeof s);
    mhf_store_u32(s + MHF_SLICE_CHUNK_FIRST, (uint32_t)(c0 / MHF_CHUNK_SIZE));
    mhf_store_u32(s + MHF_SLICE_BLOCK_FIRST, (uint32_t)(b0 / MHF_BLOCK_SIZE));
    uint64_t bsum = mh_hash(w->blocks.p + b0, w->blocks.n - b0);
    mhf_store_u64(s + MHF_SLICE_INDEX_SUM,
                  mh_hash_seeded(w->chunks.p + c0, w->chunks.n - c0, bsum));
    int rc = mh_buf_append(&w->slices, s, sizeof s);
    if (rc != MH_OK)
        mh_diag_fail(d, rc, 0, "out of memory for the index of %s", w->name);
    if (rc == MH_OK) {
        rc = mh_pwrite_all(w->fd, b->data.p, b->data.n, w->data_end);
        if (rc != MH_OK) {
            w->slices.n -= sizeof s;
            mh_diag_os(d, rc, "cannot write", w->tmp_path);
        }
    }
    if (rc != MH_OK) {
        w->chunks.n = c0;
        w->blocks.n = b0;
        return rc;
    }
    w->data_end += b->data.n;
    if (w->count == 0)
        w->t_first = b->t_first;
    w->t_last = b->t_last;
    w->count += b->n;
    w->raw_total += b->raw_total;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        w->op_counts[o] += b->op_n[o];
    return MH_OK;
}

/* Reads back and decodes slice i of the segment being written, in id
 * order, into a malloc'd array. */
static int read_back_slice(mh_segw *w, size_t i, mh_access **out,
                           uint32_t *nout, mh_diag *d) {
    const uint8_t *s = w->slices.p + i * MHF_SLICE_SIZE;
    uint32_t n = mhf_load_u32(s + MHF_SLICE_COUNT);
    uint32_t cf = mhf_load_u32(s + MHF_SLICE_CHUNK_FIRST);
    uint32_t cn = mhf_load_u32(s + MHF_SLICE_CHUNK_COUNT);
    uint32_t bf = mhf_load_u32(s + MHF_SLICE_BLOCK_FIRST);
    uint32_t bn = mhf_load_u32(s + MHF_SLICE_BLOCK_COUNT);
    uint64_t t_base = mhf_load_u64(s + MHF_SLICE_T_FIRST);
    uint32_t R = w->cfg.rows_per_block;
    mh_access *acc = calloc(n, sizeof *acc);
    size_t raw_cap = mh_block_raw_bound(R);
    uint8_t *comp = malloc((size_t)LZ4_compressBound((int)raw_cap));
    if (!w->raw)
        w->raw = malloc(raw_cap);
    int rc = (acc && comp && w->raw) ? MH_OK : MH_ENOMEM;
    if (rc == MH_OK)
        rc = mh_rows_reserve(&w->cols, R);
    if (rc != MH_OK)
        mh_diag_fail(d, rc, 0, "out of memory reading back slice %zu of %s", i,
                     w->name);
    for (uint32_t b = 0; rc == MH_OK && b < bn; b++) {
        const uint8_t *br = w->blocks.p + (size_t)(bf + b) * MHF_BLOCK_SIZE;
        uint64_t off = mhf_load_u64(br + MHF_BLOCK_OFFSET);
        uint32_t cs = mhf_load_u32(br + MHF_BLOCK_COMP_SIZE);
        uint32_t rs = mhf_load_u32(br + MHF_BLOCK_RAW_SIZE);
        uint32_t m = n - b * R < R ? n - b * R : R;
        ssize_t got = pread(w->fd, comp, cs, (off_t)off);
        if (got != (ssize_t)cs) {
            if (got >= 0)
                errno = EIO; /* short: the file changed under the writer */
            rc = mh_diag_os(d, MH_EIO, "cannot read back", w->tmp_path);
            break;
        }
        rc = mh_block_decode(comp, cs, mhf_load_u64(br + MHF_BLOCK_SUM), rs, m,
                             t_base, w->raw, &w->cols, d);
        if (rc != MH_OK && d) {
            d->offset = off;
            mh_diag_prefix(d, "%s: slice %zu, block %u at byte %llu", w->tmp_path,
                           i, bf + b, (unsigned long long)off);
        }
        for (uint32_t k = 0; rc == MH_OK && k < m; k++) {
            uint32_t id = w->cols.id_off[k];
            if (id >= n) {
                rc = mh_diag_fail(d, MH_ECORRUPT, off,
                                  "%s: slice %zu, block %u at byte %llu: row %u "
                                  "id %u outside the slice", w->tmp_path, i,
                                  bf + b, (unsigned long long)off, k, id);
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
                         uint32_t *nkept, mh_diag *d) {
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
    MH_TRY(read_back_slice(w, i, &acc, &n, d));
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
        return mh_diag_os(d, 0, "cannot truncate", w->tmp_path);
    }
    *kept = acc;
    *nkept = keep;
    return MH_OK;
}

int mh_segw_seal(mh_segw *w, const mh_seal_info *si, mh_manrec *rec,
                 mh_diag *d) {
    uint8_t *dict;
    size_t dict_size;
    int drc = mh_dict_build(si->meta, si->nmeta, &dict, &dict_size);
    if (drc != MH_OK)
        return mh_diag_fail(d, drc, 0, "cannot build the dictionary of %s: %s",
                            w->name, mh_strerror(drc));
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
    if (rc != MH_OK)
        mh_diag_os(d, rc, "cannot write the index of", w->tmp_path);
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
    if (rc == MH_OK) {
        rc = mh_pwrite_all(w->fd, h, sizeof h, 0);
        if (rc != MH_OK)
            mh_diag_os(d, rc, "cannot write the header of", w->tmp_path);
    }
    if (rc == MH_OK && fsync(w->fd) != 0)
        rc = mh_diag_os(d, 0, "cannot fsync", w->tmp_path);
    if (rc == MH_OK && rename(w->tmp_path, w->final_path) != 0)
        rc = mh_diag_os(d, 0, "cannot rename to its final name", w->tmp_path);
    if (rc == MH_OK)
        rc = mh_fsync_dir(w->dir, d);
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
    mh_rows_free(&w->cols);
    free(w->raw);
    mh_buf_free(&w->slices);
    mh_buf_free(&w->chunks);
    mh_buf_free(&w->blocks);
    free(w);
}
