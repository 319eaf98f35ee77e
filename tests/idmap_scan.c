/*
 * idmap_scan.c - the id path's label scan (src/idmap_scan.c) against
 * brute force: labels of 1, 2 and 4 bytes, the chunks able to match
 * marked inside a run [lo, lo + span] (none, one, all, random ones; runs
 * at 0, in the middle, at the top of the width, as wide as it, past it), scans
 * forward and backward from every kind of start to every kind of end
 * (lengths around the 16- and 8-label lanes, empty, one label), labels
 * inside and outside the run and on its two ends. The answer must be the
 * first marked label in query order, as a label-by-label scan finds it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"
#include "testutil.h"

static tu_rng rng = {0x853c49e6748fea9bu};
static uint32_t below(uint32_t n) { return (uint32_t)tu_below(&rng, n); }

static uint32_t get(const uint8_t *lab, unsigned w, int64_t j) {
    uint32_t v = 0;
    for (unsigned b = 0; b < w; b++)
        v |= (uint32_t)lab[(size_t)j * w + b] << (8 * b);
    return v;
}

static void put(uint8_t *lab, unsigned w, int64_t j, uint32_t v) {
    for (unsigned b = 0; b < w; b++)
        lab[(size_t)j * w + b] = (uint8_t)(v >> (8 * b));
}

#define NLAB 300
#define NCK 70000

static uint8_t ck[NCK];

int main(void) {
    uint8_t *lab = malloc((size_t)NLAB * 4);
    unsigned scans = 0, hits = 0;
    for (int rep = 0; rep < 6000; rep++) {
        const unsigned w = rep % 3 == 0 ? 1 : rep % 3 == 1 ? 2 : 4;
        const uint32_t top = w == 1 ? 255 : w == 2 ? 65535 : NCK - 1;
        /* the run: at 0, at the top, anywhere, the whole width */
        uint32_t lo, span;
        switch (below(5)) {
        case 4: lo = below(top + 1); span = top - lo + below(1000); break; /* past the width */
        case 0: lo = 0; span = below(top < 300 ? top + 1 : 300); break;
        case 1: span = below(top < 300 ? top + 1 : 300); lo = top - span; break;
        case 2: lo = below(top + 1); span = below(top - lo + 1); break;
        default: lo = 0; span = top; break;
        }
        memset(ck, 0, sizeof ck);
        const unsigned dens = below(4); /* none, few, half, all marked */
        for (uint32_t l = lo; l - lo <= span && l <= top; l++)
            ck[l] = (uint8_t)(dens == 3 ? 1 + below(3)
                              : dens == 2 ? (below(2) ? 1 + below(3) : 0)
                              : dens == 1 ? (below(40) == 0 ? 1 + below(3) : 0)
                                          : 0);
        /* the labels: outside the run mostly, inside, on its ends */
        for (int64_t j = 0; j < NLAB; j++) {
            uint32_t v;
            switch (below(6)) {
            case 0: v = lo; break;
            case 1: v = lo + span; break;
            case 2: v = lo + below(span + 1); break;
            default: v = below(top + 1); break;
            }
            put(lab, w, j, v > top ? top : v); /* a run past the width ends there */
        }
        for (int t = 0; t < 20; t++) {
            const int fwd = (int)below(2);
            const int64_t i = below(NLAB);
            int64_t e;
            uint32_t len = below(4) ? below(40) : below(NLAB);
            if (fwd)
                e = i + (int64_t)len - 1 < NLAB ? i + (int64_t)len - 1 : NLAB - 1;
            else
                e = i - (int64_t)len + 1 >= 0 ? i - (int64_t)len + 1 : 0;
            /* brute force: every label in order, looked up in ck */
            int64_t want = -1;
            for (int64_t j = i; fwd ? j <= e : j >= e; j += fwd ? 1 : -1)
                if (ck[get(lab, w, j)]) {
                    want = j;
                    break;
                }
            uint32_t k = UINT32_MAX;
            const int64_t got = mhq_label_next(lab, w, i, e, fwd, ck, lo, span, &k);
            CHECKF(got == want, "w %u %s from %lld to %lld, run [%u, +%u]: %lld, want %lld", w,
                   fwd ? "fwd" : "bwd", (long long)i, (long long)e, lo, span, (long long)got,
                   (long long)want);
            if (got >= 0 && got == want)
                CHECKF(k == get(lab, w, got), "label %u at %lld, want %u", k, (long long)got,
                       get(lab, w, got));
            scans++;
            hits += want >= 0;
        }
    }
    free(lab);
    printf("idmap_scan: %u scans (%u finding a label) as a label-by-label scan\n", scans, hits);
    return 0;
}
