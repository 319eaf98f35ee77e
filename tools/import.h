/*
 * import.h - trace parsers that turn foreign trace formats into mh_access
 * batches: valgrind lackey text, CSV, and the legacy SQLite schema.
 *
 * The parsers are push parsers: the caller feeds bytes in chunks of any size
 * (a pipe, a file read loop, a fuzzer's input) and the parser hands validated
 * accesses to a sink callback in batches of MH_IMPORT_BATCH. Every access a
 * parser emits already satisfies mh_writer_append_batch()'s checks (size >= 1,
 * no wrapping range, transitions non-decreasing), so a writer error from the
 * sink is an I/O problem, never a validation one.
 *
 * Errors: functions return 0 or a negative MH_E* code. A parse error returns
 * MH_ECORRUPT and leaves a one-line message naming the 1-based line number
 * (or SQLite rowid) in mh_import_error(); an error returned by the sink is
 * passed through unchanged. After an error a parser accepts nothing but
 * free. The parsers are not thread-safe: one thread per parser.
 *
 * Library: mh_import (static), used by the memhist CLI and the fuzz targets.
 */
#ifndef MH_IMPORT_H
#define MH_IMPORT_H

#include <stddef.h>
#include <stdint.h>
#include "memhist.h"

#define MH_IMPORT_BATCH 4096u /* accesses handed to the sink at once */

/* Receives n >= 1 validated accesses. Returns 0 to continue or a negative
 * MH_E* code to stop the parser (it is returned by feed/finish). */
typedef int (*mh_import_sink_fn)(void *ctx, const mh_access *batch, size_t n);

/* Flags shared by the parsers. */
#define MH_IMPORT_EXEC 1u /* lackey: store each I line as an execute access */

/* A sink that appends to an mh_writer with mh_writer_append_batch(); ctx is
 * the mh_writer *. */
int mh_import_writer_sink(void *ctx, const mh_access *batch, size_t n);

/* ---- valgrind lackey (--tool=lackey --trace-mem=yes) ---------------------
 * Line grammar (one record per line, '\n' ends a line, a trailing '\r' is
 * tolerated):
 *   "==..."            valgrind commentary, ignored
 *   "--<digits>--..."  valgrind warnings (e.g. unhandled syscalls), ignored
 *   "I  ADDR,SIZE"     an instruction: the k-th one (0-based) starts
 *                      transition k; stored as an execute access only with
 *                      MH_IMPORT_EXEC
 *   " L ADDR,SIZE"     read      at the current transition
 *   " S ADDR,SIZE"     write     at the current transition
 *   " M ADDR,SIZE"     read, then write of the same bytes
 * ADDR is hexadecimal (no 0x), SIZE decimal >= 1; linear = physical = ADDR;
 * pc = the ADDR of the last I line (an execute access's own address).
 * Accesses before the first I line get transition 0 and no pc. Anything else, a size
 * of 0 or a range that wraps past 2^64 is an error naming the line. */
typedef struct mh_lackey_parser mh_lackey_parser;

/* Returns NULL when out of memory. */
mh_lackey_parser *mh_lackey_new(unsigned flags, mh_import_sink_fn fn, void *ctx);
/* Hands accesses to the sink in batches of at most n (1 .. MH_IMPORT_BATCH,
 * the default): a caller that commits every N accesses sets n <= N so a
 * later parse error does not hold back accesses it should have committed. */
void mh_lackey_set_batch(mh_lackey_parser *p, size_t n);
/* Parses len bytes; a line may be split across calls anywhere. */
int mh_lackey_feed(mh_lackey_parser *p, const char *buf, size_t len);
/* Parses a last line without '\n' and flushes the pending batch. */
int mh_lackey_finish(mh_lackey_parser *p);
/* Message of the last error ("" when none); owned by p. */
const char *mh_lackey_error(const mh_lackey_parser *p);
/* Drops an unfinished last line (no '\n' yet): what a tracer killed in the
 * middle of a write leaves. Call before mh_lackey_finish. */
void mh_lackey_drop_partial(mh_lackey_parser *p);
/* Accesses handed to the sink so far; lines read so far. */
uint64_t mh_lackey_accesses(const mh_lackey_parser *p);
uint64_t mh_lackey_lines(const mh_lackey_parser *p);
/* NULL accepted. */
void mh_lackey_free(mh_lackey_parser *p);

/* ---- CSV --------------------------------------------------------------
 * First line "transition,linear,physical,size,op", optionally followed by
 * any of ",stream", ",pc", ",window" (any order, each at most once); then
 * one access per line with those fields: numbers decimal or 0x/0X
 * hexadecimal, linear may be empty (absent), op one of r, w, x, stream a
 * stream id <= MH_STREAM_MAX (the column absent: 0), pc may be empty
 * (absent), window empty (in no window) or a window id. Transitions must
 * not decrease; window ids must increase from one window to the next (a
 * window that ended cannot resume). A trailing '\r' on a line is
 * tolerated; an empty file (no header) is an error. */
typedef struct mh_csv_parser mh_csv_parser;

/* Called when the window column changes, after the accesses before the
 * change were handed to the sink: in_window 1 starts window `window`
 * (ending the current one), 0 ends the current one. Returns 0 or an MH_E*
 * code, which stops the parser. */
typedef int (*mh_import_window_fn)(void *ctx, int in_window, uint64_t window);

mh_csv_parser *mh_csv_new(unsigned flags, mh_import_sink_fn fn, void *ctx);
void mh_csv_set_batch(mh_csv_parser *p, size_t n);
/* Sets the window callback (ctx is the sink's); NULL: changes are checked
 * but not reported. */
void mh_csv_set_window_fn(mh_csv_parser *p, mh_import_window_fn fn);
/* Whether the header has the optional column name ("stream", "pc",
 * "window"); 0 before the header is parsed. */
int mh_csv_has_column(const mh_csv_parser *p, const char *name);
int mh_csv_feed(mh_csv_parser *p, const char *buf, size_t len);
int mh_csv_finish(mh_csv_parser *p);
const char *mh_csv_error(const mh_csv_parser *p);
uint64_t mh_csv_accesses(const mh_csv_parser *p);
uint64_t mh_csv_lines(const mh_csv_parser *p);
void mh_csv_free(mh_csv_parser *p);

/* The CSV header, also written by `memhist export --format csv`. */
#define MH_CSV_HEADER "transition,linear,physical,size,op"

/* ---- stream descriptions (memhist import --streams FILE) -----------------
 * A header naming the columns: id, then any of kind, name, pid, tid, cpu,
 * parent (any order, each at most once); then one stream per line: id
 * 0 .. MH_STREAM_MAX (each once), kind other/thread/cpu/process, name any
 * bytes but ',' and NUL (UTF-8 is the caller's to ensure), pid/tid/cpu
 * numbers (decimal or 0x hex), parent another stream's id; an empty field
 * (or an absent column) is unknown: kind other, no name, none. A trailing
 * '\r' is tolerated, empty lines are skipped. Fills *out with *n
 * descriptions (names malloc'd; mh_streams_free) in file order. Errors:
 * MH_ECORRUPT with "line N: what: 'text'" in err, MH_ENOMEM. */
int mh_streams_parse(const char *buf, size_t len, mh_stream_info **out, size_t *n,
                     char *err, size_t errlen);
void mh_streams_free(mh_stream_info *s, size_t n);

/* ---- legacy SQLite schema (only with MH_WITH_SQLITE) ---------------------
 *   slices(transition_first, transition_last)
 *   chunks(slice_id, phy_first, phy_last, operation)
 *   accesses(chunk_id, transition, linear, phy_first, size, operation)
 * operation bits: execute = 1, write = 2, read = 4 (exactly one per access);
 * linear NULL = absent; 64-bit values are stored as SQLite's signed int8 and
 * read back as the same bit pattern. Accesses are read in rowid order.
 * Errors: MH_ENOENT (no such file), MH_ENOTSTORE (not an SQLite database or
 * not the legacy schema), MH_ECORRUPT (bad row; message names the rowid),
 * MH_EIO, MH_ENOMEM, or the sink's error. errbuf gets a one-line message. */
#define MH_LEGACY_SCHEMA_SQL                                                   \
    "create table slices(transition_first int8 not null, transition_last int8 not null);\n" \
    "create table chunks(slice_id int8 not null, phy_first int8 not null, "   \
    "phy_last int8 not null, operation int not null);\n"                       \
    "create table accesses(chunk_id int8 not null, transition int8 not null, " \
    "linear int8, phy_first int8 not null, size int not null, operation int not null);\n"
/* The indexes tools written for the legacy layout rely on; export creates
 * them after loading the rows (faster than maintaining them row by row). */
#define MH_LEGACY_INDEX_SQL                                                    \
    "create index slices_transition_last on slices(transition_last);\n"        \
    "create index chunks_operation_slice_phy on chunks(operation, slice_id, phy_last);\n" \
    "create index accesses_chunk_transition on accesses(chunk_id, transition);\n"

#define MH_LEGACY_EXEC_BIT 1
#define MH_LEGACY_WRITE_BIT 2
#define MH_LEGACY_READ_BIT 4

typedef struct mh_sqlite_source mh_sqlite_source;

/* Opens db_path read-only and checks the schema (the three tables with
 * their columns), without reading any access. Returns NULL with *rc and a
 * one-line message in errbuf on failure. */
mh_sqlite_source *mh_sqlite_open(const char *db_path, int *rc, char *errbuf,
                                 size_t errlen);
/* Reads every access in rowid order into fn in batches. Errors as above;
 * errbuf names the rowid of a bad row. */
void mh_sqlite_set_batch(mh_sqlite_source *src, size_t n);
int mh_sqlite_run(mh_sqlite_source *src, mh_import_sink_fn fn, void *ctx,
                  char *errbuf, size_t errlen);
/* NULL accepted. */
void mh_sqlite_close(mh_sqlite_source *src);

/* Legacy operation bit of op, 0 when unknown; and back (-1 when unknown). */
int mh_legacy_op_bit(unsigned op);
int mh_legacy_op_from_bit(int64_t bit);

#endif /* MH_IMPORT_H */
