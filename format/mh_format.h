/*
 * mh_format.h - the bytes of a memhist store, and nothing else.
 *
 * Constants, record sizes and field offsets of every on-disk structure
 * (see SPEC.md, which this header mirrors section by section), plus the
 * little-endian load/store helpers every reader and writer must use.
 * No I/O, no allocation: the library, the tools and the fuzzers include it.
 *
 * Structures are never memcpy'd to or from disk; every field is read with
 * mhf_load_uNN(base + MHF_<STRUCT>_<FIELD>) so the layout is the same on
 * every host, whatever its byte order or padding rules.
 */
#ifndef MH_FORMAT_H
#define MH_FORMAT_H

#include <stdint.h>
#include <string.h>

/* ---- versions ---------------------------------------------------------- */
#define MHF_VERSION_MAJOR 1u   /* a reader refuses any other major version */
#define MHF_VERSION_MINOR 0u   /* a newer minor only adds optional content  */
#define MHF_BYTE_ORDER_MARK 0x0A0B0C0Du /* stored little-endian: 0D 0C 0B 0A */
#define MHF_BYTE_ORDER_SWAPPED 0x0D0C0B0Au /* what a big-endian writer would leave */

/* ---- file names inside a store directory ------------------------------- */
#define MHF_MANIFEST_NAME "MANIFEST"
#define MHF_MANIFEST_TMP_NAME "MANIFEST.tmp"
#define MHF_LOCK_NAME "LOCK"
#define MHF_SEGMENT_PREFIX "seg-"       /* seg-<16 lower-case hex digits>.mhs */
#define MHF_SEGMENT_SUFFIX ".mhs"
#define MHF_TMP_SUFFIX ".tmp"          /* a segment being written */
#define MHF_SEGMENT_NAME_LEN 24         /* strlen("seg-0123456789abcdef.mhs") */

/* ---- operations -------------------------------------------------------- */
#define MHF_OP_READ 0u
#define MHF_OP_WRITE 1u
#define MHF_OP_EXEC 2u
#define MHF_OP_COUNT 3u

/* ---- segment header: 256 bytes at offset 0 ----------------------------- */
#define MHF_SEG_MAGIC "MHSEG\r\n\x1a"   /* 8 bytes */
#define MHF_SEG_HEADER_SIZE 256u
#define MHF_SEG_MAGIC_OFF 0
#define MHF_SEG_MAJOR 8          /* u16 */
#define MHF_SEG_MINOR 10         /* u16 */
#define MHF_SEG_BOM 12           /* u32 byte-order mark */
#define MHF_SEG_HEADER_SIZE_OFF 16 /* u32 = 256 */
#define MHF_SEG_FLAGS 20         /* u32: low 16 bits incompatible, high 16 compatible; 0 in 1.0 */
#define MHF_SEG_SEQ 24           /* u64 sequence number, also in the file name */
#define MHF_SEG_ID_FIRST 32      /* u64 id of the first access */
#define MHF_SEG_COUNT 40         /* u64 number of accesses */
#define MHF_SEG_T_FIRST 48       /* u64 */
#define MHF_SEG_T_LAST 56        /* u64 */
#define MHF_SEG_OP_COUNTS 64     /* 3 x u64: reads, writes, executes */
#define MHF_SEG_ROWS_PER_BLOCK 88 /* u32 */
#define MHF_SEG_RESERVED0 92     /* u32 = 0 */
#define MHF_SEG_DATA_OFF 96      /* u64 = 256 */
#define MHF_SEG_DATA_SIZE 104    /* u64 */
#define MHF_SEG_DICT_OFF 112     /* u64 */
#define MHF_SEG_DICT_SIZE 120    /* u64 */
#define MHF_SEG_SLICE_OFF 128    /* u64 */
#define MHF_SEG_SLICE_COUNT 136  /* u32 */
#define MHF_SEG_SLICE_RECSZ 140  /* u32 = 64 */
#define MHF_SEG_CHUNK_OFF 144    /* u64 */
#define MHF_SEG_CHUNK_COUNT 152  /* u32 */
#define MHF_SEG_CHUNK_RECSZ 156  /* u32 = 56 */
#define MHF_SEG_BLOCK_OFF 160    /* u64 */
#define MHF_SEG_BLOCK_COUNT 168  /* u32 */
#define MHF_SEG_BLOCK_RECSZ 172  /* u32 = 56 */
#define MHF_SEG_FILE_SIZE 176    /* u64 */
#define MHF_SEG_RAW_SIZE 184     /* u64 sum of raw_size over blocks */
#define MHF_SEG_DICT_SUM 192     /* u64 XXH3-64 of the dictionary section */
#define MHF_SEG_SLICE_SUM 200    /* u64 XXH3-64 of the slice array */
#define MHF_SEG_CHUNK_SUM 208    /* u64 XXH3-64 of the chunk array */
#define MHF_SEG_BLOCK_SUM 216    /* u64 XXH3-64 of the block array */
#define MHF_SEG_RESERVED1 224    /* 24 bytes = 0 */
#define MHF_SEG_RESERVED1_SIZE 24
#define MHF_SEG_HEADER_SUM 248   /* u64 XXH3-64 of bytes 0..247 */

/* ---- section directory (2.0) ----------------------------------------- */
#define MHF_SECT_DATA 1u
#define MHF_SECT_DICT 2u
#define MHF_SECT_SLICES 3u
#define MHF_SECT_CHUNKS 4u
#define MHF_SECT_BLOCKS 5u
#define MHF_SECT_SUMMARY 6u
#define MHF_SECT_REQUIRED 1u     /* directory entry flag bit 0 */

/* ---- slice record: 64 bytes -------------------------------------------- */
#define MHF_SLICE_SIZE 64u
#define MHF_SLICE_T_FIRST 0      /* u64 */
#define MHF_SLICE_T_LAST 8       /* u64 */
#define MHF_SLICE_ID_FIRST 16    /* u64 */
#define MHF_SLICE_COUNT 24       /* u32 accesses (rows) */
#define MHF_SLICE_CHUNK_FIRST 28 /* u32 index into the chunk array */
#define MHF_SLICE_CHUNK_COUNT 32 /* u32 */
#define MHF_SLICE_BLOCK_FIRST 36 /* u32 index into the block array */
#define MHF_SLICE_BLOCK_COUNT 40 /* u32 = ceil(count / rows_per_block) */
#define MHF_SLICE_OP_COUNTS 44   /* 3 x u32 */
#define MHF_SLICE_INDEX_SUM 56   /* u64 XXH3-64 of its chunk records, seeded with XXH3-64 of its block records */

/* ---- chunk record: 56 bytes -------------------------------------------- */
#define MHF_CHUNK_SIZE 56u
#define MHF_CHUNK_PHY_FIRST 0    /* u64 */
#define MHF_CHUNK_PHY_LAST 8     /* u64 inclusive */
#define MHF_CHUNK_T_FIRST 16     /* u64 transition of its first access */
#define MHF_CHUNK_T_LAST 24      /* u64 transition of its last access */
#define MHF_CHUNK_ID_FIRST 32    /* u32 id offset (from the slice's id_first) */
#define MHF_CHUNK_ID_LAST 36     /* u32 */
#define MHF_CHUNK_ROW_FIRST 40   /* u32 row in the slice's row order */
#define MHF_CHUNK_ROW_COUNT 44   /* u32 >= 1 */
#define MHF_CHUNK_OP 48          /* u8 */
#define MHF_CHUNK_RESERVED 49    /* 7 bytes = 0 */

/* ---- block record: 56 bytes -------------------------------------------- */
#define MHF_BLOCK_SIZE 56u
#define MHF_BLOCK_OFFSET 0       /* u64 file offset of the compressed bytes */
#define MHF_BLOCK_COMP_SIZE 8    /* u32 */
#define MHF_BLOCK_RAW_SIZE 12    /* u32 */
#define MHF_BLOCK_SUM 16         /* u64 XXH3-64 of the compressed bytes */
#define MHF_BLOCK_PHY_MIN 24     /* u64 smallest physical of its rows */
#define MHF_BLOCK_PHY_MAX 32     /* u64 largest physical + size - 1 of its rows */
#define MHF_BLOCK_FIRST_T 40     /* u64 transition of its first row */
#define MHF_BLOCK_FIRST_ID 48    /* u32 id offset of its first row */
#define MHF_BLOCK_RESERVED 52    /* u32 = 0 */

/* ---- dictionary section ------------------------------------------------ */
#define MHF_DICT_MAGIC "MHDICT\0\0"   /* 8 bytes */
#define MHF_DICT_HEADER_SIZE 32u
/* header: magic[8], u32 string_count, u32 column_count, u32 op_count,
 * u32 meta_count, u64 reserved = 0; then strings, columns, ops, meta. */
#define MHF_DICT_STRING_COUNT 8
#define MHF_DICT_COLUMN_COUNT 12
#define MHF_DICT_OP_COUNT 16
#define MHF_DICT_META_COUNT 20
#define MHF_DICT_RESERVED 24
#define MHF_DICT_COLUMN_SIZE 8u  /* u32 name string, u8 type, u8 width, u8 encoding, u8 flags */
#define MHF_DICT_OP_SIZE 8u      /* u32 name string, u8 code, u8 sqlite_bit, u16 reserved */
#define MHF_DICT_META_SIZE 8u    /* u32 key string, u32 value string */
#define MHF_DICT_MAX_STRING (1u << 20) /* longest string a reader accepts */

/* column types, encodings, flags */
#define MHF_TYPE_UINT 1u
#define MHF_TYPE_ENUM 2u
#define MHF_ENC_IMPLICIT 0u      /* not stored in blocks (id order, chunk op) */
#define MHF_ENC_DELTA_ZZ 1u      /* zigzag varint of the difference to the previous row */
#define MHF_ENC_DELTA_PHY_ZZ 2u  /* zigzag varint of (value - physical), with presence bitmap */
#define MHF_ENC_VARINT 3u        /* plain LEB128 varint */
#define MHF_ENC_CHUNK 4u         /* taken from the chunk record */
#define MHF_COL_NULLABLE 1u

/* ---- manifest ---------------------------------------------------------- */
#define MHF_MAN_MAGIC "MHMAN\r\n\x1a"   /* 8 bytes */
#define MHF_MAN_HEADER_SIZE 64u
#define MHF_MAN_MAJOR 8          /* u16 */
#define MHF_MAN_MINOR 10         /* u16 */
#define MHF_MAN_BOM 12           /* u32 */
#define MHF_MAN_HEADER_SIZE_OFF 16 /* u32 = 64 */
#define MHF_MAN_SEG_COUNT 20     /* u32 */
#define MHF_MAN_RECSZ 24         /* u32 = 64 */
#define MHF_MAN_FLAGS 28         /* u32 = 0 */
#define MHF_MAN_GENERATION 32    /* u64 */
#define MHF_MAN_ACCESS_COUNT 40  /* u64 */
#define MHF_MAN_NEXT_SEQ 48      /* u64 */
#define MHF_MAN_RESERVED 56      /* u64 = 0 */
#define MHF_MAN_REC_SIZE 64u
#define MHF_MREC_SEQ 0           /* u64 */
#define MHF_MREC_ID_FIRST 8      /* u64 */
#define MHF_MREC_COUNT 16        /* u64 */
#define MHF_MREC_T_FIRST 24      /* u64 */
#define MHF_MREC_T_LAST 32       /* u64 */
#define MHF_MREC_FILE_SIZE 40    /* u64 */
#define MHF_MREC_HEADER_SUM 48   /* u64 copy of the segment's header checksum */
#define MHF_MREC_RESERVED 56     /* u64 = 0 */
#define MHF_MAN_MAX_SEGMENTS (1u << 24)

/* ---- writer limits (also checked by readers) --------------------------- */
#define MHF_MAX_ROWS_PER_BLOCK 65536u
#define MHF_MAX_SLICE_ROWS (1u << 30)

/* ---- little-endian helpers --------------------------------------------- */
static inline uint16_t mhf_load_u16(const void *p) {
    const uint8_t *b = (const uint8_t *)p;
    return (uint16_t)(b[0] | (b[1] << 8));
}
static inline uint32_t mhf_load_u32(const void *p) {
    const uint8_t *b = (const uint8_t *)p;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}
static inline uint64_t mhf_load_u64(const void *p) {
    const uint8_t *b = (const uint8_t *)p;
    return (uint64_t)mhf_load_u32(b) | ((uint64_t)mhf_load_u32(b + 4) << 32);
}
static inline void mhf_store_u16(void *p, uint16_t v) {
    uint8_t *b = (uint8_t *)p;
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}
static inline void mhf_store_u32(void *p, uint32_t v) {
    uint8_t *b = (uint8_t *)p;
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}
static inline void mhf_store_u64(void *p, uint64_t v) {
    mhf_store_u32(p, (uint32_t)v);
    mhf_store_u32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

/* zigzag maps signed differences onto small unsigned numbers */
static inline uint64_t mhf_zigzag(uint64_t diff) {
    return (diff << 1) ^ (uint64_t)(-(int64_t)(diff >> 63));
}
static inline uint64_t mhf_unzigzag(uint64_t z) {
    return (z >> 1) ^ (uint64_t)(-(int64_t)(z & 1));
}

/* The checks below pin the layout: a change here is a format change. */
_Static_assert(MHF_SEG_HEADER_SUM + 8 == MHF_SEG_HEADER_SIZE, "segment header size");
_Static_assert(MHF_SEG_RESERVED1 + MHF_SEG_RESERVED1_SIZE == MHF_SEG_HEADER_SUM, "segment header layout");
_Static_assert(MHF_SLICE_INDEX_SUM + 8 == MHF_SLICE_SIZE, "slice record size");
_Static_assert(MHF_CHUNK_RESERVED + 7 == MHF_CHUNK_SIZE, "chunk record size");
_Static_assert(MHF_BLOCK_RESERVED + 4 == MHF_BLOCK_SIZE, "block record size");
_Static_assert(MHF_MREC_RESERVED + 8 == MHF_MAN_REC_SIZE, "manifest record size");
_Static_assert(MHF_MAN_RESERVED + 8 == MHF_MAN_HEADER_SIZE, "manifest header size");
_Static_assert(sizeof(MHF_SEG_MAGIC) == 9 && sizeof(MHF_MAN_MAGIC) == 9 && sizeof(MHF_DICT_MAGIC) == 9, "magic sizes");

#endif /* MH_FORMAT_H */
