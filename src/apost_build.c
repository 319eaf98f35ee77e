/*
 * apost_build.c - the address postings' writing half (SPEC.md "Address
 * postings", section type 10, format 2.2).
 *
 * Per slice and operation, the granules its rows meet come from the exact
 * merged ranges the slice builder already makes for the address set
 * (aset_iv): one walk over them, no per-row cost. They are kept compact
 * until seal, as varint deltas per slice and op at a base shift (3; a
 * slice meeting more than 2^22 granules (fuzzing builds: 2^15), or a pile past its limit, raises
 * it for the whole segment by recoding in place: a coarser list is never
 * longer). At seal a k-way merge of the slices' lists (a tournament keyed
 * by granule, then slice; for an op whose keys are few and shared by many
 * slices, a grouping by key in a hash table) gives each key's postings in order; the keys are
 * written straight into runs, and a shift whose section passes its budget
 * (count / 2 + 4096 bytes: shift 3 on the real traces, 0.09-0.31 bytes per
 * access) is abandoned for the next one, up to 10.
 *
 * Format 2.6 (section 14): a merged range of 2^wide_log2 bytes or more
 * (the writer's: 64 KiB) is kept apart as a wide range (lo, hi, slice, op)
 * before any of this, so an access of gigabytes costs one record instead
 * of millions of granules; the seal writes their table, sorted, before
 * the section 10 of the rest.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BASE_SHIFT 3u
#define LAST_SHIFT 10u                 /* past it: no section (section 9 serves) */
#define FIXED_GRANULES ((uint64_t)1 << 26) /* fsck's limit per slice */
#define BUDGET(count) ((count) / 2u + 4096u)
/* The pile of granule lists may take count / 2 + PILE_EXTRA bytes: past it
 * the base shift is raised (a real program's slices revisit the same stack
 * and heap words: about 0.3 bytes per access at shift 3 on the real
 * traces). Fuzzing builds, as for the summaries' keys (internal.h,
 * MH_SUM_SLICE_KEYS_MAX), allow far fewer granules per slice and a far
 * smaller pile, so a few huge accesses do not take the instrumented writer
 * seconds of recoding megabytes (libFuzzer's 10 s slow-unit limit): the
 * same rules, smaller. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define SLICE_GRANULES ((uint64_t)1 << 15)
#define PILE_EXTRA ((uint64_t)1 << 15)
#else
#define SLICE_GRANULES ((uint64_t)1 << 22) /* per slice, at the base shift */
#define PILE_EXTRA ((uint64_t)1 << 20)
#endif
#define PILE_LIMIT(count) ((count) / 2u + PILE_EXTRA)

typedef struct slice_lists {
    uint64_t off[MHF_OP_COUNT]; /* into data */
    uint32_t n[MHF_OP_COUNT];   /* granules */
} slice_lists;

/* The wide ranges kept out of the postings (section 14, format 2.6). At
 * most WIDE_LIMIT(count) of them: past it the segment gives up, as for a
 * pile past its limit (each is a record every question of its op may
 * read). */
#define WIDE_LIMIT(count) ((count) / 64u + 4096u)

struct mh_apost_acc {
    uint32_t g0;
    uint32_t last; /* past it: no postings (LAST_SHIFT; a stream body's
                      MHF_SPOST_SHIFT_LAST, mh_apost_acc_set_shifts) */
    int fixed;     /* fsck's: g0 never changes, no pile limit */
    int gave_up;
    uint32_t wide_log2; /* 0: no range is wide (section 10) */
    mh_buf wide;   /* mh_apost_wide, in slice order until sorted */
    mh_buf narrow; /* scratch: a slice's pairs without its wide ones */
    mh_buf data;   /* per slice, per op: first granule, then w - prev - 1 */
    mh_buf slices; /* slice_lists per slice */
    int merge;     /* tests: mh_apost_acc_set_merge's mode (0: the writer's) */
    uint32_t grouped; /* ops merged by grouping so far (tests) */
};

/* Our own varints: never broken, so no bounds. */
static inline uint64_t get_varint(const uint8_t **p) {
    const uint8_t *q = *p;
    uint64_t v = 0;
    for (unsigned s = 0;; s += 7) {
        uint8_t b = *q++;
        v |= (uint64_t)(b & 0x7f) << s;
        if (b < 0x80)
            break;
    }
    *p = q;
    return v;
}

int mh_apost_acc_create(mh_apost_acc **out, uint32_t fixed_shift) {
    *out = calloc(1, sizeof **out);
    if (!*out)
        return MH_ENOMEM;
    (*out)->g0 = fixed_shift ? fixed_shift : BASE_SHIFT;
    (*out)->fixed = fixed_shift != 0;
    (*out)->last = fixed_shift > LAST_SHIFT ? fixed_shift : LAST_SHIFT;
    return MH_OK;
}

void mh_apost_acc_set_shifts(mh_apost_acc *a, uint32_t first, uint32_t last) {
    a->g0 = first;
    a->last = last;
}

int mh_apost_acc_failed(const mh_apost_acc *a) { return a->gave_up; }

void mh_apost_acc_set_merge(mh_apost_acc *a, int mode) { a->merge = mode; }

uint32_t mh_apost_acc_grouped(const mh_apost_acc *a) { return a->grouped; }

void mh_apost_acc_set_wide(mh_apost_acc *a, uint32_t log2) { a->wide_log2 = log2; }

void mh_apost_acc_destroy(mh_apost_acc *a) {
    if (!a)
        return;
    mh_buf_free(&a->data);
    mh_buf_free(&a->slices);
    mh_buf_free(&a->wide);
    mh_buf_free(&a->narrow);
    free(a);
}

static void give_up(mh_apost_acc *a) {
    mh_buf_free(&a->data);
    mh_buf_free(&a->wide);
    a->gave_up = 1; /* slices stays: it counts them for truncate; narrow
                       too (the pairs of the add that gave up may be in it) */
}

#define NWIDE(a) ((a)->wide.n / sizeof(mh_apost_wide))

#define NSL(a) ((uint32_t)((a)->slices.n / sizeof(slice_lists)))

/* Granules and bytes of sorted maximal ranges at shift g (a granule two
 * touching ranges share counted once). */
static void measure(const uint64_t *iv, uint32_t n, unsigned g, uint64_t *gran,
                    uint64_t *bytes) {
    uint64_t cnt = 0, b = 0, last = 0;
    int any = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t lo = iv[2 * i] >> g, hi = iv[2 * i + 1] >> g;
        if (any && lo <= last) {
            if (hi <= last)
                continue;
            lo = last + 1;
        }
        b += mhf_varint_len(any ? lo - last - 1u : lo) + (hi - lo);
        cnt += hi - lo + 1u;
        last = hi;
        any = 1;
    }
    *gran = cnt;
    *bytes = b;
}

/* Recodes every list at shift g > a->g0, in place (a coarser list's
 * varints are never longer). */
static void coarsen(mh_apost_acc *a, unsigned g) {
    unsigned k = g - a->g0;
    slice_lists *sl = (slice_lists *)(void *)a->slices.p;
    const uint8_t *r = a->data.p;
    uint8_t *w = a->data.p;
    for (uint32_t s = 0; s < NSL(a); s++)
        for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
            uint64_t prev = 0, lastc = 0;
            uint32_t m = 0;
            sl[s].off[o] = (uint64_t)(w - a->data.p);
            for (uint32_t i = 0; i < sl[s].n[o]; i++) {
                uint64_t x = get_varint(&r);
                prev = i ? prev + 1u + x : x;
                uint64_t c = prev >> k;
                if (m && c == lastc)
                    continue;
                w = mhf_put_varint(w, m ? c - lastc - 1u : c);
                lastc = c;
                m++;
            }
            sl[s].n[o] = m;
        }
    a->data.n = (size_t)(w - a->data.p);
    a->g0 = g;
}

void mh_apost_acc_add(mh_apost_acc *a, const uint64_t *pairs,
                      const uint32_t n[MHF_OP_COUNT], uint64_t count) {
    slice_lists sl;
    memset(&sl, 0, sizeof sl);
    if (!a->gave_up && !pairs)
        give_up(a); /* the builder lost the ranges */
    if (a->gave_up) {
        (void)mh_buf_append(&a->slices, &sl, sizeof sl); /* counts slices */
        return;
    }
    /* its wide ranges (at least 2^wide_log2 bytes) go to the wide table,
     * the others on */
    if (a->wide_log2) {
        uint64_t minspan = ((uint64_t)1 << a->wide_log2) - 1u, total = 0;
        uint32_t nn[MHF_OP_COUNT];
        int any = 0;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++)
            total += n[o];
        for (uint64_t i = 0; i < total && !any; i++)
            any = pairs[2 * i + 1] - pairs[2 * i] >= minspan;
        if (any) {
            if (mh_buf_reserve(&a->narrow, (size_t)total * 16u) != MH_OK) {
                give_up(a);
                mh_apost_acc_add(a, pairs, n, count);
                return;
            }
            uint64_t *q = (uint64_t *)(void *)a->narrow.p;
            const uint64_t *iv = pairs;
            uint32_t slice = NSL(a);
            for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
                nn[o] = 0;
                for (uint32_t i = 0; i < n[o]; i++, iv += 2) {
                    if (iv[1] - iv[0] < minspan) {
                        *q++ = iv[0];
                        *q++ = iv[1];
                        nn[o]++;
                        continue;
                    }
                    mh_apost_wide r = {iv[0], iv[1], slice, o};
                    if ((NWIDE(a) >= WIDE_LIMIT(count) && !a->fixed) ||
                        mh_buf_append(&a->wide, &r, sizeof r) != MH_OK) {
                        give_up(a); /* too many, or out of memory */
                        mh_apost_acc_add(a, pairs, n, count);
                        return;
                    }
                }
            }
            /* the narrow ones in the scratch, which the call below reads
             * (a->narrow is not touched again before it returns) */
            uint32_t keep = a->wide_log2;
            a->wide_log2 = 0;
            mh_apost_acc_add(a, (const uint64_t *)(const void *)a->narrow.p, nn, count);
            a->wide_log2 = keep;
            return;
        }
    }
    /* the first shift at which the slice meets at most SLICE_GRANULES granules */
    unsigned g = a->g0;
    uint64_t gran[MHF_OP_COUNT], bytes[MHF_OP_COUNT];
    for (;; g++) {
        uint64_t total = 0;
        const uint64_t *iv = pairs;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
            measure(iv, n[o], g, &gran[o], &bytes[o]);
            total += gran[o];
            iv += 2 * (size_t)n[o];
        }
        if (a->fixed || total <= SLICE_GRANULES || g > a->last)
            break;
    }
    if (a->fixed ? gran[0] + gran[1] + gran[2] > FIXED_GRANULES
                 : g > a->last) {
        give_up(a);
        mh_apost_acc_add(a, pairs, n, count);
        return;
    }
    if (g > a->g0)
        coarsen(a, g);
    /* + 1: never an empty buffer's NULL, even for a slice without rows
     * (fsck's, for a slice it could not read) */
    if (mh_buf_reserve(&a->data, (size_t)(bytes[0] + bytes[1] + bytes[2]) + 1) !=
            MH_OK ||
        mh_buf_reserve(&a->slices, sizeof sl) != MH_OK) {
        give_up(a);
        mh_apost_acc_add(a, pairs, n, count);
        return;
    }
    const uint64_t *iv = pairs;
    uint8_t *p = a->data.p + a->data.n;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        sl.off[o] = (uint64_t)(p - a->data.p);
        sl.n[o] = (uint32_t)gran[o];
        uint64_t last = 0;
        int any = 0;
        for (uint32_t i = 0; i < n[o]; i++) {
            uint64_t lo = iv[2 * i] >> g, hi = iv[2 * i + 1] >> g;
            if (any && lo <= last) {
                if (hi <= last)
                    continue;
                lo = last + 1;
            }
            p = mhf_put_varint(p, any ? lo - last - 1u : lo);
            for (uint64_t x = lo; x < hi; x++)
                *p++ = 0;
            last = hi;
            any = 1;
        }
        iv += 2 * (size_t)n[o];
    }
    a->data.n = (size_t)(p - a->data.p);
    mh_buf_append(&a->slices, &sl, sizeof sl); /* reserved above */
    /* a pile past its limit: coarser, or none */
    while (!a->fixed && a->data.n > PILE_LIMIT(count)) {
        if (a->g0 >= a->last) {
            give_up(a);
            return;
        }
        coarsen(a, a->g0 + 1);
    }
}

void mh_apost_acc_truncate(mh_apost_acc *a, uint32_t nslices) {
    if (nslices >= NSL(a))
        return;
    const slice_lists *sl = (const slice_lists *)(const void *)a->slices.p;
    if (!a->gave_up)
        a->data.n = (size_t)sl[nslices].off[0];
    a->slices.n = (size_t)nslices * sizeof(slice_lists);
    /* the wide ranges of the slices kept (in slice order until sorted) */
    mh_apost_wide *wr = (mh_apost_wide *)(void *)a->wide.p;
    size_t nw = 0;
    for (size_t i = 0; i < NWIDE(a); i++)
        if (wr[i].slice < nslices)
            wr[nw++] = wr[i];
    a->wide.n = nw * sizeof *wr;
    /* the lists kept were exact at g0, so they still are; a segment that
     * gave up stays without a section */
}

static int cmp_pair(const void *x, const void *y) {
    const uint64_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : (a[1] > b[1]) - (a[1] < b[1]);
}

int mh_apost_acc_slice_ranges(const mh_apost_acc *a, uint32_t slice, uint32_t shift,
                              size_t *wide_at, mh_buf *out, uint32_t n[MHF_OP_COUNT]) {
    if (a->gave_up || slice >= NSL(a) || a->g0 > shift)
        return MH_EINVAL;
    const slice_lists *sl = (const slice_lists *)(const void *)a->slices.p + slice;
    const mh_apost_wide *wr = (const mh_apost_wide *)(const void *)a->wide.p;
    size_t nw = NWIDE(a), w0 = *wide_at;
    while (w0 < nw && wr[w0].slice < slice) /* in slice order until sorted */
        w0++;
    size_t w1 = w0;
    while (w1 < nw && wr[w1].slice == slice)
        w1++;
    *wide_at = w1;
    size_t total = (w1 - w0) + sl->n[0] + sl->n[1] + sl->n[2];
    out->n = 0;
    MH_TRY(mh_buf_reserve(out, total * 16 + 16));
    uint64_t *p = (uint64_t *)(void *)out->p;
    const unsigned g = a->g0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint64_t *start = p;
        /* its granules, consecutive ones as one range of bytes (a granule
         * list is exact at g0, so at any coarser shift its granules are the
         * rows' own) */
        const uint8_t *r = a->data.p + sl->off[o];
        uint64_t prev = 0;
        for (uint32_t i = 0; i < sl->n[o]; i++) {
            uint64_t w = i ? prev + 1u + get_varint(&r) : get_varint(&r);
            if (i && w == prev + 1u && p > start)
                p[-1] = ((w + 1u) << g) - 1u; /* wraps to 2^64 - 1 at the top */
            else {
                p[0] = w << g;
                p[1] = ((w + 1u) << g) - 1u;
                p += 2;
            }
            prev = w;
        }
        /* and its wide ranges, in lo order with them */
        for (size_t k = w0; k < w1; k++)
            if (wr[k].op == o) {
                p[0] = wr[k].first;
                p[1] = wr[k].last;
                p += 2;
            }
        n[o] = (uint32_t)((size_t)(p - start) / 2);
        if (w1 > w0 && n[o] > 1)
            qsort(start, n[o], 16, cmp_pair);
    }
    out->n = (size_t)((uint8_t *)(void *)p - out->p);
    return MH_OK;
}

int mh_apost_wide_cmp(const void *x, const void *y) {
    const mh_apost_wide *a = x, *b = y;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->slice < b->slice ? -1 : a->slice > b->slice;
}

size_t mh_apost_acc_wide(mh_apost_acc *a, const mh_apost_wide **out) {
    size_t nw = a->gave_up ? 0 : NWIDE(a);
    if (nw > 1)
        qsort(a->wide.p, nw, sizeof(mh_apost_wide), mh_apost_wide_cmp);
    *out = (const mh_apost_wide *)(const void *)a->wide.p;
    return nw;
}

/* Section 14's header and records (sorted) into out; body_bytes patched
 * by the caller once section 10 follows. */
static int wide_head(mh_apost_acc *a, mh_buf *out) {
    const mh_apost_wide *r;
    size_t nw = mh_apost_acc_wide(a, &r);
    size_t size = MHF_APOSTW_HEADER_SIZE + nw * MHF_APOSTW_REC_SIZE;
    MH_TRY(mh_buf_reserve(out, size));
    uint8_t *h = out->p + out->n;
    memset(h, 0, size);
    mhf_store_u32(h + MHF_APOSTW_LOG2, a->wide_log2);
    mhf_store_u32(h + MHF_APOSTW_REC_SIZE_OFF, MHF_APOSTW_REC_SIZE);
    mhf_store_u64(h + MHF_APOSTW_COUNT, nw);
    uint64_t cnt[MHF_OP_COUNT] = {0}, span[MHF_OP_COUNT] = {0};
    for (size_t i = 0; i < nw; i++) {
        uint8_t *x = h + MHF_APOSTW_HEADER_SIZE + i * MHF_APOSTW_REC_SIZE;
        mhf_store_u64(x + MHF_APOSTW_R_FIRST, r[i].first);
        mhf_store_u64(x + MHF_APOSTW_R_LAST, r[i].last);
        mhf_store_u32(x + MHF_APOSTW_R_SLICE, r[i].slice);
        cnt[r[i].op]++;
        if (r[i].last - r[i].first > span[r[i].op])
            span[r[i].op] = r[i].last - r[i].first;
    }
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint8_t *x = h + MHF_APOSTW_OPS + o * MHF_APOSTW_OP_SIZE;
        mhf_store_u64(x + MHF_APOSTW_OP_COUNT, cnt[o]);
        mhf_store_u64(x + MHF_APOSTW_OP_SPAN, span[o]);
    }
    out->n += size;
    return MH_OK;
}

/* ---- the section's key writer (the builder's seal and mh_apost_encode) */

typedef struct kw {
    mh_buf runs, data;
    uint32_t k, nslices, shift;
    uint64_t nkeys[MHF_OP_COUNT], postings;
    uint32_t run_first[MHF_OP_COUNT], run_count[MHF_OP_COUNT];
    unsigned op;         /* the op being written */
    uint32_t in_run;     /* keys of the open run; 0: none open */
    size_t run_start;    /* its first data byte */
    uint64_t prev;       /* the last key's granule */
    uint64_t limit;      /* the section's bytes may not pass it (0: none) */
} kw;

static void kw_close_run(kw *x) {
    if (!x->in_run)
        return;
    uint8_t *r = x->runs.p + x->runs.n - MHF_APOST_RUN_SIZE;
    mhf_store_u32(r + MHF_APOST_R_KEYS, x->in_run);
    mhf_store_u32(r + MHF_APOST_R_BYTES, (uint32_t)(x->data.n - x->run_start));
    x->in_run = 0;
}

static void kw_start(kw *x, uint32_t shift, uint32_t k, uint32_t nslices,
                     uint64_t limit) {
    x->runs.n = x->data.n = 0;
    x->k = k;
    x->nslices = nslices;
    x->shift = shift;
    x->postings = 0;
    memset(x->nkeys, 0, sizeof x->nkeys);
    memset(x->run_first, 0, sizeof x->run_first);
    memset(x->run_count, 0, sizeof x->run_count);
    x->op = 0;
    x->in_run = 0;
    x->limit = limit;
}

static void kw_op(kw *x, unsigned op) {
    while (x->op < op) {
        kw_close_run(x);
        x->op++;
        x->run_first[x->op] = x->run_first[x->op - 1] + x->run_count[x->op - 1];
    }
}

/* One key (op ascending, granule increasing within it) and its n postings
 * (increasing); form 0/1, or -1 for the shorter. 1 when the section has
 * passed its limit, MH_ENOMEM, else MH_OK. */
static int kw_key(kw *x, unsigned op, uint64_t w, const uint32_t *post,
                  uint32_t n, int form) {
    kw_op(x, op);
    if (x->in_run == x->k)
        kw_close_run(x);
    size_t f0 = mhf_varint_len(post[0]);
    for (uint32_t i = 1; i < n; i++)
        f0 += mhf_varint_len(post[i] - post[i - 1] - 1u);
    size_t f1 = ((size_t)x->nslices + 7) / 8;
    if (form < 0)
        form = f1 < f0;
    size_t need = 20 + (form ? f1 : f0);
    if (x->in_run == 0) {
        MH_TRY(mh_buf_reserve(&x->runs, MHF_APOST_RUN_SIZE));
        uint8_t *r = x->runs.p + x->runs.n;
        memset(r, 0, MHF_APOST_RUN_SIZE);
        mhf_store_u64(r + MHF_APOST_R_GRANULE, w);
        mhf_store_u64(r + MHF_APOST_R_OFFSET, x->data.n);
        x->runs.n += MHF_APOST_RUN_SIZE;
        x->run_start = x->data.n;
        x->run_count[op]++;
    }
    MH_TRY(mh_buf_reserve(&x->data, need));
    uint8_t *p = x->data.p + x->data.n;
    if (x->in_run)
        p = mhf_put_varint(p, w - x->prev - 1u);
    p = mhf_put_varint(p, (uint64_t)n * 2u + (unsigned)form);
    if (form == 0) {
        p = mhf_put_varint(p, post[0]);
        for (uint32_t i = 1; i < n; i++)
            p = mhf_put_varint(p, post[i] - post[i - 1] - 1u);
    } else {
        memset(p, 0, f1);
        for (uint32_t i = 0; i < n; i++)
            p[post[i] >> 3] |= (uint8_t)(1u << (post[i] & 7));
        p += f1;
    }
    x->data.n = (size_t)(p - x->data.p);
    x->in_run++;
    x->nkeys[op]++;
    x->postings += n;
    x->prev = w;
    if (x->limit && MHF_APOST_HEADER_SIZE + x->runs.n + x->data.n > x->limit)
        return 1;
    return MH_OK;
}

/* The section into out: header, runs, data. */
static int kw_finish(kw *x, mh_buf *out) {
    kw_op(x, MHF_OP_COUNT - 1);
    kw_close_run(x);
    size_t size = MHF_APOST_HEADER_SIZE + x->runs.n + x->data.n;
    MH_TRY(mh_buf_reserve(out, size));
    uint8_t *h = out->p + out->n;
    memset(h, 0, MHF_APOST_HEADER_SIZE);
    mhf_store_u32(h + MHF_APOST_SHIFT, x->shift);
    mhf_store_u32(h + MHF_APOST_RUN_KEYS, x->k);
    mhf_store_u32(h + MHF_APOST_RUN_SIZE_OFF, MHF_APOST_RUN_SIZE);
    mhf_store_u32(h + MHF_APOST_RUN_COUNT,
                  (uint32_t)(x->runs.n / MHF_APOST_RUN_SIZE));
    mhf_store_u64(h + MHF_APOST_DATA_BYTES, x->data.n);
    mhf_store_u64(h + MHF_APOST_POSTINGS, x->postings);
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint8_t *r = h + MHF_APOST_OPS + o * MHF_APOST_OP_SIZE;
        mhf_store_u64(r + MHF_APOST_OP_KEYS, x->nkeys[o]);
        mhf_store_u32(r + MHF_APOST_OP_RUN_FIRST, x->run_first[o]);
        mhf_store_u32(r + MHF_APOST_OP_RUN_COUNT, x->run_count[o]);
    }
    /* no key (every range of the segment wide, 2.6): no run, no data, and
     * their buffers never allocated */
    if (x->runs.n)
        memcpy(h + MHF_APOST_HEADER_SIZE, x->runs.p, x->runs.n);
    if (x->data.n)
        memcpy(h + MHF_APOST_HEADER_SIZE + x->runs.n, x->data.p, x->data.n);
    out->n += size;
    return MH_OK;
}

static void kw_free(kw *x) {
    mh_buf_free(&x->runs);
    mh_buf_free(&x->data);
}

int mh_apost_encode(uint32_t shift, uint32_t k, uint32_t nslices,
                    const uint64_t *const gran[MHF_OP_COUNT],
                    const uint32_t *const first[MHF_OP_COUNT],
                    const uint32_t *const post[MHF_OP_COUNT],
                    const size_t nkeys[MHF_OP_COUNT],
                    const uint8_t *const form[MHF_OP_COUNT], mh_buf *out) {
    kw x;
    memset(&x, 0, sizeof x);
    kw_start(&x, shift, k ? k : MHF_APOST_K, nslices, 0);
    int rc = MH_OK;
    for (unsigned o = 0; o < MHF_OP_COUNT && rc == MH_OK; o++)
        for (size_t i = 0; i < nkeys[o] && rc == MH_OK; i++)
            rc = kw_key(&x, o, gran[o][i], post[o] + first[o][i],
                        first[o][i + 1] - first[o][i], form ? form[o][i] : -1);
    if (rc == MH_OK)
        rc = kw_finish(&x, out);
    kw_free(&x);
    return rc;
}

/* ---- seal: the k-way merge ------------------------------------------- */

typedef struct cursor {
    const uint8_t *p;
    uint32_t left;
    uint64_t w;   /* current granule at the base shift */
    uint64_t key; /* w >> (shift - base) */
} cursor;

#define DONE UINT64_MAX /* no key: granules are below 2^61 */

/* The merge is a tournament of losers over the slices (Knuth, TAOCP 5.4.1):
 * each internal node keeps the loser of the match below it, so a pop
 * replays the winner's path alone: log2 S comparisons, where a binary heap
 * makes two at each level to choose a child. On the real traces the heap
 * took 30-40 ns a posting (90-120 ms of a 2^24-access segment's seal, 2-3 M
 * postings), the tournament 20 ns (python; 60 ns on gzip, whose slices
 * share most granules: see the grouping below). The comparisons stay
 * branches: written without them (conditional moves) the merge took 1.7x
 * as long on python and 0.75x on gzip. Leaves are slices ordered by (key,
 * slice), their keys in an array of their own so that a match touches no
 * cursor; a slice with no key left holds DONE. */
typedef struct tourney {
    uint32_t P;     /* leaves: a power of two >= S */
    uint64_t *key;  /* [P]: each slice's current key, DONE when exhausted */
    uint32_t *node; /* [P]: node[0] the winner, node[1..P) the losers */
} tourney;

/* Dense ops (few keys, each in many slices: gzip's reads, 30-35 K keys and
 * 90 postings a key in a segment of 512 slices) are grouped instead: one
 * walk over the slices counts each key's postings in an open-addressing
 * table, the distinct keys are sorted, and a second walk places each
 * posting at its key's place, a window of GROUP_WINDOW postings at a time
 * (the slices' cursors go on from window to window), so that memory stays
 * bounded whatever the segment. Two table look-ups a posting, in a table
 * that stays in the cache, where the tournament's replays mispredict.
 * Grouping gives up (the tournament merges the op) past GROUP_CAP keys or
 * under GROUP_DENSITY postings a key, where the tournament is as fast;
 * either way fn sees the same keys with the same postings in the same
 * order. */
#define GROUP_BITS 17u
#define GROUP_SLOTS (1u << GROUP_BITS)
#define GROUP_CAP (GROUP_SLOTS / 2u) /* keys at most: the table half full */
#define GROUP_DENSITY 8u             /* postings a key at least */
#define GROUP_WINDOW (1u << 18)      /* postings placed a window (1 MiB) */
#define GROUP_MIN (GROUP_DENSITY * 256u) /* fewer postings: the tournament */

typedef struct group {
    uint64_t *slot_key; /* [GROUP_SLOTS]: DONE when empty */
    uint32_t *slot_val; /* its postings, then its rank */
    uint64_t *keys;     /* [GROUP_CAP]: the distinct keys, ascending */
    uint32_t *first;    /* [GROUP_CAP + 1]: rank -> its first posting */
    uint32_t *next;     /* [GROUP_CAP]: rank -> where its next one goes */
    uint32_t *post;     /* [win]: one window's postings */
    uint32_t win;       /* max(GROUP_WINDOW, P): a key's postings always fit */
    int failed;         /* no memory for it: the tournament only */
} group;

typedef struct merger {
    cursor *cur;   /* [P] */
    tourney t;
    uint32_t *post; /* [P]: one key's postings */
    group gr;       /* allocated at the first dense op */
    int mode;       /* the accumulator's merge (tests) */
    uint32_t grouped; /* ops grouped */
} merger;

static inline int beats(const uint64_t *key, uint32_t x, uint32_t y) {
    uint64_t kx = key[x], ky = key[y];
    return kx < ky || (kx == ky && x < y); /* ties: the lower slice */
}

/* Plays every match from the leaves up; win is P scratch entries. */
static void tourney_build(tourney *t, uint32_t *win) {
    uint32_t P = t->P;
    for (uint32_t i = P - 1; i >= 1; i--) {
        uint32_t l = 2 * i < P ? win[2 * i] : 2 * i - P;
        uint32_t r = 2 * i + 1 < P ? win[2 * i + 1] : 2 * i + 1 - P;
        int lw = beats(t->key, l, r);
        win[i] = lw ? l : r;
        t->node[i] = lw ? r : l;
    }
    t->node[0] = P > 1 ? win[1] : 0;
}

/* The winner's key changed: replays its path to the root. */
static inline void tourney_replay(tourney *t) {
    uint32_t w = t->node[0];
    for (uint32_t i = (w + t->P) >> 1; i >= 1; i >>= 1) {
        uint32_t l = t->node[i];
        if (beats(t->key, l, w)) {
            t->node[i] = w;
            w = l;
        }
    }
    t->node[0] = w;
}

/* Moves cursor c past every granule of its current key; its next key,
 * or DONE. */
static uint64_t advance(cursor *c, unsigned k) {
    while (c->left) {
        c->w += 1u + get_varint(&c->p);
        c->left--;
        if ((c->w >> k) != c->key) {
            c->key = c->w >> k;
            return c->key;
        }
    }
    return DONE;
}

/* Puts slice s's list of op o in cursor c; its first key, or DONE. */
static uint64_t cursor_start(const mh_apost_acc *a, cursor *c, uint32_t s,
                             unsigned o, unsigned k) {
    const slice_lists *sl = (const slice_lists *)(const void *)a->slices.p;
    if (sl[s].n[o] == 0)
        return c->key = DONE;
    c->p = a->data.p + sl[s].off[o];
    c->w = get_varint(&c->p);
    c->left = sl[s].n[o] - 1u;
    return c->key = c->w >> k;
}

/* Op o's keys by the tournament. */
static int merge_tourney(const mh_apost_acc *a, unsigned o, unsigned k,
                         mh_apost_key_fn fn, void *ctx, merger *m) {
    tourney *t = &m->t;
    uint32_t S = NSL(a);
    for (uint32_t s = 0; s < t->P; s++)
        t->key[s] = s < S ? cursor_start(a, &m->cur[s], s, o, k) : DONE;
    tourney_build(t, m->post); /* post: P entries, free until the first key */
    for (;;) {
        uint32_t s = t->node[0];
        uint64_t key = t->key[s];
        if (key == DONE)
            return MH_OK;
        uint32_t n = 0;
        /* the tournament yields this key's slices in increasing order */
        do {
            m->post[n++] = s;
            t->key[s] = advance(&m->cur[s], k);
            tourney_replay(t);
            s = t->node[0];
        } while (t->key[s] == key);
        int rc = fn(ctx, o, key, m->post, n);
        if (rc != MH_OK)
            return rc;
    }
}

static inline uint32_t group_hash(uint64_t key) {
    return (uint32_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> (64u - GROUP_BITS));
}

/* key's slot (DONE's: the empty one where it would go) */
static inline uint32_t group_slot(const group *g, uint64_t key) {
    uint32_t h = group_hash(key);
    while (g->slot_key[h] != key && g->slot_key[h] != DONE)
        h = (h + 1u) & (GROUP_SLOTS - 1u);
    return h;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static void group_free(group *g) {
    free(g->slot_key);
    free(g->slot_val);
    free(g->keys);
    free(g->first);
    free(g->next);
    free(g->post);
}

/* 1: the grouping's memory is there (allocated at the first call), 0: no
 * memory for it (then never again: the tournament merges). */
static int group_ready(group *g, uint32_t P, int mode) {
    if (g->slot_key)
        return 1;
    if (g->failed)
        return 0;
    g->win = P > GROUP_WINDOW || mode == 2 ? P : GROUP_WINDOW;
    g->slot_key = malloc((size_t)GROUP_SLOTS * sizeof *g->slot_key);
    g->slot_val = malloc((size_t)GROUP_SLOTS * sizeof *g->slot_val);
    g->keys = malloc((size_t)GROUP_CAP * sizeof *g->keys);
    g->first = malloc(((size_t)GROUP_CAP + 1u) * sizeof *g->first);
    g->next = malloc((size_t)GROUP_CAP * sizeof *g->next);
    g->post = malloc((size_t)g->win * sizeof *g->post);
    if (g->slot_key && g->slot_val && g->keys && g->first && g->next && g->post)
        return 1;
    group_free(g);
    memset(g, 0, sizeof *g);
    g->failed = 1;
    return 0;
}

/* Op o's keys by grouping: MH_OK or fn's return once done; 2 (nothing
 * handed to fn) when the op is not dense enough for it. */
static int merge_group(const mh_apost_acc *a, unsigned o, unsigned k,
                       mh_apost_key_fn fn, void *ctx, merger *m) {
    group *g = &m->gr;
    uint32_t S = NSL(a);
    memset(g->slot_key, 0xff, (size_t)GROUP_SLOTS * sizeof *g->slot_key);
    /* walk 1: each key's postings */
    uint32_t d = 0;
    uint64_t total = 0;
    for (uint32_t s = 0; s < S; s++) {
        cursor c;
        for (uint64_t key = cursor_start(a, &c, s, o, k); key != DONE;
             key = advance(&c, k)) {
            uint32_t h = group_slot(g, key);
            if (g->slot_key[h] == DONE) {
                if (d == GROUP_CAP)
                    return 2;
                g->slot_key[h] = key;
                g->slot_val[h] = 0;
                g->keys[d++] = key;
            }
            g->slot_val[h]++;
            total++;
        }
    }
    if (total < (uint64_t)GROUP_DENSITY * d || total >= UINT32_MAX)
        return 2;
    /* the keys in order, each slot's value its rank */
    qsort(g->keys, d, sizeof *g->keys, cmp_u64);
    g->first[0] = 0;
    for (uint32_t r = 0; r < d; r++) {
        uint32_t h = group_slot(g, g->keys[r]);
        g->first[r + 1] = g->first[r] + g->slot_val[h];
        g->slot_val[h] = r;
    }
    /* walk 2, a window of ranks [r0, r1) at a time */
    for (uint32_t s = 0; s < S; s++)
        cursor_start(a, &m->cur[s], s, o, k);
    for (uint32_t r0 = 0, r1; r0 < d; r0 = r1) {
        uint32_t base = g->first[r0];
        r1 = r0 + 1; /* one key's postings (at most S) always fit */
        while (r1 < d && g->first[r1 + 1] - base <= g->win)
            r1++;
        uint64_t last = g->keys[r1 - 1];
        for (uint32_t r = r0; r < r1; r++)
            g->next[r] = g->first[r] - base;
        for (uint32_t s = 0; s < S; s++) {
            cursor *c = &m->cur[s];
            for (uint64_t key = c->key; key <= last && key != DONE;
                 key = c->key = advance(c, k))
                g->post[g->next[g->slot_val[group_slot(g, key)]]++] = s;
        }
        for (uint32_t r = r0; r < r1; r++) {
            int rc = fn(ctx, o, g->keys[r], g->post + (g->first[r] - base),
                        g->first[r + 1] - g->first[r]);
            if (rc != MH_OK)
                return rc;
        }
    }
    return MH_OK;
}

/* Hands every key at shift g to fn in order; stops at fn's first
 * non-zero return and returns it. */
static int merge_pass(const mh_apost_acc *a, unsigned g, mh_apost_key_fn fn,
                      void *ctx, merger *m) {
    const slice_lists *sl = (const slice_lists *)(const void *)a->slices.p;
    uint32_t S = NSL(a);
    unsigned k = g - a->g0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        uint64_t gran = 0;
        for (uint32_t s = 0; s < S; s++)
            gran += sl[s].n[o];
        int rc = 2;
        if (m->mode >= 0 && (gran >= GROUP_MIN || m->mode > 0) &&
            group_ready(&m->gr, m->t.P, m->mode)) {
            rc = merge_group(a, o, k, fn, ctx, m);
            m->grouped += rc != 2;
        }
        if (rc == 2)
            rc = merge_tourney(a, o, k, fn, ctx, m);
        if (rc != MH_OK)
            return rc;
    }
    return MH_OK;
}

/* The merge's memory for S slices; MH_ENOMEM (also when the leaves, a
 * power of two, would not fit 32 bits). */
static int merge_alloc(const mh_apost_acc *a, merger *m) {
    uint32_t S = NSL(a);
    memset(m, 0, sizeof *m);
    m->mode = a->merge;
    if (S > (UINT32_C(1) << 31))
        return MH_ENOMEM;
    uint32_t P = 1;
    while (P < S)
        P *= 2;
    m->t.P = P;
    m->cur = malloc((size_t)P * sizeof *m->cur);
    m->t.key = malloc((size_t)P * sizeof *m->t.key);
    m->t.node = malloc((size_t)P * sizeof *m->t.node);
    m->post = malloc((size_t)P * sizeof *m->post);
    return m->cur && m->t.key && m->t.node && m->post ? MH_OK : MH_ENOMEM;
}

static void merge_free(merger *m) {
    free(m->cur);
    free(m->t.key);
    free(m->t.node);
    free(m->post);
    group_free(&m->gr);
}

static int kw_key_fn(void *ctx, unsigned op, uint64_t w, const uint32_t *post,
                     uint32_t n) {
    return kw_key(ctx, op, w, post, n, -1);
}

int mh_apost_acc_walk(const mh_apost_acc *a, mh_apost_key_fn fn, void *ctx) {
    if (a->gave_up)
        return MH_ENOMEM;
    merger m;
    int rc = merge_alloc(a, &m);
    if (rc == MH_OK)
        rc = merge_pass(a, a->g0, fn, ctx, &m);
    merge_free(&m);
    return rc;
}

int mh_apost_acc_serialize(mh_apost_acc *a, uint64_t count, uint64_t budget,
                           mh_buf *out) {
    uint32_t S = NSL(a);
    if (a->gave_up || S == 0)
        return MH_OK;
    if (!budget)
        budget = BUDGET(count);
    /* with wide ranges: section 14, their table then section 10 */
    size_t head_at = out->n;
    int wide = NWIDE(a) > 0;
    if (wide)
        MH_TRY(wide_head(a, out));
    size_t body_at = out->n;
    merger m;
    kw x;
    memset(&x, 0, sizeof x);
    int rc = merge_alloc(a, &m);
    for (unsigned g = a->g0; rc == MH_OK && g <= a->last; g++) {
        kw_start(&x, g, MHF_APOST_K, S, budget);
        rc = merge_pass(a, g, kw_key_fn, &x, &m);
        if (rc == MH_OK) {
            rc = kw_finish(&x, out);
            break;
        }
        if (rc == 1)
            rc = MH_OK; /* over budget: one bit coarser */
    }
    a->grouped += m.grouped;
    merge_free(&m);
    kw_free(&x);
    if (wide && rc == MH_OK && out->n > body_at)
        mhf_store_u64(out->p + head_at + MHF_APOSTW_BODY_BYTES, out->n - body_at);
    else if (wide)
        out->n = head_at; /* no section 10 (past shift 10): none */
    return rc;
}
