/*
 * engine_valgrind.c - the valgrind engine of `memhist record` (engine.h):
 * runs the program under
 *   valgrind --tool=lackey --trace-mem=yes --log-fd=N --trace-children=no
 *            --child-silent-after-fork=yes
 * and streams the trace from the pipe behind fd N through the lackey parser
 * into the caller's writer, so the trace never exists as a text file.
 *
 * valgrind reads $VALGRIND_OPTS (and ~/.valgrindrc, ./.valgrindrc) before
 * its command line and the command line wins, so the options given here
 * hold whatever the user configured: --trace-children=no and
 * --child-silent-after-fork=yes, without which a program that execs or
 * forks would interleave several processes' traces into one history (a
 * forked child is traced whatever --trace-children says, and writes its
 * trace into the same inherited log fd).
 *
 * How the end of the trace is read:
 *   - lackey prints its summary ("==PID== Exit code: N") when the guest
 *     exits, also on a fatal signal. A trace without it ended early: the
 *     process was SIGKILLed, or it exec'd another program, which then runs
 *     natively (untraced) in the same process until it exits.
 *   - While the program runs, /proc/PID/exe names valgrind's tool binary;
 *     once it names something else, the process exec'd that program.
 *   - valgrind writes nothing to the log when it fails before starting the
 *     program (bad option, program missing): an empty log means "did not
 *     start"; its message went to stderr (record's relay keeps it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "import.h"

/* The line lackey's fini prints last, after the program's exit. */
static const char fini_mark[] = "== Exit code:";
#define FINI_LEN (sizeof fini_mark - 1)

typedef struct vg_ctx {
    mh_writer *w;
    const engine_opts *o;
    uint64_t appended;
    uint64_t last_t;   /* transition of the last access appended */
    int fini_seen;     /* lackey's summary is in the trace */
    char edge[FINI_LEN]; /* last bytes of the previous read, for fini_mark */
    size_t edge_len;
} vg_ctx;

static int sink(void *ctx, const mh_access *a, size_t n) {
    vg_ctx *c = ctx;
    int rc = mh_writer_append_batch(c->w, a, n, NULL);
    if (rc)
        return rc;
    c->appended += n;
    c->last_t = a[n - 1].transition;
    if (c->o->progress)
        c->o->progress(c->o->ctx, c->appended);
    return 0;
}


/* Looks for fini_mark in buf, also across the previous read's end. */
static void scan_fini(vg_ctx *c, const char *buf, size_t n) {
    if (c->fini_seen)
        return;
    char join[2 * FINI_LEN];
    size_t head = n < FINI_LEN ? n : FINI_LEN;
    memcpy(join, c->edge, c->edge_len);
    memcpy(join + c->edge_len, buf, head);
    size_t jl = c->edge_len + head;
    for (size_t i = 0; i + FINI_LEN <= jl && !c->fini_seen; i++)
        c->fini_seen = memcmp(join + i, fini_mark, FINI_LEN) == 0;
    for (size_t i = 0; i + FINI_LEN <= n && !c->fini_seen; i++)
        c->fini_seen = buf[i] == '=' && memcmp(buf + i, fini_mark, FINI_LEN) == 0;
    size_t keep = FINI_LEN - 1;
    if (n >= keep) {
        memcpy(c->edge, buf + n - keep, keep);
        c->edge_len = keep;
    } else {
        size_t old = c->edge_len + n > keep ? c->edge_len + n - keep : 0;
        memmove(c->edge, c->edge + old, c->edge_len - old);
        memcpy(c->edge + c->edge_len - old, buf, n);
        c->edge_len = c->edge_len - old + n;
    }
}

/* Whether exe (the target of /proc/PID/exe) is valgrind itself: its
 * launcher or one of its tool binaries (lackey-amd64-linux, ...). */
static int is_valgrind_exe(const char *exe, const char *vg_real) {
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    return strncmp(base, "lackey-", 7) == 0 || strstr(exe, "/valgrind/") != NULL ||
           (vg_real && strcmp(exe, vg_real) == 0);
}

/* Reads /proc/PID/exe; 0 when it could be read. */
static int proc_exe(pid_t pid, char *out, size_t n) {
    char link[64];
    snprintf(link, sizeof link, "/proc/%ld/exe", (long)pid);
    ssize_t got = readlink(link, out, n - 1);
    if (got <= 0)
        return -1;
    out[got] = '\0';
    return 0;
}

/* Reads what the pipe holds now, at most max reads (0: until it is empty,
 * for after the program ended; a bound otherwise, so that the caller sees
 * a stop signal even when valgrind writes faster than we read). Returns 0,
 * or the parser's error. Sets *eof at end of file. */
static int drain(int fd, char *buf, size_t cap, mh_lackey_parser *lp, vg_ctx *c,
                 int max, int *started, int *eof, int *read_errno) {
    for (int reads = 0; max == 0 || reads < max; reads++) {
        ssize_t got = read(fd, buf, cap);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (got < 0) {
            *read_errno = errno;
            return MH_EIO;
        }
        if (got == 0) {
            *eof = 1;
            return 0;
        }
        *started = 1;
        scan_fini(c, buf, (size_t)got);
        int rc = mh_lackey_feed(lp, buf, (size_t)got);
        if (rc)
            return rc;
    }
    return 0;
}

static void describe_status(int st, char *out, size_t n) {
    if (WIFEXITED(st))
        snprintf(out, n, "exit status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(out, n, "signal %d", WTERMSIG(st));
    else
        snprintf(out, n, "status %d", st);
}

int engine_valgrind_run(char *const argv[], const engine_opts *o, mh_writer *w,
                        volatile sig_atomic_t *stop, engine_result *res) {
    memset(res, 0, sizeof *res);
    snprintf(res->tracer, sizeof res->tracer, "valgrind-lackey");
    const char *tool = o->tool;
    if (tool == NULL) {
        const char *env = getenv("MEMHIST_VALGRIND");
        tool = env && *env ? env : "valgrind";
    }
    char *vg = engine_find_in_path(tool);
    if (vg == NULL) {
        snprintf(res->error, sizeof res->error,
                 "valgrind not found: install it with apt-get install valgrind");
        return ENGINE_EFAILED;
    }
    char *vg_real = realpath(vg, NULL);
    /* "valgrind-3.19.0" */
    engine_tool_version(vg, res->tracer_version, sizeof res->tracer_version);

    int argc = 0;
    while (argv[argc])
        argc++;
    enum { FIXED = 6 };
    char **vargv = calloc((size_t)argc + FIXED + 1, sizeof *vargv);
    mh_lackey_parser *lp = NULL;
    enum { BUF = 1 << 20 };
    char *buf = malloc(BUF);
    vg_ctx ctx = {.w = w, .o = o};
    lp = mh_lackey_new(o->exec ? MH_IMPORT_EXEC : 0, sink, &ctx);
    int fds[2] = {-1, -1};
    int rc = 0;
    if (vargv == NULL || buf == NULL || lp == NULL) {
        rc = MH_ENOMEM;
        goto out;
    }
    if (engine_pipe_cloexec(fds) != 0) {
        snprintf(res->error, sizeof res->error, "pipe: %s", strerror(errno));
        rc = ENGINE_EFAILED;
        goto out;
    }
    char logfd[32];
    snprintf(logfd, sizeof logfd, "--log-fd=%d", fds[1]);
    vargv[0] = vg;
    vargv[1] = "--tool=lackey";
    vargv[2] = "--trace-mem=yes";
    vargv[3] = logfd;
    /* after $VALGRIND_OPTS, so these win: no exec'd program traced, and no
     * trace from a forked child (it would write into the same log fd) */
    vargv[4] = "--trace-children=no";
    vargv[5] = "--child-silent-after-fork=yes";
    for (int i = 0; i < argc; i++)
        vargv[FIXED + i] = argv[i];

    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(res->error, sizeof res->error, "fork: %s", strerror(errno));
        rc = ENGINE_EFAILED;
        goto out;
    }
    if (pid == 0) {
        fcntl(fds[1], F_SETFD, 0); /* the log fd must survive exec */
        execv(vg, vargv);
        fprintf(stderr, "memhist record: cannot run %s: %s\n", vg, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    fds[1] = -1;
    res->pid = (uint64_t)pid;
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
#ifdef __linux__
    /* F_SETPIPE_SZ (Linux, hidden without _GNU_SOURCE): room for the naps
     * below; best effort */
    fcntl(fds[0], 1031, 1 << 20);
#endif

    int status = 0, exited = 0, eof = 0, read_errno = 0, warned = 0, killed = 0;
    double forwarded_at = 0, next_exe_check = 0;
    char exe[PATH_MAX];
    while (!(exited && eof)) {
        if (*stop && !res->interrupted) {
            res->interrupted = (int)*stop;
            forwarded_at = engine_now_s();
            if (!exited)
                kill(pid, res->interrupted);
        }
        if (res->interrupted && !exited && !killed && engine_now_s() - forwarded_at > ENGINE_GRACE_S) {
            kill(pid, SIGKILL); /* the program ignored the signal */
            killed = 1;
        }
        if (!eof) {
            struct pollfd pfd = {fds[0], POLLIN, 0};
            poll(&pfd, 1, exited ? 0 : 100);
            /* valgrind writes its log in pieces of a few hundred bytes:
             * reading each as it comes costs more system time than
             * valgrind itself; let the pipe fill a little first */
            struct timespec nap = {0, 2000000};
            nanosleep(&nap, NULL);
            rc = drain(fds[0], buf, BUF, lp, &ctx, 1, &res->started, &eof, &read_errno);
            if (rc)
                break;
        } else {
            /* the log is closed (a program exec'd after valgrind may close
             * every fd) but the process runs on: wait without spinning */
            struct timespec nap = {0, 50000000};
            nanosleep(&nap, NULL);
        }
        if (!exited) {
            pid_t got = waitpid(pid, &status, WNOHANG);
            if (got == pid)
                exited = 1;
            if (exited) {
                /* everything the process wrote is in the pipe now; a
                 * program it exec'd may have kept the write end open, so
                 * read what is there rather than wait for end of file */
                rc = drain(fds[0], buf, BUF, lp, &ctx, 0, &res->started, &eof, &read_errno);
                break;
            }
        }
        if (!warned && res->started && engine_now_s() >= next_exe_check) {
            next_exe_check = engine_now_s() + 0.1;
            if (proc_exe(pid, exe, sizeof exe) == 0 && !is_valgrind_exe(exe, vg_real)) {
                if (o->warn) {
                    char msg[PATH_MAX + 200];
                    snprintf(msg, sizeof msg,
                             "%s exec'd %s, which runs without valgrind: its accesses are "
                             "not recorded (only the process before the exec is)",
                             argv[0], exe);
                    o->warn(o->ctx, msg);
                }
                warned = 1;
            }
        }
    }
    if (rc) {
        /* unreadable trace: stop the tracer, keep what was parsed */
        if (!exited) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        }
        snprintf(res->error, sizeof res->error, "%s",
                 read_errno ? strerror(read_errno) : mh_lackey_error(lp));
        if (rc == MH_ECORRUPT || rc == MH_EIO)
            rc = ENGINE_EFAILED;
        res->wait_status = status;
        res->accesses = ctx.appended;
        goto out;
    }
    res->wait_status = status;
    if (*stop && !res->interrupted)
        res->interrupted = (int)*stop; /* arrived as the program ended */
    int cut = !ctx.fini_seen; /* the trace may end inside a transition */
    if (cut)
        mh_lackey_drop_partial(lp);
    rc = mh_lackey_finish(lp);
    if (rc) {
        snprintf(res->error, sizeof res->error, "%s", mh_lackey_error(lp));
        rc = rc == MH_ECORRUPT ? ENGINE_EFAILED : rc;
        res->accesses = ctx.appended;
        goto out;
    }
    res->accesses = ctx.appended;
    if (cut && ctx.appended > 0 && (res->interrupted || WIFSIGNALED(status))) {
        uint64_t before = mh_writer_next_id(w);
        int drc = mh_writer_discard_from(w, ctx.last_t);
        if (drc != 0 && drc != MH_ECOMMITTED) {
            rc = drc;
            goto out;
        }
        res->accesses -= before - mh_writer_next_id(w);
    }
    if (!res->started) {
        char how[64];
        describe_status(status, how, sizeof how);
        snprintf(res->error, sizeof res->error,
                 "valgrind ended (%s) before starting %s", how, argv[0]);
        rc = ENGINE_EFAILED;
        goto out;
    }
    if (!ctx.fini_seen && !warned && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) &&
        o->warn) {
        char msg[512];
        snprintf(msg, sizeof msg,
                 "%s exec'd another program, which ran without valgrind: its accesses "
                 "are not recorded (valgrind's summary is missing from the trace)",
                 argv[0]);
        o->warn(o->ctx, msg);
    }
out:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    mh_lackey_free(lp);
    free(buf);
    free(vargv);
    free(vg_real);
    free(vg);
    return rc;
}
