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

static int rows_alloc(mh_rows *r, uint32_t cap, int lazy) {
    if (cap <= r->cap && r->lazy == lazy)
        return MH_OK;
    if (cap < r->cap)
        cap = r->cap;
    mh_rows n = {0};
    n.id_off = malloc((size_t)cap * sizeof *n.id_off);
    n.t = malloc((size_t)cap * sizeof *n.t);
    n.phy = malloc((size_t)cap * sizeof *n.phy);
    n.lin = malloc((size_t)cap * sizeof *n.lin);
    n.size = malloc((size_t)cap * sizeof *n.size);
    n.has_lin = malloc((size_t)cap);
    if (!lazy) {
        n.stream = calloc(cap, sizeof *n.stream);
        n.pc = calloc(cap, sizeof *n.pc);
        n.has_pc = calloc(cap, 1);
        n.opt_cap = cap;
    }
    if (!n.id_off || !n.t || !n.phy || !n.lin || !n.size || !n.has_lin ||
        (!lazy && (!n.stream || !n.pc || !n.has_pc))) {
        mh_rows_free(&n);
        return MH_ENOMEM;
    }
    mh_rows_free(r);
    n.cap = cap;
    n.lazy = (uint8_t)lazy;
    *r = n;
    return MH_OK;
}

int mh_rows_reserve(mh_rows *r, uint32_t cap) { return rows_alloc(r, cap, 0); }

int mh_rows_reserve_lazy(mh_rows *r, uint32_t cap) {
    return rows_alloc(r, cap, 1);
}

/* The stream and pc arrays of lazy rows, made when a block stores one. */
static int rows_opt(mh_rows *r, mh_diag *d) {
    if (r->opt_cap >= r->cap)
        return MH_OK;
    uint32_t *st = malloc((size_t)r->cap * sizeof *st);
    uint64_t *pc = malloc((size_t)r->cap * sizeof *pc);
    uint8_t *has = malloc(r->cap);
    if (!st || !pc || !has) {
        free(st);
        free(pc);
        free(has);
        MH_FAIL(MH_ENOMEM, d, 0, "out of memory for a block's stream and pc");
    }
    free(r->stream);
    free(r->pc);
    free(r->has_pc);
    r->stream = st;
    r->pc = pc;
    r->has_pc = has;
    r->opt_cap = r->cap;
    return MH_OK;
}

void mh_rows_free(mh_rows *r) {
    free(r->id_off);
    free(r->t);
    free(r->phy);
    free(r->lin);
    free(r->size);
    free(r->has_lin);
    free(r->stream);
    free(r->pc);
    free(r->has_pc);
    memset(r, 0, sizeof *r);
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
        uint8_t has = (uint8_t)((bits[i >> 3] >> (i & 7u)) & 1u);
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
        uint8_t has = (uint8_t)((bits[i >> 3] >> (i & 7u)) & 1u);
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

/* One stored column of kind k bounded by end. */
static int dec_column(unsigned k, const uint8_t **pp, const uint8_t *end,
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

int mh_block_decode_raw(const uint8_t *raw, size_t raw_size, uint32_t n,
                        uint64_t t_base, const mh_block_layout *l,
                        mh_rows *out, mh_diag *d) {
    const uint8_t *p = raw, *end = raw + raw_size;
    MH_CHECK(out->cap >= n, MH_EINVAL, d, 0, "row buffer too small");
    int got_stream = 0, got_pc = 0;
    if (l->major < 2) {
        for (unsigned k = MH_COL_ID; k <= MH_COL_SIZE; k++)
            MH_TRY(dec_column(k, &p, end, raw, n, t_base, out, d));
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
            if (k == MH_COL_STREAM || k == MH_COL_PC)
                MH_TRY(rows_opt(out, d));
            MH_TRY(dec_column(k, &p, cend, raw, n, t_base, out, d));
            MH_CHECK(p == cend, MH_ECORRUPT, d, p - raw,
                     "%zu bytes of trailing garbage in the %s column",
                     (size_t)(cend - p), k_col_names[k]);
            got_stream |= k == MH_COL_STREAM;
            got_pc |= k == MH_COL_PC;
        }
    }
    MH_CHECK(p == end, MH_ECORRUPT, d, p - raw,
             "%zu bytes of trailing garbage in block", (size_t)(end - p));
    out->no_stream = (uint8_t)!got_stream;
    out->no_pc = (uint8_t)!got_pc;
    if (out->lazy) { /* the flags say it: no zero-fill per decode */
        out->n = n;
        return MH_OK;
    }
    if (!got_stream)
        memset(out->stream, 0, (size_t)n * sizeof *out->stream);
    if (!got_pc) {
        memset(out->pc, 0, (size_t)n * sizeof *out->pc);
        memset(out->has_pc, 0, n);
    }
    out->n = n;
    return MH_OK;
}

int mh_block_decode(const uint8_t *comp, uint32_t comp_size, uint64_t sum,
                    uint32_t raw_size, uint32_t n, uint64_t t_base,
                    const mh_block_layout *l, uint8_t *scratch, mh_rows *out,
                    mh_diag *d) {
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
    return mh_block_decode_raw(scratch, raw_size, n, t_base, l, out, d);
}
