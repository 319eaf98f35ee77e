/*
 * oracle.h - the one brute-force answer to a memhist query, shared by the
 * tests, the robustness tests, the fuzzers and the benchmark. Test and bench
 * support only: not part of libmemhist, never installed.
 *
 * The oracle is the executable definition of the half-axis query of
 * memhist.h (SPEC.md section 11): a scan over an in-memory array of
 * accesses that a reader can check against the header line by line, so that
 * it cannot share a bug with the library's index walk. It knows more than
 * format 1.x queries can ask for: a stream set, a pc range and a window of
 * ids (oracle_query), so that format 2.0 only has to add them to the library.
 *
 * The trace: all[i] is the access with id i (n of them), transitions
 * non-decreasing along the array -- what a store that accepted the accesses
 * in this order holds. The id fields of all[] are not read; answers carry
 * the index as their id. Everything here is single-threaded pure code over
 * caller memory: any number of threads may call it on a shared trace.
 */
#ifndef MH_ORACLE_H
#define MH_ORACLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memhist.h"

/* A query as the oracle takes it: an mh_query (every field honoured) plus
 * the filters format 2.0 adds. oracle_query_wrap gives one that filters
 * nothing beyond q. */
typedef struct oracle_query {
    mh_query q;
    /* NULL: every stream; else only accesses whose stream is one of
     * streams[0 .. nstreams) (nstreams 0 then matches nothing) */
    const uint32_t *streams;
    size_t nstreams;
    /* 1: only accesses with has_pc set and pc in [pc_first, pc_last] */
    int has_pc;
    uint64_t pc_first, pc_last;
    /* 1: only ids in [id_first, id_last] (a window, on top of start/end) */
    int has_window;
    uint64_t id_first, id_last;
} oracle_query;

/* oq = q with no stream, pc or window filter (q's 1.2 fields ignored). */
void oracle_query_wrap(oracle_query *oq, const mh_query *q);

/* A window as the test wrote it: its accesses are ids [id_first,
 * id_first + count) (count 0: it began at id_first and holds none). */
typedef struct oracle_window {
    uint64_t window, id_first, count;
} oracle_window;

/* oq = q with the filters q itself asks for (format 2.0): the stream set
 * q->streams[0 .. nstreams), MH_FILTER_PC's [pc_first, pc_last] and
 * MH_FILTER_WINDOW's window q->window, looked up in w[0 .. nw). Returns
 * MH_OK; MH_EINVAL for 1.2 fields mh_query_run refuses (streams NULL with
 * nstreams > 0 or set with 0, nstreams above 65536, unknown filter bits,
 * pc_first > pc_last under MH_FILTER_PC); MH_ENOTFOUND when the window is
 * not in w. */
int oracle_query_from(oracle_query *oq, const mh_query *q, const oracle_window *w,
                      size_t nw);

/* MH_OK, or MH_EINVAL for a query mh_query_run refuses (A > B, empty or
 * unknown ops, unknown start kind, direction or end kind, reserved set;
 * struct_size is the caller's compile and not looked at) or whose oracle
 * filters are malformed (pc_first > pc_last, id_first > id_last, a NULL
 * stream list with nstreams > 0). */
int oracle_query_check(const oracle_query *oq);

/* Does access a (with its own id field) belong to the answer of oq: op in
 * the set, [physical, physical + size - 1] overlapping [A, B], after the
 * start and within the end bound in query order, and in the stream set, pc
 * range and window? oq must pass oracle_query_check; any op value and size
 * is judged without undefined behaviour (an unknown op never matches). */
int oracle_matches(const oracle_query *oq, const mh_access *a);

/* Answers oq over all[0 .. n) (see the top): writes at most max matches to
 * out, in query order, each a copy of all[i] with id = i; *got gets how
 * many. Returns MH_OK, or MH_EINVAL (then *got = 0, out untouched) for a
 * query oracle_query_check refuses or out == NULL with max > 0.
 * Cost: a binary search for the start (and the window), then a scan that
 * stops at max matches or at the first access past the end bound. */
int oracle_run(const mh_access *all, size_t n, const oracle_query *oq,
               mh_access *out, size_t max, size_t *got);

/* oracle_run for a plain valid mh_query; returns the count. An invalid query
 * is a bug of the caller: it is printed and the process aborts. */
size_t oracle_answer(const mh_access *all, size_t n, const mh_query *q,
                     mh_access *out, size_t max);

/* The first index of all[0 .. n) whose transition is >= t (lower) or > t
 * (upper); n when none. A binary search: transitions must not decrease. */
size_t oracle_lower_bound(const mh_access *all, size_t n, uint64_t t);
size_t oracle_upper_bound(const mh_access *all, size_t n, uint64_t t);

/* Turns q into the query that resumes after the answer's last access last:
 * start_kind MH_FROM_ID, start = last->id (memhist.h, resuming). */
void oracle_resume(mh_query *q, const mh_access *last);

/* ---- comparing answers --------------------------------------------------- */
/* Equal as the API returns them: id, transition, physical, size, op,
 * has_linear, stream and has_pc; linear only when has_linear, pc only when
 * has_pc (reserved is not compared). Format 1.x stores return stream 0 and
 * has_pc 0, which is what a trace they accepted holds. */
int oracle_same_access(const mh_access *a, const mh_access *b);

/* 1 when a[0 .. na) and b[0 .. nb) are equal (oracle_same_access); else 0
 * and *at (when not NULL) gets the first differing index, or the shorter
 * length when one is a prefix of the other. */
int oracle_equal(const mh_access *a, size_t na, const mh_access *b, size_t nb,
                 size_t *at);

/* 0 when got equals want; else prints one line to stderr --
 * "WHAT: got N accesses, want M, first difference at I: got {..} want {..}"
 * -- and returns -1. */
int oracle_compare(const char *what, const mh_access *got, size_t ngot,
                   const mh_access *want, size_t nwant);

/* Prints a on one line (no newline) / oq on one line (no newline). */
void oracle_print_access(FILE *f, const mh_access *a);
void oracle_print_query(FILE *f, const oracle_query *oq);
/* oracle_print_query into buf, with snprintf's contract (truncated to cap,
 * NUL-terminated when cap > 0; returns the full length). */
size_t oracle_format_query(char *buf, size_t cap, const oracle_query *oq);

#endif /* MH_ORACLE_H */
