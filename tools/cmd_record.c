/*
 * cmd_record.c - `memhist record`: run a program under valgrind's lackey
 * and stream its memory accesses into a new store as they happen.
 *
 * valgrind writes its trace to the write end of a pipe (--log-fd=N); this
 * process reads the other end and pushes it through the lackey parser into
 * the writer, so the trace never exists as a text file. The traced program
 * keeps the terminal's stdin/stdout/stderr. Ctrl-C goes to the program (we
 * ignore SIGINT while it runs) so the store gets everything it traced.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "import.h"

static const char synopsis[] = "memhist record [-o STORE] [--exec] [--quiet] -- PROGRAM [ARGS...]";
static const char help[] =
    "Runs PROGRAM under valgrind --tool=lackey --trace-mem=yes and stores every\n"
    "memory access it makes, with the mapping of 'memhist import --format\n"
    "lackey'. The trace goes through a pipe, never a temporary file.\n\n"
    "options:\n"
    "  -o, --output STORE   store to create (default: memhist-PROGRAM-PID.store in\n"
    "                       the current directory, PID = the traced process)\n"
    "  -x, --exec           also store instruction fetches as execute accesses\n"
    "  -q, --quiet          no progress, no summary\n"
    "  -h, --help           this help\n\n"
    "Metadata saved: tracer, tracer_version, command_line, pid, start_time,\n"
    "exit_status, architecture, exec.\n\n"
    "The environment variable MEMHIST_VALGRIND names the valgrind executable\n"
    "(default: 'valgrind' found in PATH).\n\n"
    "Exit status: 0 the recording worked, whatever PROGRAM's own exit status (it\n"
    "is saved as exit_status: a program that fails or crashes still leaves a\n"
    "valid store of what was traced); 1 memhist failed (valgrind missing, store\n"
    "cannot be created, unreadable trace); 2 bad usage.\n";

static int run(int argc, char **argv);
const cli_cmd cmd_record = {"record", synopsis, help, run};

/* Finds an executable like execvp would: returns a malloc'd path or NULL. */
static char *find_in_path(const char *name) {
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? strdup(name) : NULL;
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    size_t nl = strlen(name);
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t dl = colon ? (size_t)(colon - path) : strlen(path);
        char *full = malloc(dl + nl + 2);
        if (full == NULL)
            return NULL;
        if (dl == 0)
            snprintf(full, dl + nl + 2, "%s", name);
        else
            snprintf(full, dl + nl + 2, "%.*s/%s", (int)dl, path, name);
        if (access(full, X_OK) == 0)
            return full;
        free(full);
        if (colon == NULL)
            break;
        path = colon + 1;
    }
    return NULL;
}

/* First line of `valgrind --version` ("valgrind-3.19.0"), or "unknown". */
static void valgrind_version(const char *vg, char *out, size_t len) {
    snprintf(out, len, "unknown");
    int fds[2];
    if (pipe(fds) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl(vg, vg, "--version", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return;
    }
    char buf[128];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof buf - 1 && ((got = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0 ||
                                  (got < 0 && errno == EINTR)))
        if (got > 0)
            n += (size_t)got;
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    if (n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        snprintf(out, len, "%s", buf);
}

/* The command line as one string, arguments with spaces or quotes quoted
 * shell-style so it can be read back unambiguously. */
static char *join_command(char **args, int n) {
    size_t cap = 1;
    for (int i = 0; i < n; i++)
        cap += 4 * strlen(args[i]) + 3;
    char *s = malloc(cap), *p = s;
    if (s == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        const char *a = args[i];
        int plain = *a != '\0' && strpbrk(a, " \t\n'\"\\$`*?;&|<>()[]{}!#~") == NULL;
        if (i)
            *p++ = ' ';
        if (plain) {
            p += sprintf(p, "%s", a);
            continue;
        }
        *p++ = '\'';
        for (; *a; a++) {
            if (*a == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *a;
            }
        }
        *p++ = '\'';
    }
    *p = '\0';
    return s;
}

typedef struct record_ctx {
    mh_writer *w;
    uint64_t appended;
    cli_progress prog;
} record_ctx;

static int sink(void *ctx, const mh_access *a, size_t n) {
    record_ctx *c = ctx;
    int rc = mh_writer_append_batch(c->w, a, n, NULL);
    if (rc == 0) {
        c->appended += n;
        cli_progress_update(&c->prog, c->appended);
    }
    return rc;
}

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"exec", no_argument, NULL, 'x'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_record;
    const char *store_opt = NULL;
    int exec = 0, quiet = 0, c;
    while ((c = cli_getopt(cmd, argc, argv, "+o:xqh", longopts)) != -1) {
        switch (c) {
        case 'o': store_opt = optarg; break;
        case 'x': exec = 1; break;
        case 'q': quiet = 1; break;
        case 'h': return cli_help(cmd);
        default: return CLI_USAGE;
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "missing PROGRAM");
    if (store_opt && *store_opt == '\0')
        return cli_usage_error(cmd, "empty STORE name");
    char **prog_argv = argv + optind;
    int prog_argc = argc - optind;

    const char *vg_env = getenv("MEMHIST_VALGRIND");
    char *vg = find_in_path(vg_env && *vg_env ? vg_env : "valgrind");
    if (vg == NULL)
        return cli_fail(cmd, "valgrind not found: install it with apt-get install valgrind");
    char *prog_path = find_in_path(prog_argv[0]);
    if (prog_path == NULL) {
        free(vg);
        return cli_fail(cmd, "program '%s' not found or not executable", prog_argv[0]);
    }
    free(prog_path);
    if (store_opt && cli_exists(store_opt)) {
        free(vg);
        return cli_fail(cmd, "'%s' already exists", store_opt);
    }
    char vg_version[128];
    valgrind_version(vg, vg_version, sizeof vg_version);

    int fds[2];
    if (pipe(fds) != 0) {
        free(vg);
        return cli_fail(cmd, "pipe: %s", strerror(errno));
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    char logfd[32];
    snprintf(logfd, sizeof logfd, "--log-fd=%d", fds[1]);
    char **vargv = calloc((size_t)prog_argc + 5, sizeof *vargv);
    if (vargv == NULL) {
        free(vg);
        return cli_fail(cmd, "%s", mh_strerror(MH_ENOMEM));
    }
    vargv[0] = vg;
    vargv[1] = "--tool=lackey";
    vargv[2] = "--trace-mem=yes";
    vargv[3] = logfd;
    for (int i = 0; i < prog_argc; i++)
        vargv[4 + i] = prog_argv[i];

    time_t start = time(NULL);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        free(vargv);
        free(vg);
        return cli_fail(cmd, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        execv(vg, vargv);
        fprintf(stderr, "memhist record: error: cannot run %s: %s\n", vg, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    free(vargv);
    /* Ctrl-C and Ctrl-\ reach the whole foreground group: let the traced
     * program handle them and keep recording until valgrind exits. */
    struct sigaction ign, old_int, old_quit;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);

    char default_store[512];
    const char *store = store_opt;
    if (store == NULL) {
        const char *base = strrchr(prog_argv[0], '/');
        base = base ? base + 1 : prog_argv[0];
        snprintf(default_store, sizeof default_store, "memhist-%s-%ld.store", base, (long)pid);
        store = default_store;
    }

    int status = CLI_FAIL, child_status = 0, waited = 0;
    mh_writer *w = NULL;
    mh_lackey_parser *lp = NULL;
    char *buf = NULL;
    record_ctx ctx = {0};
    char werr[MH_ERRMSG_MAX] = "";
    int rc = mh_writer_open_ex(store, MH_CREATE, NULL, &w, werr, sizeof werr);
    if (rc) {
        cli_fail(cmd, "cannot create store '%s': %s", store, cli_open_error(rc, werr));
        kill(pid, SIGKILL);
        goto out;
    }
    ctx.w = w;
    cli_progress_init(&ctx.prog, "record:", quiet);
    lp = mh_lackey_new(exec ? MH_IMPORT_EXEC : 0, sink, &ctx);
    enum { BUF = 1 << 20 };
    buf = malloc(BUF);
    if (lp == NULL || buf == NULL) {
        cli_fail(cmd, "%s", mh_strerror(MH_ENOMEM));
        kill(pid, SIGKILL);
        goto out;
    }
    int read_errno = 0;
    for (;;) {
        ssize_t got = read(fds[0], buf, BUF);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            read_errno = errno;
            rc = MH_EIO;
            break;
        }
        if (got == 0)
            break;
        rc = mh_lackey_feed(lp, buf, (size_t)got);
        if (rc)
            break;
    }
    if (rc) {
        /* The trace is unreadable from here on: stop the tracer, keep
         * what was parsed. */
        kill(pid, SIGKILL);
    }
    while (waitpid(pid, &child_status, 0) < 0 && errno == EINTR) {
    }
    waited = 1;
    if (rc == 0) {
        /* A tracer killed by a signal may stop in the middle of a line. */
        if (WIFSIGNALED(child_status))
            mh_lackey_drop_partial(lp);
        rc = mh_lackey_finish(lp);
    }
    cli_progress_done(&ctx.prog);
    char trace_err[300] = "";
    if (rc) {
        snprintf(trace_err, sizeof trace_err, "%s",
                 read_errno ? strerror(read_errno) : mh_lackey_error(lp));
        if (rc != MH_ECORRUPT && rc != MH_EIO) {
            mh_writer_errmsg(w, werr, sizeof werr);
            cli_fail(cmd, "storing the trace failed: %s", cli_lib_error(rc, werr));
            goto out;
        }
    }

    char exit_desc[64], pidbuf[32], when[64], *cmdline = join_command(prog_argv, prog_argc);
    if (WIFEXITED(child_status))
        snprintf(exit_desc, sizeof exit_desc, "exit %d", WEXITSTATUS(child_status));
    else if (WIFSIGNALED(child_status))
        snprintf(exit_desc, sizeof exit_desc, "signal %d", WTERMSIG(child_status));
    else
        snprintf(exit_desc, sizeof exit_desc, "unknown");
    snprintf(pidbuf, sizeof pidbuf, "%ld", (long)pid);
    struct tm tmv;
    gmtime_r(&start, &tmv);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    struct utsname un;
    const char *arch = uname(&un) == 0 ? un.machine : "unknown";
    const char *const meta[][2] = {
        {"tracer", "valgrind-lackey"},
        {"tracer_version", vg_version},
        {"command_line", cmdline ? cmdline : prog_argv[0]},
        {"pid", pidbuf},
        {"start_time", when},
        {"exit_status", exit_desc},
        {"architecture", arch},
        {"exec", exec ? "yes" : "no"},
        {"record_error", trace_err},
    };
    int mrc = 0;
    for (size_t i = 0; i < sizeof meta / sizeof meta[0] && mrc == 0; i++)
        if (meta[i][1][0] != '\0')
            mrc = mh_writer_set_meta(w, meta[i][0], meta[i][1]);
    free(cmdline);
    if (mrc) {
        mh_writer_errmsg(w, werr, sizeof werr);
        cli_fail(cmd, "cannot set metadata: %s", cli_lib_error(mrc, werr));
        goto out;
    }
    int crc = mh_writer_close(w);
    w = NULL;
    if (crc) {
        cli_fail(cmd, "committing '%s' failed: %s", store, cli_errstr(crc));
        goto out;
    }
    if (rc) {
        cli_fail(cmd, "unreadable trace from valgrind: %s (%s keeps the %" PRIu64
                 " accesses before it)",
                 trace_err, store, ctx.appended);
        goto out;
    }
    if (!quiet)
        fprintf(stderr, "memhist record: %" PRIu64 " accesses of '%s' (%s) recorded into %s\n",
                ctx.appended, prog_argv[0], exit_desc, store);
    status = CLI_OK;
out:
    if (!waited)
        while (waitpid(pid, &child_status, 0) < 0 && errno == EINTR) {
        }
    if (w != NULL) {
        uint64_t committed = mh_writer_committed(w);
        mh_writer_abandon(w);
        if (committed == 0)
            cli_remove_store(store);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    close(fds[0]);
    mh_lackey_free(lp);
    free(buf);
    free(vg);
    return status;
}
