/*
 * fuzz_block_decode.c - the access-block codec (src/codec.c), called
 * directly through the library's internal.h, and through a whole reader.
 *
 * A mode drawn from the input's tail picks what the front of the input is:
 *   0  a raw block (the delta/zigzag columns) for mh_block_decode_raw; a
 *      block that decodes must encode back to a block that decodes to the
 *      same rows, within mh_block_raw_bound();
 *   1  LZ4 bytes for mh_block_decode, with the right checksum or a wrong
 *      one (which a normal build must refuse with MH_ECHECKSUM);
 *   2  row values: encode, compress, decode must give them back exactly;
 *   3  a raw block, compressed by the harness and put in place of the only
 *      block of a real one-block segment (fuzz_build.c), all checksums and
 *      offsets recomputed; the store is then opened and driven through
 *      every query with every answer checked (fuzz_exercise_reader), so the
 *      reader's row checks and the query engine meet every decoded value;
 *   4  as 3 with the input as the compressed bytes themselves.
 */
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "fuzz_build.h"
#include "fuzz_check.h"
#include "fuzz_data_producer.h"
#include "fuzz_helpers.h"
#include "fuzz_segfix.h"
#include "fuzz_store.h"
#include "internal.h"

#define MAX_ROWS 512
#define QUERY_LIMIT 4096

static void rows_alloc(mh_rows *r, uint32_t n) {
    memset(r, 0, sizeof *r);
    FUZZ_OK(mh_rows_reserve(r, n ? n : 1));
}

/* The full 2.0 block: base columns, stream and pc. */
static mh_block_layout full_layout(void) {
    mh_block_layout l;
    mh_block_layout_std(&l, MHF_VERSION_MAJOR, 1, 1);
    return l;
}

/* The layout a decode-only mode reads with (SPEC.md 6, 7.3): 0 full 2.0,
 * 1 2.0 with stream only, 2 2.0 base columns, 3 format 1.0 (no column
 * lengths), 4 full 2.0 then a column of a newer minor (skipped by its
 * length). */
static mh_block_layout layout_of(uint32_t k) {
    mh_block_layout l;
    mh_block_layout_std(&l, k == 3 ? MHF1_VERSION_MAJOR : MHF_VERSION_MAJOR, k <= 1 || k == 4,
                        k == 0 || k == 4);
    if (k == 4)
        l.kind[l.ncols++] = MH_COL_UNKNOWN;
    return l;
}
static uint32_t g_layout; /* of the current input */

static void rows_equal(const mh_rows *a, const mh_rows *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        FUZZ_ASSERT(a->id_off[i] == b->id_off[i]);
        FUZZ_ASSERT(a->t[i] == b->t[i]);
        FUZZ_ASSERT(a->phy[i] == b->phy[i]);
        FUZZ_ASSERT(a->size[i] == b->size[i]);
        FUZZ_ASSERT(a->has_lin[i] == b->has_lin[i]);
        FUZZ_ASSERT(!a->has_lin[i] || a->lin[i] == b->lin[i]);
        FUZZ_ASSERT(a->stream[i] == b->stream[i]);
        FUZZ_ASSERT(a->has_pc[i] == b->has_pc[i]);
        FUZZ_ASSERT(!a->has_pc[i] || a->pc[i] == b->pc[i]);
    }
}

/* What a decoded block promises: sizes >= 1, no wrap, flags 0/1. */
static void rows_valid(const mh_rows *r, uint32_t n) {
    FUZZ_ASSERT(r->n == n);
    for (uint32_t i = 0; i < n; i++) {
        FUZZ_ASSERT(r->size[i] >= 1);
        FUZZ_ASSERT(r->phy[i] + (r->size[i] - 1u) >= r->phy[i]);
        FUZZ_ASSERT(r->has_lin[i] <= 1);
    }
}

/* Encodes rows and decodes them back: exact round trip. */
static void round_trip(const mh_rows *src, uint32_t n, uint64_t t_base,
                       int compress) {
    size_t bound = mh_block_raw_bound(n);
    uint8_t *raw = fuzz_malloc(bound);
    mh_block_layout lay = full_layout();
    size_t len = mh_block_encode_raw(raw, n, src, t_base, 1, 1);
    FUZZ_ASSERT_MSG(len <= bound, "an encoded block exceeds its bound");
    mh_rows back;
    rows_alloc(&back, n);
    mh_diag d;
    if (!compress) {
        FUZZ_OK(mh_block_decode_raw(raw, len, n, t_base, &lay, &back, &d));
    } else {
        int cap = LZ4_compressBound((int)len);
        uint8_t *comp = fuzz_malloc((size_t)cap);
        int clen = LZ4_compress_default((const char *)raw, (char *)comp,
                                        (int)len, cap);
        FUZZ_ASSERT(clen > 0);
        uint8_t *scratch = fuzz_malloc(len);
        FUZZ_OK(mh_block_decode(comp, (uint32_t)clen, mh_hash(comp, (size_t)clen),
                                (uint32_t)len, n, t_base, &lay, scratch, &back, &d));
        free(scratch);
        free(comp);
    }
    rows_valid(&back, n);
    rows_equal(src, &back, n);
    mh_rows_free(&back);
    free(raw);
}

/* Rows from .. upto - 1 of the block alone, and rows taken one at a time
 * (the query engine's windows and located rows): refused only when the
 * whole block is, and, when it decodes, the same values. */
static void parts(const uint8_t *buf, size_t len, uint32_t n, uint64_t t_base,
                  const mh_block_layout *lay, const mh_rows *all, int all_rc) {
    if (n == 0 || lay->major < 2)
        return;
    uint32_t seed = (uint32_t)(len * 2654435761u) ^ n;
    uint32_t upto = 1 + seed % n, from = (seed >> 9) % upto;
    mh_rows w;
    rows_alloc(&w, n);
    mh_diag d;
    int rc = mh_block_decode_raw_rows(buf, len, n, from, upto, MH_COLS_ALL, t_base, lay, &w, &d);
    FUZZ_ASSERT_NAMED(rc);
    FUZZ_ASSERT(rc == MH_OK || all_rc != MH_OK);
    if (rc == MH_OK && all_rc == MH_OK) {
        FUZZ_ASSERT(w.lo == from && w.n == upto);
        for (uint32_t i = from; i < upto; i++) {
            FUZZ_ASSERT(w.id_off[i] == all->id_off[i] && w.t[i] == all->t[i]);
            FUZZ_ASSERT(w.phy[i] == all->phy[i] && w.size[i] == all->size[i]);
        }
    }
    mh_rows_free(&w);
    mh_block_cols bc;
    if (mh_block_cols_find(buf, len, n, lay, &bc) != MH_OK) {
        FUZZ_ASSERT(all_rc != MH_OK);
        return;
    }
    for (uint32_t k = 0, i = seed % n; k < 4; k++, i = (i * 7u + 3u) % n) {
        mh_access a;
        memset(&a, 0, sizeof a);
        rc = mh_block_row_take(&bc, i, &a);
        FUZZ_ASSERT(rc == MH_OK || all_rc != MH_OK);
        if (rc != MH_OK)
            break;
        if (all_rc == MH_OK) {
            FUZZ_ASSERT(a.physical == all->phy[i] && a.size == all->size[i]);
            FUZZ_ASSERT(a.has_linear == all->has_lin[i] && a.linear == all->lin[i]);
            FUZZ_ASSERT(a.stream == all->stream[i] && a.has_pc == all->has_pc[i]);
            FUZZ_ASSERT(!a.has_pc || a.pc == all->pc[i]);
        }
    }
}

static void mode_raw(const uint8_t *buf, size_t len, uint32_t n,
                     uint64_t t_base) {
    mh_rows rows;
    rows_alloc(&rows, n);
    mh_diag d;
    mh_block_layout lay = layout_of(g_layout);
    int rc = mh_block_decode_raw(buf, len, n, t_base, &lay, &rows, &d);
    FUZZ_ASSERT_NAMED(rc);
    if (rc == MH_OK) {
        rows_valid(&rows, n);
        round_trip(&rows, n, t_base, 0);
    } else {
        FUZZ_ASSERT(rc == MH_ECORRUPT);
    }
    parts(buf, len, n, t_base, &lay, &rows, rc);
    mh_rows_free(&rows);
}

static void mode_comp(fuzz_producer *p, const uint8_t *buf, size_t len,
                      uint32_t n, uint64_t t_base) {
    if (len > UINT32_MAX)
        return;
    uint32_t raw_size = fuzz_producer_u32_range(p, 0, (uint32_t)mh_block_raw_bound(n));
    int good_sum = !fuzz_producer_one_in(p, 8);
    uint64_t sum = mh_hash(buf, len);
    if (!good_sum)
        sum ^= 1u + fuzz_producer_u32_range(p, 0, 1000);
    mh_rows rows;
    rows_alloc(&rows, n);
    uint8_t *scratch = fuzz_malloc(raw_size);
    mh_diag d;
    mh_block_layout lay = layout_of(g_layout);
    int rc = mh_block_decode(buf, (uint32_t)len, sum, raw_size, n, t_base, &lay,
                             scratch, &rows, &d);
    FUZZ_ASSERT_NAMED(rc);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    if (!good_sum)
        FUZZ_EXPECT_RC(rc, MH_ECHECKSUM);
#endif
    if (rc == MH_OK) {
        rows_valid(&rows, n);
        round_trip(&rows, n, t_base, 1);
    } else {
        FUZZ_ASSERT(rc == MH_ECORRUPT || rc == MH_ECHECKSUM);
    }
    free(scratch);
    mh_rows_free(&rows);
}

static void mode_values(fuzz_producer *p, uint32_t n, uint64_t t_base) {
    mh_rows rows;
    rows_alloc(&rows, n);
    uint32_t id = 0;
    uint64_t t = t_base;
    for (uint32_t i = 0; i < n; i++) {
        /* any values the format can hold, not only sorted ones: the codec
         * must round-trip whatever the row order of a slice gives it */
        id = fuzz_producer_bool(p) ? id + fuzz_producer_u32_range(p, 0, 3)
                                   : fuzz_producer_u32_range(p, 0, UINT32_MAX);
        rows.id_off[i] = id;
        t = fuzz_producer_bool(p) ? t + fuzz_producer_u32_range(p, 0, 3)
                                  : fuzz_producer_u64(p);
        rows.t[i] = t;
        rows.size[i] = fuzz_producer_u32_range(p, 1, UINT32_MAX);
        rows.phy[i] = fuzz_producer_u64_range(p, 0, UINT64_MAX - (rows.size[i] - 1u));
        rows.has_lin[i] = (uint8_t)fuzz_producer_bool(p);
        rows.lin[i] = rows.has_lin[i] ? fuzz_producer_u64(p) : 0;
        rows.stream[i] = fuzz_producer_u32_range(p, 0, MH_STREAM_MAX);
        rows.has_pc[i] = (uint8_t)fuzz_producer_bool(p);
        rows.pc[i] = rows.has_pc[i] ? fuzz_producer_u64(p) : 0;
    }
    round_trip(&rows, n, t_base, fuzz_producer_bool(p));
    mh_rows_free(&rows);
}

/* ---- through a reader ------------------------------------------------- */

static uint8_t *fixture;
static size_t fixture_size;

/* The entry of section `type` in a 2.0 segment's directory. */
static uint8_t *dir_entry(uint8_t *seg, uint32_t type) {
    uint32_t n = mhf_load_u32(seg + MHF2_SEG_DIR_COUNT);
    uint32_t rsz = mhf_load_u32(seg + MHF2_SEG_DIR_RECSZ);
    uint8_t *dir = seg + mhf_load_u64(seg + MHF2_SEG_DIR_OFF);
    for (uint32_t i = 0; i < n; i++)
        if (mhf_load_u32(dir + (size_t)i * rsz + MHF2_DIR_TYPE) == type)
            return dir + (size_t)i * rsz;
    FUZZ_ASSERT_MSG(0, "the fixture lacks a section");
    return NULL;
}

static void load_fixture(void) {
    if (fixture)
        return;
    char dir[FUZZ_PATH_MAX];
    fuzz_join(dir, sizeof dir, fuzz_workdir(), "fixture");
    fuzz_rmtree(dir);
    fuzz_build_store(dir, FUZZ_STORE_ONE_BLOCK, NULL);
    char name[32], path[FUZZ_PATH_MAX];
    fuzz_segment_name(name, 0);
    fuzz_join(path, sizeof path, dir, name);
    fixture = fuzz_read_file(path, &fixture_size);
    FUZZ_ASSERT_MSG(fixture != NULL, "the one-block fixture has no segment 0");
    fuzz_rmtree(dir);
    /* a 2.0 segment whose data section (first, at 256) is its one block */
    FUZZ_ASSERT(mhf_load_u16(fixture + MHF_SEG_MAJOR) == MHF_VERSION_MAJOR);
    uint8_t *data = dir_entry(fixture, MHF_SECT_DATA), *bl = dir_entry(fixture, MHF_SECT_BLOCKS);
    FUZZ_ASSERT(mhf_load_u64(data + MHF2_DIR_OFFSET) == MHF_SEG_HEADER_SIZE);
    FUZZ_ASSERT(mhf_load_u32(bl + MHF2_DIR_RECCOUNT) == 1);
    const uint8_t *b = fixture + mhf_load_u64(bl + MHF2_DIR_OFFSET);
    FUZZ_ASSERT(mhf_load_u64(b + MHF_BLOCK_OFFSET) == MHF_SEG_HEADER_SIZE);
    FUZZ_ASSERT(mhf_load_u32(b + MHF_BLOCK_COMP_SIZE) == mhf_load_u64(data + MHF2_DIR_BYTES));
}

/* The fixture with its block's bytes replaced by comp (raw_size bytes
 * once decompressed), every section after it moved and every checksum
 * recomputed; then opened and exercised. */
static void mode_reader(const uint8_t *comp, size_t clen, uint32_t raw_size) {
    load_fixture();
    size_t size = 0;
    uint8_t *seg = fuzz_segment_put_section(fixture, fixture_size, MHF_SECT_DATA,
                                            MHF_SECT_REQUIRED, comp, clen, &size);
    uint8_t *b = seg + mhf_load_u64(dir_entry(seg, MHF_SECT_BLOCKS) + MHF2_DIR_OFFSET);
    mhf_store_u32(b + MHF_BLOCK_COMP_SIZE, (uint32_t)clen);
    mhf_store_u32(b + MHF_BLOCK_RAW_SIZE, raw_size);
    mhf_store_u64(seg + MHF2_SEG_RAW_SIZE, raw_size);
    fuzz_segment_fix(seg, size);

    char dir[FUZZ_PATH_MAX];
    fuzz_join(dir, sizeof dir, fuzz_workdir(), "blk");
    fuzz_rmtree(dir);
    fuzz_mkdir(dir);
    uint64_t seq;
    size_t man_size;
    uint8_t *man = fuzz_manifest_for(seg, size, &seq, &man_size);
    char name[32];
    fuzz_segment_name(name, seq);
    fuzz_write_file(dir, name, seg, size);
    fuzz_write_file(dir, "MANIFEST", man, man_size);
    free(man);
    free(seg);

    mh_reader *r = NULL;
    int rc = mh_reader_open(dir, &r);
    /* only the block changed, and opening never decodes blocks */
    FUZZ_OK(rc);
    rc = fuzz_exercise_reader(r, QUERY_LIMIT);
    mh_reader_close(r);
    mh_verify_result res = {.struct_size = sizeof res};
    int vrc = fuzz_verify(dir, 0, &res);
    if (vrc == MH_OK)
        FUZZ_ASSERT_MSG(rc == MH_OK,
                        "fsck calls the block clean but reading it fails");
    if (fuzz_is_data_error(rc))
        FUZZ_ASSERT_MSG(vrc != MH_OK,
                        "reading the block fails but fsck calls it clean");
    fuzz_rmtree(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_producer p;
    fuzz_producer_init(&p, data, size);
    const uint8_t *payload = data;
    size_t len = fuzz_producer_reserve_payload(&p, 24);
    uint32_t mode = fuzz_producer_u32_range(&p, 0, 4);
    uint32_t n = fuzz_producer_one_in(&p, 64)
                     ? fuzz_producer_u32_range(&p, 1, MHF_MAX_ROWS_PER_BLOCK)
                     : fuzz_producer_u32_range(&p, 1, MAX_ROWS);
    uint64_t t_base = fuzz_producer_bool(&p) ? fuzz_producer_u64(&p)
                                             : fuzz_producer_u32_range(&p, 0, 100);
    g_layout = fuzz_producer_u32_range(&p, 0, 4);
    switch (mode) {
    case 0:
        mode_raw(payload, len, n, t_base);
        break;
    case 1:
        mode_comp(&p, payload, len, n, t_base);
        break;
    case 2: {
        fuzz_producer v;
        fuzz_producer_init(&v, payload, len);
        mode_values(&v, n > 256 ? 256 : n, t_base);
        break;
    }
    case 3: {
        if (len > 8u << 20)
            break;
        int cap = LZ4_compressBound((int)len);
        uint8_t *comp = fuzz_malloc((size_t)cap);
        int clen = LZ4_compress_default((const char *)payload, (char *)comp,
                                        (int)len, cap);
        FUZZ_ASSERT(clen > 0);
        mode_reader(comp, (size_t)clen, (uint32_t)len);
        free(comp);
        break;
    }
    default: {
        /* the declared raw size: what the bytes decompress to, if they do */
        size_t cap = mh_block_raw_bound(MHF_MAX_ROWS_PER_BLOCK);
        uint8_t *raw = fuzz_malloc(cap);
        int got = len <= INT32_MAX
                      ? LZ4_decompress_safe((const char *)payload, (char *)raw,
                                            (int)len, (int)cap)
                      : -1;
        free(raw);
        mode_reader(payload, len,
                    got > 0 ? (uint32_t)got : fuzz_producer_u32_range(&p, 1, 5000));
    }
    }
    return 0;
}
