/*
 * cmd_record.c - `memhist record`: options, the store, signals and
 * metadata around a recording engine (engine.h) that runs the program and
 * streams its accesses into the writer this file owns.
 *
 * Order of events: check the program, create the store, install the stop
 * handlers, start the output relay (record_relay.h), run the engine, stop
 * the relay, then either remove the store (the engine did not start the
 * program: nothing of it was recorded) or save the metadata and commit.
 * The writer stays in this process, so a signal to record (forwarded to the
 * program by the engine) still ends with a committed, fsck-clean store.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_signal.h"
#include "commands.h"
#include "engine.h"
#ifdef MH_HAVE_QEMU_ENGINE
#include "engine_qemu.h"
#endif
#include "record_relay.h"

static const char synopsis[] =
    "memhist record [-o STORE] [--engine valgrind|qemu|qemu-system|auto] [--kernel K] [--initrd I]\n"
    "               [--trace-for N [--retrace-every M]] [--exec] [--quiet] -- PROGRAM [ARGS...]";
static const char help[] =
    "Runs PROGRAM under a recording engine and stores every memory access it\n"
    "makes as it happens (the trace never exists as a text file).\n\n"
    "options:\n"
    "  -o, --output STORE   store to create (default: memhist-PROGRAM-PID.store in\n"
    "                       the current directory, PID = the traced process)\n"
    "  -e, --engine ENGINE  valgrind: valgrind's lackey tool (its memory trace), with\n"
    "                       the mapping of 'memhist import --format lackey';\n"
    "                       qemu: qemu-x86_64 with the memhist plugin (when built in);\n"
    "                       qemu-system: a whole Linux guest under qemu-system-x86_64\n"
    "                       (kernel and user accesses, virtual and physical addresses;\n"
    "                       PROGRAM must be static: it runs in a busybox initramfs);\n"
    "                       auto (default): the fastest available, qemu then valgrind\n"
    "      --kernel K       qemu-system: the guest kernel (default $MEMHIST_KERNEL,\n"
    "                       /var/cache/memhist/vmlinuz, the newest /boot/vmlinuz-*)\n"
    "      --initrd I       qemu-system: an initramfs whose files the guest gets too\n"
    "  -x, --exec           also store instruction fetches as execute accesses\n"
    "      --trace-for N    (qemu engines) store only windows of N transitions\n"
    "      --retrace-every M  ... one every M (M >= N; default: only the first):\n"
    "                       window k = transitions [k*M, k*M + N), begun at its\n"
    "                       first access; the others are counted, not stored\n"
    "                       (metadata window_dropped_accesses)\n"
    "  -q, --quiet          no progress, no summary\n"
    "  -h, --help           this help\n\n"
    "One process, one history: only PROGRAM's own process is traced, never its\n"
    "children (valgrind gets --trace-children=no --child-silent-after-fork=yes\n"
    "after $VALGRIND_OPTS, so they win).\n"
    "If PROGRAM execs another program (a shell wrapper...), record warns: what\n"
    "runs after the exec is not recorded. Record the real program instead.\n\n"
    "PROGRAM's output passes through memhist, so the progress line (on a\n"
    "terminal) never shares a line with it.\n\n"
    "SIGINT, SIGTERM or SIGHUP: the signal is forwarded to PROGRAM (SIGKILL 5 s\n"
    "later if it is still running), what was traced is committed, memhist prints\n"
    "'memhist record: interrupted: N accesses committed' and exits 128 + the\n"
    "signal (130, 143, 129). A second signal while committing is ignored: the\n"
    "commit finishes.\n\n"
    "Metadata saved: engine, tracer, tracer_version, command_line, pid,\n"
    "start_time, exit_status, architecture, exec; interrupted and record_error\n"
    "when they apply.\n\n"
    "The environment variable MEMHIST_VALGRIND names the valgrind executable\n"
    "(default: 'valgrind' found in PATH).\n\n"
    "Exit status: 0 the recording worked, whatever PROGRAM's own exit status (it\n"
    "is saved as exit_status: a program that fails or crashes still leaves a\n"
    "valid store of what was traced); 1 memhist failed (engine missing or failed\n"
    "to start PROGRAM: no store is left; store cannot be created; unreadable\n"
    "trace); 2 bad usage; 128 + N interrupted by signal N (the store holds what\n"
    "was committed).\n";

static int run(int argc, char **argv);
const cli_cmd cmd_record = {"record", synopsis, help, run};

enum { ENGINE_AUTO, ENGINE_VALGRIND, ENGINE_QEMU, ENGINE_QEMU_SYSTEM };


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

static void on_progress(void *ctx, uint64_t done) { rec_relay_progress(ctx, done); }

static void on_warn(void *ctx, const char *msg) {
    char line[1024];
    snprintf(line, sizeof line, "warning: %s", msg);
    rec_relay_message(ctx, line);
}

/* Picks the engine: 0, or prints why not and returns CLI_FAIL. */
static int choose_engine(const cli_cmd *cmd, int *engine) {
#ifdef MH_HAVE_QEMU_ENGINE
    char why[256] = "";
    if (*engine == ENGINE_QEMU || *engine == ENGINE_AUTO) {
        if (engine_qemu_available(why, sizeof why)) {
            *engine = ENGINE_QEMU;
            return 0;
        }
        if (*engine == ENGINE_QEMU)
            return cli_fail(cmd, "the qemu engine is not available: %s", why);
    }
    if (*engine == ENGINE_QEMU_SYSTEM)
        return 0; /* the engine says what it misses */
#else
    if (*engine == ENGINE_QEMU || *engine == ENGINE_QEMU_SYSTEM)
        return cli_fail(cmd, "this memhist was built without the qemu engine");
#endif
    *engine = ENGINE_VALGRIND;
    return 0;
}

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"engine", required_argument, NULL, 'e'},
        {"exec", no_argument, NULL, 'x'},
        {"kernel", required_argument, NULL, 'K'},
        {"initrd", required_argument, NULL, 'I'},
        {"trace-for", required_argument, NULL, 'N'},
        {"retrace-every", required_argument, NULL, 'M'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_record;
    const char *store_opt = NULL, *kernel = NULL, *initrd = NULL;
    uint64_t trace_for = 0, retrace_every = 0;
    int exec = 0, quiet = 0, engine = ENGINE_AUTO, c;
    while ((c = cli_getopt(cmd, argc, argv, "+o:e:xqh", longopts)) != -1) {
        switch (c) {
        case 'o': store_opt = optarg; break;
        case 'e':
            if (strcmp(optarg, "valgrind") == 0)
                engine = ENGINE_VALGRIND;
            else if (strcmp(optarg, "qemu") == 0)
                engine = ENGINE_QEMU;
            else if (strcmp(optarg, "qemu-system") == 0)
                engine = ENGINE_QEMU_SYSTEM;
            else if (strcmp(optarg, "auto") == 0)
                engine = ENGINE_AUTO;
            else
                return cli_usage_error(cmd, "unknown engine '%s' (valgrind, qemu, qemu-system or auto)", optarg);
            break;
        case 'x': exec = 1; break;
        case 'K': kernel = optarg; break;
        case 'I': initrd = optarg; break;
        case 'N':
        case 'M': {
            uint64_t v;
            if (cli_parse_u64(optarg, &v) != 0 || v == 0)
                return cli_usage_error(cmd, "--%s wants a positive number, not '%s'",
                                       c == 'N' ? "trace-for" : "retrace-every", optarg);
            *(c == 'N' ? &trace_for : &retrace_every) = v;
            break;
        }
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
    if (retrace_every && !trace_for)
        return cli_usage_error(cmd, "--retrace-every goes with --trace-for");
    if (retrace_every && retrace_every < trace_for)
        return cli_usage_error(cmd, "--retrace-every M must be at least --trace-for N");
    if (trace_for && engine == ENGINE_VALGRIND)
        return cli_usage_error(cmd, "--trace-for works with the qemu engines");
    if ((kernel || initrd) && engine != ENGINE_QEMU_SYSTEM)
        return cli_usage_error(cmd, "--kernel and --initrd go with --engine qemu-system");
    if (choose_engine(cmd, &engine))
        return CLI_FAIL;
    if (trace_for && engine == ENGINE_VALGRIND)
        return cli_fail(cmd, "--trace-for needs a qemu engine, and none is available");

    char *prog_path = engine_find_in_path(prog_argv[0]);
    if (prog_path == NULL)
        return cli_fail(cmd, "program '%s' not found or not executable", prog_argv[0]);
    free(prog_path);
    if (store_opt && cli_exists(store_opt))
        return cli_fail(cmd, "'%s' already exists", store_opt);

    /* The traced pid names the default store, but the engine starts the
     * program only once the store exists: record under this process's pid
     * and rename at the end. */
    char default_store[512];
    const char *base = strrchr(prog_argv[0], '/');
    base = base ? base + 1 : prog_argv[0];
    const char *store = store_opt;
    if (store == NULL) {
        snprintf(default_store, sizeof default_store, "memhist-%s-%ld.store", base,
                 (long)getpid());
        store = default_store;
        if (cli_exists(store))
            return cli_fail(cmd, "'%s' already exists", store);
    }
    mh_writer *w = NULL;
    char werr[MH_ERRMSG_MAX] = "";
    int rc = mh_writer_open_ex(store, MH_CREATE, NULL, &w, werr, sizeof werr);
    if (rc)
        return cli_fail(cmd, "cannot create store '%s': %s", store, cli_open_error(rc, werr));
    if (cli_stop_install() != 0) {
        mh_writer_abandon(w);
        cli_remove_store(store);
        return cli_fail(cmd, "sigaction: %s", strerror(errno));
    }

    time_t start = time(NULL);
    rec_relay *relay = rec_relay_start(!quiet);
    engine_opts eo = {.exec = exec, .quiet = quiet, .tool = NULL, .kernel = kernel, .initrd = initrd,
                      .trace_for = trace_for, .retrace_every = retrace_every,
                      .progress = on_progress, .warn = on_warn, .ctx = relay};
    engine_result res;
    const char *engine_name = "valgrind";
#ifdef MH_HAVE_QEMU_ENGINE
    if (engine == ENGINE_QEMU) {
        engine_name = "qemu";
        rc = engine_qemu_run(prog_argv, &eo, w, &cli_stop, &res);
    } else if (engine == ENGINE_QEMU_SYSTEM) {
        engine_name = "qemu-system";
        rc = engine_qemu_system_run(prog_argv, &eo, w, &cli_stop, &res);
    } else
#endif
        rc = engine_valgrind_run(prog_argv, &eo, w, &cli_stop, &res);
    char first_line[512];
    rec_relay_stop(relay, first_line, sizeof first_line);

    int status = CLI_FAIL;
    if (rc == ENGINE_EFAILED && !res.started) {
        /* nothing of the program was recorded: leave nothing behind */
        mh_writer_abandon(w);
        w = NULL;
        cli_remove_store(store);
        if (first_line[0])
            cli_fail(cmd, "%s: %s", res.error, first_line);
        else
            cli_fail(cmd, "%s", res.error);
        goto out;
    }
    if (rc != 0 && rc != ENGINE_EFAILED) {
        mh_writer_errmsg(w, werr, sizeof werr);
        cli_fail(cmd, "storing the trace failed: %s", cli_lib_error(rc, werr));
        goto abandon;
    }

    int child_status = res.wait_status;
    char exit_desc[64], pidbuf[32], when[64], intr[32] = "", tfor[32] = "", tevery[32] = "",
         tdropped[32] = "";
    if (trace_for) {
        snprintf(tfor, sizeof tfor, "%" PRIu64, trace_for);
        if (retrace_every)
            snprintf(tevery, sizeof tevery, "%" PRIu64, retrace_every);
        snprintf(tdropped, sizeof tdropped, "%" PRIu64, res.dropped);
    }
    char *cmdline = join_command(prog_argv, prog_argc);
    if (WIFEXITED(child_status))
        snprintf(exit_desc, sizeof exit_desc, "exit %d", WEXITSTATUS(child_status));
    else if (WIFSIGNALED(child_status))
        snprintf(exit_desc, sizeof exit_desc, "signal %d", WTERMSIG(child_status));
    else
        snprintf(exit_desc, sizeof exit_desc, "unknown");
    if (res.interrupted)
        snprintf(intr, sizeof intr, "signal %d", res.interrupted);
    snprintf(pidbuf, sizeof pidbuf, "%" PRIu64, res.pid);
    struct tm tmv;
    gmtime_r(&start, &tmv);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    struct utsname un;
    const char *arch = uname(&un) == 0 ? un.machine : "unknown";
    const char *const meta[][2] = {
        {"engine", engine_name},
        {"tracer", res.tracer},
        {"tracer_version", res.tracer_version},
        {"command_line", cmdline ? cmdline : prog_argv[0]},
        {"pid", pidbuf},
        {"start_time", when},
        {"exit_status", exit_desc},
        {"architecture", arch},
        {"exec", exec ? "yes" : "no"},
        {"interrupted", intr},
        {"trace_for", tfor},
        {"retrace_every", tevery},
        {"window_dropped_accesses", tdropped},
        {"record_error", rc ? res.error : ""},
    };
    int mrc = 0;
    for (size_t i = 0; i < sizeof meta / sizeof meta[0] && mrc == 0; i++)
        if (meta[i][1][0] != '\0') { /* a command line is any bytes (SPEC.md 7.2) */
            char *v = cli_utf8_fix(meta[i][1]);
            mrc = v ? mh_writer_set_meta(w, meta[i][0], v) : MH_ENOMEM;
            free(v);
        }
    free(cmdline);
    if (mrc) {
        mh_writer_errmsg(w, werr, sizeof werr);
        cli_fail(cmd, "cannot set metadata: %s", cli_lib_error(mrc, werr));
        goto abandon;
    }
    /* A second signal from here on only sets cli_stop again: the commit
     * finishes. */
    int crc = mh_writer_commit(w);
    uint64_t committed = mh_writer_committed(w);
    if (crc) {
        /* commit before close: a failed close leaves no handle to ask why */
        mh_writer_errmsg(w, werr, sizeof werr);
        cli_fail(cmd, "committing '%s' failed: %s", store, cli_lib_error(crc, werr));
        goto abandon;
    }
    crc = mh_writer_close(w);
    w = NULL;
    if (crc) {
        cli_fail(cmd, "committing '%s' failed: %s", store, cli_errstr(crc));
        goto out;
    }
    if (store_opt == NULL && res.pid != 0) {
        char final[512];
        snprintf(final, sizeof final, "memhist-%s-%" PRIu64 ".store", base, res.pid);
        if (strcmp(final, store) != 0 && !cli_exists(final) && rename(store, final) == 0)
            snprintf(default_store, sizeof default_store, "%s", final);
    }
    if (rc) {
        cli_fail(cmd, "unreadable trace: %s (%s keeps the %" PRIu64 " accesses before it)",
                 res.error, store, committed);
        goto out;
    }
    if (res.interrupted) {
        fprintf(stderr, "memhist record: interrupted: %" PRIu64 " accesses committed\n",
                committed);
        status = 128 + res.interrupted;
        goto out;
    }
    if (!quiet)
        fprintf(stderr, "memhist record: %" PRIu64 " accesses of '%s' (%s) recorded into %s\n",
                committed, prog_argv[0], exit_desc, store);
    status = CLI_OK;
    goto out;
abandon:
    if (w != NULL) {
        uint64_t kept = mh_writer_committed(w);
        mh_writer_abandon(w);
        w = NULL;
        if (kept == 0)
            cli_remove_store(store);
    }
out:
    cli_stop_restore();
    return status;
}
