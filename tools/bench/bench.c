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

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "import.h"
#include "sqlite_baseline.h"
#include "synth.h"

typedef struct opts {
    uint64_t sizes[16];
    size_t nsizes;
    const char *lackey;
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
} opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mh_bench [--sizes N[,N...]] [--lackey FILE] [--sqlite-max N]\n"
            "                [--queries N] [--json FILE] [--dir DIR] [--seed N]\n"
            "                [--batch N] [--budget S] [--oracle N] [--ingest-runs N]\n"
            "                [--keep] [--quick]\n"
            "  --sizes       synthetic trace sizes (1000000, 1e6; default 1e6 unless\n"
            "                --lackey is given)\n"
            "  --lackey      a valgrind lackey trace (record_real_trace.sh makes one)\n"
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
            "                is skipped, else 0; --quick: all)\n"
            "  --ingest-runs memhist ingests per mode, the median rate is reported\n"
            "                (default 3: a memhist ingest lasts a few seconds at most,\n"
            "                where one preemption shows; SQLite runs once, for tens\n"
            "                of seconds or more)\n"
            "  --keep        keep the stores\n"
            "  --quick       1e5 accesses, 5 queries per class, small slices, answers\n"
            "                also checked against a brute-force scan (the ctest)\n"
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
    o->oracle = -1;
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
        } else if (!strcmp(a, "--lackey")) {
            o->lackey = v;
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
        if (o->nsizes == 0)
            o->sizes[o->nsizes++] = 100000;
        o->queries = 5;
        o->budget = 60; /* a test: compare every query unless something hangs */
    } else if (o->nsizes == 0 && o->lackey == NULL) {
        o->sizes[o->nsizes++] = 1000000;
    }
    return 0;
}

/* ---- traces ----------------------------------------------------------- */

typedef struct trace {
    mh_access *a;
    size_t n, cap;
} trace;

static int trace_sink(void *ctx, const mh_access *batch, size_t n)
{
    trace *t = ctx;
    if (t->n + n > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : (1u << 20);
        while (cap < t->n + n)
            cap *= 2;
        mh_access *p = realloc(t->a, cap * sizeof *p);
        if (p == NULL)
            return MH_ENOMEM;
        t->a = p;
        t->cap = cap;
    }
    memcpy(t->a + t->n, batch, n * sizeof *batch);
    t->n += n;
    return MH_OK;
}

static int load_lackey(const char *path, trace *t)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "mh_bench: %s: %s\n", path, strerror(errno));
        return MH_ENOENT;
    }
    mh_lackey_parser *p = mh_lackey_new(0, trace_sink, t);
    if (p == NULL) {
        close(fd);
        return MH_ENOMEM;
    }
    static char buf[1 << 20];
    int rc = MH_OK;
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            fprintf(stderr, "mh_bench: %s: %s\n", path, strerror(errno));
            rc = MH_EIO;
            break;
        }
        if (k == 0) {
            rc = mh_lackey_finish(p);
            break;
        }
        rc = mh_lackey_feed(p, buf, (size_t)k);
        if (rc != MH_OK)
            break;
    }
    if (rc != MH_OK && rc != MH_EIO)
        fprintf(stderr, "mh_bench: %s: %s (%s)\n", path, mh_strerror(rc),
                mh_lackey_error(p));
    mh_lackey_free(p);
    close(fd);
    return rc;
}

static int load_synth(uint64_t seed, uint64_t n, trace *t)
{
    t->a = malloc((size_t)n * sizeof *t->a);
    if (t->a == NULL)
        return MH_ENOMEM;
    mh_synth *s = mh_synth_new(seed, n, 0);
    if (s == NULL)
        return MH_ENOMEM;
    while (t->n < n) {
        size_t k = mh_synth_next(s, t->a + t->n, (size_t)(n - t->n));
        if (k == 0)
            break;
        t->n += k;
    }
    mh_synth_free(s);
    return t->n == n ? MH_OK : MH_EINVAL;
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
        r.mib = -1;
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
} ingest_ctx;

static void ingest_child(void *p, child_msg *m)
{
    ingest_ctx *c = p;
    /* Touch every page of the inherited trace before the clock starts: the
     * first touch of a page after fork can cost microseconds (it does under
     * shadow paging in a VM), which would be charged to the writer. */
    volatile unsigned char sink = 0;
    const unsigned char *bytes = (const unsigned char *)c->t->a;
    size_t nbytes = c->t->n * sizeof *c->t->a;
    for (size_t i = 0; i < nbytes; i += 4096)
        sink ^= bytes[i];
    (void)sink;
    long rss0 = vm_kib("VmRSS"); /* the trace, mapped from the parent */
    int reset = reset_hwm();
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
    } else {
        mh_writer *w = NULL;
        rc = mh_writer_open(c->path, MH_CREATE, &c->mh, &w);
        t0 = mhb_now();
        for (size_t i = 0; rc == MH_OK && i < c->t->n; i += c->batch) {
            size_t k = c->t->n - i < c->batch ? c->t->n - i : c->batch;
            rc = mh_writer_append_batch(w, c->t->a + i, k, NULL);
        }
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
    long hwm = vm_kib("VmHWM");
    if (reset == 0 && hwm >= 0 && rss0 >= 0)
        m->mib = (double)(hwm - rss0) / 1024.0;
}

static int mh_run(void *h, const mh_query *q, mh_access *out, size_t max, size_t *n)
{
    return mh_query_run(h, q, out, max, n);
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
} reader_ctx;

/* Peak memory of a reader that opens the store and runs every query once:
 * the trace is released first, then the high-water mark reset. */
static void reader_child(void *p, child_msg *m)
{
    reader_ctx *c = p;
    free(c->t->a);
    c->t->a = NULL;
    int reset = reset_hwm();
    int rc;
    mhb_impl im = {c->sqlite ? "SQLite" : "memhist", NULL, NULL, 0, SIZE_MAX};
    mh_reader *r = NULL;
    mhb_sql_reader *s = NULL;
    if (c->sqlite) {
        rc = mhb_sql_reader_open(c->path, &c->sql, &s, m->err, sizeof m->err);
        im.run = sql_run;
        im.h = s;
    } else {
        rc = mh_reader_open(c->path, &r);
        im.run = mh_run;
        im.h = r;
    }
    if (rc == MH_OK)
        rc = mhb_classes_run_once(c->cls, c->ncls, &im, c->budget);
    mh_reader_close(r);
    mhb_sql_reader_close(s);
    m->rc = rc;
    long hwm = vm_kib("VmHWM");
    if (reset == 0 && hwm >= 0)
        m->mib = (double)hwm / 1024.0;
}

/* ---- files -------------------------------------------------------------- */

/* Bytes of the regular files of a flat directory, or of one file. */
static uint64_t path_bytes(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return (uint64_t)st.st_size;
    uint64_t sum = 0;
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL) {
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
            sum += (uint64_t)st.st_size;
    }
    closedir(d);
    return sum;
}

/* Removes a file, or a flat directory and its files. */
static void remove_path(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            char p[4096];
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                snprintf(p, sizeof p, "%s/%s", path, e->d_name);
                unlink(p);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
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

static int run_workload(const opts *o, const char *dir, trace *t, mhb_workload *w)
{
    int failed = 0;
    char mh_path[4096], mh_path2[4096], sql_path[4096];
    snprintf(mh_path, sizeof mh_path, "%s/%s.mh", dir, w->name);
    snprintf(mh_path2, sizeof mh_path2, "%s/%s-nobg.mh", dir, w->name);
    snprintf(sql_path, sizeof sql_path, "%s/%s.sqlite", dir, w->name);
    remove_path(mh_path);
    remove_path(mh_path2);
    remove_path(sql_path);
    w->accesses = t->n;
    for (int i = 0; i < 3; i++)
        w->ingest_rate[i] = w->writer_mib[i] = -1;
    for (int i = 0; i < 2; i++)
        w->bytes_per_access[i] = w->open_ms[i] = w->reader_mib[i] = -1;

    int rc = mhb_classes_make(t->a, t->n, o->queries, o->seed, &w->cls, &w->ncls);
    if (rc != MH_OK)
        return 1;

    ingest_ctx ic;
    memset(&ic, 0, sizeof ic);
    ic.t = t;
    ic.batch = o->batch;
    mh_writer_options_init(&ic.mh);
    mhb_sql_options_init(&ic.sql);
    if (o->quick) {
        /* small slices and blocks: many of them even in a small trace */
        ic.mh.slice_accesses = 2048;
        ic.mh.block_accesses = 256;
        ic.sql.slice_accesses = 20000;
        ic.sql.chunk_accesses = 64;
    }
    child_msg m;
    /* on: the library's default number of builder threads; off: the
     * producer's thread builds and writes every slice itself */
    int32_t threads = ic.mh.background;
    for (int bg = 1; bg >= 0; bg--) {
        fprintf(stderr, "mh_bench: %s: memhist ingest, background threads %s\n",
                w->name, bg ? "on" : "off");
        ic.mh.background = bg ? threads : 0;
        ic.path = bg ? mh_path : mh_path2;
        ic.sqlite = 0;
        unsigned runs = o->quick ? 1 : o->ingest_runs;
        double secs[99], mib = 0;
        for (unsigned k = 0; k < runs; k++) {
            if (k > 0)
                remove_path(ic.path); /* the last run's store is the one kept */
            in_child(ingest_child, &ic, &m);
            if (m.rc != MH_OK) {
                fprintf(stderr, "mh_bench: %s: memhist ingest failed: %s\n", w->name,
                        m.err);
                return 1;
            }
            /* insertion sort: runs is small */
            unsigned j = k;
            for (; j > 0 && secs[j - 1] > m.seconds; j--)
                secs[j] = secs[j - 1];
            secs[j] = m.seconds;
            if (m.mib > mib)
                mib = m.mib;
        }
        w->ingest_rate[bg ? 0 : 1] = (double)t->n / secs[runs / 2];
        w->writer_mib[bg ? 0 : 1] = mib;
    }
    w->store_bytes[0] = path_bytes(mh_path);
    w->bytes_per_access[0] = t->n ? (double)w->store_bytes[0] / (double)t->n : 0;
    remove_path(mh_path2);

    w->sqlite_ran = t->n <= o->sqlite_max;
    if (w->sqlite_ran) {
        fprintf(stderr, "mh_bench: %s: SQLite ingest\n", w->name);
        ic.sqlite = 1;
        ic.path = sql_path;
        in_child(ingest_child, &ic, &m);
        if (m.rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: SQLite ingest failed: %s\n", w->name, m.err);
            return 1;
        }
        w->ingest_rate[2] = (double)t->n / m.seconds;
        w->writer_mib[2] = m.mib;
        w->store_bytes[1] = path_bytes(sql_path);
        w->bytes_per_access[1] = t->n ? (double)w->store_bytes[1] / (double)t->n : 0;
    }

    /* reader memory, before this process maps anything of the stores */
    fprintf(stderr, "mh_bench: %s: reader memory\n", w->name);
        /* memory does not need every slow query: a tenth of the budget a class */
    reader_ctx rcx = {t, mh_path, 0, w->cls, w->ncls, ic.sql, o->budget / 10};
    in_child(reader_child, &rcx, &m);
    if (m.rc != MH_OK) {
        fprintf(stderr, "mh_bench: %s: memhist reader: %s %s\n", w->name,
                mh_strerror(m.rc), m.err);
        return 1;
    }
    w->reader_mib[0] = m.mib;
    if (w->sqlite_ran) {
        rcx.sqlite = 1;
        rcx.path = sql_path;
        in_child(reader_child, &rcx, &m);
        if (m.rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: SQLite reader: %s %s\n", w->name,
                    mh_strerror(m.rc), m.err);
            return 1;
        }
        w->reader_mib[1] = m.mib;
    }

    w->open_ms[0] = open_time(mh_path, 0, NULL);
    if (w->sqlite_ran)
        w->open_ms[1] = open_time(sql_path, 1, &ic.sql);

    mh_reader *r = NULL;
    rc = mh_reader_open(mh_path, &r);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_bench: %s: memhist open: %s\n", w->name, mh_strerror(rc));
        return 1;
    }
    mh_stats st = {.struct_size = sizeof st};
    mh_reader_stats(r, &st);
    w->mh_slices = st.slices;
    w->mh_chunks = st.chunks;
    w->mh_blocks = st.blocks;
    if (st.accesses != t->n) {
        fprintf(stderr, "mh_bench: %s: memhist holds %" PRIu64 " accesses, not %zu\n",
                w->name, st.accesses, t->n);
        failed = 1;
    }
    mhb_sql_reader *s = NULL;
    if (w->sqlite_ran) {
        char err[256] = "";
        rc = mhb_sql_reader_open(sql_path, &ic.sql, &s, err, sizeof err);
        if (rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: SQLite open: %s\n", w->name, err);
            mh_reader_close(r);
            return 1;
        }
        mhb_sql_stats ss;
        if (mhb_sql_reader_stats(s, &ss) == MH_OK) {
            w->sql_slices = ss.slices;
            w->sql_chunks = ss.chunks;
        }
    }
    mhb_impl impl[3];
    size_t nimpl = 0;
    impl[nimpl++] = (mhb_impl){"memhist", mh_run, r, 0, SIZE_MAX};
    if (s)
        impl[nimpl++] = (mhb_impl){"SQLite", sql_run, s, 1, SIZE_MAX};
    mhb_oracle_ctx oc = {t->a, t->n};
    long checks = o->oracle >= 0 ? o->oracle : o->quick ? (long)o->queries : s ? 0 : 2;
    if (checks > 0)
        impl[nimpl++] = (mhb_impl){"scan", mhb_oracle_run, &oc, -1, (size_t)checks};
    fprintf(stderr, "mh_bench: %s: queries (%zu classes x %zu)\n", w->name, w->ncls,
            o->queries);
    rc = mhb_classes_bench(w->cls, w->ncls, impl, nimpl, 1, o->budget, &w->compared,
                           &w->mismatches);
    mhb_sql_reader_close(s);
    mh_reader_close(r);
    if (rc != MH_OK || w->mismatches)
        failed = 1;
    if (!o->keep) {
        remove_path(mh_path);
        remove_path(sql_path);
    }
    return failed;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    signal(SIGPIPE, SIG_IGN);
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

    size_t nw = o.nsizes + (o.lackey ? 1 : 0);
    mhb_workload *w = calloc(nw, sizeof *w);
    if (w == NULL)
        return 1;
    int failed = 0;
    size_t done = 0;
    for (size_t k = 0; k < nw && !failed; k++) {
        trace t = {NULL, 0, 0};
        if (k < o.nsizes) {
            snprintf(w[k].name, sizeof w[k].name, "synthetic-%" PRIu64, o.sizes[k]);
            fprintf(stderr, "mh_bench: generating %s\n", w[k].name);
            rc = load_synth(o.seed, o.sizes[k], &t);
        } else {
            const char *base = strrchr(o.lackey, '/');
            snprintf(w[k].name, sizeof w[k].name, "lackey-%s", base ? base + 1 : o.lackey);
            fprintf(stderr, "mh_bench: reading %s\n", o.lackey);
            rc = load_lackey(o.lackey, &t);
        }
        if (rc != MH_OK) {
            fprintf(stderr, "mh_bench: %s: cannot load the trace: %s\n", w[k].name,
                    mh_strerror(rc));
            free(t.a);
            failed = 1;
            break;
        }
        if (t.n == 0) {
            fprintf(stderr, "mh_bench: %s: the trace is empty\n", w[k].name);
            failed = 1;
            break;
        }
        failed |= run_workload(&o, dir, &t, &w[k]);
        free(t.a);
        done = k + 1;
    }
    mhb_machine m;
    mhb_machine_get(&m);
    mhb_report_markdown(stdout, &m, w, done);
    if (o.json && mhb_report_json(o.json, &m, w, done) != MH_OK) {
        fprintf(stderr, "mh_bench: cannot write %s\n", o.json);
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
