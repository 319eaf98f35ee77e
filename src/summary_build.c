/*
 * summary_build.c - the address summary's writing half (SPEC.md "Address
 * summary", section type 6): the keys (granule << 2 | op) each slice meets,
 * computed on the ingest path by the slice builder, and the section bytes
 * the segment writer appends at seal.
 *
 * Per slice, the rows' keys go into an open-addressing set kept in the
 * builder's sum_keys buffer: a row whose key is the previous row's of its
 * operation (the common case: a trace stays in a page for a while) costs a
 * shift and a compare; the distinct keys, usually a few hundred per slice,
 * are then sorted with the builder's radix sort. At seal, the (key, slice)
 * pairs of all slices are sorted by key, stably, so each key's postings
 * come out as increasing slice indexes.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define EMPTY UINT64_MAX /* never a key: keys are < 2^50 */
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
    mh_sumset s;
    MH_TRY(mh_sumset_begin(&s, &w->sum_keys, n / 8));
    for (uint32_t i = 0; i < n; i++)
        MH_TRY(mh_sumset_add(&s, a[i].physical, a[i].size, a[i].op));
    /* the builder's sort scratch is free until it sorts the slice */
    return mh_sumset_end(&s, &w->sort);
}

int mh_summary_serialize(const uint64_t *keys, const uint32_t *first,
                         uint32_t nslices, mh_buf *out) {
    size_t npairs = first[nslices] - first[0];
    if (nslices == 0)
        return MH_OK;
    for (uint32_t s = 0; s < nslices; s++)
        if (first[s + 1] - first[s] == 1 && keys[first[s]] == MH_SUM_OVERFLOW)
            return MH_OK; /* a slice too scattered to list: no summary */
    uint64_t *key = malloc(npairs * 16 + 1);
    uint32_t *val = malloc(npairs * 8 + 1);
    mh_sort_scratch *sort = malloc(sizeof *sort);
    int rc = key && val && sort ? MH_OK : MH_ENOMEM;
    uint64_t *tmpk = key ? key + npairs : NULL;
    uint32_t *tmpv = val ? val + npairs : NULL;
    if (rc == MH_OK) {
        for (uint32_t s = 0; s < nslices; s++)
            for (uint32_t i = first[s]; i < first[s + 1]; i++) {
                key[i - first[0]] = keys[i];
                val[i - first[0]] = s;
            }
        mh_radix_sort(sort, key, val, tmpk, tmpv, npairs);
    }
    size_t nentries = 0;
    for (size_t i = 0; rc == MH_OK && i < npairs; i++)
        nentries += i == 0 || key[i] != key[i - 1];
    size_t bytes = MHF_SUM_HEADER_SIZE + nentries * MHF_SUM_ENTRY_SIZE +
                   npairs * MHF_SUM_POSTING_SIZE;
    if (rc == MH_OK)
        rc = mh_buf_reserve(out, bytes);
    if (rc == MH_OK) {
        uint8_t *p = out->p + out->n;
        memset(p, 0, bytes);
        mhf_store_u32(p + MHF_SUM_SHIFT, MHF_SUM_GRANULE_SHIFT);
        mhf_store_u32(p + MHF_SUM_ENTRY_COUNT, (uint32_t)nentries);
        mhf_store_u32(p + MHF_SUM_ENTRY_SIZE_OFF, MHF_SUM_ENTRY_SIZE);
        mhf_store_u64(p + MHF_SUM_POSTING_COUNT, npairs);
        uint8_t *e = p + MHF_SUM_HEADER_SIZE - MHF_SUM_ENTRY_SIZE;
        uint8_t *post = p + MHF_SUM_HEADER_SIZE + nentries * MHF_SUM_ENTRY_SIZE;
        for (size_t i = 0; i < npairs; i++) {
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
    free(key);
    free(val);
    free(sort);
    return rc;
}

static const mh_summary_hooks default_hooks = {mh_summary_slice_keys,
                                               mh_summary_serialize};

const mh_summary_hooks *mh_summary_hooks_default(void) { return &default_hooks; }
