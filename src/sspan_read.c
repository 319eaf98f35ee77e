/*
 * sspan_read.c - the span stream address sets' reading half (SPEC.md
 * §9e.1, section type 16, format 2.8): a stream node of section 11's
 * Fenwick tree, checked whole on first use (its directory sum, header,
 * entries, every set's header and run table; then its place in the tree
 * against the MANIFEST, as section 11's), and the one question the skip
 * walk asks of it: do the streams of a query touch [A, B] anywhere in the
 * node's segments?
 *
 * A set's intervals are whole granules of its entry's shift, so "an
 * interval meets [A, B]" is "a granule [A, B] meets was touched": an
 * exclusion is exact at the granule, never wrong (fsck proves each set
 * against the covered segments' stream postings and address sets).
 */
#include <string.h>

#include "internal.h"

int mh_sspan_section(const mh_seg *seg, const mh_section **sec) {
    if (!mh_section_defined(seg->major, seg->minor, MHF_SECT_SSPAN))
        return MH_ENOTFOUND;
    return mh_seg_section(seg, MHF_SECT_SSPAN, sec);
}

static void fill(const mh_seg *seg, const mh_section *sec, mh_sspan_view *v) {
    const uint8_t *p = seg->base + sec->offset;
    v->segments = mhf_load_u32(p + MHF_SSPAN_SEGMENTS);
    v->n = mhf_load_u32(p + MHF_SSPAN_COUNT);
    v->first_seq = mhf_load_u64(p + MHF_SSPAN_FIRST_SEQ);
    v->accesses = mhf_load_u64(p + MHF_SSPAN_ACCESSES);
    v->esz = mhf_load_u32(p + MHF_SSPAN_ENTRY_SIZE_OFF);
    v->ents = p + MHF_SSPAN_HEADER_SIZE;
    v->data = v->ents + (size_t)v->n * v->esz;
    v->off = sec->offset;
    v->data_off = sec->offset + MHF_SSPAN_HEADER_SIZE + (uint64_t)v->n * v->esz;
    v->minor = seg->minor;
}

#define SS_FAIL(at, ...)                                                       \
    mh_diag_fail(d, MH_ECORRUPT, (at), "span stream address set at byte %llu: " \
                 __VA_ARGS__)

/* The header, the entries and every set's header and run table. */
static int parse(const mh_seg *seg, const mh_section *sec, mh_sspan_view *v,
                 mh_diag *d) {
    const uint8_t *p = seg->base + sec->offset;
    uint64_t size = sec->size, off = sec->offset;
    int later = seg->minor > MHF_VERSION_MINOR; /* the one reserved/size rule */
    if (size < MHF_SSPAN_HEADER_SIZE)
        return SS_FAIL(off, "%llu bytes, less than its %u-byte header",
                       (unsigned long long)off, (unsigned long long)size,
                       MHF_SSPAN_HEADER_SIZE);
    uint32_t L = mhf_load_u32(p + MHF_SSPAN_SEGMENTS);
    uint32_t n = mhf_load_u32(p + MHF_SSPAN_COUNT);
    uint32_t esz = mhf_load_u32(p + MHF_SSPAN_ENTRY_SIZE_OFF);
    uint64_t db = mhf_load_u64(p + MHF_SSPAN_DATA_BYTES);
    if (!later && (mhf_load_u32(p + MHF_SSPAN_RESERVED0) != 0 ||
                   mhf_load_u64(p + MHF_SSPAN_RESERVED1) != 0))
        return SS_FAIL(off + MHF_SSPAN_RESERVED0, "reserved header field not zero",
                       (unsigned long long)(off + MHF_SSPAN_RESERVED0));
    if (L < 2 || (L & (L - 1)) != 0)
        return SS_FAIL(off + MHF_SSPAN_SEGMENTS, "covers %u segments, not a power "
                       "of two of at least 2",
                       (unsigned long long)(off + MHF_SSPAN_SEGMENTS), L);
    if (n < 1 || n > (uint32_t)MH_STREAM_MAX + 1u)
        return SS_FAIL(off + MHF_SSPAN_COUNT, "%u entries, not 1 ... %u",
                       (unsigned long long)(off + MHF_SSPAN_COUNT), n,
                       (unsigned)MH_STREAM_MAX + 1u);
    if (later ? esz < MHF_SSPAN_ENTRY_SIZE : esz != MHF_SSPAN_ENTRY_SIZE)
        return SS_FAIL(off + MHF_SSPAN_ENTRY_SIZE_OFF, "entry size %u, this reader "
                       "knows %u", (unsigned long long)(off + MHF_SSPAN_ENTRY_SIZE_OFF),
                       esz, MHF_SSPAN_ENTRY_SIZE);
    uint64_t room = size - MHF_SSPAN_HEADER_SIZE;
    if ((uint64_t)n * esz > room || db != room - (uint64_t)n * esz)
        return SS_FAIL(off + MHF_SSPAN_DATA_BYTES, "%u entries of %u bytes and %llu "
                       "bytes of sets in a section of %llu bytes",
                       (unsigned long long)(off + MHF_SSPAN_DATA_BYTES), n, esz,
                       (unsigned long long)db, (unsigned long long)size);
    fill(seg, sec, v);
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = v->ents + (size_t)i * esz;
        uint64_t eo = v->off + MHF_SSPAN_HEADER_SIZE + (uint64_t)i * esz;
        uint32_t st = mhf_load_u32(e + MHF_SSPAN_E_STREAM);
        uint32_t g = mhf_load_u32(e + MHF_SSPAN_E_SHIFT);
        uint64_t so = mhf_load_u64(e + MHF_SSPAN_E_OFFSET);
        uint64_t sn = mhf_load_u64(e + MHF_SSPAN_E_BYTES);
        if (st > MH_STREAM_MAX ||
            (i > 0 && st <= mhf_load_u32(e - esz + MHF_SSPAN_E_STREAM)))
            return SS_FAIL(eo, "entry %u: stream %u, not above the entry before "
                           "it and at most %u", (unsigned long long)eo, i, st,
                           (unsigned)MH_STREAM_MAX);
        if (g == 0 ? sn != 0 : (g < MHF_SSPAN_SHIFT_MIN || g > 63 || sn == 0))
            return SS_FAIL(eo + MHF_SSPAN_E_SHIFT, "entry %u: shift %u with a set "
                           "of %llu bytes (a set has a shift of %u ... 63, none "
                           "has 0)", (unsigned long long)(eo + MHF_SSPAN_E_SHIFT),
                           i, g, (unsigned long long)sn, MHF_SSPAN_SHIFT_MIN);
        if (so != at || sn > db - at)
            return SS_FAIL(eo + MHF_SSPAN_E_OFFSET, "entry %u: set at %llu of %llu "
                           "bytes, where the sets before it end at %llu of %llu",
                           (unsigned long long)(eo + MHF_SSPAN_E_OFFSET), i,
                           (unsigned long long)so, (unsigned long long)sn,
                           (unsigned long long)at, (unsigned long long)db);
        at += sn;
        if (sn) {
            mh_aset_view s;
            int rc = mh_aset_parse(v->data + so, sn, v->data_off + so, seg->minor, &s, d);
            if (rc != MH_OK) {
                mh_diag_prefix(d, "span stream address set at byte %llu: entry %u",
                               (unsigned long long)off, i);
                return rc;
            }
        }
    }
    if (at != db)
        return SS_FAIL(off + MHF_SSPAN_DATA_BYTES, "the sets end at %llu of its "
                       "%llu bytes", (unsigned long long)(off + MHF_SSPAN_DATA_BYTES),
                       (unsigned long long)at, (unsigned long long)db);
    return MH_OK;
}

int mh_sspan_check(const mh_seg *seg, const mh_section *sec, size_t ri,
                   const mh_manrec *recs, size_t nrecs, mh_sspan_view *out,
                   mh_diag *d) {
    MH_TRY(mh_seg_section_sum(seg, sec, "span stream address set", d));
    MH_TRY(parse(seg, sec, out, d));
    /* its place, as section 11's (span_read.c): a node written for other
     * positions is stale, whole and never used (SPEC.md §9e.1) */
    uint64_t off = sec->offset, k = (uint64_t)ri + 1;
    if (ri >= nrecs || out->segments != mh_lowbit(k)) {
        mh_diag_fail(d, MH_ECORRUPT, off + MHF_SSPAN_SEGMENTS,
                     "span stream address set at byte %llu is stale (not used): "
                     "covers %u segments, its MANIFEST position %llu covers %llu",
                     (unsigned long long)off, out->segments, (unsigned long long)k,
                     (unsigned long long)mh_lowbit(k));
        return MH_SPAN_STALE;
    }
    size_t r0 = ri + 1 - out->segments;
    if (out->first_seq != recs[r0].seq) {
        mh_diag_fail(d, MH_ECORRUPT, off + MHF_SSPAN_FIRST_SEQ,
                     "span stream address set at byte %llu is stale (not used): "
                     "first_seq %llu, MANIFEST position %llu has seq %llu",
                     (unsigned long long)off, (unsigned long long)out->first_seq,
                     (unsigned long long)(r0 + 1), (unsigned long long)recs[r0].seq);
        return MH_SPAN_STALE;
    }
    uint64_t total = 0;
    for (size_t i = r0; i <= ri; i++)
        total += recs[i].count; /* the MANIFEST's sum, checked at load */
    if (out->accesses != total) {
        mh_diag_fail(d, MH_ECORRUPT, off + MHF_SSPAN_ACCESSES,
                     "span stream address set at byte %llu is stale (not used): "
                     "span_accesses %llu, its %u segments hold %llu",
                     (unsigned long long)off, (unsigned long long)out->accesses,
                     out->segments, (unsigned long long)total);
        return MH_SPAN_STALE;
    }
    return MH_OK;
}

uint32_t mh_sspan_entry(const mh_sspan_view *v, uint32_t stream) {
    uint32_t lo = 0, hi = v->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (mhf_load_u32(v->ents + (size_t)mid * v->esz + MHF_SSPAN_E_STREAM) < stream)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->n &&
                   mhf_load_u32(v->ents + (size_t)lo * v->esz + MHF_SSPAN_E_STREAM) == stream
               ? lo
               : v->n;
}

uint32_t mh_sspan_set(const mh_sspan_view *v, uint32_t e, mh_aset_view *set) {
    const uint8_t *x = v->ents + (size_t)e * v->esz;
    uint32_t g = mhf_load_u32(x + MHF_SSPAN_E_SHIFT);
    if (g) {
        uint64_t so = mhf_load_u64(x + MHF_SSPAN_E_OFFSET);
        mh_aset_view_fill(v->data + so, v->data_off + so, set);
    }
    return g;
}

/* The stream node of record index ri through r's segments, checked once
 * per reader: MH_OK, MH_ENOTFOUND (absent or stale), or an error whose
 * detail names the file. */
static int node(const mh_reader *r, size_t ri, mh_sspan_view *out,
                const mh_seg **sp, mh_diag *d) {
    const mh_seg *seg;
    MH_TRY(mh_reader_seg(r, ri, &seg, d));
    *sp = seg;
    const mh_section *sec;
    if (mh_sspan_section(seg, &sec) != MH_OK)
        return MH_ENOTFOUND;
    mh_seg *m = (mh_seg *)seg;
    if (atomic_load_explicit(&m->sspan_stale, memory_order_acquire))
        return MH_ENOTFOUND;
    if (atomic_load_explicit(&m->sspan_ok, memory_order_acquire)) {
        fill(seg, sec, out);
        return MH_OK;
    }
    int rc = mh_sspan_check(seg, sec, ri, r->recs, r->nsegs, out, d);
    if (rc == MH_SPAN_STALE) { /* none, for the query: no detail kept */
        atomic_store_explicit(&m->sspan_stale, 1, memory_order_release);
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
    atomic_store_explicit(&m->sspan_ok, 1, memory_order_release);
    return MH_OK;
}

int mh_sspan_excludes(const mh_reader *r, size_t ri, uint64_t a, uint64_t b,
                      uint32_t ops, const uint32_t *streams, uint32_t ns,
                      mh_diag *d) {
    mh_sspan_view v;
    const mh_seg *seg = NULL;
    int rc = node(r, ri, &v, &seg, d);
    if (rc == MH_ENOTFOUND)
        return 0;
    if (rc != MH_OK)
        return rc;
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t e = mh_sspan_entry(&v, streams[i]);
        if (e == v.n)
            continue; /* no row of it in the node's segments */
        mh_aset_view set;
        if (!mh_sspan_set(&v, e, &set))
            return 0; /* kept none: never excludes */
        rc = mh_aset_view_meets(&set, seg, NULL, a, b, ops, d);
        if (rc < 0) {
            if (d)
                mh_diag_prefix(d, "%s: span stream address set at byte %llu: "
                               "stream %u", seg->name, (unsigned long long)v.off,
                               streams[i]);
            return rc;
        }
        if (rc)
            return 0;
    }
    return 1;
}
