/*
 * format2.c - format 2.0 at the record level (src/segment_write.c,
 * slice_build.c, codec.c, dict.c, segment_read.c, verify.c):
 *   - rows of several streams, with and without pc, and window parts go
 *     through the builder and the segment writer and come back from the
 *     segment reader exactly (every column, every mask, the tables);
 *   - the 1.0 golden store still decodes to its input (tiny_input.h);
 *   - what a later minor may add is skipped (an unknown section,
 *     dictionary table or column without its required bit) and what it may
 *     not is refused (the same with the bit: MH_EVERSION);
 *   - the one reserved/size rule both ways (a longer slice record and a
 *     reserved header byte: MH_ECORRUPT at minors 0 and 1, read at minor 2);
 *   - fsck finds nothing in a good segment and names a wrong stream mask
 *     and a wrong stream count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

#ifdef MH_GOLDEN_DIR
#include "tiny_input.h"
#endif

#define NSTREAMS 5

/* Rows of a synthetic multi-stream trace: stream s in 0..NSTREAMS-1 (ids
 * chosen so two of them share a mask bit), a pc on most rows but not all,
 * and a first part without any pc or stream (whole slices of stream 0). */
static const uint32_t k_stream_ids[NSTREAMS] = {0, 1, 2, 33, 40000};

static void make_rows(mh_rec *a, size_t n, tu_rng *rng, int plain_prefix) {
    uint64_t t = 1000;
    for (size_t i = 0; i < n; i++) {
        mh_rec *x = &a[i];
        memset(x, 0, sizeof *x);
        t += tu_below(rng, 3);
        x->transition = t;
        x->physical = tu_below(rng, 4) == 0 ? tu_next(rng) >> 4
                                            : 0x10000 + tu_below(rng, 1 << 16);
        x->size = 1u + (uint32_t)tu_below(rng, 64);
        if (x->physical > UINT64_MAX - x->size)
            x->physical = UINT64_MAX - x->size;
        x->op = (uint8_t)tu_below(rng, MHF_OP_COUNT);
        x->has_linear = (uint8_t)tu_below(rng, 2);
        x->linear = x->has_linear ? x->physical + tu_below(rng, 1 << 20) : 0;
        if (plain_prefix && i < n / 4)
            continue;
        x->stream = k_stream_ids[tu_below(rng, NSTREAMS)];
        x->has_pc = tu_below(rng, 8) != 0;
        x->pc = x->has_pc ? (tu_below(rng, 2) ? 0x400000 + tu_below(rng, 4096)
                                              : tu_next(rng))
                          : 0;
    }
}

typedef struct built {
    char dir[4096];
    char name[MHF_SEGMENT_NAME_LEN + 1];
} built;

/* Writes a[0..n) as one segment (slices of slice_rows) of a new store at
 * b->dir, sealed with si, and its MANIFEST. */
static void write_store(built *b, const mh_rec *a, size_t n, uint32_t slice_rows,
                        mh_seal_info *si) {
    tu_mkdtemp(b->dir, sizeof b->dir, "format2");
    mh_segw_config cfg = {
        .dir = b->dir,
        .seq = 0,
        .id_first = 0,
        .rows_per_block = 100,
        .chunk_min_accesses = 8,
        .lz4_acceleration = 1,
    };
    mh_diag d = {0, 0, ""};
    mh_segw *w = NULL;
    mh_builder *bl = NULL;
    CHECK_OK(mh_segw_create(&cfg, &w, &d));
    CHECK_OK(mh_builder_create(&cfg, &bl));
    for (size_t i = 0; i < n; i += slice_rows) {
        uint32_t m = (uint32_t)(n - i < slice_rows ? n - i : slice_rows);
        CHECK_OK(mh_builder_run(bl, a + i, m, i));
        CHECK_OK(mh_segw_append(w, bl, &d));
    }
    mh_manrec rec;
    int rc = mh_segw_seal(w, si, &rec, &d);
    CHECKF(rc == MH_OK, "seal: %s", d.msg);
    mh_segw_destroy(w);
    mh_builder_destroy(bl);
    mh_manifest m = {0};
    m.major = MHF_VERSION_MAJOR;
    m.generation = 1;
    m.access_count = n;
    m.next_seq = 1;
    m.recs = &rec;
    m.nrecs = 1;
    CHECK_OK(mh_manifest_store(b->dir, &m, &d));
    mh_segment_name(b->name, 0);
}

/* The declared streams of the synthetic trace. */
static void declare(mh_stream_info *st) {
    for (size_t i = 0; i < NSTREAMS; i++) {
        memset(&st[i], 0, sizeof st[i]);
        st[i].struct_size = sizeof st[i];
        st[i].id = k_stream_ids[i];
        st[i].kind = i ? MH_STREAM_THREAD : MH_STREAM_PROCESS;
        st[i].parent = i ? 0 : MH_NONE32;
        st[i].pid = 4242;
        st[i].tid = i ? 4242 + i : MH_NONE64;
        st[i].cpu = i == 3 ? 7 : MH_NONE32;
        st[i].name = i == 2 ? "worker-2" : i == 4 ? "\xc3\xa9t\xc3\xa9" : NULL;
    }
}

/* Decodes every block of seg into per-id accesses and checks each row's
 * masks against its block, chunk and slice records. */
static void read_all(const mh_seg *seg, mh_rec *out, size_t n) {
    CHECK(seg->count == n);
    mh_rows rows = {0};
    CHECK_OK(mh_rows_reserve(&rows, seg->rows_per_block));
    uint8_t *scratch = malloc(mh_block_raw_bound(seg->rows_per_block));
    CHECK(scratch);
    uint8_t *seen = calloc(n ? n : 1, 1);
    for (uint32_t si = 0; si < seg->nslices; si++) {
        mh_slice s;
        mh_seg_slice(seg, si, &s);
        mh_diag d = {0, 0, ""};
        CHECKF(mh_seg_slice_check(seg, si, &s, &d) == MH_OK, "%s", d.msg);
        uint32_t smask = 0;
        for (uint32_t b = 0; b < s.block_count; b++) {
            CHECKF(mh_seg_decode_block(seg, &s, b, scratch, &rows, &d) == MH_OK,
                      "%s", d.msg);
            mh_block bl;
            CHECK_OK(mh_seg_block(seg, &s, s.block_first + b, &bl, &d));
            uint32_t bmask = 0;
            for (uint32_t k = 0; k < rows.n; k++) {
                uint64_t id = s.id_first - seg->id_first + rows.id_off[k];
                CHECK(id < n && !seen[id]);
                seen[id] = 1;
                uint32_t row = b * seg->rows_per_block + k;
                mh_rec *x = &out[id];
                x->transition = rows.t[k];
                x->physical = rows.phy[k];
                x->linear = rows.lin[k];
                x->has_linear = rows.has_lin[k];
                x->size = rows.size[k];
                x->stream = rows.stream[k];
                x->pc = rows.pc[k];
                x->has_pc = rows.has_pc[k];
                bmask |= 1u << (rows.stream[k] & 31u);
                for (uint32_t c = 0; c < s.chunk_count; c++) {
                    mh_chunk ch;
                    CHECK_OK(mh_seg_chunk(seg, &s, s.chunk_first + c, &ch, &d));
                    if (row >= ch.row_first && row - ch.row_first < ch.row_count) {
                        x->op = ch.op;
                        CHECK(ch.stream_mask & (1u << (rows.stream[k] & 31u)));
                    }
                }
            }
            CHECK(bmask == bl.stream_mask); /* exact */
            smask |= bmask;
        }
        CHECK(smask == s.stream_mask);
    }
    for (size_t i = 0; i < n; i++)
        CHECKF(seen[i], "id %zu missing", i);
    /* the query cache's lazy rows, one buffer walked backward: blocks with
     * pc and streams come before the plain prefix's blocks, whose rows must
     * read stream 0 and no pc through the accessors, not what the arrays
     * kept from the block before */
    mh_rows lazy = {0};
    CHECK_OK(mh_rows_reserve_lazy(&lazy, seg->rows_per_block));
    for (uint32_t si = seg->nslices; si-- > 0;) {
        mh_slice s;
        mh_seg_slice(seg, si, &s);
        for (uint32_t b = s.block_count; b-- > 0;) {
            mh_diag d = {0, 0, ""};
            CHECKF(mh_seg_decode_block(seg, &s, b, scratch, &lazy, &d) == MH_OK,
                   "%s", d.msg);
            for (uint32_t k = 0; k < lazy.n; k++) {
                const mh_rec *x = &out[s.id_first - seg->id_first + lazy.id_off[k]];
                CHECK(mh_rows_stream(&lazy, k) == x->stream);
                CHECK(mh_rows_has_pc(&lazy, k) == x->has_pc);
                CHECK(mh_rows_pc(&lazy, k) == x->pc);
            }
        }
    }
    mh_rows_free(&lazy);
    free(seen);
    free(scratch);
    mh_rows_free(&rows);
}

static void same_rec(const mh_rec *a, const mh_rec *b, size_t i) {
    CHECKF(a->transition == b->transition && a->physical == b->physical &&
                  a->size == b->size && a->op == b->op &&
                  a->has_linear == b->has_linear &&
                  (!a->has_linear || a->linear == b->linear) &&
                  a->stream == b->stream && a->has_pc == b->has_pc &&
                  (!a->has_pc || a->pc == b->pc),
              "id %zu differs: t %llu/%llu stream %u/%u pc %d:%llx/%d:%llx", i,
              (unsigned long long)a->transition, (unsigned long long)b->transition,
              a->stream, b->stream, a->has_pc, (unsigned long long)a->pc,
              b->has_pc, (unsigned long long)b->pc);
}

/* Reads seg's n rows into back[] (cleared first): each must equal a[i]. */
static void check_rows(const mh_seg *seg, const mh_rec *a, mh_rec *back, size_t n) {
    memset(back, 0, n * sizeof *back);
    read_all(seg, back, n);
    for (size_t i = 0; i < n; i++)
        same_rec(&a[i], &back[i], i);
}

static void open_seg(const built *b, mh_seg *seg, int expect) {
    mh_diag d = {0, 0, ""};
    int rc = mh_seg_open(b->dir, b->name, seg, &d);
    if (getenv("MH_TEST_VERBOSE"))
        fprintf(stderr, "open %s: %s (%s)\n", b->name, mh_error_name(rc), d.msg);
    CHECKF(rc == expect, "open %s: %s (%s), want %s", b->name,
              mh_error_name(rc), d.msg, mh_error_name(expect));
}

/* fsck of the store: the number of problems. */
static uint64_t fsck(const char *dir) {
    mh_verify_result res = {.struct_size = sizeof res};
    int rc = mh_verify(dir, 0, NULL, NULL, &res);
    CHECK(rc == MH_OK || rc == MH_ECORRUPT || rc == MH_ECHECKSUM);
    return res.problems;
}

static void test_round_trip(int plain_prefix, int with_pc_only) {
    tu_rng rng = {(uint64_t)(17 + plain_prefix * 2 + with_pc_only)};
    size_t n = 5000;
    mh_rec *a = malloc(n * sizeof *a), *back = calloc(n, sizeof *back);
    CHECK(a && back);
    make_rows(a, n, &rng, plain_prefix);
    if (with_pc_only) /* pc without streams: the stream column is stored */
        for (size_t i = 0; i < n; i++)
            a[i].stream = 0;
    mh_stream_info st[NSTREAMS];
    declare(st);
    mh_kv meta[2] = {{"tool", "format2"}, {"k", "v"}};
    mh_stream_kv smeta[3] = {{0, "cmd", "a.out"}, {2, "role", "worker"},
                             {2, "prio", "3"}};
    mh_window_part win[3] = {
        {7, 10, 0, 0, 0},           /* an empty window */
        {8, 100, 900, a[100].transition, a[999].transition},
        {12, 3000, 2000, a[3000].transition, a[4999].transition},
    };
    mh_seal_info si = {.meta = meta, .nmeta = 2, .streams = st,
                       .nstreams = with_pc_only ? 1 : NSTREAMS,
                       .stream_meta = smeta, .nstream_meta = with_pc_only ? 1 : 3,
                       .windows = win, .nwindows = 3};
    built b;
    write_store(&b, a, n, 700, &si);
    mh_seg seg;
    open_seg(&b, &seg, MH_OK);
    CHECK(seg.major == 2 && seg.minor == MHF_VERSION_MINOR);
    CHECK(seg.dict.has_stream_col == 1 && seg.dict.has_pc_col == 1);
    check_rows(&seg, a, back, n);
    /* the tables */
    const mh_dict *dc = &seg.dict;
    CHECK(dc->has_stream_table && dc->nstreams == si.nstreams);
    for (size_t k = 0; k < dc->nstreams; k++) {
        const mh_dict_stream *x = &dc->streams[k];
        uint64_t cnt = 0, tf = 0, tl = 0;
        for (size_t i = 0; i < n; i++)
            if (a[i].stream == x->id) {
                if (!cnt++)
                    tf = a[i].transition;
                tl = a[i].transition;
            }
        CHECK(x->id == st[k].id && x->kind == st[k].kind &&
              x->parent == st[k].parent && x->pid == st[k].pid &&
              x->tid == st[k].tid && x->cpu == st[k].cpu);
        CHECK((x->name == NULL) == (st[k].name == NULL));
        CHECK(!x->name || strcmp(x->name, st[k].name) == 0);
        CHECKF(x->count == cnt && x->t_first == tf && x->t_last == tl,
                  "stream %u: %llu accesses, want %llu", x->id,
                  (unsigned long long)x->count, (unsigned long long)cnt);
    }
    CHECK(dc->nstream_meta == si.nstream_meta);
    for (size_t k = 0; k < dc->nstream_meta; k++)
        CHECK(dc->stream_meta[k].stream == smeta[k].stream &&
              !strcmp(dc->stream_meta[k].key, smeta[k].key) &&
              !strcmp(dc->stream_meta[k].value, smeta[k].value));
    CHECK(dc->nwindows == 3);
    for (size_t k = 0; k < 3; k++)
        CHECK(!memcmp(&dc->windows[k], &win[k], sizeof win[k]));
    CHECK(dc->nmeta == 2 && !strcmp(dc->meta[0].key, "tool"));
    /* the directory: the five required sections tile the file */
    const mh_section *x;
    CHECK(seg.nsections == 5);
    for (uint32_t t = MHF_SECT_DATA; t <= MHF_SECT_BLOCKS; t++)
        CHECK(mh_seg_section(&seg, t, &x) == MH_OK && x->flags == MHF_SECT_REQUIRED);
    CHECK(mh_seg_section(&seg, MHF_SECT_SUMMARY, &x) == MH_ENOTFOUND);
    mh_seg_close(&seg);
    CHECK(fsck(b.dir) == 0);
    /* the public reader answers with the same accesses */
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(b.dir, &r));
    mh_stats stats = {.struct_size = sizeof stats};
    CHECK_OK(mh_reader_stats(r, &stats));
    CHECK(stats.accesses == n);
    mh_reader_close(r);
    tu_rmtree(b.dir);
    free(a);
    free(back);
}

/* A single-stream segment without pc stores neither column nor table. */
static void test_plain(void) {
    tu_rng rng = {3};
    size_t n = 3000;
    mh_rec *a = malloc(n * sizeof *a), *back = calloc(n, sizeof *back);
    make_rows(a, n, &rng, 0);
    for (size_t i = 0; i < n; i++) {
        a[i].stream = 0;
        a[i].has_pc = 0;
        a[i].pc = 0;
    }
    mh_seal_info si = {0};
    built b;
    write_store(&b, a, n, 1000, &si);
    mh_seg seg;
    open_seg(&b, &seg, MH_OK);
    CHECK(!seg.dict.has_stream_col && !seg.dict.has_pc_col);
    CHECK(seg.dict.ncolumns == 6 && !seg.dict.has_stream_table);
    CHECK(seg.dict.nstreams == 1 && seg.dict.streams[0].id == 0 &&
          seg.dict.streams[0].count == n);
    check_rows(&seg, a, back, n);
    mh_seg_close(&seg);
    CHECK(fsck(b.dir) == 0);
    tu_rmtree(b.dir);
    /* a stream that is not declared is the writer's bug: refused */
    a[5].stream = 3;
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "format2");
    mh_segw_config cfg = {.dir = dir, .rows_per_block = 64,
                          .chunk_min_accesses = 8, .lz4_acceleration = 1};
    mh_diag d = {0, 0, ""};
    mh_segw *w = NULL;
    mh_builder *bl = NULL;
    CHECK_OK(mh_segw_create(&cfg, &w, &d));
    CHECK_OK(mh_builder_create(&cfg, &bl));
    CHECK_OK(mh_builder_run(bl, a, 100, 0));
    CHECK_OK(mh_segw_append(w, bl, &d));
    mh_manrec rec;
    CHECK(mh_segw_seal(w, &si, &rec, &d) == MH_EINVAL);
    mh_segw_destroy(w);
    mh_builder_destroy(bl);
    tu_rmtree(dir);
    free(a);
    free(back);
}

/* ---- what a later minor may add ---------------------------------------- */
static void small_trace(mh_rec *a, size_t n) {
    tu_rng rng = {99};
    make_rows(a, n, &rng, 0);
}

static void later_minor(const char *what, mh_seal_info *si, int expect) {
    size_t n = 400;
    mh_rec a[400], back[400];
    small_trace(a, n);
    mh_stream_info st[NSTREAMS];
    declare(st);
    si->streams = st;
    si->nstreams = NSTREAMS;
    built b;
    write_store(&b, a, n, 150, si);
    mh_seg seg;
    snprintf(tu_context, sizeof tu_context, "%s", what);
    open_seg(&b, &seg, expect);
    if (expect == MH_OK) {
        check_rows(&seg, a, back, n);
        mh_seg_close(&seg);
        CHECKF(fsck(b.dir) == 0, "%s: fsck finds problems", what);
    }
    tu_context[0] = 0;
    tu_rmtree(b.dir);
}

static void test_unknown(void) {
    static const uint8_t blob[40] = {1, 2, 3, 4, 5};
    mh_extra_section sec = {77, 0, 0, 0, blob, sizeof blob};
    mh_seal_info si = {.extra = &sec, .nextra = 1};
    later_minor("unknown optional section", &si, MH_OK);
    sec.flags = MHF_SECT_REQUIRED;
    later_minor("unknown required section", &si, MH_EVERSION);
    mh_extra_section tab = {40, 0, 8, 5, blob, sizeof blob};
    mh_seal_info st = {.extra_tables = &tab, .nextra_tables = 1};
    later_minor("unknown optional dictionary table", &st, MH_OK);
    tab.flags = MHF2_TAB_REQUIRED;
    later_minor("unknown required dictionary table", &st, MH_EVERSION);
    /* a stored column no block holds: the blocks end before it */
    mh_extra_column col = {"tid_delta", MHF_TYPE_UINT, 8, 9, MHF_COL_NULLABLE};
    mh_seal_info sc = {.extra_columns = &col, .nextra_columns = 1};
    later_minor("unknown optional column", &sc, MH_OK);
    col.flags |= MHF_COL_REQUIRED;
    later_minor("unknown required column", &sc, MH_EVERSION);
    /* a column listed twice is damage, whatever the minor */
    mh_extra_column dup = {"pc", MHF_TYPE_UINT, 8, MHF_ENC_PC, 0};
    mh_seal_info sd = {.extra_columns = &dup, .nextra_columns = 1};
    later_minor("known column twice", &sd, MH_ECORRUPT);
}

/* ---- the one reserved/size rule ---------------------------------------- */
/* Rewrites segment 0 of store dir: minor, a reserved header byte, and the
 * slice records grown by `grow` zero bytes each (shrunk by -grow bytes, cut
 * off their end, when negative); every sum and the MANIFEST record follow.
 * (Until 1.9.9 grow was unsigned: "shorter by 8" grew each record by
 * 4 GiB and wrote a 12 GB file, 110 s of format2's run.) */
static void rewrite(const char *dir, uint16_t minor, int reserved, int32_t grow) {
    char path[4200];
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, 0);
    tu_join(path, sizeof path, dir, name);
    size_t len = 0;
    uint8_t *f = tu_read_file(path, &len);
    CHECK(f);
    uint32_t nd = mhf_load_u32(f + MHF2_SEG_DIR_COUNT);
    uint64_t doff = mhf_load_u64(f + MHF2_SEG_DIR_OFF);
    uint64_t so = 0, ss = 0;
    uint32_t sn = 0;
    CHECK(mhf_seg_find(f, len, MHF_SECT_SLICES, &so, &ss, &sn));
    uint32_t osz = (uint32_t)(ss / (sn ? sn : 1));
    CHECK(grow > -(int32_t)osz);
    uint32_t nsz = (uint32_t)((int64_t)osz + grow);
    /* the shift of everything after the slices, as a two's complement
     * offset added to each (unsigned arithmetic wraps as intended) */
    uint64_t shift = (uint64_t)((int64_t)sn * grow);
    size_t nlen = len + (size_t)shift;
    uint8_t *g = calloc(nlen, 1);
    CHECK(g);
    /* everything up to the slices, the grown slices, everything after */
    memcpy(g, f, so);
    for (uint32_t i = 0; i < sn; i++)
        memcpy(g + so + (size_t)i * nsz, f + so + (size_t)i * osz, osz < nsz ? osz : nsz);
    memcpy(g + so + (size_t)sn * nsz, f + so + ss, len - so - ss);
    uint8_t *dir0 = g + (size_t)(doff + shift); /* wraps to doff - sn * -grow */
    for (uint32_t i = 0; i < nd; i++) {
        uint8_t *e = dir0 + (size_t)i * MHF2_DIR_SIZE;
        uint64_t o = mhf_load_u64(e + MHF2_DIR_OFFSET);
        if (mhf_load_u32(e + MHF2_DIR_TYPE) == MHF_SECT_SLICES) {
            mhf_store_u32(e + MHF2_DIR_RECSZ, nsz);
            mhf_store_u64(e + MHF2_DIR_BYTES, (uint64_t)sn * nsz);
        } else if (o > so) {
            mhf_store_u64(e + MHF2_DIR_OFFSET, o + shift);
        }
        o = mhf_load_u64(e + MHF2_DIR_OFFSET);
        mhf_store_u64(e + MHF2_DIR_SUM,
                      mh_hash(g + o, (size_t)mhf_load_u64(e + MHF2_DIR_BYTES)));
    }
    mhf_store_u64(g + MHF2_SEG_DIR_OFF, doff + shift);
    mhf_store_u64(g + MHF2_SEG_DIR_SUM, mh_hash(dir0, (size_t)nd * MHF2_DIR_SIZE));
    mhf_store_u64(g + MHF2_SEG_FILE_SIZE, nlen);
    mhf_store_u16(g + MHF_SEG_MINOR, minor);
    if (reserved)
        g[MHF2_SEG_RESERVED1 + 5] = 0x5a;
    uint64_t hsum = mh_hash(g, MHF_SEG_HEADER_SUM);
    mhf_store_u64(g + MHF_SEG_HEADER_SUM, hsum);
    tu_write_file(path, g, nlen);
    mh_manifest m;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_manifest_load(dir, &m, &d));
    m.recs[0].file_size = nlen;
    m.recs[0].header_sum = hsum;
    CHECK_OK(mh_manifest_store(dir, &m, &d));
    mh_manifest_free(&m);
    free(f);
    free(g);
}

static void size_rule(const char *what, uint16_t minor, int reserved,
                      int32_t grow, int expect) {
    size_t n = 400;
    mh_rec a[400], back[400];
    small_trace(a, n);
    mh_stream_info st[NSTREAMS];
    declare(st);
    mh_seal_info si = {.streams = st, .nstreams = NSTREAMS};
    built b;
    write_store(&b, a, n, 150, &si);
    rewrite(b.dir, minor, reserved, grow);
    snprintf(tu_context, sizeof tu_context, "%s", what);
    mh_seg seg;
    open_seg(&b, &seg, expect);
    if (expect == MH_OK) {
        check_rows(&seg, a, back, n);
        mh_seg_close(&seg);
    }
    /* the public reader agrees */
    mh_reader *r = NULL;
    int rc = mh_reader_open(b.dir, &r);
    if (rc == MH_OK) {
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        mh_access *out = malloc(n * sizeof *out);
        size_t got = 0;
        rc = mh_query_run(r, &q, out, n, &got);
        CHECK(rc != MH_OK || got == n);
        free(out);
        mh_reader_close(r);
    }
    CHECKF(rc == expect, "%s: reader %s, want %s", what, mh_error_name(rc),
              mh_error_name(expect));
    tu_context[0] = 0;
    tu_rmtree(b.dir);
}

static void test_size_rule(void) {
    size_rule("rewritten as it was", 0, 0, 0, MH_OK);
    size_rule("minor 0, longer slice records", 0, 0, 8, MH_ECORRUPT);
    size_rule("this minor, longer slice records", MHF_VERSION_MINOR, 0, 8, MH_ECORRUPT);
    size_rule("a later minor, longer slice records", MHF_VERSION_MINOR + 1, 0, 8, MH_OK);
    size_rule("minor 0, reserved header byte", 0, 1, 0, MH_ECORRUPT);
    size_rule("this minor, reserved header byte", MHF_VERSION_MINOR, 1, 0, MH_ECORRUPT);
    size_rule("a later minor, reserved header byte", MHF_VERSION_MINOR + 1, 1, 0, MH_OK);
    size_rule("a later minor, shorter slice records", MHF_VERSION_MINOR + 1, 0,
              -8, MH_ECORRUPT);
}

/* ---- fsck names wrong masks and counts --------------------------------- */
static void test_fsck(void) {
    size_t n = 1000;
    mh_rec *a = malloc(n * sizeof *a);
    tu_rng rng = {5};
    make_rows(a, n, &rng, 0);
    /* reads are stream 0: the first block (rows in operation order) holds
     * only reads, so its mask lacks bits its slice has */
    for (size_t i = 0; i < n; i++)
        if (a[i].op == MHF_OP_READ)
            a[i].stream = 0;
    mh_stream_info st[NSTREAMS];
    declare(st);
    mh_seal_info si = {.streams = st, .nstreams = NSTREAMS};
    built b;
    write_store(&b, a, n, 500, &si);
    CHECK(fsck(b.dir) == 0);
    char copy[4096];
    tu_mkdtemp(copy, sizeof copy, "format2-bad");
    char path[4200];
    tu_join(path, sizeof path, copy, b.name);
    /* a block's stream mask with one more bit: every sum fixed */
    tu_copy_dir(b.dir, copy);
    size_t len = 0;
    uint8_t *f = tu_read_file(path, &len);
    uint64_t bo = 0, bs = 0, so = 0, ss = 0;
    uint32_t bn = 0, sn = 0;
    CHECK(mhf_seg_find(f, len, MHF_SECT_BLOCKS, &bo, &bs, &bn));
    CHECK(mhf_seg_find(f, len, MHF_SECT_SLICES, &so, &ss, &sn));
    uint8_t *rec = f + bo;
    /* turn a bit on that the slice also has, so only fsck sees it */
    uint32_t smask = mhf_load_u32(f + so + MHF2_SLICE_STREAM_MASK);
    uint32_t bmask = mhf_load_u32(rec + MHF2_BLOCK_STREAM_MASK);
    uint32_t extra = smask & ~bmask;
    CHECK(extra != 0);
    mhf_store_u32(rec + MHF2_BLOCK_STREAM_MASK, bmask | (extra & -extra));
    /* the slice's index sum and the blocks section's sum */
    uint32_t cf = mhf_load_u32(f + so + MHF_SLICE_CHUNK_FIRST);
    uint32_t cc = mhf_load_u32(f + so + MHF_SLICE_CHUNK_COUNT);
    uint32_t bc = mhf_load_u32(f + so + MHF_SLICE_BLOCK_COUNT);
    uint64_t co = 0, cs = 0;
    uint32_t cn = 0;
    CHECK(mhf_seg_find(f, len, MHF_SECT_CHUNKS, &co, &cs, &cn));
    uint64_t bsum = mh_hash(f + bo, (size_t)bc * MHF_BLOCK_SIZE);
    mhf_store_u64(f + so + MHF_SLICE_INDEX_SUM,
                  mh_hash_seeded(f + co + (size_t)cf * MHF_CHUNK_SIZE,
                                 (size_t)cc * MHF_CHUNK_SIZE, bsum));
    uint32_t nd = mhf_load_u32(f + MHF2_SEG_DIR_COUNT);
    uint64_t doff = mhf_load_u64(f + MHF2_SEG_DIR_OFF);
    for (uint32_t i = 0; i < nd; i++) {
        uint8_t *e = f + doff + (size_t)i * MHF2_DIR_SIZE;
        uint64_t o = mhf_load_u64(e + MHF2_DIR_OFFSET);
        mhf_store_u64(e + MHF2_DIR_SUM,
                      mh_hash(f + o, (size_t)mhf_load_u64(e + MHF2_DIR_BYTES)));
    }
    mhf_store_u64(f + MHF2_SEG_DIR_SUM, mh_hash(f + doff, (size_t)nd * MHF2_DIR_SIZE));
    uint64_t hsum = mh_hash(f, MHF_SEG_HEADER_SUM);
    mhf_store_u64(f + MHF_SEG_HEADER_SUM, hsum);
    tu_write_file(path, f, len);
    mh_manifest m;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_manifest_load(copy, &m, &d));
    m.recs[0].header_sum = hsum;
    CHECK_OK(mh_manifest_store(copy, &m, &d));
    mh_manifest_free(&m);
    mh_seg seg;
    CHECK_OK(mh_seg_open(copy, b.name, &seg, &d)); /* readers cannot tell */
    mh_seg_close(&seg);
    CHECK(fsck(copy) >= 1);
    free(f);
    tu_rmtree(copy);
    tu_rmtree(b.dir);
    free(a);
}

/* ---- the 1.0 golden store ---------------------------------------------- */
#ifdef MH_GOLDEN_DIR
static void test_golden_1_0(void) {
    const char *cands[] = {MH_GOLDEN_DIR "/v1/tiny.store", /* where spec keeps it */
                           MH_GOLDEN_DIR "/tiny-1.0.store",
                           MH_GOLDEN_DIR "/compat/tiny-1.0.store",
                           MH_GOLDEN_DIR "/tiny.store"};
    const char *dir = NULL;
    mh_manifest m;
    mh_diag d = {0, 0, ""};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !dir; i++) {
        if (mh_manifest_load(cands[i], &m, &d) != MH_OK)
            continue;
        if (m.major == 1)
            dir = cands[i];
        else
            mh_manifest_free(&m);
    }
    CHECKF(dir != NULL, "no format 1.0 golden store under %s", MH_GOLDEN_DIR);
    size_t n = sizeof tiny_accesses / sizeof tiny_accesses[0];
    mh_rec *back = calloc(n, sizeof *back);
    size_t at = 0;
    for (size_t s = 0; s < m.nrecs; s++) {
        char name[MHF_SEGMENT_NAME_LEN + 1];
        mh_segment_name(name, m.recs[s].seq);
        mh_seg seg;
        CHECK_OK(mh_seg_open(dir, name, &seg, &d));
        CHECK(seg.major == 1 && seg.nsections == 5 && !seg.dict.has_stream_table);
        CHECK(seg.dict.nstreams == 1 && seg.dict.streams[0].count == seg.count);
        CHECK(seg.id_first == at && at + seg.count <= n);
        read_all(&seg, back + at, seg.count);
        at += seg.count;
        mh_seg_close(&seg);
    }
    mh_manifest_free(&m);
    CHECK(at == n);
    for (size_t i = 0; i < n; i++) {
        const tiny_access *t = &tiny_accesses[i];
        mh_rec want = {.transition = t->transition, .physical = t->physical,
                       .linear = t->linear, .size = t->size, .op = t->op,
                       .has_linear = t->has_linear};
        same_rec(&want, &back[i], i);
    }
    CHECK(fsck(dir) == 0);
    /* a writer refuses to append to it */
    char copy[4096];
    tu_mkdtemp(copy, sizeof copy, "format2-v1");
    tu_copy_dir(dir, copy);
    mh_writer *w = NULL;
    char err[256] = "";
    int rc = mh_writer_open_ex(copy, MH_APPEND, NULL, &w, err, sizeof err);
    CHECKF(rc == MH_EVERSION && strstr(err, "run memhist upgrade"),
              "writer on a 1.0 store: %s (%s)", mh_error_name(rc), err);
    /* its MANIFEST said to be 2.0 (checksum fixed): the 1.0 segments it
     * lists are damage, not an old store */
    mh_manifest mm;
    CHECK_OK(mh_manifest_load(copy, &mm, &d));
    mm.major = 2;
    CHECK_OK(mh_manifest_store(copy, &mm, &d));
    mh_manifest_free(&mm);
    mh_reader *r = NULL;
    rc = mh_reader_open(copy, &r);
    if (rc == MH_OK) { /* a lazy reader finds it at the segment's first use */
        mh_query q;
        mh_query_init(&q);
        mh_access out[4];
        size_t got = 0;
        rc = mh_query_run(r, &q, out, 4, &got);
        mh_reader_close(r);
    }
    CHECKF(rc == MH_ECORRUPT, "1.0 segments under a 2.0 MANIFEST: %s",
           mh_error_name(rc));
    CHECK(fsck(copy) >= 1);
    tu_rmtree(copy);
    free(back);
}
#endif

int main(void) {
    test_round_trip(0, 0);
    test_round_trip(1, 0);
    test_round_trip(0, 1);
    test_plain();
    test_unknown();
    test_size_rule();
    test_fsck();
#ifdef MH_GOLDEN_DIR
    test_golden_1_0();
#endif
    printf("format2: ok\n");
    return 0;
}
