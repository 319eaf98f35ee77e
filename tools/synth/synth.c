/*
 * synth.c - a deterministic synthetic memory trace with realistic locality.
 *
 * The trace models one thread executing instructions. Each transition is one
 * instruction; it performs 0..4 data accesses (plus an execute access of its
 * own bytes with MH_SYNTH_EXEC). The program switches between phases:
 *   stack   - calls push a return address and saved registers below a moving
 *             stack pointer, locals are read and written near it, returns
 *             read them back;
 *   heap    - objects from a size-class bump allocator, accessed field-wise,
 *             with a small ring of recently allocated objects;
 *   stream  - element-wise reads of one array and writes of another;
 *   globals - a few hot variables, skewed, plus rare device registers at the
 *             very top of the physical space (ending exactly at UINT64_MAX);
 *   copy    - memcpy-like copies up to 4 KiB in 8..32 byte pieces, sometimes
 *             a single access of the whole length, rarely one access of
 *             64 KiB .. 1 MiB.
 * Every region maps virtual to physical addresses by a constant offset, so
 * linear = physical + offset(region) (or absent with MH_SYNTH_NO_LINEAR).
 * The global region starts at physical 0 so that address bound is exercised.
 *
 * Determinism: only xoshiro256** seeded through splitmix64, integer
 * arithmetic, and an output that does not depend on how the caller splits
 * its mh_synth_next() calls (a group that does not fit is staged).
 * Speed: one or two PRNG draws per instruction, no division on the hot path
 * except by small constants; well above 100 M accesses/s.
 */
#include "synth.h"

#include <stdlib.h>
#include <string.h>

/* ---- regions: virtual base, physical base -------------------------------- */
enum { R_CODE, R_GLOBAL, R_HEAP, R_STACK, R_ARRAY, R_MMIO, R_COUNT };

static const uint64_t region_virt[R_COUNT] = {
    0x0000000000400000ull, /* code */
    0x0000000000601000ull, /* globals */
    0x0000555555560000ull, /* heap */
    0x00007ffffff00000ull, /* stack (grows down from the top of 1 MiB) */
    0x00007f0000000000ull, /* streamed arrays and copy buffers */
    0xffffffffff600000ull, /* device registers (linear wraps: any u64 is fine) */
};
static const uint64_t region_phys[R_COUNT] = {
    0x0000000001000000ull,
    0x0000000000000000ull,
    0x0000000040000000ull,
    0x0000000080000000ull,
    0x0000000100000000ull,
    0xfffffffffffff000ull,
};

#define CODE_SIZE (1ull << 20)
#define HEAP_SIZE (256ull << 20)
#define STACK_SIZE (1ull << 20)
#define ARRAY_SIZE (1ull << 30)
#define GROUP_MAX 8     /* accesses in one transition, execute included */
#define MAX_STEP 4      /* transitions one data group may advance */
#define RING 32

enum { P_STACK, P_HEAP, P_STREAM, P_GLOBAL, P_COPY };

struct mh_synth {
    uint64_t s[4];
    uint64_t total, produced;
    uint64_t emitted;    /* accesses emitted, staged ones included */
    unsigned flags;
    uint64_t t;          /* transition of the next instruction */
    int started;         /* the first instruction gets t unchanged */
    int near_end;        /* jumped near UINT64_MAX already */
    uint32_t empties;    /* data-less instructions still to fetch (EXEC) */
    int empties_drawn;
    uint64_t pc;         /* virtual address of the next instruction */
    uint64_t ipc;        /* address of the instruction being emitted */
    uint32_t stream;     /* the thread's stream id */
    uint64_t stack_top;  /* virtual; this thread's stack grows down from it */
    uint64_t heap_base;  /* virtual; this thread's arena */
    /* phase */
    int phase;
    uint32_t phase_left;
    /* stack */
    uint64_t sp;
    uint32_t depth;
    uint16_t frame[64];
    uint8_t saved[64];
    /* heap */
    uint64_t heap_top;
    uint64_t obj[RING];
    uint32_t obj_size[RING];
    uint32_t obj_i;
    /* stream */
    uint64_t src, dst, pos, len;
    uint32_t elem;
    int stream_write;
    /* copy */
    uint64_t csrc, cdst, cpos, clen;
    uint32_t cpiece;
    /* staged group that did not fit into the caller's buffer */
    mh_access stage[GROUP_MAX];
    uint32_t stage_n, stage_i;
};

/* ---- PRNG ---------------------------------------------------------------- */
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rnd(mh_synth *g) {
    uint64_t *s = g->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* Uniform enough in [0, n) for n far below 2^32 (multiply-shift). */
static inline uint64_t below(uint64_t r32, uint64_t n) { return ((r32 & 0xffffffffu) * n) >> 32; }

/* ---- emitting ------------------------------------------------------------ */
typedef struct group {
    mh_access *a;
    uint32_t n;
    uint64_t t;
} group;

static inline void emit(mh_synth *g, group *gr, int region, uint64_t virt,
                        uint32_t size, uint8_t op) {
    mh_access *a = &gr->a[gr->n++];
    a->id = g->emitted++; /* ids are the order of emission, staged or not */
    a->transition = gr->t;
    a->physical = virt - region_virt[region] + region_phys[region];
    if (g->flags & MH_SYNTH_NO_LINEAR) {
        a->linear = 0;
        a->has_linear = 0;
    } else {
        a->linear = virt;
        a->has_linear = 1;
    }
    a->size = size;
    a->op = op;
    a->pc = (g->flags & MH_SYNTH_PC) ? g->ipc : 0;
    a->stream = g->stream;
    a->has_pc = (g->flags & MH_SYNTH_PC) ? 1 : 0;
    memset(a->reserved, 0, sizeof a->reserved);
}

/* log2 of the usual access sizes, weighted: mostly 8 and 4 bytes. Shifts,
 * not sizes, so that "how many fit" is a shift, not a division. */
static const uint8_t small_shift[16] = {3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 1, 0, 0, 3, 2, 1};

/* ---- phases -------------------------------------------------------------- */
static void new_phase(mh_synth *g, uint64_t r) {
    uint32_t p = (uint32_t)below(r, 100);
    if (p < 30)
        g->phase = P_STACK;
    else if (p < 55)
        g->phase = P_HEAP;
    else if (p < 78)
        g->phase = P_STREAM;
    else if (p < 92)
        g->phase = P_GLOBAL;
    else
        g->phase = P_COPY;
    g->phase_left = 4 + (uint32_t)((r >> 32) & 63);
    if (g->phase == P_STREAM) {
        uint64_t r2 = rnd(g);
        g->elem = 1u << (r2 & 3);
        g->len = (uint64_t)(64 + below(r2 >> 2, 16384)) * g->elem;
        g->src = region_virt[R_ARRAY] + ((r2 >> 16) & 0x3ff) * (1ull << 20);
        g->dst = region_virt[R_ARRAY] + ((r2 >> 26) & 0x3ff) * (1ull << 20) + (512ull << 10);
        g->pos = 0;
        g->stream_write = (int)((r2 >> 36) & 1);
        g->phase_left = 4 + (uint32_t)((r2 >> 40) & 255);
    } else if (g->phase == P_COPY) {
        uint64_t r2 = rnd(g);
        g->clen = 1 + below(r2, 4096);
        g->cpiece = 8u << (((r2 >> 32) & 3) % 3); /* 8, 16 or 32 */
        if (((r2 >> 34) & 7) == 0)
            g->cpiece = (uint32_t)g->clen; /* the whole copy in one access */
        g->csrc = (((r2 >> 37) & 1) ? region_virt[R_HEAP] : region_virt[R_ARRAY]) +
                  ((r2 >> 38) & 0xfff) * 4096 + ((r2 >> 50) & 0x3f);
        g->cdst = region_virt[R_ARRAY] + (768ull << 20) + ((r2 >> 56) & 0xff) * 8192;
        g->cpos = 0;
        /* one instruction per piece: the phase ends with the copy */
        g->phase_left = (uint32_t)((g->clen + g->cpiece - 1) / g->cpiece);
    }
}

static void do_stack(mh_synth *g, group *gr, uint64_t r) {
    uint32_t k = (uint32_t)(r & 7);
    if (g->depth == 0 || (k < 2 && g->depth < 64)) {
        /* call: return address, saved registers, new frame */
        uint32_t fr = 16u * (1 + (uint32_t)((r >> 3) & 15));
        uint32_t sv = (uint32_t)((r >> 7) % 3);
        if (g->sp - (g->stack_top - STACK_SIZE) < (uint64_t)fr + 64) {
            g->depth = 0; /* unwound by longjmp, to keep the stack bounded */
            g->sp = g->stack_top;
        }
        g->sp -= 8;
        emit(g, gr, R_STACK, g->sp, 8, MH_OP_WRITE);
        for (uint32_t i = 0; i < sv; i++) {
            g->sp -= 8;
            emit(g, gr, R_STACK, g->sp, 8, MH_OP_WRITE);
        }
        g->sp -= fr;
        g->frame[g->depth] = (uint16_t)fr;
        g->saved[g->depth] = (uint8_t)sv;
        g->depth++;
        g->pc = region_virt[R_CODE] + ((r >> 12) & (CODE_SIZE - 1) & ~15ull);
    } else if (k < 4) {
        /* return */
        g->depth--;
        g->sp += g->frame[g->depth];
        for (uint32_t i = 0; i < g->saved[g->depth]; i++) {
            emit(g, gr, R_STACK, g->sp, 8, MH_OP_READ);
            g->sp += 8;
        }
        emit(g, gr, R_STACK, g->sp, 8, MH_OP_READ);
        g->sp += 8;
        g->pc = region_virt[R_CODE] + ((r >> 12) & (CODE_SIZE - 1));
    } else {
        /* locals */
        uint32_t fr = g->frame[g->depth - 1];
        uint32_t n = 1 + (uint32_t)((r >> 3) & 1);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t sh = small_shift[(r >> (8 + 8 * i)) & 15];
            uint32_t sz = 1u << sh;
            uint64_t off = below(r >> (12 + 8 * i), fr >> sh) << sh;
            emit(g, gr, R_STACK, g->sp + off, sz,
                 ((r >> (40 + i)) & 3) == 0 ? MH_OP_WRITE : MH_OP_READ);
        }
    }
}

static void do_heap(mh_synth *g, group *gr, uint64_t r) {
    if ((r & 7) == 0 || g->obj_size[g->obj_i] == 0) {
        /* allocate: size class 16 .. 512, header write then first field */
        uint32_t sz = 16u << ((r >> 3) % 6);
        if (g->heap_top + sz + 16 > region_virt[R_HEAP] + HEAP_SIZE)
            g->heap_top = g->heap_base; /* the arena is reset */
        emit(g, gr, R_HEAP, g->heap_top, 8, MH_OP_WRITE);
        g->obj_i = (g->obj_i + 1) & (RING - 1);
        g->obj[g->obj_i] = g->heap_top + 16;
        g->obj_size[g->obj_i] = sz;
        g->heap_top += sz + 16;
        emit(g, gr, R_HEAP, g->obj[g->obj_i], 8, MH_OP_WRITE);
        return;
    }
    /* field access on the current object, sometimes on an older one */
    uint32_t which = ((r >> 3) & 3) == 0 ? (uint32_t)((r >> 5) & (RING - 1)) : g->obj_i;
    if (g->obj_size[which] == 0)
        which = g->obj_i;
    uint32_t n = 1 + (uint32_t)(((r >> 10) & 3) == 0);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t sh = small_shift[(r >> (12 + 4 * i)) & 15];
        uint32_t sz = 1u << sh;
        uint64_t off = below(r >> (20 + 8 * i), g->obj_size[which] >> sh) << sh;
        emit(g, gr, R_HEAP, g->obj[which] + off, sz,
             ((r >> (44 + i)) & 3) == 0 ? MH_OP_WRITE : MH_OP_READ);
    }
}

static void do_stream(mh_synth *g, group *gr, uint64_t r) {
    if (g->pos + g->elem > g->len) {
        g->pos = 0; /* the loop starts over */
        g->phase_left = 0;
    }
    emit(g, gr, R_ARRAY, g->src + g->pos, g->elem, MH_OP_READ);
    if (g->stream_write || (r & 15) == 0)
        emit(g, gr, R_ARRAY, g->dst + g->pos, g->elem, MH_OP_WRITE);
    g->pos += g->elem;
}

static void do_global(mh_synth *g, group *gr, uint64_t r) {
    if ((r & 0x3ff) == 0) {
        /* a device register in the last physical page; the last one ends
         * exactly at UINT64_MAX */
        uint32_t reg = (uint32_t)((r >> 10) & 511);
        uint32_t sz = ((r >> 19) & 1) ? 8 : 4;
        uint64_t virt = region_virt[R_MMIO] + 8ull * reg + (8 - sz);
        emit(g, gr, R_MMIO, virt, sz, ((r >> 20) & 1) ? MH_OP_WRITE : MH_OP_READ);
        return;
    }
    /* 16 hot variables of 8 bytes, the first few the hottest */
    uint32_t v = (uint32_t)(((r >> 10) & 15) & ((r >> 14) & 15));
    uint8_t op = ((r >> 18) & 3) == 0 ? MH_OP_WRITE : MH_OP_READ;
    emit(g, gr, R_GLOBAL, region_virt[R_GLOBAL] + 8ull * v,
         ((r >> 20) & 3) == 0 ? 4 : 8, op);
    if (((r >> 22) & 7) == 0) /* read-modify-write of a counter */
        emit(g, gr, R_GLOBAL, region_virt[R_GLOBAL] + 8ull * v, 8, MH_OP_WRITE);
}

static void do_copy(mh_synth *g, group *gr, uint64_t r) {
    if (g->cpos == 0 && (r & 0x3f) == 0) {
        /* rare: one huge access, as a DMA or rep movs seen as one */
        uint32_t sz = 65536u << ((r >> 6) % 5);
        uint64_t at = region_virt[R_ARRAY] + ((r >> 9) & 0xff) * (1ull << 20);
        emit(g, gr, R_ARRAY, at, sz, ((r >> 17) & 1) ? MH_OP_WRITE : MH_OP_READ);
        g->phase_left = 0;
        return;
    }
    if (g->cpos >= g->clen)
        g->cpos = 0; /* not reached: phase_left counts the pieces */
    uint32_t piece = g->cpiece;
    if (g->clen - g->cpos < piece)
        piece = (uint32_t)(g->clen - g->cpos);
    emit(g, gr, R_ARRAY, g->csrc + g->cpos, piece, MH_OP_READ);
    emit(g, gr, R_ARRAY, g->cdst + g->cpos, piece, MH_OP_WRITE);
    g->cpos += piece;
}

/* Data-less instructions before the next data instruction: 0.625 on
 * average, at most MAX_STEP - 1 so the near-end bound below holds. */
static const uint8_t empty_run[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3};

/* Moves the transition on by step, with the sparse-trace jumps. */
static void advance(mh_synth *g, uint64_t step, uint64_t r) {
    g->t += step;
    if (!(g->flags & MH_SYNTH_SPARSE_T) || g->near_end)
        return;
    /* a long untraced stretch; below 2^62, so 10^9 of them cannot wrap */
    if ((r & 0x3ff) == 0 && g->t < (1ull << 62))
        g->t += 1ull << (20 + ((r >> 10) & 15));
    /* the last sixteenth of the trace runs near UINT64_MAX: every remaining
     * access moves the transition by at most MAX_STEP, so it cannot wrap */
    uint64_t rem = g->total - g->produced;
    if (rem <= g->total / 16) {
        uint64_t at = UINT64_MAX - MAX_STEP * rem;
        if (at > g->t)
            g->t = at;
        g->near_end = 1;
    }
}

/* The instruction's own bytes, 1 to 11 of them. */
static void fetch(mh_synth *g, group *gr, uint64_t r) {
    g->ipc = g->pc;
    uint32_t ilen = 1 + (uint32_t)((r >> 56) % 7) + (uint32_t)((r >> 59) & 1) * 4;
    if (g->flags & MH_SYNTH_EXEC)
        emit(g, gr, R_CODE, g->pc, ilen, MH_OP_EXEC);
    g->pc += ilen;
    if (g->pc >= region_virt[R_CODE] + CODE_SIZE - 16)
        g->pc = region_virt[R_CODE];
}

/* Produces the next instruction that has at least one access into a (room
 * for GROUP_MAX). Returns the number of accesses, always >= 1. */
static uint32_t next_group(mh_synth *g, mh_access *a) {
    group gr = {a, 0, 0};
    uint64_t r = rnd(g);
    uint64_t step = 1;
    if (!g->started) {
        g->started = 1;
        step = 0;
    } else if (!(g->flags & MH_SYNTH_EXEC)) {
        step += empty_run[(r >> 40) & 15]; /* skipped without a trace */
    } else {
        if (!g->empties_drawn) {
            g->empties = empty_run[(r >> 40) & 15];
            g->empties_drawn = 1;
        }
        if (g->empties) { /* fetched, but touches no data */
            g->empties--;
            advance(g, 1, r);
            gr.t = g->t;
            fetch(g, &gr, r);
            return gr.n;
        }
    }
    g->empties_drawn = 0;
    advance(g, step, r);
    gr.t = g->t;
    fetch(g, &gr, r);
    if (g->phase_left == 0)
        new_phase(g, rnd(g));
    g->phase_left--;
    uint64_t r2 = rnd(g);
    switch (g->phase) {
    case P_STACK: do_stack(g, &gr, r2); break;
    case P_HEAP: do_heap(g, &gr, r2); break;
    case P_STREAM: do_stream(g, &gr, r2); break;
    case P_GLOBAL: do_global(g, &gr, r2); break;
    default: do_copy(g, &gr, r2); break;
    }
    return gr.n;
}

mh_synth *mh_synth_new(uint64_t seed, uint64_t total, unsigned flags) {
    return mh_synth_new_thread(seed, total, flags, 0);
}

mh_synth *mh_synth_new_thread(uint64_t seed, uint64_t total, unsigned flags,
                              uint32_t thread) {
    if (thread > MH_STREAM_MAX)
        return NULL;
    mh_synth *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->stream = thread;
    /* stacks 2 MiB apart below thread 0's (physical too: the region maps by
     * one offset), arenas 4 MiB apart (a thread's arena wraps into the next
     * one's only after 4 MiB of allocation, as a shared heap does) */
    g->stack_top = region_virt[R_STACK] + STACK_SIZE - (uint64_t)thread * (2u << 20);
    g->heap_base = region_virt[R_HEAP] + (uint64_t)(thread % 64) * (4u << 20);
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&x);
    g->total = total;
    g->flags = flags;
    g->t = (seed & 0xff) * 1000; /* traces need not start at transition 0 */
    g->pc = region_virt[R_CODE];
    g->sp = g->stack_top;
    g->heap_top = g->heap_base;
    return g;
}

size_t mh_synth_next(mh_synth *g, mh_access *out, size_t max) {
    size_t n = 0;
    while (n < max && g->produced < g->total) {
        if (g->stage_i < g->stage_n) {
            out[n++] = g->stage[g->stage_i++];
            g->produced++;
            continue;
        }
        mh_access *dst = (max - n >= GROUP_MAX) ? out + n : g->stage;
        uint32_t k = next_group(g, dst);
        if (k > g->total - g->produced)
            k = (uint32_t)(g->total - g->produced); /* the trace ends mid-instruction */
        if (dst == g->stage) {
            g->stage_n = k;
            g->stage_i = 0;
            continue;
        }
        g->produced += k;
        n += k;
    }
    return n;
}

void mh_synth_free(mh_synth *g) { free(g); }
