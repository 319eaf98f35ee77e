/*
 * psum_build.c - the piece sums' writing half (SPEC.md §9f, section type
 * 12, format 2.4): for each covered section, the XXH3-64 of every 2^p-byte
 * piece of its bytes, so that a reader checks the pieces a query reads
 * instead of the whole section before its first use (a cold point query
 * read the whole address postings, ~5 MiB of a 16 M-access segment, for
 * their checksum).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int mh_psum_serialize(uint32_t shift, const mh_psum_input *in, size_t n,
                      mh_buf *out) {
    uint64_t piece = (uint64_t)1 << shift, nsums = 0;
    for (size_t i = 0; i < n; i++)
        nsums += (in[i].size + piece - 1) >> shift;
    size_t bytes = MHF_PSUM_HEADER_SIZE + n * MHF_PSUM_ENTRY_SIZE + (size_t)nsums * 8u;
    MH_TRY(mh_buf_reserve(out, bytes));
    uint8_t *p = (uint8_t *)out->p + out->n;
    memset(p, 0, bytes);
    mhf_store_u32(p + MHF_PSUM_SHIFT, shift);
    mhf_store_u32(p + MHF_PSUM_ENTRY_COUNT, (uint32_t)n);
    mhf_store_u32(p + MHF_PSUM_ENTRY_SIZE_OFF, MHF_PSUM_ENTRY_SIZE);
    uint8_t *e = p + MHF_PSUM_HEADER_SIZE;
    uint8_t *s = e + n * MHF_PSUM_ENTRY_SIZE;
    uint64_t first = 0;
    for (size_t i = 0; i < n; i++, e += MHF_PSUM_ENTRY_SIZE) {
        mhf_store_u32(e + MHF_PSUM_E_TYPE, in[i].type);
        mhf_store_u64(e + MHF_PSUM_E_FIRST, first);
        const uint8_t *b = in[i].p;
        for (uint64_t off = 0; off < in[i].size; off += piece, first++) {
            uint64_t len = in[i].size - off < piece ? in[i].size - off : piece;
            mhf_store_u64(s + first * 8u, mh_hash(b + off, (size_t)len));
        }
    }
    out->n += bytes;
    return MH_OK;
}
