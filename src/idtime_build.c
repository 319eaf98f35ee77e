/*
 * idtime_build.c - the id transitions' writing half (SPEC.md §9g, section
 * 13): per slice, the transition of every K-th id offset (its samples), in
 * groups of S samples, each group Elias-Fano coded against its first
 * sample's transition; at seal, the section's header, group records and
 * data area.
 *
 * The slice's accesses arrive in id order, so the samples are read straight
 * from them. Each group takes the number of low bits L that makes it
 * smallest (count x L low bits plus count + (span >> L) high bits): about
 * 2 + log2(mean transition gap) bits a sample, 0.35-0.5 bytes an access on
 * the real qemu traces at K = 1.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* u64 words of a group of c samples spanning `span` transitions at L low
 * bits: the low part, then at least one word of high bits. */
static uint64_t group_words(uint32_t c, uint64_t span, unsigned L) {
    uint64_t low = ((uint64_t)c * L + 63) / 64;
    /* (span >> L) + c bits, counted without wrapping: a span near 2^64
     * at L = 0 once came out as a few words (fuzz_differential) */
    uint64_t hb = span >> L;
    uint64_t high = hb / 64 + (hb % 64 + c + 63) / 64;
    return low + high;
}

static unsigned best_low_bits(uint32_t c, uint64_t span) {
    unsigned best = 0;
    uint64_t bw = group_words(c, span, 0);
    for (unsigned L = 1; L < 64; L++) {
        uint64_t w = group_words(c, span, L);
        if (w < bw) {
            bw = w;
            best = L;
        }
        if ((span >> L) == 0)
            break; /* more low bits only add words */
    }
    return best;
}

int mh_idtime_build_slice(mh_builder *b, const mh_rec *a, uint32_t n) {
    b->idtime_recs.n = b->idtime_data.n = 0;
    const uint32_t K = b->idtime_k, S = MHF_IDTIME_S_DEFAULT;
    if (K == 0 || n == 0)
        return MH_OK;
    const uint32_t ns = (uint32_t)(((uint64_t)n + K - 1) / K);
    for (uint64_t j64 = 0; j64 < ns; j64 += S) {
        const uint32_t j0 = (uint32_t)j64;
        const uint32_t c = ns - j0 < S ? ns - j0 : S;
        const uint64_t t0 = a[(size_t)j0 * K].transition;
        const uint64_t span = a[(size_t)(j0 + c - 1) * K].transition - t0;
        const unsigned L = best_low_bits(c, span);
        const uint64_t words = group_words(c, span, L);
        const uint64_t lowords = ((uint64_t)c * L + 63) / 64;
        /* the best L keeps span >> L near c: about c (L + 2) / 64 words */
        if (words > b->idtime_cap) {
            uint64_t *p = realloc(b->idtime_w, (size_t)words * sizeof *p);
            if (!p)
                return MH_ENOMEM;
            b->idtime_w = p;
            b->idtime_cap = (uint32_t)words;
        }
        uint64_t *w = b->idtime_w;
        memset(w, 0, (size_t)words * sizeof *w);
        uint64_t *hi = w + lowords;
        const uint64_t mask = L ? (UINT64_MAX >> (64 - L)) : 0;
        for (uint32_t i = 0; i < c; i++) {
            const uint64_t v = a[(size_t)(j0 + i) * K].transition - t0;
            if (L) {
                const uint64_t pos = (uint64_t)i * L, lo = v & mask;
                const unsigned off = (unsigned)(pos & 63);
                w[pos >> 6] |= lo << off;
                if (off + L > 64)
                    w[(pos >> 6) + 1] |= lo >> (64 - off);
            }
            const uint64_t hp = (v >> L) + i;
            hi[hp >> 6] |= UINT64_C(1) << (hp & 63);
        }
        uint8_t rec[MHF_IDTIME_GROUP_SIZE] = {0};
        mhf_store_u64(rec + MHF_IDTIME_G_DATA_OFFSET, b->idtime_data.n);
        mhf_store_u32(rec + MHF_IDTIME_G_FIRST, j0);
        mhf_store_u64(rec + MHF_IDTIME_G_T_FIRST, t0);
        mhf_store_u32(rec + MHF_IDTIME_G_WORDS, (uint32_t)words);
        rec[MHF_IDTIME_G_LOW_BITS] = (uint8_t)L;
        MH_TRY(mh_buf_reserve(&b->idtime_data, (size_t)words * 8u));
        uint8_t *out = b->idtime_data.p + b->idtime_data.n;
        for (uint64_t k = 0; k < words; k++)
            mhf_store_u64(out + 8 * k, w[k]);
        b->idtime_data.n += (size_t)words * 8u;
        MH_TRY(mh_buf_append(&b->idtime_recs, rec, sizeof rec));
    }
    return MH_OK;
}

int mh_idtime_serialize(uint32_t k, const uint8_t *recs, uint32_t nrec,
                        const uint8_t *data, uint64_t data_bytes, mh_buf *out) {
    uint8_t h[MHF_IDTIME_HEADER_SIZE] = {0};
    mhf_store_u32(h + MHF_IDTIME_STRIDE, k);
    mhf_store_u32(h + MHF_IDTIME_GROUP_SAMPLES, MHF_IDTIME_S_DEFAULT);
    mhf_store_u32(h + MHF_IDTIME_GROUP_COUNT, nrec);
    mhf_store_u32(h + MHF_IDTIME_GROUP_SIZE_OFF, MHF_IDTIME_GROUP_SIZE);
    mhf_store_u64(h + MHF_IDTIME_DATA_BYTES, data_bytes);
    MH_TRY(mh_buf_reserve(out, sizeof h + (size_t)nrec * MHF_IDTIME_GROUP_SIZE +
                                   (size_t)data_bytes));
    MH_TRY(mh_buf_append(out, h, sizeof h));
    MH_TRY(mh_buf_append(out, recs, (size_t)nrec * MHF_IDTIME_GROUP_SIZE));
    return mh_buf_append(out, data, (size_t)data_bytes);
}
