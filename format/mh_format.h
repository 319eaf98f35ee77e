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
#define MHF_VERSION_MAJOR 2u   /* what a writer writes; a reader reads 1.x and 2.x */
#define MHF_VERSION_MINOR 8u   /* a newer minor only adds optional content:
                                  2.1 adds sections 7, 8, 9; 2.2 adds the
                                  address postings (section 10); 2.3 the
                                  span address set (section 11); 2.4 the
                                  piece sums (section 12); 2.5 the id
                                  transitions (section 13); 2.6 the
                                  address postings with wide ranges
                                  (section 14); 2.7 the stream address
                                  postings (section 15); 2.8 the span
                                  stream address set (section 16) and
                                  the stream id runs (section 17) */
#define MHF1_VERSION_MAJOR 1u  /* format 1.0: read, never written */
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

/* ---- segment header: 256 bytes at offset 0 -----------------------------
 * Fields 0..91 are the same in 1.0 and 2.0; from 92 on, MHF_SEG_* name the
 * 1.0 layout (fixed sections) and MHF2_SEG_* the 2.0 one (directory). */
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

/* ---- segment header 2.0, from byte 92 ----------------------------------- */
#define MHF2_SEG_DIR_COUNT 92    /* u32 directory entries, <= MHF2_MAX_SECTIONS */
#define MHF2_SEG_DIR_OFF 96      /* u64 = 256 + sum of section sizes */
#define MHF2_SEG_DIR_RECSZ 104   /* u32 = 48 */
#define MHF2_SEG_RESERVED0 108   /* u32 = 0 */
#define MHF2_SEG_DIR_SUM 112     /* u64 XXH3-64 of the directory bytes */
#define MHF2_SEG_FILE_SIZE 120   /* u64 = dir_off + dir_count x dir_record_size */
#define MHF2_SEG_RAW_SIZE 128    /* u64 sum of raw_size over blocks */
#define MHF2_SEG_RESERVED1 136   /* 112 bytes = 0 */
#define MHF2_SEG_RESERVED1_SIZE 112
#define MHF2_MAX_SECTIONS 4096u

/* ---- directory entry (2.0): 48 bytes, in increasing offset ------------- */
#define MHF2_DIR_SIZE 48u
#define MHF2_DIR_TYPE 0          /* u32 section type */
#define MHF2_DIR_FLAGS 4         /* u32 bit 0 REQUIRED; other bits reserved */
#define MHF2_DIR_OFFSET 8        /* u64 */
#define MHF2_DIR_BYTES 16        /* u64 size */
#define MHF2_DIR_RECSZ 24        /* u32 record size, 0 when not a record array */
#define MHF2_DIR_RECCOUNT 28     /* u32 */
#define MHF2_DIR_SUM 32          /* u64 XXH3-64 of the section's bytes */
#define MHF2_DIR_RESERVED 40     /* u64 = 0 */

/* ---- section directory (2.0) ----------------------------------------- */
#define MHF_SECT_DATA 1u
#define MHF_SECT_DICT 2u
#define MHF_SECT_SLICES 3u
#define MHF_SECT_CHUNKS 4u
#define MHF_SECT_BLOCKS 5u
#define MHF_SECT_SUMMARY 6u
#define MHF_SECT_IDMAP 7u        /* since 2.1 */
#define MHF_SECT_SUMMARY_FINE 9u /* since 2.1: the fine address summary */
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
/* 2.0: 72 bytes, the 1.0 record then: */
#define MHF2_SLICE_SIZE 72u
#define MHF2_SLICE_STREAM_MASK 64 /* u32 bit (s mod 32) per stream s with a row (exact) */
#define MHF2_SLICE_RESERVED 68   /* u32 = 0 */

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
#define MHF_CHUNK_RESERVED 49    /* 7 bytes = 0 (1.0) */
#define MHF2_CHUNK_RESERVED 49   /* 3 bytes = 0 (2.0) */
#define MHF2_CHUNK_STREAM_MASK 52 /* u32 (2.0), exact */

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
#define MHF_BLOCK_RESERVED 52    /* u32 = 0 (1.0) */
#define MHF2_BLOCK_STREAM_MASK 52 /* u32 (2.0), exact */

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

/* ---- dictionary section 2.0: header, then tables back to back ---------- */
#define MHF2_DICT_MAGIC "MHDICT\0\2"  /* 8 bytes */
#define MHF2_DICT_HEADER_SIZE 16u
#define MHF2_DICT_TABLE_COUNT 8  /* u32 */
#define MHF2_DICT_RESERVED 12    /* u32 = 0 */
#define MHF2_TAB_HEADER_SIZE 24u /* u32 type, u32 flags, u32 record_size, u32 record_count, u64 byte_size */
#define MHF2_TAB_TYPE 0
#define MHF2_TAB_FLAGS 4         /* bit 0 REQUIRED */
#define MHF2_TAB_RECSZ 8         /* 0: variable-size records */
#define MHF2_TAB_COUNT 12
#define MHF2_TAB_BYTES 16        /* u64 bytes after this header */
#define MHF2_TAB_REQUIRED 1u
#define MHF2_TAB_STRINGS 1u      /* variable: u32 length, bytes */
#define MHF2_TAB_COLUMNS 2u      /* 8: as MHF_DICT_COLUMN_SIZE */
#define MHF2_TAB_OPS 3u          /* 8: as MHF_DICT_OP_SIZE */
#define MHF2_TAB_META 4u         /* 8: as MHF_DICT_META_SIZE */
#define MHF2_TAB_STREAMS 5u      /* 64 */
#define MHF2_TAB_STREAM_META 6u  /* 12 */
#define MHF2_TAB_WINDOWS 7u      /* 40 */
#define MHF2_STREAM_SIZE 64u
#define MHF2_STREAM_ID 0         /* u32, strictly increasing, <= 65535 */
#define MHF2_STREAM_KIND 4       /* u8 */
#define MHF2_STREAM_RESERVED0 5  /* 3 bytes = 0 */
#define MHF2_STREAM_NAME 8       /* u32 string index or 0xFFFFFFFF */
#define MHF2_STREAM_PARENT 12    /* u32 stream id or 0xFFFFFFFF */
#define MHF2_STREAM_PID 16       /* u64, ~0 = none */
#define MHF2_STREAM_TID 24       /* u64, ~0 = none */
#define MHF2_STREAM_CPU 32       /* u32, 0xFFFFFFFF = none */
#define MHF2_STREAM_RESERVED1 36 /* u32 = 0 */
#define MHF2_STREAM_COUNT 40     /* u64 its accesses in this segment */
#define MHF2_STREAM_T_FIRST 48   /* u64 (0 when count 0) */
#define MHF2_STREAM_T_LAST 56    /* u64 */
#define MHF2_STREAM_META_SIZE 12u /* u32 stream, u32 key, u32 value */
#define MHF2_WINDOW_SIZE 40u     /* u64 window, id_first, count, t_first, t_last */
#define MHF2_STREAM_KIND_MAX 3u
#define MHF2_NONE32 0xFFFFFFFFu

/* column types, encodings, flags */
#define MHF_TYPE_UINT 1u
#define MHF_TYPE_ENUM 2u
#define MHF_ENC_IMPLICIT 0u      /* not stored in blocks (id order, chunk op) */
#define MHF_ENC_DELTA_ZZ 1u      /* zigzag varint of the difference to the previous row */
#define MHF_ENC_DELTA_PHY_ZZ 2u  /* zigzag varint of (value - physical), with presence bitmap */
#define MHF_ENC_VARINT 3u        /* plain LEB128 varint */
#define MHF_ENC_CHUNK 4u         /* taken from the chunk record */
#define MHF_ENC_PC 5u            /* presence bitmap, zigzag varint delta to the previous present pc of the block (start 0) */
#define MHF_COL_NULLABLE 1u
#define MHF_COL_REQUIRED 2u      /* 2.0: a reader that does not know the column refuses the segment */

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

/* ---- address summary section (2.0, section type 6; summary_*.c) -------- */
#define MHF_SUM_HEADER_SIZE 32u
#define MHF_SUM_SHIFT 0            /* u32 granule_shift */
#define MHF_SUM_ENTRY_COUNT 4      /* u32 */
#define MHF_SUM_ENTRY_SIZE_OFF 8   /* u32 entry_size */
#define MHF_SUM_RESERVED0 12       /* u32 = 0 */
#define MHF_SUM_POSTING_COUNT 16   /* u64 */
#define MHF_SUM_RESERVED1 24       /* u64 = 0 */
#define MHF_SUM_ENTRY_SIZE 24u
#define MHF_SUM_E_GRANULE 0        /* u64 */
#define MHF_SUM_E_POSTING_FIRST 8  /* u64 */
#define MHF_SUM_E_POSTING_COUNT 16 /* u32 */
#define MHF_SUM_E_OP 20            /* u8 */
#define MHF_SUM_E_RESERVED 21      /* 3 bytes = 0 */
#define MHF_SUM_POSTING_SIZE 4u    /* u32 slice index */
#define MHF_SUM_GRANULE_SHIFT 16u  /* section 6's least shift: 64 KiB granules */
/* Section 9 (2.1, the fine address summary): section 6's layout, shifts
 * from 10 (1 KiB granules); the writer makes its keys at this shift and
 * derives section 6's from them. */
#define MHF_SUM_FINE_SHIFT 10u

/* ---- id map section (2.1, section type 7; idmap_*.c) -------------------
 * 32-byte header, group_count records of group_size bytes, then the data
 * area: each group's LZ4 block (no frame) back to back in record order. A
 * group decompresses to count x width bytes: per id offset of its slice, in
 * id order, the index (relative to the slice's chunk_first) of the chunk
 * holding that row, little-endian. */
#define MHF_IDMAP_HEADER_SIZE 32u
#define MHF_IDMAP_GROUP_IDS 0      /* u32 G: ids per group, 1024 .. 65536 */
#define MHF_IDMAP_GROUP_COUNT 4    /* u32 */
#define MHF_IDMAP_GROUP_SIZE_OFF 8 /* u32 group_size */
#define MHF_IDMAP_RESERVED0 12     /* u32 = 0 */
#define MHF_IDMAP_DATA_BYTES 16    /* u64 */
#define MHF_IDMAP_RESERVED1 24     /* u64 = 0 */
#define MHF_IDMAP_GROUP_SIZE 32u
#define MHF_IDMAP_G_DATA_OFFSET 0  /* u64 from the data area's start */
#define MHF_IDMAP_G_SLICE 8        /* u32 slice index in the segment */
#define MHF_IDMAP_G_ID_OFFSET 12   /* u32 first id offset, a multiple of G */
#define MHF_IDMAP_G_COMP_SIZE 16   /* u32 >= 1 */
#define MHF_IDMAP_G_COUNT 20       /* u32 ids in the group */
#define MHF_IDMAP_G_WIDTH 24       /* u8 bytes per label: 1, 2 or 4 */
#define MHF_IDMAP_G_RESERVED0 25   /* 3 bytes = 0 */
#define MHF_IDMAP_G_RESERVED1 28   /* u32 = 0 */
#define MHF_IDMAP_G_MIN 1024u      /* smallest G a reader accepts */
#define MHF_IDMAP_G_MAX 65536u     /* largest G a reader accepts */
#define MHF_IDMAP_G_DEFAULT 8192u  /* what the reference writer writes */
/* ---- address set section (2.1, section type 8, optional; aset_*.c) ----- */
#define MHF_SECT_ASET 8u
#define MHF_ASET_HEADER_SIZE 80u
#define MHF_ASET_RUN_IVALS 0       /* u32 K: intervals per run as written */
#define MHF_ASET_RUN_SIZE_OFF 4    /* u32 run record size */
#define MHF_ASET_RUN_COUNT 8       /* u32 runs of all operations */
#define MHF_ASET_RESERVED0 12      /* u32 = 0 */
#define MHF_ASET_DATA_BYTES 16     /* u64 */
#define MHF_ASET_RESERVED1 24      /* u64 = 0 */
#define MHF_ASET_OPS 32            /* 3 x 16-byte operation records */
#define MHF_ASET_OP_SIZE 16u
#define MHF_ASET_OP_IVALS 0        /* u64 intervals of the operation */
#define MHF_ASET_OP_RUN_FIRST 8    /* u32 its first run */
#define MHF_ASET_OP_RUN_COUNT 12   /* u32 its runs */
#define MHF_ASET_RUN_SIZE 24u
#define MHF_ASET_R_LO 0            /* u64 lo of the run's first interval */
#define MHF_ASET_R_OFFSET 8        /* u64 from the data area's start */
#define MHF_ASET_R_IVALS 16        /* u32 intervals, >= 1 */
#define MHF_ASET_R_BYTES 20        /* u32 bytes, >= 1 */
#define MHF_ASET_K 64u             /* what the writer writes */
#define MHF_ASET_K_MAX 65536u      /* largest K a reader accepts */

/* ---- address postings (section 10, since 2.2; SPEC.md §9d) ------------- */
#define MHF_SECT_APOST 10u
#define MHF_APOST_HEADER_SIZE 80u
#define MHF_APOST_SHIFT 0          /* u32 granule shift g, 3 .. 63 */
#define MHF_APOST_RUN_KEYS 4       /* u32 K: keys per run, 1 .. 65536 */
#define MHF_APOST_RUN_SIZE_OFF 8   /* u32 run record size (24) */
#define MHF_APOST_RUN_COUNT 12     /* u32 runs of all operations */
#define MHF_APOST_DATA_BYTES 16    /* u64 */
#define MHF_APOST_POSTINGS 24      /* u64 sum of every key's n */
#define MHF_APOST_OPS 32           /* 3 x 16-byte operation records */
#define MHF_APOST_OP_SIZE 16u
#define MHF_APOST_OP_KEYS 0        /* u64 keys of the operation */
#define MHF_APOST_OP_RUN_FIRST 8   /* u32 its first run */
#define MHF_APOST_OP_RUN_COUNT 12  /* u32 its runs */
#define MHF_APOST_RUN_SIZE 24u
#define MHF_APOST_R_GRANULE 0      /* u64 granule of the run's first key */
#define MHF_APOST_R_OFFSET 8       /* u64 from the data area's start */
#define MHF_APOST_R_KEYS 16        /* u32 keys in the run */
#define MHF_APOST_R_BYTES 20       /* u32 bytes, >= 1 */
#define MHF_APOST_SHIFT_MIN 3u
#define MHF_APOST_SHIFT_MAX 63u
#define MHF_APOST_K 32u            /* what the reference writer writes */
#define MHF_APOST_K_MAX 65536u     /* largest K a reader accepts */
#define MHF_APOST_SPAN 16u         /* a query uses it below this many granules */

/* ---- address postings with wide ranges (section 14, since 2.6; §9d) ---
 * A segment whose slices hold ranges of at least 2^v bytes (the maximal
 * ranges of one slice's rows of one op) carries type 14 instead of 10: a
 * 80-byte header and wide_count records of the wide ranges, sorted by (op,
 * first, slice), then a whole section 10 (MHF_APOST_*) over the other
 * ranges. */
#define MHF_SECT_APOSTW 14u
#define MHF_APOSTW_HEADER_SIZE 80u
#define MHF_APOSTW_LOG2 0          /* u32 v: a range of >= 2^v bytes is wide, 12 .. 63 */
#define MHF_APOSTW_REC_SIZE_OFF 4  /* u32 record size (24; §12.1) */
#define MHF_APOSTW_COUNT 8         /* u64 records of all operations */
#define MHF_APOSTW_BODY_BYTES 16   /* u64 bytes of the section 10 that follows */
#define MHF_APOSTW_RESERVED 24     /* u64 = 0 */
#define MHF_APOSTW_OPS 32          /* 3 x 16-byte operation records */
#define MHF_APOSTW_OP_SIZE 16u
#define MHF_APOSTW_OP_COUNT 0      /* u64 records of the op */
#define MHF_APOSTW_OP_SPAN 8       /* u64 the largest last - first among them */
#define MHF_APOSTW_REC_SIZE 24u
#define MHF_APOSTW_R_FIRST 0       /* u64 first byte of the range */
#define MHF_APOSTW_R_LAST 8        /* u64 last byte */
#define MHF_APOSTW_R_SLICE 16      /* u32 slice index */
#define MHF_APOSTW_R_RESERVED 20   /* u32 = 0 */
#define MHF_APOSTW_LOG2_MIN 12u
#define MHF_APOSTW_LOG2_MAX 63u
#define MHF_APOSTW_LOG2_DEFAULT 16u /* what the reference writer writes: 64 KiB */

/* ---- stream address postings (section 15, since 2.7; SPEC.md §9d.2) ---
 * Per stream with a row in the segment, a whole section 10 over that
 * stream's rows only: a 16-byte header, entry_count entries of entry_size
 * bytes (streams strictly increasing), then the bodies back to back in
 * entry order (an entry of 0 bytes: the writer kept none for its stream). */
#define MHF_SECT_SPOST 15u
#define MHF_SPOST_HEADER_SIZE 16u
#define MHF_SPOST_COUNT 0           /* u32 entries (streams), >= 1 */
#define MHF_SPOST_ENTRY_SIZE_OFF 4  /* u32 entry size (24; §12.1) */
#define MHF_SPOST_DATA_BYTES 8      /* u64 bytes of the bodies */
#define MHF_SPOST_ENTRY_SIZE 24u
#define MHF_SPOST_E_STREAM 0        /* u32 stream id, 0 .. 65535 */
#define MHF_SPOST_E_RESERVED 4      /* u32 = 0 */
#define MHF_SPOST_E_OFFSET 8        /* u64 its body, from the data area's start */
#define MHF_SPOST_E_BYTES 16        /* u64 its body's bytes; 0: none */
#define MHF_SPOST_SHIFT_DEFAULT 12u /* the reference writer's first shift: 4 KiB */
#define MHF_SPOST_SHIFT_LAST 24u    /* ... and its last: 16 MiB */
#define MHF_SPOST_SPAN 256u         /* a query uses a body below this many granules */
#define MHF_SPOST_QUERY_STREAMS 64u /* ... and with at most this many streams */
#define MHF_SPOST_STREAMS_MAX 1024u /* the reference writer: none past this many */

/* ---- stream id runs (section 17, since 2.8; SPEC.md §9d.3) -------------
 * Per stream with a row in the segment, its runs of consecutive id offsets
 * (id - the segment's id_first): a 16-byte header, entry_count entries of
 * entry_size bytes (streams strictly increasing; as section 15's), then
 * the bodies. A body: a 16-byte header, group_count group records, then
 * the groups' varints (per run: gap, last - first). */
#define MHF_SECT_SRUNS 17u
#define MHF_SRUNS_HEADER_SIZE 16u
#define MHF_SRUNS_COUNT 0           /* u32 entries (streams), >= 1 */
#define MHF_SRUNS_ENTRY_SIZE_OFF 4  /* u32 entry size (24; §12.1) */
#define MHF_SRUNS_DATA_BYTES 8      /* u64 bytes of the bodies */
#define MHF_SRUNS_ENTRY_SIZE 24u
#define MHF_SRUNS_E_STREAM 0        /* u32 stream id, 0 .. 65535 */
#define MHF_SRUNS_E_RESERVED 4      /* u32 = 0 */
#define MHF_SRUNS_E_OFFSET 8        /* u64 its body, from the data area's start */
#define MHF_SRUNS_E_BYTES 16        /* u64 its body's bytes; 0: none */
#define MHF_SRUNS_B_HEADER_SIZE 16u
#define MHF_SRUNS_B_RUNS 0          /* u64 runs, >= 1 */
#define MHF_SRUNS_B_K 8             /* u32 runs per group, 1 .. 65536 */
#define MHF_SRUNS_B_GROUPS 12       /* u32 groups = ceil(runs / K) */
#define MHF_SRUNS_G_SIZE 16u
#define MHF_SRUNS_G_FIRST 0         /* u64 offset of the group's first run */
#define MHF_SRUNS_G_DATA 8          /* u64 its data, from the groups' data start */
#define MHF_SRUNS_K_DEFAULT 64u     /* what the reference writer writes */
#define MHF_SRUNS_K_MAX 65536u

/* ---- span address set (section 11, since 2.3; SPEC.md §9e) ------------- */
/* The segment at MANIFEST position k (record index + 1) with L = k & -k >= 2
 * may carry the union, per operation, of the address sets of the L segments
 * at positions k - L + 1 .. k (a Fenwick tree over the MANIFEST): a 32-byte
 * header, then an address set exactly as section 8 (MHF_ASET_*). */
#define MHF_SECT_SPAN 11u
#define MHF_SPAN_HEADER_SIZE 32u
#define MHF_SPAN_SEGMENTS 0        /* u32 L: segments covered, 2^j >= 2 */
#define MHF_SPAN_RESERVED0 4       /* u32 = 0 */
#define MHF_SPAN_FIRST_SEQ 8       /* u64 seq of the first segment covered */
#define MHF_SPAN_ACCESSES 16       /* u64 sum of the covered segments' counts */
#define MHF_SPAN_RESERVED1 24      /* u64 = 0 */
#define MHF_SPAN_K 16u             /* intervals per run the reference writer
                                      writes in a node's set */

/* ---- span stream address set (section 16, since 2.8; SPEC.md §9e.1) ---
 * A node of section 11's tree per stream: a 48-byte header, entry_count
 * entries of entry_size bytes (streams strictly increasing), then each
 * entry's address set (section 8's layout, its intervals whole granules of
 * the entry's shift) back to back; an entry of shift 0 and 0 bytes has
 * none. */
#define MHF_SECT_SSPAN 16u
#define MHF_SSPAN_HEADER_SIZE 48u
#define MHF_SSPAN_SEGMENTS 0        /* u32 L: segments covered, 2^j >= 2 */
#define MHF_SSPAN_COUNT 4           /* u32 entries (streams), >= 1 */
#define MHF_SSPAN_FIRST_SEQ 8       /* u64 seq of the first segment covered */
#define MHF_SSPAN_ACCESSES 16       /* u64 sum of the covered segments' counts */
#define MHF_SSPAN_ENTRY_SIZE_OFF 24 /* u32 entry size (24; §12.1) */
#define MHF_SSPAN_RESERVED0 28      /* u32 = 0 */
#define MHF_SSPAN_DATA_BYTES 32     /* u64 bytes of the sets */
#define MHF_SSPAN_RESERVED1 40      /* u64 = 0 */
#define MHF_SSPAN_ENTRY_SIZE 24u
#define MHF_SSPAN_E_STREAM 0        /* u32 stream id, 0 .. 65535 */
#define MHF_SSPAN_E_SHIFT 4         /* u32 granule shift, 12 .. 63; 0: no set */
#define MHF_SSPAN_E_OFFSET 8        /* u64 its set, from the data area's start */
#define MHF_SSPAN_E_BYTES 16        /* u64 its set's bytes; 0: none */
#define MHF_SSPAN_SHIFT_MIN 12u     /* the finest shift: 4 KiB */
#define MHF_SSPAN_SHIFT_LAST 24u    /* the reference writer's coarsest */
#define MHF_SSPAN_SHIFT_STEP 4u     /* ... coarsened so many bits at a time */
#define MHF_SSPAN_STREAM_BYTES 256u /* its budget: count / 16 + 4 KiB + this a stream */

/* ---- piece sums (section 12, since 2.4; SPEC.md §9f) ------------------- */
/* XXH3-64 of every 2^p-byte piece of some other optional sections (the
 * covered ones), so that a reader checks the pieces a query reads instead
 * of a whole section before its first use: a 16-byte header, entry_count
 * entries of entry_size bytes (one per covered section, types increasing),
 * then the u64 sums, each covered section's back to back from its `first`. */
#define MHF_SECT_PSUM 12u
#define MHF_PSUM_HEADER_SIZE 16u
#define MHF_PSUM_SHIFT 0           /* u32 p: piece bytes 2^p, 12 .. 30 */
#define MHF_PSUM_ENTRY_COUNT 4     /* u32 E: covered sections, >= 1 */
#define MHF_PSUM_ENTRY_SIZE_OFF 8  /* u32 entry record size (16; §12.1) */
#define MHF_PSUM_RESERVED 12       /* u32 = 0 */
#define MHF_PSUM_ENTRY_SIZE 16u
#define MHF_PSUM_E_TYPE 0          /* u32 the covered section's type */
#define MHF_PSUM_E_RESERVED 4      /* u32 = 0 */
#define MHF_PSUM_E_FIRST 8         /* u64 index of its first piece's sum */
#define MHF_PSUM_SHIFT_MIN 12u
#define MHF_PSUM_SHIFT_MAX 30u
#define MHF_PSUM_SHIFT_DEFAULT 12u /* what the reference writer writes: 4 KiB */
#define MHF_PSUM_TYPE_MIN 6u       /* the first optional type a piece sum
                                      may cover (1-5 have their own sums) */

/* ---- id transitions (section 13, since 2.5; SPEC.md §9g) -------------
 * The transition of every K-th id offset of each slice (its *samples*:
 * sample j is the transition of id offset j K), in groups of S samples,
 * each group Elias-Fano coded against its first sample's transition: a
 * 32-byte header, group_count records of group_size bytes, then the data
 * area, each group's `words` u64 words back to back in record order (its
 * count x L low bits, then its high bits: bit (v_i >> L) + i set for each
 * sample i, v_i its transition minus the group's first, nothing else). */
#define MHF_SECT_IDTIME 13u
#define MHF_IDTIME_HEADER_SIZE 32u
#define MHF_IDTIME_STRIDE 0          /* u32 K: ids per sample, 2^k, 1 .. 65536 */
#define MHF_IDTIME_GROUP_SAMPLES 4   /* u32 S: samples per group, 2^k, 64 .. 65536 */
#define MHF_IDTIME_GROUP_COUNT 8     /* u32 */
#define MHF_IDTIME_GROUP_SIZE_OFF 12 /* u32 group_size (32; §12.1) */
#define MHF_IDTIME_DATA_BYTES 16     /* u64, a multiple of 8 */
#define MHF_IDTIME_RESERVED 24       /* u64 = 0 */
#define MHF_IDTIME_GROUP_SIZE 32u
#define MHF_IDTIME_G_DATA_OFFSET 0   /* u64 from the data area's start, x 8 */
#define MHF_IDTIME_G_SLICE 8         /* u32 slice index in the segment */
#define MHF_IDTIME_G_FIRST 12        /* u32 first sample index, a multiple of S */
#define MHF_IDTIME_G_T_FIRST 16      /* u64 transition of its first sample */
#define MHF_IDTIME_G_WORDS 24        /* u32 u64 words of data, >= 1 */
#define MHF_IDTIME_G_LOW_BITS 28     /* u8 L, 0 .. 63 */
#define MHF_IDTIME_G_RESERVED 29     /* 3 bytes = 0 */
#define MHF_IDTIME_STRIDE_MAX 65536u
#define MHF_IDTIME_S_MIN 64u
#define MHF_IDTIME_S_MAX 65536u
#define MHF_IDTIME_S_DEFAULT 1024u   /* what the reference writer writes */

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

/* Unsigned LEB128 varints (7 bits a byte, low first, at most 64 bits): the
 * one codec of the sections that use them (access blocks §6, address set
 * §9b, address postings §9d). */
static inline size_t mhf_varint_len(uint64_t v) {
    size_t k = 1;
    while (v >= 0x80) {
        v >>= 7;
        k++;
    }
    return k;
}
/* Writes v at p (room for mhf_varint_len(v) bytes); returns the end. */
static inline uint8_t *mhf_put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}
/* Reads one varint inside [*p, end) into *out and moves *p past it: 0; -1
 * when it runs past end or beyond 64 bits (*p, *out unchanged). */
static inline int mhf_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    const uint8_t *q = *p;
    if (q < end && *q < 0x80) { /* the common case: one byte */
        *out = *q;
        *p = q + 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; q < end && shift < 64; shift += 7) {
        uint8_t b = *q++;
        if (shift == 63 && b > 1)
            return -1; /* beyond 64 bits */
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            *p = q;
            return 0;
        }
    }
    return -1;
}

/* zigzag maps signed differences onto small unsigned numbers */
static inline uint64_t mhf_zigzag(uint64_t diff) {
    return (diff << 1) ^ (uint64_t)(-(int64_t)(diff >> 63));
}
static inline uint64_t mhf_unzigzag(uint64_t z) {
    return (z >> 1) ^ (uint64_t)(-(int64_t)(z & 1));
}

/* Where section `type` (MHF_SECT_*) of the segment bytes seg[0..len) is,
 * for 1.0 (fixed sections) and 2.0 (directory) alike: its offset, size and
 * record count. Returns 0 when the header or directory is out of bounds or
 * the section is absent. Tools and tests that poke at a segment's bytes use
 * it; it trusts the file no further than its bounds (the library's reader
 * is what validates). */
static inline int mhf_seg_find(const uint8_t *seg, uint64_t len, uint32_t type,
                               uint64_t *off, uint64_t *size, uint32_t *count) {
    if (len < MHF_SEG_HEADER_SIZE)
        return 0;
    if (mhf_load_u16(seg + MHF_SEG_MAJOR) < 2) {
        uint64_t o, n;
        uint32_t c = 0;
        switch (type) {
        case MHF_SECT_DATA:
            o = mhf_load_u64(seg + MHF_SEG_DATA_OFF);
            n = mhf_load_u64(seg + MHF_SEG_DATA_SIZE);
            break;
        case MHF_SECT_DICT:
            o = mhf_load_u64(seg + MHF_SEG_DICT_OFF);
            n = mhf_load_u64(seg + MHF_SEG_DICT_SIZE);
            break;
        case MHF_SECT_SLICES:
            o = mhf_load_u64(seg + MHF_SEG_SLICE_OFF);
            c = mhf_load_u32(seg + MHF_SEG_SLICE_COUNT);
            n = (uint64_t)c * MHF_SLICE_SIZE;
            break;
        case MHF_SECT_CHUNKS:
            o = mhf_load_u64(seg + MHF_SEG_CHUNK_OFF);
            c = mhf_load_u32(seg + MHF_SEG_CHUNK_COUNT);
            n = (uint64_t)c * MHF_CHUNK_SIZE;
            break;
        case MHF_SECT_BLOCKS:
            o = mhf_load_u64(seg + MHF_SEG_BLOCK_OFF);
            c = mhf_load_u32(seg + MHF_SEG_BLOCK_COUNT);
            n = (uint64_t)c * MHF_BLOCK_SIZE;
            break;
        default:
            return 0;
        }
        if (o > len || n > len - o)
            return 0;
        *off = o;
        *size = n;
        *count = c;
        return 1;
    }
    uint32_t nd = mhf_load_u32(seg + MHF2_SEG_DIR_COUNT);
    uint32_t rs = mhf_load_u32(seg + MHF2_SEG_DIR_RECSZ);
    uint64_t d = mhf_load_u64(seg + MHF2_SEG_DIR_OFF);
    if (rs < MHF2_DIR_SIZE || d > len || (uint64_t)nd * rs > len - d)
        return 0;
    for (uint32_t i = 0; i < nd; i++) {
        const uint8_t *e = seg + d + (uint64_t)i * rs;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) != type)
            continue;
        uint64_t o = mhf_load_u64(e + MHF2_DIR_OFFSET);
        uint64_t n = mhf_load_u64(e + MHF2_DIR_BYTES);
        if (o > len || n > len - o)
            return 0;
        *off = o;
        *size = n;
        *count = mhf_load_u32(e + MHF2_DIR_RECCOUNT);
        return 1;
    }
    return 0;
}

/* The checks below pin the layout: a change here is a format change. */
_Static_assert(MHF_SEG_HEADER_SUM + 8 == MHF_SEG_HEADER_SIZE, "segment header size");
_Static_assert(MHF2_SEG_RESERVED1 + MHF2_SEG_RESERVED1_SIZE == MHF_SEG_HEADER_SUM, "segment header 2.0 layout");
_Static_assert(MHF2_DIR_RESERVED + 8 == MHF2_DIR_SIZE, "directory entry size");
_Static_assert(MHF2_SLICE_RESERVED + 4 == MHF2_SLICE_SIZE, "slice record 2.0 size");
_Static_assert(MHF2_STREAM_T_LAST + 8 == MHF2_STREAM_SIZE, "stream record size");
_Static_assert(MHF_SEG_RESERVED1 + MHF_SEG_RESERVED1_SIZE == MHF_SEG_HEADER_SUM, "segment header layout");
_Static_assert(MHF_IDMAP_RESERVED1 + 8 == MHF_IDMAP_HEADER_SIZE, "id map header size");
_Static_assert(MHF_IDMAP_G_RESERVED1 + 4 == MHF_IDMAP_GROUP_SIZE, "id map group record size");
_Static_assert(MHF_SLICE_INDEX_SUM + 8 == MHF_SLICE_SIZE, "slice record size");
_Static_assert(MHF_CHUNK_RESERVED + 7 == MHF_CHUNK_SIZE, "chunk record size");
_Static_assert(MHF_BLOCK_RESERVED + 4 == MHF_BLOCK_SIZE, "block record size");
_Static_assert(MHF_MREC_RESERVED + 8 == MHF_MAN_REC_SIZE, "manifest record size");
_Static_assert(MHF_MAN_RESERVED + 8 == MHF_MAN_HEADER_SIZE, "manifest header size");
_Static_assert(sizeof(MHF_SEG_MAGIC) == 9 && sizeof(MHF_MAN_MAGIC) == 9 && sizeof(MHF_DICT_MAGIC) == 9, "magic sizes");

#endif /* MH_FORMAT_H */
