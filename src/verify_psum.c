/*
 * verify_psum.c - fsck of the piece sums (SPEC.md §9f, section type 12,
 * format 2.4): the section's own sum and structure, then every piece of
 * every covered section against its sum (a reader checks only the pieces
 * its queries read). A covered section whose own sum fails is reported by
 * its own check, not again here.
 */
#include "internal.h"

int mh_psum_fsck(const mh_seg *seg, mh_diag *d) {
    const mh_section *sec;
    if (!mh_section_defined(seg->major, seg->minor, MHF_SECT_PSUM) ||
        mh_seg_section(seg, MHF_SECT_PSUM, &sec) != MH_OK)
        return MH_OK;
    const uint8_t *p = seg->base + sec->offset;
    uint64_t sum = mh_hash(p, (size_t)sec->size);
    MH_CHECK(sum == sec->sum, MH_ECHECKSUM, d, sec->offset,
             "piece sums at byte %llu: checksum mismatch: stored 0x%016llx, "
             "computed 0x%016llx", (unsigned long long)sec->offset,
             (unsigned long long)sec->sum, (unsigned long long)sum);
    mh_psum_tab t;
    MH_TRY(mh_psum_parse(seg, p, sec->size, sec->offset, &t, d));
    uint32_t ne = mhf_load_u32(p + MHF_PSUM_ENTRY_COUNT);
    uint32_t esz = mhf_load_u32(p + MHF_PSUM_ENTRY_SIZE_OFF);
    uint64_t piece = (uint64_t)1 << t.shift;
    for (uint32_t i = 0; i < ne; i++) {
        const uint8_t *e = p + MHF_PSUM_HEADER_SIZE + (uint64_t)i * esz;
        uint32_t type = mhf_load_u32(e + MHF_PSUM_E_TYPE);
        uint64_t first = mhf_load_u64(e + MHF_PSUM_E_FIRST);
        const mh_section *x;
        if (mh_seg_section(seg, type, &x) != MH_OK)
            continue; /* parse refused it */
        for (uint64_t off = 0, j = 0; off < x->size; off += piece, j++) {
            uint64_t len = x->size - off < piece ? x->size - off : piece;
            uint64_t got = mh_hash(seg->base + x->offset + off, (size_t)len);
            uint64_t want = mhf_load_u64(t.sums + (first + j) * 8u);
            uint64_t at = sec->offset + (uint64_t)(t.sums - p) + (first + j) * 8u;
            /* damage in the covered section is its own check's to report
             * (one problem per damage): a piece differs here only when its
             * section's whole sum still matches */
            if (got != want && mh_hash(seg->base + x->offset, (size_t)x->size) != x->sum)
                break;
            MH_CHECK(got == want, MH_ECHECKSUM, d, x->offset + off,
                     "piece sums at byte %llu: section type %u piece %llu "
                     "(bytes %llu-%llu of the file) says 0x%016llx, its "
                     "bytes hash to 0x%016llx", (unsigned long long)at, type,
                     (unsigned long long)j, (unsigned long long)(x->offset + off),
                     (unsigned long long)(x->offset + off + len - 1),
                     (unsigned long long)want, (unsigned long long)got);
        }
    }
    return MH_OK;
}
