/*
 * idmap_labels.c - the id map's label check (idmap_read.c,
 * mh_idmap_decode_packed) against a brute-force one: a group decodes when
 * and only when every label is below the slice's chunk_count, and a bad
 * group's detail names the first bad label and its id offset. The check
 * tests 8 bytes at a time (lanes of 1 or 2 bytes, two formulas either side
 * of half the lane's range), so every chunk_count around the lane limits,
 * a bad label in every position of a word and in the tail, and counts that
 * are not a multiple of the word are tried.
 */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int failures;

#define EXPECT(c, ...)                                                         \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* One group of cnt labels of width w (little-endian) as an id map view of
 * one group record; decodes it with mh_idmap_decode_packed for nck chunks
 * and checks the outcome against the labels. */
static void one(const uint32_t *lab, uint32_t cnt, unsigned w, uint32_t nck) {
    size_t raw = (size_t)cnt * w;
    uint8_t *packed = malloc(raw + 1), *out = malloc(raw + 1);
    int cap = LZ4_compressBound((int)raw);
    uint8_t *area = calloc(1, MHF_IDMAP_HEADER_SIZE + MHF_IDMAP_GROUP_SIZE + (size_t)cap);
    if (!packed || !out || !area) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < cnt; i++)
        for (unsigned b = 0; b < w; b++)
            packed[(size_t)i * w + b] = (uint8_t)(lab[i] >> (8 * b));
    uint8_t *rec = area + MHF_IDMAP_HEADER_SIZE;
    uint8_t *data = rec + MHF_IDMAP_GROUP_SIZE;
    int cs = LZ4_compress_default((const char *)packed, (char *)data, (int)raw, cap);
    EXPECT(cs > 0, "LZ4 compress");
    mhf_store_u32(rec + MHF_IDMAP_G_SLICE, 3);
    mhf_store_u32(rec + MHF_IDMAP_G_ID_OFFSET, 8192);
    mhf_store_u32(rec + MHF_IDMAP_G_COMP_SIZE, (uint32_t)cs);
    mhf_store_u32(rec + MHF_IDMAP_G_COUNT, cnt);
    rec[MHF_IDMAP_G_WIDTH] = (uint8_t)w;
    mh_idmap_view v = {.recs = rec, .data = data, .g = 8192, .ngroups = 1,
                       .group_size = MHF_IDMAP_GROUP_SIZE, .data_bytes = (uint64_t)cs,
                       .off = 1000};
    uint32_t first_bad = UINT32_MAX;
    for (uint32_t i = 0; i < cnt && first_bad == UINT32_MAX; i++)
        if (lab[i] >= nck)
            first_bad = i;
    mh_diag d = {0, 0, ""};
    unsigned width = 0;
    int rc = mh_idmap_decode_packed(&v, 0, nck, out, &width, &d);
    if (first_bad == UINT32_MAX) {
        EXPECT(rc == MH_OK, "w %u nck %u cnt %u: %d (%s), every label is a chunk", w, nck,
               cnt, rc, d.msg);
        EXPECT(rc != MH_OK || (width == w && memcmp(out, packed, raw) == 0),
               "w %u nck %u cnt %u: labels not as stored", w, nck, cnt);
    } else {
        char want[128];
        snprintf(want, sizeof want, "label %u at id offset %u of slice 3 ", lab[first_bad],
                 8192 + first_bad);
        EXPECT(rc == MH_ECORRUPT && strstr(d.msg, want),
               "w %u nck %u cnt %u: %d (%s), expected MH_ECORRUPT naming \"%s\"", w, nck,
               cnt, rc, d.msg, want);
    }
    free(packed);
    free(out);
    free(area);
}

int main(void) {
    static uint32_t lab[8192 + 7];
    const uint32_t cnts[] = {1, 7, 8, 9, 15, 16, 17, 1000, 8192};
    /* chunk counts around the lane limits and the formulas' switch */
    const uint32_t ncks1[] = {1, 2, 3, 64, 127, 128, 129, 130, 200, 254, 255, 256};
    const uint32_t ncks2[] = {1, 255, 256, 257, 1000, 32767, 32768, 32769, 40000, 65535, 65536};
    for (unsigned w = 1; w <= 2; w++) {
        const uint32_t *ncks = w == 1 ? ncks1 : ncks2;
        size_t nn = w == 1 ? sizeof ncks1 / sizeof *ncks1 : sizeof ncks2 / sizeof *ncks2;
        for (size_t a = 0; a < nn; a++) {
            uint32_t nck = ncks[a];
            for (size_t ci = 0; ci < sizeof cnts / sizeof *cnts; ci++) {
                uint32_t cnt = cnts[ci];
                /* every label good, each a random chunk, the largest one
                 * included (nck - 1: the boundary) */
                for (uint32_t i = 0; i < cnt; i++)
                    lab[i] = next_u32() % nck;
                lab[next_u32() % cnt] = nck - 1;
                one(lab, cnt, w, nck);
                /* one bad label: nck itself, the lane's largest, and one
                 * with the lane's top bit clear where nck is above half
                 * (the formula's other side), at positions covering every
                 * lane of a word and the tail */
                const uint32_t lim = w == 1 ? 256u : 65536u;
                uint32_t bads[3] = {nck, lim - 1, nck + (lim - nck) / 2};
                for (int bi = 0; bi < 3; bi++) {
                    if (bads[bi] >= lim || bads[bi] < nck)
                        continue;
                    for (uint32_t pos = 0; pos < cnt && pos < 24; pos++) {
                        uint32_t p = cnt > 24 ? (pos * 997 + (pos & 1) * (cnt - 24)) % cnt
                                              : pos;
                        uint32_t keep = lab[p];
                        lab[p] = bads[bi];
                        one(lab, cnt, w, nck);
                        lab[p] = keep;
                    }
                    uint32_t keep = lab[cnt - 1];
                    lab[cnt - 1] = bads[bi];
                    one(lab, cnt, w, nck);
                    lab[cnt - 1] = keep;
                }
            }
        }
    }
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("idmap_labels: ok\n");
    return 0;
}
