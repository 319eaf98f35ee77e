/*
 * query_int.h - the query engine's shared state, between query.c (the
 * chunk walk, the cache, cursors) and query_wide.c (the wide path: slices
 * wholly inside a query's window, answered by placing rows by id offset).
 * Not installed.
 */
#ifndef MH_QUERY_INT_H
#define MH_QUERY_INT_H

#include "internal.h"

/* Decoded blocks and id map label groups kept by one query context: an
 * LRU list threaded through the entries, found through an open-addressing
 * table (linear probing, backward-shift deletion), under one byte budget.
 * An entry's key is a segment and a u64: a block's index in the segment's
 * block array, or MHQ_KEY_LABELS | a group's index in the segment's id map
 * (the one section of its kind), so the two never meet. Entries get their
 * buffers on first use; an entry reused for the other kind frees its old
 * buffer. */
#define MHQ_KEY_LABELS (UINT64_C(1) << 32)
/* label groups take at most 1/MHQ_LABELS_SHARE of the byte budget (query.c,
 * mhq_labels_entry) */
#define MHQ_LABELS_SHARE 8
/* rows of a located block (centry.sparse) whose accesses an entry keeps:
 * a question asked again takes none again (4 up to 1.13.7: a whole-space
 * max-10 question takes up to 10 rows of one block, and questions from
 * nearby moments take the same ones; 16 cost 720 bytes an entry beside
 * its ~2 KB cursor, and took python's whole-space max-10 bwd write
 * questions from 15,600 instructions to 11,500 at their later passes) */
#define MHQ_TAKEN 16
/* bytes a context's cache holds when its arena is made (query.c,
 * ctx_arena) */
#define MHQ_ARENA_FROM ((size_t)1 << 20)
/* slots of a context's block table when it is made (query.c, slot_room) */
#define MHQ_SLOTS_FIRST 256u
/* What a located block's entry needs beyond its rows (sparse): the cursor
 * over its raw block's columns and the rows taken last. Apart from the
 * entry, made with its raw buffer: in the entry itself (1.7 KB of
 * checkpoints) it made every cache's entry array, zeroed at each context's
 * making, ~2 MB, and a cursor's open 69 us (python store, 8 MiB cache). */
typedef struct centry_sparse {
    mh_block_cols bc;           /* raw's columns and cursor */
    uint32_t tk_row[MHQ_TAKEN]; /* rows taken last (tk_n of them) */
    mh_access tk[MHQ_TAKEN];    /* and their accesses */
    uint8_t tk_n, tk_next;      /* held; the one to replace next */
} centry_sparse;

typedef struct centry {
    const mh_seg *seg; /* NULL: free */
    uint64_t key;      /* block index, or MHQ_KEY_LABELS | group index */
    int32_t prev, next; /* LRU list, most recent first; -1 ends */
    int32_t pprev, pnext; /* probation list, oldest first (prob set) */
    uint8_t prob;         /* a block let in on probation (query.c, cache_admit) */
    uint64_t last;        /* qctx.clock at its last use */
    mh_rows rows;      /* the block's rows rows.lo .. rows.n - 1 (get_block_entry) */
    uint32_t rows_all; /* the block's rows: rows.lo > 0 or rows.n < rows_all, a part only */
    uint8_t id_t;      /* 1: the id and transition columns only */
    uint8_t sparse;    /* id_t, and raw holds the block: rows taken from it */
    uint8_t *raw;      /* the raw block (sparse), raw_cap bytes allocated */
    uint32_t raw_cap;
    centry_sparse *sp; /* allocated with raw, kept and freed with it */
    uint32_t size_ext; /* the largest size - 1u of rows (query.c, scan_chunk) */
    uint64_t *gm;      /* group masks of whole blocks' rows (query.c, scan_chunk) */
    uint32_t gm_cap;   /* words gm holds */
    uint8_t walked;    /* a chunk walk read its rows since its fill */
    uint8_t gm_ok;     /* gm cleared since its fill */
    uint8_t *lab; /* a label group's labels as stored, lab_w bytes each */
    uint32_t lab_cap, lab_first, lab_n; /* bytes held, first id offset, count */
    uint32_t lab_all; /* the group's count: lab_n < lab_all, a prefix only */
    unsigned lab_w;
} centry;

/* Room for a stream set's bits (qspec.sbits). */
#define MHQ_SBITS_WORDS ((MH_STREAM_MAX + 1) / 64)

/* The chunk walk's matches in a slice (query_cands.c): v[0 .. sorted - 1]
 * in query order, then what the chunks walked since added, each chunk's
 * in query order. */
typedef struct mhq_cands {
    mh_access *v;
    size_t n, cap, sorted;
    mh_access *run; /* a run's copy while it is merged */
    size_t caprun;
} mhq_cands;

/* Room for one more in c->v: MH_OK or MH_ENOMEM. */
int mhq_cands_grow(mhq_cands *c);

static inline int mhq_cands_add(mhq_cands *c, const mh_access *a) {
    if (c->n == c->cap && mhq_cands_grow(c) != MH_OK)
        return MH_ENOMEM;
    c->v[c->n++] = *a;
    return MH_OK;
}

/* c's matches in query order (dir: MH_FORWARD by ascending id, else
 * descending), the first `keep` of them kept (keep >= 1); then all are
 * sorted. Never fails: out of memory for a run's copy, it sorts in place. */
void mhq_cands_merge(mhq_cands *c, uint32_t dir, size_t keep);

static inline void mhq_cands_order(mhq_cands *c, uint32_t dir, size_t keep) {
    const size_t n = c->n;
    if (n <= 1 || c->sorted >= n) /* nothing to place (max 1, mostly): no call */
        c->n = c->sorted = n < keep ? n : keep;
    else
        mhq_cands_merge(c, dir, keep);
}

void mhq_cands_free(mhq_cands *c);

typedef struct qctx {
    const mh_reader *r;
    size_t made_for; /* r's cache option when made (ctx_give) */
    mh_arena arena; /* the entries' rows, raw blocks and label groups
                     * (query.c, ctx_arena) */
    int arena_tried;
    centry *ent;
    uint32_t nent, capent; /* entries in use, entries allowed */
    size_t held;           /* bytes the entries' rows take */
    int32_t *slot;         /* table of entry indexes, -1 empty */
    uint32_t mask;         /* table size - 1 */
    int32_t head, tail;    /* most and least recently used */
    int32_t spare;         /* entries cache_trim emptied, out of the list
                            * (linked by next; -1 none) */
    /* thrash resistance (query.c, cache_admit): blocks let in on
     * probation, the oldest first out; the uses of blocks counted (clock,
     * entry_used); the evicted blocks' keys and last uses (ghost, 2 words
     * a slot, gmask + 1 slots; NULL until the first eviction); psel > 0:
     * new blocks go on probation */
    int32_t phead, ptail;
    uint32_t nprob;
    uint64_t clock;
    uint64_t *ghost;
    uint32_t gmask;
    int32_t psel;
    uint32_t admitted; /* blocks let in on probation (every 32nd not) */
    uint8_t *scratch;  /* a raw block of scratch_rows rows */
    uint32_t scratch_rows;
    mhq_cands cands; /* the chunk walk's matches (query_cands.c) */
    mh_diag diag; /* the detail of the failing call (code 0 at its start) */
    /* the wide path's (query_wide.c): one block decoded outside the cache,
     * and a slice's matches placed by id offset with their marks */
    mh_rows stream;
    mh_access *stage;  /* by id offset */
    uint32_t *mark;    /* by id offset: epoch of the slice that placed it */
    uint32_t epoch;
    uint32_t capslice; /* rows stage and mark hold */
    /* the id-order path's (query_idmap.c): the label group it walks (an
     * entry of the cache, lab_seg NULL: none; pinned, pin >= 0, so that
     * the blocks it decodes do not push it out while in use), and per
     * chunk of the slice walked whether it can match and its last located
     * row */
    const uint8_t *lab;
    unsigned lab_w;
    const mh_seg *lab_seg;
    uint32_t lab_slice, lab_first, lab_n;
    int32_t pin;
    /* the id map's view of segment idv_seg (NULL: not got yet), got once
     * a walk; idv_rc: what mh_idmap_view_get returned (its detail in diag
     * when it failed) */
    mh_idmap_view idv;
    const mh_seg *idv_seg;
    int idv_rc;
    size_t lab_held; /* bytes the cache's label groups take (of held) */
    uint8_t *ck;
    uint32_t *memo;
    uint32_t capck;
    /* the first chunk of each op meeting [A, B] in slice first_si of
     * first_seg, found by the id path for the chunk walk of the same
     * slice and query (scan_slice clears it); NULL: none */
    const mh_seg *first_seg;
    uint32_t first_si;
    uint32_t first_chunk[MH_OP_COUNT];
    /* the address postings' candidate slices of the current segment
     * (apost_read.c writes them here: a bit per slice) */
    uint64_t *ap_bits;
    size_t ap_cap;
    /* the stream postings' (section 15, spost_read.c), the same way */
    uint64_t *sp_bits;
    size_t sp_cap;
    /* last, past the fields every question reads: fill's summary iterator
     * (query.c) and mh_query_run's stream set (qspec.sbits), kept here
     * rather than on the stack, where their 14 KiB stood between a
     * question's frames: it touched 4.6 stack pages, now 2.7 (lackey,
     * python's point max1 fwd rw questions) */
    mh_sum_iter sum_it;
    uint64_t sbits[MHQ_SBITS_WORDS];
    uint32_t slist[MHF_SPOST_QUERY_STREAMS]; /* qspec.slist */
} qctx;

typedef struct qspec {
    uint32_t kind, dir;
    uint64_t start, a, b;
    uint32_t ops;
    uint32_t end_kind; /* MH_END_*: rows past end are never visited */
    uint64_t end;
    /* since 1.2. A window is the id range [id_lo, id_hi] (0, UINT64_MAX:
     * none), folded into in_range and in_end so that every walk starts and
     * stops at it as at the start and the end bound. */
    uint64_t id_lo, id_hi;
    /* the stream set: smask has bit (s mod 32) of each stream s in it, for
     * skipping slices, chunks and blocks; sbits (65536 bits) decides a
     * row. NULL sbits: every stream (smask all ones). */
    uint32_t smask;
    const uint64_t *sbits;
    int pc_on; /* MH_FILTER_PC: rows with a pc in [pc_lo, pc_hi] */
    uint64_t pc_lo, pc_hi;
    /* the stream set's ids, increasing and distinct, for the stream
     * postings (SPEC 9d.2), in the caller's storage (the query context's
     * or the cursor's, as sbits); nslist 0: every stream, or more ids
     * than the postings serve (MHF_SPOST_QUERY_STREAMS) */
    uint32_t nslist;
    const uint32_t *slist;
} qspec;


/* Does a row with this transition and id lie on the query's side of the
 * start (and of the window's beginning)? Monotone along a chunk's rows. */
static inline int in_range(const qspec *q, uint64_t t, uint64_t id) {
    if (q->dir == MH_FORWARD) {
        if (id < q->id_lo)
            return 0;
        return q->kind == MH_FROM_TRANSITION ? t >= q->start : id > q->start;
    }
    if (id > q->id_hi)
        return 0;
    return q->kind == MH_FROM_TRANSITION ? t <= q->start : id < q->start;
}

/* Is a row with this transition and id within the end bound (and the
 * window's end)? Monotone along query order: once false, false for every
 * later row. */
static inline int in_end(const qspec *q, uint64_t t, uint64_t id) {
    int fwd = q->dir == MH_FORWARD;
    if (fwd ? id > q->id_hi : id < q->id_lo)
        return 0;
    if (q->end_kind == MH_END_NONE)
        return 1;
    uint64_t v = q->end_kind == MH_END_TRANSITION ? t : id;
    return fwd ? v <= q->end : v >= q->end;
}

/* Do the stream and pc filters keep row i of rows? */
static inline int keep_stream_pc(const qspec *q, uint32_t stream, uint8_t has_pc, uint64_t pc) {
    if (q->sbits && (stream > MH_STREAM_MAX || !(q->sbits[stream >> 6] >> (stream & 63) & 1)))
        return 0;
    if (q->pc_on && (!has_pc || pc < q->pc_lo || pc > q->pc_hi))
        return 0;
    return 1;
}
static inline int row_keep(const qspec *q, const mh_rows *rows, uint32_t i) {
    return keep_stream_pc(q, mh_rows_stream(rows, i), mh_rows_has_pc(rows, i),
                          mh_rows_has_pc(rows, i) ? mh_rows_pc(rows, i) : 0);
}

/* The same for an access. */
static inline int access_keep(const qspec *q, const mh_access *a) {
    return keep_stream_pc(q, a->stream, a->has_pc, a->pc);
}

/* Can an index record with this stream mask hold a row of the set? */
static inline int mask_meets(const qspec *q, uint32_t mask) {
    return (mask & q->smask) != 0;
}

/* Does the query filter rows beyond op, address, start and end? */
static inline int row_filtered(const qspec *q) { return q->sbits || q->pc_on; }

/* First chunk of op, among the slice's chunk records [lo, hi), whose range
 * ends at or after a (hi when none): a binary search whose probes read the
 * two fields they compare straight from the records (checked by
 * mh_seg_slice_check). */
static inline uint32_t mhq_first_chunk(const mh_seg *seg, uint32_t lo, uint32_t hi,
                                       unsigned op, uint64_t a) {
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *rec = seg->chunks + (size_t)mid * seg->chunk_recsz;
        unsigned cop = rec[MHF_CHUNK_OP];
        if (cop < op || (cop == op && mhf_load_u64(rec + MHF_CHUNK_PHY_LAST) < a))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First row index in [a, b) of rows whose id offset is >= x (col_id
 * increasing there): the id path (query_idmap.c) locating a row. */
static inline uint32_t mhq_row_search(const uint32_t *col_id, uint32_t a, uint32_t b,
                                      uint32_t x) {
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (col_id[m] < x)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* mhq_row_search's answer, found from a guess g in [a, b) (a < b): a gallop
 * from it, then a binary search in the last step, O(log d) probes for a
 * guess d rows off. The guess (a chunk's rows advance with their ids about
 * evenly) puts the probes in the id column's line that holds the answer,
 * where the binary search from the middle read three or four lines of it
 * for each located row (a wide question locates one in each of ~10 blocks,
 * their columns no longer in the CPU's caches). */
static inline uint32_t mhq_row_search_near(const uint32_t *col_id, uint32_t a, uint32_t b,
                                           uint32_t x, uint32_t g) {
    uint32_t step = 1;
    if (col_id[g] >= x) {
        /* the answer lies in [a, g] */
        while (g - a > step && col_id[g - step] >= x) {
            g -= step;
            step <<= 1;
        }
        return mhq_row_search(col_id, g - a > step ? g - step : a, g, x);
    }
    /* in (g, b] */
    while (b - g > step && col_id[g + step] < x) {
        g += step;
        step <<= 1;
    }
    return mhq_row_search(col_id, g + 1, b - g > step ? g + step : b, x);
}

/* The chunks of op in slice si (record s; its chunk records, in (op,
 * address) order, checked by mh_seg_slice_check): [*lo, *hi), absolute
 * indexes, from the segment's memo of where each op's chunks begin (kept
 * once searched), else searched. A whole-space question's run of chunks
 * is all of them: its two searches over the slice's records took ~18
 * cache lines a question (callgrind --cache-sim, python). */
static inline void mhq_op_chunks(const mh_seg *seg, uint32_t si, const mh_slice *s, unsigned op,
                                 uint32_t *lo, uint32_t *hi) {
    const uint32_t cf = s->chunk_first, ce = cf + s->chunk_count;
    uint32_t at[2];
    for (unsigned e = 0; e < 2; e++) {
        const unsigned o = op + e; /* op's first chunk, then the next op's */
        if (o == 0 || o >= MH_OP_COUNT) {
            at[e] = o == 0 ? cf : ce;
            continue;
        }
        const uint32_t v = mh_seg_memo_get(seg, MH_MEMO_OP_START + o - 1, si);
        if (v) {
            at[e] = cf + (v - 1);
            continue;
        }
        at[e] = mhq_first_chunk(seg, cf, ce, o, 0);
        _Atomic uint32_t *m = mh_seg_memo(seg, MH_MEMO_OP_START + o - 1, si);
        if (m)
            atomic_store_explicit(m, at[e] - cf + 1, memory_order_relaxed);
    }
    *lo = at[0];
    *hi = at[1];
}

/* The end of the run of op's chunks in [lo, hi) (absolute indexes, lo at
 * or after the op's first chunk meeting an address): the first whose op
 * is later or whose first address is above b. */
static inline uint32_t mhq_chunk_end(const mh_seg *seg, uint32_t lo, uint32_t hi,
                                     unsigned op, uint64_t b) {
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *rec = seg->chunks + (size_t)mid * seg->chunk_recsz;
        unsigned cop = rec[MHF_CHUNK_OP];
        if (cop < op || (cop == op && mhf_load_u64(rec + MHF_CHUNK_PHY_FIRST) <= b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Checks a freshly decoded block's rows, in one pass (SPEC.md 5.6, 14
 * step 13): its first row is its record's, each row inside its chunk's
 * ranges and its block's address range, ids increasing and transitions
 * not decreasing along each chunk's run of rows in the block, its stream
 * in the block's, chunk's and slice's masks. A row inside its chunk is
 * inside its slice (mh_seg_slice_check). id_t_only: rows of the id and
 * transition columns alone (mh_query_block_id_t), checked for those. */
int mh_query_check_rows(const mh_seg *seg, const mh_slice *s, uint32_t b,
                        const mh_rows *rows, int id_t_only, mh_diag *d);
/* Decodes rows from .. upto - 1 of block b of slice s (upto UINT32_MAX: to
 * its last; rows->lo = from but for id_t, format 1 or from past the rows),
 * every column or (id_t) the id and transition columns only, into rows
 * with every check of what was decoded, until the block is known
 * (mh_seg_block_known, marked when all its rows and columns passed): a
 * block decoded again after the cache let it go costs its decompression
 * and columns alone. */
int mh_query_decode_checked(const mh_seg *seg, const mh_slice *s, uint32_t b,
                            uint32_t from, uint32_t upto, int id_t, uint8_t *scratch,
                            mh_rows *rows, mh_diag *d);

/* The access of row i of rows (op from its chunk). */
static inline mh_access mhq_access(const mh_slice *s, const mh_rows *rows,
                                   uint32_t i, uint8_t op) {
    /* the decode's hints spare a load of what it already knows */
    uint8_t has_pc = rows->no_pc ? 0 : rows->pc_all ? 1 : rows->has_pc[i];
    return (mh_access){.id = s->id_first + rows->id_off[i],
                       .transition = rows->t[i],
                       .linear = rows->lin[i],
                       .physical = rows->phy[i],
                       .pc = has_pc ? rows->pc[i] : 0,
                       .size = rows->size[i],
                       .stream = rows->stream_zero ? 0 : mh_rows_stream(rows, i),
                       .op = op,
                       .has_linear = rows->lin_all ? 1 : rows->has_lin[i],
                       .has_pc = has_pc};
}

/* The decoded rows of segment-wide block `key` when c's cache holds them
 * all (checked when they were decoded), else NULL (also when it holds a
 * part of them only). The LRU order is left as
 * it is: a bulk scan must not push out what point queries keep. */
const mh_rows *mh_query_cached(const qctx *c, const mh_seg *seg, uint32_t key);
/* The rows of block `key` when c's cache holds any part of them: the id
 * and transition columns of rows lo .. n - 1 at least (checked). */
const mh_rows *mh_query_cached_part(const qctx *c, const mh_seg *seg, uint32_t key);

/* The wide path (query_wide.c). When slice s (index si of seg, its records
 * checked) lies wholly inside q's window and the query wants most of what
 * the slice holds, writes its first `want` matches in query order to out,
 * sets *got and returns 1; returns 0 (nothing done) when the chunk walk
 * should answer instead; a negative MH_E* code (detail in c->diag) when the
 * data is corrupt or memory runs out. */
int mh_query_wide(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                  const qspec *q, size_t want, mh_access *out, size_t *got);

/* Frees what the wide path keeps in c. */
void mh_query_wide_free(qctx *c);

/* The cache entry holding label group `grp` of seg's id map, made when
 * absent (query.c): *fresh says whether the caller must fill it (its lab
 * then holds cap bytes; mhq_labels_done when they are decoded and checked,
 * mhq_labels_drop when not, before any other call on c's cache). Made the
 * most recently used; the entry c->pin names is never the one reused. */
int mhq_labels_entry(qctx *c, const mh_seg *seg, uint32_t grp, uint32_t cap,
                     int32_t *e, int *fresh);
void mhq_labels_done(qctx *c, int32_t e, const mh_seg *seg);
void mhq_labels_drop(qctx *c, int32_t e);
/* The id path's label scan (idmap_scan.c): the first of labels i .. e
 * (forward, i <= e; backward from i down to e) of lab, w bytes each,
 * whose chunk ck marks (nonzero), its label in *k; -1 when none. Only
 * labels inside [lo, lo + span] are looked up in ck: the caller's every
 * marked chunk lies there. */
int64_t mhq_label_next(const uint8_t *lab, unsigned w, int64_t i, int64_t e, int fwd,
                       const uint8_t *ck, uint32_t lo, uint32_t span, uint32_t *k);
/* The entry of label group grp when c's cache holds it, else -1 (LRU order
 * left as it is). */
int32_t mhq_labels_cached(const qctx *c, const mh_seg *seg, uint32_t grp);

/* The id and transition columns of block b of slice s, every row, checked
 * against their chunks, through c's cache (query.c): an entry of the whole
 * block, or one of these two columns only (the others passed over: a third
 * of a whole decode), which a later call wanting more decodes again whole.
 * For placing a transition among ids (query_idmap.c's probes). Valid
 * until the next call. */
int mh_query_block_id_t(qctx *c, const mh_seg *seg, const mh_slice *s, uint32_t b,
                        const mh_rows **out);
/* Block b of slice s for the id-order path's located rows, through c's
 * cache (query.c): the id and transition columns of all its rows at least
 * (the next ids of a walk lie in other chunks of the block as often as
 * not), checked; *ent names the cache entry for mh_query_row_take. Valid
 * until the next call on c's cache. */
int mh_query_block_located(qctx *c, const mh_seg *seg, const mh_slice *s, uint32_t b,
                           const mh_rows **out, int32_t *ent);
/* The access of row i of that entry (op: its chunk's): its physical,
 * size, linear, stream and pc taken from the block (the entry keeps the
 * raw block and its last few rows taken; the other columns are not
 * decoded) and checked against chunk `chunk` (segment-wide index) and the
 * block, or read from the entry when it holds every column. A value
 * failing its check makes the block decode whole, every row checked (the
 * error names it). */
int mh_query_row_take(qctx *c, int32_t ent, const mh_seg *seg, const mh_slice *s, uint32_t b,
                      uint32_t chunk, uint32_t i, uint8_t op, mh_access *out);

/* The id-order path (query_idmap.c, SPEC.md 14 step 2b). When seg has an
 * id map and walking slice s (index si, records checked) in id order costs
 * less than the chunk walk, writes its first `want` matches in query order
 * to out, sets *got and returns 1; 0 when the chunk walk should answer; a
 * negative MH_E* code (detail in c->diag) for corrupt data or no memory. */
int mh_query_idmap(qctx *c, const mh_seg *seg, uint32_t si, const mh_slice *s,
                   const qspec *q, size_t want, mh_access *out, size_t *got);

/* Frees what the id-order path keeps in c. */
void mh_query_idmap_free(qctx *c);

#endif /* MH_QUERY_INT_H */
