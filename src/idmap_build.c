/*
 * idmap_build.c - the id map's writing half (SPEC.md "Id map", section 7):
 * per slice, the chunk of each id offset, cut into groups of G ids, each
 * group's labels LZ4-compressed as one block; at seal, the section's header,
 * group records and data area.
 *
 * The slice builder already knows the chunk of every row (chunk_of, by id
 * offset) when it forms the chunks, so a label costs one byte written and
 * its share of an LZ4 pass over G bytes: u8 labels for the slices of real
 * traces (at most 256 chunks), 0.2 bytes per access compressed.
 */
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "internal.h"

/* Bytes per label for a slice of nck chunks: the smallest of 1, 2, 4 that
 * holds nck - 1. */
static uint8_t label_width(uint32_t nck) {
    if (nck <= 256u)
        return 1;
    return nck <= 65536u ? 2 : 4;
}

int mh_idmap_build_slice(mh_builder *b, const uint32_t *chunk_of, uint32_t n,
                         uint32_t nck) {
    b->idmap_recs.n = b->idmap_data.n = 0;
    uint32_t g = b->idmap_g;
    if (g == 0 || n == 0)
        return MH_OK;
    size_t raw_cap = (size_t)g * 4u;
    int comp_cap = LZ4_compressBound((int)raw_cap);
    if (!b->idmap_raw) {
        b->idmap_raw = malloc(raw_cap);
        b->idmap_comp = malloc((size_t)comp_cap);
        if (!b->idmap_raw || !b->idmap_comp)
            return MH_ENOMEM;
    }
    uint8_t width = label_width(nck);
    uint8_t *raw = b->idmap_raw;
    for (uint32_t x0 = 0; x0 < n; x0 += g) {
        uint32_t m = n - x0 < g ? n - x0 : g;
        const uint32_t *c = chunk_of + x0;
        if (width == 1)
            for (uint32_t i = 0; i < m; i++)
                raw[i] = (uint8_t)c[i];
        else if (width == 2)
            for (uint32_t i = 0; i < m; i++)
                mhf_store_u16(raw + 2 * (size_t)i, (uint16_t)c[i]);
        else
            for (uint32_t i = 0; i < m; i++)
                mhf_store_u32(raw + 4 * (size_t)i, c[i]);
        /* an independent LZ4 block, like put_block's (the stream is reset
         * before every block, so sharing it is free) */
        LZ4_resetStream_fast(b->lz4);
        int comp = LZ4_compress_fast_continue(
            b->lz4, (const char *)raw, (char *)b->idmap_comp,
            (int)((size_t)m * width), comp_cap, b->lz4_acceleration);
        if (comp <= 0)
            return MH_ENOMEM;
        uint8_t rec[MHF_IDMAP_GROUP_SIZE] = {0};
        mhf_store_u64(rec + MHF_IDMAP_G_DATA_OFFSET, b->idmap_data.n);
        mhf_store_u32(rec + MHF_IDMAP_G_ID_OFFSET, x0);
        mhf_store_u32(rec + MHF_IDMAP_G_COMP_SIZE, (uint32_t)comp);
        mhf_store_u32(rec + MHF_IDMAP_G_COUNT, m);
        rec[MHF_IDMAP_G_WIDTH] = width;
        MH_TRY(mh_buf_append(&b->idmap_data, b->idmap_comp, (size_t)comp));
        MH_TRY(mh_buf_append(&b->idmap_recs, rec, sizeof rec));
    }
    return MH_OK;
}

int mh_idmap_serialize(uint32_t g, const uint8_t *recs, uint32_t nrec,
                       const uint8_t *data, uint64_t data_bytes, mh_buf *out) {
    uint8_t h[MHF_IDMAP_HEADER_SIZE] = {0};
    mhf_store_u32(h + MHF_IDMAP_GROUP_IDS, g);
    mhf_store_u32(h + MHF_IDMAP_GROUP_COUNT, nrec);
    mhf_store_u32(h + MHF_IDMAP_GROUP_SIZE_OFF, MHF_IDMAP_GROUP_SIZE);
    mhf_store_u64(h + MHF_IDMAP_DATA_BYTES, data_bytes);
    MH_TRY(mh_buf_reserve(out, sizeof h + (size_t)nrec * MHF_IDMAP_GROUP_SIZE +
                                   (size_t)data_bytes));
    MH_TRY(mh_buf_append(out, h, sizeof h));
    MH_TRY(mh_buf_append(out, recs, (size_t)nrec * MHF_IDMAP_GROUP_SIZE));
    return mh_buf_append(out, data, (size_t)data_bytes);
}
