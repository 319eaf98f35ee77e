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
 *     caller's stdin/stdout/stderr; its exit status is returned, not acted on.
 *   - stop: set asynchronously by record's signal handler to the signal
 *     number (SIGINT, SIGTERM, SIGHUP). The engine polls it at least every
 *     100 ms; once non-zero it ends the traced program (forwarding that
 *     signal), drains every access already produced into w, and returns 0
 *     with res->interrupted = the signal. It never commits: the caller does.
 *   - Errors: a negative MH_E* code from the writer, or ENGINE_EFAILED when
 *     the engine itself failed (did not start, trace unreadable, lost
 *     records). res->error then holds one line saying why (the engine's own
 *     message where it printed one). res->started says whether the program
 *     ran at all: record removes the store when it did not.
 */
#ifndef MH_TOOLS_ENGINE_H
#define MH_TOOLS_ENGINE_H

#include <signal.h>
#include <stdint.h>

#include "memhist.h"

/* An engine failure that is not a writer error (positive: MH_E* are < 0). */
#define ENGINE_EFAILED 1

typedef struct engine_opts {
    int exec;            /* also record instruction fetches (MH_OP_EXEC) */
    int quiet;           /* no progress line */
    const char *tool;    /* executable to use (valgrind, qemu-x86_64...); NULL: the engine's default */
} engine_opts;

typedef struct engine_result {
    int started;         /* the traced program was started */
    int wait_status;     /* waitpid() status of the traced program, when it ended */
    int interrupted;     /* signal number that stopped the recording, or 0 */
    uint64_t accesses;   /* accesses handed to the writer */
    uint64_t pid;        /* pid of the traced program (0 if unknown) */
    char tracer[64];     /* metadata "tracer", e.g. "valgrind-lackey", "qemu-plugin" */
    char tracer_version[64];
    char error[512];     /* one line, when the result is an error */
} engine_result;

#endif /* MH_TOOLS_ENGINE_H */
