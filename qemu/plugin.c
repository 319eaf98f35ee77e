/*
 * plugin.c - the memhist QEMU TCG plugin: a producer only.
 *
 * Loaded by qemu-x86_64 (user mode) as
 *   -plugin file=libmemhist-qemu.so,fd=N,size=BYTES
 * where fd N is the shared memory `memhist record --engine qemu` created
 * (qemu/ring.h). Every load, store (and with the header's exec flag every
 * instruction fetch) becomes a 32-byte record in the ring of the guest
 * thread that made it. The plugin never opens the store and never drops a
 * record: a full ring makes the thread wait for the consumer.
 *
 * Why per-vCPU state and not thread-local storage: callbacks get the vCPU
 * index, and an index belongs to one live guest thread at a time. Indexes
 * are reused by later threads, so a slot is claimed when a vCPU starts and
 * given back when its thread exits, never kept per index.
 *
 * In qemu-system-x86_64 (full-system mode, engine_qemu_system.c) the same
 * rings carry each access's guest virtual AND physical address; nothing is
 * instrumented until the guest executes the start marker (see "Full-system
 * mode" below), so firmware and kernel boot run at TCG speed.
 *
 * Only qemu_plugin_version and qemu_plugin_install are exported (the
 * library is built with -fvisibility=hidden; a ctest checks nm -D).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "qemu_api.h"
#include "ring.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = MHQ_QEMU_PLUGIN_VERSION;

/* vCPU indexes are small in user mode (the number of live threads plus
 * reuse); an index beyond this is reported as lost records. */
#define MAX_VCPUS 4096u

/* x86-64 Linux syscall numbers the plugin watches. */
enum { SYS_EXECVE = 59, SYS_EXIT = 60, SYS_EXECVEAT = 322 };

typedef struct vcpu_state {
    mhq_slot *slot;     /* NULL: not recording (no slot yet, fork child) */
    mhq_record *ring;
    uint64_t head;      /* private copy of slot->head */
    uint64_t limit;     /* tail + capacity when last read: head may reach it */
    uint32_t tid;       /* the owner's tid once known (0: not yet) */
    uint64_t tb_t;      /* transition of instruction 0 of the current block;
                           system mode: of the instruction in progress */
} __attribute__((aligned(64))) vcpu_state;

static vcpu_state vcpus[MAX_VCPUS];
static mhq_header *hdr;
static mhq_slot *slots;
static mhq_record *rings;
static uint64_t mask;           /* capacity - 1 */
static int record_exec;
static int diag_fd = -1;        /* private dup of stderr: the guest may close 2 */
static volatile int disabled;   /* set in a forked child: it is not traced */
static int sys_mode;            /* qemu-system: ring.h's full-system protocol */
static qemu_plugin_id_t plugin_id;

/* One line on the private stderr, and the first failure into the header
 * for the consumer. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
    char line[MHQ_ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (hdr != NULL) {
        uint32_t zero = 0;
        if (atomic_compare_exchange_strong(&hdr->failed, &zero, 1))
            snprintf(hdr->error, sizeof hdr->error, "%s", line);
    }
    if (diag_fd >= 0) {
        char out[MHQ_ERROR_LEN + 32];
        int n = snprintf(out, sizeof out, "memhist-qemu: %s\n", line);
        if (n > 0 && write(diag_fd, out, (size_t)n) < 0) {
            /* nowhere left to report */
        }
    }
}

static void pause_us(long us) {
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* Claims a free slot for vCPU v. Waits up to ~2 s for the consumer to free
 * one (a thread that exited and was drained), then fails: hanging the
 * program would be worse than a recording that says it lost records. */
static int claim(vcpu_state *v) {
    for (int tries = 0; tries < 2000 && !disabled; tries++) {
        for (uint32_t i = 0; i < hdr->nslots; i++) {
            uint32_t expect = MHQ_FREE;
            if (!atomic_compare_exchange_strong(&slots[i].state, &expect, MHQ_ACTIVE))
                continue;
            mhq_slot *s = &slots[i];
            uint32_t used = atomic_load(&hdr->slots_used);
            while (used < i + 1 && !atomic_compare_exchange_weak(&hdr->slots_used, &used, i + 1)) {
            }
            /* Before this thread takes any clock value (ring.h). System
             * mode bounds the merge by the clock alone. */
            atomic_store(&s->floor, sys_mode ? UINT64_MAX : atomic_load(&hdr->clock));
            v->head = atomic_load_explicit(&s->head, memory_order_relaxed);
            v->limit = atomic_load_explicit(&s->tail, memory_order_acquire) + mask + 1;
            /* Who owns the slot, for the consumer's stream description,
             * stored before any record is (head is stored with release).
             * The tid is the running thread's only in system mode: in user
             * mode a new thread's vCPU is initialised by its parent, so
             * tb_exec stores it from the thread itself (v->tid = 0). */
            v->tid = sys_mode ? (uint32_t)gettid() : 0;
            atomic_store(&s->tid, v->tid);
            atomic_store(&s->cpu, sys_mode ? (uint32_t)(v - vcpus) : UINT32_MAX);
            v->ring = rings + (uint64_t)i * (mask + 1);
            v->tb_t = 0;
            v->slot = s;
            return 1;
        }
        pause_us(1000);
    }
    if (!disabled)
        fail("no free ring for a new thread (more than %u threads at once): its accesses are lost",
             hdr->nslots);
    return 0;
}

/* Gives v's slot back: its records are all published (head is stored per
 * record), nothing of it is pending any more. */
static void release(vcpu_state *v) {
    mhq_slot *s = v->slot;
    if (s == NULL)
        return;
    v->slot = NULL;
    atomic_store_explicit(&s->floor, UINT64_MAX, memory_order_release);
    atomic_store_explicit(&s->state, MHQ_DONE, memory_order_release);
}

/* The ring is full: publish a tighter floor (t is a lower bound of this
 * thread's records from now on) so the consumer can merge everything up
 * to it, then wait for room. */
static void __attribute__((noinline)) wait_room(vcpu_state *v, uint64_t t) {
    mhq_slot *s = v->slot;
    if (!sys_mode)
        atomic_store_explicit(&s->floor, t, memory_order_release);
    atomic_fetch_add_explicit(&s->waits, 1, memory_order_relaxed);
    for (unsigned spins = 0;; spins++) {
        uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
        if (v->head - tail <= mask) {
            v->limit = tail + mask + 1;
            return;
        }
        if (spins < 64)
            __builtin_ia32_pause();
        else
            pause_us(20);
    }
}

static inline void push(vcpu_state *v, uint64_t t, uint64_t addr, uint64_t phys, uint64_t pc,
                        uint32_t size, uint8_t op) {
    uint64_t h = v->head;
    if (__builtin_expect(h == v->limit, 0))
        wait_room(v, t);
    mhq_record *r = &v->ring[h & mask];
    r->transition = t;
    r->addr = addr;
    r->phys = phys;
    r->pc = pc;
    r->size = size;
    r->op = op;
    v->head = h + 1;
    atomic_store_explicit(&v->slot->head, h + 1, memory_order_release);
}

/* Per-instruction user data, packed into the pointer so translation
 * allocates nothing: bits 0-3 length, 4-12 index in the block (a block
 * has at most 512 instructions), 16-63 pc (user-mode addresses < 2^48). */
#define UD_LEN(u) ((uint32_t)((u) & 0xf))
#define UD_IDX(u) (((u) >> 4) & 0x1ff)
#define UD_PC(u) ((uint64_t)(u) >> 16)

static void tb_exec(unsigned int vcpu, void *ud) {
    if (vcpu >= MAX_VCPUS)
        return;
    vcpu_state *v = &vcpus[vcpu];
    if (v->slot == NULL && (disabled || !claim(v)))
        return;
    if (__builtin_expect(v->tid == 0, 0)) {
        v->tid = (uint32_t)gettid(); /* before this block's records */
        atomic_store(&v->slot->tid, v->tid);
    }
    uint64_t n = (uintptr_t)ud;
    uint64_t t = atomic_fetch_add_explicit(&hdr->clock, n, memory_order_acq_rel);
    v->tb_t = t;
    atomic_store_explicit(&v->slot->floor, t, memory_order_release);
}

static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                       void *ud) {
    if (vcpu >= MAX_VCPUS)
        return;
    vcpu_state *v = &vcpus[vcpu];
    if (v->slot == NULL)
        return;
    uintptr_t u = (uintptr_t)ud;
    push(v, v->tb_t + UD_IDX(u), vaddr, vaddr, UD_PC(u), 1u << qemu_plugin_mem_size_shift(info),
         qemu_plugin_mem_is_store(info) ? MHQ_WRITE : MHQ_READ);
}

static void insn_exec(unsigned int vcpu, void *ud) {
    if (vcpu >= MAX_VCPUS)
        return;
    vcpu_state *v = &vcpus[vcpu];
    if (v->slot == NULL)
        return;
    uintptr_t u = (uintptr_t)ud;
    push(v, v->tb_t + UD_IDX(u), UD_PC(u), UD_PC(u), UD_PC(u), UD_LEN(u), MHQ_EXEC);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                         (void *)(uintptr_t)n);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn) & ((1ull << 48) - 1);
        uintptr_t u = (uintptr_t)(pc << 16 | (uint64_t)(i & 0x1ff) << 4 |
                                  (qemu_plugin_insn_size(insn) & 0xf));
        if (record_exec)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, insn_exec, QEMU_PLUGIN_CB_NO_REGS,
                                                   (void *)u);
        qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS,
                                         QEMU_PLUGIN_MEM_RW, (void *)u);
    }
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu) {
    (void)id;
    if (disabled)
        return;
    if (vcpu >= MAX_VCPUS) {
        fail("vCPU index %u beyond %u: that thread's accesses are lost", vcpu, MAX_VCPUS);
        return;
    }
    /* A reused index whose thread left without the exit callback. */
    release(&vcpus[vcpu]);
    claim(&vcpus[vcpu]);
}

static void vcpu_exit(qemu_plugin_id_t id, unsigned int vcpu) {
    (void)id;
    if (vcpu < MAX_VCPUS && !disabled)
        release(&vcpus[vcpu]);
}

/* A thread in a syscall may block for ever (join, futex, read): it must not
 * hold back the consumer's merge, so its floor is lifted; on return it
 * comes back at the current clock, a bound of everything it takes later. */
static void syscall_enter(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                          uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                          uint64_t a7, uint64_t a8) {
    (void)id, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7, (void)a8;
    if (vcpu >= MAX_VCPUS || disabled)
        return;
    vcpu_state *v = &vcpus[vcpu];
    if (num == SYS_EXECVE || num == SYS_EXECVEAT)
        atomic_fetch_add(&hdr->execs, 1);
    if (num == SYS_EXIT) {
        release(v);
        return;
    }
    if (v->slot != NULL)
        atomic_store_explicit(&v->slot->floor, UINT64_MAX, memory_order_release);
}

static void syscall_return(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, int64_t ret) {
    (void)id;
    if (vcpu >= MAX_VCPUS || disabled)
        return;
    if ((num == SYS_EXECVE || num == SYS_EXECVEAT) && ret < 0)
        atomic_fetch_sub(&hdr->execs, 1);
    vcpu_state *v = &vcpus[vcpu];
    if (v->slot != NULL)
        atomic_store(&v->slot->floor, atomic_load(&hdr->clock));
}

/* ---- Full-system mode ----
 *
 * The guest says when to record by executing two marker instructions
 * (engine_qemu_system.c writes them into tiny programs /init runs around
 * the command): 8-byte NOPs `nopl DISP(%rax,%rax,1)`, 0f 1f 84 00 then
 * the displacement "MHST" (start) or "MHSP" (stop). No compiler emits a
 * NOP with such a displacement, and a NOP changes nothing in the guest.
 *
 * Phase 0 (boot): only marker instructions get a callback. Phase 1: the
 * start marker resets the plugin (qemu_plugin_reset flushes the translated
 * code), and the callback of the reset registers full instrumentation:
 * an exec callback per instruction (the clock, counted one instruction at
 * a time: per-block ranges let transitions go backwards around interrupt
 * delivery and I/O re-execution) and a memory callback that asks for the
 * physical address. Phase 2: after the stop marker the callbacks return at
 * once and new translations are not instrumented (see sys_stop).
 *
 * qemu runs with -accel tcg,thread=single: every vCPU on one host thread,
 * so the clock needs no atomic add (ring.h). */
static const uint8_t mark_start[8] = {0x0f, 0x1f, 0x84, 0x00, 'M', 'H', 'S', 'T'};
static const uint8_t mark_stop[8] = {0x0f, 0x1f, 0x84, 0x00, 'M', 'H', 'S', 'P'};

static int is_mark(struct qemu_plugin_insn *insn, const uint8_t mark[8]) {
    if (qemu_plugin_insn_size(insn) != 8)
        return 0;
    const void *data = qemu_plugin_insn_data(insn);
    return data != NULL && memcmp(data, mark, 8) == 0;
}

static void sys_insn(unsigned int vcpu, void *ud) {
    (void)ud;
    if (vcpu >= MAX_VCPUS || atomic_load_explicit(&hdr->stopped, memory_order_relaxed))
        return;
    uint64_t t = atomic_load_explicit(&hdr->clock, memory_order_relaxed);
    vcpus[vcpu].tb_t = t;
    /* release: the previous instruction's records are visible before a
     * consumer sees this clock value and merges up to it. */
    atomic_store_explicit(&hdr->clock, t + 1, memory_order_release);
}

static void sys_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud) {
    if (vcpu >= MAX_VCPUS)
        return;
    vcpu_state *v = &vcpus[vcpu];
    if (v->slot == NULL || atomic_load_explicit(&hdr->stopped, memory_order_relaxed))
        return;
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (hw == NULL) {
        atomic_fetch_add_explicit(&hdr->unmapped, 1, memory_order_relaxed);
        return;
    }
    if (qemu_plugin_hwaddr_is_io(hw)) {
        /* A device register: its "physical address" is a device offset,
         * not memory. Counted, not stored. */
        atomic_fetch_add_explicit(&hdr->io_skipped, 1, memory_order_relaxed);
        return;
    }
    push(v, v->tb_t, vaddr, qemu_plugin_hwaddr_phys_addr(hw), (uint64_t)(uintptr_t)ud,
         1u << qemu_plugin_mem_size_shift(info),
         qemu_plugin_mem_is_store(info) ? MHQ_WRITE : MHQ_READ);
}

/* No reset here, unlike at the start: QEMU 7.2 leaves a vCPU's pointer to
 * the memory callbacks of the last instrumented instruction set when a
 * block is left by an exception, and a reset frees them (the flush): a
 * helper access later asserted in qemu_plugin_vcpu_mem_cb (seen once in
 * six runs). Phase 0 registers no memory callback, so the start's reset
 * has nothing to leave dangling. The callbacks stay and return at once. */
static void sys_stop(unsigned int vcpu, void *ud) {
    (void)vcpu, (void)ud;
    atomic_store_explicit(&hdr->stopped, 1, memory_order_relaxed);
}

static void sys_trans_armed(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    if (atomic_load_explicit(&hdr->stopped, memory_order_relaxed))
        return;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        if (is_mark(insn, mark_stop)) {
            /* Neither the marker nor anything after it is recorded. */
            qemu_plugin_register_vcpu_insn_exec_cb(insn, sys_stop, QEMU_PLUGIN_CB_NO_REGS, NULL);
            continue;
        }
        void *pc = (void *)(uintptr_t)qemu_plugin_insn_vaddr(insn);
        qemu_plugin_register_vcpu_insn_exec_cb(insn, sys_insn, QEMU_PLUGIN_CB_NO_REGS, NULL);
        qemu_plugin_register_vcpu_mem_cb(insn, sys_mem, QEMU_PLUGIN_CB_NO_REGS,
                                         QEMU_PLUGIN_MEM_RW, pc);
    }
}

static void sys_armed(qemu_plugin_id_t id, void *ud) {
    (void)ud;
    qemu_plugin_register_vcpu_tb_trans_cb(id, sys_trans_armed);
}

static void sys_start(unsigned int vcpu, void *ud) {
    (void)vcpu, (void)ud;
    uint32_t zero = 0;
    if (atomic_compare_exchange_strong(&hdr->triggered, &zero, 1))
        qemu_plugin_reset(plugin_id, sys_armed);
}

static void sys_trans_waiting(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        if (is_mark(insn, mark_start))
            qemu_plugin_register_vcpu_insn_exec_cb(insn, sys_start, QEMU_PLUGIN_CB_NO_REGS,
                                                   NULL);
    }
}

/* System mode: every vCPU is created at boot, before the guest runs, and
 * keeps its slot until qemu exits. */
static void sys_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu) {
    (void)id;
    if (vcpu >= MAX_VCPUS) {
        fail("vCPU index %u beyond %u: its accesses are lost", vcpu, MAX_VCPUS);
        return;
    }
    if (vcpus[vcpu].slot == NULL)
        claim(&vcpus[vcpu]);
}

/* fork: the child shares the rings with the parent and has no consumer of
 * its own: it stops recording (its callbacks return at once); the parent
 * counts the fork so `memhist record` can say a child ran untraced. */
static void atfork_parent(void) {
    if (!disabled)
        atomic_fetch_add(&hdr->forks, 1);
}

static void atfork_child(void) {
    disabled = 1;
    for (unsigned i = 0; i < MAX_VCPUS; i++)
        vcpus[i].slot = NULL;
}

/* Parses "key=value" with a decimal value; 0 when key does not match. */
static int arg_u64(const char *arg, const char *key, uint64_t *out) {
    size_t kl = strlen(key);
    if (strncmp(arg, key, kl) != 0 || arg[kl] != '=')
        return 0;
    const char *v = arg + kl + 1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || *end != '\0' || errno != 0)
        return -1;
    *out = x;
    return 1;
}

static int check_header(const mhq_header *h, uint64_t size) {
    if (h->magic != MHQ_MAGIC || h->version != MHQ_VERSION)
        return -1;
    if (h->header_size != sizeof(mhq_header) || h->slot_size != sizeof(mhq_slot) ||
        h->record_size != sizeof(mhq_record))
        return -1;
    if (h->nslots == 0 || h->nslots > 65536 || h->capacity < 1024 ||
        (h->capacity & (h->capacity - 1)) != 0 || h->capacity > (1ull << 32))
        return -1;
    if (h->total_size != size || size != mhq_total_size(h->nslots, h->capacity))
        return -1;
    if (h->slots_offset % 64 != 0 || h->slots_offset < sizeof(mhq_header) ||
        h->rings_offset < h->slots_offset + (uint64_t)h->nslots * sizeof(mhq_slot) ||
        h->rings_offset + (uint64_t)h->nslots * h->capacity * sizeof(mhq_record) > size)
        return -1;
    return 0;
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                               char **argv) {
    diag_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 100);
    plugin_id = id;
    uint64_t fd = UINT64_MAX, size = 0;
    for (int i = 0; i < argc; i++) {
        int r1 = arg_u64(argv[i], "fd", &fd), r2 = arg_u64(argv[i], "size", &size);
        if (r1 < 0 || r2 < 0 || (r1 == 0 && r2 == 0)) {
            fail("bad plugin argument '%s' (expected fd=N,size=BYTES)", argv[i]);
            return -1;
        }
    }
    if (fd > INT32_MAX || size < sizeof(mhq_header)) {
        fail("missing fd=N,size=BYTES: this plugin is started by 'memhist record --engine qemu'");
        return -1;
    }
    struct stat st;
    if (fstat((int)fd, &st) != 0 || (uint64_t)st.st_size != size) {
        fail("fd %" PRIu64 " is not the %" PRIu64 "-byte shared memory expected", fd, size);
        return -1;
    }
    void *map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    if (map == MAP_FAILED) {
        fail("mmap of the rings: %s", strerror(errno));
        return -1;
    }
    close((int)fd);
    if (check_header(map, size) != 0) {
        munmap(map, (size_t)size);
        fail("the shared memory is not a memhist ring of this version");
        return -1;
    }
    hdr = map;
    slots = (mhq_slot *)((char *)map + hdr->slots_offset);
    rings = (mhq_record *)((char *)map + hdr->rings_offset);
    mask = hdr->capacity - 1;
    record_exec = hdr->exec != 0;
    if ((hdr->system != 0) != info->system_emulation) {
        fail("the rings were made for %s mode, this qemu runs in %s mode",
             hdr->system ? "full-system" : "user", info->system_emulation ? "full-system" : "user");
        return -1;
    }
    if (info->system_emulation) {
        if (record_exec) {
            fail("execute accesses are not recorded in full-system mode");
            return -1;
        }
        sys_mode = 1;
        qemu_plugin_register_vcpu_init_cb(id, sys_vcpu_init);
        qemu_plugin_register_vcpu_tb_trans_cb(id, sys_trans_waiting);
        atomic_store(&hdr->attached, (uint32_t)getpid());
        return 0;
    }
    if (pthread_atfork(NULL, atfork_parent, atfork_child) != 0) {
        fail("pthread_atfork failed");
        return -1;
    }
    qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
    qemu_plugin_register_vcpu_exit_cb(id, vcpu_exit);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_vcpu_syscall_cb(id, syscall_enter);
    qemu_plugin_register_vcpu_syscall_ret_cb(id, syscall_return);
    atomic_store(&hdr->attached, (uint32_t)getpid());
    return 0;
}
