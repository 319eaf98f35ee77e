/*
 * bench.c - mh_bench: memhist against the SQLite design it replaces, side by
 * side on the same traces, with every answer compared (see README.md).
 *
 * Each workload (a synthetic trace of a given size, or a real lackey trace)
 * is loaded into memory first, so parsing and generation are never timed.
 * Writers run in forked children (peak memory is then theirs alone); the
 * reader-memory children run the whole query set once; the parent measures
 * open times and query latencies and compares every answer.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "internal.h" /* mh_reader.blocks_decoded, for --asks */
#include "sqlite_baseline.h"

typedef struct opts {
    uint64_t sizes[16];
    size_t nsizes;
    const char *lackey[8]; /* --lackey, once per trace */
    size_t nlackey;
    uint64_t sqlite_max;
    size_t queries;
    const char *json;
    int quick;
    const char *dir;
    uint64_t seed;
    size_t batch;
    double budget;
    long oracle; /* queries per class checked by brute force; -1 = auto */
    int keep;
    unsigned ingest_runs; /* memhist ingests per mode; the median is kept */
    int dist;             /* enum mhb_dist */
    int sqlite_design;    /* also the SQLite store with the design's defaults */
    int cold;             /* cold figures */
    int pin;              /* stores pinned in the page cache for the queries */
    uint64_t repeat;      /* each --lackey trace as this many shifted copies */
    const char *store[8]; /* --store: existing stores' accesses as traces */
    size_t nstore;
    uint32_t threads[8];  /* --threads: synthetic multi-stream workloads */
    size_t nthreads;
    int no_pc;            /* --no-pc: has_pc cleared on every trace */
    unsigned producer_threads; /* at most this many producer threads */
    uint64_t threads_total;
    int ingest_only;      /* --ingest-only: the memhist ingest (bg on) alone */
    unsigned timed_passes; /* --timed-passes: timed passes a class */
    int turns_impl;        /* --turns impl */
    int timed_set;         /* --timed-passes given: --quick keeps it */
    int faults;           /* --faults: minor page faults of each timed ask */
    const char *classes;  /* --classes: only the classes named (substrings) */
    const char *asks;     /* --asks: every timed ask as a CSV row */
    uint64_t cache;       /* --cache: every memhist reader's cache bytes */
    FILE *asks_f;         /* its stream, opened by main */
} opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mh_bench [--sizes N[,N...]] [--lackey FILE] [--sqlite-max N]\n"
            "                [--queries N] [--json FILE] [--dir DIR] [--seed N]\n"
            "                [--batch N] [--budget S] [--oracle N] [--ingest-runs N]\n"
            "                [--dist user|near] [--no-sqlite-design] [--no-cold] [--no-pin]\n"
            "                [--repeat K] [--keep] [--quick] [--store DIR]\n"
            "                [--threads K[,K...]] [--threads-total N] [--no-pc]\n"
            "                [--ingest-only] [--timed-passes N] [--faults]\n"
            "                [--classes LIST] [--asks FILE] [--cache BYTES]\n"
            "  --sizes       synthetic trace sizes (1000000, 1e6; default 1e6 unless\n"
            "                --lackey is given)\n"
            "  --lackey      a valgrind lackey trace (record_real_traces.sh makes\n"
            "                three); repeat the option for several (at most 8)\n"
            "  --sqlite-max  skip SQLite on workloads above N accesses (shown as -)\n"
            "  --queries     queries per class (default 100)\n"
            "  --json        also write the figures as JSON\n"
            "  --dir         where stores are written (default a new /tmp/mh_bench.*)\n"
            "  --seed        seed of the synthetic traces and the queries (default 1)\n"
            "  --batch       accesses per append batch (default 65536)\n"
            "  --budget      seconds one class may take per implementation and pass\n"
            "                (default 5): a slower class keeps fewer queries\n"
            "  --oracle      check the first N queries of each class against a\n"
            "                brute-force scan of the trace (default: 2 when SQLite\n"
            "                is skipped, else 0; --quick: all), asked before the\n"
            "                class's warm pass so that no timed pass follows it\n"
            "  --timed-passes timed passes of each class after its warm pass\n"
            "                (default 3; the implementations take turns pass by\n"
            "                pass): p50 / p99 / max are read from passes x queries\n"
            "                asks (with 1, a class's p99 is its 2nd slowest of 100)\n"
            "  --turns       pass (default): the implementations take turns pass\n"
            "                by pass, each timed pass after the others'; impl:\n"
            "                each implementation's timed passes back to back,\n"
            "                after an untimed pass of its own (warm: what one\n"
            "                user asking one tool meets); JSON \"turns\"\n"
            "  --faults      count the minor page faults of each timed ask\n"
            "                (getrusage around it, outside its timing; JSON\n"
            "                minor_faults, asks_with_faults, p99_calm_us: the\n"
            "                p99 of the asks without one)\n"
            "  --classes     only the query classes whose name contains one of\n"
            "                LIST's comma-separated parts (\"point max1,whole\"):\n"
            "                a shorter run on the classes one change is about\n"
            "  --asks        write every timed ask to FILE as CSV: class,\n"
            "                implementation, pass, query, us, minor faults (with\n"
            "                --faults, else -1), blocks memhist decoded (else -1),\n"
            "                the question (start kind, start, direction, range, ops),\n"
            "                the accesses it returned\n"
            "  --cache       the memhist readers' cache option in bytes\n"
            "                (mh_reader_set_cache; default 16 MiB, the library's):\n"
            "                a store whose answers' blocks outgrow it decodes them\n"
            "                again in every pass; the reader memory figures show\n"
            "                what it holds\n"
            "  --ingest-runs memhist ingests per mode, the median rate is reported\n"
            "                (default 3: a memhist ingest lasts a few seconds at most,\n"
            "                where one preemption shows; SQLite runs once, for tens\n"
            "                of seconds or more)\n"
            "  --dist        how queries are drawn: user (default; issue 10: start\n"
            "                uniform over the transitions, range on an accessed\n"
            "                address or near one, plus never-accessed ranges) or\n"
            "                near (every query has an answer, the older draw)\n"
            "  --repeat K    each --lackey and --store trace is written K times, copy r with its\n"
            "                transitions shifted past copy r-1 (the 10^9-access store\n"
            "                from a real trace; SQLite is skipped, the scan checks)\n"
            "  --no-sqlite-design  skip the second SQLite store, the design's own\n"
            "                defaults (about 500 slices, chunk cap 4096, soft cut)\n"
            "  --no-cold     skip the cold figures (pages dropped with\n"
            "                posix_fadvise, then open + the first 100 queries)\n"
            "  --no-pin      do not hold the stores' pages in the page cache\n"
            "                (mlock) while the queries run: the warm passes then\n"
            "                meet what the kernel reclaims meanwhile\n"
            "  --store DIR   the accesses of an existing memhist store (streams and pc\n"
            "                included) as a trace; repeat for several (at most 8)\n"
            "  --threads K   multi-stream synthetic workloads: K threads of\n"
            "                --threads-total / K accesses each, interleaved by\n"
            "                transition, one stream each; adds the one-stream query\n"
            "                classes and the producer ingest\n"
            "  --threads-total N  accesses of a --threads workload (default 1e7)\n"
            "  --no-pc       clear has_pc on every trace (a format 1.x comparison)\n"
            "  --ingest-only only the memhist ingest with background threads on\n"
            "                (rate, writer RSS, bytes per access): no queries, no\n"
            "                SQLite, no run without background threads\n"
            "  --keep        keep the stores\n"
            "  --quick       1e5 accesses, 5 queries per class, small slices, answers\n"
            "                also checked against a brute-force scan (the ctest);\n"
            "                1 timed pass unless --timed-passes says otherwise\n"
            "Exit status: 0 all answers equal, 1 a mismatch or a failure, 2 bad usage.\n");
}

/* "1000000", "1e6" or "10^6". */
static int parse_count(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long m = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    if (*end == 'e' || *end == 'E' || (end[0] == '^' && m == 10)) {
        const char *p = end + 1;
        char *e2;
        unsigned long long x = strtoull(p, &e2, 10);
        if (e2 == p || *e2 || x > 19)
            return -1;
        if (*end == '^')
            m = 1;
        for (unsigned long long i = 0; i < x; i++) {
            if (m > UINT64_MAX / 10)
                return -1;
            m *= 10;
        }
        *out = m;
        return 0;
    }
    if (*end)
        return -1;
    *out = m;
    return 0;
}

static int bad_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "mh_bench: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    usage(stderr);
    return 2;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->sqlite_max = UINT64_MAX;
    o->queries = 100;
    o->seed = 1;
    o->batch = 65536;
    o->budget = 5;
    o->ingest_runs = 3;
    o->timed_passes = 3;
    o->cache = MH_READER_CACHE_DEFAULT;
    o->oracle = -1;
    o->dist = MHB_DIST_USER;
    o->sqlite_design = 1;
    o->cold = 1;
    o->pin = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--keep")) {
            o->keep = 1;
        } else if (!strcmp(a, "--no-sqlite-design")) {
            o->sqlite_design = 0;
        } else if (!strcmp(a, "--no-cold")) {
            o->cold = 0;
        } else if (!strcmp(a, "--no-pin")) {
            o->pin = 0;
        } else if (!strcmp(a, "--no-pc")) {
            o->no_pc = 1;
        } else if (!strcmp(a, "--ingest-only")) {
            o->ingest_only = 1;
        } else if (!strcmp(a, "--faults")) {
            o->faults = 1;
        } else if (v == NULL) {
            return bad_usage("unknown option or missing value", a);
        } else if (!strcmp(a, "--sizes")) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                if (o->nsizes == 16 || parse_count(t, &x) || x == 0)
                    return bad_usage("bad size", t);
                o->sizes[o->nsizes++] = x;
            }
            i++;
        } else if (!strcmp(a, "--repeat")) {
            if (parse_count(v, &o->repeat) || o->repeat == 0 || o->repeat > 100000)
                return bad_usage("bad --repeat (1 .. 100000)", v);
            i++;
        } else if (!strcmp(a, "--dist")) {
            if (!strcmp(v, "user"))
                o->dist = MHB_DIST_USER;
            else if (!strcmp(v, "near"))
                o->dist = MHB_DIST_NEAR;
            else
                return bad_usage("bad --dist (user or near)", v);
            i++;
        } else if (!strcmp(a, "--lackey")) {
            if (o->nlackey == 8)
                return bad_usage("at most 8 --lackey traces", v);
            o->lackey[o->nlackey++] = v;
            i++;
        } else if (!strcmp(a, "--store")) {
            if (o->nstore == 8)
                return bad_usage("at most 8 --store stores", v);
            o->store[o->nstore++] = v;
            i++;
        } else if (!strcmp(a, "--threads")) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                if (o->nthreads == 8 || parse_count(t, &x) || x < 2 || x > 64)
                    return bad_usage("bad --threads (2 .. 64, at most 8 values)", t);
                o->threads[o->nthreads++] = (uint32_t)x;
            }
            i++;
        } else if (!strcmp(a, "--threads-total")) {
            if (parse_count(v, &o->threads_total) || o->threads_total < 64)
                return bad_usage("bad --threads-total (>= 64)", v);
            i++;
        } else if (!strcmp(a, "--sqlite-max")) {
            if (parse_count(v, &o->sqlite_max))
                return bad_usage("bad --sqlite-max", v);
            i++;
        } else if (!strcmp(a, "--queries")) {
            if (parse_count(v, &x) || x == 0 || x > 100000)
                return bad_usage("bad --queries (1 .. 100000)", v);
            o->queries = (size_t)x;
            i++;
        } else if (!strcmp(a, "--classes")) {
            if (*v == '\0')
                return bad_usage("empty --classes", v);
            o->classes = v;
            i++;
        } else if (!strcmp(a, "--cache")) {
            if (parse_count(v, &o->cache) || o->cache > ((uint64_t)1 << 40))
                return bad_usage("bad --cache (0 .. 2^40 bytes)", v);
            i++;
        } else if (!strcmp(a, "--asks")) {
            o->asks = v;
            i++;
        } else if (!strcmp(a, "--json")) {
            o->json = v;
            i++;
        } else if (!strcmp(a, "--dir")) {
            o->dir = v;
            i++;
        } else if (!strcmp(a, "--seed")) {
            if (parse_count(v, &o->seed))
                return bad_usage("bad --seed", v);
            i++;
        } else if (!strcmp(a, "--batch")) {
            if (parse_count(v, &x) || x == 0 || x > (1u << 24))
                return bad_usage("bad --batch (1 .. 16777216)", v);
            o->batch = (size_t)x;
            i++;
        } else if (!strcmp(a, "--oracle")) {
            if (parse_count(v, &x) || x > 100000)
                return bad_usage("bad --oracle (0 .. 100000)", v);
            o->oracle = (long)x;
            i++;
        } else if (!strcmp(a, "--ingest-runs")) {
            if (parse_count(v, &x) || x == 0 || x > 99)
                return bad_usage("bad --ingest-runs (1 .. 99)", v);
            o->ingest_runs = (unsigned)x;
            i++;
        } else if (!strcmp(a, "--timed-passes")) {
            if (parse_count(v, &x) || x == 0 || x > 99)
                return bad_usage("bad --timed-passes (1 .. 99)", v);
            o->timed_passes = (unsigned)x;
            o->timed_set = 1;
            i++;
        } else if (!strcmp(a, "--turns")) {
            if (!v || (strcmp(v, "pass") && strcmp(v, "impl")))
                return bad_usage("bad --turns (pass or impl)", v);
            o->turns_impl = !strcmp(v, "impl");
            i++;
        } else if (!strcmp(a, "--budget")) {
            if (parse_count(v, &x) || x == 0 || x > 86400)
                return bad_usage("bad --budget (1 .. 86400 seconds)", v);
            o->budget = (double)x;
            i++;
        } else {
            return bad_usage("unknown option", a);
        }
    }
    if (o->quick) {
        if (o->nsizes == 0 && o->nlackey == 0 && o->nstore == 0 && o->nthreads == 0)
            o->sizes[o->nsizes++] = 100000;
        o->queries = 5;
        if (!o->timed_set)
            o->timed_passes = 1;
        o->budget = 60; /* a test: compare every query unless something hangs */
    } else if (o->nsizes == 0 && o->nlackey == 0 && o->nstore == 0 && o->nthreads == 0) {
        o->sizes[o->nsizes++] = 1000000;
    }
    o->producer_threads = 8;
    if (o->threads_total == 0)
        o->threads_total = o->quick ? 100000 : 10000000;
    return 0;
}

/* ---- traces ----------------------------------------------------------- */

typedef mhb_trace trace; /* bench.h */

static uint64_t trace_total(const trace *t)
{
    return (uint64_t)t->n * (t->reps ? t->reps : 1);
}

/* ---- children and memory ---------------------------------------------- */

/* kB of a /proc/self/status line ("VmRSS", "VmHWM"), -1 if unknown. */
static long vm_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0); 0 on success. */
/* Gives the heap's free pages back to the system. A child inherits the
 * parent's heap, and the pages of what earlier workloads freed stay
 * resident: a writer or reader that reuses them adds nothing to the RSS it
 * is measured by. Without it every workload after the first measured a
 * writer peak of 1-2 MiB (stop 27's and stop 30's sort and python rows). */
static void release_free_heap(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static int reset_hwm(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0)
        return -1;
    int ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok ? 0 : -1;
}

typedef struct child_msg {
    int rc;
    double seconds;
    double mib;
    /* a reader's resident memory at the end of its run, store still open,
     * above what the process held before opening it: anonymous (RssAnon:
     * the decoded-block cache and contexts, bounded by the cache option)
     * and file-backed (RssFile: the store's mapped pages the queries
     * touched, clean and reclaimable). -1 unknown. */
    double anon_mib, file_mib;
    /* CPU seconds the child spent in the timed part, all its threads:
     * user and system (getrusage RUSAGE_SELF; -1 unknown) */
    double cpu_user, cpu_sys;
    char err[256];
} child_msg;

typedef void (*child_fn)(void *ctx, child_msg *m);

/* Runs fn in a forked child and returns what it reported. */
static void in_child(child_fn fn, void *ctx, child_msg *m)
{
    memset(m, 0, sizeof *m);
    int fds[2];
    fflush(NULL);
    if (pipe(fds) != 0) {
        m->rc = MH_EIO;
        snprintf(m->err, sizeof m->err, "pipe: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        m->rc = MH_EIO;
        snprintf(m->err, sizeof m->err, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        child_msg r;
        memset(&r, 0, sizeof r);
        r.mib = r.anon_mib = r.file_mib = -1;
        r.cpu_user = r.cpu_sys = -1;
        fn(ctx, &r);
        ssize_t k = write(fds[1], &r, sizeof r);
        _exit(k == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fds[1]);
    size_t got = 0;
    while (got < sizeof *m) {
        ssize_t k = read(fds[0], (char *)m + got, sizeof *m - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof *m || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        memset(m, 0, sizeof *m);
        m->rc = MH_EIO;
        snprintf(m->err, sizeof m->err, "child %s %d",
                 WIFSIGNALED(status) ? "killed by signal" : "exited with",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
}

typedef struct ingest_ctx {
    const trace *t;
    const char *path;
    size_t batch;
    mh_writer_options mh;
    mhb_sql_options sql;
    int sqlite;
    int strip_pc;   /* memhist: write the accesses with has_pc cleared */
    int producers;  /* memhist: through producers (mhb_ingest_producers) */
    unsigned producer_threads;
} ingest_ctx;

static void ingest_child(void *p, child_msg *m)
{
    ingest_ctx *c = p;
    mhb_prod *prod = NULL;
    if (c->producers) { /* the per-stream buffers, before the memory baseline */
        m->rc = mhb_producers_split(c->t, c->batch, c->producer_threads, &prod);
        if (m->rc != MH_OK) {
            snprintf(m->err, sizeof m->err, "producer split: %s", mh_strerror(m->rc));
            return;
        }
    }
    /* Touch every page of the inherited trace before the clock starts: the
     * first touch of a page after fork can cost microseconds (it does under
     * shadow paging in a VM), which would be charged to the writer. */
    volatile unsigned char sink = 0;
    const unsigned char *bytes = (const unsigned char *)c->t->a;
    size_t nbytes = c->t->n * sizeof *c->t->a;
    for (size_t i = 0; i < nbytes; i += 4096)
        sink ^= bytes[i];
    (void)sink;
    release_free_heap();
    long rss0 = vm_kib("VmRSS"); /* the trace, mapped from the parent */
    int reset = reset_hwm();
    double user0 = 0, sys0 = 0; /* the writer's open included */
    int cpu_ok = mhb_cpu_parts(&user0, &sys0) == 0;
    double t0 = 0;
    int rc;
    if (c->sqlite) {
        mhb_sql_writer *w = NULL;
        rc = mhb_sql_writer_open(c->path, &c->sql, &w, m->err, sizeof m->err);
        t0 = mhb_now();
        for (size_t i = 0; rc == MH_OK && i < c->t->n; i += c->batch) {
            size_t k = c->t->n - i < c->batch ? c->t->n - i : c->batch;
            rc = mhb_sql_writer_append(w, c->t->a + i, k);
            if (rc != MH_OK)
                snprintf(m->err, sizeof m->err, "%s", mhb_sql_writer_error(w));
        }
        int rc2 = mhb_sql_writer_close(w);
        if (rc == MH_OK)
            rc = rc2;
    } else if (c->producers) {
        double secs = 0;
        rc = mhb_producers_run(prod, c->path, &c->mh, &secs, m->err, sizeof m->err);
        t0 = mhb_now() - secs;
        mhb_producers_free(prod);
    } else {
        mh_writer *w = NULL;
        char msg[MH_ERRMSG_MAX] = "";
        rc = mh_writer_open_ex(c->path, MH_CREATE, &c->mh, &w, msg, sizeof msg);
        if (rc != MH_OK)
            snprintf(m->err, sizeof m->err, "memhist writer open: %s", msg);
        if (rc == MH_OK)
            rc = mhb_declare_streams(w, c->t, m->err, sizeof m->err);
        t0 = mhb_now();
        /* copies after the first go through a buffer with their shifted
         * transitions, and so does everything with --strip-pc: a copy of
         * each batch, timed with the writer (the pc-less run is kept for
         * its bytes, not its rate) */
        uint64_t reps = c->t->reps ? c->t->reps : 1;
        int copy = reps > 1 || c->strip_pc;
        mh_access *buf = copy ? malloc(c->batch * sizeof *buf) : NULL;
        if (copy && buf == NULL && rc == MH_OK)
            rc = MH_ENOMEM;
        for (uint64_t r = 0; rc == MH_OK && r < reps; r++)
            for (size_t i = 0; rc == MH_OK && i < c->t->n; i += c->batch) {
                size_t k = c->t->n - i < c->batch ? c->t->n - i : c->batch;
                const mh_access *src = c->t->a + i;
                if (r > 0 || c->strip_pc) {
                    memcpy(buf, src, k * sizeof *buf);
                    for (size_t j = 0; j < k; j++) {
                        buf[j].transition += r * c->t->shift;
                        if (c->strip_pc) {
                            buf[j].has_pc = 0;
                            buf[j].pc = 0;
                        }
                    }
                    src = buf;
                }
                size_t bad = 0;
                rc = mh_writer_append_batch(w, src, k, &bad);
                if (rc != MH_OK) {
                    mh_writer_errmsg(w, msg, sizeof msg);
                    snprintf(m->err, sizeof m->err, "append of access %zu: %s: %s", i + bad,
                             mh_strerror(rc), msg);
                }
            }
        free(buf);
        if (w) {
            int rc2 = mh_writer_close(w);
            if (rc == MH_OK)
                rc = rc2;
        }
        if (rc != MH_OK && !m->err[0])
            snprintf(m->err, sizeof m->err, "memhist writer: %s", mh_strerror(rc));
    }
    m->seconds = mhb_now() - t0;
    m->rc = rc;
    double user1, sys1;
    if (cpu_ok && mhb_cpu_parts(&user1, &sys1) == 0) {
        m->cpu_user = user1 - user0;
        m->cpu_sys = sys1 - sys0;
    }
    long hwm = vm_kib("VmHWM");
    if (reset == 0 && hwm >= 0 && rss0 >= 0)
        m->mib = (double)(hwm - rss0) / 1024.0;
}

static int mh_run(void *h, const mh_query *q, mh_access *out, size_t max, size_t *n)
{
    return mh_query_run(h, q, out, max, n);
}

/* the blocks the reader decoded so far (its internal counter) */
static uint64_t mh_decoded(void *h)
{
    return atomic_load(&((mh_reader *)h)->blocks_decoded);
}

static int sql_run(void *h, const mh_query *q, mh_access *out, size_t max, size_t *n)
{
    return mhb_sql_query(h, q, out, max, n);
}

typedef struct reader_ctx {
    trace *t;
    const char *path;
    int sqlite;
    const mhb_class *cls;
    size_t ncls;
    mhb_sql_options sql;
    double budget;
    uint64_t cache; /* memhist's cache option (--cache) */
} reader_ctx;

/* A memhist reader of the queries: open, then --cache's budget. */
static int mh_open_cached(const char *path, uint64_t cache, mh_reader **r)
{
    int rc = mh_reader_open(path, r);
    if (rc == MH_OK)
        rc = mh_reader_set_cache(*r, (size_t)cache);
    return rc;
}

/* Peak memory of a reader that opens the store and runs every query once:
 * the trace is released first, then the high-water mark reset. */
static void reader_child(void *p, child_msg *m)
{
    reader_ctx *c = p;
    free(c->t->a);
    c->t->a = NULL;
    release_free_heap();
    int reset = reset_hwm();
    long anon0 = vm_kib("RssAnon"), file0 = vm_kib("RssFile");
    int rc;
    mhb_impl im = {c->sqlite ? "SQLite" : "memhist", NULL, NULL, 0, SIZE_MAX, !c->sqlite, NULL};
    mh_reader *r = NULL;
    mhb_sql_reader *s = NULL;
    if (c->sqlite) {
        rc = mhb_sql_reader_open(c->path, &c->sql, &s, m->err, sizeof m->err);
        im.run = sql_run;
        im.h = s;
    } else {
        rc = mh_open_cached(c->path, c->cache, &r);
        im.run = mh_run;
        im.h = r;
    }
    if (rc == MH_OK)
        rc = mhb_classes_run_once(c->cls, c->ncls, &im, c->budget);
    /* the split, before close unmaps the store and frees the cache */
    long anon1 = vm_kib("RssAnon"), file1 = vm_kib("RssFile");
    if (anon0 >= 0 && anon1 >= 0 && file0 >= 0 && file1 >= 0) {
        m->anon_mib = (double)(anon1 > anon0 ? anon1 - anon0 : 0) / 1024.0;
        m->file_mib = (double)(file1 > file0 ? file1 - file0 : 0) / 1024.0;
    }
    mh_reader_close(r);
    mhb_sql_reader_close(s);
    m->rc = rc;
    long hwm = vm_kib("VmHWM");
    if (reset == 0 && hwm >= 0)
        m->mib = (double)hwm / 1024.0;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

#define OPEN_REPEAT 9

/* Median open time in ms; -1 on failure. */
static double open_time(const char *path, int sqlite, const mhb_sql_options *so)
{
    double t[OPEN_REPEAT];
    for (int i = 0; i < OPEN_REPEAT; i++) {
        double t0 = mhb_now();
        int rc;
        if (sqlite) {
            mhb_sql_reader *s = NULL;
            rc = mhb_sql_reader_open(path, so, &s, NULL, 0);
            t[i] = mhb_now() - t0;
            mhb_sql_reader_close(s);
        } else {
            mh_reader *r = NULL;
            rc = mh_reader_open(path, &r);
            t[i] = mhb_now() - t0;
            mh_reader_close(r);
        }
        if (rc != MH_OK)
            return -1;
    }
    qsort(t, OPEN_REPEAT, sizeof t[0], cmp_d);
    return t[OPEN_REPEAT / 2] * 1e3;
}

/* ---- one workload --------------------------------------------------------- */

/* The stores of one workload: memhist, SQLite (legacy settings), SQLite
 * (the design's defaults), by slot. */
typedef struct stores {
    char path[MHB_SLOTS][4096];
    mhb_sql_options sql[MHB_SLOTS];
} stores;

typedef struct cold_ctx {
    const char *path;
    const mhb_sql_options *so;
    const char *name; /* in mismatch messages */
    uint64_t cache;   /* memhist's cache option (--cache) */
} cold_ctx;

static int cold_open_mh(void *p, mhb_impl *im)
{
    const cold_ctx *c = p;
    mh_reader *r = NULL;
    int rc = mh_open_cached(c->path, c->cache, &r);
    *im = (mhb_impl){"memhist", mh_run, r, 0, SIZE_MAX, 1, mh_decoded};
    return rc;
}

static void cold_close_mh(mhb_impl *im)
{
    mh_reader_close(im->h);
}

static int cold_open_sql(void *p, mhb_impl *im)
{
    const cold_ctx *c = p;
    mhb_sql_reader *s = NULL;
    int rc = mhb_sql_reader_open(c->path, c->so, &s, NULL, 0);
    *im = (mhb_impl){c->name, sql_run, s, 0, SIZE_MAX, 0, NULL};
    return rc;
}

static void cold_close_sql(mhb_impl *im)
{
    mhb_sql_reader_close(im->h);
}

/* Cold figures of every store, memhist's answers the reference. Every
 * reader of the stores is closed by now. */
static int run_cold(const stores *st, int nslots, mhb_workload *w)
{
    mh_access *ref = malloc(MHB_COLD_QUERIES * MHB_OUT_CAP * sizeof *ref);
    size_t nref[MHB_COLD_QUERIES];
    if (ref == NULL)
        return MH_ENOMEM;
    int rc = MH_OK;
    for (int k = 0; k < nslots && rc == MH_OK; k++) {
        if (k > 0 && !w->sqlite_ran)
            break;
        cold_ctx cx = {st->path[k], &st->sql[k], k == MHB_SQLD ? "SQLite-design" : "SQLite",
                       w->reader_cache};
        fprintf(stderr, "mh_bench: %s: cold open and first %u queries, %s\n", w->name,
                MHB_COLD_QUERIES, k ? cx.name : "memhist");
        /* memhist's sections, read before the drop: its cold questions'
         * pages are counted by section (none when it cannot be read) */
        mhb_layout lay;
        int have_lay = k == 0 && mhb_layout_read(st->path[k], &lay) == MH_OK;
        rc = mhb_cold_measure(st->path[k], have_lay ? &lay : NULL,
                              k ? cold_open_sql : cold_open_mh,
                              k ? cold_close_sql : cold_close_mh, &cx, w->cls, w->ncls,
                              k ? "memhist" : NULL, ref, nref, &w->cold[k],
                              &w->compared, &w->mismatches);
        if (have_lay)
            mhb_layout_free(&lay);
        if (rc != MH_OK)
            fprintf(stderr, "mh_bench: %s: cold run of store %d: %s\n", w->name, k,
                    mh_strerror(rc));
    }
    free(ref);
    return rc;
}

/* The cores a run kept busy: its CPU time over its wall time (-1 unknown). */
static double run_cores(const child_msg *m)
{
    return m->cpu_user >= 0 && m->seconds > 0 ? (m->cpu_user + m->cpu_sys) / m->seconds : -1;
}

/* Run k of an ingest measured: its time into secs[0 .. k] kept sorted
 * (insertion: runs are few; the median is secs[runs / 2]), its busy cores
 * at the same place in cores[] (when not NULL) and the largest writer
 * memory into *mib. */
static void note_run(double *secs, double *cores, unsigned k, const child_msg *m, double *mib)
{
    unsigned j = k;
    for (; j > 0 && secs[j - 1] > m->seconds; j--) {
        secs[j] = secs[j - 1];
        if (cores)
            cores[j] = cores[j - 1];
    }
    secs[j] = m->seconds;
    if (cores)
        cores[j] = run_cores(m);
    if (m->mib > *mib)
        *mib = m->mib;
}

static int run_workload(const opts *o, const char *dir, trace *t, mhb_workload *w)
{
    int failed = 0;
    stores st;
    char mh_path2[4096];
    memset(&st, 0, sizeof st);
    snprintf(st.path[MHB_MH], sizeof st.path[0], "%s/%s.mh", dir, w->name);
    snprintf(mh_path2, sizeof mh_path2, "%s/%s-nobg.mh", dir, w->name);
    snprintf(st.path[MHB_SQL], sizeof st.path[0], "%s/%s.sqlite", dir, w->name);
    snprintf(st.path[MHB_SQLD], sizeof st.path[0], "%s/%s-design.sqlite", dir, w->name);
    const char *mh_path = st.path[MHB_MH];
    for (int k = 0; k < MHB_SLOTS; k++)
        mhb_remove_path(st.path[k]);
    mhb_remove_path(mh_path2);
    const uint64_t total = trace_total(t);
    w->accesses = total;
    w->dist = o->dist;
    for (int i = 0; i < 4; i++)
        w->ingest_rate[i] = w->writer_mib[i] = -1;
    w->ingest_cores[0] = w->ingest_cores[1] = -1;
    for (int i = 0; i < MHB_SLOTS; i++) {
        w->bytes_per_access[i] = w->open_ms[i] = w->reader_mib[i] = -1;
        w->reader_anon_mib[i] = w->reader_file_mib[i] = -1;
    }

    if (!o->ingest_only)
        fprintf(stderr, "mh_bench: %s: drawing the queries (%s distribution)\n", w->name,
                o->dist == MHB_DIST_USER ? "user" : "near");
    w->nstreams = (uint32_t)t->nsids;
    w->with_pc = t->with_pc;
    w->bytes_nopc = w->producer_rate = w->producer_mib = -1;
    w->producer_same = -1;
    int rc = o->ingest_only ? MH_OK : mhb_classes_make(t->a, t->n, o->queries, o->seed, o->dist, t->sids,
                              t->nsids, &w->cls, &w->ncls);
    if (rc != MH_OK)
        return 1;
    if (t->reps > 1 && !o->ingest_only)
        mhb_classes_repeat(w->cls, w->ncls, t->reps, t->shift, o->seed);
    if (!o->ingest_only && o->classes != NULL &&
        mhb_classes_filter(&w->cls, &w->ncls, o->classes) == 0) {
        fprintf(stderr, "mh_bench: %s: no query class matches --classes %s\n", w->name,
                o->classes);
        return 1;
    }

    ingest_ctx ic;
    memset(&ic, 0, sizeof ic);
    ic.t = t;
    ic.batch = o->batch;
    mh_writer_options_init(&ic.mh);
    mhb_sql_options_init(&st.sql[MHB_SQL]);
    if (o->quick) {
        /* small slices and blocks: many of them even in a small trace */
        ic.mh.slice_accesses = 2048;
        ic.mh.block_accesses = 256;
        st.sql[MHB_SQL].slice_accesses = 20000;
        st.sql[MHB_SQL].chunk_accesses = 64;
    }
    /* the design's own defaults: about 500 slices per trace, chunks of at
     * most 4096 accesses unless overlapping ones force more (the soft cut) */
    mhb_sql_options_init(&st.sql[MHB_SQLD]);
    st.sql[MHB_SQLD].slice_accesses = total / 500 + (total % 500 != 0);
    st.sql[MHB_SQLD].chunk_accesses = 4096;
    child_msg m;
    /* on: the library's default number of builder threads; off: the
     * producer's thread builds and writes every slice itself */
    int32_t threads = ic.mh.background;
    for (int bg = 1; bg >= (o->ingest_only ? 1 : 0); bg--) {
        fprintf(stderr, "mh_bench: %s: memhist ingest, background threads %s\n",
                w->name, bg ? "on" : "off");
        ic.mh.background = bg ? threads : 0;
        ic.path = bg ? mh_path : mh_path2;
        ic.sqlite = 0;
        unsigned runs = o->quick ? 1 : o->ingest_runs;
        double secs[99], cores[99], mib = 0;
        for (unsigned k = 0; k < runs; k++) {
            if (k > 0)
                mhb_remove_path(ic.path); /* the last run's store is the one kept */
            in_child(ingest_child, &ic, &m);
            if (m.rc != MH_OK) {
                fprintf(stderr, "mh_bench: %s: memhist ingest failed: %s\n", w->name,
                        m.err);
                return 1;
            }
            note_run(secs, cores, k, &m, &mib);
            if (run_cores(&m) >= 0)
                fprintf(stderr,
                        "mh_bench: %s: ingest %u: %.2f M/s, %.3f s, CPU user %.3f s, "
                        "system %.3f s (%.2f cores busy)\n",
                        w->name, k + 1, (double)total / m.seconds / 1e6, m.seconds,
                        m.cpu_user, m.cpu_sys, run_cores(&m));
        }
        w->ingest_rate[bg ? 0 : 1] = (double)total / secs[runs / 2];
        w->ingest_cores[bg ? 0 : 1] = cores[runs / 2]; /* the median run's */
        w->writer_mib[bg ? 0 : 1] = mib;
    }
    w->store_bytes[MHB_MH] = mhb_path_bytes(mh_path);
    w->bytes_per_access[MHB_MH] = (double)w->store_bytes[MHB_MH] / (double)total;
    mhb_remove_path(mh_path2);
    if (o->ingest_only) {
        if (!o->keep)
            mhb_remove_path(mh_path);
        return failed;
    }

    /* the same accesses without their pc: what the pc column costs */
    if (t->with_pc > 0) {
        fprintf(stderr, "mh_bench: %s: memhist ingest without the pc column\n", w->name);
        ic.mh.background = threads;
        ic.path = mh_path2;
        ic.strip_pc = 1;
        in_child(ingest_child, &ic, &m);
        ic.strip_pc = 0;
        if (m.rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: memhist ingest without pc failed: %s\n",
                    w->name, m.err);
            return 1;
        }
        w->bytes_nopc = (double)mhb_path_bytes(mh_path2) / (double)total;
        mhb_remove_path(mh_path2);
    }
    /* several streams: through producers, one per stream, and checked
     * against the batch appender's store */
    if (t->nsids > 1 && t->reps <= 1) {
        ic.mh.background = threads;
        ic.path = mh_path2;
        ic.producers = 1;
        ic.producer_threads = o->producer_threads;
        w->producer_threads =
            (unsigned)(t->nsids < o->producer_threads ? t->nsids : o->producer_threads);
        unsigned runs = o->quick ? 1 : o->ingest_runs;
        double secs[99], mib = 0;
        for (unsigned k = 0; k < runs; k++) {
            fprintf(stderr, "mh_bench: %s: memhist ingest through %zu producers, %u threads\n",
                    w->name, t->nsids, w->producer_threads);
            mhb_remove_path(mh_path2);
            in_child(ingest_child, &ic, &m);
            if (m.rc != MH_OK) {
                fprintf(stderr, "mh_bench: %s: producer ingest failed: %s\n", w->name,
                        m.err);
                return 1;
            }
            note_run(secs, NULL, k, &m, &mib);
        }
        ic.producers = 0;
        w->producer_rate = (double)total / secs[runs / 2];
        w->producer_mib = mib;
        w->producer_same = mhb_same_store(mh_path, mh_path2);
        if (w->producer_same != 1) {
            fprintf(stderr, "mh_bench: %s: the producers' store differs from the batch "
                            "store\n", w->name);
            failed = 1;
        }
        mhb_remove_path(mh_path2);
    }

    /* the SQLite writer takes one trace in memory: never the repeated one;
     * it stores no stream, so a multi-stream workload runs without it */
    w->sqlite_ran = total <= o->sqlite_max && t->reps <= 1 && t->nsids <= 1;
    int nslots = !w->sqlite_ran ? 1 : o->sqlite_design ? 3 : 2;
    for (int k = MHB_SQL; k < nslots; k++) {
        fprintf(stderr, "mh_bench: %s: SQLite ingest, %s settings\n", w->name,
                k == MHB_SQL ? "legacy" : "design");
        ic.sqlite = 1;
        ic.sql = st.sql[k];
        ic.path = st.path[k];
        in_child(ingest_child, &ic, &m);
        if (m.rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: SQLite ingest failed: %s\n", w->name, m.err);
            return 1;
        }
        w->ingest_rate[k + 1] = (double)total / m.seconds;
        w->writer_mib[k + 1] = m.mib;
        w->store_bytes[k] = mhb_path_bytes(st.path[k]);
        w->bytes_per_access[k] = (double)w->store_bytes[k] / (double)total;
    }

    /* reader memory, before this process maps anything of the stores; memory
     * does not need every slow query: a tenth of the budget a class */
    fprintf(stderr, "mh_bench: %s: reader memory\n", w->name);
    for (int k = 0; k < nslots; k++) {
        reader_ctx rcx = {t, st.path[k], k != MHB_MH, w->cls, w->ncls, st.sql[k],
                          o->budget / 10, o->cache};
        in_child(reader_child, &rcx, &m);
        if (m.rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: reader of %s: %s %s\n", w->name, st.path[k],
                    mh_strerror(m.rc), m.err);
            return 1;
        }
        w->reader_mib[k] = m.mib;
        w->reader_anon_mib[k] = m.anon_mib;
        w->reader_file_mib[k] = m.file_mib;
        w->open_ms[k] = open_time(st.path[k], k != MHB_MH, &st.sql[k]);
    }

    mh_reader *r = NULL;
    rc = mh_open_cached(mh_path, o->cache, &r);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_bench: %s: memhist open: %s\n", w->name, mh_strerror(rc));
        return 1;
    }
    mh_stats mst = {.struct_size = sizeof mst};
    mh_reader_stats(r, &mst);
    w->mh_slices = mst.slices;
    w->mh_chunks = mst.chunks;
    w->mh_blocks = mst.blocks;
    w->segments = (uint32_t)mh_reader_segment_count(r);
    for (size_t k = 0; k < w->segments; k++) {
        mh_segment_info si = {.struct_size = sizeof si};
        if (mh_reader_segment_info(r, k, &si) != MH_OK)
            continue;
        w->summary_bytes += si.summary_bytes;
        w->records_bytes += si.index_bytes;
        w->fine_bytes += si.fine_summary_bytes;
        w->idmap_bytes += si.idmap_bytes;
        w->aset_bytes += si.aset_bytes;
        w->apost_bytes += si.apost_bytes;
    }
    if (mst.accesses != total) {
        fprintf(stderr, "mh_bench: %s: memhist holds %" PRIu64 " accesses, not %" PRIu64 "\n",
                w->name, mst.accesses, total);
        failed = 1;
    }
    mhb_sql_reader *s[MHB_SLOTS] = {NULL, NULL, NULL};
    mhb_impl impl[MHB_SLOTS + 1];
    size_t nimpl = 0;
    impl[nimpl++] = (mhb_impl){"memhist", mh_run, r, MHB_MH, SIZE_MAX, 1, mh_decoded};
    for (int k = MHB_SQL; k < nslots && !failed; k++) {
        char err[256] = "";
        rc = mhb_sql_reader_open(st.path[k], &st.sql[k], &s[k], err, sizeof err);
        if (rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: SQLite open: %s\n", w->name, err);
            failed = 1;
            break;
        }
        mhb_sql_stats ss;
        if (mhb_sql_reader_stats(s[k], &ss) == MH_OK) {
            w->sql_slices[k] = ss.slices;
            w->sql_chunks[k] = ss.chunks;
        }
        impl[nimpl++] = (mhb_impl){k == MHB_SQL ? "SQLite" : "SQLite-design", sql_run,
                                   s[k], k, SIZE_MAX, 0, NULL};
    }
    mhb_oracle_ctx oc = {t->a, t->n, t->reps ? t->reps : 1, t->shift};
    long checks = o->oracle >= 0 ? o->oracle : o->quick ? (long)o->queries
                                             : w->sqlite_ran ? 0 : 2;
    if (checks > 0)
        impl[nimpl++] = (mhb_impl){"scan", mhb_oracle_run, &oc, -1, (size_t)checks, 1, NULL};
    /* the stores held in the page cache while the queries run (not
     * before: the reader-memory children above are measured without) */
    mhb_pin pin = {.pid = -1};
    if (!failed && o->pin) {
        const char *paths[MHB_SLOTS];
        size_t np = 0;
        for (int k = 0; k < nslots && (k == 0 || w->sqlite_ran); k++)
            paths[np++] = st.path[k];
        /* not fatal: the report then says the stores were not held, and
         * the fault counts show what that cost */
        if (mhb_pin_stores(paths, np, &pin) != MH_OK)
            fprintf(stderr, "mh_bench: %s: cannot pin the stores in the page cache; "
                            "the queries run without\n", w->name);
    }
    w->pinned = pin.how;
    w->timed_passes = o->timed_passes;
    w->turns_impl = o->turns_impl;
    w->reader_cache = o->cache;
    if (!failed) {
        /* a warm-up of every implementation with other questions of every
         * class (untimed): each reader's one-time work (sections checked at
         * first use, the mapping's page tables, SQLite's schema and page
         * cache) is done before the warm pass, whose runs are the first
         * asks of their questions in a process that has been asking */
        mhb_class *wc = NULL;
        size_t nwc = 0;
        rc = mhb_classes_make(t->a, t->n, MHB_WARMUP_PER_CLASS, o->seed ^ 0x5eed5eedu,
                              o->dist, t->sids, t->nsids, &wc, &nwc);
        if (rc == MH_OK && t->reps > 1)
            mhb_classes_repeat(wc, nwc, t->reps, t->shift, o->seed ^ 0x5eed5eedu);
        if (rc == MH_OK && o->classes != NULL) /* matched above: never 0 here */
            mhb_classes_filter(&wc, &nwc, o->classes);
        for (size_t k = 0; k < nimpl && rc == MH_OK; k++)
            if (impl[k].slot >= 0)
                rc = mhb_classes_run_once(wc, nwc, &impl[k], o->budget / 10);
        mhb_classes_free(wc, nwc);
        if (rc != MH_OK)
            failed = 1;
    }
    if (!failed) {
        fprintf(stderr, "mh_bench: %s: queries (%zu classes x %zu)\n", w->name, w->ncls,
                o->queries);
        mhb_asks asks = {o->asks_f, w->name};
        rc = mhb_classes_bench(w->cls, w->ncls, impl, nimpl, (int)o->timed_passes,
                               o->turns_impl, o->faults, o->asks_f ? &asks : NULL, o->budget,
                               &w->compared, &w->mismatches);
        if (rc != MH_OK)
            failed = 1;
    }
    for (int k = 0; k < MHB_SLOTS; k++)
        mhb_sql_reader_close(s[k]);
    mh_reader_close(r);
    mhb_unpin(&pin);
    /* cold: only now, with no reader of the stores left mapping a page */
    if (!failed && o->cold && run_cold(&st, nslots, w) != MH_OK)
        failed = 1;
    if (w->mismatches)
        failed = 1;
    if (!o->keep)
        for (int k = 0; k < MHB_SLOTS; k++)
            mhb_remove_path(st.path[k]);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], MHB_PIN_CHILD))
        return mhb_pin_child_main(argc - 2, argv + 2);
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    if (o.asks != NULL) {
        o.asks_f = fopen(o.asks, "w");
        if (o.asks_f == NULL) {
            fprintf(stderr, "mh_bench: %s: %s\n", o.asks, strerror(errno));
            return 1;
        }
        fprintf(o.asks_f, "%s\n", MHB_ASKS_HEADER);
    }
    char dirbuf[256];
    const char *dir = o.dir;
    int made_dir = 0;
    if (dir == NULL) {
        snprintf(dirbuf, sizeof dirbuf, "/tmp/mh_bench.XXXXXX");
        if (mkdtemp(dirbuf) == NULL) {
            fprintf(stderr, "mh_bench: mkdtemp: %s\n", strerror(errno));
            return 1;
        }
        dir = dirbuf;
        made_dir = 1;
    } else if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "mh_bench: %s: %s\n", dir, strerror(errno));
        return 1;
    }

    size_t nw = o.nsizes + o.nlackey + o.nstore + o.nthreads;
    mhb_workload *w = calloc(nw, sizeof *w);
    if (w == NULL)
        return 1;
    int failed = 0;
    size_t done = 0;
    for (size_t k = 0; k < nw && !failed; k++) {
        trace t;
        memset(&t, 0, sizeof t);
        size_t kk = k - o.nsizes - o.nlackey; /* among --store, then --threads */
        if (k >= o.nsizes + o.nlackey && kk < o.nstore) {
            const char *path = o.store[kk];
            size_t len = strlen(path);
            while (len > 1 && path[len - 1] == '/')
                len--;
            const char *base = path + len;
            while (base > path && base[-1] != '/')
                base--;
            snprintf(w[k].name, sizeof w[k].name, "store-%.*s", (int)(path + len - base),
                     base);
            fprintf(stderr, "mh_bench: reading the store %s\n", path);
            rc = mhb_load_store(path, &t);
        } else if (k >= o.nsizes + o.nlackey) {
            uint32_t K = o.threads[kk - o.nstore];
            snprintf(w[k].name, sizeof w[k].name, "threads-%u-%" PRIu64, K, o.threads_total);
            fprintf(stderr, "mh_bench: generating %s\n", w[k].name);
            rc = mhb_load_threads(o.seed, o.threads_total, K, &t);
        } else if (k < o.nsizes) {
            snprintf(w[k].name, sizeof w[k].name, "synthetic-%" PRIu64, o.sizes[k]);
            fprintf(stderr, "mh_bench: generating %s\n", w[k].name);
            rc = mhb_load_synth(o.seed, o.sizes[k], &t);
        } else {
            const char *path = o.lackey[k - o.nsizes];
            const char *base = strrchr(path, '/');
            snprintf(w[k].name, sizeof w[k].name, "lackey-%s", base ? base + 1 : path);
            fprintf(stderr, "mh_bench: reading %s\n", path);
            rc = mhb_load_lackey(path, &t);
        }
        int real = k >= o.nsizes && (k < o.nsizes + o.nlackey || kk < o.nstore);
        if (rc == MH_OK && real && o.repeat > 1 && t.n > 0) {
            /* copy r starts one transition after copy r - 1 ends */
            t.reps = o.repeat;
            t.shift = t.a[t.n - 1].transition - t.a[0].transition + 1;
            if (t.shift > UINT64_MAX / o.repeat ||
                t.a[t.n - 1].transition > UINT64_MAX - (o.repeat - 1) * t.shift)
                rc = MH_EINVAL; /* transitions would wrap */
            size_t len = strlen(w[k].name);
            snprintf(w[k].name + len, sizeof w[k].name - len, "-x%" PRIu64, o.repeat);
        }
        if (rc == MH_OK && k < o.nsizes + o.nlackey)
            rc = mhb_trace_streams(&t);
        if (rc == MH_OK && o.no_pc)
            mhb_trace_strip_pc(&t);
        if (rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: cannot load the trace: %s\n", w[k].name,
                    mh_strerror(rc));
            mhb_trace_free(&t);
            failed = 1;
            break;
        }
        if (t.n == 0) {
            fprintf(stderr, "mh_bench: %s: the trace is empty\n", w[k].name);
            failed = 1;
            break;
        }
        failed |= run_workload(&o, dir, &t, &w[k]);
        mhb_trace_free(&t);
        done = k + 1;
    }
    mhb_machine m;
    mhb_machine_get(&m);
    mhb_report_markdown(stdout, &m, w, done);
    if (o.json && mhb_report_json(o.json, &m, w, done) != MH_OK) {
        fprintf(stderr, "mh_bench: cannot write %s\n", o.json);
        failed = 1;
    }
    if (o.asks_f != NULL && fclose(o.asks_f) != 0) {
        fprintf(stderr, "mh_bench: cannot write %s\n", o.asks);
        failed = 1;
    }
    uint64_t mism = 0, cmpd = 0;
    for (size_t k = 0; k < done; k++) {
        mism += w[k].mismatches;
        cmpd += w[k].compared;
        mhb_classes_free(w[k].cls, w[k].ncls);
    }
    free(w);
    if (made_dir && !o.keep)
        rmdir(dir);
    fprintf(stderr, "mh_bench: %" PRIu64 " answers compared, %" PRIu64 " mismatches%s\n",
            cmpd, mism, failed ? "; FAILED" : "");
    return failed ? 1 : 0;
}
