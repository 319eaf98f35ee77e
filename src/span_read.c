/*
 * span_read.c - the span address sets' reading half (SPEC.md §9e, section
 * type 11, format 2.3): a node of the Fenwick tree over the MANIFEST's
 * positions checked on first use (sum, or with piece sums the pieces of
 * its headers and run table; header, its place in the tree against the
 * MANIFEST, the embedded address set), and the skip walk a
 * query takes before it enters a segment: over whole runs of segments whose
 * union of address sets meets none of the query's ranges, in O(log n) node
 * checks instead of one address-set check per segment.
 *
 * The walk only excludes segments without a match (a node is the exact
 * union of its segments' sets, which fsck proves), so skipping never
 * changes an answer; a node that is absent is never a reason to skip.
 */
#include <string.h>

#include "internal.h"

/* mh_span_check, its bytes checked whole or (how MH_ASET_LAZY) by piece
 * sums when they cover the section: then *lazy is 1, the view's set lazy. */
static int span_check(const mh_seg *seg, const mh_section *sec, size_t ri,
                      const mh_manrec *recs, size_t nrecs, int how,
                      mh_span_view *out, int *lazy, mh_diag *d) {
    const uint8_t *p = seg->base + sec->offset;
    uint64_t off = sec->offset;
    int later = seg->minor > MHF_VERSION_MINOR;
    /* by piece sums: the header's piece here, the embedded set's header
     * and run table by mh_aset_check, its runs as queries decode them */
    *lazy = how == MH_ASET_LAZY ? mh_psum_check(seg, MHF_SECT_SPAN, 0, 0, "span address set", d)
                                : 0;
    if (*lazy < 0)
        return *lazy;
    if (*lazy) {
        /* asked for in one read, as mh_aset_check says why */
        mh_seg_willneed(seg, p, (size_t)sec->size);
        int rc = mh_psum_check(seg, MHF_SECT_SPAN, 0,
                               sec->size < MHF_SPAN_HEADER_SIZE ? sec->size
                                                                : MHF_SPAN_HEADER_SIZE,
                               "span address set", d);
        if (rc < 0)
            return rc;
    } else {
        MH_TRY(mh_seg_section_sum(seg, sec, "span address set", d));
    }
    MH_CHECK(sec->size >= MHF_SPAN_HEADER_SIZE, MH_ECORRUPT, d, off,
             "span address set at byte %llu: %llu bytes, less than its "
             "%u-byte header", (unsigned long long)off,
             (unsigned long long)sec->size, MHF_SPAN_HEADER_SIZE);
    uint32_t L = mhf_load_u32(p + MHF_SPAN_SEGMENTS);
    uint64_t first_seq = mhf_load_u64(p + MHF_SPAN_FIRST_SEQ);
    uint64_t acc = mhf_load_u64(p + MHF_SPAN_ACCESSES);
    MH_CHECK(later || (mhf_load_u32(p + MHF_SPAN_RESERVED0) == 0 &&
                       mhf_load_u64(p + MHF_SPAN_RESERVED1) == 0),
             MH_ECORRUPT, d, off + MHF_SPAN_RESERVED0,
             "span address set at byte %llu: reserved header field not zero",
             (unsigned long long)off);
    MH_CHECK(L >= 2 && (L & (L - 1)) == 0, MH_ECORRUPT, d, off + MHF_SPAN_SEGMENTS,
             "span address set at byte %llu: covers %u segments, not a power "
             "of two of at least 2", (unsigned long long)off, L);
    int rc = mh_aset_check(seg, sec, MHF_SECT_SPAN, MHF_SPAN_HEADER_SIZE,
                           *lazy ? MH_ASET_LAZY : MH_ASET_SUMMED, "span address set",
                           &out->set, d);
    if (rc < 0)
        return rc;
    out->segments = L;
    out->first_seq = first_seq;
    out->accesses = acc;
    /* its place: written for the segments at the positions it covers in
     * the MANIFEST its writer committed to; a header that names others is
     * a node of other positions (a MANIFEST rebuilt without a lost
     * segment), stale, whole and never used (SPEC.md §9e) */
    uint64_t k = (uint64_t)ri + 1;
    if (ri >= nrecs || L != mh_lowbit(k)) {
        mh_diag_fail(d, MH_ECORRUPT, off + MHF_SPAN_SEGMENTS,
                     "span address set at byte %llu is stale (not used): covers "
                     "%u segments, its MANIFEST position %llu covers %llu",
                     (unsigned long long)off, L, (unsigned long long)k,
                     (unsigned long long)mh_lowbit(k));
        return MH_SPAN_STALE;
    }
    size_t r0 = ri + 1 - L;
    if (first_seq != recs[r0].seq) {
        mh_diag_fail(d, MH_ECORRUPT, off + MHF_SPAN_FIRST_SEQ,
                     "span address set at byte %llu is stale (not used): "
                     "first_seq %llu, MANIFEST position %llu has seq %llu",
                     (unsigned long long)off, (unsigned long long)first_seq,
                     (unsigned long long)(r0 + 1), (unsigned long long)recs[r0].seq);
        return MH_SPAN_STALE;
    }
    uint64_t total = 0;
    for (size_t i = r0; i <= ri; i++)
        total += recs[i].count; /* the MANIFEST's sum, checked at load */
    if (acc != total) {
        mh_diag_fail(d, MH_ECORRUPT, off + MHF_SPAN_ACCESSES,
                     "span address set at byte %llu is stale (not used): "
                     "span_accesses %llu, its %u segments hold %llu",
                     (unsigned long long)off, (unsigned long long)acc, L,
                     (unsigned long long)total);
        return MH_SPAN_STALE;
    }
    return MH_OK;
}

int mh_span_check(const mh_seg *seg, const mh_section *sec, size_t ri,
                  const mh_manrec *recs, size_t nrecs, mh_span_view *out,
                  mh_diag *d) {
    int lazy;
    return span_check(seg, sec, ri, recs, nrecs, MH_ASET_WHOLE, out, &lazy, d);
}

int mh_span_section(const mh_seg *seg, const mh_section **out) {
    if (!mh_section_defined(seg->major, seg->minor, MHF_SECT_SPAN))
        return MH_ENOTFOUND; /* an older minor's unknown section */
    return mh_seg_section(seg, MHF_SECT_SPAN, out);
}

/* The node of segment ri (r's record index), checked once per reader. */
int mh_span_node(const mh_reader *r, size_t ri, mh_span_view *out,
                 const mh_seg **sp, mh_diag *d) {
    const mh_seg *seg;
    MH_TRY(mh_reader_seg(r, ri, &seg, d));
    *sp = seg;
    const mh_section *sec;
    if (mh_span_section(seg, &sec) != MH_OK)
        return MH_ENOTFOUND;
    if (atomic_load_explicit(&((mh_seg *)seg)->span_stale, memory_order_acquire))
        return MH_ENOTFOUND; /* a stale node is none */
    if (atomic_load_explicit(&((mh_seg *)seg)->span_ok, memory_order_acquire)) {
        const uint8_t *p = seg->base + sec->offset;
        out->segments = mhf_load_u32(p + MHF_SPAN_SEGMENTS);
        out->first_seq = mhf_load_u64(p + MHF_SPAN_FIRST_SEQ);
        out->accesses = mhf_load_u64(p + MHF_SPAN_ACCESSES);
        mh_aset_view_fill(p + MHF_SPAN_HEADER_SIZE,
                          sec->offset + MHF_SPAN_HEADER_SIZE, &out->set);
        if (atomic_load_explicit(&((mh_seg *)seg)->span_lazy, memory_order_relaxed))
            mh_aset_view_lazy(&out->set, seg, MHF_SECT_SPAN, MHF_SPAN_HEADER_SIZE);
        return MH_OK;
    }
    int lazy = 0;
    int rc = span_check(seg, sec, ri, r->recs, r->nsegs, MH_ASET_LAZY, out, &lazy, d);
    if (rc == MH_SPAN_STALE) { /* none, for the query: no detail kept */
        atomic_store_explicit(&((mh_seg *)seg)->span_stale, 1, memory_order_release);
        if (d) {
            d->code = 0;
            d->offset = 0;
            d->msg[0] = '\0';
        }
        return MH_ENOTFOUND;
    }
    if (rc != MH_OK) {
        if (d)
            mh_diag_prefix(d, "%s", seg->name);
        return rc;
    }
    atomic_store_explicit(&((mh_seg *)seg)->span_lazy, lazy, memory_order_relaxed);
    atomic_store_explicit(&((mh_seg *)seg)->span_ok, 1, memory_order_release);
    return MH_OK;
}

/* 1 when node q (a position) exists and no interval of ops in it meets
 * [a, b], or, for a query of streams[0 .. ns) (ns > 0), its stream node
 * (section 16, sspan_read.c) says none of them touches [a, b] there; 0
 * when neither excludes; else an error. */
static int excludes(const mh_reader *r, uint64_t q, uint64_t a, uint64_t b,
                    uint32_t ops, const uint32_t *streams, uint32_t ns, mh_diag *d) {
    mh_span_view v;
    const mh_seg *seg = NULL;
    int rc = mh_span_node(r, (size_t)(q - 1), &v, &seg, d);
    if (rc == MH_ENOTFOUND)
        return ns ? mh_sspan_excludes(r, (size_t)(q - 1), a, b, ops, streams, ns, d) : 0;
    if (rc != MH_OK)
        return rc;
    rc = mh_aset_view_meets(&v.set, seg, NULL, a, b, ops, d);
    if (rc == 1 && ns) /* some stream touched [a, b]: one of the query's? */
        return mh_sspan_excludes(r, (size_t)(q - 1), a, b, ops, streams, ns, d);
    if (rc < 0) {
        /* a piece's checksum detail names its place already */
        if (d && rc == MH_ECHECKSUM)
            mh_diag_prefix(d, "%s", seg->name);
        else if (d)
            mh_diag_prefix(d, "%s: span address set at byte %llu", seg->name,
                           (unsigned long long)(v.set.off - MHF_SPAN_HEADER_SIZE));
        return rc;
    }
    return rc == 0;
}

int mh_span_skip(const mh_reader *r, int fwd, uint64_t a, uint64_t b,
                 uint32_t ops, const uint32_t *streams, uint32_t ns, size_t lo_rec,
                 size_t hi_rec, size_t *li, mh_diag *d) {
    /* positions whose nodes may be asked: (lo_rec, hi_rec] */
    uint64_t n = hi_rec, first = lo_rec;
    uint64_t p = (uint64_t)r->live[*li] + 1;
    if (fwd) {
        /* first up the tree: the nodes holding p (its update path, p + L,
         * ...) also cover positions before p, but one that excludes
         * excludes p's side of it too. The nodes starting at p are only
         * the tree's left-aligned ones (at most mh_lowbit(p - 1) / 2 long), so
         * without the climb a walk from the middle of the store asked
         * O(log^2 n) nodes; with it, O(log n): the climb, then from its
         * top's end nodes that halve each step. A climb that meets at
         * once costs one node check and the walk goes on below. */
        uint64_t q = mh_lowbit(p) >= 2 ? p : p + 1, top = 0;
        while (q <= n) {
            int rc = excludes(r, q, a, b, ops, streams, ns, d);
            if (rc < 0)
                return rc;
            if (!rc)
                break;
            top = q;
            q += mh_lowbit(q);
        }
        if (top) {
            p = top + 1;
            if (p > n)
                return 0;
        }
        for (;;) {
            /* the largest node starting at p: position p + L - 1 with
             * lowbit L (p - 1 a multiple of 2L) */
            uint64_t L;
            if (p == 1) {
                L = 1;
                while (L <= n / 2)
                    L *= 2;
            } else {
                L = mh_lowbit(p - 1) / 2;
            }
            while (L >= 2 && p + L - 1 > n)
                L /= 2;
            int rc = 0;
            for (; L >= 2; L /= 2) {
                rc = excludes(r, p + L - 1, a, b, ops, streams, ns, d);
                if (rc < 0)
                    return rc;
                if (rc)
                    break;
            }
            if (!rc)
                break; /* enter p */
            p += L;
            if (p > n)
                return 0;
        }
        /* the first live segment at or after position p */
        size_t lo = *li, hi = r->nlive;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if ((uint64_t)r->live[mid] + 1 < p)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == r->nlive)
            return 0;
        *li = lo;
        return 1;
    }
    for (;;) {
        uint64_t L = mh_lowbit(p);
        if (L < 2 || p <= first)
            break;
        int rc = excludes(r, p, a, b, ops, streams, ns, d);
        if (rc < 0)
            return rc;
        if (!rc)
            break;
        p -= L;
        if (p == 0)
            return 0;
    }
    /* the last live segment at or before position p */
    size_t lo = 0, hi = *li + 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)r->live[mid] + 1 <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    *li = lo - 1;
    return 1;
}
