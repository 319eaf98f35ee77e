/*
 * testutil.h - what every library test shares: fail-fast checks that name
 * the error code, a deterministic PRNG, scratch directories, and the checks
 * of query answers against the brute-force oracle (oracle.h, included).
 */
#ifndef MH_TESTUTIL_H
#define MH_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "memhist.h"
#include "oracle.h"

/* Exit code that ctest's SKIP_RETURN_CODE maps to "skipped". */
#define TU_SKIP 77

void tu_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* Context printed with every failure (seed, query...); set by the test. */
extern _Thread_local char tu_context[512];
/* A second line printed with every failure (e.g. where the input is kept);
 * the helpers below never overwrite it. */
extern char tu_note[512];

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            tu_fail(__FILE__, __LINE__, "check failed: %s", #cond);            \
    } while (0)

#define CHECKF(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond))                                                           \
            tu_fail(__FILE__, __LINE__, __VA_ARGS__);                          \
    } while (0)

/* expr must return exactly the code want. */
#define CHECK_RC(expr, want)                                                   \
    do {                                                                       \
        int tu_rc_ = (expr);                                                   \
        int tu_want_ = (want);                                                 \
        if (tu_rc_ != tu_want_)                                                \
            tu_fail(__FILE__, __LINE__, "%s returned %s (%d), expected %s",    \
                    #expr, mh_error_name(tu_rc_), tu_rc_,                      \
                    mh_error_name(tu_want_));                                  \
    } while (0)

#define CHECK_OK(expr) CHECK_RC(expr, MH_OK)

/* ---- PRNG (splitmix64): the same sequence on every host ----------------- */
typedef struct tu_rng {
    uint64_t x;
} tu_rng;

uint64_t tu_next(tu_rng *r);
/* Uniform in [0, n); n > 0. */
uint64_t tu_below(tu_rng *r, uint64_t n);
/* Uniform in [lo, hi]. */
uint64_t tu_range(tu_rng *r, uint64_t lo, uint64_t hi);

/* ---- scratch directories ------------------------------------------------ */
/* Creates a fresh directory under $TMPDIR (or /tmp) and writes its path to
 * buf. Aborts the test on failure. */
void tu_mkdtemp(char *buf, size_t cap, const char *tag);
/* Removes path and everything below it; missing is fine. */
void tu_rmtree(const char *path);
/* buf = dir + "/" + name. */
void tu_join(char *buf, size_t cap, const char *dir, const char *name);

/* ---- files -------------------------------------------------------------- */
/* Reads a whole file; NULL when it cannot be opened. *len gets the size. */
unsigned char *tu_read_file(const char *path, size_t *len);
/* The address range [*a, *b] of the last entry of the address summary
 * (section 6) of the segment file at path, as its bytes say (no check):
 * the entry a query reads only when its range meets that granule. */
void tu_summary_last_range(const char *path, uint64_t *a, uint64_t *b);
/* Writes a whole file; aborts the test on failure. */
void tu_write_file(const char *path, const void *data, size_t len);
/* Copies every regular file of directory src into the existing dst. */
void tu_copy_dir(const char *src, const char *dst);

/* Fails unless files d1/name and d2/name hold the same bytes (the first
 * difference is named). */
void tu_same_file(const char *d1, const char *d2, const char *name);

/* ---- fsck ----------------------------------------------------------------- */
/* What mh_verify reported on a store: how many problems (checked equal to
 * its result's count), and the first one's code and message. */
typedef struct tu_problems {
    int n, code;
    char msg[MH_ERRMSG_MAX];
} tu_problems;
tu_problems tu_fsck(const char *dir);

/* A new store at dir holding all[0 .. n) in one batch with options o
 * (NULL: the defaults), closed; then all[i].id = i, the ids it gave them. */
void tu_write_store(const char *dir, const mh_writer_options *o, mh_access *all, size_t n);

/* ---- real recordings ------------------------------------------------------ */
/* Every access of r in id order, from one whole-space query: a malloc'd
 * array (at least one element) and its length in *n. */
mh_access *tu_read_all(const mh_reader *r, size_t *n);

/* Records /usr/bin/sort of a generated file of `lines` lines (line i:
 * "(i * mul) % mod row i") with `MEMHIST record --engine qemu` into
 * dir/rec.mh, written to rec (cap bytes). Returns 0; TU_SKIP when
 * qemu-x86_64 is missing or the engine cannot run here (its message names
 * qemu); 1 on another failure (printed, with `who` in front). */
int tu_record_sort(const char *memhist, const char *dir, int lines, uint64_t mul,
                   uint64_t mod, char *rec, size_t cap, const char *who);
/* The same for any program: `memhist record --engine qemu --quiet` of
 * prog (a command line, its words quoted as the shell needs) into
 * dir/rec.mh, with the environment cleared (LC_ALL=C) when clean_env. */
int tu_record_qemu(const char *memhist, const char *dir, const char *prog, int clean_env,
                   char *rec, size_t cap, const char *who);
/* The test victim's 8 threads (`VICTIM threads 8`) recorded with qemu
 * (tu_record_qemu) into dir/rec.mh, dir a new temporary directory named
 * tag (cap bytes), then opened: 0 with *r, its accesses in id order in
 * *all (*n of them) and *ns one above the highest stream id; TU_SKIP or
 * 1 otherwise (printed why, dir removed). */
int tu_record_threads(const char *memhist, const char *victim, const char *tag, char *dir,
                      size_t cap, mh_reader **r, mh_access **all, size_t *n, uint32_t *ns);
/* The last byte of section `type` of dir/name flipped, no sum made right
 * (a checksum's test). */
void tu_flip_section_byte(const char *dir, const char *name, uint32_t type);
/* tu_record_sort (mul 7919, mod 100003), then every access of the
 * recording in id order (tu_read_all): a malloc'd array and its length in
 * *n, or NULL with *rc the failure (TU_SKIP or 1; 0 on success). */
mh_access *tu_record_sort_all(const char *memhist, const char *dir, int lines, char *rec,
                              size_t cap, const char *who, size_t *n, int *rc);

/* ---- checks against the oracle (tests/oracle_lib/oracle.h) -------------- */
/* Compares mh_query_run(r, q, max) with the oracle; on a difference prints
 * both answers and fails. Returns the number of accesses returned. */
size_t tu_check_query(const mh_reader *r, const mh_access *all, size_t n,
                      const mh_query *q, size_t max);

/* Opens a cursor on q, reads up to limit matches in pieces of random size
 * drawn from rng (1 .. 1000, mostly small), and compares them with the
 * oracle, including the end. */
void tu_check_cursor(const mh_reader *r, const mh_access *all, size_t n,
                     const mh_query *q, size_t limit, tu_rng *rng);
/* The same with pieces of 1 .. max_piece. */
void tu_check_cursor_pieces(const mh_reader *r, const mh_access *all, size_t n,
                            const mh_query *q, size_t limit, size_t max_piece,
                            tu_rng *rng);

/* Runs q, then resumes with the last id returned up to pages times (page
 * sizes drawn from rng), checking each page with the oracle and that the
 * concatenation is the oracle's answer for the whole chain. */
void tu_check_chain(const mh_reader *r, const mh_access *all, size_t n,
                    const mh_query *q, int pages, tu_rng *rng);

/* Checks mh_reader_stats and the introspection records against all[]:
 * totals, per-op counts, transition range, and that slices, chunks and
 * segments partition the ids and bound their accesses. */
void tu_check_stats(const mh_reader *r, const mh_access *all, size_t n);

#endif

/* ---- random queries ------------------------------------------------------ */
/* Draws a valid query aimed at the data: starts at existing, neighbouring
 * and extreme transitions and ids, ranges from 1 byte to the whole space
 * centred on accessed addresses (or anywhere, or at 0 / UINT64_MAX), every
 * non-empty op set, both kinds and directions, an end bound half of the
 * time (at, before, near or far from the start, either kind); *max in
 * 1..1000. */
void tu_random_query(tu_rng *rng, const mh_access *all, size_t n, mh_query *q,
                     size_t *max);

/* Adds random format 2.0 filters to q: a stream set half of the time
 * (streams of all[], ids that alias them modulo 32, an id likely never
 * declared, one above MH_STREAM_MAX), a pc range around the pc of an access
 * a third of the time, a window of win[] (or one past the last) a third of
 * the time. set: room for the stream list q->streams then points to. */
void tu_random_filters(tu_rng *rng, const mh_access *all, size_t n,
                       const oracle_window *win, size_t nwin, mh_query *q,
                       uint32_t set[8]);

/* Runs count random queries with random filters (tu_random_query, then
 * tu_random_filters) against oracle_query_from: plain runs, resume chains
 * and cursors to the end; refused ones (an absent window) must be refused
 * alike. Returns how many filtered queries had matches. */
size_t tu_random_filtered_queries(const mh_reader *r, const mh_access *all, size_t n,
                                  const oracle_window *win, size_t nwin, size_t count,
                                  uint64_t seed);

/* Runs count random queries on r against the oracle: plain runs, resume
 * chains and cursors, plus whole-trace scans in both directions. */
void tu_random_queries(const mh_reader *r, const mh_access *all, size_t n,
                       size_t count, uint64_t seed);
