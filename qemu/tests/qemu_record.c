/*
 * qemu_record.c - drives engine_qemu_run like `memhist record --engine
 * qemu` will, for measurements and by hand until that command lands:
 *   qemu_record [-x] [-q] STORE PROGRAM [ARGS...]
 * Creates STORE, records PROGRAM, saves tracer, tracer_version and
 * exit_status, commits. Exit: 0 recorded, 1 failed, 2 usage.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "engine_qemu.h"

static volatile sig_atomic_t stop;
static void on_signal(int sig) { stop = sig; }

int main(int argc, char **argv) {
    engine_opts o = {0};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-x") == 0)
            o.exec = 1;
        else if (strcmp(argv[i], "-q") == 0)
            o.quiet = 1;
        else
            break;
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: qemu_record [-x] [-q] STORE PROGRAM [ARGS...]\n");
        return 2;
    }
    const char *store = argv[i];
    mh_writer *w;
    int rc = mh_writer_open(store, MH_CREATE, NULL, &w);
    if (rc) {
        fprintf(stderr, "qemu_record: cannot create %s: %s\n", store, mh_strerror(rc));
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    engine_result res;
    rc = engine_qemu_run(argv + i + 1, &o, w, &stop, &res);
    if (rc) {
        fprintf(stderr, "qemu_record: %s\n", res.error);
        mh_writer_abandon(w);
        return 1;
    }
    char exit_desc[64];
    if (WIFEXITED(res.wait_status))
        snprintf(exit_desc, sizeof exit_desc, "exit %d", WEXITSTATUS(res.wait_status));
    else
        snprintf(exit_desc, sizeof exit_desc, "signal %d", WTERMSIG(res.wait_status));
    if ((rc = mh_writer_set_meta(w, "tracer", res.tracer)) != 0 ||
        (rc = mh_writer_set_meta(w, "tracer_version", res.tracer_version)) != 0 ||
        (rc = mh_writer_set_meta(w, "exit_status", exit_desc)) != 0 ||
        (rc = mh_writer_close(w)) != 0) {
        fprintf(stderr, "qemu_record: committing %s: %s\n", store, mh_strerror(rc));
        return 1;
    }
    if (!o.quiet)
        fprintf(stderr, "qemu_record: %" PRIu64 " accesses (%s) into %s\n", res.accesses,
                exit_desc, store);
    return 0;
}
