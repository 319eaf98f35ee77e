/*
 * manifest.c - the MANIFEST file: the list of committed segments
 * (SPEC.md "Manifest"). It is replaced atomically on every commit, so a
 * reader always sees one whole committed state.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int mh_manifest_writable(const mh_manifest *m, mh_diag *d) {
    MH_CHECK(m->major == MHF_VERSION_MAJOR, MH_EVERSION, d, MHF_MAN_MAJOR,
             "format %u.%u store: run memhist upgrade", m->major, m->minor);
    return MH_OK;
}

int mh_manifest_parse(const uint8_t *p, size_t size, mh_manifest *out,
                      mh_diag *d) {
    memset(out, 0, sizeof *out);
    MH_CHECK(size >= 8 && memcmp(p, MHF_MAN_MAGIC, 8) == 0, MH_ENOTSTORE, d, 0,
             "MANIFEST does not start with the memhist manifest magic");
    MH_CHECK(size >= MHF_MAN_HEADER_SIZE + 8, MH_ETRUNCATED, d, size,
             "MANIFEST is %zu bytes, shorter than its header", size);
    uint32_t bom = mhf_load_u32(p + MHF_MAN_BOM);
    MH_CHECK(bom == MHF_BYTE_ORDER_MARK, MH_EVERSION, d, MHF_MAN_BOM,
             "MANIFEST byte-order mark %08x: not little-endian", bom);
    uint16_t major = mhf_load_u16(p + MHF_MAN_MAJOR);
    uint16_t minor = mhf_load_u16(p + MHF_MAN_MINOR);
    MH_CHECK(major == MHF_VERSION_MAJOR || major == MHF1_VERSION_MAJOR,
             MH_EVERSION, d, MHF_MAN_MAJOR,
             "MANIFEST format version %u.%u: this reader knows 1.x and %u.x",
             major, minor, MHF_VERSION_MAJOR);
    uint32_t hsz = mhf_load_u32(p + MHF_MAN_HEADER_SIZE_OFF);
    uint32_t nseg = mhf_load_u32(p + MHF_MAN_SEG_COUNT);
    uint32_t recsz = mhf_load_u32(p + MHF_MAN_RECSZ);
    uint32_t flags = mhf_load_u32(p + MHF_MAN_FLAGS);
    MH_CHECK((flags & 0xffffu) == 0, MH_EVERSION, d, MHF_MAN_FLAGS,
             "MANIFEST uses unknown incompatible features %04x",
             flags & 0xffffu);
    /* the one reserved/size rule (SPEC.md 12.1): sizes exact up to the
     * minor this reader knows, at least the known ones beyond it */
    int strict = minor <= MHF_VERSION_MINOR;
    MH_CHECK(strict ? hsz == MHF_MAN_HEADER_SIZE
                    : hsz >= MHF_MAN_HEADER_SIZE && hsz <= 4096,
             MH_ECORRUPT, d, MHF_MAN_HEADER_SIZE_OFF,
             "MANIFEST header size %u, this reader knows %u", hsz,
             MHF_MAN_HEADER_SIZE);
    MH_CHECK(strict ? recsz == MHF_MAN_REC_SIZE
                    : recsz >= MHF_MAN_REC_SIZE && recsz <= 4096,
             MH_ECORRUPT, d, MHF_MAN_RECSZ,
             "MANIFEST record size %u, this reader knows %u", recsz,
             MHF_MAN_REC_SIZE);
    MH_CHECK(nseg <= MHF_MAN_MAX_SEGMENTS, MH_ECORRUPT, d, MHF_MAN_SEG_COUNT,
             "MANIFEST segment count %u", nseg);
    uint64_t want = (uint64_t)hsz + (uint64_t)nseg * recsz + 8u;
    MH_CHECK(size >= want, MH_ETRUNCATED, d, size,
             "MANIFEST is %zu bytes, its header announces %llu", size,
             (unsigned long long)want);
    MH_CHECK(size == want, MH_ECORRUPT, d, want,
             "%llu bytes of trailing garbage after the MANIFEST checksum",
             (unsigned long long)(size - want));
    if (MH_CHECKSUMS_ENFORCED) {
        uint64_t stored = mhf_load_u64(p + size - 8), computed = mh_hash(p, size - 8);
        MH_CHECK(computed == stored, MH_ECHECKSUM, d, size - 8,
                 "MANIFEST checksum mismatch: stored 0x%016llx, computed 0x%016llx",
                 (unsigned long long)stored, (unsigned long long)computed);
    }
    if (strict) {
        MH_CHECK(flags == 0, MH_ECORRUPT, d, MHF_MAN_FLAGS,
                 "MANIFEST flags %08x not zero", flags);
        MH_CHECK(mhf_load_u64(p + MHF_MAN_RESERVED) == 0, MH_ECORRUPT, d,
                 MHF_MAN_RESERVED, "MANIFEST reserved field not zero");
    }
    out->major = major;
    out->minor = minor;
    out->generation = mhf_load_u64(p + MHF_MAN_GENERATION);
    MH_CHECK(out->generation >= 1, MH_ECORRUPT, d, MHF_MAN_GENERATION,
             "MANIFEST generation 0 (a new store starts at 1)");
    out->access_count = mhf_load_u64(p + MHF_MAN_ACCESS_COUNT);
    out->next_seq = mhf_load_u64(p + MHF_MAN_NEXT_SEQ);
    out->recs = calloc(nseg ? nseg : 1, sizeof *out->recs);
    if (!out->recs)
        return MH_ENOMEM;
    uint64_t id = 0, last_t = 0, seq_min = 0;
    int have_t = 0;
    for (uint32_t i = 0; i < nseg; i++) {
        size_t off = hsz + (size_t)i * recsz;
        const uint8_t *r = p + off;
        mh_manrec *m = &out->recs[i];
        m->seq = mhf_load_u64(r + MHF_MREC_SEQ);
        m->id_first = mhf_load_u64(r + MHF_MREC_ID_FIRST);
        m->count = mhf_load_u64(r + MHF_MREC_COUNT);
        m->t_first = mhf_load_u64(r + MHF_MREC_T_FIRST);
        m->t_last = mhf_load_u64(r + MHF_MREC_T_LAST);
        m->file_size = mhf_load_u64(r + MHF_MREC_FILE_SIZE);
        m->header_sum = mhf_load_u64(r + MHF_MREC_HEADER_SUM);
        out->nrecs = i + 1;
        if (strict)
            MH_CHECK(mhf_load_u64(r + MHF_MREC_RESERVED) == 0, MH_ECORRUPT, d,
                     off + MHF_MREC_RESERVED,
                     "segment record %u reserved field not zero", i);
        MH_CHECK(m->seq >= seq_min && m->seq < out->next_seq, MH_ECORRUPT, d,
                 off + MHF_MREC_SEQ,
                 "segment record %u: sequence numbers not increasing or not "
                 "below next_seq", i);
        seq_min = m->seq + 1;
        MH_CHECK(m->id_first == id, MH_ECORRUPT, d, off + MHF_MREC_ID_FIRST,
                 "segment record %u: first id %llu, expected %llu", i,
                 (unsigned long long)m->id_first, (unsigned long long)id);
        MH_CHECK(m->count <= UINT64_MAX - id, MH_ECORRUPT, d,
                 off + MHF_MREC_COUNT, "segment record %u: count overflows", i);
        id += m->count;
        if (m->count) {
            MH_CHECK(m->t_first <= m->t_last && (!have_t || m->t_first >= last_t),
                     MH_ECORRUPT, d, off + MHF_MREC_T_FIRST,
                     "segment record %u: transition range out of order", i);
            last_t = m->t_last;
            have_t = 1;
        } else {
            MH_CHECK(m->t_first == 0 && m->t_last == 0, MH_ECORRUPT, d,
                     off + MHF_MREC_T_FIRST,
                     "segment record %u: no accesses but a transition range", i);
        }
        MH_CHECK(m->file_size >= MHF_SEG_HEADER_SIZE, MH_ECORRUPT, d,
                 off + MHF_MREC_FILE_SIZE,
                 "segment record %u: file size too small", i);
    }
    MH_CHECK(id == out->access_count, MH_ECORRUPT, d, MHF_MAN_ACCESS_COUNT,
             "MANIFEST access count %llu, segments hold %llu",
             (unsigned long long)out->access_count, (unsigned long long)id);
    return MH_OK;
}

int mh_manifest_encode(const mh_manifest *m, uint8_t **out, size_t *size) {
    size_t n = MHF_MAN_HEADER_SIZE + m->nrecs * MHF_MAN_REC_SIZE + 8;
    uint8_t *p = calloc(1, n);
    if (!p)
        return MH_ENOMEM;
    memcpy(p, MHF_MAN_MAGIC, 8);
    mhf_store_u16(p + MHF_MAN_MAJOR, MHF_VERSION_MAJOR);
    mhf_store_u16(p + MHF_MAN_MINOR, MHF_VERSION_MINOR);
    mhf_store_u32(p + MHF_MAN_BOM, MHF_BYTE_ORDER_MARK);
    mhf_store_u32(p + MHF_MAN_HEADER_SIZE_OFF, MHF_MAN_HEADER_SIZE);
    mhf_store_u32(p + MHF_MAN_SEG_COUNT, (uint32_t)m->nrecs);
    mhf_store_u32(p + MHF_MAN_RECSZ, MHF_MAN_REC_SIZE);
    mhf_store_u64(p + MHF_MAN_GENERATION, m->generation);
    mhf_store_u64(p + MHF_MAN_ACCESS_COUNT, m->access_count);
    mhf_store_u64(p + MHF_MAN_NEXT_SEQ, m->next_seq);
    for (size_t i = 0; i < m->nrecs; i++) {
        uint8_t *r = p + MHF_MAN_HEADER_SIZE + i * MHF_MAN_REC_SIZE;
        const mh_manrec *s = &m->recs[i];
        mhf_store_u64(r + MHF_MREC_SEQ, s->seq);
        mhf_store_u64(r + MHF_MREC_ID_FIRST, s->id_first);
        mhf_store_u64(r + MHF_MREC_COUNT, s->count);
        mhf_store_u64(r + MHF_MREC_T_FIRST, s->t_first);
        mhf_store_u64(r + MHF_MREC_T_LAST, s->t_last);
        mhf_store_u64(r + MHF_MREC_FILE_SIZE, s->file_size);
        mhf_store_u64(r + MHF_MREC_HEADER_SUM, s->header_sum);
    }
    mhf_store_u64(p + n - 8, mh_hash(p, n - 8));
    *out = p;
    *size = n;
    return MH_OK;
}

int mh_manifest_load(const char *dir, mh_manifest *out, mh_diag *d) {
    memset(out, 0, sizeof *out);
    char *path = mh_path_join(dir, MHF_MANIFEST_NAME);
    if (!path)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
    uint8_t *buf = NULL;
    size_t size = 0;
    int rc = mh_read_file(path, &buf, &size, d);
    free(path);
    if (rc == MH_ENOENT)
        return mh_diag_fail(d, MH_ENOTSTORE, 0, "no MANIFEST file");
    if (rc != MH_OK)
        return rc;
    rc = mh_manifest_parse(buf, size, out, d);
    free(buf);
    if (rc != MH_OK)
        mh_manifest_free(out);
    return rc;
}

int mh_manifest_store(const char *dir, const mh_manifest *m, mh_diag *d) {
    uint8_t *buf;
    size_t n;
    int rc = mh_manifest_encode(m, &buf, &n);
    if (rc != MH_OK)
        return mh_diag_fail(d, rc, 0, "cannot encode the MANIFEST: %s",
                            mh_strerror(rc));
    rc = mh_write_atomic(dir, MHF_MANIFEST_TMP_NAME, MHF_MANIFEST_NAME, buf, n, d);
    free(buf);
    return rc;
}

void mh_manifest_free(mh_manifest *m) {
    if (!m)
        return;
    free(m->recs);
    m->recs = NULL;
    m->nrecs = 0;
}
