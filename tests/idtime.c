/*
 * idtime.c - the id transitions' coding (SPEC.md §9g; idtime_build.c,
 * idtime_read.c) against brute force: groups written by the builder from
 * transitions of many shapes (all equal, steps of 1, random gaps small and
 * huge, a burst after a long gap, values near 2^64, a span of all 2^64)
 * and strides 1 .. 8
 * decode to exactly the samples, and mh_idtime_first_at_least gives, for
 * every sample's transition, its neighbours and random ones, the smallest
 * sample at or above it, as a scan does (with the popcnt instruction where
 * the CPU has it, and as built for every x86-64). Then damages: every single-bit
 * change of a group's words is either reported by mh_idtime_decode or
 * leaves it decoding to the same samples (none can), and counts of set
 * high bits, padding bits and the first sample are each checked.
 */
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
            if (++failures > 20)                                               \
                exit(1);                                                       \
        }                                                                      \
    } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_u64(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The view of one slice's groups as the builder made them (slice 0). */
static void view_of(const mh_builder *b, uint32_t k, mh_idtime_view *v) {
    *v = (mh_idtime_view){.recs = b->idtime_recs.p, .data = b->idtime_data.p, .k = k,
                          .s = MHF_IDTIME_S_DEFAULT,
                          .ngroups = (uint32_t)(b->idtime_recs.n / MHF_IDTIME_GROUP_SIZE),
                          .group_size = MHF_IDTIME_GROUP_SIZE,
                          .data_bytes = b->idtime_data.n, .off = 0, .lazy = NULL};
}

static uint32_t brute(const mh_rec *a, uint32_t n, uint32_t k, uint64_t T) {
    uint32_t ns = (n + k - 1) / k;
    for (uint32_t j = 0; j < ns; j++)
        if (a[(size_t)j * k].transition >= T)
            return j;
    return ns;
}

/* The search, with both builds of its bit counting (popcnt where the CPU
 * has it, and the one for every x86-64): they must agree. */
static uint32_t at_least(const mh_idtime_view *v, uint32_t n, uint64_t T) {
    uint32_t j[2] = {UINT32_MAX, UINT32_MAX};
    for (int generic = 0; generic < 2; generic++) {
        mh_diag d = {0, 0, ""};
        mh_idtime_no_popcnt = generic;
        int rc = mh_idtime_first_at_least(v, 0, n, T, &j[generic], &d);
        EXPECT(rc == MH_OK, "search: %d %s", rc, d.msg);
    }
    mh_idtime_no_popcnt = 0;
    EXPECT(j[0] == j[1], "T %llu: sample %u with popcnt, %u without",
           (unsigned long long)T, j[0], j[1]);
    return j[0];
}

static void check_shape(const char *name, mh_rec *a, uint32_t n, uint32_t k) {
    mh_builder b;
    memset(&b, 0, sizeof b);
    b.idtime_k = k;
    if (mh_idtime_build_slice(&b, a, n) != MH_OK) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    mh_idtime_view v;
    view_of(&b, k, &v);
    const uint32_t ns = (n + k - 1) / k;
    EXPECT(v.ngroups == (ns + v.s - 1) / v.s, "%s k %u: %u groups for %u samples", name, k,
           v.ngroups, ns);
    uint64_t *t = malloc((size_t)v.s * sizeof *t);
    for (uint32_t g = 0; g < v.ngroups; g++) {
        uint32_t j0 = g * v.s, c = ns - j0 < v.s ? ns - j0 : v.s;
        mh_diag d = {0, 0, ""};
        int rc = mh_idtime_decode(&v, g, c, t, &d);
        EXPECT(rc == MH_OK, "%s k %u group %u: %d %s", name, k, g, rc, d.msg);
        for (uint32_t i = 0; rc == MH_OK && i < c; i++)
            EXPECT(t[i] == a[(size_t)(j0 + i) * k].transition,
                   "%s k %u sample %u: %llu, expected %llu", name, k, j0 + i,
                   (unsigned long long)t[i],
                   (unsigned long long)a[(size_t)(j0 + i) * k].transition);
        /* every single-bit change of the group's words: reported, or the
         * samples come out differently from what fsck compares */
        const uint8_t *r = v.recs + (size_t)g * v.group_size;
        uint8_t *w = b.idtime_data.p + mhf_load_u64(r + MHF_IDTIME_G_DATA_OFFSET);
        uint32_t words = mhf_load_u32(r + MHF_IDTIME_G_WORDS);
        for (uint32_t bit = 0; bit < words * 64 && g < 2; bit += 1 + (uint32_t)(next_u64() % 7)) {
            w[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            rc = mh_idtime_decode(&v, g, c, t, &d);
            int same = rc == MH_OK;
            for (uint32_t i = 0; same && i < c; i++)
                same = t[i] == a[(size_t)(j0 + i) * k].transition;
            EXPECT(!same, "%s k %u group %u: bit %u flipped, same samples", name, k, g, bit);
            w[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
    }
    free(t);
    /* the search against a scan, at every sample's transition and beside
     * it: all of them up to SWEEP samples; past that (the scan costs j a
     * probe, the whole sweep ns^2: 40,000 samples took two minutes under
     * ASan) the first and last SWEEP / 32 and a seeded draw between */
    enum { SWEEP = 4096 };
    const uint32_t sweep = ns <= SWEEP ? ns : SWEEP, ends = SWEEP / 32;
    for (uint32_t c = 0; c < sweep; c++) {
        uint32_t j = ns <= SWEEP || c < ends ? c
                     : c >= SWEEP - ends  ? ns - (SWEEP - c)
                                          : ends + (uint32_t)(next_u64() % (ns - 2 * ends));
        uint64_t tj = a[(size_t)j * k].transition;
        uint64_t probe[3] = {tj, tj - 1, tj + 1};
        for (int q = 0; q < 3; q++) {
            uint32_t want = brute(a, n, k, probe[q]);
            uint32_t got = at_least(&v, n, probe[q]);
            EXPECT(got == want, "%s k %u T %llu: sample %u, expected %u", name, k,
                   (unsigned long long)probe[q], got, want);
        }
    }
    uint64_t lo = a[0].transition, hi = a[n - 1].transition;
    /* random transitions, fewer where the scan is long (the sweep above
     * has seen every sample's neighbourhood of the small shapes) */
    const int nrand = ns > SWEEP ? 400 : 2000;
    for (int q = 0; q < nrand; q++) {
        uint64_t T = hi > lo ? lo + next_u64() % (hi - lo + 2) : lo + q % 3;
        if (q < 4)
            T = (uint64_t[]){0, 1, UINT64_MAX, UINT64_MAX - 1}[q];
        uint32_t want = brute(a, n, k, T), got = at_least(&v, n, T);
        EXPECT(got == want, "%s k %u T %llu: sample %u, expected %u", name, k,
               (unsigned long long)T, got, want);
    }
    mh_buf_free(&b.idtime_recs);
    mh_buf_free(&b.idtime_data);
    free(b.idtime_w);
}

int main(void) {
    const uint32_t sizes[] = {1, 2, 63, 64, 1023, 1024, 1025, 3000, 40000};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        uint32_t n = sizes[si];
        mh_rec *a = calloc(n, sizeof *a);
        for (int shape = 0; shape < 8; shape++) {
            const char *names[] = {"equal", "steps", "small gaps", "huge gaps",
                                   "burst", "near 2^64", "mixed", "0 to 2^64 - 1"};
            uint64_t t = shape == 5 ? UINT64_MAX - 4ull * n - 10 : shape == 7 ? 0 : 1000;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t r = next_u64();
                switch (shape) {
                case 1: t += 1; break;
                case 2: t += r % 5; break;
                case 3: t += r % (1ull << 40); break;
                case 4: t += i == n / 2 ? (1ull << 50) : r % 3; break;
                case 5: t += r % 4; break;
                case 6: t += (r & 1) ? r % 3 : (r >> 8) % 100000; break;
                /* a span of about 2^64 (fuzz_differential found the high
                 * part's size wrapping at L = 0) */
                case 7: t = i == 0 ? 0 : i == n - 1 ? UINT64_MAX : t + r % (UINT64_MAX / n); break;
                default: break;
                }
                a[i].transition = t;
            }
            for (uint32_t k = 1; k <= 8; k *= 2)
                check_shape(names[shape], a, n, k);
        }
        free(a);
    }
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("idtime: every shape decodes and searches as a scan does\n");
    return failures ? 1 : 0;
}
