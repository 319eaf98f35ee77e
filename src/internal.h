/*
 * internal.h - declarations shared by the library's files; not installed.
 *
 * Data flows one way: writer.c buffers a slice -> segment_write.c builds its
 * chunks and blocks (codec.c) and writes the segment -> manifest.c commits
 * it -> segment_read.c maps and validates -> query.c answers queries.
 */
#ifndef MH_INTERNAL_H
#define MH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "memhist.h"
#include "mh_format.h"

/* ---- failing through one macro -------------------------------------- */
/* The detail of a failure, filled where a check fails and carried by the
 * call path (a writer, a reader being opened, a query context, a cursor):
 * the code, the byte offset in the file it is about, and one line saying
 * what and where. Callers that know more of the place (file name, slice,
 * block) put it in front with mh_diag_prefix on the way out. No thread-local
 * or global state: whoever wants the detail passes a diag down. */
typedef struct mh_diag {
    int code;
    uint64_t offset;
    char msg[MH_ERRMSG_MAX];
} mh_diag;

/* The failure paths' functions are cold: a compiler then moves the code
 * that leads to a call of one (a check's message and its arguments) out
 * of the function's hot part (gcc: into foo.cold in .text.unlikely), so
 * the instructions a query runs lie on fewer cache lines and pages (a
 * question asked after other work meets them cold: stop 36). */
#if defined(__GNUC__) || defined(__clang__)
#define MH_COLD __attribute__((cold))
#else
#define MH_COLD
#endif

/* Records code, offset and the formatted message in d (NULL: nothing).
 * Returns code, so a failure path can `return mh_diag_fail(...)`. */
MH_COLD int mh_diag_fail(mh_diag *d, int code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same, keeping d's code and offset (a message for an error already set). */
MH_COLD void mh_diag_set(mh_diag *d, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Puts "<formatted>: " in front of d's message (truncating its end when the
 * whole does not fit); an empty message gets mh_strerror(d->code) first. */
MH_COLD void mh_diag_prefix(mh_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* An OS failure: MH_EIO or MH_ENOSPC (mh_io_error from errno, or the given
 * code when not 0), with "<what> <path>: strerror(errno)". errno is kept. */
MH_COLD int mh_diag_os(mh_diag *d, int code, const char *what, const char *path);
/* Copies d's message into buf like snprintf (size 0: only the length;
 * buf may then be NULL). Returns strlen of the message. */
size_t mh_diag_copy(const mh_diag *d, char *buf, size_t size);
/* Keeps a failure's detail when the callee said nothing (a bare code from
 * a path without a diag): when d->code is still 0 (public calls clear it on
 * entry), the message becomes mh_strerror(code). Returns code. */
int mh_diag_code(mh_diag *d, int code);

#ifdef MH_DEBUG_CHECKS
#include <stdio.h>
#define MH_TRACE_FAIL_(code, cond)                                             \
    fprintf(stderr, "memhist: %s:%d: %s failed (%s)\n", __FILE__, __LINE__,    \
            #cond, mh_error_name(code))
#else
#define MH_TRACE_FAIL_(code, cond) ((void)0)
#endif

/* Returns code from the enclosing function when cond is false, after
 * recording the failure (code, offset, what and where) in diag d (which may
 * be NULL). The one way a check fails. */
#define MH_CHECK(cond, code, d, off, ...)                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            MH_TRACE_FAIL_(code, cond);                                        \
            return mh_diag_fail((d), (code), (uint64_t)(off), __VA_ARGS__);    \
        }                                                                      \
    } while (0)

/* Fails unconditionally (the detail form of `return code`). */
#define MH_FAIL(code, d, off, ...)                                             \
    do {                                                                       \
        MH_TRACE_FAIL_(code, always);                                           \
        return mh_diag_fail((d), (code), (uint64_t)(off), __VA_ARGS__);        \
    } while (0)

#define MH_TRY(expr)                                                           \
    do {                                                                       \
        int mh_try_rc_ = (expr);                                               \
        if (mh_try_rc_ < 0)                                                    \
            return mh_try_rc_;                                                 \
    } while (0)

/* Checksums are skipped only in fuzzing builds, so the fuzzer reaches the
 * structures behind them. Never defined in a normal build. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MH_CHECKSUMS_ENFORCED 0
#else
#define MH_CHECKSUMS_ENFORCED 1
#endif

/* ---- growable structs (memhist.h, STRUCTS THAT GROW) ----------------- */
/* Size of T up to and including member f, rounded to T's alignment: the
 * first published size of a struct whose ABI-1 layout ends at f. It stays
 * right when members are appended later. */
#define MH_SIZE_UPTO(T, f)                                                     \
    ((offsetof(T, f) + sizeof(((T *)0)->f) + _Alignof(T) - 1) /                \
     _Alignof(T) * _Alignof(T))
#define MH_QUERY_SIZE_1 MH_SIZE_UPTO(mh_query, end)
#define MH_WRITER_OPTIONS_SIZE_1 MH_SIZE_UPTO(mh_writer_options, reserved)
#define MH_STATS_SIZE_1 MH_SIZE_UPTO(mh_stats, raw_bytes)
#define MH_SEGMENT_INFO_SIZE_1 MH_SIZE_UPTO(mh_segment_info, index_bytes)
#define MH_SLICE_INFO_SIZE_1 MH_SIZE_UPTO(mh_slice_info, blocks)
#define MH_CHUNK_INFO_SIZE_1 MH_SIZE_UPTO(mh_chunk_info, op)
#define MH_COLUMN_INFO_SIZE_1 MH_SIZE_UPTO(mh_column_info, nullable)
#define MH_VERIFY_RESULT_SIZE_1 MH_SIZE_UPTO(mh_verify_result, repaired)
#define MH_READER_OPTIONS_SIZE_1 MH_SIZE_UPTO(mh_reader_options, cache_bytes)
#define MH_STREAM_INFO_SIZE_1 MH_SIZE_UPTO(mh_stream_info, transition_last)

/* Reads an input struct: *local holds the defaults on entry and gets the
 * caller's min(struct_size, lib_size) bytes, with struct_size = lib_size.
 * MH_EINVAL for NULL, struct_size < min_size, or a non-zero byte past
 * lib_size. */
int mh_struct_in(const void *in, size_t min_size, size_t lib_size,
                 void *local);
/* Writes an output struct: min(out->struct_size, lib_size) bytes of full,
 * leaving out->struct_size as it is. MH_EINVAL for NULL or struct_size <
 * min_size. */
int mh_struct_out(void *out, const void *full, size_t min_size,
                  size_t lib_size);
/* The entry check alone (NULL or struct_size < min_size: MH_EINVAL), for
 * functions that must refuse before doing any work. */
int mh_struct_out_ok(const void *out, size_t min_size);
#define MH_STRUCT_OUT(out, full, SIZE1)                                        \
    mh_struct_out((out), (full), (SIZE1), sizeof *(full))

uint64_t mh_hash(const void *p, size_t n);
uint64_t mh_hash_seeded(const void *p, size_t n, uint64_t seed);

/* ---- the query cache's memory (arena.c) ---------------------------- */
/* One mapping reserved in 2 MiB huge pages, carved into pieces of size
 * classes (256, 384, 512, 768, ... bytes, a 64-byte header included); a
 * freed piece goes back to its class's list, for the next piece of that
 * class. What does not fit (or every piece, when the mapping could not be
 * made or was asked under MH_ARENA_ALIGN bytes) is malloc'd, and freed
 * by mh_arena_free as well. A NULL arena is malloc and free. One thread
 * at a time. */
#define MH_ARENA_CLASSES 64u
#define MH_ARENA_HEAD 64u
#define MH_ARENA_ALIGN ((size_t)2 << 20)
typedef struct mh_arena {
    void *map;             /* the mapping (NULL: none), map_size bytes */
    size_t map_size;
    uint8_t *base, *end;   /* its part on a 2 MiB boundary */
    uint8_t *next;         /* bytes from here on not yet carved */
    void *free_list[MH_ARENA_CLASSES];
} mh_arena;
/* Reserves `bytes` (rounded up to 2 MiB) of address space; never fails
 * (without a mapping, pieces are malloc'd). */
void mh_arena_init(mh_arena *a, size_t bytes);
/* A piece of n bytes, 64-byte aligned when from the mapping; NULL when
 * out of memory. */
void *mh_arena_alloc(mh_arena *a, size_t n);
/* p from mh_arena_alloc(a, ...) (NULL: nothing). */
void mh_arena_free(mh_arena *a, void *p);
/* The bytes of the mapping carved so far: what it may have touched. */
size_t mh_arena_touched(const mh_arena *a);
void mh_arena_destroy(mh_arena *a);

/* ---- block codec (codec.c) ------------------------------------------ */
/* Decoded rows of one block, columns apart. */
typedef struct mh_rows {
    uint32_t n;  /* the rows decoded are lo .. n - 1 (their indexes in the block) */
    uint32_t lo; /* 0 but for a window (mh_block_decode_rows) */
    uint32_t cap;
    uint32_t *id_off;
    uint64_t *t;
    uint64_t *phy;
    uint64_t *lin;
    uint32_t *size;
    uint8_t *has_lin;
    /* format 2.0 columns; filled 0 (stream 0, no pc) when a block does not
     * store them (1.0 blocks, 2.0 blocks of single-stream slices), except
     * in lazy rows: there no_stream / no_pc say so and the arrays are left
     * as they are (read them through mh_rows_stream / _pc / _has_pc) */
    uint32_t *stream;
    uint64_t *pc;
    uint8_t *has_pc;
    uint32_t opt_cap; /* rows stream, pc and has_pc hold */
    uint8_t lazy;     /* those arrays made by the decoder, on first need */
    uint8_t idt;      /* id_off and t alone allocated (phy, lin, size and
                       * has_lin NULL): rows decoded with MH_COLS_ID_T only */
    uint8_t no_stream, no_pc; /* the block decoded last stores no such column */
    /* what the decode of rows lo .. n - 1 saw, so that a reader of one
     * row's access need not load a flag or a stream it already knows
     * (mhq_access: three of the five lines an answer's row met cold on
     * the qemu recordings): every row has a linear address, every row's
     * stream is 0 (or no_stream), every row has a pc. 0: not known, read
     * the arrays (anything but the block decoders leaves them 0) */
    uint8_t lin_all, stream_zero, pc_all;
    /* the columns' memory, three pieces: ids and transitions; physical,
     * linear, size and its flag; stream, pc and its flag. From ar (the
     * query cache's arena, kept by mh_rows_free), malloc'd when NULL */
    mh_arena *ar;
    void *mem[3];
} mh_rows;

/* Room for cap rows, every column. */
int mh_rows_reserve(mh_rows *r, uint32_t cap);
/* Room for cap rows of the columns every block has; the stream and pc
 * arrays come when a decoded block stores them. The query cache's rows: a
 * decoded block of a store without pc or streams costs 33 bytes a row, not
 * 46, and nothing is zero-filled per decode. */
int mh_rows_reserve_lazy(mh_rows *r, uint32_t cap);
/* As mh_rows_reserve_lazy for rows decoded with MH_COLS_ID_T alone (format
 * 2, the fast decoders): room for cap ids and transitions, 12 bytes a row;
 * rows that already have every column keep them. A later
 * mh_rows_reserve_lazy adds the other columns (the ids and transitions
 * kept). Decoding other columns into such rows is MH_EINVAL. */
int mh_rows_reserve_idt(mh_rows *r, uint32_t cap);
void mh_rows_free(mh_rows *r);

static inline uint32_t mh_rows_stream(const mh_rows *r, uint32_t i) {
    return r->no_stream ? 0 : r->stream[i];
}
static inline uint8_t mh_rows_has_pc(const mh_rows *r, uint32_t i) {
    return r->no_pc ? 0 : r->has_pc[i];
}
static inline uint64_t mh_rows_pc(const mh_rows *r, uint32_t i) {
    return r->no_pc ? 0 : r->pc[i];
}

/* What a block column is, for the codec (a segment's stored columns in
 * table order; unknown non-required ones are skipped by their length). */
enum {
    MH_COL_ID,
    MH_COL_TRANSITION,
    MH_COL_PHYSICAL,
    MH_COL_LINEAR,
    MH_COL_SIZE,
    MH_COL_STREAM,
    MH_COL_PC,
    MH_COL_UNKNOWN
};
#define MH_MAX_STORED_COLUMNS 64u

/* Which columns a block stores, in order (the segment's stored columns:
 * MH_COL_* kinds, unknown non-required ones as MH_COL_UNKNOWN). major 1:
 * the 1.0 block (five columns back to back, no lengths); major 2: each
 * column is `varint byte_length, bytes`, and a block may end before its
 * stream and pc columns (and unknown ones), which then hold stream 0 / no
 * pc for every row. */
typedef struct mh_block_layout {
    uint16_t major;
    uint32_t ncols;
    uint8_t kind[MH_MAX_STORED_COLUMNS];
} mh_block_layout;

/* The standard layouts: 1.0, or 2.0 with or without stream and pc. */
void mh_block_layout_std(mh_block_layout *l, uint16_t major, int stream,
                         int pc);

/* Largest raw (uncompressed) size of a block of n rows of any layout (for
 * scratch buffers). */
size_t mh_block_raw_bound(uint32_t n);
/* The raw size a block of n rows of layout l may have (SPEC.md): 1.0
 * 50n + ceil(n/8), 2.0 60n + 2 ceil(n/8) + 10 columns. */
size_t mh_block_raw_limit(const mh_block_layout *l, uint32_t n);

/* Encodes rows [0, n) of c into raw (capacity mh_block_raw_bound(n)) as a
 * 2.0 block holding the base columns, then the stream column when stream
 * or pc, then the pc column when pc; returns the raw size. t_base is the
 * slice's first transition. */
size_t mh_block_encode_raw(uint8_t *raw, uint32_t n, const mh_rows *c,
                           uint64_t t_base, int stream, int pc);

/* Parses a raw block of n rows into out (reserved for n); every varint is
 * bounds-checked and the block must be consumed exactly. Columns the block
 * does not store are filled with their defaults. */
int mh_block_decode_raw(const uint8_t *raw, size_t raw_size, uint32_t n,
                        uint64_t t_base, const mh_block_layout *l,
                        mh_rows *out, mh_diag *d);
/* The same with the reference column decoders (one value at a time, each
 * check where its value is read): what mh_block_decode_raw falls back to
 * on a column that fails a check, so both give the same rows, codes and
 * details (tests/codec_fast.c compares them). */
int mh_block_decode_raw_ref(const uint8_t *raw, size_t raw_size, uint32_t n,
                            uint64_t t_base, const mh_block_layout *l,
                            mh_rows *out, mh_diag *d);
/* mh_block_decode_raw of rows from .. upto - 1 and the columns cols only
 * (mh_block_decode_rows). */
int mh_block_decode_raw_rows(const uint8_t *raw, size_t raw_size, uint32_t n,
                             uint32_t from, uint32_t upto, unsigned cols, uint64_t t_base,
                             const mh_block_layout *l, mh_rows *out, mh_diag *d);

/* Checks the checksum, decompresses and parses one block. scratch must hold
 * raw_size bytes. */
int mh_block_decode(const uint8_t *comp, uint32_t comp_size, uint64_t sum,
                    uint32_t raw_size, uint32_t n, uint64_t t_base,
                    const mh_block_layout *l, uint8_t *scratch, mh_rows *out,
                    mh_diag *d);
/* The same for the block's rows from .. upto - 1 (format 2: out->lo =
 * from when from < the rows decoded, else 0; out->n = upto when upto < n)
 * and the columns of cols (a mask of 1 << MH_COL_*; MH_COLS_ALL: every
 * one; format 2): every column's values past them, and the columns not
 * asked for, are passed over by the column's length, not read, and the
 * varints before `from` are passed over or summed, so none of their values
 * is checked (a later decode of more checks them; fsck decodes every row).
 * The rows land at their indexes in the block: out's arrays hold n rows,
 * valid from lo on. */
#define MH_COLS_ALL (~0u)
#define MH_COLS_ID_T (1u << MH_COL_ID | 1u << MH_COL_TRANSITION)
int mh_block_decode_rows(const uint8_t *comp, uint32_t comp_size, uint64_t sum,
                         uint32_t raw_size, uint32_t n, uint32_t from, uint32_t upto,
                         unsigned cols, uint64_t t_base, const mh_block_layout *l,
                         uint8_t *scratch, mh_rows *out, mh_diag *d);

/* A raw (decompressed) block of format 2 read a row at a time: where each
 * known column lies, and a cursor per column (the id-order path's located
 * rows, query_idmap.c: the id and transition columns are decoded as
 * usual, the others of the rows it locates only). The cursor's state is
 * saved at every MH_BC_CHECKPOINTS-th of the block as it passes there (a
 * checkpoint), so that a row is reached from the checkpoint at or before
 * it when the cursor is past the row or behind that checkpoint, not from
 * the block's first row. */
#define MH_BC_CHECKPOINTS 32
typedef struct mh_block_ckpt {
    uint32_t pos[MH_COL_UNKNOWN]; /* each column's varint at the row */
    uint64_t phy, pc;             /* the sums before it (delta columns) */
} mh_block_ckpt;
typedef struct mh_block_cols {
    const uint8_t *raw;
    uint32_t n;                    /* the block's rows */
    unsigned has;                  /* 1 << MH_COL_* of the columns stored */
    uint32_t off[MH_COL_UNKNOWN];  /* a column's bytes: [off, end) of raw */
    uint32_t end[MH_COL_UNKNOWN];
    uint32_t row;                  /* the cursor: every column at this row */
    uint32_t pos[MH_COL_UNKNOWN];  /* its varint there (after the bitmap) */
    uint64_t prev[MH_COL_UNKNOWN]; /* physical, pc: the value before it */
    uint32_t step;                 /* rows between two checkpoints */
    uint32_t nck;                  /* checkpoints saved: rows 0, step, .. */
    mh_block_ckpt ck[MH_BC_CHECKPOINTS];
} mh_block_cols;

/* Finds the columns of raw (raw_size bytes, n rows, layout l; format 2)
 * and puts the cursor at row 0: MH_ECORRUPT when the column lengths do not
 * tile the block (the caller decodes it whole for the detail). raw must
 * stay as it is while bc is used. */
int mh_block_cols_find(const uint8_t *raw, size_t raw_size, uint32_t n,
                       const mh_block_layout *l, mh_block_cols *bc);
/* Row i's physical, size, linear, stream and pc (their defaults when the
 * block does not store the column) into a (its other fields untouched),
 * checked as a decode checks them (a varint
 * malformed or past its column, a size of 0 or 2^32 or more or wrapping,
 * a stream above MH_STREAM_MAX: MH_ECORRUPT, without a detail: the caller
 * decodes the block whole, which names it). A row costs the varints from
 * the cursor or from the checkpoint at or before it, whichever is nearer
 * on its side: the first walk to a row passes (and saves the checkpoints
 * of) the rows before it, a row before the furthest point walked costs at
 * most n / MH_BC_CHECKPOINTS rows' worth, so rows taken in decreasing
 * order, as a backward query takes them, cost one walk over the block and
 * a short one a row. */
int mh_block_row_take(mh_block_cols *bc, uint32_t i, mh_access *a);

/* ---- dictionary (dict.c) -------------------------------------------- */
typedef struct mh_kv {
    char *key;
    char *value;
} mh_kv;

/* A stream table entry (dictionary table 5): the stream's description and
 * its accesses in this segment. A segment without a streams table (1.0,
 * or 2.0 single-stream) gets one synthesized entry: stream 0, kind other,
 * with the segment's count and transition range (mh_seg_parse). */
typedef struct mh_dict_stream {
    uint32_t id;
    uint8_t kind;
    const char *name;  /* into strings, or NULL */
    uint32_t parent;   /* MH_NONE32 when none */
    uint64_t pid, tid; /* MH_NONE64 when none */
    uint32_t cpu;      /* MH_NONE32 when none */
    uint64_t count, t_first, t_last; /* in this segment; t 0/0 when count 0 */
} mh_dict_stream;

/* Stream metadata (table 6), sorted by stream id (stable). */
typedef struct mh_stream_kv {
    uint32_t stream;
    const char *key, *value; /* parsed: into strings; sealing: caller's */
} mh_stream_kv;

/* The part of a window that lies in one segment (table 7). */
typedef struct mh_window_part {
    uint64_t window, id_first, count, t_first, t_last;
} mh_window_part;

typedef struct mh_dict {
    uint16_t major;  /* 1: the 1.0 dictionary layout; 2: tables */
    char **strings;  /* NUL-terminated copies */
    size_t nstrings;
    mh_column_info *columns;
    size_t ncolumns;
    const char *op_names[MHF_OP_COUNT];
    uint8_t op_sqlite_bit[MHF_OP_COUNT];
    mh_kv *meta;     /* pointers into strings */
    size_t nmeta;
    /* since 2.0 */
    mh_dict_stream *streams; /* increasing id; see mh_dict_stream */
    size_t nstreams;
    int has_stream_table;    /* 0: streams holds the synthesized stream 0 */
    mh_stream_kv *stream_meta;
    size_t nstream_meta;
    mh_window_part *windows; /* increasing window */
    size_t nwindows;
    mh_block_layout layout; /* the stored columns, in table order */
    int has_stream_col, has_pc_col;
} mh_dict;

/* Serializes the 2.0 dictionary of a segment being sealed: the standard
 * columns (stream when stream_col, pc when pc_col), operations, si's
 * metadata, stream metadata, windows and extra tables, and the streams
 * table from streams[0..nstreams) (descriptions with this segment's
 * counts; none: no streams table). Into a malloc'd buffer. */
typedef struct mh_seal_info mh_seal_info;
int mh_dict_build(const mh_seal_info *si, const mh_dict_stream *streams,
                  size_t nstreams, int stream_col, int pc_col, uint8_t **out,
                  size_t *size);
/* Parses and validates a dictionary section of a segment of version
 * major.minor (base_off: its file offset, for diagnostics). Unknown
 * required tables or columns, and known columns or operations that differ
 * from the spec, give MH_EVERSION. The checks that need the segment's
 * header (stream counts, window parts in the id range) are
 * mh_seg_parse's. */
int mh_dict_parse(const uint8_t *p, size_t size, uint64_t base_off,
                  uint16_t major, uint16_t minor, mh_dict *out, mh_diag *d);
void mh_dict_free(mh_dict *dict);

/* Whether p[0..n) is valid UTF-8 as SPEC.md 7.2 has it (RFC 3629: no
 * overlong form, surrogate or code point past U+10FFFF). The writer refuses
 * what the reader would: a string it stores must read back. */
int mh_utf8_valid(const uint8_t *p, size_t n);

/* ---- files (fileio.c) ----------------------------------------------- */
int mh_write_all(int fd, const void *buf, size_t n);
int mh_pwrite_all(int fd, const void *buf, size_t n, uint64_t off);
/* The functions below that take a diag say which path and why (strerror)
 * when they fail; mh_write_all / mh_pwrite_all leave that to the caller,
 * which knows the file's name. */
int mh_fsync_dir(const char *dir, mh_diag *d);
/* Reads a whole small file into a malloc'd buffer. MH_ENOENT if absent. */
int mh_read_file(const char *path, uint8_t **out, size_t *size, mh_diag *d);
/* Writes buf to dir/name atomically: dir/tmp_name, fsync, rename, fsync dir. */
int mh_write_atomic(const char *dir, const char *tmp_name, const char *name,
                    const void *buf, size_t n, mh_diag *d);
char *mh_path_join(const char *dir, const char *name);
void mh_segment_name(char out[MHF_SEGMENT_NAME_LEN + 1], uint64_t seq);
/* Maps errno after a failed write to MH_ENOSPC or MH_EIO. */
int mh_io_error(void);

/* ---- manifest (manifest.c) ------------------------------------------ */
typedef struct mh_manrec {
    uint64_t seq, id_first, count, t_first, t_last, file_size, header_sum;
    uint16_t major; /* not stored: its MANIFEST's major, which the segment's
                       must equal (0: not checked) */
} mh_manrec;

typedef struct mh_manifest {
    uint16_t major, minor;
    uint64_t generation;
    uint64_t access_count;
    uint64_t next_seq;
    mh_manrec *recs;
    size_t nrecs;
} mh_manifest;

int mh_manifest_parse(const uint8_t *p, size_t size, mh_manifest *out,
                      mh_diag *d);
int mh_manifest_encode(const mh_manifest *m, uint8_t **out, size_t *size);
int mh_manifest_load(const char *dir, mh_manifest *out, mh_diag *d);
int mh_manifest_store(const char *dir, const mh_manifest *m, mh_diag *d);
void mh_manifest_free(mh_manifest *m);
/* Whether a writer may append to the store of MANIFEST m: MH_EVERSION
 * "format 1.0 store: run memhist upgrade" for a 1.x store (a writer writes
 * 2.0 segments only, and a MANIFEST lists segments of its own major). */
int mh_manifest_writable(const mh_manifest *m, mh_diag *d);

/* ---- segment reading (segment_read.c) ------------------------------- */
/* Said by the reader and by fsck when the MANIFEST lists an absent file. */
#define MH_MSG_SEGMENT_MISSING "segment listed in MANIFEST is missing"

/* One entry of a segment's section directory (SPEC.md "Section
 * directory"). A 1.0 segment gets one synthesized entry per fixed section
 * (data, dictionary, slices, chunks, blocks; REQUIRED, sums from its
 * header, 0 for data). */
typedef struct mh_section {
    uint32_t type, flags;
    uint64_t offset, size;
    uint32_t recsz, count;
    uint64_t sum;
} mh_section;

typedef struct mh_seg {
    const uint8_t *base;  /* whole file */
    size_t size;
    int mapped;           /* base came from mmap */
    char name[MHF_SEGMENT_NAME_LEN + 1];
    uint16_t major, minor;
    uint64_t seq, id_first, count, t_first, t_last;
    uint64_t op_counts[MHF_OP_COUNT];
    uint32_t rows_per_block;
    uint64_t data_off, data_size, dict_off, dict_size, raw_size;
    uint64_t header_sum;
    mh_section *sections; /* the directory (synthesized for 1.0) */
    uint32_t nsections;
    /* 1 + the index of the first section of each type below 32, 0 none;
     * sect_indexed 0 (a segment built by hand, tests): mh_seg_section scans
     * the directory. A query asks for 3 to 5 types per segment it enters
     * (~275 instructions of a warm point query as a scan). */
    uint8_t sect_at[32];
    int sect_indexed;
    const uint8_t *slices, *chunks, *blocks;
    uint32_t nslices, nchunks, nblocks;
    uint32_t slice_recsz, chunk_recsz, block_recsz;
    uint64_t slice_off, chunk_off, block_off;
    uint64_t dict_sum, slice_sum, chunk_sum, block_sum; /* as stored */
    mh_dict dict;
    _Atomic uint8_t *slice_ok; /* per slice: index checksum verified */
    _Atomic int summary_ok[2]; /* sections 6 and 9 checked (summary_read.c) */
    _Atomic int summary_lazy[2]; /* ... by their piece sums, as queries read them */
    /* per entry of sections 6 and 9 read by piece sums: its postings
     * checked (a bitmap out of the budget, as check bits; NULL until the
     * section's first use, or when the budget had no room) */
    _Atomic(_Atomic uint64_t *) summary_post_ok[2];
    _Atomic int idmap_ok;   /* id map checked (idmap_read.c) */
    _Atomic int idtime_ok;  /* id transitions checked (idtime_read.c) */
    _Atomic int aset_ok;    /* address set checked (aset_read.c) */
    _Atomic int aset_lazy;  /* ... by its piece sums, as queries read it */
    /* per run of the address set / span address set read by piece sums:
     * its bytes checked (a bitmap out of the budget, as check bits; NULL
     * until the first use, or when the budget had no room) */
    _Atomic(_Atomic uint64_t *) aset_run_ok, span_run_ok;
    _Atomic int span_ok;    /* span address set checked (span_read.c) */
    _Atomic int span_lazy;  /* ... by its piece sums, as queries read it */
    _Atomic int span_stale; /* ... and found stale: never used */
    _Atomic int apost_ok;   /* address postings checked (apost_read.c) */
    _Atomic int spost_ok;   /* stream postings checked (spost_read.c, 2.7) */
    _Atomic int sspan_ok;   /* span stream address set checked (sspan_read.c, 2.8) */
    _Atomic int sspan_stale; /* ... and found stale: never used */
    _Atomic int sruns_ok;   /* stream id runs checked (sruns_read.c, 2.8) */
    _Atomic int apost_lazy; /* ... by their piece sums, as queries read them */
    /* per run of the postings: decoded whole and checked once, so later
     * queries skip to their keys (apost_read.c; a byte a run, out of the
     * reader's budget as the other check bits since 1.10.4; NULL until the
     * section's first use, or when the budget or memory was short: then
     * every run is checked on every use) */
    _Atomic(_Atomic uint8_t *) apost_run_ok;
    /* the postings' run searches' first probes, per op (apost_read.c:
     * run_search; MH_APOST_TOP_BYTES, out of the reader's budget as the run
     * marks since 1.10.4; NULL until the section's first use, or when the
     * budget or memory was short: then every search reads them in the run
     * table) */
    _Atomic(_Atomic uint64_t *) apost_top;
    /* per slice, what queries searched for and later ones need not (0 not
     * yet known, else 1 + it; MH_MEMO_KINDS entries a slice, kind by kind):
     * its first group in the id map and in the id transitions, remembered
     * once a search found the group and its record passed the checks; the
     * first chunk of each op from the second on (searched in chunk records
     * mh_seg_slice_check passed). mh_seg_memo; out of the budget as
     * apost_top; NULL until the first, or when the budget had no room:
     * then every query searches */
    _Atomic(_Atomic uint32_t *) slice_memo;
    /* per group of the id map / the id transitions read by piece sums: its
     * record and bytes passed a query's checks (idmap_read.c,
     * idtime_read.c: a later query checks only that the record names its
     * slice and first id; check bits out of the budget as block_ok; NULL
     * until the first, or when the budget had no room) */
    _Atomic(_Atomic uint64_t *) idmap_grp_ok, idtime_grp_ok;
    /* per run of the address set: where a later query may resume its
     * decode, recorded by the decodes that checked the run up to there
     * (aset_read.c; NULL until the section's first use, or when its
     * allocation failed: then every query decodes from the run's start) */
    _Atomic(struct mh_marks *) aset_marks;
    /* per run of the postings: where a later query may start (apost_read.c;
     * NULL as aset_marks, or when the budget below is spent) */
    _Atomic(struct mh_marks *) apost_marks;
    /* the reader's budget for run marks and check bits (mh_seg_marks_alloc);
     * NULL: none (a segment opened outside a reader, tests' fake segments).
     * marks_floor: what run marks must leave of it for the check bits */
    _Atomic int64_t *marks_left;
    const _Atomic int64_t *marks_floor;
    /* 1 + the last slice whose index was checked, for a scan's reads ahead
     * (segment_read.c): a hint, threads racing on it cost at most a read
     * asked twice or not at all */
    _Atomic uint32_t ra_slice;
    /* per block: its rows passed every check (mh_seg_block_known); NULL
     * until the first is, or when the marks budget had no room */
    _Atomic(_Atomic uint64_t *) block_ok;
    /* the edge of the slices whose records (ra_rec) and blocks (ra_dat) a
     * scan has asked for: exclusive going forward, inclusive backward */
    _Atomic uint32_t ra_rec, ra_dat;
    /* piece sums (psum_read.c): NULL until section 12's first use; psum_state
     * 0 not tried, 1 usable (psum set), 2 none or unusable (sections are
     * checked whole) */
    _Atomic(struct mh_psum_tab *) psum;
    _Atomic int psum_state;
    int psum_off; /* tests: piece sums ignored (the reader's psum_off) */
} mh_seg;

/* What a segment remembers of its checks and walks comes out of the
 * reader's budget, its cache option, so that what a reader holds stays
 * bounded by that option whatever the store's size; it returns to the
 * budget only with the reader (a segment is closed when its reader is).
 * Two kinds:
 * - check bits (the piece sums' table, the checked blocks' bitmap, the
 *   summaries' checked entries, the address sets' checked runs): a
 *   bit per piece or block; without them a segment's sections are hashed
 *   whole and its blocks' rows checked on every decode, so they may take
 *   the whole budget (hint 0);
 * - run marks (mh_marks, below): only make a walk shorter; they stop at
 *   the budget's floor, a quarter of it (hint 1), so that the check bits
 *   of segments opened later still find room.
 * Zeroed bytes, or NULL when the budget is spent or memory is short. A
 * segment without a budget (marks_left NULL) has no limit. */
void *mh_seg_marks_alloc(const mh_seg *seg, size_t bytes, int hint);
/* The n-bit bitmap of check bits published in *slot (a field of seg), made
 * on first call out of the budget (hint 0) and published once (a thread
 * that loses the race frees its own; its budget stays spent); NULL when
 * the budget has no room or memory is short. */
_Atomic uint64_t *mh_seg_bits(const mh_seg *seg, _Atomic(_Atomic uint64_t *) *slot, size_t n);
/* The kinds of seg->slice_memo: a slice's first group of the id map, of
 * the id transitions, and the first chunk of op 1 .. MH_OP_COUNT - 1
 * (relative to the slice's first; op 0's is 0). */
enum {
    MH_MEMO_IDMAP_G0 = 0,
    MH_MEMO_IDTIME_G0 = 1,
    MH_MEMO_OP_START = 2, /* + op - 1 */
    MH_MEMO_KINDS = 2 + MH_OP_COUNT - 1
};
/* The slot of seg->slice_memo for kind `kind` of slice si, the table made
 * on first call (hint 1, published once as mh_seg_bits); NULL when seg is
 * NULL, kind or si is out of range, or the budget has no room. A slot
 * holds 0 or 1 + what a checked search found: racing threads store the
 * same value. */
_Atomic uint32_t *mh_seg_memo(const mh_seg *seg, unsigned kind, uint32_t si);
/* What seg->slice_memo holds for kind `kind` of slice si (< nslices): 0
 * when not known or there is no table yet (inline, for the hot path; set
 * through mh_seg_memo). */
static inline uint32_t mh_seg_memo_get(const mh_seg *seg, unsigned kind, uint32_t si) {
    const _Atomic uint32_t *t =
        atomic_load_explicit(&((mh_seg *)seg)->slice_memo, memory_order_acquire);
    return t ? atomic_load_explicit(&t[(size_t)kind * seg->nslices + si], memory_order_relaxed)
             : 0;
}
/* Bit i of such a bitmap (0 when w is NULL), and setting it (nothing when
 * w is NULL): a bit is set after what it stands for passed its checks, and
 * read before that is relied on. */
static inline int mh_bit_get(_Atomic uint64_t *w, size_t i) {
    return w && (atomic_load_explicit(&w[i >> 6], memory_order_acquire) >> (i & 63) & 1u);
}
static inline void mh_bit_set(_Atomic uint64_t *w, size_t i) {
    if (w)
        atomic_fetch_or_explicit(&w[i >> 6], UINT64_C(1) << (i & 63), memory_order_release);
}

/* Run marks of an address set or postings (aset_read.c, apost_read.c):
 * `words` words a run, in pages of MH_MARKS_PAGE_RUNS runs, a page
 * allocated (and charged to the budget, as a hint) when a walk first
 * records a mark in it. A reader of 10^9 accesses touches a few runs of
 * each of its 61 segments' thousands: the whole arrays (up to ~30 MiB)
 * spent the default 8 MiB budget by the 17th segment, and every later
 * segment lost its check bits too (callgrind, 500 point max-1 questions
 * at 10^9 each asked three times: 398 M instructions, 62 % hashing
 * sections whole; 147 M with the pages). */
#define MH_MARKS_PAGE_RUNS 64
typedef struct mh_marks {
    size_t runs, npages;
    unsigned words;
    _Atomic(_Atomic uint64_t *) page[];
} mh_marks;

/* The table of a section of `runs` runs (no page yet), out of the budget;
 * NULL: no room or no memory (walks then start at their runs' starts). */
mh_marks *mh_marks_new(const mh_seg *seg, size_t runs, unsigned words);

/* Run `run`'s words: NULL when m is NULL, run is past its runs, or its
 * page is not there and make is 0 (or no room). Safe from any thread: a
 * page is published once (a racing thread's is freed, its bytes given
 * back). */
_Atomic uint64_t *mh_marks_run(const mh_seg *seg, mh_marks *m, size_t run, int make);

/* Bytes charged for m: its table and its pages (tests). */
size_t mh_marks_bytes(const mh_marks *m);

void mh_marks_free(mh_marks *m);

/* A validated slice record. */
typedef struct mh_slice {
    uint64_t t_first, t_last, id_first;
    uint32_t count, chunk_first, chunk_count, block_first, block_count;
    uint32_t op_counts[MHF_OP_COUNT];
    uint64_t index_sum;
    uint32_t stream_mask; /* bit (s mod 32) per stream s in it; 1 for 1.0 */
} mh_slice;

typedef struct mh_chunk {
    uint64_t phy_first, phy_last, t_first, t_last;
    uint32_t id_first, id_last, row_first, row_count;
    uint8_t op;
    uint32_t stream_mask; /* as mh_slice's; 1 for 1.0 */
} mh_chunk;

typedef struct mh_block {
    uint64_t offset, sum, phy_min, phy_max, first_t;
    uint32_t comp_size, raw_size, first_id;
    uint32_t stream_mask; /* as mh_slice's; 1 for 1.0 */
} mh_block;

/* Validates header, dictionary and slice array of a segment held in memory
 * (buf, size). The slice array's checksum and every slice record are checked
 * here; chunk and block records per slice on first use. */
int mh_seg_parse(const uint8_t *buf, size_t size, mh_seg *seg, mh_diag *d);
/* Page-cache advice for a segment's mapping (segment_read.c). mh_seg_open
 * maps a file MADV_RANDOM: a query reads scattered pages (a header, a run
 * record, a block), and the kernel's read-around would fetch a window of
 * read_ahead_kb around each (8 MiB on the benchmark machine: a cold
 * question read ~100 MiB for a few pages). What is read whole is asked for
 * whole first: mh_seg_hash_whole for a range's first-use checksum, scans
 * slice by slice ahead (mh_seg_slice_check), fsck through
 * mh_seg_advise_sequential. A range within two pages gets no advice (its
 * reads fault at most twice, as cheap as the system call). */
void mh_seg_willneed(const mh_seg *s, const void *p, size_t n);
/* Optional section sec checked whole against its directory sum (§5.2), as
 * a reader does before a first use that does not go by piece sums: MH_OK,
 * or MH_ECHECKSUM "<what> at byte N: checksum mismatch: stored 0x...,
 * computed 0x..." (N the section's first byte). */
int mh_seg_section_sum(const mh_seg *s, const mh_section *sec, const char *what,
                       mh_diag *d);
/* mh_hash of n bytes at p of s's mapping, asked for whole first. */
uint64_t mh_seg_hash_whole(const mh_seg *s, const void *p, size_t n);
void mh_seg_advise_sequential(const mh_seg *s);
/* Gives back the pages of s's mapping (MADV_DONTNEED: the mapping is
 * read-only, the page cache keeps the bytes and a later read faults them
 * in again), so a process holding many segments open after reading each
 * whole (fsck's pass) is not charged for all of them at once. Mappings
 * under 1 MiB keep their pages (the advice would cost more than them). */
void mh_seg_release_pages(const mh_seg *s);
/* Maps dir/name (MADV_RANDOM) and parses it. */
int mh_seg_open(const char *dir, const char *name, mh_seg *seg, mh_diag *d);
void mh_seg_close(mh_seg *seg);
/* The directory entry of section `type`: MH_ENOTFOUND when the segment has
 * none (*out untouched). */
int mh_seg_section(const mh_seg *seg, uint32_t type, const mh_section **out);
/* 1 when format major.minor defines section type `type` (SPEC.md 5.2): 1.0
 * types 1-6 (its synthesized directory); 2.m those of 2.0 (1-6) and the
 * ones minors up to m added (7-9: 2.1, 10: 2.2). In an older segment the
 * type is an unknown section, which readers ignore. */
int mh_section_defined(uint16_t major, uint16_t minor, uint32_t type);

void mh_seg_slice(const mh_seg *seg, uint32_t i, mh_slice *out);
/* Verifies the slice's chunk and block records (checksum and invariants),
 * once per reader (cached). */
int mh_seg_slice_check(const mh_seg *seg, uint32_t i, const mh_slice *s,
                       mh_diag *d);
/* Loads and validates one chunk / block record of slice s (k indexes the
 * segment-wide array). */
int mh_seg_chunk(const mh_seg *seg, const mh_slice *s, uint32_t k,
                 mh_chunk *out, mh_diag *d);
/* Chunk record k of seg into *c, as mh_seg_chunk loads it but without its
 * check of k (a chunk of a slice mh_seg_slice_check passed): inline, for
 * the chunk walk's loop over a slice's chunks. */
static inline void mh_seg_chunk_load(const mh_seg *seg, uint32_t k, mh_chunk *c) {
    const uint8_t *p = seg->chunks + (size_t)k * seg->chunk_recsz;
    c->phy_first = mhf_load_u64(p + MHF_CHUNK_PHY_FIRST);
    c->phy_last = mhf_load_u64(p + MHF_CHUNK_PHY_LAST);
    c->t_first = mhf_load_u64(p + MHF_CHUNK_T_FIRST);
    c->t_last = mhf_load_u64(p + MHF_CHUNK_T_LAST);
    c->id_first = mhf_load_u32(p + MHF_CHUNK_ID_FIRST);
    c->id_last = mhf_load_u32(p + MHF_CHUNK_ID_LAST);
    c->row_first = mhf_load_u32(p + MHF_CHUNK_ROW_FIRST);
    c->row_count = mhf_load_u32(p + MHF_CHUNK_ROW_COUNT);
    c->op = p[MHF_CHUNK_OP];
    c->stream_mask = seg->major >= 2 ? mhf_load_u32(p + MHF2_CHUNK_STREAM_MASK) : 1;
}
int mh_seg_block(const mh_seg *seg, const mh_slice *s, uint32_t k,
                 mh_block *out, mh_diag *d);
/* Decodes block b (0-based within slice s) into out; scratch holds
 * MHF_MAX_ROWS_PER_BLOCK raw bytes bound. Every check: the block's sum and
 * columns (mh_block_decode), then its rows against the slice and the
 * block record. */
int mh_seg_decode_block(const mh_seg *seg, const mh_slice *s, uint32_t b,
                        uint8_t *scratch, mh_rows *out, mh_diag *d);
/* Block b's sum, LZ4 and the columns cols of its rows from .. upto - 1
 * (to its last when upto is at least its rows; mh_block_decode_rows), without
 * the row checks of mh_seg_decode_block: for the query engine, which makes
 * them itself (mh_query_check_rows) on the rows it decodes. */
int mh_seg_decode_rows(const mh_seg *seg, const mh_slice *s, uint32_t b, uint32_t from,
                       uint32_t upto, unsigned cols, uint8_t *scratch, mh_rows *out,
                       mh_diag *d);
/* Block bi (segment-wide) decoded before with its rows passing every check
 * (mh_seg_decode_block's and the query's mh_query_check_rows): remembered
 * per open segment in a bitmap out of the reader's marks budget
 * (mh_seg_marks_alloc; without room nothing is remembered). A block whose
 * check failed is never marked, so each query touching it reports it. */
int mh_seg_block_known(const mh_seg *seg, uint32_t bi);
void mh_seg_block_set_known(const mh_seg *seg, uint32_t bi);
uint32_t mh_slice_block_rows(const mh_seg *seg, const mh_slice *s, uint32_t b);
/* Index of the slice holding segment-wide block index block (for messages). */
uint32_t mh_seg_slice_of_block(const mh_seg *seg, uint32_t block);

/* ---- the store directory (store.c) --------------------------------- */
/* Every opener of a store (reader.c, writer.c, verify.c) takes these steps
 * through these functions. Where a function takes `named`, 1 gives the
 * reader's and writer's one-line detail (it starts with the file name, and
 * with "byte N" for a failed check of the file's bytes), 0 the bare message
 * with the byte in d->offset, which fsck reports with the file name apart.
 * Codes and messages are the same either way. */

/* Whether path is a directory: MH_ENOENT (absent), MH_EIO (stat failed,
 * errno kept) or MH_ENOTSTORE (not a directory). Nothing is created. */
int mh_store_dir_check(const char *path, mh_diag *d);
/* What a name in a store directory is (SPEC.md, the store directory):
 * MANIFEST, LOCK, a sealed segment (seg-<16 lower-case hex>.mhs), a
 * temporary file of a writer (MANIFEST.tmp, seg-*.mhs.tmp), or other. */
enum {
    MH_STORE_FILE_OTHER,
    MH_STORE_FILE_MANIFEST,
    MH_STORE_FILE_LOCK,
    MH_STORE_FILE_SEGMENT,
    MH_STORE_FILE_TMP
};
int mh_store_file_kind(const char *name);
/* What a directory holds: nothing (it may become a store), only files that
 * are no store's, or at least one of a store's files (mh_store_file_kind);
 * -1 when it cannot be read. */
enum { MH_STORE_DIR_EMPTY, MH_STORE_DIR_OTHER, MH_STORE_DIR_STORE };
int mh_store_dir_kind(const char *path);
/* Takes the store's LOCK (created if absent) exclusively without waiting;
 * *fd_out holds it until closed. MH_ELOCKED when another process holds it;
 * MH_EIO / MH_ENOSPC (errno kept) when LOCK cannot be opened or locked. */
int mh_store_lock(const char *dir, int *fd_out, mh_diag *d);
/* Whether another process holds the LOCK. Probes with a shared lock that is
 * released at once, so a writer starting now is not held up; a missing LOCK
 * means no writer (and is not created). */
int mh_store_lock_busy(const char *dir);
/* Reads and checks dir/MANIFEST (mh_manifest_load; MH_ENOTSTORE when it is
 * absent). m is freed again on failure. */
int mh_store_manifest_load(const char *dir, mh_manifest *m, int named,
                           mh_diag *d);
/* Maps and validates dir/name (mh_seg_open), a segment the MANIFEST lists
 * or fsck found: a missing file is MH_ECORRUPT, MH_MSG_SEGMENT_MISSING. */
int mh_store_seg_open(const char *dir, const char *name, mh_seg *seg,
                      int named, mh_diag *d);
/* Checks an opened segment against its MANIFEST record (seq, id_first,
 * count, file size, header checksum, and the transition range when it holds
 * accesses): MH_ECORRUPT at offset 0 when they differ. */
int mh_store_seg_check(const mh_seg *s, const mh_manrec *rec, int named,
                       mh_diag *d);
/* The segment of MANIFEST record rec in dir, opened (not named in its
 * details) and checked against rec: the span nodes' builders and checks
 * read earlier segments so. Closed again on failure. */
int mh_store_seg_open_rec(const char *dir, const mh_manrec *rec, mh_seg *seg, mh_diag *d);
/* fsck of a node (sections 11, 16): the covered segment of record index j
 * for the node of segment self at index ri: self (j == ri), the caller's
 * open[j] (NULL, or nrecs entries), or opened into *tmp; *out the one to
 * use, closed by mh_store_seg_done. MH_OK, or its open's error (detail in
 * d). */
int mh_store_seg_covered(const char *dir, const mh_seg *self, size_t j, size_t ri,
                         const mh_manrec *recs, mh_seg *const *open, mh_seg *tmp,
                         const mh_seg **out, mh_diag *d);
void mh_store_seg_done(const mh_seg *s, mh_seg *tmp);

/* ---- fsck across segments (verify_store.c) ---------------------------- */
/* How verify_store.c hands verify.c a problem: code, file, byte, message. */
typedef void (*mh_verify_line_fn)(void *ctx, int code, const char *file,
                                  uint64_t off, const char *msg);
/* The rules of SPEC.md 8 between the segments of MANIFEST m (the store's
 * stream and window tables), each broken one reported through fn. open,
 * when not NULL, holds m->nrecs entries: open[i] is segment i already
 * opened by the caller (and matching its record), or NULL to open it here. */
void mh_verify_store_tables(const char *dir, const mh_manifest *m,
                            mh_seg *const *open, mh_verify_line_fn fn, void *ctx);

/* ---- reader (reader.c) ---------------------------------------------- */
/* Opening reads the MANIFEST only (issue 10: a cold open costs the same
 * for 1 segment or 10^5). A segment is mapped, validated and checked
 * against its MANIFEST record the first time something needs it
 * (mh_reader_seg); the binary searches over segments use the records. */
enum { MH_SEG_UNOPENED = 0, MH_SEG_OPEN = 1 }; /* else: the failed open's code */

/* A store-level stream (mh_reader_stream_*): the newest segment's
 * description, its accesses and transition range over every segment, and
 * its metadata (a run of the newest dictionary's stream_meta). */
typedef struct mh_rstream {
    mh_stream_info info;
    size_t meta_first, nmeta;
} mh_rstream;

struct mh_reader {
    char *path;
    uint16_t major;      /* the MANIFEST's: its segments must have it too */
    mh_manrec *recs;     /* the MANIFEST's records, one per segment */
    mh_seg *segs;        /* segs[i] is valid once seg_state[i] == MH_SEG_OPEN */
    _Atomic int *seg_state;
    mh_diag **seg_err;   /* detail of a failed open, kept for every later call */
    pthread_mutex_t open_mu; /* serializes lazy segment opens */
    size_t nsegs;
    size_t *live;      /* indexes of segments with accesses, in id order */
    size_t nlive;
    _Atomic uint32_t max_rows_per_block; /* of the segments opened so far */
    size_t cache_bytes; /* decoded blocks each query context may keep */
    /* bytes the segments' run marks and check bits may still take
     * (mh_seg_marks_alloc): cache_bytes at open; mh_reader_set_cache moves
     * it by the change */
    _Atomic int64_t marks_left;
    _Atomic int64_t marks_floor; /* cache_bytes / 4: run marks leave it */
    uint64_t manifest_bytes;
    /* tables built on first use, under tab_mu (each once; a failure is
     * returned again by every later call, with its detail) */
    pthread_mutex_t tab_mu;
    _Atomic int stats_state, streams_state, windows_state;
    mh_diag tab_err[3];
    mh_stats stats;
    mh_rstream *streams;
    size_t nstreams;
    mh_window_info *windows;
    size_t nwindows;
    int summary_off;     /* tests: 1 queries ignore address summaries,
                          * 2 they ignore section 9 (use 6 only) */
    int aset_off;        /* tests: queries ignore address sets */
    int span_off;        /* tests: queries ignore span address sets (2.3) */
    /* the whole store's address union (store_union.c), built on first use
     * under tab_mu: union_state 0 not yet, 1 built, -1 not available (a
     * set or node missing or broken, too large, too few segments);
     * union_iv[op] holds union_n[op] sorted disjoint [lo, hi] pairs */
    _Atomic int union_state;
    uint64_t *union_iv[MHF_OP_COUNT];
    size_t union_n[MHF_OP_COUNT];
    /* the lo of every MH_UNION_STEP-th pair: a search reads this small
     * array and one block of pairs, a few pages, not ~log2 n of them */
    uint64_t *union_top[MHF_OP_COUNT];
    int union_off;       /* tests: queries do not ask the union */
    _Atomic uint64_t union_answered; /* tests: questions it answered */
    /* tests: segments opened so far (mh_reader_seg), so that a test can see
     * how many segments a query opened */
    _Atomic uint64_t segs_opened;
    int apost_off;       /* tests: queries ignore address postings (2.2) */
    int spost_off;       /* tests: queries ignore stream postings (2.7) */
    int sspan_off;       /* tests: queries ignore stream nodes (2.8) */
    int sruns_off;       /* tests: queries ignore stream id runs (2.8) */
    int psum_off;        /* tests: segments opened after this is set
                          * ignore their piece sums (2.4): sections are
                          * checked whole before their first use */
    /* tests: 1, queries never take the id-order path (query_idmap.c);
     * -1, they take it in every slice of a segment with an id map where the
     * wide path does not (no cost choice); 0 the reference reader's choice */
    int idmap_off;
    /* tests: 1, a full query cache lets every new block in on probation
     * (query.c, cache_admit); -1, never (the plain LRU of 1.13.1); 0 the
     * reference reader's choice, by the evicted blocks that come back */
    int cache_probation;
    /* tests: id map label groups decoded by queries (query_idmap.c), so
     * that a test can see a repeated query reuse its cached groups */
    _Atomic uint64_t idmap_groups_decoded;
    /* tests: slices the id-order path walked (query_idmap.c), so that a
     * test can see which way a query took where both give its answers */
    _Atomic uint64_t idmap_walks;
    /* tests: blocks decoded into the query caches (query.c), so that a
     * test can see which chunks a query searched */
    _Atomic uint64_t blocks_decoded;
    /* tests: blocks let in on probation (query.c, cache_admit) */
    _Atomic uint64_t probation_in;
    /* tests: groups of rows the chunk walk passed by their masks (query.c,
     * scan_chunk), so that a test can see the masks serve */
    _Atomic uint64_t groups_passed;
    /* tests: segments whose address set a query asked after the postings
     * served it (query.c fill: once a listed slice held no match), and of
     * them those the set passed, so that a test can see the set asked
     * only then and still passing segments */
    _Atomic uint64_t aset_late_asks, aset_late_passes;
    /* query contexts (scratch and decoded-block caches) kept between
     * mh_query_run calls; any thread takes one under the mutex */
    pthread_mutex_t pool_mu;
    void *pool[8];
    int npool;
    /* detail of the most recent failed call: written only on error paths,
     * read by mh_reader_errmsg, both under err_mu */
    pthread_mutex_t err_mu;
    mh_diag err;
};

/* Segment i of r, opened (and checked against its MANIFEST record) on the
 * first call; thread-safe. A failed open fails every call with the same
 * code and detail line (the file name leads it, as an eager open gave). */
int mh_reader_seg(const mh_reader *r, size_t i, const mh_seg **out, mh_diag *d);

/* The store's windows (built on first use): MH_ENOTFOUND when absent. */
int mh_reader_window_get(const mh_reader *r, uint64_t window,
                         mh_window_info *out, mh_diag *d);

/* Keeps d as r's error detail (under r->err_mu). */
void mh_reader_set_error(const mh_reader *r, const mh_diag *d);

/* Frees the reader's pooled query contexts (query.c). */
void mh_query_pool_free(mh_reader *r);
/* For tests: over r's pooled query contexts, the bytes their caches say
 * they hold, the sum of their entries' buffers counted again, and the
 * largest entry's; returns the number of contexts. */
int mh_query_cache_audit(const mh_reader *r, size_t *held, size_t *sum, size_t *largest);
/* For tests: the entries in use of r's pooled context that has the most,
 * and its block table's size in slots; returns the number of contexts. */
int mh_query_cache_shape(const mh_reader *r, uint32_t *nent, uint32_t *slots);

/* ---- growable buffer ------------------------------------------------ */
/* p holds n bytes of cap; { 0 } is empty. Below MH_BUF_BIG bytes of cap, p
 * is malloc'd; from MH_BUF_BIG on, a mapping of its own in huge pages
 * (errors.c): only mh_buf_free frees it (mh_buf_detach hands it over as
 * malloc'd memory). */
#define MH_BUF_BIG ((size_t)2 << 20)
typedef struct mh_buf {
    uint8_t *p;
    size_t n, cap;
} mh_buf;
int mh_buf_reserve(mh_buf *b, size_t extra);
int mh_buf_append(mh_buf *b, const void *p, size_t n);
void mh_buf_free(mh_buf *b);
/* The n bytes as malloc'd memory the caller frees (b left empty); NULL
 * when out of memory (b unchanged) or when b holds nothing. */
uint8_t *mh_buf_detach(mh_buf *b);

/* ---- jobs on worker threads, results in order (ordered_jobs.c) ---- */
#define MH_ORDERED_MAX_THREADS 16u
/* Runs work(arg, i) for each i < n on up to `threads` worker threads (at
 * most n and MH_ORDERED_MAX_THREADS), in any order and each once, and
 * done(arg, i) on the calling thread for i = 0, 1, ..., n - 1, each after
 * work(arg, i) returned (what work wrote is then visible to done). With
 * threads < 2, or when no thread can be started, the calling thread runs
 * work then done for each job in turn. Returns the worker threads used (1
 * for the calling thread alone). */
unsigned mh_run_ordered(size_t n, unsigned threads, void (*work)(void *, size_t),
                        void (*done)(void *, size_t), void *arg);

/* ---- radix sort (sort.c) */
/* Scratch of mh_radix_sort (sort.c): the eight byte histograms and the
 * renaming of high address parts to ranks. The caller owns it (one per slice
 * builder) so that the library keeps no thread-local or global state:
 * thread-locals compiled for an executable (local-exec) cannot go into a
 * shared object, and compiled PIC they cost a __tls_get_addr call per use in
 * a dlopen'd library (a QEMU plugin, a Python extension). Its contents need
 * no initialisation and mean nothing between calls. */
#define MH_SORT_RANK_MAX 1024u                /* distinct high parts renamed at most */
#define MH_SORT_RANK_SLOTS (2 * MH_SORT_RANK_MAX) /* open addressing, power of two */
#define MH_SORT_DIGIT_BITS 11u /* mh_radix_sort_words: 2048-bucket digits */
typedef struct mh_sort_scratch {
    uint32_t hist[8][256];
    uint32_t hist11[3][1u << MH_SORT_DIGIT_BITS]; /* mh_radix_sort_words */
    uint64_t slot_key[MH_SORT_RANK_SLOTS];
    uint16_t slot_rank[MH_SORT_RANK_SLOTS];
    uint64_t sorted[MH_SORT_RANK_MAX]; /* the distinct high parts, ascending */
    uint32_t nranks;
    uint16_t map[MH_SORT_RANK_MAX]; /* mh_radix_order: provisional -> rank */
} mh_sort_scratch;

/* Sorts n (key, payload) pairs by key, stable. tmp arrays of n; s is
 * the caller's scratch, used by one call at a time. */
void mh_radix_sort(mh_sort_scratch *s, uint64_t *key, uint32_t *val,
                   uint64_t *tmpk, uint32_t *tmpv, size_t n);
/* Sorts n words by their bits [32, 32 + kbits) (kbits <= 33), stable,
 * the low 32 bits a payload riding along: one store per word and pass
 * where mh_radix_sort makes two, and 11-bit digits (a 22-bit key in two
 * passes). When map is not NULL, each word's bits 48-63 are first replaced
 * by map[bits 48-63] (the caller's renaming; the key must then still fit
 * kbits). tmp holds n words. Sorted words end in word. */
void mh_radix_sort_words(mh_sort_scratch *s, uint64_t *word, uint64_t *tmp,
                         size_t n, unsigned kbits, const uint16_t *map);
/* The order of n keys key[0], key[stride], ...: word[k]'s low 32 bits are
 * the index of the k-th smallest (ties in index order), n < 2^32. Through
 * mh_radix_sort_words with the keys' high parts (bits 16 and up) ranked;
 * returns 0, word and tmp (n each) used as scratch, when they take more
 * than MH_SORT_RANK_MAX values: sort the keys otherwise then. */
int mh_radix_order(mh_sort_scratch *s, const uint64_t *key, size_t stride,
                   size_t n, uint64_t *word, uint64_t *tmp);

/* ---- slice building (slice_build.c) and segment writing (segment_write.c) */
/* The address summary hook points (summary_build.c fills them in; a NULL
 * hook means no address summary section). slice_keys starts a slice (rows
 * a[0..n)); ranges then gets, for each operation with rows, the exact
 * merged ranges [lo[i], hi[i]] of its rows (sorted, disjoint, not
 * touching) and adds their keys (granule << 2 | op) to b->sum_keys as
 * items (host-order u64s, MH_SUM_RANGE below: each op's items increasing,
 * no key twice; a single MH_SUM_OVERFLOW when the slice meets too many
 * granules to list). serialize builds the sections' bytes from the
 * segment's slices' items: keys[first[s] .. first[s+1]) are slice s's, for
 * s < nslices (each op's items increasing, or plain keys in any order), count the
 * segment's accesses (their size budgets: it may coarsen the granules);
 * section 6 into out, section 9 into fine (either NULL: not built); it
 * leaves them as they are when there must be no section. */
typedef struct mh_builder mh_builder;
typedef struct mh_rec mh_rec;
typedef struct mh_summary_hooks {
    int (*slice_keys)(mh_builder *b, const mh_rec *a, uint32_t n);
    void (*ranges)(mh_builder *b, unsigned op, const uint64_t *lo,
                   const uint64_t *hi, uint32_t n);
    int (*serialize)(const uint64_t *keys, const uint32_t *first,
                     uint32_t nslices, uint64_t count, mh_buf *out,
                     mh_buf *fine);
} mh_summary_hooks;

typedef struct mh_segw_config {
    const char *dir;
    uint64_t seq;
    uint64_t id_first;
    uint32_t rows_per_block;
    uint32_t chunk_min_accesses;
    int32_t lz4_acceleration;
    const mh_summary_hooks *summary; /* NULL: no address summary */
    uint32_t idmap_group_ids; /* ids per id map group (G); 0: no id map */
    uint32_t idtime_stride;   /* ids per id transition sample (K); 0: none */
    int aset;                        /* 1: write the address set (2.1) */
    int apost;                       /* 1: write the address postings (2.2) */
    int span;                        /* 1: write the span address set (2.3)
                                        when mh_segw_set_position gave the
                                        segment's place */
    int seal_thread;                 /* 1: the seal builds the address
                                        postings on a thread of its own
                                        (mh_segw_set_seal_thread) */
} mh_segw_config;

/* The writer's slice buffer keeps, per access, only what the format
 * stores: 48 bytes instead of the 56 of mh_access (whose id and flag bytes
 * the writer checks and drops), so the append path copies less and the
 * builder's passes over the slice touch fewer cache lines. */
typedef struct mh_rec {
    uint64_t transition;
    uint64_t linear;   /* as given; meaningful only when has_linear */
    uint64_t physical;
    uint64_t pc;       /* as given; meaningful only when has_pc (the
                          builder stores 0 without it) */
    uint32_t size;     /* >= 1, physical + size - 1 does not wrap */
    uint32_t stream;   /* <= MH_STREAM_MAX, declared */
    uint8_t op;        /* < MHF_OP_COUNT */
    uint8_t has_linear;
    uint8_t has_pc;
    uint8_t pad[5];    /* 0 */
} mh_rec;
_Static_assert(sizeof(mh_rec) == 48, "mh_rec is 48 bytes");
/* The builder reads a slice's rows in address order, scattered over its
 * records (1.5 MiB for 32,768): each loop that gathers them asks for the
 * record MH_GATHER_AHEAD rows on, both its lines (a record is 48 bytes). */
#define MH_GATHER_AHEAD 16u
static inline void mh_prefetch_rec(const mh_rec *x) {
    __builtin_prefetch(x);
    __builtin_prefetch((const char *)(x + 1) - 1);
}
/* An mh_rec is an mh_access's bytes from its transition on (writer.c
 * copies the 48 bytes whole; the reserved bytes, checked 0, are pad). */
_Static_assert(offsetof(mh_rec, linear) == offsetof(mh_access, linear) - 8 &&
                   offsetof(mh_rec, physical) == offsetof(mh_access, physical) - 8 &&
                   offsetof(mh_rec, pc) == offsetof(mh_access, pc) - 8 &&
                   offsetof(mh_rec, size) == offsetof(mh_access, size) - 8 &&
                   offsetof(mh_rec, stream) == offsetof(mh_access, stream) - 8 &&
                   offsetof(mh_rec, op) == offsetof(mh_access, op) - 8 &&
                   offsetof(mh_rec, has_linear) == offsetof(mh_access, has_linear) - 8 &&
                   offsetof(mh_rec, has_pc) == offsetof(mh_access, has_pc) - 8 &&
                   offsetof(mh_rec, pad) == offsetof(mh_access, reserved) - 8 &&
                   offsetof(mh_access, transition) == 8 &&
                   sizeof(mh_access) == 8 + sizeof(mh_rec),
               "mh_rec mirrors mh_access from its transition on");

/* Per-stream figures of one built slice (streams present only). */
typedef struct mh_slice_stream {
    uint32_t stream;
    uint32_t count;
    uint64_t t_first, t_last;
} mh_slice_stream;

/* One slice's encoded form, built in memory; one builder per thread. */
struct mh_builder {
    uint32_t rows_per_block, chunk_min_accesses;
    int32_t lz4_acceleration;
    const mh_summary_hooks *summary;
    /* output of the last mh_builder_run */
    uint8_t slice[MHF2_SLICE_SIZE]; /* without chunk_first, block_first, sum */
    mh_buf chunks, blocks, data;   /* block offsets relative to data */
    uint32_t n, op_n[MHF_OP_COUNT];
    uint64_t t_first, t_last, raw_total;
    uint32_t stream_mask;
    int has_stream, has_pc;        /* some row has stream != 0 / a pc */
    mh_slice_stream *streams;      /* streams present, increasing id */
    uint32_t nstreams, streams_cap;
    mh_buf sum_keys;               /* u64 items of slice_keys, if hooked */
    uint64_t sum_nkeys;            /* the keys sum_keys's items stand for */
    uint32_t idmap_g;              /* id map group ids, 0: none */
    mh_buf idmap_recs, idmap_data; /* the slice's id map groups (idmap_build.c) */
    uint8_t *idmap_raw, *idmap_comp; /* scratch of G x 4 bytes and its bound */
    uint32_t idtime_k;             /* id transition stride, 0: none */
    mh_buf idtime_recs, idtime_data; /* the slice's id transition groups */
    uint64_t *idtime_w;            /* scratch: one group's words */
    uint32_t idtime_cap;
    int aset;                      /* collect aset_iv (address set) */
    mh_buf aset_iv;                /* u64 pairs: each op's merged ranges */
    uint32_t aset_n[MHF_OP_COUNT]; /* pairs of each op, in op order */
    int aset_lost;                 /* out of memory in the hook: no set */
    /* scratch, grown to the largest slice seen */
    uint32_t cap;
    uint64_t *key, *tmpk;
    uint32_t *val, *tmpv, *chunk_of, *perm;
    uint64_t *ck_lo, *ck_hi;
    uint32_t *ck_start;
    uint64_t *gaps;
    mh_rows cols;
    uint8_t *raw, *comp;
    union LZ4_stream_u *lz4; /* kept between blocks (lz4.h: LZ4_stream_t) */
    size_t raw_cap, comp_cap;
    mh_sort_scratch sort;
    uint16_t rank_map[MH_SORT_RANK_MAX]; /* provisional -> real rank */
    uint32_t *stream_slot;         /* 65536 entries, on first multi-stream slice */
    /* the stream postings' ranges (spost_build.c, format 2.7): per stream
     * of a multi-stream slice and op, its merged ranges */
    int spost;                     /* collect them */
    mh_buf sp_iv;                  /* sp_range items (spost_build.c) */
    uint64_t *sp_open;             /* scratch: 2 x sp_cap open ranges */
    uint32_t sp_cap;
    int sp_lost;                   /* out of memory, or too many streams */
    /* the stream id runs (sruns_build.c, format 2.8): the slice's runs in
     * id order, u32 triples (stream, first, last id offset) */
    int sruns;                     /* collect them */
    mh_buf sr_iv;
    int sr_lost;                   /* out of memory */
};

int mh_builder_create(const mh_segw_config *cfg, mh_builder **out);
/* Builds n accesses (ids id_base .. id_base + n - 1, in order). Thread-safe
 * across distinct builders. */
int mh_builder_run(mh_builder *b, const mh_rec *a, uint32_t n,
                   uint64_t id_base);
void mh_builder_destroy(mh_builder *b);

typedef struct mh_segw mh_segw;

/* The mh_segw calls say in d which file failed and why (strerror). */
int mh_segw_create(const mh_segw_config *cfg, mh_segw **out, mh_diag *d);
/* Appends a built slice: writes its blocks, keeps its index records. Slices
 * must be appended in id order. */
int mh_segw_append(mh_segw *w, const mh_builder *b, mh_diag *d);
uint64_t mh_segw_count(const mh_segw *w);
uint64_t mh_segw_next_id(const mh_segw *w);
uint64_t mh_segw_t_last(const mh_segw *w);
/* Drops every access with transition >= t; the kept accesses of the first
 * affected slice are returned (malloc'd, in id order) so the caller can put
 * them back in its buffer. */
int mh_segw_discard_from(mh_segw *w, uint64_t t, mh_access **kept,
                         uint32_t *nkept, mh_diag *d);
/* A section the writer adds to the segment as given (tests: unknown
 * compatible sections of a later minor). */
typedef struct mh_extra_section {
    uint32_t type, flags, recsz, count;
    const void *p;
    size_t size;
} mh_extra_section;

/* A column added to the column table as given (tests: columns of a later
 * minor; blocks never hold it, which the block rule allows). */
typedef struct mh_extra_column {
    const char *name;
    uint8_t type, width, encoding, flags;
} mh_extra_column;

/* What a segment carries besides its accesses, given at seal. */
struct mh_seal_info {
    const mh_kv *meta;
    size_t nmeta;
    /* every declared stream (descriptions only: id, kind, parent, pid, tid,
     * cpu, name; segw fills count and transition range from what it wrote),
     * increasing id; none: the segment has no streams table unless some
     * access has stream != 0 (then MH_EINVAL) */
    const mh_stream_info *streams;
    size_t nstreams;
    const mh_stream_kv *stream_meta; /* sorted by stream (stable) */
    size_t nstream_meta;
    const mh_window_part *windows;   /* this segment's parts, by window */
    size_t nwindows;
    /* tests only: what a later minor might add */
    const mh_extra_section *extra;   /* sections after the known ones */
    size_t nextra;
    const mh_extra_section *extra_tables; /* dictionary tables (p, size:
                                             the bytes after the header) */
    size_t nextra_tables;
    const mh_extra_column *extra_columns; /* after the standard columns */
    size_t nextra_columns;
    uint16_t minor;                  /* header minor (0: MHF_VERSION_MINOR) */
};

/* Writes dictionary, index arrays, the address summary (when hooked),
 * directory and header, fsyncs, renames the file to its final name and
 * fsyncs the directory. Fills rec. */
int mh_segw_seal(mh_segw *w, const mh_seal_info *si, mh_manrec *rec,
                 mh_diag *d);
/* The segment's MANIFEST place for its span address set (section 11):
 * recs[0 .. nrecs) are the records before it (the MANIFEST the seal
 * publishes to), their files in the segment's directory; kept until the
 * seal, which must come before recs changes. */
void mh_segw_set_position(mh_segw *w, const mh_manrec *recs, size_t nrecs);
/* Whether w's seal may build its address postings on a thread of its own
 * beside its other sections: the writer allows it when no builder runs
 * (an explicit commit, close) and its background threads are on; an
 * automatic commit's seal, which runs beside the builders, does not. */
void mh_segw_set_seal_thread(mh_segw *w, int on);
/* Closes and removes the unsealed file; frees w. NULL accepted. */
void mh_segw_destroy(mh_segw *w);

/* ---- address summary (summary_build.c, summary_read.c) -------------- */
/* Section 6 of a 2.0 segment: for each 64 KiB granule and operation, the
 * slices with a row of that operation meeting the granule; section 9 of a
 * 2.1 segment, the fine summary: the same at 1 KiB granules. Writers build
 * them through the mh_summary_hooks above; queries on a narrow address
 * range visit only the slices section 9 (else 6) lists. */

/* Which section a view, a query or fsck works on. */
#define MH_SUM_COARSE 0u /* section 6 */
#define MH_SUM_FINE 1u   /* section 9 (2.1) */
#define MH_SUM_KINDS 2u

/* A key: granule << 2 | op, granule = address >> shift (< 2^56 at the
 * writer's shift, MHF_SUM_FINE_SHIFT). MH_SUM_OVERFLOW, never a key, alone
 * in a slice's list means the slice met too many granules to list, even at
 * 64 KiB (the segment then gets neither section). */
#define MH_SUM_OVERFLOW UINT64_MAX
/* First in a slice's list (never a key): the keys that follow are at shift
 * 16, not 10: the slice met more than MH_SUM_SLICE_KEYS_MAX granules of
 * 1 KiB but not of 64 KiB. Its segment gets section 6 (as 2.0 writes it)
 * and no section 9. */
#define MH_SUM_COARSE_MARK (UINT64_MAX - 1)
/* A slice's list holds items: a key, or a run of keys of one op in two
 * words, MH_SUM_RANGE | its first key, then its last key (a greater
 * granule, the same op), standing for every key between. A slice of a few
 * accesses of gigabytes so lists its ranges, not millions of keys, and the
 * sections' shifts are chosen from the counts (fuzz finding
 * slow-unit-bd0366...). Never a key nor a mark (keys are < 2^56). */
#define MH_SUM_RANGE (UINT64_C(1) << 63)
static inline int mh_sum_is_range(uint64_t w) { return w >> 56 == 0x80; }
/* Key k (granule << 2 | op) at `extra` more bits of shift. */
static inline uint64_t mh_sum_coarsen(uint64_t k, unsigned extra) {
    return (k >> 2 >> extra) << 2 | (k & 3);
}
/* The item at keys[j] of a list ending at end: its first key *a and last
 * key *z; returns the index after it. A range's second word past end (a
 * list no writer makes) is read as a key. */
static inline size_t mh_sum_item(const uint64_t *keys, size_t j, size_t end,
                                 uint64_t *a, uint64_t *z) {
    uint64_t w = keys[j];
    if (mh_sum_is_range(w) && j + 1 < end) {
        *a = w & ~MH_SUM_RANGE;
        *z = keys[j + 1];
        return j + 2;
    }
    *a = *z = w;
    return j + 1;
}
/* An item's keys [*a, z] of one op, taken coarser, after `last`, the key
 * of that op kept last (UINT64_MAX: none): each op's items increase, so
 * only a first key equal to last can be met again. 0 when every key is
 * kept already, else 1 with *a the first not yet kept. */
static inline int mh_sum_after(uint64_t last, uint64_t *a, uint64_t z) {
    if (last != UINT64_MAX && *a <= last) {
        if (z <= last)
            return 0;
        *a = last + 4; /* the next granule, the same op */
    }
    return 1;
}
/* Keys one slice may list. Writer and fsck share it (a slice over it gets
 * no summary, and fsck expects none). Fuzzing builds list far fewer, so a
 * slice of a few huge accesses does not take the instrumented fsck seconds
 * (millions of granule keys, hashed and sorted): the same rule, smaller. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MH_SUM_SLICE_KEYS_MAX (1u << 15)
#else
#define MH_SUM_SLICE_KEYS_MAX (1u << 22)
#endif

/* Collects the distinct keys of some rows in buf, used as an
 * open-addressing table (buf's memory only: no other allocation kept). */
typedef struct mh_sumset {
    mh_buf *buf;
    mh_buf *wide; /* rows over several granules, as merged ranges at end */
    uint64_t *tab;
    uint32_t mask, shift_bits, n;
    int overflow;
    unsigned gshift; /* granule = address >> gshift */
    uint64_t last[MHF_OP_COUNT]; /* last key added per op: runs are free */
} mh_sumset;

/* Starts an empty set in buf (its contents are dropped), with wide (also
 * emptied) for the granule ranges of rows over more than one granule;
 * hint: how many rows will be added; gshift: the keys' granule shift. */
int mh_sumset_begin(mh_sumset *s, mh_buf *buf, mh_buf *wide, uint32_t hint,
                    unsigned gshift);
/* Adds the keys of a row [phy, phy + size - 1] of operation op (size >= 1,
 * no wrap). */
int mh_sumset_add_slow(mh_sumset *s, uint64_t key, uint64_t g_last,
                       unsigned op);
static inline int mh_sumset_add(mh_sumset *s, uint64_t phy, uint32_t size,
                                unsigned op) {
    uint64_t g = phy >> s->gshift;
    uint64_t g_last = (phy + (size - 1u)) >> s->gshift;
    uint64_t key = g << 2 | op;
    if (key == s->last[op] && g == g_last)
        return MH_OK;
    return mh_sumset_add_slow(s, key, g_last, op);
}
/* Ends the set: buf then holds its keys as items (MH_SUM_RANGE), n x u64
 * (host order), buf->n = 8 n: sorted keys when no row met two granules,
 * else op by op, each op's increasing; or the single key MH_SUM_OVERFLOW
 * (more than MH_SUM_SLICE_KEYS_MAX keys). sort: a radix sort
 * scratch (contents need no initialisation), or NULL to allocate one. */
int mh_sumset_end(mh_sumset *s, mh_sort_scratch *sort);

/* The hooks (mh_summary_hooks, above): slice_keys empties b->sum_keys,
 * ranges adds an operation's keys (at MHF_SUM_FINE_SHIFT), serialize
 * builds section 6 into out and section 9 into fine (appended; either may
 * be NULL), or leaves them as they are when some slice overflowed or there
 * is no slice: then the segment has neither. */
int mh_summary_slice_keys(mh_builder *b, const mh_rec *a, uint32_t n);
void mh_summary_ranges(mh_builder *b, unsigned op, const uint64_t *lo,
                       const uint64_t *hi, uint32_t n);
int mh_summary_serialize(const uint64_t *keys, const uint32_t *first,
                         uint32_t nslices, uint64_t count, mh_buf *out,
                         mh_buf *fine);
/* The (key, slice) pairs of serialize's items at `extra` bits above
 * MHF_SUM_FINE_SHIFT (a slice behind MH_SUM_COARSE_MARK: extra >= 6, its
 * keys being 6 bits coarser already), each slice's keys once, counted from
 * the items without listing a range's keys; *widest the most of one slice.
 * When some op's items do not increase (plain keys in any order), *ordered
 * is 0 and the count is at least the pairs'. serialize chooses its shifts
 * with it; exported for the tests. */
size_t mh_summary_count_pairs(const uint64_t *keys, const uint32_t *first,
                              uint32_t nslices, unsigned extra, size_t *widest,
                              int *ordered);
/* The hooks a writer uses to write the summary. */
const mh_summary_hooks *mh_summary_hooks_default(void);

/* A checked summary section, read in place. */
typedef struct mh_sum_view {
    const uint8_t *entries, *postings;
    uint32_t nentries, entry_size, shift;
    uint64_t nposting;
    /* read by piece sums (SPEC.md §9f): the segment (NULL: the whole
     * section was checked, postings included), its table, the section's
     * type, and per entry a bit once its postings passed their checks
     * (seg->summary_post_ok; NULL: checked on every use); an entry's
     * postings are checked before a query first reads them
     * (mh_sum_iter_init_checked) */
    const mh_seg *lazy;
    const struct mh_psum_tab *ptab;
    uint32_t ptype;
    _Atomic uint64_t *post_ok;
} mh_sum_view;

/* Validates section bytes p[0..size) (file offset base_off, for details)
 * of a segment of minor version `minor` with nslices slices: sizes,
 * reserved fields, entries sorted and unique, posting ranges tiling the
 * postings, each entry's postings increasing and < nslices. The checksum
 * is the caller's (mh_summary_view). MH_ECORRUPT / MH_EVERSION. */
int mh_summary_parse(const uint8_t *p, uint64_t size, uint64_t base_off,
                     uint16_t minor, uint32_t nslices, mh_sum_view *out,
                     mh_diag *d);
/* The same for a section 9 (the fine summary): its shift from 10. */
int mh_summary_parse_fine(const uint8_t *p, uint64_t size, uint64_t base_off,
                          uint16_t minor, uint32_t nslices, mh_sum_view *out,
                          mh_diag *d);
/* The segment's section of `kind` (MH_SUM_COARSE: 6, MH_SUM_FINE: 9, of a
 * 2.1 segment only), checked on first use and remembered in
 * seg->summary_ok[kind]: by piece sums when they cover it (the pieces of
 * its header and entries, the parse without the postings: a lazy view,
 * seg->summary_lazy[kind]), else its checksum and the whole parse.
 * MH_ENOTFOUND when the segment has none. */
int mh_summary_view(const mh_seg *seg, unsigned kind, mh_sum_view *out,
                    mh_diag *d);
/* The same checked whole (checksum, every posting), not remembered: fsck,
 * which reads every entry. */
int mh_summary_view_whole(const mh_seg *seg, unsigned kind, mh_sum_view *out,
                          mh_diag *d);
/* The section's directory entry, or NULL (for a 2.0 or 1.0 segment, type 9
 * is no summary). */
const mh_section *mh_summary_section(const mh_seg *seg, unsigned kind);

/* Candidate slices of one query in one segment: a lazy merge of the
 * postings of the entries (granule, op) the query's range and operations
 * meet. */
#define MH_SUM_MAX_GRANULES 64u
typedef struct mh_sum_iter {
    uint32_t n;
    struct {
        const uint8_t *post;
        uint32_t count, lo, hi; /* candidates among post[lo, hi) */
        uint32_t op;            /* the entry's operation */
    } e[MH_SUM_MAX_GRANULES * MHF_OP_COUNT];
} mh_sum_iter;
/* 1: it lists the candidates (possibly none); 0: every slice is one (the
 * range spans more than MH_SUM_MAX_GRANULES granules); a lazy view's
 * damaged postings: as mh_sum_iter_init_checked. */
int mh_sum_iter_init(mh_sum_iter *it, const mh_sum_view *v, uint64_t a,
                     uint64_t b, uint32_t ops);
/* The same, or MH_ECHECKSUM / MH_ECORRUPT with detail "<summary> at byte
 * N: ..." (d may be NULL): a lazy view's entries it lists have their
 * postings checked first (their pieces, then slice indexes increasing and
 * below the segment's count), once per entry when the view remembers
 * them. mh_sum_iter_init is this with no detail. */
int mh_sum_iter_init_checked(mh_sum_iter *it, const mh_sum_view *v, uint64_t a,
                             uint64_t b, uint32_t ops, mh_diag *d);
/* The first candidate >= s / the last candidate <= s; UINT32_MAX: none.
 * Calls of one iterator go one way: next with s not decreasing, prev with
 * s not increasing. */
uint32_t mh_sum_next(mh_sum_iter *it, uint32_t s);
uint32_t mh_sum_prev(mh_sum_iter *it, uint32_t s);
/* Right after mh_sum_next (fwd 1) or mh_sum_prev (fwd 0) returned s: the
 * ops of the entries that list s (bit o for op o). The summaries are exact
 * per op (SPEC 9, 9c): an op without such an entry has no row of s
 * meeting [a, b]. */
unsigned mh_sum_ops_at(const mh_sum_iter *it, uint32_t s, int fwd);
/* For a query of seg on [a, b] with ops: 1 and it filled when the summary
 * narrows the slices, 0 when every slice is a candidate (no summary, a
 * range wider than 64 granules of the section), or an error of
 * mh_summary_view. It uses section 9 when the segment has it, else section
 * 6; coarse_only (tests): section 6 whatever the segment has. */
int mh_summary_query(const mh_seg *seg, uint64_t a, uint64_t b, uint32_t ops,
                     int coarse_only, mh_sum_iter *it, mh_diag *d);

/* fsck: whether v lists slice s under each of the slice's keys, the items
 * keys[0..n) (MH_SUM_RANGE; each op's increasing, no key twice, as
 * mh_sumset_end gives them; made at shift kshift; taken to v's coarser granules
 * when its shift is larger; a shift below min_shift, the least its section
 * type allows, or below kshift is refused); *listed gets how many postings
 * that makes. The caller checks that these add up to v->nposting over all
 * slices, which makes the correspondence exact. MH_ECORRUPT. */
int mh_summary_check_slice(const mh_sum_view *v, unsigned min_shift,
                           uint32_t s, const uint64_t *keys, size_t n,
                           unsigned kshift, uint64_t base_off,
                           uint64_t *listed, mh_diag *d);

/* fsck's check of a segment's summaries (verify.c): begin for each kind
 * (checksum and fields, else the error), then per slice slice_begin, the
 * rows through mh_sumset_add(&f->set, ...) while f->on, slice_end (rows_ok
 * 0: the slice failed its own checks, the summaries are not judged
 * further), slice_check for each kind; end for each kind compares the
 * totals. The rows' keys are collected once, at the fine shift when section
 * 9 is being checked (section 6's are derived from them), else at 16. Each
 * kind reports at most one problem; its on drops after it; f->on (keys
 * collected) drops when no kind is left or the rows are in doubt. */
typedef struct mh_sum_fsck {
    int on;
    struct {
        int on;
        mh_sum_view v;
        uint64_t off, listed;
    } k[MH_SUM_KINDS];
    mh_buf buf, wide;
    mh_sumset set;
} mh_sum_fsck;
void mh_sum_fsck_init(mh_sum_fsck *f);
int mh_sum_fsck_begin(mh_sum_fsck *f, const mh_seg *seg, unsigned kind,
                      mh_diag *d);
int mh_sum_fsck_slice_begin(mh_sum_fsck *f, uint32_t nrows);
int mh_sum_fsck_slice_end(mh_sum_fsck *f, int rows_ok, mh_diag *d);
int mh_sum_fsck_slice_check(mh_sum_fsck *f, unsigned kind, uint32_t si,
                            mh_diag *d);
int mh_sum_fsck_end(mh_sum_fsck *f, unsigned kind, mh_diag *d);
void mh_sum_fsck_free(mh_sum_fsck *f);

/* ---- id map (idmap_build.c, idmap_read.c) -------------------------- */
/* Section 7 of a 2.1 segment (SPEC.md "Id map"): per slice, for each id
 * offset, the chunk (relative to the slice's chunk_first) holding that row,
 * in groups of G ids, each an LZ4 block of u8/u16/u32 labels. Queries that
 * want few rows of a wide range walk a slice in id order through it
 * (query_idmap.c) instead of decoding one block per chunk. */
#define MH_IDMAP_GROUP_IDS 8192u   /* the reference writer's G */
#define MH_IDMAP_GROUP_MAX 65536u  /* largest G a reader accepts */
/* Labels of the group of slice `slice` holding id offset x, decoded into labels[0 .. *n) as
 * u32 chunk indexes relative to the slice (each checked < chunk_count); *first = the group's
 * first id offset. labels must hold MH_IDMAP_GROUP_MAX entries. The section is checksummed and
 * parsed whole at every call (mh_idmap_view_whole: tests, fuzzers; queries check what they
 * read through mh_idmap_view_get).
 * MH_ENOTFOUND (no detail needed) when the segment has no id map; MH_ECHECKSUM / MH_ECORRUPT /
 * MH_EVERSION with detail otherwise. */
int mh_idmap_labels(const mh_seg *seg, uint32_t slice, uint32_t x, uint32_t *labels,
                    uint32_t *first, uint32_t *n, mh_diag *d);
/* 1 when the segment has an id map section (no check, no decode). */
int mh_idmap_present(const mh_seg *seg);

/* Writer side. The builder's groups of one slice from chunk_of[0 .. n)
 * (the chunk of each id offset, < nck): records as in the section with
 * slice 0 and data_offset relative to b->idmap_data (mh_segw_append moves
 * them). Nothing when b->idmap_g is 0. */
int mh_idmap_build_slice(mh_builder *b, const uint32_t *chunk_of, uint32_t n,
                         uint32_t nck);
/* Section 7's bytes from the segment's group records (nrec, data_offset
 * and slice final) and data area, appended to out. */
int mh_idmap_serialize(uint32_t g, const uint8_t *recs, uint32_t nrec,
                       const uint8_t *data, uint64_t data_bytes, mh_buf *out);

/* A checked id map section, read in place (idmap_read.c). */
typedef struct mh_idmap_view {
    const uint8_t *recs, *data;
    uint32_t g, ngroups, group_size;
    uint64_t data_bytes, off; /* off: the section's file offset */
    /* the segment when only the header was checked (piece sums, §9f):
     * mh_idmap_group_find checks what a query reads; NULL: checked whole */
    const mh_seg *lazy;
} mh_idmap_view;
/* Validates section bytes p[0..size) (file offset base_off) against the
 * segment's slices: header, sizes, reserved fields (by the minor rule),
 * every slice's groups in order with their counts and widths, data offsets
 * tiling the data area. The checksum is the caller's (mh_idmap_view_get).
 * MH_ECORRUPT. */
int mh_idmap_parse(const mh_seg *seg, const uint8_t *p, uint64_t size,
                   uint64_t base_off, mh_idmap_view *out, mh_diag *d);
/* The segment's id map on first use (seg->idmap_ok): with piece sums
 * covering it (since 1.9), its header's piece and header only (a lazy
 * view); otherwise checksummed and parsed whole. MH_ENOTFOUND when none. */
int mh_idmap_view_get(const mh_seg *seg, mh_idmap_view *out, mh_diag *d);
/* The id map checksummed and parsed whole, every call (fsck,
 * mh_idmap_labels). */
int mh_idmap_view_whole(const mh_seg *seg, mh_idmap_view *out, mh_diag *d);
/* *grp = the group of slice si (s its record) holding id offset x <
 * s->count. A lazy view checks the piece of every record its binary search
 * reads, then the group's record (slice, id offset, count, width, reserved
 * bytes, bytes inside the data area) and its bytes' pieces: a group found
 * here may be decoded (MH_ECHECKSUM / MH_ECORRUPT otherwise). */
int mh_idmap_group_find(const mh_idmap_view *v, uint32_t si, const mh_slice *s, uint32_t x,
                        uint32_t *grp, mh_diag *d);
/* Decodes group `grp` of v (of slice `slice` with chunk_count nck) into
 * labels (MH_IDMAP_GROUP_MAX entries): LZ4 size exact, labels < nck. */
int mh_idmap_decode(const mh_idmap_view *v, uint32_t grp, uint32_t nck,
                    uint32_t *labels, mh_diag *d);
/* Index of the first group of slice s in v (records sorted by slice). */
uint32_t mh_idmap_first_group(const mh_idmap_view *v, uint32_t s);
/* Group grp's labels as stored (query_idmap.c keeps them so, 1 byte a label
 * for slices of up to 256 chunks): count x *width little-endian bytes into
 * out (G x 4 bytes room), checked as mh_idmap_decode checks them. */
int mh_idmap_decode_packed(const mh_idmap_view *v, uint32_t grp, uint32_t nck,
                           uint8_t *out, unsigned *width, mh_diag *d);
/* As mh_idmap_decode_packed, but when want is below the group's count,
 * only a prefix of at least `want` labels (LZ4_decompress_safe_partial):
 * *got labels decoded and checked, want <= *got <= count. */
int mh_idmap_decode_prefix(const mh_idmap_view *v, uint32_t grp, uint32_t nck,
                           uint32_t want, uint8_t *out, uint32_t *got, unsigned *width,
                           mh_diag *d);
/* fsck (verify_idmap.c) of the segment's id map, fed by verify.c's one
 * pass over the slices' rows: begin checks the section like a reader
 * checks it; slice checks slice si's labels against the chunk of the row
 * of each id offset (chunk_of: the chunk, relative to the slice, of every
 * id offset, from its decoded rows; only for a slice whose rows gave every
 * id once) and every chunk's label count against its row_count; end gives
 * the first problem (d; MH_OK, also without a section) and frees. Stops at
 * the first problem. */
typedef struct mh_idmap_chk {
    int on;   /* the section is there, its view checked, nothing found yet */
    int rc;   /* the first problem (MH_OK: none) */
    mh_diag d;
    mh_idmap_view v;
    uint32_t *labels, *per_chunk;
} mh_idmap_chk;
void mh_idmap_fsck_begin(mh_idmap_chk *c, const mh_seg *seg);
void mh_idmap_fsck_slice(mh_idmap_chk *c, const mh_seg *seg, uint32_t si,
                         const mh_slice *s, const uint32_t *chunk_of);
int mh_idmap_fsck_end(mh_idmap_chk *c, mh_diag *d);
/* ---- id transitions (idtime_build.c, idtime_read.c, verify_idtime.c) -- */
/* Section 13 (format 2.5, SPEC.md §9g): per slice, the transition of every
 * K-th id offset, Elias-Fano coded in groups of S. With the id map, a query
 * that walks a slice in id order (query_idmap.c) finds where its start
 * transition falls among the ids from it instead of probing blocks. */
#define MH_IDTIME_STRIDE 1u /* the reference writer's K: every id */

/* Writer side: the builder's groups of one slice from its accesses a[0 ..
 * n) in id order (records with slice 0 and data_offset relative to
 * b->idtime_data; mh_segw_append moves them). Nothing when b->idtime_k is
 * 0. MH_OK or MH_ENOMEM. */
int mh_idtime_build_slice(mh_builder *b, const mh_rec *a, uint32_t n);
/* Section 13's bytes from the segment's group records and data area,
 * appended to out. */
int mh_idtime_serialize(uint32_t k, const uint8_t *recs, uint32_t nrec,
                        const uint8_t *data, uint64_t data_bytes, mh_buf *out);

/* A checked id transitions section, read in place (idtime_read.c). */
typedef struct mh_idtime_view {
    const uint8_t *recs, *data;
    uint32_t k, s, ngroups, group_size;
    uint64_t data_bytes, off; /* off: the section's file offset */
    /* the segment when only the header was checked (piece sums, §9f): the
     * records and words a search reads are checked by their pieces as it
     * reads them; NULL when the whole section was checked */
    const mh_seg *lazy;
} mh_idtime_view;
/* 1 when the segment has section 13 (defined by its minor; no check). */
int mh_idtime_present(const mh_seg *seg);
/* Validates section bytes p[0..size) (file offset base_off) against the
 * segment's slices: header, sizes, reserved fields (§12.1), every slice's
 * groups in order, each group's words room for its samples, data offsets
 * tiling the data area. MH_ECORRUPT "id transitions: ...". */
int mh_idtime_parse(const mh_seg *seg, const uint8_t *p, uint64_t size,
                    uint64_t base_off, mh_idtime_view *out, mh_diag *d);
/* The segment's section 13 on first use (seg->idtime_ok): with piece sums
 * covering it, its header's piece and header only (a lazy view);
 * otherwise checksummed and parsed whole. MH_ENOTFOUND when none. */
int mh_idtime_view_get(const mh_seg *seg, mh_idtime_view *out, mh_diag *d);
/* The section checksummed and parsed whole, every time (fsck). */
int mh_idtime_view_whole(const mh_seg *seg, mh_idtime_view *out, mh_diag *d);
/* *j = the smallest sample index of slice si (a slice of `count` ids)
 * whose transition is >= T, or the slice's sample count when none is: from
 * the group records (binary search by their first transitions) and one
 * group's high bits. A lazy view checks the pieces of every record and
 * words it reads, and the found group's record (MH_ECHECKSUM /
 * MH_ECORRUPT). Reads only inside the section (a crafted file gives a
 * wrong bound, never a read outside; fsck checks the meaning). */
/* Tests: non-zero makes mh_idtime_first_at_least count bits as compiled
 * for every x86-64 even where the CPU has popcnt (idtime_read.c), so that
 * both of its builds are checked on one machine. Set before any search. */
extern int mh_idtime_no_popcnt;
int mh_idtime_first_at_least(const mh_idtime_view *v, uint32_t si, uint32_t count,
                             uint64_t T, uint32_t *j, mh_diag *d);
/* Decodes group grp's samples (its count, c <= S) as transitions into t,
 * checking its coding: exactly c high bits set, no bit past the last
 * sample's, the first sample at the group's t_first, samples not
 * decreasing. MH_ECORRUPT with detail. */
int mh_idtime_decode(const mh_idtime_view *v, uint32_t grp, uint32_t c,
                     uint64_t *t, mh_diag *d);
/* Index of the first group of slice si (records sorted by slice). */
uint32_t mh_idtime_first_group(const mh_idtime_view *v, uint32_t si);
/* fsck (verify_idtime.c) of the segment's section 13, fed as the id map's
 * (mh_idmap_chk): begin checks it as a reader does; slice decodes slice
 * si's groups and checks every sample against the transition of its id's
 * row (t_of: the transition of every id offset, from the decoded rows);
 * end gives the first problem and frees. */
typedef struct mh_idtime_chk {
    int on, rc;
    mh_diag d;
    mh_idtime_view v;
    uint64_t *t;
} mh_idtime_chk;
void mh_idtime_fsck_begin(mh_idtime_chk *c, const mh_seg *seg);
void mh_idtime_fsck_slice(mh_idtime_chk *c, uint32_t si, const mh_slice *s,
                          const uint64_t *t_of);
int mh_idtime_fsck_end(mh_idtime_chk *c, mh_diag *d);

/* ---- address set (aset_build.c, aset_read.c, verify_aset.c) ---------- */
/* Section 8 (format 2.1, optional): per operation, the exact sorted
 * maximal intervals of the union of its rows' [physical, physical + size -
 * 1] in the segment, in runs of K intervals (SPEC.md "Address set"). A
 * query on [A, B] passes a segment whose set meets none of its ops' ranges
 * without reading its slices (one check per segment, before the summary). */

/* The writer's accumulator of one segment's intervals: any order, any
 * overlap; merged by sorting when they pile up (a segment's union is small
 * when its slices revisit the same addresses). It gives up (the segment
 * then gets no section) when the merged set outgrows its byte budget. */
typedef struct mh_aset_acc mh_aset_acc;
int mh_aset_acc_create(mh_aset_acc **out);
void mh_aset_acc_destroy(mh_aset_acc *a); /* NULL accepted */
void mh_aset_acc_reset(mh_aset_acc *a);
/* Adds n intervals pairs[2i] .. pairs[2i + 1] (lo <= hi) of op; count is
 * the segment's accesses so far (the budget). MH_ENOMEM only. */
int mh_aset_acc_add(mh_aset_acc *a, unsigned op, const uint64_t *pairs,
                    size_t n, uint64_t count);
/* Merges everything: *pairs[op] (n[op] sorted maximal intervals, as pairs)
 * stay valid until the next call on a. 0, 1 when it gave up, MH_ENOMEM. */
int mh_aset_acc_finish(mh_aset_acc *a, const uint64_t *pairs[MHF_OP_COUNT],
                       size_t n[MHF_OP_COUNT]);
/* Appends the section's bytes for the merged set to out (nothing when it
 * gave up or the section would pass count / 16 + 4096 bytes). */
int mh_aset_acc_serialize(mh_aset_acc *a, uint64_t count, mh_buf *out);
/* The section's bytes of n[op] sorted maximal intervals (pairs), K per
 * run: the encoder itself (tests and fuzzing build sections with it). */
int mh_aset_encode(const uint64_t *const pairs[MHF_OP_COUNT],
                   const size_t n[MHF_OP_COUNT], uint32_t k, mh_buf *out);
/* The slice builder's hook (slice_build.c): op's exact merged ranges of a
 * slice, appended to b->aset_iv as pairs. */
void mh_aset_slice_ranges(mh_builder *b, unsigned op, const uint64_t *lo,
                          const uint64_t *hi, uint32_t n);

/* A section whose header and run table are checked, read in place. */
typedef struct mh_aset_view {
    uint32_t k, run_size, nruns;
    uint64_t data_bytes, off; /* off: the set's file offset */
    uint64_t nivals[MHF_OP_COUNT];
    uint32_t run_first[MHF_OP_COUNT], run_count[MHF_OP_COUNT];
    const uint8_t *runs, *data;
    /* read by piece sums (SPEC.md §9f): the segment (NULL: the whole set
     * was checked), its table, the covered section's type and the set's
     * offset in it (a span address set's follows its header); a run's
     * bytes are checked before its decode (mh_aset_run_bytes) */
    const mh_seg *lazy;
    const struct mh_psum_tab *ptab;
    uint32_t ptype, prel;
    /* per run, a bit once its bytes' pieces passed (seg->aset_run_ok or
     * span_run_ok; NULL: their pieces' bits are asked on every decode) */
    _Atomic uint64_t *run_ok;
} mh_aset_view;
/* Checks header and run table of the size bytes at p (base_off: their file
 * offset, for details; minor: the segment's, §12.1). MH_ECORRUPT. */
int mh_aset_parse(const uint8_t *p, uint64_t size, uint64_t base_off,
                  uint16_t minor, mh_aset_view *out, mh_diag *d);
/* The view of a set mh_aset_parse accepted before (no check; not lazy). */
void mh_aset_view_fill(const uint8_t *p, uint64_t base_off, mh_aset_view *out);
/* How mh_aset_check checks a set's bytes before it parses them. */
enum {
    MH_ASET_WHOLE,  /* the section's own sum (reads it whole) */
    MH_ASET_LAZY,   /* by piece sums when they cover the section, else whole */
    MH_ASET_SUMMED  /* the caller checked the section's sum */
};
/* The set at byte rel of section sec (type `type`) of seg, to its end,
 * checked as `how` says, then mh_aset_parse. By piece sums (§9f): the
 * pieces of its header and run table; the view is lazy and each run's
 * bytes are checked before its first decode (mh_aset_run_bytes). `what`
 * names the section in details. 1 lazy, 0 whole, else MH_ECHECKSUM /
 * MH_ECORRUPT (a parse failure's detail prefixed "<what> at byte N"). */
int mh_aset_check(const mh_seg *seg, const mh_section *sec, uint32_t type,
                  uint32_t rel, int how, const char *what, mh_aset_view *out,
                  mh_diag *d);
/* The segment's set on first use (mh_aset_check, by piece sums when they
 * cover it), remembered in seg->aset_ok (and seg->aset_lazy).
 * MH_ENOTFOUND (no detail) when the segment has none. */
int mh_aset_view_get(const mh_seg *seg, mh_aset_view *out, mh_diag *d);
/* The segment's set checked whole (its sum and every run record), not
 * remembered: fsck and the span address sets' builder, which read every
 * run. MH_ENOTFOUND (no detail) when the segment has none. */
int mh_aset_view_whole(const mh_seg *seg, mh_aset_view *out, mh_diag *d);
/* Makes v (filled from a set checked before by piece sums) lazy: the set
 * at byte rel of section `type` of seg. */
void mh_aset_view_lazy(mh_aset_view *v, const mh_seg *seg, uint32_t type, uint32_t rel);
/* A lazy view's run (index in the run table): the pieces of its bytes,
 * checked before its first decode (MH_OK at once for a whole view). */
int mh_aset_run_bytes(const mh_aset_view *v, uint32_t run, mh_diag *d);
/* Decoding one run (run: index in the section's run table). */
typedef struct mh_aset_cur {
    const uint8_t *p, *end;
    uint64_t lo, hi, bound; /* bound: the highest hi the run may reach */
    uint32_t left, run, i;
    uint64_t off;           /* file offset of p, for details */
} mh_aset_cur;
void mh_aset_run_open(const mh_aset_view *v, uint32_t op, uint32_t run,
                      mh_aset_cur *c);
/* Next interval into c->lo, c->hi: 1; 0 after the last (its bytes used
 * exactly, its last hi within bound); MH_ECORRUPT with detail. */
int mh_aset_run_step(mh_aset_cur *c, mh_diag *d);
/* Every interval of the checked view v into a (mh_aset_acc_add's count:
 * its budget); a run that does not decode returns its MH_E* (detail in d
 * when given), as MH_ENOMEM and the accumulator's giving up do. The span
 * address sets' builder and their fsck (span_build.c, verify_span.c). */
int mh_aset_acc_add_view(mh_aset_acc *a, const mh_aset_view *v, uint64_t count,
                         mh_diag *d);
/* 1 when some interval of an op of `ops` meets [a, b] or the segment has no
 * set, 0 when none does (the segment holds no match), else an error. */
int mh_aset_meets(const mh_seg *seg, uint64_t a, uint64_t b, uint32_t ops,
                  mh_diag *d);
/* The same question asked of a checked view (mh_aset_meets without the
 * section lookup; the span address sets' too): 1, 0, or MH_ECORRUPT whose
 * detail the caller prefixes with the section it names. marks: the view's
 * runs' resume marks (seg->aset_marks for a segment's own set), or NULL:
 * every run decoded from its start. */
int mh_aset_view_meets(const mh_aset_view *v, const mh_seg *seg, mh_marks *marks, uint64_t a,
                       uint64_t b, uint32_t ops, mh_diag *d);
/* ---- span address set (span_build.c, span_read.c, verify_span.c) ----- */
/* The lowest set bit of x (0 for 0): the size of the Fenwick node at
 * MANIFEST position x. */
static inline uint64_t mh_lowbit(uint64_t x) { return x & (~x + 1); }
/* Section 11 (format 2.3, optional, SPEC.md §9e): the segment at MANIFEST
 * position k = record index + 1 with L = lowbit(k) >= 2 may carry the exact
 * union, per operation, of the address sets of the L segments at positions
 * k - L + 1 .. k (a Fenwick tree kept in the immutable segments). A query
 * skips runs of segments whose union meets none of its ranges. */
typedef struct mh_span_view {
    uint32_t segments;            /* L */
    uint64_t first_seq, accesses;
    mh_aset_view set;             /* the embedded address set */
} mh_span_view;
/* The section's entry when seg's version defines type 11 and it has one,
 * else MH_ENOTFOUND. */
int mh_span_section(const mh_seg *seg, const mh_section **out);
/* Checks section sec of seg, the segment at record index ri of the
 * MANIFEST records recs[0 .. nrecs): sum, header, the embedded set
 * (mh_aset_parse): MH_ECHECKSUM / MH_ECORRUPT with "span address set at
 * byte N: ..."; then L == lowbit(ri + 1), first_seq and span_accesses
 * against the records: MH_SPAN_STALE (out filled, d saying which) when
 * they name other segments, a node that is whole but not of this position
 * (SPEC.md §9e), which no query uses and fsck does not count. */
#define MH_SPAN_STALE 1
int mh_span_check(const mh_seg *seg, const mh_section *sec, size_t ri,
                  const mh_manrec *recs, size_t nrecs, mh_span_view *out,
                  mh_diag *d);
/* The node of record index ri through r's segments, checked once per
 * reader (lazily, by piece sums where the segment has them): MH_OK with
 * *out and *seg set, MH_ENOTFOUND when absent or stale, or an error (a
 * node failing its check; detail names the file). */
int mh_span_node(const mh_reader *r, size_t ri, mh_span_view *out,
                 const mh_seg **seg, mh_diag *d);
/* The whole store's address union (store_union.c; SPEC.md §14 step 0): 1
 * when no access of ops in any segment of r meets [a, b], 0 when some may
 * or the union is not available (or not built yet and build_now 0: a
 * query asks it so before it opens its start segment, and with build_now
 * 1 when its walk is about to leave that segment). Built on the first call
 * with build_now from the span
 * address sets of the MANIFEST positions' prefix decomposition (a node
 * missing or stale: its children), at most a quarter of the cache option
 * in bytes; anything missing, broken, too large or out of memory leaves it
 * unavailable (never an error: the walk then reads what it reads and
 * reports what it finds). Used on stores of MH_UNION_MIN_SEGS segments or
 * more (4 before library 1.10.3: on python's 2-segment store the
 * never-accessed point questions, passed by the postings' search since the
 * address set is asked late, cost 0.6-0.8 us, 0.25-0.33 from the union).
 * Thread-safe. */
#define MH_UNION_MIN_SEGS 2u
#define MH_UNION_STEP 64u
int mh_store_union_excludes(const mh_reader *r, uint64_t a, uint64_t b, uint32_t ops,
                            int build_now);
void mh_store_union_free(mh_reader *r);
/* The skip walk before a query enters live segment *li (query.c): moves *li
 * over the segments the nodes prove hold no interval of ops meeting
 * [a, b] (forward or backward), asking only the nodes of the segments at
 * record indexes [lo_rec, hi_rec) (those within the query's end bound);
 * 1 with *li set, 0 when no segment is left, or an error (a node failing
 * its check; detail names the file). A query of streams[0 .. ns) (ns > 0:
 * at most MHF_SPOST_QUERY_STREAMS, sorted) also asks the stream nodes
 * (section 16) where a node of section 11 does not exclude. */
int mh_span_skip(const mh_reader *r, int fwd, uint64_t a, uint64_t b,
                 uint32_t ops, const uint32_t *streams, uint32_t ns, size_t lo_rec,
                 size_t hi_rec, size_t *li, mh_diag *d);
/* The writer's node for the segment being sealed at record index ri (the
 * earlier segments' records recs[0 .. ri), their files in dir): own[op] /
 * nown[op] its own set's intervals (NULL with have_own 0: it has none),
 * count its accesses. Appends section 11's bytes to out, or nothing when
 * lowbit(ri + 1) < 2, a child is missing or fails its check, the union
 * passes its budget, or memory runs out: an optional section, never a
 * wrong one. */
int mh_span_build(const char *dir, const mh_manrec *recs, size_t ri,
                  uint64_t count, int have_own,
                  const uint64_t *const own[MHF_OP_COUNT],
                  const size_t nown[MHF_OP_COUNT], mh_buf *out);
/* fsck (verify_span.c): seg's section 11 (record index ri of m) checked as
 * a query checks it and equal to the union of the covered segments' own
 * sets; a node whose covered segments (count > 0) lack a set is
 * MH_ECORRUPT. MH_OK when the segment has none; MH_SPAN_STALE (d says
 * why) for a stale node, whole (its runs decoded) but not compared. open
 * (NULL, or nrecs entries): segments the caller holds open, as for
 * mh_verify_store_tables. */
int mh_span_fsck(const char *dir, const mh_seg *seg, size_t ri,
                 const mh_manrec *recs, size_t nrecs, mh_seg *const *open,
                 mh_diag *d);

/* ---- the layout of sections 15 and 17 (stream_table.c) -------------- */
/* A 16-byte header (entry_count, entry_size, data_bytes), entries {u32
 * stream strictly increasing, u32 reserved, u64 body offset, u64 bytes},
 * the bodies back to back (SPEC.md §9d.2, §9d.3). */
typedef struct mh_stream_table {
    uint32_t n, esz;
    const uint8_t *ents, *data;
    uint64_t data_off; /* the bodies' file offset */
} mh_stream_table;
/* Checks a body (bytes at p, file offset off): MH_OK or MH_E* with detail. */
typedef int (*mh_stream_body_fn)(void *ctx, const uint8_t *p, uint64_t bytes, uint64_t off,
                                 mh_diag *d);
/* Checks the size bytes at p (file offset off; later: a file of a later
 * minor, §12.1): header, entries (order, bound, reserved, offsets tiling,
 * some body) and each body through fn. MH_ECORRUPT "<what> at byte N: ...". */
int mh_stream_table_parse(const uint8_t *p, uint64_t size, uint64_t off, int later,
                          const char *what, mh_stream_body_fn fn, void *ctx,
                          mh_stream_table *out, mh_diag *d);
/* The entry of stream `stream` among n entries of esz bytes at ents, or n. */
uint32_t mh_stream_table_entry(const uint8_t *ents, uint32_t n, uint32_t esz, uint32_t stream);

/* ---- stream id runs (sruns_build.c, sruns_read.c, verify_sruns.c;
 * section 17, format 2.8, SPEC.md §9d.3) ------------------------------- */
/* The builder's hook (mh_builder_run): the slice's runs of one stream in
 * id order into b->sr_iv (b->sr_lost when memory runs out). */
void mh_sruns_slice(mh_builder *b, const mh_rec *a, uint32_t n);
/* A segment keeps its runs while they number at most rows / 8 +
 * MH_SRUNS_SLACK at each of its slices' ends (SPEC.md §9d.3). */
#define MH_SRUNS_SLACK 16384u
/* The segment's runs (id offsets from its id_first), a run continued
 * across slices joined; serialized grouped by stream at seal (nothing for
 * a one-stream segment, after running out of memory, once its runs passed
 * that budget, or when no stream keeps a body: MH_OK with nothing
 * appended; MH_ENOMEM). */
typedef struct mh_sruns_acc mh_sruns_acc;
int mh_sruns_acc_create(mh_sruns_acc **out);
void mh_sruns_acc_destroy(mh_sruns_acc *s); /* NULL accepted */
void mh_sruns_acc_add(mh_sruns_acc *s, const mh_builder *b, uint64_t base);
void mh_sruns_acc_truncate(mh_sruns_acc *s, uint64_t count); /* keeps [0, count) */
int mh_sruns_acc_serialize(mh_sruns_acc *s, mh_buf *out);
/* The segment's section 17 (minor 8 on), else MH_ENOTFOUND. */
int mh_sruns_section(const mh_seg *seg, const mh_section **sec);
typedef struct mh_sruns_view {
    uint32_t n, esz;
    const uint8_t *ents, *data;
    uint64_t off, data_off; /* file offsets of the section and its bodies */
    uint64_t count;         /* the segment's rows */
} mh_sruns_view;
/* Checked whole (sum, header, entries, every body's header and group
 * records) on first use, remembered in seg->sruns_ok; details "stream id
 * runs at byte N: ...". MH_ENOTFOUND (no detail) when absent. */
int mh_sruns_view_get(const mh_seg *seg, mh_sruns_view *out, mh_diag *d);
/* The same, always checked, never remembered: fsck. */
int mh_sruns_view_whole(const mh_seg *seg, mh_sruns_view *out, mh_diag *d);
/* The entry of stream `stream` (binary search), or v->n when none. */
uint32_t mh_sruns_entry(const mh_sruns_view *v, uint32_t stream);
typedef struct mh_sruns_body_view {
    const uint8_t *p;
    uint64_t bytes, off, count, runs; /* bytes 0: the entry has no body */
    uint32_t k, groups;
} mh_sruns_body_view;
void mh_sruns_body(const mh_sruns_view *v, uint32_t e, mh_sruns_body_view *out);
/* Group g's runs decoded with every check into runs (2 x its count u64s:
 * first, last), their count in *n: MH_OK or MH_ECORRUPT with detail. */
int mh_sruns_group(const mh_sruns_body_view *b, uint32_t g, uint64_t *runs, uint32_t *n,
                   mh_diag *d);
/* The run of one of streams[0 .. ns) holding offset x, else the next one
 * (forward) or the previous one (backward): 1 with [*a, *b], 0 none, or
 * MH_ENOTFOUND when a stream's entry has no body (the section does not
 * serve), or a group's decode error. */
int mh_sruns_next(const mh_sruns_view *v, const uint32_t *streams, uint32_t ns, uint64_t x,
                  int fwd, uint64_t *a, uint64_t *b, mh_diag *d);
/* Whether the segment's runs serve a walk of streams[0 .. ns): 1 when it
 * has section 17 and each of them a body there or no entry, 0 when not
 * (no section, or a stream whose runs were not kept: the walk would test
 * every row), < 0 a section that does not read (mh_sruns_view_get). */
int mh_sruns_serves(const mh_seg *seg, const uint32_t *streams, uint32_t ns, mh_diag *d);
/* fsck (verify_sruns.c), fed by verify.c's pass: each slice's streams by
 * id offset (whole: every id given), slice after slice. */
typedef struct mh_sruns_chk mh_sruns_chk;
int mh_sruns_fsck_begin(mh_sruns_chk **out, const mh_seg *seg); /* MH_ENOMEM */
void mh_sruns_fsck_slice(mh_sruns_chk *c, const uint32_t *stream_by_id, uint32_t count,
                         int whole);
int mh_sruns_fsck_end(mh_sruns_chk *c, int rows_ok, mh_diag *d); /* NULL: MH_ENOMEM */

/* ---- span stream address set (sspan_build.c, sspan_read.c,
 * verify_sspan.c; section 16, format 2.8, SPEC.md §9e.1) ---------------- */
/* A stream node: at section 11's positions, per stream with a row in the
 * L covered segments, the granules (of its entry's shift) its rows touch
 * per op, as an address set whose intervals are whole granules; or none.
 * A query of a few streams skips the runs of segments none of them
 * touches in [A, B]. */
typedef struct mh_sspan_view {
    uint32_t segments, n, esz;
    uint16_t minor;
    uint64_t first_seq, accesses;
    const uint8_t *ents, *data;
    uint64_t off, data_off; /* file offsets of the section and its sets */
} mh_sspan_view;
/* The section's entry when seg's version defines type 16 and it has one,
 * else MH_ENOTFOUND. */
int mh_sspan_section(const mh_seg *seg, const mh_section **sec);
/* Section sec of seg, the segment at record index ri of recs[0 .. nrecs):
 * its sum, header, entries and every set's header and run table
 * (MH_ECHECKSUM / MH_ECORRUPT "span stream address set at byte N: ..."),
 * then its place as mh_span_check's: MH_SPAN_STALE (out filled, d saying
 * why) for a whole node of other positions. */
int mh_sspan_check(const mh_seg *seg, const mh_section *sec, size_t ri,
                   const mh_manrec *recs, size_t nrecs, mh_sspan_view *out,
                   mh_diag *d);
/* The entry of stream `stream` (binary search), or v->n when none. */
uint32_t mh_sspan_entry(const mh_sspan_view *v, uint32_t stream);
/* Entry e's shift, its set's view in *set (checked by the parse); 0 when
 * the entry has no set (*set untouched). */
uint32_t mh_sspan_set(const mh_sspan_view *v, uint32_t e, mh_aset_view *set);
/* The skip walk's question (span_read.c) of the stream node at record
 * index ri: 1 when it exists and none of streams[0 .. ns) touches a
 * granule of [a, b] with an op of ops in its segments, 0 when absent,
 * stale, or some may, else an error (detail names the file). Checked once
 * per reader. */
int mh_sspan_excludes(const mh_reader *r, size_t ri, uint64_t a, uint64_t b,
                      uint32_t ops, const uint32_t *streams, uint32_t ns,
                      mh_diag *d);
/* What the segment being sealed gives its stream node (segment_write.c):
 * multi-stream, its section 15's bytes (spost, nspost; NULL when it has
 * none); one stream, that stream and its address set's intervals per op
 * (one[op] / none[op]; have_one 0 when it has no set). */
typedef struct mh_sspan_own {
    uint64_t count;                      /* its accesses */
    uint32_t nstreams;                   /* streams with rows in it */
    const uint8_t *spost;
    size_t nspost;
    uint32_t nslices;
    uint32_t one_stream;
    int have_one;
    const uint64_t *one[MHF_OP_COUNT];
    size_t none[MHF_OP_COUNT];
} mh_sspan_own;
/* The writer's stream node for the segment being sealed at record index
 * ri (earlier records recs[0 .. ri), their files in dir): appends section
 * 16's bytes to out, or nothing when lowbit(ri + 1) < 2, a source is
 * missing or fails its check, the union passes its budget at every shift
 * up to MHF_SSPAN_SHIFT_LAST, or memory runs out (MH_ENOMEM returned then,
 * nothing appended): an optional section, never a wrong one. */
int mh_sspan_build(const char *dir, const mh_manrec *recs, size_t ri,
                   const mh_sspan_own *own, mh_buf *out);
/* The collector the writer and fsck share (sspan_build.c): per stream,
 * the granule runs (bytes) its sources give per op, its largest source
 * shift, and whether a source had none of its granules. Sources: a
 * segment (mh_sspan_col_segment: its section 15, or, of one stream, its
 * address set at the finest shift; MH_ENOTFOUND when it has neither), a
 * stream node, a section 15 view, a set or pairs. Then sorted, each
 * stream's runs at a shift g merged per op (mh_sspan_col_stream: walk the
 * streams in increasing id with one *at, 0 first). MH_ENOMEM; a source's
 * decode errors with detail. */
typedef struct mh_sspan_col mh_sspan_col;
int mh_sspan_col_create(mh_sspan_col **out);
void mh_sspan_col_destroy(mh_sspan_col *c); /* NULL accepted */
int mh_sspan_col_none(mh_sspan_col *c, uint32_t stream);
int mh_sspan_col_pairs(mh_sspan_col *c, uint32_t stream, uint32_t shift, unsigned op,
                       const uint64_t *pairs, size_t n);
int mh_sspan_col_aset(mh_sspan_col *c, uint32_t stream, uint32_t shift,
                      const mh_aset_view *v, mh_diag *d);
struct mh_spost_view;
int mh_sspan_col_spost(mh_sspan_col *c, const struct mh_spost_view *v, mh_diag *d);
int mh_sspan_col_node(mh_sspan_col *c, const mh_sspan_view *v, mh_diag *d);
int mh_sspan_col_segment(mh_sspan_col *c, const mh_seg *s, mh_diag *d);
void mh_sspan_col_sort(mh_sspan_col *c);
/* The first listed stream >= stream, or UINT32_MAX. */
uint32_t mh_sspan_col_next(const mh_sspan_col *c, uint32_t stream);
/* A listed stream's largest source shift; *noset 1 when a source had none. */
uint32_t mh_sspan_col_shift(const mh_sspan_col *c, uint32_t stream, int *noset);
int mh_sspan_col_stream(mh_sspan_col *c, size_t *at, uint32_t stream, uint32_t g,
                        const uint64_t *pairs[MHF_OP_COUNT], size_t n[MHF_OP_COUNT]);
/* fsck (verify_sspan.c): seg's section 16 (record index ri of recs[0 ..
 * nrecs)) checked as a query checks it, every run decoded, and each
 * entry equal to the union its covered segments' sources give (their
 * stream postings, or a one-stream segment's address set; each proven
 * against the rows by its own fsck). MH_OK when the segment has none,
 * MH_SPAN_STALE (d says why) for a stale node. open: as mh_span_fsck's. */
int mh_sspan_fsck(const char *dir, const mh_seg *seg, size_t ri,
                  const mh_manrec *recs, size_t nrecs, mh_seg *const *open,
                  mh_diag *d);

/* fsck (verify_aset.c) of the address set, fed by verify.c's one pass
 * over the rows: begin finds the section (a damaged one is end's first
 * problem); rows takes n (op, lo, hi) triples, the next rows of the
 * segment in its row order; end checks the section's sum and structure,
 * every run decoded, and (rows_ok: every slice verified, every row given)
 * the set equal to the union of the rows' ranges per op, and frees. The
 * first problem is returned; MH_OK when the segment has no set. */
typedef struct mh_aset_chk mh_aset_chk;
/* At a checker's end (mh_aset_chk, mh_apost_chk), the verdict vrc its
 * begin had on the section's view (its detail in kept): 1 when the check
 * goes on, else 0 with *rc the answer (MH_OK for no section, else the
 * view's problem, its detail copied into d). */
static inline int mh_fsck_view_ok(int vrc, const mh_diag *kept, mh_diag *d, int *rc) {
    *rc = vrc == MH_ENOTFOUND ? MH_OK : vrc;
    if (vrc != MH_OK && vrc != MH_ENOTFOUND && d)
        *d = *kept;
    return vrc == MH_OK;
}
int mh_aset_fsck_begin(mh_aset_chk **out, const mh_seg *seg); /* MH_ENOMEM */
void mh_aset_fsck_rows(mh_aset_chk *c, const uint64_t *trip, size_t n);
int mh_aset_fsck_end(mh_aset_chk *c, int rows_ok, mh_diag *d); /* NULL: MH_ENOMEM */
/* fsck: the checked view v equals pairs / n (each op's sorted maximal
 * intervals), else MH_ECORRUPT "<what> at byte <off>: op o has X intervals,
 * <source> make Y" or "... op o interval i is [..], <source> make [..]". */
int mh_aset_view_compare(const mh_aset_view *v, const uint64_t *const pairs[MHF_OP_COUNT],
                         const size_t n[MHF_OP_COUNT], const char *what, uint64_t off,
                         const char *source, mh_diag *d);

/* ---- address postings (apost_build.c, apost_read.c, verify_apost.c) -- */
/* Section 10 (format 2.2, optional, SPEC.md §9d): for each operation o and
 * granule w at shift g, the slices having a row of op o meeting
 * [w << g, ((w + 1) << g) - 1], strictly increasing; a key (o, w) present
 * iff it has one. Keys in runs of K; postings as varint deltas (form 0) or
 * a bitmap of the segment's slices (form 1). A narrow query (fewer than 16
 * granules) walks only the slices its keys list. */

/* The writer's accumulator of one segment's granules, per slice and op,
 * at a base shift (3, coarser when a slice is too wide or they pile up). */
typedef struct mh_apost_acc mh_apost_acc;
/* fixed_shift 0: the writer's (base shift 3, coarser as needed); else
 * fsck's, at exactly that shift (no pile limit; gives up past 2^26
 * granules in a slice). */
int mh_apost_acc_create(mh_apost_acc **out, uint32_t fixed_shift);
int mh_apost_acc_failed(const mh_apost_acc *a); /* 1: gave up */
/* Tests: how the seal's merge goes: 0 (the default) groups an op by key
 * when it is dense and large enough, -1 never groups, 1 groups whenever
 * dense enough however small, 2 as 1 in windows of as few postings as
 * allowed (the slices, rounded up to a power of two); either way the
 * section is the same.
 * mh_apost_acc_grouped: the ops grouped by mh_apost_acc_serialize so far. */
void mh_apost_acc_set_merge(mh_apost_acc *a, int mode);
uint32_t mh_apost_acc_grouped(const mh_apost_acc *a);
void mh_apost_acc_destroy(mh_apost_acc *a); /* NULL accepted */
/* The next slice (index: the number added so far): its exact merged ranges
 * per op, pairs[2i] .. pairs[2i + 1], n[op] of them one op after the other
 * (the builder's aset_iv / aset_n); count: the segment's accesses so far.
 * Out of memory, a slice too wide at every shift <= 10, or a pile past
 * its limit: the segment gets no section (never a wrong one). */
void mh_apost_acc_add(mh_apost_acc *a, const uint64_t *pairs,
                      const uint32_t n[MHF_OP_COUNT], uint64_t count);
/* Forgets slices nslices.. (mh_writer_discard_from). */
void mh_apost_acc_truncate(mh_apost_acc *a, uint32_t nslices);
/* Section 14 (format 2.6, SPEC.md §9d): from the next mh_apost_acc_add on,
 * a merged range of at least 2^log2 bytes (12 .. 63) is kept out of the
 * granules, as a wide range; 0 (the default): none. The writer sets
 * MHF_APOSTW_LOG2_DEFAULT, fsck the section's. More than count / 64 +
 * 4096 of them (the writer's, not fsck's): the segment gets none. */
void mh_apost_acc_set_wide(mh_apost_acc *a, uint32_t log2);
/* A stream body's (section 15, format 2.7): granules from shift `first` on,
 * coarsened up to `last` (past it: none). Before the first add. */
void mh_apost_acc_set_shifts(mh_apost_acc *a, uint32_t first, uint32_t last);
/* Slice `slice`'s ranges per op as the accumulator holds them (its granules
 * at its shift as byte ranges, and its wide ones), each op's in lo order,
 * into out (u64 pairs, op by op; n[o] of op o): what mh_apost_acc_add
 * takes, exact at `shift` and coarser. wide_at: where the slice's wide
 * ranges are looked for (0 for slice 0, then what the call before left).
 * MH_EINVAL when the accumulator gave up or holds a coarser shift,
 * MH_ENOMEM. The stream postings' (spost_build.c) for the slices of a
 * segment that was of one stream until then. */
int mh_apost_acc_slice_ranges(const mh_apost_acc *a, uint32_t slice, uint32_t shift,
                              size_t *wide_at, mh_buf *out, uint32_t n[MHF_OP_COUNT]);

/* ---- stream address postings (spost_build.c, spost_read.c; 2.7) ---- */
/* The builder's: an op's rows of a multi-stream slice in address order
 * (ord: row indexes in their low 32 bits) give each stream its merged
 * ranges (b->sp_iv). */
void mh_spost_slice_ranges(mh_builder *b, const mh_rec *a, const uint64_t *ord,
                           uint32_t m, unsigned op);
/* The segment's: one address postings accumulator per stream. */
typedef struct mh_spost_acc mh_spost_acc;
int mh_spost_acc_create(mh_spost_acc **out);
void mh_spost_acc_destroy(mh_spost_acc *s); /* NULL accepted */
/* The slice b just built (after mh_builder_run), once the address
 * postings' accumulator ap (NULL: none) has it. */
void mh_spost_acc_add(mh_spost_acc *s, const mh_builder *b, const mh_apost_acc *ap);
/* Keeps the first nslices slices (a discard); kept: the streams of those
 * slices (their per-slice records), for the rows each stream keeps. */
void mh_spost_acc_truncate(mh_spost_acc *s, uint32_t nslices,
                           const mh_slice_stream *kept, size_t nkept);
/* Appends section 15 to out, or nothing (a one-stream segment, too many
 * streams, out of memory while adding, every stream past its last shift).
 * MH_ENOMEM. */
int mh_spost_acc_serialize(mh_spost_acc *s, mh_buf *out);
typedef struct mh_apost_wide {
    uint64_t first, last;
    uint32_t slice, op;
} mh_apost_wide;
/* qsort order of wide ranges: (op, first, slice); last not compared. */
int mh_apost_wide_cmp(const void *x, const void *y);
/* The wide ranges, sorted by (op, first, slice) in place: their count;
 * *out valid until the next add, truncate or destroy. 0 when it gave up. */
size_t mh_apost_acc_wide(mh_apost_acc *a, const mh_apost_wide **out);
/* Every key (op ascending, then granule) at the accumulator's shift with
 * its postings, to fn; fn's first non-zero return stops it and is
 * returned. MH_ENOMEM when it gave up. */
typedef int (*mh_apost_key_fn)(void *ctx, unsigned op, uint64_t w,
                               const uint32_t *post, uint32_t n);
int mh_apost_acc_walk(const mh_apost_acc *a, mh_apost_key_fn fn, void *ctx);
/* Appends the section for the slices added (the first shift >= the base
 * whose section takes at most budget bytes, none past shift 10) to out;
 * budget 0: count / 2 + 4096. MH_OK with nothing appended when none. With
 * wide ranges (mh_apost_acc_wide) it is a section 14: their table, then
 * the section 10 of the others. */
int mh_apost_acc_serialize(mh_apost_acc *a, uint64_t count, uint64_t budget,
                           mh_buf *out);
/* The section's bytes of explicit keys: for op o, nkeys[o] granules
 * gran[o][i] (increasing) with postings post[o][first[o][i] ..
 * first[o][i + 1]) (slice indexes, increasing); K keys per run; form[o][i]
 * 0/1, or form NULL for the shorter. Tests and fuzzing build sections so. */
int mh_apost_encode(uint32_t shift, uint32_t k, uint32_t nslices,
                    const uint64_t *const gran[MHF_OP_COUNT],
                    const uint32_t *const first[MHF_OP_COUNT],
                    const uint32_t *const post[MHF_OP_COUNT],
                    const size_t nkeys[MHF_OP_COUNT],
                    const uint8_t *const form[MHF_OP_COUNT], mh_buf *out);

/* A section whose header and run table are checked, read in place. */
typedef struct mh_apost_view {
    uint32_t shift, k, run_size, nruns, nslices;
    uint64_t data_bytes, postings, off; /* off: the section's file offset */
    uint64_t nkeys[MHF_OP_COUNT];
    uint32_t run_first[MHF_OP_COUNT], run_count[MHF_OP_COUNT];
    const uint8_t *runs, *data;
    /* NULL: the header and the whole run table were checked (sum and
     * structure); else the segment whose piece sums (§9f) check what a
     * query reads: run records as it reads them, each run with its
     * neighbours' records and its bytes before its first decode */
    const mh_seg *lazy;
    /* a lazy view's piece sums (lazy's psum): their checked bits are
     * tested inline before mh_psum_check is asked */
    const struct mh_psum_tab *ptab;
    /* a section 14's (format 2.6) wide ranges: op o's wide_n[o] records
     * from record wide_first[o] at wide, the largest last - first among
     * them wide_span[o]; wide NULL and every wide_n 0 for a section 10;
     * wide_off the records' file offset */
    const uint8_t *wide;
    uint64_t wide_off;
    /* what a lazy view's piece sums cover: its section's type and section
     * 10's offset in it (0 for a section 10) */
    uint32_t ptype;
    uint64_t prel;
    uint32_t wide_log2, wide_rsz;
    uint64_t wide_n[MHF_OP_COUNT], wide_first[MHF_OP_COUNT], wide_span[MHF_OP_COUNT];
} mh_apost_view;
/* The segment's address postings: MHF_SECT_APOST or MHF_SECT_APOSTW (a
 * segment has at most one, segment_read.c), its entry in *sec; else
 * MH_ENOTFOUND. */
int mh_apost_section(const mh_seg *seg, const mh_section **sec);
/* Where a section 14 of size bytes at p (not yet checked) has its body, by
 * its header's count and record size; size when they do not fit. */
uint64_t mh_apostw_body_at(const uint8_t *p, uint64_t size);
/* A view of the section 10 at p (base_off its file offset) whose header
 * and run table were checked before (mh_apost_parse). */
void mh_apost_view_fill(const uint8_t *p, uint64_t base_off, uint32_t nslices,
                        mh_apost_view *out);
/* Checks header, operation and run records of the size bytes at p
 * (base_off: their file offset; minor: the segment's, §12.1; nslices: the
 * segment's slice count). MH_ECORRUPT with detail. */
int mh_apost_parse(const uint8_t *p, uint64_t size, uint64_t base_off,
                   uint16_t minor, uint32_t nslices, mh_apost_view *out,
                   mh_diag *d);
/* nodes of a postings run search's first probes kept per op (apost_read.c
 * run_search): 1 .. 255, its first 8 levels; 3 x 2 KiB a segment */
#define MH_APOST_TOP 256u
#define MH_APOST_TOP_BYTES ((size_t)MHF_OP_COUNT * MH_APOST_TOP * sizeof(uint64_t))
/* The segment's section: checksum and mh_apost_parse on first use,
 * remembered in seg->apost_ok; details "address postings at byte N: ...".
 * With piece sums covering it (format 2.4), only the header's piece and
 * header checks (out->lazy set). MH_ENOTFOUND (no detail) when the
 * segment has none. */
int mh_apost_view_get(const mh_seg *seg, mh_apost_view *out, mh_diag *d);
/* The same, always whole (sum and every record), never remembered: fsck. */
int mh_apost_view_whole(const mh_seg *seg, mh_apost_view *out, mh_diag *d);
/* Record i of the run table, its piece checked first in a lazy view:
 * MH_OK, or MH_ECHECKSUM with detail. */
int mh_apost_rec(const mh_apost_view *v, uint32_t i, const uint8_t **out,
                 mh_diag *d);
/* Decoding one run (run: index in the section's run table). */
typedef struct mh_apost_cur {
    const mh_apost_view *v;
    const uint8_t *p, *end;
    uint64_t w;          /* the current key's granule */
    uint64_t bound;      /* highest granule the run may hold */
    uint32_t left, run, i, op;
} mh_apost_cur;
void mh_apost_run_open(const mh_apost_view *v, uint32_t op, uint32_t run,
                       mh_apost_cur *c);
/* Next key: 1 with c->w its granule, *n its postings, checked (varints in
 * the run's bytes, granule order and bounds, n >= 1, form, postings
 * increasing and below the slice count, popcount); ORs them into bits
 * (nullable; bit s of word s >> 6) and writes them to list (nullable, room
 * for nslices). 0 after the last key (its bytes used exactly). MH_ECORRUPT
 * with detail "address postings at byte N: ...". */
int mh_apost_run_step(mh_apost_cur *c, uint64_t *bits, uint32_t *list,
                      uint32_t *n, mh_diag *d);
/* The same, its postings ORed into bits only when the key's granule lies in
 * [wa, wb] (every key checked alike): one decode of a key where a check
 * first, then an OR, took two. On MH_ECORRUPT bits may hold some of the
 * failing key's postings (the caller's question fails with it). */
int mh_apost_run_step_in(mh_apost_cur *c, uint64_t wa, uint64_t wb, uint64_t *bits,
                         uint32_t *n, mh_diag *d);

/* The candidate slices of one segment for one narrow query: a bitmap of
 * the segment's slices in the caller's scratch (no allocation of its own). */
typedef struct mh_apost_iter {
    const uint64_t *bits;             /* the union over the ops asked */
    const uint64_t *op_bits[MHF_OP_COUNT]; /* each op's own (NULL: not asked) */
    uint32_t nslices;
    uint32_t shift;      /* the section's granule shift */
} mh_apost_iter;
/* 1: `it` lists the candidates (possibly none); 0: the section does not
 * serve this query (absent, or [a, b] spans >= 16 granules): use the
 * summaries; < 0 MH_E* (broken section, diag set: "address postings at
 * byte N: ..."). *scratch / *scratch_cap (64-bit words): the caller's,
 * grown here by realloc when the segment's slices need more (the caller
 * frees it). ops: bit o for operation o. */
int mh_apost_query(const mh_seg *seg, uint64_t a, uint64_t b, uint32_t ops,
                   mh_apost_iter *it, uint64_t **scratch, size_t *scratch_cap,
                   mh_diag *d);
/* The same over a view mh_apost_view_get gave for seg (a query that got it
 * to decide whether the postings serve asks no second time). */
int mh_apost_query_view(const mh_seg *seg, const mh_apost_view *v, uint64_t a,
                        uint64_t b, uint32_t ops, mh_apost_iter *it,
                        uint64_t **scratch, size_t *scratch_cap, mh_diag *d);
/* The empty candidates of nslices slices for ops in the caller's scratch
 * (grown by realloc): one op, its bitmap is it->bits; several, each op's
 * own after the union's (it->op_bits), mh_apost_iter_union ORs them into
 * it. MH_ENOMEM with detail. */
int mh_apost_iter_init(mh_apost_iter *it, uint32_t nslices, uint32_t ops, uint32_t shift,
                       uint64_t **scratch, size_t *scratch_cap, mh_diag *d);
void mh_apost_iter_union(mh_apost_iter *it, uint32_t ops);
/* First candidate >= s / last candidate <= s; UINT32_MAX when none. */
uint32_t mh_apost_next(const mh_apost_iter *it, uint32_t s);
uint32_t mh_apost_prev(const mh_apost_iter *it, uint32_t s);
/* The ops asked whose own postings list slice s (bit o for op o): the
 * postings are exact per op (SPEC 9d), so an op without it has no row of
 * s meeting [a, b] and a query need not search that op's chunks there. */
unsigned mh_apost_ops_at(const mh_apost_iter *it, uint32_t s);
/* The segment's section 15 (minor 7 on), else MH_ENOTFOUND. */
int mh_spost_section(const mh_seg *seg, const mh_section **sec);
typedef struct mh_spost_view {
    uint32_t n, esz, nslices;
    const uint8_t *ents, *data;
    uint64_t off, data_off; /* file offsets of the section and its bodies */
} mh_spost_view;
/* Section 15 checked whole (sum, header, entries, each body's header and
 * run table: mh_apost_parse) on first use, remembered in seg->spost_ok;
 * details "stream postings at byte N: ..." (a body's: "address postings
 * at byte N"). MH_ENOTFOUND (no detail) when the segment has none. */
int mh_spost_view_get(const mh_seg *seg, mh_spost_view *out, mh_diag *d);
/* The same, always checked, never remembered: fsck. */
int mh_spost_view_whole(const mh_seg *seg, mh_spost_view *out, mh_diag *d);
/* The entry of stream `stream` (binary search), or v->n when none. */
uint32_t mh_spost_entry(const mh_spost_view *v, uint32_t stream);
/* Stream's body as a section 10 view (checked by the view's parse): 1; 0
 * when the section lists no such stream; -1 when its entry has no body. */
int mh_spost_body(const mh_spost_view *v, uint32_t stream, mh_apost_view *out);
/* The candidates of [a, b], ops, for the rows of streams[0 .. ns) (sorted,
 * distinct): 1 (it lists them, possibly none), 0 (the section does not
 * serve: absent, more than MHF_SPOST_QUERY_STREAMS streams, a stream of
 * them without a body, [a, b] spans MHF_SPOST_SPAN granules or more of
 * a body, or the runs holding the keys of [a, b] and ops, of the bodies
 * where it spans MH_SPOST_VOLUME_SPAN granules or more, add up to more
 * than MH_SPOST_VOLUME_MAX bytes), < 0 MH_E* with detail. Scratch as
 * mh_apost_query's. */
/* Bytes of postings a question's candidates may be made from (SPEC.md
 * §9d.2, use by a query). Past them the streams touched the range in many
 * slices, where the walk soon meets their rows without the section: on
 * QEMU recordings of xz -T2 and sort --parallel=4, ORing a thread's
 * postings of its own buffers (tens of KiB) was the 1 MiB one-stream
 * questions' p99 of 16-124 us. */
#define MH_SPOST_VOLUME_MAX 16384u
/* ... counted for ranges of at least this many granules of a body */
#define MH_SPOST_VOLUME_SPAN 16u
int mh_spost_query(const mh_seg *seg, uint64_t a, uint64_t b, uint32_t ops,
                   const uint32_t *streams, uint32_t ns, struct mh_apost_iter *it,
                   uint64_t **scratch, size_t *scratch_cap, mh_diag *d);
/* x &= y, both made for the same ops and segment. */
void mh_spost_and(struct mh_apost_iter *x, const struct mh_apost_iter *y, uint32_t ops);
/* fsck (verify_apost.c): the section's sum and structure, every run
 * decoded, posting_count, and (rows_ok: the slices verified) every slice's
 * granules per op at the section's shift equal to the postings, decoding
 * every block itself. The first problem; MH_OK when the segment has none. */
int mh_apost_fsck(const mh_seg *seg, int rows_ok, mh_diag *d);
/* The same fed by verify.c's one pass over the rows (as mh_aset_chk):
 * slice takes one slice's m (op, lo, hi) triples in row order, slice after
 * slice, and may reorder them; end checks and frees (NULL: MH_ENOMEM). */
/* Shared by fsck's postings checks (verify_apost.c): the (op, lo, hi)
 * triples of one slice's rows, merged per op, added to acc (p reordered);
 * and a section 10's view against acc's keys (acc NULL: its runs decoded
 * and its posting_count). */
typedef struct mh_apost_sorter mh_apost_sorter;
mh_apost_sorter *mh_apost_sorter_new(void);
void mh_apost_sorter_free(mh_apost_sorter *as); /* NULL accepted */
int mh_apost_merge_add(mh_apost_sorter *as, mh_apost_acc *acc, uint64_t *p, size_t m,
                       mh_diag *d);
int mh_apost_compare(const mh_apost_view *v, mh_apost_acc *acc, mh_diag *d);
/* fsck of section 15 (verify_spost.c), fed by verify.c's pass as
 * mh_apost_chk: each slice's triples and their rows' streams. */
typedef struct mh_spost_chk mh_spost_chk;
int mh_spost_fsck_begin(mh_spost_chk **out, const mh_seg *seg); /* MH_ENOMEM */
void mh_spost_fsck_slice(mh_spost_chk *c, const uint64_t *trip, const uint32_t *strm,
                         size_t m);
int mh_spost_fsck_end(mh_spost_chk *c, int rows_ok, mh_diag *d); /* NULL: MH_ENOMEM */
typedef struct mh_apost_chk mh_apost_chk;
int mh_apost_fsck_begin(mh_apost_chk **out, const mh_seg *seg); /* MH_ENOMEM */
void mh_apost_fsck_slice(mh_apost_chk *c, uint64_t *trip, size_t m);
int mh_apost_fsck_end(mh_apost_chk *c, int rows_ok, mh_diag *d);

/* ---- piece sums (psum_build.c, psum_read.c; SPEC.md §9f) ------------ */
typedef struct mh_psum_input {
    uint32_t type;       /* a covered section, types increasing */
    const uint8_t *p;
    uint64_t size;
} mh_psum_input;
/* Appends section 12's bytes covering in[0..n) at pieces of 2^shift bytes
 * to out. MH_OK or MH_ENOMEM. */
int mh_psum_serialize(uint32_t shift, const mh_psum_input *in, size_t n,
                      mh_buf *out);
/* Section 12 of a segment, parsed and checked (sum, structure, every
 * covered type a section of the directory), with one bit per piece: set
 * once its bytes matched their sum. Published once per segment
 * (seg->psum); freed with it. */
typedef struct mh_psum_tab {
    uint32_t shift;
    uint64_t sec_off;             /* section 12's file offset, for details */
    const uint8_t *sums;          /* the u64 sums, in place */
    uint64_t nsums;
    uint64_t first[16], count[16]; /* per covered type < 16; count 0: none */
    const mh_section *sec[16];    /* the covered sections */
    _Atomic uint64_t *done;       /* ceil(nsums / 64) words */
} mh_psum_tab;
/* Whether bytes [rel, rel + n) of section `type` can be checked by piece
 * sums: 1 yes, and the pieces they meet are checked now (once per open
 * segment); 0 no (no section 12, it does not cover the type, it failed
 * its own checks, or memory was short: the caller checks the section
 * whole, as a 2.3 reader does); < 0 MH_ECHECKSUM: a piece's bytes differ
 * from its sum, with detail "<what> at byte N: piece J ... checksum
 * mismatch ...". `what` names the section in the detail. */
int mh_psum_check(const mh_seg *seg, uint32_t type, uint64_t rel, uint64_t n,
                  const char *what, mh_diag *d);
/* A lazy reader's first check of a structure at byte rel of section
 * `type` (p: its first byte, avail bytes to the section's end): the
 * pieces of its head bytes, then of the head and the table after it (the
 * u32s at count_off and size_off of the head, multiplied; clamped to
 * avail: a table that does not fit is the parser's to report).
 * mh_psum_check's codes. */
int mh_psum_check_table(const mh_seg *seg, uint32_t type, uint64_t rel, const uint8_t *p,
                        uint64_t avail, uint32_t head, uint32_t count_off,
                        uint32_t size_off, const char *what, mh_diag *d);
/* Whether bytes [rel, rel + n) of section `type` lie in pieces already
 * checked (their bits set): the inline test a lazy view takes before a
 * record read, so that the common case costs a bit or two and no call. 0
 * (not known: call mh_psum_check) when t is NULL, n is 0, or the bytes are
 * outside the type's pieces. */
static inline int mh_psum_known(const mh_psum_tab *t, uint32_t type, uint64_t rel,
                                uint64_t n) {
    if (!t || type >= 16 || n == 0 || rel > UINT64_MAX - n)
        return 0;
    uint64_t j0 = rel >> t->shift, j1 = (rel + n - 1) >> t->shift;
    if (j1 >= t->count[type])
        return 0;
    for (uint64_t k = t->first[type] + j0; k <= t->first[type] + j1; k++)
        if (!(atomic_load_explicit(&t->done[k >> 6], memory_order_acquire) >> (k & 63) & 1u))
            return 0;
    return 1;
}
/* fsck: section 12's sum and structure, and every piece of every covered
 * section against its sum. The first problem; MH_OK when there is none. */
int mh_psum_fsck(const mh_seg *seg, mh_diag *d);
/* Parses section 12 (size bytes at p, base_off its file offset) against
 * the segment's directory into out (done not allocated). MH_ECORRUPT with
 * detail "piece sums at byte N: ...". */
int mh_psum_parse(const mh_seg *seg, const uint8_t *p, uint64_t size,
                  uint64_t base_off, mh_psum_tab *out, mh_diag *d);

#endif /* MH_INTERNAL_H */
