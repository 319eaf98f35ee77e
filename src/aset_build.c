/*
 * aset_build.c - the address set's writing half (SPEC.md "Address set",
 * section type 8, format 2.1): per operation, the exact union of the
 * segment's rows' address ranges as sorted maximal intervals, encoded in
 * runs of K intervals.
 *
 * The slice builder already merges each slice's row ranges per operation
 * for its chunks (form_chunks); the hook here copies those ranges, so the
 * per-row cost is nothing and the per-slice cost is one copy of its merged
 * ranges. The segment writer piles the slices' ranges up in an
 * accumulator that sorts and merges them whenever the pile doubles: a
 * segment whose slices revisit the same stack and heap (a real program)
 * keeps a few times one slice's ranges. A scattered segment (random
 * addresses over a wide space) would make a set of about one interval per
 * access, a few bytes each: past its budget (count / 16 + 4 KiB) the
 * accumulator gives up and the segment gets no set (an optional section:
 * its queries go on to the address summary as before).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A set of n accesses may take n / 16 bytes (+ 4 KiB for small ones). */
#define ASET_BUDGET(count) ((count) / 16u + 4096u)
/* While a segment fills, its set may hold up to count / 16 + 64 Ki merged
 * intervals: an interval takes at least 2 bytes, so past count / 16 the
 * set can no longer fit its budget (count / 16 bytes) unless the segment's
 * later slices add nothing; the 64 Ki leave room for a segment's first
 * slices, often denser than its whole. The exact budget is judged at seal;
 * this stops a scattered segment early (its merges cost instructions for a
 * section it would not get). */
#define PILE_LIMIT(count) ((count) / 16u + 65536u)
/* Merging starts once this many pairs are pending. */
#define FIRST_MERGE 4096u
/* Pairs remembered per op to drop repeats before they are sorted. */
#define SEEN_SLOTS 4096u

struct mh_aset_acc {
    mh_buf iv[MHF_OP_COUNT]; /* u64 pairs; [0, merged) sorted maximal */
    size_t merged[MHF_OP_COUNT];
    int gave_up;
    /* pairs added since the last reset, direct-mapped: a pair seen again
     * (the same stack slot or heap object in the next slice) is already
     * inside the union, so it is dropped without being sorted. A slot
     * holds lo ^ 1 and hi, so that a zeroed one reads as lo 1, hi 0, never
     * a pair: the table comes from calloc, untouched until used (filled
     * at each making, 192 KiB, it was a fifth of the time of a fuzz input
     * making 750 segments, whose seals and checks make an accumulator
     * each); a reset (after a discard, rare) zeroes it */
    uint64_t (*seen)[SEEN_SLOTS][2];
    /* sort scratch: keys, payload and their temporaries */
    uint64_t *key, *tmpk;
    uint32_t *val, *tmpv;
    uint64_t *out;
    size_t cap;
    mh_sort_scratch sort;
};

static void seen_clear(mh_aset_acc *a) {
    memset(a->seen, 0, MHF_OP_COUNT * sizeof *a->seen);
}

int mh_aset_acc_create(mh_aset_acc **out) {
    mh_aset_acc *a = calloc(1, sizeof *a);
    if (a)
        a->seen = calloc(MHF_OP_COUNT, sizeof *a->seen);
    if (!a || !a->seen) {
        free(a);
        *out = NULL;
        return MH_ENOMEM;
    }
    *out = a;
    return MH_OK;
}

static void free_scratch(mh_aset_acc *a) {
    free(a->key);
    free(a->tmpk);
    free(a->val);
    free(a->tmpv);
    free(a->out);
    a->key = a->tmpk = a->out = NULL;
    a->val = a->tmpv = NULL;
    a->cap = 0;
}

void mh_aset_acc_destroy(mh_aset_acc *a) {
    if (!a)
        return;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        mh_buf_free(&a->iv[o]);
    free_scratch(a);
    free(a->seen);
    free(a);
}

void mh_aset_acc_reset(mh_aset_acc *a) {
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        a->iv[o].n = 0;
        a->merged[o] = 0;
    }
    a->gave_up = 0;
    seen_clear(a);
}

static void give_up(mh_aset_acc *a) {
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        mh_buf_free(&a->iv[o]);
        a->merged[o] = 0;
    }
    free_scratch(a);
    a->gave_up = 1;
}

static int scratch_reserve(mh_aset_acc *a, size_t n) {
    if (n <= a->cap)
        return MH_OK;
    size_t cap = a->cap ? a->cap : 1024;
    while (cap < n)
        cap *= 2;
    free_scratch(a);
    a->key = malloc(cap * 8);
    a->tmpk = malloc(cap * 8);
    a->val = malloc(cap * 4);
    a->tmpv = malloc(cap * 4);
    a->out = malloc(cap * 16);
    if (!a->key || !a->tmpk || !a->val || !a->tmpv || !a->out) {
        free_scratch(a);
        return MH_ENOMEM;
    }
    a->cap = cap;
    return MH_OK;
}

/* Appends [lo, hi] to the maximal intervals out[0 .. *m) (lo at or above
 * the last one's lo), merging an overlapping or touching one. */
static inline void push(uint64_t *out, size_t *m, uint64_t lo, uint64_t hi) {
    /* touching (lo == hi_prev + 1) merges too; hi_prev = 2^64 - 1
     * swallows everything after it */
    if (*m && (out[2 * *m - 1] == UINT64_MAX || lo <= out[2 * *m - 1] + 1u)) {
        if (hi > out[2 * *m - 1])
            out[2 * *m - 1] = hi;
    } else {
        out[2 * *m] = lo;
        out[2 * *m + 1] = hi;
        (*m)++;
    }
}

/* Merges op's pending pairs into its sorted maximal ones: the pending ones
 * alone are sorted by lo (the merged prefix already is), then both lists
 * are walked once. */
static int merge_op(mh_aset_acc *a, unsigned op) {
    mh_buf *b = &a->iv[op];
    size_t n = b->n / 16, m0 = a->merged[op], np = n - m0;
    if (np == 0)
        return MH_OK;
    MH_TRY(scratch_reserve(a, n));
    uint64_t *iv = (uint64_t *)(void *)b->p;
    const uint64_t *pend = iv + 2 * m0;
    /* the pending pairs' order by lo (np < 2^32: a segment's ranges); ties
     * may come in any order, the union is the same */
    if (mh_radix_order(&a->sort, pend, 2, np, a->key, a->tmpk)) {
        for (size_t i = 0; i < np; i++)
            a->val[i] = (uint32_t)a->key[i];
    } else {
        for (size_t i = 0; i < np; i++) {
            a->key[i] = pend[2 * i];
            a->val[i] = (uint32_t)i;
        }
        mh_radix_sort(&a->sort, a->key, a->val, a->tmpk, a->tmpv, np);
    }
    size_t m = 0, i = 0, k = 0;
    while (i < m0 || k < np) {
        if (k == np || (i < m0 && iv[2 * i] <= pend[2 * a->val[k]])) {
            push(a->out, &m, iv[2 * i], iv[2 * i + 1]);
            i++;
        } else {
            push(a->out, &m, pend[2 * a->val[k]], pend[2 * a->val[k] + 1]);
            k++;
        }
    }
    memcpy(iv, a->out, m * 16);
    b->n = m * 16;
    a->merged[op] = m;
    return MH_OK;
}

int mh_aset_acc_add(mh_aset_acc *a, unsigned op, const uint64_t *pairs,
                    size_t n, uint64_t count) {
    if (a->gave_up || n == 0)
        return MH_OK;
    mh_buf *b = &a->iv[op];
    MH_TRY(mh_buf_reserve(b, n * 16));
    uint64_t *dst = (uint64_t *)(void *)(b->p + b->n);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = pairs[2 * i], hi = pairs[2 * i + 1];
        uint64_t h = (lo * 0x9E3779B97F4A7C15u) ^ (hi * 0xC2B2AE3D27D4EB4Fu);
        uint64_t *slot = a->seen[op][h >> 52]; /* 12 bits: SEEN_SLOTS */
        if (slot[0] == (lo ^ 1u) && slot[1] == hi)
            continue;
        slot[0] = lo ^ 1u;
        slot[1] = hi;
        dst[2 * kept] = lo;
        dst[2 * kept + 1] = hi;
        kept++;
    }
    b->n += kept * 16;
    size_t have = b->n / 16;
    if (have < FIRST_MERGE || have < 2 * a->merged[op])
        return MH_OK;
    /* the pending pairs now outnumber the merged ones: merge (amortized
     * O(log) sorts per pair), then judge the set against its budget */
    MH_TRY(merge_op(a, op));
    size_t total = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        total += a->merged[o];
    if (total > PILE_LIMIT(count))
        give_up(a);
    return MH_OK;
}

int mh_aset_acc_finish(mh_aset_acc *a, const uint64_t *pairs[MHF_OP_COUNT],
                       size_t n[MHF_OP_COUNT]) {
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        pairs[o] = NULL;
        n[o] = 0;
    }
    if (a->gave_up)
        return 1;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        if (merge_op(a, o) != MH_OK)
            return MH_ENOMEM;
        pairs[o] = (const uint64_t *)(const void *)a->iv[o].p;
        n[o] = a->merged[o];
    }
    return 0;
}

/* Bytes of the intervals [i0, i1) of a sorted maximal list as one run. */
static size_t run_bytes(const uint64_t *iv, size_t i0, size_t i1) {
    size_t bytes = mhf_varint_len(iv[2 * i0 + 1] - iv[2 * i0]);
    for (size_t i = i0 + 1; i < i1; i++)
        bytes += mhf_varint_len(iv[2 * i] - iv[2 * i - 1] - 2u) +
                 mhf_varint_len(iv[2 * i + 1] - iv[2 * i]);
    return bytes;
}

int mh_aset_encode(const uint64_t *const pairs[MHF_OP_COUNT],
                   const size_t n[MHF_OP_COUNT], uint32_t k, mh_buf *out) {
    uint64_t nruns = 0, data = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        nruns += (n[o] + k - 1) / k;
        for (size_t i = 0; i < n[o]; i += k)
            data += run_bytes(pairs[o], i, i + k < n[o] ? i + k : n[o]);
    }
    if (nruns > UINT32_MAX)
        return MH_EINVAL;
    size_t size = MHF_ASET_HEADER_SIZE + (size_t)nruns * MHF_ASET_RUN_SIZE +
                  (size_t)data;
    MH_TRY(mh_buf_reserve(out, size));
    uint8_t *h = out->p + out->n;
    memset(h, 0, MHF_ASET_HEADER_SIZE + (size_t)nruns * MHF_ASET_RUN_SIZE);
    mhf_store_u32(h + MHF_ASET_RUN_IVALS, k);
    mhf_store_u32(h + MHF_ASET_RUN_SIZE_OFF, MHF_ASET_RUN_SIZE);
    mhf_store_u32(h + MHF_ASET_RUN_COUNT, (uint32_t)nruns);
    mhf_store_u64(h + MHF_ASET_DATA_BYTES, data);
    uint8_t *run = h + MHF_ASET_HEADER_SIZE;
    uint8_t *d0 = run + (size_t)nruns * MHF_ASET_RUN_SIZE, *d = d0;
    uint32_t first = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        const uint64_t *iv = pairs[o];
        uint32_t cnt = (uint32_t)((n[o] + k - 1) / k);
        uint8_t *op = h + MHF_ASET_OPS + o * MHF_ASET_OP_SIZE;
        mhf_store_u64(op + MHF_ASET_OP_IVALS, n[o]);
        mhf_store_u32(op + MHF_ASET_OP_RUN_FIRST, first);
        mhf_store_u32(op + MHF_ASET_OP_RUN_COUNT, cnt);
        first += cnt;
        for (size_t i0 = 0; i0 < n[o]; i0 += k) {
            size_t i1 = i0 + k < n[o] ? i0 + k : n[o];
            uint8_t *start = d;
            d = mhf_put_varint(d, iv[2 * i0 + 1] - iv[2 * i0]);
            for (size_t i = i0 + 1; i < i1; i++) {
                d = mhf_put_varint(d, iv[2 * i] - iv[2 * i - 1] - 2u);
                d = mhf_put_varint(d, iv[2 * i + 1] - iv[2 * i]);
            }
            mhf_store_u64(run + MHF_ASET_R_LO, iv[2 * i0]);
            mhf_store_u64(run + MHF_ASET_R_OFFSET, (uint64_t)(start - d0));
            mhf_store_u32(run + MHF_ASET_R_IVALS, (uint32_t)(i1 - i0));
            mhf_store_u32(run + MHF_ASET_R_BYTES, (uint32_t)(d - start));
            run += MHF_ASET_RUN_SIZE;
        }
    }
    out->n += size;
    return MH_OK;
}

int mh_aset_acc_serialize(mh_aset_acc *a, uint64_t count, mh_buf *out) {
    const uint64_t *pairs[MHF_OP_COUNT];
    size_t n[MHF_OP_COUNT];
    if (mh_aset_acc_finish(a, pairs, n) != 0)
        return MH_OK; /* gave up, or out of memory: no set, never a wrong one */
    size_t start = out->n;
    int rc = mh_aset_encode(pairs, n, MHF_ASET_K, out);
    if (rc == MH_EINVAL || (rc == MH_OK && out->n - start > ASET_BUDGET(count))) {
        out->n = start; /* over its budget: no set */
        return MH_OK;
    }
    return rc;
}

void mh_aset_slice_ranges(mh_builder *b, unsigned op, const uint64_t *lo,
                          const uint64_t *hi, uint32_t n) {
    if (b->aset_lost)
        return;
    if (mh_buf_reserve(&b->aset_iv, (size_t)n * 16) != MH_OK) {
        b->aset_lost = 1; /* the segment gets no set (mh_segw_append) */
        return;
    }
    uint64_t *p = (uint64_t *)(void *)(b->aset_iv.p + b->aset_iv.n);
    for (uint32_t i = 0; i < n; i++) {
        p[2 * i] = lo[i];
        p[2 * i + 1] = hi[i];
    }
    b->aset_iv.n += (size_t)n * 16;
    b->aset_n[op] += n;
}

int mh_aset_acc_add_view(mh_aset_acc *acc, const mh_aset_view *v, uint64_t count,
                         mh_diag *d) {
    enum { BATCH = 1024 };
    uint64_t buf[2 * BATCH];
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        size_t n = 0;
        for (uint32_t r = 0; r < v->run_count[o]; r++) {
            mh_aset_cur c;
            mh_aset_run_open(v, o, r, &c);
            int rc = mh_aset_run_bytes(v, c.run, d); /* a lazy view's */
            if (rc < 0)
                return rc;
            while ((rc = mh_aset_run_step(&c, d)) == 1) {
                buf[2 * n] = c.lo;
                buf[2 * n + 1] = c.hi;
                if (++n == BATCH) {
                    MH_TRY(mh_aset_acc_add(acc, o, buf, n, count));
                    n = 0;
                }
            }
            if (rc < 0)
                return rc;
        }
        MH_TRY(mh_aset_acc_add(acc, o, buf, n, count));
    }
    return MH_OK;
}
