/*
 * spost_read.c - the stream address postings' reading half (SPEC.md
 * "Stream address postings", section type 15, format 2.7): the section
 * checked whole on a segment's first use (its sum, header, entries and
 * every body's header and run table), and the one question a query with
 * a few streams asks: which slices of this segment have a row of one of
 * its streams and operations meeting [A, B]?
 *
 * Section 15 is not covered by the piece sums: it is small (a 4 KiB first
 * shift) and only a stream-filtered query reads it, so its directory sum
 * is checked whole. A body is a section 10 (apost_read.c parses it and
 * decodes its runs, with every check, each time a query reads them).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int mh_spost_section(const mh_seg *seg, const mh_section **sec) {
    if (!mh_section_defined(seg->major, seg->minor, MHF_SECT_SPOST))
        return MH_ENOTFOUND;
    return mh_seg_section(seg, MHF_SECT_SPOST, sec);
}

static void fill(const mh_seg *seg, const mh_section *sec, mh_spost_view *v) {
    const uint8_t *p = seg->base + sec->offset;
    v->n = mhf_load_u32(p + MHF_SPOST_COUNT);
    v->esz = mhf_load_u32(p + MHF_SPOST_ENTRY_SIZE_OFF);
    v->ents = p + MHF_SPOST_HEADER_SIZE;
    v->data = v->ents + (size_t)v->n * v->esz;
    v->off = sec->offset;
    v->data_off = sec->offset + MHF_SPOST_HEADER_SIZE + (uint64_t)v->n * v->esz;
    v->nslices = seg->nslices;
}

/* A body: a section 10 whose header and run table parse. */
static int check_body(void *ctx, const uint8_t *p, uint64_t bytes, uint64_t off, mh_diag *d) {
    const mh_seg *seg = ctx;
    mh_apost_view b;
    return mh_apost_parse(p, bytes, off, seg->minor, seg->nslices, &b, d);
}

/* The header, the entries and every body's header and run table. */
static int parse(const mh_seg *seg, const mh_section *sec, mh_spost_view *v,
                 mh_diag *d) {
    mh_stream_table t;
    MH_TRY(mh_stream_table_parse(seg->base + sec->offset, sec->size, sec->offset,
                                 seg->minor > MHF_VERSION_MINOR, "stream postings", check_body,
                                 (void *)seg, &t, d));
    fill(seg, sec, v);
    return MH_OK;
}

int mh_spost_view_whole(const mh_seg *seg, mh_spost_view *out, mh_diag *d) {
    const mh_section *sec;
    if (mh_spost_section(seg, &sec) != MH_OK)
        return MH_ENOTFOUND;
    MH_TRY(mh_seg_section_sum(seg, sec, "stream postings", d));
    return parse(seg, sec, out, d);
}

int mh_spost_view_get(const mh_seg *seg, mh_spost_view *out, mh_diag *d) {
    const mh_section *sec;
    if (mh_spost_section(seg, &sec) != MH_OK)
        return MH_ENOTFOUND;
    mh_seg *m = (mh_seg *)seg;
    /* checked once per reader; a segment that failed is checked again on
     * each use, so each failing query says why */
    if (atomic_load_explicit(&m->spost_ok, memory_order_acquire)) {
        fill(seg, sec, out);
        return MH_OK;
    }
    MH_TRY(mh_spost_view_whole(seg, out, d));
    atomic_store_explicit(&m->spost_ok, 1, memory_order_release);
    return MH_OK;
}

uint32_t mh_spost_entry(const mh_spost_view *v, uint32_t stream) {
    return mh_stream_table_entry(v->ents, v->n, v->esz, stream);
}

int mh_spost_body(const mh_spost_view *v, uint32_t stream, mh_apost_view *out) {
    uint32_t e = mh_spost_entry(v, stream);
    if (e == v->n)
        return 0;
    const uint8_t *x = v->ents + (size_t)e * v->esz;
    uint64_t bo = mhf_load_u64(x + MHF_SPOST_E_OFFSET);
    uint64_t bn = mhf_load_u64(x + MHF_SPOST_E_BYTES);
    if (bn == 0)
        return -1;
    mh_apost_view_fill(v->data + bo, v->data_off + bo, v->nslices, out);
    return 1;
}

/* The last run of op o whose first granule is at or before w, else its
 * first: its index within the op. */
static uint32_t run_at(const mh_apost_view *b, unsigned o, uint64_t w) {
    uint32_t lo = 0, hi = b->run_count[o];
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *r = b->runs + (size_t)(b->run_first[o] + mid) * b->run_size;
        if (mhf_load_u64(r + MHF_APOST_R_GRANULE) <= w)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ORs into bits the postings of body b's keys (o, w), wa <= w <= wb. */
static int body_or(const mh_apost_view *b, unsigned o, uint64_t wa, uint64_t wb,
                   uint64_t *bits, mh_diag *d) {
    for (uint32_t r = run_at(b, o, wa); r < b->run_count[o]; r++) {
        const uint8_t *rec = b->runs + (size_t)(b->run_first[o] + r) * b->run_size;
        if (mhf_load_u64(rec + MHF_APOST_R_GRANULE) > wb)
            break;
        mh_apost_cur c;
        mh_apost_run_open(b, o, r, &c);
        for (;;) {
            uint32_t n;
            int rc = mh_apost_run_step_in(&c, wa, wb, bits, &n, d);
            if (rc < 0)
                return rc; /* the question fails: bits are not used */
            if (rc == 0 || c.w > wb)
                break;
        }
    }
    return MH_OK;
}

/* Bytes of body b's runs holding keys (o, w), wa <= w <= wb, o in ops: what
 * body_or would read (its whole runs, as it decodes them). */
static uint64_t body_volume(const mh_apost_view *b, uint32_t ops, uint64_t wa, uint64_t wb) {
    uint64_t v = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        if (!(ops >> o & 1u) || b->run_count[o] == 0)
            continue;
        for (uint32_t r = run_at(b, o, wa); r < b->run_count[o]; r++) {
            const uint8_t *rec = b->runs + (size_t)(b->run_first[o] + r) * b->run_size;
            if (mhf_load_u64(rec + MHF_APOST_R_GRANULE) > wb)
                break;
            v += mhf_load_u32(rec + MHF_APOST_R_BYTES);
        }
    }
    return v;
}

int mh_spost_query(const mh_seg *seg, uint64_t a, uint64_t b, uint32_t ops,
                   const uint32_t *streams, uint32_t ns, mh_apost_iter *it,
                   uint64_t **scratch, size_t *scratch_cap, mh_diag *d) {
    if (ns == 0 || ns > MHF_SPOST_QUERY_STREAMS || a > b)
        return 0;
    mh_spost_view v;
    int rc = mh_spost_view_get(seg, &v, d);
    if (rc == MH_ENOTFOUND)
        return 0;
    if (rc != MH_OK)
        return rc;
    /* every stream's body must serve the range (or the stream has no row
     * in the segment): else the section does not serve this query. Each
     * body is found again below (a binary search over the entries) rather
     * than kept: 64 views on the stack were 16 KiB of frame */
    mh_apost_view body;
    uint32_t nb = 0, shift = MHF_SPOST_SHIFT_DEFAULT;
    uint64_t volume = 0; /* the postings the candidates would be made from */
    for (uint32_t i = 0; i < ns; i++) {
        int got = mh_spost_body(&v, streams[i], &body);
        if (got < 0)
            return 0;
        if (got == 0)
            continue;
        uint64_t span = (b >> body.shift) - (a >> body.shift);
        if (span >= MHF_SPOST_SPAN)
            return 0;
        /* a narrower range is left out: its few keys' postings are few
         * (a key's are at most a bitmap of the segment's slices), and the
         * sum would cost point and page questions its run searches */
        if (span >= MH_SPOST_VOLUME_SPAN) {
            volume += body_volume(&body, ops, a >> body.shift, b >> body.shift);
            if (volume > MH_SPOST_VOLUME_MAX)
                return 0;
        }
        shift = nb++ ? shift : body.shift;
    }
    MH_TRY(mh_apost_iter_init(it, seg->nslices, ops, shift, scratch, scratch_cap, d));
    for (uint32_t i = 0; nb && i < ns; i++) {
        if (mh_spost_body(&v, streams[i], &body) != 1)
            continue;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
            if (!(ops >> o & 1u) || body.run_count[o] == 0)
                continue;
            rc = body_or(&body, o, a >> body.shift, b >> body.shift,
                         (uint64_t *)(uintptr_t)it->op_bits[o], d);
            if (rc != MH_OK)
                return rc;
        }
    }
    mh_apost_iter_union(it, ops);
    return 1;
}

void mh_spost_and(mh_apost_iter *x, const mh_apost_iter *y, uint32_t ops) {
    size_t words = ((size_t)x->nslices + 63) / 64;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint64_t *xo = (uint64_t *)(uintptr_t)x->op_bits[o];
        if (!(ops >> o & 1u))
            continue;
        for (size_t i = 0; i < words; i++)
            xo[i] &= y->op_bits[o][i];
    }
    mh_apost_iter_union(x, ops);
}
