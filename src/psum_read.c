/*
 * psum_read.c - the piece sums' reading half (SPEC.md §9f, section type
 * 12, format 2.4): section 12 checked once per open segment (its sum,
 * header, entries against the directory), then each piece of a covered
 * section checked against its sum the first time a query reads bytes of
 * it, and remembered (a bit per piece).
 *
 * So a query opened cold reads the pieces it uses, not a whole index for
 * its checksum: a point query on a 16 M-access segment read the 5 MiB of
 * its address postings before this, a few pieces of 4 KiB now. A section
 * 12 that fails its own checks is not used (the sections it covers are
 * checked whole, as a 2.3 reader does); fsck reports it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int mh_psum_parse(const mh_seg *seg, const uint8_t *p, uint64_t size,
                  uint64_t base_off, mh_psum_tab *out, mh_diag *d) {
    int later = seg->minor > MHF_VERSION_MINOR;
    MH_CHECK(size >= MHF_PSUM_HEADER_SIZE, MH_ECORRUPT, d, base_off,
             "piece sums at byte %llu: %llu bytes, less than its %u-byte "
             "header", (unsigned long long)base_off, (unsigned long long)size,
             MHF_PSUM_HEADER_SIZE);
    uint32_t shift = mhf_load_u32(p + MHF_PSUM_SHIFT);
    uint32_t ne = mhf_load_u32(p + MHF_PSUM_ENTRY_COUNT);
    uint32_t esz = mhf_load_u32(p + MHF_PSUM_ENTRY_SIZE_OFF);
    MH_CHECK(shift >= MHF_PSUM_SHIFT_MIN && shift <= MHF_PSUM_SHIFT_MAX,
             MH_ECORRUPT, d, base_off + MHF_PSUM_SHIFT,
             "piece sums at byte %llu: piece shift %u, not %u ... %u",
             (unsigned long long)(base_off + MHF_PSUM_SHIFT), shift,
             MHF_PSUM_SHIFT_MIN, MHF_PSUM_SHIFT_MAX);
    MH_CHECK(later || mhf_load_u32(p + MHF_PSUM_RESERVED) == 0, MH_ECORRUPT,
             d, base_off + MHF_PSUM_RESERVED,
             "piece sums at byte %llu: reserved header field not zero",
             (unsigned long long)(base_off + MHF_PSUM_RESERVED));
    MH_CHECK(later ? esz >= MHF_PSUM_ENTRY_SIZE : esz == MHF_PSUM_ENTRY_SIZE,
             MH_ECORRUPT, d, base_off + MHF_PSUM_ENTRY_SIZE_OFF,
             "piece sums at byte %llu: entry_size %u, expected %s%u",
             (unsigned long long)(base_off + MHF_PSUM_ENTRY_SIZE_OFF), esz,
             later ? "at least " : "", MHF_PSUM_ENTRY_SIZE);
    uint64_t room = size - MHF_PSUM_HEADER_SIZE;
    MH_CHECK(ne >= 1 && (uint64_t)ne * esz <= room, MH_ECORRUPT, d,
             base_off + MHF_PSUM_ENTRY_COUNT,
             "piece sums at byte %llu: %u entries of %u bytes in %llu bytes",
             (unsigned long long)(base_off + MHF_PSUM_ENTRY_COUNT), ne, esz,
             (unsigned long long)room);
    uint64_t sums_bytes = room - (uint64_t)ne * esz;
    MH_CHECK(sums_bytes % 8u == 0, MH_ECORRUPT, d, base_off,
             "piece sums at byte %llu: %llu bytes of sums, not a multiple of 8",
             (unsigned long long)base_off, (unsigned long long)sums_bytes);
    memset(out, 0, sizeof *out);
    out->shift = shift;
    out->sec_off = base_off;
    out->nsums = sums_bytes / 8u;
    out->sums = p + MHF_PSUM_HEADER_SIZE + (uint64_t)ne * esz;
    const uint8_t *e = p + MHF_PSUM_HEADER_SIZE;
    uint64_t next = 0;
    uint32_t prev_type = 0;
    for (uint32_t i = 0; i < ne; i++, e += esz) {
        uint64_t eoff = base_off + MHF_PSUM_HEADER_SIZE + (uint64_t)i * esz;
        uint32_t type = mhf_load_u32(e + MHF_PSUM_E_TYPE);
        uint64_t first = mhf_load_u64(e + MHF_PSUM_E_FIRST);
        MH_CHECK(later || mhf_load_u32(e + MHF_PSUM_E_RESERVED) == 0,
                 MH_ECORRUPT, d, eoff + MHF_PSUM_E_RESERVED,
                 "piece sums at byte %llu: entry %u: reserved field not zero",
                 (unsigned long long)(eoff + MHF_PSUM_E_RESERVED), i);
        MH_CHECK(type >= MHF_PSUM_TYPE_MIN && type != MHF_SECT_PSUM &&
                     (i == 0 || type > prev_type),
                 MH_ECORRUPT, d, eoff + MHF_PSUM_E_TYPE,
                 "piece sums at byte %llu: entry %u: type %u (types from %u "
                 "up, increasing, never %u)",
                 (unsigned long long)(eoff + MHF_PSUM_E_TYPE), i, type,
                 MHF_PSUM_TYPE_MIN, MHF_SECT_PSUM);
        const mh_section *sec;
        MH_CHECK(mh_seg_section(seg, type, &sec) == MH_OK, MH_ECORRUPT, d,
                 eoff + MHF_PSUM_E_TYPE,
                 "piece sums at byte %llu: entry %u: the segment has no "
                 "section of type %u", (unsigned long long)(eoff + MHF_PSUM_E_TYPE),
                 i, type);
        uint64_t n = (sec->size >> shift) + ((sec->size & (((uint64_t)1 << shift) - 1)) != 0);
        MH_CHECK(first == next && n <= out->nsums - next, MH_ECORRUPT, d,
                 eoff + MHF_PSUM_E_FIRST,
                 "piece sums at byte %llu: entry %u (type %u): first %llu and "
                 "%llu pieces, expected first %llu within %llu sums",
                 (unsigned long long)(eoff + MHF_PSUM_E_FIRST), i, type,
                 (unsigned long long)first, (unsigned long long)n,
                 (unsigned long long)next, (unsigned long long)out->nsums);
        if (type < 16) {
            out->first[type] = first;
            out->count[type] = n;
            out->sec[type] = sec;
        }
        next += n;
        prev_type = type;
    }
    MH_CHECK(next == out->nsums, MH_ECORRUPT, d, base_off,
             "piece sums at byte %llu: %llu sums, its entries cover %llu",
             (unsigned long long)base_off, (unsigned long long)out->nsums,
             (unsigned long long)next);
    return MH_OK;
}

/* The segment's table, checked on first use; NULL: sections are checked
 * whole (no section 12, a 2.3 segment, a failed check, no memory). */
static mh_psum_tab *tab_get(const mh_seg *seg) {
    mh_seg *m = (mh_seg *)seg;
    int st = atomic_load_explicit(&m->psum_state, memory_order_acquire);
    if (st == 1)
        return atomic_load_explicit(&m->psum, memory_order_acquire);
    if (st == 2)
        return NULL;
    const mh_section *sec;
    mh_psum_tab t, *tab = NULL;
    mh_diag d = {0, 0, ""};
    if (!seg->psum_off && mh_section_defined(seg->major, seg->minor, MHF_SECT_PSUM) &&
        mh_seg_section(seg, MHF_SECT_PSUM, &sec) == MH_OK) {
        const uint8_t *p = seg->base + sec->offset;
        int ok = !MH_CHECKSUMS_ENFORCED || mh_seg_hash_whole(seg, p, sec->size) == sec->sum;
        if (ok && mh_psum_parse(seg, p, sec->size, sec->offset, &t, &d) == MH_OK) {
            size_t words = (size_t)((t.nsums + 63) / 64);
            tab = mh_seg_marks_alloc(seg, sizeof *tab + words * sizeof(uint64_t), 0);
            if (tab) {
                *tab = t;
                tab->done = (_Atomic uint64_t *)(void *)(tab + 1);
            }
        }
    }
    if (!tab) {
        atomic_store_explicit(&m->psum_state, 2, memory_order_release);
        return NULL;
    }
    mh_psum_tab *none = NULL;
    if (!atomic_compare_exchange_strong(&m->psum, &none, tab)) {
        free(tab); /* another thread's won: its budget stays spent */
        tab = none;
    }
    atomic_store_explicit(&m->psum_state, 1, memory_order_release);
    return tab;
}

int mh_psum_check(const mh_seg *seg, uint32_t type, uint64_t rel, uint64_t n,
                  const char *what, mh_diag *d) {
    mh_psum_tab *t = tab_get(seg);
    if (!t || type >= 16 || !t->sec[type])
        return 0;
    const mh_section *sec = t->sec[type];
    MH_CHECK(rel <= sec->size && n <= sec->size - rel, MH_ECORRUPT, d,
             sec->offset, "%s at byte %llu: bytes [%llu, +%llu) pass the "
             "section's %llu", what, (unsigned long long)sec->offset,
             (unsigned long long)rel, (unsigned long long)n,
             (unsigned long long)sec->size);
    if (n == 0 || !MH_CHECKSUMS_ENFORCED)
        return 1;
    uint64_t piece = (uint64_t)1 << t->shift;
    for (uint64_t j = rel >> t->shift; j <= (rel + n - 1) >> t->shift; j++) {
        uint64_t k = t->first[type] + j, bit = (uint64_t)1 << (k & 63);
        if (atomic_load_explicit(&t->done[k >> 6], memory_order_acquire) & bit)
            continue;
        uint64_t off = j << t->shift;
        uint64_t len = sec->size - off < piece ? sec->size - off : piece;
        const uint8_t *p = seg->base + sec->offset + off;
        uint64_t got = mh_hash(p, (size_t)len), want = mhf_load_u64(t->sums + k * 8u);
        MH_CHECK(got == want, MH_ECHECKSUM, d, sec->offset + off,
                 "%s at byte %llu: piece %llu (section bytes %llu-%llu) "
                 "checksum mismatch: stored 0x%016llx, computed 0x%016llx",
                 what, (unsigned long long)(sec->offset + off),
                 (unsigned long long)j, (unsigned long long)off,
                 (unsigned long long)(off + len - 1), (unsigned long long)want,
                 (unsigned long long)got);
        atomic_fetch_or_explicit(&t->done[k >> 6], bit, memory_order_release);
    }
    return 1;
}

int mh_psum_check_table(const mh_seg *seg, uint32_t type, uint64_t rel, const uint8_t *p,
                        uint64_t avail, uint32_t head, uint32_t count_off,
                        uint32_t size_off, const char *what, mh_diag *d) {
    int rc = mh_psum_check(seg, type, rel, avail < head ? avail : head, what, d);
    if (rc <= 0 || avail < head)
        return rc;
    uint64_t table = (uint64_t)mhf_load_u32(p + count_off) * mhf_load_u32(p + size_off);
    return mh_psum_check(seg, type, rel, table <= avail - head ? head + table : avail, what, d);
}
