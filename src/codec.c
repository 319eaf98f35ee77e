/*
 * codec.c - the access-block codec: columns of delta/zigzag varints
 * (SPEC.md "Access block"), compressed with LZ4 and checked with XXH3-64.
 * The decoder treats its input as hostile: every varint read is bounded by
 * the end of the block (2.0: of its column) and the block must be consumed
 * exactly. One decoder per column serves both versions: a 1.0 block is the
 * five base columns back to back, a 2.0 block prefixes each column with
 * its byte length, so a reader skips the columns it does not know.
 */
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "internal.h"

static size_t up64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Piece `which` of r (mh_rows.mem) made anew, of n bytes, the old one
 * freed; NULL when out of memory (r unchanged). */
static uint8_t *rows_piece(mh_rows *r, int which, size_t n) {
    uint8_t *p = mh_arena_alloc(r->ar, n);
    if (p) {
        mh_arena_free(r->ar, r->mem[which]);
        r->mem[which] = p;
    }
    return p;
}

static int piece_idt(mh_rows *r, uint32_t cap) {
    size_t o_t = up64((size_t)cap * sizeof *r->id_off);
    uint8_t *p = rows_piece(r, 0, o_t + (size_t)cap * sizeof *r->t);
    if (!p)
        return MH_ENOMEM;
    r->id_off = (uint32_t *)(void *)p;
    r->t = (uint64_t *)(void *)(p + o_t);
    return MH_OK;
}

/* The columns after the ids and transitions (physical, linear, size and
 * its flag) for cap rows, into r. */
static int piece_rest(mh_rows *r, uint32_t cap) {
    size_t o_lin = up64((size_t)cap * sizeof *r->phy);
    size_t o_size = o_lin + up64((size_t)cap * sizeof *r->lin);
    size_t o_has = o_size + up64((size_t)cap * sizeof *r->size);
    uint8_t *p = rows_piece(r, 1, o_has + cap);
    if (!p)
        return MH_ENOMEM;
    r->phy = (uint64_t *)(void *)p;
    r->lin = (uint64_t *)(void *)(p + o_lin);
    r->size = (uint32_t *)(void *)(p + o_size);
    r->has_lin = p + o_has;
    return MH_OK;
}

static int piece_opt(mh_rows *r, uint32_t cap) {
    size_t o_pc = up64((size_t)cap * sizeof *r->stream);
    size_t o_has = o_pc + up64((size_t)cap * sizeof *r->pc);
    uint8_t *p = rows_piece(r, 2, o_has + cap);
    if (!p)
        return MH_ENOMEM;
    r->stream = (uint32_t *)(void *)p;
    r->pc = (uint64_t *)(void *)(p + o_pc);
    r->has_pc = p + o_has;
    return MH_OK;
}

static int rows_alloc(mh_rows *r, uint32_t cap, int lazy, int idt) {
    if (cap <= r->cap && r->lazy == lazy && (idt || !r->idt))
        return MH_OK;
    if (cap < r->cap)
        cap = r->cap;
    if (cap == r->cap && r->lazy == lazy && r->idt && !idt) {
        /* the ids and transitions kept, the other columns added */
        MH_TRY(piece_rest(r, cap));
        r->idt = 0;
        return MH_OK;
    }
    mh_rows n = {0};
    n.ar = r->ar;
    int rc = piece_idt(&n, cap);
    if (rc == MH_OK && !idt)
        rc = piece_rest(&n, cap);
    if (rc == MH_OK && !lazy && (rc = piece_opt(&n, cap)) == MH_OK) {
        memset(n.stream, 0, (size_t)cap * sizeof *n.stream);
        memset(n.pc, 0, (size_t)cap * sizeof *n.pc);
        memset(n.has_pc, 0, cap);
        n.opt_cap = cap;
    }
    if (rc != MH_OK) {
        mh_rows_free(&n);
        return MH_ENOMEM;
    }
    mh_rows_free(r);
    n.cap = cap;
    n.lazy = (uint8_t)lazy;
    n.idt = (uint8_t)idt;
    *r = n;
    return MH_OK;
}

int mh_rows_reserve(mh_rows *r, uint32_t cap) { return rows_alloc(r, cap, 0, 0); }

int mh_rows_reserve_lazy(mh_rows *r, uint32_t cap) {
    return rows_alloc(r, cap, 1, 0);
}

int mh_rows_reserve_idt(mh_rows *r, uint32_t cap) {
    return rows_alloc(r, cap, 1, 1);
}

/* The stream and pc arrays of lazy rows, made when a block stores one. */
static int rows_opt(mh_rows *r, mh_diag *d) {
    if (r->opt_cap >= r->cap)
        return MH_OK;
    if (piece_opt(r, r->cap) != MH_OK)
        MH_FAIL(MH_ENOMEM, d, 0, "out of memory for a block's stream and pc");
    r->opt_cap = r->cap;
    return MH_OK;
}

void mh_rows_free(mh_rows *r) {
    mh_arena *ar = r->ar;
    for (int i = 0; i < 3; i++)
        mh_arena_free(ar, r->mem[i]);
    memset(r, 0, sizeof *r);
    r->ar = ar;
}

void mh_block_layout_std(mh_block_layout *l, uint16_t major, int stream,
                         int pc) {
    memset(l, 0, sizeof *l);
    l->major = major;
    l->kind[l->ncols++] = MH_COL_ID;
    l->kind[l->ncols++] = MH_COL_TRANSITION;
    l->kind[l->ncols++] = MH_COL_PHYSICAL;
    l->kind[l->ncols++] = MH_COL_LINEAR;
    l->kind[l->ncols++] = MH_COL_SIZE;
    if (major >= 2 && (stream || pc))
        l->kind[l->ncols++] = MH_COL_STREAM;
    if (major >= 2 && pc)
        l->kind[l->ncols++] = MH_COL_PC;
}

size_t mh_block_raw_limit(const mh_block_layout *l, uint32_t n) {
    size_t bitmap = ((size_t)n + 7u) / 8u;
    if (l->major < 2) /* five columns of 10-byte varints, one bitmap */
        return (size_t)n * 50u + bitmap;
    /* ten bytes a row for each of six varint columns, two bitmaps, and a
     * length of at most ten bytes per column */
    return (size_t)n * 60u + 2u * bitmap + 10u * l->ncols;
}

size_t mh_block_raw_bound(uint32_t n) {
    return (size_t)n * 60u + 2u * (((size_t)n + 7u) / 8u) +
           10u * MH_MAX_STORED_COLUMNS;
}

/* A column is encoded `gap` bytes after its start, gap being the length
 * of the varint of the largest length the column can have; its length
 * then goes in front, and the column moves down only when its length
 * takes fewer bytes than that (a column of a few rows). No column of a
 * block is 2^21 bytes long. */
#define COL_GAP_MAX 3u
_Static_assert((uint64_t)MHF_MAX_ROWS_PER_BLOCK * 10u +
                       MHF_MAX_ROWS_PER_BLOCK / 8u < (1u << 21),
               "a column's length fits three varint bytes");

static inline uint8_t *col_close(uint8_t *start, uint8_t *end, size_t gap) {
    size_t len = (size_t)(end - start) - gap;
    uint8_t lenb[COL_GAP_MAX];
    size_t k = (size_t)(mhf_put_varint(lenb, len) - lenb);
    if (k == gap) {
        memcpy(start, lenb, k);
        return end;
    }
    /* shorter: move the column down (the length of a column never takes
     * more bytes than the length of the largest one) */
    memmove(start + k, start + gap, len);
    memcpy(start, lenb, k);
    return start + k + len;
}

/* The presence bitmap of n flags (each 0 or 1), bit i in byte i / 8 at
 * position i % 8: eight flags a multiply (the flag at byte k of x lands
 * on bit 56 + k, every other product above bit 63 or below bit 56, with
 * no carry), where a shift and an or per flag took ~11 instructions an
 * access on gzip's qemu trace (callgrind). */
static void put_bitmap(uint8_t *q, const uint8_t *f, uint32_t n) {
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, f + i, sizeof x);
        x &= 0x0101010101010101u;
        q[i >> 3] = (uint8_t)((x * 0x0102040810204080u) >> 56);
    }
    if (i < n) {
        uint8_t b = 0;
        for (uint32_t k = 0; i + k < n; k++)
            b |= (uint8_t)((f[i + k] & 1u) << k);
        q[i >> 3] = b;
    }
}

size_t mh_block_encode_raw(uint8_t *raw, uint32_t n, const mh_rows *c,
                           uint64_t t_base, int stream, int pc) {
    /* the columns in locals: the byte stores through q may alias anything,
     * so pointers read through c would be reloaded after each of them */
    const uint32_t *id_off = c->id_off, *size = c->size, *stv = c->stream;
    const uint64_t *t = c->t, *phy = c->phy, *lin = c->lin, *pcv = c->pc;
    const uint8_t *has_lin = c->has_lin, *has_pc = c->has_pc;
    uint8_t *p = raw, *q;
    uint64_t prev = UINT64_MAX; /* -1: the first delta is the id offset */
    size_t bitmap = ((size_t)n + 7u) / 8u;
    const size_t gap = mhf_varint_len((uint64_t)n * 10u + bitmap);
    q = p + gap;
    for (uint32_t i = 0; i < n; i++) {
        q = mhf_put_varint(q, mhf_zigzag((uint64_t)id_off[i] - prev - 1u));
        prev = id_off[i];
    }
    p = col_close(p, q, gap);
    prev = t_base;
    q = p + gap;
    for (uint32_t i = 0; i < n; i++) {
        q = mhf_put_varint(q, mhf_zigzag(t[i] - prev));
        prev = t[i];
    }
    p = col_close(p, q, gap);
    prev = 0;
    q = p + gap;
    for (uint32_t i = 0; i < n; i++) {
        q = mhf_put_varint(q, mhf_zigzag(phy[i] - prev));
        prev = phy[i];
    }
    p = col_close(p, q, gap);
    q = p + gap;
    put_bitmap(q, has_lin, n);
    q += bitmap;
    for (uint32_t i = 0; i < n; i++)
        if (has_lin[i])
            q = mhf_put_varint(q, mhf_zigzag(lin[i] - phy[i]));
    p = col_close(p, q, gap);
    q = p + gap;
    for (uint32_t i = 0; i < n; i++)
        q = mhf_put_varint(q, size[i]);
    p = col_close(p, q, gap);
    if (stream || pc) {
        q = p + gap;
        for (uint32_t i = 0; i < n; i++)
            q = mhf_put_varint(q, stv[i]);
        p = col_close(p, q, gap);
    }
    if (pc) {
        q = p + gap;
        put_bitmap(q, has_pc, n);
        q += bitmap;
        prev = 0;
        for (uint32_t i = 0; i < n; i++)
            if (has_pc[i]) {
                q = mhf_put_varint(q, mhf_zigzag(pcv[i] - prev));
                prev = pcv[i];
            }
        p = col_close(p, q, gap);
    }
    return (size_t)(p - raw);
}

/* Bit i of the bitmap at bits. */
static inline int bit_at(const uint8_t *bits, uint32_t i) {
    return bits[i >> 3] >> (i & 7u) & 1u;
}

/* Reads one LEB128 varint of at most 10 bytes that must end before end. */
static inline int get_varint(const uint8_t **pp, const uint8_t *end,
                             uint64_t *v) {
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) { /* the common case: one byte */
        *v = *p;
        *pp = p + 1;
        return 1;
    }
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return 0;
        uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return 0; /* more than 64 bits */
        x |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *v = x;
            *pp = p;
            return 1;
        }
    }
    return 0;
}

/* get_varint without the end check, for when at least 10 bytes remain:
 * NULL when the varint is longer than 10 bytes or exceeds 64 bits. */
static inline const uint8_t *varint10(const uint8_t *p, uint64_t *v) {
    uint64_t b = *p++;
    if (b < 0x80) {
        *v = b;
        return p;
    }
    uint64_t x = b & 0x7f;
    for (unsigned shift = 7; shift < 63; shift += 7) {
        b = *p++;
        x |= (b & 0x7f) << shift;
        if (b < 0x80) {
            *v = x;
            return p;
        }
    }
    b = *p++; /* the tenth byte holds bit 63 only */
    if (b > 1)
        return NULL;
    *v = x | b << 63;
    return p;
}

/* One varint: unchecked fast path while 10 bytes remain, else get_varint. */
static inline int next_varint(const uint8_t **pp, const uint8_t *end,
                              uint64_t *v) {
    if (end - *pp >= 10) {
        const uint8_t *q = varint10(*pp, v);
        if (!q)
            return 0;
        *pp = q;
        return 1;
    }
    return get_varint(pp, end, v);
}

/* The column decoders: each reads its n values from *pp, bounded by end,
 * and leaves *pp after them. Offsets in messages are from raw. */
static int dec_id(const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
                  uint32_t n, mh_rows *out, mh_diag *d) {
    const uint8_t *p = *pp;
    uint64_t v, prev = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                 "bad varint in id column, row %u", i);
        uint64_t id = prev + 1u + mhf_unzigzag(v);
        MH_CHECK(id <= UINT32_MAX, MH_ECORRUPT, d, p - raw,
                 "id offset out of range, row %u", i);
        out->id_off[i] = (uint32_t)id;
        prev = id;
    }
    *pp = p;
    return MH_OK;
}

/* The transition and physical columns: deltas from start. */
static int dec_delta(const uint8_t **pp, const uint8_t *end,
                     const uint8_t *raw, uint32_t n, uint64_t start,
                     uint64_t *dst, const char *what, mh_diag *d) {
    const uint8_t *p = *pp;
    uint64_t v, prev = start;
    for (uint32_t i = 0; i < n; i++) {
        MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                 "bad varint in %s column, row %u", what, i);
        prev += mhf_unzigzag(v);
        dst[i] = prev;
    }
    *pp = p;
    return MH_OK;
}

/* A presence bitmap of n bits; unused bits must be zero. */
static int dec_bitmap(const uint8_t **pp, const uint8_t *end,
                      const uint8_t *raw, uint32_t n, const char *what,
                      mh_diag *d) {
    const uint8_t *p = *pp;
    size_t bitmap = ((size_t)n + 7u) / 8u;
    MH_CHECK((size_t)(end - p) >= bitmap, MH_ECORRUPT, d, p - raw,
             "block ends inside the %s presence bitmap", what);
    if (n & 7u)
        MH_CHECK((p[bitmap - 1] >> (n & 7u)) == 0, MH_ECORRUPT, d,
                 p + bitmap - 1 - raw, "unused presence bits are not zero");
    return MH_OK;
}

static int dec_lin(const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
                   uint32_t n, mh_rows *out, mh_diag *d) {
    MH_TRY(dec_bitmap(pp, end, raw, n, "linear", d));
    const uint8_t *bits = *pp, *p = bits + ((size_t)n + 7u) / 8u;
    uint64_t v;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t has = (uint8_t)bit_at(bits, i);
        out->has_lin[i] = has;
        if (has) {
            MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                     "bad varint in linear column, row %u", i);
            out->lin[i] = out->phy[i] + mhf_unzigzag(v);
        } else {
            out->lin[i] = 0;
        }
    }
    *pp = p;
    return MH_OK;
}

static int dec_size(const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
                    uint32_t n, mh_rows *out, mh_diag *d) {
    const uint8_t *p = *pp;
    uint64_t v;
    for (uint32_t i = 0; i < n; i++) {
        MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                 "bad varint in size column, row %u", i);
        MH_CHECK(v >= 1 && v <= UINT32_MAX, MH_ECORRUPT, d, p - raw,
                 "size out of range, row %u", i);
        MH_CHECK(out->phy[i] + (v - 1) >= out->phy[i], MH_ECORRUPT, d, p - raw,
                 "address range wraps, row %u", i);
        out->size[i] = (uint32_t)v;
    }
    *pp = p;
    return MH_OK;
}

static int dec_stream(const uint8_t **pp, const uint8_t *end,
                      const uint8_t *raw, uint32_t n, mh_rows *out,
                      mh_diag *d) {
    const uint8_t *p = *pp;
    uint64_t v;
    for (uint32_t i = 0; i < n; i++) {
        MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                 "bad varint in stream column, row %u", i);
        MH_CHECK(v <= MH_STREAM_MAX, MH_ECORRUPT, d, p - raw,
                 "stream %llu out of range, row %u", (unsigned long long)v, i);
        out->stream[i] = (uint32_t)v;
    }
    *pp = p;
    return MH_OK;
}

static int dec_pc(const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
                  uint32_t n, mh_rows *out, mh_diag *d) {
    MH_TRY(dec_bitmap(pp, end, raw, n, "pc", d));
    const uint8_t *bits = *pp, *p = bits + ((size_t)n + 7u) / 8u;
    uint64_t v, prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t has = (uint8_t)bit_at(bits, i);
        out->has_pc[i] = has;
        if (has) {
            MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                     "bad varint in pc column, row %u", i);
            prev += mhf_unzigzag(v);
            out->pc[i] = prev;
        } else {
            out->pc[i] = 0;
        }
    }
    *pp = p;
    return MH_OK;
}

static const char *const k_col_names[] = {
    "id", "transition", "physical", "linear", "size", "stream", "pc", "unknown"};

/* One stored column of kind k bounded by end: the reference decoders, one
 * value at a time, each check where its value is read. */
static int dec_column_ref(unsigned k, const uint8_t **pp, const uint8_t *end,
                      const uint8_t *raw, uint32_t n, uint64_t t_base,
                      mh_rows *out, mh_diag *d) {
    switch (k) {
    case MH_COL_ID:
        return dec_id(pp, end, raw, n, out, d);
    case MH_COL_TRANSITION:
        return dec_delta(pp, end, raw, n, t_base, out->t, "transition", d);
    case MH_COL_PHYSICAL:
        return dec_delta(pp, end, raw, n, 0, out->phy, "physical", d);
    case MH_COL_LINEAR:
        return dec_lin(pp, end, raw, n, out, d);
    case MH_COL_SIZE:
        return dec_size(pp, end, raw, n, out, d);
    case MH_COL_STREAM:
        return dec_stream(pp, end, raw, n, out, d);
    case MH_COL_PC:
        return dec_pc(pp, end, raw, n, out, d);
    default:
        *pp = end; /* a column this reader does not know: skipped */
        return MH_OK;
    }
}

/* ---- the fast column decoders --------------------------------------------
 * Same values, same checks, other order: a column's varints are read as a
 * run (eight one-byte varints per 8-byte load), its values then checked
 * with the checks or-ed together and tested once per column. When any
 * check fails the column is decoded again by its reference decoder above,
 * from the column's start, which finds the first bad value and reports it
 * with the same code, offset and detail as always (a hostile block pays
 * twice, a good one once). callgrind, sort's store, point max 1000 (512-row
 * blocks): the five base columns took 134 instructions a row with the
 * reference decoders, 66 with these (t and physical 29, size 13, id 13,
 * linear 11). */

#define ONE_BYTE_HIGH_BITS 0x8080808080808080u

/* What a fast column does with each value (run_column is specialised for
 * each by always_inline and a constant kind). */
enum {
    RUN_ID,      /* id offsets: prev + 1 + unzigzag, < 2^32 */
    RUN_DELTA,   /* transition, physical, packed pc: prev + unzigzag */
    RUN_LIN_ALL, /* linear, every row present: physical + unzigzag */
    RUN_PACKED,  /* linear, some rows: unzigzag, packed (spread later) */
    RUN_SIZE,    /* 1 .. 2^32 - 1, physical + size - 1 does not wrap */
    RUN_STREAM,  /* <= MH_STREAM_MAX */
    RUN_SUM,     /* rows before a window: unzigzag summed into prev, unstored */
    RUN_SKIP     /* rows before a window: passed over, unstored */
};

typedef struct run_state {
    uint64_t prev; /* RUN_ID, RUN_DELTA: the previous value */
    uint64_t bad;  /* the checks, or-ed: see run_ok */
    uint64_t *u64; /* RUN_DELTA, RUN_LIN_ALL, RUN_PACKED: the values */
    uint32_t *u32; /* RUN_ID, RUN_SIZE, RUN_STREAM: the values */
    const uint64_t *phy; /* RUN_LIN_ALL, RUN_SIZE: the physical column */
} run_state;

/* Whether kind's varints hold zigzag values (run_put gets them decoded). */
static inline int run_zigzag(unsigned kind) {
    return kind != RUN_SIZE && kind != RUN_STREAM && kind != RUN_SKIP;
}

/* Row i's value v (unzigzagged when run_zigzag(kind)). */
static inline __attribute__((always_inline)) void
run_put(unsigned kind, run_state *s, uint32_t i, uint64_t v) {
    switch (kind) {
    case RUN_ID:
        s->prev += 1u + v;
        s->bad |= s->prev; /* an id offset of 2^32 or more sets a high bit */
        s->u32[i] = (uint32_t)s->prev;
        break;
    case RUN_DELTA:
        s->prev += v;
        s->u64[i] = s->prev;
        break;
    case RUN_LIN_ALL:
        s->u64[i] = s->phy[i] + v;
        break;
    case RUN_PACKED:
        s->u64[i] = v;
        break;
    case RUN_SUM:
        s->prev += v;
        break;
    case RUN_SKIP:
        (void)v;
        break;
    case RUN_SIZE: {
        /* v in 1 .. 2^32 - 1; the end a + v - 1 wraps when it falls
         * below a (branches: fewer instructions than or-ing flags) */
        uint64_t a = s->phy[i];
        if (v - 1u >= UINT32_MAX || a + (v - 1u) < a)
            s->bad = 1;
        s->u32[i] = (uint32_t)v;
        break;
    }
    default: /* RUN_STREAM */
        s->bad |= v;
        s->u32[i] = (uint32_t)v;
        break;
    }
}

/* Whether the values of a finished run passed their checks. */
static inline int run_ok(unsigned kind, const run_state *s) {
    _Static_assert((MH_STREAM_MAX & (MH_STREAM_MAX + 1u)) == 0,
                   "MH_STREAM_MAX is a power of two less one: the or of "
                   "the streams exceeds it when one does");
    switch (kind) {
    case RUN_ID:
        return s->bad <= UINT32_MAX;
    case RUN_SIZE:
        return s->bad == 0;
    case RUN_STREAM:
        return s->bad <= MH_STREAM_MAX;
    default:
        return 1;
    }
}

/* Byte j of x as a value: sign-extended for zigzag kinds (x holds the
 * decoded int8s), else as it is. */
static inline uint64_t byte_value(unsigned kind, uint64_t x, unsigned j) {
    if (run_zigzag(kind))
        return (uint64_t)(int64_t)(int8_t)(uint8_t)(x >> (8u * j));
    return (uint8_t)(x >> (8u * j));
}

/* The m varints of [p, end) through run_put as rows 0 .. m - 1; NULL when
 * one is malformed (longer than 10 bytes or beyond 64 bits) or runs past
 * end. While 10 bytes remain no varint needs an end check; there 8 bytes
 * are loaded at once, and the one-byte varints at their front (all 8 in
 * the common case) are taken from the word, then one longer varint is
 * read, two bytes inline. */
static inline __attribute__((always_inline)) const uint8_t *
run_column(unsigned kind, run_state *s, const uint8_t *p, const uint8_t *end,
           uint32_t m) {
    uint32_t i = 0;
    if (end - p >= 10) {
        const uint8_t *safe = end - 9; /* p < safe: 10 bytes remain */
        while (p < safe && m - i >= 8) {
            uint64_t w = mhf_load_u64(p);
            uint64_t hi = w & ONE_BYTE_HIGH_BITS;
            /* the one-byte varints at the front of w, unzigzagged eight
             * at a time: byte b (< 0x80) becomes the int8 (b >> 1) ^ -(b &
             * 1), which is unzigzag(b) sign-extended */
            uint64_t x = w;
            if (run_zigzag(kind))
                x = ((w >> 1) & 0x7f7f7f7f7f7f7f7fu) ^
                    ((w & 0x0101010101010101u) * 0xffu);
            if (!hi) { /* eight one-byte varints, unrolled */
#pragma GCC unroll 8
                for (unsigned j = 0; j < 8; j++)
                    run_put(kind, s, i + j, byte_value(kind, x, j));
                p += 8;
                i += 8;
                continue;
            }
            unsigned k = (unsigned)__builtin_ctzll(hi) >> 3;
            for (unsigned j = 0; j < k; j++)
                run_put(kind, s, i + j, byte_value(kind, x, j));
            p += k;
            i += k;
            /* p[0] >= 0x80, and p + 3 <= end (p was below end - 9 and
             * moved at most 7): two bytes inline, longer ones checked */
            uint64_t v, b1 = p[1];
            if (b1 < 0x80) {
                v = (p[0] & 0x7fu) | b1 << 7;
                p += 2;
            } else if (!next_varint(&p, end, &v)) {
                return NULL;
            }
            run_put(kind, s, i++, run_zigzag(kind) ? mhf_unzigzag(v) : v);
        }
    }
    for (; i < m; i++) {
        uint64_t v;
        if (!next_varint(&p, end, &v))
            return NULL;
        run_put(kind, s, i, run_zigzag(kind) ? mhf_unzigzag(v) : v);
    }
    return p;
}

/* Ones in the n-bit presence bitmap at bits (its unused bits are zero:
 * dec_bitmap checked them), eight bytes at a time without a libgcc call. */
static uint32_t bitmap_count(const uint8_t *bits, uint32_t n) {
    size_t len = ((size_t)n + 7u) / 8u, i = 0;
    uint32_t c = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x = mhf_load_u64(bits + i);
        x = x - ((x >> 1) & 0x5555555555555555u);
        x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
        x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
        c += (uint32_t)((x * 0x0101010101010101u) >> 56);
    }
    for (; i < len; i++)
        for (uint8_t b = bits[i]; b; b &= (uint8_t)(b - 1u))
            c++;
    return c;
}

/* Ones in a byte (no libgcc call where the target has no popcount). */
static inline uint32_t popcount8(uint32_t x) {
    x = x - ((x >> 1) & 0x55u);
    x = (x & 0x33u) + ((x >> 2) & 0x33u);
    return (x + (x >> 4)) & 0x0fu;
}

/* Ones among bits lo .. hi - 1 (lo <= hi) of the bitmap. */
static uint32_t bitmap_count_range(const uint8_t *bits, uint32_t lo, uint32_t hi) {
    const uint32_t a = (lo + 7u) & ~7u, b = hi & ~7u;
    if (a > b) /* within one byte */
        return popcount8(bits[lo >> 3] & ((1u << (hi & 7u)) - 1u) & ~((1u << (lo & 7u)) - 1u));
    uint32_t c = a > lo ? popcount8(bits[lo >> 3] >> (lo & 7u)) : 0;
    c += bitmap_count(bits + a / 8u, b - a);
    if (hi > b)
        c += popcount8(bits[b >> 3] & ((1u << (hi & 7u)) - 1u));
    return c;
}

/* The presence flags of bits lo .. m - 1 of a bitmap as bytes 0/1 at
 * has[lo .. m - 1], eight a multiply from a byte boundary on: bit k (< 7)
 * of a byte, times 0x0002040810204081 (bits 7j), lands on bit 8k; with
 * bit 7 left out no two partial products meet (k + 7j = k' + 7j' needs
 * k - k' = 7), so no carry disturbs them; bit 7 is put in byte 7 by hand
 * (checked for all 256 bytes by tests/codec_fast.c). */
static void put_flags(uint8_t *has, const uint8_t *bits, uint32_t lo, uint32_t m) {
    uint32_t i = lo;
    for (; i < m && (i & 7u); i++)
        has[i] = (uint8_t)bit_at(bits, i);
    for (; i + 8 <= m; i += 8) {
        uint64_t b = bits[i >> 3];
        uint64_t x = (((b & 0x7fu) * 0x0002040810204081u) &
                      0x0101010101010101u) | (b >> 7) << 56;
        mhf_store_u64(has + i, x); /* byte k = bits 8k .. 8k + 7 */
    }
    for (; i < m; i++)
        has[i] = (uint8_t)bit_at(bits, i);
}

/* The values of a bitmap column decoded packed at the front of val are
 * moved to their rows, from the last row down (a value never moves to a
 * lower index); absent rows get 0. */
static void spread_present(const uint8_t *has, uint32_t n, uint32_t np,
                           uint64_t *val) {
    uint32_t k = np;
    for (uint32_t i = n; i-- > 0;) {
        if (has[i])
            val[i] = val[--k];
        else
            val[i] = 0;
    }
}

/* ---- windows: rows lo .. m - 1 of a block -------------------------------
 * The fast decoders below decode rows lo .. m - 1 of the block's n rows
 * into the same indexes of the row arrays. The varints of the rows before
 * lo are passed over (RUN_SKIP) or, where a value depends on them (id,
 * transition, physical and pc are deltas), summed (RUN_SUM): neither
 * stores nor checks them (SPEC.md 6: values a reader does not read are not
 * checked). A window starts where a query's chunk starts in the block: the
 * rows of the chunks before it (a third to a half of a point query's head
 * on the real stores) cost a few instructions a row instead of a decode
 * and the row checks. Malformed varints there make the column go to its
 * reference decoder, as a failed check does. */

/* The first of the column's varints at p after its first lo (p itself
 * when lo is 0), their unzigzagged values' sum in *sum when sum is not
 * NULL; NULL when one is malformed. */
static const uint8_t *pass_rows(const uint8_t *p, const uint8_t *end, uint32_t lo,
                                uint64_t *sum) {
    if (!lo) {
        if (sum)
            *sum = 0;
        return p;
    }
    if (sum) {
        run_state k = {.prev = 0};
        p = run_column(RUN_SUM, &k, p, end, lo);
        *sum = k.prev;
        return p;
    }
    run_state k = {0};
    return run_column(RUN_SKIP, &k, p, end, lo);
}

static int fast_id(const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
                   uint32_t n, uint32_t lo, uint32_t m, mh_rows *out, mh_diag *d) {
    uint64_t sum;
    const uint8_t *p = pass_rows(*pp, end, lo, &sum);
    /* id offset of row lo - 1: -1 + lo + the sum (modulo 2^64) */
    run_state s = {.prev = UINT64_MAX + lo + sum, .u32 = out->id_off + lo};
    if (p)
        p = run_column(RUN_ID, &s, p, end, m - lo);
    if (!p || !run_ok(RUN_ID, &s))
        return dec_id(pp, end, raw, n, out, d);
    *pp = p;
    return MH_OK;
}

static int fast_delta(const uint8_t **pp, const uint8_t *end,
                      const uint8_t *raw, uint32_t n, uint32_t lo, uint32_t m,
                      uint64_t start, uint64_t *dst, const char *what, mh_diag *d) {
    uint64_t sum;
    const uint8_t *p = pass_rows(*pp, end, lo, &sum);
    run_state s = {.prev = start + sum, .u64 = dst + lo};
    if (p)
        p = run_column(RUN_DELTA, &s, p, end, m - lo);
    if (!p)
        return dec_delta(pp, end, raw, n, start, dst, what, d);
    *pp = p;
    return MH_OK;
}

/* The bitmap columns below decode rows lo .. m - 1 of the block's n rows
 * (the bitmap holds n bits; the values of the other rows are not read). */
static int fast_lin(const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
                    uint32_t n, uint32_t lo, uint32_t m, mh_rows *out, mh_diag *d) {
    const uint8_t *bits = *pp; /* dec_bitmap checks, does not move *pp */
    MH_TRY(dec_bitmap(pp, end, raw, n, "linear", d));
    const uint8_t *p = bits + ((size_t)n + 7u) / 8u;
    uint32_t before = bitmap_count_range(bits, 0, lo);
    uint32_t np = bitmap_count_range(bits, lo, m);
    const uint32_t w = m - lo;
    run_state s = {.u64 = out->lin + lo, .phy = out->phy + lo};
    p = pass_rows(p, end, before, NULL);
    if (p && np == w)
        p = run_column(RUN_LIN_ALL, &s, p, end, w);
    else if (p)
        p = run_column(RUN_PACKED, &s, p, end, np);
    if (!p)
        return dec_lin(pp, end, raw, n, out, d);
    put_flags(out->has_lin, bits, lo, m);
    if (np != w) {
        spread_present(out->has_lin + lo, w, np, out->lin + lo);
        for (uint32_t i = lo; i < m; i++)
            out->lin[i] += out->has_lin[i] ? out->phy[i] : 0;
    }
    *pp = p;
    return MH_OK;
}

static int fast_size(const uint8_t **pp, const uint8_t *end,
                     const uint8_t *raw, uint32_t n, uint32_t lo, uint32_t m,
                     mh_rows *out, mh_diag *d) {
    run_state s = {.u32 = out->size + lo, .phy = out->phy + lo};
    const uint8_t *p = pass_rows(*pp, end, lo, NULL);
    if (p)
        p = run_column(RUN_SIZE, &s, p, end, m - lo);
    if (!p || !run_ok(RUN_SIZE, &s))
        return dec_size(pp, end, raw, n, out, d);
    *pp = p;
    return MH_OK;
}

static int fast_stream(const uint8_t **pp, const uint8_t *end,
                       const uint8_t *raw, uint32_t n, uint32_t lo, uint32_t m,
                       mh_rows *out, mh_diag *d) {
    run_state s = {.u32 = out->stream + lo};
    const uint8_t *p = pass_rows(*pp, end, lo, NULL);
    if (p)
        p = run_column(RUN_STREAM, &s, p, end, m - lo);
    if (!p || !run_ok(RUN_STREAM, &s))
        return dec_stream(pp, end, raw, n, out, d);
    *pp = p;
    return MH_OK;
}

static int fast_pc(const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
                   uint32_t n, uint32_t lo, uint32_t m, mh_rows *out, mh_diag *d) {
    const uint8_t *bits = *pp; /* dec_bitmap checks, does not move *pp */
    MH_TRY(dec_bitmap(pp, end, raw, n, "pc", d));
    const uint8_t *p = bits + ((size_t)n + 7u) / 8u;
    uint32_t before = bitmap_count_range(bits, 0, lo);
    uint32_t np = bitmap_count_range(bits, lo, m);
    const uint32_t w = m - lo;
    /* pc deltas run over the present rows only: summed packed, from the
     * pc of the last present row before the window */
    uint64_t sum;
    p = pass_rows(p, end, before, &sum);
    run_state s = {.prev = sum, .u64 = out->pc + lo};
    if (p)
        p = run_column(RUN_DELTA, &s, p, end, np);
    if (!p)
        return dec_pc(pp, end, raw, n, out, d);
    put_flags(out->has_pc, bits, lo, m);
    if (np != w)
        spread_present(out->has_pc + lo, w, np, out->pc + lo);
    *pp = p;
    return MH_OK;
}

/* One stored column of kind k bounded by end, by the fast decoders (its
 * first m of n rows) or the reference ones (all n). A fast decoder that
 * meets a failed check hands the column to the reference one, whose first
 * failure is the same (both check in row order). */
static int dec_column(unsigned k, const uint8_t **pp, const uint8_t *end,
                      const uint8_t *raw, uint32_t n, uint32_t lo, uint32_t m,
                      uint64_t t_base, mh_rows *out, mh_diag *d, int fast) {
    if (!fast)
        return dec_column_ref(k, pp, end, raw, n, t_base, out, d);
    switch (k) {
    case MH_COL_ID:
        return fast_id(pp, end, raw, n, lo, m, out, d);
    case MH_COL_TRANSITION:
        return fast_delta(pp, end, raw, n, lo, m, t_base, out->t, "transition", d);
    case MH_COL_PHYSICAL:
        return fast_delta(pp, end, raw, n, lo, m, 0, out->phy, "physical", d);
    case MH_COL_LINEAR:
        return fast_lin(pp, end, raw, n, lo, m, out, d);
    case MH_COL_SIZE:
        return fast_size(pp, end, raw, n, lo, m, out, d);
    case MH_COL_STREAM:
        return fast_stream(pp, end, raw, n, lo, m, out, d);
    case MH_COL_PC:
        return fast_pc(pp, end, raw, n, lo, m, out, d);
    default:
        return dec_column_ref(k, pp, end, raw, n, t_base, out, d);
    }
}

/* mh_rows' lin_all, stream_zero and pc_all for the rows [lo, m) just
 * decoded (a few instructions a row, against the decode's dozens). */
static void rows_hints(mh_rows *out, uint32_t lo, uint32_t m, int got_lin, int got_stream,
                       int got_pc) {
    uint8_t lin = 1, pc = 1;
    uint32_t st = 0;
    if (got_lin)
        for (uint32_t i = lo; i < m; i++)
            lin &= out->has_lin[i];
    if (got_stream)
        for (uint32_t i = lo; i < m; i++)
            st |= out->stream[i];
    if (got_pc)
        for (uint32_t i = lo; i < m; i++)
            pc &= out->has_pc[i];
    out->lin_all = (uint8_t)(got_lin && lin);
    out->stream_zero = (uint8_t)(!got_stream || st == 0);
    out->pc_all = (uint8_t)(got_pc && pc);
}

/* The block walk, with the fast column decoders or the reference ones. */
static int decode_raw(const uint8_t *raw, size_t raw_size, uint32_t n,
                      uint32_t from, uint32_t upto, unsigned cols, uint64_t t_base,
                      const mh_block_layout *l, mh_rows *out, mh_diag *d, int fast) {
    const uint8_t *p = raw, *end = raw + raw_size;
    MH_CHECK(out->cap >= n, MH_EINVAL, d, 0, "row buffer too small");
    /* the rows decoded: all n, or (fast decoders, format 2) the first upto,
     * each column's rest passed over by its length unread; and the columns
     * (format 2, fast decoders): those of cols, the others passed over */
    uint32_t m = fast && l->major >= 2 && upto < n ? upto : n;
    /* and (the same) from row `from` on: a window, the rows before it
     * passed over (their values summed where later ones depend on them) */
    uint32_t lo = fast && l->major >= 2 && from < m ? from : 0;
    if (!fast || l->major < 2)
        cols = MH_COLS_ALL;
    MH_CHECK(!out->idt || (cols & ~MH_COLS_ID_T) == 0, MH_EINVAL, d, 0,
             "row buffer of ids and transitions only");
    int got_stream = 0, got_pc = 0, got_lin = 0;
    out->lin_all = out->stream_zero = out->pc_all = 0;
    if (l->major < 2) {
        got_lin = 1;
        for (unsigned k = MH_COL_ID; k <= MH_COL_SIZE; k++)
            MH_TRY(dec_column(k, &p, end, raw, n, 0, n, t_base, out, d, fast));
    } else {
        for (uint32_t c = 0; c < l->ncols; c++) {
            unsigned k = l->kind[c];
            if (p == end && k >= MH_COL_STREAM)
                continue; /* not in this block: holds its default */
            uint64_t len;
            MH_CHECK(get_varint(&p, end, &len), MH_ECORRUPT, d, p - raw,
                     "bad length of the %s column", k_col_names[k]);
            MH_CHECK(len <= (uint64_t)(end - p), MH_ECORRUPT, d, p - raw,
                     "%s column of %llu bytes runs past the block's end",
                     k_col_names[k], (unsigned long long)len);
            const uint8_t *cend = p + len;
            if (!(cols >> k & 1u)) {
                p = cend; /* not asked for: not read */
                continue;
            }
            if (k == MH_COL_STREAM || k == MH_COL_PC)
                MH_TRY(rows_opt(out, d));
            MH_TRY(dec_column(k, &p, cend, raw, n, lo, m, t_base, out, d, fast));
            if (m < n)
                p = cend; /* the rows after m: not read */
            MH_CHECK(p == cend, MH_ECORRUPT, d, p - raw,
                     "%zu bytes of trailing garbage in the %s column",
                     (size_t)(cend - p), k_col_names[k]);
            got_stream |= k == MH_COL_STREAM;
            got_pc |= k == MH_COL_PC;
            got_lin |= k == MH_COL_LINEAR;
        }
    }
    rows_hints(out, lo, m, got_lin, got_stream, got_pc);
    MH_CHECK(p == end, MH_ECORRUPT, d, p - raw,
             "%zu bytes of trailing garbage in block", (size_t)(end - p));
    out->no_stream = (uint8_t)!got_stream;
    out->no_pc = (uint8_t)!got_pc;
    out->lo = lo;
    if (out->lazy) { /* the flags say it: no zero-fill per decode */
        out->n = m;
        return MH_OK;
    }
    if (!got_stream)
        memset(out->stream + lo, 0, (size_t)(m - lo) * sizeof *out->stream);
    if (!got_pc) {
        memset(out->pc + lo, 0, (size_t)(m - lo) * sizeof *out->pc);
        memset(out->has_pc + lo, 0, m - lo);
    }
    out->n = m;
    return MH_OK;
}

int mh_block_decode_raw(const uint8_t *raw, size_t raw_size, uint32_t n,
                        uint64_t t_base, const mh_block_layout *l,
                        mh_rows *out, mh_diag *d) {
    return decode_raw(raw, raw_size, n, 0, n, MH_COLS_ALL, t_base, l, out, d, 1);
}

int mh_block_decode_raw_ref(const uint8_t *raw, size_t raw_size, uint32_t n,
                            uint64_t t_base, const mh_block_layout *l,
                            mh_rows *out, mh_diag *d) {
    return decode_raw(raw, raw_size, n, 0, n, MH_COLS_ALL, t_base, l, out, d, 0);
}

int mh_block_decode_raw_rows(const uint8_t *raw, size_t raw_size, uint32_t n,
                             uint32_t from, uint32_t upto, unsigned cols, uint64_t t_base,
                             const mh_block_layout *l, mh_rows *out, mh_diag *d) {
    return decode_raw(raw, raw_size, n, from, upto, cols, t_base, l, out, d, 1);
}

int mh_block_decode_rows(const uint8_t *comp, uint32_t comp_size, uint64_t sum,
                         uint32_t raw_size, uint32_t n, uint32_t from, uint32_t upto,
                         unsigned cols,
                         uint64_t t_base, const mh_block_layout *l,
                         uint8_t *scratch, mh_rows *out, mh_diag *d) {
    if (MH_CHECKSUMS_ENFORCED) {
        uint64_t computed = mh_hash(comp, comp_size);
        MH_CHECK(computed == sum, MH_ECHECKSUM, d, 0,
                 "block checksum mismatch: stored 0x%016llx, computed 0x%016llx",
                 (unsigned long long)sum, (unsigned long long)computed);
    }
    MH_CHECK(comp_size <= INT32_MAX && raw_size <= INT32_MAX, MH_ECORRUPT, d,
             0, "block size out of range");
    int got = LZ4_decompress_safe((const char *)comp, (char *)scratch,
                                  (int)comp_size, (int)raw_size);
    MH_CHECK(got >= 0 && (uint32_t)got == raw_size, MH_ECORRUPT, d, 0,
             "LZ4 data does not decompress to the declared %u bytes (%s %d)",
             raw_size, got < 0 ? "LZ4 error" : "got", got);
    return mh_block_decode_raw_rows(scratch, raw_size, n, from, upto, cols, t_base, l, out,
                                    d);
}

int mh_block_decode(const uint8_t *comp, uint32_t comp_size, uint64_t sum,
                    uint32_t raw_size, uint32_t n, uint64_t t_base,
                    const mh_block_layout *l, uint8_t *scratch, mh_rows *out,
                    mh_diag *d) {
    return mh_block_decode_rows(comp, comp_size, sum, raw_size, n, 0, n, MH_COLS_ALL,
                                t_base, l, scratch, out, d);
}

/* ---- rows one at a time (the id-order path) ------------------------------
 * A located row needs its block's id and transition columns (to find it
 * among its chunk's rows) and the other columns of that row alone. The
 * raw block is kept and each column walked by a cursor to the row wanted:
 * the varints passed over are skipped or summed (RUN_SKIP / RUN_SUM), the
 * row's own values read and checked as the fast decoders check them. */

/* The cursor's state saved as checkpoint nck (the cursor is at row
 * nck * step), and the cursor put back at checkpoint k. */
static void ckpt_save(mh_block_cols *bc) {
    mh_block_ckpt *c = &bc->ck[bc->nck++];
    memcpy(c->pos, bc->pos, sizeof c->pos);
    c->phy = bc->prev[MH_COL_PHYSICAL];
    c->pc = bc->prev[MH_COL_PC];
}

static void ckpt_load(mh_block_cols *bc, uint32_t k) {
    const mh_block_ckpt *c = &bc->ck[k];
    memcpy(bc->pos, c->pos, sizeof c->pos);
    bc->prev[MH_COL_PHYSICAL] = c->phy;
    bc->prev[MH_COL_PC] = c->pc;
    bc->row = k * bc->step;
}

int mh_block_cols_find(const uint8_t *raw, size_t raw_size, uint32_t n,
                       const mh_block_layout *l, mh_block_cols *bc) {
    memset(bc, 0, offsetof(mh_block_cols, ck)); /* checkpoints: as saved */
    bc->raw = raw;
    bc->n = n;
    if (l->major < 2)
        return MH_ECORRUPT; /* 1.0 blocks: no column lengths */
    const uint8_t *p = raw, *end = raw + raw_size;
    for (uint32_t c = 0; c < l->ncols; c++) {
        unsigned k = l->kind[c];
        if (p == end && k >= MH_COL_STREAM)
            break; /* the block ends early: the rest hold their defaults */
        uint64_t len;
        if (!get_varint(&p, end, &len) || len > (uint64_t)(end - p))
            return MH_ECORRUPT;
        if (k < MH_COL_UNKNOWN) {
            bc->has |= 1u << k;
            bc->off[k] = (uint32_t)(p - raw);
            bc->end[k] = (uint32_t)(p - raw + len);
        }
        p += len;
    }
    if (p != end)
        return MH_ECORRUPT;
    /* the bitmaps lead their columns */
    const uint32_t bm = (n + 7u) / 8u;
    if (bc->has & 1u << MH_COL_LINEAR && bc->end[MH_COL_LINEAR] - bc->off[MH_COL_LINEAR] < bm)
        return MH_ECORRUPT;
    if (bc->has & 1u << MH_COL_PC && bc->end[MH_COL_PC] - bc->off[MH_COL_PC] < bm)
        return MH_ECORRUPT;
    for (unsigned k = 0; k < MH_COL_UNKNOWN; k++)
        bc->pos[k] = bc->off[k] + (k == MH_COL_LINEAR || k == MH_COL_PC ? bm : 0);
    bc->step = n / MH_BC_CHECKPOINTS + 1u; /* the last checkpoint is below n */
    ckpt_save(bc);
    return MH_OK;
}

/* Column k's cursor moved over rows row .. i - 1 (count of them, or of the
 * present ones for a bitmap column), summed into prev when sum. */
static int cursor_pass(mh_block_cols *bc, unsigned k, uint32_t count, int sum) {
    const uint8_t *p = bc->raw + bc->pos[k], *end = bc->raw + bc->end[k];
    uint64_t s = 0;
    p = pass_rows(p, end, count, sum ? &s : NULL);
    if (!p)
        return MH_ECORRUPT;
    bc->pos[k] = (uint32_t)(p - bc->raw);
    bc->prev[k] += s;
    return MH_OK;
}

/* Column k's next varint (the cursor's row), the cursor after it. */
static int cursor_take(mh_block_cols *bc, unsigned k, uint64_t *v) {
    const uint8_t *p = bc->raw + bc->pos[k], *end = bc->raw + bc->end[k];
    if (!get_varint(&p, end, v))
        return MH_ECORRUPT;
    bc->pos[k] = (uint32_t)(p - bc->raw);
    return MH_OK;
}

/* Present rows among row .. i - 1 of the bitmap leading column k: the
 * bits of that range alone (counting from the block's first row at each
 * take made a walk of a block's rows quadratic in the bitmap). */
static uint32_t present_between(const mh_block_cols *bc, unsigned k, uint32_t row,
                                uint32_t i) {
    return bitmap_count_range(bc->raw + bc->off[k], row, i);
}

/* Every column's cursor moved from row bc->row to row `to` (>= it). */
static int cols_pass(mh_block_cols *bc, uint32_t to) {
    const uint32_t skip = to - bc->row;
    if (!skip)
        return MH_OK;
    MH_TRY(cursor_pass(bc, MH_COL_PHYSICAL, skip, 1));
    MH_TRY(cursor_pass(bc, MH_COL_SIZE, skip, 0));
    MH_TRY(cursor_pass(bc, MH_COL_LINEAR, present_between(bc, MH_COL_LINEAR, bc->row, to), 0));
    if (bc->has & 1u << MH_COL_STREAM)
        MH_TRY(cursor_pass(bc, MH_COL_STREAM, skip, 0));
    if (bc->has & 1u << MH_COL_PC)
        MH_TRY(cursor_pass(bc, MH_COL_PC, present_between(bc, MH_COL_PC, bc->row, to), 1));
    bc->row = to;
    return MH_OK;
}

int mh_block_row_take(mh_block_cols *bc, uint32_t i, mh_access *a) {
    const unsigned has = bc->has;
    if (i >= bc->n || !bc->nck)
        return MH_ECORRUPT;
    /* columns id .. size are in every block */
    if (!(has & 1u << MH_COL_PHYSICAL) || !(has & 1u << MH_COL_SIZE) ||
        !(has & 1u << MH_COL_LINEAR))
        return MH_ECORRUPT;
    /* from the last checkpoint saved at or before the row when the cursor
     * is past the row or before that checkpoint (a row of the block taken
     * again, by a later question or pass, costs at most a step's walk),
     * else from the cursor */
    uint32_t k = i / bc->step;
    k = k < bc->nck ? k : bc->nck - 1u;
    if (i < bc->row || k * bc->step > bc->row)
        ckpt_load(bc, k);
    /* to the row, saving the checkpoints passed on the way (every walk
     * saves them: up to 1.13.7 only once a row before the cursor had been
     * taken, and a question's rows taken in increasing order walked from
     * the block's first row again at each pass of the benchmark) */
    while (bc->nck < MH_BC_CHECKPOINTS && bc->nck * bc->step <= i) {
        MH_TRY(cols_pass(bc, bc->nck * bc->step));
        ckpt_save(bc);
    }
    MH_TRY(cols_pass(bc, i));
    uint64_t v;
    /* physical: a delta from the row before (0 before the first) */
    MH_TRY(cursor_take(bc, MH_COL_PHYSICAL, &v));
    bc->prev[MH_COL_PHYSICAL] += mhf_unzigzag(v);
    const uint64_t phy = bc->prev[MH_COL_PHYSICAL];
    a->physical = phy;
    /* size: 1 .. 2^32 - 1, phy + size - 1 does not wrap */
    MH_TRY(cursor_take(bc, MH_COL_SIZE, &v));
    if (v - 1u >= UINT32_MAX || phy + (v - 1u) < phy)
        return MH_ECORRUPT;
    a->size = (uint32_t)v;
    /* linear: present rows hold zigzag(linear - physical) */
    a->has_linear = 0;
    a->linear = 0;
    if (bit_at(bc->raw + bc->off[MH_COL_LINEAR], i)) {
        MH_TRY(cursor_take(bc, MH_COL_LINEAR, &v));
        a->has_linear = 1;
        a->linear = phy + mhf_unzigzag(v);
    }
    /* stream and pc: their defaults when the block does not store them */
    a->stream = 0;
    if (has & 1u << MH_COL_STREAM) {
        MH_TRY(cursor_take(bc, MH_COL_STREAM, &v));
        if (v > MH_STREAM_MAX)
            return MH_ECORRUPT;
        a->stream = (uint32_t)v;
    }
    a->has_pc = 0;
    a->pc = 0;
    if (has & 1u << MH_COL_PC && bit_at(bc->raw + bc->off[MH_COL_PC], i)) {
        MH_TRY(cursor_take(bc, MH_COL_PC, &v));
        bc->prev[MH_COL_PC] += mhf_unzigzag(v);
        a->has_pc = 1;
        a->pc = bc->prev[MH_COL_PC];
    }
    bc->row = i + 1;
    return MH_OK;
}
