/*
 * fsize_test.c - a writer that runs into the file size limit (the stand-in
 * for a full disk that needs no privileges: RLIMIT_FSIZE, SIGXFSZ ignored).
 *
 *   fsize_test WORKDIR
 *
 * For a range of limits, with and without the background thread, a child
 * process creates a store, commits a first part without a limit, lowers
 * RLIMIT_FSIZE and goes on appending and committing (small commits, then a
 * large one) until the writer fails. It checks in the child that the error
 * is MH_ENOSPC or MH_EIO and that the writer is then failed (MH_ESTATE); it
 * reports every successful commit on a pipe. The parent then checks that the
 * store opens holding a prefix of the data with at least every reported
 * commit, that repair leaves fsck clean, and that a new writer (no limit)
 * can append the rest so that the store ends up whole.
 */
#include "robust_util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { TOTAL = 40000, FIRST = 2000, SMALL = 1000, NSMALL = 4 };

/* child exit codes */
enum { C_FAILED_CLEANLY = 0, C_NEVER_FAILED = 10, C_BAD_CODE = 11, C_NOT_FAILED_STATE = 12,
       C_SETUP = 13, C_BAD_ERRNO = 14 };

static void report(int fd, uint64_t v) {
    char line[32];
    int n = snprintf(line, sizeof line, "%llu\n", (unsigned long long)v);
    ssize_t rc = write(fd, line, (size_t)n);
    (void)rc;
}

static int child(const char *dir, const mh_access *all, rlim_t limit, int background,
                 int use_close, int fd) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 512;
    o.block_accesses = 128;
    o.commit_accesses = 0;
    o.background = background;
    mh_writer *w = NULL;
    if (mh_writer_open(dir, MH_CREATE, &o, &w) != MH_OK)
        return C_SETUP;
    if (mh_writer_append_batch(w, all, FIRST, NULL) != MH_OK || mh_writer_commit(w) != MH_OK)
        return C_SETUP;
    report(fd, mh_writer_committed(w));
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return C_SETUP;
    size_t pos = FIRST;
    int rc = MH_OK;
    for (int step = 0; step <= NSMALL && rc == MH_OK; step++) {
        size_t n = step < NSMALL ? SMALL : TOTAL - pos;
        rc = mh_writer_append_batch(w, all + pos, n, NULL);
        if (rc == MH_OK)
            rc = mh_writer_commit(w);
        if (rc == MH_OK) {
            pos += n;
            report(fd, mh_writer_committed(w));
        }
    }
    if (rc == MH_OK) {
        mh_writer_close(w);
        return C_NEVER_FAILED;
    }
    int err = errno;
    fprintf(stderr, "  limit %llu, background %d: writer failed with %s (errno %s) after "
            "committing %llu\n", (unsigned long long)limit, background, mh_error_name(rc),
            strerror(err), (unsigned long long)mh_writer_committed(w));
    if (rc != MH_ENOSPC && rc != MH_EIO) {
        mh_writer_abandon(w);
        return C_BAD_CODE;
    }
    /* memhist.h: after MH_EIO and MH_ENOSPC, errno holds the reason */
    if (err != EFBIG && err != ENOSPC) {
        fprintf(stderr, "  errno after %s is %s, want EFBIG\n", mh_error_name(rc),
                strerror(err));
        mh_writer_abandon(w);
        return C_BAD_ERRNO;
    }
    mh_access one = all[pos];
    int again = mh_writer_append(w, &one);
    int again2 = mh_writer_commit(w);
    if (again != MH_ESTATE || again2 != MH_ESTATE) {
        fprintf(stderr, "  after the failure: append %s, commit %s (want MH_ESTATE)\n",
                mh_error_name(again), mh_error_name(again2));
        mh_writer_abandon(w);
        return C_NOT_FAILED_STATE;
    }
    if (use_close) {
        int crc = mh_writer_close(w);
        if (crc == MH_OK) {
            fprintf(stderr, "  close of a failed writer returned MH_OK\n");
            return C_NOT_FAILED_STATE;
        }
    } else {
        mh_writer_abandon(w);
    }
    return C_FAILED_CLEANLY;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fsize_test WORKDIR\n");
        return 2;
    }
    const char *work = argv[1];
    rb_rm_dir(work);
    RB_CHECK(mkdir(work, 0755) == 0, "mkdir %s: %s", work, strerror(errno));
    mh_access *all = rb_gen_accesses(555, TOTAL);
    static const rlim_t limits[] = {200, 700, 3000, 9000, 20000, 60000, 150000};
    rb_rng rng = {31337};
    int runs = 0, failed_runs = 0;
    for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++) {
        for (int bg = 0; bg < 2; bg++) {
            char dir[4096], name[64];
            snprintf(name, sizeof name, "store-%llu-%d", (unsigned long long)limits[li], bg);
            rb_path(dir, sizeof dir, work, name);
            int fds[2];
            RB_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
            fflush(NULL);
            pid_t pid = fork();
            RB_CHECK(pid >= 0, "fork: %s", strerror(errno));
            if (pid == 0) {
                close(fds[0]);
                _exit(child(dir, all, limits[li], bg, (int)(li + (size_t)bg) % 2, fds[1]));
            }
            close(fds[1]);
            FILE *f = fdopen(fds[0], "r");
            unsigned long long v, committed = 0;
            while (fscanf(f, "%llu", &v) == 1)
                committed = v;
            fclose(f);
            int st = 0;
            waitpid(pid, &st, 0);
            RB_CHECK(WIFEXITED(st), "limit %llu bg %d: child died with signal %d",
                     (unsigned long long)limits[li], bg, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
            int code = WEXITSTATUS(st);
            RB_CHECK(code == C_FAILED_CLEANLY || code == C_NEVER_FAILED,
                     "limit %llu bg %d: child exit code %d", (unsigned long long)limits[li],
                     bg, code);
            runs++;
            if (code == C_FAILED_CLEANLY)
                failed_runs++;
            RB_CHECK(committed >= FIRST, "limit %llu: nothing committed", (unsigned long long)limits[li]);
            char label[128];
            snprintf(label, sizeof label, "limit %llu background %d", (unsigned long long)limits[li], bg);
            /* the store keeps every commit */
            mh_access *got = NULL;
            size_t n = 0;
            int rc = rb_load_store(dir, &got, &n);
            if (rc != MH_OK) {
                fprintf(stderr, "%s: store does not open (%s): repairing\n", label, mh_error_name(rc));
                int vrc;
                rb_verify(dir, MH_VERIFY_REPAIR, 1, &vrc);
                rc = rb_load_store(dir, &got, &n);
            }
            RB_CHECK(rc == MH_OK, "%s: store does not open: %s", label, mh_error_name(rc));
            RB_CHECK(n >= committed && n <= TOTAL, "%s: store holds %zu, %llu committed",
                     label, n, committed);
            RB_CHECK(oracle_compare(label, got, n, all, n) == 0, "%s: not a prefix", label);
            free(got);
            mh_reader *r = NULL;
            RB_OK(mh_reader_open(dir, &r));
            rc = rb_check_queries(r, all, n, &rng, 10);
            RB_CHECK(rc == MH_OK, "%s: queries: %s", label, rc == -100 ? "wrong" : mh_error_name(rc));
            mh_reader_close(r);
            int vrc;
            rb_verify(dir, MH_VERIFY_REPAIR, 0, &vrc);
            RB_CHECK(vrc == MH_OK, "%s: repair: %s", label, mh_error_name(vrc));
            uint64_t p = rb_verify(dir, 0, 1, &vrc);
            RB_CHECK(vrc == MH_OK && p == 0, "%s: fsck after repair: %s", label, mh_error_name(vrc));
            /* without the limit, a new writer completes the store */
            mh_writer *w = NULL;
            RB_OK(mh_writer_open(dir, MH_APPEND, NULL, &w));
            RB_CHECK(mh_writer_next_id(w) == n, "%s: writer resumes at %llu, store has %zu",
                     label, (unsigned long long)mh_writer_next_id(w), n);
            RB_OK(mh_writer_append_batch(w, all + n, TOTAL - n, NULL));
            RB_OK(mh_writer_close(w));
            rc = rb_load_store(dir, &got, &n);
            RB_CHECK(rc == MH_OK && n == TOTAL, "%s: completed store: %s, %zu", label,
                     mh_error_name(rc), n);
            RB_CHECK(oracle_compare(label, got, n, all, n) == 0, "%s: completed store differs", label);
            free(got);
            printf("%s: %s, %llu committed before, store opened with them\n", label,
                   code == C_FAILED_CLEANLY ? "writer failed cleanly" : "limit never reached",
                   committed);
            rb_rm_dir(dir);
        }
    }
    printf("file-size-limit runs: %d, writer failures checked: %d\n", runs, failed_runs);
    RB_CHECK(failed_runs >= runs / 2, "only %d of %d runs reached the limit", failed_runs, runs);
    free(all);
    rb_rm_dir(work);
    return 0;
}
