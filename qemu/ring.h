/*
 * ring.h - the shared-memory rings between the memhist QEMU plugin (the
 * producer, inside qemu-x86_64) and `memhist record --engine qemu` (the
 * consumer, tools/engine_qemu.c).
 *
 * The consumer creates one memfd, lays out a header, MHQ_SLOTS slot headers
 * and one ring of records per slot, and passes the fd and the size to the
 * plugin as plugin arguments. The plugin maps it, closes the fd (the guest
 * must not see it) and never opens the store: whatever it has written into
 * a ring survives qemu's death, even a fatal guest signal that skips the
 * plugin's exit callback.
 *
 * This is a same-host, same-build interface, never a file: structures are
 * laid out by the compiler in host byte order, and the consumer checks
 * magic, version and the sizes of both structures before trusting anything.
 *
 * Protocol (one slot per guest thread):
 *   - A thread claims a FREE slot (CAS FREE -> ACTIVE) when its vCPU starts
 *     and marks it DONE when it exits (exit syscall, vCPU exit). The
 *     consumer frees a DONE slot once it has drained it. head and tail only
 *     ever grow; a record lives at ring[i & (capacity - 1)].
 *   - The producer writes a record, then stores head + 1 (release). It
 *     never overwrites an unread record: it waits while head - tail ==
 *     capacity (backpressure, never a drop).
 *   - clock is the global instruction counter: every translation block
 *     takes its range [t, t + n) with one atomic add, and instruction i of
 *     the block gets transition t + i. Values are unique across threads.
 *   - floor is a lower bound of the transition of every record the slot
 *     has not yet published (current block's t; UINT64_MAX while the
 *     thread sits in a syscall or is done). The consumer reads clock, then
 *     every floor, then every head; W = min(clock, floors) bounds every
 *     record still to come, so records with transition <= W can be merged
 *     and handed to the writer in transition order (ring.h's consumer
 *     proof is in qemu/README.md).
 *
 * Full-system mode (system = 1, qemu-system-x86_64 run with
 * -accel tcg,thread=single): one slot per vCPU, all vCPUs on one host
 * thread. clock counts instructions one by one (an exec callback per
 * instruction stores clock + 1, release, before the instruction's
 * accesses), floors stay UINT64_MAX, and the consumer's bound is
 * clock - 1: every record of an instruction before the one in progress is
 * visible once clock is, and an instruction's records all go to one ring.
 * Nothing is recorded (clock stays 0) until the guest runs the start
 * marker instruction, nor after the stop marker (qemu/README.md).
 */
#ifndef MH_QEMU_RING_H
#define MH_QEMU_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define MHQ_MAGIC 0x31474e4952514d48ull /* "HMQRING1" read as little-endian bytes */
#define MHQ_VERSION 4u

/* Slots: concurrent guest threads. A thread that finds none free waits for
 * the consumer to free one (a thread that exited and was drained). */
#define MHQ_SLOTS 256u
/* Default ring size per slot, in records (a power of two): 4 MiB. Pages
 * are touched only by slots that are used. */
#define MHQ_DEFAULT_CAPACITY (1u << 17)

enum mhq_state { MHQ_FREE = 0, MHQ_ACTIVE = 1, MHQ_DONE = 2 };
enum mhq_op { MHQ_READ = 0, MHQ_WRITE = 1, MHQ_EXEC = 2 }; /* = enum mh_op */

/* One access: 40 bytes. */
typedef struct mhq_record {
    uint64_t transition;
    uint64_t addr; /* guest virtual address */
    uint64_t phys; /* guest physical address (= addr in user mode) */
    uint64_t pc;   /* address of the instruction that made the access */
    uint32_t size; /* bytes (after TCG's split: 16-byte SSE = two 8-byte) */
    uint8_t op;    /* enum mhq_op */
    uint8_t pad[3];
} mhq_record;
_Static_assert(sizeof(mhq_record) == 40, "mhq_record is 40 bytes");

/* Producer and consumer fields sit on separate cache lines: the producer's
 * per-record head store must not bounce the consumer's tail line. */
typedef struct mhq_slot {
    _Alignas(64) _Atomic uint64_t head;  /* producer: records written */
    _Atomic uint64_t floor;              /* producer: see above */
    _Atomic uint32_t state;              /* enum mhq_state */
    _Atomic uint32_t tid;                /* host thread id of the owner (= guest tid),
                                            set at claim, before its first record */
    _Atomic uint64_t waits;              /* producer: times it found the ring full */
    _Atomic uint32_t cpu;                /* system mode: the owner's vCPU index */
    _Alignas(64) _Atomic uint64_t tail;  /* consumer: records read */
} mhq_slot;

#define MHQ_ERROR_LEN 200

/* Header at offset 0 of the shared memory. */
typedef struct mhq_header {
    /* Set by the consumer before qemu starts, read-only afterwards. */
    uint64_t magic;
    uint32_t version;
    uint32_t header_size;  /* sizeof(mhq_header) */
    uint32_t slot_size;    /* sizeof(mhq_slot) */
    uint32_t record_size;  /* sizeof(mhq_record) */
    uint32_t nslots;
    uint32_t exec;         /* 1: also record instruction fetches */
    uint32_t system;       /* 1: qemu-system (full-system mode, see below) */
    uint32_t reserved;
    uint64_t capacity;     /* records per ring, a power of two */
    uint64_t slots_offset; /* byte offset of mhq_slot[nslots] */
    uint64_t rings_offset; /* byte offset of ring 0; ring i follows ring i-1 */
    uint64_t total_size;   /* bytes of the whole mapping */

    _Alignas(64) _Atomic uint64_t clock; /* next transition to hand out */

    /* Written by the plugin, read by the consumer. */
    _Alignas(64) _Atomic uint32_t attached;   /* plugin installed (its pid) */
    _Atomic uint32_t slots_used;              /* high-water mark of claimed slots */
    _Atomic uint32_t forks;                   /* fork()s: children ran untraced */
    _Atomic uint32_t execs;                   /* execve attempts: replaced program untraced */
    _Atomic uint32_t failed;                  /* records were lost: see error */
    /* Full-system mode only. */
    _Atomic uint32_t triggered;               /* the guest's start marker ran */
    _Atomic uint32_t stopped;                 /* the guest's stop marker ran */
    _Atomic uint64_t io_skipped;              /* device (MMIO) accesses not recorded */
    _Atomic uint64_t unmapped;                /* accesses without a physical address */
    char error[MHQ_ERROR_LEN];                /* first failure, NUL-terminated */
} mhq_header;

/* Bytes needed for nslots rings of capacity records. */
static inline uint64_t mhq_total_size(uint32_t nslots, uint64_t capacity) {
    uint64_t slots = (sizeof(mhq_header) + 63) / 64 * 64;
    uint64_t rings = slots + ((uint64_t)nslots * sizeof(mhq_slot) + 4095) / 4096 * 4096;
    return rings + (uint64_t)nslots * capacity * sizeof(mhq_record);
}

#endif /* MH_QEMU_RING_H */
