/*
 * tiny_input.h - what the golden store format/golden/tiny.store holds: the
 * accesses, the writer options, where the commit falls and the metadata.
 * gen_golden.c writes exactly this; tests/golden.c reads the committed
 * bytes back and expects exactly this. Changing anything here changes the
 * committed files: regenerate them (format/golden/README.md) on purpose.
 *
 * The trace is small but touches every corner of the format: execute, read
 * and write accesses; linear present and absent; several accesses per
 * transition; address 0 and a range ending at 2^64 - 1; a 2^32 - 1 byte
 * access; touching and overlapping ranges that merge into one chunk; a
 * transition gap; slices of 10 accesses; two segments. Ids 5, 6 and 9 are
 * the writes of SPEC.md's worked example (one chunk, transitions 100, 100,
 * 103, physical 0x1000, 0x1008, 0x1010, linear = physical + 0x10000 for the
 * first two and absent for the third, sizes 8, 8, 4).
 *
 * Format 2.0 adds, per access, a stream and a pc (tiny_streams, tiny_pcs),
 * two declared streams, stream metadata and windows. Segment 0 holds both
 * streams and pcs; segment 1 holds stream 0 only (so no stream column, and
 * stream 1 with count 0 in its table) and pcs; window 2 crosses the commit
 * (two parts to merge) and window 3 holds no access. The 1.0 fixture
 * format/golden/v1/tiny.store holds the same accesses with stream 0 and no
 * pc, no streams table and no windows.
 */
#ifndef MH_TINY_INPUT_H
#define MH_TINY_INPUT_H

#include <stdint.h>

typedef struct tiny_access {
    uint64_t transition;
    uint64_t physical;
    uint32_t size;
    uint8_t op;         /* 0 read, 1 write, 2 execute */
    uint8_t has_linear;
    uint64_t linear;
} tiny_access;

#define TINY_R 0
#define TINY_W 1
#define TINY_X 2
#define TINY_NOLIN 0, 0 /* has_linear = 0 */
#define TINY_LIN(x) 1, (x)

static const tiny_access tiny_accesses[] = {
    /* slice 0: transitions 100 .. 103 */
    {100, 0x400000, 4, TINY_X, TINY_LIN(0x400000)},                  /* id 0 */
    {100, 0x7fff0000, 8, TINY_R, TINY_LIN(0x7ffffff0000)},           /* id 1 */
    {100, 0x2000, 4, TINY_R, TINY_NOLIN},                            /* id 2 */
    {100, 0x0, 1, TINY_R, TINY_LIN(0x10000)},                        /* id 3: address 0 */
    {100, 0x400004, 3, TINY_X, TINY_LIN(0x400004)},                  /* id 4 */
    {100, 0x1000, 8, TINY_W, TINY_LIN(0x11000)},                     /* id 5 */
    {100, 0x1008, 8, TINY_W, TINY_LIN(0x11008)},                     /* id 6 */
    {101, 0x400007, 5, TINY_X, TINY_LIN(0x400007)},                  /* id 7 */
    {103, 0x1000, 16, TINY_R, TINY_LIN(0x11000)},                    /* id 8 */
    {103, 0x1010, 4, TINY_W, TINY_NOLIN},                            /* id 9 */
    /* slice 1: a push, a device register ending at 2^64 - 1, a copy */
    {104, 0x7ffefff8, 8, TINY_W, TINY_LIN(0x7fffffefff8)},           /* id 10 */
    {104, 0x40000c, 1, TINY_X, TINY_LIN(0x40000c)},                  /* id 11 */
    {105, 0xfffffffffffffff8, 8, TINY_R, TINY_NOLIN},                /* id 12 */
    {106, 0x100000, 4096, TINY_R, TINY_LIN(0x7f0000100000)},         /* id 13 */
    {106, 0x200000, 4096, TINY_W, TINY_LIN(0x7f0000200000)},         /* id 14 */
    {107, 0x2000, 4, TINY_W, TINY_NOLIN},                            /* id 15 */
    {107, 0x2002, 4, TINY_R, TINY_NOLIN},                            /* id 16: overlaps 15 */
    {108, 0x7ffefff8, 8, TINY_R, TINY_LIN(0x7fffffefff8)},           /* id 17: the pop */
    {108, 0x400010, 2, TINY_X, TINY_LIN(0x400010)},                  /* id 18 */
    {109, 0x1000, 8, TINY_R, TINY_LIN(0x11000)},                     /* id 19 */
    /* slice 2, after a gap of a million transitions */
    {1000109, 0x0, 0xffffffff, TINY_R, TINY_LIN(0xffff800000000000)}, /* id 20: 4 GiB - 1 */
    {1000109, 0xffffffff00000001, 0xffffffff, TINY_W, TINY_NOLIN},    /* id 21: ends at 2^64-1 */
    {1000110, 0x1000, 1, TINY_W, TINY_LIN(0x11000)},                 /* id 22 */
    {1000110, 0x1001, 1, TINY_W, TINY_LIN(0x11001)},                 /* id 23: touches 22 */
    /* the first commit falls here: segment 1 starts at id 24 */
    {1000111, 0x400020, 7, TINY_X, TINY_LIN(0x400020)},              /* id 24 */
    {1000111, 0x3000, 8, TINY_R, TINY_LIN(0x13000)},                 /* id 25 */
    {1000111, 0x3008, 8, TINY_R, TINY_LIN(0x13008)},                 /* id 26 */
    {1000112, 0x3010, 8, TINY_R, TINY_LIN(0x13010)},                 /* id 27 */
    {1000112, 0x5000, 2, TINY_W, TINY_NOLIN},                        /* id 28 */
    {1000113, 0x400027, 3, TINY_X, TINY_LIN(0x400027)},              /* id 29 */
    {1000113, 0x3000, 24, TINY_W, TINY_LIN(0x13000)},                /* id 30 */
    {1000114, 0x1000, 8, TINY_R, TINY_LIN(0x11000)},                 /* id 31 */
    {1000114, 0x6000, 8, TINY_R, TINY_LIN(0x16000)},                 /* id 32 */
    {1000115, 0x8000, 8, TINY_R, TINY_LIN(0x18000)},                 /* id 33 */
    {1000115, 0x8008, 8, TINY_W, TINY_LIN(0x18008)},                 /* id 34 */
    {1000116, 0x400030, 4, TINY_X, TINY_LIN(0x400030)},              /* id 35 */
    {1000116, 0xfffffffffffffff8, 8, TINY_W, TINY_NOLIN},            /* id 36 */
    {1000116, 0xffffffffffffffff, 1, TINY_R, TINY_NOLIN},            /* id 37 */
    {1000117, 0x0, 2, TINY_W, TINY_LIN(0x10000)},                    /* id 38 */
    {1000117, 0x2, 2, TINY_R, TINY_LIN(0x10002)},                    /* id 39 */
};

#define TINY_COUNT (sizeof tiny_accesses / sizeof tiny_accesses[0])
#define TINY_FIRST_COMMIT 24 /* accesses in the first segment */

/* Writer options (mh_writer_options fields). */
#define TINY_SLICE_ACCESSES 10
#define TINY_BLOCK_ACCESSES 64
#define TINY_CHUNK_MIN 1
#define TINY_LZ4_ACCELERATION 1

/* Metadata set before the first commit, then changed before the second:
 * the store's metadata is the newest segment's (TINY_META_FINAL). */
static const char *const tiny_meta_first[][2] = {
    {"tracer", "gen_golden"},
    {"command", "tiny example, part 1"},
    {"arch", "x86_64"},
};
static const char *const tiny_meta_second[][2] = {
    {"command", "tiny example, part 2"},
    {"note", "second segment"},
};
static const char *const tiny_meta_final[][2] = {
    {"tracer", "gen_golden"},
    {"command", "tiny example, part 2"},
    {"arch", "x86_64"},
    {"note", "second segment"},
};
#define TINY_META_FINAL_COUNT 4

/* ---- format 2.0 additions ------------------------------------------------ */

/* Stream of each access: 0 or 1; segment 1 (ids 24 ..) has stream 0 only.
 * Ids 5, 6, 9 (SPEC.md's worked example) are in streams 1, 1, 0. */
static const uint32_t tiny_streams[] = {
    0, 0, 1, 1, 0, 1, 1, 0, 1, 0, /* slice 0 */
    1, 1, 0, 0, 1, 1, 1, 0, 1, 0, /* slice 1 */
    1, 0, 0, 1,                   /* slice 2 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* segment 1 */
};
/* pc of each access, 0 for none. Ids 5, 6, 9 have 0x401000, none,
 * 0x40100c (the worked example); the last access has a pc of 2^64 - 4 so
 * the pc delta wraps around 2^64. */
static const uint64_t tiny_pcs[] = {
    0x400000, 0x401100, 0, 0x401108, 0x400004, 0x401000, 0, 0x400007, 0x401004, 0x40100c,
    0x400008, 0x40000c, 0, 0x401200, 0x401204, 0, 0x401208, 0x40000e, 0x400010, 0x401300,
    0x401400, 0x401404, 0, 0x401408,
    0x400020, 0x401500, 0x401500, 0x401504, 0, 0x400027, 0x401508, 0x401600, 0, 0x401700,
    0x401704, 0x400030, 0, 0x401800, 0xfffffffffffffffc, 0x10,
};

/* The streams, declared before the first access (stream 0 is implicit but
 * gets its description too). */
typedef struct tiny_stream {
    uint32_t id, kind, parent;
    uint64_t pid, tid;
    uint32_t cpu;
    const char *name;
} tiny_stream;
static const tiny_stream tiny_stream_decl[] = {
    {0, 1 /* thread */, 0xFFFFFFFFu, 4242, 4242, 0xFFFFFFFFu, "main"},
    {1, 1 /* thread */, 0, 4242, 4243, 3, "worker"},
};
#define TINY_STREAMS 2
static const struct {
    uint32_t stream;
    const char *key, *value;
} tiny_stream_meta[] = {
    {1, "role", "producer"},
};
#define TINY_STREAM_META 1

/* Windows: begun before access `begin`, ended before access `end` (so they
 * hold ids [begin, end)); window 3 is begun and ended before id 35. */
typedef struct tiny_window {
    uint64_t window;
    uint64_t begin, end;
} tiny_window;
static const tiny_window tiny_windows[] = {
    {1, 3, 15},  /* ids 3 .. 14: crosses slices 0 and 1 */
    {2, 20, 30}, /* ids 20 .. 29: crosses the commit, a part in each segment */
    {3, 35, 35}, /* no access */
};
#define TINY_WINDOWS 3

_Static_assert(sizeof tiny_streams / sizeof tiny_streams[0] == TINY_COUNT, "one stream per access");
_Static_assert(sizeof tiny_pcs / sizeof tiny_pcs[0] == TINY_COUNT, "one pc per access");

#endif
