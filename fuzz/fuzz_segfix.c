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

/* One directory entry of a 2.0 segment, when it lies inside the image. */
typedef struct sect2 {
    uint64_t off, size;
    uint32_t recsz, count;
    int ok;
} sect2;

static sect2 find2(const uint8_t *seg, size_t size, const uint8_t *dir,
                   uint32_t n, uint32_t rsz, uint32_t type) {
    sect2 x = {0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = dir + (uint64_t)i * rsz;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) != type)
            continue;
        x.off = mhf_load_u64(e + MHF2_DIR_OFFSET);
        x.size = mhf_load_u64(e + MHF2_DIR_BYTES);
        x.recsz = mhf_load_u32(e + MHF2_DIR_RECSZ);
        x.count = mhf_load_u32(e + MHF2_DIR_RECCOUNT);
        x.ok = inside(x.off, x.size, size);
        if (type != MHF_SECT_DATA && type != MHF_SECT_DICT && type != MHF_SECT_SUMMARY)
            x.ok = x.ok && x.recsz >= 8 && array_inside(x.off, x.count, x.recsz, size);
        break;
    }
    (void)seg;
    return x;
}

/* Format 2.0 (SPEC.md 15): block sums, index sums, every section's sum in
 * its directory entry, dir_sum, then header_sum; the records' sizes are
 * the directory's, so longer records of a newer minor are fixed too. */
static void fix2(uint8_t *seg, size_t size) {
    mhf_store_u64(seg + MHF2_SEG_FILE_SIZE, size);
    uint32_t n = mhf_load_u32(seg + MHF2_SEG_DIR_COUNT);
    uint32_t rsz = mhf_load_u32(seg + MHF2_SEG_DIR_RECSZ);
    uint64_t dir_off = mhf_load_u64(seg + MHF2_SEG_DIR_OFF);
    if (rsz >= MHF2_DIR_SIZE && n <= MHF2_MAX_SECTIONS &&
        array_inside(dir_off, n, rsz, size)) {
        uint8_t *dir = seg + dir_off;
        sect2 sl = find2(seg, size, dir, n, rsz, MHF_SECT_SLICES);
        sect2 ch = find2(seg, size, dir, n, rsz, MHF_SECT_CHUNKS);
        sect2 bl = find2(seg, size, dir, n, rsz, MHF_SECT_BLOCKS);
        if (bl.ok && bl.recsz >= MHF_BLOCK_SIZE)
            for (uint32_t i = 0; i < bl.count; i++) {
                uint8_t *b = seg + bl.off + (uint64_t)i * bl.recsz;
                uint64_t off = mhf_load_u64(b + MHF_BLOCK_OFFSET);
                uint32_t comp = mhf_load_u32(b + MHF_BLOCK_COMP_SIZE);
                if (inside(off, comp, size))
                    mhf_store_u64(b + MHF_BLOCK_SUM, mh_hash(seg + off, comp));
            }
        if (sl.ok && ch.ok && bl.ok && sl.recsz >= MHF_SLICE_SIZE)
            for (uint32_t i = 0; i < sl.count; i++) {
                uint8_t *s = seg + sl.off + (uint64_t)i * sl.recsz;
                uint64_t cf = mhf_load_u32(s + MHF_SLICE_CHUNK_FIRST);
                uint64_t cc = mhf_load_u32(s + MHF_SLICE_CHUNK_COUNT);
                uint64_t bf = mhf_load_u32(s + MHF_SLICE_BLOCK_FIRST);
                uint64_t bc = mhf_load_u32(s + MHF_SLICE_BLOCK_COUNT);
                if (cf + cc > ch.count || bf + bc > bl.count)
                    continue;
                uint64_t bsum = mh_hash(seg + bl.off + bf * bl.recsz, (size_t)(bc * bl.recsz));
                mhf_store_u64(s + MHF_SLICE_INDEX_SUM,
                              mh_hash_seeded(seg + ch.off + cf * ch.recsz,
                                             (size_t)(cc * ch.recsz), bsum));
            }
        for (uint32_t i = 0; i < n; i++) {
            uint8_t *e = dir + (uint64_t)i * rsz;
            uint64_t off = mhf_load_u64(e + MHF2_DIR_OFFSET);
            uint64_t len = mhf_load_u64(e + MHF2_DIR_BYTES);
            if (inside(off, len, size))
                mhf_store_u64(e + MHF2_DIR_SUM, mh_hash(seg + off, (size_t)len));
        }
        mhf_store_u64(seg + MHF2_SEG_DIR_SUM, mh_hash(dir, (size_t)n * rsz));
    }
    mhf_store_u64(seg + MHF_SEG_HEADER_SUM, mh_hash(seg, MHF_SEG_HEADER_SUM));
}

uint8_t *fuzz_segment_put_section(const uint8_t *seg, size_t size, uint32_t type,
                                  uint32_t flags, const uint8_t *bytes, size_t len,
                                  size_t *out_size) {
    FUZZ_ASSERT(size >= MHF_SEG_HEADER_SIZE && mhf_load_u16(seg + MHF_SEG_MAJOR) == 2);
    uint32_t n = mhf_load_u32(seg + MHF2_SEG_DIR_COUNT);
    uint32_t rsz = mhf_load_u32(seg + MHF2_SEG_DIR_RECSZ);
    uint64_t dir_off = mhf_load_u64(seg + MHF2_SEG_DIR_OFF);
    FUZZ_ASSERT(rsz >= MHF2_DIR_SIZE && n < MHF2_MAX_SECTIONS &&
                array_inside(dir_off, n, rsz, size));
    const uint8_t *dir = seg + dir_off;
    int found = 0;
    size_t total = MHF_SEG_HEADER_SIZE;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = dir + (uint64_t)i * rsz;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) == type && !found) {
            found = 1;
            total += len;
        } else {
            total += (size_t)mhf_load_u64(e + MHF2_DIR_BYTES);
        }
    }
    uint32_t nn = found ? n : n + 1;
    total += found ? 0 : len;
    size_t dir_new = total;
    total += (size_t)nn * rsz;
    uint8_t *out = fuzz_malloc(total);
    memset(out, 0, total);
    memcpy(out, seg, MHF_SEG_HEADER_SIZE);
    uint64_t at = MHF_SEG_HEADER_SIZE;
    uint8_t *nd = out + dir_new;
    int done = 0;
    for (uint32_t i = 0; i < nn; i++) {
        uint8_t *e = nd + (uint64_t)i * rsz;
        const uint8_t *src;
        uint64_t sz;
        if (i < n) {
            const uint8_t *o = dir + (uint64_t)i * rsz;
            memcpy(e, o, rsz);
            uint64_t ooff = mhf_load_u64(o + MHF2_DIR_OFFSET);
            sz = mhf_load_u64(o + MHF2_DIR_BYTES);
            FUZZ_ASSERT(inside(ooff, sz, size));
            src = seg + ooff;
            if (mhf_load_u32(o + MHF2_DIR_TYPE) == type && !done) {
                done = 1;
                src = bytes;
                sz = len;
                mhf_store_u32(e + MHF2_DIR_FLAGS, flags);
                uint32_t rs = mhf_load_u32(e + MHF2_DIR_RECSZ);
                mhf_store_u32(e + MHF2_DIR_RECCOUNT, rs ? (uint32_t)(len / rs) : 0);
            }
        } else { /* a section the segment did not have: last */
            mhf_store_u32(e + MHF2_DIR_TYPE, type);
            mhf_store_u32(e + MHF2_DIR_FLAGS, flags);
            src = bytes;
            sz = len;
        }
        mhf_store_u64(e + MHF2_DIR_OFFSET, at);
        mhf_store_u64(e + MHF2_DIR_BYTES, sz);
        if (sz)
            memcpy(out + at, src, (size_t)sz);
        at += sz;
    }
    mhf_store_u32(out + MHF2_SEG_DIR_COUNT, nn);
    mhf_store_u64(out + MHF2_SEG_DIR_OFF, dir_new);
    fuzz_segment_fix(out, total);
    *out_size = total;
    return out;
}

void fuzz_segment_fix(uint8_t *seg, size_t size) {
    if (size < MHF_SEG_HEADER_SIZE)
        return;
    if (mhf_load_u16(seg + MHF_SEG_MAJOR) != MHF1_VERSION_MAJOR) {
        fix2(seg, size);
        return;
    }
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
