/*
 * engine_qemu.c - the consumer side of the QEMU engine: creates the shared
 * rings, starts qemu-x86_64 with the memhist plugin, merges the per-thread
 * rings by transition into the writer, and drains what is left once qemu
 * has exited, whatever killed it.
 *
 * The merge bound (qemu/ring.h): read clock, slots_used, every floor, then
 * every head; W = min(clock, floors). A record still to come in any ring
 * has transition >= W, so every visible record <= W can be emitted in
 * order. After qemu is dead nothing is to come: W = UINT64_MAX.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "engine_qemu.h"
#include "engine_qemu_int.h"

#define PLUGIN_NAME "libmemhist-qemu.so"

/* Seconds between forwarding the stop signal and SIGKILL, for a program
 * that ignores or handles it and keeps running. */
#define STOP_GRACE_S ((double)ENGINE_GRACE_S)


static char *find_qemu(const engine_opts *o) {
    const char *env = getenv("MEMHIST_QEMU");
    const char *name = o && o->tool ? o->tool : env && *env ? env : "qemu-x86_64";
    return engine_find_in_path(name);
}

static int readable(const char *p) { return access(p, R_OK) == 0; }

/* The plugin: $MEMHIST_QEMU_PLUGIN, next to this executable, ../qemu/ from
 * it (the build tree: build/tools/memhist -> build/qemu/), ../ from it
 * (build/qemu/tests/), ../LIBDIR/memhist/ from it (an installed tree
 * wherever its prefix), the configured install directory. A malloc'd path or NULL. */
char *mhq_find_plugin(void) {
    const char *env = getenv("MEMHIST_QEMU_PLUGIN");
    if (env && *env)
        return readable(env) ? strdup(env) : NULL;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char cand[PATH_MAX + 64];
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        snprintf(cand, sizeof cand, "%s/%s", exe, PLUGIN_NAME);
        if (readable(cand))
            return strdup(cand);
        snprintf(cand, sizeof cand, "%s/../qemu/%s", exe, PLUGIN_NAME);
        if (readable(cand))
            return strdup(cand);
        /* The engine's own tests, in build/qemu/tests/. */
        snprintf(cand, sizeof cand, "%s/../%s", exe, PLUGIN_NAME);
        if (readable(cand))
            return strdup(cand);
#ifdef MH_QEMU_PLUGIN_RELDIR
        /* An installed tree moved or installed with another --prefix:
         * bin/../lib/memhist/. */
        snprintf(cand, sizeof cand, "%s/../%s/%s", exe, MH_QEMU_PLUGIN_RELDIR, PLUGIN_NAME);
        if (readable(cand))
            return strdup(cand);
#endif
    }
#ifdef MH_QEMU_PLUGIN_DIR
    snprintf(cand, sizeof cand, "%s/%s", MH_QEMU_PLUGIN_DIR, PLUGIN_NAME);
    if (readable(cand))
        return strdup(cand);
#endif
    return NULL;
}

int engine_qemu_available(char *why, size_t n) {
    char *q = find_qemu(NULL), *p = mhq_find_plugin();
    int ok = q != NULL && p != NULL;
    if (why && n) {
        const char *env = getenv("MEMHIST_QEMU_PLUGIN");
        if (q == NULL)
            snprintf(why, n, "qemu-x86_64 not found: install it with apt-get install qemu-user");
        else if (p == NULL && env && *env)
            snprintf(why, n, "MEMHIST_QEMU_PLUGIN='%s' is not readable", env);
        else if (p == NULL)
            snprintf(why, n, "the memhist QEMU plugin (%s) was not built or installed", PLUGIN_NAME);
        else
            why[0] = '\0';
    }
    free(q);
    free(p);
    return ok;
}

/* qemu's version from the number on: "qemu-x86_64 version 7.2.22 (Debian
 * 1:7.2+dfsg-7)" gives "7.2.22 (Debian 1:7.2+dfsg-7)"; "unknown" if it did
 * not run. */
void mhq_qemu_version(const char *qemu, char *out, size_t len) {
    char line[256];
    if (engine_tool_version(qemu, line, sizeof line) != 0) {
        snprintf(out, len, "unknown");
        return;
    }
    const char *v = strstr(line, "version ");
    snprintf(out, len, "%.*s", (int)(len - 1), v ? v + 8 : line);
}

/* The plugin argument: "file=PATH,fd=N,size=S" with commas in PATH doubled
 * (QEMU's option syntax). */
char *mhq_plugin_arg(const char *plugin, int fd, uint64_t size) {
    size_t cap = 2 * strlen(plugin) + 80;
    char *s = malloc(cap), *p = s;
    if (s == NULL)
        return NULL;
    p += sprintf(p, "file=");
    for (const char *c = plugin; *c; c++) {
        *p++ = *c;
        if (*c == ',')
            *p++ = ',';
    }
    sprintf(p, ",fd=%d,size=%" PRIu64, fd, size);
    return s;
}


/* A warning for the user: through record's relay when it gave one (so it
 * never lands inside the program's output lines), else on stderr. */
void mhq_set_error(engine_result *res, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error, sizeof res->error, fmt, ap);
    va_end(ap);
}

void mhq_warn_user(const engine_opts *o, const char *fmt, ...) {
    if (o && o->quiet && !o->warn)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (o && o->warn)
        o->warn(o->ctx, msg);
    else
        fprintf(stderr, "memhist record: warning: %s\n", msg);
}

static int flush(consumer *c) {
    if (c->n == 0)
        return 0;
#ifdef ENGINE_QEMU_DISCARD
    /* Measurement build (qemu_ring_bench): the cost of qemu, the plugin
     * and the merge without the writer. */
    int rc = 0;
#else
    int rc = mh_writer_append_batch(c->w, c->batch, c->n, NULL);
#endif
    if (rc)
        return rc;
    c->accesses += c->n;
    c->n = 0;
    if (c->o && c->o->progress)
        c->o->progress(c->o->ctx, c->accesses);
    else
        cli_progress_update(&c->prog, c->accesses);
    return 0;
}

/* Declares the stream of slot i's current owner: "thread TID" (kind
 * thread) in user mode, "cpu N" (kind cpu) in system mode. Stream ids
 * follow the order in which owners' first records are merged, so the main
 * thread (or vCPU 0) is stream 0. */
static int declare_stream(consumer *c, uint32_t i) {
    if (c->next_stream > MH_STREAM_MAX) {
        c->too_many_streams = 1;
        return ENGINE_EFAILED;
    }
    const mhq_slot *s = &c->slots[i];
    uint32_t tid = atomic_load(&s->tid), cpu = atomic_load(&s->cpu);
    char name[48];
    mh_stream_info si;
    mh_stream_info_init(&si);
    si.id = c->next_stream;
    si.pid = c->pid ? c->pid : MH_NONE64;
    if (c->h->system) {
        si.kind = MH_STREAM_CPU;
        si.cpu = cpu;
        snprintf(name, sizeof name, "cpu %u", cpu);
    } else {
        si.kind = MH_STREAM_THREAD;
        si.tid = tid;
        snprintf(name, sizeof name, "thread %u", tid);
    }
    si.name = name;
    int rc = mh_writer_stream_declare(c->w, &si);
    if (rc)
        return rc;
    c->stream_of[i] = c->next_stream++;
    return 0;
}

static int emit(consumer *c, const mhq_record *r, uint32_t stream) {
    uint64_t t = r->transition;
    if (t < c->last_t) {
        /* Cannot happen under the floor protocol; if it does the store
         * stays valid (the writer refuses decreasing transitions) and the
         * count is reported. */
        c->clamped++;
        t = c->last_t;
    }
    c->last_t = t;
    if (c->win_n) {
        /* Window k = [k * M, k * M + N): outside, counted and dropped; the
         * first access of a window begins it, after the batch of the
         * previous window went to the writer. */
        uint64_t k = c->win_m ? t / c->win_m : 0, off = c->win_m ? t % c->win_m : t;
        if (off >= c->win_n) {
            c->dropped++;
            return 0;
        }
        if (!c->in_window || k != c->window) {
            int rc = flush(c);
            if (rc == 0)
                rc = mh_writer_window_begin(c->w, k);
            if (rc)
                return rc;
            c->in_window = 1;
            c->window = k;
        }
    }
    mh_access *a = &c->batch[c->n]; /* after the window's flush */
    uint32_t size = r->size ? r->size : 1;
    if (r->addr + (uint64_t)size - 1 < r->addr)
        size = (uint32_t)(0 - r->addr); /* last bytes of the address space */
    *a = (mh_access){.transition = t,
                     .linear = r->addr,
                     .physical = r->phys,
                     .size = size,
                     .op = r->op <= MHQ_EXEC ? r->op : MHQ_READ,
                     .has_linear = 1,
                     .stream = stream,
                     .pc = r->pc,
                     .has_pc = 1};
    if (++c->n == MHQ_BATCH)
        return flush(c);
    return 0;
}

/* One merge pass; *moved = records taken. final: qemu is dead, take all. */
static int drain(consumer *c, int final, uint64_t *moved) {
    mhq_header *h = c->h;
    uint64_t bound = final ? UINT64_MAX : atomic_load(&h->clock);
    /* Full-system mode (ring.h): the instruction in progress, clock - 1,
     * may still add records, all to one ring; everything before it is
     * visible. */
    if (h->system && !final)
        bound = bound ? bound - 1 : 0;
    uint32_t used = atomic_load(&h->slots_used);
    if (used > h->nslots)
        used = h->nslots;
    uint64_t head[MHQ_SLOTS];
    if (!final)
        for (uint32_t i = 0; i < used; i++) {
            uint64_t f = atomic_load(&c->slots[i].floor);
            if (f < bound)
                bound = f;
        }
    for (uint32_t i = 0; i < used; i++) {
        head[i] = atomic_load_explicit(&c->slots[i].head, memory_order_acquire);
        /* A head more than a ring ahead of the tail would mean records
         * were overwritten unread: a broken producer. */
        if (head[i] - c->tail[i] > c->mask + 1) {
            c->overrun = 1;
            return ENGINE_EFAILED;
        }
    }
    uint64_t taken = 0;
    int rc = 0;
    for (;;) {
        int best = -1;
        uint64_t bt = UINT64_MAX, second = UINT64_MAX;
        for (uint32_t i = 0; i < used; i++) {
            if (c->tail[i] == head[i])
                continue;
            uint64_t t = c->rings[(uint64_t)i * (c->mask + 1) + (c->tail[i] & c->mask)].transition;
            if (best < 0 || t < bt) {
                second = bt;
                bt = t;
                best = (int)i;
            } else if (t < second) {
                second = t;
            }
        }
        if (best < 0 || bt > bound)
            break;
        uint64_t limit = second < bound ? second : bound;
        const mhq_record *ring = c->rings + (uint64_t)best * (c->mask + 1);
        uint64_t tl = c->tail[best];
        if (c->stream_of[best] == MHQ_NO_STREAM && (rc = declare_stream(c, (uint32_t)best)) != 0)
            break;
        uint32_t stream = c->stream_of[best];
        do {
            rc = emit(c, &ring[tl & c->mask], stream);
            tl++;
            taken++;
        } while (rc == 0 && tl < head[best] && ring[tl & c->mask].transition <= limit);
        c->tail[best] = tl;
        if (rc)
            break;
    }
    for (uint32_t i = 0; i < used; i++) {
        atomic_store_explicit(&c->slots[i].tail, c->tail[i], memory_order_release);
        /* A drained DONE slot can take a new thread. */
        if (atomic_load(&c->slots[i].state) == MHQ_DONE &&
            atomic_load(&c->slots[i].head) == c->tail[i]) {
            uint32_t done = MHQ_DONE;
            if (atomic_compare_exchange_strong(&c->slots[i].state, &done, MHQ_FREE))
                c->stream_of[i] = MHQ_NO_STREAM; /* a later thread is another stream */
        }
    }
    *moved = taken;
    return rc;
}

/* Creates the shared memory: a memfd (close-on-exec; the child clears the
 * flag on its copy for qemu) holding the header, slots and rings. */
int mhq_rings_create(int exec, int system, int *fd_out, mhq_header **h_out,
                     engine_result *res) {
    uint64_t cap = MHQ_DEFAULT_CAPACITY;
    const char *env = getenv("MEMHIST_QEMU_RING");
    if (env && *env) {
        /* Records per thread ring (a power of two >= 1024): tests use small
         * rings to exercise backpressure. */
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (*end != '\0' || v < 1024 || v > (1ull << 24) || (v & (v - 1)) != 0) {
            mhq_set_error(res, "MEMHIST_QEMU_RING='%s': not a power of two in 1024 .. 16777216", env);
            return ENGINE_EFAILED;
        }
        cap = v;
    }
    uint64_t size = mhq_total_size(MHQ_SLOTS, cap);
    int fd = memfd_create("memhist-qemu-rings", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        mhq_set_error(res, "shared memory for the rings: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return ENGINE_EFAILED;
    }
    void *map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        mhq_set_error(res, "mmap of the rings: %s", strerror(errno));
        close(fd);
        return ENGINE_EFAILED;
    }
    mhq_header *h = map;
    h->magic = MHQ_MAGIC;
    h->version = MHQ_VERSION;
    h->header_size = sizeof(mhq_header);
    h->slot_size = sizeof(mhq_slot);
    h->record_size = sizeof(mhq_record);
    h->nslots = MHQ_SLOTS;
    h->exec = exec ? 1 : 0;
    h->system = system ? 1 : 0;
    h->capacity = cap;
    h->slots_offset = (sizeof(mhq_header) + 63) / 64 * 64;
    h->rings_offset = h->slots_offset + ((uint64_t)MHQ_SLOTS * sizeof(mhq_slot) + 4095) / 4096 * 4096;
    h->total_size = size;
    mhq_slot *slots = (mhq_slot *)((char *)map + h->slots_offset);
    for (uint32_t i = 0; i < MHQ_SLOTS; i++)
        atomic_store(&slots[i].floor, UINT64_MAX);
    *fd_out = fd;
    *h_out = h;
    return 0;
}

static void wait_child(pid_t pid, int *status) {
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
    }
}

void mhq_consumer_init(consumer *c, mhq_header *h, mh_writer *w, const engine_opts *o) {
    c->h = h;
    c->slots = (mhq_slot *)((char *)h + h->slots_offset);
    c->rings = (mhq_record *)((char *)h + h->rings_offset);
    c->mask = h->capacity - 1;
    c->w = w;
    c->o = o;
    /* record's relay draws the progress when it gives a callback */
    cli_progress_init(&c->prog, "record:", (o && (o->quiet || o->progress)) ? 1 : 0);
    for (uint32_t i = 0; i < MHQ_SLOTS; i++)
        c->stream_of[i] = MHQ_NO_STREAM;
    c->win_n = o ? o->trace_for : 0;
    c->win_m = o && o->trace_for ? o->retrace_every : 0;
}

/* Drains the rings into c->w while qemu (pid) runs, forwards a stop
 * signal (SIGKILL ENGINE_GRACE_S later), takes everything once qemu has
 * exited, flushes. Fills res->wait_status, accesses, interrupted, error
 * (waitpid). Returns 0, a negative MH_E* (writer) or ENGINE_EFAILED (a
 * ring overrun: c->overrun). */
int mhq_consume(consumer *c, pid_t pid, volatile sig_atomic_t *stop, engine_result *res) {
    c->pid = (uint64_t)pid;
    int status = 0, exited = 0, forwarded = 0, killed = 0;
    double forwarded_at = 0;
    unsigned iter = 0, idle = 0;
    int drc = 0;
    while (!exited) {
        uint64_t moved = 0;
        drc = drain(c, 0, &moved);
        if (drc)
            break;
        if (stop && *stop && !forwarded) {
            forwarded = (int)*stop;
            forwarded_at = cli_now();
            kill(pid, forwarded);
        }
        if (forwarded && !killed && cli_now() - forwarded_at > STOP_GRACE_S) {
            killed = 1;
            kill(pid, SIGKILL);
        }
        if (moved < 1024 || ++iter % 64 == 0) {
            pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid)
                exited = 1;
            else if (r < 0 && errno != EINTR) {
                mhq_set_error(res, "waitpid: %s", strerror(errno));
                kill(pid, SIGKILL);
                wait_child(pid, &status);
                exited = 1;
            }
        }
        /* Idle for 10 ms (a full-system guest booting, a program blocked
         * in read): poll every 1 ms instead of 100 us, sparing the CPU qemu
         * needs. A producer waiting on a full ring is never kept waiting:
         * its ring had records, so the last pass moved some. */
        idle = moved ? 0 : idle + 1;
        if (!exited && moved < 1024) {
            struct timespec ts = {0, idle > 100 ? 1000 * 1000 : 100 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (drc) {
        /* The writer failed (or a ring was overrun): the trace is lost
         * from here on; end qemu, keep what was stored. */
        kill(pid, SIGKILL);
        wait_child(pid, &status);
    } else {
        /* qemu is gone: every record it wrote is final. */
        uint64_t moved;
        drc = drain(c, 1, &moved);
    }
    if (drc == 0)
        drc = flush(c);
    cli_progress_done(&c->prog);
    res->wait_status = status;
    res->accesses = c->accesses;
    res->dropped = c->dropped;
    res->interrupted = forwarded;
    return drc;
}

int mhq_begin(char *const argv[], mh_writer *w, const char *tracer, engine_result *res) {
    memset(res, 0, sizeof *res);
    snprintf(res->tracer, sizeof res->tracer, "%s", tracer);
    snprintf(res->tracer_version, sizeof res->tracer_version, "unknown");
    if (argv == NULL || argv[0] == NULL || w == NULL) {
        mhq_set_error(res, "no program to run");
        return ENGINE_EFAILED;
    }
    return 0;
}

pid_t mhq_spawn(const char *qemu, char *const qargv[], int fd, engine_result *res) {
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        mhq_set_error(res, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* qemu must not outlive memhist record (it would wait on a full
         * ring for ever). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        fcntl(fd, F_SETFD, 0);
        execv(qemu, qargv);
        fprintf(stderr, "memhist record: error: cannot run %s: %s\n", qemu, strerror(errno));
        _exit(127);
    }
    res->pid = (uint64_t)pid;
    return pid;
}

int mhq_consume_failed(const consumer *c, int drc, engine_result *res) {
    if (drc < 0) {
        mhq_set_error(res, "storing the accesses failed: %s", mh_strerror(drc));
        return drc;
    }
    if (c->overrun) {
        mhq_set_error(res, "a ring was overrun: records were lost");
        return ENGINE_EFAILED;
    }
    if (c->too_many_streams) {
        mhq_set_error(res, "more than %u threads: a store holds at most that many streams "
                           "(the store keeps the accesses before)", MH_STREAM_MAX + 1);
        return ENGINE_EFAILED;
    }
    return 0;
}

int mhq_finish_meta(const consumer *c, int mrc, engine_result *res) {
    if (mrc == 0 && c->clamped) {
        char num[32];
        snprintf(num, sizeof num, "%" PRIu64, c->clamped);
        mrc = mh_writer_set_meta(c->w, "qemu_late_accesses", num);
        mhq_warn_user(c->o, "%" PRIu64 " accesses arrived after later transitions and were "
                      "given the previous one", c->clamped);
    }
    if (mrc)
        mhq_set_error(res, "cannot set metadata: %s", mh_strerror(mrc));
    return mrc;
}

void mhq_rings_unmap(mhq_header *h, int fd) {
    if (h != NULL)
        munmap(h, (size_t)h->total_size);
    if (fd >= 0)
        close(fd);
}

int mhq_plugin_failed(const mhq_header *h, engine_result *res) {
    if (!atomic_load(&h->failed))
        return 0;
    char msg[MHQ_ERROR_LEN + 1];
    memcpy(msg, h->error, MHQ_ERROR_LEN);
    msg[MHQ_ERROR_LEN] = '\0';
    mhq_set_error(res, "the plugin lost records: %s", msg);
    return 1;
}

int engine_qemu_run(char *const argv[], const engine_opts *o, mh_writer *w,
                    volatile sig_atomic_t *stop, engine_result *res) {
    if (mhq_begin(argv, w, "qemu-plugin", res))
        return ENGINE_EFAILED;
    char *qemu = find_qemu(o), *plugin = NULL, *prog = NULL, *parg = NULL;
    char **qargv = NULL;
    consumer *c = NULL;
    mhq_header *h = NULL;
    int fd = -1, rc = ENGINE_EFAILED;
    if (qemu == NULL) {
        mhq_set_error(res, "%s not found: install it with apt-get install qemu-user",
                      o && o->tool ? o->tool : "qemu-x86_64");
        goto out;
    }
    plugin = mhq_find_plugin();
    if (plugin == NULL) {
        char why[256];
        engine_qemu_available(why, sizeof why);
        mhq_set_error(res, "%s", why);
        goto out;
    }
    prog = engine_find_in_path(argv[0]);
    if (prog == NULL) {
        mhq_set_error(res, "program '%s' not found or not executable", argv[0]);
        goto out;
    }
    mhq_qemu_version(qemu, res->tracer_version, sizeof res->tracer_version);
    if ((rc = mhq_rings_create(o && o->exec, 0, &fd, &h, res)) != 0)
        goto out;
    rc = ENGINE_EFAILED;
    size_t argc = 0;
    while (argv[argc])
        argc++;
    /* qemu takes the first non-option as the program: a path starting with
     * '-' would be read as an option. */
    char *progarg = prog;
    char dotprog[PATH_MAX + 3];
    if (prog[0] == '-') {
        snprintf(dotprog, sizeof dotprog, "./%s", prog);
        progarg = dotprog;
    }
    parg = mhq_plugin_arg(plugin, fd, h->total_size);
    qargv = calloc(argc + 5, sizeof *qargv);
    c = calloc(1, sizeof *c);
    if (parg == NULL || qargv == NULL || c == NULL) {
        rc = MH_ENOMEM;
        mhq_set_error(res, "%s", mh_strerror(MH_ENOMEM));
        goto out;
    }
    qargv[0] = qemu;
    qargv[1] = "-plugin";
    qargv[2] = parg;
    qargv[3] = progarg;
    for (size_t i = 1; i < argc; i++)
        qargv[3 + i] = argv[i];

    mhq_consumer_init(c, h, w, o);

    pid_t pid = mhq_spawn(qemu, qargv, fd, res);
    if (pid < 0)
        goto out;
    int drc = mhq_consume(c, pid, stop, res);
    res->started = atomic_load(&h->clock) > 0;
    if ((drc = mhq_consume_failed(c, drc, res)) != 0) {
        rc = drc;
        goto out;
    }
    if (atomic_load(&h->attached) == 0) {
        mhq_set_error(res, "%s did not load the plugin %s (exit status %d; its message is above)",
                      qemu, plugin, WIFEXITED(res->wait_status) ? WEXITSTATUS(res->wait_status) : -1);
        goto out;
    }
    if (!res->started && !res->interrupted) {
        mhq_set_error(res, "%s could not run '%s' (its message is above)", qemu, argv[0]);
        goto out;
    }
    if (mhq_plugin_failed(h, res))
        goto out;
    uint32_t forks = atomic_load(&h->forks), execs = atomic_load(&h->execs);
    char num[32];
    int mrc = 0;
    if (forks) {
        snprintf(num, sizeof num, "%u", forks);
        mrc = mh_writer_set_meta(w, "qemu_untraced_forks", num);
        mhq_warn_user(o, "'%s' forked %u time%s: the child%s ran untraced", argv[0], forks,
                  forks == 1 ? "" : "s", forks == 1 ? "" : "ren");
    }
    if (execs && mrc == 0) {
        snprintf(num, sizeof num, "%u", execs);
        mrc = mh_writer_set_meta(w, "qemu_untraced_execs", num);
        mhq_warn_user(o, "'%s' called execve: the program it ran is untraced", argv[0]);
    }
    rc = mhq_finish_meta(c, mrc, res);
out:
    mhq_rings_unmap(h, fd);
    free(c);
    free(qargv);
    free(parg);
    free(prog);
    free(plugin);
    free(qemu);
    return rc;
}
