/*
 * engine.h - what `memhist record` asks of a recording engine.
 *
 * An engine runs the traced program (valgrind lackey, qemu-x86_64 with the
 * memhist plugin, ...) and pushes every access it observes into the writer
 * `memhist record` owns. Keeping the writer in the record process (never in
 * the traced one) is what lets a signal to record, or a fatal signal in the
 * traced program, still end with a committed, fsck-clean store: the engine
 * only produces, record commits.
 *
 * Contract of engine_*_run():
 *   - argv: the program and its arguments (NULL-terminated), run with the
 *     caller's stdin/stdout/stderr (record may have pointed fds 1 and 2 at
 *     its output relay before the call: the engine passes them on as they
 *     are); its exit status is returned, not acted on.
 *   - One process, one history: the engine traces the program's process
 *     only, never its children, whatever the user's tracer configuration
 *     says (valgrind: --trace-children=no after VALGRIND_OPTS). When the
 *     traced process replaces itself with exec, the engine says so through
 *     o->warn.
 *   - stop: set asynchronously by record's signal handler to the signal
 *     number (SIGINT, SIGTERM, SIGHUP). The engine polls it at least every
 *     100 ms; once non-zero it ends the traced program (forwarding that
 *     signal, then SIGKILL if the program has not ended ENGINE_GRACE_S
 *     seconds later), drains every access already produced into w,
 *     discards the last transition with mh_writer_discard_from() when the
 *     trace may have been cut inside it (the tracer did not end cleanly;
 *     unless already committed) and returns 0 with res->interrupted = the
 *     signal. It never commits: the caller does.
 *   - Errors: a negative MH_E* code from the writer, or ENGINE_EFAILED when
 *     the engine itself failed (did not start, trace unreadable, lost
 *     records). res->error then holds one line saying why. res->started
 *     says whether the program ran at all: record removes the store when it
 *     did not, and adds the first line the engine printed on stderr (for
 *     valgrind "valgrind: Unknown option: --bogus") to the message.
 *   - o->progress and o->warn may be NULL; both are called from the thread
 *     that called engine_*_run().
 */
#ifndef MH_TOOLS_ENGINE_H
#define MH_TOOLS_ENGINE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "memhist.h"

/* An engine failure that is not a writer error (positive: MH_E* are < 0). */
#define ENGINE_EFAILED 1

/* Seconds an engine waits for the traced program to end after forwarding a
 * stop signal, before it sends SIGKILL. */
#define ENGINE_GRACE_S 5

typedef struct engine_opts {
    int exec;            /* also record instruction fetches (MH_OP_EXEC) */
    int quiet;           /* no progress line */
    const char *tool;    /* executable to use (valgrind, qemu-x86_64...); NULL: the engine's default */
    const char *kernel;  /* qemu-system: the guest kernel; NULL: the engine's search */
    const char *initrd;  /* qemu-system: an initramfs whose files the guest gets too */
    /* Windows (drmemtrace's -trace_for_instrs / -retrace_every_instrs):
     * with trace_for > 0, only accesses whose transition t lies in a
     * window [k * retrace_every, k * retrace_every + trace_for) are stored,
     * window k begun (mh_writer_window_begin) at its first stored access;
     * the others are counted in res->dropped. retrace_every 0: one window,
     * 0. trace_for 0: no windows, everything stored. */
    uint64_t trace_for, retrace_every;
    /* Called as accesses are handed to w (at most every few thousand
     * accesses): done = accesses handed so far. */
    void (*progress)(void *ctx, uint64_t done);
    /* Called with a one-line warning for the user (no newline, no
     * "memhist record:" prefix), e.g. that the program exec'd another one. */
    void (*warn)(void *ctx, const char *msg);
    void *ctx;           /* passed to progress and warn */
} engine_opts;

typedef struct engine_result {
    int started;         /* the traced program was started */
    int wait_status;     /* waitpid() status of the traced program, when it ended */
    int interrupted;     /* signal number that stopped the recording, or 0 */
    uint64_t accesses;   /* accesses handed to the writer (after any discard) */
    uint64_t dropped;    /* accesses outside the windows (engine_opts.trace_for) */
    uint64_t pid;        /* pid of the traced program (0 if unknown) */
    char tracer[64];     /* metadata "tracer", e.g. "valgrind-lackey", "qemu-plugin" */
    char tracer_version[64];
    char error[512];     /* one line, when the result is an error */
} engine_result;

/* The valgrind lackey engine (engine_valgrind.c). o->tool: the valgrind
 * executable (NULL: $MEMHIST_VALGRIND, else `valgrind` in PATH). */
int engine_valgrind_run(char *const argv[], const engine_opts *o, mh_writer *w,
                        volatile sig_atomic_t *stop, engine_result *res);

/* The qemu-x86_64 + plugin engine: engine_qemu.h (built when qemu is
 * found; MH_HAVE_QEMU_ENGINE is then defined). */

/* engine_util.c. Finds an executable like execvp would (a name with a '/'
 * is taken as is): a malloc'd path, or NULL. */
char *engine_find_in_path(const char *name);
/* pipe() with both ends close-on-exec (pipe2 is not POSIX): 0 or -1. */
int engine_pipe_cloexec(int fds[2]);
/* CLOCK_MONOTONIC in seconds. */
double engine_now_s(void);
/* The first line of `exe --version` into out (len bytes): 0, or -1 with
 * "unknown" there when the tool did not run or did not exit 0. */
int engine_tool_version(const char *exe, char *out, size_t len);

#endif /* MH_TOOLS_ENGINE_H */
