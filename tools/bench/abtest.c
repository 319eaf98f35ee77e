/*
 * abtest.c - mh_abtest: two builds of libmemhist in one process, on the same
 * workloads, each query run on one then the other, so that whatever else the
 * machine does hits both alike (separate processes, as compare_versions.sh
 * runs them, differ by more than the 10 % issue 9 judges: one build against
 * itself showed classes 1.1-1.6x "slower").
 *
 *   mh_abtest BASE_LIB NEW_LIB [--sizes N,..] [--lackey FILE].. [--store DIR]..
 *             [--queries N] [--reps R] [--ingest-runs N] [--seed N] [--dir DIR]
 *             [--thrash MIB] [--classes LIST] [--streams 0|1]
 *
 * BASE_LIB and NEW_LIB are libmemhist.so.1 files (e.g. /tmp/base/build's, a
 * format 1.0 build, and a 2.0 one); each is dlopen'ed with RTLD_LOCAL |
 * RTLD_DEEPBIND, so each calls its own code. Only the 1.0 API is used
 * through them (writer open / append_batch / close, reader open / close,
 * query_run and cursor open / next / close with a 56-byte-compatible
 * mh_query), so any 1.x build works.
 * The traces are loaded with this program's own (static) library: pcs are
 * cleared (a 1.x store cannot take them), one stream; with --streams 1 a
 * trace keeps its streams (both builds must be 1.2 or later: they declare
 * them, mh_writer_stream_declare) and every class gets its one-stream twin
 * (mh_bench's " 1str" classes: each query restricted to a stream drawn
 * uniformly).
 *
 * Per workload: each library writes the trace (default options: background
 * threads on), `--ingest-runs` times alternately, best and median rate; the
 * stores' bytes per access; the warm open (median of 9, alternated); a
 * fresh reader's first point question (open, one query: it makes the
 * reader's first query context) and a cursor's open, first batch and
 * close on an open reader (median of 101 each, alternated); then
 * every query class of mh_bench (bench_query.c, user distribution): a warm
 * pass comparing every answer of the two (and the first 2 queries of each
 * class with the brute-force scan), then `--reps` timed passes, query by
 * query, the order of the two flipped at each query and each pass; a
 * query's time is its best of the passes, and the class's p50 / p99 are
 * over those. A class is judged on the paired median: the median over its
 * queries of (new time / base time) of the same query, which the spread
 * between a class's queries does not blur. With --thrash MIB the timed
 * passes are the benchmark's regime instead: one build's pass over a
 * class's queries right after MIB MiB were written over (the caches then
 * hold nothing of the pass before, as after SQLite's passes in mh_bench),
 * then the other's, the first flipped at each pass, and a query's time is
 * its median over the passes; a warm A/B does not show what a question
 * costs cold. --classes LIST times only the classes whose name contains
 * one of LIST's comma-separated parts (the table shows only those).
 * Output: Markdown, one table per
 * workload, and issue 9's verdict (no class more than 10 % slower, no more
 * than +0.05 bytes per access). Exit 1 on a mismatch or failure, 2 on bad
 * usage.
 */
#include "bench.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct lib {
    const char *path;
    const char *name; /* "base", "new" */
    void *dl;
    /* the _ex opens and errmsg: a failure's detail (every 1.x has them) */
    int (*writer_open_ex)(const char *, unsigned, const mh_writer_options *, mh_writer **,
                          char *, size_t);
    size_t (*writer_errmsg)(const mh_writer *, char *, size_t);
    int (*reader_open_ex)(const char *, const mh_reader_options *, mh_reader **, char *,
                          size_t);
    int (*append_batch)(mh_writer *, const mh_access *, size_t, size_t *);
    int (*stream_declare)(mh_writer *, const mh_stream_info *);
    int (*writer_close)(mh_writer *);
    int (*reader_open)(const char *, mh_reader **);
    void (*reader_close)(mh_reader *);
    int (*query_run)(const mh_reader *, const mh_query *, mh_access *, size_t, size_t *);
    int (*cursor_open)(const mh_reader *, const mh_query *, mh_cursor **);
    int (*cursor_next)(mh_cursor *, mh_access *, size_t, size_t *);
    void (*cursor_close)(mh_cursor *);
    const char *(*version)(void);
    char store[4096];
    mh_reader *r;
} lib;

static int lib_load(lib *l)
{
    l->dl = dlopen(l->path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (l->dl == NULL) {
        fprintf(stderr, "mh_abtest: %s\n", dlerror());
        return -1;
    }
#define SYM(field, name)                                                         \
    do {                                                                         \
        *(void **)&l->field = dlsym(l->dl, name);                                \
        if (l->field == NULL) {                                                  \
            fprintf(stderr, "mh_abtest: %s: no %s\n", l->path, name);            \
            return -1;                                                           \
        }                                                                        \
    } while (0)
    SYM(writer_open_ex, "mh_writer_open_ex");
    SYM(writer_errmsg, "mh_writer_errmsg");
    SYM(reader_open_ex, "mh_reader_open_ex");
    SYM(append_batch, "mh_writer_append_batch");
    /* 1.2 on (--streams only): NULL in an older build */
    *(void **)&l->stream_declare = dlsym(l->dl, "mh_writer_stream_declare");
    SYM(writer_close, "mh_writer_close");
    SYM(reader_open, "mh_reader_open");
    SYM(reader_close, "mh_reader_close");
    SYM(query_run, "mh_query_run");
    SYM(cursor_open, "mh_cursor_open");
    SYM(cursor_next, "mh_cursor_next");
    SYM(cursor_close, "mh_cursor_close");
    SYM(version, "mh_version_string");
#undef SYM
    return 0;
}

static int lib_run(void *h, const mh_query *q, mh_access *out, size_t max, size_t *n)
{
    const lib *l = h;
    return l->query_run(l->r, q, out, max, n);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Seconds to write t with l into l->store (a new store). */
static int ingest(lib *l, const mhb_trace *t, double *secs)
{
    mhb_remove_path(l->store);
    mh_writer *w = NULL;
    char detail[512] = "";
    double t0 = mhb_now();
    int rc = l->writer_open_ex(l->store, MH_CREATE, NULL, &w, detail, sizeof detail);
    /* a multi-stream trace's streams (a --store of several) */
    for (size_t i = 0; rc == MH_OK && t->nsids > 1 && i < t->ndecl; i++)
        rc = l->stream_declare ? l->stream_declare(w, &t->decl[i]) : MH_EINVAL;
    for (size_t i = 0; rc == MH_OK && i < t->n; i += 65536) {
        size_t k = t->n - i < 65536 ? t->n - i : 65536;
        rc = l->append_batch(w, t->a + i, k, NULL);
    }
    if (w != NULL) {
        if (rc != MH_OK)
            l->writer_errmsg(w, detail, sizeof detail);
        int rc2 = l->writer_close(w);
        if (rc == MH_OK)
            rc = rc2;
    }
    *secs = mhb_now() - t0;
    if (rc != MH_OK)
        fprintf(stderr, "mh_abtest: %s: writing %s: %s\n", l->name, l->store,
                detail[0] ? detail : mh_strerror(rc));
    return rc;
}

typedef struct opts {
    uint64_t sizes[8];
    size_t nsizes;
    const char *lackey[8], *store[8];
    size_t nlackey, nstore;
    size_t queries;
    unsigned reps, ingest_runs;
    uint64_t seed;
    const char *dir;
    size_t thrash; /* --thrash: MiB written over before each pass, 0 none */
    const char *only; /* --classes: comma-separated parts of class names */
    int streams;      /* --streams 1: keep the trace's streams, add the twins */
} opts;

/* --classes: does class name contain one of list's comma-separated parts? */
static int class_wanted(const char *list, const char *name)
{
    if (!list)
        return 1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save))
        if (*s && strstr(name, s))
            return 1;
    return 0;
}

/* --thrash: one byte of every 64 written over bytes of buf (the CPU caches
 * then hold none of what a pass before left, as after SQLite's passes in
 * mh_bench); the value changes each time so no write is redundant. */
static void thrash_run(unsigned char *buf, size_t bytes, unsigned round)
{
    for (size_t b = 0; b < bytes; b += 64)
        buf[b] = (unsigned char)(b + round);
}

/* The median of n values (reorders v). */
static double median_of(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) /* n is a few passes: insertion sort */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int run(const opts *o, lib *L, const char *name, mhb_trace *t, int *met)
{
    mhb_trace_strip_pc(t);
    if (!o->streams) {
        for (size_t i = 0; i < t->n; i++)
            t->a[i].stream = 0;
        t->nsids = t->nsids ? 1 : 0;
    }
    for (int k = 0; k < 2; k++)
        snprintf(L[k].store, sizeof L[k].store, "%s/%s.%s.mh", o->dir, name, L[k].name);
    /* ingest, alternating which library goes first */
    double secs[2][99];
    for (unsigned r = 0; r < o->ingest_runs; r++)
        for (int j = 0; j < 2; j++) {
            int k = (int)((r + (unsigned)j) % 2);
            fprintf(stderr, "mh_abtest: %s: ingest %u, %s\n", name, r + 1, L[k].name);
            if (ingest(&L[k], t, &secs[k][r]) != MH_OK)
                return 1;
        }
    double best[2], med[2], bpa[2], open_ms[2];
    for (int k = 0; k < 2; k++) {
        qsort(secs[k], o->ingest_runs, sizeof secs[k][0], cmp_d);
        best[k] = (double)t->n / secs[k][0];
        med[k] = (double)t->n / secs[k][o->ingest_runs / 2];
        bpa[k] = (double)mhb_path_bytes(L[k].store) / (double)t->n;
    }
    double ot[2][9];
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 2; j++) {
            int k = (i + j) % 2;
            mh_reader *r = NULL;
            char detail[512] = ""; /* mh_reader_open is this with no buffer */
            double t0 = mhb_now();
            int rc = L[k].reader_open_ex(L[k].store, NULL, &r, detail, sizeof detail);
            ot[k][i] = (mhb_now() - t0) * 1e3;
            L[k].reader_close(r);
            if (rc != MH_OK) {
                fprintf(stderr, "mh_abtest: %s: open: %s\n", L[k].name,
                        detail[0] ? detail : mh_strerror(rc));
                return 1;
            }
        }
    /* a fresh reader's first question (open, one point query, close: the
     * query makes the reader's first context), and a cursor's open, first
     * batch and close on an open reader (each cursor makes a context):
     * median of FIRST_RUNS, alternated */
    enum { FIRST_RUNS = 101 };
    double fq[2][FIRST_RUNS], cu[2][FIRST_RUNS], first_us[2], cursor_us[2];
    mh_query pq;
    mh_query_init(&pq);
    pq.ops = MH_OPS_ALL;
    pq.addr_first = t->n ? t->a[t->n / 2].physical : 0;
    pq.addr_last = pq.addr_first + 7;
    pq.start = t->n ? t->a[t->n / 3].transition : 0;
    for (int i = 0; i < FIRST_RUNS; i++)
        for (int j = 0; j < 2; j++) {
            int k = (i + j) % 2;
            mh_reader *r = NULL;
            mh_access one;
            size_t n1 = 0;
            int rc = L[k].reader_open(L[k].store, &r);
            double t0 = mhb_now();
            if (rc == MH_OK)
                rc = L[k].query_run(r, &pq, &one, 1, &n1);
            fq[k][i] = (mhb_now() - t0) * 1e6;
            mh_cursor *cur = NULL;
            t0 = mhb_now();
            if (rc == MH_OK)
                rc = L[k].cursor_open(r, &pq, &cur);
            if (rc == MH_OK)
                rc = L[k].cursor_next(cur, &one, 1, &n1);
            if (cur)
                L[k].cursor_close(cur);
            cu[k][i] = (mhb_now() - t0) * 1e6;
            if (r)
                L[k].reader_close(r);
            if (rc != MH_OK) {
                fprintf(stderr, "mh_abtest: %s: first question / cursor: %s\n", L[k].name,
                        mh_strerror(rc));
                return 1;
            }
        }
    for (int k = 0; k < 2; k++) {
        qsort(ot[k], 9, sizeof ot[k][0], cmp_d);
        open_ms[k] = ot[k][4];
        qsort(fq[k], FIRST_RUNS, sizeof fq[k][0], cmp_d);
        qsort(cu[k], FIRST_RUNS, sizeof cu[k][0], cmp_d);
        first_us[k] = fq[k][FIRST_RUNS / 2];
        cursor_us[k] = cu[k][FIRST_RUNS / 2];
        if (L[k].reader_open(L[k].store, &L[k].r) != MH_OK)
            return 1;
    }
    mhb_class *c = NULL;
    size_t nc = 0;
    fprintf(stderr, "mh_abtest: %s: drawing the queries\n", name);
    /* a multi-stream trace adds the one-stream twins (mh_bench's " 1str") */
    if (mhb_classes_make(t->a, t->n, o->queries, o->seed, MHB_DIST_USER, t->sids, t->nsids,
                         &c, &nc) != MH_OK)
        return 1;
    mhb_oracle_ctx oc = {t->a, t->n, 1, 0};
    mhb_impl impl[3] = {
        {"base", lib_run, &L[0], MHB_MH, SIZE_MAX, 1, NULL},
        {"new", lib_run, &L[1], MHB_SQL, SIZE_MAX, 1, NULL},
        {"scan", mhb_oracle_run, &oc, -1, 2, 1, NULL},
    };
    uint64_t compared = 0, mismatches = 0;
    fprintf(stderr, "mh_abtest: %s: warm pass, answers compared\n", name);
    int rc = mhb_classes_bench(c, nc, impl, 3, 0, 0, 0, NULL, 1e9, &compared, &mismatches);
    mh_access *got = malloc(MHB_OUT_CAP * sizeof *got);
    double *us[2] = {malloc(o->queries * sizeof(double)), malloc(o->queries * sizeof(double))};
    double *ratio = malloc(o->queries * sizeof(double));
    double *paired = calloc(nc ? nc : 1, sizeof(double));
    if (!got || !us[0] || !us[1] || !ratio || !paired)
        rc = MH_ENOMEM;
    size_t tbytes = o->thrash << 20;
    unsigned char *tbuf = tbytes ? malloc(tbytes) : NULL;
    double *per = tbytes ? malloc(2 * (size_t)o->reps * o->queries * sizeof(double)) : NULL;
    if (tbytes && (!tbuf || !per))
        rc = MH_ENOMEM;
    fprintf(stderr, "mh_abtest: %s: %u timed passes%s\n", name, o->reps,
            tbytes ? ", each a class's queries after a thrash" : "");
    for (size_t x = 0; x < nc && rc == MH_OK; x++) {
        if (!class_wanted(o->only, c[x].name))
            continue;
        for (size_t i = 0; i < c[x].nq; i++)
            us[0][i] = us[1][i] = 1e300;
        if (tbytes) {
            /* the benchmark's regime: a pass of one build over the class's
             * queries after the caches were written over, then the other
             * build's (which goes first flips at each pass); a query's
             * time is its median over the passes (the best would be a
             * pass the thrash happened to spare) */
            size_t nq = c[x].nq;
            for (unsigned p = 0; p < o->reps && rc == MH_OK; p++)
                for (int j = 0; j < 2 && rc == MH_OK; j++) {
                    int k = (int)((p + (unsigned)j) % 2);
                    thrash_run(tbuf, tbytes, 2 * p + (unsigned)j);
                    for (size_t i = 0; i < nq && rc == MH_OK; i++) {
                        size_t n = 0;
                        double t0 = mhb_now();
                        rc = mhb_run_one(&impl[k], &c[x], i, got, &n);
                        per[((size_t)k * o->reps + p) * nq + i] = (mhb_now() - t0) * 1e6;
                    }
                }
            double col[100];
            for (int k = 0; k < 2 && rc == MH_OK; k++)
                for (size_t i = 0; i < nq; i++) {
                    for (unsigned p = 0; p < o->reps; p++)
                        col[p] = per[((size_t)k * o->reps + p) * nq + i];
                    us[k][i] = median_of(col, o->reps);
                }
        }
        for (unsigned p = 0; !tbytes && p < o->reps && rc == MH_OK; p++)
            for (size_t i = 0; i < c[x].nq && rc == MH_OK; i++)
                for (int j = 0; j < 2 && rc == MH_OK; j++) {
                    int k = (int)((p + i + (size_t)j) % 2);
                    size_t n = 0;
                    double t0 = mhb_now();
                    rc = mhb_run_one(&impl[k], &c[x], i, got, &n);
                    double dt = (mhb_now() - t0) * 1e6;
                    if (dt < us[k][i])
                        us[k][i] = dt;
                }
        /* paired: each query's new / base, the median of those (the two
         * columns' p50s are over different orders of the same queries) */
        for (size_t i = 0; i < c[x].nq && rc == MH_OK; i++)
            ratio[i] = us[1][i] / (us[0][i] > 0 ? us[0][i] : 1e-9);
        if (rc == MH_OK && c[x].nq > 0) {
            qsort(ratio, c[x].nq, sizeof *ratio, cmp_d);
            paired[x] = ratio[(c[x].nq - 1) / 2];
        }
        for (int k = 0; k < 2 && rc == MH_OK; k++) {
            mhb_summarise(us[k], c[x].nq, &c[x].lat[k]);
            c[x].has_lat[k] = 1;
        }
    }
    free(ratio);
    free(got);
    free(tbuf);
    free(per);
    free(us[0]);
    free(us[1]);
    for (int k = 0; k < 2; k++) {
        L[k].reader_close(L[k].r);
        L[k].r = NULL;
    }
    if (rc != MH_OK) {
        fprintf(stderr, "mh_abtest: %s: %s\n", name, mh_strerror(rc));
        mhb_classes_free(c, nc);
        free(paired);
        return 1;
    }
    printf("### %s: %zu accesses (pc cleared), A/B in one process\n\n", name, t->n);
    printf("| figure | base | new | new / base |\n|---|---:|---:|---:|\n");
    printf("| ingest accesses/s, best of %u | %.2f M | %.2f M | %.2fx |\n", o->ingest_runs,
           best[0] / 1e6, best[1] / 1e6, best[1] / best[0]);
    printf("| ingest accesses/s, median of %u | %.2f M | %.2f M | %.2fx |\n", o->ingest_runs,
           med[0] / 1e6, med[1] / 1e6, med[1] / med[0]);
    printf("| bytes per access | %.4f | %.4f | %+.4f B |\n", bpa[0], bpa[1], bpa[1] - bpa[0]);
    printf("| a fresh reader's first point question, us, median of %d | %.1f | %.1f | %.2fx |\n",
           FIRST_RUNS, first_us[0], first_us[1], first_us[1] / first_us[0]);
    printf("| cursor open + first batch + close (the same question), us, median of %d | %.1f | "
           "%.1f | %.2fx |\n", FIRST_RUNS, cursor_us[0], cursor_us[1], cursor_us[1] / cursor_us[0]);
    printf("| open (warm), ms, median of 9 | %.3f | %.3f | %.2fx |\n\n", open_ms[0],
           open_ms[1], open_ms[1] / open_ms[0]);
    printf("| class (us, %s of %u passes per query%s) | queries | results | base p50 / p99 | "
           "new p50 / p99 | new / base: p50 | p99 | paired median |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|\n",
           o->thrash ? "median" : "best", o->reps, o->thrash ? ", each after a thrash" : "");
    size_t slow = 0, slow50 = 0, slow99 = 0, timed = 0;
    char list[4096] = "";
    for (size_t x = 0; x < nc; x++) {
        if (!class_wanted(o->only, c[x].name))
            continue;
        timed++;
        double r50 = c[x].lat[1].p50 / (c[x].lat[0].p50 > 0 ? c[x].lat[0].p50 : 1e-9);
        double r99 = c[x].lat[1].p99 / (c[x].lat[0].p99 > 0 ? c[x].lat[0].p99 : 1e-9);
        /* judged on the paired median: the same query on both, best of the
         * passes, is what "slower" means for a class */
        if (paired[x] > 1.10) {
            slow++;
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s %.2fx", slow > 1 ? ", " : "",
                     c[x].name, paired[x]);
        }
        slow50 += r50 > 1.10;
        slow99 += r99 > 1.10;
        printf("| %s | %zu | %.1f | %.2f / %.2f | %.2f / %.2f | %.2fx | %.2fx | %.2fx%s |\n",
               c[x].name, c[x].nq, c[x].mean_results, c[x].lat[0].p50, c[x].lat[0].p99,
               c[x].lat[1].p50, c[x].lat[1].p99, r50, r99, paired[x],
               paired[x] > 1.10 ? " **slower**" : "");
    }
    free(paired);
    int ok = slow == 0 && bpa[1] - bpa[0] <= 0.05 && mismatches == 0;
    printf("\nIssue 9 on %s: %zu of %zu classes more than 10 %% slower (paired median)%s%s; "
           "by the classes' p50 %zu, p99 %zu; bytes per access %+.4f (limit +0.05); "
           "answers compared %" PRIu64 ", mismatches %" PRIu64 ": %s\n\n",
           name, slow, timed, slow ? ": " : "", list, slow50, slow99, bpa[1] - bpa[0], compared,
           mismatches, ok ? "met" : "**missed**");
    fflush(stdout);
    *met &= ok;
    mhb_classes_free(c, nc);
    for (int k = 0; k < 2; k++)
        mhb_remove_path(L[k].store);
    return mismatches ? 1 : 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: mh_abtest BASE_LIB NEW_LIB [--sizes N,..] [--lackey FILE]..\n"
                    "                 [--store DIR].. [--queries N] [--reps R]\n"
                    "                 [--ingest-runs N] [--seed N] [--dir DIR]\n"
                    "                 [--thrash MIB] [--classes LIST] [--streams 0|1]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    lib L[2];
    memset(L, 0, sizeof L);
    L[0].path = argv[1];
    L[0].name = "base";
    L[1].path = argv[2];
    L[1].name = "new";
    opts o;
    memset(&o, 0, sizeof o);
    o.queries = 100;
    o.reps = 5;
    o.ingest_runs = 3;
    o.seed = 1;
    o.dir = "/tmp";
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL)
            return usage();
        i++;
        char *end;
        if (!strcmp(a, "--sizes")) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *save = NULL, *s = strtok_r(buf, ",", &save); s;
                 s = strtok_r(NULL, ",", &save)) {
                double d = strtod(s, &end);
                if (*end || d < 1 || d > 1e10 || o.nsizes == 8)
                    return usage();
                o.sizes[o.nsizes++] = (uint64_t)d;
            }
        } else if (!strcmp(a, "--lackey") && o.nlackey < 8) {
            o.lackey[o.nlackey++] = v;
        } else if (!strcmp(a, "--store") && o.nstore < 8) {
            o.store[o.nstore++] = v;
        } else if (!strcmp(a, "--queries")) {
            o.queries = (size_t)strtoul(v, &end, 10);
            if (*end || o.queries == 0 || o.queries > 100000)
                return usage();
        } else if (!strcmp(a, "--reps")) {
            o.reps = (unsigned)strtoul(v, &end, 10);
            if (*end || o.reps == 0 || o.reps > 100)
                return usage();
        } else if (!strcmp(a, "--ingest-runs")) {
            o.ingest_runs = (unsigned)strtoul(v, &end, 10);
            if (*end || o.ingest_runs == 0 || o.ingest_runs > 99)
                return usage();
        } else if (!strcmp(a, "--seed")) {
            o.seed = strtoull(v, &end, 10);
            if (*end)
                return usage();
        } else if (!strcmp(a, "--dir")) {
            o.dir = v;
        } else if (!strcmp(a, "--thrash")) {
            o.thrash = (size_t)strtoul(v, &end, 10);
            if (*end || o.thrash > 4096)
                return usage();
        } else if (!strcmp(a, "--streams")) {
            o.streams = (int)strtoul(v, &end, 10);
            if (*end || o.streams > 1)
                return usage();
        } else if (!strcmp(a, "--classes")) {
            o.only = v;
        } else {
            return usage();
        }
    }
    if (lib_load(&L[0]) || lib_load(&L[1]))
        return 1;
    printf("mh_abtest: base %s (%s), new %s (%s)\n\n", L[0].path, L[0].version(), L[1].path,
           L[1].version());
    int failed = 0, met = 1;
    size_t nw = o.nsizes + o.nlackey + o.nstore;
    for (size_t w = 0; w < nw && !failed; w++) {
        mhb_trace t;
        memset(&t, 0, sizeof t);
        char name[256];
        int rc;
        if (w < o.nsizes) {
            snprintf(name, sizeof name, "synthetic-%" PRIu64, o.sizes[w]);
            rc = mhb_load_synth(o.seed, o.sizes[w], &t);
        } else {
            const char *p = w < o.nsizes + o.nlackey ? o.lackey[w - o.nsizes]
                                                     : o.store[w - o.nsizes - o.nlackey];
            const char *b = strrchr(p, '/');
            snprintf(name, sizeof name, "%s-%s", w < o.nsizes + o.nlackey ? "lackey" : "store",
                     b && b[1] ? b + 1 : p);
            rc = w < o.nsizes + o.nlackey ? mhb_load_lackey(p, &t) : mhb_load_store(p, &t);
        }
        if (rc != MH_OK || t.n == 0) {
            fprintf(stderr, "mh_abtest: %s: cannot load: %s\n", name, mh_strerror(rc));
            failed = 1;
        } else {
            failed = run(&o, L, name, &t, &met);
        }
        mhb_trace_free(&t);
    }
    printf("Issue 9 (single-stream speed and size, A/B): %s\n",
           failed ? "not judged (failure)" : met ? "met" : "**missed**");
    return failed;
}
