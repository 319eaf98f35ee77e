/*
 * query_wide.c - the wide path of the query engine (SPEC.md 11, step 2a).
 *
 * When a query wants many rows and the chunks of a slice that can match
 * hold a good part of it, the slice is answered without the chunk walk: the blocks holding rows of the requested
 * operations whose address range meets [A, B] are decoded once each, in row
 * order (read from the cache when a point query left them there, else
 * decoded outside it, so a bulk scan does not push out what point queries
 * keep), every matching row is placed by its id offset (a slice's ids are
 * the offsets 0 .. count-1, each once), and the matches are read out in id
 * order, forward or backward: O(rows), no comparison sort, no per-chunk
 * cutoff. A slice the start cuts (the first of a query, where a cursor
 * resumes) has each row checked against it; one the end cuts takes the
 * chunk walk, which reads nothing past the end. When every row of
 * the slice matches and the caller wants them all, each row goes straight
 * to its place in the caller's array.
 *
 * The checks are those of the chunk walk (SPEC.md 8, step 13): a decoded
 * block's rows against their chunks (mh_query_check_rows), a chunk's first
 * row in a block against its last row in the block before, unique ids (a
 * mark per id offset) and transitions that follow ids in the answer.
 */
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

/* Below WIDE_MIN_WANT wanted rows the chunk walk and its cutoff touch less.
 * The wide path also wants the chunks that can match to hold at least an
 * eighth of the slice: it reads its id marks across the matched span. */
#define WIDE_MIN_WANT 256
#define WIDE_COVER_DIV 8
/* A staged slice costs 60 bytes a row, a direct one 4: larger slices (the
 * format allows 2^30 rows) take the chunk walk. */
#define WIDE_MAX_STAGED (1u << 20)
#define WIDE_MAX_DIRECT (1u << 24)

void mh_query_wide_free(qctx *c) {
    mh_rows_free(&c->stream);
    free(c->stage);
    free(c->mark);
    c->stage = NULL;
    c->mark = NULL;
    c->capslice = 0;
}

/* Rows of the requested ops in chunks that meet [A, B] (*cover), and
 * whether every row of the slice is a match (*all: every chunk is of a
 * requested op and lies inside [A, B]). The chunk records were checked by
 * mh_seg_slice_check; only the fields compared are read. */
static void coverage(const mh_seg *seg, const mh_slice *s, const qspec *q,
                     uint64_t *cover, int *all) {
    uint64_t n = 0;
    int inside = 1;
    for (unsigned op = 0; op < MH_OP_COUNT; op++) {
        if (s->op_counts[op] == 0)
            continue;
        if (!(q->ops & (1u << op))) {
            inside = 0;
            continue;
        }
        uint32_t lo = mhq_first_chunk(seg, s->chunk_first, s->chunk_first + s->chunk_count,
                                      op, q->a);
        uint64_t opn = 0;
        for (uint32_t ci = lo; ci < s->chunk_first + s->chunk_count; ci++) {
            const uint8_t *rec = seg->chunks + (size_t)ci * seg->chunk_recsz;
            uint64_t pf = mhf_load_u64(rec + MHF_CHUNK_PHY_FIRST);
            if (rec[MHF_CHUNK_OP] != op || pf > q->b)
                break;
            mh_chunk ch;
            if (q->sbits) {
                /* the stream mask through the one decoder of chunk
                 * records (its checks passed in mh_seg_slice_check) */
                if (mh_seg_chunk(seg, s, ci, &ch, NULL) != MH_OK ||
                    !mask_meets(q, ch.stream_mask)) {
                    inside = 0;
                    continue;
                }
            }
            if (pf < q->a || mhf_load_u64(rec + MHF_CHUNK_PHY_LAST) > q->b)
                inside = 0;
            opn += mhf_load_u32(rec + MHF_CHUNK_ROW_COUNT);
        }
        if (opn != s->op_counts[op])
            inside = 0;
        n += opn;
    }
    *cover = n;
    /* a stream or pc filter may drop any row */
    *all = inside && !row_filtered(q);
}

/* Room for a slice of n rows: marks for all, staged accesses unless direct. */
static int reserve(qctx *c, uint32_t n, int direct) {
    if (n <= c->capslice && (direct || c->stage))
        return MH_OK;
    uint32_t cap = n > c->capslice ? n : c->capslice;
    if (n > c->capslice) {
        free(c->mark);
        c->mark = calloc(cap, sizeof *c->mark);
        c->epoch = 0;
        free(c->stage);
        c->stage = NULL;
        c->capslice = c->mark ? cap : 0;
        if (!c->mark)
            return MH_ENOMEM;
    }
    if (!direct && !c->stage) {
        c->stage = malloc((size_t)cap * sizeof *c->stage);
        if (!c->stage)
            return MH_ENOMEM;
    }
    return MH_OK;
}

static int disagree(qctx *c, const mh_seg *seg, uint32_t si, uint64_t a,
                    uint64_t b) {
    uint64_t off = seg->slice_off + (uint64_t)si * seg->slice_recsz;
    /* the chunk walk's wording for the same check (query.c, scan_slice) */
    MH_FAIL(MH_ECORRUPT, &c->diag, off,
            "slice %u at byte %llu: accesses %llu and %llu of different "
            "chunks disagree (id repeated or transition out of order)",
            si, (unsigned long long)off, (unsigned long long)a,
            (unsigned long long)b);
}

/* What the row loop of a wide slice reads, in locals of its own: the
 * compiler cannot keep q's fields in registers across the stores to the
 * staged accesses (uint64_t stores may alias them), and that reload per row
 * was most of what 2.0 added to a whole-space max1000 query (callgrind). */
typedef struct wide_ctx {
    uint64_t a, b;       /* [A, B] */
    uint64_t t_lo, t_hi; /* partial slices: the start (and window) as */
    uint64_t i_lo, i_hi; /*   transition and absolute id bounds */
    uint64_t id_first;
    uint32_t count;
    int partial, direct, fwd;
    mh_access *place;
    uint32_t *mark, ep;
    uint32_t id_min, id_max;
    uint64_t dup; /* the absolute id found twice (wide_rows returned SIZE_MAX) */
} wide_ctx;

static void wide_ctx_init(wide_ctx *w, const qspec *q, const mh_slice *s, int partial,
                          mh_access *place, int direct, uint32_t *mark, uint32_t ep) {
    w->a = q->a;
    w->b = q->b;
    /* in_range as bounds: forward, id >= id_lo and (t >= start, or id >
     * start); backward, id <= id_hi and (t <= start, or id < start) */
    w->t_lo = 0;
    w->t_hi = UINT64_MAX;
    w->i_lo = 0;
    w->i_hi = UINT64_MAX;
    if (q->dir == MH_FORWARD) {
        w->i_lo = q->id_lo;
        if (q->kind == MH_FROM_TRANSITION)
            w->t_lo = q->start;
        else if (q->start == UINT64_MAX)
            w->i_hi = 0, w->i_lo = 1; /* nothing lies after the last id */
        else if (q->start + 1 > w->i_lo)
            w->i_lo = q->start + 1;
    } else {
        w->i_hi = q->id_hi;
        if (q->kind == MH_FROM_TRANSITION)
            w->t_hi = q->start;
        else if (q->start == 0)
            w->i_hi = 0, w->i_lo = 1; /* nothing lies before id 0 */
        else if (q->start - 1 < w->i_hi)
            w->i_hi = q->start - 1;
    }
    w->id_first = s->id_first;
    w->count = s->count;
    w->partial = partial;
    w->direct = direct;
    w->fwd = q->dir == MH_FORWARD;
    w->place = place;
    w->mark = mark;
    w->ep = ep;
    w->id_min = UINT32_MAX;
    w->id_max = 0;
    w->dup = 0;
}

/* Rows [k0, k1) of one chunk (operation op) of a decoded block: each one
 * that meets [A, B] (and the start, and the stream and pc filters) is
 * marked and placed by its id offset. Returns how many were placed, or
 * SIZE_MAX when an id was placed before (w->dup). plain: no filter and no
 * stream or pc column, the single-stream case, whose accesses are built
 * without looking at those columns; a constant at each call, so the
 * compiler makes the loop twice. */
static inline size_t wide_rows_body(wide_ctx *w, const mh_rows *rows, uint32_t k0,
                                    uint32_t k1, uint8_t op, int filtered, const qspec *q,
                                    const int plain) {
    const uint32_t *col_id = rows->id_off, *col_size = rows->size;
    const uint64_t *col_t = rows->t, *col_phy = rows->phy, *col_lin = rows->lin;
    const uint8_t *col_hl = rows->has_lin;
    const uint32_t *col_s = rows->no_stream ? NULL : rows->stream;
    const uint64_t *col_pc = rows->no_pc ? NULL : rows->pc;
    const uint8_t *col_hpc = rows->no_pc ? NULL : rows->has_pc;
    const uint64_t a = w->a, b = w->b, id_first = w->id_first;
    const uint64_t t_lo = w->t_lo, t_hi = w->t_hi, i_lo = w->i_lo, i_hi = w->i_hi;
    const int partial = w->partial, direct = w->direct, fwd = w->fwd;
    const uint32_t ep = w->ep, count = w->count;
    uint32_t *mark = w->mark;
    mh_access *place = w->place;
    uint32_t id_min = w->id_min, id_max = w->id_max;
    size_t placed = 0;
    for (uint32_t i = k0; i < k1; i++) {
        uint64_t phy = col_phy[i];
        if (phy > b || phy + (col_size[i] - 1u) < a)
            continue;
        uint32_t id = col_id[i]; /* < count: mh_seg_decode_block */
        uint64_t abs = id_first + id;
        if (partial && (col_t[i] < t_lo || col_t[i] > t_hi || abs < i_lo || abs > i_hi))
            continue;
        if (!plain && filtered && !row_keep(q, rows, i))
            continue;
        if (mark[id] == ep) {
            w->dup = abs;
            return SIZE_MAX;
        }
        mark[id] = ep;
        id_min = id < id_min ? id : id_min;
        id_max = id > id_max ? id : id_max;
        placed++;
        mh_access *x = &place[direct ? (fwd ? id : count - 1 - id) : id];
        if (plain) {
            *x = (mh_access){.id = abs,
                             .transition = col_t[i],
                             .linear = col_lin[i],
                             .physical = phy,
                             .size = col_size[i],
                             .op = op,
                             .has_linear = col_hl[i]};
        } else {
            uint8_t hpc = col_hpc ? col_hpc[i] : 0;
            *x = (mh_access){.id = abs,
                             .transition = col_t[i],
                             .linear = col_lin[i],
                             .physical = phy,
                             .pc = hpc ? col_pc[i] : 0,
                             .size = col_size[i],
                             .stream = col_s ? col_s[i] : 0,
                             .op = op,
                             .has_linear = col_hl[i],
                             .has_pc = hpc};
        }
    }
    w->id_min = id_min;
    w->id_max = id_max;
    return placed;
}

static size_t wide_rows(wide_ctx *w, const mh_rows *rows, uint32_t k0, uint32_t k1,
                        uint8_t op, int filtered, const qspec *q) {
    if (!filtered && rows->no_stream && rows->no_pc)
        return wide_rows_body(w, rows, k0, k1, op, 0, q, 1);
    return wide_rows_body(w, rows, k0, k1, op, filtered, q, 0);
}

int mh_query_wide(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                  const qspec *q, size_t want, mh_access *out, size_t *got) {
    int fwd = q->dir == MH_FORWARD;
    uint64_t idl = s->id_first + s->count - 1;
    if (want < WIDE_MIN_WANT)
        return 0;
    /* nothing past an end bound is read (SPEC.md 11, step 6): a slice the
     * end cuts takes the chunk walk. One the start cuts (the first of a
     * query, where a resumed chain or a cursor goes on) has each row
     * checked against the start. */
    if (!in_end(q, fwd ? s->t_last : s->t_first, fwd ? idl : s->id_first))
        return 0;
    int partial = !in_range(q, fwd ? s->t_first : s->t_last, fwd ? s->id_first : idl);
    uint64_t cover;
    int all;
    coverage(seg, s, q, &cover, &all);
    if (cover == 0 || cover < s->count / WIDE_COVER_DIV)
        return 0;
    int direct = all && !partial && want >= s->count;
    if (s->count > (direct ? WIDE_MAX_DIRECT : WIDE_MAX_STAGED))
        return 0;
    if (reserve(c, s->count, direct) != MH_OK ||
        mh_rows_reserve_lazy(&c->stream, seg->rows_per_block) != MH_OK)
        MH_FAIL(MH_ENOMEM, &c->diag, 0, "out of memory for a wide query");
    if (++c->epoch == 0) { /* marks of 2^32 slices ago look current: clear */
        memset(c->mark, 0, (size_t)c->capslice * sizeof *c->mark);
        c->epoch = 1;
    }
    const uint32_t ep = c->epoch;
    uint32_t *mark = c->mark;
    /* the requested ops' rows: chunks are sorted by op and tile the rows,
     * so op o holds rows [start of o, start of o + op_counts[o]) */
    uint32_t op_lo[MH_OP_COUNT], op_hi[MH_OP_COUNT];
    uint32_t row = 0, r_lo = s->count, r_hi = 0;
    for (unsigned op = 0; op < MH_OP_COUNT; op++) {
        op_lo[op] = row;
        row += s->op_counts[op];
        op_hi[op] = row;
        if ((q->ops & (1u << op)) && s->op_counts[op]) {
            r_lo = op_lo[op] < r_lo ? op_lo[op] : r_lo;
            r_hi = op_hi[op];
        }
    }
    const uint32_t R = seg->rows_per_block;
    wide_ctx wr;
    wide_ctx_init(&wr, q, s, partial, direct ? out : c->stage, direct, mark, ep);
    const int filtered = row_filtered(q);
    uint64_t matched = 0;
    int64_t prev_b = -2; /* the block decoded last, and its last row */
    uint64_t prev_id = 0, prev_t = 0;
    for (uint32_t b = r_lo / R; b <= (r_hi - 1) / R; b++) {
        uint32_t base = b * R;
        uint32_t end = base + mh_slice_block_rows(seg, s, b);
        int useful = 0;
        for (unsigned op = 0; op < MH_OP_COUNT && !useful; op++)
            useful = (q->ops & (1u << op)) && op_lo[op] < end && op_hi[op] > base;
        if (!useful)
            continue;
        mh_block bl;
        MH_TRY(mh_seg_block(seg, s, s->block_first + b, &bl, &c->diag));
        if (bl.phy_max < q->a || bl.phy_min > q->b || !mask_meets(q, bl.stream_mask))
            continue; /* no row of this block overlaps [A, B] or is of the set */
        const mh_rows *rows = mh_query_cached(c, seg, s->block_first + b);
        if (!rows) {
            c->stream.n = 0;
            MH_TRY(mh_query_decode_checked(seg, s, b, 0, UINT32_MAX, 0, c->scratch, &c->stream,
                                           &c->diag));
            rows = &c->stream;
        }
        const uint32_t *col_id = rows->id_off;
        const uint64_t *col_t = rows->t;
        /* the chunk holding the block's first row (chunks tile the rows) */
        uint32_t lo = s->chunk_first, hi = s->chunk_first + s->chunk_count - 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo + 1) / 2;
            const uint8_t *rec = seg->chunks + (size_t)mid * seg->chunk_recsz;
            if (mhf_load_u32(rec + MHF_CHUNK_ROW_FIRST) <= base)
                lo = mid;
            else
                hi = mid - 1;
        }
        for (uint32_t k = lo; k < s->chunk_first + s->chunk_count; k++) {
            mh_chunk ch;
            MH_TRY(mh_seg_chunk(seg, s, k, &ch, &c->diag));
            if (ch.row_first >= end)
                break;
            uint32_t k0 = (ch.row_first > base ? ch.row_first : base) - base;
            uint32_t k1 = ch.row_first + ch.row_count;
            k1 = (k1 < end ? k1 : end) - base;
            /* a chunk that began in the block decoded just before must
             * continue its last row there */
            if (ch.row_first < base && prev_b == (int64_t)b - 1 &&
                (s->id_first + col_id[k0] <= prev_id || col_t[k0] < prev_t))
                MH_FAIL(MH_ECORRUPT, &c->diag, bl.offset,
                        "slice %u, block %u at byte %llu: access %llu does not "
                        "follow access %llu of its chunk in the block before",
                        si, s->block_first + b, (unsigned long long)bl.offset,
                        (unsigned long long)(s->id_first + col_id[k0]),
                        (unsigned long long)prev_id);
            if (!(q->ops & (1u << ch.op)) || ch.phy_last < q->a ||
                ch.phy_first > q->b || !mask_meets(q, ch.stream_mask))
                continue;
            size_t placed = wide_rows(&wr, rows, k0, k1, ch.op, filtered, q);
            if (placed == SIZE_MAX)
                return disagree(c, seg, si, wr.dup, wr.dup);
            matched += placed;
        }
        prev_b = b;
        prev_id = s->id_first + col_id[rows->n - 1];
        prev_t = col_t[rows->n - 1];
    }
    size_t n = 0;
    if (direct) {
        /* count rows, each id once: every place of out[0, count) is set */
        if (matched != s->count)
            MH_FAIL(MH_ECORRUPT, &c->diag, 0,
                    "slice %u: %llu of its %u rows decoded", si,
                    (unsigned long long)matched, s->count);
        n = s->count;
        for (size_t i = 1; i < n; i++)
            if (fwd ? out[i].transition < out[i - 1].transition
                    : out[i].transition > out[i - 1].transition)
                return disagree(c, seg, si, out[i - 1].id, out[i].id);
    } else if (matched) {
        /* read the marks in query order across the matched span */
        uint64_t last_t = 0, last_id = 0;
        for (uint32_t j = 0; j <= wr.id_max - wr.id_min && n < want; j++) {
            uint32_t id = fwd ? wr.id_min + j : wr.id_max - j;
            if (mark[id] != ep)
                continue;
            const mh_access *a = &c->stage[id];
            if (n && (fwd ? a->transition < last_t : a->transition > last_t))
                return disagree(c, seg, si, last_id, a->id);
            last_t = a->transition;
            last_id = a->id;
            out[n++] = *a;
        }
    }
    *got = n;
    return 1;
}
