/*
 * idmap_read.c - the id map's reading half (SPEC.md "Id map", section 7):
 * the section checked in place on the first query of a segment that uses
 * it (checksum, header, every group record against the slice records), and
 * one group's labels decoded on demand.
 *
 * The structure check is O(groups + slices) once per reader; afterwards a
 * group is found by a binary search over the records (sorted by slice) and
 * decoded with one LZ4 call: a 8192-id group of u8 labels is ~1.5 KiB of
 * compressed bytes read and 8 KiB written.
 */
#include <string.h>

#include <lz4.h>

#include "internal.h"

/* Type 7 means the id map from minor 1 on; in a 2.0 file it is an unknown
 * optional section, which a 2.0 reader skips and so does this one. */
int mh_idmap_present(const mh_seg *seg) {
    const mh_section *sec;
    return mh_section_defined(seg->major, seg->minor, MHF_SECT_IDMAP) &&
           mh_seg_section(seg, MHF_SECT_IDMAP, &sec) == MH_OK;
}

static void fill_view(const uint8_t *p, uint64_t base_off, mh_idmap_view *v) {
    v->g = mhf_load_u32(p + MHF_IDMAP_GROUP_IDS);
    v->ngroups = mhf_load_u32(p + MHF_IDMAP_GROUP_COUNT);
    v->group_size = mhf_load_u32(p + MHF_IDMAP_GROUP_SIZE_OFF);
    v->data_bytes = mhf_load_u64(p + MHF_IDMAP_DATA_BYTES);
    v->recs = p + MHF_IDMAP_HEADER_SIZE;
    v->data = v->recs + (size_t)v->ngroups * v->group_size;
    v->off = base_off;
}

static uint8_t width_for(uint32_t nck) {
    return nck <= 256u ? 1 : nck <= 65536u ? 2 : 4;
}

/* The header's checks (the whole parse's first part). */
static int parse_head(const mh_seg *seg, const uint8_t *p, uint64_t size,
                      uint64_t base_off, mh_diag *d) {
    /* the one reserved/size rule (SPEC.md 12.1) */
    int later = seg->minor > MHF_VERSION_MINOR;
    MH_CHECK(size >= MHF_IDMAP_HEADER_SIZE, MH_ECORRUPT, d, base_off,
             "id map: %llu bytes, less than its %u-byte header",
             (unsigned long long)size, MHF_IDMAP_HEADER_SIZE);
    uint32_t g = mhf_load_u32(p + MHF_IDMAP_GROUP_IDS);
    uint32_t ng = mhf_load_u32(p + MHF_IDMAP_GROUP_COUNT);
    uint32_t gsz = mhf_load_u32(p + MHF_IDMAP_GROUP_SIZE_OFF);
    uint64_t db = mhf_load_u64(p + MHF_IDMAP_DATA_BYTES);
    MH_CHECK(g >= MHF_IDMAP_G_MIN && g <= MHF_IDMAP_G_MAX, MH_ECORRUPT, d,
             base_off + MHF_IDMAP_GROUP_IDS,
             "id map: group_ids %u outside %u .. %u", g, MHF_IDMAP_G_MIN,
             MHF_IDMAP_G_MAX);
    MH_CHECK(later ? gsz >= MHF_IDMAP_GROUP_SIZE : gsz == MHF_IDMAP_GROUP_SIZE,
             MH_ECORRUPT, d, base_off + MHF_IDMAP_GROUP_SIZE_OFF,
             "id map: group_size %u, expected %s%u", gsz,
             later ? "at least " : "", MHF_IDMAP_GROUP_SIZE);
    MH_CHECK(later || (mhf_load_u32(p + MHF_IDMAP_RESERVED0) == 0 &&
                       mhf_load_u64(p + MHF_IDMAP_RESERVED1) == 0),
             MH_ECORRUPT, d, base_off + MHF_IDMAP_RESERVED0,
             "id map: reserved header field not zero");
    uint64_t recs = (uint64_t)ng * gsz, room = size - MHF_IDMAP_HEADER_SIZE;
    MH_CHECK(recs <= room && db == room - recs, MH_ECORRUPT, d, base_off,
             "id map: %llu bytes, its header says %llu (%u groups of %u bytes, "
             "%llu data bytes)", (unsigned long long)size,
             (unsigned long long)(MHF_IDMAP_HEADER_SIZE + recs + db), ng, gsz,
             (unsigned long long)db);
    return MH_OK;
}

int mh_idmap_parse(const mh_seg *seg, const uint8_t *p, uint64_t size,
                   uint64_t base_off, mh_idmap_view *out, mh_diag *d) {
    MH_TRY(parse_head(seg, p, size, base_off, d));
    int later = seg->minor > MHF_VERSION_MINOR;
    uint32_t g = mhf_load_u32(p + MHF_IDMAP_GROUP_IDS);
    uint32_t ng = mhf_load_u32(p + MHF_IDMAP_GROUP_COUNT);
    uint32_t gsz = mhf_load_u32(p + MHF_IDMAP_GROUP_SIZE_OFF);
    uint64_t db = mhf_load_u64(p + MHF_IDMAP_DATA_BYTES);
    const uint8_t *rp = p + MHF_IDMAP_HEADER_SIZE;
    /* every slice has exactly ceil(count / G) groups, in (slice, id_offset)
     * order, data_offsets tiling the data area */
    uint32_t i = 0;
    uint64_t next = 0;
    for (uint32_t s = 0; s < seg->nslices; s++) {
        mh_slice sl;
        mh_seg_slice(seg, s, &sl);
        uint8_t width = width_for(sl.chunk_count);
        for (uint32_t x = 0; x < sl.count; x += g, i++) {
            uint32_t want = sl.count - x < g ? sl.count - x : g;
            MH_CHECK(i < ng, MH_ECORRUPT, d, base_off + MHF_IDMAP_GROUP_COUNT,
                     "id map: %u groups, too few for the segment's slices "
                     "(slice %u id offset %u has none)", ng, s, x);
            const uint8_t *r = rp + (size_t)i * gsz;
            uint64_t roff = base_off + MHF_IDMAP_HEADER_SIZE + (uint64_t)i * gsz;
            uint32_t rs = mhf_load_u32(r + MHF_IDMAP_G_SLICE);
            uint32_t rx = mhf_load_u32(r + MHF_IDMAP_G_ID_OFFSET);
            MH_CHECK(rs == s && rx == x, MH_ECORRUPT, d, roff + MHF_IDMAP_G_SLICE,
                     "id map: group %u is of slice %u id offset %u, expected "
                     "slice %u id offset %u", i, rs, rx, s, x);
            uint32_t cnt = mhf_load_u32(r + MHF_IDMAP_G_COUNT);
            MH_CHECK(cnt == want, MH_ECORRUPT, d, roff + MHF_IDMAP_G_COUNT,
                     "id map: group %u (slice %u id offset %u): count %u, "
                     "expected %u", i, s, x, cnt, want);
            MH_CHECK(r[MHF_IDMAP_G_WIDTH] == width, MH_ECORRUPT, d,
                     roff + MHF_IDMAP_G_WIDTH,
                     "id map: group %u (slice %u): width %u, expected %u for "
                     "%u chunks", i, s, r[MHF_IDMAP_G_WIDTH], width,
                     sl.chunk_count);
            MH_CHECK(later || (r[MHF_IDMAP_G_RESERVED0] == 0 &&
                               r[MHF_IDMAP_G_RESERVED0 + 1] == 0 &&
                               r[MHF_IDMAP_G_RESERVED0 + 2] == 0 &&
                               mhf_load_u32(r + MHF_IDMAP_G_RESERVED1) == 0),
                     MH_ECORRUPT, d, roff + MHF_IDMAP_G_RESERVED0,
                     "id map: group %u: reserved bytes not zero", i);
            uint64_t doff = mhf_load_u64(r + MHF_IDMAP_G_DATA_OFFSET);
            uint32_t cs = mhf_load_u32(r + MHF_IDMAP_G_COMP_SIZE);
            MH_CHECK(doff == next, MH_ECORRUPT, d, roff + MHF_IDMAP_G_DATA_OFFSET,
                     "id map: group %u: data_offset %llu, expected %llu (groups "
                     "tile the data area)", i, (unsigned long long)doff,
                     (unsigned long long)next);
            MH_CHECK(cs >= 1 && cs <= db - next, MH_ECORRUPT, d,
                     roff + MHF_IDMAP_G_COMP_SIZE,
                     "id map: group %u: comp_size %u at data offset %llu "
                     "outside the %llu data bytes", i, cs,
                     (unsigned long long)doff, (unsigned long long)db);
            next += cs;
        }
    }
    MH_CHECK(i == ng, MH_ECORRUPT, d, base_off + MHF_IDMAP_GROUP_COUNT,
             "id map: %u groups, the segment's slices make %u", ng, i);
    MH_CHECK(next == db, MH_ECORRUPT, d, base_off + MHF_IDMAP_DATA_BYTES,
             "id map: groups end at data byte %llu of %llu",
             (unsigned long long)next, (unsigned long long)db);
    fill_view(p, base_off, out);
    return MH_OK;
}

int mh_idmap_view_get(const mh_seg *seg, mh_idmap_view *out, mh_diag *d) {
    const mh_section *sec;
    if (!mh_idmap_present(seg) ||
        mh_seg_section(seg, MHF_SECT_IDMAP, &sec) != MH_OK)
        return MH_ENOTFOUND;
    const uint8_t *p = seg->base + sec->offset;
    /* checked once per reader (1 whole, 2 by pieces); a segment that failed
     * is checked again on each use, so each failing query says why */
    int ok = atomic_load_explicit(&((mh_seg *)seg)->idmap_ok, memory_order_acquire);
    if (ok) {
        fill_view(p, sec->offset, out);
        out->lazy = ok == 2 ? seg : NULL;
        return MH_OK;
    }
    /* with piece sums (§9f): the header's piece and the header only; the
     * records a query's search reads, and a group's record and bytes before
     * its decode, are checked as it reads them (mh_idmap_group_find) */
    uint64_t head = sec->size < MHF_IDMAP_HEADER_SIZE ? sec->size : MHF_IDMAP_HEADER_SIZE;
    int lazy = mh_psum_check(seg, MHF_SECT_IDMAP, 0, head, "id map", d);
    if (lazy < 0)
        return lazy;
    if (lazy) {
        int rc = parse_head(seg, p, sec->size, sec->offset, d);
        if (rc != MH_OK) {
            if (d)
                mh_diag_prefix(d, "id map at byte %llu", (unsigned long long)sec->offset);
            return rc;
        }
        fill_view(p, sec->offset, out);
        out->lazy = seg;
        atomic_store_explicit(&((mh_seg *)seg)->idmap_ok, 2, memory_order_release);
        return MH_OK;
    }
    MH_TRY(mh_idmap_view_whole(seg, out, d));
    atomic_store_explicit(&((mh_seg *)seg)->idmap_ok, 1, memory_order_release);
    return MH_OK;
}

int mh_idmap_view_whole(const mh_seg *seg, mh_idmap_view *out, mh_diag *d) {
    const mh_section *sec;
    if (!mh_idmap_present(seg) ||
        mh_seg_section(seg, MHF_SECT_IDMAP, &sec) != MH_OK)
        return MH_ENOTFOUND;
    const uint8_t *p = seg->base + sec->offset;
    MH_TRY(mh_seg_section_sum(seg, sec, "id map", d));
    int rc = mh_idmap_parse(seg, p, sec->size, sec->offset, out, d);
    if (rc != MH_OK) {
        if (d)
            mh_diag_prefix(d, "id map at byte %llu",
                           (unsigned long long)sec->offset);
        return rc;
    }
    out->lazy = NULL;
    return MH_OK;
}

/* Record i of a lazy view, its piece checked first (a bit once it passed:
 * a 32-byte record never straddles a piece). */
static int rec_at(const mh_idmap_view *v, uint32_t i, const uint8_t **out, mh_diag *d) {
    const uint64_t a = MHF_IDMAP_HEADER_SIZE + (uint64_t)i * v->group_size;
    const mh_psum_tab *t = atomic_load_explicit(&((mh_seg *)v->lazy)->psum,
                                                memory_order_acquire);
    if (!mh_psum_known(t, MHF_SECT_IDMAP, a, v->group_size)) {
        int rc = mh_psum_check(v->lazy, MHF_SECT_IDMAP, a, v->group_size, "id map", d);
        if (rc < 0)
            return rc;
    }
    *out = v->recs + (size_t)i * v->group_size;
    return MH_OK;
}

int mh_idmap_group_find(const mh_idmap_view *v, uint32_t si, const mh_slice *s, uint32_t x,
                        uint32_t *grp, mh_diag *d) {
    if (!v->lazy) {
        *grp = mh_idmap_first_group(v, si) + x / v->g;
        return MH_OK;
    }
    /* the slice's first group: remembered by an earlier search whose
     * record passed the checks below, else searched */
    _Atomic uint32_t *known = mh_seg_memo(v->lazy, MH_MEMO_IDMAP_G0, si);
    uint32_t lo = known ? atomic_load_explicit(known, memory_order_relaxed) : 0;
    const int searched = lo == 0;
    if (lo) {
        lo--;
    } else {
        uint32_t hi = v->ngroups;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            const uint8_t *r;
            MH_TRY(rec_at(v, mid, &r, d));
            if (mhf_load_u32(r + MHF_IDMAP_G_SLICE) < si)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    const uint32_t g = lo + x / v->g, first = x / v->g * v->g;
    MH_CHECK(lo < v->ngroups && v->ngroups - lo > x / v->g, MH_ECORRUPT, d, v->off,
             "id map at byte %llu: no group for slice %u id offset %u (%u groups)",
             (unsigned long long)v->off, si, x, v->ngroups);
    const uint8_t *r;
    MH_TRY(rec_at(v, g, &r, d));
    /* a group whose record and bytes passed the checks below before: that
     * it is this slice's, as then, is all there is to check */
    _Atomic uint64_t *ok = mh_seg_bits(v->lazy, &((mh_seg *)v->lazy)->idmap_grp_ok, v->ngroups);
    if (mh_bit_get(ok, g) && mhf_load_u32(r + MHF_IDMAP_G_SLICE) == si &&
        mhf_load_u32(r + MHF_IDMAP_G_ID_OFFSET) == first) {
        if (searched && known)
            atomic_store_explicit(known, lo + 1, memory_order_relaxed);
        *grp = g;
        return MH_OK;
    }
    /* the record's checks of the whole parse, but its tiling with the
     * others: its slice, id offset, count, width, reserved bytes, bytes
     * inside the data area; then its bytes' pieces */
    const uint64_t at = v->off + MHF_IDMAP_HEADER_SIZE + (uint64_t)g * v->group_size;
    const uint32_t want = s->count - first < v->g ? s->count - first : v->g;
    const int later = v->lazy->minor > MHF_VERSION_MINOR;
    const uint64_t doff = mhf_load_u64(r + MHF_IDMAP_G_DATA_OFFSET);
    const uint32_t cs = mhf_load_u32(r + MHF_IDMAP_G_COMP_SIZE);
    MH_CHECK(mhf_load_u32(r + MHF_IDMAP_G_SLICE) == si &&
                 mhf_load_u32(r + MHF_IDMAP_G_ID_OFFSET) == first &&
                 mhf_load_u32(r + MHF_IDMAP_G_COUNT) == want &&
                 r[MHF_IDMAP_G_WIDTH] == width_for(s->chunk_count),
             MH_ECORRUPT, d, at,
             "id map: group %u at byte %llu: slice %u id offset %u count %u width %u, "
             "expected slice %u id offset %u count %u width %u", g, (unsigned long long)at,
             mhf_load_u32(r + MHF_IDMAP_G_SLICE), mhf_load_u32(r + MHF_IDMAP_G_ID_OFFSET),
             mhf_load_u32(r + MHF_IDMAP_G_COUNT), r[MHF_IDMAP_G_WIDTH], si, first, want,
             width_for(s->chunk_count));
    MH_CHECK(later || (r[MHF_IDMAP_G_RESERVED0] == 0 && r[MHF_IDMAP_G_RESERVED0 + 1] == 0 &&
                       r[MHF_IDMAP_G_RESERVED0 + 2] == 0 &&
                       mhf_load_u32(r + MHF_IDMAP_G_RESERVED1) == 0),
             MH_ECORRUPT, d, at + MHF_IDMAP_G_RESERVED0,
             "id map: group %u: reserved bytes not zero", g);
    MH_CHECK(cs >= 1 && doff <= v->data_bytes && cs <= v->data_bytes - doff, MH_ECORRUPT, d,
             at + MHF_IDMAP_G_COMP_SIZE,
             "id map: group %u: comp_size %u at data offset %llu outside the %llu data "
             "bytes", g, cs, (unsigned long long)doff, (unsigned long long)v->data_bytes);
    int rc = mh_psum_check(v->lazy, MHF_SECT_IDMAP,
                           MHF_IDMAP_HEADER_SIZE + (uint64_t)v->ngroups * v->group_size + doff,
                           cs, "id map", d);
    if (rc < 0)
        return rc;
    /* group g names slice si and id offset first: the slice's groups
     * start at g - x / g (they tile it in order, one per g ids) */
    mh_bit_set(ok, g);
    if (searched && known)
        atomic_store_explicit(known, lo + 1, memory_order_relaxed);
    *grp = g;
    return MH_OK;
}

uint32_t mh_idmap_first_group(const mh_idmap_view *v, uint32_t s) {
    uint32_t lo = 0, hi = v->ngroups;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (mhf_load_u32(v->recs + (size_t)mid * v->group_size +
                         MHF_IDMAP_G_SLICE) < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int mh_idmap_decode(const mh_idmap_view *v, uint32_t grp, uint32_t nck,
                    uint32_t *labels, mh_diag *d) {
    const uint8_t *r = v->recs + (size_t)grp * v->group_size;
    uint32_t cnt = mhf_load_u32(r + MHF_IDMAP_G_COUNT);
    unsigned width = r[MHF_IDMAP_G_WIDTH];
    /* the parse bounded cnt by G <= MH_IDMAP_GROUP_MAX and width to 1, 2, 4:
     * the packed labels (decoded and checked by mh_idmap_decode_packed) go
     * at the end of labels' bytes and are widened from the front */
    size_t raw = (size_t)cnt * width;
    uint8_t *packed = (uint8_t *)labels + (size_t)cnt * 4u - raw;
    MH_TRY(mh_idmap_decode_packed(v, grp, nck, packed, &width, d));
    /* widened WIDEN labels at a time through a copy: the packed bytes of
     * the next step lie at or past where this step writes (label i0 + WIDEN's
     * packed bytes start at 4 cnt - raw + (i0 + WIDEN) width, at least 4 (i0
     * + WIDEN) while i0 + WIDEN <= cnt), and a loop whose source is not
     * its destination vectorizes (in place, the widening cost more than the
     * LZ4 decode) */
    enum { WIDEN = 256 };
    uint8_t tmp[WIDEN * 4];
    for (uint32_t i0 = 0; i0 < cnt; i0 += WIDEN) {
        uint32_t k = cnt - i0 < WIDEN ? cnt - i0 : WIDEN;
        memcpy(tmp, packed + (size_t)i0 * width, (size_t)k * width);
        uint32_t *out = labels + i0;
        if (width == 1) {
            for (uint32_t i = 0; i < k; i++)
                out[i] = tmp[i];
        } else if (width == 2) {
            for (uint32_t i = 0; i < k; i++)
                out[i] = (uint32_t)tmp[2 * i] | (uint32_t)tmp[2 * i + 1] << 8;
        } else {
            for (uint32_t i = 0; i < k; i++)
                out[i] = mhf_load_u32(tmp + 4 * (size_t)i);
        }
    }
    return MH_OK;
}

/* Nonzero when a lane (byte for w 1, little-endian u16 for w 2) of the
 * first `words` 8-byte words of p is >= n. Per lane of B bits, h its top
 * bit and l the rest: for n <= 2^(B-1), a lane is >= n when h is set or
 * l + (2^(B-1) - n) carries into h's place; for larger n (below 2^B), when
 * h is set and l + (2^B - n) carries. l + the addend stays below 2^B, so
 * no lane carries into the next. */
static uint64_t lanes_at_least(const uint8_t *p, size_t words, unsigned w, uint32_t n) {
    const unsigned bits = 8 * w;
    if (n >= (UINT32_C(1) << bits))
        return 0; /* every lane value is a chunk */
    const uint64_t one = w == 1 ? UINT64_C(0x0101010101010101) : UINT64_C(0x0001000100010001);
    const uint64_t top = one << (bits - 1), low = ~top;
    const uint32_t half = UINT32_C(1) << (bits - 1);
    uint64_t bad = 0;
    if (n <= half) {
        const uint64_t add = one * (half - n);
        for (size_t i = 0; i < words; i++) {
            uint64_t v = mhf_load_u64(p + 8 * i);
            bad |= v | ((v & low) + add);
        }
    } else {
        const uint64_t add = one * ((UINT32_C(1) << bits) - n);
        for (size_t i = 0; i < words; i++) {
            uint64_t v = mhf_load_u64(p + 8 * i);
            bad |= v & ((v & low) + add);
        }
    }
    return bad & top;
}

int mh_idmap_decode_packed(const mh_idmap_view *v, uint32_t grp, uint32_t nck,
                           uint8_t *out, unsigned *width, mh_diag *d) {
    uint32_t n;
    return mh_idmap_decode_prefix(v, grp, nck, UINT32_MAX, out, &n, width, d);
}

int mh_idmap_decode_prefix(const mh_idmap_view *v, uint32_t grp, uint32_t nck,
                           uint32_t want, uint8_t *out, uint32_t *got, unsigned *width,
                           mh_diag *d) {
    const uint8_t *r = v->recs + (size_t)grp * v->group_size;
    uint32_t s = mhf_load_u32(r + MHF_IDMAP_G_SLICE);
    uint32_t x0 = mhf_load_u32(r + MHF_IDMAP_G_ID_OFFSET);
    uint32_t cnt = mhf_load_u32(r + MHF_IDMAP_G_COUNT);
    uint32_t cs = mhf_load_u32(r + MHF_IDMAP_G_COMP_SIZE);
    unsigned w = r[MHF_IDMAP_G_WIDTH];
    uint64_t doff = mhf_load_u64(r + MHF_IDMAP_G_DATA_OFFSET);
    uint64_t at = v->off + (uint64_t)(v->data - v->recs) + MHF_IDMAP_HEADER_SIZE +
                  doff;
    /* the parse bounded cnt by G and the width to 1, 2, 4 */
    size_t raw = (size_t)cnt * w;
    if (want < cnt) {
        /* the first `want` labels at least: LZ4 stops once it has them (a
         * walk from an id needs the labels up to it, or a few past it);
         * what it does not decode it does not check */
        int n = LZ4_decompress_safe_partial((const char *)v->data + doff, (char *)out,
                                            (int)cs, (int)((size_t)want * w), (int)raw);
        MH_CHECK(n >= (int)((size_t)want * w), MH_ECORRUPT, d, at,
                 "id map: group %u (slice %u id offset %u) at byte %llu: LZ4 block "
                 "does not decompress to its first %zu bytes", grp, s, x0,
                 (unsigned long long)at, (size_t)want * w);
        cnt = (uint32_t)((size_t)n / w);
        raw = (size_t)cnt * w;
    } else {
        int n = LZ4_decompress_safe((const char *)v->data + doff, (char *)out, (int)cs,
                                    (int)raw);
        MH_CHECK(n == (int)raw, MH_ECORRUPT, d, at,
                 "id map: group %u (slice %u id offset %u) at byte %llu: LZ4 block "
                 "does not decompress to %zu bytes", grp, s, x0,
                 (unsigned long long)at, raw);
    }
    /* every label a chunk of the slice: tested 8 bytes at a time first,
     * each found only when one is not. The byte loop did not vectorize at
     * -O2 and cost 8 instructions a label: 65 k a group of 8192, as much
     * as a block decode's share of a whole-space query (callgrind) */
    uint64_t bad = 0;
    if (w == 1 || w == 2) {
        size_t words = raw / 8, i = words * 8;
        bad = lanes_at_least(out, words, w, nck);
        if (w == 1)
            for (; i < raw; i++)
                bad |= out[i] >= nck;
        else
            for (; i < raw; i += 2)
                bad |= mhf_load_u16(out + i) >= nck;
    } else {
        for (uint32_t i = 0; i < cnt; i++)
            bad |= mhf_load_u32(out + 4 * (size_t)i) >= nck;
    }
    if (bad)
        for (uint32_t i = 0; i < cnt; i++) {
            uint32_t l = w == 1 ? out[i]
                         : w == 2 ? mhf_load_u16(out + 2 * (size_t)i)
                                  : mhf_load_u32(out + 4 * (size_t)i);
            MH_CHECK(l < nck, MH_ECORRUPT, d, at,
                     "id map: label %u at id offset %u of slice %u is not a "
                     "chunk of the slice", l, x0 + i, s);
        }
    *width = w;
    *got = cnt;
    return MH_OK;
}

int mh_idmap_labels(const mh_seg *seg, uint32_t slice, uint32_t x,
                    uint32_t *labels, uint32_t *first, uint32_t *n,
                    mh_diag *d) {
    mh_idmap_view v;
    int rc = mh_idmap_view_whole(seg, &v, d);
    if (rc != MH_OK)
        return rc;
    MH_CHECK(slice < seg->nslices, MH_EINVAL, d, 0,
             "id map: slice %u of a segment of %u slices", slice, seg->nslices);
    mh_slice sl;
    mh_seg_slice(seg, slice, &sl);
    MH_CHECK(x < sl.count, MH_EINVAL, d, 0,
             "id map: id offset %u of a slice of %u rows", x, sl.count);
    uint32_t grp = mh_idmap_first_group(&v, slice) + x / v.g;
    rc = mh_idmap_decode(&v, grp, sl.chunk_count, labels, d);
    if (rc != MH_OK)
        return rc;
    *first = x / v.g * v.g;
    *n = mhf_load_u32(v.recs + (size_t)grp * v.group_size + MHF_IDMAP_G_COUNT);
    return MH_OK;
}
