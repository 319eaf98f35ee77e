/*
 * memhist.h - the complete memory-access history of a traced program,
 * stored in compact files and queried in microseconds.
 *
 * OVERVIEW
 *   A store is a directory: segment files (seg-<seq>.mhs), a MANIFEST that
 *   lists the committed ones, and a LOCK file. SPEC.md gives every byte.
 *
 *   An access is one memory operation of the traced program:
 *     id          0-based order of appearance, assigned by the writer,
 *                 global across segments;
 *     transition  instruction counter, non-decreasing in id order;
 *     linear      virtual address, or absent (has_linear == 0);
 *     physical    physical address;
 *     size        >= 1 bytes, physical + size - 1 must not wrap;
 *     op          MH_OP_READ, MH_OP_WRITE or MH_OP_EXEC.
 *
 *   The half-axis query returns the first N accesses, going forward or
 *   backward from a transition or from an access id, whose operation is in a
 *   set and whose bytes [physical, physical + size - 1] overlap [A, B]:
 *     forward from T:   transition >= T, ascending id;
 *     backward from T:  transition <= T, descending id;
 *     forward after X:  id > X, ascending id;
 *     backward before X: id < X, descending id.
 *   Resuming with the id of the last access returned gives exactly the
 *   continuation, with no duplicate and no gap.
 *
 * ROLES AND THREADS
 *   mh_writer: one per store at a time (enforced with flock on LOCK); use it
 *   from one thread. mh_reader: immutable once opened; any number of threads
 *   may query one reader at once. mh_cursor: one thread at a time. Readers
 *   and a writer may run at once, in one process or many: a reader sees the
 *   committed prefix that existed when it was opened; open a new reader to
 *   see more.
 *
 * SAFETY PROMISE
 *   Every byte read from disk is untrusted. Opening and querying a damaged,
 *   truncated or hostile store returns an error code (MH_ECORRUPT,
 *   MH_ECHECKSUM, MH_ETRUNCATED, MH_EVERSION, MH_ENOTSTORE) and never reads
 *   outside the files, never crashes and never returns accesses from a block
 *   whose checksum fails.
 *
 * ERRORS
 *   Functions return 0 (MH_OK) or a negative MH_E* code; mh_strerror() names
 *   it. After MH_EIO and MH_ENOSPC, errno holds the operating system's reason.
 *
 * STRUCTS THAT GROW (the ABI rules; MH_ABI_VERSION changes only if broken)
 *   - Reserved fields and bytes, in every struct passed in, must be 0:
 *     anything else is refused with MH_EINVAL, never ignored, so a later
 *     version can give them a meaning without old callers tripping on it.
 *   - Input structs (mh_query, mh_writer_options) begin with
 *     uint32_t struct_size = sizeof as the caller compiled it; the init
 *     functions set it. The library, through one check, refuses
 *     struct_size smaller than the struct's first published size
 *     (MH_EINVAL); accepts a larger one (a caller built against a newer
 *     header) only when every byte past its own sizeof is 0, else MH_EINVAL
 *     (the caller asks for a feature this library lacks); and gives the
 *     fields a shorter struct did not send their defaults.
 *   - Output structs (mh_stats, mh_segment_info, mh_slice_info,
 *     mh_chunk_info, mh_column_info, mh_verify_result) begin with
 *     uint32_t struct_size, set by the caller:
 *         mh_stats st = { .struct_size = sizeof st };
 *     The library writes min(struct_size, its sizeof) bytes (struct_size
 *     included, left as the caller set it) and refuses a struct_size below
 *     the first published size with MH_EINVAL, writing nothing. Bytes past
 *     its sizeof are not touched: with the initializer above, fields an
 *     older library does not know read 0.
 *   - mh_problem is filled by the library and handed to callbacks: its
 *     struct_size says how many bytes of it are valid.
 *   - mh_access is fixed at 56 bytes; fields a format cannot store (stream,
 *     pc) are refused on append when set, never dropped.
 *   - mh_version_number()/mh_version_string() give the library's own
 *     version, to compare with the header's MH_VERSION_NUMBER at run time.
 *
 * CAVEATS
 *   - Strings returned by a reader point into memory owned by the reader:
 *     valid until mh_reader_close(), never to be written through.
 *   - Every commit seals the segment being written: commit at a rate that
 *     keeps segments large (the writer options do it for you).
 *   - The files are little-endian on every host.
 */
#ifndef MEMHIST_H
#define MEMHIST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MH_API marks the public functions: the shared library exports them and
 * nothing else (it is built with -fvisibility=hidden). */
#if defined(_WIN32)
#define MH_API
#elif defined(__GNUC__) && __GNUC__ >= 4
#define MH_API __attribute__((visibility("default")))
#else
#define MH_API
#endif

/* Version of this library (API), semantic: a minor adds, never breaks. */
#define MH_VERSION_MAJOR 1
#define MH_VERSION_MINOR 13
#define MH_VERSION_PATCH 11
#define MH_VERSION_NUMBER                                                      \
    (MH_VERSION_MAJOR * 10000 + MH_VERSION_MINOR * 100 + MH_VERSION_PATCH)
#define MH_VERSION_STRING "1.13.11"
/* Binary interface version: the shared library's SONAME (libmemhist.so.1). */
#define MH_ABI_VERSION 1
/* Format version written by this library; see SPEC.md "Versions". Stores
 * of format 1.0 are read too (never appended to: memhist upgrade). */
#define MH_FORMAT_MAJOR 2
#define MH_FORMAT_MINOR 8

/* ------------------------------------------------------------------------
 * Errors: one list, expanded into the enum and mh_strerror()'s table.
 * ---------------------------------------------------------------------- */
#define MH_ERROR_LIST(X)                                                       \
    X(MH_OK, 0, "success")                                                     \
    X(MH_EIO, -1, "input/output error")                                        \
    X(MH_ENOMEM, -2, "out of memory")                                          \
    X(MH_EINVAL, -3, "invalid argument")                                       \
    X(MH_ENOTSTORE, -4, "not a memhist store or file")                         \
    X(MH_EVERSION, -5, "unsupported format version, feature or byte order")    \
    X(MH_ECORRUPT, -6, "corrupt data")                                         \
    X(MH_ECHECKSUM, -7, "checksum mismatch")                                   \
    X(MH_ETRUNCATED, -8, "truncated file")                                     \
    X(MH_ELOCKED, -9, "store is locked by another writer")                     \
    X(MH_EEXIST, -10, "store already exists")                                  \
    X(MH_ENOENT, -11, "no such store")                                         \
    X(MH_ECOMMITTED, -12, "accesses to discard are already committed")         \
    X(MH_EORDER, -13, "out of order (transition or window id decreases)")      \
    X(MH_ENOSPC, -14, "no space left or file size limit reached")              \
    X(MH_ESTATE, -15, "writer failed earlier; only close or abandon are allowed") \
    X(MH_ENOSTREAM, -16, "stream not declared")                                \
    X(MH_ELATE, -17, "access older than the merge's reorder window allows")     \
    X(MH_ENOTFOUND, -18, "no such stream or window in the store")

enum mh_error {
#define MH_ERROR_ENUM_(name, value, text) name = value,
    MH_ERROR_LIST(MH_ERROR_ENUM_)
#undef MH_ERROR_ENUM_
};

/* Version of the library actually linked (MH_VERSION_NUMBER and
 * MH_VERSION_STRING as it was built), which may differ from the header a
 * program was compiled with. */
MH_API unsigned mh_version_number(void);
MH_API const char *mh_version_string(void);

/* Returns a static, never NULL, English description of code (unknown codes
 * give "unknown error"). */
MH_API const char *mh_strerror(int code);
/* Returns the symbolic name ("MH_ECORRUPT"), or "MH_UNKNOWN". */
MH_API const char *mh_error_name(int code);

/* ------------------------------------------------------------------------
 * Accesses
 * ---------------------------------------------------------------------- */
enum mh_op { MH_OP_READ = 0, MH_OP_WRITE = 1, MH_OP_EXEC = 2 };
#define MH_OP_COUNT 3
/* Operation sets are bit masks: bit (1 << op). */
#define MH_OPS_READ (1u << MH_OP_READ)
#define MH_OPS_WRITE (1u << MH_OP_WRITE)
#define MH_OPS_EXEC (1u << MH_OP_EXEC)
#define MH_OPS_RW (MH_OPS_READ | MH_OPS_WRITE)
#define MH_OPS_ALL (MH_OPS_READ | MH_OPS_WRITE | MH_OPS_EXEC)

/* 56 bytes, no padding, the same on every 64- and 32-bit ABI of C11.
 * stream: the stream (thread, CPU, process) the access belongs to; stream 0
 * exists in every store, any other must be declared before its first access
 * (mh_writer_stream_declare; else MH_ENOSTREAM). pc: the address of the
 * instruction that made the access, when has_pc. Queries on format 1.0
 * stores return stream 0 and has_pc 0. Append refuses non-zero reserved
 * bytes (MH_EINVAL). */
typedef struct mh_access {
    uint64_t id;          /* ignored on append; set by queries */
    uint64_t transition;
    uint64_t linear;      /* meaningful only when has_linear */
    uint64_t physical;
    uint64_t pc;          /* instruction address; meaningful only when has_pc */
    uint32_t size;        /* >= 1 */
    uint32_t stream;      /* stream id; always 0 in format 1.x stores */
    uint8_t op;           /* enum mh_op */
    uint8_t has_linear;   /* 0 or 1 */
    uint8_t has_pc;       /* 0 or 1; format 1.x stores have no pc column: must be 0 */
    uint8_t reserved[5];  /* must be 0 */
} mh_access;

/* Name of an operation ("read", "write", "execute"), NULL when unknown. */
MH_API const char *mh_op_name(unsigned op);

/* ------------------------------------------------------------------------
 * Writer
 * ---------------------------------------------------------------------- */
typedef struct mh_writer mh_writer;

/* Input struct (see STRUCTS THAT GROW): set struct_size with
 * mh_writer_options_init(). First published size (LP64): 40 bytes. */
typedef struct mh_writer_options {
    uint32_t struct_size; /* sizeof(mh_writer_options) as compiled */
    /* A slice closes at the first new transition once it holds this many
     * accesses (default 32768); it is cut inside a transition only at twice
     * this number. Smaller slices: faster point queries, more index. */
    uint32_t slice_accesses;
    /* Rows per compressed block (default 512; 64 .. 65536). Smaller blocks:
     * less decoding per query, slightly larger files. */
    uint32_t block_accesses;
    /* Average accesses per chunk the writer aims at at least (default 128):
     * nearby chunks are merged across gaps until a slice has at most
     * accesses / chunk_min_accesses chunks per operation, with room kept
     * for the cut of chunks over 2 x block_accesses rows into pieces at
     * addresses no access straddles (SPEC.md 5.4). Smaller: narrower
     * chunks, so fewer rows decoded by queries on small ranges, and a larger
     * chunk array (56 bytes per chunk); 128 against 256 costs about 0.25
     * bytes per access and makes 8-byte queries several times faster. */
    uint32_t chunk_min_accesses;
    /* LZ4 acceleration (default 1; higher is faster and larger). */
    int32_t lz4_acceleration;
    /* Commit automatically once this many accesses are pending
     * (default 1 << 24; 0 = only on mh_writer_commit() and close). With
     * background threads the segment is sealed by a thread of its own
     * while appends go on: its failure is returned by a later call, and
     * mh_writer_commit, close, discard_from and mh_writer_committed wait
     * for it. */
    uint64_t commit_accesses;
    /* Number of background threads that build and write slices while the
     * producer keeps appending (default 2; 0 = build in the appending
     * thread; at most 8). Slices are still written in order. */
    int32_t background;
    int32_t reserved;     /* must be 0 */
    /* --- since 1.2 --- */
    /* Multi-producer merge (mh_producer_*): how far, in transitions, the
     * merge may run ahead of a producer that has not appended lately. An
     * access whose transition is below (newest transition seen from any
     * producer) - reorder_window when it arrives may already be overtaken:
     * it is refused with MH_ELATE. Default 1 << 20; 0 = wait for every
     * open producer (no access is ever late, an idle producer holds the
     * merge back). */
    uint64_t reorder_window;
    /* --- since 1.3 --- */
    /* Write each segment's id map (format 2.1, SPEC.md "Id map"): per
     * access, the chunk holding it, about 0.2 bytes per access, so that
     * queries over wide address ranges wanting few rows walk a slice in id
     * order instead of decoding a block per chunk. Since 1.9 it brings the
     * id transitions (format 2.5, SPEC.md §9g: the transition of every
     * access, about 0.4-0.53 bytes per access on real traces), which place
     * such a query's start moment among the ids without decoding blocks.
     * Default 1; 0 = neither (the segments are still 2.5; queries take the
     * 2.0 path). 0 or 1. */
    uint32_t id_map;
    uint32_t reserved2;   /* must be 0 */
    /* --- since 1.4 --- */
    /* Write each segment's address postings (format 2.2, SPEC.md "Address
     * postings"): for each word-sized granule and operation, the slices
     * touching it, about 0.2 bytes per access on real programs, so that a
     * query on a narrow range (a few words) walks only the slices that hold
     * its addresses. A slice's range of 64 KiB or more (accesses of
     * gigabytes) is listed as one wide range beside them (format 2.6,
     * section 14), so that it does not cost the segment its postings. A
     * segment whose accesses are of 2 to 1024 streams also gets, per
     * stream, the postings of that stream's accesses alone at 4 KiB
     * granules (format 2.7, SPEC.md §9d.2), so that a query with a stream
     * set of at most 64 walks only the slices where its streams touched
     * the range, and (format 2.8, SPEC.md §9d.3) each stream's runs of
     * consecutive ids, so that such a question walked in id order goes
     * from one of its streams' runs to the next. Default 1; 0 = none
     * (queries use the address summaries as in 2.1). 0 or 1. */
    uint32_t address_postings;
    uint32_t reserved3;   /* must be 0 */
    /* --- since 1.6 --- */
    /* Write the span address sets (format 2.3, SPEC.md §9e): the segment
     * at MANIFEST position k with L = k & -k >= 2 carries the union of the
     * address sets of the L segments ending at it, so that a query on a
     * range of addresses passes runs of segments that never touched it in
     * O(log segments) checks. Since 1.13, in a store that declares two
     * streams or more, the same segments also carry each stream's 4 KiB
     * pages per op in their L segments (format 2.8, SPEC.md §9e.1), so
     * that a query with a stream set of at most 64 passes runs of
     * segments where none of its streams touched the range. Default 1;
     * 0 = none (queries ask each segment's address set as in 2.2). 0 or 1. */
    uint32_t span_sets;
    uint32_t reserved4;   /* must be 0 */
} mh_writer_options;

/* Fills *opt with the defaults above, struct_size = sizeof *opt and zeroed
 * reserved fields. mh_writer_options_init is a macro passing the caller's
 * sizeof to mh_writer_options_init_size, which writes exactly `size` bytes
 * (the library's defaults for the fields it knows, zeros past them;
 * nothing when size is below the first published size): a program built
 * against an older header never gets bytes written past its struct. (The
 * exported function mh_writer_options_init, called by programs built
 * against 1.1 or 1.2 headers, writes the first published 40 bytes only,
 * with struct_size 40: the fields those callers may set later are then
 * taken at their defaults.) Since 1.3. */
MH_API void mh_writer_options_init_size(mh_writer_options *opt, size_t size);
MH_API void mh_writer_options_init(mh_writer_options *opt);
#define mh_writer_options_init(opt) mh_writer_options_init_size((opt), sizeof *(opt))

#define MH_CREATE 1u /* create the store; MH_EEXIST if it exists */
#define MH_APPEND 2u /* open an existing store and append; MH_ENOENT if absent */

/* Opens a writer on directory path with flags MH_CREATE or MH_APPEND (one of
 * them; both = create when absent). opt may be NULL for the defaults.
 * Errors: MH_EINVAL (bad flags or options, bad struct_size, non-zero
 * reserved field or tail byte), MH_EEXIST, MH_ENOENT,
 * MH_ELOCKED (another writer holds the store), MH_ENOTSTORE, MH_EVERSION,
 * MH_ECORRUPT, MH_ECHECKSUM, MH_ETRUNCATED (on append), MH_EIO, MH_ENOMEM.
 * On success *out owns the lock until mh_writer_close/abandon. */
MH_API int mh_writer_open(const char *path, unsigned flags,
                   const mh_writer_options *opt, mh_writer **out);

/* Sets a metadata key/value (UTF-8, NUL-terminated, key non-empty, each at
 * most 65535 bytes); an existing key is replaced. Saved with the next
 * commit. Errors: MH_EINVAL, MH_ENOMEM, MH_ESTATE. */
MH_API int mh_writer_set_meta(mh_writer *w, const char *key, const char *value);

/* Appends one access (a->id is ignored; pc too when has_pc is 0). Errors:
 * MH_EINVAL (size 0, range wraps, unknown op, has_linear not 0/1, has_pc or
 * stream not 0 -- format 1.x cannot store them -- or a reserved byte not
 * 0), MH_EORDER (transition smaller than the previous one), MH_ESTATE, and
 * any error of an automatic commit (with background threads, of one made
 * by an earlier call). A rejected access changes nothing. */
MH_API int mh_writer_append(mh_writer *w, const mh_access *a);

/* Appends n accesses in order: the path high-throughput tracers use.
 * Validates all n before taking any: on error nothing of the batch is
 * appended and *bad (if not NULL) is the index of the first bad access. */
MH_API int mh_writer_append_batch(mh_writer *w, const mh_access *a, size_t n,
                           size_t *bad);

/* ---- streams (since 1.2) ---- */
enum mh_stream_kind {
    MH_STREAM_OTHER = 0,
    MH_STREAM_THREAD = 1,
    MH_STREAM_CPU = 2,
    MH_STREAM_PROCESS = 3
};
#define MH_NONE32 UINT32_C(0xFFFFFFFF) /* "unknown" for u32 stream fields */
#define MH_NONE64 UINT64_MAX           /* "unknown" for u64 stream fields */
#define MH_STREAM_MAX 65535u           /* largest stream id */

/* In/out struct (see STRUCTS THAT GROW; mh_stream_info_init sets it up).
 * First published size (LP64): 72 bytes. */
typedef struct mh_stream_info {
    uint32_t struct_size;
    uint32_t id;          /* 0 .. MH_STREAM_MAX */
    uint32_t kind;        /* enum mh_stream_kind */
    uint32_t parent;      /* id of the parent stream, or MH_NONE32 */
    uint64_t pid;         /* process id, or MH_NONE64 */
    uint64_t tid;         /* thread id, or MH_NONE64 */
    uint32_t cpu;         /* CPU / vCPU index, or MH_NONE32 */
    uint32_t reserved;    /* must be 0 */
    const char *name;     /* UTF-8, at most 65535 bytes, or NULL; declare
                             copies it; a reader's is owned by the reader */
    /* output of the reader; must be 0 on declare */
    uint64_t accesses;                         /* in the whole store */
    uint64_t transition_first, transition_last; /* 0 when accesses == 0 */
} mh_stream_info;

/* Sets struct_size, id 0, kind MH_STREAM_OTHER, parent/pid/tid/cpu unknown,
 * name NULL, the rest 0. NULL accepted. */
MH_API void mh_stream_info_init(mh_stream_info *s);

/* Declares stream s->id, or replaces the description of a declared one
 * (saved with the next commit; the newest description wins). Stream 0 is
 * declared implicitly (kind other, no name). Errors: MH_EINVAL (id above
 * MH_STREAM_MAX, unknown kind, bad struct_size, reserved or output field
 * not 0, name too long), MH_ENOMEM, MH_ESTATE. */
MH_API int mh_writer_stream_declare(mh_writer *w, const mh_stream_info *s);

/* Sets a free key/value of a declared stream (what ovni keeps in
 * stream.json), like mh_writer_set_meta. Errors: MH_ENOSTREAM, MH_EINVAL,
 * MH_ENOMEM, MH_ESTATE. */
MH_API int mh_writer_stream_set_meta(mh_writer *w, uint32_t stream,
                                     const char *key, const char *value);

/* ---- several producers (since 1.2) ----
 * A multi-threaded tracer gives each of its threads a producer bound to one
 * declared stream. Producers append at the same time, each from its own
 * thread, sharing nothing on the hot path; the writer merges them into one
 * id order by transition (ties: lower stream id first, then append order),
 * waiting for a producer that lags at most reorder_window transitions
 * behind the newest one (mh_writer_options). While producers are open,
 * mh_writer_append/_batch/window_* return MH_ESTATE; commit, set_meta and
 * stream_declare stay allowed from the writer's thread (a commit takes what
 * the merge has settled). Close every producer before mh_writer_close. */
typedef struct mh_producer mh_producer;

/* Opens a producer for declared stream `stream` (at most one per stream).
 * Errors: MH_ENOSTREAM, MH_EINVAL (stream already has a producer),
 * MH_ENOMEM, MH_ESTATE. */
MH_API int mh_producer_open(mh_writer *w, uint32_t stream, mh_producer **out);

/* Appends n accesses of the producer's stream, transitions non-decreasing
 * within the stream (a->stream is ignored; the producer's stream is used).
 * Like mh_writer_append_batch, a batch is taken whole or not at all; *bad
 * is the index of the first refused access. Errors: MH_EINVAL, MH_EORDER
 * (transition below the stream's previous one), MH_ELATE (below what the
 * merge has already settled: reorder_window exceeded), MH_ESTATE (the
 * writer failed), MH_ENOMEM. A full ring makes the call wait for the merge:
 * one thread driving several producers must not append to one while
 * another of its producers holds the merge back (it would wait forever). */
MH_API int mh_producer_append_batch(mh_producer *p, const mh_access *a,
                                    size_t n, size_t *bad);

/* Ends the producer's stream (the merge no longer waits for it) and frees
 * p. Returns a deferred error of the writer, if any. NULL accepted. */
MH_API int mh_producer_close(mh_producer *p);

/* ---- windows (since 1.2) ----
 * As drmemtrace's -trace_for_instrs / -retrace_every_instrs: the accesses
 * of a store may be grouped into numbered windows; between windows a tracer
 * counts instructions without storing accesses (transitions jump). */

/* Starts window `window` at the next appended access (ending the current
 * one). Window ids strictly increase over the store: MH_EORDER otherwise.
 * MH_ESTATE while producers are open. */
MH_API int mh_writer_window_begin(mh_writer *w, uint64_t window);
/* Ends the current window: the next accesses belong to no window. */
MH_API int mh_writer_window_end(mh_writer *w);

/* Id the next appended access will get. */
MH_API uint64_t mh_writer_next_id(const mh_writer *w);

/* Discards every uncommitted access with transition >= t (the unfinished
 * last transition of a trace). MH_ECOMMITTED if a committed access has
 * transition >= t: nothing is discarded then. Errors: MH_ESTATE, MH_EIO. */
MH_API int mh_writer_discard_from(mh_writer *w, uint64_t t);

/* Makes everything appended so far durable: after a crash the store opens
 * with every committed access and nothing else. A commit with nothing new
 * (no access, no metadata change) does nothing. Errors: MH_EIO, MH_ENOSPC,
 * MH_ENOMEM, MH_ESTATE. After an error the writer is failed (MH_ESTATE for
 * everything but close and abandon); what was committed before stays. */
MH_API int mh_writer_commit(mh_writer *w);

/* Number of accesses committed so far (the store's total). An automatic
 * commit whose seal still runs in the background is waited for: the count
 * is what the store keeps whatever the caller does next. */
MH_API uint64_t mh_writer_committed(const mh_writer *w);

/* Commits, then releases the lock and frees w. Returns the commit's error, if
 * any (w is freed either way). NULL is accepted. */
MH_API int mh_writer_close(mh_writer *w);

/* Releases the lock and frees w without committing: what was not committed
 * is lost, the store keeps what was. NULL is accepted. */
MH_API void mh_writer_abandon(mh_writer *w);

/* ------------------------------------------------------------------------
 * Reader
 * ---------------------------------------------------------------------- */
typedef struct mh_reader mh_reader;

/* Opens the committed content of the store at path. Reads the manifest
 * only: its cost does not grow with the number of segments or accesses. A
 * segment is mapped and its header, dictionary and slice array verified
 * (and checked against its manifest record) the first time a query or an
 * introspection call needs it; a slice's chunk and block records the first
 * time they are used, access blocks when they are decoded. A damaged
 * segment fails every call that needs it, with the same code and detail.
 * Errors: MH_ENOENT, MH_ENOTSTORE, MH_EVERSION, MH_ECORRUPT, MH_ECHECKSUM,
 * MH_ETRUNCATED, MH_EIO, MH_ENOMEM (of the manifest). */
MH_API int mh_reader_open(const char *path, mh_reader **out);

/* Default of mh_reader_set_cache: 16 MiB of decoded blocks (and id-map label
 * groups) per context (8 MiB before 1.9.8, where 100 whole-space max-10
 * questions of the benchmark held about 11 MiB and cycled through it). */
#define MH_READER_CACHE_DEFAULT ((size_t)16 << 20)

/* Sets how many bytes of decoded access blocks each query context keeps
 * between calls (least recently used first out; since 1.13.2, once blocks
 * evicted come back from beyond the cache's reach, as when the same
 * questions whose blocks outgrow it are asked again and again, new blocks
 * are let in on probation, in an eighth of the entries, first out, so
 * that part of the working set stays: memhist(3)), with the decoded id-map
 * label groups of the id-order path (at most an eighth of the bytes) and
 * (since 1.9.3) the raw bytes of the blocks whose rows that path takes one
 * at a time.
 * mh_query_run and each open cursor use one context of r's (made when none
 * is free; up to 8 kept for the next call or cursor: since 1.10.5 a cursor
 * takes one at its open and gives it back at its close, where it made and
 * freed its own). A warm cache is what makes repeated and resumed queries over
 * the same region cheap; 0 keeps the minimum (two blocks). Memory is taken
 * as blocks are decoded, never up front (since 1.10.1, from 1 MiB held on,
 * from an arena of 2 x bytes of address space per context in huge pages,
 * touched as used: memhist(3)). The same bytes bound, for the whole
 * reader, what segments remember: the bits of the pieces, blocks and (since
 * 1.9.2) address-summary entries that passed their checks, and the resume
 * marks of the address-set and
 * postings runs queries decoded (since 1.6; past three quarters of the
 * budget, no more marks: runs decode from their start; since 1.9.1 marks
 * are taken a page of 64 runs at a time, as queries first decode them),
 * and (since 1.10.4) the postings' checked-run flags and the tops of their
 * run searches (about 31 KB a segment of 15 M accesses).
 * Call it before sharing r between
 * threads (it is not thread-safe against running queries); it applies to
 * cursors opened afterwards. Errors: MH_EINVAL (NULL r). */
MH_API int mh_reader_set_cache(mh_reader *r, size_t bytes);

/* Frees r; every pointer obtained from r becomes invalid. NULL accepted.
 * No cursor on r may be used afterwards. */
MH_API void mh_reader_close(mh_reader *r);

/* Output struct (see STRUCTS THAT GROW): set struct_size before the call.
 * First published size (LP64): 112 bytes. */
typedef struct mh_stats {
    uint32_t struct_size;
    uint64_t accesses;
    uint64_t op_counts[MH_OP_COUNT];
    uint64_t transition_first; /* 0 when accesses == 0 */
    uint64_t transition_last;
    uint64_t segments;
    uint64_t slices;
    uint64_t chunks;
    uint64_t blocks;
    uint64_t file_bytes;       /* segment files plus manifest */
    uint64_t compressed_bytes; /* access blocks as stored */
    uint64_t raw_bytes;        /* access blocks before LZ4 */
} mh_stats;

/* Fills *st (min(st->struct_size, sizeof) bytes); the first call opens
 * every segment. Errors: MH_EINVAL (NULL, or st->struct_size below the
 * first published size), and the errors of opening a segment. */
MH_API int mh_reader_stats(const mh_reader *r, mh_stats *st);

/* Metadata of the newest segment (the writer saves all keys in every
 * segment). Index i in [0, mh_reader_meta_count()). Strings are
 * NUL-terminated and owned by r. mh_reader_meta_find returns NULL when
 * the key is absent. */
MH_API size_t mh_reader_meta_count(const mh_reader *r);
MH_API int mh_reader_meta_get(const mh_reader *r, size_t i, const char **key,
                       const char **value);
MH_API const char *mh_reader_meta_find(const mh_reader *r, const char *key);

/* ------------------------------------------------------------------------
 * Queries
 * ---------------------------------------------------------------------- */
enum mh_start { MH_FROM_TRANSITION = 0, MH_FROM_ID = 1 };
enum mh_direction { MH_FORWARD = 0, MH_BACKWARD = 1 };
/* Where a query stops, besides max and the end of the store. */
enum mh_end { MH_END_NONE = 0, MH_END_TRANSITION = 1, MH_END_ID = 2 };

/* Input struct (see STRUCTS THAT GROW): set struct_size with
 * mh_query_init(). First published size (LP64): 56 bytes.
 *
 * The end bound is inclusive: forward, only accesses with transition <= end
 * (MH_END_TRANSITION) or id <= end (MH_END_ID); backward, transition >= end
 * or id >= end. The query stops walking the store at the bound (what lies
 * beyond it is never read), so a bounded query costs what its window holds.
 * An end on the far side of the start gives no access (not an error). */
typedef struct mh_query {
    uint32_t struct_size; /* sizeof(mh_query) as compiled */
    uint32_t start_kind;  /* MH_FROM_TRANSITION: start is T (inclusive);
                             MH_FROM_ID: start is an id X (exclusive) */
    uint32_t direction;   /* MH_FORWARD or MH_BACKWARD */
    uint32_t ops;         /* non-empty subset of MH_OPS_ALL */
    uint64_t start;
    uint64_t addr_first;  /* A, inclusive */
    uint64_t addr_last;   /* B, inclusive; A <= B */
    uint32_t end_kind;    /* MH_END_NONE | MH_END_TRANSITION | MH_END_ID */
    uint32_t reserved;    /* must be 0 */
    uint64_t end;         /* inclusive bound; ignored with MH_END_NONE */
    /* --- since 1.2 --- */
    const uint32_t *streams; /* NULL: every stream; else nstreams stream ids
                                (need not outlive the call; unknown ids
                                match nothing) */
    uint32_t nstreams;       /* 0 with streams == NULL; 1 .. 65536 else */
    uint32_t filter;         /* MH_FILTER_PC | MH_FILTER_WINDOW, or 0 */
    uint64_t pc_first;       /* MH_FILTER_PC: only accesses with a pc in */
    uint64_t pc_last;        /*   [pc_first, pc_last] (none without a pc) */
    uint64_t window;         /* MH_FILTER_WINDOW: only that window's
                                accesses (MH_ENOTFOUND if the store has no
                                such window) */
} mh_query;
#define MH_FILTER_PC 1u
#define MH_FILTER_WINDOW 2u

/* Fills q with: struct_size = sizeof *q, forward from transition 0, the
 * whole address space, reads and writes, no end bound, every stream, no pc
 * or window filter. Like mh_writer_options_init, a macro passing the
 * caller's sizeof to mh_query_init_size (exactly `size` bytes written);
 * the exported mh_query_init, for programs built against older headers,
 * writes the first published 56 bytes with struct_size 56. Since 1.3. */
MH_API void mh_query_init_size(mh_query *q, size_t size);
MH_API void mh_query_init(mh_query *q);
#define mh_query_init(q) mh_query_init_size((q), sizeof *(q))

/* Runs q and writes at most max accesses to out (ascending ids forward,
 * descending backward); *n gets how many. A store with no match gives 0.
 * Errors: MH_EINVAL (A > B, empty or unknown op set, bad kind/direction/
 * end_kind, bad struct_size, non-zero reserved field or tail byte, NULL out
 * with max > 0), MH_ECORRUPT, MH_ECHECKSUM, MH_ENOMEM. Thread-safe
 * on a shared reader. */
MH_API int mh_query_run(const mh_reader *r, const mh_query *q, mh_access *out,
                 size_t max, size_t *n);

typedef struct mh_cursor mh_cursor;

/* Opens an iterator over every match of q, in query order, with no max,
 * up to q's end bound. q is copied: it need not outlive the call.
 * Errors as mh_query_run. The cursor must be closed before r. */
MH_API int mh_cursor_open(const mh_reader *r, const mh_query *q, mh_cursor **out);

/* Writes up to max next matches to out; *n = 0 means the end.
 * Errors as mh_query_run; after an error the cursor stays at the error. */
MH_API int mh_cursor_next(mh_cursor *c, mh_access *out, size_t max, size_t *n);

/* Frees c. NULL accepted. */
MH_API void mh_cursor_close(mh_cursor *c);

/* ------------------------------------------------------------------------
 * Error detail
 *
 * A code says what kind of failure; the detail says what and where, in one
 * line: the file inside the store, then the place (segment file, slice,
 * block, byte offset) and the failed check, with the values that differ,
 * e.g. "seg-0000000000000000.mhs: slice 3, block 12 at byte 40960: block
 * checksum mismatch: stored 0x..., computed 0x...". OS failures name the
 * path and give strerror(errno). The wording is the one fsck (mh_verify)
 * uses for the same check. Each handle keeps the detail of its most recent
 * failed call; a call that succeeds leaves it as it was.
 * ---------------------------------------------------------------------- */

/* Room for any detail line the library makes, NUL included (a line with a
 * very long path in it is cut to fit). */
#define MH_ERRMSG_MAX 512

/* Copy the detail of the most recent failed call on the handle into buf
 * (NUL-terminated, truncated to size), like snprintf: returns the full
 * length (without the NUL); "" (0) when no call failed yet. buf may be NULL
 * when size is 0. A NULL handle gives "".
 *   mh_reader_errmsg: failures of mh_query_run, mh_cursor_open and the
 *     introspection calls on r (mh_reader_segment_info, _slice_info,
 *     _chunk_info). Thread-safe:
 *     threads share r, the detail is kept under a lock, written only on the
 *     error path (a successful query takes no lock for it). With several
 *     threads failing at once, the last one written wins.
 *   mh_writer_errmsg: every call on w (one thread, as w itself). The
 *     failure of mh_writer_close cannot be asked for (w is freed): call
 *     mh_writer_commit first when its detail matters.
 *   mh_cursor_errmsg: mh_cursor_next on c (the cursor keeps its own; the
 *     reader's is not touched by cursor calls). */
MH_API size_t mh_reader_errmsg(const mh_reader *r, char *buf, size_t size);
MH_API size_t mh_writer_errmsg(const mh_writer *w, char *buf, size_t size);
MH_API size_t mh_cursor_errmsg(const mh_cursor *c, char *buf, size_t size);

typedef struct mh_reader_options {
    uint32_t struct_size;  /* sizeof(mh_reader_options); set by mh_reader_options_init */
    uint32_t reserved;     /* 0 */
    uint64_t cache_bytes;  /* decoded-block cache per context (MH_READER_CACHE_DEFAULT);
                            * a quarter of it also bounds the reader's
                            * in-memory address union (SPEC.md §14 step 0) */
} mh_reader_options;

/* Fills *opt with the defaults: struct_size = sizeof *opt, cache_bytes =
 * MH_READER_CACHE_DEFAULT. NULL accepted (does nothing). */
MH_API void mh_reader_options_init(mh_reader_options *opt);

/* Like mh_reader_open with options (NULL: defaults); on failure, when err !=
 * NULL, the detail is written to err (err_size bytes, NUL-terminated,
 * truncated; err_size 0 writes nothing): there is no handle yet to ask.
 * opt->struct_size below 16 (the first published size), a struct_size
 * larger than this library knows with non-zero bytes beyond what it knows,
 * reserved != 0, or cache_bytes above SIZE_MAX: MH_EINVAL. Other errors as
 * mh_reader_open. */
MH_API int mh_reader_open_ex(const char *path, const mh_reader_options *opt,
                             mh_reader **out, char *err, size_t err_size);

/* Like mh_writer_open; on failure, when err != NULL, the detail is written
 * to err as for mh_reader_open_ex. Once open, mh_writer_errmsg gives the
 * detail of later failures. */
MH_API int mh_writer_open_ex(const char *path, unsigned flags,
                             const mh_writer_options *opt, mh_writer **out,
                             char *err, size_t err_size);

/* ------------------------------------------------------------------------
 * Introspection (for inspect, fsck and scripts)
 *
 * mh_segment_info, mh_slice_info, mh_chunk_info and mh_column_info are
 * output structs (see STRUCTS THAT GROW): set struct_size before each call.
 * First published sizes (LP64): 144, 64, 72 and 24 bytes.
 * ---------------------------------------------------------------------- */
typedef struct mh_segment_info {
    uint32_t struct_size;
    uint64_t seq;
    const char *file_name;   /* "seg-0000000000000000.mhs", owned by r */
    uint32_t version_major, version_minor;
    uint64_t id_first, accesses;
    uint64_t op_counts[MH_OP_COUNT];
    uint64_t transition_first, transition_last;
    uint32_t slices, chunks, blocks, rows_per_block;
    uint64_t file_bytes, compressed_bytes, raw_bytes;
    uint64_t dict_bytes, index_bytes;
    /* --- since 1.2 --- */
    uint32_t streams, windows; /* entries in its stream / window tables */
    uint64_t summary_bytes;    /* its address summary section, 0 if none */
    uint32_t has_pc;           /* 1 when its blocks carry the pc column */
    /* --- since 1.3 --- */
    uint64_t idmap_bytes;      /* its id map section (format 2.1), 0 if none */
    /* --- since 1.5 --- (each 0 when the segment has no such section) */
    uint64_t aset_bytes;         /* its address set (format 2.1) */
    uint64_t fine_summary_bytes; /* its fine address summary (format 2.1) */
    uint64_t apost_bytes;        /* its address postings (format 2.2; with
                                    their wide ranges, format 2.6) */
    /* --- since 1.7 --- */
    uint64_t span_bytes;         /* its span address set (format 2.3), 0 if none */
    /* --- since 1.9 --- */
    uint64_t idtime_bytes;       /* its id transitions (format 2.5), 0 if none */
} mh_segment_info;

typedef struct mh_slice_info {
    uint32_t struct_size;
    uint64_t transition_first, transition_last;
    uint64_t id_first;
    uint32_t accesses;
    uint32_t op_counts[MH_OP_COUNT];
    uint32_t chunk_first, chunks; /* index into the segment's chunks */
    uint32_t block_first, blocks;
    /* --- since 1.2 --- */
    uint32_t stream_mask; /* bit (s mod 32) set for each stream s in it */
} mh_slice_info;

typedef struct mh_chunk_info {
    uint32_t struct_size;
    uint64_t phy_first, phy_last;
    uint64_t transition_first, transition_last;
    uint64_t id_first, id_last; /* absolute ids */
    uint32_t row_first, accesses;
    uint8_t op;
    /* --- since 1.2 --- */
    uint32_t stream_mask; /* bit (s mod 32) set for each stream s in it */
} mh_chunk_info;

typedef struct mh_column_info {
    uint32_t struct_size;
    const char *name;    /* owned by r */
    uint8_t type;        /* 1 unsigned integer, 2 enumeration */
    uint8_t width;       /* bytes of the value */
    uint8_t encoding;    /* SPEC.md "Type dictionary" */
    uint8_t nullable;
} mh_column_info;

MH_API size_t mh_reader_segment_count(const mh_reader *r);
/* Errors: MH_EINVAL (index out of range, NULL out, struct_size below the
 * first published size). Records are validated before
 * they are returned: MH_ECORRUPT for a record that breaks an invariant. */
MH_API int mh_reader_segment_info(const mh_reader *r, size_t seg, mh_segment_info *out);
MH_API int mh_reader_slice_info(const mh_reader *r, size_t seg, size_t slice,
                         mh_slice_info *out);
/* chunk indexes the whole segment's chunk array (slice.chunk_first + k). */
MH_API int mh_reader_chunk_info(const mh_reader *r, size_t seg, size_t chunk,
                         mh_chunk_info *out);
/* Dictionary of the newest segment (all segments written by this version
 * carry the same strings, columns and operations). */
MH_API size_t mh_reader_string_count(const mh_reader *r);
MH_API const char *mh_reader_string(const mh_reader *r, size_t i);
MH_API size_t mh_reader_column_count(const mh_reader *r);
MH_API int mh_reader_column(const mh_reader *r, size_t i, mh_column_info *out);
/* Operation name stored in the dictionary, NULL when op is unknown. */
MH_API const char *mh_reader_op_name(const mh_reader *r, unsigned op);

/* Streams of the store (since 1.2), in increasing id order: the newest
 * segment's descriptions, with accesses and transition range over the whole
 * store (computed on the first call: it reads every segment's stream
 * table). A format 1.0 store has one stream, 0. Errors: MH_EINVAL (index
 * out of range, NULL out, struct_size), and the errors of reading a
 * segment. */
MH_API size_t mh_reader_stream_count(const mh_reader *r);
MH_API int mh_reader_stream_info(const mh_reader *r, size_t i,
                                 mh_stream_info *out);
/* Index i of stream id, or MH_ENOTFOUND. */
MH_API int mh_reader_stream_find(const mh_reader *r, uint32_t id, size_t *i);
/* Free key/values of stream index i. */
MH_API size_t mh_reader_stream_meta_count(const mh_reader *r, size_t i);
MH_API int mh_reader_stream_meta_get(const mh_reader *r, size_t i, size_t k,
                                     const char **key, const char **value);

/* Output struct (see STRUCTS THAT GROW). First published size (LP64): 48. */
typedef struct mh_window_info {
    uint32_t struct_size;
    uint64_t window;      /* its id */
    uint64_t id_first;    /* id of its first access (the next id, if none) */
    uint64_t accesses;
    uint64_t transition_first, transition_last; /* 0 when accesses == 0 */
} mh_window_info;

/* Windows of the store (since 1.2), in increasing window id. Errors as
 * mh_reader_stream_info; mh_reader_window_find: MH_ENOTFOUND. */
MH_API size_t mh_reader_window_count(const mh_reader *r);
MH_API int mh_reader_window_info(const mh_reader *r, size_t i,
                                 mh_window_info *out);
MH_API int mh_reader_window_find(const mh_reader *r, uint64_t window,
                                 mh_window_info *out);

/* Output struct: one entry of a segment's section directory (SPEC.md
 * "Section directory"; format 1.0 segments report their fixed sections).
 * First published size (LP64): 48 bytes. */
typedef struct mh_section_info {
    uint32_t struct_size;
    uint32_t type;        /* SPEC.md section type */
    const char *name;     /* "data", "dictionary", ..., "unknown" */
    uint32_t flags;       /* bit 0: required */
    uint32_t records;     /* record count, 0 for unstructured sections */
    uint64_t offset, size;
} mh_section_info;
MH_API size_t mh_reader_section_count(const mh_reader *r, size_t seg);
MH_API int mh_reader_section_info(const mh_reader *r, size_t seg, size_t i,
                                  mh_section_info *out);

/* ------------------------------------------------------------------------
 * Verification and repair (fsck)
 * ---------------------------------------------------------------------- */
/* Filled by the library: struct_size is its sizeof(mh_problem), so a
 * callback compiled against an older header reads only the fields it knows
 * and one compiled against a newer header can tell which ones are valid. */
typedef struct mh_problem {
    uint32_t struct_size;  /* bytes of this struct that are valid */
    int code;              /* MH_E* code of the failed check */
    const char *file;      /* file name inside the store, e.g. "MANIFEST" */
    uint64_t offset;       /* byte offset in that file of what is wrong */
    const char *message;   /* one line, no newline */
} mh_problem;

/* Called once per problem (verify), per action (repair: code MH_OK and a
 * message such as "removed seg-...mhs.tmp") or per note (code MH_OK, since
 * 1.8.1: a span address set written for MANIFEST positions that a repair
 * moved, which queries do not use; not a problem). Pointers valid during
 * the call. */
typedef void (*mh_report_fn)(void *ctx, const mh_problem *p);

/* Output struct (see STRUCTS THAT GROW): set struct_size before the call;
 * checked at entry. First published size (LP64): 48 bytes. */
typedef struct mh_verify_result {
    uint32_t struct_size;
    uint64_t problems;     /* problems found */
    uint64_t accesses;     /* accesses decoded and checked */
    uint64_t bytes;        /* bytes read */
    uint64_t segments;
    uint64_t repaired;     /* actions taken by repair */
    /* since 1.10.0 (56 bytes): the most threads that checked segments at
     * once, the calling thread or the workers (1: the calling thread
     * alone; 0: no segment checked) */
    uint64_t threads;
} mh_verify_result;

#define MH_VERIFY_REPAIR 1u /* remove what a crash leaves behind; rewrite the manifest */
/* Since 1.10.0: or'ed into mh_verify's flags, the number of threads that
 * check the segments, 1 (the calling thread alone) to MH_VERIFY_THREADS_MAX;
 * 0, or no MH_VERIFY_THREADS at all, lets the library choose (below). */
#define MH_VERIFY_THREADS(n) (((unsigned)(n) & 0xffu) << 8)
#define MH_VERIFY_THREADS_MAX 16u

/* Reads every byte of the store at path and checks every checksum and
 * invariant of SPEC.md, reporting each problem through fn (may be NULL).
 * With MH_VERIFY_REPAIR, first removes temporary files, torn segments not
 * listed in a valid manifest, and rebuilds the manifest from the longest
 * chain of segments that verify from id 0; a sealed segment that verifies
 * is never modified or deleted. Returns MH_OK when the store is clean (after
 * repair, if asked), MH_ECORRUPT when problems remain, or MH_EINVAL (path
 * NULL or empty, a flag this library does not know, MH_VERIFY_THREADS above
 * MH_VERIFY_THREADS_MAX, res not NULL with struct_size below its first
 * published size), MH_ENOENT, MH_ELOCKED (repair while a writer runs),
 * MH_EIO, MH_ENOMEM.
 * Threads (since 1.9.11): the segments' own checks run on worker threads:
 * MH_VERIFY_THREADS(n) of them (since 1.10.0), else as many as the
 * processors online (at most 8) for a store of two segments and 32 MiB or
 * more, and the calling thread alone below that. Each worker holds one
 * segment's check buffers (the 10^9-access store of the benchmark: 80 MB
 * peak on one thread, 136 MB on two). fn is called on the calling thread
 * only, with the same problems in the same order as one thread gives;
 * repair's check of the committed segments runs on them too, with the same
 * outcome. (1.9.11 read the count from $MEMHIST_FSCK_THREADS and ignored a
 * value it could not use; since 1.10.0 the library reads no environment
 * variable: `memhist fsck` does, and refuses a bad value.) */
MH_API int mh_verify(const char *path, unsigned flags, mh_report_fn fn, void *ctx,
              mh_verify_result *res);

#ifdef __cplusplus
}
#endif
#endif /* MEMHIST_H */
