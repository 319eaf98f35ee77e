/*
 * sort.c - stable LSD radix sort of 64-bit keys carrying a 32-bit payload,
 * used to order a slice's accesses by address when building chunks.
 *
 * One pass over the keys counts all eight byte histograms; byte positions
 * where every key agrees are skipped. The addresses of one slice fall in a
 * few regions (stack, heap arenas, globals, device windows) that may lie far
 * apart in the 64-bit space, so their high bytes differ and a plain LSD sort
 * would do all eight passes. When the keys' bits above the low 16 take at
 * most RANK_MAX distinct values, those bits are first replaced by their rank
 * among the distinct values (an order-preserving renaming): the sort then
 * needs the two low bytes and one or two rank bytes, and the keys are given
 * back their high bits at the end.
 *
 * The histograms and the rank map are the caller's mh_sort_scratch, not
 * thread-locals: the library holds no per-thread state (internal.h says why).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RANK_SHIFT 16
#define RANK_MAX MH_SORT_RANK_MAX
#define RANK_SLOTS MH_SORT_RANK_SLOTS
#define RANK_EMPTY UINT64_MAX  /* never a high part: they are < 2^48 */

static inline uint32_t rank_home(uint64_t h) {
    return (uint32_t)((h * 0x9E3779B97F4A7C15u) >> 53) & (RANK_SLOTS - 1);
}

/* Slot of h, or of the empty slot where it would go. */
static inline uint32_t rank_slot(const mh_sort_scratch *m, uint64_t h) {
    uint32_t i = rank_home(h);
    while (m->slot_key[i] != RANK_EMPTY && m->slot_key[i] != h)
        i = (i + 1) & (RANK_SLOTS - 1);
    return i;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Collects the distinct high parts of the keys and ranks them: 0 when there
 * are more than RANK_MAX (the keys are then sorted as they are). */
static int rank_build(mh_sort_scratch *m, const uint64_t *key, size_t n) {
    for (uint32_t i = 0; i < RANK_SLOTS; i++)
        m->slot_key[i] = RANK_EMPTY;
    m->nranks = 0;
    uint64_t last = RANK_EMPTY;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = key[i] >> RANK_SHIFT;
        if (h == last)
            continue; /* neighbours in a trace share a region */
        last = h;
        uint32_t s = rank_slot(m, h);
        if (m->slot_key[s] == RANK_EMPTY) {
            if (m->nranks == RANK_MAX)
                return 0;
            m->slot_key[s] = h;
            m->sorted[m->nranks++] = h;
        }
    }
    qsort(m->sorted, m->nranks, sizeof *m->sorted, cmp_u64);
    for (uint32_t r = 0; r < m->nranks; r++)
        m->slot_rank[rank_slot(m, m->sorted[r])] = (uint16_t)r;
    return 1;
}

/* Replaces each key's high part by its rank (order preserving). */
static void rank_apply(const mh_sort_scratch *m, uint64_t *key, size_t n) {
    uint64_t last = RANK_EMPTY, rank = 0;
    const uint64_t low = ((uint64_t)1 << RANK_SHIFT) - 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = key[i] >> RANK_SHIFT;
        if (h != last) {
            last = h;
            rank = m->slot_rank[rank_slot(m, h)];
        }
        key[i] = rank << RANK_SHIFT | (key[i] & low);
    }
}

/* Gives the sorted keys their high parts back. */
static void rank_undo(const mh_sort_scratch *m, uint64_t *key, size_t n) {
    const uint64_t low = ((uint64_t)1 << RANK_SHIFT) - 1;
    for (size_t i = 0; i < n; i++)
        key[i] = m->sorted[key[i] >> RANK_SHIFT] << RANK_SHIFT | (key[i] & low);
}

/* The LSD passes over the byte positions where the keys differ, among the
 * low nbytes (4 or 8): every key is below 2^(8 nbytes). */
static void lsd_sort(uint32_t (*hist)[256], uint64_t *key, uint32_t *val,
                     uint64_t *tmpk, uint32_t *tmpv, size_t n, unsigned nbytes) {
    memset(hist, 0, nbytes * sizeof *hist);
    if (nbytes == 4) {
        /* ranked keys (< RANK_MAX << RANK_SHIFT): the four high histograms
         * would count zeros, 16 of the ~120 instructions per access the
         * sort took on gzip's qemu trace (callgrind) */
        for (size_t i = 0; i < n; i++) {
            uint64_t k = key[i];
            hist[0][k & 0xff]++;
            hist[1][(k >> 8) & 0xff]++;
            hist[2][(k >> 16) & 0xff]++;
            hist[3][(k >> 24) & 0xff]++;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint64_t k = key[i];
            hist[0][k & 0xff]++;
            hist[1][(k >> 8) & 0xff]++;
            hist[2][(k >> 16) & 0xff]++;
            hist[3][(k >> 24) & 0xff]++;
            hist[4][(k >> 32) & 0xff]++;
            hist[5][(k >> 40) & 0xff]++;
            hist[6][(k >> 48) & 0xff]++;
            hist[7][k >> 56]++;
        }
    }
    uint64_t *sk = key, *dk = tmpk;
    uint32_t *sv = val, *dv = tmpv;
    for (unsigned d = 0; d < nbytes; d++) {
        uint32_t *h = hist[d];
        unsigned shift = d * 8;
        if (h[(key[0] >> shift) & 0xff] == n)
            continue; /* every key has the same byte here */
        uint32_t sum = 0;
        for (unsigned b = 0; b < 256; b++) {
            uint32_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k = sk[i];
            uint32_t pos = h[(k >> shift) & 0xff]++;
            dk[pos] = k;
            dv[pos] = sv[i];
        }
        uint64_t *tk = sk;
        sk = dk;
        dk = tk;
        uint32_t *tv = sv;
        sv = dv;
        dv = tv;
    }
    if (sk != key) {
        memcpy(key, sk, n * sizeof *key);
        memcpy(val, sv, n * sizeof *val);
    }
}

void mh_radix_sort(mh_sort_scratch *s, uint64_t *key, uint32_t *val,
                   uint64_t *tmpk, uint32_t *tmpv, size_t n) {
    if (n < 2)
        return;
    /* worth it only when the renaming saves more passes than it costs */
    int ranked = n >= 4 * RANK_MAX && rank_build(s, key, n);
    if (ranked)
        rank_apply(s, key, n);
    _Static_assert((uint64_t)RANK_MAX << RANK_SHIFT <= (uint64_t)1 << 32,
                   "ranked keys fit four bytes");
    lsd_sort(s->hist, key, val, tmpk, tmpv, n, ranked ? 4u : 8u);
    if (ranked)
        rank_undo(s, key, n);
}

/* The words' digits: histograms (after the renaming), then one scatter
 * per digit where the words differ. A slice's ranked address keys (16 low
 * bits and a rank of at most 10) take two or three digits, against three
 * or four byte passes, each moving one word instead of a key and its
 * payload. */
void mh_radix_sort_words(mh_sort_scratch *s, uint64_t *word, uint64_t *tmp,
                         size_t n, unsigned kbits, const uint16_t *map) {
    if (n == 0)
        return;
    const unsigned B = MH_SORT_DIGIT_BITS;
    const uint32_t M = (1u << B) - 1u;
    unsigned nd = (kbits + B - 1) / B;
    if (nd == 0)
        nd = 1;
    if (nd > 3)
        nd = 3;
    uint32_t (*h)[1u << MH_SORT_DIGIT_BITS] = s->hist11;
    memset(h, 0, nd * sizeof *h);
    const uint64_t low48 = ((uint64_t)1 << 48) - 1;
    if (map) {
        for (size_t i = 0; i < n; i++) {
            uint64_t x = word[i];
            x = (uint64_t)map[x >> 48] << 48 | (x & low48);
            word[i] = x;
            uint32_t k = (uint32_t)(x >> 32);
            h[0][k & M]++;
            h[1][(k >> B) & M]++;
            if (nd > 2)
                h[2][(k >> 2 * B) & M]++;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint64_t x = word[i];
            h[0][(x >> 32) & M]++;
            h[1][(x >> (32 + B)) & M]++;
            if (nd > 2)
                h[2][(x >> (32 + 2 * B)) & M]++;
        }
    }
    uint64_t *src = word, *dst = tmp;
    for (unsigned d = 0; d < nd; d++) {
        uint32_t *c = h[d];
        unsigned shift = 32 + d * B;
        if (c[(word[0] >> shift) & M] == n)
            continue; /* every word has this digit */
        uint32_t sum = 0;
        for (uint32_t b = 0; b <= M; b++) {
            uint32_t v = c[b];
            c[b] = sum;
            sum += v;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t x = src[i];
            dst[c[(x >> shift) & M]++] = x;
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != word)
        memcpy(word, src, n * sizeof *word);
}

int mh_radix_order(mh_sort_scratch *s, const uint64_t *key, size_t stride,
                   size_t n, uint64_t *word, uint64_t *tmp) {
    for (uint32_t i = 0; i < RANK_SLOTS; i++)
        s->slot_key[i] = RANK_EMPTY;
    uint32_t np = 0;
    uint64_t last = RANK_EMPTY, prov = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key[i * stride], h = k >> RANK_SHIFT;
        if (h != last) {
            uint32_t sl = rank_slot(s, h);
            if (s->slot_key[sl] == RANK_EMPTY) {
                if (np == RANK_MAX)
                    return 0;
                s->slot_key[sl] = h;
                s->slot_rank[sl] = (uint16_t)np;
                s->sorted[np] = h << 10 | np; /* h < 2^48 */
                np++;
            }
            last = h;
            prov = s->slot_rank[sl];
        }
        word[i] = prov << 48 | (k & 0xffff) << 32 | i;
    }
    _Static_assert(RANK_MAX <= 1024, "provisional rank in 10 bits");
    qsort(s->sorted, np, sizeof *s->sorted, cmp_u64);
    for (uint32_t r = 0; r < np; r++)
        s->map[s->sorted[r] & 1023] = (uint16_t)r;
    unsigned rb = 0;
    while (rb < 16 && (1u << rb) < np)
        rb++;
    mh_radix_sort_words(s, word, tmp, n, 16 + rb, s->map);
    return 1;
}
