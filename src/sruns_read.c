/*
 * sruns_read.c - the stream id runs' reading half (SPEC.md §9d.3, section
 * type 17, format 2.8): the section checked whole on a segment's first use
 * (its sum, header, entries, every body's header and group records), and
 * the one question the id-order walk asks: where is the run of one of
 * these streams that holds id offset x, or the next one (backward: the
 * previous one)? A group's runs are decoded with every check each time a
 * query reads them (64 runs at the most, two varints each).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int mh_sruns_section(const mh_seg *seg, const mh_section **sec) {
    if (!mh_section_defined(seg->major, seg->minor, MHF_SECT_SRUNS))
        return MH_ENOTFOUND;
    return mh_seg_section(seg, MHF_SECT_SRUNS, sec);
}

static void fill(const mh_seg *seg, const mh_section *sec, mh_sruns_view *v) {
    const uint8_t *p = seg->base + sec->offset;
    v->n = mhf_load_u32(p + MHF_SRUNS_COUNT);
    v->esz = mhf_load_u32(p + MHF_SRUNS_ENTRY_SIZE_OFF);
    v->ents = p + MHF_SRUNS_HEADER_SIZE;
    v->data = v->ents + (size_t)v->n * v->esz;
    v->off = sec->offset;
    v->data_off = sec->offset + MHF_SRUNS_HEADER_SIZE + (uint64_t)v->n * v->esz;
    v->count = seg->count;
}

#define SR_FAIL(at, ...)                                                       \
    mh_diag_fail(d, MH_ECORRUPT, (at), "stream id runs at byte %llu: " __VA_ARGS__)

/* Body of bn bytes at p (file offset off): its header and group records. */
static int parse_body(const uint8_t *p, uint64_t bn, uint64_t off, uint64_t count,
                      mh_diag *d) {
    if (bn < MHF_SRUNS_B_HEADER_SIZE)
        return SR_FAIL(off, "a body of %llu bytes, less than its header",
                       (unsigned long long)off, (unsigned long long)bn);
    uint64_t runs = mhf_load_u64(p + MHF_SRUNS_B_RUNS);
    uint32_t k = mhf_load_u32(p + MHF_SRUNS_B_K), g = mhf_load_u32(p + MHF_SRUNS_B_GROUPS);
    if (runs < 1 || runs > count || k < 1 || k > MHF_SRUNS_K_MAX ||
        g != (runs + k - 1) / k)
        return SR_FAIL(off, "%llu runs, %u a group in %u groups", (unsigned long long)off,
                       (unsigned long long)runs, k, g);
    uint64_t head = MHF_SRUNS_B_HEADER_SIZE + (uint64_t)g * MHF_SRUNS_G_SIZE;
    if (head >= bn)
        return SR_FAIL(off, "%u group records and no data in a body of %llu bytes",
                       (unsigned long long)off, g, (unsigned long long)bn);
    uint64_t data = bn - head, prev_at = 0, prev_first = 0;
    for (uint32_t i = 0; i < g; i++) {
        const uint8_t *r = p + MHF_SRUNS_B_HEADER_SIZE + (size_t)i * MHF_SRUNS_G_SIZE;
        uint64_t first = mhf_load_u64(r + MHF_SRUNS_G_FIRST), at = mhf_load_u64(r + MHF_SRUNS_G_DATA);
        uint64_t ro = off + MHF_SRUNS_B_HEADER_SIZE + (uint64_t)i * MHF_SRUNS_G_SIZE;
        if (i == 0 ? at != 0 : at <= prev_at)
            return SR_FAIL(ro, "group %u's data at %llu, after the group before it "
                           "at %llu", (unsigned long long)ro, i, (unsigned long long)at,
                           (unsigned long long)prev_at);
        if (at >= data || first >= count || (i > 0 && first <= prev_first + 1))
            return SR_FAIL(ro, "group %u: first run at %llu, data at %llu of %llu",
                           (unsigned long long)ro, i, (unsigned long long)first,
                           (unsigned long long)at, (unsigned long long)data);
        prev_at = at;
        prev_first = first;
    }
    return MH_OK;
}

static int check_body(void *ctx, const uint8_t *p, uint64_t bytes, uint64_t off, mh_diag *d) {
    const mh_seg *seg = ctx;
    return parse_body(p, bytes, off, seg->count, d);
}

static int parse(const mh_seg *seg, const mh_section *sec, mh_sruns_view *v, mh_diag *d) {
    mh_stream_table t;
    MH_TRY(mh_stream_table_parse(seg->base + sec->offset, sec->size, sec->offset,
                                 seg->minor > MHF_VERSION_MINOR, "stream id runs", check_body,
                                 (void *)seg, &t, d));
    fill(seg, sec, v);
    return MH_OK;
}

int mh_sruns_view_whole(const mh_seg *seg, mh_sruns_view *out, mh_diag *d) {
    const mh_section *sec;
    if (mh_sruns_section(seg, &sec) != MH_OK)
        return MH_ENOTFOUND;
    MH_TRY(mh_seg_section_sum(seg, sec, "stream id runs", d));
    return parse(seg, sec, out, d);
}

int mh_sruns_view_get(const mh_seg *seg, mh_sruns_view *out, mh_diag *d) {
    const mh_section *sec;
    if (mh_sruns_section(seg, &sec) != MH_OK)
        return MH_ENOTFOUND;
    mh_seg *m = (mh_seg *)seg;
    if (atomic_load_explicit(&m->sruns_ok, memory_order_acquire)) {
        fill(seg, sec, out);
        return MH_OK;
    }
    MH_TRY(mh_sruns_view_whole(seg, out, d));
    atomic_store_explicit(&m->sruns_ok, 1, memory_order_release);
    return MH_OK;
}

uint32_t mh_sruns_entry(const mh_sruns_view *v, uint32_t stream) {
    return mh_stream_table_entry(v->ents, v->n, v->esz, stream);
}

void mh_sruns_body(const mh_sruns_view *v, uint32_t e, mh_sruns_body_view *out) {
    const uint8_t *x = v->ents + (size_t)e * v->esz;
    uint64_t bo = mhf_load_u64(x + MHF_SRUNS_E_OFFSET);
    out->bytes = mhf_load_u64(x + MHF_SRUNS_E_BYTES);
    out->p = v->data + bo;
    out->off = v->data_off + bo;
    out->count = v->count;
    if (out->bytes) {
        out->runs = mhf_load_u64(out->p + MHF_SRUNS_B_RUNS);
        out->k = mhf_load_u32(out->p + MHF_SRUNS_B_K);
        out->groups = mhf_load_u32(out->p + MHF_SRUNS_B_GROUPS);
    } else {
        out->runs = out->k = out->groups = 0;
    }
}

static int varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
    const uint8_t *p = *pp;
    uint64_t x = 0;
    for (unsigned s = 0; s < 64; s += 7) {
        if (p == end)
            return -1;
        uint8_t c = *p++;
        if (s == 63 && c > 1)
            return -1;
        x |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80)) {
            *pp = p;
            *v = x;
            return 0;
        }
    }
    return -1;
}

int mh_sruns_group(const mh_sruns_body_view *b, uint32_t g, uint64_t *runs, uint32_t *n,
                   mh_diag *d) {
    const uint8_t *r = b->p + MHF_SRUNS_B_HEADER_SIZE + (size_t)g * MHF_SRUNS_G_SIZE;
    uint64_t head = MHF_SRUNS_B_HEADER_SIZE + (uint64_t)b->groups * MHF_SRUNS_G_SIZE;
    const uint8_t *data = b->p + head;
    uint64_t at = mhf_load_u64(r + MHF_SRUNS_G_DATA);
    uint64_t end_at = g + 1 < b->groups ? mhf_load_u64(r + MHF_SRUNS_G_SIZE + MHF_SRUNS_G_DATA)
                                        : b->bytes - head;
    /* the first offset of the next group: this one's runs end below it */
    uint64_t limit = g + 1 < b->groups ? mhf_load_u64(r + MHF_SRUNS_G_SIZE + MHF_SRUNS_G_FIRST) - 1
                                       : b->count;
    uint32_t want = g + 1 < b->groups ? b->k : (uint32_t)(b->runs - (uint64_t)g * b->k);
    const uint8_t *p = data + at, *end = data + end_at;
    uint64_t gop = b->off + head + at;
    uint64_t prev_b = 0;
    for (uint32_t i = 0; i < want; i++) {
        uint64_t gap, len;
        if (varint(&p, end, &gap) || varint(&p, end, &len))
            return SR_FAIL(gop, "group %u: run %u does not decode in its %llu bytes",
                           (unsigned long long)gop, g, i, (unsigned long long)(end_at - at));
        uint64_t a;
        if (i == 0) {
            a = mhf_load_u64(r + MHF_SRUNS_G_FIRST);
            if (gap)
                return SR_FAIL(gop, "group %u: its first run has gap %llu, not 0",
                               (unsigned long long)gop, g, (unsigned long long)gap);
        } else {
            if (gap > limit || prev_b + 2 > limit - gap)
                return SR_FAIL(gop, "group %u: run %u starts past the segment's ids",
                               (unsigned long long)gop, g, i);
            a = prev_b + 2 + gap;
        }
        if (len >= limit || a >= limit - len)
            return SR_FAIL(gop, "group %u: run %u [%llu, +%llu] reaches %llu or past",
                           (unsigned long long)gop, g, i, (unsigned long long)a,
                           (unsigned long long)len, (unsigned long long)limit);
        runs[2 * i] = a;
        runs[2 * i + 1] = prev_b = a + len;
    }
    if (p != end)
        return SR_FAIL(gop, "group %u: %llu bytes left after its %u runs",
                       (unsigned long long)gop, g, (unsigned long long)(end - p), want);
    *n = want;
    return MH_OK;
}

/* The last group whose first run starts at or before x; UINT32_MAX none. */
static uint32_t group_at(const mh_sruns_body_view *b, uint64_t x) {
    uint32_t lo = 0, hi = b->groups;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (mhf_load_u64(b->p + MHF_SRUNS_B_HEADER_SIZE + (size_t)mid * MHF_SRUNS_G_SIZE +
                         MHF_SRUNS_G_FIRST) <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : UINT32_MAX;
}

/* One stream's run holding x or next after it (forward) / before it
 * (backward): 1 with [*a, *b], 0 none, < 0 a group that does not decode. */
static int body_next(const mh_sruns_body_view *b, uint64_t x, int fwd, uint64_t *ra,
                     uint64_t *rb, mh_diag *d) {
    uint64_t runs[2 * MHF_SRUNS_K_DEFAULT];
    uint64_t *big = NULL;
    uint64_t *rr = runs;
    if (b->k > MHF_SRUNS_K_DEFAULT) { /* another writer's larger groups */
        big = malloc((size_t)b->k * 2 * sizeof *big);
        if (!big)
            return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory reading stream id runs");
        rr = big;
    }
    uint32_t g = group_at(b, x), n = 0;
    int rc = 0;
    if (fwd) {
        for (uint32_t h = g == UINT32_MAX ? 0 : g; h < b->groups && rc == 0; h++) {
            rc = mh_sruns_group(b, h, rr, &n, d);
            for (uint32_t i = 0; rc == 0 && i < n; i++)
                if (rr[2 * i + 1] >= x) {
                    *ra = rr[2 * i];
                    *rb = rr[2 * i + 1];
                    rc = 1;
                }
        }
    } else if (g != UINT32_MAX) {
        rc = mh_sruns_group(b, g, rr, &n, d);
        for (uint32_t i = n; rc == 0 && i-- > 0;)
            if (rr[2 * i] <= x) {
                *ra = rr[2 * i];
                *rb = rr[2 * i + 1];
                rc = 1;
            }
    }
    free(big);
    return rc;
}

int mh_sruns_next(const mh_sruns_view *v, const uint32_t *streams, uint32_t ns, uint64_t x,
                  int fwd, uint64_t *ra, uint64_t *rb, mh_diag *d) {
    int found = 0;
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t e = mh_sruns_entry(v, streams[i]);
        if (e == v->n)
            continue; /* no row of it in the segment */
        mh_sruns_body_view b;
        mh_sruns_body(v, e, &b);
        if (!b.bytes)
            return MH_ENOTFOUND; /* kept none: the walk tests every row */
        uint64_t a, z;
        int rc = body_next(&b, x, fwd, &a, &z, d);
        if (rc < 0)
            return rc;
        /* the nearest in query order (runs of distinct streams never
         * overlap) */
        if (rc && (!found || (fwd ? a < *ra : z > *rb))) {
            *ra = a;
            *rb = z;
            found = 1;
        }
    }
    return found;
}

int mh_sruns_serves(const mh_seg *seg, const uint32_t *streams, uint32_t ns, mh_diag *d) {
    mh_sruns_view v;
    int rc = mh_sruns_view_get(seg, &v, d);
    if (rc != MH_OK)
        return rc == MH_ENOTFOUND ? 0 : rc;
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t e = mh_sruns_entry(&v, streams[i]);
        if (e == v.n)
            continue; /* no row of it in the segment */
        mh_sruns_body_view b;
        mh_sruns_body(&v, e, &b);
        if (!b.bytes)
            return 0;
    }
    return 1;
}
