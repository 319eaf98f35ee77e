/*
 * oracle_lackey.c - memhist against the brute-force oracle on a real trace.
 *
 * Records PROGRAM with `valgrind --tool=lackey --trace-mem=yes`, reads the
 * log with a small lackey reader of its own (the semantics of issue 2: the
 * k-th I line starts transition k and is an execute access; L read, S write,
 * M read then write; linear = physical = address; format 2.0: the pc of
 * every access is the address of the I line of its transition), writes it
 * into stores with small and with default writer options, in windows, and
 * compares thousands of random queries with the oracle (oracle.h), plain
 * and with stream, pc and window filters. When the production parser
 * (mh_import) is built, its output must equal this reader's access for
 * access (its pc too once it stores one).
 *
 * Usage: oracle_lackey PROGRAM [QUERIES] records PROGRAM; exit 77 (skipped)
 * when valgrind is not installed. oracle_lackey --log LACKEY_LOG [QUERIES]
 * checks a trace recorded before (the benchmark's multi-million one, say).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#ifdef MH_HAVE_IMPORT
#include "import.h"
#endif

typedef struct vec {
    mh_access *a;
    size_t n, cap;
} vec;

static void push(vec *v, const mh_access *a) {
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 1 << 16;
        v->a = realloc(v->a, v->cap * sizeof *v->a);
        CHECK(v->a != NULL);
    }
    v->a[v->n] = *a;
    v->a[v->n].id = v->n;
    v->n++;
}

static int find_in_path(const char *prog) {
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char dir[4096];
    while (*path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && len < sizeof dir - 64) {
            memcpy(dir, path, len);
            dir[len] = 0;
            char full[4200];
            snprintf(full, sizeof full, "%s/%s", dir, prog);
            if (access(full, X_OK) == 0)
                return 1;
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

static void record(const char *program, const char *log) {
    char logopt[4200];
    snprintf(logopt, sizeof logopt, "--log-file=%s", log);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execlp("valgrind", "valgrind", "--tool=lackey", "--trace-mem=yes", logopt,
               program, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "valgrind on %s failed (status 0x%x)", program, status);
}

/* Parses "HEX,DEC" after the two-character record kind. */
static void parse_addr_size(const char *s, size_t lineno, uint64_t *addr, uint32_t *size) {
    char *end;
    errno = 0;
    unsigned long long a = strtoull(s, &end, 16);
    CHECKF(errno == 0 && end != s && *end == ',', "line %zu: bad address", lineno);
    const char *z = end + 1;
    unsigned long long sz = strtoull(z, &end, 10);
    CHECKF(errno == 0 && end != z && (*end == '\n' || *end == 0) && sz >= 1 &&
               sz <= UINT32_MAX,
           "line %zu: bad size", lineno);
    CHECKF(a + (sz - 1) >= a, "line %zu: range wraps", lineno);
    *addr = a;
    *size = (uint32_t)sz;
}

static void read_lackey(const char *log, vec *out) {
    FILE *f = fopen(log, "r");
    CHECKF(f != NULL, "cannot open %s", log);
    char line[512];
    size_t lineno = 0;
    uint64_t instr = 0; /* I lines seen */
    uint64_t t = 0, pc = 0;
    int have_pc = 0; /* accesses before the first I line have none */
    while (fgets(line, sizeof line, f)) {
        lineno++;
        CHECKF(strchr(line, '\n') != NULL || feof(f), "line %zu too long", lineno);
        if (!strncmp(line, "==", 2) || !strncmp(line, "--", 2))
            continue; /* valgrind's own commentary */
        mh_access a = {0};
        a.has_linear = 1;
        a.transition = t;
        if (!strncmp(line, "I  ", 3)) {
            t = instr++;
            a.transition = t;
            parse_addr_size(line + 3, lineno, &a.physical, &a.size);
            a.op = MH_OP_EXEC;
            pc = a.physical;
            have_pc = 1;
        } else if (!strncmp(line, " L ", 3) || !strncmp(line, " S ", 3) ||
                   !strncmp(line, " M ", 3)) {
            parse_addr_size(line + 3, lineno, &a.physical, &a.size);
            a.op = line[1] == 'S' ? MH_OP_WRITE : MH_OP_READ;
        } else {
            tu_fail(__FILE__, __LINE__, "%s line %zu: unexpected: %s", log, lineno, line);
        }
        a.linear = a.physical;
        a.has_pc = (uint8_t)have_pc;
        a.pc = have_pc ? pc : 0;
        push(out, &a);
        if (line[1] == 'M') { /* modify: the read above, then a write */
            a.op = MH_OP_WRITE;
            push(out, &a);
        }
    }
    fclose(f);
}

#ifdef MH_HAVE_IMPORT
static int collect(void *ctx, const mh_access *batch, size_t n) {
    for (size_t i = 0; i < n; i++)
        push(ctx, &batch[i]);
    return 0;
}

/* The production parser must agree with this reader. */
static void cross_check(const char *log, const vec *mine) {
    vec theirs = {0};
    mh_lackey_parser *p = mh_lackey_new(MH_IMPORT_EXEC, collect, &theirs);
    CHECK(p != NULL);
    size_t len;
    unsigned char *data = tu_read_file(log, &len);
    CHECK(data != NULL);
    /* odd piece sizes split lines anywhere */
    for (size_t off = 0; off < len;) {
        size_t k = len - off < 777 ? len - off : 777;
        CHECKF(mh_lackey_feed(p, (const char *)data + off, k) == 0, "mh_lackey_feed: %s",
               mh_lackey_error(p));
        off += k;
    }
    CHECKF(mh_lackey_finish(p) == 0, "mh_lackey_finish: %s", mh_lackey_error(p));
    mh_lackey_free(p);
    free(data);
    CHECKF(theirs.n == mine->n, "mh_import read %zu accesses, this test %zu", theirs.n,
           mine->n);
    /* an importer that stores no pc yet is compared without it */
    int with_pc = 0;
    for (size_t i = 0; i < theirs.n && !with_pc; i++)
        with_pc = theirs.a[i].has_pc;
    for (size_t i = 0; i < mine->n; i++) {
        mh_access m = mine->a[i];
        if (!with_pc)
            m.has_pc = 0;
        if (!oracle_same_access(&theirs.a[i], &m)) {
            oracle_print_access(stderr, &theirs.a[i]);
            fputc('\n', stderr);
            oracle_print_access(stderr, &mine->a[i]);
            fputc('\n', stderr);
            tu_fail(__FILE__, __LINE__, "mh_import differs at access %zu", i);
        }
    }
    free(theirs.a);
    printf("mh_import's lackey parser agrees on %zu accesses%s\n", mine->n,
           with_pc ? ", pc included" : " (it stores no pc)");
}
#endif

static void store_and_query(const char *dir, const char *name, const vec *v, int small,
                            size_t queries, uint64_t seed) {
    char store[4096];
    tu_join(store, sizeof store, dir, name);
    mh_writer_options opt;
    mh_writer_options_init(&opt);
    if (small) {
        opt.slice_accesses = 1000;
        opt.block_accesses = 256;
    }
    opt.commit_accesses = 0;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &opt, &w));
    CHECK_OK(mh_writer_set_meta(w, "tracer", "valgrind lackey"));
    /* commits at a third and two thirds: three segments; windows of a
     * seventh of the trace each, every third one followed by a gap, so
     * that windows span segments */
    size_t cuts[] = {v->n / 3, 2 * v->n / 3, v->n};
    size_t pos = 0, wlen = v->n / 7 + 1, nwin = 0;
    oracle_window win[16];
    for (int i = 0; i < 3; i++) {
        while (pos < cuts[i]) {
            if (pos % wlen == 0 && nwin < 16) {
                if (nwin % 3 == 2) {
                    CHECK_OK(mh_writer_window_end(w));
                } else {
                    CHECK_OK(mh_writer_window_begin(w, 100 + 10 * nwin));
                    win[nwin] = (oracle_window){100 + 10 * nwin, pos, 0};
                }
                if (nwin && (nwin - 1) % 3 != 2)
                    win[nwin - 1].count = pos - win[nwin - 1].id_first;
                nwin++;
            }
            size_t next = (pos / wlen + 1) * wlen;
            size_t k = cuts[i] - pos < 4096 ? cuts[i] - pos : 4096;
            if (pos + k > next)
                k = next - pos;
            size_t bad = 0;
            CHECK_OK(mh_writer_append_batch(w, v->a + pos, k, &bad));
            pos += k;
        }
        CHECK_OK(mh_writer_commit(w));
    }
    CHECK_OK(mh_writer_close(w));
    if (nwin && (nwin - 1) % 3 != 2)
        win[nwin - 1].count = v->n - win[nwin - 1].id_first;
    /* the window list without the gaps' entries */
    size_t nw = 0;
    for (size_t i = 0; i < nwin; i++)
        if (i % 3 != 2)
            win[nw++] = win[i];
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    tu_check_stats(r, v->a, v->n);
    CHECK(mh_reader_window_count(r) == nw);
    tu_random_queries(r, v->a, v->n, queries, seed);
    size_t hits = tu_random_filtered_queries(r, v->a, v->n, win, nw, queries, seed + 1);
    printf("%s: %zu filtered queries with matches\n", name, hits);
    CHECK(hits > queries / 10);
    mh_reader_close(r);
}

int main(int argc, char **argv) {
    int given = argc > 2 && !strcmp(argv[1], "--log");
    if (argc < 2 || (given && argc > 4) || (!given && argc > 3)) {
        fprintf(stderr, "usage: oracle_lackey PROGRAM [QUERIES]\n"
                        "       oracle_lackey --log LACKEY_LOG [QUERIES]\n");
        return 2;
    }
    if (!given && !find_in_path("valgrind")) {
        printf("valgrind is not installed: skipped\n");
        return TU_SKIP;
    }
    const char *qarg = given ? (argc > 3 ? argv[3] : NULL) : (argc > 2 ? argv[2] : NULL);
    size_t queries = qarg ? strtoull(qarg, NULL, 0) : 3000;
    char dir[4096], log[4096];
    tu_mkdtemp(dir, sizeof dir, "lackey");
    if (given) { /* a trace recorded elsewhere, e.g. the benchmark's */
        snprintf(log, sizeof log, "%.4000s", argv[2]);
    } else {
        tu_join(log, sizeof log, dir, "trace.lackey");
        record(argv[1], log);
    }
    vec v = {0};
    read_lackey(log, &v);
    CHECKF(v.n > 10000, "only %zu accesses recorded", v.n);
    printf("recorded %zu accesses, %llu transitions\n", v.n,
           (unsigned long long)v.a[v.n - 1].transition + 1);
#ifdef MH_HAVE_IMPORT
    cross_check(log, &v);
#endif
    /* a failure leaves the directory behind: the trace to replay is there */
    snprintf(tu_note, sizeof tu_note, "the trace is kept in %.400s", log);
    store_and_query(dir, "small.store", &v, 1, queries, 11);
    store_and_query(dir, "default.store", &v, 0, queries / 2, 12);
    tu_rmtree(dir);
    free(v.a);
    printf("oracle_lackey: the real trace agrees\n");
    return 0;
}
