/*
 * sspan_build.c - the span stream address sets' writing half (SPEC.md
 * §9e.1, section type 16, format 2.8), and the collector fsck shares with
 * it: per stream, the granules its rows touch per op in some segments.
 *
 * A one-stream question whose answer is far away passed the segments on
 * its way one by one, since the span address sets (section 11) know no
 * stream. The stream node of position k holds, per stream with a row in
 * its L = lowbit(k) segments, those granules as an address set of whole
 * granules, so the skip walk passes a run of 2^j segments with one
 * lookup. As section 11's, the node of k is the union of the sealing
 * segment's own, of its neighbour's at k - 1 (read from its file) and of
 * the stream nodes at k - 2, k - 4, ..., k - L / 2: log2 L sections read.
 *
 * A segment's granules come from its stream postings (section 15: each
 * stream's body lists its granules at the body's shift) or, when its rows
 * are of one stream, from its address set (exact bytes, taken at the
 * finest shift). A stream whose granules some source does not give (a
 * body the writer did not keep) gets an entry without a set, which never
 * excludes; a segment giving nothing at all means no node.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One granule run of one stream and op, in bytes. */
typedef struct sitem {
    uint64_t lo, hi;
    uint32_t stream, op;
} sitem;

#define NSTREAMS ((size_t)MH_STREAM_MAX + 1u)

struct mh_sspan_col {
    sitem *it;
    size_t n, cap;
    /* per stream id: 0 absent, else the largest shift of its sources (at
     * least MHF_SSPAN_SHIFT_MIN); noset: a source had none of its */
    uint8_t *shift, *noset;
    /* the finished pairs of one stream, per op */
    uint64_t *pairs[MHF_OP_COUNT];
    size_t pcap[MHF_OP_COUNT];
};

int mh_sspan_col_create(mh_sspan_col **out) {
    mh_sspan_col *c = calloc(1, sizeof *c);
    if (c) {
        c->shift = calloc(NSTREAMS, 1);
        c->noset = calloc(NSTREAMS, 1);
    }
    if (!c || !c->shift || !c->noset) {
        mh_sspan_col_destroy(c);
        *out = NULL;
        return MH_ENOMEM;
    }
    *out = c;
    return MH_OK;
}

void mh_sspan_col_destroy(mh_sspan_col *c) {
    if (!c)
        return;
    free(c->it);
    free(c->shift);
    free(c->noset);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        free(c->pairs[o]);
    free(c);
}

/* Stream t is listed, its granules at g or finer. */
static void see(mh_sspan_col *c, uint32_t t, uint32_t g) {
    if (g < MHF_SSPAN_SHIFT_MIN)
        g = MHF_SSPAN_SHIFT_MIN;
    if (c->shift[t] < g)
        c->shift[t] = (uint8_t)g;
}

static int push(mh_sspan_col *c, uint32_t t, unsigned op, uint64_t lo, uint64_t hi) {
    if (c->n) { /* a source gives its runs in order: extend the last one */
        sitem *l = &c->it[c->n - 1];
        if (l->stream == t && l->op == op && lo >= l->lo &&
            (l->hi == UINT64_MAX || lo <= l->hi + 1u)) {
            if (hi > l->hi)
                l->hi = hi;
            return MH_OK;
        }
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        sitem *p = realloc(c->it, cap * sizeof *p);
        if (!p)
            return MH_ENOMEM;
        c->it = p;
        c->cap = cap;
    }
    c->it[c->n++] = (sitem){lo, hi, t, op};
    return MH_OK;
}

int mh_sspan_col_none(mh_sspan_col *c, uint32_t stream) {
    if (stream > MH_STREAM_MAX)
        return MH_EINVAL;
    see(c, stream, 0);
    c->noset[stream] = 1;
    return MH_OK;
}

int mh_sspan_col_pairs(mh_sspan_col *c, uint32_t stream, uint32_t shift, unsigned op,
                       const uint64_t *pairs, size_t n) {
    if (stream > MH_STREAM_MAX)
        return MH_EINVAL;
    see(c, stream, shift);
    for (size_t i = 0; i < n; i++)
        MH_TRY(push(c, stream, op, pairs[2 * i], pairs[2 * i + 1]));
    return MH_OK;
}

int mh_sspan_col_aset(mh_sspan_col *c, uint32_t stream, uint32_t shift,
                      const mh_aset_view *v, mh_diag *d) {
    if (stream > MH_STREAM_MAX)
        return MH_EINVAL;
    see(c, stream, shift);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        for (uint32_t r = 0; r < v->run_count[o]; r++) {
            mh_aset_cur cur;
            mh_aset_run_open(v, o, r, &cur);
            int rc;
            while ((rc = mh_aset_run_step(&cur, d)) == 1)
                MH_TRY(push(c, stream, o, cur.lo, cur.hi));
            if (rc < 0)
                return rc;
        }
    return MH_OK;
}

/* Every key of a body (a section 10 view) as its granule's bytes. */
static int add_body(mh_sspan_col *c, uint32_t t, const mh_apost_view *v, mh_diag *d) {
    see(c, t, v->shift);
    uint64_t mask = v->shift >= 64 ? UINT64_MAX : (UINT64_C(1) << v->shift) - 1u;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        for (uint32_t r = 0; r < v->run_count[o]; r++) {
            mh_apost_cur cur;
            mh_apost_run_open(v, o, r, &cur);
            uint32_t n;
            int rc;
            while ((rc = mh_apost_run_step(&cur, NULL, NULL, &n, d)) == 1) {
                uint64_t lo = cur.w << v->shift;
                MH_TRY(push(c, t, o, lo, lo | mask));
            }
            if (rc < 0)
                return rc;
        }
    return MH_OK;
}

int mh_sspan_col_spost(mh_sspan_col *c, const mh_spost_view *v, mh_diag *d) {
    for (uint32_t e = 0; e < v->n; e++) {
        uint32_t t = mhf_load_u32(v->ents + (size_t)e * v->esz + MHF_SPOST_E_STREAM);
        mh_apost_view b;
        int has = mh_spost_body(v, t, &b);
        if (has > 0)
            MH_TRY(add_body(c, t, &b, d));
        else
            MH_TRY(mh_sspan_col_none(c, t));
    }
    return MH_OK;
}

int mh_sspan_col_node(mh_sspan_col *c, const mh_sspan_view *v, mh_diag *d) {
    for (uint32_t e = 0; e < v->n; e++) {
        uint32_t t = mhf_load_u32(v->ents + (size_t)e * v->esz + MHF_SSPAN_E_STREAM);
        mh_aset_view set;
        uint32_t g = mh_sspan_set(v, e, &set);
        if (g)
            MH_TRY(mh_sspan_col_aset(c, t, g, &set, d));
        else
            MH_TRY(mh_sspan_col_none(c, t));
    }
    return MH_OK;
}

int mh_sspan_col_segment(mh_sspan_col *c, const mh_seg *s, mh_diag *d) {
    mh_spost_view sp;
    int rc = mh_spost_view_whole(s, &sp, d);
    if (rc == MH_OK)
        return mh_sspan_col_spost(c, &sp, d);
    if (rc != MH_ENOTFOUND)
        return rc;
    /* no stream postings: a segment of one stream gives its address set */
    uint32_t t = 0, k = 0;
    for (size_t i = 0; i < s->dict.nstreams; i++)
        if (s->dict.streams[i].count) {
            t = s->dict.streams[i].id;
            k++;
        }
    if (k == 0)
        return MH_OK; /* no row */
    if (k > 1 || !mh_section_defined(s->major, s->minor, MHF_SECT_ASET))
        return MH_ENOTFOUND;
    mh_aset_view v;
    MH_TRY(mh_aset_view_whole(s, &v, d));
    return mh_sspan_col_aset(c, t, MHF_SSPAN_SHIFT_MIN, &v, d);
}

static int cmp_item(const void *x, const void *y) {
    const sitem *a = x, *b = y;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

void mh_sspan_col_sort(mh_sspan_col *c) {
    qsort(c->it, c->n, sizeof *c->it, cmp_item);
}

uint32_t mh_sspan_col_shift(const mh_sspan_col *c, uint32_t stream, int *noset) {
    *noset = c->noset[stream];
    return c->shift[stream];
}

uint32_t mh_sspan_col_next(const mh_sspan_col *c, uint32_t stream) {
    for (uint32_t t = stream; t <= MH_STREAM_MAX; t++)
        if (c->shift[t])
            return t;
    return UINT32_MAX;
}

int mh_sspan_col_stream(mh_sspan_col *c, size_t *at, uint32_t stream, uint32_t g,
                        const uint64_t *pairs[MHF_OP_COUNT], size_t n[MHF_OP_COUNT]) {
    uint64_t mask = g >= 64 ? UINT64_MAX : (UINT64_C(1) << g) - 1u;
    size_t i = *at;
    while (i < c->n && c->it[i].stream < stream)
        i++;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        size_t m = 0;
        for (; i < c->n && c->it[i].stream == stream && c->it[i].op == o; i++) {
            uint64_t lo = c->it[i].lo & ~mask, hi = c->it[i].hi | mask;
            uint64_t *p = c->pairs[o];
            if (m && (p[2 * m - 1] == UINT64_MAX || lo <= p[2 * m - 1] + 1u)) {
                if (hi > p[2 * m - 1])
                    p[2 * m - 1] = hi;
                continue;
            }
            if (m == c->pcap[o]) {
                size_t cap = m ? m * 2 : 256;
                uint64_t *q = realloc(c->pairs[o], cap * 2 * sizeof *q);
                if (!q)
                    return MH_ENOMEM;
                c->pairs[o] = q;
                c->pcap[o] = cap;
                p = q;
            }
            p[2 * m] = lo;
            p[2 * m + 1] = hi;
            m++;
        }
        pairs[o] = c->pairs[o];
        n[o] = m;
    }
    *at = i;
    return MH_OK;
}

/* The section's bytes for the collected streams, each set at least at
 * shift floor: MH_OK (appended), 1 over budget, or MH_ENOMEM. */
static int encode(mh_sspan_col *c, uint32_t L, uint64_t first_seq, uint64_t accesses,
                  uint32_t floor, mh_buf *out) {
    uint32_t n = 0;
    for (uint32_t t = mh_sspan_col_next(c, 0); t != UINT32_MAX;
         t = t == MH_STREAM_MAX ? UINT32_MAX : mh_sspan_col_next(c, t + 1))
        n++;
    if (n == 0)
        return 1; /* nothing to say */
    size_t start = out->n;
    size_t ents = start + MHF_SSPAN_HEADER_SIZE;
    MH_TRY(mh_buf_reserve(out, MHF_SSPAN_HEADER_SIZE + (size_t)n * MHF_SSPAN_ENTRY_SIZE));
    memset(out->p + start, 0, MHF_SSPAN_HEADER_SIZE + (size_t)n * MHF_SSPAN_ENTRY_SIZE);
    out->n = ents + (size_t)n * MHF_SSPAN_ENTRY_SIZE;
    size_t data = out->n;
    /* the address set's budget on the accesses covered, and a set's
     * header, entry and a run or two per stream */
    uint64_t budget = accesses / 16u + 4096u + (uint64_t)n * MHF_SSPAN_STREAM_BYTES;
    size_t at = 0;
    uint32_t e = 0;
    int rc = MH_OK;
    for (uint32_t t = mh_sspan_col_next(c, 0); t != UINT32_MAX && rc == MH_OK;
         t = t == MH_STREAM_MAX ? UINT32_MAX : mh_sspan_col_next(c, t + 1), e++) {
        int noset;
        uint32_t g = mh_sspan_col_shift(c, t, &noset);
        if (g < floor)
            g = floor;
        size_t before = out->n;
        if (!noset) {
            const uint64_t *pairs[MHF_OP_COUNT];
            size_t np[MHF_OP_COUNT];
            rc = mh_sspan_col_stream(c, &at, t, g, pairs, np);
            if (rc == MH_OK)
                rc = mh_aset_encode(pairs, np, MHF_SPAN_K, out);
        }
        uint8_t *x = out->p + ents + (size_t)e * MHF_SSPAN_ENTRY_SIZE;
        mhf_store_u32(x + MHF_SSPAN_E_STREAM, t);
        mhf_store_u32(x + MHF_SSPAN_E_SHIFT, noset ? 0 : g);
        mhf_store_u64(x + MHF_SSPAN_E_OFFSET, before - data);
        mhf_store_u64(x + MHF_SSPAN_E_BYTES, out->n - before);
        if (rc == MH_OK && out->n - data > budget)
            rc = 1;
    }
    if (rc != MH_OK) {
        out->n = start;
        return rc == MH_EINVAL ? 1 : rc; /* more runs than a u32 counts */
    }
    uint8_t *h = out->p + start;
    mhf_store_u32(h + MHF_SSPAN_SEGMENTS, L);
    mhf_store_u32(h + MHF_SSPAN_COUNT, n);
    mhf_store_u64(h + MHF_SSPAN_FIRST_SEQ, first_seq);
    mhf_store_u64(h + MHF_SSPAN_ACCESSES, accesses);
    mhf_store_u32(h + MHF_SSPAN_ENTRY_SIZE_OFF, MHF_SSPAN_ENTRY_SIZE);
    mhf_store_u64(h + MHF_SSPAN_DATA_BYTES, out->n - data);
    return MH_OK;
}

/* Child at position q (record q - 1) of size lowbit(q) into c: a
 * segment's own granules (size 1) or its stream node. MH_OK, or any
 * failure (then no node). */
static int add_child(mh_sspan_col *c, const char *dir, const mh_manrec *recs,
                     size_t nrecs, uint64_t q) {
    const mh_manrec *rec = &recs[q - 1];
    uint64_t size = mh_lowbit(q);
    if (size == 1 && rec->count == 0)
        return MH_OK;
    mh_seg seg;
    mh_diag d = {0, 0, ""}; /* not reported: a child failing means no node */
    int rc = mh_store_seg_open_rec(dir, rec, &seg, &d);
    if (rc != MH_OK)
        return rc;
    if (size == 1) {
        rc = mh_sspan_col_segment(c, &seg, &d);
    } else {
        const mh_section *sec;
        mh_sspan_view v;
        rc = mh_sspan_section(&seg, &sec);
        if (rc == MH_OK)
            rc = mh_sspan_check(&seg, sec, (size_t)(q - 1), recs, nrecs, &v, &d);
        if (rc == MH_OK)
            rc = mh_sspan_col_node(c, &v, &d);
        else if (rc > 0)
            rc = MH_ENOTFOUND; /* stale */
    }
    mh_seg_close(&seg);
    return rc;
}

/* The own segment's granules: its section 15 bytes as a view (the writer
 * wrote them a moment ago), or its one stream's address set. */
static int add_own(mh_sspan_col *c, const mh_sspan_own *own) {
    if (own->count == 0)
        return MH_OK;
    if (own->spost) {
        const uint8_t *p = own->spost;
        mh_spost_view v = {0};
        v.n = mhf_load_u32(p + MHF_SPOST_COUNT);
        v.esz = mhf_load_u32(p + MHF_SPOST_ENTRY_SIZE_OFF);
        v.nslices = own->nslices;
        v.ents = p + MHF_SPOST_HEADER_SIZE;
        v.data = v.ents + (size_t)v.n * v.esz;
        v.data_off = MHF_SPOST_HEADER_SIZE + (uint64_t)v.n * v.esz;
        return mh_sspan_col_spost(c, &v, NULL);
    }
    if (own->nstreams != 1 || !own->have_one)
        return MH_ENOTFOUND;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        MH_TRY(mh_sspan_col_pairs(c, own->one_stream, MHF_SSPAN_SHIFT_MIN, o,
                                  own->one[o], own->none[o]));
    return MH_OK;
}

int mh_sspan_build(const char *dir, const mh_manrec *recs, size_t ri,
                   const mh_sspan_own *own, mh_buf *out) {
    uint64_t k = (uint64_t)ri + 1, L = mh_lowbit(k);
    if (L < 2 || L > UINT32_MAX)
        return MH_OK;
    uint64_t accesses = own->count;
    for (size_t i = ri + 1 - L; i < ri; i++)
        accesses += recs[i].count;
    mh_sspan_col *c;
    MH_TRY(mh_sspan_col_create(&c));
    int rc = add_own(c, own);
    for (uint64_t s = 1; rc == MH_OK && s < L; s *= 2)
        rc = add_child(c, dir, recs, ri, k - s);
    if (rc == MH_OK) {
        mh_sspan_col_sort(c);
        /* coarser, SHIFT_STEP bits at a time, while over its budget */
        rc = 1;
        for (uint32_t floor = MHF_SSPAN_SHIFT_MIN; rc == 1 && floor <= MHF_SSPAN_SHIFT_LAST;
             floor += MHF_SSPAN_SHIFT_STEP)
            rc = encode(c, (uint32_t)L, recs[ri + 1 - L].seq, accesses, floor, out);
    }
    mh_sspan_col_destroy(c);
    return rc == MH_ENOMEM ? MH_ENOMEM : MH_OK; /* else no node, or one */
}
