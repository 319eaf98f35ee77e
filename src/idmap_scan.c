/*
 * idmap_scan.c - the id path's label scan (query_idmap.c, SPEC.md 14 step
 * 2b): the next label, in query order, naming a chunk that may hold a
 * match. A one-op question's chunks able to match are a run of chunk
 * indices, [lo, lo + span] (chunks in (op, address) order), so a label
 * outside it names none: sixteen 1-byte labels (eight 2-byte ones) are
 * passed by a compare and a mask where the walk looked each one up in
 * the chunk classes. gzip's writes are 1/32 to 1/8 of a slice's rows: a
 * whole-space write question there passed ~3,000 labels, 11,000 of its
 * 17,900 instructions (callgrind). Never changes an answer: every label
 * inside the run is still looked up.
 */
#include "query_int.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Label j of lab, w bytes each (little-endian). */
static inline uint32_t label_at(const uint8_t *lab, unsigned w, int64_t j) {
    const uint8_t *p = lab + (size_t)j * w;
    return w == 1 ? p[0] : w == 2 ? mhf_load_u16(p) : mhf_load_u32(p);
}

#if defined(__SSE2__)
/* Lanes of 16 bytes at p inside [lo, lo + span]: a bit per byte (two per
 * 2-byte lane), from the saturating difference x - lo - span (0 iff
 * inside, the subtraction of lo wrapping a lane below it past span). */
static inline unsigned inside_mask(const uint8_t *p, unsigned w, __m128i lo, __m128i span) {
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i z = _mm_setzero_si128();
    if (w == 1)
        return (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(v, lo), span), z));
    return (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi16(_mm_subs_epu16(_mm_sub_epi16(v, lo), span), z));
}
#endif

int64_t mhq_label_next(const uint8_t *lab, unsigned w, int64_t i, int64_t e, int fwd,
                       const uint8_t *ck, uint32_t lo, uint32_t span, uint32_t *k) {
    /* the run within the labels' width: lanes compare that many bits */
    const uint32_t wmax = w == 1 ? 0xffu : w == 2 ? 0xffffu : UINT32_MAX;
    if (lo > wmax)
        return -1; /* no label reaches the run */
    if (span > wmax - lo)
        span = wmax - lo;
#if defined(__SSE2__)
    if (w <= 2) {
        const unsigned per = 16u / w;
        const __m128i vlo = w == 1 ? _mm_set1_epi8((char)(uint8_t)lo)
                                   : _mm_set1_epi16((short)(uint16_t)lo);
        const __m128i vspan = w == 1 ? _mm_set1_epi8((char)(uint8_t)span)
                                     : _mm_set1_epi16((short)(uint16_t)span);
        if (fwd) {
            for (; e - i + 1 >= (int64_t)per; i += per) {
                unsigned m = inside_mask(lab + (size_t)i * w, w, vlo, vspan);
                for (; m; m &= m - 1u) {
                    const int64_t j = i + __builtin_ctz(m) / w;
                    const uint32_t l = label_at(lab, w, j);
                    if (ck[l]) {
                        *k = l;
                        return j;
                    }
                    if (w == 2)
                        m &= m - 1u; /* the lane's second bit */
                }
            }
        } else {
            for (; i - e + 1 >= (int64_t)per; i -= per) {
                const int64_t base = i - per + 1;
                unsigned m = inside_mask(lab + (size_t)base * w, w, vlo, vspan);
                while (m) {
                    const unsigned top = 31u - (unsigned)__builtin_clz(m);
                    const int64_t j = base + top / w;
                    const uint32_t l = label_at(lab, w, j);
                    if (ck[l]) {
                        *k = l;
                        return j;
                    }
                    m &= ~(w == 1 ? 1u << top : 3u << (top - 1u));
                }
            }
        }
    }
#endif
    /* the rest one at a time (all of them without SSE2, and 4-byte labels) */
    for (; fwd ? i <= e : i >= e; i += fwd ? 1 : -1) {
        const uint32_t l = label_at(lab, w, i);
        if (l - lo <= span && ck[l]) {
            *k = l;
            return i;
        }
    }
    return -1;
}
