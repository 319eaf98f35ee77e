/*
 * query_idmap.c - the id-order path of the query engine (SPEC.md 14,
 * step 2b).
 *
 * Rows of a slice are stored in (op, chunk, id) order, so a query over a
 * wide address range that wants few rows finds, in nearly every chunk, a
 * row on each side of its start, and the chunk walk decodes a block per
 * chunk to learn which id comes first. The id map (the label of each id
 * offset: the chunk holding it, id_map.c) lets the slice be walked in id
 * order instead: a label whose chunk cannot match is passed without
 * decoding; otherwise the row is located in its chunk (the chunk's blocks
 * binary-searched by first id, the block through the cache, its rows of
 * the chunk binary-searched for the id) and tested like any row. Matches
 * come out in id order, so the walk stops at `want`: no cutoff, no sort.
 *
 * A start or end given as a transition is placed among the ids by what the
 * index records say (a chunk's first and last rows, a block's first row:
 * transitions do not decrease with ids), and refined by every row the walk
 * decodes: a located row before the start shows, through its block's rows
 * of the same chunk, ids that all lie before it.
 *
 * The common case is cheap: each chunk remembers where its last located
 * row was (the ids of one chunk met in order are its consecutive rows), and
 * decoded label groups stay in the context's cache of decoded blocks (its
 * LRU and byte budget, keyed apart from blocks), so a cursor's next call or
 * a later query over the same ids does not decode them again.
 */
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

/* The choice, in hundredths of a microsecond. The chunk walk pays for
 * each chunk that can match and that the start cuts (one wholly past the
 * start costs it little once its cutoff is set): a search of its blocks
 * and rows, IDQ_WALK_HIT when its block is cached, IDQ_DECODE when it is
 * decoded. The id path pays IDQ_GROUP for a label group not in the
 * context, IDQ_FIXED for placing the start and the chunk pass, and per
 * wanted row a row located: IDQ_LOCATE when every block the chunk walk
 * would search is cached (the slice's blocks are warm), IDQ_LOCATE_COLD
 * (a block decoded for its ids and transitions, often) when one is not.
 * Measured warm on the real stores (1.13.5, mh_probe --idmap on / force
 * / off, sort's whole-space max-10 write questions: ~100 chunks cut, 2.6
 * us by the chunk walk, 1.25 by the id path; a row located 0.06-0.08 us,
 * a cut chunk 0.02-0.03); the tenths of a microsecond before (WALK_HIT 1,
 * LOCATE 10), set on synthetic 10^7 before the id path's row memo and
 * sparse takes, kept those questions on the chunk walk at twice the cost.
 * Counting every chunk the start cuts whatever the cache made 1 MiB max 1
 * take the id path and run 4x slower warm (its chunk walk finds its blocks
 * cached). */
#define IDQ_WALK_HIT 3
#define IDQ_DECODE 200
#define IDQ_GROUP 250
#define IDQ_FIXED 50
#define IDQ_LOCATE 8
#define IDQ_LOCATE_COLD 50
/* A question whose range meets at most (IDQ_GROUP + IDQ_FIXED +
 * IDQ_MEET_LOCATE x want) / IDQ_DECODE chunks (2 at max 1, 6 at max 10:
 * a point question's) keeps the chunk walk before any cost is counted */
#define IDQ_MEET_LOCATE 100
/* chunks of a run looked at for the chunk walk's cost, at most */
#define IDQ_WALK_SAMPLE 16
/* and the chunks that can match hold at least this fraction of the slice's
 * rows: sparser, the walk passes many labels per match. The labels passed
 * are in the id path's cost (labels_cost: count / cover a wanted row, at
 * IDQ_LABELS_HUNDREDTH labels a hundredth of a microsecond: a byte load
 * and a class lookup each, with the group's partial decode). An eighth
 * alone kept gzip's whole-space and 1 MiB write questions (their chunks
 * hold 1/32 to 1/8 of a slice) on the chunk walk, 1.25x slower warm and
 * 1.35x with the CPU caches cold than the id path (mh_probe, forced) */
#define IDQ_COVER_DIV 32
#define IDQ_LABELS_HUNDREDTH 5
#define IDQ_MAX_WANT 256
/* labels the walk looks up one at a time before mhq_label_next */
#define IDQ_NEAR 16

/* The id path's cost of the labels it passes, want rows wanted among count
 * with cover of them able to match (cover > 0): no larger for a larger
 * cover, so that at the least cover taken it bounds every other. With
 * runs, the chunks able to match leave labels out, which the scan passes
 * sixteen at a time (mhq_label_next): IDQ_LABELS_RUNS times cheaper (a
 * whole-space write question on gzip, its chunks 1/32 to 1/8 of a slice,
 * ~3,000 labels passed: 11,000 instructions before, ~1,500 so) */
#define IDQ_LABELS_RUNS 4
static inline uint64_t labels_cost(size_t want, uint32_t count, uint64_t cover, int runs) {
    return (uint64_t)want * count /
           (cover * (runs ? IDQ_LABELS_HUNDREDTH * IDQ_LABELS_RUNS : IDQ_LABELS_HUNDREDTH));
}

void mh_query_idmap_free(qctx *c) {
    free(c->ck);
    free(c->memo);
    c->lab = NULL;
    c->ck = NULL;
    c->memo = NULL;
    c->lab_seg = NULL;
    c->capck = 0;
}

static int reserve(qctx *c, uint32_t nck) {
    if (nck > c->capck) {
        free(c->ck);
        free(c->memo);
        c->ck = malloc(nck);
        c->memo = malloc((size_t)nck * sizeof *c->memo);
        c->capck = c->ck && c->memo ? nck : 0;
        if (!c->capck)
            return MH_ENOMEM;
    }
    return MH_OK;
}

/* Where the walk is: id offsets [lo, hi] (inclusive) may still hold rows on
 * the query's side of the start and within the end; and the transitions
 * that place the ids' bounds: a row with a transition below tlo rules out
 * its id and every id before it (forward: before a transition start;
 * backward: before a transition end), one above thi its id and every id
 * after it. The id parts of the start, end and window are exact in lo, hi
 * from the beginning. */
typedef struct bounds {
    int64_t lo, hi;
    uint64_t tlo, thi;
} bounds;

static void bounds_init(const qspec *q, bounds *bo) {
    const int fwd = q->dir == MH_FORWARD;
    const int st = q->kind == MH_FROM_TRANSITION, et = q->end_kind == MH_END_TRANSITION;
    bo->tlo = fwd ? (st ? q->start : 0) : (et ? q->end : 0);
    bo->thi = fwd ? (et ? q->end : UINT64_MAX) : (st ? q->start : UINT64_MAX);
}

/* Narrows bo by a row known to have transition t at id offset x. Branch
 * free: it runs over every chunk and block record of the slice (the calls
 * through in_range / in_end cost ~40 instructions a record, 23 k a
 * whole-space query on python, callgrind). */
static inline void narrow(bounds *bo, uint64_t t, uint32_t x) {
    const int64_t lo1 = (int64_t)x + 1, hi1 = (int64_t)x - 1;
    bo->lo = t < bo->tlo && lo1 > bo->lo ? lo1 : bo->lo;
    bo->hi = t > bo->thi && hi1 < bo->hi ? hi1 : bo->hi;
}

/* Narrows bo by every row of a decoded block of the slice before a
 * transition start (forward: transition below it; backward: above it).
 * Only the start: the walk stops at its first row past the end. */
static void narrow_block(const qspec *q, bounds *bo, const mh_rows *rows) {
    const uint32_t *id = rows->id_off;
    const uint64_t *t = rows->t;
    const uint64_t T = q->start;
    const uint32_t n = rows->n;
    if (q->dir == MH_FORWARD) {
        int64_t lo = bo->lo;
        for (uint32_t i = rows->lo; i < n; i++)
            if (t[i] < T && (int64_t)id[i] >= lo)
                lo = (int64_t)id[i] + 1;
        bo->lo = lo;
    } else {
        int64_t hi = bo->hi;
        for (uint32_t i = rows->lo; i < n; i++)
            if (t[i] > T && (int64_t)id[i] <= hi)
                hi = (int64_t)id[i] - 1;
        bo->hi = hi;
    }
}

/* The id map's view of seg, got once a walk (c->idv_seg is cleared when
 * a walk begins): its checks run on the first get of the reader. */
static int idv_get(qctx *c, const mh_seg *seg) {
    if (c->idv_seg != seg) {
        c->idv_rc = mh_idmap_view_get(seg, &c->idv, &c->diag);
        c->idv_seg = seg;
    }
    return c->idv_rc;
}

/* The index in seg's id map of the group of slice si holding id offset x
 * (x < the slice's count), and the map's view. */
static int group_of(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s, uint32_t x,
                    mh_idmap_view *v, uint32_t *grp) {
    MH_TRY(idv_get(c, seg));
    *v = c->idv;
    return mh_idmap_group_find(v, si, s, x, grp, &c->diag);
}

/* Labels a forward walk decodes past its id when a group is decoded from
 * its start (a prefix, LZ4_decompress_safe_partial): a whole-space query
 * reads one label, a 1 MiB one a few hundred; more are decoded when the
 * walk gets there. */
#define IDQ_LAB_AHEAD 512u

/* The label group of slice si holding id offset x: the one walked when it
 * holds x, else from the cache, else decoded (and checked) into it, at
 * least its labels up to x (forward: IDQ_LAB_AHEAD more). It is pinned in
 * the cache until the next group or the walk's end. */
static int labels_at(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                     uint32_t x, int fwd) {
    if (c->lab_seg == seg && c->lab_slice == si && x >= c->lab_first &&
        x - c->lab_first < c->lab_n)
        return MH_OK;
    c->lab_seg = NULL;
    c->pin = -1;
    mh_idmap_view v;
    uint32_t grp;
    MH_TRY(group_of(c, seg, si, s, x, &v, &grp));
    int32_t e;
    int fresh;
    /* kept as stored: 1 byte a label in slices of up to 256 chunks, a
     * quarter of the cache a widened group takes */
    const uint8_t *rec = v.recs + (size_t)grp * v.group_size;
    uint32_t cnt = mhf_load_u32(rec + MHF_IDMAP_G_COUNT);
    MH_TRY(mhq_labels_entry(c, seg, grp, cnt * (uint32_t)rec[MHF_IDMAP_G_WIDTH], &e, &fresh));
    centry *ent = &c->ent[e];
    const uint32_t first = x / v.g * v.g;
    if (!fresh && ent->lab_n < ent->lab_all && x - ent->lab_first >= ent->lab_n) {
        /* a prefix that stops before x: the group again, whole */
        uint32_t got;
        int rc = mh_idmap_decode_prefix(&v, grp, s->chunk_count, UINT32_MAX, ent->lab, &got,
                                        &ent->lab_w, &c->diag);
        if (rc != MH_OK) {
            c->lab_seg = NULL;
            return rc; /* the entry keeps its checked prefix */
        }
        ent->lab_n = got;
        atomic_fetch_add_explicit(&((mh_reader *)c->r)->idmap_groups_decoded, 1,
                                  memory_order_relaxed);
    }
    if (fresh) {
        /* as mh_idmap_labels: the parse made group grp of slice si hold
         * ids [x / g * g, + count) with count <= g, width 1, 2 or 4 */
        const uint32_t upto = x < first ? 0 : x - first + 1 + (fwd ? IDQ_LAB_AHEAD : 0);
        uint32_t got = 0;
        int rc = mh_idmap_decode_prefix(&v, grp, s->chunk_count, upto < cnt ? upto : UINT32_MAX,
                                        ent->lab, &got, &ent->lab_w, &c->diag);
        if (rc != MH_OK) {
            mhq_labels_drop(c, e);
            return rc;
        }
        ent->lab_first = first;
        ent->lab_n = got;
        ent->lab_all = cnt;
        if (ent->lab_n == 0 || x < ent->lab_first || x - ent->lab_first >= ent->lab_n) {
            uint32_t f = ent->lab_first, n = cnt;
            mhq_labels_drop(c, e);
            MH_FAIL(MH_ECORRUPT, &c->diag, 0,
                    "id map: slice %u: the group for id offset %u holds %u..%u", si,
                    x, f, f + n - 1);
        }
        mhq_labels_done(c, e, seg);
        atomic_fetch_add_explicit(&((mh_reader *)c->r)->idmap_groups_decoded, 1,
                                  memory_order_relaxed);
    }
    c->pin = e;
    c->lab = ent->lab;
    c->lab_w = ent->lab_w;
    c->lab_seg = seg;
    c->lab_slice = si;
    c->lab_first = ent->lab_first;
    c->lab_n = ent->lab_n;
    return MH_OK;
}

static int not_there(qctx *c, uint32_t si, const mh_slice *s, uint32_t k,
                     uint32_t x) {
    MH_FAIL(MH_ECORRUPT, &c->diag, 0,
            "id map: access %llu (id offset %u of slice %u) is not in chunk %u, "
            "its label", (unsigned long long)(s->id_first + x), x, si, k);
}

/* Where the ids of a chunk (record crec, its rows [r0, r1) of the slice)
 * put id offset xo among them, as a row of the block whose first row is
 * base, within its rows of the chunk there, [k0, k1) (k0 < k1): the
 * guess for mhq_row_search_near. */
static inline uint32_t row_guess(const uint8_t *crec, uint32_t r0, uint32_t r1, uint32_t base,
                                 uint32_t k0, uint32_t k1, uint32_t xo) {
    const uint32_t cf = mhf_load_u32(crec + MHF_CHUNK_ID_FIRST);
    const uint32_t cl = mhf_load_u32(crec + MHF_CHUNK_ID_LAST);
    uint64_t r = r0;
    if (cl > cf && xo > cf)
        r += (uint64_t)(xo - cf) * (r1 - 1 - r0) / (cl - cf);
    const uint64_t lo = (uint64_t)base + k0, hi = (uint64_t)base + k1 - 1;
    return (uint32_t)((r < lo ? lo : r > hi ? hi : r) - base);
}

/* Is the group of slice si holding id offset x (< its count) in the cache?
 * Only a checked id map has groups there: an unchecked one is not checked
 * for the cost choice (the chunk walk may answer without it). */
static int group_cached(qctx *c, const mh_seg *seg, uint32_t si, uint32_t x) {
    /* a checked view's get does not fail */
    if (!atomic_load_explicit(&seg->idmap_ok, memory_order_acquire) || idv_get(c, seg) != MH_OK)
        return 0;
    const mh_idmap_view v = c->idv;
    /* the slice's first group as the searches remembered it (checked),
     * else searched in the records */
    const uint32_t known = mh_seg_memo_get(seg, MH_MEMO_IDMAP_G0, si);
    const uint32_t g0 = known ? known - 1 : mh_idmap_first_group(&v, si);
    return mhq_labels_cached(c, seg, g0 + x / v.g) >= 0;
}

static int idmap_walk(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                      const qspec *q, size_t want, mh_access *out, size_t *got);

/* For the chunk walk's cost: are the blocks holding the first and last
 * rows of the chunk of record rec (of slice s) cached? Chunks are met in
 * row order and small ones share a block, decoded once: *last_b, the
 * block the previous cut chunk ended in, counts as cached, and becomes
 * this chunk's last. */
static inline int cut_blocks_cached(const qctx *c, const mh_seg *seg, const mh_slice *s,
                                    const uint8_t *rec, uint32_t *last_b) {
    const uint32_t R = seg->rows_per_block;
    const uint32_t r0 = mhf_load_u32(rec + MHF_CHUNK_ROW_FIRST);
    const uint32_t r1 = r0 + mhf_load_u32(rec + MHF_CHUNK_ROW_COUNT) - 1;
    const int hit = (r0 / R == *last_b || mh_query_cached(c, seg, s->block_first + r0 / R)) &&
                    (r1 / R == r0 / R || mh_query_cached(c, seg, s->block_first + r1 / R));
    *last_b = r1 / R;
    return hit;
}

/* Where a transition start falls among a slice's ids, as far as the rows
 * seen show: forward, b is the largest id offset seen before the start
 * (transition below it) and a the smallest seen on its side; backward, b
 * the smallest seen past it (transition above) and a the largest at or
 * below it. tb, ta: their transitions (the slice's ends when none seen). */
typedef struct bracket {
    int64_t b, a;
    uint64_t tb, ta;
} bracket;

static inline void bracket_row(bracket *k, int fwd, uint64_t T, uint64_t t, int64_t x) {
    if (fwd ? t < T : t > T) {
        if (fwd ? x > k->b : x < k->b) {
            k->b = x;
            k->tb = t;
        }
    } else if (fwd ? x < k->a : x > k->a) {
        k->a = x;
        k->ta = t;
    }
}

/* The chunk (relative) of id offset x of slice si, through its label group
 * (labels_at: checked when decoded). */
static int label_of(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                    uint32_t x, uint32_t *k) {
    MH_TRY(labels_at(c, seg, si, s, x, 0));
    const uint8_t *p = c->lab + (size_t)(x - c->lab_first) * c->lab_w;
    *k = c->lab_w == 1 ? p[0] : c->lab_w == 2 ? mhf_load_u16(p) : mhf_load_u32(p);
    return MH_OK;
}

/* The rows [r0, r1) of a chunk that lie in the decoded block starting at
 * row base with n rows, as [*k0, *k1) within it: 1 when there are some. */
static inline int rows_in_block(uint32_t r0, uint32_t r1, uint32_t base, const mh_rows *rows,
                                uint32_t *k0, uint32_t *k1) {
    const uint32_t lo = base + rows->lo, n = rows->n;
    *k0 = (r0 > lo ? r0 : lo) - base;
    *k1 = (r1 < base + n ? r1 : base + n) - base;
    return *k0 < *k1;
}

/* The block of a chunk (its blocks lo .. hi of the slice) holding id
 * offset xo: the last whose first id is <= xo (the blocks after a chunk's
 * first start with a row of it, SPEC.md 14 step 4). */
static uint32_t block_of_id(const mh_seg *seg, const mh_slice *s, uint32_t lo,
                            uint32_t hi, uint32_t xo) {
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        const uint8_t *rec = seg->blocks + (size_t)(s->block_first + mid) * seg->block_recsz;
        if (mhf_load_u32(rec + MHF_BLOCK_FIRST_ID) <= xo)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Before the walk of a transition start: ids around the start are
 * interleaved among many chunks, and the walk met them one by one, a block
 * decoded for each chunk met before the start (4.7 blocks a whole-space
 * max-1 rw query on python, 1 of them holding the answer; callgrind). Here
 * the ids between the rows known on either side of the start (index
 * records, then every row of each decoded block) are probed where the
 * transitions, taken as growing evenly with the ids between them, put the
 * start: each probe decodes the block of the probed id's row, its id and
 * transition columns only (mh_query_block_id_t: a third of a whole
 * decode), and narrows both sides by all its rows. Only the bounds move (by rows actually read,
 * as the walk's own narrowing), so the walk that follows, from the new
 * bound, gives the same answer; a probed id whose row is not in its
 * label's chunk is MH_ECORRUPT as in the walk. */
#define IDQ_PROBES 8
static int probe_start(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                       const qspec *q, bounds *bo) {
    const int fwd = q->dir == MH_FORWARD;
    const uint64_t T = q->start;
    const uint32_t nck = s->chunk_count, R = seg->rows_per_block;
    bracket k = fwd ? (bracket){bo->lo - 1, (int64_t)s->count, s->t_first, s->t_last}
                    : (bracket){bo->hi + 1, -1, s->t_last, s->t_first};
    for (uint32_t j = 0; j < nck; j++) {
        const uint8_t *rec = seg->chunks + (size_t)(s->chunk_first + j) * seg->chunk_recsz;
        bracket_row(&k, fwd, T, mhf_load_u64(rec + MHF_CHUNK_T_FIRST),
                    mhf_load_u32(rec + MHF_CHUNK_ID_FIRST));
        bracket_row(&k, fwd, T, mhf_load_u64(rec + MHF_CHUNK_T_LAST),
                    mhf_load_u32(rec + MHF_CHUNK_ID_LAST));
    }
    for (uint32_t b = 0; b < s->block_count; b++) {
        const uint8_t *rec = seg->blocks + (size_t)(s->block_first + b) * seg->block_recsz;
        bracket_row(&k, fwd, T, mhf_load_u64(rec + MHF_BLOCK_FIRST_T),
                    mhf_load_u32(rec + MHF_BLOCK_FIRST_ID));
    }
    int64_t left = INT64_MAX; /* ids left to place before the last probe */
    for (int probe = 0; probe < IDQ_PROBES; probe++) {
        /* the ids not yet placed, within the walk's bounds */
        int64_t lo = fwd ? k.b + 1 : k.a + 1, hi = fwd ? k.a - 1 : k.b - 1;
        if (lo < bo->lo)
            lo = bo->lo;
        if (hi > bo->hi)
            hi = bo->hi;
        if (hi - lo < 1)
            break; /* one id or none: the walk places it as cheaply */
        /* the slice's ends stand for a side with no row seen: the start
         * may lie outside them (then halfway) */
        const uint64_t lo_t = fwd ? k.tb : k.ta, hi_t = fwd ? k.ta : k.tb;
        double frac = 0.5;
        if (lo_t < hi_t && T >= lo_t && T <= hi_t)
            frac = (double)(fwd ? T - lo_t : hi_t - T) / (double)(hi_t - lo_t);
        /* the first id on the start's side: rounded up, in query order */
        /* the transitions do not grow evenly (a gap before a burst of
         * accesses put every probe next to the side seen last, one id a
         * probe): a probe that did not halve the ids left is followed by
         * one at their middle */
        if (hi - lo + 1 > left / 2)
            frac = 0.5;
        left = hi - lo + 1;
        int64_t step = (int64_t)(frac * (double)(fwd ? k.a - k.b : k.b - k.a) + 0.999);
        int64_t g = fwd ? k.b + step : k.b - step;
        if (g < lo)
            g = lo;
        if (g > hi)
            g = hi;
        const uint32_t xo = (uint32_t)g;
        uint32_t kk;
        MH_TRY(label_of(c, seg, si, s, xo, &kk));
        const uint8_t *crec = seg->chunks + (size_t)(s->chunk_first + kk) * seg->chunk_recsz;
        const uint32_t r0 = mhf_load_u32(crec + MHF_CHUNK_ROW_FIRST);
        const uint32_t r1 = r0 + mhf_load_u32(crec + MHF_CHUNK_ROW_COUNT);
        uint32_t blo = block_of_id(seg, s, r0 / R, (r1 - 1) / R, xo);
        const mh_rows *rows;
        MH_TRY(mh_query_block_id_t(c, seg, s, blo, &rows));
        uint32_t k0, k1;
        if (!rows_in_block(r0, r1, blo * R, rows, &k0, &k1))
            return not_there(c, si, s, s->chunk_first + kk, xo);
        uint32_t i = mhq_row_search(rows->id_off, k0, k1, xo);
        if (i == k1 || rows->id_off[i] != xo)
            return not_there(c, si, s, s->chunk_first + kk, xo);
        for (uint32_t j = rows->lo; j < rows->n; j++)
            bracket_row(&k, fwd, T, rows->t[j], rows->id_off[j]);
    }
    if (fwd && k.b + 1 > bo->lo)
        bo->lo = k.b + 1;
    if (!fwd && k.b - 1 < bo->hi)
        bo->hi = k.b - 1;
    return MH_OK;
}

/* Chunk classes of the walk (c->ck): 0 no row can match (another op, or
 * outside [A, B] or the stream set), 1 rows may match, 2 wholly before the
 * start or past the end (its labels only checked against its ids), and
 * CK_LATER not classed yet (classify: when the walk first meets it). */
#define CK_LATER 3

/* Does the chunk of record rec (of slice s) lie wholly before the start
 * or begin past the end? Then it holds no match (as the chunk walk sees
 * it). */
static inline int chunk_outside(const qspec *q, const mh_slice *s, const uint8_t *rec) {
    const int fwd = q->dir == MH_FORWARD;
    const uint64_t tf = mhf_load_u64(rec + MHF_CHUNK_T_FIRST);
    const uint64_t tl = mhf_load_u64(rec + MHF_CHUNK_T_LAST);
    const uint64_t idf = s->id_first + mhf_load_u32(rec + MHF_CHUNK_ID_FIRST);
    const uint64_t idc = s->id_first + mhf_load_u32(rec + MHF_CHUNK_ID_LAST);
    return !in_range(q, fwd ? tl : tf, fwd ? idc : idf) ||
           !in_end(q, fwd ? tf : tl, fwd ? idf : idc);
}

/* Classes chunk k (relative) of slice s as the eager pass does, for a
 * query without a stream set whose chunks meeting [A, B] of op o are
 * [first[o], end[o]). */
static uint8_t classify(qctx *c, const mh_seg *seg, const mh_slice *s, const qspec *q,
                        const uint32_t *first, const uint32_t *end, uint32_t k) {
    const uint8_t *rec = seg->chunks + (size_t)(s->chunk_first + k) * seg->chunk_recsz;
    const unsigned op = rec[MHF_CHUNK_OP]; /* checked: < MHF_OP_COUNT */
    if (k < first[op] || k >= end[op])
        return c->ck[k] = 0;
    c->memo[k] = UINT32_MAX;
    return c->ck[k] = chunk_outside(q, s, rec) ? 2 : 1;
}

int mh_query_idmap(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                   const qspec *q, size_t want, mh_access *out, size_t *got) {
    int rc = idmap_walk(c, seg, si, s, q, want, out, got);
    /* the group walked is unpinned: later blocks may push it out of the
     * cache, so the next walk finds it there again or decodes it */
    c->pin = -1;
    c->lab_seg = NULL;
    c->lab = NULL;
    return rc;
}

static int idmap_walk(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                      const qspec *q, size_t want, mh_access *out, size_t *got) {
    int force = c->r->idmap_off < 0;
    c->first_seg = NULL;
    c->idv_seg = NULL;
    if (c->r->idmap_off > 0 || (!force && want >= IDQ_MAX_WANT) ||
        !mh_idmap_present(seg))
        return 0;
    const int fwd = q->dir == MH_FORWARD;
    const uint32_t nck = s->chunk_count;
    /* the cost choice below needs more chunks meeting [A, B] than a point
     * query has: counted first (the few records a narrow range meets), so
     * that a slice the chunk walk keeps costs little more than its search */
    uint32_t first[MH_OP_COUNT], op_end[MH_OP_COUNT];
    uint32_t meet = 0;
    const uint32_t need = (IDQ_GROUP + IDQ_FIXED + IDQ_MEET_LOCATE * (uint32_t)want) / IDQ_DECODE;
    for (unsigned op = 0; op < MH_OP_COUNT; op++) {
        first[op] = nck;
        op_end[op] = s->chunk_first + nck;
        if (!(q->ops & (1u << op)) || s->op_counts[op] == 0)
            continue;
        uint32_t olo, ohi;
        mhq_op_chunks(seg, si, s, op, &olo, &ohi);
        op_end[op] = ohi;
        first[op] = (q->a == 0 ? olo : mhq_first_chunk(seg, olo, ohi, op, q->a)) - s->chunk_first;
        for (uint32_t k = first[op]; k < nck && (force || meet <= need); k++) {
            const uint8_t *rec = seg->chunks + (size_t)(s->chunk_first + k) * seg->chunk_recsz;
            if (rec[MHF_CHUNK_OP] != op || mhf_load_u64(rec + MHF_CHUNK_PHY_FIRST) > q->b)
                break;
            meet++;
        }
    }
    /* the chunk walk of this slice starts from these */
    for (unsigned op = 0; op < MH_OP_COUNT; op++)
        c->first_chunk[op] = s->chunk_first + first[op];
    c->first_seg = seg;
    c->first_si = si;
    if (!force && meet <= need)
        return 0;
    if (reserve(c, nck) != MH_OK)
        MH_FAIL(MH_ENOMEM, &c->diag, 0, "out of memory for an id-order query");
    /* the walk's bounds: exact for ids (start, end, window), from the
     * index records for transitions */
    bounds bo = {0, (int64_t)s->count - 1, 0, 0};
    bounds_init(q, &bo);
    uint64_t lo_id = q->id_lo, hi_id = q->id_hi;
    if (q->kind == MH_FROM_ID) {
        /* nothing lies after UINT64_MAX or before 0: the chunk walk says so */
        if (fwd ? q->start == UINT64_MAX : q->start == 0)
            return 0;
        if (fwd && q->start + 1 > lo_id)
            lo_id = q->start + 1;
        if (!fwd && q->start - 1 < hi_id)
            hi_id = q->start - 1;
    }
    if (q->end_kind == MH_END_ID) {
        if (fwd && q->end < hi_id)
            hi_id = q->end;
        if (!fwd && q->end > lo_id)
            lo_id = q->end;
    }
    uint64_t idl = s->id_first + s->count - 1;
    if (lo_id > idl || hi_id < s->id_first || lo_id > hi_id)
        return 0;
    if (lo_id > s->id_first)
        bo.lo = (int64_t)(lo_id - s->id_first);
    if (hi_id < idl)
        bo.hi = (int64_t)(hi_id - s->id_first);
    /* the chunks: which can hold a match (ck), the rows of the requested
     * ops meeting [A, B] (cover, the wide path's coverage), how many the
     * chunk walk would visit; their first and last rows place transitions */
    const int by_t = q->kind == MH_FROM_TRANSITION || q->end_kind == MH_END_TRANSITION;
    const int has_idt = by_t && mh_idtime_present(seg); /* the id transitions place it */
    uint64_t cover = 0;
    /* Without a stream set the chunks of an op meeting [A, B] are a run
     * (chunks in (op, address) order, disjoint, their rows tiling the
     * slice: mh_seg_slice_check), found by a second search, its rows from
     * the run's two ends. When they hold half the slice and the id
     * transitions place the start, the id path is taken whatever the
     * chunk walk would cost (`exact` below), so no chunk need be looked
     * at before the walk: each is classed when a label first names it.
     * A whole-space query classed every chunk of its slice first (up to
     * 256 records, 55 % of a warm whole-space max-1 question on python,
     * perf); its walk meets a few. */
    /* the rows of the chunks meeting [A, B], whatever their streams */
    uint64_t range_rows = 0;
    uint32_t end[MH_OP_COUNT];
    /* the chunks ck can mark lie in [klo, khi] (for the label scan) */
    uint32_t klo = UINT32_MAX, khi = 0;
    int later = 0, lazy = 0;
    if (!q->sbits && has_idt && s->block_count > 1) {
        lazy = 1;
        for (unsigned op = 0; op < MH_OP_COUNT; op++) {
            end[op] = first[op];
            if (first[op] >= nck)
                continue;
            end[op] = (q->b == UINT64_MAX
                           ? op_end[op]
                           : mhq_chunk_end(seg, s->chunk_first + first[op], op_end[op], op, q->b)) -
                      s->chunk_first;
            if (end[op] > first[op]) {
                const uint8_t *r0 = seg->chunks + (size_t)(s->chunk_first + first[op]) *
                                                      seg->chunk_recsz;
                const uint8_t *r1 = seg->chunks + (size_t)(s->chunk_first + end[op] - 1) *
                                                      seg->chunk_recsz;
                cover += (uint64_t)mhf_load_u32(r1 + MHF_CHUNK_ROW_FIRST) +
                         mhf_load_u32(r1 + MHF_CHUNK_ROW_COUNT) -
                         mhf_load_u32(r0 + MHF_CHUNK_ROW_FIRST);
                klo = first[op] < klo ? first[op] : klo;
                khi = end[op] - 1;
            }
        }
        later = cover >= s->count / 2;
        range_rows = cover;
        /* too sparse for the id path, whatever the costs below (as the
         * choice decides it) */
        if (!force && !q->nslist && (cover == 0 || cover < s->count / IDQ_COVER_DIV))
            return 0;
    }
    /* the id path's cost, and the chunk walk's as the chunks are met (the
     * cache looked at only until the chunk walk costs more) */
    /* the label group the walk starts in: a transition start's id taken
     * where the slice's transitions, as if even, put it (the id
     * transitions place it exactly only once the id path is taken) */
    int64_t x_at = fwd ? bo.lo : bo.hi;
    if (q->kind == MH_FROM_TRANSITION && s->t_last > s->t_first && q->start > s->t_first &&
        q->start < s->t_last) {
        const int64_t est = (int64_t)((double)(q->start - s->t_first) /
                                      (double)(s->t_last - s->t_first) * (double)(s->count - 1));
        x_at = est < bo.lo ? bo.lo : est > bo.hi ? bo.hi : est;
    }
    const int lab_here = !later && group_cached(c, seg, si, (uint32_t)x_at);
    /* (its rows located cold until the walk's count shows every block
     * cached) */
    const uint64_t id_fixed = (lab_here ? 0 : IDQ_GROUP) + IDQ_FIXED;
    uint64_t id_cost = id_fixed + IDQ_LOCATE_COLD * (uint64_t)want;
    int walk_misses = 0;
    /* the walk's cost is summed as far as the id path's can reach: its
     * labels passed at the least cover it takes */
    const uint32_t least = s->count / IDQ_COVER_DIV;
    /* does the run [klo, khi] leave chunk indices out? (eager: known
     * after its pass, below; no chunk, klo > khi: its wrapped width says
     * yes, and no label is looked up) */
    int runs = lazy && khi - klo + 1 < nck;
    const uint64_t id_most = id_cost + labels_cost(want, s->count, least ? least : 1, runs);
    /* ... and, while every block counted is cached, as far as its warm
     * cost: a miss past there would add a decode to the walk, more than
     * the id path's rows cold add to it */
    const uint64_t id_most_warm =
        id_fixed + IDQ_LOCATE * (uint64_t)want + labels_cost(want, s->count, least ? least : 1, runs);
    uint64_t walk_cost = 0;
    uint32_t last_b = UINT32_MAX; /* the block the last cut chunk ends in */
    const uint32_t R = seg->rows_per_block;
    /* only the chunks of the requested ops meeting [A, B], found as the
     * chunk walk finds them: a narrow range pays for a few records */
    memset(c->ck, lazy ? CK_LATER : 0, nck);
    /* with the runs known, the chunks are classed as the walk meets them
     * (classify): before the choice only the chunk walk's cost is counted,
     * the run's chunks the start cuts (a whole-space write question on
     * sort passed ~50 chunk records twice as dear, 1,100 of its 6,600
     * instructions, callgrind) */
    for (unsigned op = 0; op < MH_OP_COUNT && lazy && !later; op++) {
        /* at most IDQ_WALK_SAMPLE of the run's chunks, evenly spaced, each
         * standing for `step` (a whole-space write question's run of ~50
         * chunks cost 700 of its 5,400 instructions, callgrind) */
        const uint32_t run = end[op] - first[op];
        const uint32_t step = run > IDQ_WALK_SAMPLE ? run / IDQ_WALK_SAMPLE : 1;
        for (uint32_t k = first[op];
             k < end[op] && !force && walk_cost <= (walk_misses ? id_most : id_most_warm);
             k += step) {
            const uint8_t *rec = seg->chunks + (size_t)(s->chunk_first + k) * seg->chunk_recsz;
            const uint64_t idf = s->id_first + mhf_load_u32(rec + MHF_CHUNK_ID_FIRST);
            const uint64_t idz = s->id_first + mhf_load_u32(rec + MHF_CHUNK_ID_LAST);
            const uint64_t tf = mhf_load_u64(rec + MHF_CHUNK_T_FIRST);
            const uint64_t tl = mhf_load_u64(rec + MHF_CHUNK_T_LAST);
            /* cut: its first row in query order before the start, its last
             * on the query's side */
            if (in_range(q, fwd ? tf : tl, fwd ? idf : idz) ||
                !in_range(q, fwd ? tl : tf, fwd ? idz : idf))
                continue;
            const int hit = cut_blocks_cached(c, seg, s, rec, &last_b);
            walk_cost += (uint64_t)step * (hit ? IDQ_WALK_HIT : IDQ_DECODE);
            walk_misses |= !hit;
        }
    }
    for (unsigned op = 0; op < MH_OP_COUNT && !lazy; op++) {
        for (uint32_t k = first[op]; k < nck; k++) {
            /* the fields compared, straight from the record (checked by
             * mh_seg_slice_check); the stream mask through the decoder */
            const uint8_t *rec = seg->chunks + (size_t)(s->chunk_first + k) * seg->chunk_recsz;
            if (rec[MHF_CHUNK_OP] != op || mhf_load_u64(rec + MHF_CHUNK_PHY_FIRST) > q->b)
                break;
            c->memo[k] = UINT32_MAX;
            range_rows += mhf_load_u32(rec + MHF_CHUNK_ROW_COUNT);
            if (q->sbits) {
                mh_chunk ch;
                MH_TRY(mh_seg_chunk(seg, s, s->chunk_first + k, &ch, &c->diag));
                if (!mask_meets(q, ch.stream_mask))
                    continue;
            }
            cover += mhf_load_u32(rec + MHF_CHUNK_ROW_COUNT);
            klo = k < klo ? k : klo;
            khi = k > khi ? k : khi;
            if (chunk_outside(q, s, rec)) {
                c->ck[k] = 2; /* its labels are only checked against its ids */
                continue;
            }
            c->ck[k] = 1;
            /* the chunk walk searches (and decodes a block of) a chunk the
             * start cuts; one wholly past the start costs it little once its
             * cutoff is set */
            if (!force && walk_cost <= id_most &&
                !in_range(q, fwd ? mhf_load_u64(rec + MHF_CHUNK_T_FIRST)
                                 : mhf_load_u64(rec + MHF_CHUNK_T_LAST),
                          s->id_first + (fwd ? mhf_load_u32(rec + MHF_CHUNK_ID_FIRST)
                                             : mhf_load_u32(rec + MHF_CHUNK_ID_LAST)))) {
                const int hit = cut_blocks_cached(c, seg, s, rec, &last_b);
                walk_cost += hit ? IDQ_WALK_HIT : IDQ_DECODE;
                walk_misses |= !hit;
            }
        }
    }
    /* a transition placed by the id transitions (SPEC §9g) costs the id
     * path one located row where the chunk walk decodes a block per chunk
     * the start cuts: with most of the slice's rows able to match, the id
     * path is taken whatever the cached blocks (a slice of one block
     * aside: the chunk walk decodes that one).
     *
     * A question of a few streams whose range meets chunks holding half
     * the slice's rows or more, where the segment has the streams' id runs
     * (section 17), takes it too: the walk visits only the streams' ids,
     * most of which then match, where the chunk walk, its blocks cached and
     * so costed as cheap, takes candidates from every chunk holding a row
     * of the streams, passing the other streams' rows. On a 4-thread
     * recording (870 M accesses, 200 questions a class, each timed both
     * ways): whole-space questions p50 10-12 us (max 10) and 4.6-6.4 us
     * (max 1) by the chunk walk, 1.7-2.2 us by the id path, which was
     * faster in 770 of the 800; a narrower range leaves the choice to the
     * costs above (the id path passes the stream's rows outside it: a
     * 1 MiB max-1 question with 3 chunks able to match took 25 us by it,
     * 4.2 by the chunk walk) */
    if (!lazy)
        runs = khi - klo + 1 < nck;
    if (walk_cost > 0 && !walk_misses)
        id_cost = id_fixed + IDQ_LOCATE * (uint64_t)want;
    /* (the runs serve only when each stream has its own: one whose runs
     * were not kept leaves the id path testing every row, where a
     * real recording of xz -T2 found its main thread's 10 accesses 10x
     * slower than by the chunk walk; a section that does not read takes
     * the id path, which reports it) */
    int serves = 0;
    if (q->nslist && range_rows >= s->count / 2 && !c->r->sruns_off)
        serves = mh_sruns_serves(seg, q->slist, q->nslist, &c->diag) != 0;
    const int exact = (has_idt && cover >= s->count / 2 && s->block_count > 1) || serves;
    if (!force && (cover == 0 || cover < s->count / IDQ_COVER_DIV ||
                   (walk_cost <= id_cost + labels_cost(want, s->count, cover, runs) && !exact)))
        return 0;
    atomic_fetch_add_explicit(&((mh_reader *)c->r)->idmap_walks, 1, memory_order_relaxed);
    /* the id transitions (SPEC §9g): where the transition bounds fall
     * among the ids, from the samples; exact at stride 1 */
    int placed = 0;
    if (has_idt) {
        mh_idtime_view tv;
        MH_TRY(mh_idtime_view_get(seg, &tv, &c->diag));
        if (bo.tlo > 0) {
            /* samples before j have transitions below tlo: so have their
             * ids and every id before */
            uint32_t j;
            MH_TRY(mh_idtime_first_at_least(&tv, si, s->count, bo.tlo, &j, &c->diag));
            int64_t lo = j ? (int64_t)(j - 1) * tv.k + 1 : 0;
            if (lo > bo.lo)
                bo.lo = lo;
        }
        if (bo.thi < UINT64_MAX) {
            /* sample j's transition is above thi: so is every id's from it */
            uint32_t j;
            MH_TRY(mh_idtime_first_at_least(&tv, si, s->count, bo.thi + 1, &j, &c->diag));
            int64_t hi = (int64_t)j * tv.k - 1;
            if (hi < bo.hi)
                bo.hi = hi;
        }
        placed = tv.k == 1;
    }
    if (by_t && !placed) {
        /* every row the index records show is a sample of the ids'
         * transitions, whatever its op or address: each chunk's first and
         * last rows (of every op: a read-only query placed its start by
         * the read chunks only), and the blocks' first rows */
        for (uint32_t k = 0; k < nck; k++) {
            const uint8_t *rec = seg->chunks + (size_t)(s->chunk_first + k) * seg->chunk_recsz;
            narrow(&bo, mhf_load_u64(rec + MHF_CHUNK_T_FIRST),
                   mhf_load_u32(rec + MHF_CHUNK_ID_FIRST));
            narrow(&bo, mhf_load_u64(rec + MHF_CHUNK_T_LAST),
                   mhf_load_u32(rec + MHF_CHUNK_ID_LAST));
        }
        for (uint32_t b = 0; b < s->block_count; b++) {
            const uint8_t *rec = seg->blocks + (size_t)(s->block_first + b) * seg->block_recsz;
            narrow(&bo, mhf_load_u64(rec + MHF_BLOCK_FIRST_T),
                   mhf_load_u32(rec + MHF_BLOCK_FIRST_ID));
        }
    }
    /* a whole-ish query (the chunks that can match hold most of the
     * slice): the start placed by probes first. A narrow one locates only
     * rows of the few chunks meeting [A, B], cheaper than probes into any */
    if (q->kind == MH_FROM_TRANSITION && cover >= s->count / 2 && !placed)
        MH_TRY(probe_start(c, seg, si, s, q, &bo));
    const int filtered = row_filtered(q);
    /* a label outside [klo, khi] names no chunk able to match: the scan
     * passes such labels several at a time past its first IDQ_NEAR (the
     * rows of an op are not spread evenly: a 1 MiB write question on
     * python, its chunks 70 % of a slice's rows, all of them before its
     * start, passed 30,000 labels one by one, 7.8 us; 2.2 so). None
     * marked: [0, 0], which classes to 0. */
    if (klo > khi)
        klo = khi = 0;
    size_t n = 0;
    int have_prev = 0;
    uint64_t prev_t = 0, prev_id = 0;
    /* the stream id runs (section 17, SPEC 9d.3): a question of a few
     * streams walks only the ids inside their runs, [run_lo, run_hi]
     * (slice offsets), going from one run to the next; the rows between
     * are other streams' */
    int sr_on = 0;
    mh_sruns_view srv;
    int64_t run_lo = 0, run_hi = -1;
    const uint64_t sbase = s->id_first - seg->id_first;
    if (q->nslist && !c->r->sruns_off) {
        int rc = mh_sruns_view_get(seg, &srv, &c->diag);
        if (rc != MH_OK && rc != MH_ENOTFOUND) {
            mh_diag_prefix(&c->diag, "%s", seg->name);
            return rc;
        }
        sr_on = rc == MH_OK;
    }
    int64_t x = fwd ? bo.lo : bo.hi;
    while (fwd ? x <= bo.hi : x >= bo.lo) {
        if (sr_on && (x < run_lo || x > run_hi)) {
            uint64_t ra, rb;
            int rc = mh_sruns_next(&srv, q->slist, q->nslist, sbase + (uint64_t)x, fwd, &ra,
                                   &rb, &c->diag);
            if (rc == MH_ENOTFOUND) {
                sr_on = 0; /* a stream without its runs: every row tested */
            } else if (rc < 0) {
                mh_diag_prefix(&c->diag, "%s", seg->name);
                return rc;
            } else if (rc == 0) {
                break; /* none of the streams' ids left in the segment */
            } else {
                run_lo = (int64_t)ra - (int64_t)sbase;
                run_hi = (int64_t)rb - (int64_t)sbase;
                x = fwd ? (x < run_lo ? run_lo : x) : (x > run_hi ? run_hi : x);
                continue;
            }
        }
        /* (the group walked, the common case, tested here: a call per
         * located row cost ~75 instructions, 10 % of a whole-space max-10
         * question, callgrind) */
        if (!(c->lab_seg == seg && c->lab_slice == si && (uint32_t)x >= c->lab_first &&
              (uint32_t)x - c->lab_first < c->lab_n))
            MH_TRY(labels_at(c, seg, si, s, (uint32_t)x, fwd));
        const uint8_t *lab = c->lab;
        const int64_t g0 = c->lab_first, g1 = (int64_t)c->lab_first + c->lab_n - 1;
        /* the labels of this group, in query order, until a candidate: one
         * loop per stored width, so that the common u8 one stays tight */
        int64_t stop = fwd ? (g1 < bo.hi ? g1 : bo.hi) : (g0 > bo.lo ? g0 : bo.lo);
        if (sr_on)
            stop = fwd ? (stop < run_hi ? stop : run_hi) : (stop > run_lo ? stop : run_lo);
        uint32_t k = 0;
        int found = 0;
        /* the first IDQ_NEAR labels one at a time (a dense op's next row,
         * the common case, found without a call); past them, when the
         * chunks able to match leave labels out, mhq_label_next passes
         * those several at a time */
        const int64_t lim = !runs ? stop
                            : fwd ? (stop - x > IDQ_NEAR ? x + IDQ_NEAR : stop)
                                  : (x - stop > IDQ_NEAR ? x - IDQ_NEAR : stop);
#define IDQ_SCAN(LOAD)                                                         \
    do {                                                                       \
        if (fwd) {                                                             \
            for (; x <= lim; x++)                                              \
                if (c->ck[k = (LOAD)]) {                                       \
                    found = 1;                                                 \
                    break;                                                     \
                }                                                              \
        } else {                                                               \
            for (; x >= lim; x--)                                              \
                if (c->ck[k = (LOAD)]) {                                       \
                    found = 1;                                                 \
                    break;                                                     \
                }                                                              \
        }                                                                      \
    } while (0)
        if (c->lab_w == 1)
            IDQ_SCAN(lab[x - g0]);
        else if (c->lab_w == 2)
            IDQ_SCAN(mhf_load_u16(lab + 2 * (x - g0)));
        else
            IDQ_SCAN(mhf_load_u32(lab + 4 * (x - g0)));
#undef IDQ_SCAN
        if (!found && (fwd ? x <= stop : x >= stop)) {
            const int64_t j =
                mhq_label_next(lab, c->lab_w, x - g0, stop - g0, fwd, c->ck, klo, khi - klo, &k);
            found = j >= 0;
            x = found ? g0 + j : fwd ? stop + 1 : stop - 1;
        }
        if (!found)
            continue; /* x is past this group (or past the bounds) */
        if (c->ck[k] == CK_LATER && classify(c, seg, s, q, first, end, k) == 0) {
            x += fwd ? 1 : -1;
            continue;
        }
        const uint32_t xo = (uint32_t)x;
        const uint8_t *crec = seg->chunks + (size_t)(s->chunk_first + k) * seg->chunk_recsz;
        if (c->ck[k] == 2) {
            /* a chunk wholly before the start or past the end: a label of
             * one of its rows cannot lead to a match, but a label outside
             * its ids would hide the row it belongs to */
            if (xo < mhf_load_u32(crec + MHF_CHUNK_ID_FIRST) ||
                xo > mhf_load_u32(crec + MHF_CHUNK_ID_LAST))
                return not_there(c, si, s, s->chunk_first + k, xo);
            x += fwd ? 1 : -1;
            continue;
        }
        /* locate the row: in the block of the chunk's last located row when
         * the id lies within its rows of the chunk there, else by binary
         * search over the chunk's blocks by first id */
        const uint32_t r0 = mhf_load_u32(crec + MHF_CHUNK_ROW_FIRST);
        const uint32_t r1 = r0 + mhf_load_u32(crec + MHF_CHUNK_ROW_COUNT);
        const uint32_t b0 = r0 / R, b1 = (r1 - 1) / R;
        const mh_rows *rows = NULL;
        uint32_t b = UINT32_MAX, k0 = 0, k1 = 0;
        if (c->memo[k] != UINT32_MAX) {
            uint32_t mb = c->memo[k] / R;
            const mh_rows *mr = mh_query_cached_part(c, seg, s->block_first + mb);
            if (mr) {
                uint32_t a0, a1;
                if (rows_in_block(r0, r1, mb * R, mr, &a0, &a1) &&
                    mr->id_off[a0] <= xo && xo <= mr->id_off[a1 - 1])
                    b = mb;
            }
        }
        if (b == UINT32_MAX)
            b = block_of_id(seg, s, b0, b1, xo);
        /* the block's address range and streams, straight from its record
         * (b is one of the chunk's blocks, within the checked slice) */
        const uint8_t *brec = seg->blocks + (size_t)(s->block_first + b) * seg->block_recsz;
        if (mhf_load_u64(brec + MHF_BLOCK_PHY_MAX) < q->a ||
            mhf_load_u64(brec + MHF_BLOCK_PHY_MIN) > q->b ||
            !mask_meets(q, seg->major >= 2 ? mhf_load_u32(brec + MHF2_BLOCK_STREAM_MASK) : 1)) {
            x += fwd ? 1 : -1; /* no row of this block can match */
            continue;
        }
        /* the block's ids and transitions (the row's other columns are
         * taken alone below, once it is tested) */
        int32_t ent;
        MH_TRY(mh_query_block_located(c, seg, s, b, &rows, &ent));
        if (!rows_in_block(r0, r1, b * R, rows, &k0, &k1))
            return not_there(c, si, s, s->chunk_first + k, xo);
        const uint32_t *col_id = rows->id_off;
        const uint64_t *col_t = rows->t;
        uint32_t i;
        uint32_t m = c->memo[k];
        if (m != UINT32_MAX && m / R == b && m % R + 1 >= k0 && m % R + 1 < k1 &&
            col_id[m % R + 1] == xo)
            i = m % R + 1; /* the next row of the chunk: the common case */
        else if (m != UINT32_MAX && m / R == b && m % R > k0 && col_id[m % R - 1] == xo)
            i = m % R - 1; /* backward */
        else {
            const uint32_t g = row_guess(crec, r0, r1, b * R, k0, k1, xo);
            i = mhq_row_search_near(col_id, k0, k1, xo, g);
            if (i == k1 || col_id[i] != xo)
                return not_there(c, si, s, s->chunk_first + k, xo);
        }
        c->memo[k] = b * R + i;
        const uint64_t id = s->id_first + xo, t = col_t[i];
        /* the rows located follow their ids (a label pointing to a row of
         * another chunk with this id would break it: ids are unique) */
        if (have_prev && (fwd ? t < prev_t : t > prev_t))
            MH_FAIL(MH_ECORRUPT, &c->diag, 0,
                    "slice %u: accesses %llu and %llu of different chunks "
                    "disagree (id repeated or transition out of order)",
                    si, (unsigned long long)prev_id, (unsigned long long)id);
        have_prev = 1;
        prev_t = t;
        prev_id = id;
        if (!in_range(q, t, id) && q->kind == MH_FROM_TRANSITION) {
            /* before the start. Every row of the block, of whatever chunk,
             * is a (transition, id) sample: transitions do not decrease
             * with ids, so each row before the start rules out its id and
             * every id before it. One pass over the block's transitions
             * (a few instructions a row, against ~170 a row to decode a
             * block) moves the walk past all of them: a whole-space max-1
             * query decoded 4.6 blocks a query on the python store, one
             * per chunk met before the start, and now decodes about one
             * (callgrind, tools/bench probe --range 0). A later id whose
             * row lies in this block is then on the query's side of the
             * start, so the pass runs at most once per block and walk. */
            narrow_block(q, &bo, rows);
            x = fwd ? bo.lo : bo.hi;
            continue;
        }
        if (!in_range(q, t, id)) {
            /* before the start: so is every row of the chunk in this block
             * up to the last one before it (ids after x, forward) */
            /* (a binary search: in_range is monotone along them) */
            uint32_t a = fwd ? i + 1 : k0, z = fwd ? k1 : i;
            while (a < z) {
                uint32_t mid = a + (z - a) / 2;
                int side = in_range(q, col_t[mid], s->id_first + col_id[mid]);
                if (fwd ? !side : side)
                    a = mid + 1;
                else
                    z = mid;
            }
            /* forward, rows [i, a) are before the start; backward [a, i] */
            uint32_t p = fwd ? a - 1 : a;
            narrow(&bo, col_t[p], col_id[p]);
            if (fwd)
                x = (int64_t)col_id[p] + 1;
            else
                x = (int64_t)col_id[p] - 1;
            continue;
        }
        if (!in_end(q, t, id))
            break; /* every later row is past the end too */
        x += fwd ? 1 : -1;
        /* its other columns (the row alone, from the kept block) */
        mh_access a;
        MH_TRY(mh_query_row_take(c, ent, seg, s, b, s->chunk_first + k, i, crec[MHF_CHUNK_OP],
                                 &a));
        if (a.physical > q->b || a.physical + (a.size - 1u) < q->a)
            continue;
        if (filtered && !access_keep(q, &a))
            continue;
        out[n] = a;
        if (++n == want)
            break;
    }
    *got = n;
    return 1;
}
