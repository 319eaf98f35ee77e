/*
 * robust_util.c - helpers shared by the robustness tests (see
 * robust_util.h). Everything here exits the test on an environment failure
 * (allocation, file system) so that the tests themselves only handle the
 * library's answers.
 */
#include "robust_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t rb_rand(rb_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rb_below(rb_rng *r, uint64_t n) { return n ? rb_rand(r) % n : 0; }

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    RB_CHECK(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

mh_access *rb_gen_accesses(uint64_t seed, size_t n) {
    rb_rng rng = {seed};
    mh_access *a = xmalloc(n * sizeof *a);
    uint64_t t = 1000, sp = 0x7ffd0000ull, stream = 0x40000000ull;
    for (size_t i = 0; i < n; i++) {
        mh_access *x = &a[i];
        memset(x, 0, sizeof *x);
        if (rb_below(&rng, 3) == 0)
            t += 1 + (rb_below(&rng, 50) == 0 ? rb_below(&rng, 100000) : 0);
        x->id = i;
        x->transition = t;
        uint64_t kind = rb_below(&rng, 10);
        if (kind < 4) { /* stack */
            sp += (rb_below(&rng, 2) ? 8u : (uint64_t)-8);
            x->physical = sp - rb_below(&rng, 64);
            x->size = 8;
        } else if (kind < 7) { /* heap objects */
            x->physical = 0x10000000ull + rb_below(&rng, 512) * 64 + rb_below(&rng, 8) * 8;
            x->size = 1u << rb_below(&rng, 4);
        } else if (kind < 9) { /* streaming */
            stream += 4;
            x->physical = stream;
            x->size = 4;
        } else { /* rare large copies and far addresses */
            x->physical = rb_rand(&rng) >> 20;
            x->size = rb_below(&rng, 4) == 0 ? 4096 : 16;
        }
        uint64_t op = rb_below(&rng, 8);
        x->op = op < 4 ? MH_OP_READ : op < 7 ? MH_OP_WRITE : MH_OP_EXEC;
        x->has_linear = rb_below(&rng, 10) != 0;
        x->linear = x->has_linear ? x->physical + 0x7f0000000000ull : 0;
    }
    return a;
}

void rb_random_query(rb_rng *rng, const mh_access *all, size_t n, mh_query *q) {
    mh_query_init(q);
    q->start_kind = rb_below(rng, 2) ? MH_FROM_ID : MH_FROM_TRANSITION;
    q->direction = rb_below(rng, 2) ? MH_BACKWARD : MH_FORWARD;
    uint64_t pick = rb_below(rng, 20);
    if (n == 0 || pick == 0) {
        q->start = 0;
    } else if (pick == 1) {
        q->start = UINT64_MAX;
    } else {
        const mh_access *a = &all[rb_below(rng, n)];
        q->start = q->start_kind == MH_FROM_ID ? a->id : a->transition;
        if (pick == 2)
            q->start += 1; /* between or past the end */
    }
    q->ops = (uint32_t)(1 + rb_below(rng, 7));
    if (n == 0 || rb_below(rng, 4) == 0) {
        q->addr_first = 0;
        q->addr_last = UINT64_MAX;
        return;
    }
    static const uint64_t widths[] = {0, 7, 63, 4095, 1u << 20, 1ull << 32};
    uint64_t w = widths[rb_below(rng, sizeof widths / sizeof widths[0])];
    uint64_t p = all[rb_below(rng, n)].physical;
    uint64_t back = rb_below(rng, w + 1);
    q->addr_first = back > p ? 0 : p - back;
    q->addr_last = q->addr_first > UINT64_MAX - w ? UINT64_MAX : q->addr_first + w;
}

static int check_one(const mh_reader *r, const mh_access *all, size_t n,
                     const mh_query *q, size_t max, int resume_pieces,
                     mh_access *got, mh_access *want) {
    size_t nwant = oracle_answer(all, n, q, want, max);
    size_t ngot = 0;
    mh_query cur = *q;
    int pieces = resume_pieces > 0 ? resume_pieces : 1;
    for (int p = 0; p < pieces && ngot < max; p++) {
        size_t step = p == pieces - 1 ? max - ngot : (max - ngot + 1) / 2;
        size_t k = 0;
        int rc = mh_query_run(r, &cur, got + ngot, step, &k);
        if (rc != MH_OK)
            return rc;
        if (k > step) {
            fprintf(stderr, "query returned %zu > max %zu\n", k, step);
            return -100;
        }
        ngot += k;
        if (k < step)
            break;
        if (k > 0) /* resume after the last id returned */
            oracle_resume(&cur, &got[ngot - 1]);
    }
    if (oracle_compare("query", got, ngot, want, nwant) != 0) {
        fprintf(stderr,
                "wrong answer (store of %zu accesses): kind %u dir %u start %llu "
                "range [0x%llx, 0x%llx] ops %u max %zu pieces %d: got %zu, want %zu\n",
                n, q->start_kind, q->direction, (unsigned long long)q->start,
                (unsigned long long)q->addr_first, (unsigned long long)q->addr_last,
                q->ops, max, pieces, ngot, nwant);
        return -100;
    }
    return MH_OK;
}

int rb_check_queries(const mh_reader *r, const mh_access *all, size_t n,
                     rb_rng *rng, int count) {
    enum { MAXQ = 2000 };
    mh_access *got = xmalloc(MAXQ * sizeof *got);
    mh_access *want = xmalloc(MAXQ * sizeof *want);
    int rc = MH_OK;
    for (int i = 0; i < count && rc == MH_OK; i++) {
        mh_query q;
        rb_random_query(rng, all, n, &q);
        size_t max = rb_below(rng, 8) == 0 ? MAXQ : 1 + (size_t)rb_below(rng, 200);
        int pieces = rb_below(rng, 3) == 0 ? 3 : 1;
        rc = check_one(r, all, n, &q, max, pieces, got, want);
    }
    free(got);
    free(want);
    return rc;
}

int rb_read_all(const mh_reader *r, mh_access **out, size_t *n) {
    *out = NULL;
    *n = 0;
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    mh_cursor *c = NULL;
    int rc = mh_cursor_open(r, &q, &c);
    if (rc != MH_OK)
        return rc;
    size_t cap = 4096, len = 0;
    mh_access *buf = xmalloc(cap * sizeof *buf);
    for (;;) {
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap * sizeof *buf);
            RB_CHECK(buf != NULL, "out of memory");
        }
        size_t k = 0;
        rc = mh_cursor_next(c, buf + len, cap - len, &k);
        if (rc != MH_OK || k == 0)
            break;
        len += k;
    }
    mh_cursor_close(c);
    if (rc != MH_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    *n = len;
    return MH_OK;
}

int rb_load_store(const char *path, mh_access **out, size_t *n) {
    mh_reader *r = NULL;
    *out = NULL;
    *n = 0;
    int rc = mh_reader_open(path, &r);
    if (rc != MH_OK)
        return rc;
    rc = rb_read_all(r, out, n);
    mh_reader_close(r);
    return rc;
}

int rb_is_data_error(int rc) {
    return rc == MH_ECORRUPT || rc == MH_ECHECKSUM || rc == MH_ETRUNCATED ||
           rc == MH_EVERSION || rc == MH_ENOTSTORE;
}

static void print_problem(void *ctx, const mh_problem *p) {
    (void)ctx;
    fprintf(stderr, "  fsck: %s %s @%llu: %s\n", mh_error_name(p->code),
            p->file ? p->file : "-", (unsigned long long)p->offset,
            p->message ? p->message : "");
}

uint64_t rb_verify(const char *path, unsigned flags, int verbose, int *rc) {
    mh_verify_result res = {.struct_size = sizeof res};
    *rc = mh_verify(path, flags, verbose ? print_problem : NULL, NULL, &res);
    return res.problems;
}

unsigned char *rb_read_file(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        RB_CHECK(errno == ENOENT, "open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    RB_CHECK(fstat(fd, &st) == 0, "stat %s: %s", path, strerror(errno));
    size_t n = (size_t)st.st_size;
    unsigned char *buf = xmalloc(n);
    size_t done = 0;
    while (done < n) {
        ssize_t k = read(fd, buf + done, n - done);
        RB_CHECK(k > 0, "read %s: %s", path, k < 0 ? strerror(errno) : "short");
        done += (size_t)k;
    }
    close(fd);
    *len = n;
    return buf;
}

void rb_write_file(const char *path, const void *buf, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    RB_CHECK(fd >= 0, "create %s: %s", path, strerror(errno));
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, (const char *)buf + done, len - done);
        RB_CHECK(k > 0, "write %s: %s", path, strerror(errno));
        done += (size_t)k;
    }
    close(fd);
}

int rb_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **rb_list_dir(const char *dir, size_t *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return NULL;
    size_t cap = 16;
    char **names = xmalloc(cap * sizeof *names);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            cap *= 2;
            names = realloc(names, cap * sizeof *names);
            RB_CHECK(names != NULL, "out of memory");
        }
        names[*n] = strdup(e->d_name);
        RB_CHECK(names[*n] != NULL, "out of memory");
        (*n)++;
    }
    closedir(d);
    qsort(names, *n, sizeof *names, cmp_names);
    return names;
}

void rb_free_names(char **names, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void rb_path(char *buf, size_t len, const char *dir, const char *name) {
    int k = snprintf(buf, len, "%s/%s", dir, name);
    RB_CHECK(k > 0 && (size_t)k < len, "path too long: %s/%s", dir, name);
}

void rb_rm_dir(const char *dir) { /* recursive */
    size_t n = 0;
    char **names = rb_list_dir(dir, &n);
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        char p[4096];
        rb_path(p, sizeof p, dir, names[i]);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rb_rm_dir(p);
        else
            RB_CHECK(unlink(p) == 0 || errno == ENOENT, "unlink %s: %s", p, strerror(errno));
    }
    rb_free_names(names, n);
    RB_CHECK(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
}

void rb_copy_dir(const char *from, const char *to) {
    rb_rm_dir(to);
    RB_CHECK(mkdir(to, 0755) == 0, "mkdir %s: %s", to, strerror(errno));
    size_t n = 0;
    char **names = rb_list_dir(from, &n);
    RB_CHECK(names != NULL, "cannot list %s", from);
    for (size_t i = 0; i < n; i++) {
        char a[4096], b[4096];
        rb_path(a, sizeof a, from, names[i]);
        rb_path(b, sizeof b, to, names[i]);
        size_t len = 0;
        unsigned char *buf = rb_read_file(a, &len);
        if (buf == NULL)
            continue; /* vanished meanwhile (a writer removed a temp file) */
        rb_write_file(b, buf, len);
        free(buf);
    }
    rb_free_names(names, n);
}

pid_t rb_spawn(char *const argv[], int out_fd, const char *err_path) {
    fflush(NULL);
    pid_t pid = fork();
    RB_CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* a child must not outlive a failed test (a stopped importer would
         * keep ctest's output pipe open forever) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (out_fd >= 0 && out_fd != STDOUT_FILENO) {
            dup2(out_fd, STDOUT_FILENO);
            close(out_fd);
        }
        if (err_path != NULL) {
            int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                dup2(fd, STDERR_FILENO);
                close(fd);
            }
        }
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

int rb_run(char *const argv[], const char *out_path, const char *err_path) {
    int fd = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    RB_CHECK(fd >= 0, "open %s: %s", out_path ? out_path : "/dev/null", strerror(errno));
    pid_t pid = rb_spawn(argv, fd, err_path ? err_path : "/dev/null");
    close(fd);
    int st = 0;
    RB_CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

int rb_which(const char *prog, char *buf, size_t len) {
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t dlen = colon ? (size_t)(colon - path) : strlen(path);
        int k = snprintf(buf, len, "%.*s/%s", (int)dlen, path, prog);
        if (k > 0 && (size_t)k < len && access(buf, X_OK) == 0)
            return 0;
        path += dlen + (colon != NULL);
    }
    return -1;
}

int rb_make_trace(const char *dir, const char *tracee, const char *tracee_arg,
                  size_t synth_accesses, char *path, size_t path_len,
                  const char **format) {
    char valgrind[4096];
    if (getenv("RB_NO_VALGRIND") == NULL &&
        rb_which("valgrind", valgrind, sizeof valgrind) == 0) {
        rb_path(path, path_len, dir, "trace.lackey");
        char logopt[4200];
        snprintf(logopt, sizeof logopt, "--log-file=%s", path);
        char *argv[] = {valgrind, "--tool=lackey", "--trace-mem=yes", logopt,
                        (char *)tracee, (char *)tracee_arg, NULL};
        int st = rb_run(argv, NULL, NULL);
        RB_CHECK(st == 0, "valgrind lackey of %s exited with %d", tracee, st);
        *format = "lackey";
        return 1;
    }
    rb_path(path, path_len, dir, "trace.csv");
    mh_access *a = rb_gen_accesses(0x5eed, synth_accesses);
    FILE *f = fopen(path, "w");
    RB_CHECK(f != NULL, "create %s: %s", path, strerror(errno));
    fprintf(f, "transition,linear,physical,size,op\n");
    static const char ops[] = "rwx";
    for (size_t i = 0; i < synth_accesses; i++) {
        if (a[i].has_linear)
            fprintf(f, "%llu,0x%llx,0x%llx,%u,%c\n", (unsigned long long)a[i].transition,
                    (unsigned long long)a[i].linear, (unsigned long long)a[i].physical,
                    a[i].size, ops[a[i].op]);
        else
            fprintf(f, "%llu,,0x%llx,%u,%c\n", (unsigned long long)a[i].transition,
                    (unsigned long long)a[i].physical, a[i].size, ops[a[i].op]);
    }
    RB_CHECK(fclose(f) == 0, "write %s", path);
    free(a);
    *format = "csv";
    return 0;
}
