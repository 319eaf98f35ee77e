/*
 * idtime_read.c - the id transitions' reading half (SPEC.md §9g, section
 * 13): the section checked in place on the first query that uses it
 * (checksum, header, every group record against the slice records), and
 * the search of a slice's samples for a transition.
 *
 * The search reads the slice's group records (a binary search by their
 * first transitions) and one group's high bits: the h-th zero of the high
 * bits, h = (T - t_first) >> L, has before it exactly the samples whose
 * high part is below h; the few after it with high part h are compared by
 * their low bits. About 35 words of a 1024-sample group at K = 1.
 */
#include <string.h>

#include "internal.h"

/* Type 13 means the id transitions from minor 5 on; in an older file it is
 * an unknown optional section, skipped. */
int mh_idtime_present(const mh_seg *seg) {
    const mh_section *sec;
    return mh_section_defined(seg->major, seg->minor, MHF_SECT_IDTIME) &&
           mh_seg_section(seg, MHF_SECT_IDTIME, &sec) == MH_OK;
}

static void fill_view(const uint8_t *p, uint64_t base_off, mh_idtime_view *v) {
    v->k = mhf_load_u32(p + MHF_IDTIME_STRIDE);
    v->s = mhf_load_u32(p + MHF_IDTIME_GROUP_SAMPLES);
    v->ngroups = mhf_load_u32(p + MHF_IDTIME_GROUP_COUNT);
    v->group_size = mhf_load_u32(p + MHF_IDTIME_GROUP_SIZE_OFF);
    v->data_bytes = mhf_load_u64(p + MHF_IDTIME_DATA_BYTES);
    v->recs = p + MHF_IDTIME_HEADER_SIZE;
    v->data = v->recs + (size_t)v->ngroups * v->group_size;
    v->off = base_off;
}

static int pow2(uint32_t x) { return x && !(x & (x - 1)); }

/* Samples of a slice of count ids at stride k. */
static uint32_t samples_of(uint32_t count, uint32_t k) {
    return (uint32_t)(((uint64_t)count + k - 1) / k);
}

/* The header's checks (the whole parse's first part). */
static int parse_head(const mh_seg *seg, const uint8_t *p, uint64_t size,
                      uint64_t base_off, mh_diag *d) {
    int later = seg->minor > MHF_VERSION_MINOR;
    MH_CHECK(size >= MHF_IDTIME_HEADER_SIZE, MH_ECORRUPT, d, base_off,
             "id transitions: %llu bytes, less than its %u-byte header",
             (unsigned long long)size, MHF_IDTIME_HEADER_SIZE);
    uint32_t k = mhf_load_u32(p + MHF_IDTIME_STRIDE);
    uint32_t S = mhf_load_u32(p + MHF_IDTIME_GROUP_SAMPLES);
    uint32_t ng = mhf_load_u32(p + MHF_IDTIME_GROUP_COUNT);
    uint32_t gsz = mhf_load_u32(p + MHF_IDTIME_GROUP_SIZE_OFF);
    uint64_t db = mhf_load_u64(p + MHF_IDTIME_DATA_BYTES);
    MH_CHECK(pow2(k) && k <= MHF_IDTIME_STRIDE_MAX, MH_ECORRUPT, d,
             base_off + MHF_IDTIME_STRIDE,
             "id transitions: stride %u is not a power of two up to %u", k,
             MHF_IDTIME_STRIDE_MAX);
    MH_CHECK(pow2(S) && S >= MHF_IDTIME_S_MIN && S <= MHF_IDTIME_S_MAX,
             MH_ECORRUPT, d, base_off + MHF_IDTIME_GROUP_SAMPLES,
             "id transitions: group_samples %u is not a power of two in %u .. %u",
             S, MHF_IDTIME_S_MIN, MHF_IDTIME_S_MAX);
    MH_CHECK(later ? gsz >= MHF_IDTIME_GROUP_SIZE : gsz == MHF_IDTIME_GROUP_SIZE,
             MH_ECORRUPT, d, base_off + MHF_IDTIME_GROUP_SIZE_OFF,
             "id transitions: group_size %u, expected %s%u", gsz,
             later ? "at least " : "", MHF_IDTIME_GROUP_SIZE);
    MH_CHECK(later || mhf_load_u64(p + MHF_IDTIME_RESERVED) == 0, MH_ECORRUPT, d,
             base_off + MHF_IDTIME_RESERVED,
             "id transitions: reserved header field not zero");
    uint64_t recs = (uint64_t)ng * gsz, room = size - MHF_IDTIME_HEADER_SIZE;
    MH_CHECK(recs <= room && db == room - recs && db % 8 == 0, MH_ECORRUPT, d,
             base_off, "id transitions: %llu bytes, its header says %llu (%u "
             "groups of %u bytes, %llu data bytes, a multiple of 8)",
             (unsigned long long)size,
             (unsigned long long)(MHF_IDTIME_HEADER_SIZE + recs + db), ng, gsz,
             (unsigned long long)db);
    return MH_OK;
}

int mh_idtime_parse(const mh_seg *seg, const uint8_t *p, uint64_t size,
                    uint64_t base_off, mh_idtime_view *out, mh_diag *d) {
    MH_TRY(parse_head(seg, p, size, base_off, d));
    int later = seg->minor > MHF_VERSION_MINOR;
    uint32_t k = mhf_load_u32(p + MHF_IDTIME_STRIDE);
    uint32_t S = mhf_load_u32(p + MHF_IDTIME_GROUP_SAMPLES);
    uint32_t ng = mhf_load_u32(p + MHF_IDTIME_GROUP_COUNT);
    uint32_t gsz = mhf_load_u32(p + MHF_IDTIME_GROUP_SIZE_OFF);
    uint64_t db = mhf_load_u64(p + MHF_IDTIME_DATA_BYTES);
    const uint8_t *rp = p + MHF_IDTIME_HEADER_SIZE;
    uint32_t i = 0;
    uint64_t next = 0;
    for (uint32_t si = 0; si < seg->nslices; si++) {
        mh_slice sl;
        mh_seg_slice(seg, si, &sl);
        const uint32_t ns = samples_of(sl.count, k);
        /* 64-bit steps: j + S past the last group may pass 2^32 - 1 */
        for (uint64_t j64 = 0; j64 < ns; j64 += S, i++) {
            const uint32_t j = (uint32_t)j64;
            const uint32_t c = ns - j < S ? ns - j : S;
            MH_CHECK(i < ng, MH_ECORRUPT, d, base_off + MHF_IDTIME_GROUP_COUNT,
                     "id transitions: %u groups, too few for the segment's "
                     "slices (slice %u sample %u has none)", ng, si, j);
            const uint8_t *r = rp + (size_t)i * gsz;
            uint64_t roff = base_off + MHF_IDTIME_HEADER_SIZE + (uint64_t)i * gsz;
            uint32_t rs = mhf_load_u32(r + MHF_IDTIME_G_SLICE);
            uint32_t rj = mhf_load_u32(r + MHF_IDTIME_G_FIRST);
            MH_CHECK(rs == si && rj == j, MH_ECORRUPT, d, roff + MHF_IDTIME_G_SLICE,
                     "id transitions: group %u is of slice %u sample %u, "
                     "expected slice %u sample %u", i, rs, rj, si, j);
            unsigned L = r[MHF_IDTIME_G_LOW_BITS];
            MH_CHECK(L < 64, MH_ECORRUPT, d, roff + MHF_IDTIME_G_LOW_BITS,
                     "id transitions: group %u: %u low bits, more than 63", i, L);
            MH_CHECK(later || (r[MHF_IDTIME_G_RESERVED] == 0 &&
                               r[MHF_IDTIME_G_RESERVED + 1] == 0 &&
                               r[MHF_IDTIME_G_RESERVED + 2] == 0),
                     MH_ECORRUPT, d, roff + MHF_IDTIME_G_RESERVED,
                     "id transitions: group %u: reserved bytes not zero", i);
            uint64_t doff = mhf_load_u64(r + MHF_IDTIME_G_DATA_OFFSET);
            uint32_t words = mhf_load_u32(r + MHF_IDTIME_G_WORDS);
            MH_CHECK(doff == next, MH_ECORRUPT, d, roff + MHF_IDTIME_G_DATA_OFFSET,
                     "id transitions: group %u: data_offset %llu, expected %llu "
                     "(groups tile the data area)", i, (unsigned long long)doff,
                     (unsigned long long)next);
            uint64_t low = ((uint64_t)c * L + 63) / 64;
            MH_CHECK(words > low && (uint64_t)(words - low) * 64 >= c &&
                         (uint64_t)words * 8 <= db - next,
                     MH_ECORRUPT, d, roff + MHF_IDTIME_G_WORDS,
                     "id transitions: group %u: %u words for %u samples of %u "
                     "low bits at data offset %llu of %llu", i, words, c, L,
                     (unsigned long long)doff, (unsigned long long)db);
            next += (uint64_t)words * 8;
        }
    }
    MH_CHECK(i == ng, MH_ECORRUPT, d, base_off + MHF_IDTIME_GROUP_COUNT,
             "id transitions: %u groups, the segment's slices make %u", ng, i);
    MH_CHECK(next == db, MH_ECORRUPT, d, base_off + MHF_IDTIME_DATA_BYTES,
             "id transitions: groups end at data byte %llu of %llu",
             (unsigned long long)next, (unsigned long long)db);
    fill_view(p, base_off, out);
    return MH_OK;
}

int mh_idtime_view_whole(const mh_seg *seg, mh_idtime_view *out, mh_diag *d) {
    const mh_section *sec;
    if (!mh_idtime_present(seg) || mh_seg_section(seg, MHF_SECT_IDTIME, &sec) != MH_OK)
        return MH_ENOTFOUND;
    const uint8_t *p = seg->base + sec->offset;
    MH_TRY(mh_seg_section_sum(seg, sec, "id transitions", d));
    int rc = mh_idtime_parse(seg, p, sec->size, sec->offset, out, d);
    if (rc != MH_OK) {
        if (d)
            mh_diag_prefix(d, "id transitions at byte %llu",
                           (unsigned long long)sec->offset);
        return rc;
    }
    out->lazy = NULL;
    return MH_OK;
}

int mh_idtime_view_get(const mh_seg *seg, mh_idtime_view *out, mh_diag *d) {
    const mh_section *sec;
    if (!mh_idtime_present(seg) || mh_seg_section(seg, MHF_SECT_IDTIME, &sec) != MH_OK)
        return MH_ENOTFOUND;
    const uint8_t *p = seg->base + sec->offset;
    /* checked once per reader (1 whole, 2 by pieces); a segment that
     * failed is checked again on each use, so each failing query says why */
    int ok = atomic_load_explicit(&((mh_seg *)seg)->idtime_ok, memory_order_acquire);
    if (ok) {
        fill_view(p, sec->offset, out);
        out->lazy = ok == 2 ? seg : NULL;
        return MH_OK;
    }
    /* with piece sums (§9f): the header's piece and the header only; the
     * group records and words a search reads are checked as it reads them */
    uint64_t head = sec->size < MHF_IDTIME_HEADER_SIZE ? sec->size : MHF_IDTIME_HEADER_SIZE;
    int lazy = mh_psum_check(seg, MHF_SECT_IDTIME, 0, head, "id transitions", d);
    if (lazy < 0)
        return lazy;
    if (lazy) {
        int rc = parse_head(seg, p, sec->size, sec->offset, d);
        if (rc != MH_OK) {
            if (d)
                mh_diag_prefix(d, "id transitions at byte %llu",
                               (unsigned long long)sec->offset);
            return rc;
        }
        fill_view(p, sec->offset, out);
        out->lazy = seg;
    } else {
        MH_TRY(mh_idtime_view_whole(seg, out, d));
    }
    atomic_store_explicit(&((mh_seg *)seg)->idtime_ok, lazy ? 2 : 1, memory_order_release);
    return MH_OK;
}

/* Record i of a lazy view, its bytes checked by their pieces first. */
static int rec_at(const mh_idtime_view *v, uint32_t i, const uint8_t **out, mh_diag *d) {
    if (v->lazy) {
        /* the common case, the record's piece checked before: a bit (a
         * record never straddles a piece: 32 divides 2^p and the header) */
        const mh_psum_tab *t = atomic_load_explicit(&((mh_seg *)v->lazy)->psum,
                                                    memory_order_acquire);
        uint64_t a = MHF_IDTIME_HEADER_SIZE + (uint64_t)i * v->group_size;
        if (mh_psum_known(t, MHF_SECT_IDTIME, a, v->group_size)) {
            *out = v->recs + (size_t)i * v->group_size;
            return MH_OK;
        }
        int rc = mh_psum_check(v->lazy, MHF_SECT_IDTIME, a, v->group_size,
                               "id transitions", d);
        if (rc < 0)
            return rc;
    }
    *out = v->recs + (size_t)i * v->group_size;
    return MH_OK;
}

uint32_t mh_idtime_first_group(const mh_idtime_view *v, uint32_t si) {
    uint32_t lo = 0, hi = v->ngroups;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (mhf_load_u32(v->recs + (size_t)mid * v->group_size + MHF_IDTIME_G_SLICE) < si)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* As mh_idtime_first_group, each record read checked by its pieces. */
static int first_group_checked(const mh_idtime_view *v, uint32_t si, uint32_t *g,
                               mh_diag *d) {
    uint32_t lo = 0, hi = v->ngroups;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *r;
        MH_TRY(rec_at(v, mid, &r, d));
        if (mhf_load_u32(r + MHF_IDTIME_G_SLICE) < si)
            lo = mid + 1;
        else
            hi = mid;
    }
    *g = lo;
    return MH_OK;
}

/* Low bits of sample i of a group whose low part starts at w. */
static inline uint64_t low_of(const uint8_t *w, uint32_t i, unsigned L) {
    if (L == 0)
        return 0;
    const uint64_t pos = (uint64_t)i * L;
    const unsigned off = (unsigned)(pos & 63);
    uint64_t x = mhf_load_u64(w + 8 * (pos >> 6)) >> off;
    if (off + L > 64)
        x |= mhf_load_u64(w + 8 * ((pos >> 6) + 1)) << (64 - off);
    return x & (UINT64_MAX >> (64 - L));
}

/* The smallest i < c whose value (transition - t_first) is >= v, c when
 * none; reads only the group's `words` words. q - h <= q never wraps: q
 * counts h zeros before it. */
static inline __attribute__((always_inline)) uint32_t
lower_bound_body(const uint8_t *g, uint32_t words, uint32_t c, unsigned L, uint64_t v) {
    const uint64_t lw = ((uint64_t)c * L + 63) / 64;
    const uint8_t *hi = g + 8 * lw;
    const uint64_t nh = words - lw;
    const uint64_t h = v >> L;
    /* q: the bit after the h-th zero (counted from 1), 0 when h = 0. Sample
     * i sits at bit (high_i + i), after exactly high_i zeros: those before
     * q are the samples whose high part is below h */
    uint64_t q = 0;
    if (h > 0) {
        uint64_t zeros = 0, k = 0, word = 0;
        for (; k < nh; k++) {
            word = mhf_load_u64(hi + 8 * k);
            const uint64_t z = 64 - (uint64_t)__builtin_popcountll(word);
            if (zeros + z >= h)
                break;
            zeros += z;
        }
        if (k == nh)
            return c; /* fewer zeros: every sample's high part is below h */
        /* the (h - zeros)-th zero of word: a byte at a time, then bit by
         * bit in its byte (at most 7 cleared) */
        uint64_t inv = ~word, r = h - 1 - zeros;
        unsigned base = 0;
        for (;;) {
            const uint64_t n8 = (uint64_t)__builtin_popcountll(inv & 0xffu);
            if (r < n8)
                break;
            r -= n8;
            inv >>= 8;
            base += 8;
        }
        for (; r > 0; r--)
            inv &= inv - 1;
        q = 64 * k + base + (uint64_t)__builtin_ctzll(inv) + 1;
    }
    if (q - h >= c)
        return c;
    uint32_t i = (uint32_t)(q - h);
    /* the ones from q on: samples of high part h */
    const uint64_t vl = L ? v & (UINT64_MAX >> (64 - L)) : 0;
    for (; q < 64 * nh && i < c; q++, i++) {
        if (!((mhf_load_u64(hi + 8 * (q >> 6)) >> (q & 63)) & 1))
            return i; /* the next sample's high part is above h */
        if (low_of(g, i, L) >= vl)
            return i;
    }
    return i < c ? i : c;
}

int mh_idtime_no_popcnt;

/* lower_bound_body as compiled for every x86-64 (popcount a libgcc call:
 * half the search's instructions, callgrind) and, where the CPU has it,
 * with the popcnt instruction, chosen once per call by the CPU's features
 * (as libgcc reads them at start-up). */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__POPCNT__)
__attribute__((target("popcnt"))) static uint32_t
lower_bound_popcnt(const uint8_t *g, uint32_t words, uint32_t c, unsigned L, uint64_t v) {
    return lower_bound_body(g, words, c, L, v);
}
static uint32_t lower_bound(const uint8_t *g, uint32_t words, uint32_t c, unsigned L,
                            uint64_t v) {
    if (!mh_idtime_no_popcnt && __builtin_cpu_supports("popcnt"))
        return lower_bound_popcnt(g, words, c, L, v);
    return lower_bound_body(g, words, c, L, v);
}
#else
static uint32_t lower_bound(const uint8_t *g, uint32_t words, uint32_t c, unsigned L,
                            uint64_t v) {
    return lower_bound_body(g, words, c, L, v);
}
#endif

/* A lazy view's record of group gi of slice si (c samples): what the
 * whole parse checks of one record, but its tiling with the next. */
static int lazy_rec_check(const mh_idtime_view *v, const uint8_t *r, uint32_t si,
                          uint32_t gi, uint32_t c, mh_diag *d) {
    const uint64_t at = v->off + (uint64_t)(r - v->recs) + MHF_IDTIME_HEADER_SIZE;
    const unsigned L = r[MHF_IDTIME_G_LOW_BITS];
    const uint64_t doff = mhf_load_u64(r + MHF_IDTIME_G_DATA_OFFSET);
    const uint32_t words = mhf_load_u32(r + MHF_IDTIME_G_WORDS);
    MH_CHECK(mhf_load_u32(r + MHF_IDTIME_G_SLICE) == si &&
                 mhf_load_u32(r + MHF_IDTIME_G_FIRST) == gi * v->s,
             MH_ECORRUPT, d, at,
             "id transitions at byte %llu: the record of slice %u sample %u names "
             "slice %u sample %u", (unsigned long long)at, si, gi * v->s,
             mhf_load_u32(r + MHF_IDTIME_G_SLICE), mhf_load_u32(r + MHF_IDTIME_G_FIRST));
    const uint64_t low = ((uint64_t)c * L + 63) / 64;
    MH_CHECK(L < 64 && doff % 8 == 0 && doff <= v->data_bytes && words > low &&
                 (uint64_t)(words - low) * 64 >= c &&
                 (uint64_t)words * 8 <= v->data_bytes - doff,
             MH_ECORRUPT, d, at,
             "id transitions at byte %llu: group of slice %u sample %u: %u words "
             "of %u low bits at data offset %llu of %llu", (unsigned long long)at,
             si, gi * v->s, words, L, (unsigned long long)doff,
             (unsigned long long)v->data_bytes);
    MH_CHECK(v->lazy->minor > MHF_VERSION_MINOR ||
                 (r[MHF_IDTIME_G_RESERVED] | r[MHF_IDTIME_G_RESERVED + 1] |
                  r[MHF_IDTIME_G_RESERVED + 2]) == 0,
             MH_ECORRUPT, d, at, "id transitions at byte %llu: reserved bytes not zero",
             (unsigned long long)at);
    int rc = mh_psum_check(v->lazy, MHF_SECT_IDTIME,
                           MHF_IDTIME_HEADER_SIZE + (uint64_t)v->ngroups * v->group_size + doff,
                           (uint64_t)words * 8, "id transitions", d);
    return rc < 0 ? rc : MH_OK;
}

int mh_idtime_first_at_least(const mh_idtime_view *v, uint32_t si, uint32_t count,
                             uint64_t T, uint32_t *j, mh_diag *d) {
    const uint32_t ns = samples_of(count, v->k);
    const uint32_t ngs = (ns + v->s - 1) / v->s;
    *j = 0;
    if (ngs == 0)
        return MH_OK;
    /* the slice's first group: remembered by an earlier search whose
     * record passed lazy_rec_check, else searched */
    _Atomic uint32_t *known = v->lazy ? mh_seg_memo(v->lazy, MH_MEMO_IDTIME_G0, si) : NULL;
    uint32_t g0 = known ? atomic_load_explicit(known, memory_order_relaxed) : 0;
    const int searched = g0 == 0;
    if (g0)
        g0--;
    else
        MH_TRY(first_group_checked(v, si, &g0, d));
    MH_CHECK(g0 < v->ngroups && v->ngroups - g0 >= ngs, MH_ECORRUPT, d, v->off,
             "id transitions at byte %llu: slice %u has no %u groups from group %u "
             "of %u", (unsigned long long)v->off, si, ngs, g0, v->ngroups);
    /* the last group whose first transition is below T */
    uint32_t lo = 0, hi = ngs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *r;
        MH_TRY(rec_at(v, g0 + mid, &r, d));
        if (mhf_load_u64(r + MHF_IDTIME_G_T_FIRST) < T)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return MH_OK;
    const uint32_t gi = lo - 1, j0 = gi * v->s;
    const uint8_t *r;
    MH_TRY(rec_at(v, g0 + gi, &r, d));
    const uint32_t c = ns - j0 < v->s ? ns - j0 : v->s;
    if (v->lazy) {
        /* a group whose record and bytes passed lazy_rec_check before: that
         * it is this slice's, as then, is all there is to check */
        _Atomic uint64_t *ok = mh_seg_bits(v->lazy, &((mh_seg *)v->lazy)->idtime_grp_ok,
                                           v->ngroups);
        if (!(mh_bit_get(ok, g0 + gi) && mhf_load_u32(r + MHF_IDTIME_G_SLICE) == si &&
              mhf_load_u32(r + MHF_IDTIME_G_FIRST) == j0)) {
            MH_TRY(lazy_rec_check(v, r, si, gi, c, d));
            mh_bit_set(ok, g0 + gi);
        }
        /* record g0 + gi names slice si sample gi * S: the slice's groups
         * start at g0 */
        if (searched && known)
            atomic_store_explicit(known, g0 + 1, memory_order_relaxed);
    }
    const uint64_t t0 = mhf_load_u64(r + MHF_IDTIME_G_T_FIRST);
    *j = j0 + lower_bound(v->data + mhf_load_u64(r + MHF_IDTIME_G_DATA_OFFSET),
                          mhf_load_u32(r + MHF_IDTIME_G_WORDS), c,
                          r[MHF_IDTIME_G_LOW_BITS], T - t0);
    return MH_OK;
}

int mh_idtime_decode(const mh_idtime_view *v, uint32_t grp, uint32_t c,
                     uint64_t *t, mh_diag *d) {
    const uint8_t *r = v->recs + (size_t)grp * v->group_size;
    const uint64_t doff = mhf_load_u64(r + MHF_IDTIME_G_DATA_OFFSET);
    const uint32_t words = mhf_load_u32(r + MHF_IDTIME_G_WORDS);
    const unsigned L = r[MHF_IDTIME_G_LOW_BITS];
    const uint64_t t0 = mhf_load_u64(r + MHF_IDTIME_G_T_FIRST);
    const uint8_t *g = v->data + doff;
    const uint64_t at = v->off + MHF_IDTIME_HEADER_SIZE +
                        (uint64_t)v->ngroups * v->group_size + doff;
    const uint64_t lw = ((uint64_t)c * L + 63) / 64, nh = words - lw;
    const uint8_t *hi = g + 8 * lw;
    uint32_t i = 0;
    uint64_t prev = 0;
    for (uint64_t k = 0; k < nh; k++) {
        uint64_t word = mhf_load_u64(hi + 8 * k);
        while (word) {
            const uint64_t p = 64 * k + (uint64_t)__builtin_ctzll(word);
            word &= word - 1;
            MH_CHECK(i < c, MH_ECORRUPT, d, at,
                     "id transitions: group %u at byte %llu: more than its %u "
                     "samples' high bits set", grp, (unsigned long long)at, c);
            MH_CHECK((p - i) <= (UINT64_MAX >> L), MH_ECORRUPT, d, at,
                     "id transitions: group %u: sample %u past 2^64", grp, i);
            const uint64_t val = ((p - i) << L) | low_of(g, i, L);
            MH_CHECK(i == 0 ? val == 0 : val >= prev, MH_ECORRUPT, d, at,
                     "id transitions: group %u at byte %llu: sample %u is %llu "
                     "after the group's first, %s", grp, (unsigned long long)at, i,
                     (unsigned long long)val,
                     i == 0 ? "expected 0" : "below the sample before it");
            MH_CHECK(val <= UINT64_MAX - t0, MH_ECORRUPT, d, at,
                     "id transitions: group %u: sample %u past transition 2^64 - 1",
                     grp, i);
            t[i] = t0 + val;
            prev = val;
            i++;
            if (i == c)
                MH_CHECK(word == 0 && k == nh - 1, MH_ECORRUPT, d, at,
                         "id transitions: group %u at byte %llu: high bits set "
                         "past its last sample, or words past the one holding it",
                         grp, (unsigned long long)at);
        }
    }
    MH_CHECK(i == c, MH_ECORRUPT, d, at,
             "id transitions: group %u at byte %llu: %u high bits set, expected "
             "%u samples", grp, (unsigned long long)at, i, c);
    /* the low part's padding */
    if ((uint64_t)c * L % 64) {
        uint64_t last = mhf_load_u64(g + 8 * (lw - 1)) >> ((uint64_t)c * L % 64);
        MH_CHECK(last == 0, MH_ECORRUPT, d, at,
                 "id transitions: group %u at byte %llu: low bits set past its "
                 "last sample's", grp, (unsigned long long)at);
    }
    return MH_OK;
}
