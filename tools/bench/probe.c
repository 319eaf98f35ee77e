/*
 * probe.c - mh_probe: one query class on one synthetic store, for profiling
 * (perf record, callgrind) and for trying writer options, without the
 * SQLite side or the other classes of mh_bench.
 *
 *   mh_probe [--size N] [--store DIR] [--slice N] [--queries N] [--reps N]
 *            [--max N] [--range BYTES] [--dir fwd|bwd] [--ops r|w|rw]
 *            [--draw near|user|never] [--summary on|off|both]
 *            [--aset on|off|both] [--idmap on|off|both|force]
 *            [--apost on|off|both] [--qfile FILE] [--answers FILE]
 *            [--cache BYTES] [--thrash MIB] [--thrash-each 0|1] [--spin MS]
 *            [--thrash-code KIB] [--thrash-small 0|1]
 *
 * Generates the synthetic trace (tools/synth, seed 1, N accesses), writes
 * it to DIR unless DIR already holds a store (reporting the ingest rate),
 * draws --queries queries the way mh_bench does (an access j of an
 * operation of the set gives the range, aligned around its address; the
 * start lies a log-uniform distance before or after it), runs them
 * once (each question's first ask: timed, with the minor page faults
 * they took, the reader's cache and the store's mapping cold in this
 * process), then --reps times timed, and prints p50 / p99 / max in us.
 * With --reps 1 the figures are comparable to mh_bench's warm pass; with
 * more, every line the queries touch is hot in the CPU caches.
 * --draw user / never draws as mh_bench's user and never-accessed classes
 * (the latter proven untouched). --summary off runs the queries with the
 * segments' address summaries ignored (the reader's internal switch),
 * --summary both runs them both ways, interleaved query by query, compares
 * the answers and prints the two lines side by side. --aset does the same
 * with the segments' address sets (section 8), --idmap with the id-order
 * path (SPEC.md 14 step 2b: off never takes it, on where the reader's cost
 * choice does, force wherever the segment has an id map: what the choice
 * is measured against), --apost with the address postings (section 10, format
 * 2.2), --span with the span address sets (section 11), --union with
 * the whole store's union (SPEC.md 14 step 0); one of them may be both.
 * --size 0 with an existing --store reads the trace from that store (a
 * real recording) instead of generating it.
 * --qfile FILE: the drawn queries are written to FILE; when FILE exists
 * they are read from it instead and the trace is neither generated nor
 * read (a callgrind run on a real store then costs the queries only:
 * valgrind --tool=callgrind --toggle-collect=mh_query_run mh_probe ...;
 * --toggle-collect=rep_query counts the repeated asks alone, with the
 * block cache warm: add --cache-sim=yes and an LL smaller than what the
 * questions touch, e.g. --LL=262144,8,64, to count the cache lines a
 * question meets cold, as after the SQLite questions in mh_bench).
 * --asks CSV --class NAME (with --qfile FILE, which must not exist): the
 * questions of class NAME that memhist asked in the first timed pass of an
 * `mh_bench --asks CSV` run, in their order, are written to FILE and
 * asked as a --qfile (a class's slow asks asked again, alone or with
 * --thrash, --spin or callgrind).
 * --cache BYTES sets the reader's cache option (mh_reader_set_cache; it
 * also bounds what the segments remember of their checks and walks).
 * --thrash MIB writes over a buffer of MIB MiB before each timed pass
 * (untimed): the pass then starts with CPU caches that hold none of the
 * reader's lines, as in mh_bench, where the SQLite stores' queries run
 * between a class's first asks and its timed pass (0, the default: none).
 * --spin MS waits MS milliseconds before each timed pass, spinning on the
 * clock (no memory traffic of its own): what the machine does meanwhile
 * (other tenants of a shared cache, the kernel) is what the pass meets.
 * --thrash-code KIB runs through KIB KiB of code where the data thrash
 * runs (a `ret` on every 64-byte line of an executable mapping, each
 * called): the instruction caches, the branch predictors' and the
 * instruction TLB's entries of the reader's code are then cold too, as
 * after the SQLite questions in mh_bench (a data thrash leaves them: the
 * query path's ~22 KB of code stays in L1I and the ITLB).
 * --thrash-small 1 maps the --thrash buffer in 4 KiB pages (no transparent
 * huge pages): the thrash then also evicts the data TLB's entries and the
 * page-table lines a walk reads, as another program's scattered pages do
 * (stop 44: on the benchmark VM the same questions cost about what they
 * do after the plain thrash, 22-24 against 11-22 us, far from the 91-380
 * us of a memhist pass's first asks after SQLite's: the TLB alone is not
 * what makes those slow; see issue10-stop44.md).
 * --thrash-each 1 moves that thrash before each timed ask: every ask then
 * meets the CPU caches and TLB cold, the reader's own lines too, as a
 * question asked after a pause does (in mh_bench's timed passes after
 * SQLite's, an ask meets its own lines cold, the lines every question
 * reads warmed by the pass's first asks). The last line printed counts
 * the blocks decoded a timed ask (0: every ask answered from the cache).
 * --answers FILE writes every answer of the first way's first pass
 * (binary mh_access records, each query's preceded by its u64 count), so
 * that two builds can be compared with cmp.
 *
 * --spread K (with an existing --qfile): the store is K shifted copies of
 * the trace the queries were drawn on (mh_bench --repeat K --keep); each
 * query's start moves into a copy drawn at random (mh_bench's 10^9 draw).
 * --slow N prints the N queries whose fastest ask over the --reps passes is
 * the slowest (a cost they pay every time, not a stall of the machine).
 *
 * Exit status: 0 done, 1 a failure, 2 bad usage.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "draw.h"
#include "clock.h"
#include "internal.h" /* mh_reader.summary_off, aset_off, idmap_off, apost_off */
#include "memhist.h"
#include "synth.h"


/* A repeated ask: a function of its own so that callgrind can count
 * these alone (--toggle-collect=rep_query). */
__attribute__((noinline)) static int rep_query(mh_reader *r, const mh_query *q,
                                               mh_access *out, size_t max,
                                               size_t *got) {
    return mh_query_run(r, q, out, max, got);
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int usage(const char *why, const char *what) {
    if (why)
        fprintf(stderr, "mh_probe: %s%s%s\n", why, what ? ": " : "", what ? what : "");
    fprintf(stderr,
            "usage: mh_probe [--size N] [--store DIR] [--slice N] [--queries N]\n"
            "                [--reps N] [--max N] [--range BYTES] [--dir fwd|bwd]\n"
            "                [--ops r|w|rw] [--draw near|user|never]\n"
            "                [--summary on|off|both] [--aset on|off|both] [--span on|off|both]\n"
            "                [--union on|off|both]\n"
            "                [--idmap on|off|both|force] [--apost on|off|both]\n"
            "                [--qfile FILE] [--answers FILE] [--cache BYTES]\n"
            "                [--asks CSV --class NAME --qfile FILE]\n"
            "                [--thrash MIB] [--thrash-each 0|1] [--spin MS]\n"
            "                [--thrash-code KIB] [--thrash-small 0|1]\n"
            "                [--slow N] [--spread K]\n");
    return 2;
}

/* Every access of the store at dir, in id order (a real recording). */
static int read_store(const char *dir, mh_access **out, size_t *n) {
    mh_reader *r = NULL;
    mh_cursor *c = NULL;
    mh_query q;
    mh_query_init(&q);
    int rc = mh_reader_open(dir, &r);
    if (rc == MH_OK)
        rc = mh_cursor_open(r, &q, &c);
    size_t cap = 1 << 20, got = 0;
    mh_access *t = malloc(cap * sizeof *t);
    *n = 0;
    if (!t && rc == MH_OK)
        rc = MH_ENOMEM;
    while (rc == MH_OK) {
        if (cap - *n < 65536) {
            mh_access *bigger = realloc(t, 2 * cap * sizeof *t);
            if (!bigger) {
                rc = MH_ENOMEM;
                break;
            }
            t = bigger;
            cap *= 2;
        }
        rc = mh_cursor_next(c, t + *n, 65536, &got);
        if (rc != MH_OK || got == 0)
            break;
        *n += got;
    }
    mh_cursor_close(c);
    mh_reader_close(r);
    if (rc != MH_OK || *n == 0) {
        fprintf(stderr, "mh_probe: reading %s: %s\n", dir,
                rc ? mh_strerror(rc) : "no accesses");
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}

static int number(const char *s, uint64_t *out) {
    char *end = NULL;
    double d = strtod(s, &end); /* 1e7 as well as 10000000 */
    if (!*s || *end || d < 0 || d > 1e18)
        return -1;
    *out = (uint64_t)d;
    return 0;
}

/* The n queries of the first way whose fastest ask (over the reps) is the
 * slowest: a cost each of them pays every time (a stall of the machine
 * comes once), with their median and slowest asks and what they ask. */
static void print_slow(const mh_query *qs, const double *lat, size_t nq, size_t reps,
                       size_t n) {
    double *best = malloc(nq * sizeof *best), *row = malloc(reps * sizeof *row);
    size_t *ix = malloc(nq * sizeof *ix);
    if (!best || !row || !ix) {
        free(best);
        free(row);
        free(ix);
        return;
    }
    for (size_t i = 0; i < nq; i++) {
        best[i] = lat[i];
        for (size_t p = 1; p < reps; p++)
            if (lat[p * nq + i] < best[i])
                best[i] = lat[p * nq + i];
        ix[i] = i;
    }
    for (size_t k = 0; k < n && k < nq; k++) { /* selection: n is small */
        size_t m = k;
        for (size_t j = k + 1; j < nq; j++)
            if (best[ix[j]] > best[ix[m]])
                m = j;
        size_t tmp = ix[k];
        ix[k] = ix[m];
        ix[m] = tmp;
        size_t i = ix[k];
        for (size_t p = 0; p < reps; p++)
            row[p] = lat[p * nq + i];
        qsort(row, reps, sizeof *row, cmp_double);
        const mh_query *q = &qs[i];
        printf("slow %zu: query %zu min %.2f med %.2f max %.2f us; start %" PRIu64
               " [0x%" PRIx64 ", 0x%" PRIx64 "] ops %u %s\n", k + 1, i, row[0],
               row[(reps - 1) / 2], row[reps - 1], q->start, q->addr_first, q->addr_last,
               q->ops, q->direction == MH_FORWARD ? "fwd" : "bwd");
    }
    /* the first asks of each pass (after the thrash, when there is one) */
    for (size_t i = 0; i < 4 && i < nq; i++) {
        for (size_t p = 0; p < reps; p++)
            row[p] = lat[p * nq + i];
        qsort(row, reps, sizeof *row, cmp_double);
        printf("ask %zu of each pass: min %.2f med %.2f max %.2f us\n", i + 1, row[0],
               row[(reps - 1) / 2], row[reps - 1]);
    }
    free(best);
    free(row);
    free(ix);
}

/* --thrash-code: an executable mapping with a `ret` on every 64-byte
 * line (the rest int3), each line called in turn */
typedef struct code_thrash {
    unsigned char *code;
    size_t bytes;
} code_thrash;

static int code_thrash_init(code_thrash *ct, size_t bytes) {
    ct->code = NULL;
    ct->bytes = bytes;
    if (bytes == 0)
        return 0;
#if defined(__x86_64__) || defined(__i386__)
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    memset(m, 0xcc, bytes); /* int3 */
    for (size_t b = 0; b < bytes; b += 64)
        ((unsigned char *)m)[b] = 0xc3; /* ret */
    if (mprotect(m, bytes, PROT_READ | PROT_EXEC) != 0) {
        munmap(m, bytes);
        return -1;
    }
    ct->code = m;
    return 0;
#else
    return -1; /* the ret opcode is x86's */
#endif
}

static void code_thrash_run(const code_thrash *ct) {
    for (size_t b = 0; ct->code && b < ct->bytes; b += 64) {
        void (*fn)(void);
        const unsigned char *at = ct->code + b;
        memcpy(&fn, &at, sizeof fn); /* an object pointer made a function's */
        fn();
    }
}

/* --asks: the questions of class cls that memhist asked in pass 0 of an
 * mh_bench --asks CSV (bench.h MHB_ASKS_HEADER), written to qfile as
 * mh_query records. 0, or 1 with a message. */
static int asks_to_qfile(const char *csv, const char *cls, const char *qfile) {
    FILE *in = fopen(csv, "r");
    if (!in) {
        fprintf(stderr, "mh_probe: %s: cannot open\n", csv);
        return 1;
    }
    FILE *out = fopen(qfile, "wbx");
    if (!out) {
        fprintf(stderr, "mh_probe: %s: cannot create (it must not exist)\n", qfile);
        fclose(in);
        return 1;
    }
    char line[1024];
    size_t n = 0, lineno = 0;
    int bad = 0;
    while (!bad && fgets(line, sizeof line, in)) {
        char name[128], impl[32], kind[16], dir[8];
        size_t pass;
        uint64_t start, a, b;
        unsigned qops;
        if (++lineno == 1)
            continue; /* the header */
        /* the workload, query, us, faults and blocks fields are skipped */
        if (sscanf(line,
                   "\"%*[^\"]\",\"%127[^\"]\",%31[^,],%zu,%*u,%*f,%*d,%*d,%15[^,],%" SCNu64
                   ",%7[^,],%" SCNx64 ",%" SCNx64 ",%u",
                   name, impl, &pass, kind, &start, dir, &a, &b, &qops) != 9) {
            fprintf(stderr, "mh_probe: %s line %zu: not an ask of mh_bench --asks\n", csv,
                    lineno);
            bad = 1;
            break;
        }
        if (strcmp(impl, "memhist") || pass != 0 || strcmp(name, cls))
            continue;
        mh_query q;
        mh_query_init(&q);
        q.start_kind = !strcmp(kind, "id") ? MH_FROM_ID : MH_FROM_TRANSITION;
        q.start = start;
        q.direction = !strcmp(dir, "fwd") ? MH_FORWARD : MH_BACKWARD;
        q.addr_first = a;
        q.addr_last = b;
        q.ops = qops;
        if (fwrite(&q, sizeof q, 1, out) != 1)
            bad = 1;
        n++;
    }
    fclose(in);
    if (fclose(out) != 0)
        bad = 1;
    if (!bad && n == 0) {
        fprintf(stderr, "mh_probe: %s: no memhist ask of class \"%s\"\n", csv, cls);
        bad = 1;
    }
    if (bad)
        remove(qfile);
    return bad;
}

int main(int argc, char **argv) {
    uint64_t size = 10000000, slice = 0, nq = 100, reps = 1, max = 1, range = 8;
    uint64_t cache = MH_READER_CACHE_DEFAULT, thrash = 0, slow = 0, spread = 0, each = 0, spin = 0;
    uint64_t tcode = 0, small = 0;
    const char *store = "/tmp/mh_probe.store";
    unsigned dir = MH_BACKWARD, ops = MH_OPS_WRITE;
    const char *draw = "near", *summary = "on", *aset = "on", *idmap = "on", *apost = "on";
    const char *span = "on", *uni = "on";
    const char *qfile = NULL, *afile = NULL, *asks = NULL, *cls = NULL;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t *num = !strcmp(a, "--size")      ? &size
                        : !strcmp(a, "--slice")   ? &slice
                        : !strcmp(a, "--queries") ? &nq
                        : !strcmp(a, "--reps")    ? &reps
                        : !strcmp(a, "--max")     ? &max
                        : !strcmp(a, "--range")   ? &range
                        : !strcmp(a, "--cache")   ? &cache
                        : !strcmp(a, "--thrash")  ? &thrash
                        : !strcmp(a, "--thrash-each") ? &each
                        : !strcmp(a, "--spin")    ? &spin
                        : !strcmp(a, "--thrash-code") ? &tcode
                        : !strcmp(a, "--thrash-small") ? &small
                        : !strcmp(a, "--slow")    ? &slow
                        : !strcmp(a, "--spread")  ? &spread
                                                  : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(NULL, NULL);
            return 0;
        }
        if (!num && strcmp(a, "--store") && strcmp(a, "--dir") && strcmp(a, "--ops") &&
            strcmp(a, "--draw") && strcmp(a, "--summary") && strcmp(a, "--aset") &&
            strcmp(a, "--idmap") && strcmp(a, "--apost") && strcmp(a, "--span") &&
            strcmp(a, "--union") && strcmp(a, "--qfile") &&
            strcmp(a, "--answers") && strcmp(a, "--asks") && strcmp(a, "--class"))
            return usage("unknown option", a);
        if (!v)
            return usage("missing value", a);
        if (num) {
            if (number(v, num))
                return usage("bad number", v);
        } else if (!strcmp(a, "--store")) {
            store = v;
        } else if (!strcmp(a, "--qfile")) {
            qfile = v;
        } else if (!strcmp(a, "--answers")) {
            afile = v;
        } else if (!strcmp(a, "--asks")) {
            asks = v;
        } else if (!strcmp(a, "--class")) {
            cls = v;
        } else if (!strcmp(a, "--dir")) {
            if (strcmp(v, "fwd") && strcmp(v, "bwd"))
                return usage("--dir is fwd or bwd", v);
            dir = !strcmp(v, "fwd") ? MH_FORWARD : MH_BACKWARD;
        } else if (!strcmp(a, "--ops")) {
            ops = !strcmp(v, "r") ? MH_OPS_READ : !strcmp(v, "w") ? MH_OPS_WRITE
                  : !strcmp(v, "rw") ? MH_OPS_RW : 0;
            if (!ops)
                return usage("--ops is r, w or rw", v);
        } else if (!strcmp(a, "--draw")) {
            if (strcmp(v, "near") && strcmp(v, "user") && strcmp(v, "never"))
                return usage("--draw is near, user or never", v);
            draw = v;
        } else if (!strcmp(a, "--summary")) {
            if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "both"))
                return usage("--summary is on, off or both", v);
            summary = v;
        } else if (!strcmp(a, "--aset")) {
            if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "both"))
                return usage("--aset is on, off or both", v);
            aset = v;
        } else if (!strcmp(a, "--span")) {
            if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "both"))
                return usage("--span is on, off or both", v);
            span = v;
        } else if (!strcmp(a, "--union")) {
            if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "both"))
                return usage("--union is on, off or both", v);
            uni = v;
        } else if (!strcmp(a, "--apost")) {
            if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "both"))
                return usage("--apost is on, off or both", v);
            apost = v;
        } else if (!strcmp(a, "--idmap")) {
            if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "both") &&
                strcmp(v, "force"))
                return usage("--idmap is on, off, both or force", v);
            idmap = v;
        }
    }
    if (!strcmp(summary, "both") + !strcmp(aset, "both") + !strcmp(idmap, "both") +
            !strcmp(apost, "both") + !strcmp(span, "both") + !strcmp(uni, "both") > 1)
        return usage("--summary, --aset, --idmap, --apost, --span and --union: one of them "
                     "both at a time", NULL);
    struct stat st;
    if ((asks != NULL) != (cls != NULL) || (asks && !qfile))
        return usage("--asks and --class go together, with --qfile", NULL);
    if (asks && asks_to_qfile(asks, cls, qfile) != 0)
        return 1;
    /* queries from --qfile: neither the trace nor a draw */
    int load_q = qfile && stat(qfile, &st) == 0 && stat(store, &st) == 0;
    if (load_q)
        size = 0;
    int from_store = size == 0 && stat(store, &st) == 0;
    if (from_store)
        size = 1; /* for the checks below; the store says how many */
    if ((size == 0 && !from_store) || nq == 0 || reps == 0 || max == 0 || max > 100000 || slice > (1u << 30) ||
        (range & (range - 1)) != 0)
        return usage("--size, --queries, --reps, --max (<= 100000) must be > 0, "
                     "--range 0 (whole space) or a power of two", NULL);

    if (load_q) {
        FILE *f = fopen(qfile, "rb");
        long len = -1;
        if (f && fseek(f, 0, SEEK_END) == 0)
            len = ftell(f);
        if (!f || len <= 0 || len % (long)sizeof(mh_query) || fseek(f, 0, SEEK_SET)) {
            fprintf(stderr, "mh_probe: %s: not a query file\n", qfile);
            return 1;
        }
        nq = (uint64_t)len / sizeof(mh_query);
        fclose(f);
    }
    mh_access *t = from_store ? NULL : malloc(size * sizeof *t);
    mh_access *out = malloc(max * sizeof *out);
    mh_query *qs = calloc(nq, sizeof *qs);
    double *lat = malloc(nq * reps * sizeof *lat);
    mh_synth *g = from_store ? NULL : mh_synth_new(1, size, 0);
    if ((!t && !from_store) || !out || !qs || !lat || (!g && !from_store)) {
        fprintf(stderr, "mh_probe: out of memory\n");
        return 1;
    }
    size_t n = 0;
    while (g && n < size) {
        size_t k = mh_synth_next(g, t + n, size - n);
        if (!k)
            break;
        n += k;
    }
    mh_synth_free(g);
    if (from_store && !load_q && read_store(store, &t, &n) != 0)
        return 1;

    if (!from_store && stat(store, &st) != 0) {
        mh_writer_options o;
        mh_writer_options_init(&o);
        if (slice)
            o.slice_accesses = (uint32_t)slice;
        mh_writer *w = NULL;
        int rc = mh_writer_open(store, MH_CREATE, &o, &w);
        double t0 = mhb_now();
        for (size_t i = 0; rc == MH_OK && i < n; i += 65536)
            rc = mh_writer_append_batch(w, t + i, n - i < 65536 ? n - i : 65536, NULL);
        if (w) {
            int rc2 = mh_writer_close(w);
            rc = rc == MH_OK ? rc2 : rc;
        }
        if (rc != MH_OK) {
            fprintf(stderr, "mh_probe: writing %s: %s\n", store, mh_strerror(rc));
            return 1;
        }
        printf("wrote %zu accesses to %s: %.2f M accesses/s\n", n, store,
               (double)n / (mhb_now() - t0) / 1e6);
    }
    mh_reader *r = NULL;
    int rc = mh_reader_open(store, &r);
    if (rc == MH_OK && cache != MH_READER_CACHE_DEFAULT)
        rc = mh_reader_set_cache(r, (size_t)cache);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_probe: %s: %s\n", store, mh_strerror(rc));
        return 1;
    }
    mh_stats stats = {.struct_size = sizeof stats};
    if (mh_reader_stats(r, &stats) != MH_OK || (!load_q && stats.accesses != n)) {
        fprintf(stderr, "mh_probe: %s does not hold the %zu-access trace (another "
                        "--size wrote it?)\n", store, n);
        return 1;
    }

    uint64_t rng = 42;
    mhb_trace_index ix;
    if (load_q) {
        FILE *f = fopen(qfile, "rb");
        if (!f || fread(qs, sizeof *qs, nq, f) != nq) {
            fprintf(stderr, "mh_probe: reading %s failed\n", qfile);
            return 1;
        }
        fclose(f);
        draw = NULL;
        /* a store of K shifted copies of the trace the queries were drawn
         * on (mh_bench --repeat K --keep): each query moved into a copy
         * drawn at random, as mh_bench draws its starts at 10^9 */
        uint64_t tspan = stats.transition_last - stats.transition_first + 1, srng = 7;
        for (size_t i = 0; spread > 1 && i < nq; i++) {
            srng += 0x9E3779B97F4A7C15u;
            uint64_t z = srng;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
            z ^= z >> 31;
            qs[i].start += (z % spread) * (tspan / spread);
        }
    }
    if (draw && strcmp(draw, "near") && mhb_trace_index_make(t, n, &ix) != MH_OK) {
        fprintf(stderr, "mh_probe: out of memory\n");
        return 1;
    }
    for (size_t i = 0; draw && i < nq; i++) {
        if (!strcmp(draw, "near")) {
            mhb_draw_query(t, n, ops, dir, range, &rng, &qs[i]);
        } else if (!strcmp(draw, "user")) {
            mhb_draw_user(t, n, &ix, ops, dir, range, &rng, &qs[i]);
        } else if (!mhb_draw_never(&ix, ops, dir, range ? range : 8, &rng, &qs[i])) {
            fprintf(stderr, "mh_probe: no untouched %llu-byte range\n",
                    (unsigned long long)range);
            return 1;
        }
    }
    if (draw && strcmp(draw, "near"))
        mhb_trace_index_free(&ix);
    if (qfile && !load_q) { /* the draw's queries have no stream list */
        FILE *f = fopen(qfile, "wb");
        if (!f || fwrite(qs, sizeof *qs, nq, f) != nq || fclose(f)) {
            fprintf(stderr, "mh_probe: writing %s failed\n", qfile);
            return 1;
        }
    }
    FILE *af = afile ? fopen(afile, "wb") : NULL;
    if (afile && !af) {
        fprintf(stderr, "mh_probe: cannot write %s\n", afile);
        return 1;
    }
    /* way k: summary_off sum_off[k], aset_off set_off[k] */
    int sum_both = !strcmp(summary, "both"), set_both = !strcmp(aset, "both");
    int idm_both = !strcmp(idmap, "both"), ap_both = !strcmp(apost, "both");
    int sp_both = !strcmp(span, "both"), un_both = !strcmp(uni, "both");
    int both = sum_both || set_both || idm_both || ap_both || sp_both || un_both;
    int un_off[2] = {!strcmp(uni, "off"), un_both || !strcmp(uni, "off")};
    int sp_off[2] = {!strcmp(span, "off"), sp_both || !strcmp(span, "off")};
    int ap_off[2] = {!strcmp(apost, "off"), ap_both || !strcmp(apost, "off")};
    int idm_off[2] = {!strcmp(idmap, "off"), idm_both || !strcmp(idmap, "off")};
    if (!strcmp(idmap, "force")) /* the id path wherever it can be taken */
        idm_off[0] = idm_off[1] = -1;
    int sum_off[2] = {!strcmp(summary, "off"), sum_both || !strcmp(summary, "off")};
    int set_off[2] = {!strcmp(aset, "off"), set_both || !strcmp(aset, "off")};
    int nways = both ? 2 : 1;
    const char *label[2] = {sum_both   ? " (summary on) "
                            : set_both ? " (aset on) "
                            : idm_both ? " (idmap on) "
                            : ap_both  ? " (apost on) "
                            : sp_both  ? " (span on)  "
                            : un_both  ? " (union on) "
                                       : "",
                            sum_both   ? " (summary off)"
                            : set_both ? " (aset off)"
                            : ap_both  ? " (apost off)"
                            : sp_both  ? " (span off) "
                            : un_both  ? " (union off)"
                                       : " (idmap off)"};
    size_t tbytes = (size_t)thrash << 20;
    /* --thrash-small 1: the buffer in 4 KiB pages (no transparent huge
     * pages), so that the thrash also evicts the data TLB's entries and
     * the page-table lines a walk reads, as another program's pages do */
    unsigned char *tbuf = NULL;
    if (tbytes && small) {
        void *m = mmap(NULL, tbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (m != MAP_FAILED) {
            (void)madvise(m, tbytes, MADV_NOHUGEPAGE);
            tbuf = m;
        }
    } else if (tbytes) {
        tbuf = malloc(tbytes);
    }
    if (tbytes && !tbuf) {
        fprintf(stderr, "mh_probe: out of memory for --thrash\n");
        return 1;
    }
    code_thrash ct;
    if (code_thrash_init(&ct, (size_t)tcode << 10) != 0) {
        fprintf(stderr, "mh_probe: cannot map %" PRIu64 " KiB of code for --thrash-code\n",
                tcode);
        return 1;
    }
    mh_access *out2 = malloc(max * sizeof *out2);
    double *lat2 = malloc(nq * reps * sizeof *lat2);
    if (!out2 || !lat2) {
        fprintf(stderr, "mh_probe: out of memory\n");
        return 1;
    }
    size_t got = 0, got2 = 0, results = 0;
    /* the warm pass: each question's first ask, timed with its minor page
     * faults (first touches of the store's mapping in this process and of
     * the fresh memory the reader's cache fills: most of them) */
    double *first = malloc(nq * sizeof *first);
    long flt = 0, f0 = mhb_minor_faults();
    if (!first) {
        fprintf(stderr, "mh_probe: out of memory\n");
        return 1;
    }
    for (int k = 0; k < nways; k++) {
        r->summary_off = sum_off[k];
        r->aset_off = set_off[k];
        r->idmap_off = idm_off[k];
        r->apost_off = ap_off[k];
        r->span_off = sp_off[k];
        r->union_off = un_off[k];
        for (size_t i = 0; rc == MH_OK && i < nq; i++) {
            double a = mhb_now();
            rc = mh_query_run(r, &qs[i], out, max, &got);
            if (k == 0)
                first[i] = (mhb_now() - a) * 1e6;
        }
        if (k == 0)
            flt = mhb_minor_faults() - f0;
    }
    /* both ways: which goes first alternates, so neither always finds the
     * blocks the other just decoded */
    uint64_t dec0 = atomic_load(&r->blocks_decoded);
    for (size_t p = 0; rc == MH_OK && p < reps; p++) {
        for (size_t b = 0; !each && b < tbytes; b += 64)
            tbuf[b] = (unsigned char)(b + p);
        if (!each)
            code_thrash_run(&ct);
        for (double t0 = mhb_now(); spin && (mhb_now() - t0) * 1e3 < (double)spin;)
            ;
        for (size_t i = 0; rc == MH_OK && i < nq; i++) {
            size_t gots[2] = {0, 0};
            for (int j = 0; j < nways && rc == MH_OK; j++) {
                for (size_t b = 0; each && b < tbytes; b += 64)
                    tbuf[b] = (unsigned char)(b + p + i);
                if (each)
                    code_thrash_run(&ct);
                int k = both ? (int)((i + p + (size_t)j) % 2) : 0;
                r->summary_off = sum_off[k];
                r->aset_off = set_off[k];
                r->idmap_off = idm_off[k];
                r->apost_off = ap_off[k];
                r->span_off = sp_off[k];
                r->union_off = un_off[k];
                double a = mhb_now();
                rc = rep_query(r, &qs[i], k ? out2 : out, max, &gots[k]);
                (k ? lat2 : lat)[p * nq + i] = (mhb_now() - a) * 1e6;
            }
            got = gots[0];
            got2 = gots[1];
            results += got;
            if (af && p == 0) {
                uint64_t g64 = got;
                if (fwrite(&g64, sizeof g64, 1, af) != 1 ||
                    fwrite(out, sizeof *out, got, af) != got) {
                    fprintf(stderr, "mh_probe: writing %s failed\n", afile);
                    return 1;
                }
            }
            if (both && rc == MH_OK &&
                (got != got2 || memcmp(out, out2, got * sizeof *out))) {
                fprintf(stderr, "mh_probe: query %zu: %zu accesses with the %s, "
                                "%zu without, or different ones\n", i, got,
                        sum_both ? "summary" : set_both ? "address set"
                                   : ap_both ? "address postings" : "id map", got2);
                return 1;
            }
        }
    }
    uint64_t decoded = atomic_load(&r->blocks_decoded) - dec0;
    mh_reader_close(r);
    if (af && fclose(af) != 0) {
        fprintf(stderr, "mh_probe: writing %s failed\n", afile);
        return 1;
    }
    if (rc != MH_OK) {
        fprintf(stderr, "mh_probe: query: %s\n", mh_strerror(rc));
        return 1;
    }
    qsort(first, nq, sizeof *first, cmp_double);
    printf("%zu queries, first ask%s: p50 %.2f us, p99 %.2f us, max %.2f us, "
           "%.2f minor faults a question\n", (size_t)nq, !both ? "" : label[0],
           first[(nq - 1) / 2], first[(nq * 99 + 99) / 100 - 1], first[nq - 1],
           (double)flt / (double)nq);
    free(first);
    if (slow)
        print_slow(qs, lat, (size_t)nq, (size_t)reps, (size_t)slow);
    size_t m = nq * reps;
    for (int k = 0; k < nways; k++) {
        double *l = k ? lat2 : lat;
        qsort(l, m, sizeof *l, cmp_double);
        printf("%zu queries x %llu%s: p50 %.2f us, p99 %.2f us, max %.2f us, "
               "%.2f results\n", (size_t)nq, (unsigned long long)reps,
               !both ? "" : label[k],
               l[(m - 1) / 2], l[(m * 99 + 99) / 100 - 1], l[m - 1],
               (double)results / (double)m);
    }
    printf("blocks decoded a timed ask: %.3f\n", (double)decoded / (double)(m * (size_t)nways));
    if (tbuf && small)
        munmap(tbuf, tbytes);
    else
        free(tbuf);
    free(out2);
    free(lat2);
    free(t);
    free(out);
    free(qs);
    free(lat);
    return 0;
}
