/*
 * sort.c - stable LSD radix sort of 64-bit keys carrying a 32-bit payload,
 * used to order a slice's accesses by address when building chunks. One
 * pass over the keys counts all eight byte histograms; byte positions where
 * every key agrees (the high bytes of nearby addresses) are skipped, so a
 * typical slice takes three to five scatter passes.
 */
#include <string.h>

#include "internal.h"

void mh_radix_sort(uint64_t *key, uint32_t *val, uint64_t *tmpk,
                   uint32_t *tmpv, size_t n) {
    if (n < 2)
        return;
    static _Thread_local uint32_t hist[8][256];
    memset(hist, 0, sizeof hist);
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
    uint64_t *sk = key, *dk = tmpk;
    uint32_t *sv = val, *dv = tmpv;
    for (unsigned d = 0; d < 8; d++) {
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
