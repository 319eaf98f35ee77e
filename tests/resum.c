/*
 * resum.c - sections edited in place with their checksums made right again
 * (resum.h). Written from SPEC.md §5.2 and §9f.
 */
#include "resum.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

/* The directory entry of `type`, NULL if none. */
static uint8_t *dir_entry_of(uint8_t *b, uint32_t type) {
    uint32_t ndir = mhf_load_u32(b + MHF2_SEG_DIR_COUNT);
    uint64_t doff = mhf_load_u64(b + MHF2_SEG_DIR_OFF);
    uint32_t rsz = mhf_load_u32(b + MHF2_SEG_DIR_RECSZ);
    for (uint32_t i = 0; i < ndir; i++) {
        uint8_t *e = b + doff + (size_t)i * rsz;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) == type)
            return e;
    }
    return NULL;
}

void tu_resum_pieces(uint8_t *b, size_t n) {
    (void)n;
    uint8_t *pe = dir_entry_of(b, MHF_SECT_PSUM);
    if (!pe || mhf_load_u16(b + MHF_SEG_MINOR) < 4)
        return;
    uint8_t *p = b + mhf_load_u64(pe + MHF2_DIR_OFFSET);
    uint32_t shift = mhf_load_u32(p + MHF_PSUM_SHIFT);
    uint32_t ne = mhf_load_u32(p + MHF_PSUM_ENTRY_COUNT);
    uint32_t esz = mhf_load_u32(p + MHF_PSUM_ENTRY_SIZE_OFF);
    uint8_t *sums = p + MHF_PSUM_HEADER_SIZE + (size_t)ne * esz;
    uint64_t piece = (uint64_t)1 << shift;
    for (uint32_t i = 0; i < ne; i++) {
        const uint8_t *e = p + MHF_PSUM_HEADER_SIZE + (size_t)i * esz;
        uint8_t *x = dir_entry_of(b, mhf_load_u32(e + MHF_PSUM_E_TYPE));
        CHECK(x);
        uint64_t first = mhf_load_u64(e + MHF_PSUM_E_FIRST);
        const uint8_t *s = b + mhf_load_u64(x + MHF2_DIR_OFFSET);
        uint64_t size = mhf_load_u64(x + MHF2_DIR_BYTES);
        for (uint64_t off = 0, j = 0; off < size; off += piece, j++) {
            uint64_t len = size - off < piece ? size - off : piece;
            mhf_store_u64(sums + (first + j) * 8u, mh_hash(s + off, (size_t)len));
        }
    }
    mhf_store_u64(pe + MHF2_DIR_SUM, mh_hash(p, (size_t)mhf_load_u64(pe + MHF2_DIR_BYTES)));
}

void tu_resum_segment(const char *dir, const char *name, uint32_t type,
                      void (*edit)(uint8_t *sec, uint64_t size, void *ctx),
                      void *ctx) {
    char path[600];
    tu_join(path, sizeof path, dir, name);
    size_t len;
    uint8_t *b = tu_read_file(path, &len);
    CHECK(b);
    uint32_t ndir = mhf_load_u32(b + MHF2_SEG_DIR_COUNT);
    uint64_t doff = mhf_load_u64(b + MHF2_SEG_DIR_OFF);
    int found = 0;
    for (uint32_t i = 0; i < ndir; i++) {
        uint8_t *e = b + doff + (size_t)i * MHF2_DIR_SIZE;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) != type)
            continue;
        uint64_t off = mhf_load_u64(e + MHF2_DIR_OFFSET);
        uint64_t size = mhf_load_u64(e + MHF2_DIR_BYTES);
        edit(b + off, size, ctx);
        mhf_store_u64(e + MHF2_DIR_SUM, mh_hash(b + off, size));
        found = 1;
    }
    CHECK(found);
    if (type != MHF_SECT_PSUM) /* an edit of the piece sums stays as made */
        tu_resum_pieces(b, len);
    mhf_store_u64(b + MHF2_SEG_DIR_SUM, mh_hash(b + doff, (size_t)ndir * MHF2_DIR_SIZE));
    uint64_t hsum = mh_hash(b, MHF_SEG_HEADER_SUM);
    mhf_store_u64(b + MHF_SEG_HEADER_SUM, hsum);
    tu_write_file(path, b, len);
    free(b);
    mh_manifest m;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_manifest_load(dir, &m, &d));
    for (size_t i = 0; i < m.nrecs; i++) {
        char nm[MHF_SEGMENT_NAME_LEN + 1];
        mh_segment_name(nm, m.recs[i].seq);
        if (!strcmp(nm, name))
            m.recs[i].header_sum = hsum;
    }
    CHECK_OK(mh_manifest_store(dir, &m, &d));
    mh_manifest_free(&m);
}

tu_problems tu_damaged_copy(const char *dir, const char *tag, const char *name, uint32_t type,
                            void (*edit)(uint8_t *sec, uint64_t size, void *ctx), char *copy,
                            size_t cap) {
    tu_mkdtemp(copy, cap, tag);
    tu_copy_dir(dir, copy);
    tu_resum_segment(copy, name, type, edit, NULL);
    return tu_fsck(copy);
}
