/*
 * stream_table.c - the layout sections 15 and 17 share (SPEC.md §9d.2
 * stream postings, §9d.3 stream id runs): a 16-byte header (u32
 * entry_count, u32 entry_size, u64 data_bytes), entries {u32 stream
 * strictly increasing, u32 reserved, u64 body offset, u64 body bytes (0:
 * none)}, then the bodies back to back. One parser, one lookup; each
 * section checks its own bodies through a callback.
 */
#include "internal.h"

_Static_assert(MHF_SPOST_COUNT == MHF_SRUNS_COUNT &&
                   MHF_SPOST_ENTRY_SIZE_OFF == MHF_SRUNS_ENTRY_SIZE_OFF &&
                   MHF_SPOST_DATA_BYTES == MHF_SRUNS_DATA_BYTES &&
                   MHF_SPOST_HEADER_SIZE == MHF_SRUNS_HEADER_SIZE &&
                   MHF_SPOST_ENTRY_SIZE == MHF_SRUNS_ENTRY_SIZE &&
                   MHF_SPOST_E_STREAM == MHF_SRUNS_E_STREAM &&
                   MHF_SPOST_E_RESERVED == MHF_SRUNS_E_RESERVED &&
                   MHF_SPOST_E_OFFSET == MHF_SRUNS_E_OFFSET &&
                   MHF_SPOST_E_BYTES == MHF_SRUNS_E_BYTES,
               "sections 15 and 17 share their header and entries");

#define ST_FAIL(at, fmt, ...)                                                  \
    mh_diag_fail(d, MH_ECORRUPT, (at), "%s at byte %llu: " fmt, what,          \
                 (unsigned long long)(at), __VA_ARGS__)

int mh_stream_table_parse(const uint8_t *p, uint64_t size, uint64_t off, int later,
                          const char *what, mh_stream_body_fn body, void *ctx,
                          mh_stream_table *out, mh_diag *d) {
    if (size < MHF_SPOST_HEADER_SIZE)
        return mh_diag_fail(d, MH_ECORRUPT, off, "%s at byte %llu: %llu bytes, less than "
                            "its %u-byte header", what, (unsigned long long)off,
                            (unsigned long long)size, MHF_SPOST_HEADER_SIZE);
    uint32_t n = mhf_load_u32(p + MHF_SPOST_COUNT);
    uint32_t esz = mhf_load_u32(p + MHF_SPOST_ENTRY_SIZE_OFF);
    uint64_t db = mhf_load_u64(p + MHF_SPOST_DATA_BYTES);
    if (n < 1 || n > (uint32_t)MH_STREAM_MAX + 1u)
        return ST_FAIL(off + MHF_SPOST_COUNT, "%u entries, not 1 ... %u", n,
                       (unsigned)MH_STREAM_MAX + 1u);
    if (later ? esz < MHF_SPOST_ENTRY_SIZE : esz != MHF_SPOST_ENTRY_SIZE)
        return ST_FAIL(off + MHF_SPOST_ENTRY_SIZE_OFF, "entry size %u, this reader knows %u",
                       esz, MHF_SPOST_ENTRY_SIZE);
    uint64_t room = size - MHF_SPOST_HEADER_SIZE;
    if ((uint64_t)n * esz > room || db != room - (uint64_t)n * esz)
        return ST_FAIL(off + MHF_SPOST_DATA_BYTES, "%u entries of %u bytes and %llu bytes "
                       "of bodies in a section of %llu bytes", n, esz,
                       (unsigned long long)db, (unsigned long long)size);
    out->n = n;
    out->esz = esz;
    out->ents = p + MHF_SPOST_HEADER_SIZE;
    out->data = out->ents + (size_t)n * esz;
    out->data_off = off + MHF_SPOST_HEADER_SIZE + (uint64_t)n * esz;
    uint64_t at = 0;
    int any = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = out->ents + (size_t)i * esz;
        uint64_t eo = off + MHF_SPOST_HEADER_SIZE + (uint64_t)i * esz;
        uint32_t st = mhf_load_u32(e + MHF_SPOST_E_STREAM);
        uint64_t bo = mhf_load_u64(e + MHF_SPOST_E_OFFSET);
        uint64_t bn = mhf_load_u64(e + MHF_SPOST_E_BYTES);
        if (st > MH_STREAM_MAX ||
            (i > 0 && st <= mhf_load_u32(e - esz + MHF_SPOST_E_STREAM)))
            return ST_FAIL(eo, "entry %u: stream %u, not above the entry before it and "
                           "at most %u", i, st, (unsigned)MH_STREAM_MAX);
        if (!later && mhf_load_u32(e + MHF_SPOST_E_RESERVED) != 0)
            return ST_FAIL(eo + MHF_SPOST_E_RESERVED, "entry %u: reserved field is not 0", i);
        if (bo != at || bn > db - at)
            return ST_FAIL(eo + MHF_SPOST_E_OFFSET, "entry %u: body at %llu of %llu bytes, "
                           "where the bodies before it end at %llu of %llu", i,
                           (unsigned long long)bo, (unsigned long long)bn,
                           (unsigned long long)at, (unsigned long long)db);
        at += bn;
        any |= bn > 0;
        if (bn)
            MH_TRY(body(ctx, out->data + bo, bn, out->data_off + bo, d));
    }
    if (at != db)
        return ST_FAIL(off + MHF_SPOST_DATA_BYTES, "the bodies end at %llu of its %llu bytes",
                       (unsigned long long)at, (unsigned long long)db);
    if (!any)
        return mh_diag_fail(d, MH_ECORRUPT, off, "%s at byte %llu: no entry has a body",
                            what, (unsigned long long)off);
    return MH_OK;
}

uint32_t mh_stream_table_entry(const uint8_t *ents, uint32_t n, uint32_t esz, uint32_t stream) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (mhf_load_u32(ents + (size_t)mid * esz + MHF_SPOST_E_STREAM) < stream)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && mhf_load_u32(ents + (size_t)lo * esz + MHF_SPOST_E_STREAM) == stream ? lo
                                                                                          : n;
}
