/*
 * summary_build.c - the address summary's writing half (SPEC.md "Address
 * summary", section type 6): the keys (granule << 2 | op) each slice meets,
 * computed on the ingest path by the slice builder, and the section bytes
 * the segment writer appends at seal.
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

#define EMPTY UINT64_MAX /* never a key: keys are < 2^50 */
/* A segment's summary may take count / 32 bytes (+ 4 KiB for small
 * segments); beyond, its granules grow 4 bits at a time. */
#define SUMMARY_BUDGET(count) ((count) / 32u + 4096u)
#define COARSEN_STEP 4u
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

int mh_sumset_begin(mh_sumset *s, mh_buf *buf, uint32_t hint) {
    s->buf = buf;
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

static void insert(mh_sumset *s, uint64_t key) {
    uint32_t i = slot_of(s, key);
    for (;;) {
        uint64_t k = s->tab[i];
        if (k == key)
            return;
        if (k == EMPTY) {
            s->tab[i] = key;
            s->n++;
            return;
        }
        i = (i + 1) & s->mask;
    }
}

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
        for (uint32_t i = 0; i < old; i++)
            if (copy[i] != EMPTY)
                insert(s, copy[i]);
    }
    free(copy);
    return rc;
}

int mh_sumset_add_slow(mh_sumset *s, uint64_t key, uint64_t g_last,
                       unsigned op) {
    s->last[op] = key;
    if (s->overflow)
        return MH_OK;
    for (uint64_t g = key >> 2;; g++) {
        if (s->n >= (s->mask + 1) / 2) {
            if (s->n >= MH_SUM_SLICE_KEYS_MAX) {
                s->overflow = 1;
                return MH_OK;
            }
            MH_TRY(grow(s));
        }
        insert(s, g << 2 | op);
        if (g == g_last)
            return MH_OK;
    }
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
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
        return MH_OK;
    }
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
    return MH_OK;
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

void mh_summary_ranges(mh_builder *w, unsigned op, const uint64_t *lo,
                       const uint64_t *hi, uint32_t n) {
    mh_buf *b = &w->sum_keys;
    if (b->n == 8 && *(const uint64_t *)(const void *)b->p == MH_SUM_OVERFLOW)
        return;
    /* the ranges are sorted and disjoint, so their granules do not
     * decrease: a granule shared by neighbours is skipped by comparing with
     * the last one added */
    uint64_t next = 0; /* first granule not yet added */
    int any = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t g = lo[i] >> MHF_SUM_GRANULE_SHIFT;
        uint64_t g1 = hi[i] >> MHF_SUM_GRANULE_SHIFT;
        if (any && g < next) {
            if (g1 < next)
                continue;
            g = next;
        }
        uint64_t count = g1 - g + 1; /* <= 2^48 */
        if (count > MH_SUM_SLICE_KEYS_MAX - b->n / 8 ||
            mh_buf_reserve(b, (size_t)count * 8) != MH_OK) {
            overflow(b); /* too many to list, or no memory: no summary */
            return;
        }
        uint64_t *k = (uint64_t *)(void *)(b->p + b->n);
        for (uint64_t j = 0; j < count; j++)
            k[j] = (g + j) << 2 | op;
        b->n += (size_t)count * 8;
        next = g1 + 1; /* g1 = 2^48 - 1 at most: no wrap */
        any = 1;
    }
}

/* Key k (made at MHF_SUM_GRANULE_SHIFT) at `extra` more bits of shift. */
static inline uint64_t coarsen(uint64_t k, unsigned extra) {
    return (k >> 2 >> extra) << 2 | (k & 3);
}

/* Fills key/val with the (key at shift + extra, slice) pairs of all slices,
 * each slice's keys unique, and sorts them by key, stably: each key's
 * slices come out increasing. Returns the number of pairs. */
static size_t make_pairs(const uint64_t *keys, const uint32_t *first,
                         uint32_t nslices, unsigned extra, uint64_t *key,
                         uint32_t *val, uint64_t *tmpk, uint32_t *tmpv,
                         mh_sort_scratch *sort) {
    size_t m = 0;
    for (uint32_t s = 0; s < nslices; s++) {
        size_t m0 = m;
        for (uint32_t i = first[s]; i < first[s + 1]; i++) {
            key[m] = coarsen(keys[i], extra);
            val[m++] = s;
        }
        if (extra == 0)
            continue; /* unique already */
        /* coarser granules repeat: sort the slice's few keys, drop repeats */
        mh_radix_sort(sort, key + m0, val + m0, tmpk, tmpv, m - m0);
        size_t u = m0;
        for (size_t i = m0; i < m; i++)
            if (i == m0 || key[i] != key[u - 1])
                key[u++] = key[i];
        m = u;
    }
    mh_radix_sort(sort, key, val, tmpk, tmpv, m);
    return m;
}

/* The section's size for sorted pairs key[0..m). */
static size_t section_size(const uint64_t *key, size_t m, size_t *nentries) {
    size_t ne = 0;
    for (size_t i = 0; i < m; i++)
        ne += i == 0 || key[i] != key[i - 1];
    *nentries = ne;
    return MHF_SUM_HEADER_SIZE + ne * MHF_SUM_ENTRY_SIZE + m * MHF_SUM_POSTING_SIZE;
}

int mh_summary_serialize(const uint64_t *keys, const uint32_t *first,
                         uint32_t nslices, uint64_t count, mh_buf *out) {
    if (nslices == 0)
        return MH_OK;
    for (uint32_t s = 0; s < nslices; s++)
        if (first[s + 1] - first[s] == 1 && keys[first[s]] == MH_SUM_OVERFLOW)
            return MH_OK; /* a slice too scattered to list: no summary */
    size_t npairs = first[nslices] - first[0];
    uint64_t *key = malloc(npairs * 16 + 16);
    uint32_t *val = malloc(npairs * 8 + 8);
    mh_sort_scratch *sort = malloc(sizeof *sort);
    int rc = key && val && sort ? MH_OK : MH_ENOMEM;
    uint64_t *tmpk = key ? key + npairs + 1 : NULL;
    uint32_t *tmpv = val ? val + npairs + 1 : NULL;
    /* A scattered segment (random accesses over a large space) meets many
     * granules once each, at 28 bytes apiece: coarser granules then keep
     * the section within its budget, a few hundredths of a byte per access,
     * at the price of more candidate slices for its queries. */
    uint64_t budget = SUMMARY_BUDGET(count);
    unsigned extra = 0;
    size_t m = 0, nentries = 0, bytes = 0;
    for (; rc == MH_OK; extra += COARSEN_STEP) {
        m = make_pairs(keys, first, nslices, extra, key, val, tmpk,
                       tmpv, sort);
        bytes = section_size(key, m, &nentries);
        if (bytes <= budget || extra + COARSEN_STEP > 63 - MHF_SUM_GRANULE_SHIFT)
            break;
    }
    if (rc == MH_OK && nentries > UINT32_MAX)
        goto done; /* cannot be said: no summary */
    if (rc == MH_OK)
        rc = mh_buf_reserve(out, bytes);
    if (rc == MH_OK) {
        uint8_t *p = out->p + out->n;
        memset(p, 0, bytes);
        mhf_store_u32(p + MHF_SUM_SHIFT, MHF_SUM_GRANULE_SHIFT + extra);
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
    }
done:
    free(key);
    free(val);
    free(sort);
    return rc;
}

static const mh_summary_hooks default_hooks = {
    mh_summary_slice_keys, mh_summary_ranges, mh_summary_serialize};

const mh_summary_hooks *mh_summary_hooks_default(void) { return &default_hooks; }
