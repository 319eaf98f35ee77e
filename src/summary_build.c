/*
 * summary_build.c - the address summaries' writing half (SPEC.md "Address
 * summary", section types 6 and 9): the keys (granule << 2 | op) each slice
 * meets at the fine shift (10: 1 KiB granules), computed on the ingest path
 * by the slice builder, and at seal the bytes of both sections: section 9
 * from those keys (coarsened 2 bits at a time within its budget), section 6
 * from the same keys coarsened to shift 16 and beyond (4 bits at a time
 * within its own, smaller budget), exactly as a 2.0 writer makes it, so
 * 2.0 readers and fsck keep using it.
 *
 * Per slice, the keys come from the builder's exact merged ranges of each
 * operation's rows (sorted by address for the chunks anyway): the work is
 * per range, not per row, and needs no set. At seal, the (key, slice)
 * pairs of all slices are sorted by key, stably, so each key's postings
 * come out as increasing slice indexes.
 *
 * mh_sumset collects the same keys from rows in any order (an
 * open-addressing set whose rows of a run in one granule cost a compare):
 * fsck and the tests, which have decoded rows rather than ranges.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define EMPTY UINT64_MAX /* never a key: keys are < 2^56 */
#define WIDE_G ((UINT64_C(1) << 62) - 1) /* a wide range's first granule */
/* Section 6 may take count / 32 bytes (+ 4 KiB for small segments);
 * beyond, its granules grow 4 bits at a time (as 2.0 writes it). Section 9
 * may take count / 16 + 4 KiB and grows 2 bits at a time: measured on the
 * real python store (31 M accesses), shift 10 there costs 0.05 byte per
 * access and halves a point query's time against section 6's shift 16. */
#define SUMMARY_BUDGET(count) ((count) / 32u + 4096u)
#define COARSEN_STEP 4u
#define FINE_BUDGET(count) ((count) / 16u + 4096u)
#define FINE_COARSEN_STEP 2u
/* Section 6's granules from the fine keys: 6 bits coarser. */
#define COARSE_EXTRA (MHF_SUM_GRANULE_SHIFT - MHF_SUM_FINE_SHIFT)
#define MIN_SLOTS 64u
#define FIRST_SLOTS 4096u

/* Appends the keys a .. z (one op's, a <= z) to k[u..) as items: a range
 * when they are more than two. Returns the new end. */
static inline size_t put_item(uint64_t *k, size_t u, uint64_t a, uint64_t z) {
    if (z - a > 4) {
        k[u++] = MH_SUM_RANGE | a;
        k[u++] = z;
        return u;
    }
    k[u++] = a;
    if (z != a)
        k[u++] = z;
    return u;
}

static inline uint32_t slot_of(const mh_sumset *s, uint64_t key) {
    return (uint32_t)((key * 0x9E3779B97F4A7C15u) >> s->shift_bits);
}

static int table_alloc(mh_sumset *s, uint32_t slots) {
    mh_buf *b = s->buf;
    b->n = 0;
    MH_TRY(mh_buf_reserve(b, (size_t)slots * 8));
    s->tab = (uint64_t *)(void *)b->p;
    memset(s->tab, 0xff, (size_t)slots * 8);
    s->mask = slots - 1;
    s->shift_bits = 64u - (uint32_t)__builtin_ctz(slots);
    return MH_OK;
}

int mh_sumset_begin(mh_sumset *s, mh_buf *buf, mh_buf *wide, uint32_t hint,
                    unsigned gshift) {
    s->buf = buf;
    s->gshift = gshift;
    s->wide = wide;
    wide->n = 0;
    s->n = 0;
    s->overflow = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        s->last[o] = EMPTY;
    /* a slice of n rows rarely meets more than n / 8 granules: start there
     * and double when half full */
    uint32_t slots = MIN_SLOTS;
    while (slots < FIRST_SLOTS && slots < hint)
        slots *= 2;
    return table_alloc(s, slots);
}

/* Adds a key the table may not hold yet. Exact to the writer's rule: the
 * slice overflows when it meets more than MH_SUM_SLICE_KEYS_MAX distinct
 * keys, not when a key it already holds comes again. */
static int insert(mh_sumset *s, uint64_t key);

/* Doubles the table: the keys move through a copy of the old one. */
static int grow(mh_sumset *s) {
    uint32_t old = s->mask + 1;
    uint64_t *copy = malloc((size_t)old * 8);
    if (!copy)
        return MH_ENOMEM;
    memcpy(copy, s->tab, (size_t)old * 8);
    int rc = table_alloc(s, old * 2);
    if (rc == MH_OK) {
        s->n = 0;
        for (uint32_t i = 0; i < old && rc == MH_OK; i++)
            if (copy[i] != EMPTY)
                rc = insert(s, copy[i]);
    }
    free(copy);
    return rc;
}

static int insert(mh_sumset *s, uint64_t key) {
    uint32_t i = slot_of(s, key);
    for (;;) {
        uint64_t k = s->tab[i];
        if (k == key)
            return MH_OK;
        if (k == EMPTY)
            break;
        i = (i + 1) & s->mask;
    }
    if (s->n >= MH_SUM_SLICE_KEYS_MAX) {
        s->overflow = 1;
        return MH_OK;
    }
    if (s->n + 1 > (s->mask + 1) / 2) { /* at most half full */
        MH_TRY(grow(s));
        return insert(s, key);
    }
    s->tab[i] = key;
    s->n++;
    return MH_OK;
}

/* A row over more than one granule is not enumerated here: its granule
 * range goes to s->wide as (op << 62 | first granule, last granule), one
 * range grown in place while rows continue it, and mh_sumset_end merges
 * the ranges per operation before it lists their keys, as the writer does
 * (mh_summary_ranges). So a slice of a few huge accesses costs its
 * distinct keys, not its rows times their granules. */
int mh_sumset_add_slow(mh_sumset *s, uint64_t key, uint64_t g_last,
                       unsigned op) {
    s->last[op] = key;
    if (s->overflow)
        return MH_OK;
    uint64_t g = key >> 2;
    if (g == g_last)
        return insert(s, key);
    uint64_t a = (uint64_t)op << 62 | g; /* granules < 2^54 */
    if (s->wide->n) {
        uint64_t *r = (uint64_t *)(void *)(s->wide->p + s->wide->n - 16);
        if (r[0] >> 62 == op && g >= (r[0] & WIDE_G) && g <= r[1] + 1) {
            if (g_last > r[1])
                r[1] = g_last;
            return MH_OK;
        }
    }
    uint64_t pair[2] = {a, g_last};
    return mh_buf_append(s->wide, pair, sizeof pair);
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Sorts the wide ranges by (op, first granule) and merges those that
 * overlap or touch; returns how many remain (each op's run in order). */
static size_t merge_wide(mh_buf *w) {
    size_t n = w->n / 16;
    uint64_t *r = (uint64_t *)(void *)w->p;
    qsort(r, n, 16, cmp_u64); /* by the pair's first u64 */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t *p = r + 2 * i, *q = m ? r + 2 * (m - 1) : NULL;
        if (q && q[0] >> 62 == p[0] >> 62 && (p[0] & WIDE_G) <= q[1] + 1) {
            if (p[1] > q[1])
                q[1] = p[1];
            continue;
        }
        r[2 * m] = p[0];
        r[2 * m + 1] = p[1];
        m++;
    }
    w->n = m * 16;
    return m;
}

/* Whether the ranges r[lo, hi) (one op's, sorted, disjoint) hold g. */
static int wide_has(const uint64_t *r, size_t lo, size_t hi, uint64_t g) {
    size_t end = hi;
    while (lo < hi) { /* the first range ending at or after g */
        size_t mid = lo + (hi - lo) / 2;
        if (r[2 * mid + 1] < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < end && (r[2 * lo] & WIDE_G) <= g;
}

/* The set's sorted single-granule keys (buf) and its wide ranges become
 * items in buf (MH_SUM_RANGE; op by op, each op's increasing, no key
 * twice), or MH_SUM_OVERFLOW when they stand for more than
 * MH_SUM_SLICE_KEYS_MAX keys: a slice of a few huge accesses costs its
 * ranges, not their granules. */
static int add_wide(mh_sumset *s) {
    mh_buf *b = s->buf;
    size_t m = merge_wide(s->wide);
    const uint64_t *r = (const uint64_t *)(const void *)s->wide->p;
    size_t first[MHF_OP_COUNT + 1] = {0}; /* op o's ranges: [first[o], first[o+1]) */
    for (size_t j = 0; j < m; j++)
        first[(r[2 * j] >> 62) + 1]++;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        first[o + 1] += first[o];
    /* single keys inside a range of their op are the range's */
    uint64_t *k = (uint64_t *)(void *)b->p;
    size_t n = b->n / 8, u = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned op = (unsigned)(k[i] & 3);
        if (!wide_has(r, first[op], first[op + 1], k[i] >> 2))
            k[u++] = k[i];
    }
    uint64_t total = u; /* ranges of one op are disjoint: < 3 * 2^54 */
    for (size_t j = 0; j < m; j++)
        total += r[2 * j + 1] - (r[2 * j] & WIDE_G) + 1;
    if (total > MH_SUM_SLICE_KEYS_MAX) {
        uint64_t o = MH_SUM_OVERFLOW;
        b->n = 0;
        return mh_buf_append(b, &o, sizeof o);
    }
    /* the singles by op, each op's in order (a stable counting sort) */
    size_t sfirst[MHF_OP_COUNT + 1] = {0};
    for (size_t i = 0; i < u; i++)
        sfirst[(k[i] & 3) + 1]++;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        sfirst[o + 1] += sfirst[o];
    uint64_t *single = malloc(u * 8 + 8);
    if (!single)
        return MH_ENOMEM;
    size_t fill[MHF_OP_COUNT];
    memcpy(fill, sfirst, sizeof fill);
    for (size_t i = 0; i < u; i++)
        single[fill[k[i] & 3]++] = k[i];
    /* each op's singles and ranges merged into items: at most u + 2 m */
    b->n = 0;
    if (mh_buf_reserve(b, (u + 2 * m) * 8) != MH_OK) {
        free(single);
        return MH_ENOMEM;
    }
    k = (uint64_t *)(void *)b->p;
    size_t w = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        size_t i = sfirst[o], j = first[o];
        while (i < sfirst[o + 1] || j < first[o + 1]) {
            uint64_t ra = j < first[o + 1] ? (r[2 * j] & WIDE_G) << 2 | o : EMPTY;
            if (i < sfirst[o + 1] && single[i] < ra) {
                k[w++] = single[i++]; /* never inside a range: filtered */
                continue;
            }
            w = put_item(k, w, ra, r[2 * j + 1] << 2 | o);
            j++;
        }
    }
    free(single);
    b->n = w * 8;
    return MH_OK;
}

int mh_sumset_end(mh_sumset *s, mh_sort_scratch *sort) {
    mh_buf *b = s->buf;
    if (s->overflow) {
        uint64_t k = MH_SUM_OVERFLOW;
        b->n = 0;
        return mh_buf_append(b, &k, sizeof k);
    }
    /* the keys to the front (a slot is read before anything is written
     * at or after it) */
    uint32_t n = 0, slots = s->mask + 1;
    for (uint32_t i = 0; i < slots; i++)
        if (s->tab[i] != EMPTY)
            s->tab[n++] = s->tab[i];
    b->n = (size_t)n * 8;
    if (n < 256) {
        qsort(b->p, n, 8, cmp_u64);
    } else {
        /* the radix sort's temporary key and payload arrays after the keys */
        MH_TRY(mh_buf_reserve(b, (size_t)n * 16));
        uint64_t *key = (uint64_t *)(void *)b->p, *tmpk = key + n;
        uint32_t *val = (uint32_t *)(void *)(tmpk + n), *tmpv = val + n;
        mh_sort_scratch *own = NULL;
        if (!sort) {
            own = malloc(sizeof *own);
            if (!own)
                return MH_ENOMEM;
            sort = own;
        }
        mh_radix_sort(sort, key, val, tmpk, tmpv, n);
        free(own);
    }
    return s->wide->n ? add_wide(s) : MH_OK;
}
int mh_summary_slice_keys(mh_builder *w, const mh_rec *a, uint32_t n) {
    (void)a;
    w->sum_keys.n = 0;
    w->sum_nkeys = 0;
    /* room for a key per row and some: ranges then rarely reallocates */
    return mh_buf_reserve(&w->sum_keys, ((size_t)n + 64) * 8) == MH_OK
               ? MH_OK
               : MH_ENOMEM;
}

/* The slice's keys give way to MH_SUM_OVERFLOW (its capacity is at least
 * 8 bytes: slice_keys reserved it). */
static void overflow(mh_buf *b) {
    uint64_t k = MH_SUM_OVERFLOW;
    memcpy(b->p, &k, 8);
    b->n = 8;
}

#define TOO_MANY 1 /* list_ranges: over MH_SUM_SLICE_KEYS_MAX (not an error) */

/* Appends the keys at `shift` of op's sorted, disjoint ranges to b as items,
 * counting them in *listed; TOO_MANY when they would pass
 * MH_SUM_SLICE_KEYS_MAX (items already in b), MH_ENOMEM. What it appended
 * before failing stays. */
static int list_ranges(mh_buf *b, uint64_t *listed, unsigned op, const uint64_t *lo,
                       const uint64_t *hi, uint32_t n, unsigned shift) {
    /* the ranges are sorted and disjoint, so their granules do not
     * decrease: a granule shared by neighbours is skipped by comparing with
     * the last one added */
    uint64_t next = 0; /* first granule not yet added */
    int any = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t g = lo[i] >> shift;
        uint64_t g1 = hi[i] >> shift;
        if (any && g < next) {
            if (g1 < next)
                continue;
            g = next;
        }
        uint64_t count = g1 - g + 1; /* <= 2^54 */
        if (count > MH_SUM_SLICE_KEYS_MAX - *listed)
            return TOO_MANY;
        MH_TRY(mh_buf_reserve(b, 16));
        uint64_t *k = (uint64_t *)(void *)b->p;
        b->n = put_item(k, b->n / 8, g << 2 | op, g1 << 2 | op) * 8;
        *listed += count;
        next = g1 + 1; /* g1 = 2^54 - 1 at most: no wrap */
        any = 1;
    }
    return MH_OK;
}

/* The slice's fine items b[0 .. n) at 64 KiB instead, behind
 * MH_SUM_COARSE_MARK; *nkeys gets the keys they stand for. Each op's items
 * increase, so a coarse key met again is the one just kept; an item never
 * becomes more words, so the rewrite is in place. */
static int to_coarse(mh_buf *b, size_t n, uint64_t *nkeys) {
    MH_TRY(mh_buf_reserve(b, 8));
    uint64_t *k = (uint64_t *)(void *)b->p;
    size_t u = 0;
    uint64_t count = 0, last[4] = {EMPTY, EMPTY, EMPTY, EMPTY};
    for (size_t i = 0; i < n;) {
        uint64_t a, z;
        i = mh_sum_item(k, i, n, &a, &z);
        a = mh_sum_coarsen(a, COARSE_EXTRA);
        z = mh_sum_coarsen(z, COARSE_EXTRA);
        if (!mh_sum_after(last[a & 3], &a, z))
            continue;
        u = put_item(k, u, a, z);
        count += ((z - a) >> 2) + 1;
        last[a & 3] = z;
    }
    memmove(k + 1, k, u * 8);
    k[0] = MH_SUM_COARSE_MARK;
    b->n = (u + 1) * 8;
    *nkeys = count;
    return MH_OK;
}

void mh_summary_ranges(mh_builder *w, unsigned op, const uint64_t *lo,
                       const uint64_t *hi, uint32_t n) {
    mh_buf *b = &w->sum_keys;
    const uint64_t *k0 = (const uint64_t *)(const void *)b->p;
    if (b->n == 8 && k0[0] == MH_SUM_OVERFLOW)
        return;
    int coarse = b->n >= 8 && k0[0] == MH_SUM_COARSE_MARK;
    size_t before = b->n;
    uint64_t nkeys = w->sum_nkeys;
    int rc = list_ranges(b, &w->sum_nkeys, op, lo, hi, n,
                         coarse ? MHF_SUM_GRANULE_SHIFT : MHF_SUM_FINE_SHIFT);
    if (rc == MH_OK)
        return;
    if (rc == TOO_MANY && !coarse) {
        /* too many 1 KiB granules: the slice is listed at 64 KiB, as 2.0
         * lists it, and its segment gets section 6 only */
        b->n = before; /* this op's keys again, coarse */
        if (to_coarse(b, before / 8, &nkeys) == MH_OK) {
            w->sum_nkeys = nkeys;
            if (list_ranges(b, &w->sum_nkeys, op, lo, hi, n,
                            MHF_SUM_GRANULE_SHIFT) == MH_OK)
                return;
        }
    }
    overflow(b); /* too many to list, or no memory: no summary */
}

/* Appends slice s's items keys[j0 .. j1) at `ex` more bits of shift to
 * key/val as keys, each once, and returns the new end. Each op's items come
 * in increasing order (list_ranges, to_coarse and mh_sumset_end make them
 * so), so a coarser repeat is the key last kept of its op: no sort. Keys
 * that do not (not made by this file) are sorted here instead, with the
 * same result. */
static size_t slice_pairs(const uint64_t *keys, uint32_t j0, uint32_t j1,
                          unsigned ex, uint32_t s, uint64_t *key, uint32_t *val,
                          size_t m, size_t cap, uint64_t *tmpk, uint32_t *tmpv,
                          mh_sort_scratch *sort) {
    const size_t m0 = m;
    uint64_t last[4] = {EMPTY, EMPTY, EMPTY, EMPTY};
    int sorted = 1;
    for (uint32_t j = j0; j < j1;) {
        uint64_t a, z;
        j = (uint32_t)mh_sum_item(keys, j, j1, &a, &z);
        uint64_t *l = &last[a & 3];
        for (uint64_t c = mh_sum_coarsen(a, ex), cz = mh_sum_coarsen(z, ex);; c += 4) {
            if (c != *l) {
                sorted &= *l == EMPTY || c > *l;
                *l = c;
                if (m == cap)
                    return SIZE_MAX; /* more than counted */
                key[m] = c;
                val[m++] = s;
            }
            if (c >= cz)
                break;
        }
    }
    if (sorted)
        return m;
    /* out of order: sort the slice's keys, drop repeats */
    mh_radix_sort(sort, key + m0, val + m0, tmpk, tmpv, m - m0);
    size_t u = m0;
    for (size_t i = m0; i < m; i++)
        if (i == m0 || key[i] != key[u - 1])
            key[u++] = key[i];
    return u;
}

/* The pairs make_pairs would give at `extra` and *widest, counted from the
 * items without listing them (a range is its coarse granules' count). When
 * some op's items do not increase (keys not made by this file), *ordered
 * is 0 and the count is the keys the items stand for, at least as many. */
size_t mh_summary_count_pairs(const uint64_t *keys, const uint32_t *first,
                              uint32_t nslices, unsigned extra, size_t *widest,
                              int *ordered) {
    size_t m = 0;
    *widest = 0;
    *ordered = 1;
    for (uint32_t s = 0; s < nslices; s++) {
        uint32_t j = first[s], end = first[s + 1];
        unsigned ex = extra;
        if (j < end && keys[j] == MH_SUM_COARSE_MARK) {
            j++;
            ex -= COARSE_EXTRA;
        }
        uint64_t last[4] = {EMPTY, EMPTY, EMPTY, EMPTY};
        uint64_t prev[4] = {EMPTY, EMPTY, EMPTY, EMPTY}; /* raw, for the order */
        size_t n = 0;
        while (j < end) {
            uint64_t a, z;
            j = (uint32_t)mh_sum_item(keys, j, end, &a, &z);
            unsigned op = (unsigned)(a & 3);
            if ((prev[op] != EMPTY && a <= prev[op]) || z < a || (z & 3) != op)
                *ordered = 0;
            prev[op] = z;
            uint64_t ca = mh_sum_coarsen(a, ex), cz = mh_sum_coarsen(z, ex);
            if (*ordered && !mh_sum_after(last[op], &ca, cz))
                continue;
            n += (size_t)(cz >= ca ? ((cz - ca) >> 2) + 1 : 1);
            last[op] = cz;
        }
        m += n;
        if (n > *widest)
            *widest = n;
    }
    return m;
}

/* Fills key/val with the (key at shift + extra, slice) pairs of all slices,
 * each slice's keys unique, in slice order (not sorted by key: a stable
 * sort by key then gives each key's slices increasing); *widest gets the
 * most pairs of one slice. Returns the number of pairs, or SIZE_MAX when
 * they would be more than cap. */
static size_t make_pairs(const uint64_t *keys, const uint32_t *first,
                         uint32_t nslices, unsigned extra, uint64_t *key,
                         uint32_t *val, size_t cap, uint64_t *tmpk, uint32_t *tmpv,
                         mh_sort_scratch *sort, size_t *widest) {
    size_t m = 0;
    *widest = 0;
    for (uint32_t s = 0; s < nslices; s++) {
        uint32_t j = first[s];
        unsigned ex = extra;
        if (j < first[s + 1] && keys[j] == MH_SUM_COARSE_MARK) {
            j++; /* keys at 16 already (section 6 only: extra >= 6) */
            ex -= COARSE_EXTRA;
        }
        size_t m0 = m;
        m = slice_pairs(keys, j, first[s + 1], ex, s, key, val, m, cap, tmpk, tmpv,
                        sort);
        if (m == SIZE_MAX)
            return m;
        if (m - m0 > *widest)
            *widest = m - m0;
    }
    return m;
}

/* make_pairs's pairs key/val[0 .. m) of one shift (slice order, each
 * op's keys of a slice increasing), as make_pairs gives them `step` bits
 * coarser, in place: a coarser repeat is the key last kept of its op in
 * its slice. *widest as make_pairs. Returns the new count. */
static size_t coarser_unsorted(uint64_t *key, uint32_t *val, size_t m, unsigned step,
                               size_t *widest) {
    size_t u = 0, u0 = 0;
    uint64_t last[4] = {EMPTY, EMPTY, EMPTY, EMPTY};
    *widest = 0;
    for (size_t i = 0; i < m; i++) {
        if (i > 0 && val[i] != val[i - 1]) { /* the next slice */
            last[0] = last[1] = last[2] = last[3] = EMPTY;
            u0 = u;
        }
        uint64_t c = mh_sum_coarsen(key[i], step);
        if (c == last[c & 3])
            continue;
        last[c & 3] = c;
        key[u] = c;
        val[u++] = val[i];
        if (u - u0 > *widest)
            *widest = u - u0;
    }
    return u;
}

/* The sorted pairs key/val[0 .. m) of one shift, as the sorted pairs of
 * the shift `step` bits coarser, in place. The pairs whose granules merge
 * are neighbours (sorted by (granule, op), coarser granules keep their
 * order): each run of one coarser granule is sorted again by (op, slice)
 * through tmp (m entries: a few finer granules' sorted slices each; a
 * short run by insertion), each pair kept once. Returns the new count. */
static size_t coarser_pairs(uint64_t *key, uint32_t *val, size_t m, unsigned step,
                            uint64_t *tmp) {
    size_t u = 0;
    for (size_t i = 0; i < m;) {
        const uint64_t g = key[i] >> 2 >> step;
        size_t j = i;
        int sorted = 1;
        for (; j < m && key[j] >> 2 >> step == g; j++) {
            tmp[j] = (key[j] & 3) << 32 | val[j];
            sorted &= j == i || tmp[j] > tmp[j - 1];
        }
        if (!sorted && j - i <= 32) {
            for (size_t r = i + 1; r < j; r++) {
                uint64_t x = tmp[r];
                size_t q = r;
                for (; q > i && tmp[q - 1] > x; q--)
                    tmp[q] = tmp[q - 1];
                tmp[q] = x;
            }
        } else if (!sorted) {
            qsort(tmp + i, j - i, sizeof *tmp, cmp_u64);
        }
        for (size_t r = i; r < j; r++)
            if (r == i || tmp[r] != tmp[r - 1]) {
                key[u] = g << 2 | tmp[r] >> 32;
                val[u++] = (uint32_t)tmp[r];
            }
        i = j;
    }
    return u;
}

/* The section's size for sorted pairs key[0..m). */
static size_t section_size(const uint64_t *key, size_t m, size_t *nentries) {
    size_t ne = 0;
    for (size_t i = 0; i < m; i++)
        ne += i == 0 || key[i] != key[i - 1];
    *nentries = ne;
    return MHF_SUM_HEADER_SIZE + ne * MHF_SUM_ENTRY_SIZE + m * MHF_SUM_POSTING_SIZE;
}

/* The section's bytes from the sorted pairs key/val[0 .. m) at
 * MHF_SUM_FINE_SHIFT + extra (nentries entries, bytes in all), appended to
 * out. */
static int write_section(const uint64_t *key, const uint32_t *val, size_t m,
                         size_t nentries, size_t bytes, unsigned extra,
                         mh_buf *out) {
    MH_TRY(mh_buf_reserve(out, bytes));
    uint8_t *p = out->p + out->n;
    memset(p, 0, bytes);
    mhf_store_u32(p + MHF_SUM_SHIFT, MHF_SUM_FINE_SHIFT + extra);
    mhf_store_u32(p + MHF_SUM_ENTRY_COUNT, (uint32_t)nentries);
    mhf_store_u32(p + MHF_SUM_ENTRY_SIZE_OFF, MHF_SUM_ENTRY_SIZE);
    mhf_store_u64(p + MHF_SUM_POSTING_COUNT, m);
    uint8_t *e = p + MHF_SUM_HEADER_SIZE - MHF_SUM_ENTRY_SIZE;
    uint8_t *post = p + MHF_SUM_HEADER_SIZE + nentries * MHF_SUM_ENTRY_SIZE;
    for (size_t i = 0; i < m; i++) {
        if (i == 0 || key[i] != key[i - 1]) {
            e += MHF_SUM_ENTRY_SIZE;
            mhf_store_u64(e + MHF_SUM_E_GRANULE, key[i] >> 2);
            mhf_store_u64(e + MHF_SUM_E_POSTING_FIRST, i);
            e[MHF_SUM_E_OP] = (uint8_t)(key[i] & 3);
        }
        mhf_store_u32(e + MHF_SUM_E_POSTING_COUNT,
                      mhf_load_u32(e + MHF_SUM_E_POSTING_COUNT) + 1);
        mhf_store_u32(post + i * MHF_SUM_POSTING_SIZE, val[i]);
    }
    out->n += bytes;
    return MH_OK;
}

/* The least bytes a section of m pairs, widest of them one slice's, takes
 * (each of those keys an entry at least). */
static inline size_t size_bound(size_t m, size_t widest) {
    return MHF_SUM_HEADER_SIZE + widest * MHF_SUM_ENTRY_SIZE + m * MHF_SUM_POSTING_SIZE;
}

/* One section into out (appended): the pairs at extra = extra0, extra0 +
 * step, ... (shift MHF_SUM_FINE_SHIFT + extra) until its bytes fit the
 * budget or the next step would pass shift 63. Nothing is appended when
 * its entries cannot be counted in 32 bits. */
static int one_section(const uint64_t *keys, const uint32_t *first,
                       uint32_t nslices, unsigned extra0, unsigned step,
                       uint64_t budget, mh_sort_scratch *sort, mh_buf *out) {
    /* A scattered segment (random accesses over a large space) meets many
     * granules once each, at 28 bytes apiece: coarser granules then keep
     * the section within its budget, a few hundredths of a byte per access,
     * at the price of more candidate slices for its queries. */
    /* Each shift's pairs come from the previous shift's (coarser_unsorted,
     * coarser_pairs), not from the slices' keys again; a shift whose
     * postings and widest slice alone pass the budget is not sorted. A segment of a few
     * accesses of gigabytes lists millions of granules at 1 KiB, which
     * every coarser try used to sort again (fuzz finding
     * slow-unit-bd0366…: 82 s in these sorts). The shift chosen, and so the
     * bytes, are the same. Since 1.10.7 the shifts whose postings and
     * widest slice alone pass the budget are passed over from the items'
     * counts (mh_summary_count_pairs): a range of millions of granules is listed only
     * at a shift the section can take, so the pairs are at most about
     * budget / 4 (the accesses / 64 at shift 10). */
    unsigned extra = extra0;
    size_t nentries = 0, bytes = 0, widest;
    int ordered;
    size_t m = mh_summary_count_pairs(keys, first, nslices, extra, &widest, &ordered);
    while (ordered && extra + step <= 63 - MHF_SUM_FINE_SHIFT &&
           size_bound(m, widest) > budget) {
        extra += step;
        m = mh_summary_count_pairs(keys, first, nslices, extra, &widest, &ordered);
    }
    /* the pairs' arrays, and as much again for the sort's scratch */
    uint64_t *key = malloc(m * 16 + 16);
    uint32_t *val = malloc(m * 8 + 8);
    if (!key || !val) {
        free(key);
        free(val);
        return MH_ENOMEM;
    }
    uint64_t *tmpk = key + m + 1;
    uint32_t *tmpv = val + m + 1;
    m = make_pairs(keys, first, nslices, extra, key, val, m, tmpk, tmpv, sort,
                   &widest);
    if (m == SIZE_MAX) { /* never: the count is exact or more */
        free(key);
        free(val);
        return MH_ENOMEM;
    }
    int sorted = 0;
    for (;; extra += step) {
        const int last = extra + step > 63 - MHF_SUM_FINE_SHIFT;
        if (!sorted && !last && size_bound(m, widest) > budget) {
            /* its exact size is larger still */
            m = coarser_unsorted(key, val, m, step, &widest);
            continue;
        }
        if (!sorted) {
            mh_radix_sort(sort, key, val, tmpk, tmpv, m);
            sorted = 1;
        }
        bytes = section_size(key, m, &nentries);
        if (bytes <= budget || last)
            break;
        m = coarser_pairs(key, val, m, step, tmpk);
    }
    int rc = nentries > UINT32_MAX ? MH_OK /* cannot be said: no section */
                                   : write_section(key, val, m, nentries, bytes,
                                                   extra, out);
    free(key);
    free(val);
    return rc;
}

int mh_summary_serialize(const uint64_t *keys, const uint32_t *first,
                         uint32_t nslices, uint64_t count, mh_buf *out,
                         mh_buf *fine) {
    if (nslices == 0)
        return MH_OK;
    /* a slice too scattered to list even at 64 KiB: neither section (as
     * 2.0 gives it no section 6); one listed at 64 KiB only: section 6 */
    for (uint32_t s = 0; s < nslices; s++) {
        if (first[s + 1] - first[s] == 1 && keys[first[s]] == MH_SUM_OVERFLOW)
            return MH_OK;
        if (first[s + 1] > first[s] && keys[first[s]] == MH_SUM_COARSE_MARK)
            fine = NULL;
    }
    mh_sort_scratch *sort = malloc(sizeof *sort);
    int rc = sort ? MH_OK : MH_ENOMEM;
    if (rc == MH_OK && out)
        rc = one_section(keys, first, nslices, COARSE_EXTRA, COARSEN_STEP,
                         SUMMARY_BUDGET(count), sort, out);
    if (rc == MH_OK && fine)
        rc = one_section(keys, first, nslices, 0, FINE_COARSEN_STEP,
                         FINE_BUDGET(count), sort, fine);
    free(sort);
    return rc;
}

static const mh_summary_hooks default_hooks = {
    mh_summary_slice_keys, mh_summary_ranges, mh_summary_serialize};

const mh_summary_hooks *mh_summary_hooks_default(void) { return &default_hooks; }
