/*
 * fuzz_segfix.c - see fuzz_segfix.h. Every offset comes from fuzzed bytes:
 * each is bounds-checked before it is used, with 64-bit arithmetic that
 * cannot overflow.
 */
#include "fuzz_segfix.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_helpers.h"
#include "internal.h"

/* [off, off + len) inside [0, size)? */
static int inside(uint64_t off, uint64_t len, size_t size) {
    return off <= size && len <= size - off;
}

static int array_inside(uint64_t off, uint64_t count, uint64_t recsz,
                        size_t size) {
    if (count > (uint64_t)size / recsz)
        return 0;
    return inside(off, count * recsz, size);
}

void fuzz_segment_fix(uint8_t *seg, size_t size) {
    if (size < MHF_SEG_HEADER_SIZE)
        return;
    mhf_store_u64(seg + MHF_SEG_FILE_SIZE, size);
    uint64_t dict_off = mhf_load_u64(seg + MHF_SEG_DICT_OFF);
    uint64_t dict_size = mhf_load_u64(seg + MHF_SEG_DICT_SIZE);
    uint64_t slice_off = mhf_load_u64(seg + MHF_SEG_SLICE_OFF);
    uint32_t nslices = mhf_load_u32(seg + MHF_SEG_SLICE_COUNT);
    uint64_t chunk_off = mhf_load_u64(seg + MHF_SEG_CHUNK_OFF);
    uint32_t nchunks = mhf_load_u32(seg + MHF_SEG_CHUNK_COUNT);
    uint64_t block_off = mhf_load_u64(seg + MHF_SEG_BLOCK_OFF);
    uint32_t nblocks = mhf_load_u32(seg + MHF_SEG_BLOCK_COUNT);
    int blocks_ok = array_inside(block_off, nblocks, MHF_BLOCK_SIZE, size);
    int chunks_ok = array_inside(chunk_off, nchunks, MHF_CHUNK_SIZE, size);
    int slices_ok = array_inside(slice_off, nslices, MHF_SLICE_SIZE, size);

    /* innermost first: block sums live in block records, which the slice
     * index sums cover, which the slice array sum covers, which the header
     * covers */
    if (blocks_ok)
        for (uint32_t i = 0; i < nblocks; i++) {
            uint8_t *b = seg + block_off + (uint64_t)i * MHF_BLOCK_SIZE;
            uint64_t off = mhf_load_u64(b + MHF_BLOCK_OFFSET);
            uint32_t comp = mhf_load_u32(b + MHF_BLOCK_COMP_SIZE);
            if (inside(off, comp, size))
                mhf_store_u64(b + MHF_BLOCK_SUM, mh_hash(seg + off, comp));
        }
    if (slices_ok && chunks_ok && blocks_ok)
        for (uint32_t i = 0; i < nslices; i++) {
            uint8_t *s = seg + slice_off + (uint64_t)i * MHF_SLICE_SIZE;
            uint64_t cf = mhf_load_u32(s + MHF_SLICE_CHUNK_FIRST);
            uint64_t cc = mhf_load_u32(s + MHF_SLICE_CHUNK_COUNT);
            uint64_t bf = mhf_load_u32(s + MHF_SLICE_BLOCK_FIRST);
            uint64_t bc = mhf_load_u32(s + MHF_SLICE_BLOCK_COUNT);
            if (cf + cc > nchunks || bf + bc > nblocks)
                continue;
            uint64_t bsum = mh_hash(seg + block_off + bf * MHF_BLOCK_SIZE,
                                    (size_t)(bc * MHF_BLOCK_SIZE));
            uint64_t sum = mh_hash_seeded(
                seg + chunk_off + cf * MHF_CHUNK_SIZE,
                (size_t)(cc * MHF_CHUNK_SIZE), bsum);
            mhf_store_u64(s + MHF_SLICE_INDEX_SUM, sum);
        }
    if (inside(dict_off, dict_size, size))
        mhf_store_u64(seg + MHF_SEG_DICT_SUM,
                      mh_hash(seg + dict_off, (size_t)dict_size));
    if (slices_ok)
        mhf_store_u64(seg + MHF_SEG_SLICE_SUM,
                      mh_hash(seg + slice_off, (size_t)nslices * MHF_SLICE_SIZE));
    if (chunks_ok)
        mhf_store_u64(seg + MHF_SEG_CHUNK_SUM,
                      mh_hash(seg + chunk_off, (size_t)nchunks * MHF_CHUNK_SIZE));
    if (blocks_ok)
        mhf_store_u64(seg + MHF_SEG_BLOCK_SUM,
                      mh_hash(seg + block_off, (size_t)nblocks * MHF_BLOCK_SIZE));
    mhf_store_u64(seg + MHF_SEG_HEADER_SUM, mh_hash(seg, MHF_SEG_HEADER_SUM));
}

uint8_t *fuzz_manifest_for(const uint8_t *seg, size_t size, uint64_t *seq,
                           size_t *out_size) {
    uint8_t h[MHF_SEG_HEADER_SIZE];
    memset(h, 0, sizeof h);
    memcpy(h, seg, size < sizeof h ? size : sizeof h);
    mh_manrec rec;
    rec.seq = mhf_load_u64(h + MHF_SEG_SEQ);
    rec.id_first = 0;
    rec.count = mhf_load_u64(h + MHF_SEG_COUNT);
    rec.t_first = mhf_load_u64(h + MHF_SEG_T_FIRST);
    rec.t_last = mhf_load_u64(h + MHF_SEG_T_LAST);
    rec.file_size = size;
    rec.header_sum = mhf_load_u64(h + MHF_SEG_HEADER_SUM);
    mh_manifest m;
    memset(&m, 0, sizeof m);
    m.major = MHF_VERSION_MAJOR;
    m.minor = MHF_VERSION_MINOR;
    m.generation = 1;
    m.access_count = rec.count;
    m.next_seq = rec.seq + 1;
    m.recs = &rec;
    m.nrecs = 1;
    uint8_t *out = NULL;
    FUZZ_OK(mh_manifest_encode(&m, &out, out_size));
    /* a MANIFEST lists segments of its own major only (design 2.0): a
     * format 1 segment gets a 1.0 MANIFEST (same layout) */
    if (mhf_load_u16(h + MHF_SEG_MAJOR) == MHF1_VERSION_MAJOR) {
        mhf_store_u16(out + MHF_MAN_MAJOR, MHF1_VERSION_MAJOR);
        mhf_store_u16(out + MHF_MAN_MINOR, 0);
        fuzz_manifest_fix(out, *out_size);
    }
    *seq = rec.seq;
    return out;
}

void fuzz_manifest_fix(uint8_t *man, size_t size) {
    if (size >= 8)
        mhf_store_u64(man + size - 8, mh_hash(man, size - 8));
}
