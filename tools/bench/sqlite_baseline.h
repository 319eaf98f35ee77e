/*
 * sqlite_baseline.h - the SQLite design memhist replaces, rebuilt faithfully
 * for the side-by-side benchmark (tools/bench/bench.c). Not a product: it
 * exists so that every benchmarked query has a second, independent answer
 * and a fair speed and size reference.
 *
 * Schema (the legacy one, also read by `memhist import --format sqlite`):
 *   slices(transition_first, transition_last)            index (transition_last)
 *   chunks(slice_id, phy_first, phy_last, operation)     index (operation, slice_id, phy_last)
 *   accesses(chunk_id, transition, linear, phy_first, size, operation)
 *                                                        index (chunk_id, transition)
 * operation bits: execute = 1, write = 2, read = 4. An access's rowid is its
 * memhist id (0-based order of appearance), so resuming by id works the same.
 *
 * Writing: accesses are buffered into a slice that closes at the first new
 * transition once it holds slice_accesses (cut inside a transition only at
 * twice that). Per slice and operation, accesses sorted by address are
 * merged into chunks: overlapping ones always (so the chunks of one slice
 * and operation never overlap, which the query's chunk walk relies on), then
 * touching ones while the merged chunk stays within chunk_accesses. One
 * transaction per slice, prepared statements, synchronous=off,
 * journal_mode=memory, temp_store=memory.
 *
 * 64-bit values: SQLite integers are signed. Transitions and addresses
 * (the columns that are compared) are stored as value - 2^63 (top bit
 * flipped), so SQLite's signed order is the unsigned order and the whole
 * 64-bit space works, up to an access ending at 2^64 - 1; linear is stored
 * as the same bit pattern (never compared) and ids as they are.
 */
#ifndef MH_SQLITE_BASELINE_H
#define MH_SQLITE_BASELINE_H

#include <stddef.h>
#include <stdint.h>
#include "memhist.h"

typedef struct mhb_sql_options {
    uint64_t slice_accesses; /* default 10,000,000 */
    uint64_t chunk_accesses; /* default 100,000 (soft cap, see above) */
    int cache_kib;           /* SQLite page cache per connection; default 65536 */
} mhb_sql_options;

void mhb_sql_options_init(mhb_sql_options *opt);

typedef struct mhb_sql_writer mhb_sql_writer;
typedef struct mhb_sql_reader mhb_sql_reader;

/* Creates a new database at path (an existing file is an error: MH_EEXIST).
 * opt may be NULL. Errors: MH_EEXIST, MH_EINVAL, MH_EIO, MH_ENOMEM; on
 * failure *out is NULL and errbuf (may be NULL) gets a one-line message. */
int mhb_sql_writer_open(const char *path, const mhb_sql_options *opt,
                        mhb_sql_writer **out, char *errbuf, size_t errlen);

/* Appends n accesses in order (ids are assigned 0, 1, ...). Errors:
 * MH_EINVAL (size 0, wrapping range, bad op, has_linear > 1), MH_EORDER,
 * MH_EIO, MH_ENOMEM, MH_ESTATE after an earlier error. */
int mhb_sql_writer_append(mhb_sql_writer *w, const mh_access *a, size_t n);

/* Writes the last slice, closes the database and fsyncs the file. Frees w
 * whatever happens; returns the first error. NULL accepted. */
int mhb_sql_writer_close(mhb_sql_writer *w);

/* Message of the writer's last error ("" when none). */
const char *mhb_sql_writer_error(const mhb_sql_writer *w);

/* Opens a database written above, read-only. Errors: MH_ENOENT, MH_ENOTSTORE,
 * MH_EIO, MH_ENOMEM; errbuf as above. */
int mhb_sql_reader_open(const char *path, const mhb_sql_options *opt,
                        mhb_sql_reader **out, char *errbuf, size_t errlen);
void mhb_sql_reader_close(mhb_sql_reader *r);
const char *mhb_sql_reader_error(const mhb_sql_reader *r);

/* Same contract as mh_query_run(): at most max matches of q, ascending ids
 * forward, descending backward. Errors: MH_EINVAL, MH_EIO (an SQLite error,
 * message in mhb_sql_reader_error), MH_ENOMEM. */
int mhb_sql_query(mhb_sql_reader *r, const mh_query *q, mh_access *out,
                  size_t max, size_t *n);

/* Counters of the store, for the report. */
typedef struct mhb_sql_stats {
    uint64_t accesses, slices, chunks;
} mhb_sql_stats;
int mhb_sql_reader_stats(mhb_sql_reader *r, mhb_sql_stats *st);

#endif /* MH_SQLITE_BASELINE_H */
