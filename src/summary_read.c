/*
 * summary_read.c - the address summaries' reading half: a section (type 6,
 * or 9, the fine one of 2.1) checked in place on a segment's first query
 * that can use it, the candidate slices of a query (SPEC.md "Address
 * summary"), and fsck's exactness check of both against the rows.
 * A query uses section 9 when the segment has it, else section 6.
 *
 * A query on [A, B] that spans at most 64 granules looks up the entries
 * (granule, op) of those granules and of its operations: at most 192, a
 * contiguous run of the sorted entries found by one binary search. Its
 * candidate slices are the union of their postings, merged lazily: the slice
 * walk asks for the first candidate at or after (backward: at or before)
 * where it stands, and each entry keeps the window of its postings still
 * ahead, so a walk costs one binary search per entry and visited slice. A
 * segment where no entry matches is skipped whole. A wider range, or a
 * segment without the section, visits every slice as before.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Highest minor of 2.x this reader knows (the one reserved/size rule). */
#define KNOWN_MINOR MHF_VERSION_MINOR

/* The view of a section whose header is known to be good. */
static void fill_view(const uint8_t *p, mh_sum_view *out) {
    memset(out, 0, sizeof *out); /* not lazy */
    out->shift = mhf_load_u32(p + MHF_SUM_SHIFT);
    out->nentries = mhf_load_u32(p + MHF_SUM_ENTRY_COUNT);
    out->entry_size = mhf_load_u32(p + MHF_SUM_ENTRY_SIZE_OFF);
    out->nposting = mhf_load_u64(p + MHF_SUM_POSTING_COUNT);
    out->entries = p + MHF_SUM_HEADER_SIZE;
    out->postings = out->entries + (size_t)out->nentries * out->entry_size;
}

/* Entry i's pc postings at q, of the section at p (file offset base_off):
 * slice indexes below nslices, strictly increasing. */
static int check_postings(const uint8_t *p, uint64_t base_off, const uint8_t *q,
                          uint32_t pc, uint32_t i, uint32_t nslices, const char *what,
                          mh_diag *d) {
    for (uint32_t k = 0; k < pc; k++) {
        uint32_t s = mhf_load_u32(q + (size_t)k * MHF_SUM_POSTING_SIZE);
        uint64_t poff =
            base_off + (uint64_t)(q - p) + (uint64_t)k * MHF_SUM_POSTING_SIZE;
        MH_CHECK(s < nslices, MH_ECORRUPT, d, poff,
                 "%s: entry %u: slice %u of a segment of %u "
                 "slices", what, i, s, nslices);
        MH_CHECK(k == 0 || s > mhf_load_u32(q + (size_t)(k - 1) *
                                                  MHF_SUM_POSTING_SIZE),
                 MH_ECORRUPT, d, poff,
                 "%s: entry %u: slice %u does not follow "
                 "slice %u", what, i, s,
                 mhf_load_u32(q + (size_t)(k - 1) * MHF_SUM_POSTING_SIZE));
    }
    return MH_OK;
}

/* min_shift: the least granule_shift of the section's type; what: its
 * name in details; postings 0: the entries' postings are left to the
 * queries that read them (a lazy view). */
static int parse(const uint8_t *p, uint64_t size, uint64_t base_off,
                 uint16_t minor, uint32_t nslices, unsigned min_shift,
                 const char *what, int postings, mh_sum_view *out, mh_diag *d) {
    int later = minor > KNOWN_MINOR;
    MH_CHECK(size >= MHF_SUM_HEADER_SIZE, MH_ECORRUPT, d, base_off,
             "%s: %llu bytes, less than its %u-byte header", what,
             (unsigned long long)size, MHF_SUM_HEADER_SIZE);
    uint32_t shift = mhf_load_u32(p + MHF_SUM_SHIFT);
    uint32_t ne = mhf_load_u32(p + MHF_SUM_ENTRY_COUNT);
    uint32_t esz = mhf_load_u32(p + MHF_SUM_ENTRY_SIZE_OFF);
    uint64_t np = mhf_load_u64(p + MHF_SUM_POSTING_COUNT);
    MH_CHECK(shift <= 63, MH_ECORRUPT, d, base_off + MHF_SUM_SHIFT,
             "%s: granule_shift %u above 63", what, shift);
    MH_CHECK(shift >= min_shift, MH_ECORRUPT, d, base_off + MHF_SUM_SHIFT,
             "%s: granule_shift %u below %u", what, shift, min_shift);
    MH_CHECK(later ? esz >= MHF_SUM_ENTRY_SIZE : esz == MHF_SUM_ENTRY_SIZE,
             MH_ECORRUPT, d, base_off + MHF_SUM_ENTRY_SIZE_OFF,
             "%s: entry_size %u, expected %s%u", what, esz,
             later ? "at least " : "", MHF_SUM_ENTRY_SIZE);
    MH_CHECK(later || (mhf_load_u32(p + MHF_SUM_RESERVED0) == 0 &&
                       mhf_load_u64(p + MHF_SUM_RESERVED1) == 0),
             MH_ECORRUPT, d, base_off + MHF_SUM_RESERVED0,
             "%s: reserved header field not zero", what);
    /* sizes in 64 bits: ne * esz < 2^64, np * 4 overflows only when np is
     * already beyond any file */
    uint64_t body = (uint64_t)ne * esz;
    uint64_t room = size - MHF_SUM_HEADER_SIZE;
    MH_CHECK(body <= room && np <= (room - body) / MHF_SUM_POSTING_SIZE,
             MH_ECORRUPT, d, base_off,
             "%s: %u entries of %u bytes and %llu postings do "
             "not fit in its %llu bytes", what, ne, esz, (unsigned long long)np,
             (unsigned long long)size);
    uint64_t need = MHF_SUM_HEADER_SIZE + body + np * MHF_SUM_POSTING_SIZE;
    MH_CHECK(later || need == size, MH_ECORRUPT, d, base_off,
             "%s: %llu bytes, its header says %llu", what,
             (unsigned long long)size, (unsigned long long)need);
    const uint8_t *ent = p + MHF_SUM_HEADER_SIZE;
    const uint8_t *post = ent + body;
    uint64_t next_first = 0, prev_g = 0;
    unsigned prev_op = 0;
    uint64_t gmax = UINT64_MAX >> shift;
    for (uint32_t i = 0; i < ne; i++) {
        const uint8_t *e = ent + (size_t)i * esz;
        uint64_t off = base_off + MHF_SUM_HEADER_SIZE + (uint64_t)i * esz;
        uint64_t g = mhf_load_u64(e + MHF_SUM_E_GRANULE);
        uint64_t pf = mhf_load_u64(e + MHF_SUM_E_POSTING_FIRST);
        uint32_t pc = mhf_load_u32(e + MHF_SUM_E_POSTING_COUNT);
        unsigned op = e[MHF_SUM_E_OP];
        MH_CHECK(op < MHF_OP_COUNT, MH_ECORRUPT, d, off + MHF_SUM_E_OP,
                 "%s: entry %u: unknown operation %u", what, i, op);
        MH_CHECK(g <= gmax, MH_ECORRUPT, d, off,
                 "%s: entry %u: granule 0x%llx beyond the address "
                 "space at shift %u", what, i, (unsigned long long)g, shift);
        MH_CHECK(later || (e[MHF_SUM_E_RESERVED] | e[MHF_SUM_E_RESERVED + 1] |
                           e[MHF_SUM_E_RESERVED + 2]) == 0,
                 MH_ECORRUPT, d, off + MHF_SUM_E_RESERVED,
                 "%s: entry %u: reserved bytes not zero", what, i);
        MH_CHECK(i == 0 || g > prev_g || (g == prev_g && op > prev_op),
                 MH_ECORRUPT, d, off,
                 "%s: entry %u (granule 0x%llx, op %u) does not "
                 "follow entry %u in (granule, op) order", what, i,
                 (unsigned long long)g, op, i - 1);
        prev_g = g;
        prev_op = op;
        MH_CHECK(pf == next_first && pc >= 1 && pc <= np - pf, MH_ECORRUPT, d,
                 off + MHF_SUM_E_POSTING_FIRST,
                 "%s: entry %u: postings [%llu, +%u) do not follow "
                 "the previous entry's (next is %llu of %llu)", what, i,
                 (unsigned long long)pf, pc, (unsigned long long)next_first,
                 (unsigned long long)np);
        next_first = pf + pc;
        if (postings)
            MH_TRY(check_postings(p, base_off, post + pf * MHF_SUM_POSTING_SIZE, pc, i,
                                  nslices, what, d));
    }
    MH_CHECK(next_first == np, MH_ECORRUPT, d, base_off + MHF_SUM_POSTING_COUNT,
             "%s: entries list %llu postings, its header %llu", what,
             (unsigned long long)next_first, (unsigned long long)np);
    fill_view(p, out);
    return MH_OK;
}

int mh_summary_parse(const uint8_t *p, uint64_t size, uint64_t base_off,
                     uint16_t minor, uint32_t nslices, mh_sum_view *out,
                     mh_diag *d) {
    /* a reader takes any shift of section 6 (2.0 did; fsck holds it to 16) */
    return parse(p, size, base_off, minor, nslices, 0, "address summary", 1,
                 out, d);
}

int mh_summary_parse_fine(const uint8_t *p, uint64_t size, uint64_t base_off,
                          uint16_t minor, uint32_t nslices, mh_sum_view *out,
                          mh_diag *d) {
    return parse(p, size, base_off, minor, nslices, MHF_SUM_FINE_SHIFT,
                 "fine address summary", 1, out, d);
}

const mh_section *mh_summary_section(const mh_seg *seg, unsigned kind) {
    const mh_section *sec;
    /* type 9 is the fine summary from 2.1 on; before, an unknown section */
    if (kind == MH_SUM_FINE &&
        !mh_section_defined(seg->major, seg->minor, MHF_SECT_SUMMARY_FINE))
        return NULL;
    return mh_seg_section(seg, kind == MH_SUM_FINE ? MHF_SECT_SUMMARY_FINE
                                                   : MHF_SECT_SUMMARY,
                          &sec) == MH_OK
               ? sec
               : NULL;
}

/* Section kind of seg checked (lazy_ok: by piece sums when they cover
 * it): 1 lazy, 0 whole, else the error, its detail prefixed. */
static int view_check(const mh_seg *seg, unsigned kind, const mh_section *sec,
                      int lazy_ok, mh_sum_view *out, mh_diag *d) {
    const char *what = kind == MH_SUM_FINE ? "fine address summary"
                                           : "address summary";
    const uint32_t type = kind == MH_SUM_FINE ? MHF_SECT_SUMMARY_FINE : MHF_SECT_SUMMARY;
    const uint8_t *p = seg->base + sec->offset;
    /* with piece sums (§9f): the pieces of the header and the entries,
     * each entry's postings when a query first reads them; the section is
     * still asked for in one read (mh_aset_check says why) */
    int lazy = lazy_ok ? mh_psum_check(seg, type, 0, 0, what, d) : 0;
    if (lazy < 0)
        return lazy;
    if (lazy) {
        mh_seg_willneed(seg, p, (size_t)sec->size);
        int rc = mh_psum_check_table(seg, type, 0, p, sec->size, MHF_SUM_HEADER_SIZE,
                                     MHF_SUM_ENTRY_COUNT, MHF_SUM_ENTRY_SIZE_OFF, what, d);
        if (rc < 0)
            return rc;
    } else {
        MH_TRY(mh_seg_section_sum(seg, sec, what, d));
    }
    int rc = parse(p, sec->size, sec->offset, seg->minor, seg->nslices,
                   kind == MH_SUM_FINE ? MHF_SUM_FINE_SHIFT : 0, what, !lazy, out, d);
    if (rc != MH_OK) {
        if (d)
            mh_diag_prefix(d, "%s at byte %llu", what,
                           (unsigned long long)sec->offset);
        return rc;
    }
    return lazy;
}

/* Makes v, of section kind of seg read by piece sums, lazy. */
static void view_lazy(mh_sum_view *v, const mh_seg *seg, unsigned kind) {
    v->lazy = seg;
    v->ptab = atomic_load_explicit(&((mh_seg *)seg)->psum, memory_order_acquire);
    v->ptype = kind == MH_SUM_FINE ? MHF_SECT_SUMMARY_FINE : MHF_SECT_SUMMARY;
    v->post_ok = atomic_load_explicit(&((mh_seg *)seg)->summary_post_ok[kind],
                                      memory_order_acquire);
}

int mh_summary_view(const mh_seg *seg, unsigned kind, mh_sum_view *out,
                    mh_diag *d) {
    const mh_section *sec = mh_summary_section(seg, kind);
    if (!sec)
        return MH_ENOTFOUND;
    mh_seg *m = (mh_seg *)seg;
    _Atomic int *ok = &m->summary_ok[kind];
    /* checked once per reader; a segment that failed is checked again on
     * each use, so each failing query says why */
    if (atomic_load_explicit(ok, memory_order_acquire)) {
        fill_view(seg->base + sec->offset, out);
        if (atomic_load_explicit(&m->summary_lazy[kind], memory_order_relaxed))
            view_lazy(out, seg, kind);
        return MH_OK;
    }
    int lazy = view_check(seg, kind, sec, 1, out, d);
    if (lazy < 0)
        return lazy;
    if (lazy) {
        /* the entries' checked bits; without them every query checks the
         * postings it reads */
        (void)mh_seg_bits(seg, &m->summary_post_ok[kind], out->nentries);
        view_lazy(out, seg, kind);
    }
    atomic_store_explicit(&m->summary_lazy[kind], lazy, memory_order_relaxed);
    atomic_store_explicit(ok, 1, memory_order_release);
    return MH_OK;
}

int mh_summary_view_whole(const mh_seg *seg, unsigned kind, mh_sum_view *out,
                          mh_diag *d) {
    const mh_section *sec = mh_summary_section(seg, kind);
    if (!sec)
        return MH_ENOTFOUND;
    int rc = view_check(seg, kind, sec, 0, out, d);
    return rc < 0 ? rc : MH_OK;
}

static inline uint32_t post_at(const uint8_t *post, uint32_t k) {
    return mhf_load_u32(post + (size_t)k * MHF_SUM_POSTING_SIZE);
}

/* The first of the increasing postings post[lo .. hi) that is s or more;
 * hi when none is. */
static inline uint32_t post_search(const uint8_t *post, uint32_t lo, uint32_t hi,
                                   uint32_t s) {
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (post_at(post, mid) < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A lazy view's entry i before a query reads its postings: their pieces,
 * then their order and bounds; remembered when the view can. */
static int entry_postings(const mh_sum_view *v, uint32_t i, mh_diag *d) {
    if (mh_bit_get(v->post_ok, i))
        return MH_OK;
    const uint8_t *e = v->entries + (size_t)i * v->entry_size;
    uint64_t pf = mhf_load_u64(e + MHF_SUM_E_POSTING_FIRST);
    uint32_t pc = mhf_load_u32(e + MHF_SUM_E_POSTING_COUNT);
    const unsigned kind = v->ptype == MHF_SECT_SUMMARY_FINE ? MH_SUM_FINE : MH_SUM_COARSE;
    const char *what = kind == MH_SUM_FINE ? "fine address summary" : "address summary";
    /* the parse checked that they lie inside the section */
    uint64_t rel = MHF_SUM_HEADER_SIZE + (uint64_t)v->nentries * v->entry_size +
                   pf * MHF_SUM_POSTING_SIZE;
    if (!mh_psum_known(v->ptab, v->ptype, rel, (uint64_t)pc * MHF_SUM_POSTING_SIZE)) {
        int rc = mh_psum_check(v->lazy, v->ptype, rel, (uint64_t)pc * MHF_SUM_POSTING_SIZE,
                               what, d);
        if (rc < 0)
            return rc;
    }
    const mh_section *sec = mh_summary_section(v->lazy, kind);
    const uint8_t *p = v->entries - MHF_SUM_HEADER_SIZE;
    int rc = check_postings(p, sec->offset, v->postings + pf * MHF_SUM_POSTING_SIZE, pc, i,
                            v->lazy->nslices, what, d);
    if (rc != MH_OK) {
        if (d)
            mh_diag_prefix(d, "%s at byte %llu", what, (unsigned long long)sec->offset);
        return rc;
    }
    mh_bit_set(v->post_ok, i);
    return MH_OK;
}

int mh_sum_iter_init(mh_sum_iter *it, const mh_sum_view *v, uint64_t a,
                     uint64_t b, uint32_t ops) {
    return mh_sum_iter_init_checked(it, v, a, b, ops, NULL);
}

int mh_sum_iter_init_checked(mh_sum_iter *it, const mh_sum_view *v, uint64_t a,
                             uint64_t b, uint32_t ops, mh_diag *d) {
    uint64_t ga = a >> v->shift, gb = b >> v->shift;
    if (gb - ga >= MH_SUM_MAX_GRANULES)
        return 0;
    /* first entry of granule >= ga */
    uint32_t lo = 0, hi = v->nentries;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *e = v->entries + (size_t)mid * v->entry_size;
        if (mhf_load_u64(e + MHF_SUM_E_GRANULE) < ga)
            lo = mid + 1;
        else
            hi = mid;
    }
    it->n = 0;
    for (uint32_t i = lo; i < v->nentries; i++) {
        const uint8_t *e = v->entries + (size_t)i * v->entry_size;
        if (mhf_load_u64(e + MHF_SUM_E_GRANULE) > gb)
            break;
        if (!(ops >> e[MHF_SUM_E_OP] & 1u))
            continue;
        if (v->lazy) {
            int rc = entry_postings(v, i, d);
            if (rc < 0)
                return rc;
        }
        /* checked: at most one entry per (granule, op) of the range */
        uint32_t n = mhf_load_u32(e + MHF_SUM_E_POSTING_COUNT);
        it->e[it->n].post =
            v->postings +
            (size_t)mhf_load_u64(e + MHF_SUM_E_POSTING_FIRST) * MHF_SUM_POSTING_SIZE;
        it->e[it->n].count = n;
        it->e[it->n].lo = 0;
        it->e[it->n].hi = n;
        it->e[it->n].op = e[MHF_SUM_E_OP];
        it->n++;
    }
    return 1;
}

uint32_t mh_sum_next(mh_sum_iter *it, uint32_t s) {
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < it->n;) {
        const uint8_t *post = it->e[i].post;
        uint32_t lo = post_search(post, it->e[i].lo, it->e[i].hi, s);
        if (lo == it->e[i].hi) { /* nothing left ahead: drop the entry */
            it->e[i] = it->e[--it->n];
            continue;
        }
        it->e[i].lo = lo;
        uint32_t c = post_at(post, lo);
        if (c < best)
            best = c;
        i++;
    }
    return best;
}

uint32_t mh_sum_prev(mh_sum_iter *it, uint32_t s) {
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < it->n;) {
        const uint8_t *post = it->e[i].post;
        /* hi: one past the last posting <= s */
        uint32_t lo = it->e[i].lo, hi = it->e[i].hi;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (post_at(post, mid) <= s)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == it->e[i].lo) {
            it->e[i] = it->e[--it->n];
            continue;
        }
        it->e[i].hi = lo;
        uint32_t c = post_at(post, lo - 1);
        if (best == UINT32_MAX || c > best)
            best = c;
        i++;
    }
    return best;
}

unsigned mh_sum_ops_at(const mh_sum_iter *it, uint32_t s, int fwd) {
    unsigned m = 0;
    for (uint32_t i = 0; i < it->n; i++) {
        /* next left each entry at its first candidate >= its s, prev at
         * its last <= (the entries with none left were dropped) */
        uint32_t at = fwd ? it->e[i].lo : it->e[i].hi - 1;
        if (at < it->e[i].count && post_at(it->e[i].post, at) == s)
            m |= 1u << it->e[i].op;
    }
    return m;
}

int mh_summary_query(const mh_seg *seg, uint64_t a, uint64_t b, uint32_t ops,
                     int coarse_only, mh_sum_iter *it, mh_diag *d) {
    /* section 9 when present (finer: fewer candidates), else section 6;
     * each with the narrow-range rule at its own shift */
    unsigned kind = MH_SUM_FINE;
    const mh_section *sec = coarse_only ? NULL : mh_summary_section(seg, kind);
    if (!sec) {
        kind = MH_SUM_COARSE;
        sec = mh_summary_section(seg, kind);
    }
    if (!sec)
        return 0;
    /* a range too wide for the summary does not read it (nor pay for its
     * check): the shift is taken unchecked only to decide that; one below
     * what its type allows decides as the least it allows, so a query
     * narrow at that shift reads the section, and is refused */
    if (sec->size >= MHF_SUM_HEADER_SIZE) {
        uint32_t shift = mhf_load_u32(seg->base + sec->offset + MHF_SUM_SHIFT);
        if (kind == MH_SUM_FINE && shift < MHF_SUM_FINE_SHIFT)
            shift = MHF_SUM_FINE_SHIFT;
        if (shift <= 63 && (b >> shift) - (a >> shift) >= MH_SUM_MAX_GRANULES)
            return 0;
    }
    mh_sum_view v;
    int rc = mh_summary_view(seg, kind, &v, d);
    if (rc == MH_ENOTFOUND)
        return 0;
    if (rc != MH_OK)
        return rc;
    return mh_sum_iter_init_checked(it, &v, a, b, ops, d);
}

/* The entry of key (granule << 2 | op), or NULL. */
static const uint8_t *find_entry(const mh_sum_view *v, uint64_t g, unsigned op) {
    uint32_t lo = 0, hi = v->nentries;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *e = v->entries + (size_t)mid * v->entry_size;
        uint64_t eg = mhf_load_u64(e + MHF_SUM_E_GRANULE);
        if (eg < g || (eg == g && e[MHF_SUM_E_OP] < op))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == v->nentries)
        return NULL;
    const uint8_t *e = v->entries + (size_t)lo * v->entry_size;
    return mhf_load_u64(e + MHF_SUM_E_GRANULE) == g && e[MHF_SUM_E_OP] == op
               ? e
               : NULL;
}

/* Whether the section lists slice s under key c (granule << 2 | op). */
static int check_key(const mh_sum_view *v, const char *what, uint32_t s,
                     uint64_t c, uint64_t base_off, mh_diag *d) {
    uint64_t g = c >> 2;
    unsigned op = (unsigned)(c & 3);
    const uint8_t *e = find_entry(v, g, op);
    if (!e)
        return mh_diag_fail(d, MH_ECORRUPT, base_off,
                            "%s: no entry for granule 0x%llx op %u, which "
                            "slice %u meets", what, (unsigned long long)g, op, s);
    const uint8_t *post =
        v->postings +
        (size_t)mhf_load_u64(e + MHF_SUM_E_POSTING_FIRST) * MHF_SUM_POSTING_SIZE;
    uint32_t cnt = mhf_load_u32(e + MHF_SUM_E_POSTING_COUNT);
    uint32_t lo = post_search(post, 0, cnt, s);
    if (lo == cnt || post_at(post, lo) != s)
        return mh_diag_fail(d, MH_ECORRUPT, base_off,
                            "%s: the entry of granule 0x%llx op %u does not "
                            "list slice %u, which meets it", what,
                            (unsigned long long)g, op, s);
    return MH_OK;
}

int mh_summary_check_slice(const mh_sum_view *v, unsigned min_shift,
                           uint32_t s, const uint64_t *keys, size_t n,
                           unsigned kshift, uint64_t base_off,
                           uint64_t *listed, mh_diag *d) {
    const char *what = min_shift < MHF_SUM_GRANULE_SHIFT ? "fine address summary"
                                                         : "address summary";
    MH_CHECK(v->shift >= min_shift, MH_ECORRUPT, d, base_off,
             "%s: granule_shift %u below %u", what, v->shift, min_shift);
    MH_CHECK(v->shift >= kshift, MH_ECORRUPT, d, base_off,
             "%s: granule_shift %u below the keys' %u", what, v->shift, kshift);
    unsigned extra = v->shift - kshift;
    /* each op's items increase (a key's granule at the section's shift
     * does not decrease), so a key met again is its op's last one: linear
     * in the keys at the section's shift, a range's granules listed there
     * only (a slice of a few huge accesses is a few ranges) */
    uint64_t last[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    uint64_t count = 0;
    int rc = MH_OK;
    for (size_t i = 0; i < n && rc == MH_OK;) {
        uint64_t a, z;
        i = mh_sum_item(keys, i, n, &a, &z);
        unsigned op = (unsigned)(a & 3);
        uint64_t ca = mh_sum_coarsen(a, extra), cz = mh_sum_coarsen(z, extra);
        if (!mh_sum_after(last[op], &ca, cz))
            continue;
        last[op] = cz;
        for (uint64_t c = ca; rc == MH_OK; c += 4) {
            rc = check_key(v, what, s, c, base_off, d);
            count++;
            if (c >= cz)
                break;
        }
    }
    if (rc == MH_OK)
        *listed = count;
    return rc;
}

void mh_sum_fsck_init(mh_sum_fsck *f) { memset(f, 0, sizeof *f); }

int mh_sum_fsck_begin(mh_sum_fsck *f, const mh_seg *seg, unsigned kind,
                      mh_diag *d) {
    int rc = mh_summary_view_whole(seg, kind, &f->k[kind].v, d);
    if (rc == MH_ENOTFOUND)
        return MH_OK;
    if (rc != MH_OK)
        return rc;
    f->k[kind].on = 1;
    f->k[kind].off = mh_summary_section(seg, kind)->offset;
    f->on = 1;
    return MH_OK;
}

/* The keys' shift: the fine one while section 9 is checked (section 6's
 * keys follow from them), else 16: a 2.0 segment's slice of huge accesses
 * is listed as its writer listed it, not 64 times over. */
static unsigned key_shift(const mh_sum_fsck *f) {
    return f->k[MH_SUM_FINE].on ? MHF_SUM_FINE_SHIFT : MHF_SUM_GRANULE_SHIFT;
}

int mh_sum_fsck_slice_begin(mh_sum_fsck *f, uint32_t nrows) {
    if (!f->on)
        return MH_OK;
    int rc = mh_sumset_begin(&f->set, &f->buf, &f->wide, nrows / 8, key_shift(f));
    if (rc != MH_OK)
        f->on = 0;
    return rc;
}

int mh_sum_fsck_slice_end(mh_sum_fsck *f, int rows_ok, mh_diag *d) {
    if (!f->on)
        return MH_OK;
    if (!rows_ok) {
        f->on = 0; /* the rows are in doubt: the totals cannot be compared */
        return MH_OK;
    }
    int rc = mh_sumset_end(&f->set, NULL);
    if (rc != MH_OK) {
        f->on = 0;
        return mh_diag_fail(d, rc, 0, "out of memory checking the address summary");
    }
    const uint64_t *k = (const uint64_t *)(const void *)f->buf.p;
    if (f->buf.n == 8 && k[0] == MH_SUM_OVERFLOW)
        f->on = 0; /* too many granules to check (the writer lists none) */
    return MH_OK;
}

int mh_sum_fsck_slice_check(mh_sum_fsck *f, unsigned kind, uint32_t si,
                            mh_diag *d) {
    if (!f->on || !f->k[kind].on)
        return MH_OK;
    uint64_t listed = 0;
    int rc = mh_summary_check_slice(
        &f->k[kind].v,
        kind == MH_SUM_FINE ? MHF_SUM_FINE_SHIFT : MHF_SUM_GRANULE_SHIFT, si,
        (const uint64_t *)(const void *)f->buf.p, f->buf.n / 8,
        f->set.gshift, f->k[kind].off, &listed, d);
    if (rc != MH_OK) {
        f->k[kind].on = 0; /* one report per section */
        f->on = f->k[0].on || f->k[1].on;
        return rc;
    }
    f->k[kind].listed += listed;
    return MH_OK;
}

int mh_sum_fsck_end(mh_sum_fsck *f, unsigned kind, mh_diag *d) {
    int on = f->on && f->k[kind].on;
    f->k[kind].on = 0;
    MH_CHECK(!on || f->k[kind].listed == f->k[kind].v.nposting, MH_ECORRUPT, d,
             f->k[kind].off,
             "%s at byte %llu: %llu postings, the slices' rows make %llu",
             kind == MH_SUM_FINE ? "fine address summary" : "address summary",
             (unsigned long long)f->k[kind].off,
             (unsigned long long)f->k[kind].v.nposting,
             (unsigned long long)f->k[kind].listed);
    return MH_OK;
}

void mh_sum_fsck_free(mh_sum_fsck *f) {
    mh_buf_free(&f->buf);
    mh_buf_free(&f->wide);
}
