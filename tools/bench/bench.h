/*
 * bench.h - pieces of mh_bench shared by its files: query classes and how
 * they are run and checked (bench_query.c), the figures of one workload and
 * their report (bench_report.c), orchestration (bench.c).
 */
#ifndef MH_BENCH_H
#define MH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>
#include "clock.h" /* mhb_now, mhb_major_faults, mhb_minor_faults, mhb_cpu_parts */
#include "memhist.h"

#define MHB_OUT_CAP 1000u  /* most accesses one query (or chain) returns */
#define MHB_CHAIN_PAGES 10u
#define MHB_CHAIN_MAX 100u /* accesses per page of a resume chain */

enum mhb_range { MHB_POINT, MHB_PAGE, MHB_MIB, MHB_WHOLE, MHB_RANGES };

/* How queries are drawn: user (the default), the distribution of issue 10,
 * draw.h's mhb_draw_user plus the never-accessed classes; near, the older
 * draw whose every query has an answer (mhb_draw_query). */
enum mhb_dist { MHB_DIST_USER, MHB_DIST_NEAR };

/* Implementations timed: memhist, SQLite with the legacy settings, SQLite
 * with the design's own defaults (about 500 slices, chunk cap 4096). */
enum { MHB_MH, MHB_SQL, MHB_SQLD, MHB_SLOTS };

/* Latencies of one class on one implementation, microseconds. */
typedef struct mhb_lat {
    double p50, p99, max;
    size_t count;
    /* timed passes only: the p99 of the asks other than each pass's first
     * (the first ask after the other implementations' pass meets the CPU
     * caches and TLB as they left them); -1 when not measured */
    double p99_rest;
    /* timed passes only: the asks during which the process took a minor
     * page fault (getrusage around each ask, outside its timing), the
     * faults, and the p99 of the other asks; -1 when not measured */
    long fault_asks, minflt;
    double p99_calm;
} mhb_lat;

/* One query class: every query shares range kind, direction, op set and
 * max; starts and ranges differ, drawn from the trace. */
/* Questions per class of the untimed warm-up before the warm pass (drawn
 * with another seed, so none is asked again). */
#define MHB_WARMUP_PER_CLASS 10

typedef struct mhb_class {
    char name[48];
    int range;
    unsigned dir, ops;
    size_t max;     /* per page */
    unsigned pages; /* 1, or MHB_CHAIN_PAGES for a resume chain */
    size_t nq;
    mh_query *q;
    size_t nrun;    /* queries compared and timed: nq, or fewer when an
                       implementation exceeded the class time budget */
    int never;      /* ranges proven untouched by the trace */
    mhb_lat lat[MHB_SLOTS]; /* by slot: MHB_MH, MHB_SQL, MHB_SQLD */
    int has_lat[MHB_SLOTS];
    /* each query's first run (the warm pass), by slot: what a user asking
     * a new question meets, the page cache warm but nothing of the question
     * in the implementation's own caches (memhist's decoded blocks, SQLite's
     * page cache); lat is the same queries asked again */
    mhb_lat first[MHB_SLOTS];
    int has_first[MHB_SLOTS];
    /* major page faults of the process during each slot's first asks and
     * during its timed pass (getrusage; -1 not measured): a page of the
     * store read from disk in a pass meant warm */
    long majflt_first[MHB_SLOTS], majflt[MHB_SLOTS];
    double mean_results; /* accesses returned per query (or chain) */
    /* blocks memhist decoded per timed ask (its reader's counter; -1 not
     * measured): 0 when every answer came from its cache, as on a store the
     * cache holds; at 10^9 the same class may decode in every pass */
    double mh_decoded_per_ask;
    /* one-stream classes (multi-stream workloads): q[j] is the query of
     * the unfiltered class `base` restricted to stream sid[j], drawn
     * uniformly from the trace's streams (q[j].streams points at sid[j]);
     * NULL for an unfiltered class */
    uint32_t *sid;
    size_t base;
} mhb_class;

/* A store under test: run one query, mh_query_run's contract. */
typedef int (*mhb_run_fn)(void *h, const mh_query *q, mh_access *out,
                          size_t max, size_t *n);
typedef struct mhb_impl {
    const char *name;
    mhb_run_fn run;
    void *h;
    int slot; /* index in mhb_class.lat, or -1 when never timed (oracle) */
    size_t limit; /* compare only the first `limit` queries of each class */
    /* 1: it stores streams and pcs, so its answers' stream, has_pc and pc
     * are compared too; 0 (SQLite): they are not, and its classes with a
     * stream filter are skipped */
    int full;
    /* optional: a counter of the blocks the implementation decoded so far
     * (memhist's reader), read around each timed ask for --asks; NULL
     * when it has none */
    uint64_t (*decoded)(void *h);
} mhb_impl;

/* Brute force over the trace, as an implementation: the trace written reps
 * times, copy r with ids + r * n and transitions + r * shift (reps 1: the
 * trace itself). A copy after the first answers as the first does, so a
 * query scans at most the copy it starts in and one whole copy. */
typedef struct mhb_oracle_ctx {
    const mh_access *trace;
    size_t n;
    uint64_t reps, shift;
} mhb_oracle_ctx;
int mhb_oracle_run(void *h, const mh_query *q, mh_access *out, size_t max,
                   size_t *n);

/* Builds the classes (every range x max x direction x op set, then the
 * resume chains, then with MHB_DIST_USER the never-accessed classes),
 * per_class queries each, drawn deterministically from the trace with seed
 * (a never-accessed class keeps fewer when the trace leaves no such range).
 * With nstreams > 1 (the trace's distinct stream ids, streams[]), each of
 * those classes is followed by its one-stream twin: the same queries, each
 * restricted to a stream drawn uniformly from streams[] (name + " 1str").
 * Returns MH_ENOMEM or MH_OK. */
int mhb_classes_make(const mh_access *trace, size_t n, size_t per_class,
                     uint64_t seed, int dist, const uint32_t *streams,
                     size_t nstreams, mhb_class **out, size_t *count);
void mhb_classes_free(mhb_class *c, size_t count);

/* Keeps the classes whose name contains one of the comma-separated
 * substrings of list (and the unfiltered class each kept one-stream class
 * is drawn from), in their order, their `base` renumbered; the others are
 * freed. Returns the number kept (0: none matched, or no memory for the
 * filter's two arrays; *c and *count are then as they were). */
size_t mhb_classes_filter(mhb_class **c, size_t *count, const char *list);

/* For a trace written reps times (see mhb_oracle_ctx): moves each query's
 * start into a copy drawn uniformly, so starts stay uniform over the
 * transitions of the whole workload. Deterministic from seed. */
void mhb_classes_repeat(mhb_class *c, size_t count, uint64_t reps, uint64_t shift,
                        uint64_t seed);

/* Runs every class: impl[0] is the reference; each other implementation's
 * answers are compared with it query by query (a warm pass), then, when
 * timed > 0, the implementations with a slot are timed in `timed` passes,
 * taking turns pass by pass (by_impl 0) or each implementation's passes
 * back to back after an untimed pass of its own (by_impl 1: "warm", each
 * timed pass follows its own questions), whose answers are compared again
 * (a class's latencies are read from timed x nrun asks). Mismatches are described on stderr and counted. An
 * implementation still running a class's warm pass after budget seconds
 * stops there, and the class keeps only the queries every implementation
 * finished (nrun): a whole-space query of the SQLite design walks every
 * chunk of a slice and can take seconds. The major page faults of each
 * slot's two passes are kept in the class; with faults, the minor page
 * faults of each timed ask too (getrusage around it, outside its timing:
 * mhb_lat's fault_asks, minflt, p99_calm). With asks != NULL, every timed
 * ask is also written to asks->f as a CSV row (MHB_ASKS_HEADER; -1 where
 * not measured). Returns MH_OK, or the first error code of a query. */
#define MHB_ASKS_HEADER                                                        \
    "workload,class,implementation,pass,query,us,minor_faults,blocks_decoded," \
    "start_kind,start,direction,addr_first,addr_last,ops,results"
typedef struct mhb_asks {
    FILE *f;
    const char *workload;
} mhb_asks;
int mhb_classes_bench(mhb_class *c, size_t count, const mhb_impl *impl,
                      size_t nimpl, int timed, int by_impl, int faults,
                      const mhb_asks *asks, double budget, uint64_t *compared,
                      uint64_t *mismatches);

/* Runs the queries of every class once on impl (within budget seconds a
 * class), answers discarded: the reader-memory children. */
int mhb_classes_run_once(const mhb_class *c, size_t count, const mhb_impl *impl,
                         double budget);

/* One query (or chain) of class c on im: mh_query_run's contract, out holds
 * up to MHB_OUT_CAP accesses. */
int mhb_run_one(const mhb_impl *im, const mhb_class *c, size_t i,
                mh_access *out, size_t *n);

/* 1 when got equals ref; else the difference is described on stderr, 0.
 * full: also compare stream, has_pc and pc (both sides know them). */
int mhb_compare(const mhb_class *c, size_t i, const char *ref_name,
                const mh_access *ref, size_t nref, const char *name,
                const mh_access *got, size_t ngot, int full);

/* Nearest-rank p50 / p99 / max of n latencies (sorted in place). */
void mhb_summarise(double *us, size_t n, mhb_lat *out);

/* Cold figures of one store (bench_cold.c): its pages dropped from the page
 * cache, then open and the first MHB_COLD_QUERIES queries. */
#define MHB_COLD_QUERIES 100u

/* What holds a page of a memhist store, for counting a cold question's
 * reads: kind 0 a segment's header and section directory, kinds 1 .. 13
 * the section of that type (SPEC.md 5.2) holding the page's first byte,
 * MHB_KIND_OTHER the rest (the MANIFEST, a section of a newer type, a
 * file the layout does not know). */
#define MHB_KINDS 15u
#define MHB_KIND_OTHER (MHB_KINDS - 1u)
const char *mhb_kind_name(unsigned kind);

typedef struct mhb_cold {
    int done;
    double open_ms;
    mhb_lat lat;            /* per query, the open excluded */
    double resident_pct;    /* of the store's pages still cached after the
                               drop, before the open (mincore): ~0 proves it */
    /* the cold question: the first MHB_COLD_QUESTIONS queries of the cold
     * list again, each alone: pages dropped, open, the query, close; its
     * latency includes the open (what a user who opens a store to ask one
     * thing waits) */
    mhb_lat question;
    /* the store's pages in the page cache after each cold question (before
     * its close; mincore): what the open and the query read, readahead
     * included */
    mhb_lat question_pages;
    /* memhist only (has_kinds): the mean of those pages per cold question
     * by what holds them (mhb_kind_name), from the store's layout read
     * before the drop */
    int has_kinds;
    double question_kinds[MHB_KINDS];
} mhb_cold;
#define MHB_COLD_QUESTIONS 20u

/* The cold sequence: query i / ncls of class i % ncls, skipping classes
 * that hold too few, until MHB_COLD_QUERIES (every range, max, direction
 * and op set appears before any class repeats). Fills *ci and *qi, returns
 * how many (<= MHB_COLD_QUERIES). */
size_t mhb_cold_list(const mhb_class *c, size_t count, size_t *ci, size_t *qi);

/* Drops the page-cache pages of path (a file, or every file of a flat
 * directory) with posix_fadvise(POSIX_FADV_DONTNEED) after fsync; pages of
 * a file still mapped by a live process stay, so every reader of the store
 * must be closed first. Returns MH_OK or MH_EIO. */
int mhb_drop_cache(const char *path);

/* Store files held in the page cache while the queries run, by a child
 * process that maps each whole and mlocks it (or, where the lock is
 * refused, reads every page once and keeps it mapped). This benchmark's VMs
 * reclaim page cache left idle: DAMON's proactive reclaim pages out file
 * pages that no process maps and that were not accessed for a minute, so a
 * store queried class after class lost the pages no recent query had
 * touched, and "warm" passes read them from disk. A pinned page is neither
 * unmapped nor evictable. The pin lives in its own process so that the
 * readers' address space, page tables and TLB are not touched by it (the
 * same mappings in the benchmark itself made the query passes noisier:
 * reclaim's scans of mapped pages reach the process that maps them). */
typedef struct mhb_pin {
    pid_t pid;      /* the child, -1 none */
    int fd;         /* closed to let it go */
    uint64_t pages; /* pages pinned */
    int how;        /* 1 mlock, 2 mapped and read (mlock refused), 0 none */
} mhb_pin;
/* Pins every path (a file, or each regular file of a flat directory):
 * spawns this program again (/proc/self/exe) as `mh_bench --pin-child
 * PATH...`, which main() hands to mhb_pin_child_main. Returns MH_OK, or
 * MH_EIO (no child, or a file not opened or mapped; *p then pins nothing). */
#define MHB_PIN_CHILD "--pin-child"
int mhb_pin_stores(const char *const *paths, size_t n, mhb_pin *p);
/* The child: pins paths[0 .. n - 1], writes its result to stdout, then
 * waits for stdin to close (the benchmark's unpin, or its end). */
int mhb_pin_child_main(int n, char **paths);
/* Ends the pin (the child exits): the pages stay cached, but can be
 * dropped again (the cold figures drop them). A pin of none is a no-op. */
void mhb_unpin(mhb_pin *p);

/* Percentage of path's pages in the page cache (mincore), -1 if unknown. */
double mhb_resident_pct(const char *path);
/* The store's pages in the page cache (mincore over its files); -1: error. */
double mhb_resident_pages(const char *path);

/* The segment files of a memhist store and their sections' byte ranges
 * (mh_reader_section_info), read through a reader that is closed again:
 * reading it brings pages into the page cache, so read it before a drop. */
typedef struct mhb_layout_sec {
    unsigned kind;
    uint64_t offset, size;
} mhb_layout_sec;
typedef struct mhb_layout_file {
    char name[64];
    size_t nsec;
    mhb_layout_sec *sec;
} mhb_layout_file;
typedef struct mhb_layout {
    size_t nfiles;
    mhb_layout_file *file;
} mhb_layout;
int mhb_layout_read(const char *store, mhb_layout *out);
void mhb_layout_free(mhb_layout *l);

/* The pages of store (a directory, or one file) in the page cache now, by
 * kind (mincore; nothing is read): kinds[MHB_KINDS] is set. Returns MH_OK
 * or MH_EIO. */
int mhb_resident_kinds(const char *store, const mhb_layout *l, double *kinds);

/* Opens a store as an implementation (im->name, run, h set) / closes it. */
typedef int (*mhb_open_fn)(void *ctx, mhb_impl *im);
typedef void (*mhb_close_fn)(mhb_impl *im);

/* Drops path's pages, then times open and the cold list, then closes. With
 * ref_name NULL the answers are stored in ref / nref (MHB_COLD_QUERIES x
 * MHB_OUT_CAP and MHB_COLD_QUERIES) as the reference; otherwise each is
 * compared with them (counted in *compared, *mismatches). Returns MH_OK or
 * the first error of the open, the drop or a query. With a layout (a memhist
 * store's), the cold questions' pages are also counted by kind. */
int mhb_cold_measure(const char *path, const mhb_layout *layout, mhb_open_fn open_fn,
                     mhb_close_fn close_fn, void *ctx, const mhb_class *c, size_t count,
                     const char *ref_name, mh_access *ref, size_t *nref,
                     mhb_cold *out, uint64_t *compared, uint64_t *mismatches);

/* Figures of one workload. Negative values mean "not measured". */
typedef struct mhb_workload {
    char name[64];
    uint64_t accesses;
    int sqlite_ran;
    int dist;                /* enum mhb_dist */
    int pinned;              /* stores pinned for the query passes (mhb_pin_store):
                                1 mlocked, 2 mapped and read, 0 not (--no-pin) */
    unsigned timed_passes;   /* timed passes a class (--timed-passes) */
    int turns_impl;          /* --turns impl: each implementation's passes back
                                to back (else they take turns pass by pass) */
    uint64_t reader_cache;   /* the memhist readers' mh_reader_set_cache bytes
                                (--cache; MH_READER_CACHE_DEFAULT without) */
    /* accesses/s: memhist bg on, bg off, SQLite, SQLite design defaults */
    double ingest_rate[4];
    double writer_mib[4];    /* as ingest_rate */
    /* memhist bg on, bg off: the CPU seconds of the median run's threads
     * (user + system) over its wall time, the cores it kept busy; -1
     * unknown */
    double ingest_cores[2];
    /* below, by slot (MHB_MH, MHB_SQL, MHB_SQLD) */
    double bytes_per_access[MHB_SLOTS];
    uint64_t store_bytes[MHB_SLOTS];
    double open_ms[MHB_SLOTS];
    double reader_mib[MHB_SLOTS];      /* peak RSS (VmHWM) */
    /* at the end of the run, store open, above the process before the
     * open: anonymous (cache, bounded by its option) and file-backed
     * (mapped store pages, reclaimable) */
    double reader_anon_mib[MHB_SLOTS], reader_file_mib[MHB_SLOTS];
    mhb_cold cold[MHB_SLOTS];
    uint64_t mh_slices, mh_chunks, mh_blocks;
    uint64_t sql_slices[MHB_SLOTS], sql_chunks[MHB_SLOTS]; /* [MHB_SQL], [MHB_SQLD] */
    mhb_class *cls;
    size_t ncls;
    uint64_t compared, mismatches;
    /* format 2.0 figures (-1 / 0 when not measured) */
    uint32_t nstreams;       /* distinct streams of the trace */
    uint64_t with_pc;        /* accesses with has_pc */
    double bytes_nopc;       /* bytes per access of the same accesses with
                                has_pc cleared (when with_pc > 0) */
    uint64_t summary_bytes;  /* address-summary sections of the memhist store */
    /* the memhist store's other index bytes: slice/chunk/block records, the
     * fine summary, id map, address set and postings (sections 3-5, 7-10) */
    uint64_t records_bytes, fine_bytes, idmap_bytes, aset_bytes, apost_bytes;
    uint32_t segments;
    double producer_rate;    /* ingest through mh_producer_*, accesses/s */
    double producer_mib;
    unsigned producer_threads;
    int producer_same;       /* 1: the producers' store holds the batch
                                store's accesses in the same order; 0: not
                                (a mismatch); -1: not checked */
} mhb_workload;

typedef struct mhb_machine {
    long nproc;
    char cpu[128];
    char kernel[400];
    char date[32];
} mhb_machine;

void mhb_machine_get(mhb_machine *m);
void mhb_report_markdown(FILE *f, const mhb_machine *m, const mhb_workload *w,
                         size_t nw);
int mhb_report_json(const char *path, const mhb_machine *m,
                    const mhb_workload *w, size_t nw);


/* ---- store files (bench_files.c) ---- */
/* Bytes of the regular files of a flat directory (a store), or of one file;
 * 0 when path is missing. */
uint64_t mhb_path_bytes(const char *path);
/* Removes a file, or a flat directory and its files (a store). */
void mhb_remove_path(const char *path);

/* ---- traces (bench.c, bench_streams.c) ---- */

/* A trace in memory; with reps > 1 the workload is reps copies of it, copy r
 * with transitions shifted by r * shift (shift = the span of its transitions),
 * so the copies follow one another: the 10^9-access store from a real trace
 * without holding 10^9 accesses in memory. decl: the streams to declare
 * before appending (names owned by the trace), every stream of the trace
 * but 0 among them; sids: the distinct stream ids of the accesses, sorted. */
typedef struct mhb_trace {
    mh_access *a;
    size_t n, cap;
    uint64_t reps, shift;
    mh_stream_info *decl;
    size_t ndecl;
    uint32_t *sids;
    size_t nsids;
    uint64_t with_pc; /* accesses with has_pc */
} mhb_trace;

void mhb_trace_free(mhb_trace *t);

/* Fills sids / nsids / with_pc from the accesses and declares (kind other,
 * no name) every stream of the accesses decl lacks. MH_ENOMEM or MH_OK. */
int mhb_trace_streams(mhb_trace *t);

/* Clears has_pc and pc of every access (with_pc becomes 0). */
void mhb_trace_strip_pc(mhb_trace *t);

/* A valgrind lackey log (tools/import.h's parser; data accesses only). */
int mhb_load_lackey(const char *path, mhb_trace *t);

/* n accesses of tools/synth with seed (one stream, no pc). */
int mhb_load_synth(uint64_t seed, uint64_t n, mhb_trace *t);

/* Every access of the store at path (every operation, in id order, stream
 * and pc included) and its stream descriptions. Errors are printed. */
int mhb_load_store(const char *path, mhb_trace *t);
/* Prints "mh_bench: PATH: WHAT: <rc's text>[: <r's detail>]" to stderr;
 * returns rc. */
int mhb_store_fail(const char *path, const char *what, int rc, const mh_reader *r);

/* k synthetic threads (tools/synth mh_synth_new_thread, thread j seeded
 * from seed and j, stream j, n / k accesses each, the first n % k one
 * more), each moved to start at thread 0's first transition (threads of one
 * program start together), merged by transition, ties by stream id then order within the
 * thread: the order the writer's producer merge gives them. Streams
 * 1 .. k-1 declared as threads ("thread-j", tid j + 1). */
int mhb_load_threads(uint64_t seed, uint64_t n, uint32_t k, mhb_trace *t);

/* Declares t's streams on w. */
int mhb_declare_streams(mh_writer *w, const mhb_trace *t, char *err, size_t len);

/* mhb_producers_split then _run write t into a new store at path through producers: one per stream,
 * min(streams, max_threads) threads, thread j appending the streams
 * s with s mod threads == j; each thread walks the trace in rounds of
 * min(`batch`, 1024 x streams) accesses of the merged order, appending for
 * each of its streams what that stream has in the round (the way the
 * threads of a traced program advance together), and closes a stream's
 * producer as soon as the stream ends. reorder_window 0 (the merge waits
 * for every open producer: no access is late whatever the scheduling).
 * The streams must start near one another (mhb_load_threads aligns them):
 * a thread appends a stream only in its round, and an open producer that
 * has appended nothing holds the merge back. *seconds: from the first
 * append to the durable close; the split into per-stream arrays
 * (mhb_producers_split, 56 bytes an access) is neither timed nor counted
 * in the writer's memory. t must outlive s. */
typedef struct prod_shared mhb_prod;
int mhb_producers_split(const mhb_trace *t, size_t batch, unsigned max_threads,
                        mhb_prod **out);
int mhb_producers_run(mhb_prod *s, const char *path, const mh_writer_options *opt,
                      double *seconds, char *err, size_t len);
void mhb_producers_free(mhb_prod *s);

/* 1 when stores a and b hold the same accesses (every field) in the same
 * order, 0 when not (the first difference on stderr), negative on error. */
int mhb_same_store(const char *a, const char *b);

#endif /* MH_BENCH_H */
