/*
 * segment_read.c - maps a sealed segment file and validates it in the
 * fixed order of SPEC.md "Reading a segment", the same for 1.0 and 2.0
 * up to the version split:
 *   1. magic (MH_ENOTSTORE), size >= 256 (MH_ETRUNCATED)
 *   2. byte-order mark (MH_EVERSION)
 *   3. major 1 or 2 (MH_EVERSION)
 *   4. unknown incompatible flag bits, low 16 (MH_EVERSION)
 *   5. header checksum (MH_ECHECKSUM)
 *   6. minor <= known: flags (high 16) and reserved fields zero
 *      (MH_ECORRUPT)
 *   7. header_size: = 256 when minor <= known, >= 256 else (MH_ECORRUPT)
 *   8. file_size: larger than the file MH_ETRUNCATED, smaller MH_ECORRUPT
 *   9. rows_per_block 1..65536 (MH_ECORRUPT)
 *  1.0: 10. record sizes (MH_ECORRUPT; newer minor: MH_EVERSION),
 *       11. fixed sections back to back from 256 to file_size
 *  2.0: 10. dir_record_size by the size rule, dir_count <= 4096,
 *           dir_off >= 256 and dir_off + dir_count x dir_record_size =
 *           file_size (MH_ECORRUPT)
 *       11. dir_sum (MH_ECHECKSUM)
 *       12. each entry in order: reserved field and flag bits (minor <=
 *           known), offset = where the previous ended (first: 256), size
 *           inside dir_off, type: unknown and REQUIRED MH_EVERSION,
 *           unknown and not required skipped, known twice MH_ECORRUPT;
 *           known record arrays: record size by the size rule, count x
 *           record size = size; the last ends at dir_off
 *       13. types 1-5 present, each with REQUIRED (MH_ECORRUPT)
 *   then (both): dictionary checksum (MH_ECHECKSUM), dictionary
 *   (mh_dict_parse), its tables against the header (stream counts add up
 *   to count, stream and window ranges inside the segment's), slice array
 *   checksum (MH_ECHECKSUM), slice records.
 * A slice's chunk and block records are checked (checksum and invariants)
 * the first time a query touches the slice, so opening costs the same
 * whatever the number of accesses; chunk and block section sums and the
 * data section sum are fsck's (verify.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static void index_sections(mh_seg *s);

static int add_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (a > UINT64_MAX - b)
        return 0;
    *out = a + b;
    return 1;
}

static int mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (b && a > UINT64_MAX / b)
        return 0;
    *out = a * b;
    return 1;
}

void mh_seg_slice(const mh_seg *seg, uint32_t i, mh_slice *o) {
    const uint8_t *p = seg->slices + (size_t)i * seg->slice_recsz;
    o->t_first = mhf_load_u64(p + MHF_SLICE_T_FIRST);
    o->t_last = mhf_load_u64(p + MHF_SLICE_T_LAST);
    o->id_first = mhf_load_u64(p + MHF_SLICE_ID_FIRST);
    o->count = mhf_load_u32(p + MHF_SLICE_COUNT);
    o->chunk_first = mhf_load_u32(p + MHF_SLICE_CHUNK_FIRST);
    o->chunk_count = mhf_load_u32(p + MHF_SLICE_CHUNK_COUNT);
    o->block_first = mhf_load_u32(p + MHF_SLICE_BLOCK_FIRST);
    o->block_count = mhf_load_u32(p + MHF_SLICE_BLOCK_COUNT);
    for (unsigned k = 0; k < MHF_OP_COUNT; k++)
        o->op_counts[k] = mhf_load_u32(p + MHF_SLICE_OP_COUNTS + 4 * k);
    o->index_sum = mhf_load_u64(p + MHF_SLICE_INDEX_SUM);
    o->stream_mask = seg->major >= 2 ? mhf_load_u32(p + MHF2_SLICE_STREAM_MASK) : 1;
}

/* Steps 1-9 of the order above: what 1.0 and 2.0 share. */
static int parse_common(const uint8_t *b, size_t size, mh_seg *s,
                        uint64_t *file_size, mh_diag *d) {
    MH_CHECK(size >= 8 && memcmp(b, MHF_SEG_MAGIC, 8) == 0, MH_ENOTSTORE, d, 0,
             "not a memhist segment (bad magic)");
    MH_CHECK(size >= MHF_SEG_HEADER_SIZE, MH_ETRUNCATED, d, size,
             "segment is %zu bytes, shorter than its header", size);
    uint32_t bom = mhf_load_u32(b + MHF_SEG_BOM);
    MH_CHECK(bom == MHF_BYTE_ORDER_MARK, MH_EVERSION, d, MHF_SEG_BOM,
             "byte-order mark %08x: not a little-endian segment", bom);
    s->major = mhf_load_u16(b + MHF_SEG_MAJOR);
    s->minor = mhf_load_u16(b + MHF_SEG_MINOR);
    MH_CHECK(s->major == MHF_VERSION_MAJOR || s->major == MHF1_VERSION_MAJOR,
             MH_EVERSION, d, MHF_SEG_MAJOR,
             "segment format version %u.%u: this reader knows 1.x and %u.x",
             s->major, s->minor, MHF_VERSION_MAJOR);
    uint32_t flags = mhf_load_u32(b + MHF_SEG_FLAGS);
    MH_CHECK((flags & 0xffffu) == 0, MH_EVERSION, d, MHF_SEG_FLAGS,
             "segment uses unknown incompatible features %04x", flags & 0xffffu);
    if (MH_CHECKSUMS_ENFORCED) {
        uint64_t stored = mhf_load_u64(b + MHF_SEG_HEADER_SUM);
        uint64_t computed = mh_hash(b, MHF_SEG_HEADER_SUM);
        MH_CHECK(computed == stored, MH_ECHECKSUM, d, MHF_SEG_HEADER_SUM,
                 "segment header checksum mismatch: stored 0x%016llx, "
                 "computed 0x%016llx",
                 (unsigned long long)stored, (unsigned long long)computed);
    }
    s->header_sum = mhf_load_u64(b + MHF_SEG_HEADER_SUM);
    int strict = s->minor <= MHF_VERSION_MINOR;
    int v2 = s->major >= 2;
    if (strict) {
        MH_CHECK(flags == 0, MH_ECORRUPT, d, MHF_SEG_FLAGS,
                 "segment flags %08x not zero", flags);
        unsigned r0 = v2 ? MHF2_SEG_RESERVED0 : MHF_SEG_RESERVED0;
        unsigned r1 = v2 ? MHF2_SEG_RESERVED1 : MHF_SEG_RESERVED1;
        unsigned r1n = v2 ? MHF2_SEG_RESERVED1_SIZE : MHF_SEG_RESERVED1_SIZE;
        MH_CHECK(mhf_load_u32(b + r0) == 0, MH_ECORRUPT, d, r0,
                 "reserved header field not zero");
        for (unsigned i = 0; i < r1n; i++)
            MH_CHECK(b[r1 + i] == 0, MH_ECORRUPT, d, r1 + i,
                     "reserved header byte not zero");
    }
    uint32_t hsize = mhf_load_u32(b + MHF_SEG_HEADER_SIZE_OFF);
    /* 1.0 wanted exactly 256 whatever the minor; 2.0 has the size rule,
     * though a longer header would still hold its checksum at 248 */
    MH_CHECK(hsize == MHF_SEG_HEADER_SIZE ||
                 (v2 && !strict && hsize > MHF_SEG_HEADER_SIZE),
             MH_ECORRUPT, d, MHF_SEG_HEADER_SIZE_OFF, "header size is %u, not 256",
             hsize);
    *file_size = mhf_load_u64(b + (v2 ? MHF2_SEG_FILE_SIZE : MHF_SEG_FILE_SIZE));
    MH_CHECK(size >= *file_size, MH_ETRUNCATED, d, size,
             "segment is %zu bytes, its header announces %llu", size,
             (unsigned long long)*file_size);
    MH_CHECK(size == *file_size, MH_ECORRUPT, d, *file_size,
             "%llu bytes of trailing garbage after the segment",
             (unsigned long long)(size - *file_size));
    s->seq = mhf_load_u64(b + MHF_SEG_SEQ);
    s->id_first = mhf_load_u64(b + MHF_SEG_ID_FIRST);
    s->count = mhf_load_u64(b + MHF_SEG_COUNT);
    s->t_first = mhf_load_u64(b + MHF_SEG_T_FIRST);
    s->t_last = mhf_load_u64(b + MHF_SEG_T_LAST);
    for (unsigned k = 0; k < MHF_OP_COUNT; k++)
        s->op_counts[k] = mhf_load_u64(b + MHF_SEG_OP_COUNTS + 8 * k);
    s->rows_per_block = mhf_load_u32(b + MHF_SEG_ROWS_PER_BLOCK);
    MH_CHECK(s->rows_per_block >= 1 &&
                 s->rows_per_block <= MHF_MAX_ROWS_PER_BLOCK,
             MH_ECORRUPT, d, MHF_SEG_ROWS_PER_BLOCK, "rows per block %u",
             s->rows_per_block);
    return MH_OK;
}

static int parse_header1(const uint8_t *b, mh_seg *s, uint64_t file_size,
                         mh_diag *d) {
    int strict = s->minor <= MHF_VERSION_MINOR;
    s->data_off = mhf_load_u64(b + MHF_SEG_DATA_OFF);
    s->data_size = mhf_load_u64(b + MHF_SEG_DATA_SIZE);
    s->dict_off = mhf_load_u64(b + MHF_SEG_DICT_OFF);
    s->dict_size = mhf_load_u64(b + MHF_SEG_DICT_SIZE);
    s->slice_off = mhf_load_u64(b + MHF_SEG_SLICE_OFF);
    s->nslices = mhf_load_u32(b + MHF_SEG_SLICE_COUNT);
    s->slice_recsz = mhf_load_u32(b + MHF_SEG_SLICE_RECSZ);
    s->chunk_off = mhf_load_u64(b + MHF_SEG_CHUNK_OFF);
    s->nchunks = mhf_load_u32(b + MHF_SEG_CHUNK_COUNT);
    s->chunk_recsz = mhf_load_u32(b + MHF_SEG_CHUNK_RECSZ);
    s->block_off = mhf_load_u64(b + MHF_SEG_BLOCK_OFF);
    s->nblocks = mhf_load_u32(b + MHF_SEG_BLOCK_COUNT);
    s->block_recsz = mhf_load_u32(b + MHF_SEG_BLOCK_RECSZ);
    s->raw_size = mhf_load_u64(b + MHF_SEG_RAW_SIZE);
    s->dict_sum = mhf_load_u64(b + MHF_SEG_DICT_SUM);
    s->slice_sum = mhf_load_u64(b + MHF_SEG_SLICE_SUM);
    s->chunk_sum = mhf_load_u64(b + MHF_SEG_CHUNK_SUM);
    s->block_sum = mhf_load_u64(b + MHF_SEG_BLOCK_SUM);
    MH_CHECK(s->slice_recsz == MHF_SLICE_SIZE && s->chunk_recsz == MHF_CHUNK_SIZE &&
                 s->block_recsz == MHF_BLOCK_SIZE,
             strict ? MH_ECORRUPT : MH_EVERSION, d, MHF_SEG_SLICE_RECSZ,
             "index record sizes %u/%u/%u", s->slice_recsz, s->chunk_recsz,
             s->block_recsz);
    /* the sections follow each other with no gap, in this order */
    uint64_t end, len;
    MH_CHECK(s->data_off == MHF_SEG_HEADER_SIZE, MH_ECORRUPT, d,
             MHF_SEG_DATA_OFF, "data section does not follow the header");
    MH_CHECK(add_ok(s->data_off, s->data_size, &end) && end == s->dict_off,
             MH_ECORRUPT, d, MHF_SEG_DATA_SIZE,
             "dictionary does not follow the data section");
    MH_CHECK(add_ok(s->dict_off, s->dict_size, &end) && end == s->slice_off,
             MH_ECORRUPT, d, MHF_SEG_DICT_SIZE,
             "slice array does not follow the dictionary");
    MH_CHECK(mul_ok(s->nslices, s->slice_recsz, &len) &&
                 add_ok(s->slice_off, len, &end) && end == s->chunk_off,
             MH_ECORRUPT, d, MHF_SEG_SLICE_COUNT,
             "chunk array does not follow the slice array");
    MH_CHECK(mul_ok(s->nchunks, s->chunk_recsz, &len) &&
                 add_ok(s->chunk_off, len, &end) && end == s->block_off,
             MH_ECORRUPT, d, MHF_SEG_CHUNK_COUNT,
             "block array does not follow the chunk array");
    MH_CHECK(mul_ok(s->nblocks, s->block_recsz, &len) &&
                 add_ok(s->block_off, len, &end) && end == file_size,
             MH_ECORRUPT, d, MHF_SEG_BLOCK_COUNT,
             "block array does not end at the end of the file");
    return MH_OK;
}

/* The record size a known section's entries must have (0: not records). */
static uint32_t section_recsz(uint32_t type) {
    switch (type) {
    case MHF_SECT_SLICES:
        return MHF2_SLICE_SIZE;
    case MHF_SECT_CHUNKS:
        return MHF_CHUNK_SIZE;
    case MHF_SECT_BLOCKS:
        return MHF_BLOCK_SIZE;
    default:
        return 0;
    }
}

static int parse_header2(const uint8_t *b, mh_seg *s, uint64_t file_size,
                         mh_diag *d) {
    int strict = s->minor <= MHF_VERSION_MINOR;
    uint32_t n = mhf_load_u32(b + MHF2_SEG_DIR_COUNT);
    uint64_t dir_off = mhf_load_u64(b + MHF2_SEG_DIR_OFF);
    uint32_t recsz = mhf_load_u32(b + MHF2_SEG_DIR_RECSZ);
    s->raw_size = mhf_load_u64(b + MHF2_SEG_RAW_SIZE);
    MH_CHECK(strict ? recsz == MHF2_DIR_SIZE : recsz >= MHF2_DIR_SIZE,
             MH_ECORRUPT, d, MHF2_SEG_DIR_RECSZ,
             "directory record size %u, this reader knows %u", recsz,
             MHF2_DIR_SIZE);
    MH_CHECK(n <= MHF2_MAX_SECTIONS, MH_ECORRUPT, d, MHF2_SEG_DIR_COUNT,
             "%u directory entries (at most %u)", n, MHF2_MAX_SECTIONS);
    uint64_t len = (uint64_t)n * recsz, end;
    MH_CHECK(dir_off >= MHF_SEG_HEADER_SIZE && add_ok(dir_off, len, &end) &&
                 end == file_size,
             MH_ECORRUPT, d, MHF2_SEG_DIR_OFF,
             "directory (%u entries at byte %llu) does not end the file", n,
             (unsigned long long)dir_off);
    const uint8_t *dir = b + dir_off;
    if (MH_CHECKSUMS_ENFORCED) {
        uint64_t stored = mhf_load_u64(b + MHF2_SEG_DIR_SUM);
        uint64_t computed = mh_seg_hash_whole(s, dir, (size_t)len);
        MH_CHECK(computed == stored, MH_ECHECKSUM, d, MHF2_SEG_DIR_SUM,
                 "directory checksum mismatch: stored 0x%016llx, computed "
                 "0x%016llx",
                 (unsigned long long)stored, (unsigned long long)computed);
    }
    s->sections = calloc(n ? n : 1, sizeof *s->sections);
    if (!s->sections)
        MH_FAIL(MH_ENOMEM, d, 0, "out of memory for %u directory entries", n);
    uint64_t at = MHF_SEG_HEADER_SIZE;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = dir + (size_t)i * recsz;
        uint64_t eo = dir_off + (uint64_t)i * recsz;
        mh_section x;
        x.type = mhf_load_u32(e + MHF2_DIR_TYPE);
        x.flags = mhf_load_u32(e + MHF2_DIR_FLAGS);
        x.offset = mhf_load_u64(e + MHF2_DIR_OFFSET);
        x.size = mhf_load_u64(e + MHF2_DIR_BYTES);
        x.recsz = mhf_load_u32(e + MHF2_DIR_RECSZ);
        x.count = mhf_load_u32(e + MHF2_DIR_RECCOUNT);
        x.sum = mhf_load_u64(e + MHF2_DIR_SUM);
        if (strict) {
            MH_CHECK(mhf_load_u64(e + MHF2_DIR_RESERVED) == 0, MH_ECORRUPT, d,
                     eo + MHF2_DIR_RESERVED,
                     "directory entry %u: reserved field not zero", i);
            MH_CHECK((x.flags & ~MHF_SECT_REQUIRED) == 0, MH_ECORRUPT, d,
                     eo + MHF2_DIR_FLAGS,
                     "directory entry %u: reserved flag bits %08x", i, x.flags);
        }
        MH_CHECK(x.offset == at, MH_ECORRUPT, d, eo + MHF2_DIR_OFFSET,
                 "directory entry %u: section at byte %llu, expected %llu "
                 "(sections tile the file)", i, (unsigned long long)x.offset,
                 (unsigned long long)at);
        MH_CHECK(add_ok(x.offset, x.size, &end) && end <= dir_off, MH_ECORRUPT,
                 d, eo + MHF2_DIR_BYTES,
                 "directory entry %u: section runs past the directory", i);
        at = end;
        /* types 1-6, 9 (the fine summary) from 2.1 on, 10 (the address
         * postings) from 2.2 on, 11 (the span address set) from 2.3 on
         * 12 (the piece sums) from 2.4 on, 13 (the id transitions)
         * from 2.5 on, 14 from 2.6 on, 15 (the stream postings) from
         * 2.7 on and 16 and 17 (the span stream address set, the stream
         * id runs) from 2.8 on appear once */
        if ((x.type >= MHF_SECT_DATA && x.type <= MHF_SECT_SUMMARY) ||
            (x.type == MHF_SECT_SUMMARY_FINE && s->major == 2 && s->minor >= 1) ||
            (x.type == MHF_SECT_APOST && s->major == 2 && s->minor >= 2) ||
            (x.type == MHF_SECT_SPAN && s->major == 2 && s->minor >= 3) ||
            (x.type == MHF_SECT_PSUM && s->major == 2 && s->minor >= 4) ||
            (x.type == MHF_SECT_IDTIME && s->major == 2 && s->minor >= 5) ||
            (x.type == MHF_SECT_APOSTW && s->major == 2 && s->minor >= 6) ||
            (x.type == MHF_SECT_SPOST && s->major == 2 && s->minor >= 7) ||
            (x.type == MHF_SECT_SSPAN && s->major == 2 && s->minor >= 8) ||
            (x.type == MHF_SECT_SRUNS && s->major == 2 && s->minor >= 8)) {
            MH_CHECK(!(seen >> x.type & 1u), MH_ECORRUPT, d, eo,
                     "directory entry %u: section type %u appears twice", i,
                     x.type);
            seen |= 1u << x.type;
            uint32_t want = section_recsz(x.type);
            if (want) {
                MH_CHECK(strict ? x.recsz == want : x.recsz >= want,
                         MH_ECORRUPT, d, eo + MHF2_DIR_RECSZ,
                         "section type %u: record size %u, this reader knows %u",
                         x.type, x.recsz, want);
                MH_CHECK((uint64_t)x.recsz * x.count == x.size, MH_ECORRUPT, d,
                         eo + MHF2_DIR_BYTES,
                         "section type %u: %u records of %u bytes in %llu bytes",
                         x.type, x.count, x.recsz, (unsigned long long)x.size);
            } else if (strict) {
                MH_CHECK(x.recsz == 0 && x.count == 0, MH_ECORRUPT, d,
                         eo + MHF2_DIR_RECSZ,
                         "section type %u is not a record array", x.type);
            }
            if (x.type <= MHF_SECT_BLOCKS)
                MH_CHECK(x.flags & MHF_SECT_REQUIRED, MH_ECORRUPT, d,
                         eo + MHF2_DIR_FLAGS,
                         "section type %u is not marked required", x.type);
        } else {
            MH_CHECK(!(x.flags & MHF_SECT_REQUIRED), MH_EVERSION, d, eo,
                     "section type %u is required and unknown to this reader",
                     x.type);
        }
        s->sections[s->nsections++] = x;
    }
    MH_CHECK(at == dir_off, MH_ECORRUPT, d, MHF2_SEG_DIR_OFF,
             "sections end at byte %llu, the directory starts at %llu",
             (unsigned long long)at, (unsigned long long)dir_off);
    for (uint32_t t = MHF_SECT_DATA; t <= MHF_SECT_BLOCKS; t++)
        MH_CHECK(seen >> t & 1u, MH_ECORRUPT, d, MHF2_SEG_DIR_COUNT,
                 "the directory lacks section type %u", t);
    /* the address postings are one section or the other (§9d, 2.6) */
    MH_CHECK(!(seen >> MHF_SECT_APOST & 1u) || !(seen >> MHF_SECT_APOSTW & 1u),
             MH_ECORRUPT, d, MHF2_SEG_DIR_COUNT,
             "the directory has both section types %u and %u", MHF_SECT_APOST,
             MHF_SECT_APOSTW);
    index_sections(s);
    /* types 1-5 are present (checked above) */
    const mh_section *x = NULL;
    mh_seg_section(s, MHF_SECT_DATA, &x);
    s->data_off = x->offset;
    s->data_size = x->size;
    mh_seg_section(s, MHF_SECT_DICT, &x);
    s->dict_off = x->offset;
    s->dict_size = x->size;
    s->dict_sum = x->sum;
    mh_seg_section(s, MHF_SECT_SLICES, &x);
    s->slice_off = x->offset;
    s->nslices = x->count;
    s->slice_recsz = x->recsz;
    s->slice_sum = x->sum;
    mh_seg_section(s, MHF_SECT_CHUNKS, &x);
    s->chunk_off = x->offset;
    s->nchunks = x->count;
    s->chunk_recsz = x->recsz;
    s->chunk_sum = x->sum;
    mh_seg_section(s, MHF_SECT_BLOCKS, &x);
    s->block_off = x->offset;
    s->nblocks = x->count;
    s->block_recsz = x->recsz;
    s->block_sum = x->sum;
    return MH_OK;
}

static int parse_slices(mh_seg *s, mh_diag *d) {
    uint64_t id = s->id_first, t_prev = 0;
    uint64_t ops[MHF_OP_COUNT] = {0};
    uint32_t chunks = 0, blocks = 0;
    for (uint32_t i = 0; i < s->nslices; i++) {
        mh_slice sl;
        mh_seg_slice(s, i, &sl);
        uint64_t off = s->slice_off + (uint64_t)i * s->slice_recsz;
        MH_CHECK(sl.count >= 1 && sl.count <= MHF_MAX_SLICE_ROWS, MH_ECORRUPT,
                 d, off + MHF_SLICE_COUNT, "slice %u: %u accesses", i, sl.count);
        MH_CHECK(sl.id_first == id, MH_ECORRUPT, d, off + MHF_SLICE_ID_FIRST,
                 "slice %u: first id %llu, expected %llu", i,
                 (unsigned long long)sl.id_first, (unsigned long long)id);
        MH_CHECK(sl.t_first <= sl.t_last && (i == 0 || sl.t_first >= t_prev),
                 MH_ECORRUPT, d, off + MHF_SLICE_T_FIRST,
                 "slice %u: transition range out of order", i);
        MH_CHECK(sl.chunk_first == chunks && sl.chunk_count >= 1 &&
                     sl.chunk_count <= sl.count &&
                     sl.chunk_count <= s->nchunks - chunks,
                 MH_ECORRUPT, d, off + MHF_SLICE_CHUNK_FIRST,
                 "slice %u: chunk range out of bounds", i);
        uint32_t nb = sl.count / s->rows_per_block +
                      (sl.count % s->rows_per_block != 0);
        MH_CHECK(sl.block_first == blocks && sl.block_count == nb &&
                     nb <= s->nblocks - blocks,
                 MH_ECORRUPT, d, off + MHF_SLICE_BLOCK_FIRST,
                 "slice %u: block range out of bounds", i);
        uint64_t sum = 0;
        for (unsigned k = 0; k < MHF_OP_COUNT; k++) {
            sum += sl.op_counts[k];
            ops[k] += sl.op_counts[k];
        }
        MH_CHECK(sum == sl.count, MH_ECORRUPT, d, off + MHF_SLICE_OP_COUNTS,
                 "slice %u: operation counts do not add up", i);
        if (s->major >= 2) {
            const uint8_t *p = s->slices + (size_t)i * s->slice_recsz;
            MH_CHECK(s->minor > MHF_VERSION_MINOR ||
                         mhf_load_u32(p + MHF2_SLICE_RESERVED) == 0,
                     MH_ECORRUPT, d, off + MHF2_SLICE_RESERVED,
                     "slice %u: reserved field not zero", i);
            MH_CHECK(sl.stream_mask != 0 &&
                         (s->dict.has_stream_col || sl.stream_mask == 1),
                     MH_ECORRUPT, d, off + MHF2_SLICE_STREAM_MASK,
                     "slice %u: stream mask %08x impossible", i, sl.stream_mask);
        }
        if (i == 0)
            MH_CHECK(sl.t_first == s->t_first, MH_ECORRUPT, d,
                     off + MHF_SLICE_T_FIRST,
                     "slice 0 does not start at the segment's first transition");
        id += sl.count;
        t_prev = sl.t_last;
        chunks += sl.chunk_count;
        blocks += nb;
    }
    MH_CHECK(id - s->id_first == s->count, MH_ECORRUPT, d, MHF_SEG_COUNT,
             "slices hold %llu accesses, header says %llu",
             (unsigned long long)(id - s->id_first),
             (unsigned long long)s->count);
    MH_CHECK(chunks == s->nchunks && blocks == s->nblocks, MH_ECORRUPT, d,
             MHF_SEG_CHUNK_COUNT, "slices do not cover the chunk and block arrays");
    if (s->nslices)
        MH_CHECK(t_prev == s->t_last, MH_ECORRUPT, d, MHF_SEG_T_LAST,
                 "last slice does not end at the segment's last transition");
    else
        MH_CHECK(s->t_first == 0 && s->t_last == 0, MH_ECORRUPT, d,
                 MHF_SEG_T_FIRST, "empty segment with a transition range");
    for (unsigned k = 0; k < MHF_OP_COUNT; k++)
        MH_CHECK(ops[k] == s->op_counts[k], MH_ECORRUPT, d,
                 MHF_SEG_OP_COUNTS + 8 * k,
                 "operation %u count differs from its slices", k);
    MH_CHECK(s->count <= UINT64_MAX - s->id_first, MH_ECORRUPT, d,
             MHF_SEG_COUNT, "id range overflows");
    return MH_OK;
}

/* A 1.0 segment's fixed sections as a directory, so that every user sees
 * one shape whatever the version. */
static int synth_directory(mh_seg *s, mh_diag *d) {
    mh_section k[5] = {
        {MHF_SECT_DATA, MHF_SECT_REQUIRED, s->data_off, s->data_size, 0, 0, 0},
        {MHF_SECT_DICT, MHF_SECT_REQUIRED, s->dict_off, s->dict_size, 0, 0,
         s->dict_sum},
        {MHF_SECT_SLICES, MHF_SECT_REQUIRED, s->slice_off,
         (uint64_t)s->nslices * s->slice_recsz, s->slice_recsz, s->nslices,
         s->slice_sum},
        {MHF_SECT_CHUNKS, MHF_SECT_REQUIRED, s->chunk_off,
         (uint64_t)s->nchunks * s->chunk_recsz, s->chunk_recsz, s->nchunks,
         s->chunk_sum},
        {MHF_SECT_BLOCKS, MHF_SECT_REQUIRED, s->block_off,
         (uint64_t)s->nblocks * s->block_recsz, s->block_recsz, s->nblocks,
         s->block_sum},
    };
    s->sections = malloc(sizeof k);
    if (!s->sections)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
    memcpy(s->sections, k, sizeof k);
    s->nsections = 5;
    index_sections(s);
    return MH_OK;
}

/* One stream, 0, holding every access: what a segment without a streams
 * table means (1.0, and 2.0 segments written without declared streams). */
static int synth_streams(mh_seg *s, mh_diag *d) {
    mh_dict *dc = &s->dict;
    dc->streams = calloc(1, sizeof *dc->streams);
    if (!dc->streams)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
    mh_dict_stream *x = &dc->streams[0];
    x->id = 0;
    x->kind = MH_STREAM_OTHER;
    x->parent = MH_NONE32;
    x->pid = x->tid = MH_NONE64;
    x->cpu = MH_NONE32;
    x->count = s->count;
    x->t_first = s->t_first;
    x->t_last = s->t_last;
    dc->nstreams = 1;
    dc->has_stream_table = 0;
    return MH_OK;
}

int mh_section_defined(uint16_t major, uint16_t minor, uint32_t type) {
    /* the minor of major 2 that defines each type */
    static const uint8_t since[] = {0xff, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8};
    if (type < 1 || type >= sizeof since)
        return 0;
    return major < 2 ? type <= MHF_SECT_SUMMARY : minor >= since[type];
}

/* sect_at, once the directory is final */
static void index_sections(mh_seg *s) {
    memset(s->sect_at, 0, sizeof s->sect_at);
    /* a directory of more than 255 entries is scanned (sect_at holds
     * index + 1 in a byte) */
    s->sect_indexed = s->nsections <= 255;
    if (!s->sect_indexed)
        return;
    for (uint32_t i = s->nsections; i-- > 0;) {
        uint32_t t = s->sections[i].type;
        if (t < sizeof s->sect_at)
            s->sect_at[t] = (uint8_t)(i + 1);
    }
}

int mh_seg_section(const mh_seg *seg, uint32_t type, const mh_section **out) {
    if (seg->sect_indexed && type < sizeof seg->sect_at) {
        uint8_t k = seg->sect_at[type];
        if (!k)
            return MH_ENOTFOUND;
        *out = &seg->sections[k - 1];
        return MH_OK;
    }
    for (uint32_t i = 0; i < seg->nsections; i++)
        if (seg->sections[i].type == type) {
            *out = &seg->sections[i];
            return MH_OK;
        }
    return MH_ENOTFOUND;
}

/* The dictionary's tables against the header: the streams' counts add up
 * to the segment's, their and the windows' ranges lie inside it. */
static int check_dict_tables(const mh_seg *s, mh_diag *d) {
    const mh_dict *dc = &s->dict;
    uint64_t total = 0;
    for (size_t i = 0; i < dc->nstreams; i++) {
        const mh_dict_stream *x = &dc->streams[i];
        MH_CHECK(x->count <= s->count - total, MH_ECORRUPT, d, s->dict_off,
                 "stream %u: %llu accesses, more than the segment's", x->id,
                 (unsigned long long)x->count);
        total += x->count;
        MH_CHECK(x->count == 0 ||
                     (x->t_first >= s->t_first && x->t_last <= s->t_last),
                 MH_ECORRUPT, d, s->dict_off,
                 "stream %u: transition range outside the segment's", x->id);
        MH_CHECK(x->id == 0 || s->dict.has_stream_col || x->count == 0,
                 MH_ECORRUPT, d, s->dict_off,
                 "stream %u has accesses but the segment stores no stream "
                 "column", x->id);
    }
    if (dc->has_stream_table)
        MH_CHECK(total == s->count, MH_ECORRUPT, d, s->dict_off,
                 "streams hold %llu accesses, the segment %llu",
                 (unsigned long long)total, (unsigned long long)s->count);
    for (size_t i = 0; i < dc->nwindows; i++) {
        const mh_window_part *w = &dc->windows[i];
        MH_CHECK(w->id_first >= s->id_first &&
                     w->id_first - s->id_first <= s->count &&
                     w->count <= s->count - (w->id_first - s->id_first),
                 MH_ECORRUPT, d, s->dict_off,
                 "window %llu: ids outside the segment's",
                 (unsigned long long)w->window);
        MH_CHECK(w->count == 0 ||
                     (w->t_first >= s->t_first && w->t_last <= s->t_last),
                 MH_ECORRUPT, d, s->dict_off,
                 "window %llu: transition range outside the segment's",
                 (unsigned long long)w->window);
    }
    return MH_OK;
}

static int seg_parse(const uint8_t *buf, size_t size, mh_seg *s, mh_diag *d) {
    uint64_t file_size = 0;
    MH_TRY(parse_common(buf, size, s, &file_size, d));
    if (s->major >= 2)
        MH_TRY(parse_header2(buf, s, file_size, d));
    else
        MH_TRY(parse_header1(buf, s, file_size, d));
    s->base = buf;
    s->size = size;
    const uint8_t *dict = buf + s->dict_off;
    if (MH_CHECKSUMS_ENFORCED) {
        uint64_t computed = mh_seg_hash_whole(s, dict, s->dict_size);
        MH_CHECK(computed == s->dict_sum, MH_ECHECKSUM, d, s->dict_off,
                 "dictionary checksum mismatch: stored 0x%016llx, computed "
                 "0x%016llx",
                 (unsigned long long)s->dict_sum, (unsigned long long)computed);
    }
    MH_TRY(mh_dict_parse(dict, s->dict_size, s->dict_off, s->major, s->minor,
                         &s->dict, d));
    if (s->dict.nstreams == 0)
        MH_TRY(synth_streams(s, d));
    MH_TRY(check_dict_tables(s, d));
    s->slices = buf + s->slice_off;
    s->chunks = buf + s->chunk_off;
    s->blocks = buf + s->block_off;
    if (MH_CHECKSUMS_ENFORCED) {
        uint64_t computed =
            mh_seg_hash_whole(s, s->slices, (size_t)s->nslices * s->slice_recsz);
        MH_CHECK(computed == s->slice_sum, MH_ECHECKSUM, d, s->slice_off,
                 "slice array checksum mismatch: stored 0x%016llx, "
                 "computed 0x%016llx",
                 (unsigned long long)s->slice_sum, (unsigned long long)computed);
    }
    MH_TRY(parse_slices(s, d));
    s->slice_ok = calloc(s->nslices ? s->nslices : 1, 1);
    if (!s->slice_ok)
        MH_FAIL(MH_ENOMEM, d, 0, "out of memory");
    if (!s->sections)
        MH_TRY(synth_directory(s, d));
    return MH_OK;
}

int mh_seg_parse(const uint8_t *buf, size_t size, mh_seg *s, mh_diag *d) {
    int rc = seg_parse(buf, size, s, d);
    if (rc != MH_OK) {
        mh_dict_free(&s->dict);
        free(s->sections);
        s->sections = NULL;
        s->nsections = 0;
        free((void *)s->slice_ok);
        s->slice_ok = NULL;
    }
    return rc;
}

void mh_seg_willneed(const mh_seg *s, const void *p, size_t n) {
    (void)s; /* a buffer that is not a mapping takes the advice as a no-op */
    if (n == 0)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(page - 1), e = (uintptr_t)p + n;
    /* within two pages the reads themselves fault at most twice: a system
     * call of its own costs as much (fsck made ~190 a flipped 72 KB store
     * in the corruption test, half its system time) */
    if (e - a <= 2 * page)
        return;
    (void)madvise((void *)a, e - a, MADV_WILLNEED); /* advice: failure is harmless */
}

uint64_t mh_seg_hash_whole(const mh_seg *s, const void *p, size_t n) {
    mh_seg_willneed(s, p, n);
    return mh_hash(p, n);
}

int mh_seg_section_sum(const mh_seg *s, const mh_section *sec, const char *what,
                       mh_diag *d) {
    if (!MH_CHECKSUMS_ENFORCED)
        return MH_OK;
    uint64_t sum = mh_seg_hash_whole(s, s->base + sec->offset, (size_t)sec->size);
    MH_CHECK(sum == sec->sum, MH_ECHECKSUM, d, sec->offset,
             "%s at byte %llu: checksum mismatch: stored 0x%016llx, computed "
             "0x%016llx", what, (unsigned long long)sec->offset,
             (unsigned long long)sec->sum, (unsigned long long)sum);
    return MH_OK;
}

void mh_seg_advise_sequential(const mh_seg *s) {
    if (s->mapped)
        (void)madvise((void *)s->base, s->size, MADV_SEQUENTIAL);
}

void mh_seg_release_pages(const mh_seg *s) {
    if (s->mapped && s->size >= ((size_t)1 << 20))
        (void)madvise((void *)s->base, s->size, MADV_DONTNEED); /* advice */
}

int mh_seg_open(const char *dir, const char *name, mh_seg *s, mh_diag *d) {
    memset(s, 0, sizeof *s);
    char *path = mh_path_join(dir, name);
    if (!path)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        /* a missing file is the caller's to judge (reader, fsck): the
         * code stays MH_EIO with errno ENOENT */
        mh_diag_os(d, MH_EIO, "cannot open", path);
        free(path);
        return MH_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        mh_diag_os(d, MH_EIO, "cannot stat", path);
        close(fd);
        free(path);
        return MH_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        free(path);
        return mh_diag_fail(d, MH_EIO, 0, "%s is not a regular file", name);
    }
    size_t size = (size_t)st.st_size;
    if (size < MHF_SEG_HEADER_SIZE) {
        close(fd);
        free(path);
        return mh_diag_fail(d, MH_ETRUNCATED, size,
                            "%s is %zu bytes, shorter than a header", name, size);
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        int rc = errno == ENOMEM ? MH_ENOMEM : MH_EIO;
        mh_diag_os(d, rc, "cannot map", path);
        close(fd);
        free(path);
        return rc;
    }
    close(fd);
    free(path);
    /* no read-around (see mh_seg_willneed in internal.h); advice, so a
     * refusal changes nothing but speed */
    (void)madvise(map, size, MADV_RANDOM);
    int rc = mh_seg_parse(map, size, s, d);
    if (rc != MH_OK) {
        munmap(map, size);
        memset(s, 0, sizeof *s);
        return rc;
    }
    s->mapped = 1;
    memcpy(s->name, name, strnlen(name, MHF_SEGMENT_NAME_LEN));
    return MH_OK;
}

void mh_seg_close(mh_seg *s) {
    if (!s)
        return;
    if (s->mapped && s->base)
        munmap((void *)s->base, s->size);
    mh_dict_free(&s->dict);
    free((void *)s->slice_ok);
    free((void *)atomic_load(&s->apost_run_ok));
    free((void *)atomic_load(&s->apost_top));
    free((void *)atomic_load(&s->slice_memo));
    free((void *)atomic_load(&s->idmap_grp_ok));
    free((void *)atomic_load(&s->idtime_grp_ok));
    mh_marks_free(atomic_load(&s->aset_marks));
    mh_marks_free(atomic_load(&s->apost_marks));
    free((void *)atomic_load(&s->block_ok));
    free((void *)atomic_load(&s->summary_post_ok[0]));
    free((void *)atomic_load(&s->summary_post_ok[1]));
    free((void *)atomic_load(&s->aset_run_ok));
    free((void *)atomic_load(&s->span_run_ok));
    free(atomic_load(&s->psum));
    free(s->sections);
    memset(s, 0, sizeof *s);
}

static void load_block(const mh_seg *seg, uint32_t k, mh_block *b) {
    const uint8_t *p = seg->blocks + (size_t)k * seg->block_recsz;
    b->offset = mhf_load_u64(p + MHF_BLOCK_OFFSET);
    b->comp_size = mhf_load_u32(p + MHF_BLOCK_COMP_SIZE);
    b->raw_size = mhf_load_u32(p + MHF_BLOCK_RAW_SIZE);
    b->sum = mhf_load_u64(p + MHF_BLOCK_SUM);
    b->phy_min = mhf_load_u64(p + MHF_BLOCK_PHY_MIN);
    b->phy_max = mhf_load_u64(p + MHF_BLOCK_PHY_MAX);
    b->first_t = mhf_load_u64(p + MHF_BLOCK_FIRST_T);
    b->first_id = mhf_load_u32(p + MHF_BLOCK_FIRST_ID);
    b->stream_mask = seg->major >= 2 ? mhf_load_u32(p + MHF2_BLOCK_STREAM_MASK) : 1;
}

uint32_t mh_seg_slice_of_block(const mh_seg *seg, uint32_t block) {
    /* slices tile the block array in order (checked when parsed) */
    uint32_t lo = 0, hi = seg->nslices;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        mh_slice s;
        mh_seg_slice(seg, mid, &s);
        if (s.block_first <= block)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint32_t mh_slice_block_rows(const mh_seg *seg, const mh_slice *s, uint32_t b) {
    uint64_t r0 = (uint64_t)b * seg->rows_per_block;
    uint64_t left = s->count - r0;
    return left < seg->rows_per_block ? (uint32_t)left : seg->rows_per_block;
}

static int check_slice_records(const mh_seg *seg, uint32_t si,
                               const mh_slice *s, mh_diag *d) {
    uint32_t rows = 0, op_rows[MHF_OP_COUNT] = {0};
    uint32_t cmask = 0, bmask = 0;
    int strict = seg->minor <= MHF_VERSION_MINOR, v2 = seg->major >= 2;
    uint64_t soff = seg->slice_off + (uint64_t)si * seg->slice_recsz;
    mh_chunk prev = {0};
    for (uint32_t k = 0; k < s->chunk_count; k++) {
        mh_chunk c;
        uint32_t idx = s->chunk_first + k;
        uint64_t off = seg->chunk_off + (uint64_t)idx * seg->chunk_recsz;
        mh_seg_chunk_load(seg, idx, &c);
        const uint8_t *p = seg->chunks + (size_t)idx * seg->chunk_recsz;
        for (unsigned r = 0; strict && r < (v2 ? 3u : 7u); r++)
            MH_CHECK(p[MHF_CHUNK_RESERVED + r] == 0, MH_ECORRUPT, d,
                     off + MHF_CHUNK_RESERVED + r,
                     "chunk %u: reserved byte not zero", idx);
        MH_CHECK(c.stream_mask != 0 && (c.stream_mask & ~s->stream_mask) == 0,
                 MH_ECORRUPT, d, off + MHF2_CHUNK_STREAM_MASK,
                 "chunk %u: stream mask %08x not inside its slice's %08x", idx,
                 c.stream_mask, s->stream_mask);
        cmask |= c.stream_mask;
        MH_CHECK(c.op < MHF_OP_COUNT, MH_ECORRUPT, d, off + MHF_CHUNK_OP,
                 "chunk %u: unknown operation %u", idx, c.op);
        MH_CHECK(c.phy_first <= c.phy_last, MH_ECORRUPT, d,
                 off + MHF_CHUNK_PHY_FIRST, "chunk %u: empty address range", idx);
        MH_CHECK(s->t_first <= c.t_first && c.t_first <= c.t_last &&
                     c.t_last <= s->t_last,
                 MH_ECORRUPT, d, off + MHF_CHUNK_T_FIRST,
                 "chunk %u: transition range outside its slice (slice %u)", idx,
                 si);
        MH_CHECK(c.id_first <= c.id_last && c.id_last < s->count, MH_ECORRUPT,
                 d, off + MHF_CHUNK_ID_FIRST, "chunk %u: id range outside its slice",
                 idx);
        MH_CHECK(c.row_first == rows && c.row_count >= 1 &&
                     c.row_count <= s->count - rows &&
                     c.row_count <= c.id_last - c.id_first + 1u,
                 MH_ECORRUPT, d, off + MHF_CHUNK_ROW_FIRST,
                 "chunk %u: row range does not follow the previous chunk", idx);
        if (k > 0) {
            MH_CHECK(c.op > prev.op ||
                         (c.op == prev.op && c.phy_first > prev.phy_last),
                     MH_ECORRUPT, d, off,
                     "chunk %u: not after the previous chunk in (operation, "
                     "address) order", idx);
        }
        rows += c.row_count;
        op_rows[c.op] += c.row_count;
        prev = c;
    }
    MH_CHECK(rows == s->count, MH_ECORRUPT, d,
             seg->slice_off + (uint64_t)si * seg->slice_recsz + MHF_SLICE_COUNT,
             "chunks hold %u rows, slice has %u", rows, s->count);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        MH_CHECK(op_rows[o] == s->op_counts[o], MH_ECORRUPT, d,
                 seg->slice_off + (uint64_t)si * seg->slice_recsz +
                     MHF_SLICE_OP_COUNTS + 4 * o,
                 "operation %u count differs from its chunks", o);
    uint64_t data_end = seg->data_off + seg->data_size;
    for (uint32_t b = 0; b < s->block_count; b++) {
        mh_block bl;
        uint32_t idx = s->block_first + b;
        uint64_t off = seg->block_off + (uint64_t)idx * seg->block_recsz;
        load_block(seg, idx, &bl);
        uint32_t m = mh_slice_block_rows(seg, s, b);
        const uint8_t *p = seg->blocks + (size_t)idx * seg->block_recsz;
        MH_CHECK(v2 || !strict || mhf_load_u32(p + MHF_BLOCK_RESERVED) == 0,
                 MH_ECORRUPT, d, off + MHF_BLOCK_RESERVED,
                 "block %u: reserved field not zero", idx);
        MH_CHECK(bl.stream_mask != 0 && (bl.stream_mask & ~s->stream_mask) == 0,
                 MH_ECORRUPT, d, off + MHF2_BLOCK_STREAM_MASK,
                 "block %u: stream mask %08x not inside its slice's %08x", idx,
                 bl.stream_mask, s->stream_mask);
        bmask |= bl.stream_mask;
        MH_CHECK(bl.offset >= seg->data_off && bl.comp_size >= 1 &&
                     bl.offset <= data_end && bl.comp_size <= data_end - bl.offset,
                 MH_ECORRUPT, d, off + MHF_BLOCK_OFFSET,
                 "block %u: bytes outside the data section", idx);
        MH_CHECK(bl.raw_size >= 1 &&
                     bl.raw_size <= mh_block_raw_limit(&seg->dict.layout, m),
                 MH_ECORRUPT, d, off + MHF_BLOCK_RAW_SIZE,
                 "block %u: raw size %u impossible for %u rows", idx,
                 bl.raw_size, m);
        MH_CHECK(bl.phy_min <= bl.phy_max, MH_ECORRUPT, d,
                 off + MHF_BLOCK_PHY_MIN, "block %u: empty address range", idx);
        MH_CHECK(bl.first_id < s->count && bl.first_t >= s->t_first &&
                     bl.first_t <= s->t_last,
                 MH_ECORRUPT, d, off + MHF_BLOCK_FIRST_T,
                 "block %u: first row outside its slice", idx);
    }
    /* masks are exact: the chunks' and the blocks' each make the slice's */
    MH_CHECK(cmask == s->stream_mask && bmask == s->stream_mask, MH_ECORRUPT,
             d, soff + MHF2_SLICE_STREAM_MASK,
             "slice %u: stream mask %08x, its chunks' %08x, its blocks' %08x",
             si, s->stream_mask, cmask, bmask);
    return MH_OK;
}

/* A walk checking slice after slice (a scan) asks the kernel for what it
 * will read next while it works: the chunk and block records of the next
 * 2 RA_SLICES slices in its direction, and the compressed blocks of the
 * next RA_SLICES (their records asked for RA_SLICES checks before): on its
 * first step to an adjacent slice all of them, then one more slice each.
 * The mapping has no read-around (MADV_RANDOM, mh_seg_open): without this
 * a cold scan read its records and blocks a page at a time, 1.5x
 * (forward) to 1.8x (backward) slower than with the kernel's read-around.
 * A walk that jumps between slices (a point query's candidates) asks for
 * nothing ahead. */
#define RA_SLICES 16u

/* Slices [a, b) (a < b <= nslices): their records (what 1) or their
 * blocks' bytes (what 0), as one range each. Records are not checked yet
 * (each slice's come at its own turn): a range outside the arrays or the
 * file is not asked for. */
static void willneed_slices(const mh_seg *seg, uint32_t a, uint32_t b, int what) {
    mh_slice f, l;
    mh_seg_slice(seg, a, &f);
    mh_seg_slice(seg, b - 1, &l);
    if (f.chunk_first > l.chunk_first || l.chunk_first > seg->nchunks ||
        l.chunk_count > seg->nchunks - l.chunk_first || f.block_first > l.block_first ||
        l.block_first > seg->nblocks || l.block_count > seg->nblocks - l.block_first)
        return;
    if (what) {
        uint32_t c1 = l.chunk_first + l.chunk_count, b1 = l.block_first + l.block_count;
        mh_seg_willneed(seg, seg->chunks + (size_t)f.chunk_first * seg->chunk_recsz,
                        (size_t)(c1 - f.chunk_first) * seg->chunk_recsz);
        mh_seg_willneed(seg, seg->blocks + (size_t)f.block_first * seg->block_recsz,
                        (size_t)(b1 - f.block_first) * seg->block_recsz);
        return;
    }
    if (l.block_first + l.block_count == f.block_first)
        return; /* no block */
    mh_block x, y;
    load_block(seg, f.block_first, &x);
    load_block(seg, l.block_first + l.block_count - 1, &y);
    if (x.offset <= y.offset && y.offset <= seg->size &&
        y.comp_size <= seg->size - y.offset)
        mh_seg_willneed(seg, seg->base + x.offset,
                        (size_t)(y.offset + y.comp_size - x.offset));
}

static void slice_ahead(const mh_seg *seg, uint32_t i) {
    mh_seg *m = (mh_seg *)seg;
    uint32_t prev = atomic_exchange_explicit(&m->ra_slice, i + 1, memory_order_relaxed);
    uint32_t n = seg->nslices;
    if (prev == i) { /* the previous check was slice i - 1: forward */
        for (int what = 1; what >= 0; what--) {
            uint32_t want = n - i - 1 > (what + 1) * RA_SLICES ? i + 1 + (what + 1) * RA_SLICES : n;
            _Atomic uint32_t *edge = what ? &m->ra_rec : &m->ra_dat;
            uint32_t from = atomic_exchange_explicit(edge, want, memory_order_relaxed);
            from = from > i && from < want ? from : i + 1; /* else a new run */
            if (from < want)
                willneed_slices(seg, from, want, what);
        }
    } else if (prev == i + 2) { /* it was slice i + 1: backward */
        for (int what = 1; what >= 0; what--) {
            uint32_t want = i > (what + 1) * RA_SLICES ? i - (what + 1) * RA_SLICES : 0;
            _Atomic uint32_t *edge = what ? &m->ra_rec : &m->ra_dat;
            uint32_t to = atomic_exchange_explicit(edge, want, memory_order_relaxed);
            to = to < i && to > want ? to : i; /* else a new run */
            if (want < to)
                willneed_slices(seg, want, to, what);
        }
    }
}

int mh_seg_slice_check(const mh_seg *seg, uint32_t i, const mh_slice *s,
                       mh_diag *d) {
    if (atomic_load_explicit(&seg->slice_ok[i], memory_order_acquire))
        return MH_OK;
    slice_ahead(seg, i);
    if (MH_CHECKSUMS_ENFORCED) {
        const uint8_t *c = seg->chunks + (size_t)s->chunk_first * seg->chunk_recsz;
        const uint8_t *b = seg->blocks + (size_t)s->block_first * seg->block_recsz;
        mh_seg_willneed(seg, c, (size_t)s->chunk_count * seg->chunk_recsz);
        uint64_t bsum = mh_seg_hash_whole(seg, b, (size_t)s->block_count * seg->block_recsz);
        uint64_t sum = mh_hash_seeded(c, (size_t)s->chunk_count * seg->chunk_recsz,
                                      bsum);
        uint64_t at = seg->slice_off + (uint64_t)i * seg->slice_recsz +
                      MHF_SLICE_INDEX_SUM;
        MH_CHECK(sum == s->index_sum, MH_ECHECKSUM, d, at,
                 "slice %u at byte %llu: index checksum mismatch (chunk and "
                 "block records): stored 0x%016llx, computed 0x%016llx",
                 i, (unsigned long long)at, (unsigned long long)s->index_sum,
                 (unsigned long long)sum);
    }
    int rc = check_slice_records(seg, i, s, d);
    if (rc != MH_OK) {
        if (d)
            mh_diag_prefix(d, "slice %u at byte %llu", i,
                           (unsigned long long)d->offset);
        return rc;
    }
    atomic_store_explicit(&seg->slice_ok[i], 1, memory_order_release);
    return MH_OK;
}

int mh_seg_chunk(const mh_seg *seg, const mh_slice *s, uint32_t k,
                 mh_chunk *out, mh_diag *d) {
    MH_CHECK(k >= s->chunk_first && k - s->chunk_first < s->chunk_count,
             MH_EINVAL, d, 0, "chunk %u not in slice", k);
    mh_seg_chunk_load(seg, k, out);
    return MH_OK;
}

int mh_seg_block(const mh_seg *seg, const mh_slice *s, uint32_t k,
                 mh_block *out, mh_diag *d) {
    MH_CHECK(k >= s->block_first && k - s->block_first < s->block_count,
             MH_EINVAL, d, 0, "block %u not in slice", k);
    load_block(seg, k, out);
    return MH_OK;
}

/* Every row's stream has its bit in its block's, chunk's and slice's
 * masks (the masks are what queries skip by). Rows of block b are the
 * slice's rows b x rows_per_block .. in chunk order. */
static int check_row_streams(const mh_seg *seg, const mh_slice *s, uint32_t b,
                             const mh_block *bl, const mh_rows *out,
                             mh_diag *d) {
    uint32_t bi = s->block_first + b;
    uint32_t row = b * seg->rows_per_block;
    /* the chunk holding row: the last with row_first <= row */
    uint32_t lo = 0, hi = s->chunk_count;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *c = seg->chunks +
                           (size_t)(s->chunk_first + mid) * seg->chunk_recsz;
        if (mhf_load_u32(c + MHF_CHUNK_ROW_FIRST) <= row)
            lo = mid;
        else
            hi = mid;
    }
    mh_chunk c;
    mh_seg_chunk_load(seg, s->chunk_first + lo, &c);
    for (uint32_t k = 0; k < out->n; k++, row++) {
        while (row - c.row_first >= c.row_count && lo + 1 < s->chunk_count)
            mh_seg_chunk_load(seg, s->chunk_first + ++lo, &c);
        uint32_t bit = 1u << (mh_rows_stream(out, k) & 31u);
        if (!(bl->stream_mask & c.stream_mask & s->stream_mask & bit)) {
            uint32_t si = mh_seg_slice_of_block(seg, bi);
            MH_FAIL(MH_ECORRUPT, d, bl->offset,
                    "slice %u, block %u at byte %llu: row %u of stream %u "
                    "outside the stream masks of its block, chunk or slice",
                    si, bi, (unsigned long long)bl->offset, k, mh_rows_stream(out, k));
        }
    }
    return MH_OK;
}

int mh_seg_block_known(const mh_seg *seg, uint32_t bi) {
    _Atomic uint64_t *w = atomic_load_explicit(&((mh_seg *)seg)->block_ok,
                                               memory_order_acquire);
    return bi < seg->nblocks && mh_bit_get(w, bi);
}

void mh_seg_block_set_known(const mh_seg *seg, uint32_t bi) {
    mh_seg *m = (mh_seg *)seg;
    if (bi >= seg->nblocks)
        return;
    _Atomic uint64_t *w = mh_seg_bits(seg, &m->block_ok, seg->nblocks);
    if (!w)
        return; /* no room: every decode checks its rows */
    mh_bit_set(w, bi);
}

/* Block b's sum, LZ4 and the columns of its rows from .. upto - 1, no row
 * checks; a failure named as fsck names it. */
static int decode_rows(const mh_seg *seg, const mh_slice *s, uint32_t b, uint32_t from,
                       uint32_t upto, unsigned cols, uint8_t *scratch, mh_rows *out,
                       mh_block *blp, mh_diag *d) {
    mh_block bl;
    MH_TRY(mh_seg_block(seg, s, s->block_first + b, &bl, d));
    uint32_t m = mh_slice_block_rows(seg, s, b);
    int rc = mh_block_decode_rows(seg->base + bl.offset, bl.comp_size, bl.sum,
                                  bl.raw_size, m, from, upto < m ? upto : m, cols,
                                  s->t_first, &seg->dict.layout, scratch, out, d);
    if (rc != MH_OK) {
        /* name the place as fsck does: slice, block, the block's bytes */
        if (d) {
            d->offset = bl.offset;
            mh_diag_prefix(d, "slice %u, block %u at byte %llu",
                           mh_seg_slice_of_block(seg, s->block_first + b),
                           s->block_first + b, (unsigned long long)bl.offset);
        }
        return rc;
    }
    *blp = bl;
    return MH_OK;
}

int mh_seg_decode_rows(const mh_seg *seg, const mh_slice *s, uint32_t b, uint32_t from,
                       uint32_t upto, unsigned cols, uint8_t *scratch, mh_rows *out,
                       mh_diag *d) {
    mh_block bl;
    return decode_rows(seg, s, b, from, upto, cols, scratch, out, &bl, d);
}

int mh_seg_decode_block(const mh_seg *seg, const mh_slice *s, uint32_t b,
                        uint8_t *scratch, mh_rows *out, mh_diag *d) {
    mh_block bl = {0}; /* gcc -O3 cannot see that decode_rows sets it on MH_OK */
    uint32_t m = mh_slice_block_rows(seg, s, b);
    MH_TRY(decode_rows(seg, s, b, 0, m, MH_COLS_ALL, scratch, out, &bl, d));
    uint64_t off = seg->block_off + (uint64_t)(s->block_first + b) * seg->block_recsz;
    uint32_t si = 0; /* found only when a check below fails */
    uint32_t bi = s->block_first + b;
    for (uint32_t k = 0; k < m; k++) {
        if (!(out->id_off[k] < s->count && out->t[k] >= s->t_first &&
              out->t[k] <= s->t_last)) {
            si = mh_seg_slice_of_block(seg, bi);
            MH_FAIL(MH_ECORRUPT, d, bl.offset,
                    "slice %u, block %u at byte %llu: row %u outside its slice",
                    si, bi, (unsigned long long)bl.offset, k);
        }
    }
    if (!(out->id_off[0] == bl.first_id && out->t[0] == bl.first_t)) {
        si = mh_seg_slice_of_block(seg, bi);
        MH_FAIL(MH_ECORRUPT, d, off + MHF_BLOCK_FIRST_T,
                "slice %u, block %u at byte %llu: first row differs from its "
                "record", si, bi, (unsigned long long)(off + MHF_BLOCK_FIRST_T));
    }
    for (uint32_t k = 0; k < m; k++)
        if (!(out->phy[k] >= bl.phy_min &&
              out->phy[k] + (out->size[k] - 1u) <= bl.phy_max)) {
            si = mh_seg_slice_of_block(seg, bi);
            MH_FAIL(MH_ECORRUPT, d, off + MHF_BLOCK_PHY_MIN,
                    "slice %u, block %u at byte %llu: row %u outside the "
                    "block's address range", si, bi,
                    (unsigned long long)(off + MHF_BLOCK_PHY_MIN), k);
        }
    if (seg->dict.has_stream_col)
        MH_TRY(check_row_streams(seg, s, b, &bl, out, d));
    return MH_OK;
}

void *mh_seg_marks_alloc(const mh_seg *seg, size_t bytes, int hint) {
    _Atomic int64_t *left = seg->marks_left;
    if (left) {
        int64_t floor = hint && seg->marks_floor
                            ? atomic_load_explicit(seg->marks_floor, memory_order_relaxed)
                            : 0;
        if (bytes > INT64_MAX / 2 || floor < 0)
            return NULL;
        int64_t was = atomic_fetch_sub(left, (int64_t)bytes);
        if (was < (int64_t)bytes || was - (int64_t)bytes < floor) { /* spent: give it back */
            atomic_fetch_add(left, (int64_t)bytes);
            return NULL;
        }
    }
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p && left)
        atomic_fetch_add(left, (int64_t)bytes);
    return p;
}

_Atomic uint64_t *mh_seg_bits(const mh_seg *seg, _Atomic(_Atomic uint64_t *) *slot, size_t n) {
    _Atomic uint64_t *w = atomic_load_explicit(slot, memory_order_acquire);
    if (w)
        return w;
    size_t words = (n + 63) / 64;
    _Atomic uint64_t *fresh = mh_seg_marks_alloc(seg, (words ? words : 1) * sizeof *fresh, 0),
                     *none = NULL;
    if (!fresh)
        return NULL;
    if (atomic_compare_exchange_strong(slot, &none, fresh))
        return fresh;
    free((void *)fresh); /* another thread's won; its budget stays spent */
    return none;
}

_Atomic uint32_t *mh_seg_memo(const mh_seg *seg, unsigned kind, uint32_t si) {
    if (!seg || kind >= MH_MEMO_KINDS || si >= seg->nslices)
        return NULL;
    _Atomic(_Atomic uint32_t *) *slot = &((mh_seg *)seg)->slice_memo;
    _Atomic uint32_t *t = atomic_load_explicit(slot, memory_order_acquire);
    if (!t) {
        _Atomic uint32_t *fresh =
            mh_seg_marks_alloc(seg, (size_t)MH_MEMO_KINDS * seg->nslices * sizeof *fresh, 1),
                         *none = NULL;
        if (!fresh)
            return NULL;
        if (atomic_compare_exchange_strong(slot, &none, fresh)) {
            t = fresh;
        } else {
            free((void *)fresh); /* another thread's won; its budget stays spent */
            t = none;
        }
    }
    return &t[(size_t)kind * seg->nslices + si];
}

static size_t marks_page_bytes(const mh_marks *m) {
    return (size_t)MH_MARKS_PAGE_RUNS * m->words * sizeof(uint64_t);
}

mh_marks *mh_marks_new(const mh_seg *seg, size_t runs, unsigned words) {
    if (words == 0 || runs > SIZE_MAX / 2 / MH_MARKS_PAGE_RUNS)
        return NULL;
    size_t np = (runs + MH_MARKS_PAGE_RUNS - 1) / MH_MARKS_PAGE_RUNS;
    mh_marks *m = mh_seg_marks_alloc(seg, sizeof *m + np * sizeof m->page[0], 1);
    if (m) {
        m->runs = runs;
        m->npages = np;
        m->words = words;
    }
    return m;
}

_Atomic uint64_t *mh_marks_run(const mh_seg *seg, mh_marks *m, size_t run, int make) {
    if (!m || run >= m->runs)
        return NULL;
    size_t pg = run / MH_MARKS_PAGE_RUNS;
    _Atomic uint64_t *p = atomic_load_explicit(&m->page[pg], memory_order_acquire);
    if (!p) {
        if (!make)
            return NULL;
        _Atomic uint64_t *fresh = mh_seg_marks_alloc(seg, marks_page_bytes(m), 1), *none = NULL;
        if (!fresh)
            return NULL;
        if (atomic_compare_exchange_strong(&m->page[pg], &none, fresh)) {
            p = fresh;
        } else { /* another thread's won: give the bytes back */
            free((void *)fresh);
            if (seg->marks_left)
                atomic_fetch_add(seg->marks_left, (int64_t)marks_page_bytes(m));
            p = none;
        }
    }
    return p + (run % MH_MARKS_PAGE_RUNS) * m->words;
}

size_t mh_marks_bytes(const mh_marks *m) {
    if (!m)
        return 0;
    size_t n = sizeof *m + m->npages * sizeof m->page[0];
    for (size_t i = 0; i < m->npages; i++)
        if (atomic_load_explicit(&m->page[i], memory_order_acquire))
            n += marks_page_bytes(m);
    return n;
}

void mh_marks_free(mh_marks *m) {
    if (!m)
        return;
    for (size_t i = 0; i < m->npages; i++)
        free((void *)atomic_load_explicit(&m->page[i], memory_order_relaxed));
    free(m);
}
