/*
 * codec.c - the access-block codec: columns of delta/zigzag varints
 * (SPEC.md "Access block"), compressed with LZ4 and checked with XXH3-64.
 * The decoder treats its input as hostile: every varint read is bounded by
 * the end of the block and the block must be consumed exactly.
 */
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "internal.h"

int mh_rows_reserve(mh_rows *r, uint32_t cap) {
    if (cap <= r->cap)
        return MH_OK;
    mh_rows n = {0};
    n.id_off = malloc((size_t)cap * sizeof *n.id_off);
    n.t = malloc((size_t)cap * sizeof *n.t);
    n.phy = malloc((size_t)cap * sizeof *n.phy);
    n.lin = malloc((size_t)cap * sizeof *n.lin);
    n.size = malloc((size_t)cap * sizeof *n.size);
    n.has_lin = malloc((size_t)cap);
    n.stream = calloc(cap, sizeof *n.stream);
    n.pc = calloc(cap, sizeof *n.pc);
    n.has_pc = calloc(cap, 1);
    if (!n.id_off || !n.t || !n.phy || !n.lin || !n.size || !n.has_lin ||
        !n.stream || !n.pc || !n.has_pc) {
        mh_rows_free(&n);
        return MH_ENOMEM;
    }
    mh_rows_free(r);
    n.cap = cap;
    *r = n;
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

size_t mh_block_raw_bound(uint32_t n) {
    /* five columns of at most 10-byte varints, plus the presence bitmap */
    return (size_t)n * 50u + ((size_t)n + 7u) / 8u;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

size_t mh_block_encode_raw(uint8_t *raw, uint32_t n, const uint32_t *id_off,
                           const uint64_t *t, const uint64_t *phy,
                           const uint64_t *lin, const uint8_t *has_lin,
                           const uint32_t *size, uint64_t t_base) {
    uint8_t *p = raw;
    uint64_t prev = UINT64_MAX; /* -1: the first delta is the id offset */
    for (uint32_t i = 0; i < n; i++) {
        p = put_varint(p, mhf_zigzag((uint64_t)id_off[i] - prev - 1u));
        prev = id_off[i];
    }
    prev = t_base;
    for (uint32_t i = 0; i < n; i++) {
        p = put_varint(p, mhf_zigzag(t[i] - prev));
        prev = t[i];
    }
    prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        p = put_varint(p, mhf_zigzag(phy[i] - prev));
        prev = phy[i];
    }
    size_t bitmap = ((size_t)n + 7u) / 8u;
    memset(p, 0, bitmap);
    for (uint32_t i = 0; i < n; i++)
        if (has_lin[i])
            p[i >> 3] |= (uint8_t)(1u << (i & 7u));
    p += bitmap;
    for (uint32_t i = 0; i < n; i++)
        if (has_lin[i])
            p = put_varint(p, mhf_zigzag(lin[i] - phy[i]));
    for (uint32_t i = 0; i < n; i++)
        p = put_varint(p, size[i]);
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

int mh_block_decode_raw(const uint8_t *raw, size_t raw_size, uint32_t n,
                        uint64_t t_base, mh_rows *out, mh_diag *d) {
    const uint8_t *p = raw, *end = raw + raw_size;
    uint64_t v, prev = UINT64_MAX;
    MH_CHECK(out->cap >= n, MH_EINVAL, d, 0, "row buffer too small");
    for (uint32_t i = 0; i < n; i++) {
        MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                 "bad varint in id column, row %u", i);
        uint64_t id = prev + 1u + mhf_unzigzag(v);
        MH_CHECK(id <= UINT32_MAX, MH_ECORRUPT, d, p - raw,
                 "id offset out of range, row %u", i);
        out->id_off[i] = (uint32_t)id;
        prev = id;
    }
    prev = t_base;
    for (uint32_t i = 0; i < n; i++) {
        MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                 "bad varint in transition column, row %u", i);
        prev += mhf_unzigzag(v);
        out->t[i] = prev;
    }
    prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                 "bad varint in physical column, row %u", i);
        prev += mhf_unzigzag(v);
        out->phy[i] = prev;
    }
    size_t bitmap = ((size_t)n + 7u) / 8u;
    MH_CHECK((size_t)(end - p) >= bitmap, MH_ECORRUPT, d, p - raw,
             "block ends inside the linear presence bitmap");
    const uint8_t *bits = p;
    p += bitmap;
    if (n & 7u)
        MH_CHECK((bits[bitmap - 1] >> (n & 7u)) == 0, MH_ECORRUPT, d,
                 bits + bitmap - 1 - raw, "unused presence bits are not zero");
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
    for (uint32_t i = 0; i < n; i++) {
        MH_CHECK(next_varint(&p, end, &v), MH_ECORRUPT, d, p - raw,
                 "bad varint in size column, row %u", i);
        MH_CHECK(v >= 1 && v <= UINT32_MAX, MH_ECORRUPT, d, p - raw,
                 "size out of range, row %u", i);
        MH_CHECK(out->phy[i] + (v - 1) >= out->phy[i], MH_ECORRUPT, d, p - raw,
                 "address range wraps, row %u", i);
        out->size[i] = (uint32_t)v;
    }
    MH_CHECK(p == end, MH_ECORRUPT, d, p - raw,
             "%zu bytes of trailing garbage in block", (size_t)(end - p));
    out->n = n;
    return MH_OK;
}

int mh_block_decode(const uint8_t *comp, uint32_t comp_size, uint64_t sum,
                    uint32_t raw_size, uint32_t n, uint64_t t_base,
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
    return mh_block_decode_raw(scratch, raw_size, n, t_base, out, d);
}
