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
 * one sorted list of distinct keys in buf, or MH_SUM_OVERFLOW when they
 * are more than MH_SUM_SLICE_KEYS_MAX: counted before any range is
 * enumerated, so an overflowing slice costs its ranges only. */
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
    b->n = 0;
    MH_TRY(mh_buf_reserve(b, (size_t)total * 8));
    k = (uint64_t *)(void *)b->p;
    /* the singles to the end; the merge writes each key at or before the
     * single it reads next, so it never overwrites one unread */
    memmove(k + (total - u), k, u * 8);
    const uint64_t *single = k + (total - u);
    size_t ns = 0, at[MHF_OP_COUNT];
    uint64_t next[MHF_OP_COUNT]; /* op o's next range key, EMPTY: none */
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        at[o] = first[o];
        next[o] = at[o] < first[o + 1] ? (r[2 * at[o]] & WIDE_G) << 2 | o : EMPTY;
    }
    for (uint64_t w = 0; w < total; w++) {
        unsigned best = MHF_OP_COUNT;
        uint64_t key = ns < u ? single[ns] : EMPTY;
        for (unsigned o = 0; o < MHF_OP_COUNT; o++)
            if (next[o] < key) {
                key = next[o];
                best = o;
            }
        k[w] = key;
        if (best == MHF_OP_COUNT) {
            ns++;
            continue;
        }
        uint64_t g = key >> 2;
        if (g < r[2 * at[best] + 1])
            next[best] = (g + 1) << 2 | best;
        else if (++at[best] < first[best + 1])
            next[best] = (r[2 * at[best]] & WIDE_G) << 2 | best;
        else
            next[best] = EMPTY;
    }
    b->n = (size_t)total * 8;
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

/* Appends the keys at `shift` of op's sorted, disjoint ranges to b; TOO_MANY
 * when they would pass MH_SUM_SLICE_KEYS_MAX (listed: keys already in b),
 * MH_ENOMEM. What it appended before failing stays. */
static int list_ranges(mh_buf *b, size_t listed, unsigned op, const uint64_t *lo,
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
        if (count > MH_SUM_SLICE_KEYS_MAX - listed)
            return TOO_MANY;
        MH_TRY(mh_buf_reserve(b, (size_t)count * 8));
        uint64_t *k = (uint64_t *)(void *)(b->p + b->n);
        for (uint64_t j = 0; j < count; j++)
            k[j] = (g + j) << 2 | op;
        b->n += (size_t)count * 8;
        listed += count;
        next = g1 + 1; /* g1 = 2^54 - 1 at most: no wrap */
        any = 1;
    }
    return MH_OK;
}

/* The slice's fine keys b[0 .. n) at 64 KiB instead, behind
 * MH_SUM_COARSE_MARK. Each op's keys are a run of increasing granules, so
 * a repeat is the key just kept. */
static int to_coarse(mh_buf *b, size_t n) {
    MH_TRY(mh_buf_reserve(b, 8));
    uint64_t *k = (uint64_t *)(void *)b->p;
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t c = (k[i] >> 2 >> COARSE_EXTRA) << 2 | (k[i] & 3);
        if (u == 0 || c != k[u - 1])
            k[u++] = c;
    }
    memmove(k + 1, k, u * 8);
    k[0] = MH_SUM_COARSE_MARK;
    b->n = (u + 1) * 8;
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
    int rc = list_ranges(b, before / 8 - (size_t)coarse, op, lo, hi, n,
                         coarse ? MHF_SUM_GRANULE_SHIFT : MHF_SUM_FINE_SHIFT);
    if (rc == MH_OK)
        return;
    if (rc == TOO_MANY && !coarse) {
        /* too many 1 KiB granules: the slice is listed at 64 KiB, as 2.0
         * lists it, and its segment gets section 6 only */
        b->n = before; /* this op's keys again, coarse */
        if (to_coarse(b, before / 8) == MH_OK &&
            list_ranges(b, b->n / 8 - 1, op, lo, hi, n, MHF_SUM_GRANULE_SHIFT) ==
                MH_OK)
            return;
    }
    overflow(b); /* too many to list, or no memory: no summary */
}

/* Key k (made at MHF_SUM_FINE_SHIFT) at `extra` more bits of shift. */
static inline uint64_t coarsen(uint64_t k, unsigned extra) {
    return (k >> 2 >> extra) << 2 | (k & 3);
}

/* Appends slice s's keys keys[j0 .. j1) at `ex` more bits of shift to
 * key/val, each once, and returns the new end. Each op's keys come in
 * increasing order (list_ranges, to_coarse and mh_sumset_end make them so),
 * so a coarser repeat is the key last kept of its op: no sort. Keys that
 * do not (not made by this file) are sorted here instead, with the same
 * result. */
static size_t slice_pairs(const uint64_t *keys, uint32_t j0, uint32_t j1,
                          unsigned ex, uint32_t s, uint64_t *key, uint32_t *val,
                          size_t m, uint64_t *tmpk, uint32_t *tmpv,
                          mh_sort_scratch *sort) {
    const size_t m0 = m;
    uint64_t last[4] = {EMPTY, EMPTY, EMPTY, EMPTY};
    int sorted = 1;
    for (uint32_t j = j0; j < j1; j++) {
        uint64_t c = coarsen(keys[j], ex);
        uint64_t *l = &last[c & 3];
        if (c == *l)
            continue;
        sorted &= *l == EMPTY || c > *l;
        *l = c;
        key[m] = c;
        val[m++] = s;
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

/* Fills key/val with the (key at shift + extra, slice) pairs of all slices,
 * each slice's keys unique, in slice order (not sorted by key: a stable
 * sort by key then gives each key's slices increasing); *widest gets the
 * most pairs of one slice. Returns the number of pairs. */
static size_t make_pairs(const uint64_t *keys, const uint32_t *first,
                         uint32_t nslices, unsigned extra, uint64_t *key,
                         uint32_t *val, uint64_t *tmpk, uint32_t *tmpv,
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
        m = slice_pairs(keys, j, first[s + 1], ex, s, key, val, m, tmpk, tmpv, sort);
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
        uint64_t c = coarsen(key[i], step);
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

/* One section into out (appended): the pairs at extra = extra0, extra0 +
 * step, ... (shift MHF_SUM_FINE_SHIFT + extra) until its bytes fit the
 * budget or the next step would pass shift 63. key/val/tmpk/tmpv hold the
 * pairs (npairs + 1 each). Nothing is appended when its entries cannot be
 * counted in 32 bits. */
static int one_section(const uint64_t *keys, const uint32_t *first,
                       uint32_t nslices, unsigned extra0, unsigned step,
                       uint64_t budget, uint64_t *key, uint32_t *val,
                       uint64_t *tmpk, uint32_t *tmpv, mh_sort_scratch *sort,
                       mh_buf *out) {
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
     * bytes, are the same. */
    unsigned extra = extra0;
    size_t nentries = 0, bytes = 0, widest;
    size_t m = make_pairs(keys, first, nslices, extra, key, val, tmpk, tmpv, sort,
                          &widest);
    int sorted = 0;
    for (;; extra += step) {
        const int last = extra + step > 63 - MHF_SUM_FINE_SHIFT;
        if (!sorted && !last &&
            MHF_SUM_HEADER_SIZE + widest * MHF_SUM_ENTRY_SIZE +
                    m * MHF_SUM_POSTING_SIZE > budget) {
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
    if (nentries > UINT32_MAX)
        return MH_OK; /* cannot be said: no section */
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
    size_t npairs = first[nslices] - first[0];
    uint64_t *key = malloc(npairs * 16 + 16);
    uint32_t *val = malloc(npairs * 8 + 8);
    mh_sort_scratch *sort = malloc(sizeof *sort);
    int rc = key && val && sort ? MH_OK : MH_ENOMEM;
    uint64_t *tmpk = key ? key + npairs + 1 : NULL;
    uint32_t *tmpv = val ? val + npairs + 1 : NULL;
    if (rc == MH_OK && out)
        rc = one_section(keys, first, nslices, COARSE_EXTRA, COARSEN_STEP,
                         SUMMARY_BUDGET(count), key, val, tmpk, tmpv, sort, out);
    if (rc == MH_OK && fine)
        rc = one_section(keys, first, nslices, 0, FINE_COARSEN_STEP,
                         FINE_BUDGET(count), key, val, tmpk, tmpv, sort, fine);
    free(key);
    free(val);
    free(sort);
    return rc;
}

static const mh_summary_hooks default_hooks = {
    mh_summary_slice_keys, mh_summary_ranges, mh_summary_serialize};

const mh_summary_hooks *mh_summary_hooks_default(void) { return &default_hooks; }
