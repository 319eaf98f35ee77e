/*
 * spost_build.c - the stream address postings' writing half (SPEC.md
 * "Stream address postings", section type 15, format 2.7).
 *
 * A query restricted to a few streams of a multi-stream segment (a thread,
 * a CPU) used to find its candidate slices with indexes that know no
 * stream: on 64 threads, a page of one thread's stack asked for another
 * thread walked every slice the page's owner touched, decoding chunks
 * whose rows were all someone else's. Section 15 holds, per stream, a
 * whole section 10 (§9d) over that stream's rows only, at a coarse first
 * shift (4 KiB), so such a question is answered from the postings.
 *
 * The builder (mh_spost_slice_ranges, called by form_chunks with an op's
 * rows in address order) gives each stream of a multi-stream slice its
 * merged ranges per op in one walk. The segment side keeps one address
 * postings accumulator per stream (apost_build.c, its first shift set to
 * MHF_SPOST_SHIFT_DEFAULT) and serializes each at seal as a body.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One merged range of one stream (its slot in the slice's streams) and op. */
typedef struct sp_range {
    uint64_t lo, hi;
    uint32_t k, op;
} sp_range;

void mh_spost_slice_ranges(mh_builder *w, const mh_rec *a, const uint64_t *ord,
                           uint32_t m, unsigned op) {
    uint32_t ns = w->nstreams;
    if (!w->spost || w->sp_lost || ns < 2 || m == 0 || !w->stream_slot)
        return;
    if (w->sp_cap < ns) {
        uint64_t *p = realloc(w->sp_open, (size_t)ns * 2 * sizeof *p);
        if (!p) {
            w->sp_lost = 1;
            return;
        }
        w->sp_open = p;
        w->sp_cap = ns;
    }
    uint64_t *lo = w->sp_open, *hi = w->sp_open + ns;
    uint8_t started[MHF_SPOST_STREAMS_MAX];
    if (ns > MHF_SPOST_STREAMS_MAX) {
        w->sp_lost = 1; /* the segment gets none (mh_spost_acc_add) */
        return;
    }
    memset(started, 0, ns);
    /* locals: the appends below would otherwise make the compiler load
     * these again for every row */
    uint32_t *slot = w->stream_slot;
    mh_buf *iv = &w->sp_iv;
    for (uint32_t k = 0; k < ns; k++)
        slot[w->streams[k].stream] = k;
    int rc = MH_OK;
    for (uint32_t i = 0; i < m; i++) {
        if (i + MH_GATHER_AHEAD < m)
            mh_prefetch_rec(&a[(uint32_t)ord[i + MH_GATHER_AHEAD]]);
        const mh_rec *x = &a[(uint32_t)ord[i]];
        uint32_t k = slot[x->stream];
        uint64_t end = x->physical + (x->size - 1u);
        if (started[k] && (hi[k] == UINT64_MAX || x->physical <= hi[k] + 1u)) {
            if (end > hi[k])
                hi[k] = end;
            continue;
        }
        if (started[k]) {
            sp_range r = {lo[k], hi[k], k, op};
            rc = mh_buf_append(iv, &r, sizeof r);
            if (rc != MH_OK)
                break;
        }
        started[k] = 1;
        lo[k] = x->physical;
        hi[k] = end;
    }
    for (uint32_t k = 0; k < ns && rc == MH_OK; k++)
        if (started[k]) {
            sp_range r = {lo[k], hi[k], k, op};
            rc = mh_buf_append(iv, &r, sizeof r);
        }
    for (uint32_t k = 0; k < ns; k++)
        slot[w->streams[k].stream] = UINT32_MAX;
    if (rc != MH_OK)
        w->sp_lost = 1;
}

/* ---- the segment's side ---------------------------------------------- */

typedef struct sp_stream {
    uint32_t stream;
    uint32_t first_slice; /* the first slice with a row of it */
    uint32_t stamp;       /* the slice being added + 1: it is in it */
    uint64_t rows;        /* so far */
    mh_apost_acc *acc;
} sp_stream;

struct mh_spost_acc {
    int lost;          /* no section this segment (memory, too many streams) */
    /* the segment's rows so far are of two streams or more; until then
     * nothing is kept but the one stream's id and rows: its slices' ranges
     * are the address postings' own (mh_apost_acc_slice_ranges), taken
     * from them when a second stream comes, so a one-stream segment (every
     * lackey trace) costs nothing */
    int multi;
    uint32_t solo;     /* the one stream before multi (UINT32_MAX: none yet) */
    uint64_t solo_rows;
    uint32_t nslices;  /* added so far */
    sp_stream *st;     /* in first-appearance order */
    uint32_t nst, cap;
    uint32_t *idx;     /* stream id -> index in st + 1 (0: none), 65536 */
    mh_buf pairs;      /* scratch: one stream's pairs for one slice */
};

int mh_spost_acc_create(mh_spost_acc **out) {
    *out = calloc(1, sizeof **out);
    if (!*out)
        return MH_ENOMEM;
    (*out)->solo = UINT32_MAX;
    return MH_OK;
}

static void lose(mh_spost_acc *s) {
    for (uint32_t i = 0; i < s->nst; i++)
        mh_apost_acc_destroy(s->st[i].acc);
    free(s->st);
    s->st = NULL;
    s->nst = s->cap = 0;
    mh_buf_free(&s->pairs);
    s->lost = 1;
}

void mh_spost_acc_destroy(mh_spost_acc *s) {
    if (!s)
        return;
    lose(s);
    free(s->idx);
    free(s);
}

static const uint32_t no_pairs[MHF_OP_COUNT] = {0, 0, 0};

/* The index of stream id in s->st, made (with the slices before this one
 * added empty) on its first appearance; UINT32_MAX when out of room. */
static uint32_t stream_at(mh_spost_acc *s, uint32_t id) {
    if (!s->idx) {
        s->idx = calloc((size_t)MH_STREAM_MAX + 1, sizeof *s->idx);
        if (!s->idx)
            return UINT32_MAX;
    }
    if (s->idx[id])
        return s->idx[id] - 1;
    if (s->nst == MHF_SPOST_STREAMS_MAX)
        return UINT32_MAX;
    if (s->nst == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 8;
        sp_stream *p = realloc(s->st, cap * sizeof *p);
        if (!p)
            return UINT32_MAX;
        s->st = p;
        s->cap = cap;
    }
    sp_stream *x = &s->st[s->nst];
    memset(x, 0, sizeof *x);
    x->stream = id;
    x->first_slice = s->nslices;
    if (mh_apost_acc_create(&x->acc, 0) != MH_OK)
        return UINT32_MAX;
    mh_apost_acc_set_shifts(x->acc, MHF_SPOST_SHIFT_DEFAULT, MHF_SPOST_SHIFT_LAST);
    uint64_t dummy[2] = {0, 0}; /* non-NULL: an empty slice, not a lost one */
    for (uint32_t i = 0; i < s->nslices; i++)
        mh_apost_acc_add(x->acc, dummy, no_pairs, 0);
    s->idx[id] = ++s->nst;
    return s->nst - 1;
}

/* The segment turns multi-stream: the one stream so far gets its slices'
 * ranges from the address postings (a body of none when they hold none
 * exact at the first shift). */
static void turn_multi(mh_spost_acc *s, const mh_apost_acc *ap) {
    s->multi = 1;
    if (s->solo == UINT32_MAX)
        return;
    uint32_t k = s->nslices;
    s->nslices = 0; /* stream_at adds no empty slice for it */
    uint32_t i = stream_at(s, s->solo);
    s->nslices = k;
    if (i == UINT32_MAX) {
        lose(s);
        return;
    }
    sp_stream *x = &s->st[i];
    x->first_slice = 0;
    x->rows = s->solo_rows;
    size_t wide_at = 0;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t n[MHF_OP_COUNT] = {0, 0, 0};
        int rc = ap ? mh_apost_acc_slice_ranges(ap, j, MHF_SPOST_SHIFT_DEFAULT, &wide_at,
                                                &s->pairs, n)
                    : MH_EINVAL;
        if (rc == MH_ENOMEM) {
            lose(s);
            return;
        }
        /* NULL: the accumulator gives up (an entry without a body) */
        mh_apost_acc_add(x->acc, rc == MH_OK ? (const uint64_t *)(const void *)s->pairs.p : NULL,
                         n, x->rows);
    }
}

void mh_spost_acc_add(mh_spost_acc *s, const mh_builder *b, const mh_apost_acc *ap) {
    if (s->lost)
        return;
    uint32_t ns = b->nstreams;
    if (ns >= 2 && b->sp_lost) {
        lose(s);
        return;
    }
    if (!s->multi) {
        uint32_t st = b->streams[0].stream;
        if (ns < 2 && (s->solo == UINT32_MAX || s->solo == st)) {
            s->solo = st;
            s->solo_rows += b->streams[0].count;
            s->nslices++;
            return;
        }
        turn_multi(s, ap);
        if (s->lost)
            return;
    }
    /* the slice's ranges grouped by stream (a counting sort keeps each
     * op's in address order): stream k's from pairs[first[k]] */
    const sp_range *r = (const sp_range *)(const void *)b->sp_iv.p;
    size_t nr = ns >= 2 ? b->sp_iv.n / sizeof *r : 0;
    size_t need = 2 * nr * sizeof(uint64_t) + ((size_t)ns + 1) * MHF_OP_COUNT * sizeof(uint32_t);
    if (ns >= 2 && mh_buf_reserve(&s->pairs, need) != MH_OK) {
        lose(s);
        return;
    }
    uint64_t *pairs = NULL;
    uint32_t *cnt = NULL;
    if (ns >= 2) {
        pairs = (uint64_t *)(void *)s->pairs.p;
        cnt = (uint32_t *)(void *)(s->pairs.p + 2 * nr * sizeof(uint64_t));
        memset(cnt, 0, ((size_t)ns + 1) * MHF_OP_COUNT * sizeof *cnt);
        for (size_t j = 0; j < nr; j++)
            cnt[(size_t)r[j].k * MHF_OP_COUNT + r[j].op + 1]++;
        /* cnt[q + 1] counts the ranges of q = k * 3 + o; the prefix sums
         * make cnt[q] where q's begin, in (stream, op) order */
        uint32_t at = 0;
        for (size_t q = 0; q <= (size_t)ns * MHF_OP_COUNT; q++) {
            uint32_t c = q < (size_t)ns * MHF_OP_COUNT ? cnt[q + 1] : 0;
            cnt[q] = at;
            at += c;
        }
    }
    for (uint32_t k = 0; k < ns; k++) {
        uint32_t i = stream_at(s, b->streams[k].stream);
        if (i == UINT32_MAX) {
            lose(s);
            return;
        }
        s->st[i].stamp = s->nslices + 1;
    }
    if (ns >= 2) {
        /* each range to its place; cnt[q] then ends q, so q's ranges are
         * [cnt[q - 1], cnt[q]) (from 0 for q = 0) */
        uint32_t *pos = cnt; /* ns * 3 + 1 entries */
        for (size_t j = 0; j < nr; j++) {
            uint32_t q = r[j].k * MHF_OP_COUNT + r[j].op;
            uint32_t t = pos[q]++;
            pairs[2 * (size_t)t] = r[j].lo;
            pairs[2 * (size_t)t + 1] = r[j].hi;
        }
    }
    uint64_t dummy[2] = {0, 0}; /* non-NULL: an empty slice, not a lost one */
    for (uint32_t k = 0; k < ns; k++) {
        sp_stream *x = &s->st[s->idx[b->streams[k].stream] - 1];
        x->rows += b->streams[k].count;
        if (ns < 2) { /* its ranges are the slice's own */
            mh_apost_acc_add(x->acc, b->aset_lost ? NULL
                                                   : (const uint64_t *)(const void *)b->aset_iv.p,
                             b->aset_n, x->rows);
            continue;
        }
        uint32_t n[MHF_OP_COUNT], start = k ? cnt[k * MHF_OP_COUNT - 1] : 0;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++)
            n[o] = cnt[k * MHF_OP_COUNT + o] - (k * MHF_OP_COUNT + o ? cnt[k * MHF_OP_COUNT + o - 1] : 0);
        mh_apost_acc_add(x->acc, n[0] + n[1] + n[2] ? pairs + 2 * (size_t)start : dummy, n,
                         x->rows);
    }
    /* the streams not in this slice */
    for (uint32_t i = 0; i < s->nst; i++)
        if (s->st[i].stamp != s->nslices + 1)
            mh_apost_acc_add(s->st[i].acc, dummy, no_pairs, s->st[i].rows);
    s->nslices++;
}

void mh_spost_acc_truncate(mh_spost_acc *s, uint32_t nslices,
                           const mh_slice_stream *kept, size_t nkept) {
    if (s->lost || nslices >= s->nslices)
        return;
    s->nslices = nslices;
    if (!s->multi) {
        s->solo_rows = 0;
        for (size_t q = 0; q < nkept; q++)
            s->solo_rows += kept[q].count;
        if (nslices == 0)
            s->solo = UINT32_MAX;
        return;
    }
    uint32_t j = 0;
    for (uint32_t i = 0; i < s->nst; i++) {
        sp_stream x = s->st[i];
        s->idx[x.stream] = 0;
        if (x.first_slice >= nslices) { /* no row of it is kept */
            mh_apost_acc_destroy(x.acc);
            continue;
        }
        mh_apost_acc_truncate(x.acc, nslices);
        x.rows = 0;
        for (size_t q = 0; q < nkept; q++)
            if (kept[q].stream == x.stream)
                x.rows += kept[q].count;
        s->st[j] = x;
        s->idx[x.stream] = ++j;
    }
    s->nst = j;
}

static int cmp_stream(const void *x, const void *y) {
    uint32_t a = ((const sp_stream *)x)->stream, b = ((const sp_stream *)y)->stream;
    return a < b ? -1 : a > b;
}

int mh_spost_acc_serialize(mh_spost_acc *s, mh_buf *out) {
    if (s->lost || !s->multi || s->nst < 2 || s->nslices == 0)
        return MH_OK;
    qsort(s->st, s->nst, sizeof *s->st, cmp_stream);
    for (uint32_t i = 0; i < s->nst; i++)
        s->idx[s->st[i].stream] = i + 1;
    size_t start = out->n;
    size_t head = MHF_SPOST_HEADER_SIZE + (size_t)s->nst * MHF_SPOST_ENTRY_SIZE;
    MH_TRY(mh_buf_reserve(out, head));
    memset(out->p + start, 0, head);
    out->n += head;
    int any = 0;
    for (uint32_t i = 0; i < s->nst; i++) {
        size_t at = out->n;
        int rc = mh_apost_acc_serialize(s->st[i].acc, s->st[i].rows, 0, out);
        if (rc != MH_OK) {
            out->n = start;
            return rc;
        }
        uint8_t *e = out->p + start + MHF_SPOST_HEADER_SIZE + (size_t)i * MHF_SPOST_ENTRY_SIZE;
        mhf_store_u32(e + MHF_SPOST_E_STREAM, s->st[i].stream);
        mhf_store_u64(e + MHF_SPOST_E_OFFSET, at - start - head);
        mhf_store_u64(e + MHF_SPOST_E_BYTES, out->n - at);
        any |= out->n > at;
    }
    if (!any) { /* every stream past its last shift: none */
        out->n = start;
        return MH_OK;
    }
    mhf_store_u32(out->p + start + MHF_SPOST_COUNT, s->nst);
    mhf_store_u32(out->p + start + MHF_SPOST_ENTRY_SIZE_OFF, MHF_SPOST_ENTRY_SIZE);
    mhf_store_u64(out->p + start + MHF_SPOST_DATA_BYTES, out->n - start - head);
    return MH_OK;
}
