/*
 * slice_build.c - turns one slice of accesses into its encoded form: chunk
 * records, block records and compressed blocks (SPEC.md sections 5.3-6), in
 * memory, so that several builders can work on consecutive slices at once
 * and the segment writer appends their output in order.
 *
 * Five steps: group the accesses by operation, sort each group by address
 * (radix sort), merge overlapping and touching ranges into chunks (then
 * nearby chunks across the narrowest gaps, so a slice has at most
 * accesses / chunk_min_accesses chunks per operation), order the rows by
 * (operation, chunk, id) with a counting sort, and cut the rows into blocks
 * that are encoded, LZ4-compressed and checksummed.
 */
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "internal.h"

static int grow(void **p, size_t n, size_t elem) {
    size_t bytes = n * elem;
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q)
        return MH_ENOMEM;
    *p = q;
    return MH_OK;
}

static int reserve_scratch(mh_builder *w, uint32_t n) {
    if (n <= w->cap)
        return MH_OK;
    if (grow((void **)&w->key, n, 8) || grow((void **)&w->tmpk, n, 8) ||
        grow((void **)&w->val, n, 4) || grow((void **)&w->tmpv, n, 4) ||
        grow((void **)&w->chunk_of, n, 4) || grow((void **)&w->perm, n, 4) ||
        grow((void **)&w->ck_lo, n, 8) || grow((void **)&w->ck_hi, n, 8) ||
        grow((void **)&w->ck_start, (size_t)n + 1, 4) ||
        grow((void **)&w->gaps, n, 8))
        return MH_ENOMEM;
    w->cap = n;
    return MH_OK;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* k-th largest (0-based) of n values; reorders v. */
static uint64_t select_kth_largest(uint64_t *v, size_t n, size_t k) {
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot)
                i++;
            while (v[j] < pivot)
                j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* Rows a chunk may hold before it is cut (0: never). A query for a few
 * bytes inside a chunk walks the chunk's rows in id order (SPEC.md 14 step
 * 4): in a hot merged interval (a stack frame, gzip's window: one interval
 * of 20 k rows) that is block after block for a rarely touched word. Cut
 * at two blocks' worth of rows, such a walk decodes three or four blocks.
 * Not finer: each piece spans the slice's whole time, so a query over a
 * wide range that wants the next few ids from T meets one piece per id
 * (mh_bench, the real stores, one block's worth: whole-space max 1 p50 on
 * python 10-46 us against 6-10 uncut and 6-10 at two blocks' worth). */
static uint32_t cut_rows(const mh_builder *w) {
    return 2 * w->rows_per_block;
}

/* Cuts each of the nint chunks (from `first`) holding more than cap rows
 * into pieces of at least cap rows, each cut at an address no row of the
 * chunk straddles (the next row in address order starts past the end of
 * every row before it), so pieces do not overlap and every row lies in
 * one. A piece's bounds are its rows' own: [first start, highest end].
 * Returns the new count; at most m / cap pieces are added. */
static uint32_t cut_hot(mh_builder *w, const mh_rec *a, const uint64_t *ord,
                        uint32_t m, uint32_t first, uint32_t nint,
                        uint32_t cap) {
    uint64_t *lo = w->ck_lo + first, *hi = w->ck_hi + first;
    uint32_t *start = w->ck_start + first;
    /* first pass: the rows where pieces start, from form_chunks' marks in
     * w->tmpk (the gap merge is done with w->gaps; at most m / cap cuts):
     * no row is read */
    uint64_t *cuts = w->gaps;
    const uint64_t *reach = w->tmpk;
    uint32_t ncut = 0;
    for (uint32_t c = 0; c < nint; c++) {
        uint32_t end = c + 1 < nint ? start[c + 1] : m;
        for (uint32_t i = start[c] + cap; i < end; i++)
            if (reach[i] != UINT64_MAX) {
                cuts[ncut++] = i;
                i += cap - 1;
            }
    }
    if (ncut == 0)
        return nint;
    /* second pass, from the back: chunk c's pieces land at their final
     * places, past every chunk still to be read (chunk c's own record is
     * read before its first piece is written, at c or after) */
    uint32_t out = nint + ncut, k = ncut;
    for (uint32_t c = nint; c-- > 0;) {
        uint32_t s0 = start[c];
        uint64_t c_lo = lo[c], c_hi = hi[c];
        while (k > 0 && cuts[k - 1] > s0) {
            uint32_t i = (uint32_t)cuts[--k];
            out--;
            start[out] = i;
            lo[out] = a[(uint32_t)ord[i]].physical;
            hi[out] = c_hi;
            c_hi = reach[cuts[k]]; /* the part before the cut ends there */
        }
        out--;
        start[out] = s0;
        lo[out] = c_lo;
        hi[out] = c_hi;
    }
    return nint + ncut;
}

/* Forms the chunks of one operation from its rows sorted by address
 * (ord[0..m): row indexes in their low 32 bits). Writes chunk ranges
 * starting at *nck and sets chunk_of[row]. */
static void form_chunks(mh_builder *w, const mh_rec *a, const uint64_t *ord,
                        uint32_t m, uint32_t *nck) {
    uint32_t first = *nck, nint = 0;
    uint64_t *lo = w->ck_lo + first, *hi = w->ck_hi + first;
    uint32_t *start = w->ck_start + first;
    /* the open interval's end in a local (the stores through hi may alias
     * it); an end of 2^64 - 1 swallows everything after it */
    uint64_t cur = 0;
    /* for the cut (cut_hot): before each row that no row before it
     * straddles (it starts past cur), the highest end before it; else
     * UINT64_MAX, which no such end can be */
    uint64_t *reach = w->tmpk;
    for (uint32_t i = 0; i < m; i++) {
        if (i + MH_GATHER_AHEAD < m)
            mh_prefetch_rec(&a[(uint32_t)ord[i + MH_GATHER_AHEAD]]);
        const mh_rec *x = &a[(uint32_t)ord[i]];
        uint64_t end = x->physical + (x->size - 1u);
        reach[i] = nint && x->physical > cur ? cur : UINT64_MAX;
        if (nint && (cur == UINT64_MAX || x->physical <= cur + 1u)) {
            if (end > cur)
                cur = end;
        } else {
            if (nint)
                hi[nint - 1] = cur;
            lo[nint] = x->physical;
            start[nint] = i;
            cur = end;
            nint++;
        }
    }
    if (nint)
        hi[nint - 1] = cur;
    /* the address summary's keys come from these exact ranges, before the
     * gap merge below widens them (summary_build.c) */
    unsigned op = m ? a[(uint32_t)ord[0]].op : 0;
    if (w->summary && w->summary->ranges && m)
        w->summary->ranges(w, op, lo, hi, nint);
    if (w->aset && m) /* and the address set's (aset_build.c) */
        mh_aset_slice_ranges(w, op, lo, hi, nint);
    if (w->spost && m && w->nstreams >= 2) /* each stream's (spost_build.c) */
        mh_spost_slice_ranges(w, a, ord, m, op);
    /* the cut below may add up to m / cap chunks: the gap merge leaves
     * room for them, so a slice keeps at most m / chunk_min_accesses */
    uint32_t cap = cut_rows(w);
    uint32_t limit = m / (w->chunk_min_accesses ? w->chunk_min_accesses : 1);
    if (cap && limit > m / cap)
        limit -= m / cap;
    if (limit < 1)
        limit = 1;
    if (nint > limit) {
        /* keep the limit-1 widest gaps as chunk boundaries */
        uint32_t ngaps = nint - 1, keep = limit - 1;
        uint64_t thr = 0;
        size_t above = 0;
        if (keep > 0) {
            for (uint32_t i = 0; i < ngaps; i++)
                w->gaps[i] = lo[i + 1] - hi[i] - 1u;
            thr = select_kth_largest(w->gaps, ngaps, keep - 1);
            for (uint32_t i = 0; i < ngaps; i++)
                above += (lo[i + 1] - hi[i] - 1u) > thr;
        }
        size_t ties = keep - above; /* gaps equal to thr that still split */
        uint32_t out = 0;
        for (uint32_t i = 1; i < nint; i++) {
            /* hi[i - 1] still holds interval i-1's own end (see above) */
            uint64_t g = lo[i] - hi[i - 1] - 1u;
            int split = keep > 0 && (g > thr || (g == thr && ties > 0));
            if (split && g == thr)
                ties--;
            if (split) {
                out++;
                lo[out] = lo[i];
                hi[out] = hi[i];
                start[out] = start[i];
            } else {
                hi[out] = hi[i]; /* intervals are sorted and disjoint */
            }
        }
        nint = out + 1;
    }
    if (cap)
        nint = cut_hot(w, a, ord, m, first, nint, cap);
    for (uint32_t c = 0; c < nint; c++) {
        uint32_t end = c + 1 < nint ? start[c + 1] : m;
        for (uint32_t i = start[c]; i < end; i++)
            w->chunk_of[(uint32_t)ord[i]] = first + c;
    }
    *nck = first + nint;
}

/* Sort words of the rows: (rank of physical >> 16) << 48 | (physical &
 * 0xffff) << 32 | row, the rank taken among the slice's distinct high
 * parts (as sort.c renames them), so that the words sort by address, ties
 * by row, exactly as the (physical, row) pairs do. First the provisional
 * ranks in order of appearance, the only per-row lookup (neighbours in a
 * trace mostly share a region: one compare); the real ranks replace them
 * in the sort's histogram pass. 0 when the slice has more than
 * MH_SORT_RANK_MAX distinct high parts. */
static int group_words(mh_builder *w, const mh_rec *a, uint32_t n,
                       uint32_t *fill, unsigned *kbits) {
    mh_sort_scratch *s = &w->sort;
    for (uint32_t i = 0; i < MH_SORT_RANK_SLOTS; i++)
        s->slot_key[i] = UINT64_MAX;
    uint32_t np = 0;
    /* the last two regions met: a program alternating between its stack
     * and one heap object looks up neither */
    uint64_t last = UINT64_MAX, prov = 0, last2 = UINT64_MAX, prov2 = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t phy = a[i].physical, hp = phy >> 16;
        if (hp != last && hp == last2) {
            last2 = last;
            last = hp;
            uint64_t p = prov2;
            prov2 = prov;
            prov = p;
        } else if (hp != last) {
            uint32_t k = (uint32_t)((hp * 0x9E3779B97F4A7C15u) >> 53) &
                         (MH_SORT_RANK_SLOTS - 1);
            while (s->slot_key[k] != UINT64_MAX && s->slot_key[k] != hp)
                k = (k + 1) & (MH_SORT_RANK_SLOTS - 1);
            if (s->slot_key[k] == UINT64_MAX) {
                if (np == MH_SORT_RANK_MAX)
                    return 0;
                s->slot_key[k] = hp;
                s->slot_rank[k] = (uint16_t)np;
                s->sorted[np] = hp << 10 | np; /* hp < 2^48 */
                np++;
            }
            last2 = last;
            prov2 = prov;
            last = hp;
            prov = s->slot_rank[k];
        }
        uint32_t pos = fill[a[i].op]++;
        w->key[pos] = prov << 48 | (phy & 0xffff) << 32 | i;
    }
    _Static_assert(MH_SORT_RANK_MAX <= 1024, "provisional rank in 10 bits");
    qsort(s->sorted, np, sizeof *s->sorted, cmp_u64);
    for (uint32_t r = 0; r < np; r++)
        w->rank_map[s->sorted[r] & 1023] = (uint16_t)r;
    unsigned rb = 0;
    while (rb < 16 && (1u << rb) < np)
        rb++;
    *kbits = 16 + rb;
    return 1;
}

/* w->key[op_start[o] .. op_start[o + 1]): op o's rows (low 32 bits) in
 * address order, ties in id order. */
static void order_by_address(mh_builder *w, const mh_rec *a, uint32_t n,
                             const uint32_t *op_start) {
    uint32_t fill[MHF_OP_COUNT];
    memcpy(fill, op_start, sizeof fill);
    unsigned kbits = 0;
    if (group_words(w, a, n, fill, &kbits)) {
        for (unsigned o = 0; o < MHF_OP_COUNT; o++)
            mh_radix_sort_words(&w->sort, w->key + op_start[o], w->tmpk,
                                op_start[o + 1] - op_start[o], kbits,
                                w->rank_map);
        return;
    }
    /* scattered: the (physical, row) pairs sorted as they are */
    memcpy(fill, op_start, sizeof fill);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pos = fill[a[i].op]++;
        w->val[pos] = i;
        w->key[pos] = a[i].physical;
    }
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint32_t s0 = op_start[o], m = op_start[o + 1] - s0;
        mh_radix_sort(&w->sort, w->key + s0, w->val + s0, w->tmpk, w->tmpv, m);
        for (uint32_t i = 0; i < m; i++)
            w->key[s0 + i] = w->val[s0 + i];
    }
}

static int put_block(mh_builder *w, const mh_rec *a, const uint32_t *rows,
                     uint32_t n, uint64_t t_base) {
    mh_rows *c = &w->cols;
    uint64_t pmin = UINT64_MAX, pmax = 0;
    uint32_t mask = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (i + MH_GATHER_AHEAD < n)
            mh_prefetch_rec(&a[rows[i + MH_GATHER_AHEAD]]);
        const mh_rec *x = &a[rows[i]];
        c->id_off[i] = rows[i];
        c->t[i] = x->transition;
        c->phy[i] = x->physical;
        c->lin[i] = x->linear;
        c->has_lin[i] = x->has_linear;
        c->size[i] = x->size;
        uint64_t end = x->physical + (x->size - 1u);
        if (x->physical < pmin)
            pmin = x->physical;
        if (end > pmax)
            pmax = end;
    }
    /* the 2.0 columns only for slices that have them: a single-stream
     * slice without pc pays nothing */
    if (w->has_stream || w->has_pc) {
        mask = 0;
        for (uint32_t i = 0; i < n; i++) {
            const mh_rec *x = &a[rows[i]];
            c->stream[i] = x->stream;
            mask |= 1u << (x->stream & 31u);
        }
    }
    if (w->has_pc)
        for (uint32_t i = 0; i < n; i++) {
            const mh_rec *x = &a[rows[i]];
            c->pc[i] = x->has_pc ? x->pc : 0;
            c->has_pc[i] = x->has_pc;
        }
    size_t raw = mh_block_encode_raw(w->raw, n, c, t_base, w->has_stream,
                                     w->has_pc);
    /* each block is an independent LZ4 block: a fresh stream, reset cheaply
     * (LZ4_compress_fast would clear a 16 KiB state for every block) */
    LZ4_resetStream_fast(w->lz4);
    int comp = LZ4_compress_fast_continue(w->lz4, (const char *)w->raw,
                                          (char *)w->comp, (int)raw,
                                          (int)w->comp_cap, w->lz4_acceleration);
    if (comp <= 0)
        return MH_ENOMEM;
    uint8_t rec[MHF_BLOCK_SIZE] = {0};
    mhf_store_u64(rec + MHF_BLOCK_OFFSET, w->data.n); /* relative until appended */
    mhf_store_u32(rec + MHF_BLOCK_COMP_SIZE, (uint32_t)comp);
    mhf_store_u32(rec + MHF_BLOCK_RAW_SIZE, (uint32_t)raw);
    mhf_store_u64(rec + MHF_BLOCK_SUM, mh_hash(w->comp, (size_t)comp));
    mhf_store_u64(rec + MHF_BLOCK_PHY_MIN, pmin);
    mhf_store_u64(rec + MHF_BLOCK_PHY_MAX, pmax);
    mhf_store_u64(rec + MHF_BLOCK_FIRST_T, c->t[0]);
    mhf_store_u32(rec + MHF_BLOCK_FIRST_ID, c->id_off[0]);
    mhf_store_u32(rec + MHF2_BLOCK_STREAM_MASK, mask);
    w->raw_total += raw;
    MH_TRY(mh_buf_append(&w->data, w->comp, (size_t)comp));
    return mh_buf_append(&w->blocks, rec, sizeof rec);
}

/* The streams present in the slice, their mask and per-stream figures.
 * The single-stream case (every row stream 0, the common one) costs one
 * nothing past the caller's pass (any: the OR of the streams, pc: of the
 * has_pc flags). */
static int slice_streams(mh_builder *w, const mh_rec *a, uint32_t n,
                         uint32_t any, uint32_t pc) {
    w->has_stream = any != 0;
    w->has_pc = pc != 0;
    if (w->streams_cap == 0) {
        w->streams = malloc(sizeof *w->streams);
        if (!w->streams)
            return MH_ENOMEM;
        w->streams_cap = 1;
    }
    if (!any) {
        w->stream_mask = 1;
        w->streams[0] = (mh_slice_stream){0, n, a[0].transition,
                                          a[n - 1].transition};
        w->nstreams = 1;
        return MH_OK;
    }
    if (!w->stream_slot) {
        w->stream_slot = malloc((MH_STREAM_MAX + 1) * sizeof *w->stream_slot);
        if (!w->stream_slot)
            return MH_ENOMEM;
        memset(w->stream_slot, 0xff, (MH_STREAM_MAX + 1) * sizeof *w->stream_slot);
    }
    /* first pass: which streams, in first-appearance order */
    uint32_t ns = 0, mask = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t st = a[i].stream;
        uint32_t *slot = &w->stream_slot[st];
        if (*slot == UINT32_MAX) {
            if (ns == w->streams_cap) {
                uint32_t cap = w->streams_cap * 2;
                mh_slice_stream *p = realloc(w->streams, cap * sizeof *p);
                if (!p)
                    return MH_ENOMEM;
                w->streams = p;
                w->streams_cap = cap;
            }
            *slot = ns;
            w->streams[ns++] = (mh_slice_stream){st, 0, a[i].transition, 0};
            mask |= 1u << (st & 31u);
        }
        mh_slice_stream *x = &w->streams[*slot];
        x->count++;
        x->t_last = a[i].transition; /* transitions are non-decreasing */
    }
    for (uint32_t k = 0; k < ns; k++)
        w->stream_slot[w->streams[k].stream] = UINT32_MAX;
    /* increasing id: insertion sort, streams per slice are few */
    for (uint32_t k = 1; k < ns; k++) {
        mh_slice_stream x = w->streams[k];
        uint32_t j = k;
        while (j > 0 && w->streams[j - 1].stream > x.stream) {
            w->streams[j] = w->streams[j - 1];
            j--;
        }
        w->streams[j] = x;
    }
    w->nstreams = ns;
    w->stream_mask = mask;
    return MH_OK;
}

int mh_builder_run(mh_builder *w, const mh_rec *a, uint32_t n, uint64_t id_base) {
    if (n == 0)
        return MH_OK;
    MH_TRY(reserve_scratch(w, n));
    /* LZ4 from a clean state at each slice. LZ4_resetStream_fast before
     * each block leaves the hash table dirty, and with background builders
     * the compressed bytes were seen to depend on which slices this builder
     * had built before (an id map of a sort recording 1 byte longer or
     * shorter from run to run; tests/reproducible.c): a store was not
     * reproducible. Within the slice the history is the slice's own.
     * 16 KiB cleared per slice. */
    LZ4_initStream(w->lz4, sizeof *w->lz4);
    w->chunks.n = w->blocks.n = w->data.n = 0;
    w->raw_total = 0;
    w->sum_keys.n = 0;
    w->idmap_recs.n = w->idmap_data.n = 0;
    w->idtime_recs.n = w->idtime_data.n = 0;
    w->aset_iv.n = 0;
    memset(w->aset_n, 0, sizeof w->aset_n);
    w->aset_lost = 0;
    w->sp_iv.n = 0;
    w->sp_lost = 0;
    uint32_t op_n[MHF_OP_COUNT] = {0}, any = 0, pc = 0;
    for (uint32_t i = 0; i < n; i++) {
        op_n[a[i].op]++;
        any |= a[i].stream;
        pc |= a[i].has_pc;
    }
    MH_TRY(slice_streams(w, a, n, any, pc));
    mh_sruns_slice(w, a, n); /* the stream id runs (sruns_build.c) */
    if (w->summary && w->summary->slice_keys)
        MH_TRY(w->summary->slice_keys(w, a, n));
    /* group rows by operation (ids ascending inside each group), each
     * group sorted by address: w->key[op_start[o] ..] */
    uint32_t op_start[MHF_OP_COUNT + 1] = {0};
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        op_start[o + 1] = op_start[o] + op_n[o];
    order_by_address(w, a, n, op_start);
    uint32_t nck = 0;
    uint32_t op_ck[MHF_OP_COUNT + 1] = {0};
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        form_chunks(w, a, w->key + op_start[o], op_n[o], &nck);
        op_ck[o + 1] = nck;
    }
    /* counting sort of rows by chunk, ids ascending inside a chunk. The
     * counts are known: an op's chunks are consecutive runs of its rows in
     * address order, so chunk c of op o begins at op_start[o] + its start
     * in the op (ck_start) in the (op, chunk, id) order */
    uint32_t *cnt = w->ck_start; /* nck + 1 entries */
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        for (uint32_t c = op_ck[o]; c < op_ck[o + 1]; c++)
            cnt[c] += op_start[o];
    cnt[nck] = n;
    /* cnt[c] = row_first of chunk c; fill perm with a moving copy in tmpv */
    memcpy(w->tmpv, cnt, (size_t)nck * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++)
        w->perm[w->tmpv[w->chunk_of[i]]++] = i;
    /* the id map's labels: the chunk of each id offset (idmap_build.c) */
    MH_TRY(mh_idmap_build_slice(w, w->chunk_of, n, nck));
    /* the id transitions: every K-th access's transition (idtime_build.c) */
    MH_TRY(mh_idtime_build_slice(w, a, n));
    /* chunk records */
    uint8_t rec[MHF_CHUNK_SIZE];
    for (uint32_t c = 0; c < nck; c++) {
        uint32_t r0 = cnt[c], r1 = cnt[c + 1];
        const mh_rec *f = &a[w->perm[r0]], *l = &a[w->perm[r1 - 1]];
        unsigned op = 0;
        while (c >= op_ck[op + 1])
            op++;
        memset(rec, 0, sizeof rec);
        mhf_store_u64(rec + MHF_CHUNK_PHY_FIRST, w->ck_lo[c]);
        mhf_store_u64(rec + MHF_CHUNK_PHY_LAST, w->ck_hi[c]);
        mhf_store_u64(rec + MHF_CHUNK_T_FIRST, f->transition);
        mhf_store_u64(rec + MHF_CHUNK_T_LAST, l->transition);
        mhf_store_u32(rec + MHF_CHUNK_ID_FIRST, w->perm[r0]);
        mhf_store_u32(rec + MHF_CHUNK_ID_LAST, w->perm[r1 - 1]);
        mhf_store_u32(rec + MHF_CHUNK_ROW_FIRST, r0);
        mhf_store_u32(rec + MHF_CHUNK_ROW_COUNT, r1 - r0);
        rec[MHF_CHUNK_OP] = (uint8_t)op;
        uint32_t cmask = 1;
        if (w->has_stream) {
            cmask = 0;
            for (uint32_t r = r0; r < r1; r++)
                cmask |= 1u << (a[w->perm[r]].stream & 31u);
        }
        mhf_store_u32(rec + MHF2_CHUNK_STREAM_MASK, cmask);
        MH_TRY(mh_buf_append(&w->chunks, rec, sizeof rec));
    }
    /* blocks */
    uint32_t R = w->rows_per_block, nblocks = (n + R - 1) / R;
    uint64_t t_base = a[0].transition;
    for (uint32_t b = 0; b < nblocks; b++) {
        uint32_t r0 = b * R, m = n - r0 < R ? n - r0 : R;
        MH_TRY(put_block(w, a, w->perm + r0, m, t_base));
    }
    /* slice record; chunk_first, block_first and index_sum come when the
     * segment writer appends it */
    uint8_t *sr = w->slice;
    memset(sr, 0, MHF2_SLICE_SIZE);
    mhf_store_u32(sr + MHF2_SLICE_STREAM_MASK, w->stream_mask);
    mhf_store_u64(sr + MHF_SLICE_T_FIRST, a[0].transition);
    mhf_store_u64(sr + MHF_SLICE_T_LAST, a[n - 1].transition);
    mhf_store_u64(sr + MHF_SLICE_ID_FIRST, id_base);
    mhf_store_u32(sr + MHF_SLICE_COUNT, n);
    mhf_store_u32(sr + MHF_SLICE_CHUNK_COUNT, nck);
    mhf_store_u32(sr + MHF_SLICE_BLOCK_COUNT, nblocks);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        mhf_store_u32(sr + MHF_SLICE_OP_COUNTS + 4 * o, op_n[o]);
        w->op_n[o] = op_n[o];
    }
    w->n = n;
    w->t_first = a[0].transition;
    w->t_last = a[n - 1].transition;
    return MH_OK;
}

int mh_builder_create(const mh_segw_config *cfg, mh_builder **out) {
    mh_builder *w = calloc(1, sizeof *w);
    if (!w)
        return MH_ENOMEM;
    w->rows_per_block = cfg->rows_per_block;
    w->chunk_min_accesses = cfg->chunk_min_accesses;
    w->lz4_acceleration = cfg->lz4_acceleration;
    w->summary = cfg->summary;
    w->idmap_g = cfg->idmap_group_ids;
    w->idtime_k = cfg->idtime_stride;
    w->aset = cfg->aset || cfg->apost; /* aset_iv feeds both (apost_build.c) */
    w->spost = cfg->apost;             /* and the stream postings (2.7) */
    w->sruns = cfg->apost;             /* and the stream id runs (2.8) */
    int rc = mh_rows_reserve(&w->cols, w->rows_per_block);
    if (rc == MH_OK) {
        w->raw_cap = mh_block_raw_bound(w->rows_per_block);
        w->comp_cap = (size_t)LZ4_compressBound((int)w->raw_cap);
        w->raw = malloc(w->raw_cap);
        w->comp = malloc(w->comp_cap);
        w->lz4 = LZ4_createStream();
        if (!w->raw || !w->comp || !w->lz4)
            rc = MH_ENOMEM;
    }
    if (rc != MH_OK) {
        mh_builder_destroy(w);
        return rc;
    }
    *out = w;
    return MH_OK;
}

void mh_builder_destroy(mh_builder *w) {
    if (!w)
        return;
    free(w->key);
    free(w->tmpk);
    free(w->val);
    free(w->tmpv);
    free(w->chunk_of);
    free(w->perm);
    free(w->ck_lo);
    free(w->ck_hi);
    free(w->ck_start);
    free(w->gaps);
    mh_rows_free(&w->cols);
    free(w->raw);
    free(w->comp);
    LZ4_freeStream(w->lz4);
    mh_buf_free(&w->data);
    mh_buf_free(&w->chunks);
    mh_buf_free(&w->blocks);
    mh_buf_free(&w->sum_keys);
    mh_buf_free(&w->idmap_recs);
    mh_buf_free(&w->idmap_data);
    free(w->idmap_raw);
    free(w->idmap_comp);
    mh_buf_free(&w->idtime_recs);
    mh_buf_free(&w->idtime_data);
    free(w->idtime_w);
    mh_buf_free(&w->aset_iv);
    mh_buf_free(&w->sp_iv);
    mh_buf_free(&w->sr_iv);
    free(w->sp_open);
    free(w->streams);
    free(w->stream_slot);
    free(w);
}
