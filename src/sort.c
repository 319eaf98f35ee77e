/*
 * sort.c - stable LSD radix sort of 64-bit keys carrying a 32-bit payload,
 * used to order a slice's accesses by address when building chunks. Byte
 * positions where every key agrees (the high bytes of nearby addresses)
 * are skipped, so typical slices take two to four passes.
 */
#include <string.h>

#include "internal.h"

void mh_radix_sort(uint64_t *key, uint32_t *val, uint64_t *tmpk,
                   uint32_t *tmpv, size_t n) {
    if (n < 2)
        return;
    uint64_t diff = 0;
    for (size_t i = 1; i < n; i++)
        diff |= key[i] ^ key[0];
    uint64_t *sk = key, *dk = tmpk;
    uint32_t *sv = val, *dv = tmpv;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if (((diff >> shift) & 0xffu) == 0)
            continue;
        size_t count[256];
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(sk[i] >> shift) & 0xffu]++;
        size_t sum = 0;
        for (unsigned b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t pos = count[(sk[i] >> shift) & 0xffu]++;
            dk[pos] = sk[i];
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
