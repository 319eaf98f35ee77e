/*
 * query.c - the half-axis query engine (SPEC.md "Query algorithm").
 *
 * Slices are visited in query order from the one holding the start. In a
 * slice, the chunks of each requested operation that overlap [A, B] are
 * found by binary search; in each chunk the block holding the start is
 * found by binary search over the blocks' first rows, the start row by
 * binary search in the block (a block's rows are checked against their
 * chunks once, when it is decoded), and rows are walked in query order
 * until the chunk yields `want` matches or passes the cutoff (the want-th
 * best id found so far in the slice). The candidates
 * of all chunks are merged by id. Decoded blocks are kept in an LRU cache
 * of mh_reader_set_cache bytes per context: a cursor keeps its own between
 * calls, and mh_query_run calls reuse the reader's pooled contexts, so
 * resume chains and repeated queries decode each block once.
 *
 * An end bound (mh_query.end_kind) is checked at every level in query
 * order: the slice walk stops at the first slice that begins past it,
 * chunks that begin past it are skipped, a forward chunk walk stops at the
 * first block that begins past it (backward, at the block after an id end's
 * row), and every walk at the first row past it: at most one block beyond
 * the end is decoded, backward with a transition end.
 */
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

struct mh_cursor {
    qctx *ctx; /* taken from the reader's pool at the open, given back at
                * the close (ctx_take, ctx_give) */
    qspec spec;
    int started, done, error;
    uint64_t last_id;
    uint64_t last_t; /* transition of the last access returned */
    uint64_t sbits[MHQ_SBITS_WORDS]; /* spec's stream set */
    uint32_t slist[MHF_SPOST_QUERY_STREAMS]; /* ... its ids (spec.slist) */
};

void mh_query_init_size(mh_query *q, size_t size) {
    if (!q || size < MH_QUERY_SIZE_1)
        return;
    mh_query d;
    memset(&d, 0, sizeof d);
    d.struct_size = (uint32_t)(size < UINT32_MAX ? size : UINT32_MAX);
    d.start_kind = MH_FROM_TRANSITION;
    d.direction = MH_FORWARD;
    d.addr_last = UINT64_MAX;
    d.ops = MH_OPS_RW;
    d.end_kind = MH_END_NONE;
    /* exactly the caller's bytes (see mh_writer_options_init_size) */
    size_t n = size < sizeof d ? size : sizeof d;
    memcpy(q, &d, n);
    if (size > n)
        memset((char *)q + n, 0, size - n);
}

/* The exported symbol of the 1.1 / 1.2 headers (memhist.h's macro hides
 * it from code built with this one): its callers' structs may be as short
 * as the first published size. */
void(mh_query_init)(mh_query *q) { mh_query_init_size(q, MH_QUERY_SIZE_1); }

/* Validates the caller's query (of its struct_size) into *spec; d says
 * which field is wrong. sbits: room for the stream set's bits
 * (MHQ_SBITS_WORDS), which spec->sbits then points to. A window filter is
 * looked up in r's windows (MH_ENOTFOUND when it has none such). */
static int read_query(const mh_reader *r, const mh_query *in, qspec *spec,
                      uint64_t *sbits, uint32_t *slist, mh_diag *d) {
    mh_query q;
    mh_query_init(&q);
    MH_CHECK(mh_struct_in(in, MH_QUERY_SIZE_1, sizeof q, &q) == MH_OK, MH_EINVAL,
             d, 0, "query: NULL, struct_size too small, or non-zero bytes past "
             "what this library knows");
    MH_CHECK(q.start_kind <= MH_FROM_ID, MH_EINVAL, d, 0,
             "query: unknown start_kind %u", q.start_kind);
    MH_CHECK(q.direction <= MH_BACKWARD, MH_EINVAL, d, 0,
             "query: unknown direction %u", q.direction);
    MH_CHECK(q.addr_first <= q.addr_last, MH_EINVAL, d, 0,
             "query: addr_first 0x%llx > addr_last 0x%llx",
             (unsigned long long)q.addr_first, (unsigned long long)q.addr_last);
    MH_CHECK(q.ops != 0 && !(q.ops & ~(uint32_t)MH_OPS_ALL), MH_EINVAL, d, 0,
             "query: operation set 0x%x is empty or has unknown bits", q.ops);
    MH_CHECK(q.reserved == 0, MH_EINVAL, d, 0, "query: reserved field not zero");
    MH_CHECK(q.end_kind <= MH_END_ID, MH_EINVAL, d, 0,
             "query: unknown end_kind %u", q.end_kind);
    MH_CHECK((q.streams == NULL) == (q.nstreams == 0), MH_EINVAL, d, 0,
             "query: streams %s with nstreams %u", q.streams ? "set" : "NULL",
             q.nstreams);
    MH_CHECK(q.nstreams <= MH_STREAM_MAX + 1u, MH_EINVAL, d, 0,
             "query: nstreams %u above %u", q.nstreams, MH_STREAM_MAX + 1u);
    MH_CHECK(!(q.filter & ~(MH_FILTER_PC | MH_FILTER_WINDOW)), MH_EINVAL, d, 0,
             "query: filter 0x%x has unknown bits", q.filter);
    MH_CHECK(!(q.filter & MH_FILTER_PC) || q.pc_first <= q.pc_last, MH_EINVAL,
             d, 0, "query: pc_first 0x%llx > pc_last 0x%llx",
             (unsigned long long)q.pc_first, (unsigned long long)q.pc_last);
    spec->kind = q.start_kind;
    spec->dir = q.direction;
    spec->start = q.start;
    spec->a = q.addr_first;
    spec->b = q.addr_last;
    spec->ops = q.ops;
    spec->end_kind = q.end_kind;
    spec->end = q.end;
    spec->id_lo = 0;
    spec->id_hi = UINT64_MAX;
    spec->smask = UINT32_MAX;
    spec->sbits = NULL;
    spec->nslist = 0;
    spec->slist = slist;
    spec->pc_on = (q.filter & MH_FILTER_PC) != 0;
    spec->pc_lo = q.pc_first;
    spec->pc_hi = q.pc_last;
    if (q.streams) {
        /* ids above MH_STREAM_MAX are in no store: they match nothing */
        memset(sbits, 0, MHQ_SBITS_WORDS * sizeof *sbits);
        spec->smask = 0;
        for (uint32_t i = 0; i < q.nstreams; i++) {
            uint32_t id = q.streams[i];
            if (id > MH_STREAM_MAX)
                continue;
            if (!(sbits[id >> 6] >> (id & 63) & 1u)) {
                /* the distinct ids in order, while they are few */
                uint32_t k = spec->nslist;
                if (k < MHF_SPOST_QUERY_STREAMS) {
                    for (; k > 0 && slist[k - 1] > id; k--)
                        slist[k] = slist[k - 1];
                    slist[k] = id;
                }
                spec->nslist++;
            }
            sbits[id >> 6] |= UINT64_C(1) << (id & 63);
            spec->smask |= UINT32_C(1) << (id & 31);
        }
        spec->sbits = sbits;
        if (spec->nslist > MHF_SPOST_QUERY_STREAMS)
            spec->nslist = 0; /* too many for the stream postings */
    }
    if (q.filter & MH_FILTER_WINDOW) {
        mh_window_info w;
        MH_TRY(mh_reader_window_get(r, q.window, &w, d));
        if (w.accesses == 0) { /* an empty window: no id is in it */
            spec->id_lo = 1;
            spec->id_hi = 0;
        } else {
            spec->id_lo = w.id_first;
            spec->id_hi = w.id_first + w.accesses - 1;
        }
    }
    return MH_OK;
}

/* Bytes one decoded row takes in a cache entry (lazy mh_rows): the columns
 * every block has, and the stream and pc arrays an entry gets once it
 * decodes a block storing them (counted in c->held as they come). */
#define ROW_BYTES                                                              \
    (sizeof(uint32_t) + 3 * sizeof(uint64_t) + sizeof(uint32_t) + 1)
#define GM_ROWS 32u /* rows a group mask covers (scan_chunk) */
#define ROW_OPT_BYTES (sizeof(uint32_t) + sizeof(uint64_t) + 1)
#define ROW_IDT_BYTES (sizeof(uint32_t) + sizeof(uint64_t)) /* mh_rows.idt */

/* The bytes of an entry the cache budget counts. A located entry's cursor
 * state (centry_sparse, 2 KB) is not among them: like the entry itself
 * it is bounded by the entry count (capent), as it was when it lived in
 * the entry (1.9.4); counted, it pushed a working set the budget held
 * (100 whole-space max10 backward questions on the sort store, 5.4 us at
 * their second ask) past it (31 us: the LRU cycled). */
static size_t entry_bytes(const centry *x) {
    return (size_t)x->rows.cap * (x->rows.idt ? ROW_IDT_BYTES : ROW_BYTES) +
           (size_t)x->rows.opt_cap * ROW_OPT_BYTES +
           (size_t)x->lab_cap * sizeof *x->lab + x->raw_cap +
           (size_t)x->gm_cap * sizeof *x->gm;
}

static int ctx_init(qctx *c, const mh_reader *r) {
    memset(c, 0, sizeof *c);
    c->r = r;
    c->made_for = r->cache_bytes;
    c->head = c->tail = -1;
    c->phead = c->ptail = -1;
    c->spare = -1;
    c->pin = -1;
    /* segments open lazily: the largest block seen so far, else the
     * writer's default, sizes the cache; scratch grows per segment */
    uint32_t rows = atomic_load(&r->max_rows_per_block);
    if (rows == 0)
        rows = 512;
    size_t per = (size_t)rows * ROW_BYTES;
    size_t want = r->cache_bytes / per;
    /* two entries at least: a chunk walk holds one block while the next
     * is decoded */
    if (want < 2)
        want = 2;
    if (want > (1u << 20))
        want = 1u << 20;
    /* nor more than the store's accesses (its MANIFEST's counts): no store
     * has more blocks, nor label groups, than that, and a small store's
     * contexts made an entry array for the whole budget (15,886 entries,
     * 3.8 MB, for fsck's test stores of 1,600 accesses in 64-row blocks,
     * allocated and freed with each reader under the sanitizers). A count
     * that lies only makes the cache smaller: two entries are enough */
    uint64_t accesses = 0;
    for (size_t i = 0; i < r->nsegs && accesses < want; i++)
        accesses = r->recs[i].count >= want - accesses ? want : accesses + r->recs[i].count;
    if (accesses < want)
        want = accesses < 2 ? 2 : (size_t)accesses;
    /* as many entries again for label groups (query_idmap.c), smaller than
     * blocks: the byte budget bounds both, so that groups held do not cost
     * blocks their entries */
    c->capent = (uint32_t)want * 2;
    /* the table starts small and doubles as entries are taken (slot_room):
     * sized for capent at once, it was set to -1 whole at every context's
     * making (a cursor's open), 16 KiB with 512-row blocks and 2 MiB with
     * 4-row ones, whatever the question went on to use */
    uint32_t tsize = MHQ_SLOTS_FIRST;
    c->mask = tsize - 1;
    /* not zeroed: an entry is cleared as it is first taken (take_entry),
     * and none past nent is read. Zeroing them all here cost every
     * context (a cursor's open) the whole array */
    c->ent = malloc((size_t)c->capent * sizeof *c->ent);
    c->slot = malloc(tsize * sizeof *c->slot);
    c->scratch = malloc(mh_block_raw_bound(rows));
    c->scratch_rows = rows;
    if (!c->ent || !c->slot || !c->scratch)
        return MH_ENOMEM;
    memset(c->slot, 0xff, tsize * sizeof *c->slot);
    return MH_OK;
}

/* The entries' buffers come from an arena in huge pages once they hold
 * MHQ_ARENA_FROM bytes (malloc'd until then; those stay so): the budget,
 * the quarter it may be outgrown by before a trim and what size classes
 * round up, in address space, touched as carved. A context that caches
 * little would pay a 2 MiB page's first touch (133 us on the benchmark's
 * VM) for a few blocks: made on a context's first use, the arena took a
 * cursor's open, first batch and close on python from 7 to 128 us (the
 * malloc'd rows of the cursor before were reused, warm), and from 256 KiB
 * on a fresh reader's first point question on gzip from 245 to 308 us;
 * from 1 MiB on, neither moved (mh_abtest), and the first asks of 200
 * questions took 3.7-6.1 minor faults each, not 7.9-11.7. */
static void ctx_arena(qctx *c) {
    if (c->arena_tried || c->held < MHQ_ARENA_FROM)
        return;
    c->arena_tried = 1;
    size_t b = c->r->cache_bytes;
    mh_arena_init(&c->arena, b > SIZE_MAX / 2 ? SIZE_MAX : b * 2);
}

/* Makes c's scratch hold a raw block of seg. */
static int ctx_fit(qctx *c, const mh_seg *seg) {
    if (seg->rows_per_block <= c->scratch_rows)
        return MH_OK;
    uint8_t *p = malloc(mh_block_raw_bound(seg->rows_per_block));
    if (!p)
        MH_FAIL(MH_ENOMEM, &c->diag, 0, "out of memory for a block's scratch");
    free(c->scratch);
    c->scratch = p;
    c->scratch_rows = seg->rows_per_block;
    return MH_OK;
}

static void ctx_free(qctx *c) {
    for (uint32_t i = 0; c->ent && i < c->nent; i++) {
        mh_rows_free(&c->ent[i].rows);
        mh_arena_free(&c->arena, c->ent[i].lab);
        mh_arena_free(&c->arena, c->ent[i].raw);
        mh_arena_free(&c->arena, c->ent[i].gm);
        free(c->ent[i].sp);
    }
    free(c->ent);
    free(c->slot);
    free(c->ghost);
    free(c->scratch);
    mhq_cands_free(&c->cands);
    free(c->ap_bits);
    free(c->sp_bits);
    mh_query_wide_free(c);
    mh_query_idmap_free(c);
    mh_arena_destroy(&c->arena);
    memset(c, 0, sizeof *c);
}

/* ctx_free, then the context itself (malloc'd by ctx_take). */
static void ctx_destroy(qctx *c) {
    ctx_free(c);
    free(c);
}

/* A block's (or label group's) key mixed with its segment: the table's
 * slot (home) and the evicted blocks' tags (ghost_tag). */
static uint64_t key_mix(const mh_seg *seg, uint64_t key) {
    uint64_t h = (uint64_t)(uintptr_t)seg * 0x9E3779B97F4A7C15u ^
                 key * 0xC2B2AE3D27D4EB4Fu;
    return h ^ h >> 31;
}

static uint32_t home(const qctx *c, const mh_seg *seg, uint64_t key) {
    return (uint32_t)key_mix(seg, key) & c->mask;
}

static int32_t cache_find(const qctx *c, const mh_seg *seg, uint64_t key) {
    for (uint32_t i = home(c, seg, key);; i = (i + 1) & c->mask) {
        int32_t e = c->slot[i];
        if (e < 0 || (c->ent[e].seg == seg && c->ent[e].key == key))
            return e;
    }
}

static void prob_remove(qctx *c, int32_t e);

/* Entry e out of the table (and off probation: it holds no block now). */
static void cache_unhash(qctx *c, int32_t e) {
    prob_remove(c, e);
    const centry *x = &c->ent[e];
    uint32_t i = home(c, x->seg, x->key);
    while (c->slot[i] != e)
        i = (i + 1) & c->mask;
    /* backward shift: move up every later entry of the run that may sit
     * in the hole */
    for (uint32_t j = i;;) {
        j = (j + 1) & c->mask;
        int32_t f = c->slot[j];
        if (f < 0)
            break;
        uint32_t k = home(c, c->ent[f].seg, c->ent[f].key);
        int movable = i <= j ? (k <= i || k > j) : (k <= i && k > j);
        if (movable) {
            c->slot[i] = f;
            i = j;
        }
    }
    c->slot[i] = -1;
}

const mh_rows *mh_query_cached(const qctx *c, const mh_seg *seg, uint32_t key) {
    int32_t e = cache_find(c, seg, key);
    return e >= 0 && c->ent[e].rows.lo == 0 && c->ent[e].rows.n == c->ent[e].rows_all &&
                   !c->ent[e].id_t
               ? &c->ent[e].rows
               : NULL;
}

const mh_rows *mh_query_cached_part(const qctx *c, const mh_seg *seg, uint32_t key) {
    int32_t e = cache_find(c, seg, key);
    return e >= 0 && !(c->ent[e].key & MHQ_KEY_LABELS) ? &c->ent[e].rows : NULL;
}

static void lru_unlink(qctx *c, int32_t e) {
    centry *x = &c->ent[e];
    if (x->prev >= 0)
        c->ent[x->prev].next = x->next;
    else
        c->head = x->next;
    if (x->next >= 0)
        c->ent[x->next].prev = x->prev;
    else
        c->tail = x->prev;
}

static void lru_push_front(qctx *c, int32_t e) {
    centry *x = &c->ent[e];
    x->prev = -1;
    x->next = c->head;
    if (c->head >= 0)
        c->ent[c->head].prev = e;
    c->head = e;
    if (c->tail < 0)
        c->tail = e;
}

/* Thrash resistance. An LRU cycled through by a working set larger than
 * itself keeps none of it: 200 point max-10 questions on gzip decode 1,348
 * blocks where the 16 MiB default holds 713, and each pass decoded them
 * all again (57 us a question, 2 when they fit). So a full cache lets new
 * blocks in on probation while evicted blocks come back from beyond its
 * reach (the bimodal insertion of Qureshi et al., ISCA 2007: most new
 * blocks go where they leave first, one in 32 where they stay, and the
 * blocks held keep being hit; here a question's blocks stay in use while
 * it runs, since the newest entry is never the one evicted). Probation
 * holds an eighth of the entries, oldest first out, hit or not (a block
 * shared by a few questions in a row is one use, as 2Q has it: promoted
 * when hit, such blocks pushed the kept ones out, 750-850 blocks decoded a
 * pass of the test's loop where 690 without).
 *
 * Whether new blocks go on probation is voted by the misses (psel, in
 * [-PROB_VOTES, PROB_VOTES], on probation above 0), from a table of the
 * blocks evicted, their keys and last uses (ghost_put):
 *   - evicted and asked for again after more uses than the cache has
 *     entries (the clock, entry_used): an LRU loses it too, +2;
 *   - asked for again sooner: an LRU would have kept it, -4;
 *   - not in the table (never seen, or forgotten): a new working set,
 *     which an LRU takes in whole, -1 (without it, 60 whole-space
 *     questions after 400 page ones, whose blocks fit, came in on
 *     probation and 35-90 of their 290 blocks were decoded again at the
 *     second pass; none with the plain LRU, none now).
 * Below its budget the cache is the plain LRU it was, and so it stays
 * until evicted blocks come back. */
#define PROB_VOTES 64

static void prob_remove(qctx *c, int32_t e) {
    centry *x = &c->ent[e];
    if (!x->prob)
        return;
    if (x->pprev >= 0)
        c->ent[x->pprev].pnext = x->pnext;
    else
        c->phead = x->pnext;
    if (x->pnext >= 0)
        c->ent[x->pnext].pprev = x->pprev;
    else
        c->ptail = x->pprev;
    x->prob = 0;
    c->nprob--;
}

static void prob_push(qctx *c, int32_t e) {
    centry *x = &c->ent[e];
    x->prob = 1;
    x->pnext = -1;
    x->pprev = c->ptail;
    if (c->ptail >= 0)
        c->ent[c->ptail].pnext = e;
    else
        c->phead = e;
    c->ptail = e;
    c->nprob++;
}

static uint64_t ghost_tag(const mh_seg *seg, uint64_t key) {
    return key_mix(seg, key) | 1; /* 0: an empty slot */
}

static uint64_t *ghost_slot(const qctx *c, uint64_t tag) {
    return c->ghost + 2 * (size_t)((tag >> 1) & c->gmask);
}

/* Block entry x, evicted: its key and last use remembered (a slot per
 * key, the last one written wins: a vote lost now and then). The table
 * is made at the first eviction, twice the entries allowed in slots (at
 * most 2^15, 512 KiB), outside the budget as the entries are; without
 * memory for it the cache stays a plain LRU. */
static void ghost_put(qctx *c, const centry *x) {
    if (!x->seg || (x->key & MHQ_KEY_LABELS) || c->r->cache_probation < 0)
        return;
    if (!c->ghost) {
        uint32_t slots = 256;
        while (slots < 2 * c->capent && slots < (1u << 15))
            slots *= 2;
        c->ghost = calloc((size_t)slots * 2, sizeof *c->ghost);
        if (!c->ghost)
            return;
        c->gmask = slots - 1;
    }
    uint64_t t = ghost_tag(x->seg, x->key);
    uint64_t *g = ghost_slot(c, t);
    g[0] = t;
    g[1] = x->last;
}

static void psel_add(qctx *c, int32_t v) {
    c->psel += v;
    c->psel = c->psel > PROB_VOTES ? PROB_VOTES : c->psel < -PROB_VOTES ? -PROB_VOTES : c->psel;
}

/* Block (seg, key), not cached, about to be decoded: its vote. */
static void ghost_vote(qctx *c, const mh_seg *seg, uint64_t key) {
    if (!c->ghost)
        return;
    uint64_t t = ghost_tag(seg, key);
    uint64_t *g = ghost_slot(c, t);
    if (g[0] != t) {
        psel_add(c, -1);
        return;
    }
    g[0] = 0;
    psel_add(c, c->clock - g[1] > c->nent ? 2 : -4);
}

static int probation_on(const qctx *c) {
    return c->r->cache_probation > 0 || (c->r->cache_probation == 0 && c->psel > 0);
}

/* Entry e, just filled with a new block into a cache that was full: on
 * probation (31 in 32), or kept as any other. */
static void cache_admit(qctx *c, int32_t e) {
    if (probation_on(c) && (++c->admitted & 31u) != 0) {
        prob_push(c, e);
        atomic_fetch_add_explicit(&((mh_reader *)c->r)->probation_in, 1, memory_order_relaxed);
    }
}

/* Entry e used: the clock counts a use of a block unused for half as
 * many uses as there are entries or more, so that it counts about the
 * distinct blocks used, as an LRU's depth does (counting each block's
 * first use by each question, 60 whole-space questions sharing 291 blocks
 * counted 569 uses a pass, past the 405 entries that held them). */
static inline void entry_used(qctx *c, int32_t e) {
    centry *x = &c->ent[e];
    if (c->clock - x->last > c->nent / 2)
        c->clock++;
    x->last = c->clock;
}

/* The rows of a freshly decoded block must agree with the chunks they
 * belong to: inside each chunk's address, transition and id ranges, with
 * ids increasing and transitions not decreasing along each chunk's run of
 * rows. Checked once per decode, so that the chunk walks can binary-search
 * a block's rows for the start and check only where blocks meet. */
static int rows_fail(const mh_seg *seg, const mh_slice *s, uint32_t b,
                     uint64_t id, uint32_t chunk, const char *what, mh_diag *d) {
    mh_block bl;
    uint32_t bi = s->block_first + b;
    MH_TRY(mh_seg_block(seg, s, bi, &bl, d));
    /* fsck's wording for the same check (verify.c) */
    MH_FAIL(MH_ECORRUPT, d, bl.offset,
            "slice %u, block %u at byte %llu: access %llu %s chunk %u",
            mh_seg_slice_of_block(seg, bi), bi, (unsigned long long)bl.offset,
            (unsigned long long)id, what, chunk);
}

int mh_query_check_rows(const mh_seg *seg, const mh_slice *s, uint32_t b,
                      const mh_rows *rows, int id_t_only, mh_diag *d) {
    /* the rows decoded: lo .. n - 1 of the block (a window, or all) */
    uint32_t base = b * seg->rows_per_block, end = base + rows->n;
    const uint32_t lo0 = rows->lo;
    const uint32_t bi = s->block_first + b;
    mh_block bl;
    MH_TRY(mh_seg_block(seg, s, bi, &bl, d));
    const uint64_t boff = seg->block_off + (uint64_t)bi * seg->block_recsz;
    const uint32_t *col_id = rows->id_off, *col_size = rows->size;
    const uint64_t *col_t = rows->t, *col_phy = rows->phy;
    const uint32_t *col_s = rows->stream;
    /* the block's own record: its first row, when decoded (the rows lie in
     * its slice: each lies in its chunk's ranges below, which lie in the
     * slice's, mh_seg_slice_check) */
    if (!(rows->n > lo0 && (lo0 > 0 || (col_id[0] == bl.first_id && col_t[0] == bl.first_t))))
        MH_FAIL(MH_ECORRUPT, d, boff + MHF_BLOCK_FIRST_T,
                "slice %u, block %u at byte %llu: first row differs from its "
                "record", mh_seg_slice_of_block(seg, bi), bi,
                (unsigned long long)(boff + MHF_BLOCK_FIRST_T));
    /* the last chunk starting at or before the first row decoded (the
     * slice's chunks tile its rows: mh_seg_slice_check) */
    uint32_t lo = s->chunk_first, hi = s->chunk_first + s->chunk_count - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        mh_chunk ch;
        MH_TRY(mh_seg_chunk(seg, s, mid, &ch, d));
        if (ch.row_first <= base + lo0)
            lo = mid;
        else
            hi = mid - 1;
    }
    /* every row's stream is in its block's, chunk's and slice's masks
     * (SPEC.md: the masks are exact; fsck checks equality) */
    uint32_t outer = bl.stream_mask & s->stream_mask;
    /* a block of the segment may end before the stream column: its rows
     * are stream 0 (and lazy rows leave the array as it was) */
    const int has_streams = seg->dict.has_stream_col && !rows->no_stream;
    for (uint32_t k = lo; k < s->chunk_first + s->chunk_count; k++) {
        mh_chunk ch;
        MH_TRY(mh_seg_chunk(seg, s, k, &ch, d));
        if (ch.row_first >= end)
            break;
        uint32_t r0 = (ch.row_first > base + lo0 ? ch.row_first : base + lo0) - base;
        uint32_t r1 = ch.row_first + ch.row_count;
        r1 = (r1 < end ? r1 : end) - base;
        if (id_t_only) { /* the id and transition columns alone */
            for (uint32_t i = r0; i < r1; i++) {
                uint64_t t = col_t[i];
                uint32_t id = col_id[i];
                if (t < ch.t_first || t > ch.t_last || id < ch.id_first || id > ch.id_last)
                    return rows_fail(seg, s, b, s->id_first + id, k, "lies outside its", d);
                if (i > r0 && (id <= col_id[i - 1] || t < col_t[i - 1]))
                    return rows_fail(seg, s, b, s->id_first + id, k,
                                     "does not follow the previous row of its", d);
            }
            continue;
        }
        /* one compare a bound: the chunk's address range within the
         * block's (where a row fails, which one it left is told apart) */
        const uint64_t plo = ch.phy_first > bl.phy_min ? ch.phy_first : bl.phy_min;
        const uint64_t phi = ch.phy_last < bl.phy_max ? ch.phy_last : bl.phy_max;
        for (uint32_t i = r0; i < r1; i++) {
            uint64_t t = col_t[i], phy = col_phy[i];
            uint64_t last = phy + (col_size[i] - 1u);
            uint32_t id = col_id[i];
            if (phy < plo || last > phi || t < ch.t_first || t > ch.t_last ||
                id < ch.id_first || id > ch.id_last) {
                if (phy < bl.phy_min || last > bl.phy_max)
                    MH_FAIL(MH_ECORRUPT, d, boff + MHF_BLOCK_PHY_MIN,
                            "slice %u, block %u at byte %llu: row %u outside the "
                            "block's address range", mh_seg_slice_of_block(seg, bi), bi,
                            (unsigned long long)(boff + MHF_BLOCK_PHY_MIN), i);
                return rows_fail(seg, s, b, s->id_first + id, k,
                                 "lies outside its", d);
            }
            if (i > r0 && (id <= col_id[i - 1] || t < col_t[i - 1]))
                return rows_fail(seg, s, b, s->id_first + id, k,
                                 "does not follow the previous row of its", d);
        }
        /* the streams of the chunk's rows here, as one mask: without a
         * stream column every row is stream 0 */
        uint32_t seen = 1;
        if (has_streams) {
            seen = 0;
            for (uint32_t i = r0; i < r1; i++)
                seen |= UINT32_C(1) << (col_s[i] & 31);
        }
        if (seen & ~(outer & ch.stream_mask)) {
            for (uint32_t i = r0; i < r1; i++) {
                uint32_t st = has_streams ? col_s[i] : 0, bit = UINT32_C(1) << (st & 31);
                if (!(bit & outer & ch.stream_mask))
                    MH_FAIL(MH_ECORRUPT, d, bl.offset,
                            "slice %u, block %u at byte %llu: access %llu of stream "
                            "%u is outside the stream mask of its %s",
                            mh_seg_slice_of_block(seg, bi), bi,
                            (unsigned long long)bl.offset,
                            (unsigned long long)(s->id_first + col_id[i]), st,
                            !(bit & bl.stream_mask) ? "block"
                            : !(bit & s->stream_mask) ? "slice" : "chunk");
            }
        }
    }
    return MH_OK;
}

int mh_query_decode_checked(const mh_seg *seg, const mh_slice *s, uint32_t b,
                            uint32_t from, uint32_t upto, int id_t, uint8_t *scratch,
                            mh_rows *rows, mh_diag *d) {
    uint32_t bi = s->block_first + b;
    int known = mh_seg_block_known(seg, bi);
    /* the block's sum and columns; its rows are checked here, in one pass
     * with the chunk checks (mh_seg_decode_block's own row checks, against
     * the slice, the block record and the stream masks, are the same
     * checks or follow from them) */
    MH_TRY(mh_seg_decode_rows(seg, s, b, from, upto, id_t ? MH_COLS_ID_T : MH_COLS_ALL,
                              scratch, rows, d));
    if (!known) {
        MH_TRY(mh_query_check_rows(seg, s, b, rows, id_t, d));
        if (!id_t && rows->lo == 0 && rows->n == mh_slice_block_rows(seg, s, b))
            mh_seg_block_set_known(seg, bi);
    }
    return MH_OK;
}

/* An entry for a new key: a spare one (emptied by cache_trim) while the
 * bytes held are under the trim's threshold (as when the emptied entries
 * stayed in the list and were refilled as they reached its tail), a new
 * one while they fit the budget, else the least recently used (the pinned
 * label group passed over: the id path's blocks must not reuse the labels
 * it walks), taken out of the list and the table. Two entries besides the
 * pinned one stay in the list whatever the bytes: a chunk walk holds one
 * block while it decodes the next. */
static int list_has_two(const qctx *c) {
    int n = 0;
    for (int32_t e = c->tail; e >= 0 && n < 2; e = c->ent[e].prev)
        n += e != c->pin;
    return n >= 2;
}

/* Room in the table for one more entry: it stays at most half full, so
 * that probes end; doubled (entries hashed again) when it would not be.
 * 0 when it cannot grow (no memory): the caller reuses an entry instead. */
static int slot_room(qctx *c) {
    uint64_t size = (uint64_t)c->mask + 1;
    if (2 * ((uint64_t)c->nent + 1) <= size)
        return 1;
    int32_t *t = malloc(2 * size * sizeof *t);
    if (!t)
        return 0;
    memset(t, 0xff, 2 * size * sizeof *t);
    free(c->slot);
    c->slot = t;
    c->mask = (uint32_t)(2 * size - 1);
    for (uint32_t e = 0; e < c->nent; e++) {
        const centry *x = &c->ent[e];
        if (!x->seg) /* hashed exactly when it has a block's key */
            continue;
        uint32_t i = home(c, x->seg, x->key);
        while (c->slot[i] >= 0)
            i = (i + 1) & c->mask;
        c->slot[i] = (int32_t)e;
    }
    return 1;
}

/* An entry for a block or a label group: a spare one (no buffers), a new
 * one while the budget allows, else the least recently used, its buffers
 * kept (*evicted set). */
static int32_t take_entry(qctx *c, int *evicted) {
    int32_t e;
    *evicted = 0;
    const size_t budget = c->r->cache_bytes;
    /* the list walked only when the bytes alone say no */
    if (c->spare >= 0 && (c->held < budget + budget / 4 || !list_has_two(c))) {
        e = c->spare; /* no buffers */
        c->spare = c->ent[e].next;
        return e;
    }
    if (c->nent < c->capent && (c->held < budget || !list_has_two(c)) &&
        slot_room(c)) {
        e = (int32_t)c->nent++;
        memset(&c->ent[e], 0, sizeof c->ent[e]); /* first use (ctx_init) */
        c->ent[e].rows.ar = &c->arena;
        return e;
    }
    /* the oldest block on probation once it holds its eighth; neither
     * the most recent entry (a walk holds it while it decodes the next,
     * as with two entries) nor the pinned label group */
    e = -1;
    if (c->nprob > 0 && c->nprob >= c->nent / 8) {
        e = c->phead;
        if (e == c->head || e == c->pin)
            e = c->ent[e].pnext;
        if (e == c->head || e == c->pin)
            e = -1;
    }
    if (e < 0) {
        e = c->tail; /* the least recently used */
        if (e == c->pin && c->ent[e].prev >= 0)
            e = c->ent[e].prev;
    }
    lru_unlink(c, e);
    ghost_put(c, &c->ent[e]);
    if (c->ent[e].seg)
        cache_unhash(c, e);
    c->ent[e].seg = NULL;
    *evicted = 1;
    return e;
}

/* Entry e, which failed to fill, as a free entry: reused first. */
static void entry_free_tail(qctx *c, int32_t e) {
    centry *x = &c->ent[e];
    x->rows.n = x->rows.lo = 0;
    x->lab_n = 0;
    if (c->tail >= 0) {
        c->ent[c->tail].next = e;
        x->prev = c->tail;
    } else {
        c->head = e;
        x->prev = -1;
    }
    x->next = -1;
    c->tail = e;
}

/* Entry e, filled, under (seg, key): hashed and made the most recent. */
static void entry_insert(qctx *c, int32_t e, const mh_seg *seg, uint64_t key) {
    centry *x = &c->ent[e];
    x->seg = seg;
    x->key = key;
    uint32_t i = home(c, seg, key);
    while (c->slot[i] >= 0)
        i = (i + 1) & c->mask;
    c->slot[i] = e;
    lru_push_front(c, e);
}

/* What a call wants of a block (get_block_entry). */
enum {
    WANT_ALL,   /* every column of its rows from .. need - 1 */
    WANT_ID_T,  /* the id and transition columns of every row */
    WANT_LOCATE /* the id and transition columns of rows from .. need - 1
                 * (mh_query_block_located: all), the raw block kept for
                 * the other columns of a row, mh_query_row_take */
};

/* Does entry x hold what a call wants? */
static int entry_holds(const centry *x, unsigned want, uint32_t from, uint32_t need) {
    if (x->rows.lo > from || x->rows.n < need)
        return 0;
    switch (want) {
    case WANT_ALL:
        return !x->id_t;
    case WANT_ID_T:
        return x->rows.lo == 0;
    default:
        return !x->id_t || x->sparse;
    }
}

/* x's label group given up (the entry reused for rows, or trimmed; the
 * caller counts the bytes, entry_bytes before and after). */
static void entry_drop_labels(qctx *c, centry *x) {
    c->lab_held -= (size_t)x->lab_cap * sizeof *x->lab;
    mh_arena_free(&c->arena, x->lab);
    x->lab = NULL;
    x->lab_cap = x->lab_n = 0;
}

/* x's raw block given up (an entry decoded whole, or reused; the caller
 * counts the bytes, entry_bytes before and after). */
static void entry_drop_raw(qctx *c, centry *x) {
    mh_arena_free(&c->arena, x->raw);
    x->raw = NULL;
    x->raw_cap = 0;
    free(x->sp);
    x->sp = NULL;
    x->sparse = 0;
}

/* x's group masks given up (its rows freed; the caller counts the bytes). */
static void entry_drop_gm(qctx *c, centry *x) {
    mh_arena_free(&c->arena, x->gm);
    x->gm = NULL;
    x->gm_cap = 0;
    x->gm_ok = 0;
}

/* x's group masks, all unknown, for its rows of a block of rows_per_block
 * (its bytes counted in; none when out of memory: the walks read every
 * row, as without them). */
static void entry_gm(qctx *c, centry *x, uint32_t rows_per_block) {
    uint32_t words = (rows_per_block + GM_ROWS - 1) / GM_ROWS;
    if (x->gm_cap < words) {
        c->held -= (size_t)x->gm_cap * sizeof *x->gm;
        entry_drop_gm(c, x);
        x->gm = mh_arena_alloc(&c->arena, (size_t)words * sizeof *x->gm);
        x->gm_cap = x->gm ? words : 0;
        c->held += (size_t)x->gm_cap * sizeof *x->gm;
    }
    if (!x->gm)
        return;
    memset(x->gm, 0, (size_t)x->gm_cap * sizeof *x->gm);
    x->gm_ok = 1;
}

/* Entry x, taken from the least recently used end to hold what `want`
 * asks, keeps only the buffers that serves (the caller counts the bytes,
 * entry_bytes before and after). Below the budget an entry keeps every
 * buffer it once had, whatever it holds next (entry_fill: reallocating
 * them each time the kind changed cost the first asks 30 %); at the budget
 * an entry reused for a located block with a whole block's columns, or
 * for a whole block with a located block's raw buffer, was counted for
 * both, so fewer blocks fit: after 800 1 MiB questions on python had
 * filled the cache with whole blocks, 200 whole-space max-10 ones (located
 * blocks, 13.5 MB alone) cycled through it, 5.6 blocks decoded a question
 * at every pass, 36-40 us where they took 4-8 us alone. */
static void entry_fit(qctx *c, centry *x, unsigned want) {
    if (want != WANT_ALL && x->rows.cap && !x->rows.idt)
        mh_rows_free(&x->rows); /* the ids and transitions alone, anew */
    if (want != WANT_LOCATE && x->raw)
        entry_drop_raw(c, x);
    if (want != WANT_ALL && x->gm)
        entry_drop_gm(c, x);
}

/* Entries' buffers freed from the least recently used on, once the bytes
 * held exceed the budget by a quarter, until they are within it: new
 * entries stop at the budget, but an entry reused for a located block
 * gets a raw buffer (a few KiB; entries keep them), so a cache of located
 * blocks outgrows its bytes by as much (and so does one whose entries
 * held ids and transitions alone, WANT_LOCATE, and now hold whole blocks).
 * keep (the entry just filled) and the pinned label group stay; a freed
 * entry leaves the list and the table for the spare ones (take_entry).
 * Left in the list, as up to 1.9.6, an emptied entry was given new
 * buffers each time it reached the tail: once whole-space questions had
 * filled the cache with small located entries (up to capent of them), a
 * walk through whole blocks grew each in turn past the threshold and the
 * trims freed half of them again, every pass (gzip's point max1000 read
 * questions 1.14x slower, mh_abtest); spare, they are refilled only
 * under the threshold, and the least recently used entry, whole, is
 * reused past it. */
static void cache_trim(qctx *c, int32_t keep) {
    /* a quarter over before trimming, back to the budget: entries are
     * reused with their buffers, and freeing one only for the next fill to
     * allocate it again (fresh pages) is what a trim costs */
    if (c->held <= c->r->cache_bytes + c->r->cache_bytes / 4)
        return;
    for (int32_t e = c->tail; e >= 0 && c->held > c->r->cache_bytes;) {
        centry *x = &c->ent[e];
        int32_t prev = x->prev;
        size_t was = entry_bytes(x);
        if (e != keep && e != c->pin && was > 0) {
            ghost_put(c, x);
            if (x->seg) {
                cache_unhash(c, e);
                x->seg = NULL;
            }
            mh_rows_free(&x->rows);
            entry_drop_gm(c, x);
            entry_drop_labels(c, x);
            entry_drop_raw(c, x);
            x->id_t = 0;
            c->held -= was;
            lru_unlink(c, e);
            x->next = c->spare;
            c->spare = e;
        }
        e = prev;
    }
}

/* Decodes into entry x what `want` asks of block b, its rows reserved
 * for it: a located block's LZ4 output lands in the entry's own raw
 * buffer, kept for mh_query_row_take. */
static int entry_fill(qctx *c, centry *x, const mh_seg *seg, const mh_slice *s, uint32_t b,
                      unsigned want, uint32_t from, uint32_t need) {
    /* an entry has room for every column once it held a whole block, and
     * an entry filled for another want reuses its buffers (reallocating
     * them each time the kind changed cost the first asks 30 %, fresh
     * pages); an id-order probe's or located block's, until then, for its
     * ids and transitions alone (12 bytes a row, not 33: 100 whole-space
     * max10 questions on python held 539 located blocks, 12.3 MB, and
     * cycled through the 8 MiB default cache of 1.9.6, 50 us a question at
     * its second ask, where 6.6 MB fit) */
    ctx_arena(c);
    int rc = want != WANT_ALL && seg->dict.layout.major >= 2
                 ? mh_rows_reserve_idt(&x->rows, seg->rows_per_block)
                 : mh_rows_reserve_lazy(&x->rows, seg->rows_per_block);
    x->rows.n = x->rows.lo = 0;
    if (rc != MH_OK)
        MH_FAIL(rc, &c->diag, 0, "out of memory for a decoded block");
    /* the group masks of the rows before are void (scan_chunk clears
     * them, or makes them, at the block's second walk) */
    x->walked = 0;
    x->gm_ok = 0;
    if (want != WANT_LOCATE || seg->dict.layout.major < 2) {
        x->sparse = 0; /* its raw buffer is kept for a later located block */
        x->id_t = (uint8_t)(want == WANT_ID_T);
        return mh_query_decode_checked(seg, s, b, from, need, want == WANT_ID_T, c->scratch,
                                       &x->rows, &c->diag);
    }
    mh_block bl;
    MH_TRY(mh_seg_block(seg, s, s->block_first + b, &bl, &c->diag));
    if (x->raw_cap < bl.raw_size || !x->sp) {
        entry_drop_raw(c, x);
        x->raw = mh_arena_alloc(&c->arena, bl.raw_size);
        x->sp = malloc(sizeof *x->sp);
        if (!x->raw || !x->sp) {
            entry_drop_raw(c, x);
            MH_FAIL(MH_ENOMEM, &c->diag, 0, "out of memory for a located block");
        }
        x->raw_cap = bl.raw_size;
    }
    x->sparse = 0;
    x->sp->tk_n = x->sp->tk_next = 0;
    x->id_t = 1;
    MH_TRY(mh_query_decode_checked(seg, s, b, from, need, 1, x->raw, &x->rows, &c->diag));
    /* the decode read every column's length: they tile the block */
    if (mh_block_cols_find(x->raw, bl.raw_size, mh_slice_block_rows(seg, s, b),
                           &seg->dict.layout, &x->sp->bc) != MH_OK)
        MH_FAIL(MH_ECORRUPT, &c->diag, bl.offset, "block %u at byte %llu: columns do not tile it",
                s->block_first + b, (unsigned long long)bl.offset);
    x->sparse = 1;
    return MH_OK;
}

static inline void count_decode(const qctx *c) {
    atomic_fetch_add_explicit(&((mh_reader *)c->r)->blocks_decoded, 1, memory_order_relaxed);
}

/* Block b of slice s through the cache, as `want` says (WANT_*): at least
 * its rows from .. need - 1 (need UINT32_MAX: to the last). A point query
 * needs the rows of its chunk in the block: the rows before them are
 * passed over (summed where later values depend on them: a few
 * instructions a row instead of a decode and its checks; a third to a
 * half of the rows of a point query's head on the real stores), the
 * columns past them are not decoded (a quarter of the column decoding of
 * the point queries of the real stores, whose hot chunks often fill whole
 * blocks). The id-order path's probes need ids and transitions only (a
 * third of a whole decode); its located rows need those and the other
 * columns of the row alone (WANT_LOCATE).
 * A cached entry holding less than the call wants is decoded again whole,
 * in its place; *ep is the entry's index. */
static int get_block_entry(qctx *c, const mh_seg *seg, const mh_slice *s, uint32_t b,
                           uint32_t from, uint32_t need, unsigned want, int32_t *ep) {
    uint32_t key = s->block_first + b;
    int32_t e = cache_find(c, seg, key);
    uint32_t all = mh_slice_block_rows(seg, s, b);
    need = want == WANT_ID_T || need > all ? all : need > 0 ? need : 1;
    from = want == WANT_ID_T || from >= need ? 0 : from;
    centry *x;
    int rc;
    if (e >= 0) {
        if (c->head != e) {
            lru_unlink(c, e);
            lru_push_front(c, e);
        }
        entry_used(c, e);
        x = &c->ent[e];
        if (entry_holds(x, want, from, need)) {
            *ep = e;
            return MH_OK;
        }
        /* asked for more: all of it from now on */
        size_t was = entry_bytes(x);
        count_decode(c);
        rc = entry_fill(c, x, seg, s, b, WANT_ALL, 0, all);
        c->held = c->held - was + entry_bytes(x);
        if (rc != MH_OK) { /* out of the list and the table, free */
            lru_unlink(c, e);
            cache_unhash(c, e);
            x->seg = NULL;
            entry_free_tail(c, e);
            return rc;
        }
    } else {
        int evicted;
        int full = c->held >= c->r->cache_bytes;
        ghost_vote(c, seg, key);
        e = take_entry(c, &evicted);
        x = &c->ent[e];
        size_t was = entry_bytes(x);
        /* an entry that held a label group holds rows now */
        entry_drop_labels(c, x);
        if (evicted)
            entry_fit(c, x, want);
        x->rows.n = x->rows.lo = 0;
        count_decode(c);
        rc = entry_fill(c, x, seg, s, b, want, from, need);
        c->held = c->held - was + entry_bytes(x);
        if (rc != MH_OK) {
            entry_free_tail(c, e);
            return rc;
        }
        entry_insert(c, e, seg, key);
        x->last = ++c->clock;
        if (full)
            cache_admit(c, e);
    }
    x->rows_all = all;
    /* for scan_chunk's one-compare row filter: the largest size - 1u
     * (as row_meets computes it: a size 0 counts as 2^32; none without
     * the size column, which that walk never reads) */
    uint32_t ext = 0;
    for (uint32_t i = x->rows.lo; !x->id_t && i < x->rows.n; i++)
        ext = x->rows.size[i] - 1u > ext ? x->rows.size[i] - 1u : ext;
    x->size_ext = ext;
    cache_trim(c, e);
    *ep = e;
    return MH_OK;
}

int32_t mhq_labels_cached(const qctx *c, const mh_seg *seg, uint32_t grp) {
    return cache_find(c, seg, MHQ_KEY_LABELS | grp);
}

/* The least recently used label group but the pinned one, -1 none: a walk
 * from the LRU end, paid only when a group is decoded (~10^5 instructions
 * an 8192-id group). */
static int32_t lru_labels(const qctx *c) {
    for (int32_t e = c->tail; e >= 0; e = c->ent[e].prev)
        if (e != c->pin && c->ent[e].seg && (c->ent[e].key & MHQ_KEY_LABELS))
            return e;
    return -1;
}

int mhq_labels_entry(qctx *c, const mh_seg *seg, uint32_t grp, uint32_t cap,
                     int32_t *out, int *fresh) {
    uint64_t key = MHQ_KEY_LABELS | grp;
    int32_t e = cache_find(c, seg, key);
    if (e >= 0) {
        if (c->head != e) {
            lru_unlink(c, e);
            lru_push_front(c, e);
        }
        *out = e;
        *fresh = 0;
        return MH_OK;
    }
    /* label groups hold at most MHQ_LABELS_SHARE of the budget: past it a
     * new group replaces the least recently used group, not a block. Wide
     * queries from many places (whole space, max 1) each decode a group
     * and a few blocks: with every group kept, a working set of blocks
     * that fit the cache no longer did, and the LRU, cycled through, kept
     * neither (python store: 4x the block decodes a pass) */
    size_t bytes = (size_t)cap * sizeof *c->ent[0].lab;
    e = -1;
    if (c->lab_held + bytes > c->r->cache_bytes / MHQ_LABELS_SHARE)
        e = lru_labels(c);
    if (e >= 0) {
        lru_unlink(c, e);
        cache_unhash(c, e);
        c->ent[e].seg = NULL;
    } else {
        int evicted;
        e = take_entry(c, &evicted);
    }
    centry *x = &c->ent[e];
    size_t was = entry_bytes(x);
    /* an entry that held rows holds labels now */
    mh_rows_free(&x->rows);
    entry_drop_gm(c, x);
    entry_drop_raw(c, x);
    x->id_t = 0;
    x->lab_n = 0;
    if (x->lab_cap < cap) {
        ctx_arena(c);
        c->lab_held -= (size_t)x->lab_cap * sizeof *x->lab;
        mh_arena_free(&c->arena, x->lab);
        x->lab = mh_arena_alloc(&c->arena, bytes);
        x->lab_cap = x->lab ? cap : 0;
        c->lab_held += (size_t)x->lab_cap * sizeof *x->lab;
    }
    c->held = c->held - was + entry_bytes(x);
    if (!x->lab) {
        entry_free_tail(c, e);
        MH_FAIL(MH_ENOMEM, &c->diag, 0, "out of memory for an id map label group");
    }
    x->key = key; /* hashed by mhq_labels_done */
    cache_trim(c, e);
    *out = e;
    *fresh = 1;
    return MH_OK;
}

void mhq_labels_done(qctx *c, int32_t e, const mh_seg *seg) {
    entry_insert(c, e, seg, c->ent[e].key);
}

void mhq_labels_drop(qctx *c, int32_t e) { entry_free_tail(c, e); }

int mh_query_block_located(qctx *c, const mh_seg *seg, const mh_slice *s, uint32_t b,
                           const mh_rows **out, int32_t *ent) {
    MH_TRY(get_block_entry(c, seg, s, b, 0, UINT32_MAX, WANT_LOCATE, ent));
    *out = &c->ent[*ent].rows;
    return MH_OK;
}

/* Is row i of a located block's entry, taken from its raw block, inside
 * its chunk's and block's address ranges and stream masks (the checks of
 * mh_query_check_rows that read more than ids and transitions)? */
static int row_taken_ok(const mh_slice *s, const mh_access *a, const mh_block *bl,
                        const mh_chunk *ch) {
    const uint64_t plo = ch->phy_first > bl->phy_min ? ch->phy_first : bl->phy_min;
    const uint64_t phi = ch->phy_last < bl->phy_max ? ch->phy_last : bl->phy_max;
    const uint64_t last = a->physical + (a->size - 1u);
    if (a->physical < plo || last > phi)
        return 0;
    uint32_t bit = UINT32_C(1) << (a->stream & 31);
    return (bit & bl->stream_mask & s->stream_mask & ch->stream_mask) != 0;
}

int mh_query_row_take(qctx *c, int32_t e, const mh_seg *seg, const mh_slice *s, uint32_t b,
                      uint32_t chunk, uint32_t i, uint8_t op, mh_access *out) {
    centry *x = &c->ent[e];
    if (!x->sparse) { /* every column decoded and checked */
        *out = mhq_access(s, &x->rows, i, op);
        return MH_OK;
    }
    centry_sparse *sp = x->sp;
    for (unsigned k = 0; k < sp->tk_n; k++)
        if (sp->tk_row[k] == i) {
            *out = sp->tk[k];
            return MH_OK;
        }
    mh_block bl;
    mh_chunk ch;
    MH_TRY(mh_seg_block(seg, s, s->block_first + b, &bl, &c->diag));
    MH_TRY(mh_seg_chunk(seg, s, chunk, &ch, &c->diag));
    mh_access a = {.id = s->id_first + x->rows.id_off[i], .transition = x->rows.t[i], .op = op};
    if (mh_block_row_take(&sp->bc, i, &a) == MH_OK && row_taken_ok(s, &a, &bl, &ch)) {
        unsigned k = sp->tk_n < MHQ_TAKEN ? sp->tk_n++ : sp->tk_next;
        sp->tk_next = (uint8_t)((k + 1) % MHQ_TAKEN);
        sp->tk_row[k] = i;
        sp->tk[k] = a;
        *out = a;
        return MH_OK;
    }
    /* a bad value: the block decoded whole, every row checked, names it */
    MH_TRY(get_block_entry(c, seg, s, b, 0, UINT32_MAX, WANT_ALL, &e));
    *out = mhq_access(s, &c->ent[e].rows, i, op);
    return MH_OK;
}

int mh_query_block_id_t(qctx *c, const mh_seg *seg, const mh_slice *s, uint32_t b,
                        const mh_rows **out) {
    int32_t e;
    MH_TRY(get_block_entry(c, seg, s, b, 0, UINT32_MAX, WANT_ID_T, &e));
    *out = &c->ent[e].rows;
    return MH_OK;
}

/* Can no row lie both on the query's side of the start and within the end?
 * Decided without the data when both are of one kind. */
static int end_before_start(const qspec *q) {
    int fwd = q->dir == MH_FORWARD;
    if (q->id_lo > q->id_hi) /* an empty window */
        return 1;
    if (q->end_kind == MH_END_TRANSITION && q->kind == MH_FROM_TRANSITION)
        return fwd ? q->end < q->start : q->end > q->start;
    if (q->end_kind == MH_END_ID && q->kind == MH_FROM_ID)
        return fwd ? q->end <= q->start : q->end >= q->start; /* X exclusive */
    return 0;
}

typedef struct cut {
    int set;
    uint64_t id; /* forward: ids above are out; backward: ids below */
} cut;

static inline int beyond(const qspec *q, const cut *k, uint64_t id) {
    return k->set && (q->dir == MH_FORWARD ? id > k->id : id < k->id);
}

/* Does a row at phy of size bytes meet [a, b]? (size - 1u as the row
 * checks compute it: no row ends past its chunk's phy_last) */
static inline unsigned row_meets(uint64_t phy, uint32_t size, uint64_t a, uint64_t b) {
    return (phy <= b) & (phy + (size - 1u) >= a);
}

/* A block's rows as the next-match scans read them: every row meeting
 * [a, b] has phy in [lo, b] (lo = a - the block's largest size - 1u), so
 * one compare, phy - lo <= span, passes over the others; row_meets
 * decides the rows it keeps. */
typedef struct rowscan {
    const uint64_t *phy;
    const uint32_t *size;
    uint64_t a, b, lo, span;
} rowscan;

static inline unsigned row_near(const rowscan *x, uint32_t i) {
    return x->phy[i] - x->lo <= x->span;
}

static inline int meets_at(const rowscan *x, uint32_t i) {
    return row_near(x, i) && row_meets(x->phy[i], x->size[i], x->a, x->b);
}

static inline uint64_t min_u64(uint64_t x, uint64_t y) { return x < y ? x : y; }

/* The least phy - lo of rows [i, i + 8): a row of them may meet [a, b]
 * only when it is at most span (a compare and a conditional move a row,
 * where a mask of the eight took ~7 instructions a row). */
static inline uint64_t near8(const rowscan *x, uint32_t i) {
    const uint64_t *p = x->phy + i, lo = x->lo;
    return min_u64(min_u64(min_u64(p[0] - lo, p[1] - lo), min_u64(p[2] - lo, p[3] - lo)),
                   min_u64(min_u64(p[4] - lo, p[5] - lo), min_u64(p[6] - lo, p[7] - lo)));
}

/* The first row of [i, e) meeting [a, b], UINT32_MAX when none: eight
 * rows a step, one branch for the eight. */
static inline uint32_t hit_fwd(const rowscan *x, uint32_t i, uint32_t e) {
    for (; e - i >= 8; i += 8) {
        if (near8(x, i) > x->span)
            continue;
        for (uint32_t r = i; r < i + 8; r++)
            if (meets_at(x, r))
                return r;
    }
    for (; i < e; i++)
        if (meets_at(x, i))
            return i;
    return UINT32_MAX;
}

/* The last row of [i, e) meeting [a, b], UINT32_MAX when none. */
static inline uint32_t hit_bwd(const rowscan *x, uint32_t i, uint32_t e) {
    for (; e - i >= 8; e -= 8) {
        if (near8(x, e - 8) > x->span)
            continue;
        for (uint32_t r = e; r-- > e - 8;)
            if (meets_at(x, r))
                return r;
    }
    while (e > i) {
        e--;
        if (meets_at(x, e))
            return e;
    }
    return UINT32_MAX;
}

/* Group masks (centry.gm): for each group of GM_ROWS rows of a decoded
 * block (rows GM_ROWS g .. GM_ROWS g + GM_ROWS - 1) lying wholly within
 * the rows of one chunk, bit w & 63 of every 8-byte granule w that one of
 * its rows may cover ([phy, phy + size_ext]: a superset of its bytes);
 * 0, not known yet (a group's mask never is). A row meeting [A, B] shares
 * a granule, so a bit, with the query's mask: a scan passes a group whose
 * mask misses it without reading the group's rows. From a block's second
 * walk on, the first walk to enter such a group computes its mask from
 * the physical column it reads anyway (its four cache lines); later
 * questions on the block read one word a group there. A point question
 * walked ~200 rows of a hot chunk, about 25 cache lines, where a quarter
 * of its groups' masks meet its granule on the real stores. Never changes
 * an answer. */
static inline uint64_t gran_mask(uint64_t lo, uint64_t hi) {
    uint64_t g1 = lo >> 3, g2 = hi >> 3;
    if (g2 - g1 >= 63)
        return ~(uint64_t)0;
    uint64_t m = ((uint64_t)2 << (g2 - g1)) - 1u;
    unsigned r = (unsigned)(g1 & 63u);
    return r ? m << r | m >> (64u - r) : m;
}

static uint64_t group_mask(const uint64_t *phy, uint64_t ext) {
    uint64_t m = 0;
    if (ext < 8) { /* at most two granules a row */
        for (uint32_t i = 0; i < GM_ROWS; i++) {
            uint64_t hi = phy[i] > UINT64_MAX - ext ? UINT64_MAX : phy[i] + ext;
            m |= (uint64_t)1 << (phy[i] >> 3 & 63u) | (uint64_t)1 << (hi >> 3 & 63u);
        }
        return m;
    }
    for (uint32_t i = 0; i < GM_ROWS; i++)
        m |= gran_mask(phy[i], phy[i] > UINT64_MAX - ext ? UINT64_MAX : phy[i] + ext);
    return m;
}

/* What hit_fwd / hit_bwd answer, the groups wholly within the chunk's
 * rows [k0, k1) whose masks miss qm passed unread. */
typedef struct gmscan {
    uint64_t *gm, qm, ext;
    uint32_t k0, k1;
    _Atomic uint64_t *passed; /* the reader's count (tests) */
} gmscan;

static inline uint32_t gm_done(const gmscan *m, uint32_t row, uint64_t passed) {
    if (passed)
        atomic_fetch_add_explicit(m->passed, passed, memory_order_relaxed);
    return row;
}

/* Group g's mask, 0 when the group is not wholly the chunk's (or the
 * entry has no masks). */
static inline uint64_t gm_of(const gmscan *m, const rowscan *x, uint32_t g) {
    uint32_t gs = g * GM_ROWS;
    if (!m->gm || gs < m->k0 || gs > m->k1 || m->k1 - gs < GM_ROWS)
        return 0;
    if (!m->gm[g])
        m->gm[g] = group_mask(x->phy + gs, m->ext);
    return m->gm[g];
}

static uint32_t hit_fwd_gm(const rowscan *x, const gmscan *m, uint32_t i, uint32_t e) {
    uint64_t passed = 0;
    while (i < e) {
        uint32_t g = i / GM_ROWS, ge = (g + 1) * GM_ROWS;
        uint32_t stop = ge < e ? ge : e;
        uint64_t gmask = gm_of(m, x, g);
        if (!gmask || (gmask & m->qm)) {
            uint32_t r = hit_fwd(x, i, stop);
            if (r != UINT32_MAX)
                return gm_done(m, r, passed);
        } else {
            passed++;
        }
        i = stop;
    }
    return gm_done(m, UINT32_MAX, passed);
}

static uint32_t hit_bwd_gm(const rowscan *x, const gmscan *m, uint32_t i, uint32_t e) {
    uint64_t passed = 0;
    while (e > i) {
        uint32_t g = (e - 1) / GM_ROWS, gs = g * GM_ROWS;
        uint32_t from = gs > i ? gs : i;
        uint64_t gmask = gm_of(m, x, g);
        if (!gmask || (gmask & m->qm)) {
            uint32_t r = hit_bwd(x, from, e);
            if (r != UINT32_MAX)
                return gm_done(m, r, passed);
        } else {
            passed++;
        }
        e = from;
    }
    return gm_done(m, UINT32_MAX, passed);
}

/* The first row of [lo, hi) whose transition is at least x (hi when
 * none), t non-decreasing: a guess interpolated on the transitions, a
 * gallop from it, a binary search in its last step. O(log d) probes, d
 * the guess's distance from the answer (at most about twice a binary
 * search's when the guess is poor): on the real stores a chunk's rows in
 * a block advance with the transitions nearly evenly, and a point
 * question read ~3 cache lines of the column here where the binary
 * search, also reading the id column, read ~11 (a question asked with
 * the CPU caches cold after other work pays each). The same row as the
 * binary search: the answer is unchanged. */
static uint32_t t_lower_bound(const uint64_t *t, uint32_t lo, uint32_t hi, uint64_t x) {
    if (lo >= hi || t[lo] >= x)
        return lo;
    if (t[hi - 1] < x)
        return hi;
    /* t[a] < x <= t[b]: the answer lies in (a, b] */
    uint32_t a = lo, b = hi - 1;
    if (b - a > 1) {
        double f = (double)(x - t[a]) / (double)(t[b] - t[a]);
        uint32_t g = a + 1 + (uint32_t)(f * (double)(b - a - 1));
        if (g > b) /* rounding */
            g = b;
        uint32_t step = 1;
        if (t[g] >= x) {
            b = g;
            while (b - a > step && t[b - step] >= x) {
                b -= step;
                step <<= 1;
            }
            if (b - a > step)
                a = b - step;
        } else {
            a = g;
            while (b - a > step && t[a + step] < x) {
                a += step;
                step <<= 1;
            }
            if (b - a > step)
                b = a + step;
        }
    }
    while (b - a > 1) {
        uint32_t m = a + (b - a) / 2;
        if (t[m] >= x)
            b = m;
        else
            a = m;
    }
    return b;
}

/* Walks one chunk in query order, adding at most want matches. */
static int scan_chunk(qctx *c, const mh_seg *seg, const mh_slice *s,
                      const mh_chunk *ch, const qspec *q, size_t want,
                      const cut *k) {
    uint32_t R = seg->rows_per_block;
    uint32_t r0 = ch->row_first, r1 = ch->row_first + ch->row_count;
    uint32_t b0 = r0 / R, b1 = (r1 - 1) / R;
    int fwd = q->dir == MH_FORWARD;
    /* start block: the last one whose first row is (forward) still before
     * the start, or (backward) already on the query's side */
    uint32_t lo = b0, hi = b1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        mh_block bl;
        MH_TRY(mh_seg_block(seg, s, s->block_first + mid, &bl, &c->diag));
        int side = in_range(q, bl.first_t, s->id_first + bl.first_id);
        if (fwd ? !side : side)
            lo = mid;
        else
            hi = mid - 1;
    }
    size_t found = 0;
    uint64_t prev_id = 0, prev_t = 0;
    int have_prev = 0;
    const int filtered = row_filtered(q);
    for (int64_t b = lo; fwd ? b <= (int64_t)b1 : b >= (int64_t)b0;
         b += fwd ? 1 : -1) {
        mh_block bl;
        MH_TRY(mh_seg_block(seg, s, s->block_first + (uint32_t)b, &bl, &c->diag));
        uint32_t base = (uint32_t)b * R;
        /* forward, a block whose first row is the chunk's and lies past
         * the cutoff or the end bound holds nothing more for us */
        if (base >= r0 && fwd &&
            (beyond(q, k, s->id_first + bl.first_id) ||
             !in_end(q, bl.first_t, s->id_first + bl.first_id)))
            break;
        /* backward, this block's rows come before the first row of the block
         * walked last: all past an id end bound when that row is at it */
        if (!fwd && have_prev && !in_end(q, prev_t, prev_id - 1))
            break;
        if (bl.phy_max < q->a || bl.phy_min > q->b || !mask_meets(q, bl.stream_mask))
            continue; /* no row of this block overlaps [A, B] or is of the set */
        const centry *ent = NULL;
        /* the chunk's rows in this block */
        uint32_t k0 = (r0 > base ? r0 : base) - base;
        int32_t ei;
        MH_TRY(get_block_entry(c, seg, s, (uint32_t)b, k0, r1 - base, WANT_ALL, &ei));
        ent = &c->ent[ei];
        const mh_rows *rows = &ent->rows;
        uint32_t k1 = (r1 < base + rows->n ? r1 : base + rows->n) - base;
        if (k0 >= k1) /* the chunk's rows miss a block they span */
            MH_FAIL(MH_ECORRUPT, &c->diag, bl.offset,
                    "slice %u, block %u at byte %llu: chunk's rows %u..%u miss "
                    "the block", mh_seg_slice_of_block(seg, s->block_first + (uint32_t)b),
                    s->block_first + (uint32_t)b, (unsigned long long)bl.offset,
                    r0, r1 - 1);
        /* the columns in locals: mhq_cands_add's stores could alias them */
        const uint32_t *col_id = rows->id_off, *col_size = rows->size;
        const uint64_t *col_t = rows->t, *col_phy = rows->phy;
        /* inside the block the chunk's rows are in order (check_rows); where
         * blocks meet, the first row in query order must continue the last
         * one of the block walked before */
        uint32_t first = fwd ? k0 : k1 - 1, last = fwd ? k1 - 1 : k0;
        if (have_prev) {
            uint64_t fid = s->id_first + col_id[first], ft = col_t[first];
            if (fwd ? fid <= prev_id || ft < prev_t : fid >= prev_id || ft > prev_t)
                MH_FAIL(MH_ECORRUPT, &c->diag, bl.offset,
                        "slice %u, block %u at byte %llu: access %llu does not "
                        "follow access %llu of its chunk in the block before",
                        mh_seg_slice_of_block(seg, s->block_first + (uint32_t)b),
                        s->block_first + (uint32_t)b, (unsigned long long)bl.offset,
                        (unsigned long long)fid, (unsigned long long)prev_id);
        }
        /* the rows at the block's ends are read where they are needed:
         * the last one's id and transition when the walk goes on to the
         * next block (below), the first one's for the check above and
         * for a window; a point question answered in its first block
         * reads neither (with the stack change of 1.10.6, 4-7 % fewer of
         * the cache lines a warm point question meets cold: callgrind
         * with a 256 KiB last level, python's point max1 questions) */
        have_prev = 1;
        /* binary search: the rows of [k0, k1) on the query's side of the
         * start are [p, k1) forward and [k0, p) backward */
        uint32_t lo2 = k0, hi2 = k1;
        /* from a transition, with no window bound among these rows (the
         * first row in query order has the id every row passes; without a
         * window every id passes), the side is the transition's alone:
         * forward the rows with t >= start, backward those with t <= start */
        int no_window = fwd ? q->id_lo == 0 : q->id_hi == UINT64_MAX;
        if (q->kind == MH_FROM_TRANSITION &&
            (no_window || (fwd ? s->id_first + col_id[first] >= q->id_lo
                               : s->id_first + col_id[first] <= q->id_hi))) {
            lo2 = fwd ? t_lower_bound(col_t, k0, k1, q->start)
                  : q->start == UINT64_MAX ? k1
                                           : t_lower_bound(col_t, k0, k1, q->start + 1);
            hi2 = lo2;
        }
        while (lo2 < hi2) {
            uint32_t mid = lo2 + (hi2 - lo2) / 2;
            int side = in_range(q, col_t[mid], s->id_first + col_id[mid]);
            if (fwd ? !side : side)
                lo2 = mid + 1;
            else
                hi2 = mid;
        }
        uint32_t a0 = fwd ? lo2 : k0, a1 = fwd ? k1 : lo2;
        if (a0 == a1) {
            prev_id = s->id_first + col_id[last];
            prev_t = col_t[last];
            continue;
        }
        /* the rows [a0, a1) in query order: the next one meeting [A, B]
         * found by a scan of the address columns alone; the cutoff and
         * the end bound, monotone along the chunk's rows, asked of that
         * row only (past them, every later row is too), and of the
         * range's last row when no row is left to meet [A, B]. A point
         * query walks ~200 rows a query on the real stores: asking both
         * bounds of each row cost ~27 instructions a row, the scan ~2 */
        uint64_t ext = ent->size_ext;
        rowscan x = {col_phy, col_size, q->a, q->b, q->a > ext ? q->a - ext : 0, 0};
        x.span = q->b - x.lo;
        uint32_t u0 = a0, u1 = a1;
        /* a chunk inside [A, B] (a whole-space question's, most of a 1 MiB
         * one's, a point question's chunk of one address): every row meets
         * it (the decode checked each row within its chunk's range), so the
         * next row is the match, unscanned, and no mask is made for it */
        const int all_meet = ch->phy_first >= q->a && ch->phy_last <= q->b;
        /* the masks from a block's second walk on (the first, through a
         * block decoded for it, often its only one, scans as before: a
         * mask costs a few instructions a row more than the scan), and
         * for a range of fewer than 64 granules alone (a wider one meets
         * every mask) */
        uint64_t qm = gran_mask(q->a, q->b);
        const int masks = !all_meet && ent->walked && ~qm;
        if (masks && !ent->gm_ok)
            entry_gm(c, &c->ent[ei], seg->rows_per_block);
        gmscan gs = {masks && ent->gm_ok ? ent->gm : NULL, qm, ext, k0, k1,
                     &((mh_reader *)c->r)->groups_passed};
        c->ent[ei].walked = 1;
        for (;;) {
            uint32_t row = all_meet ? (u0 >= u1 ? UINT32_MAX : fwd ? u0 : u1 - 1)
                           : !gs.gm ? (fwd ? hit_fwd(&x, u0, u1) : hit_bwd(&x, u0, u1))
                           : fwd    ? hit_fwd_gm(&x, &gs, u0, u1)
                                    : hit_bwd_gm(&x, &gs, u0, u1);
            if (row == UINT32_MAX)
                break;
            uint64_t id = s->id_first + col_id[row];
            if (beyond(q, k, id) || !in_end(q, col_t[row], id))
                return MH_OK;
            if (fwd)
                u0 = row + 1;
            else
                u1 = row;
            if (filtered && !row_keep(q, rows, row))
                continue;
            mh_access a = mhq_access(s, rows, row, ch->op);
            if (mhq_cands_add(&c->cands, &a) != MH_OK)
                MH_FAIL(MH_ENOMEM, &c->diag, 0, "out of memory for candidates");
            if (++found == want)
                return MH_OK;
        }
        uint32_t end_row = fwd ? a1 - 1 : a0;
        uint64_t end_id = s->id_first + col_id[end_row];
        if (beyond(q, k, end_id) || !in_end(q, col_t[end_row], end_id))
            return MH_OK;
        /* on to the next block: its first row must follow this one's
         * last (read before the next block's entry may push this one out) */
        prev_id = s->id_first + col_id[last];
        prev_t = col_t[last];
    }
    return MH_OK;
}

/* Adds to out the first `want` matches of slice si, in query order. */
static int scan_slice(qctx *c, const mh_seg *seg, uint32_t si, const qspec *q,
                      size_t want, mh_access *out, size_t *got) {
    mh_slice s;
    mh_seg_slice(seg, si, &s);
    MH_TRY(mh_seg_slice_check(seg, si, &s, &c->diag));
    int wide = mh_query_wide(c, seg, si, &s, q, want, out, got);
    if (wide == 0) /* the wide path takes want >= 256, the id path fewer */
        wide = mh_query_idmap(c, seg, si, &s, q, want, out, got);
    if (wide != 0)
        return wide < 0 ? wide : MH_OK;
    mhq_cands *cd = &c->cands;
    cd->n = cd->sorted = 0;
    cut k = {0, 0};
    int fwd = q->dir == MH_FORWARD;
    for (unsigned op = 0; op < MH_OP_COUNT; op++) {
        if (!(q->ops & (1u << op)) || s.op_counts[op] == 0)
            continue;
        uint32_t lo;
        if (c->first_seg == seg && c->first_si == si) {
            lo = c->first_chunk[op]; /* searched by the id path */
        } else {
            uint32_t olo, ohi;
            mhq_op_chunks(seg, si, &s, op, &olo, &ohi);
            lo = q->a == 0 ? olo : mhq_first_chunk(seg, olo, ohi, op, q->a);
        }
        for (uint32_t ci = lo; ci < s.chunk_first + s.chunk_count; ci++) {
            /* the fields that pass most chunks by, straight from the
             * record (checked by mh_seg_slice_check); the whole record
             * loaded for a chunk that may match only (a 1 MiB question
             * passes ~20 chunks a slice: loading each cost ~90
             * instructions, 1,600 of 9,500, callgrind) */
            const uint8_t *rec = seg->chunks + (size_t)ci * seg->chunk_recsz;
            if (rec[MHF_CHUNK_OP] != op || mhf_load_u64(rec + MHF_CHUNK_PHY_FIRST) > q->b)
                break;
            const uint64_t idf = s.id_first + mhf_load_u32(rec + MHF_CHUNK_ID_FIRST);
            const uint64_t idl = s.id_first + mhf_load_u32(rec + MHF_CHUNK_ID_LAST);
            const uint64_t tf = mhf_load_u64(rec + MHF_CHUNK_T_FIRST);
            const uint64_t tl = mhf_load_u64(rec + MHF_CHUNK_T_LAST);
            /* skip chunks wholly before the start or beyond the cutoff */
            if (!in_range(q, fwd ? tl : tf, fwd ? idl : idf))
                continue;
            if (beyond(q, &k, fwd ? idf : idl))
                continue;
            /* and chunks whose first row in query order is past the end */
            if (!in_end(q, fwd ? tf : tl, fwd ? idf : idl))
                continue;
            mh_chunk ch;
            mh_seg_chunk_load(seg, ci, &ch);
            if (!mask_meets(q, ch.stream_mask))
                continue; /* no row of the stream set */
            MH_TRY(scan_chunk(c, seg, &s, &ch, q, want, &k));
            if (cd->n >= want && (!k.set || want <= 16 || cd->n / 2 >= want)) {
                mhq_cands_order(cd, q->dir, want);
                k.set = 1;
                k.id = cd->v[want - 1].id;
            }
        }
    }
    c->first_seg = NULL;
    mhq_cands_order(cd, q->dir, want);
    size_t n = cd->n < want ? cd->n : want;
    /* rows of different chunks must agree too: ids are unique and
     * transitions follow ids */
    for (size_t i = 1; i < n; i++)
        if (fwd ? cd->v[i].id <= cd->v[i - 1].id ||
                      cd->v[i].transition < cd->v[i - 1].transition
                : cd->v[i].id >= cd->v[i - 1].id ||
                      cd->v[i].transition > cd->v[i - 1].transition)
            MH_FAIL(MH_ECORRUPT, &c->diag,
                    seg->slice_off + (uint64_t)si * seg->slice_recsz,
                    "slice %u at byte %llu: accesses %llu and %llu of different "
                    "chunks disagree (id repeated or transition out of order)",
                    si, (unsigned long long)(seg->slice_off +
                                             (uint64_t)si * seg->slice_recsz),
                    (unsigned long long)cd->v[i - 1].id,
                    (unsigned long long)cd->v[i].id);
    if (n)
        memcpy(out, cd->v, n * sizeof *out);
    *got = n;
    return MH_OK;
}

/* First slice, in query order, that can hold a match: returns 0 when none,
 * 1 with *li (indexing r->live) and *si set, or a negative code (a segment
 * that fails to open; detail in c->diag). The segments are found by their
 * MANIFEST records: only the one holding the start is opened. */
static int find_start(qctx *c, const qspec *q, size_t *li, uint32_t *si) {
    const mh_reader *r = c->r;
    if (r->nlive == 0)
        return 0;
    int fwd = q->dir == MH_FORWARD, by_t = q->kind == MH_FROM_TRANSITION;
    if (!by_t && ((fwd && q->start == UINT64_MAX) || (!fwd && q->start == 0)))
        return 0;
    /* segments: forward, the first whose end reaches the start; backward,
     * the last whose beginning is at or before it */
    size_t lo = 0, hi = r->nlive;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const mh_manrec *s = &r->recs[r->live[mid]];
        /* in_range is monotone in id order (start and window together) */
        int before = fwd ? !in_range(q, s->t_last, s->id_first + s->count - 1)
                         : in_range(q, s->t_first, s->id_first);
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t seg_i;
    if (fwd) {
        if (lo == r->nlive)
            return 0;
        seg_i = lo;
    } else {
        if (lo == 0)
            return 0;
        seg_i = lo - 1;
    }
    const mh_seg *s;
    MH_TRY(mh_reader_seg(r, r->live[seg_i], &s, &c->diag));
    uint32_t a = 0, b = s->nslices;
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        /* a probe reads the three fields it compares, not the whole
         * record (mh_seg_slice): the slice records were checked when the
         * segment was opened, as mh_seg_slice's callers rely on */
        const uint8_t *rec = s->slices + (size_t)mid * s->slice_recsz;
        uint64_t id_first = mhf_load_u64(rec + MHF_SLICE_ID_FIRST);
        int before =
            fwd ? !in_range(q, mhf_load_u64(rec + MHF_SLICE_T_LAST),
                            id_first + mhf_load_u32(rec + MHF_SLICE_COUNT) - 1)
                : in_range(q, mhf_load_u64(rec + MHF_SLICE_T_FIRST), id_first);
        if (before)
            a = mid + 1;
        else
            b = mid;
    }
    if (fwd) {
        if (a == s->nslices)
            return 0; /* cannot happen: the segment's end reaches the start */
        *si = a;
    } else {
        if (a == 0)
            return 0;
        *si = a - 1;
    }
    *li = seg_i;
    return 1;
}

/* si as next_segment leaves it forward: the first slice of a segment
 * entered from the one before it (backward, UINT32_MAX: its last slice).
 * find_start never gives either, so the segment-entry block knows the walk
 * came from a neighbour, where the span address sets may skip. */
#define SI_NEXT_FWD (UINT32_MAX - 1u)

/* The first live segment from li on, in query order, that begins past the
 * end bound (forward: nlive when none; backward: SIZE_MAX when none): the
 * span address sets' nodes are asked only before it. */
static size_t span_bound(const mh_reader *r, const qspec *q, int fwd, size_t li) {
    size_t lo = fwd ? li : 0, hi = fwd ? r->nlive : li + 1;
    while (lo < hi) { /* in_end is monotone in query order */
        size_t mid = lo + (hi - lo) / 2;
        const mh_manrec *rec = &r->recs[r->live[mid]];
        int inside = fwd ? in_end(q, rec->t_first, rec->id_first)
                         : in_end(q, rec->t_last, rec->id_first + rec->count - 1);
        if (inside == fwd)
            lo = mid + 1;
        else
            hi = mid;
    }
    return fwd ? lo : lo - 1; /* backward: the last one outside, or SIZE_MAX */
}

/* Moves (li, si) to the first slice of the next segment in query order
 * (forward: si = SI_NEXT_FWD, backward: si = UINT32_MAX, its first / last
 * slice once it is open); 0 when there is none. */
static int next_segment(const mh_reader *r, int fwd, size_t *li, uint32_t *si) {
    if (fwd) {
        if (++*li == r->nlive)
            return 0;
        *si = SI_NEXT_FWD;
    } else {
        if (*li == 0)
            return 0;
        --*li;
        *si = UINT32_MAX;
    }
    return 1;
}

/* Can the address postings serve [a, b]? Decided from the section's shift
 * taken unchecked (a range too wide for them neither reads nor checks the
 * section: a query that would not use a broken one is not refused, SPEC
 * 9d); a shift outside 3 .. 63 decides as 3, so a query narrow at that
 * shift reads the section and is refused by its check. */
static int apost_may_serve(const mh_seg *seg, const mh_section *sec, int type,
                           uint64_t a, uint64_t b) {
    uint32_t shift = MHF_APOST_SHIFT_MIN;
    /* section 10's start in it: after a section 14's table */
    uint64_t at = type == (int)MHF_SECT_APOSTW
                      ? mh_apostw_body_at(seg->base + sec->offset, sec->size)
                      : 0;
    if (sec->size - at >= 4) {
        uint32_t s = mhf_load_u32(seg->base + sec->offset + at + MHF_APOST_SHIFT);
        if (s >= MHF_APOST_SHIFT_MIN && s <= MHF_APOST_SHIFT_MAX)
            shift = s;
    }
    return (b >> shift) - (a >> shift) < MHF_APOST_SPAN;
}

/* Asks segment seg's stream postings (section 15, SPEC 9d.2) for q's
 * streams: 1 when they serve, their candidates then in *it (with `and`,
 * ANDed into the postings' candidates *it holds), 0 when they do not
 * serve, < 0 MH_E* with the detail prefixed by the segment's name. */
static int stream_postings(qctx *c, const qspec *q, const mh_seg *seg, mh_apost_iter *it,
                           int and) {
    mh_apost_iter sit;
    int sp = mh_spost_query(seg, q->a, q->b, q->ops, q->slist, q->nslist, &sit, &c->sp_bits,
                            &c->sp_cap, &c->diag);
    if (sp < 0) {
        mh_diag_prefix(&c->diag, "%s", seg->name);
        return sp;
    }
    if (sp && and)
        mh_spost_and(it, &sit, q->ops);
    else if (sp)
        *it = sit;
    return sp;
}

static int fill(qctx *c, const qspec *q, mh_access *out, size_t need,
                size_t *n) {
    *n = 0;
    c->diag.code = 0;
    size_t li;
    uint32_t si;
    if (need == 0 || end_before_start(q))
        return MH_OK;
    /* a range no access of the ops ever touched: answered by the whole
     * store's union (store_union.c) without a segment opened, once a
     * query's walk has built it (below) */
    if (mh_store_union_excludes(c->r, q->a, q->b, q->ops, 0))
        return MH_OK;
    int found = find_start(c, q, &li, &si);
    if (found <= 0)
        return found;
    const mh_reader *r = c->r;
    int fwd = q->dir == MH_FORWARD;
    /* the address summary's candidate slices of the current segment
     * (summary_read.c): -1 not asked yet, 0 every slice, 1 those of it;
     * -2, the start slice, scanned before the summary is asked: a query
     * answered there (most of the narrow ones that have an answer) costs
     * what it did without a summary, where asking it first cost ~800
     * instructions (1 MiB max1 on the qemu sort store, callgrind), and
     * one that is not pays one slice's chunk search more. The summary only
     * skips slices without a match, so the answers are the same. */
    int sum_on = -2;
    /* the address postings (section 10, SPEC 9d) of the current segment:
     * 1 they serve this range (ait lists the candidate slices: the address
     * set, the summaries and the start-slice-first rule are not used), 0
     * they do not (absent, or a range of 16 granules or more) */
    int ap_on = 0;
    /* 1 while the postings serve and the segment's address set (SPEC
     * 9b) is still to be asked, at the first listed slice without a match */
    int aset_due = 0;
    /* 1 while the postings serve and the stream postings (section 15) are
     * still to be asked, at the first listed slice without a match */
    int sp_due = 0;
    mh_apost_iter ait;
    size_t seg_found = 0; /* matches found in the current segment */
    /* the summaries' iterator (6 KiB) is the context's: on the stack it
     * stood between fill's locals and its callees' frames, so a question
     * the postings serve touched one more stack page for nothing */
    mh_sum_iter *it = &c->sum_it;
    const mh_seg *seg = NULL;
    for (;;) {
        /* a segment is opened when the walk reaches it (a failed open's
         * detail already names the file), unless its MANIFEST record shows
         * it begins past the end bound */
        if (!seg) {
            /* entered from the previous segment: the span address sets
             * (span_read.c) pass whole runs of segments without a match
             * in O(log n) node checks; the start segment is entered as
             * found (its start slice is scanned first, as below) */
            if (si >= SI_NEXT_FWD) {
                if (si == SI_NEXT_FWD)
                    si = 0;
                /* the nodes asked lie within the end bound: nothing past
                 * it is read (the first segment past it ends the walk) */
                size_t bound = span_bound(r, q, fwd, li);
                int inside = fwd ? bound > li : bound == SIZE_MAX || bound < li;
                if (!r->span_off && inside) {
                    /* the first walk that leaves its start segment
                     * builds the union (a question answered in its start
                     * segment never pays for it): none anywhere, none
                     * further on */
                    if (mh_store_union_excludes(r, q->a, q->b, q->ops, 1))
                        return MH_OK;
                    size_t lo = fwd ? 0 : bound == SIZE_MAX ? 0 : r->live[bound] + 1;
                    size_t hi = fwd ? (bound == r->nlive ? r->nsegs : r->live[bound])
                                    : r->nsegs;
                    /* a question of a few streams asks the stream nodes
                     * too (section 16): runs of segments where none of
                     * its streams touched [A, B] */
                    uint32_t nsl = r->sspan_off ? 0 : q->nslist;
                    int sk = mh_span_skip(r, fwd, q->a, q->b, q->ops, q->slist, nsl, lo, hi,
                                          &li, &c->diag);
                    if (sk <= 0)
                        return sk;
                }
            }
            const mh_manrec *rec = &r->recs[r->live[li]];
            if (!in_end(q, fwd ? rec->t_first : rec->t_last,
                        fwd ? rec->id_first : rec->id_first + rec->count - 1))
                return MH_OK;
            MH_TRY(mh_reader_seg(r, r->live[li], &seg, &c->diag));
            MH_TRY(ctx_fit(c, seg));
            if (si == UINT32_MAX)
                si = seg->nslices - 1;
            sum_on = sum_on == -2 ? -2 : -1;
            seg_found = 0;
            /* the postings, asked before the start slice is scanned: exact
             * per slice, they pass a start slice without a match. When
             * they serve the range the address set, exact to the byte, is
             * asked only once a slice they list held no match (aset_due,
             * below): it then passes the rest of a segment whose postings
             * list the slices of a word whose other bytes were accessed;
             * asked first, it cost every question answered in its first
             * listed slice (most) a second binary search and run decode
             * (python point rw, mh_probe warm: p50 12-27 % more) */
            ap_on = 0;
            aset_due = 0;
            const mh_section *asec;
            mh_apost_view v; /* checked once, asked again below */
            int atype = r->apost_off ? MH_ENOTFOUND : mh_apost_section(seg, &asec);
            if (atype > 0 && apost_may_serve(seg, asec, atype, q->a, q->b)) {
                int rc = mh_apost_view_get(seg, &v, &c->diag);
                if (rc != MH_ENOTFOUND) {
                    if (rc != MH_OK) {
                        mh_diag_prefix(&c->diag, "%s", seg->name);
                        return rc;
                    }
                    ap_on = (q->b >> v.shift) - (q->a >> v.shift) < MHF_APOST_SPAN;
                }
            }
            if (ap_on) {
                ap_on = mh_apost_query_view(seg, &v, q->a, q->b, q->ops, &ait,
                                            &c->ap_bits, &c->ap_cap, &c->diag);
                if (ap_on < 0) {
                    mh_diag_prefix(&c->diag, "%s", seg->name);
                    return ap_on;
                }
                if (ap_on) {
                    sum_on = 0;
                    aset_due = !r->aset_off;
                }
            }
            /* the stream postings (section 15, SPEC 9d.2): a question of a
             * few streams takes the slices where one of them touches
             * [A, B]. With the postings serving, they are asked as the
             * address set is, once a slice the postings list held no match
             * (then the slices both list): asked first, they cost a point
             * question answered in its first listed slice ~0.3 us more
             * (64 threads, mh_abtest: point max1 1str p50 0.44 -> 0.77).
             * Without them, at once, instead of the summaries (asked after
             * the address set and the start slice, a page question's p50
             * was 1.3-1.9x what it is so) */
            sp_due = q->nslist && !r->spost_off;
            if (sp_due && !ap_on) {
                sp_due = 0;
                int sp = stream_postings(c, q, seg, &ait, 0);
                if (sp < 0)
                    return sp;
                if (sp) {
                    ap_on = 1;
                    sum_on = 0;
                    aset_due = !r->aset_off;
                }
            }
        }
        if (sum_on == -1) {
            /* the address set (aset_read.c), once per segment: no
             * interval of the ops meeting [A, B], no match in it */
            int meets = r->aset_off ? 1
                                    : mh_aset_meets(seg, q->a, q->b, q->ops,
                                                    &c->diag);
            if (meets <= 0) {
                if (meets < 0) {
                    mh_diag_prefix(&c->diag, "%s", seg->name);
                    return meets;
                }
                /* the start slice, scanned before the set was asked, found
                 * a match the set says cannot be: a set that is well formed
                 * but not exact (only fsck proves exactness) */
                if (seg_found)
                    MH_FAIL(MH_ECORRUPT, &c->diag, 0,
                            "%s: address set: no interval of the query's "
                            "operations meets [0x%llx, 0x%llx], but its slices "
                            "hold %zu matching accesses", seg->name,
                            (unsigned long long)q->a, (unsigned long long)q->b,
                            seg_found);
                if (!next_segment(r, fwd, &li, &si))
                    return MH_OK;
                seg = NULL;
                continue;
            }
            sum_on = r->summary_off == 1
                         ? 0
                         : mh_summary_query(seg, q->a, q->b, q->ops,
                                            r->summary_off == 2, it, &c->diag);
            /* a range too wide for the fine summary (section 9: 64 granules
             * of 1 KiB) may still be narrow for section 6 (64 KiB): a 1 MiB
             * query walked every slice of the segment without it (2.1's 1
             * MiB regression: 14 slices visited a query instead of 1 on the
             * python store, callgrind 304 k -> 506 k instructions) */
            if (sum_on == 0 && r->summary_off == 0)
                sum_on = mh_summary_query(seg, q->a, q->b, q->ops, 1, it,
                                          &c->diag);
            if (sum_on < 0) {
                mh_diag_prefix(&c->diag, "%s", seg->name);
                return sum_on;
            }
        }
        if (ap_on || sum_on > 0) {
            uint32_t cand = ap_on ? (fwd ? mh_apost_next(&ait, si) : mh_apost_prev(&ait, si))
                            : fwd ? mh_sum_next(it, si)
                                  : mh_sum_prev(it, si);
            if (cand == UINT32_MAX) { /* none left in this segment */
                if (!next_segment(r, fwd, &li, &si))
                    return MH_OK;
                seg = NULL;
                continue;
            }
            si = cand;
        }
        /* the walk stops at the first slice that begins, in query order,
         * past the end bound: nothing beyond it is read */
        mh_slice sl;
        mh_seg_slice(seg, si, &sl);
        if (!in_end(q, fwd ? sl.t_first : sl.t_last,
                    fwd ? sl.id_first : sl.id_first + sl.count - 1))
            return MH_OK;
        size_t got = 0;
        /* a query of several ops searches, in a slice the postings (or
         * the summary) list, only the ops whose own postings (entries)
         * list it: the others have no row there meeting [A, B] (SPEC 9,
         * 9d: exact per op), and their chunk search and the blocks of a
         * chunk that merely spans [A, B] were a rw point question's cost
         * beyond its read and write parts */
        const qspec *qs = q;
        qspec narrow;
        if ((ap_on || sum_on > 0) && (q->ops & (q->ops - 1u))) {
            unsigned listed = (ap_on ? mh_apost_ops_at(&ait, si) : mh_sum_ops_at(it, si, fwd)) &
                              q->ops;
            if (listed != q->ops) {
                narrow = *q;
                narrow.ops = listed;
                qs = &narrow;
            }
        }
        /* a slice with no row of the stream set is not looked into */
        int rc = mask_meets(q, sl.stream_mask)
                     ? scan_slice(c, seg, si, qs, need - *n, out + *n, &got)
                     : MH_OK;
        if (rc != MH_OK) {
            /* the file comes first, as in fsck's FILE:OFFSET lines */
            mh_diag_code(&c->diag, rc);
            mh_diag_prefix(&c->diag, "%s", seg->name);
            return rc;
        }
        *n += got;
        seg_found += got;
        if (*n == need)
            return MH_OK;
        /* the segment's first listed slice held no match: the address set
         * decides whether the rest of it can hold one (a match found there
         * proves it meets, and none contradicts it) */
        int ask_set = aset_due && got == 0;
        aset_due = 0;
        if (ask_set) {
            int meets = mh_aset_meets(seg, q->a, q->b, q->ops, &c->diag);
            if (meets < 0) {
                mh_diag_prefix(&c->diag, "%s", seg->name);
                return meets;
            }
            atomic_fetch_add_explicit(&((mh_reader *)r)->aset_late_asks, 1,
                                      memory_order_relaxed);
            if (meets == 0) {
                atomic_fetch_add_explicit(&((mh_reader *)r)->aset_late_passes, 1,
                                          memory_order_relaxed);
                if (!next_segment(r, fwd, &li, &si))
                    return MH_OK;
                seg = NULL;
                continue;
            }
        }
        /* ... and then the stream postings restrict the slices left (after
         * the set, which passes a segment no stream touched [A, B] in),
         * when the postings list two more at least: one more costs a
         * chunk search, about what asking them costs (the never-accessed
         * points of 64 threads, mh_abtest: 1.08-1.13x when always asked) */
        if (sp_due && got == 0) { /* sp_due: the postings serve */
            uint32_t n1 = fwd ? mh_apost_next(&ait, si + 1)
                              : si > 0 ? mh_apost_prev(&ait, si - 1) : UINT32_MAX;
            uint32_t n2 = n1 == UINT32_MAX ? UINT32_MAX
                          : fwd        ? mh_apost_next(&ait, n1 + 1)
                          : n1 > 0     ? mh_apost_prev(&ait, n1 - 1)
                                       : UINT32_MAX;
            int sp = n2 == UINT32_MAX ? 0 : stream_postings(c, q, seg, &ait, 1);
            if (sp < 0)
                return sp;
        }
        sp_due = 0;
        if (sum_on == -2)
            sum_on = -1;
        if (fwd ? si + 1 < seg->nslices : si > 0) {
            si = fwd ? si + 1 : si - 1;
        } else {
            if (!next_segment(r, fwd, &li, &si))
                return MH_OK;
            seg = NULL;
        }
    }
}

/* Takes a pooled context of r, or makes one. The reader is logically
 * const: the pool only keeps memory (and decoded blocks) between calls. */
static qctx *ctx_take(const mh_reader *r) {
    mh_reader *m = (mh_reader *)r;
    qctx *c = NULL;
    pthread_mutex_lock(&m->pool_mu);
    if (m->npool > 0)
        c = m->pool[--m->npool];
    pthread_mutex_unlock(&m->pool_mu);
    if (c) {
        /* the last owner's detail (a cursor's refused call) is not this
         * one's: mh_cursor_errmsg says "" until a call fails */
        c->diag.code = 0;
        c->diag.offset = 0;
        c->diag.msg[0] = 0;
        return c;
    }
    c = malloc(sizeof *c);
    if (c && ctx_init(c, r) != MH_OK) {
        ctx_destroy(c);
        c = NULL;
    }
    return c;
}

static void ctx_give(const mh_reader *r, qctx *c) {
    mh_reader *m = (mh_reader *)r;
    pthread_mutex_lock(&m->pool_mu);
    /* a cursor's context made before mh_reader_set_cache changed the
     * budget was sized for the old one: not kept */
    if (c->made_for == m->cache_bytes && m->npool < (int)(sizeof m->pool / sizeof m->pool[0])) {
        m->pool[m->npool++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&m->pool_mu);
    if (c)
        ctx_destroy(c);
}

int mh_query_cache_audit(const mh_reader *r, size_t *held, size_t *sum, size_t *largest) {
    mh_reader *m = (mh_reader *)r;
    *held = *sum = *largest = 0;
    pthread_mutex_lock(&m->pool_mu);
    for (int k = 0; k < m->npool; k++) {
        const qctx *c = m->pool[k];
        *held += c->held;
        for (uint32_t i = 0; i < c->nent; i++) {
            size_t b = entry_bytes(&c->ent[i]);
            *sum += b;
            *largest = b > *largest ? b : *largest;
        }
    }
    int n = m->npool;
    pthread_mutex_unlock(&m->pool_mu);
    return n;
}

int mh_query_cache_shape(const mh_reader *r, uint32_t *nent, uint32_t *slots) {
    mh_reader *m = (mh_reader *)r;
    *nent = *slots = 0;
    pthread_mutex_lock(&m->pool_mu);
    for (int k = 0; k < m->npool; k++) {
        const qctx *c = m->pool[k];
        if (c->nent >= *nent) {
            *nent = c->nent;
            *slots = c->mask + 1;
        }
    }
    int n = m->npool;
    pthread_mutex_unlock(&m->pool_mu);
    return n;
}

void mh_query_pool_free(mh_reader *r) {
    for (int i = 0; i < r->npool; i++)
        ctx_destroy(r->pool[i]);
    r->npool = 0;
}

/* Keeps d as the reader's detail: the only write to a shared reader, on the
 * error path only, under its own lock (queries in other threads go on). */
void mh_reader_set_error(const mh_reader *r, const mh_diag *d) {
    mh_reader *m = (mh_reader *)r;
    pthread_mutex_lock(&m->err_mu);
    m->err = *d;
    pthread_mutex_unlock(&m->err_mu);
}

static int reader_fail(const mh_reader *r, int code, const char *what) {
    mh_diag d = {0, 0, ""};
    mh_diag_fail(&d, code, 0, "%s", what);
    mh_reader_set_error(r, &d);
    return code;
}

int mh_query_run(const mh_reader *r, const mh_query *q, mh_access *out,
                 size_t max, size_t *n) {
    if (!r)
        return MH_EINVAL;
    if (!n || (!out && max))
        return reader_fail(r, MH_EINVAL, !n ? "mh_query_run: NULL n"
                                            : "mh_query_run: NULL out with max > 0");
    *n = 0;
    qspec s;
    /* the context first: the stream set's bits are its (no 8 KiB array
     * on the stack), and its diag takes read_query's detail (a 528-byte
     * local set whole each question was 9 cache lines for nothing) */
    qctx *c = ctx_take(r);
    if (!c)
        return reader_fail(r, MH_ENOMEM, "out of memory for a query context");
    if (read_query(r, q, &s, c->sbits, c->slist, &c->diag) != MH_OK) {
        mh_reader_set_error(r, &c->diag);
        int code = c->diag.code;
        ctx_give(r, c);
        return code;
    }
    int rc = fill(c, &s, out, max, n);
    if (rc != MH_OK) {
        *n = 0;
        mh_diag_code(&c->diag, rc);
        mh_reader_set_error(r, &c->diag);
        /* a context that met an error holds nothing worth keeping */
        ctx_destroy(c);
        return rc;
    }
    ctx_give(r, c);
    return rc;
}

int mh_cursor_open(const mh_reader *r, const mh_query *q, mh_cursor **out) {
    if (!r)
        return MH_EINVAL;
    if (!out)
        return reader_fail(r, MH_EINVAL, "mh_cursor_open: NULL out");
    *out = NULL;
    qspec spec;
    mh_diag qd;
    qd.code = 0;
    qd.offset = 0;
    qd.msg[0] = 0;
    mh_cursor *cur = calloc(1, sizeof *cur);
    if (!cur)
        return reader_fail(r, MH_ENOMEM, "out of memory for a cursor");
    /* the stream set's bits straight into the cursor's */
    if (read_query(r, q, &spec, cur->sbits, cur->slist, &qd) != MH_OK) {
        free(cur);
        mh_reader_set_error(r, &qd);
        return qd.code;
    }
    /* a pooled context, as mh_query_run's: an open makes no cache anew
     * (open, first batch and close on python 4.4 -> 1.5 us; a 2 MiB
     * table set whole with 4-row blocks), and a cursor starts with the
     * blocks the reader's questions decoded */
    cur->ctx = ctx_take(r);
    if (!cur->ctx) {
        free(cur);
        return reader_fail(r, MH_ENOMEM, "out of memory for a cursor's cache");
    }
    cur->spec = spec; /* its sbits and slist already point at the cursor's */
    *out = cur;
    return MH_OK;
}

int mh_cursor_next(mh_cursor *cur, mh_access *out, size_t max, size_t *n) {
    if (!cur)
        return MH_EINVAL;
    if (!n || (!out && max))
        return mh_diag_fail(&cur->ctx->diag, MH_EINVAL, 0, "mh_cursor_next: %s",
                            !n ? "NULL n" : "NULL out with max > 0");
    *n = 0;
    if (cur->error)
        return cur->error;
    if (cur->done || max == 0)
        return MH_OK;
    qspec s = cur->spec;
    if (cur->started) {
        s.kind = MH_FROM_ID; /* resume after the last id returned */
        s.start = cur->last_id;
    }
    int rc = fill(cur->ctx, &s, out, max, n);
    if (rc != MH_OK) {
        *n = 0;
        mh_diag_code(&cur->ctx->diag, rc);
        cur->error = rc;
        return rc;
    }
    if (*n) {
        /* each call checks its own answer; across calls the transitions
         * must keep going the same way (data that passed its checksums
         * but whose chunks disagree with each other) */
        if (cur->started && (s.dir == MH_FORWARD ? out[0].transition < cur->last_t
                                                 : out[0].transition > cur->last_t)) {
            *n = 0;
            cur->error = MH_ECORRUPT;
            return mh_diag_fail(&cur->ctx->diag, MH_ECORRUPT, 0,
                                "access %llu (transition %llu) does not follow "
                                "access %llu (transition %llu) of the previous "
                                "batch: the store's chunks disagree",
                                (unsigned long long)out[0].id,
                                (unsigned long long)out[0].transition,
                                (unsigned long long)cur->last_id,
                                (unsigned long long)cur->last_t);
        }
        cur->started = 1;
        cur->last_id = out[*n - 1].id;
        cur->last_t = out[*n - 1].transition;
    }
    if (*n < max)
        cur->done = 1;
    return MH_OK;
}

size_t mh_cursor_errmsg(const mh_cursor *cur, char *buf, size_t size) {
    return mh_diag_copy(cur ? &cur->ctx->diag : NULL, buf, size);
}

void mh_cursor_close(mh_cursor *cur) {
    if (!cur)
        return;
    if (cur->error) {
        /* a context that met an error holds nothing worth keeping (as
         * mh_query_run's) */
        ctx_destroy(cur->ctx);
    } else {
        ctx_give(cur->ctx->r, cur->ctx);
    }
    free(cur);
}
