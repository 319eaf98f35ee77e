/*
 * engine_qemu_int.h - what the user-mode (engine_qemu.c) and full-system
 * (engine_qemu_system.c) QEMU engines share: the plugin's location, the
 * shared rings (qemu/ring.h) and their consumer, which merges the rings by
 * transition into the writer.
 */
#ifndef MH_TOOLS_ENGINE_QEMU_INT_H
#define MH_TOOLS_ENGINE_QEMU_INT_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli_util.h"
#include "engine.h"
#include "../qemu/ring.h"

#define MHQ_BATCH 4096
#define MHQ_NO_STREAM UINT32_MAX

typedef struct consumer {
    mhq_header *h;
    mhq_slot *slots;
    mhq_record *rings;
    uint64_t mask;
    uint64_t tail[MHQ_SLOTS]; /* private copies of slot tails */
    mh_writer *w;
    mh_access batch[MHQ_BATCH];
    size_t n;
    uint64_t last_t;    /* transition of the last access handed out */
    uint64_t clamped;   /* accesses that came later than the bound said */
    uint64_t accesses;
    int overrun;        /* a ring's head passed its tail by more than a ring */
    int too_many_streams; /* more than MH_STREAM_MAX + 1 threads over the run */
    cli_progress prog;  /* used when the caller gives no progress callback */
    uint64_t win_n, win_m; /* windows: o->trace_for, o->retrace_every (0 = one) */
    uint64_t window;    /* the window begun last, when in_window */
    int in_window;
    uint64_t dropped;   /* accesses outside the windows */
    /* Streams: the stream of the thread (user mode) or vCPU (system) that
     * owns each slot, MHQ_NO_STREAM until its first record is merged; a
     * slot freed for a later thread gets a new stream. */
    uint32_t stream_of[MHQ_SLOTS];
    uint32_t next_stream;
    uint64_t pid;       /* qemu's (= the guest program's in user mode) */
    const engine_opts *o;
} consumer;

/* The plugin (libmemhist-qemu.so): see engine_qemu.h. Malloc'd or NULL. */
char *mhq_find_plugin(void);
/* qemu's version from the number on, "unknown" if it did not run. */
void mhq_qemu_version(const char *qemu, char *out, size_t len);
/* "file=PLUGIN,fd=N,size=S" (commas in PLUGIN doubled). Malloc'd. */
char *mhq_plugin_arg(const char *plugin, int fd, uint64_t size);
/* Creates the shared rings (a close-on-exec memfd, mapped at *h_out;
 * ring size from $MEMHIST_QEMU_RING). 0 or ENGINE_EFAILED with res->error. */
int mhq_rings_create(int exec, int system, int *fd_out, mhq_header **h_out,
                     engine_result *res);
void mhq_consumer_init(consumer *c, mhq_header *h, mh_writer *w, const engine_opts *o);
/* Merges the rings into c->w while qemu (pid) runs; see engine_qemu.c. */
int mhq_consume(consumer *c, pid_t pid, volatile sig_atomic_t *stop, engine_result *res);
/* Clears res, names the tracer (version "unknown" until qemu tells),
 * checks there is a program and a writer. 0, or ENGINE_EFAILED with
 * res->error. */
int mhq_begin(char *const argv[], mh_writer *w, const char *tracer, engine_result *res);
/* Starts qemu (qargv, with the rings' fd kept open across exec) as a
 * child that dies with memhist record and has no signal blocked; sets
 * res->pid. Returns its pid, or -1 with res->error (fork failed). */
pid_t mhq_spawn(const char *qemu, char *const qargv[], int fd, engine_result *res);
/* What mhq_consume's result drc and the consumer say went wrong, in the
 * order both engines report it: the writer failed (drc, returned), a ring
 * was overrun, too many threads (ENGINE_EFAILED); 0 when none did. Sets
 * res->error. */
int mhq_consume_failed(const consumer *c, int drc, engine_result *res);
/* The metadata both engines end with, once their own went in (mrc, 0 or
 * the writer's code): the count of accesses the consumer gave an earlier
 * transition than they came with (qemu_late_accesses, with a warning).
 * Returns 0, or the writer's MH_E* code with res->error. */
int mhq_finish_meta(const consumer *c, int mrc, engine_result *res);
/* Unmaps the rings and closes their fd (h may be NULL, fd -1). */
void mhq_rings_unmap(mhq_header *h, int fd);
/* 1 with res->error when the plugin said it lost records, else 0. */
int mhq_plugin_failed(const mhq_header *h, engine_result *res);
/* res->error, formatted. */
void mhq_set_error(engine_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A one-line warning through o->warn, else on stderr (not when quiet). */
void mhq_warn_user(const engine_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* MH_TOOLS_ENGINE_QEMU_INT_H */
