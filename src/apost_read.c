/*
 * apost_read.c - the address postings' reading half (SPEC.md "Address
 * postings", section type 10, format 2.2): the section checked on a
 * segment's first use (sum, header, operation and run records), runs
 * decoded with every check of §9d, and the one question a narrow query
 * asks: which slices of this segment have a row of its operations in one
 * of the (fewer than 16) granules its range meets?
 *
 * The answer is a bitmap of the segment's slices in the caller's scratch:
 * a segment has a few hundred slices, so clearing it and scanning it for
 * the next candidate cost a few words, and a union of up to 48 keys needs
 * no merge. A run is decoded whole and checked the first time a query
 * touches it, so a query reports a broken run the same way whichever of
 * its keys it wanted; the reader remembers it (seg->apost_run_ok) and
 * later queries skip to their keys without decoding the others.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GRANULE_MAX(v) (UINT64_MAX >> (v)->shift)

static inline const uint8_t *run_rec(const mh_apost_view *v, uint32_t i) {
    return v->runs + (size_t)i * v->run_size;
}

static void fill_view(const uint8_t *p, uint64_t base_off, uint32_t nslices,
                      mh_apost_view *out) {
    out->shift = mhf_load_u32(p + MHF_APOST_SHIFT);
    out->k = mhf_load_u32(p + MHF_APOST_RUN_KEYS);
    out->run_size = mhf_load_u32(p + MHF_APOST_RUN_SIZE_OFF);
    out->nruns = mhf_load_u32(p + MHF_APOST_RUN_COUNT);
    out->data_bytes = mhf_load_u64(p + MHF_APOST_DATA_BYTES);
    out->postings = mhf_load_u64(p + MHF_APOST_POSTINGS);
    out->nslices = nslices;
    out->off = base_off;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        const uint8_t *r = p + MHF_APOST_OPS + o * MHF_APOST_OP_SIZE;
        out->nkeys[o] = mhf_load_u64(r + MHF_APOST_OP_KEYS);
        out->run_first[o] = mhf_load_u32(r + MHF_APOST_OP_RUN_FIRST);
        out->run_count[o] = mhf_load_u32(r + MHF_APOST_OP_RUN_COUNT);
    }
    out->runs = p + MHF_APOST_HEADER_SIZE;
    out->data = out->runs + (size_t)out->nruns * out->run_size;
    out->lazy = NULL;
    out->ptab = NULL;
    out->wide = NULL;
    out->wide_log2 = out->wide_rsz = 0;
    out->wide_off = 0;
    out->ptype = MHF_SECT_APOST;
    out->prel = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        out->wide_n[o] = out->wide_first[o] = out->wide_span[o] = 0;
}

void mh_apost_view_fill(const uint8_t *p, uint64_t base_off, uint32_t nslices,
                        mh_apost_view *out) {
    fill_view(p, base_off, nslices, out);
}

int mh_apost_section(const mh_seg *seg, const mh_section **sec) {
    if (mh_seg_section(seg, MHF_SECT_APOST, sec) == MH_OK)
        return (int)MHF_SECT_APOST;
    if (seg->major == 2 && seg->minor >= 6 &&
        mh_seg_section(seg, MHF_SECT_APOSTW, sec) == MH_OK)
        return (int)MHF_SECT_APOSTW;
    return MH_ENOTFOUND;
}

uint64_t mh_apostw_body_at(const uint8_t *p, uint64_t size) {
    if (size < MHF_APOSTW_HEADER_SIZE)
        return size;
    uint64_t n = mhf_load_u64(p + MHF_APOSTW_COUNT);
    uint32_t rsz = mhf_load_u32(p + MHF_APOSTW_REC_SIZE_OFF);
    uint64_t room = size - MHF_APOSTW_HEADER_SIZE;
    return rsz && n <= room / rsz ? MHF_APOSTW_HEADER_SIZE + n * rsz : size;
}

/* A section 14's wide fields from its header (checked): the body's offset
 * in the section. */
static uint64_t wide_fields(const uint8_t *p, uint64_t base_off, mh_apost_view *w) {
    w->wide_off = base_off + MHF_APOSTW_HEADER_SIZE;
    w->ptype = MHF_SECT_APOSTW;
    w->wide_log2 = mhf_load_u32(p + MHF_APOSTW_LOG2);
    w->wide_rsz = mhf_load_u32(p + MHF_APOSTW_REC_SIZE_OFF);
    uint64_t first = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        const uint8_t *r = p + MHF_APOSTW_OPS + o * MHF_APOSTW_OP_SIZE;
        w->wide_n[o] = mhf_load_u64(r + MHF_APOSTW_OP_COUNT);
        w->wide_span[o] = mhf_load_u64(r + MHF_APOSTW_OP_SPAN);
        w->wide_first[o] = first;
        first += w->wide_n[o];
    }
    w->wide = p + MHF_APOSTW_HEADER_SIZE;
    w->prel = MHF_APOSTW_HEADER_SIZE + first * w->wide_rsz;
    return w->prel;
}

#define WIDE_FAIL(at, ...)                                                     \
    mh_diag_fail(d, MH_ECORRUPT, (at), "address postings (wide ranges) at byte " \
                 "%llu: " __VA_ARGS__)

/* Section 14's header and every wide record (SPEC.md §9d): *body its
 * section 10's offset in the section, w's wide fields set. */
static int wide_parse(const uint8_t *p, uint64_t size, uint64_t base_off,
                      uint16_t minor, uint32_t nslices, mh_apost_view *w,
                      uint64_t *body, mh_diag *d) {
    int later = minor > MHF_VERSION_MINOR;
    if (size < MHF_APOSTW_HEADER_SIZE)
        return WIDE_FAIL(base_off, "%llu bytes, less than its %u-byte header",
                         (unsigned long long)base_off, (unsigned long long)size,
                         MHF_APOSTW_HEADER_SIZE);
    uint32_t v = mhf_load_u32(p + MHF_APOSTW_LOG2);
    uint32_t rsz = mhf_load_u32(p + MHF_APOSTW_REC_SIZE_OFF);
    uint64_t cnt = mhf_load_u64(p + MHF_APOSTW_COUNT);
    uint64_t bb = mhf_load_u64(p + MHF_APOSTW_BODY_BYTES);
    if (v < MHF_APOSTW_LOG2_MIN || v > MHF_APOSTW_LOG2_MAX)
        return WIDE_FAIL(base_off + MHF_APOSTW_LOG2, "wide_log2 %u, not %u ... %u",
                         (unsigned long long)(base_off + MHF_APOSTW_LOG2), v,
                         MHF_APOSTW_LOG2_MIN, MHF_APOSTW_LOG2_MAX);
    if (later ? rsz < MHF_APOSTW_REC_SIZE : rsz != MHF_APOSTW_REC_SIZE)
        return WIDE_FAIL(base_off + MHF_APOSTW_REC_SIZE_OFF,
                         "record_size %u, expected %s%u",
                         (unsigned long long)(base_off + MHF_APOSTW_REC_SIZE_OFF),
                         rsz, later ? "at least " : "", MHF_APOSTW_REC_SIZE);
    if (!later && (mhf_load_u64(p + MHF_APOSTW_RESERVED) != 0))
        return WIDE_FAIL(base_off + MHF_APOSTW_RESERVED, "reserved field not 0",
                         (unsigned long long)(base_off + MHF_APOSTW_RESERVED));
    uint64_t room = size - MHF_APOSTW_HEADER_SIZE;
    if (cnt > room / rsz || bb != room - cnt * rsz)
        return WIDE_FAIL(base_off, "%llu records of %u bytes and a body of %llu "
                         "bytes, in a section of %llu",
                         (unsigned long long)base_off, (unsigned long long)cnt, rsz,
                         (unsigned long long)bb, (unsigned long long)size);
    uint64_t sum = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint64_t n = mhf_load_u64(p + MHF_APOSTW_OPS + o * MHF_APOSTW_OP_SIZE +
                                  MHF_APOSTW_OP_COUNT);
        if (n > cnt - sum)
            return WIDE_FAIL(base_off + MHF_APOSTW_OPS + o * MHF_APOSTW_OP_SIZE,
                             "op %u: %llu records, more than the %llu left",
                             (unsigned long long)(base_off + MHF_APOSTW_OPS +
                                                  o * MHF_APOSTW_OP_SIZE),
                             o, (unsigned long long)n,
                             (unsigned long long)(cnt - sum));
        sum += n;
    }
    if (sum != cnt)
        return WIDE_FAIL(base_off + MHF_APOSTW_COUNT, "the operations list %llu "
                         "records, its header %llu",
                         (unsigned long long)(base_off + MHF_APOSTW_COUNT),
                         (unsigned long long)sum, (unsigned long long)cnt);
    *body = wide_fields(p, base_off, w);
    uint64_t minspan = ((uint64_t)1 << v) - 1u;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint64_t span = 0, pf = 0;
        uint32_t ps = 0;
        for (uint64_t i = 0; i < w->wide_n[o]; i++) {
            uint64_t at = w->wide_first[o] + i;
            const uint8_t *r = w->wide + at * rsz;
            uint64_t ro = base_off + MHF_APOSTW_HEADER_SIZE + at * rsz;
            uint64_t f = mhf_load_u64(r + MHF_APOSTW_R_FIRST);
            uint64_t l = mhf_load_u64(r + MHF_APOSTW_R_LAST);
            uint32_t s = mhf_load_u32(r + MHF_APOSTW_R_SLICE);
            if (l < f || l - f < minspan)
                return WIDE_FAIL(ro, "op %u: range [0x%llx, 0x%llx] is not at "
                                 "least 2^%u bytes", (unsigned long long)ro, o,
                                 (unsigned long long)f, (unsigned long long)l, v);
            if (s >= nslices)
                return WIDE_FAIL(ro + MHF_APOSTW_R_SLICE, "op %u: slice %u of %u",
                                 (unsigned long long)(ro + MHF_APOSTW_R_SLICE), o,
                                 s, nslices);
            if (!later && mhf_load_u32(r + MHF_APOSTW_R_RESERVED) != 0)
                return WIDE_FAIL(ro + MHF_APOSTW_R_RESERVED, "reserved field not 0",
                                 (unsigned long long)(ro + MHF_APOSTW_R_RESERVED));
            if (i > 0 && (f < pf || (f == pf && s <= ps)))
                return WIDE_FAIL(ro, "op %u: (first 0x%llx, slice %u) does not "
                                 "follow (0x%llx, %u)", (unsigned long long)ro, o,
                                 (unsigned long long)f, s, (unsigned long long)pf, ps);
            if (l - f > span)
                span = l - f;
            pf = f;
            ps = s;
        }
        uint64_t so = base_off + MHF_APOSTW_OPS + o * MHF_APOSTW_OP_SIZE + MHF_APOSTW_OP_SPAN;
        if (span != w->wide_span[o])
            return WIDE_FAIL(so, "op %u: largest span 0x%llx, its records' is 0x%llx",
                             (unsigned long long)so, o,
                             (unsigned long long)w->wide_span[o],
                             (unsigned long long)span);
    }
    return MH_OK;
}

/* Slices with a wide range of op o meeting [a, b] into bits: the records
 * whose first is in [a - span, b] (sorted by first). */
static void wide_or(const mh_apost_view *v, unsigned o, uint64_t a, uint64_t b,
                    uint64_t *bits) {
    const uint8_t *base = v->wide + v->wide_first[o] * v->wide_rsz;
    uint64_t lo = 0, hi = v->wide_n[o];
    while (lo < hi) { /* the first record with first > b */
        uint64_t mid = lo + (hi - lo) / 2;
        if (mhf_load_u64(base + mid * v->wide_rsz + MHF_APOSTW_R_FIRST) <= b)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t floor = a > v->wide_span[o] ? a - v->wide_span[o] : 0;
    while (lo-- > 0) {
        const uint8_t *r = base + lo * v->wide_rsz;
        if (mhf_load_u64(r + MHF_APOSTW_R_FIRST) < floor)
            break;
        if (mhf_load_u64(r + MHF_APOSTW_R_LAST) >= a) {
            uint32_t s = mhf_load_u32(r + MHF_APOSTW_R_SLICE);
            if (s < v->nslices) /* checked: never false */
                bits[s >> 6] |= (uint64_t)1 << (s & 63);
        }
    }
}


/* Run record i (op o, its r-th) against record i - 1: keys, granule order
 * within its op and bounds, bytes tiling the data area (the last run's end
 * at data_bytes). Records i - 1 and i must be readable (checked pieces, in
 * a lazy view). */
static int check_rec(const mh_apost_view *v, unsigned o, uint32_t r, mh_diag *d) {
    uint32_t i = v->run_first[o] + r, cnt = v->run_count[o], k = v->k;
    const uint8_t *x = run_rec(v, i);
    uint64_t xoff = v->off + MHF_APOST_HEADER_SIZE + (uint64_t)i * v->run_size;
    uint64_t gmax = GRANULE_MAX(v);
    uint64_t w = mhf_load_u64(x + MHF_APOST_R_GRANULE);
    uint64_t off = mhf_load_u64(x + MHF_APOST_R_OFFSET);
    uint32_t kn = mhf_load_u32(x + MHF_APOST_R_KEYS);
    uint32_t nb = mhf_load_u32(x + MHF_APOST_R_BYTES);
    uint64_t want = r + 1 < cnt ? k : v->nkeys[o] - (uint64_t)(cnt - 1) * k;
    MH_CHECK(kn == want, MH_ECORRUPT, d, xoff + MHF_APOST_R_KEYS,
             "address postings at byte %llu: run %u (op %u): %u keys, "
             "expected %llu", (unsigned long long)(xoff + MHF_APOST_R_KEYS),
             i, o, kn, (unsigned long long)want);
    uint64_t prev_last = 0, next_off = 0;
    if (i > 0) {
        const uint8_t *y = run_rec(v, i - 1);
        uint64_t yw = mhf_load_u64(y + MHF_APOST_R_GRANULE);
        uint64_t yoff = mhf_load_u64(y + MHF_APOST_R_OFFSET);
        uint32_t ykn = mhf_load_u32(y + MHF_APOST_R_KEYS);
        uint32_t ynb = mhf_load_u32(y + MHF_APOST_R_BYTES);
        /* checked (or checked next) as run i - 1: yoff + ynb <= data */
        next_off = yoff <= v->data_bytes && ynb <= v->data_bytes - yoff ? yoff + ynb : UINT64_MAX;
        prev_last = ykn >= 1 && yw <= UINT64_MAX - (ykn - 1u) ? yw + (ykn - 1u) : UINT64_MAX;
    }
    /* its keys' granules are w, w + 1, ... at least: the run's last is
     * >= w + kn - 1, and the next run starts past it */
    MH_CHECK(w <= gmax && kn - 1u <= gmax - w && (r == 0 || w > prev_last),
             MH_ECORRUPT, d, xoff + MHF_APOST_R_GRANULE,
             "address postings at byte %llu: run %u (op %u): first "
             "granule 0x%llx with %u keys is not above the previous "
             "run's (0x%llx) and within 0x%llx",
             (unsigned long long)(xoff + MHF_APOST_R_GRANULE), i, o,
             (unsigned long long)w, kn, (unsigned long long)prev_last,
             (unsigned long long)gmax);
    MH_CHECK(off == next_off && nb >= 1 && off <= v->data_bytes &&
                 nb <= v->data_bytes - off &&
                 (i + 1 < v->nruns || off + nb == v->data_bytes),
             MH_ECORRUPT, d, xoff + MHF_APOST_R_OFFSET,
             "address postings at byte %llu: run %u: bytes [%llu, +%u) "
             "do not continue the runs before it (at %llu) inside the "
             "%llu data bytes%s", (unsigned long long)(xoff + MHF_APOST_R_OFFSET),
             i, (unsigned long long)off, nb, (unsigned long long)next_off,
             (unsigned long long)v->data_bytes,
             i + 1 < v->nruns ? "" : ", ending them");
    return MH_OK;
}

/* Header and operation records (the run table's size, not its records). */
static int parse_head(const uint8_t *p, uint64_t size, uint64_t base_off,
                      uint16_t minor, uint32_t nslices, mh_apost_view *out,
                      mh_diag *d) {
    int later = minor > MHF_VERSION_MINOR;
    MH_CHECK(size >= MHF_APOST_HEADER_SIZE, MH_ECORRUPT, d, base_off,
             "address postings at byte %llu: %llu bytes, less than its %u-byte "
             "header", (unsigned long long)base_off, (unsigned long long)size,
             MHF_APOST_HEADER_SIZE);
    uint32_t g = mhf_load_u32(p + MHF_APOST_SHIFT);
    uint32_t k = mhf_load_u32(p + MHF_APOST_RUN_KEYS);
    uint32_t rsz = mhf_load_u32(p + MHF_APOST_RUN_SIZE_OFF);
    uint32_t nruns = mhf_load_u32(p + MHF_APOST_RUN_COUNT);
    uint64_t data = mhf_load_u64(p + MHF_APOST_DATA_BYTES);
    uint64_t postings = mhf_load_u64(p + MHF_APOST_POSTINGS);
    uint64_t o_g = base_off + MHF_APOST_SHIFT, o_k = base_off + MHF_APOST_RUN_KEYS;
    uint64_t o_rs = base_off + MHF_APOST_RUN_SIZE_OFF;
    MH_CHECK(g >= MHF_APOST_SHIFT_MIN && g <= MHF_APOST_SHIFT_MAX, MH_ECORRUPT,
             d, o_g, "address postings at byte %llu: granule shift %u, not "
             "%u ... %u", (unsigned long long)o_g, g, MHF_APOST_SHIFT_MIN,
             MHF_APOST_SHIFT_MAX);
    MH_CHECK(k >= 1 && k <= MHF_APOST_K_MAX, MH_ECORRUPT, d, o_k,
             "address postings at byte %llu: %u keys per run, not 1 ... %u",
             (unsigned long long)o_k, k, MHF_APOST_K_MAX);
    MH_CHECK(later ? rsz >= MHF_APOST_RUN_SIZE : rsz == MHF_APOST_RUN_SIZE,
             MH_ECORRUPT, d, o_rs,
             "address postings at byte %llu: run_size %u, expected %s%u",
             (unsigned long long)o_rs, rsz, later ? "at least " : "",
             MHF_APOST_RUN_SIZE);
    uint64_t table = (uint64_t)nruns * rsz; /* < 2^64 */
    uint64_t room = size - MHF_APOST_HEADER_SIZE;
    MH_CHECK(table <= room && data <= room - table, MH_ECORRUPT, d, base_off,
             "address postings at byte %llu: %u runs of %u bytes and %llu data "
             "bytes do not fit in its %llu bytes", (unsigned long long)base_off,
             nruns, rsz, (unsigned long long)data, (unsigned long long)size);
    uint64_t need = MHF_APOST_HEADER_SIZE + table + data;
    MH_CHECK(later || need == size, MH_ECORRUPT, d, base_off,
             "address postings at byte %llu: %llu bytes, its header says %llu",
             (unsigned long long)base_off, (unsigned long long)size,
             (unsigned long long)need);
    uint64_t keys_total = 0;
    uint32_t next_run = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        const uint8_t *r = p + MHF_APOST_OPS + o * MHF_APOST_OP_SIZE;
        uint64_t roff = base_off + MHF_APOST_OPS + o * MHF_APOST_OP_SIZE;
        uint64_t nk = mhf_load_u64(r + MHF_APOST_OP_KEYS);
        uint32_t first = mhf_load_u32(r + MHF_APOST_OP_RUN_FIRST);
        uint32_t cnt = mhf_load_u32(r + MHF_APOST_OP_RUN_COUNT);
        MH_CHECK(first == next_run && cnt <= nruns - first, MH_ECORRUPT, d,
                 roff + MHF_APOST_OP_RUN_FIRST,
                 "address postings at byte %llu: op %u: runs [%u, +%u) do not "
                 "follow the previous op's (next is %u of %u)",
                 (unsigned long long)(roff + MHF_APOST_OP_RUN_FIRST), o, first,
                 cnt, next_run, nruns);
        MH_CHECK(nk / k + (nk % k != 0) == cnt, MH_ECORRUPT, d, roff,
                 "address postings at byte %llu: op %u: %llu keys in %u runs "
                 "of %u", (unsigned long long)roff, o, (unsigned long long)nk,
                 cnt, k);
        keys_total += nk; /* nk <= cnt * k < 2^48 */
        next_run = first + cnt;
    }
    MH_CHECK(next_run == nruns, MH_ECORRUPT, d, base_off + MHF_APOST_RUN_COUNT,
             "address postings at byte %llu: the operations list %u runs, its "
             "header %u", (unsigned long long)(base_off + MHF_APOST_RUN_COUNT),
             next_run, nruns);
    MH_CHECK(nruns > 0 || data == 0, MH_ECORRUPT, d, base_off + MHF_APOST_DATA_BYTES,
             "address postings at byte %llu: no run covers its %llu data bytes",
             (unsigned long long)(base_off + MHF_APOST_DATA_BYTES),
             (unsigned long long)data);
    /* every key has 1 ... nslices postings */
    MH_CHECK(postings >= keys_total &&
                 (nslices == 0 ? postings == 0
                               : postings / nslices <= keys_total),
             MH_ECORRUPT, d, base_off + MHF_APOST_POSTINGS,
             "address postings at byte %llu: posting_count %llu for %llu keys "
             "of %u slices", (unsigned long long)(base_off + MHF_APOST_POSTINGS),
             (unsigned long long)postings, (unsigned long long)keys_total,
             nslices);
    fill_view(p, base_off, nslices, out);
    return MH_OK;
}

int mh_apost_parse(const uint8_t *p, uint64_t size, uint64_t base_off,
                   uint16_t minor, uint32_t nslices, mh_apost_view *out,
                   mh_diag *d) {
    MH_TRY(parse_head(p, size, base_off, minor, nslices, out, d));
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        for (uint32_t r = 0; r < out->run_count[o]; r++)
            MH_TRY(check_rec(out, o, r, d));
    return MH_OK;
}

int mh_apost_rec(const mh_apost_view *v, uint32_t i, const uint8_t **out,
                 mh_diag *d) {
    if (v->lazy) {
        /* the common case, the record's pieces checked before: two bits */
        uint64_t a = v->prel + MHF_APOST_HEADER_SIZE + (uint64_t)i * v->run_size;
        if (mh_psum_known(v->ptab, v->ptype, a, v->run_size)) {
            *out = run_rec(v, i);
            return MH_OK;
        }
        int rc = mh_psum_check(v->lazy, v->ptype, a, v->run_size,
                               "address postings", d);
        if (rc < 0)
            return rc;
    }
    *out = run_rec(v, i);
    return MH_OK;
}

/* The last run of op o whose first granule is at or before w, else its
 * first (its keys may reach w): *out its index within the op. The probes
 * of every search's first 8 levels are the same records: their
 * granules (plus 1; 0 not yet known) are kept in seg->apost_top, op o's
 * at [o * MH_APOST_TOP], node 1 the first probe, node k's next 2k (the
 * probe's granule above w) or 2k + 1, once a search has read (and, in a
 * lazy view, checked) them; a later search reads them there, not a
 * record a probe in a piece of its own (python, never-accessed 8 B rw,
 * callgrind: the run search was ~1,800 of 4,800 instructions a
 * question). Below them, a probe inside the pieces the probe before
 * found checked reads its record in place. */
static int run_search(const mh_seg *seg, const mh_apost_view *v, unsigned o,
                      uint64_t w, uint32_t *out, mh_diag *d) {
    uint32_t lo = 0, hi = v->run_count[o];
    _Atomic uint64_t *top = atomic_load_explicit(&((mh_seg *)seg)->apost_top,
                                                 memory_order_acquire);
    if (top)
        top += (size_t)o * MH_APOST_TOP;
    uint32_t node = 1;
    /* [kbeg, kend): bytes of the section known checked */
    uint64_t kbeg = 0, kend = v->lazy ? 0 : UINT64_MAX;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint64_t g = 0;
        if (top && node < MH_APOST_TOP)
            g = atomic_load_explicit(&top[node], memory_order_relaxed);
        if (g) {
            g--;
        } else {
            uint32_t i = v->run_first[o] + mid;
            uint64_t at = v->prel + MHF_APOST_HEADER_SIZE + (uint64_t)i * v->run_size;
            const uint8_t *rec;
            if (at >= kbeg && at + v->run_size <= kend) {
                rec = run_rec(v, i);
            } else {
                MH_TRY(mh_apost_rec(v, i, &rec, d));
                if (v->ptab && v->ptab->shift < 64) {
                    /* the pieces it met are checked now */
                    uint64_t piece = (uint64_t)1 << v->ptab->shift;
                    kbeg = at & ~(piece - 1);
                    kend = ((at + v->run_size - 1) | (piece - 1)) + 1;
                    if (kend == 0) /* the section's end at 2^64 */
                        kend = UINT64_MAX;
                }
            }
            g = mhf_load_u64(rec + MHF_APOST_R_GRANULE);
            /* a granule is at most (2^64 - 1) >> 3 (SPEC 9d): g + 1 is
             * not 0; every thread stores the same value */
            if (top && node < MH_APOST_TOP && g < UINT64_MAX)
                atomic_store_explicit(&top[node], g + 1, memory_order_relaxed);
        }
        if (g <= w) {
            lo = mid + 1;
            node = 2 * node + 1;
        } else {
            hi = mid;
            node = 2 * node;
        }
    }
    *out = lo ? lo - 1 : 0;
    return MH_OK;
}

/* A lazy view's run r of op o before its first decode: the pieces of its
 * record and its neighbours' (the one before for the order and tiling, the
 * one after for its bound) and of its bytes, then its record's checks. */
static int lazy_run_check(const mh_apost_view *v, unsigned o, uint32_t r,
                          mh_diag *d) {
    uint32_t i = v->run_first[o] + r;
    const uint8_t *x;
    if (i > 0)
        MH_TRY(mh_apost_rec(v, i - 1, &x, d));
    if (i + 1 < v->nruns)
        MH_TRY(mh_apost_rec(v, i + 1, &x, d));
    MH_TRY(mh_apost_rec(v, i, &x, d));
    MH_TRY(check_rec(v, o, r, d));
    uint64_t at = v->prel + MHF_APOST_HEADER_SIZE + (uint64_t)v->nruns * v->run_size +
                  mhf_load_u64(x + MHF_APOST_R_OFFSET);
    int rc = mh_psum_check(v->lazy, v->ptype, at,
                           mhf_load_u32(x + MHF_APOST_R_BYTES),
                           "address postings", d);
    return rc < 0 ? rc : MH_OK;
}

/* Marks of a checked run: where the walk of a later query may begin. The
 * whole check of a run records, for RUN_MARKS of its keys (key j kn / 4,
 * j = 1 .. 3, of its kn), the key's granule less the run's first (high 32
 * bits) and the byte of its count varint from the run's start (low 32
 * bits; never 0: a gap varint comes before it); 0, none. A query then
 * starts at the last mark at or before its first granule: it walks a
 * quarter of a run's keys at most, where it walked half of them on
 * average (K = 32: ~40 instructions a key, ~1 k of a warm rw point
 * query). They follow the flags in the flags' allocation, 8-aligned; as
 * the flags, written by every thread checking the run (the same values),
 * before its flag's release. */
#define RUN_MARKS 3

/* the marks of a run, NULL when the segment has none (seg->apost_marks,
 * paged out of the reader's budget: make 1 allocates the run's page) */
static inline _Atomic uint64_t *run_marks(const mh_seg *seg, uint32_t run, int make) {
    mh_marks *mk = atomic_load_explicit(&((mh_seg *)seg)->apost_marks, memory_order_acquire);
    return mh_marks_run(seg, mk, run, make);
}

/* Segment seg's section 10 or 14 (type t) at sec: a section 14's header and
 * records (wide_parse), then its body's (a section 10's) header and
 * operation records, and with whole its run records (mh_apost_parse). */
static int parse_sect(const mh_seg *seg, const mh_section *sec, int t, int whole,
                      mh_apost_view *out, mh_diag *d) {
    const uint8_t *p = seg->base + sec->offset;
    mh_apost_view w;
    uint64_t body = 0;
    if (t == (int)MHF_SECT_APOSTW)
        MH_TRY(wide_parse(p, sec->size, sec->offset, seg->minor, seg->nslices, &w, &body, d));
    MH_TRY((whole ? mh_apost_parse : parse_head)(p + body, sec->size - body,
                                                 sec->offset + body, seg->minor,
                                                 seg->nslices, out, d));
    if (t == (int)MHF_SECT_APOSTW) /* the body's parse left them empty */
        (void)wide_fields(p, sec->offset, out);
    return MH_OK;
}

int mh_apost_view_whole(const mh_seg *seg, mh_apost_view *out, mh_diag *d) {
    const mh_section *sec;
    int t = mh_apost_section(seg, &sec);
    if (t < 0)
        return MH_ENOTFOUND;
    MH_TRY(mh_seg_section_sum(seg, sec, "address postings", d));
    MH_TRY(parse_sect(seg, sec, t, 1, out, d));
    out->lazy = NULL;
    out->ptab = NULL;
    return MH_OK;
}

/* A checked section's view again (seg->apost_ok). */
static void fill_checked(const mh_seg *seg, const mh_section *sec, int t,
                         mh_apost_view *out) {
    const uint8_t *p = seg->base + sec->offset;
    if (t != (int)MHF_SECT_APOSTW) {
        fill_view(p, sec->offset, seg->nslices, out);
        return;
    }
    mh_apost_view w;
    uint64_t body = wide_fields(p, sec->offset, &w);
    fill_view(p + body, sec->offset + body, seg->nslices, out);
    (void)wide_fields(p, sec->offset, out);
}

int mh_apost_view_get(const mh_seg *seg, mh_apost_view *out, mh_diag *d) {
    const mh_section *sec;
    int t = mh_apost_section(seg, &sec);
    if (t < 0)
        return MH_ENOTFOUND;
    const uint8_t *p = seg->base + sec->offset;
    mh_seg *m = (mh_seg *)seg;
    /* checked once per reader; a segment that failed is checked again on
     * each use, so each failing query says why */
    if (atomic_load_explicit(&m->apost_ok, memory_order_acquire)) {
        fill_checked(seg, sec, t, out);
        out->lazy = atomic_load_explicit(&m->apost_lazy, memory_order_relaxed) ? seg : NULL;
        out->ptab = out->lazy ? atomic_load_explicit(&m->psum, memory_order_acquire) : NULL;
        return MH_OK;
    }
    /* with piece sums (§9f): the header's piece and the header only (a
     * section 14's: its header, its wide ranges and its section 10's
     * header, all checked now); the run records and runs are checked as
     * queries reach them */
    uint64_t head = (t == (int)MHF_SECT_APOSTW ? mh_apostw_body_at(p, sec->size) : 0) +
                    MHF_APOST_HEADER_SIZE;
    if (head > sec->size)
        head = sec->size;
    int lazy = mh_psum_check(seg, (uint32_t)t, 0, head, "address postings", d);
    if (lazy < 0)
        return lazy;
    if (lazy) {
        MH_TRY(parse_sect(seg, sec, t, 0, out, d));
        /* the run table asked for whole, one read: a query's binary search
         * touches a dozen of its pages, each a fault of its own */
        mh_seg_willneed(seg, out->runs, (size_t)out->nruns * out->run_size);
        out->lazy = seg;
        out->ptab = atomic_load_explicit(&m->psum, memory_order_acquire);
    } else {
        MH_TRY(mh_apost_view_whole(seg, out, d));
    }
    /* the runs' marks (run_marks: their table, then a page of them when a
     * query first checks one of its runs, out of the reader's budget), then
     * their checked flags: one allocation of each wins, the others are
     * freed; without the flags the runs are checked on every use, without
     * the marks a query walks a run from its start. The marks are
     * published first: a thread that sees a run's flag finds them. */
    size_t nr = out->nruns ? out->nruns : 1;
    mh_marks *mk = mh_marks_new(seg, nr, RUN_MARKS), *mnone = NULL;
    if (mk && !atomic_compare_exchange_strong(&m->apost_marks, &mnone, mk))
        mh_marks_free(mk); /* its budget stays spent: a rare race */
    /* both out of the reader's budget (its cache option), as the other
     * check bits and the marks: 1.10.3 took them outside it (6 KiB and a
     * byte a run, a segment) */
    _Atomic uint8_t *ok = mh_seg_marks_alloc(seg, nr, 0);
    _Atomic uint8_t *none = NULL;
    if (ok && !atomic_compare_exchange_strong(&m->apost_run_ok, &none, ok))
        free((void *)ok); /* another thread's won; its budget stays spent */
    /* the run searches' first probes (run_search): an aid as the marks
     * are, so it leaves the check bits their quarter of the budget;
     * without it each search reads them in the run table */
    _Atomic uint64_t *top = mh_seg_marks_alloc(seg, MH_APOST_TOP_BYTES, 1);
    _Atomic uint64_t *tnone = NULL;
    if (top && !atomic_compare_exchange_strong(&m->apost_top, &tnone, top))
        free((void *)top); /* as above */
    atomic_store_explicit(&m->apost_lazy, lazy, memory_order_relaxed);
    atomic_store_explicit(&m->apost_ok, 1, memory_order_release);
    return MH_OK;
}

void mh_apost_run_open(const mh_apost_view *v, uint32_t op, uint32_t run,
                       mh_apost_cur *c) {
    uint32_t i = v->run_first[op] + run;
    const uint8_t *x = run_rec(v, i);
    c->v = v;
    c->p = v->data + mhf_load_u64(x + MHF_APOST_R_OFFSET);
    c->end = c->p + mhf_load_u32(x + MHF_APOST_R_BYTES);
    c->w = mhf_load_u64(x + MHF_APOST_R_GRANULE);
    /* parse checked: the next run of the op starts above this one */
    c->bound = run + 1 < v->run_count[op]
                   ? mhf_load_u64(run_rec(v, i + 1) + MHF_APOST_R_GRANULE) - 1u
                   : GRANULE_MAX(v);
    c->left = mhf_load_u32(x + MHF_APOST_R_KEYS);
    c->run = i;
    c->i = 0;
    c->op = op;
}

/* Bits set in m[0..n): 64 bits at a time with the SWAR sum (gcc without
 * -mpopcnt calls libgcc's __popcountdi2 per call: one per byte cost 6 % of
 * a point query's instructions on the gzip store). */
static inline uint64_t popcount_bytes(const uint8_t *m, size_t n) {
    uint64_t pop = 0;
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        uint64_t x;
        memcpy(&x, m + j, 8);
        x -= (x >> 1) & 0x5555555555555555u;
        x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
        x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
        pop += (x * 0x0101010101010101u) >> 56;
    }
    for (; j < n; j++) {
        unsigned b = m[j];
        for (; b; b &= b - 1)
            pop++;
    }
    return pop;
}

/* ORs a form-1 posting bitmap (slice s: bit s & 7 of byte s >> 3) into
 * the candidates (bit s of word s >> 6): 8 bytes, one word, at a time (a
 * byte at a time cost ~10 % of a warm point query on the python store). */
static inline void or_bitmap(uint64_t *bits, const uint8_t *m, size_t nb) {
    size_t j = 0;
    for (; nb - j >= 8; j += 8)
        bits[j >> 3] |= mhf_load_u64(m + j);
    for (; j < nb; j++)
        bits[j >> 3] |= (uint64_t)m[j] << ((j & 7) * 8);
}

/* The file offset of c->p, for details. */
static inline uint64_t cur_off(const mh_apost_cur *c) {
    const mh_apost_view *v = c->v;
    return v->off + MHF_APOST_HEADER_SIZE + (uint64_t)v->nruns * v->run_size +
           (uint64_t)(c->p - v->data);
}

/* "address postings at byte N: <formatted>" with N where c stands. */
__attribute__((format(printf, 3, 4))) static int
run_fail(const mh_apost_cur *c, mh_diag *d, const char *fmt, ...) {
    char msg[MH_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    uint64_t off = cur_off(c);
    return mh_diag_fail(d, MH_ECORRUPT, off, "address postings at byte %llu: %s",
                        (unsigned long long)off, msg);
}
#define RUN_CHECK(cond, ...)                                                   \
    do {                                                                       \
        if (!(cond)) {                                                         \
            MH_TRACE_FAIL_(MH_ECORRUPT, cond);                                 \
            return run_fail(c, d, __VA_ARGS__);                                \
        }                                                                      \
    } while (0)

/* mh_apost_run_step and mh_apost_run_step_in: the key's postings ORed
 * into bits only when its granule lies in [wa, wb] */
static inline int run_step(mh_apost_cur *c, uint64_t *bits, uint32_t *list, uint64_t wa,
                           uint64_t wb, uint32_t *n, mh_diag *d) {
    const uint32_t S = c->v->nslices;
    if (c->left == 0) {
        RUN_CHECK(c->p == c->end, "run %u: %llu bytes left "
                 "after its keys", c->run, (unsigned long long)(c->end - c->p));
        return 0;
    }
    if (c->i > 0) {
        uint64_t gap;
        RUN_CHECK(mhf_get_varint(&c->p, c->end, &gap) == 0, "run %u: key %u's granule varint "
                 "runs past the run's bytes or 64 bits", c->run, c->i);
        /* w = w_prev + 1 + gap, not past the run's bound */
        RUN_CHECK(c->w < c->bound && gap <= c->bound - c->w - 1u, "run %u: key %u's granule "
                 "0x%llx + 1 + %llu passes the run's bound 0x%llx", c->run, c->i,
                 (unsigned long long)c->w, (unsigned long long)gap,
                 (unsigned long long)c->bound);
        c->w += 1u + gap;
    }
    if (c->w < wa || c->w > wb)
        bits = NULL;
    uint64_t h;
    RUN_CHECK(mhf_get_varint(&c->p, c->end, &h) == 0, "run %u: key %u (granule 0x%llx): its count varint "
             "runs past the run's bytes or 64 bits", c->run, c->i,
             (unsigned long long)c->w);
    uint64_t cnt = h >> 1;
    RUN_CHECK(cnt >= 1 && cnt <= S, "run %u: key %u (granule 0x%llx): %llu postings, "
             "not 1 ... %u (the slices)", c->run, c->i, (unsigned long long)c->w,
             (unsigned long long)cnt, S);
    if ((h & 1u) == 0) {
        uint64_t s = UINT64_MAX; /* s_{-1}: s_0 = x */
        uint64_t j = 0;
        if (!list) {
            /* one- and two-byte gaps, the common case, in a tight loop: a
             * posting s_{j-1} + 1 + x below S checked as in the loop below
             * (which takes over at the first longer varint, at the end of
             * the run's bytes or at a posting to report), each word of bits
             * written once per stretch of postings in it. The checked loop
             * alone (a varint call, two compares and a store a posting) was
             * 80 % of a one-stream 1 MiB question reading 33,000 postings
             * of section 15 (perf) */
            const uint8_t *p = c->p;
            uint64_t wi = 0, acc = 0;
            for (; j < cnt && p < c->end; j++) {
                uint64_t x = *p;
                unsigned len = 1;
                if (x >= 0x80) { /* two bytes: gaps below 2^14 */
                    if (c->end - p < 2 || p[1] >= 0x80)
                        break;
                    x = (x & 0x7fu) | (uint64_t)p[1] << 7;
                    len = 2;
                }
                uint64_t ns = s + 1u + x;
                if (ns >= S)
                    break;
                p += len;
                s = ns;
                if (!bits)
                    continue;
                if (s >> 6 != wi) {
                    bits[wi] |= acc;
                    wi = s >> 6;
                    acc = 0;
                }
                acc |= (uint64_t)1 << (s & 63);
            }
            if (bits)
                bits[wi] |= acc;
            c->p = p;
        }
        for (; j < cnt; j++) {
            uint64_t x;
            RUN_CHECK(mhf_get_varint(&c->p, c->end, &x) == 0, "run %u: key %u (granule "
                     "0x%llx): posting %llu's varint runs past the run's bytes "
                     "or 64 bits", c->run, c->i, (unsigned long long)c->w,
                     (unsigned long long)j);
            /* s_0 = x, s_j = s_{j-1} + 1 + x */
            RUN_CHECK(j == 0 ? x < S : (s + 1u < S && x < S - s - 1u),
                     "run %u: key "
                     "%u (granule 0x%llx): posting %llu passes slice %u (the "
                     "segment has %u)", c->run, c->i, (unsigned long long)c->w,
                     (unsigned long long)j, S ? S - 1 : 0, S);
            s = j == 0 ? x : s + 1u + x;
            if (bits)
                bits[s >> 6] |= (uint64_t)1 << (s & 63);
            if (list)
                list[j] = (uint32_t)s;
        }
    } else {
        size_t nb = ((size_t)S + 7) / 8;
        RUN_CHECK((size_t)(c->end - c->p) >= nb, "run %u: key %u (granule 0x%llx): its %zu-byte "
                 "bitmap runs past the run's bytes", c->run, c->i,
                 (unsigned long long)c->w, nb);
        const uint8_t *m = c->p;
        uint64_t pop = popcount_bytes(m, nb);
        RUN_CHECK(pop == cnt, "run %u: key %u (granule 0x%llx): bitmap has "
                 "%llu bits set, its count says %llu", c->run, c->i,
                 (unsigned long long)c->w, (unsigned long long)pop,
                 (unsigned long long)cnt);
        RUN_CHECK(S % 8 == 0 || (m[nb - 1] >> (S % 8)) == 0, "run %u: key %u (granule 0x%llx): "
                 "bitmap has a bit at or above slice %u (the segment's count)",
                 c->run, c->i, (unsigned long long)c->w, S);
        if (bits)
            or_bitmap(bits, m, nb);
        if (list) {
            uint32_t q = 0;
            for (size_t j = 0; j < nb; j++)
                for (unsigned b = m[j]; b; b &= b - 1)
                    list[q++] = (uint32_t)(j * 8 + (unsigned)__builtin_ctz(b));
        }
        c->p += nb;
    }
    *n = (uint32_t)cnt;
    c->i++;
    c->left--;
    return 1;
}

int mh_apost_run_step(mh_apost_cur *c, uint64_t *bits, uint32_t *list,
                      uint32_t *n, mh_diag *d) {
    return run_step(c, bits, list, 0, UINT64_MAX, n, d);
}

int mh_apost_run_step_in(mh_apost_cur *c, uint64_t wa, uint64_t wb, uint64_t *bits,
                         uint32_t *n, mh_diag *d) {
    return run_step(c, bits, NULL, wa, wb, n, d);
}

/* Past n varints from p (bounded by end; NULL when they run past it). A
 * checked run's postings are skipped this way: 8 bytes at a time, the
 * word holding the n-th varint's end placed by its end bits (byte by byte
 * it cost ~5 instructions a byte, ~20 % of a warm point query's postings). */
static const uint8_t *skip_varints(const uint8_t *p, const uint8_t *end, uint64_t n) {
    while (n > 0 && end - p >= 8) {
        /* bit 8 j set: byte j ends a varint (top bit clear) */
        uint64_t t = (~mhf_load_u64(p) & 0x8080808080808080u) >> 7;
        uint64_t k = (t * 0x0101010101010101u) >> 56;
        if (k >= n) { /* the n-th ends in this word */
            for (; n > 1; n--)
                t &= t - 1;
            return p + (unsigned)__builtin_ctzll(t) / 8 + 1;
        }
        n -= k;
        p += 8;
    }
    for (; n > 0; p++) {
        if (p == end)
            return NULL;
        n -= *p < 0x80;
    }
    return p;
}

/* ORs into bits the postings of the keys of [wa, wb] of a run decoded
 * whole and checked before (seg->apost_run_ok): the keys before wa are
 * skipped, the walk stops past wb. Bounds are still kept (the mapping is
 * read again), but no other check: 0, or -1 if the bytes ran out. */
static int run_or_checked(mh_apost_cur *c, uint64_t wa, uint64_t wb, uint64_t *bits) {
    const uint32_t S = c->v->nslices;
    const uint8_t *p = c->p, *end = c->end;
    uint64_t w = c->w;
    for (uint32_t i = 0; i < c->left; i++) {
        uint64_t gap = 0, h;
        if (i > 0 && mhf_get_varint(&p, end, &gap) != 0)
            return -1;
        w += i > 0 ? 1u + gap : 0u;
        if (w > wb)
            return 0;
        if (mhf_get_varint(&p, end, &h) != 0)
            return -1;
        uint64_t cnt = h >> 1;
        if ((h & 1u) == 0) {
            if (w < wa) {
                if (!(p = skip_varints(p, end, cnt)))
                    return -1;
                continue;
            }
            uint64_t s = 0;
            for (uint64_t j = 0; j < cnt; j++) {
                uint64_t x;
                if (mhf_get_varint(&p, end, &x) != 0)
                    return -1;
                s = j == 0 ? x : s + 1u + x;
                if (s < S)
                    bits[s >> 6] |= (uint64_t)1 << (s & 63);
            }
        } else {
            size_t nb = ((size_t)S + 7) / 8;
            if ((size_t)(end - p) < nb)
                return -1;
            if (w >= wa)
                or_bitmap(bits, p, nb);
            p += nb;
        }
    }
    return 0;
}

int mh_apost_query(const mh_seg *seg, uint64_t a, uint64_t b, uint32_t ops,
                   mh_apost_iter *it, uint64_t **scratch, size_t *scratch_cap,
                   mh_diag *d) {
    mh_apost_view v;
    int rc = mh_apost_view_get(seg, &v, d);
    if (rc == MH_ENOTFOUND)
        return 0;
    if (rc != MH_OK)
        return rc;
    return mh_apost_query_view(seg, &v, a, b, ops, it, scratch, scratch_cap, d);
}

int mh_apost_query_view(const mh_seg *seg, const mh_apost_view *vp, uint64_t a,
                        uint64_t b, uint32_t ops, mh_apost_iter *it,
                        uint64_t **scratch, size_t *scratch_cap, mh_diag *d) {
    const mh_apost_view v = *vp;
    int rc = 0;
    uint64_t wa = a >> v.shift, wb = b >> v.shift;
    if (a > b || wb - wa >= MHF_APOST_SPAN)
        return 0;
    MH_TRY(mh_apost_iter_init(it, v.nslices, ops, v.shift, scratch, scratch_cap, d));
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        /* an op with no key has no candidate: its bitmap stays empty */
        if (!(ops >> o & 1u) || v.run_count[o] == 0)
            continue;
        uint64_t *bits = (uint64_t *)(uintptr_t)it->op_bits[o];
        /* the last run starting at or before wa (its keys may reach wa),
         * else the first one */
        uint32_t r0;
        const uint8_t *rec;
        MH_TRY(run_search(seg, &v, o, wa, &r0, d));
        for (uint32_t r = r0; r < v.run_count[o]; r++) {
            MH_TRY(mh_apost_rec(&v, v.run_first[o] + r, &rec, d));
            if (mhf_load_u64(rec + MHF_APOST_R_GRANULE) > wb)
                break;
            mh_apost_cur c;
            _Atomic uint8_t *ok = atomic_load_explicit(&((mh_seg *)seg)->apost_run_ok,
                                                       memory_order_acquire);
            int known = ok && atomic_load_explicit(&ok[v.run_first[o] + r],
                                                   memory_order_acquire);
            /* a lazy view checks a run's records and bytes before its
             * first decode (a run known was) */
            if (!known && v.lazy)
                MH_TRY(lazy_run_check(&v, o, r, d));
            mh_apost_run_open(&v, o, r, &c);
            if (known) {
                mh_apost_cur m = c;
                const _Atomic uint64_t *mk = run_marks(seg, c.run, 0);
                for (unsigned j = RUN_MARKS; mk && j-- > 0;) {
                    uint64_t x = atomic_load_explicit(&mk[j], memory_order_relaxed);
                    uint32_t off = (uint32_t)x, key = (j + 1) * c.left / 4;
                    if (x && off < (size_t)(c.end - c.p) && c.w + (x >> 32) <= wa &&
                        key < c.left) {
                        m.p = c.p + off; /* its count varint: no gap to read */
                        m.w = c.w + (x >> 32);
                        m.left = c.left - key;
                        m.i = key;
                        break;
                    }
                }
                if (run_or_checked(&m, wa, wb, bits) == 0)
                    continue;
                /* the bytes changed under the mapping: check it again */
                mh_apost_run_open(&v, o, r, &c);
            }
            uint32_t n;
            const uint8_t *start = c.p;
            uint64_t first = c.w;
            uint32_t kn = c.left;
            uint64_t mark[RUN_MARKS] = {0};
            for (;;) {
                /* the postings are ORed in only for the wanted keys, but
                 * every key of the run is decoded and checked, once */
                const uint8_t *p0 = c.p;
                uint32_t i0 = c.i;
                rc = run_step(&c, bits, NULL, wa, wb, &n, d);
                if (rc <= 0)
                    break; /* on a failure the question fails: bits unused */
                for (unsigned j = 0; j < RUN_MARKS; j++) {
                    if (i0 == 0 || i0 != (j + 1) * kn / 4)
                        continue;
                    /* checked: its gap varint ends inside the run */
                    const uint8_t *h = p0;
                    uint64_t gap;
                    if (mhf_get_varint(&h, c.end, &gap) == 0 && c.w - first <= UINT32_MAX &&
                        (size_t)(h - start) <= UINT32_MAX)
                        mark[j] = (c.w - first) << 32 | (uint64_t)(h - start);
                }
            }
            if (rc < 0)
                return rc;
            if (ok) { /* decoded whole without a fault */
                _Atomic uint64_t *mk = run_marks(seg, c.run, 1);
                for (unsigned j = 0; mk && j < RUN_MARKS; j++)
                    atomic_store_explicit(&mk[j], mark[j], memory_order_relaxed);
                atomic_store_explicit(&ok[c.run], 1, memory_order_release);
            }
        }
    }
    /* a section 14's wide ranges (format 2.6) */
    for (unsigned o = 0; v.wide && o < MHF_OP_COUNT; o++)
        if ((ops >> o & 1u) && v.wide_n[o])
            wide_or(&v, o, a, b, (uint64_t *)(uintptr_t)it->op_bits[o]);
    mh_apost_iter_union(it, ops);
    return 1;
}

int mh_apost_iter_init(mh_apost_iter *it, uint32_t nslices, uint32_t ops, uint32_t shift,
                       uint64_t **scratch, size_t *scratch_cap, mh_diag *d) {
    size_t words = ((size_t)nslices + 63) / 64;
    /* one op asked: its candidates are the union; several: each op's in
     * its own bitmap after the union's, ORed into it at the end */
    int several = (ops & (ops - 1u) & 7u) != 0;
    size_t need = several ? words * (1 + MHF_OP_COUNT) : words;
    if (need > *scratch_cap || !*scratch) {
        size_t cap = need > 8 ? need : 8;
        uint64_t *p = realloc(*scratch, cap * sizeof *p);
        if (!p)
            return mh_diag_fail(d, MH_ENOMEM, 0,
                                "out of memory for the candidates of %u slices", nslices);
        *scratch = p;
        *scratch_cap = cap;
    }
    uint64_t *all = *scratch;
    memset(all, 0, need * sizeof *all);
    it->bits = all;
    it->nslices = nslices;
    it->shift = shift;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        it->op_bits[o] = !(ops >> o & 1u) ? NULL : several ? all + (1 + o) * words : all;
    return MH_OK;
}

void mh_apost_iter_union(mh_apost_iter *it, uint32_t ops) {
    if (!(ops & (ops - 1u) & 7u))
        return; /* one op: its bitmap is the union */
    size_t words = ((size_t)it->nslices + 63) / 64;
    uint64_t *all = (uint64_t *)(uintptr_t)it->bits;
    memset(all, 0, words * sizeof *all);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        if (it->op_bits[o])
            for (size_t i = 0; i < words; i++)
                all[i] |= it->op_bits[o][i];
}

unsigned mh_apost_ops_at(const mh_apost_iter *it, uint32_t s) {
    unsigned m = 0;
    if (s >= it->nslices)
        return 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        if (it->op_bits[o] && (it->op_bits[o][s >> 6] >> (s & 63) & 1u))
            m |= 1u << o;
    return m;
}

uint32_t mh_apost_next(const mh_apost_iter *it, uint32_t s) {
    if (s >= it->nslices)
        return UINT32_MAX;
    size_t wi = s >> 6, nw = ((size_t)it->nslices + 63) / 64;
    uint64_t x = it->bits[wi] & (~(uint64_t)0 << (s & 63));
    while (!x) {
        if (++wi == nw)
            return UINT32_MAX;
        x = it->bits[wi];
    }
    return (uint32_t)(wi * 64 + (unsigned)__builtin_ctzll(x));
}

uint32_t mh_apost_prev(const mh_apost_iter *it, uint32_t s) {
    if (it->nslices == 0)
        return UINT32_MAX;
    if (s >= it->nslices)
        s = it->nslices - 1;
    size_t wi = s >> 6;
    uint64_t x = it->bits[wi] & (~(uint64_t)0 >> (63 - (s & 63)));
    while (!x) {
        if (wi == 0)
            return UINT32_MAX;
        x = it->bits[--wi];
    }
    return (uint32_t)(wi * 64 + 63 - (unsigned)__builtin_clzll(x));
}
