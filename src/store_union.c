/*
 * store_union.c - the whole store's address union, per operation, kept in
 * the reader's memory (SPEC.md §14 step 0; an implementation's choice: no
 * section of its own, the same answers).
 *
 * A question on a range no access of its operations ever touched walks the
 * span address sets (§9e) in O(log n) node checks, each in another
 * segment's file: on a 10^9-access store of 61 segments, 4-7 us where 3
 * segments answer in 1-2. The union of every segment's address set is
 * what the span sets of the MANIFEST's prefix decomposition hold: the
 * nodes at positions n, n - L(n), ... (popcount(n) of them, each covering
 * L of its own positions). The first question whose walk leaves its start
 * segment reads those few sections once and merges them (each op's pairs
 * are sorted in a set: one k-way merge), and every later
 * question asks one sorted array before it opens a segment.
 *
 * A node missing or stale is replaced by its children (its own segment's
 * set and the nodes k - 1, k - 2, ..., k - L / 2), down to single
 * segments' sets; a segment of count 0 adds nothing, a segment without its
 * own set (over its budget, scattered) its address summary's granules (a
 * superset, so still never a wrong "none"). Anything else -- a segment
 * with neither, a section failing its check, too many sets to read, a
 * union over its limit (a quarter of the cache option, 16 bytes a pair),
 * no memory -- leaves the union unavailable for the life of the reader,
 * and queries walk as before, reading (and reporting) what they read. So
 * a broken node never answers wrongly; a query the union answers reads no
 * segment, broken or not, as a query bounded before a broken node never
 * reads it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One set the union takes: a segment's or a node's address set, or, for a
 * segment without one, its address summary (section 9, else 6), whose
 * granules [g << shift, (g + 1) << shift) per op are a superset of the
 * segment's ranges (exact per (granule, op)). */
typedef struct usrc {
    int is_sum;
    mh_aset_view set;
    mh_sum_view sum;
} usrc;

typedef struct ubuild {
    const mh_reader *r;
    usrc *src;
    size_t nsrc, cap_src;
    unsigned sets_left;
} ubuild;

static int add_src(ubuild *u, const usrc *s) {
    if (u->nsrc == u->cap_src) {
        size_t cap = u->cap_src ? 2 * u->cap_src : 16;
        usrc *p = realloc(u->src, cap * sizeof *p);
        if (!p)
            return MH_ENOMEM;
        u->src = p;
        u->cap_src = cap;
    }
    u->src[u->nsrc++] = *s;
    return MH_OK;
}

/* Segment at position k's own set (without one, its summary). */
static int add_own(ubuild *u, uint64_t k) {
    const mh_manrec *rec = &u->r->recs[k - 1];
    if (rec->count == 0)
        return MH_OK; /* an empty segment's set is empty */
    if (u->sets_left == 0)
        return MH_ENOTFOUND;
    u->sets_left--;
    const mh_seg *seg;
    mh_diag d = {0, 0, ""}; /* not kept: the union is only unavailable */
    MH_TRY(mh_reader_seg(u->r, (size_t)(k - 1), &seg, &d));
    usrc s;
    memset(&s, 0, sizeof s);
    int rc = mh_aset_view_get(seg, &s.set, &d);
    if (rc == MH_ENOTFOUND) {
        s.is_sum = 1;
        rc = mh_summary_view(seg, MH_SUM_FINE, &s.sum, &d);
        if (rc == MH_ENOTFOUND)
            rc = mh_summary_view(seg, MH_SUM_COARSE, &s.sum, &d);
        if (rc == MH_OK && s.sum.shift >= 64)
            rc = MH_ECORRUPT;
    }
    return rc == MH_OK ? add_src(u, &s) : rc;
}

/* The L(k) positions ending at k: node k, or its own set and children. */
static int add_node(ubuild *u, uint64_t k) {
    uint64_t L = mh_lowbit(k);
    if (L == 1)
        return add_own(u, k);
    if (u->sets_left == 0)
        return MH_ENOTFOUND;
    u->sets_left--;
    mh_span_view v;
    const mh_seg *seg = NULL;
    mh_diag d = {0, 0, ""};
    int rc = mh_span_node(u->r, (size_t)(k - 1), &v, &seg, &d);
    if (rc == MH_OK) {
        usrc s;
        memset(&s, 0, sizeof s);
        s.set = v.set;
        return add_src(u, &s);
    }
    if (rc != MH_ENOTFOUND)
        return rc;
    MH_TRY(add_own(u, k));
    for (uint64_t s = 1; s < L; s *= 2)
        MH_TRY(add_node(u, k - s));
    return MH_OK;
}

/* A source's pairs of one op, in address order. */
typedef struct ucur {
    const usrc *s;
    unsigned op;
    uint32_t next; /* the next run, or the next summary entry */
    mh_aset_cur c;
    int in_run;
    uint64_t lo, hi; /* the head pair */
    mh_diag *d;      /* not kept (the merge's own): the union is only unavailable */
} ucur;

/* The next pair of op into lo, hi: 1, 0 at the end, or an error. A set's
 * runs are checked as they are decoded (their pieces, their order). */
static int cur_step(ucur *k) {
    const usrc *s = k->s;
    if (s->is_sum) {
        const mh_sum_view *v = &s->sum;
        for (; k->next < v->nentries; k->next++) {
            const uint8_t *e = v->entries + (size_t)k->next * v->entry_size;
            if (e[MHF_SUM_E_OP] != k->op)
                continue;
            uint64_t g = mhf_load_u64(e + MHF_SUM_E_GRANULE);
            if (g > (UINT64_MAX >> v->shift))
                return MH_ECORRUPT;
            k->lo = g << v->shift;
            k->hi = k->lo | ((1ull << v->shift) - 1u);
            k->next++;
            return 1;
        }
        return 0;
    }
    const mh_aset_view *v = &s->set;
    for (;;) {
        if (!k->in_run) {
            if (k->next >= v->run_count[k->op])
                return 0;
            mh_aset_run_open(v, k->op, k->next++, &k->c);
            MH_TRY(mh_aset_run_bytes(v, k->c.run, k->d)); /* a lazy view's */
            k->in_run = 1;
        }
        int rc = mh_aset_run_step(&k->c, k->d);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            k->lo = k->c.lo;
            k->hi = k->c.hi;
            return 1;
        }
        k->in_run = 0;
    }
}

/* Op's union of every source: a k-way merge of their sorted lists,
 * written once into an array sized by their counts (this VM's page faults
 * cost microseconds: no list is copied twice). At most left pairs. */
static int merge_op(ubuild *u, unsigned op, size_t left, uint64_t **out, size_t *nout) {
    *out = NULL;
    *nout = 0;
    ucur *cur = calloc(u->nsrc ? u->nsrc : 1, sizeof *cur);
    if (!cur)
        return MH_ENOMEM;
    mh_diag d = {0, 0, ""};
    size_t live = 0;
    uint64_t bound = 0;
    int rc = MH_OK;
    for (size_t i = 0; i < u->nsrc && rc == MH_OK; i++) {
        const usrc *s = &u->src[i];
        bound += s->is_sum ? s->sum.nentries : s->set.nivals[op];
        cur[live] = (ucur){.s = s, .op = op, .d = &d};
        rc = cur_step(&cur[live]);
        if (rc == 1) {
            live++;
            rc = MH_OK;
        }
    }
    size_t cap = bound < left ? (size_t)bound : left;
    uint64_t *p = NULL;
    size_t n = 0;
    if (rc == MH_OK && live) {
        p = malloc((cap ? cap : 1) * 2 * sizeof *p);
        if (!p)
            rc = MH_ENOMEM;
    }
    while (rc == MH_OK && live) {
        size_t m = 0;
        for (size_t i = 1; i < live; i++)
            if (cur[i].lo < cur[m].lo)
                m = i;
        uint64_t lo = cur[m].lo, hi = cur[m].hi;
        /* overlapping or touching the last pair: merged (a last hi of
         * 2^64 - 1 swallows everything after it) */
        if (n && (p[2 * n - 1] == UINT64_MAX || lo <= p[2 * n - 1] + 1u)) {
            if (hi > p[2 * n - 1])
                p[2 * n - 1] = hi;
        } else if (n == cap) {
            rc = MH_ENOTFOUND; /* over the limit */
        } else {
            p[2 * n] = lo;
            p[2 * n + 1] = hi;
            n++;
        }
        if (rc != MH_OK)
            break;
        uint64_t prev = cur[m].lo;
        rc = cur_step(&cur[m]);
        if (rc == 1 && cur[m].lo <= prev)
            rc = MH_ECORRUPT; /* out of order: not kept */
        if (rc == 1)
            rc = MH_OK;
        else if (rc == 0)
            cur[m] = cur[--live];
    }
    free(cur);
    if (rc != MH_OK) {
        free(p);
        return rc;
    }
    if (p && n < cap) {
        /* sized by the sources' sum, the merge keeps fewer: give the rest
         * back (never faulted in, but counted against the address space
         * and kept for the reader's life) */
        uint64_t *q = realloc(p, (n ? n : 1) * 2 * sizeof *p);
        if (q)
            p = q;
    }
    *out = p;
    *nout = n;
    return MH_OK;
}

static int build(mh_reader *r) {
    uint64_t n = r->nsegs;
    unsigned lg = 0;
    while (lg < 64 && (1ull << lg) < n)
        lg++;
    /* the prefix decomposition reads at most lg + 1 sets; a missing node
     * adds its own segment's set and its children (a chain of them, down
     * from a segment without its own set: about 3 sets a level), but a
     * store without span sets (every segment's own set) is left to the
     * walk. The union takes at most a quarter of the cache option, 16
     * bytes a pair (at least 4096 pairs). */
    ubuild u = {r, NULL, 0, 0, 4 * lg + 8};
    size_t left = (size_t)(r->cache_bytes / 4 / 16);
    if (left < 4096)
        left = 4096;
    int rc = MH_OK;
    for (uint64_t k = n; rc == MH_OK && k > 0; k -= mh_lowbit(k))
        rc = add_node(&u, k);
    for (unsigned o = 0; rc == MH_OK && o < MHF_OP_COUNT; o++) {
        rc = merge_op(&u, o, left, &r->union_iv[o], &r->union_n[o]);
        left -= rc == MH_OK ? r->union_n[o] : 0;
        size_t nt = (r->union_n[o] + MH_UNION_STEP - 1) / MH_UNION_STEP;
        if (rc == MH_OK && nt) {
            r->union_top[o] = malloc(nt * sizeof(uint64_t));
            if (!r->union_top[o])
                rc = MH_ENOMEM;
            for (size_t t = 0; rc == MH_OK && t < nt; t++)
                r->union_top[o][t] = r->union_iv[o][2 * t * MH_UNION_STEP];
        }
    }
    free(u.src);
    if (rc != MH_OK)
        mh_store_union_free(r);
    return rc;
}

void mh_store_union_free(mh_reader *r) {
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        free(r->union_iv[o]);
        free(r->union_top[o]);
        r->union_iv[o] = NULL;
        r->union_top[o] = NULL;
        r->union_n[o] = 0;
    }
}

/* The first index i in [lo, hi) with k[i * stride] > b (hi when none):
 * the keys at that stride are sorted. */
static size_t first_above(const uint64_t *k, size_t stride, size_t lo, size_t hi,
                          uint64_t b) {
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid * stride] <= b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Does a pair of op's sorted disjoint list meet [a, b]? */
static int meets(const uint64_t *iv, const uint64_t *top, size_t n, uint64_t a,
                 uint64_t b) {
    if (n == 0)
        return 0;
    /* a wide range usually meets the first or the last pair: two lines,
     * not a search */
    if ((a <= iv[1] && b >= iv[0]) || (a <= iv[2 * n - 1] && b >= iv[2 * n - 2]))
        return 1;
    /* the last pair starting at or before b, the only one that can reach
     * a: first its block, by the top array (the last block whose first lo
     * is at or before b), then within the block (its pair `first` starts
     * at or before b) */
    size_t blk = first_above(top, 1, 0, (n + MH_UNION_STEP - 1) / MH_UNION_STEP, b);
    if (blk == 0)
        return 0; /* b below the first pair */
    size_t first = (blk - 1) * MH_UNION_STEP;
    size_t end = first + MH_UNION_STEP < n ? first + MH_UNION_STEP : n;
    size_t last = first_above(iv, 2, first + 1, end, b) - 1;
    return iv[2 * last + 1] >= a;
}

int mh_store_union_excludes(const mh_reader *r, uint64_t a, uint64_t b, uint32_t ops,
                            int build_now) {
    if (r->union_off || r->span_off || r->aset_off || r->nsegs < MH_UNION_MIN_SEGS)
        return 0;
    mh_reader *m = (mh_reader *)r;
    int st = atomic_load_explicit(&m->union_state, memory_order_acquire);
    if (st == 0 && build_now) {
        pthread_mutex_lock(&m->tab_mu);
        st = atomic_load_explicit(&m->union_state, memory_order_relaxed);
        if (st == 0) {
            st = build(m) == MH_OK ? 1 : -1;
            atomic_store_explicit(&m->union_state, st, memory_order_release);
        }
        pthread_mutex_unlock(&m->tab_mu);
    }
    if (st != 1 || a > b)
        return 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        if ((ops >> o & 1u) && meets(r->union_iv[o], r->union_top[o], r->union_n[o], a, b))
            return 0;
    atomic_fetch_add_explicit(&m->union_answered, 1, memory_order_relaxed);
    return 1;
}
