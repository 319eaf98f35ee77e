/*
 * engine_test.c - the QEMU engine on real programs: engine_qemu_run records
 * qemu_victim (victim.c) in each of its modes; every store must verify
 * clean and hold the writes the victim says it made. With valgrind
 * installed, the victim's arena accesses are compared with lackey's.
 *   test_qemu_engine VICTIM
 * The plugin comes from $MEMHIST_QEMU_PLUGIN (ctest sets it).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_qemu.h"
#include "testutil.h"

static const char *victim;
static uint64_t trace_for, retrace_every; /* windows of the next record() */
static char dir[512];
static int counter;

typedef struct run {
    int rc;
    engine_result res;
    char store[600];
    char out[8192]; /* the victim's stdout */
} run;

/* Records victim with args into a fresh store; the victim's stdout is
 * captured into r->out. */
static void record(run *r, int exec, volatile sig_atomic_t *stop, const char *a1,
                   const char *a2) {
    char name[64];
    snprintf(name, sizeof name, "s%d.store", counter++);
    tu_join(r->store, sizeof r->store, dir, name);
    char outpath[600];
    tu_join(outpath, sizeof outpath, dir, "stdout.txt");
    mh_writer *w;
    CHECK_OK(mh_writer_open(r->store, MH_CREATE, NULL, &w));
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(saved >= 0 && fd >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    char *argv[] = {(char *)victim, (char *)a1, (char *)a2, NULL};
    engine_opts o = {.exec = exec, .quiet = 1, .trace_for = trace_for,
                     .retrace_every = retrace_every};
    r->rc = engine_qemu_run(argv, &o, w, stop, &r->res);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    size_t len = 0;
    unsigned char *text = tu_read_file(outpath, &len);
    CHECK(text != NULL);
    if (len >= sizeof r->out)
        len = sizeof r->out - 1;
    memcpy(r->out, text, len);
    r->out[len] = '\0';
    free(text);
    if (r->rc == 0)
        CHECK_OK(mh_writer_close(w));
    else
        mh_writer_abandon(w);
}

/* Address the victim printed as "name 0x...". */
static uint64_t addr_of(const run *r, const char *name) {
    char key[64];
    snprintf(key, sizeof key, "%s 0x", name);
    const char *p = strstr(r->out, key);
    CHECKF(p != NULL, "victim did not print '%s': %s", name, r->out);
    return strtoull(p + strlen(key) - 2, NULL, 16);
}

static void verify_clean(const char *store) {
    mh_verify_result vr = {.struct_size = sizeof vr};
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &vr));
    CHECK(vr.problems == 0);
}

/* Every access of [a, b] with an op in ops, in id order; *n gets the count. */
static mh_access *collect(const char *store, uint64_t a, uint64_t b, unsigned ops, size_t *n) {
    mh_reader *rd;
    CHECK_OK(mh_reader_open(store, &rd));
    mh_query q;
    mh_query_init(&q);
    q.addr_first = a;
    q.addr_last = b;
    q.ops = ops;
    mh_cursor *cur;
    CHECK_OK(mh_cursor_open(rd, &q, &cur));
    size_t cap = 1024, len = 0, got;
    mh_access *all = malloc(cap * sizeof *all);
    CHECK(all != NULL);
    for (;;) {
        if (cap - len < 512) {
            cap *= 2;
            mh_access *bigger = realloc(all, cap * sizeof *all);
            CHECK(bigger != NULL);
            all = bigger;
        }
        CHECK_OK(mh_cursor_next(cur, all + len, 512, &got));
        if (got == 0)
            break;
        len += got;
    }
    mh_cursor_close(cur);
    mh_reader_close(rd);
    *n = len;
    return all;
}

static const char *meta(const char *store, const char *key, char *buf, size_t cap) {
    mh_reader *rd;
    CHECK_OK(mh_reader_open(store, &rd));
    const char *v = mh_reader_meta_find(rd, key);
    if (v)
        snprintf(buf, cap, "%s", v);
    mh_reader_close(rd);
    return v ? buf : NULL;
}

static uint64_t total(const char *store, unsigned op) {
    mh_reader *rd;
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_open(store, &rd));
    CHECK_OK(mh_reader_stats(rd, &st));
    mh_reader_close(rd);
    return op < MH_OP_COUNT ? st.op_counts[op] : st.accesses;
}

/* Exactly one write of value size 8 at the 8-byte global addr. */
static void check_one_write(const char *store, uint64_t addr) {
    size_t n;
    mh_access *w = collect(store, addr, addr + 7, MH_OPS_WRITE, &n);
    CHECKF(n == 1, "%zu writes to 0x%llx, expected 1", n, (unsigned long long)addr);
    CHECK(w[0].physical == addr && w[0].linear == addr && w[0].has_linear == 1 &&
          w[0].size == 8);
    free(w);
}

static void test_global(void) {
    run r;
    record(&r, 0, NULL, "global", "77");
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    CHECK(r.res.started && WIFEXITED(r.res.wait_status) && WEXITSTATUS(r.res.wait_status) == 0);
    CHECK(strcmp(r.res.tracer, "qemu-plugin") == 0);
    CHECK(r.res.pid != 0 && r.res.interrupted == 0);
    verify_clean(r.store);
    CHECK(r.res.accesses == total(r.store, MH_OP_COUNT));
    CHECK(r.res.accesses > 10000 && total(r.store, MH_OP_EXEC) == 0);
    check_one_write(r.store, addr_of(&r, "target"));
    /* Transitions never decrease in id order over the whole store. */
    size_t n;
    mh_access *all = collect(r.store, 0, UINT64_MAX, MH_OPS_ALL, &n);
    CHECK(n == r.res.accesses);
    for (size_t i = 1; i < n; i++)
        CHECK(all[i].transition >= all[i - 1].transition);
    free(all);
}

static void test_exit_status(void) {
    run r;
    record(&r, 0, NULL, "exit", "7");
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    CHECK(WIFEXITED(r.res.wait_status) && WEXITSTATUS(r.res.wait_status) == 7);
    verify_clean(r.store);
}

/* A guest killed by SIGSEGV skips the plugin's exit callback: the rings
 * still hold everything, including the write just before the crash. */
static void test_segv(void) {
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore); /* qemu would write a guest core file */
    run r;
    record(&r, 0, NULL, "segv", "0");
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    CHECK(WIFSIGNALED(r.res.wait_status) && WTERMSIG(r.res.wait_status) == SIGSEGV);
    verify_clean(r.store);
    check_one_write(r.store, addr_of(&r, "target"));
}

/* SIGKILL: qemu dies with records the consumer has not merged yet; the
 * drain after waitpid takes them all (the count of arena accesses is
 * exact: 8 per step of work). */
static void test_kill9(void) {
    for (int round = 0; round < 3; round++) {
        run r;
        record(&r, 0, NULL, "kill9", "30");
        CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
        CHECK(WIFSIGNALED(r.res.wait_status) && WTERMSIG(r.res.wait_status) == SIGKILL);
        verify_clean(r.store);
        check_one_write(r.store, addr_of(&r, "target"));
        uint64_t a = addr_of(&r, "arena");
        size_t n;
        free(collect(r.store, a, a + 4095, MH_OPS_RW, &n));
        CHECKF(n == 30 * 512 * 8, "%zu arena accesses, expected %d", n, 30 * 512 * 8);
    }
}

static void test_threads(void) {
    run r;
    record(&r, 0, NULL, "threads", "8");
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    CHECK(WIFEXITED(r.res.wait_status) && WEXITSTATUS(r.res.wait_status) == 0);
    verify_clean(r.store);
    uint64_t slots = addr_of(&r, "slots");
    for (int i = 0; i < 8; i++)
        check_one_write(r.store, slots + 8 * (uint64_t)i);
    size_t n;
    mh_access *all = collect(r.store, 0, UINT64_MAX, MH_OPS_ALL, &n);
    CHECK(n == r.res.accesses);
    for (size_t i = 1; i < n; i++)
        CHECK(all[i].transition >= all[i - 1].transition);
    free(all);
    char buf[64];
    CHECKF(meta(r.store, "qemu_late_accesses", buf, sizeof buf) == NULL,
           "the merge let %s accesses arrive late", buf);
}

/* The child of a fork runs untraced: its write is absent, the parent's is
 * there, and the store says a child was not traced. */
static void test_fork(void) {
    run r;
    record(&r, 0, NULL, "fork", NULL);
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    CHECK(WIFEXITED(r.res.wait_status) && WEXITSTATUS(r.res.wait_status) == 0);
    verify_clean(r.store);
    check_one_write(r.store, addr_of(&r, "target"));
    size_t n;
    free(collect(r.store, addr_of(&r, "child"), addr_of(&r, "child") + 7, MH_OPS_WRITE, &n));
    CHECK(n == 0);
    char buf[64];
    CHECK(meta(r.store, "qemu_untraced_forks", buf, sizeof buf) && strcmp(buf, "1") == 0);
}

static void test_exec_call(void) {
    run r;
    record(&r, 0, NULL, "exec", NULL);
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    CHECK(WIFEXITED(r.res.wait_status) && WEXITSTATUS(r.res.wait_status) == 0);
    verify_clean(r.store);
    check_one_write(r.store, addr_of(&r, "target"));
    char buf[64];
    CHECK(meta(r.store, "qemu_untraced_execs", buf, sizeof buf) && strcmp(buf, "1") == 0);
}

/* --exec: instruction fetches are stored as execute accesses whose size is
 * the instruction length (1 .. 15). */
static void test_exec_fetches(void) {
    run r;
    record(&r, 1, NULL, "global", "5");
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    verify_clean(r.store);
    uint64_t x = total(r.store, MH_OP_EXEC);
    CHECK(x > 10000 && x < r.res.accesses);
    size_t n;
    mh_access *all = collect(r.store, 0, UINT64_MAX, MH_OPS_EXEC, &n);
    CHECK(n == x);
    for (size_t i = 0; i < n; i++)
        CHECK(all[i].size >= 1 && all[i].size <= 15);
    free(all);
    check_one_write(r.store, addr_of(&r, "target"));
}

static volatile sig_atomic_t stop_flag;
static char stdout_path[600];
/* Sets the stop flag once the victim says it is ready (however slow qemu
 * starts on a loaded machine), else looks again 100 ms later. open, read
 * and setitimer are async-signal-safe. */
static void on_alarm(int sig) {
    (void)sig;
    char buf[256];
    ssize_t n = 0;
    int fd = open(stdout_path, O_RDONLY);
    if (fd >= 0) {
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
    }
    buf[n > 0 ? n : 0] = '\0';
    if (strstr(buf, "ready") != NULL) {
        stop_flag = SIGTERM;
        return;
    }
    struct itimerval again = {{0, 0}, {0, 100 * 1000}};
    setitimer(ITIMER_REAL, &again, NULL);
}

/* record's stop flag: the signal goes to the program, what it did so far
 * is stored, interrupted says which signal. */
static void test_stop(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    tu_join(stdout_path, sizeof stdout_path, dir, "stdout.txt");
    struct itimerval it = {{0, 0}, {0, 200 * 1000}};
    stop_flag = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    run r;
    record(&r, 0, &stop_flag, "spin", NULL);
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    CHECK(r.res.interrupted == SIGTERM);
    CHECK(WIFSIGNALED(r.res.wait_status) && WTERMSIG(r.res.wait_status) == SIGTERM);
    verify_clean(r.store);
    check_one_write(r.store, addr_of(&r, "target"));
}

/* Tiny rings: the producer waits for the consumer instead of dropping, so
 * the victim's own accesses are all there, as with the default rings. */
static void test_backpressure(void) {
    run big, small;
    record(&big, 0, NULL, "work", "40");
    CHECKF(big.rc == 0, "rc %d: %s", big.rc, big.res.error);
    setenv("MEMHIST_QEMU_RING", "1024", 1);
    record(&small, 0, NULL, "work", "40");
    unsetenv("MEMHIST_QEMU_RING");
    CHECKF(small.rc == 0, "rc %d: %s", small.rc, small.res.error);
    verify_clean(small.store);
    uint64_t a = addr_of(&big, "arena");
    size_t nb, ns;
    mh_access *xb = collect(big.store, a, a + 4095, MH_OPS_RW, &nb);
    mh_access *xs = collect(small.store, a, a + 4095, MH_OPS_RW, &ns);
    CHECKF(nb == ns && nb >= 40 * 512 * 8, "arena accesses %zu vs %zu", nb, ns);
    for (size_t i = 0; i < nb; i++)
        CHECK(xb[i].physical == xs[i].physical && xb[i].op == xs[i].op &&
              xb[i].size == xs[i].size);
    free(xb);
    free(xs);
}

static void test_errors(void) {
    run r;
    char *argv[] = {"/nonexistent/program", NULL};
    engine_opts o = {.quiet = 1};
    char store[600];
    tu_join(store, sizeof store, dir, "err.store");
    mh_writer *w;
    CHECK_OK(mh_writer_open(store, MH_CREATE, NULL, &w));
    CHECK(engine_qemu_run(argv, &o, w, NULL, &r.res) == ENGINE_EFAILED);
    CHECK(strstr(r.res.error, "not found") != NULL && !r.res.started);

    o.tool = "/nonexistent/qemu-x86_64";
    char *vargv[] = {(char *)victim, "exit", "0", NULL};
    CHECK(engine_qemu_run(vargv, &o, w, NULL, &r.res) == ENGINE_EFAILED);
    CHECK(strstr(r.res.error, "qemu-x86_64 not found") != NULL);
    o.tool = NULL;

    char why[256];
    CHECK(engine_qemu_available(why, sizeof why) == 1 && why[0] == '\0');
    char *plugin = strdup(getenv("MEMHIST_QEMU_PLUGIN"));
    setenv("MEMHIST_QEMU_PLUGIN", "/nonexistent/libmemhist-qemu.so", 1);
    CHECK(engine_qemu_available(why, sizeof why) == 0 && strstr(why, "not readable"));
    CHECK(engine_qemu_run(vargv, &o, w, NULL, &r.res) == ENGINE_EFAILED);
    CHECK(strstr(r.res.error, "not readable") != NULL);

    /* Something that is not a plugin: qemu refuses it, nothing runs. */
    setenv("MEMHIST_QEMU_PLUGIN", victim, 1);
    CHECK(engine_qemu_run(vargv, &o, w, NULL, &r.res) == ENGINE_EFAILED);
    CHECKF(strstr(r.res.error, "did not load the plugin") != NULL, "%s", r.res.error);
    CHECK(!r.res.started);
    setenv("MEMHIST_QEMU_PLUGIN", plugin, 1);
    free(plugin);

    setenv("MEMHIST_QEMU_RING", "1000", 1);
    CHECK(engine_qemu_run(vargv, &o, w, NULL, &r.res) == ENGINE_EFAILED);
    CHECK(strstr(r.res.error, "MEMHIST_QEMU_RING") != NULL);
    unsetenv("MEMHIST_QEMU_RING");
    CHECK(mh_writer_next_id(w) == 0);
    mh_writer_abandon(w);
}

/* ---- lackey comparison ---------------------------------------------------- */
/* Counts per (op, offset in the arena, size) of the victim's "work" mode,
 * from lackey's log: L = read, S = write, M = read + write (QEMU reports a
 * read-modify-write instruction as its two accesses). */
enum { ARENA = 4096 };
typedef struct counts {
    uint32_t n[2][ARENA][4]; /* op, offset, log2 size */
} counts;

static int size_slot(uint64_t size) {
    return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
}

static int lackey_counts(const char *log, uint64_t arena, counts *c, size_t *other) {
    FILE *f = fopen(log, "r");
    if (f == NULL)
        return -1;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        char kind;
        unsigned long long a, sz;
        if (sscanf(line, " %c %llx,%llu", &kind, &a, &sz) != 3 || line[0] != ' ')
            continue;
        if (a < arena || a >= arena + ARENA)
            continue;
        int s = size_slot(sz);
        if (s < 0) {
            (*other)++;
            continue;
        }
        if (kind == 'L' || kind == 'M')
            c->n[0][a - arena][s]++;
        if (kind == 'S' || kind == 'M')
            c->n[1][a - arena][s]++;
    }
    fclose(f);
    return 0;
}

static void test_vs_lackey(void) {
    if (system("valgrind --version >/dev/null 2>&1") != 0) {
        printf("lackey comparison skipped: valgrind not installed\n");
        return;
    }
    run r;
    record(&r, 0, NULL, "work", "3");
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    uint64_t arena = addr_of(&r, "arena");
    char log[600], cmd[2000];
    tu_join(log, sizeof log, dir, "lackey.log");
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=lackey --trace-mem=yes --log-file='%s' '%s' work 3 >/dev/null 2>&1",
             log, victim);
    CHECK(system(cmd) == 0);
    counts *lk = calloc(1, sizeof *lk), *qm = calloc(1, sizeof *qm);
    CHECK(lk && qm);
    size_t other = 0;
    CHECK(lackey_counts(log, arena, lk, &other) == 0);
    CHECK(other == 0);
    size_t n;
    mh_access *all = collect(r.store, arena, arena + ARENA - 1, MH_OPS_RW, &n);
    for (size_t i = 0; i < n; i++) {
        int s = size_slot(all[i].size);
        CHECK(s >= 0 && all[i].physical >= arena && all[i].physical < arena + ARENA);
        qm->n[all[i].op][all[i].physical - arena][s]++;
    }
    free(all);
    size_t diff = 0, total_lk = 0;
    for (int op = 0; op < 2; op++)
        for (int a = 0; a < ARENA; a++)
            for (int s = 0; s < 4; s++) {
                total_lk += lk->n[op][a][s];
                if (lk->n[op][a][s] != qm->n[op][a][s] && diff++ < 5)
                    fprintf(stderr, "op %d offset %d size %d: lackey %u qemu %u\n", op, a,
                            1 << s, lk->n[op][a][s], qm->n[op][a][s]);
            }
    CHECKF(diff == 0, "%zu (op, address, size) keys differ from lackey", diff);
    CHECK(total_lk == n && n == 3 * 512 * 8);
    free(lk);
    free(qm);
}

/* Format 2.0 streams: each guest thread its own stream (kind thread, its
 * tid, "thread TID"), main first; every access carries its pc, inside the
 * victim's code for the victim's own stores; each thread's accesses, taken
 * by a stream query, are its program order (thread i's 2000 updates of
 * mh_shared at (7i + r) % 256, r = 0, 1, ...). */
static void test_streams(void) {
    run r;
    const int T = 6;
    record(&r, 0, NULL, "threads", "6");
    CHECKF(r.rc == 0, "rc %d: %s", r.rc, r.res.error);
    verify_clean(r.store);
    uint64_t slots = addr_of(&r, "slots"), shared = addr_of(&r, "shared");
    uint64_t text = addr_of(&r, "text"), etext = addr_of(&r, "etext");
    mh_reader *rd;
    CHECK_OK(mh_reader_open(r.store, &rd));
    size_t ns = mh_reader_stream_count(rd);
    CHECKF(ns == (size_t)T + 1, "%zu streams for %d threads and main", ns, T);
    uint64_t tids[64];
    int seen[64] = {0};
    for (size_t k = 0; k < ns; k++) {
        mh_stream_info si;
        mh_stream_info_init(&si);
        CHECK_OK(mh_reader_stream_info(rd, k, &si));
        CHECK(si.id == k && si.kind == MH_STREAM_THREAD && si.pid == r.res.pid);
        char want[48];
        snprintf(want, sizeof want, "thread %llu", (unsigned long long)si.tid);
        CHECKF(si.name && strcmp(si.name, want) == 0, "stream %zu named %s", k,
               si.name ? si.name : "(none)");
        CHECK(k == 0 || si.tid != tids[0]);
        tids[k] = si.tid;
        CHECK(si.accesses > 0);

        /* This stream's accesses, in id order. */
        uint32_t id = (uint32_t)k;
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        q.streams = &id;
        q.nstreams = 1;
        mh_access *a = malloc(si.accesses * sizeof *a);
        size_t got;
        CHECK(a != NULL);
        CHECK_OK(mh_query_run(rd, &q, a, si.accesses, &got));
        CHECK(got == si.accesses);
        int thread = -1;
        uint64_t r_next = 0;
        for (size_t j = 0; j < got; j++) {
            CHECK(a[j].stream == id && a[j].has_pc == 1);
            int in_slots = a[j].linear >= slots && a[j].linear < slots + 8 * 64;
            int in_shared = a[j].linear >= shared && a[j].linear < shared + 8 * 256;
            if (a[j].op != MH_OP_WRITE || !(in_slots || in_shared))
                continue;
            CHECKF(a[j].pc >= text && a[j].pc < etext, "store at 0x%llx from pc 0x%llx",
                   (unsigned long long)a[j].linear, (unsigned long long)a[j].pc);
            if (in_slots) {
                CHECK(thread < 0);
                thread = (int)((a[j].linear - slots) / 8);
                CHECK(thread < T && !seen[thread]);
                seen[thread] = 1;
                continue;
            }
            CHECK(thread >= 0);
            CHECKF(a[j].linear == shared + 8 * ((7 * (uint64_t)thread + r_next) % 256),
                   "thread %d update %llu out of order", thread, (unsigned long long)r_next);
            r_next++;
        }
        CHECKF(k == 0 ? thread < 0 : (thread >= 0 && r_next == 2000),
               "stream %zu: thread %d, %llu updates", k, thread, (unsigned long long)r_next);
        free(a);
    }
    mh_reader_close(rd);
}

/* --trace-for N --retrace-every M: the windowed recording of a
 * deterministic run holds exactly the accesses of the full recording whose
 * transition t has t mod M < N, the others are counted as dropped, and the
 * store lists one window per k = t / M that has accesses, with their ids,
 * counts and transition ranges. */
static void test_windows(void) {
    run full, win;
    record(&full, 0, NULL, "work", "3");
    CHECK(full.rc == 0);
    const uint64_t N = 2000, M = 20000;
    trace_for = N;
    retrace_every = M;
    record(&win, 0, NULL, "work", "3");
    trace_for = retrace_every = 0;
    CHECKF(win.rc == 0, "%s", win.res.error);
    verify_clean(win.store);
    size_t nf, nw;
    mh_access *af = collect(full.store, 0, UINT64_MAX, MH_OPS_ALL, &nf);
    mh_access *aw = collect(win.store, 0, UINT64_MAX, MH_OPS_ALL, &nw);
    size_t j = 0;
    uint64_t dropped = 0;
    for (size_t i = 0; i < nf; i++) {
        if (af[i].transition % M >= N) {
            dropped++;
            continue;
        }
        CHECKF(j < nw && aw[j].transition == af[i].transition && aw[j].linear == af[i].linear &&
                   aw[j].size == af[i].size && aw[j].op == af[i].op,
               "windowed access %zu differs from full access %zu", j, i);
        j++;
    }
    CHECK(j == nw && nw > 0 && dropped > 0);
    CHECK(win.res.dropped == dropped);
    CHECK(win.res.accesses == nw);

    mh_reader *rd;
    CHECK_OK(mh_reader_open(win.store, &rd));
    size_t nwin = mh_reader_window_count(rd), k = 0;
    for (size_t i = 0; i < nw; k++) {
        CHECKF(k < nwin, "accesses beyond the %zu windows listed", nwin);
        mh_window_info wi = {.struct_size = sizeof wi};
        CHECK_OK(mh_reader_window_info(rd, k, &wi));
        uint64_t id = aw[i].transition / M;
        size_t e = i;
        while (e < nw && aw[e].transition / M == id)
            e++;
        CHECKF(wi.window == id && wi.id_first == aw[i].id && wi.accesses == e - i &&
                   wi.transition_first == aw[i].transition &&
                   wi.transition_last == aw[e - 1].transition,
               "window %zu: id %llu first %llu count %llu", k, (unsigned long long)wi.window,
               (unsigned long long)wi.id_first, (unsigned long long)wi.accesses);
        i = e;
    }
    CHECKF(k == nwin, "%zu windows listed, %zu with accesses", nwin, k);
    CHECK(nwin >= 3);
    mh_reader_close(rd);
    free(af);
    free(aw);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_qemu_engine VICTIM\n");
        return 2;
    }
    victim = argv[1];
    char why[256];
    if (getenv("MEMHIST_QEMU_PLUGIN") == NULL || !engine_qemu_available(why, sizeof why)) {
        printf("skipped: %s\n", getenv("MEMHIST_QEMU_PLUGIN") ? why : "MEMHIST_QEMU_PLUGIN unset");
        return TU_SKIP;
    }
    tu_mkdtemp(dir, sizeof dir, "qemu");
    test_global();
    test_exit_status();
    test_segv();
    test_kill9();
    test_threads();
    test_fork();
    test_exec_call();
    test_exec_fetches();
    test_stop();
    test_backpressure();
    test_errors();
    test_vs_lackey();
    test_windows();
    test_streams();
    tu_rmtree(dir);
    printf("qemu engine: all checks passed\n");
    return 0;
}
