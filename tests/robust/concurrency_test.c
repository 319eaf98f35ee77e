/*
 * concurrency_test.c - readers while a writer runs, and two writers.
 *
 *   concurrency_test MEMHIST TRACEE WORKDIR
 *
 * Imports a real trace (valgrind lackey of TRACEE; synthetic CSV without
 * valgrind, then exit 77 after running) with `memhist import
 * --report-commits --commit-every N` reading from a pipe the test feeds
 * (half the trace, the rest after three stops), and while it runs:
 *   - at some reported commits the importer is stopped (SIGSTOP), which
 *     makes the moment exact: a reader opened then holds at least that
 *     commit and exactly a prefix of the trace; queries match the oracle;
 *     each such reader sees more than the previous one;
 *   - while it is stopped, holding the lock: a second mh_writer_open gets
 *     MH_ELOCKED, `memhist import --append` into the same store exits 1
 *     naming the lock, mh_verify(MH_VERIFY_REPAIR) gets MH_ELOCKED;
 *   - after it continues, readers opened in a tight loop while it commits
 *     all succeed and hold a prefix (the manifest switch is atomic);
 *   - readers kept open through later commits still answer for their own
 *     snapshot after the import ends.
 * Finally two writers in one process: the second gets MH_ELOCKED until the
 * first closes.
 */
#include "robust_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_OLD = 64 };

/* Writes the trace into the importer's stdin: the first half, then, once
 * released, the rest; then closes the pipe. */
typedef struct feeder {
    unsigned char *data;
    size_t len;
    int fd;
    int released;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} feeder;

static void write_all(int fd, const unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return; /* the importer died: the main thread reports it */
        p += k;
        n -= (size_t)k;
    }
}

static void *feed(void *arg) {
    feeder *fd = arg;
    size_t half = fd->len / 2;
    write_all(fd->fd, fd->data, half);
    pthread_mutex_lock(&fd->lock);
    while (!fd->released)
        pthread_cond_wait(&fd->cond, &fd->lock);
    pthread_mutex_unlock(&fd->lock);
    write_all(fd->fd, fd->data + half, fd->len - half);
    close(fd->fd);
    return NULL;
}

static void release_rest(feeder *fd) {
    pthread_mutex_lock(&fd->lock);
    fd->released = 1;
    pthread_cond_signal(&fd->cond);
    pthread_mutex_unlock(&fd->lock);
}

static const mh_access *g_all;
static size_t g_total;

/* Checks a reader opened on a live store; returns its access count. */
static size_t check_reader(mh_reader *r, uint64_t min, int full, rb_rng *rng, const char *label) {
    mh_stats st = {.struct_size = sizeof st};
    RB_OK(mh_reader_stats(r, &st));
    size_t n = (size_t)st.accesses;
    RB_CHECK(n >= min && n <= g_total, "%s: reader holds %zu, at least %llu committed, "
             "trace %zu", label, n, (unsigned long long)min, g_total);
    if (full) {
        mh_access *got = NULL;
        size_t k = 0;
        int rc = rb_read_all(r, &got, &k);
        RB_CHECK(rc == MH_OK && k == n, "%s: read %zu of %zu: %s", label, k, n, mh_error_name(rc));
        RB_CHECK(oracle_compare(label, got, n, g_all, n) == 0, "%s: not a prefix", label);
        free(got);
    } else if (n > 0) { /* the last accesses of the snapshot, backward */
        mh_access tail[500];
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        q.direction = MH_BACKWARD;
        q.start_kind = MH_FROM_ID;
        q.start = UINT64_MAX;
        size_t k = 0;
        RB_OK(mh_query_run(r, &q, tail, 500, &k));
        size_t want = n < 500 ? n : 500;
        RB_CHECK(k == want, "%s: tail query gave %zu of %zu", label, k, want);
        for (size_t i = 0; i < k; i++)
            RB_CHECK(oracle_same_access(&tail[i], &g_all[n - 1 - i]), "%s: tail access %zu differs",
                     label, n - 1 - i);
    }
    int rc = rb_check_queries(r, g_all, n, rng, 8);
    RB_CHECK(rc == MH_OK, "%s: queries: %s", label, rc == -100 ? "wrong answer" : mh_error_name(rc));
    return n;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: concurrency_test MEMHIST TRACEE WORKDIR\n");
        return 2;
    }
    const char *memhist = argv[1], *tracee = argv[2], *work = argv[3];
    signal(SIGPIPE, SIG_IGN);
    rb_rng rng = {777};
    rb_rm_dir(work);
    RB_CHECK(mkdir(work, 0755) == 0, "mkdir %s: %s", work, strerror(errno));
    char trace[4096], ref[4096], store[4096], errf[4096];
    const char *fmt = NULL;
    int real = rb_make_trace(work, tracee, "200", 300000, trace, sizeof trace, &fmt);
    rb_path(ref, sizeof ref, work, "ref");
    rb_path(store, sizeof store, work, "store");
    rb_path(errf, sizeof errf, work, "second-import.err");
    const char *xflag = strcmp(fmt, "lackey") == 0 ? "-x" : "-q";

    char *refargs[] = {(char *)memhist, "import", "-q", (char *)xflag, "--format", (char *)fmt,
                       trace, ref, NULL};
    int st = rb_run(refargs, NULL, NULL);
    RB_CHECK(st == 0, "reference import exited with %d", st);
    mh_access *all = NULL;
    int rc = rb_load_store(ref, &all, &g_total);
    RB_CHECK(rc == MH_OK && g_total > 1000, "reference: %s, %zu", mh_error_name(rc), g_total);
    g_all = all;

    char every[32];
    snprintf(every, sizeof every, "%zu", g_total / 60 + 1);
    /* The importer reads the trace from a pipe this test feeds: the first
     * half at once, the rest only after three stops. So the import cannot
     * end before the test has seen it at work, however loaded the host. */
    feeder fd_ctx;
    memset(&fd_ctx, 0, sizeof fd_ctx);
    fd_ctx.data = rb_read_file(trace, &fd_ctx.len);
    RB_CHECK(fd_ctx.data != NULL, "cannot read %s", trace);
    pthread_mutex_init(&fd_ctx.lock, NULL);
    pthread_cond_init(&fd_ctx.cond, NULL);
    int in[2];
    RB_CHECK(pipe(in) == 0, "pipe: %s", strerror(errno));
    /* no child may hold the write end, or the importer never sees the end */
    RB_CHECK(fcntl(in[1], F_SETFD, FD_CLOEXEC) == 0, "fcntl: %s", strerror(errno));
    fd_ctx.fd = in[1];
    int saved_stdin = dup(STDIN_FILENO);
    RB_CHECK(saved_stdin >= 0 && dup2(in[0], STDIN_FILENO) == STDIN_FILENO, "dup2: %s",
             strerror(errno));
    int fds[2];
    RB_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
    char *args[] = {(char *)memhist, "import", "-q", (char *)xflag, "--format", (char *)fmt,
                    "--commit-every", every, "--report-commits", "-", store, NULL};
    pid_t pid = rb_spawn(args, fds[1], NULL);
    close(fds[1]);
    RB_CHECK(dup2(saved_stdin, STDIN_FILENO) == STDIN_FILENO, "dup2: %s", strerror(errno));
    close(saved_stdin);
    close(in[0]);
    pthread_t feed_thread;
    RB_CHECK(pthread_create(&feed_thread, NULL, feed, &fd_ctx) == 0, "pthread_create");
    FILE *f = fdopen(fds[0], "r");

    mh_reader *old[MAX_OLD];
    size_t old_n[MAX_OLD];
    int nold = 0, stops = 0, live_opens = 0, increases = 0, lock_checks = 0;
    int reaped = 0, final_status = 0;
    size_t last_seen = 0;
    char line[256];
    unsigned long long v = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "committed %llu", &v) != 1)
            continue;
        if (v <= last_seen || v == g_total || nold >= MAX_OLD - 4 || stops >= 10)
            continue;
        /* stop the importer: the store is now exactly what it committed */
        RB_CHECK(kill(pid, SIGSTOP) == 0, "SIGSTOP: %s", strerror(errno));
        int wst;
        RB_CHECK(waitpid(pid, &wst, WUNTRACED) == pid, "waitpid: %s", strerror(errno));
        if (!WIFSTOPPED(wst)) { /* it finished before the signal */
            reaped = 1;
            final_status = wst;
            break;
        }
        char label[64];
        snprintf(label, sizeof label, "stop %d at commit %llu", stops, v);
        mh_reader *r = NULL;
        rc = mh_reader_open(store, &r);
        RB_CHECK(rc == MH_OK, "%s: open: %s", label, mh_error_name(rc));
        size_t n = check_reader(r, v, 1, &rng, label);
        RB_CHECK(n > last_seen || stops == 0, "%s: reopened reader holds %zu, earlier %zu",
                 label, n, last_seen);
        if (stops > 0 && n > last_seen)
            increases++;
        last_seen = n;
        old[nold] = r;
        old_n[nold++] = n;
        /* the importer holds the lock until its final commit (in close)
         * is done; a snapshot short of the whole trace proves it has not */
        if (stops % 3 == 0 && n < g_total) {
            mh_writer *w2 = NULL;
            rc = mh_writer_open(store, MH_APPEND, NULL, &w2);
            RB_CHECK(rc == MH_ELOCKED, "%s: second writer got %s, want MH_ELOCKED", label,
                     mh_error_name(rc));
            mh_writer_abandon(w2);
            char *a2[] = {(char *)memhist, "import", "-q", "--append", "--format", (char *)fmt,
                          trace, store, NULL};
            int s2 = rb_run(a2, NULL, errf);
            RB_CHECK(s2 == 1, "%s: a second memhist import exited %d, want 1", label, s2);
            size_t elen = 0;
            unsigned char *e = rb_read_file(errf, &elen);
            RB_CHECK(e != NULL && elen > 0, "%s: second import printed no message", label);
            char *msg = malloc(elen + 1);
            RB_CHECK(msg != NULL, "out of memory");
            memcpy(msg, e, elen);
            msg[elen] = 0;
            RB_CHECK(strstr(msg, "lock") != NULL || strstr(msg, "LOCK") != NULL,
                     "%s: second import's message does not mention the lock: %s", label, msg);
            if (lock_checks == 0)
                printf("second import says: %s", msg);
            free(msg);
            free(e);
            mh_verify_result res = {.struct_size = sizeof res};
            rc = mh_verify(store, MH_VERIFY_REPAIR, NULL, NULL, &res);
            RB_CHECK(rc == MH_ELOCKED, "%s: repair during an import returned %s", label,
                     mh_error_name(rc));
            lock_checks++;
        }
        RB_CHECK(kill(pid, SIGCONT) == 0, "SIGCONT: %s", strerror(errno));
        stops++;
        if (stops == 3)
            release_rest(&fd_ctx);
        /* open while it runs: any moment must give a committed prefix */
        for (int k = 0; k < 3; k++) {
            mh_reader *lr = NULL;
            rc = mh_reader_open(store, &lr);
            RB_CHECK(rc == MH_OK, "live open %d: %s", live_opens, mh_error_name(rc));
            snprintf(label, sizeof label, "live open %d", live_opens);
            size_t ln = check_reader(lr, last_seen, 0, &rng, label);
            live_opens++;
            if (ln > last_seen && nold < MAX_OLD) {
                old[nold] = lr;
                old_n[nold++] = ln;
            } else {
                mh_reader_close(lr);
            }
        }
    }
    release_rest(&fd_ctx); /* in case there were fewer stops */
    while (fgets(line, sizeof line, f) != NULL)
        ;
    fclose(f);
    pthread_join(feed_thread, NULL);
    free(fd_ctx.data);
    int wst = final_status;
    if (!reaped)
        waitpid(pid, &wst, 0);
    RB_CHECK(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "import exited with status %d", wst);
    RB_CHECK(stops >= 3, "only %d stops (commit lines too few)", stops);
    /* snapshots stay valid after later commits */
    for (int i = 0; i < nold; i++) {
        char label[64];
        snprintf(label, sizeof label, "old reader %d after the import", i);
        size_t n = check_reader(old[i], old_n[i], i % 4 == 0, &rng, label);
        RB_CHECK(n == old_n[i], "%s: snapshot changed from %zu to %zu", label, old_n[i], n);
        mh_reader_close(old[i]);
    }
    mh_reader *r = NULL;
    RB_OK(mh_reader_open(store, &r));
    size_t n = check_reader(r, g_total, 1, &rng, "final reader");
    RB_CHECK(n == g_total, "final reader holds %zu of %zu", n, g_total);
    mh_reader_close(r);

    /* two writers in one process */
    mh_writer *w1 = NULL, *w2 = NULL;
    RB_OK(mh_writer_open(store, MH_APPEND, NULL, &w1));
    rc = mh_writer_open(store, MH_APPEND, NULL, &w2);
    RB_CHECK(rc == MH_ELOCKED && w2 == NULL, "second writer in the same process: %s",
             mh_error_name(rc));
    rc = mh_writer_open(store, MH_CREATE | MH_APPEND, NULL, &w2);
    RB_CHECK(rc == MH_ELOCKED, "second writer (create|append): %s", mh_error_name(rc));
    mh_access extra = g_all[g_total - 1];
    RB_OK(mh_writer_append(w1, &extra));
    RB_OK(mh_writer_close(w1));
    RB_OK(mh_writer_open(store, MH_APPEND, NULL, &w2));
    RB_CHECK(mh_writer_committed(w2) == g_total + 1, "after the first writer closed: %llu",
             (unsigned long long)mh_writer_committed(w2));
    mh_writer_abandon(w2);
    int vrc;
    uint64_t p = rb_verify(store, 0, 1, &vrc);
    RB_CHECK(vrc == MH_OK && p == 0, "fsck at the end: %s", mh_error_name(vrc));

    printf("trace %zu accesses (%s); importer stops %d, readers opened while stopped "
           "all held the commit; reopen saw more %d times; live opens %d; lock refusals "
           "checked %d; old snapshots rechecked %d\n",
           g_total, real ? "valgrind lackey" : "synthetic", stops, increases, live_opens,
           lock_checks, nold);
    free(all);
    rb_rm_dir(work);
    if (!real) {
        printf("SKIP: valgrind not found; ran on a synthetic CSV trace\n");
        return RB_SKIP;
    }
    return 0;
}
