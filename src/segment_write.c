/*
 * segment_write.c - the segment file being written (seg-<seq>.mhs.tmp):
 * appends built slices in id order, keeps their index records (and per
 * slice its streams and address-summary keys) in memory, and seals the
 * file as format 2.0 (SPEC.md "Segment file", "Commit protocol"): header,
 * sections tiling the file in directory order (data, dictionary, slices,
 * chunks, blocks, address summary, id map, then any extra), directory. Also undoes
 * uncommitted slices for mh_writer_discard_from().
 */
#ifdef __linux__
#define _GNU_SOURCE /* sync_file_range */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4.h>
#include <xxhash.h>

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
    /* per slice: its streams (mh_slice_stream, from sstream_first[i]), its
     * column flags (SLICE_*), its summary keys (u64, from skey_first[i]) */
    mh_buf sstreams, sstream_first, sflags, skeys, skey_first;
    /* the id map's group records (slice and data_offset final) and data */
    mh_buf idrecs, iddata;
    mh_buf itrecs, itdata; /* the id transitions' groups (idtime_build.c) */
    XXH3_state_t *data_hash; /* of the data section so far */
    mh_aset_acc *aset;   /* the address set's intervals (aset_build.c) */
    int aset_lost;       /* out of memory for them: no set this segment */
    mh_apost_acc *apost; /* the address postings' granules (apost_build.c) */
    mh_spost_acc *spost; /* per stream (spost_build.c, format 2.7) */
    mh_sruns_acc *sruns; /* per stream (sruns_build.c, format 2.8) */
    const mh_manrec *recs; /* the MANIFEST records before it (span set) */
    size_t nrecs;
    int has_position;
    mh_rows cols;        /* for reading slices back (discard) */
    uint8_t *raw;
};

enum { SLICE_STREAM = 1, SLICE_PC = 2 };
#define NSLICES(w) ((w)->slices.n / MHF2_SLICE_SIZE)

static int data_hash_reset(mh_segw *w) {
    if (!w->data_hash)
        w->data_hash = XXH3_createState();
    if (!w->data_hash || XXH3_64bits_reset(w->data_hash) != XXH_OK)
        return MH_ENOMEM;
    return MH_OK;
}

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
    if (rc == MH_OK && data_hash_reset(w) != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for a segment writer");
    if (rc == MH_OK && cfg->apost && mh_apost_acc_create(&w->apost, 0) != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for a segment writer");
    if (w->apost) /* ranges of 64 KiB and more as wide ranges (§9d.1, 2.6) */
        mh_apost_acc_set_wide(w->apost, MHF_APOSTW_LOG2_DEFAULT);
    if (rc == MH_OK && cfg->apost && mh_sruns_acc_create(&w->sruns) != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for a segment writer");
    if (rc == MH_OK && cfg->apost && mh_spost_acc_create(&w->spost) != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for a segment writer");
    if (rc == MH_OK && cfg->aset && mh_aset_acc_create(&w->aset) != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for a segment writer");
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

void mh_segw_set_position(mh_segw *w, const mh_manrec *recs, size_t nrecs) {
    w->recs = recs;
    w->nrecs = nrecs;
    w->has_position = 1;
}

uint64_t mh_segw_count(const mh_segw *w) { return w->count; }
uint64_t mh_segw_next_id(const mh_segw *w) { return w->cfg.id_first + w->count; }
uint64_t mh_segw_t_last(const mh_segw *w) { return w->t_last; }

int mh_segw_append(mh_segw *w, const mh_builder *b, mh_diag *d) {
    if (b->n == 0)
        return MH_OK;
    size_t c0 = w->chunks.n, b0 = w->blocks.n, s0 = w->slices.n;
    size_t st0 = w->sstreams.n, stf0 = w->sstream_first.n, f0 = w->sflags.n;
    size_t k0 = w->skeys.n, kf0 = w->skey_first.n;
    size_t ir0 = w->idrecs.n, id0 = w->iddata.n;
    size_t tr0 = w->itrecs.n, td0 = w->itdata.n;
    uint32_t stfirst = (uint32_t)(st0 / sizeof(mh_slice_stream));
    uint32_t kfirst = (uint32_t)(k0 / 8u);
    uint8_t flags = (uint8_t)((b->has_stream ? SLICE_STREAM : 0) |
                              (b->has_pc ? SLICE_PC : 0));
    uint8_t s[MHF2_SLICE_SIZE];
    memcpy(s, b->slice, sizeof s);
    mhf_store_u32(s + MHF_SLICE_CHUNK_FIRST, (uint32_t)(c0 / MHF_CHUNK_SIZE));
    mhf_store_u32(s + MHF_SLICE_BLOCK_FIRST, (uint32_t)(b0 / MHF_BLOCK_SIZE));
    int rc = MH_OK;
    if (mh_buf_append(&w->chunks, b->chunks.p, b->chunks.n) != MH_OK ||
        mh_buf_append(&w->blocks, b->blocks.p, b->blocks.n) != MH_OK ||
        mh_buf_append(&w->sstreams, b->streams,
                      b->nstreams * sizeof *b->streams) != MH_OK ||
        mh_buf_append(&w->sstream_first, &stfirst, sizeof stfirst) != MH_OK ||
        mh_buf_append(&w->sflags, &flags, 1) != MH_OK ||
        mh_buf_append(&w->skeys, b->sum_keys.p, b->sum_keys.n) != MH_OK ||
        mh_buf_append(&w->skey_first, &kfirst, sizeof kfirst) != MH_OK ||
        mh_buf_append(&w->idrecs, b->idmap_recs.p, b->idmap_recs.n) != MH_OK ||
        mh_buf_append(&w->iddata, b->idmap_data.p, b->idmap_data.n) != MH_OK ||
        mh_buf_append(&w->itrecs, b->idtime_recs.p, b->idtime_recs.n) != MH_OK ||
        mh_buf_append(&w->itdata, b->idtime_data.p, b->idtime_data.n) != MH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for the index of %s",
                          w->name);
    if (rc == MH_OK) {
        /* the id map's groups: this slice's index, offsets in the segment's
         * data area */
        for (size_t off = ir0; off < w->idrecs.n; off += MHF_IDMAP_GROUP_SIZE) {
            uint8_t *r = w->idrecs.p + off;
            mhf_store_u32(r + MHF_IDMAP_G_SLICE, (uint32_t)NSLICES(w));
            mhf_store_u64(r + MHF_IDMAP_G_DATA_OFFSET,
                          mhf_load_u64(r + MHF_IDMAP_G_DATA_OFFSET) + id0);
        }
        for (size_t off = tr0; off < w->itrecs.n; off += MHF_IDTIME_GROUP_SIZE) {
            uint8_t *r = w->itrecs.p + off;
            mhf_store_u32(r + MHF_IDTIME_G_SLICE, (uint32_t)NSLICES(w));
            mhf_store_u64(r + MHF_IDTIME_G_DATA_OFFSET,
                          mhf_load_u64(r + MHF_IDTIME_G_DATA_OFFSET) + td0);
        }
        for (size_t off = b0; off < w->blocks.n; off += MHF_BLOCK_SIZE) {
            uint8_t *r = w->blocks.p + off + MHF_BLOCK_OFFSET;
            mhf_store_u64(r, mhf_load_u64(r) + w->data_end);
        }
        uint64_t bsum = mh_hash(w->blocks.p + b0, w->blocks.n - b0);
        mhf_store_u64(s + MHF_SLICE_INDEX_SUM,
                      mh_hash_seeded(w->chunks.p + c0, w->chunks.n - c0, bsum));
        rc = mh_buf_append(&w->slices, s, sizeof s);
        if (rc != MH_OK)
            mh_diag_fail(d, rc, 0, "out of memory for the index of %s", w->name);
    }
    if (rc == MH_OK) {
        rc = mh_pwrite_all(w->fd, b->data.p, b->data.n, w->data_end);
        if (rc != MH_OK)
            mh_diag_os(d, rc, "cannot write", w->tmp_path);
    }
    if (rc == MH_OK &&
        XXH3_64bits_update(w->data_hash, b->data.p, b->data.n) != XXH_OK)
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "cannot hash the data of %s", w->name);
    if (rc != MH_OK) {
        w->chunks.n = c0;
        w->blocks.n = b0;
        w->slices.n = s0;
        w->sstreams.n = st0;
        w->sstream_first.n = stf0;
        w->sflags.n = f0;
        w->skeys.n = k0;
        w->skey_first.n = kf0;
        w->idrecs.n = ir0;
        w->iddata.n = id0;
        w->itrecs.n = tr0;
        w->itdata.n = td0;
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
    if (w->apost) /* and its granules the address postings' (apost_build.c) */
        mh_apost_acc_add(w->apost, b->aset_lost ? NULL : (const uint64_t *)(const void *)b->aset_iv.p, b->aset_n, w->count);
    if (w->spost) /* and each stream's (spost_build.c) */
        mh_spost_acc_add(w->spost, b, w->apost);
    if (w->sruns) /* and its streams' id runs (sruns_build.c) */
        mh_sruns_acc_add(w->sruns, b, w->count - b->n);
    /* the slice's merged ranges join the segment's address set; without
     * memory for them the segment gets no set (it is optional) */
    if (w->aset && !w->aset_lost) {
        const uint64_t *iv = (const uint64_t *)(const void *)b->aset_iv.p;
        w->aset_lost = b->aset_lost;
        for (unsigned o = 0; o < MHF_OP_COUNT && !w->aset_lost; o++) {
            if (mh_aset_acc_add(w->aset, o, iv, b->aset_n[o], w->count) != MH_OK)
                w->aset_lost = 1;
            iv += 2 * (size_t)b->aset_n[o];
        }
    }
    return MH_OK;
}

/* Reads back and decodes slice i of the segment being written, in id
 * order, into a malloc'd array. */
static int read_back_slice(mh_segw *w, size_t i, mh_access **out,
                           uint32_t *nout, mh_diag *d) {
    const uint8_t *s = w->slices.p + i * MHF2_SLICE_SIZE;
    uint8_t fl = w->sflags.p[i];
    mh_block_layout layout;
    mh_block_layout_std(&layout, MHF_VERSION_MAJOR, fl & SLICE_STREAM,
                        fl & SLICE_PC);
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
                             t_base, &layout, w->raw, &w->cols, d);
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
            x->stream = w->cols.stream[k];
            x->pc = w->cols.pc[k];
            x->has_pc = w->cols.has_pc[k];
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

/* The data section's hash after a discard cut it short: read back what
 * remains (a discard is rare; appends hash as they write). */
static int rehash_data(mh_segw *w, mh_diag *d) {
    if (data_hash_reset(w) != MH_OK)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
    uint8_t buf[1 << 16];
    for (uint64_t off = MHF_SEG_HEADER_SIZE; off < w->data_end;) {
        size_t want = w->data_end - off < sizeof buf ? (size_t)(w->data_end - off)
                                                     : sizeof buf;
        ssize_t got = pread(w->fd, buf, want, (off_t)off);
        if (got <= 0) {
            if (got == 0)
                errno = EIO;
            return mh_diag_os(d, MH_EIO, "cannot read back", w->tmp_path);
        }
        XXH3_64bits_update(w->data_hash, buf, (size_t)got);
        off += (uint64_t)got;
    }
    return MH_OK;
}

/* The address set after a discard: the remaining slices' accesses read
 * back (a discard is rare; the accumulator cannot take slices out). */
static int reset_aset(mh_segw *w, mh_diag *d) {
    if (!w->aset)
        return MH_OK;
    mh_aset_acc_reset(w->aset);
    w->aset_lost = 0;
    uint64_t count = 0;
    for (size_t i = 0; i < NSLICES(w) && !w->aset_lost; i++) {
        mh_access *acc;
        uint32_t n;
        MH_TRY(read_back_slice(w, i, &acc, &n, d));
        count += n;
        for (uint32_t k = 0; k < n && !w->aset_lost; k++) {
            uint64_t iv[2] = {acc[k].physical,
                              acc[k].physical + (acc[k].size - 1u)};
            if (mh_aset_acc_add(w->aset, acc[k].op, iv, 1, count) != MH_OK)
                w->aset_lost = 1;
        }
        free(acc);
    }
    return MH_OK;
}

int mh_segw_discard_from(mh_segw *w, uint64_t t, mh_access **kept,
                         uint32_t *nkept, mh_diag *d) {
    *kept = NULL;
    *nkept = 0;
    size_t ns = NSLICES(w), i = 0;
    while (i < ns && mhf_load_u64(w->slices.p + i * MHF2_SLICE_SIZE +
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
    const uint8_t *s = w->slices.p + i * MHF2_SLICE_SIZE;
    uint32_t cf = mhf_load_u32(s + MHF_SLICE_CHUNK_FIRST);
    uint32_t bf = mhf_load_u32(s + MHF_SLICE_BLOCK_FIRST);
    uint64_t data_from = mhf_load_u64(w->blocks.p + (size_t)bf * MHF_BLOCK_SIZE +
                                      MHF_BLOCK_OFFSET);
    uint64_t id_from = mhf_load_u64(s + MHF_SLICE_ID_FIRST);
    for (size_t j = i; j < ns; j++) {
        const uint8_t *sj = w->slices.p + j * MHF2_SLICE_SIZE;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++)
            w->op_counts[o] -= mhf_load_u32(sj + MHF_SLICE_OP_COUNTS + 4 * o);
    }
    for (size_t b = bf; b < w->blocks.n / MHF_BLOCK_SIZE; b++)
        w->raw_total -= mhf_load_u32(w->blocks.p + b * MHF_BLOCK_SIZE +
                                     MHF_BLOCK_RAW_SIZE);
    w->slices.n = i * MHF2_SLICE_SIZE;
    w->chunks.n = (size_t)cf * MHF_CHUNK_SIZE;
    w->blocks.n = (size_t)bf * MHF_BLOCK_SIZE;
    w->sstreams.n = (size_t)((const uint32_t *)w->sstream_first.p)[i] *
                    sizeof(mh_slice_stream);
    w->sstream_first.n = i * sizeof(uint32_t);
    w->sflags.n = i;
    w->skeys.n = (size_t)((const uint32_t *)w->skey_first.p)[i] * 8u;
    w->skey_first.n = i * sizeof(uint32_t);
    /* the id map's groups of slices i..: records are in slice order */
    size_t gi = 0, ng = w->idrecs.n / MHF_IDMAP_GROUP_SIZE;
    while (gi < ng && mhf_load_u32(w->idrecs.p + gi * MHF_IDMAP_GROUP_SIZE +
                                   MHF_IDMAP_G_SLICE) < i)
        gi++;
    if (gi < ng)
        w->iddata.n = (size_t)mhf_load_u64(w->idrecs.p + gi * MHF_IDMAP_GROUP_SIZE +
                                           MHF_IDMAP_G_DATA_OFFSET);
    w->idrecs.n = gi * MHF_IDMAP_GROUP_SIZE;
    /* and the id transitions' */
    size_t ti = 0, nt = w->itrecs.n / MHF_IDTIME_GROUP_SIZE;
    while (ti < nt && mhf_load_u32(w->itrecs.p + ti * MHF_IDTIME_GROUP_SIZE +
                                   MHF_IDTIME_G_SLICE) < i)
        ti++;
    if (ti < nt)
        w->itdata.n = (size_t)mhf_load_u64(w->itrecs.p + ti * MHF_IDTIME_GROUP_SIZE +
                                           MHF_IDTIME_G_DATA_OFFSET);
    w->itrecs.n = ti * MHF_IDTIME_GROUP_SIZE;
    w->count = id_from - w->cfg.id_first;
    w->t_last = i ? mhf_load_u64(w->slices.p + (i - 1) * MHF2_SLICE_SIZE +
                                 MHF_SLICE_T_LAST)
                  : 0;
    if (w->count == 0)
        w->t_first = 0;
    w->data_end = data_from;
    if (ftruncate(w->fd, (off_t)data_from) != 0) {
        free(acc);
        return mh_diag_os(d, 0, "cannot truncate", w->tmp_path);
    }
    if (w->apost) /* its granule lists are per slice: the first i stay exact */
        mh_apost_acc_truncate(w->apost, (uint32_t)i);
    if (w->spost)
        mh_spost_acc_truncate(w->spost, (uint32_t)i,
                              (const mh_slice_stream *)(const void *)w->sstreams.p,
                              w->sstreams.n / sizeof(mh_slice_stream));
    if (w->sruns) /* runs in id order: those of the kept ids */
        mh_sruns_acc_truncate(w->sruns, w->count);
    int hrc = rehash_data(w, d);
    if (hrc == MH_OK)
        hrc = reset_aset(w, d);
    if (hrc != MH_OK) {
        free(acc);
        return hrc;
    }
    *kept = acc;
    *nkept = keep;
    return MH_OK;
}

static int cmp_stream(const void *a, const void *b) {
    const mh_slice_stream *x = a, *y = b;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* The streams table of the segment: every declared stream with its
 * accesses here (0 and t 0/0 when none). Each stream some slice holds must
 * be declared; with none declared the segment is all stream 0 and has no
 * streams table (*n = 0). */
static int seal_streams(mh_segw *w, const mh_seal_info *si,
                        mh_dict_stream **out, size_t *n, mh_diag *d) {
    size_t m = w->sstreams.n / sizeof(mh_slice_stream);
    mh_slice_stream *all = NULL;
    *out = NULL;
    *n = 0;
    if (m) {
        all = malloc(w->sstreams.n);
        if (!all)
            return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory sealing %s",
                                w->name);
        memcpy(all, w->sstreams.p, w->sstreams.n);
        qsort(all, m, sizeof *all, cmp_stream);
    }
    /* merge per stream: counts add, transitions min/max */
    size_t u = 0;
    for (size_t i = 0; i < m; i++) {
        if (u && all[u - 1].stream == all[i].stream) {
            mh_slice_stream *x = &all[u - 1];
            x->count += all[i].count;
            if (all[i].t_first < x->t_first)
                x->t_first = all[i].t_first;
            if (all[i].t_last > x->t_last)
                x->t_last = all[i].t_last;
        } else {
            all[u++] = all[i];
        }
    }
    int rc = MH_OK;
    if (si->nstreams == 0) {
        if (u > 1 || (u == 1 && all[0].stream != 0))
            rc = mh_diag_fail(d, MH_EINVAL, 0,
                              "%s: accesses of stream %u but no stream declared",
                              w->name, all[u - 1].stream);
        free(all);
        return rc;
    }
    mh_dict_stream *st = calloc(si->nstreams, sizeof *st);
    if (!st) {
        free(all);
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory sealing %s", w->name);
    }
    size_t j = 0;
    for (size_t i = 0; rc == MH_OK && i < si->nstreams; i++) {
        const mh_stream_info *x = &si->streams[i];
        if (i && x->id <= si->streams[i - 1].id) {
            rc = mh_diag_fail(d, MH_EINVAL, 0,
                              "%s: declared streams not in increasing id order",
                              w->name);
            break;
        }
        mh_dict_stream *y = &st[i];
        y->id = x->id;
        y->kind = (uint8_t)x->kind;
        y->name = x->name;
        y->parent = x->parent;
        y->pid = x->pid;
        y->tid = x->tid;
        y->cpu = x->cpu;
        while (j < u && all[j].stream < x->id)
            j++;
        if (j < u && all[j].stream == x->id) {
            y->count = all[j].count;
            y->t_first = all[j].t_first;
            y->t_last = all[j].t_last;
        }
    }
    /* every stream written is declared */
    for (size_t k = 0, i = 0; rc == MH_OK && k < u; k++) {
        while (i < si->nstreams && si->streams[i].id < all[k].stream)
            i++;
        if (i == si->nstreams || si->streams[i].id != all[k].stream)
            rc = mh_diag_fail(d, MH_EINVAL, 0,
                              "%s: accesses of undeclared stream %u", w->name,
                              all[k].stream);
    }
    free(all);
    if (rc != MH_OK) {
        free(st);
        return rc;
    }
    *out = st;
    *n = si->nstreams;
    return MH_OK;
}

/* One directory entry; the section's sum is computed from its bytes
 * unless given (the data section's, hashed while appended). */
static void dir_entry(uint8_t *e, uint32_t type, uint32_t flags, uint64_t off,
                      uint64_t size, uint32_t recsz, uint32_t count,
                      uint64_t sum) {
    memset(e, 0, MHF2_DIR_SIZE);
    mhf_store_u32(e + MHF2_DIR_TYPE, type);
    mhf_store_u32(e + MHF2_DIR_FLAGS, flags);
    mhf_store_u64(e + MHF2_DIR_OFFSET, off);
    mhf_store_u64(e + MHF2_DIR_BYTES, size);
    mhf_store_u32(e + MHF2_DIR_RECSZ, recsz);
    mhf_store_u32(e + MHF2_DIR_RECCOUNT, count);
    mhf_store_u64(e + MHF2_DIR_SUM, sum);
}

/* the sections after the data: 11 of this version (dictionary ... piece
 * sums) and the tests' extra ones */
#define MAX_SEAL_SECTIONS 64u

typedef struct seal_sec {
    uint32_t type, flags, recsz, count;
    const void *p;
    size_t size;
} seal_sec;

void mh_segw_set_seal_thread(mh_segw *w, int on) { w->cfg.seal_thread = on; }

/* The address postings' build (the seal's longest step: the merge of
 * every slice's granule lists, 50-250 ms for a 2^24-access segment of the
 * real traces), on a thread of its own while the seal's other sections are
 * built (35-45 ms on python's trace). Optional: out of memory, the segment
 * has no postings, never wrong ones. */
typedef struct apost_job {
    mh_apost_acc *acc;
    uint64_t count;
    mh_buf out;
    int threaded; /* 1: a thread runs it, apost_wait joins it */
    pthread_t th;
} apost_job;

static void apost_build(apost_job *j) {
    if (mh_apost_acc_serialize(j->acc, j->count, 0, &j->out) != MH_OK)
        j->out.n = 0;
}

static void *apost_main(void *p) {
    apost_build(p);
    return NULL;
}

/* Starts j on a thread when allowed and possible (else apost_wait runs
 * it in the caller's). */
static void apost_start(apost_job *j, int thread) {
    j->threaded = thread && pthread_create(&j->th, NULL, apost_main, j) == 0;
}

/* j's section, built: its thread joined, or built here. */
static void apost_wait(apost_job *j) {
    if (j->threaded)
        pthread_join(j->th, NULL);
    else
        apost_build(j);
    j->threaded = 0;
}

/* After a failure: j's thread joined (a build not begun is not run), its
 * section freed. */
static void apost_drop(apost_job *j) {
    if (j->threaded)
        pthread_join(j->th, NULL);
    j->threaded = 0;
    mh_buf_free(&j->out);
}

int mh_segw_seal(mh_segw *w, const mh_seal_info *si, mh_manrec *rec,
                 mh_diag *d) {
    size_t nsl = NSLICES(w);
    int any_stream = 0, any_pc = 0;
    for (size_t i = 0; i < nsl; i++) {
        any_stream |= w->sflags.p[i] & SLICE_STREAM;
        any_pc |= w->sflags.p[i] & SLICE_PC;
    }
    MH_CHECK(si->nextra <= MAX_SEAL_SECTIONS - 15, MH_EINVAL, d, 0,
             "%zu extra sections", si->nextra);
    mh_dict_stream *streams;
    size_t nstreams;
    MH_TRY(seal_streams(w, si, &streams, &nstreams, d));
    /* the streams with rows here, for the stream node (sspan_build.c): a
     * segment without a streams table is all stream 0 */
    uint32_t nrow_streams = 0, one_stream = 0;
    for (size_t i = 0; i < nstreams; i++)
        if (streams[i].count) {
            one_stream = streams[i].id;
            nrow_streams++;
        }
    if (nstreams == 0 && w->count)
        nrow_streams = 1;
    uint8_t *dict;
    size_t dict_size;
    int drc = mh_dict_build(si, streams, nstreams, any_stream || any_pc, any_pc,
                            &dict, &dict_size);
    free(streams);
    if (drc != MH_OK)
        return mh_diag_fail(d, drc, 0, "cannot build the dictionary of %s: %s",
                            w->name, mh_strerror(drc));
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    /* the blocks' write-out begins now, while the sections are built: the
     * fsync below then waits for what is left (a hint; its failure only
     * leaves that to the fsync). Python's last segment at close: 113 ->
     * 85 ms, median of 3 */
    (void)sync_file_range(w->fd, 0, (off_t)w->data_end, SYNC_FILE_RANGE_WRITE);
#endif
    apost_job aj = {.acc = w->apost, .count = w->count};
    int want_apost = w->apost && nsl > 0;
    if (want_apost)
        apost_start(&aj, w->cfg.seal_thread);
    mh_buf summary = {0}, fine = {0};
    int rc = MH_OK;
    if (w->cfg.summary && w->cfg.summary->serialize && nsl > 0) {
        /* first[] gets its closing entry for the hook */
        uint32_t end = (uint32_t)(w->skeys.n / 8u);
        rc = mh_buf_append(&w->skey_first, &end, sizeof end);
        if (rc == MH_OK) {
            rc = w->cfg.summary->serialize((const uint64_t *)w->skeys.p,
                                           (const uint32_t *)w->skey_first.p,
                                           (uint32_t)nsl, w->count, &summary,
                                           &fine);
            w->skey_first.n -= sizeof end;
        }
        if (rc != MH_OK) {
            apost_drop(&aj);
            free(dict);
            mh_buf_free(&summary);
            mh_buf_free(&fine);
            return mh_diag_fail(d, rc, 0, "cannot build the address summary of "
                                "%s: %s", w->name, mh_strerror(rc));
        }
    }
    mh_buf idmap = {0};
    if (rc == MH_OK && w->idrecs.n && nsl > 0) {
        rc = mh_idmap_serialize(w->cfg.idmap_group_ids, w->idrecs.p,
                                (uint32_t)(w->idrecs.n / MHF_IDMAP_GROUP_SIZE),
                                w->iddata.p, w->iddata.n, &idmap);
        if (rc != MH_OK) {
            apost_drop(&aj);
            free(dict);
            mh_buf_free(&summary);
            mh_buf_free(&fine);
            mh_buf_free(&idmap);
            return mh_diag_fail(d, rc, 0, "cannot build the id map of %s: %s",
                                w->name, mh_strerror(rc));
        }
    }
    /* the id transitions (SPEC §9g): a 2.5 segment's, after the id map */
    mh_buf idtime = {0};
    uint16_t minor = si->minor ? si->minor : MHF_VERSION_MINOR;
    if (rc == MH_OK && w->itrecs.n && nsl > 0 && minor >= 5) {
        rc = mh_idtime_serialize(w->cfg.idtime_stride, w->itrecs.p,
                                 (uint32_t)(w->itrecs.n / MHF_IDTIME_GROUP_SIZE),
                                 w->itdata.p, w->itdata.n, &idtime);
        if (rc != MH_OK) {
            apost_drop(&aj);
            free(dict);
            mh_buf_free(&summary);
            mh_buf_free(&fine);
            mh_buf_free(&idmap);
            mh_buf_free(&idtime);
            return mh_diag_fail(d, rc, 0, "cannot build the id transitions of "
                                "%s: %s", w->name, mh_strerror(rc));
        }
    }
    mh_buf aset = {0};
    if (w->aset && !w->aset_lost && nsl > 0 &&
        mh_aset_acc_serialize(w->aset, w->count, &aset) != MH_OK)
        aset.n = 0; /* out of memory: no set (optional), never a wrong one */
    /* the span address set (span_build.c): this segment's own set (none
     * when it got none; an empty one when it has no access) and its
     * children's, read from their files */
    mh_buf span = {0};
    /* (and the stream node's, below) */
    const uint64_t *own[MHF_OP_COUNT] = {NULL, NULL, NULL};
    size_t nown[MHF_OP_COUNT] = {0, 0, 0};
    int have_own = 0;
    if (w->cfg.span && w->has_position) {
        have_own = w->count == 0 ||
                   (aset.n > 0 && mh_aset_acc_finish(w->aset, own, nown) == 0);
        if (mh_span_build(w->dir, w->recs, w->nrecs, w->count, have_own, own,
                          nown, &span) != MH_OK)
            span.n = 0; /* out of memory: none (optional), never a wrong one */
    }
    if (want_apost)
        apost_wait(&aj);
    mh_buf apost = aj.out;
    /* the sections after the data, in directory order */
    seal_sec sec[MAX_SEAL_SECTIONS];
    size_t ns = 0;
    sec[ns++] = (seal_sec){MHF_SECT_DICT, MHF_SECT_REQUIRED, 0, 0, dict,
                                 dict_size};
    sec[ns++] = (seal_sec){MHF_SECT_SLICES, MHF_SECT_REQUIRED,
                                 MHF2_SLICE_SIZE, (uint32_t)nsl, w->slices.p,
                                 w->slices.n};
    sec[ns++] = (seal_sec){MHF_SECT_CHUNKS, MHF_SECT_REQUIRED,
                                 MHF_CHUNK_SIZE,
                                 (uint32_t)(w->chunks.n / MHF_CHUNK_SIZE),
                                 w->chunks.p, w->chunks.n};
    sec[ns++] = (seal_sec){MHF_SECT_BLOCKS, MHF_SECT_REQUIRED,
                                 MHF_BLOCK_SIZE,
                                 (uint32_t)(w->blocks.n / MHF_BLOCK_SIZE),
                                 w->blocks.p, w->blocks.n};
    if (summary.n)
        sec[ns++] = (seal_sec){MHF_SECT_SUMMARY, 0, 0, 0, summary.p,
                                     summary.n};
    if (idmap.n)
        sec[ns++] = (seal_sec){MHF_SECT_IDMAP, 0, 0, 0, idmap.p, idmap.n};
    if (aset.n)
        sec[ns++] = (seal_sec){MHF_SECT_ASET, 0, 0, 0, aset.p, aset.n};
    if (fine.n) /* after section 6: a 2.0 reader reads 6 and skips 9 */
        sec[ns++] = (seal_sec){MHF_SECT_SUMMARY_FINE, 0, 0, 0, fine.p, fine.n};
    /* after section 9 (SPEC §9d); with wide ranges a section 14, which
     * a segment of minor 5 or less cannot have (then none) */
    const mh_apost_wide *wr;
    uint32_t apost_type = want_apost && mh_apost_acc_wide(w->apost, &wr) > 0
                              ? MHF_SECT_APOSTW : MHF_SECT_APOST;
    if (apost.n && (apost_type == MHF_SECT_APOST || minor >= 6))
        sec[ns++] = (seal_sec){apost_type, 0, 0, 0, apost.p, apost.n};
    if (span.n) /* after section 10 (SPEC §9e) */
        sec[ns++] = (seal_sec){MHF_SECT_SPAN, 0, 0, 0, span.p, span.n};
    if (idtime.n) /* after section 11, before the piece sums that cover it */
        sec[ns++] = (seal_sec){MHF_SECT_IDTIME, 0, 0, 0, idtime.p, idtime.n};
    /* the stream postings (SPEC §9d.2, 2.7): a multi-stream segment's */
    mh_buf spost = {0};
    if (w->spost && nsl > 0 && minor >= 7 && mh_spost_acc_serialize(w->spost, &spost) != MH_OK)
        spost.n = 0; /* out of memory: none (optional), never a wrong one */
    if (spost.n)
        sec[ns++] = (seal_sec){MHF_SECT_SPOST, 0, 0, 0, spost.p, spost.n};
    /* the span stream address set (SPEC §9e.1, 2.8): of a store of
     * several streams, from this segment's stream postings (or, of one
     * stream, its address set) and its children's, read from their files */
    mh_buf sspan = {0};
    if (w->cfg.span && w->has_position && si->nstreams >= 2 && minor >= 8) {
        mh_sspan_own so = {.count = w->count, .nstreams = nrow_streams,
                           .spost = spost.n ? spost.p : NULL, .nspost = spost.n,
                           .nslices = (uint32_t)nsl, .one_stream = one_stream,
                           .have_one = w->count && have_own};
        for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
            so.one[o] = own[o];
            so.none[o] = nown[o];
        }
        if (mh_sspan_build(w->dir, w->recs, w->nrecs, &so, &sspan) != MH_OK)
            sspan.n = 0; /* out of memory: none (optional), never a wrong one */
    }
    if (sspan.n)
        sec[ns++] = (seal_sec){MHF_SECT_SSPAN, 0, 0, 0, sspan.p, sspan.n};
    /* the stream id runs (SPEC §9d.3, 2.8): a multi-stream segment's */
    mh_buf sruns = {0};
    if (w->sruns && nsl > 0 && minor >= 8 && mh_sruns_acc_serialize(w->sruns, &sruns) != MH_OK)
        sruns.n = 0; /* out of memory: none (optional), never a wrong one */
    if (sruns.n)
        sec[ns++] = (seal_sec){MHF_SECT_SRUNS, 0, 0, 0, sruns.p, sruns.n};
    /* the piece sums of the optional sections above (SPEC §9f), last:
     * types 6-11, 13 and 14 in type order (14 lies where 10 would) */
    mh_buf psum = {0};
    if (minor >= 4) {
        mh_psum_input in[MAX_SEAL_SECTIONS];
        size_t nin = 0;
        for (size_t i = 0; i < ns; i++)
            /* sections 15-17 are checked whole (SPEC §9d.2, §9e.1, §9d.3) */
            if (sec[i].type >= MHF_PSUM_TYPE_MIN && sec[i].type != MHF_SECT_SPOST &&
                sec[i].type != MHF_SECT_SSPAN && sec[i].type != MHF_SECT_SRUNS) {
                size_t k = nin++;
                for (; k > 0 && in[k - 1].type > sec[i].type; k--)
                    in[k] = in[k - 1];
                in[k] = (mh_psum_input){sec[i].type, sec[i].p, sec[i].size};
            }
        if (nin && mh_psum_serialize(MHF_PSUM_SHIFT_DEFAULT, in, nin, &psum) == MH_OK)
            sec[ns++] = (seal_sec){MHF_SECT_PSUM, 0, 0, 0, psum.p, psum.n};
        /* out of memory: none (optional), sections are then checked whole */
    }
    for (size_t i = 0; i < si->nextra; i++) {
        const mh_extra_section *x = &si->extra[i];
        sec[ns++] = (seal_sec){x->type, x->flags, x->recsz, x->count,
                                     x->p, x->size};
    }
    uint32_t ndir = (uint32_t)ns + 1;
    uint8_t dir[MAX_SEAL_SECTIONS * MHF2_DIR_SIZE];
    uint64_t off = w->data_end;
    dir_entry(dir, MHF_SECT_DATA, MHF_SECT_REQUIRED, MHF_SEG_HEADER_SIZE,
              w->data_end - MHF_SEG_HEADER_SIZE, 0, 0,
              XXH3_64bits_digest(w->data_hash));
    for (size_t i = 0; i < ns && rc == MH_OK; i++) {
        dir_entry(dir + (i + 1) * MHF2_DIR_SIZE, sec[i].type, sec[i].flags, off,
                  sec[i].size, sec[i].recsz, sec[i].count,
                  mh_hash(sec[i].p, sec[i].size));
        rc = mh_pwrite_all(w->fd, sec[i].p, sec[i].size, off);
        off += sec[i].size;
    }
    uint64_t dir_off = off;
    size_t dir_size = (size_t)ndir * MHF2_DIR_SIZE;
    uint64_t file_size = dir_off + dir_size;
    if (rc == MH_OK)
        rc = mh_pwrite_all(w->fd, dir, dir_size, dir_off);
    if (rc != MH_OK)
        mh_diag_os(d, rc, "cannot write the index of", w->tmp_path);
    free(dict);
    mh_buf_free(&summary);
    mh_buf_free(&fine);
    mh_buf_free(&idmap);
    mh_buf_free(&idtime);
    mh_buf_free(&aset);
    mh_buf_free(&apost);
    mh_buf_free(&spost);
    mh_buf_free(&sspan);
    mh_buf_free(&sruns);
    mh_buf_free(&span);
    mh_buf_free(&psum);
    uint8_t h[MHF_SEG_HEADER_SIZE] = {0};
    memcpy(h, MHF_SEG_MAGIC, 8);
    mhf_store_u16(h + MHF_SEG_MAJOR, MHF_VERSION_MAJOR);
    mhf_store_u16(h + MHF_SEG_MINOR, minor);
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
    mhf_store_u32(h + MHF2_SEG_DIR_COUNT, ndir);
    mhf_store_u64(h + MHF2_SEG_DIR_OFF, dir_off);
    mhf_store_u32(h + MHF2_SEG_DIR_RECSZ, MHF2_DIR_SIZE);
    mhf_store_u64(h + MHF2_SEG_DIR_SUM, mh_hash(dir, dir_size));
    mhf_store_u64(h + MHF2_SEG_FILE_SIZE, file_size);
    mhf_store_u64(h + MHF2_SEG_RAW_SIZE, w->raw_total);
    uint64_t hsum = mh_hash(h, MHF_SEG_HEADER_SUM);
    mhf_store_u64(h + MHF_SEG_HEADER_SUM, hsum);
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
    rec->major = MHF_VERSION_MAJOR;
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
    mh_buf_free(&w->sstreams);
    mh_buf_free(&w->sstream_first);
    mh_buf_free(&w->sflags);
    mh_buf_free(&w->skeys);
    mh_buf_free(&w->skey_first);
    mh_buf_free(&w->idrecs);
    mh_buf_free(&w->iddata);
    mh_buf_free(&w->itrecs);
    mh_buf_free(&w->itdata);
    XXH3_freeState(w->data_hash);
    mh_aset_acc_destroy(w->aset);
    mh_apost_acc_destroy(w->apost);
    mh_spost_acc_destroy(w->spost);
    mh_sruns_acc_destroy(w->sruns);
    free(w);
}
