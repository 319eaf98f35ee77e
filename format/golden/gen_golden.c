/*
 * gen_golden.c - writes the golden stores of format/golden: tiny.store (the
 * accesses of tiny_input.h in format 2.0: two segments, two streams, pcs,
 * windows, metadata) and corrupt/<name>.store, copies of it each changed in
 * one precise way (most damaged, a few valid: a newer minor). Built with the
 * tests, never run by them except to compare its output with the committed
 * bytes: any change of the format shows up as a difference. The 1.0 fixture
 * format/golden/v1/tiny.store is not written here (a 2.0 writer writes 2.0
 * only): it is kept as committed.
 *
 * Usage: gen_golden [--force] OUTDIR
 *   --force  replace OUTDIR/tiny.store and OUTDIR/corrupt if they exist
 * Exit status: 0 written, 1 failure, 2 usage.
 *
 * Variants whose damage is not meant to be a checksum mismatch are rebuilt
 * by seg_edit.c, which recomputes every checksum as SPEC.md states it, so
 * the reader must catch the damage by the check meant for it. That rebuild
 * is itself a check of SPEC.md: the valid variants (newer minor) must open
 * and answer exactly as tiny.store does.
 */
#include <dirent.h>
#include <errno.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "memhist.h"
#include "mh_format.h"
#include "seg_edit.h"
#include "tiny_input.h"

static void check(int rc, const char *what) {
    if (rc != MH_OK)
        se_die(what, mh_strerror(rc));
}

static void join(char *buf, size_t cap, const char *a, const char *b) {
    int k = snprintf(buf, cap, "%s/%s", a, b);
    if (k < 0 || (size_t)k >= cap)
        se_die("path too long", a);
}

static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d)
            se_die("cannot list", path);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            join(sub, sizeof sub, path, e->d_name);
            remove_tree(sub);
        }
        closedir(d);
        if (rmdir(path) != 0)
            se_die("cannot remove", path);
    } else if (unlink(path) != 0) {
        se_die("cannot remove", path);
    }
}

static void copy_store(const char *from, const char *to) {
    if (mkdir(to, 0755) != 0)
        se_die("cannot create", to);
    DIR *d = opendir(from);
    if (!d)
        se_die("cannot list", from);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        se_buf f = se_load(from, e->d_name);
        se_save(to, e->d_name, &f);
        free(f.p);
    }
    closedir(d);
}

/* ---- the tiny store ------------------------------------------------------- */
static mh_access to_access(size_t i) {
    const tiny_access *t = &tiny_accesses[i];
    mh_access a;
    memset(&a, 0, sizeof a);
    a.transition = t->transition;
    a.physical = t->physical;
    a.size = t->size;
    a.op = t->op;
    a.has_linear = t->has_linear;
    a.linear = t->linear;
    a.stream = tiny_streams[i];
    a.has_pc = tiny_pcs[i] != 0;
    a.pc = tiny_pcs[i];
    return a;
}

/* Window calls due before access i (begin/end of tiny_windows). */
static void windows_before(mh_writer *w, size_t i) {
    for (size_t k = 0; k < TINY_WINDOWS; k++) {
        if (tiny_windows[k].begin == i)
            check(mh_writer_window_begin(w, tiny_windows[k].window), "window_begin");
        if (tiny_windows[k].end == i)
            check(mh_writer_window_end(w), "window_end");
    }
}

static int window_edge(size_t i) {
    for (size_t k = 0; k < TINY_WINDOWS; k++)
        if (tiny_windows[k].begin == i || tiny_windows[k].end == i)
            return 1;
    return 0;
}

static void write_tiny(const char *path) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = TINY_SLICE_ACCESSES;
    o.block_accesses = TINY_BLOCK_ACCESSES;
    o.chunk_min_accesses = TINY_CHUNK_MIN;
    o.lz4_acceleration = TINY_LZ4_ACCELERATION;
    o.commit_accesses = 0;
    o.background = 0;
    mh_writer *w = NULL;
    check(mh_writer_open(path, MH_CREATE, &o, &w), path);
    for (size_t i = 0; i < TINY_STREAMS; i++) {
        const tiny_stream *t = &tiny_stream_decl[i];
        mh_stream_info s;
        mh_stream_info_init(&s);
        s.id = t->id;
        s.kind = t->kind;
        s.parent = t->parent;
        s.pid = t->pid;
        s.tid = t->tid;
        s.cpu = t->cpu;
        s.name = t->name;
        check(mh_writer_stream_declare(w, &s), "stream_declare");
    }
    for (size_t i = 0; i < TINY_STREAM_META; i++)
        check(mh_writer_stream_set_meta(w, tiny_stream_meta[i].stream, tiny_stream_meta[i].key,
                                        tiny_stream_meta[i].value),
              "stream_set_meta");
    for (size_t i = 0; i < sizeof tiny_meta_first / sizeof tiny_meta_first[0]; i++)
        check(mh_writer_set_meta(w, tiny_meta_first[i][0], tiny_meta_first[i][1]), "meta");
    for (size_t i = 0; i < TINY_FIRST_COMMIT; i++) { /* one at a time ... */
        windows_before(w, i);
        mh_access a = to_access(i);
        check(mh_writer_append(w, &a), "append");
    }
    check(mh_writer_commit(w), "commit");
    for (size_t i = 0; i < sizeof tiny_meta_second / sizeof tiny_meta_second[0]; i++)
        check(mh_writer_set_meta(w, tiny_meta_second[i][0], tiny_meta_second[i][1]), "meta");
    mh_access batch[TINY_COUNT];
    size_t n = 0;
    for (size_t i = TINY_FIRST_COMMIT; i < TINY_COUNT; i++) { /* ... then in batches */
        if (window_edge(i) && n) {
            check(mh_writer_append_batch(w, batch, n, NULL), "append_batch");
            n = 0;
        }
        windows_before(w, i);
        batch[n++] = to_access(i);
    }
    check(mh_writer_append_batch(w, batch, n, NULL), "append_batch");
    windows_before(w, TINY_COUNT);
    check(mh_writer_close(w), "close");
}

/* ---- the damage ------------------------------------------------------------ */
#define SEG0 "seg-0000000000000000.mhs"
#define SEG1 "seg-0000000000000001.mhs"

typedef void (*mutate_fn)(const char *store);
typedef void (*seg_fn)(se_seg *s);

/* Loads segment `name`, lets fn change it, writes it back with every
 * checksum right, and points the MANIFEST record at it. */
static void edit_segment(const char *store, const char *name, seg_fn fn) {
    se_buf f = se_load(store, name);
    se_seg s;
    se_seg_parse(&f, &s);
    free(f.p);
    fn(&s);
    se_buf out = se_seg_emit(&s);
    se_save(store, name, &out);
    free(out.p);
    se_seg_free(&s);
    se_manifest_fix(store);
}

typedef void (*dict_fn)(se_dict *d);
static void edit_dict(se_seg *s, dict_fn fn) {
    se_section *x = se_seg_find(s, MHF_SECT_DICT);
    se_dict d;
    se_dict_parse(&x->data, &d);
    fn(&d);
    se_dict_emit(&d, &x->data);
    se_dict_free(&d);
}

/* Offset in the segment file of section `type` (from its directory). */
static size_t section_offset(const char *store, const char *name, uint32_t type) {
    se_buf f = se_load(store, name);
    uint32_t n = mhf_load_u32(f.p + 92), rsz = mhf_load_u32(f.p + 104);
    uint64_t dir = mhf_load_u64(f.p + 96);
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *e = f.p + dir + (size_t)i * rsz;
        if (mhf_load_u32(e) == type) {
            size_t off = (size_t)mhf_load_u64(e + 8);
            free(f.p);
            return off;
        }
    }
    se_die("no such section", name);
    return 0;
}

static void flip(const char *store, const char *name, size_t off, unsigned char mask) {
    se_buf f = se_load(store, name);
    if (off >= f.len)
        se_die("flip outside the file", name);
    f.p[off] ^= mask;
    se_save(store, name, &f);
    free(f.p);
}

/* Sets a header field of a segment, every checksum recomputed. */
static void set_header(const char *store, const char *name, size_t off, unsigned width,
                       uint64_t v) {
    se_buf f = se_load(store, name);
    if (width == 2)
        mhf_store_u16(f.p + off, (uint16_t)v);
    else if (width == 4)
        mhf_store_u32(f.p + off, (uint32_t)v);
    else
        mhf_store_u64(f.p + off, v);
    mhf_store_u64(f.p + MHF_SEG_HEADER_SUM, XXH3_64bits(f.p, MHF_SEG_HEADER_SUM));
    se_save(store, name, &f);
    free(f.p);
    se_manifest_fix(store);
}

static void set_manifest(const char *store, size_t off, unsigned width, uint64_t v) {
    se_buf m = se_load(store, MHF_MANIFEST_NAME);
    if (width == 2)
        mhf_store_u16(m.p + off, (uint16_t)v);
    else if (width == 4)
        mhf_store_u32(m.p + off, (uint32_t)v);
    else
        mhf_store_u64(m.p + off, v);
    se_save(store, MHF_MANIFEST_NAME, &m);
    free(m.p);
    se_manifest_fix(store);
}

/* -- MANIFEST -- */
static void m_manifest_magic(const char *s) { flip(s, MHF_MANIFEST_NAME, 0, 0x20); }
static void m_manifest_major(const char *s) { set_manifest(s, MHF_MAN_MAJOR, 2, 3); }
static void m_manifest_major_1(const char *s) { set_manifest(s, MHF_MAN_MAJOR, 2, 1); }
static void m_manifest_generation_0(const char *s) { set_manifest(s, MHF_MAN_GENERATION, 8, 0); }
static void m_manifest_checksum(const char *s) {
    se_buf m = se_load(s, MHF_MANIFEST_NAME);
    m.p[m.len - 1] ^= 0x01;
    se_save(s, MHF_MANIFEST_NAME, &m);
    free(m.p);
}
static void m_manifest_trailing(const char *s) {
    se_buf m = se_load(s, MHF_MANIFEST_NAME);
    memset(m.p + m.len, 0, 8);
    m.len += 8;
    se_save(s, MHF_MANIFEST_NAME, &m);
    free(m.p);
}
static void m_manifest_truncated(const char *s) {
    se_buf m = se_load(s, MHF_MANIFEST_NAME);
    m.len -= 10;
    se_save(s, MHF_MANIFEST_NAME, &m);
    free(m.p);
}
static void m_manifest_short(const char *s) {
    /* the magic and a little more: once the magic matched, truncated */
    se_buf m = se_load(s, MHF_MANIFEST_NAME);
    m.len = 20;
    se_save(s, MHF_MANIFEST_NAME, &m);
    free(m.p);
}
/* Rewrites the MANIFEST with header and record size hsz/rsz (the extra
 * bytes filled with pad) and minor version `minor`. */
static void rewrite_manifest(const char *s, uint32_t hsz, uint32_t rsz, uint16_t minor,
                             unsigned char pad) {
    se_buf m = se_load(s, MHF_MANIFEST_NAME);
    uint32_t n = mhf_load_u32(m.p + MHF_MAN_SEG_COUNT);
    se_buf out = {calloc(1, hsz + (size_t)n * rsz + 8), hsz + (size_t)n * rsz + 8};
    if (!out.p)
        se_die("out of memory", s);
    memset(out.p, pad, out.len);
    memcpy(out.p, m.p, MHF_MAN_HEADER_SIZE);
    for (uint32_t i = 0; i < n; i++)
        memcpy(out.p + hsz + (size_t)i * rsz, m.p + MHF_MAN_HEADER_SIZE + (size_t)i * 64, 64);
    mhf_store_u32(out.p + MHF_MAN_HEADER_SIZE_OFF, hsz);
    mhf_store_u32(out.p + MHF_MAN_RECSZ, rsz);
    mhf_store_u16(out.p + MHF_MAN_MINOR, minor);
    se_save(s, MHF_MANIFEST_NAME, &out);
    free(out.p);
    free(m.p);
    se_manifest_fix(s);
}
static void m_manifest_header_72(const char *s) { rewrite_manifest(s, 72, 64, 0, 0); }

/* -- segment header -- */
static void m_segment_magic(const char *s) { flip(s, SEG0, 0, 0x20); }
static void m_segment_major(const char *s) { set_header(s, SEG0, MHF_SEG_MAJOR, 2, 3); }
static void m_segment_byte_order(const char *s) {
    set_header(s, SEG0, MHF_SEG_BOM, 4, MHF_BYTE_ORDER_SWAPPED);
}
static void m_segment_incompat_flag(const char *s) { set_header(s, SEG0, MHF_SEG_FLAGS, 4, 1); }
static void m_segment_newer_minor(const char *s) {
    /* MHF_VERSION_MINOR + 1: newer than this reader's */
    set_header(s, SEG0, MHF_SEG_MINOR, 2, MHF_VERSION_MINOR + 1);
    set_header(s, SEG0, MHF_SEG_FLAGS, 4, 1u << 16); /* a compatible flag */
}
static void m_segment_header_flip(const char *s) { flip(s, SEG1, MHF_SEG_COUNT, 0x01); }
static void m_segment_truncated(const char *s) {
    se_buf f = se_load(s, SEG1);
    f.len /= 2;
    se_save(s, SEG1, &f);
    free(f.p);
}
static void m_segment_missing(const char *s) {
    char path[4096];
    join(path, sizeof path, s, SEG1);
    if (unlink(path) != 0)
        se_die("cannot remove", path);
}

/* -- directory -- */
static void m_directory_flip(const char *s) {
    se_buf f = se_load(s, SEG0);
    size_t off = (size_t)mhf_load_u64(f.p + 96) + 48 + 16; /* entry 1's size */
    free(f.p);
    flip(s, SEG0, off, 0x01);
}
static void dir_unknown_required(se_seg *g) {
    static const char body[] = "a section a 2.0 reader cannot do without";
    se_seg_insert(g, 3, 100, MHF_SECT_REQUIRED, body, sizeof body);
}
static void m_section_unknown_required(const char *s) {
    edit_segment(s, SEG0, dir_unknown_required);
}
static void dir_duplicate(se_seg *g) {
    se_section *x = se_seg_find(g, MHF_SECT_DICT);
    se_seg_insert(g, (size_t)(x - g->s) + 1, MHF_SECT_DICT, MHF_SECT_REQUIRED, x->data.p,
                  x->data.len);
}
static void m_directory_duplicate(const char *s) { edit_segment(s, SEG0, dir_duplicate); }

/* The directory's entries written by hand, so that offsets can disagree
 * with the sizes (seg_edit always tiles). */
static void shift_entry_offset(const char *s, uint32_t entry, int64_t delta) {
    se_buf f = se_load(s, SEG0);
    uint64_t dir = mhf_load_u64(f.p + 96);
    uint32_t n = mhf_load_u32(f.p + 92), rsz = mhf_load_u32(f.p + 104);
    unsigned char *e = f.p + dir + (size_t)entry * rsz;
    mhf_store_u64(e + 8, mhf_load_u64(e + 8) + (uint64_t)delta);
    /* the entry's sum covers its new range, so only tiling is wrong */
    uint64_t off = mhf_load_u64(e + 8), size = mhf_load_u64(e + 16);
    if (off + size <= dir)
        mhf_store_u64(e + 32, XXH3_64bits(f.p + off, (size_t)size));
    mhf_store_u64(f.p + 112, XXH3_64bits(f.p + dir, (size_t)n * rsz));
    mhf_store_u64(f.p + MHF_SEG_HEADER_SUM, XXH3_64bits(f.p, MHF_SEG_HEADER_SUM));
    se_save(s, SEG0, &f);
    free(f.p);
    se_manifest_fix(s);
}
static void m_directory_gap(const char *s) { shift_entry_offset(s, 2, 8); }
static void m_directory_overlap(const char *s) { shift_entry_offset(s, 2, -8); }

/* -- dictionary -- */
static void m_dictionary_flip(const char *s) {
    /* a byte of the first string (the table header is 16 + 24 bytes in) */
    flip(s, SEG0, section_offset(s, SEG0, MHF_SECT_DICT) + 16 + 24 + 4, 0x40);
}
static void dict_table_header(se_dict *d) {
    se_table *t = se_dict_find(d, 2); /* columns: record_size 8 -> 9 */
    t->recsz = 9;
}
static void seg_dict_table_header(se_seg *g) { edit_dict(g, dict_table_header); }
static void m_dict_table_header(const char *s) { edit_segment(s, SEG0, seg_dict_table_header); }

static void swap_records(se_table *t, uint32_t a, uint32_t b) {
    if (!t || a >= t->count || b >= t->count)
        se_die("no such records", "swap");
    unsigned char tmp[256];
    memcpy(tmp, t->data.p + (size_t)a * t->recsz, t->recsz);
    memcpy(t->data.p + (size_t)a * t->recsz, t->data.p + (size_t)b * t->recsz, t->recsz);
    memcpy(t->data.p + (size_t)b * t->recsz, tmp, t->recsz);
}
static void dict_stream_order(se_dict *d) { swap_records(se_dict_find(d, 5), 0, 1); }
static void seg_stream_order(se_seg *g) { edit_dict(g, dict_stream_order); }
static void m_stream_table_order(const char *s) { edit_segment(s, SEG0, seg_stream_order); }
static void dict_window_order(se_dict *d) { swap_records(se_dict_find(d, 7), 0, 1); }
static void seg_window_order(se_seg *g) { edit_dict(g, dict_window_order); }
static void m_window_table_order(const char *s) { edit_segment(s, SEG0, seg_window_order); }
static void dict_window_overlap(se_dict *d) {
    /* window 2's part starts inside window 1's (ids 3 .. 14) */
    se_table *t = se_dict_find(d, 7);
    if (!t || t->count < 2)
        se_die("fewer than two window parts", "overlap");
    mhf_store_u64(t->data.p + t->recsz + 8, 14);
}
static void seg_window_overlap(se_seg *g) { edit_dict(g, dict_window_overlap); }
static void m_window_overlap(const char *s) { edit_segment(s, SEG0, seg_window_overlap); }

/* -- store-level tables (SPEC.md 8): each segment valid on its own -- */
static void dict_drop_stream_1(se_dict *d) {
    /* segment 1 forgets stream 1 (count 0 there) and its metadata */
    se_table *t = se_dict_find(d, 5);
    if (!t || t->count != 2 || mhf_load_u32(t->data.p + t->recsz) != 1 ||
        mhf_load_u64(t->data.p + t->recsz + 40) != 0)
        se_die("segment 1 should list streams 0 and 1, 1 without accesses", "drop");
    t->count = 1;
    t->data.len = t->recsz;
    for (size_t i = 0; i < d->ntables; i++)
        if (d->t[i].type == 6) {
            free(d->t[i].data.p);
            memmove(&d->t[i], &d->t[i + 1], (d->ntables - i - 1) * sizeof d->t[0]);
            d->ntables--;
            break;
        }
}
static void seg_drop_stream_1(se_seg *g) { edit_dict(g, dict_drop_stream_1); }
static void m_stream_not_in_newest(const char *s) { edit_segment(s, SEG1, seg_drop_stream_1); }
static void dict_window_gap(se_dict *d) {
    /* window 2's part in segment 1 starts one id late (ids 25 .. 29 instead
     * of 24 .. 29; ids 24 and 25 share their transition) */
    se_table *t = se_dict_find(d, 7);
    if (!t || mhf_load_u64(t->data.p) != 2 || mhf_load_u64(t->data.p + 8) != 24)
        se_die("segment 1's first window part is not window 2 at id 24", "gap");
    mhf_store_u64(t->data.p + 8, 25);
    mhf_store_u64(t->data.p + 16, mhf_load_u64(t->data.p + 16) - 1);
}
static void seg_window_gap(se_seg *g) { edit_dict(g, dict_window_gap); }
static void m_window_parts_gap(const char *s) { edit_segment(s, SEG1, seg_window_gap); }

/* -- slices, chunks, blocks -- */
static void m_slice_flip(const char *s) {
    flip(s, SEG0, section_offset(s, SEG0, MHF_SECT_SLICES) + 72 + MHF_SLICE_COUNT, 0x01);
}
static void m_chunk_flip(const char *s) {
    flip(s, SEG0, section_offset(s, SEG0, MHF_SECT_CHUNKS) + MHF_CHUNK_PHY_LAST, 0x04);
}
static void m_block_flip(const char *s) {
    se_buf f = se_load(s, SEG0);
    size_t rec = section_offset(s, SEG0, MHF_SECT_BLOCKS);
    size_t off = (size_t)mhf_load_u64(f.p + rec + MHF_BLOCK_OFFSET) +
                 mhf_load_u32(f.p + rec + MHF_BLOCK_COMP_SIZE) / 2;
    free(f.p);
    flip(s, SEG0, off, 0x10);
}
static void block_raw_size(se_seg *g) {
    /* every checksum right, but block 0 cannot decompress to raw_size */
    se_section *b = se_seg_find(g, MHF_SECT_BLOCKS);
    mhf_store_u32(b->data.p + MHF_BLOCK_RAW_SIZE,
                  mhf_load_u32(b->data.p + MHF_BLOCK_RAW_SIZE) + 1);
    mhf_store_u64(g->hdr + 128, mhf_load_u64(g->hdr + 128) + 1);
}
static void m_block_raw_size(const char *s) { edit_segment(s, SEG0, block_raw_size); }
static void block_phy_range(se_seg *g) {
    /* every checksum right, but block 0's record says its rows end a byte
     * lower than its last-reaching row does (phy_max is exact) */
    se_section *b = se_seg_find(g, MHF_SECT_BLOCKS);
    uint64_t lo = mhf_load_u64(b->data.p + MHF_BLOCK_PHY_MIN);
    uint64_t hi = mhf_load_u64(b->data.p + MHF_BLOCK_PHY_MAX);
    if (hi <= lo)
        se_die("block 0 spans one byte", "block-phy-range");
    mhf_store_u64(b->data.p + MHF_BLOCK_PHY_MAX, hi - 1);
}
static void m_block_phy_range(const char *s) { edit_segment(s, SEG0, block_phy_range); }
static void block_first_row(se_seg *g) {
    /* every checksum right, but block 0's record names another id for its
     * first row (one still inside its slice, which the record's own check
     * allows) */
    se_section *b = se_seg_find(g, MHF_SECT_BLOCKS);
    se_section *sl = se_seg_find(g, MHF_SECT_SLICES);
    uint32_t id = mhf_load_u32(b->data.p + MHF_BLOCK_FIRST_ID);
    uint32_t count = mhf_load_u32(sl->data.p + MHF_SLICE_COUNT);
    if (count < 2)
        se_die("slice 0 holds one row", "block-first-row");
    mhf_store_u32(b->data.p + MHF_BLOCK_FIRST_ID, id + 1 < count ? id + 1 : id - 1);
}
static void m_block_first_row(const char *s) { edit_segment(s, SEG0, block_first_row); }
static void chunk_row_outside(se_seg *g) {
    /* the widest chunk of segment 0 ends one byte before the end of its
     * last-reaching row */
    se_section *c = se_seg_find(g, MHF_SECT_CHUNKS);
    unsigned char *best = NULL;
    uint64_t width = 0;
    for (uint32_t k = 0; k < c->count; k++) {
        unsigned char *r = c->data.p + (size_t)k * c->recsz;
        uint64_t w = mhf_load_u64(r + MHF_CHUNK_PHY_LAST) - mhf_load_u64(r + MHF_CHUNK_PHY_FIRST);
        if (w > width) {
            width = w;
            best = r;
        }
    }
    if (!best)
        se_die("no chunk wider than one byte", "chunk-row-outside");
    mhf_store_u64(best + MHF_CHUNK_PHY_LAST, mhf_load_u64(best + MHF_CHUNK_PHY_LAST) - 1);
}
static void m_chunk_row_outside(const char *s) { edit_segment(s, SEG0, chunk_row_outside); }
static void stream_mask_wrong(se_seg *g) {
    /* slice 0 holds streams 0 and 1 (mask 3); say stream 0 only: still a
     * subset of the segment's streams, so only the rows show it wrong */
    se_section *sl = se_seg_find(g, MHF_SECT_SLICES);
    if (mhf_load_u32(sl->data.p + 64) != 3)
        se_die("slice 0's stream mask is not 3", "stream-mask");
    mhf_store_u32(sl->data.p + 64, 1);
}
static void m_stream_mask_wrong(const char *s) { edit_segment(s, SEG0, stream_mask_wrong); }
static void pc_truncated(se_seg *g) {
    /* block 0's last column (pc) loses its last byte, and its length says so */
    se_seg_decode_blocks(g);
    se_buf *raw = &g->raw[0];
    size_t at = 0, last = 0;
    for (int k = 0; k < 7; k++) { /* id .. size, stream, pc */
        last = at;
        uint64_t len = 0;
        unsigned shift = 0;
        while (raw->p[at] & 0x80)
            len |= (uint64_t)(raw->p[at++] & 0x7f) << shift, shift += 7;
        len |= (uint64_t)raw->p[at++] << shift;
        at += (size_t)len;
    }
    if (at != raw->len || raw->p[last] == 0 || raw->p[last] >= 0x80)
        se_die("block 0 is not seven columns ending with a short pc column", "pc");
    raw->p[last]--;
    raw->len--;
    mhf_store_u64(g->hdr + 128, mhf_load_u64(g->hdr + 128) - 1);
}
static void m_pc_truncated(const char *s) { edit_segment(s, SEG0, pc_truncated); }

/* -- address summary -- */
static se_section *summary(se_seg *g) { return se_seg_find(g, MHF_SECT_SUMMARY); }
static void summary_order(se_seg *g) {
    /* entries 0 and 1 swap their keys (granule, op), not their postings,
     * so the postings still tile and only the order is wrong */
    unsigned char *e = summary(g)->data.p + 32, tmp[8];
    memcpy(tmp, e, 8);
    memcpy(e, e + 24, 8);
    memcpy(e + 24, tmp, 8);
    unsigned char op = e[20];
    e[20] = e[24 + 20];
    e[24 + 20] = op;
}
static void m_summary_order(const char *s) { edit_segment(s, SEG0, summary_order); }
static void summary_posting(se_seg *g) {
    /* the last posting names slice `slice_count` */
    se_section *x = summary(g);
    uint32_t nslices = se_seg_find(g, MHF_SECT_SLICES)->count;
    mhf_store_u32(x->data.p + x->data.len - 4, nslices);
}
static void m_summary_posting(const char *s) { edit_segment(s, SEG0, summary_posting); }

/* -- the fine address summary (2.1, section 9: section 6's layout) -------- */
static se_section *fine_summary(se_seg *g) { return se_seg_find(g, MHF_SECT_SUMMARY_FINE); }
static void fine_summary_order(se_seg *g) {
    /* entries 0 and 1 swap their keys, as summary-order does to section 6 */
    unsigned char *e = fine_summary(g)->data.p + 32, tmp[8];
    memcpy(tmp, e, 8);
    memcpy(e, e + 24, 8);
    memcpy(e + 24, tmp, 8);
    unsigned char op = e[20];
    e[20] = e[24 + 20];
    e[24 + 20] = op;
}
static void m_fine_summary_order(const char *s) { edit_segment(s, SEG1, fine_summary_order); }
static void fine_summary_shift(se_seg *g) {
    /* granule_shift 9: below the least of section 9 (10) */
    mhf_store_u32(fine_summary(g)->data.p, 9);
}
static void m_fine_summary_shift(const char *s) { edit_segment(s, SEG1, fine_summary_shift); }

/* -- the id map (2.1, section 7) ------------------------------------------ */
static se_section *idmap(se_seg *g) {
    se_section *x = se_seg_find(g, MHF_SECT_IDMAP);
    if (!x)
        se_die("no id map", "idmap");
    return x;
}
/* Decodes every group of g's id map (SPEC.md 9a: 32-byte header, 32-byte
 * group records, LZ4 blocks of u8 labels for these small slices), lets
 * edit change group 0's labels, and lays the section out again with each
 * group recompressed and the data offsets following: damage that only the
 * label checks can see. */
static void idmap_relabel(se_seg *g, void (*edit)(unsigned char *lab, uint32_t n)) {
    se_section *x = idmap(g);
    unsigned char *p = x->data.p;
    uint32_t ng = mhf_load_u32(p + 4);
    if (mhf_load_u32(p + 8) != 32)
        se_die("id map records are not 32 bytes", "idmap");
    const unsigned char *data = p + 32 + (size_t)ng * 32;
    se_buf out = {NULL, 0}, area = {NULL, 0};
    se_append(&out, p, 32 + (size_t)ng * 32);
    for (uint32_t i = 0; i < ng; i++) {
        unsigned char *r = out.p + 32 + (size_t)i * 32;
        uint32_t cnt = mhf_load_u32(r + 20);
        if (r[24] != 1)
            se_die("id map labels wider than a byte", "idmap");
        unsigned char lab[MHF_IDMAP_G_MAX];
        int got = LZ4_decompress_safe((const char *)data + mhf_load_u64(r),
                                      (char *)lab, (int)mhf_load_u32(r + 16), (int)cnt);
        if (got != (int)cnt)
            se_die("id map group does not decompress", "idmap");
        if (i == 0)
            edit(lab, cnt);
        char comp[LZ4_COMPRESSBOUND(MHF_IDMAP_G_MAX)];
        int cs = LZ4_compress_default((const char *)lab, comp, (int)cnt, (int)sizeof comp);
        if (cs <= 0)
            se_die("cannot compress", "idmap");
        mhf_store_u64(r, area.len);
        mhf_store_u32(r + 16, (uint32_t)cs);
        se_append(&area, comp, (size_t)cs);
    }
    mhf_store_u64(out.p + 16, area.len);
    se_append(&out, area.p, area.len);
    free(area.p);
    free(x->data.p);
    x->data = out;
}
static uint32_t slice0_chunks(se_seg *g) {
    return mhf_load_u32(se_seg_find(g, MHF_SECT_SLICES)->data.p + MHF_SLICE_CHUNK_COUNT);
}
static uint32_t g_nck; /* slice 0's chunk count, for the edits below */
static void label_out_of_range(unsigned char *lab, uint32_t n) {
    (void)n;
    lab[3] = (unsigned char)g_nck; /* id offset 3: one past the last chunk */
}
static void label_swap(unsigned char *lab, uint32_t n) {
    /* ids 0 and the first of another chunk trade labels: each label still a
     * chunk of the slice, each chunk's count still its row_count */
    for (uint32_t i = 1; i < n; i++)
        if (lab[i] != lab[0]) {
            unsigned char t = lab[0];
            lab[0] = lab[i];
            lab[i] = t;
            return;
        }
    se_die("slice 0 is one chunk", "idmap");
}
static void idmap_label_range(se_seg *g) {
    g_nck = slice0_chunks(g);
    idmap_relabel(g, label_out_of_range);
}
static void m_idmap_label_range(const char *s) { edit_segment(s, SEG0, idmap_label_range); }
static void idmap_label_swap(se_seg *g) { idmap_relabel(g, label_swap); }
static void m_idmap_label_swap(const char *s) { edit_segment(s, SEG0, idmap_label_swap); }
static void idmap_group_count(se_seg *g) {
    /* group 0 (slice 0, 10 ids) says 11 */
    unsigned char *r = idmap(g)->data.p + 32;
    mhf_store_u32(r + 20, mhf_load_u32(r + 20) + 1);
}
static void m_idmap_group_count(const char *s) { edit_segment(s, SEG0, idmap_group_count); }
static void idmap_reserved(se_seg *g) {
    idmap(g)->data.p[32 + 25] = 0x21; /* group 0's reserved byte, minor 1 */
}
static void m_idmap_reserved(const char *s) { edit_segment(s, SEG0, idmap_reserved); }
static void m_idmap_flip(const char *s) {
    /* the last byte of segment 0's id map (a group's LZ4 bytes), sums left */
    se_buf f = se_load(s, SEG0);
    uint64_t off = 0, size = 0;
    uint32_t cnt = 0;
    if (!mhf_seg_find(f.p, f.len, MHF_SECT_IDMAP, &off, &size, &cnt))
        se_die("no id map", s);
    free(f.p);
    flip(s, SEG0, (size_t)(off + size - 1), 0x10);
}
/* -- the id transitions (2.5, section 13) -------------------------------- */
static se_section *idtime(se_seg *g) {
    for (size_t i = 0; i < g->nsect; i++)
        if (g->s[i].type == MHF_SECT_IDTIME)
            return &g->s[i];
    se_die("no id transitions", "idtime");
    return NULL;
}
/* Group 0 of g's id transitions (SPEC.md 9g: slice 0's first samples): its
 * record, its words and its sample count c (the samples of slice 0 at
 * stride K, at most S). */
static unsigned char *idtime_group0(se_seg *g, unsigned char **words, uint32_t *c) {
    unsigned char *p = idtime(g)->data.p;
    uint32_t k = mhf_load_u32(p + MHF_IDTIME_STRIDE);
    uint32_t S = mhf_load_u32(p + MHF_IDTIME_GROUP_SAMPLES);
    uint32_t ng = mhf_load_u32(p + MHF_IDTIME_GROUP_COUNT);
    uint32_t gsz = mhf_load_u32(p + MHF_IDTIME_GROUP_SIZE_OFF);
    if (ng == 0 || gsz != MHF_IDTIME_GROUP_SIZE || k == 0)
        se_die("id transitions without 32-byte group records", "idtime");
    unsigned char *r = p + MHF_IDTIME_HEADER_SIZE;
    if (mhf_load_u32(r + MHF_IDTIME_G_SLICE) != 0 || mhf_load_u32(r + MHF_IDTIME_G_FIRST) != 0)
        se_die("group 0 is not slice 0's first", "idtime");
    uint32_t count =
        mhf_load_u32(se_seg_find(g, MHF_SECT_SLICES)->data.p + MHF_SLICE_COUNT);
    uint32_t ns = (uint32_t)(((uint64_t)count + k - 1) / k);
    *c = ns < S ? ns : S;
    *words = p + MHF_IDTIME_HEADER_SIZE + (size_t)ng * gsz +
             mhf_load_u64(r + MHF_IDTIME_G_DATA_OFFSET);
    return r;
}
static void idtime_sample(se_seg *g) {
    /* group 0's t_first + 1: every sample of the group one transition late,
     * the coding itself sound */
    unsigned char *w, *r = idtime_group0(g, &w, &(uint32_t){0});
    mhf_store_u64(r + MHF_IDTIME_G_T_FIRST, mhf_load_u64(r + MHF_IDTIME_G_T_FIRST) + 1);
}
static void m_idtime_sample(const char *s) { edit_segment(s, SEG0, idtime_sample); }
static void idtime_high_bits(se_seg *g) {
    /* group 0's last set high bit (its last sample's) cleared: one sample
     * fewer than the group holds */
    uint32_t c = 0;
    unsigned char *w, *r = idtime_group0(g, &w, &c);
    uint32_t words = mhf_load_u32(r + MHF_IDTIME_G_WORDS);
    unsigned L = r[MHF_IDTIME_G_LOW_BITS];
    uint64_t lw = ((uint64_t)c * L + 63) / 64;
    for (uint64_t k = words; k-- > lw;) {
        uint64_t x = mhf_load_u64(w + 8 * k);
        if (x) {
            mhf_store_u64(w + 8 * k, x & ~(1ull << (63 - __builtin_clzll(x))));
            return;
        }
    }
    se_die("group 0 has no high bit set", "idtime");
}
static void m_idtime_high_bits(const char *s) { edit_segment(s, SEG0, idtime_high_bits); }
static void idtime_reserved(se_seg *g) {
    /* group 0's first reserved byte, in a segment of this minor */
    unsigned char *w, *r = idtime_group0(g, &w, &(uint32_t){0});
    r[MHF_IDTIME_G_RESERVED] = 0x21;
}
static void m_idtime_reserved(const char *s) { edit_segment(s, SEG0, idtime_reserved); }
static void m_idtime_flip(const char *s) {
    /* the last byte of segment 0's id transitions (its data area: the last
     * group's high bits), every sum left as it was */
    se_buf f = se_load(s, SEG0);
    uint64_t off = 0, size = 0;
    uint32_t cnt = 0;
    if (!mhf_seg_find(f.p, f.len, MHF_SECT_IDTIME, &off, &size, &cnt))
        se_die("no id transitions", s);
    uint32_t ng = mhf_load_u32(f.p + off + MHF_IDTIME_GROUP_COUNT);
    uint32_t gsz = mhf_load_u32(f.p + off + MHF_IDTIME_GROUP_SIZE_OFF);
    if (size <= MHF_IDTIME_HEADER_SIZE + (uint64_t)ng * gsz)
        se_die("id transitions without a data area", s);
    free(f.p);
    flip(s, SEG0, (size_t)(off + size - 1), 0x10);
}
/* -- address set (2.1, section 8) -- */
static se_section *aset(se_seg *g) { return se_seg_find(g, MHF_SECT_ASET); }
static void aset_header(se_seg *g) {
    /* the header's reserved u64 (SPEC 9b: 0 at this minor) */
    mhf_store_u64(aset(g)->data.p + MHF_ASET_RESERVED1, 1);
}
static void m_aset_header(const char *s) { edit_segment(s, SEG0, aset_header); }
static void aset_inexact(se_seg *g) {
    /* the first run not at 0: its intervals one byte lower (its lo - 1;
     * the rest of the run follows it): well formed (tiny.store has one run
     * per operation), but no longer the union of the rows' ranges */
    unsigned char *p = aset(g)->data.p;
    uint32_t nruns = mhf_load_u32(p + MHF_ASET_RUN_COUNT);
    for (uint32_t i = 0; i < nruns; i++) {
        unsigned char *r = p + MHF_ASET_HEADER_SIZE + (size_t)i * MHF_ASET_RUN_SIZE;
        if (mhf_load_u64(r + MHF_ASET_R_LO) > 0) {
            mhf_store_u64(r + MHF_ASET_R_LO, mhf_load_u64(r + MHF_ASET_R_LO) - 1);
            return;
        }
    }
    se_die("tiny.store's address set has no run above 0", "aset");
}
static void m_aset_inexact(const char *s) { edit_segment(s, SEG0, aset_inexact); }

/* -- address postings (2.2, section 10) --
 * Decoded and encoded here from SPEC.md 9d (not with the library), so each
 * variant is the section a stranger's writer would make, changed in one way. */
typedef struct ap_key {
    unsigned op;
    uint64_t w;
    uint64_t slices; /* bit s: slice s (tiny.store's segments have <= 3) */
} ap_key;
typedef struct ap_sect {
    uint32_t shift, k;
    size_t n;
    ap_key key[256];
} ap_sect;
static se_section *apost_or_null(se_seg *g) {
    for (size_t i = 0; i < g->nsect; i++)
        if (g->s[i].type == MHF_SECT_APOST)
            return &g->s[i];
    return NULL; /* segment 0: its postings are a section 14 (its two 4 GiB
                    accesses are wide ranges, SPEC.md 9d) */
}
/* Segment 0's address postings with wide ranges (section 14, 2.6). */
static se_section *apostw(se_seg *g) {
    for (size_t i = 0; i < g->nsect; i++)
        if (g->s[i].type == MHF_SECT_APOSTW)
            return &g->s[i];
    se_die("segment has no address postings with wide ranges", "apostw");
    return NULL;
}
static se_section *apost(se_seg *g) {
    se_section *x = apost_or_null(g);
    if (!x)
        se_die("segment has no address postings", "apost");
    return x;
}
static uint32_t seg_slices(se_seg *g) { return se_seg_find(g, MHF_SECT_SLICES)->count; }
static uint64_t ap_varint(const unsigned char **q) {
    uint64_t v = 0;
    for (unsigned s = 0;; s += 7) {
        v |= (uint64_t)(**q & 0x7f) << s;
        if (*(*q)++ < 0x80)
            return v;
    }
}
static void ap_decode(se_seg *g, ap_sect *a) {
    const unsigned char *p = apost(g)->data.p;
    uint32_t S = seg_slices(g), rsz = mhf_load_u32(p + MHF_APOST_RUN_SIZE_OFF);
    uint32_t nruns = mhf_load_u32(p + MHF_APOST_RUN_COUNT);
    const unsigned char *data = p + MHF_APOST_HEADER_SIZE + (size_t)nruns * rsz;
    a->shift = mhf_load_u32(p + MHF_APOST_SHIFT);
    a->k = mhf_load_u32(p + MHF_APOST_RUN_KEYS);
    a->n = 0;
    for (unsigned o = 0; o < 3; o++) {
        const unsigned char *op = p + MHF_APOST_OPS + o * MHF_APOST_OP_SIZE;
        uint32_t first = mhf_load_u32(op + MHF_APOST_OP_RUN_FIRST);
        uint32_t cnt = mhf_load_u32(op + MHF_APOST_OP_RUN_COUNT);
        for (uint32_t r = first; r < first + cnt; r++) {
            const unsigned char *rr = p + MHF_APOST_HEADER_SIZE + (size_t)r * rsz;
            const unsigned char *q = data + mhf_load_u64(rr + MHF_APOST_R_OFFSET);
            uint64_t w = mhf_load_u64(rr + MHF_APOST_R_GRANULE);
            uint32_t keys = mhf_load_u32(rr + MHF_APOST_R_KEYS);
            for (uint32_t i = 0; i < keys; i++) {
                if (a->n == sizeof a->key / sizeof a->key[0])
                    se_die("too many keys", "apost");
                if (i)
                    w += 1 + ap_varint(&q);
                uint64_t h = ap_varint(&q), n = h >> 1, bits = 0;
                if (h & 1) {
                    for (uint32_t s = 0; s < S; s++)
                        if (q[s >> 3] >> (s & 7) & 1)
                            bits |= 1ull << s;
                    q += (S + 7) / 8;
                } else {
                    uint64_t s = 0;
                    for (uint64_t j = 0; j < n; j++) {
                        uint64_t x = ap_varint(&q);
                        s = j ? s + 1 + x : x;
                        bits |= 1ull << s;
                    }
                }
                a->key[a->n++] = (ap_key){o, w, bits};
            }
        }
    }
}
/* The section of a's keys (sorted by op, granule), K per run, each key in
 * its shorter form (form 0 on a tie), or form 1 for key force1. */
static void ap_encode(se_seg *g, const ap_sect *a, size_t force1) {
    uint32_t S = seg_slices(g);
    se_buf runs = {NULL, 0}, data = {NULL, 0};
    uint64_t nk[3] = {0, 0, 0}, postings = 0;
    uint32_t first[3] = {0, 0, 0}, cnt[3] = {0, 0, 0}, nruns = 0;
    size_t i = 0;
    for (unsigned o = 0; o < 3; o++) {
        first[o] = nruns;
        while (i < a->n && a->key[i].op == o) {
            size_t start = data.len;
            unsigned char rec[MHF_APOST_RUN_SIZE] = {0};
            mhf_store_u64(rec + MHF_APOST_R_GRANULE, a->key[i].w);
            mhf_store_u64(rec + MHF_APOST_R_OFFSET, start);
            uint32_t keys = 0;
            for (; keys < a->k && i < a->n && a->key[i].op == o; keys++, i++) {
                const ap_key *x = &a->key[i];
                if (keys)
                    se_append_varint(&data, x->w - a->key[i - 1].w - 1);
                uint64_t n = (uint64_t)__builtin_popcountll(x->slices);
                se_buf f0 = {NULL, 0};
                uint64_t prev = 0;
                int any = 0;
                for (uint32_t s = 0; s < S; s++)
                    if (x->slices >> s & 1) {
                        se_append_varint(&f0, any ? s - prev - 1 : s);
                        prev = s;
                        any = 1;
                    }
                int form = i == force1 || (S + 7) / 8 < f0.len;
                se_append_varint(&data, n * 2 + (unsigned)form);
                if (form) {
                    unsigned char bm[8] = {0};
                    for (uint32_t s = 0; s < S; s++)
                        if (x->slices >> s & 1)
                            bm[s >> 3] |= (unsigned char)(1u << (s & 7));
                    se_append(&data, bm, (S + 7) / 8);
                } else {
                    se_append(&data, f0.p, f0.len);
                }
                free(f0.p);
                postings += n;
                nk[o]++;
            }
            mhf_store_u32(rec + MHF_APOST_R_KEYS, keys);
            mhf_store_u32(rec + MHF_APOST_R_BYTES, (uint32_t)(data.len - start));
            se_append(&runs, rec, sizeof rec);
            nruns++;
            cnt[o]++;
        }
    }
    unsigned char h[MHF_APOST_HEADER_SIZE] = {0};
    mhf_store_u32(h + MHF_APOST_SHIFT, a->shift);
    mhf_store_u32(h + MHF_APOST_RUN_KEYS, a->k);
    mhf_store_u32(h + MHF_APOST_RUN_SIZE_OFF, MHF_APOST_RUN_SIZE);
    mhf_store_u32(h + MHF_APOST_RUN_COUNT, nruns);
    mhf_store_u64(h + MHF_APOST_DATA_BYTES, data.len);
    mhf_store_u64(h + MHF_APOST_POSTINGS, postings);
    for (unsigned o = 0; o < 3; o++) {
        unsigned char *r = h + MHF_APOST_OPS + o * MHF_APOST_OP_SIZE;
        mhf_store_u64(r + MHF_APOST_OP_KEYS, nk[o]);
        mhf_store_u32(r + MHF_APOST_OP_RUN_FIRST, first[o]);
        mhf_store_u32(r + MHF_APOST_OP_RUN_COUNT, cnt[o]);
    }
    se_buf out = {NULL, 0};
    se_append(&out, h, sizeof h);
    se_append(&out, runs.p, runs.len);
    se_append(&out, data.p, data.len);
    free(runs.p);
    free(data.p);
    se_section *x = apost(g);
    free(x->data.p);
    x->data = out;
}
/* The first key of op 0 in exactly one slice (form 0). */
static size_t ap_single(const ap_sect *a) {
    for (size_t i = 0; i < a->n; i++)
        if (a->key[i].op == 0 && __builtin_popcountll(a->key[i].slices) == 1)
            return i;
    se_die("no key of op 0 in one slice", "apost");
    return 0;
}
static void apost_posting(se_seg *g) {
    /* a key's one slice moved to the next: well formed, not exact */
    ap_sect a;
    ap_decode(g, &a);
    ap_key *x = &a.key[ap_single(&a)];
    unsigned s = (unsigned)__builtin_ctzll(x->slices);
    x->slices = 1ull << ((s + 1) % seg_slices(g));
    ap_encode(g, &a, SIZE_MAX);
}
static void m_apost_posting(const char *s) { edit_segment(s, SEG1, apost_posting); }
static void apost_missing_key(se_seg *g) {
    /* op 0's first key left out */
    ap_sect a;
    ap_decode(g, &a);
    if (a.n < 2 || a.key[0].op != 0)
        se_die("op 0 has no key to drop", "apost");
    memmove(&a.key[0], &a.key[1], (a.n - 1) * sizeof a.key[0]);
    a.n--;
    ap_encode(g, &a, SIZE_MAX);
}
static void m_apost_missing_key(const char *s) { edit_segment(s, SEG1, apost_missing_key); }
static void apost_extra_key(se_seg *g) {
    /* op 0 gains a key one granule past the first of its keys followed by
     * a gap, listing slice 0: no row of op 0 meets that granule */
    ap_sect a;
    ap_decode(g, &a);
    size_t i = 1;
    while (i < a.n && a.key[i].op == 0 && a.key[i].w - a.key[i - 1].w < 3)
        i++;
    if (i == a.n || a.key[i].op != 0)
        se_die("op 0 has no gap between keys", "apost");
    memmove(&a.key[i + 1], &a.key[i], (a.n - i) * sizeof a.key[0]);
    a.key[i] = (ap_key){0, a.key[i - 1].w + 1, 1};
    a.n++;
    ap_encode(g, &a, SIZE_MAX);
}
static void m_apost_extra_key(const char *s) { edit_segment(s, SEG1, apost_extra_key); }
static void apost_popcount(se_seg *g) {
    /* op 0's first key written as a bitmap (form 1), then its count says
     * one posting more than the bitmap has bits */
    ap_sect a;
    ap_decode(g, &a);
    ap_encode(g, &a, 0);
    unsigned char *p = apost(g)->data.p;
    uint32_t nruns = mhf_load_u32(p + MHF_APOST_RUN_COUNT);
    unsigned char *h = p + MHF_APOST_HEADER_SIZE + (size_t)nruns * MHF_APOST_RUN_SIZE;
    if (*h >= 0x7e || !(*h & 1))
        se_die("op 0's first key is not a small bitmap key", "apost");
    *h += 2;
    mhf_store_u64(p + MHF_APOST_POSTINGS, mhf_load_u64(p + MHF_APOST_POSTINGS) + 1);
}
static void m_apost_popcount(const char *s) { edit_segment(s, SEG1, apost_popcount); }
static void apost_granule_order(se_seg *g) {
    /* runs of 2 keys; op 0's second run starts at its first run's first
     * granule (not above every granule of the run before it) */
    ap_sect a;
    ap_decode(g, &a);
    a.k = 2;
    ap_encode(g, &a, SIZE_MAX);
    unsigned char *p = apost(g)->data.p;
    if (mhf_load_u32(p + MHF_APOST_OPS + MHF_APOST_OP_RUN_COUNT) < 2)
        se_die("op 0 has fewer than 3 keys", "apost");
    unsigned char *r0 = p + MHF_APOST_HEADER_SIZE, *r1 = r0 + MHF_APOST_RUN_SIZE;
    mhf_store_u64(r1 + MHF_APOST_R_GRANULE, mhf_load_u64(r0 + MHF_APOST_R_GRANULE));
}
static void m_apost_granule_order(const char *s) { edit_segment(s, SEG1, apost_granule_order); }
static void apost_shift(se_seg *g) {
    /* granule_shift 2, below the 3 a reader accepts */
    mhf_store_u32(apost(g)->data.p + MHF_APOST_SHIFT, 2);
}
static void m_apost_shift(const char *s) { edit_segment(s, SEG1, apost_shift); }
static void apost_run_bounds(se_seg *g) {
    /* run 0's bytes one more than the data area holds */
    unsigned char *p = apost(g)->data.p;
    unsigned char *r0 = p + MHF_APOST_HEADER_SIZE;
    mhf_store_u32(r0 + MHF_APOST_R_BYTES,
                  (uint32_t)mhf_load_u64(p + MHF_APOST_DATA_BYTES) + 1);
}
static void m_apost_run_bounds(const char *s) { edit_segment(s, SEG1, apost_run_bounds); }
static void apostw_range(se_seg *g) {
    /* op 0's first wide range one byte higher (the same span): well
     * formed, not a maximal range of the slice's reads */
    unsigned char *r = apostw(g)->data.p + MHF_APOSTW_HEADER_SIZE;
    if (mhf_load_u64(apostw(g)->data.p + MHF_APOSTW_OPS + MHF_APOSTW_OP_COUNT) == 0)
        se_die("op 0 has no wide range", "apostw");
    mhf_store_u64(r + MHF_APOSTW_R_FIRST, mhf_load_u64(r + MHF_APOSTW_R_FIRST) + 1);
    mhf_store_u64(r + MHF_APOSTW_R_LAST, mhf_load_u64(r + MHF_APOSTW_R_LAST) + 1);
}
static void m_apostw_range(const char *s) { edit_segment(s, SEG0, apostw_range); }
static void apostw_log2(se_seg *g) {
    /* wide_log2 11, below the 12 a reader accepts */
    mhf_store_u32(apostw(g)->data.p + MHF_APOSTW_LOG2, 11);
}
static void m_apostw_log2(const char *s) { edit_segment(s, SEG0, apostw_log2); }
/* Segment 0's stream postings (section 15, 2.7: its rows are of streams
 * 0 and 1). */
static se_section *spost(se_seg *g) {
    for (size_t i = 0; i < g->nsect; i++)
        if (g->s[i].type == MHF_SECT_SPOST)
            return &g->s[i];
    se_die("segment has no stream postings", "spost");
    return NULL;
}
static void spost_stream(se_seg *g) {
    /* entry 1 names stream 2 (declared by no one): well formed, stream 1
     * has rows and no entry */
    unsigned char *p = spost(g)->data.p;
    if (mhf_load_u32(p + MHF_SPOST_COUNT) != 2)
        se_die("segment 0's stream postings do not list two streams", "spost");
    mhf_store_u32(p + MHF_SPOST_HEADER_SIZE + MHF_SPOST_ENTRY_SIZE + MHF_SPOST_E_STREAM, 2);
}
static void m_spost_stream(const char *s) { edit_segment(s, SEG0, spost_stream); }
static void spost_entry_size(se_seg *g) {
    /* entries of 25 bytes, which this minor does not allow */
    mhf_store_u32(spost(g)->data.p + MHF_SPOST_ENTRY_SIZE_OFF, 25);
}
static void m_spost_entry_size(const char *s) { edit_segment(s, SEG0, spost_entry_size); }
/* Segment 1's span stream address set (section 16, 2.8: MANIFEST
 * position 2, the node of segments 0 and 1, streams 0 and 1). */
static se_section *sspan(se_seg *g) {
    for (size_t i = 0; i < g->nsect; i++)
        if (g->s[i].type == MHF_SECT_SSPAN)
            return &g->s[i];
    se_die("segment has no span stream address set", "sspan");
    return NULL;
}
static void sspan_stream(se_seg *g) {
    /* entry 1 names stream 2 (declared by no one): well formed, stream 1
     * has rows in the covered segments and no entry */
    unsigned char *p = sspan(g)->data.p;
    if (mhf_load_u32(p + MHF_SSPAN_COUNT) != 2)
        se_die("segment 1's span stream address set does not list two streams", "sspan");
    mhf_store_u32(p + MHF_SSPAN_HEADER_SIZE + MHF_SSPAN_ENTRY_SIZE + MHF_SSPAN_E_STREAM, 2);
}
static void m_sspan_stream(const char *s) { edit_segment(s, SEG1, sspan_stream); }
static void sspan_entry_size(se_seg *g) {
    /* entries of 25 bytes, which this minor does not allow */
    mhf_store_u32(sspan(g)->data.p + MHF_SSPAN_ENTRY_SIZE_OFF, 25);
}
static void m_sspan_entry_size(const char *s) { edit_segment(s, SEG1, sspan_entry_size); }
/* Segment 0's stream id runs (section 17, 2.8: its rows are of streams 0
 * and 1). */
static se_section *sruns(se_seg *g) {
    for (size_t i = 0; i < g->nsect; i++)
        if (g->s[i].type == MHF_SECT_SRUNS)
            return &g->s[i];
    se_die("segment has no stream id runs", "sruns");
    return NULL;
}
static void sruns_stream(se_seg *g) {
    /* entry 1 names stream 2 (declared by no one): well formed, stream 1
     * has rows and no entry */
    unsigned char *p = sruns(g)->data.p;
    if (mhf_load_u32(p + MHF_SRUNS_COUNT) != 2)
        se_die("segment 0's stream id runs do not list two streams", "sruns");
    mhf_store_u32(p + MHF_SRUNS_HEADER_SIZE + MHF_SRUNS_ENTRY_SIZE + MHF_SRUNS_E_STREAM, 2);
}
static void m_sruns_stream(const char *s) { edit_segment(s, SEG0, sruns_stream); }
static void sruns_entry_size(se_seg *g) {
    /* entries of 25 bytes, which this minor does not allow */
    mhf_store_u32(sruns(g)->data.p + MHF_SRUNS_ENTRY_SIZE_OFF, 25);
}
static void m_sruns_entry_size(const char *s) { edit_segment(s, SEG0, sruns_entry_size); }

/* -- a newer minor: everything SPEC.md 12.1 lets a later writer add -------- */
static void future_dict(se_dict *d) {
    d->reserved = 0x2121; /* reserved fields of 2.0 given a meaning */
    se_table *st = se_dict_find(d, 5);
    if (st) {
        for (uint32_t i = 0; i < st->count; i++) {
            unsigned char *r = st->data.p + (size_t)i * st->recsz;
            r[5] = 0x21;                     /* reserved after kind */
            mhf_store_u32(r + 36, 0x21212121); /* reserved after cpu */
        }
        se_widen(&st->data, &st->recsz, st->count, 72, 0x5a); /* longer stream records */
    }
    se_table *ops = se_dict_find(d, 3);
    for (uint32_t i = 0; i < ops->count; i++) /* SPEC-NOTES 5 */
        mhf_store_u16(ops->data.p + (size_t)i * ops->recsz + 6, 0x2121);
    /* an unknown column, not required, stored in every block (below) */
    uint32_t name = se_dict_add_string(d, "future column");
    se_table *cols = se_dict_find(d, 2);
    unsigned char col[8] = {0, 0, 0, 0, 1, 8, 3, 0};
    mhf_store_u32(col, name);
    se_append(&cols->data, col, 8);
    cols->count++;
    /* an unknown table, not required */
    static const char body[] = "a table 2.0 readers skip";
    if (d->ntables == SE_MAX_TABLES)
        se_die("too many tables", "future");
    se_table *t = &d->t[d->ntables++];
    memset(t, 0, sizeof *t);
    t->type = 100;
    t->data.p = malloc(sizeof body);
    if (!t->data.p)
        se_die("out of memory", "future");
    memcpy(t->data.p, body, sizeof body);
    t->data.len = sizeof body;
}
/* Section x's table of n records of rsz bytes, after its head-byte header,
 * widened to newsz (the new bytes 0x77) and its header's u32 record size
 * at size_off set to newsz: what SPEC.md 12.1 lets a later minor do to a
 * record table. */
static void widen_table(se_section *x, size_t head, uint32_t n, uint32_t rsz, uint32_t newsz,
                        size_t size_off) {
    uint32_t sz = rsz;
    se_buf rec = {malloc((size_t)n * rsz + 1), (size_t)n * rsz};
    if (!rec.p)
        se_die("out of memory", "future");
    memcpy(rec.p, x->data.p + head, rec.len);
    se_widen(&rec, &sz, n, newsz, 0x77);
    se_buf nx = {NULL, 0};
    se_append(&nx, x->data.p, head);
    mhf_store_u32(nx.p + size_off, newsz);
    se_append(&nx, rec.p, rec.len);
    size_t end = head + (size_t)n * rsz;
    se_append(&nx, x->data.p + end, x->data.len - end);
    free(rec.p);
    free(x->data.p);
    x->data = nx;
}

static void future_segment(se_seg *g) {
    mhf_store_u16(g->hdr + MHF_SEG_MINOR, MHF_VERSION_MINOR + 1);
    mhf_store_u32(g->hdr + MHF_SEG_FLAGS, 1u << 17); /* a compatible flag */
    mhf_store_u32(g->hdr + 108, 0x21212121);          /* reserved0 */
    memset(g->hdr + 136, 0x21, 112);                  /* reserved1 */
    g->dir_recsz = 56;                                /* longer directory entries */
    g->dir_pad = 0xd1;
    /* the unknown column's bytes in every block: one varint 7 per row */
    se_seg_decode_blocks(g);
    for (size_t b = 0; b < g->nblocks; b++) {
        se_append_varint(&g->raw[b], g->rows[b]);
        for (uint32_t i = 0; i < g->rows[b]; i++)
            se_append_varint(&g->raw[b], 7);
    }
    edit_dict(g, future_dict);
    /* longer records, with their 2.0 reserved fields set */
    se_section *sl = se_seg_find(g, MHF_SECT_SLICES);
    for (uint32_t i = 0; i < sl->count; i++)
        mhf_store_u32(sl->data.p + (size_t)i * sl->recsz + 68, 0x21212121);
    se_widen(&sl->data, &sl->recsz, sl->count, 80, 0xa5);
    se_section *ch = se_seg_find(g, MHF_SECT_CHUNKS);
    for (uint32_t i = 0; i < ch->count; i++)
        memset(ch->data.p + (size_t)i * ch->recsz + 49, 0x21, 3);
    se_widen(&ch->data, &ch->recsz, ch->count, 64, 0xa5);
    se_section *bl = se_seg_find(g, MHF_SECT_BLOCKS);
    se_widen(&bl->data, &bl->recsz, bl->count, 64, 0xa5);
    /* a longer summary entry */
    se_section *sm = summary(g);
    widen_table(sm, 32, mhf_load_u32(sm->data.p + 4), 24, 32, 8);
    mhf_store_u32(sm->data.p + 12, 0x21212121);
    /* a longer id map group record, reserved fields set */
    se_section *im = idmap(g);
    uint32_t ng = mhf_load_u32(im->data.p + 4);
    for (uint32_t i = 0; i < ng; i++)
        memset(im->data.p + 32 + (size_t)i * 32 + 25, 0x21, 7);
    widen_table(im, 32, ng, 32, 40, 8);
    mhf_store_u32(im->data.p + 12, 0x21212121);
    mhf_store_u64(im->data.p + 24, 0x2121212121212121ull);
    /* longer id transitions group records (40), reserved fields set: a
     * reader of this minor reads their first 32 bytes (SPEC.md 9g, 12.1) */
    se_section *it = idtime(g);
    uint32_t itn = mhf_load_u32(it->data.p + MHF_IDTIME_GROUP_COUNT);
    for (uint32_t i = 0; i < itn; i++)
        memset(it->data.p + MHF_IDTIME_HEADER_SIZE + (size_t)i * MHF_IDTIME_GROUP_SIZE +
                   MHF_IDTIME_G_RESERVED, 0x21, 3);
    widen_table(it, MHF_IDTIME_HEADER_SIZE, itn, MHF_IDTIME_GROUP_SIZE, 40,
                MHF_IDTIME_GROUP_SIZE_OFF);
    mhf_store_u64(it->data.p + MHF_IDTIME_RESERVED, 0x2121212121212121ull);
    /* a longer address set run record (32), reserved fields set */
    se_section *as = aset(g);
    widen_table(as, MHF_ASET_HEADER_SIZE, mhf_load_u32(as->data.p + MHF_ASET_RUN_COUNT),
                MHF_ASET_RUN_SIZE, 32, MHF_ASET_RUN_SIZE_OFF);
    mhf_store_u32(as->data.p + MHF_ASET_RESERVED0, 0x21212121);
    mhf_store_u64(as->data.p + MHF_ASET_RESERVED1, 0x2121212121212121ull);
    /* longer address postings run records (32): a reader of this minor
     * reads their first 24 bytes (SPEC.md 9d, 12.1) */
    se_section *ap = apost_or_null(g);
    if (ap)
        widen_table(ap, MHF_APOST_HEADER_SIZE, mhf_load_u32(ap->data.p + MHF_APOST_RUN_COUNT),
                    MHF_APOST_RUN_SIZE, 32, MHF_APOST_RUN_SIZE_OFF);
    /* longer wide ranges' records (32; segment 0's section 14), stream
     * postings entries (32; its section 15), stream id runs entries (32;
     * its section 17) and span stream address set entries (32; segment
     * 1's section 16), reserved fields set: a reader of this minor reads
     * their first 24 bytes */
    for (size_t i = 0; i < g->nsect; i++) {
        se_section *x = &g->s[i];
        if (x->type == MHF_SECT_APOSTW) {
            uint32_t wn = (uint32_t)mhf_load_u64(x->data.p + MHF_APOSTW_COUNT);
            for (uint32_t k = 0; k < wn; k++)
                mhf_store_u32(x->data.p + MHF_APOSTW_HEADER_SIZE + (size_t)k * MHF_APOSTW_REC_SIZE +
                                  MHF_APOSTW_R_RESERVED, 0x21212121);
            widen_table(x, MHF_APOSTW_HEADER_SIZE, wn, MHF_APOSTW_REC_SIZE, 32,
                        MHF_APOSTW_REC_SIZE_OFF);
            mhf_store_u64(x->data.p + MHF_APOSTW_RESERVED, 0x2121212121212121ull);
        } else if (x->type == MHF_SECT_SPOST) {
            uint32_t n = mhf_load_u32(x->data.p + MHF_SPOST_COUNT);
            for (uint32_t k = 0; k < n; k++)
                mhf_store_u32(x->data.p + MHF_SPOST_HEADER_SIZE + (size_t)k * MHF_SPOST_ENTRY_SIZE +
                                  MHF_SPOST_E_RESERVED, 0x21212121);
            widen_table(x, MHF_SPOST_HEADER_SIZE, n, MHF_SPOST_ENTRY_SIZE, 32,
                        MHF_SPOST_ENTRY_SIZE_OFF);
        } else if (x->type == MHF_SECT_SRUNS) {
            /* segment 0's stream id runs: longer entries (32), reserved
             * fields set */
            uint32_t n = mhf_load_u32(x->data.p + MHF_SRUNS_COUNT);
            for (uint32_t k = 0; k < n; k++)
                mhf_store_u32(x->data.p + MHF_SRUNS_HEADER_SIZE + (size_t)k * MHF_SRUNS_ENTRY_SIZE +
                                  MHF_SRUNS_E_RESERVED, 0x21212121);
            widen_table(x, MHF_SRUNS_HEADER_SIZE, n, MHF_SRUNS_ENTRY_SIZE, 32,
                        MHF_SRUNS_ENTRY_SIZE_OFF);
        } else if (x->type == MHF_SECT_SSPAN) {
            /* segment 1's span stream address set: longer entries (32)
             * and reserved fields set */
            uint32_t n = mhf_load_u32(x->data.p + MHF_SSPAN_COUNT);
            widen_table(x, MHF_SSPAN_HEADER_SIZE, n, MHF_SSPAN_ENTRY_SIZE, 32,
                        MHF_SSPAN_ENTRY_SIZE_OFF);
            mhf_store_u32(x->data.p + MHF_SSPAN_RESERVED0, 0x21212121);
            mhf_store_u64(x->data.p + MHF_SSPAN_RESERVED1, 0x2121212121212121ull);
        }
    }
    /* an unknown section, not required, between two known ones */
    static const char body[] = "a section 2.0 readers skip";
    se_seg_insert(g, 3, 100, 0, body, sizeof body);
}
static void m_future_minor(const char *s) {
    edit_segment(s, SEG0, future_segment);
    edit_segment(s, SEG1, future_segment);
    rewrite_manifest(s, 72, 80, MHF_VERSION_MINOR + 1, 0x21);
    set_manifest(s, MHF_MAN_FLAGS, 4, 1u << 16);
    set_manifest(s, MHF_MAN_RESERVED, 8, 0x2121212121212121ull);
}

static const struct {
    const char *name;
    mutate_fn fn;
} variants[] = {
    {"manifest-bad-magic", m_manifest_magic},
    {"manifest-major-3", m_manifest_major},
    {"manifest-major-1", m_manifest_major_1},
    {"manifest-generation-0", m_manifest_generation_0},
    {"manifest-header-size-72", m_manifest_header_72},
    {"manifest-bad-checksum", m_manifest_checksum},
    {"manifest-trailing-garbage", m_manifest_trailing},
    {"manifest-truncated", m_manifest_truncated},
    {"manifest-short", m_manifest_short},
    {"segment-bad-magic", m_segment_magic},
    {"segment-major-3", m_segment_major},
    {"segment-byte-order", m_segment_byte_order},
    {"segment-incompatible-flag", m_segment_incompat_flag},
    {"segment-newer-minor", m_segment_newer_minor},
    {"segment-header-flip", m_segment_header_flip},
    {"segment-truncated", m_segment_truncated},
    {"segment-missing", m_segment_missing},
    {"directory-flip", m_directory_flip},
    {"directory-gap", m_directory_gap},
    {"directory-overlap", m_directory_overlap},
    {"directory-duplicate", m_directory_duplicate},
    {"section-unknown-required", m_section_unknown_required},
    {"dictionary-flip", m_dictionary_flip},
    {"dict-table-header", m_dict_table_header},
    {"stream-table-order", m_stream_table_order},
    {"window-table-order", m_window_table_order},
    {"window-overlap", m_window_overlap},
    {"stream-not-in-newest", m_stream_not_in_newest},
    {"window-parts-gap", m_window_parts_gap},
    {"slice-array-flip", m_slice_flip},
    {"chunk-record-flip", m_chunk_flip},
    {"block-flip", m_block_flip},
    {"block-raw-size", m_block_raw_size},
    {"block-phy-range", m_block_phy_range},
    {"block-first-row", m_block_first_row},
    {"chunk-row-outside", m_chunk_row_outside},
    {"stream-mask-wrong", m_stream_mask_wrong},
    {"pc-truncated", m_pc_truncated},
    {"summary-order", m_summary_order},
    {"summary-posting", m_summary_posting},
    {"fine-summary-order", m_fine_summary_order},
    {"fine-summary-shift", m_fine_summary_shift},
    {"idmap-flip", m_idmap_flip},
    {"idmap-label-range", m_idmap_label_range},
    {"idmap-label-swap", m_idmap_label_swap},
    {"idmap-group-count", m_idmap_group_count},
    {"idmap-reserved", m_idmap_reserved},
    {"idtime-flip", m_idtime_flip},
    {"idtime-sample", m_idtime_sample},
    {"idtime-high-bits", m_idtime_high_bits},
    {"idtime-reserved", m_idtime_reserved},
    {"aset-header", m_aset_header},
    {"aset-inexact", m_aset_inexact},
    {"apost-posting", m_apost_posting},
    {"apost-missing-key", m_apost_missing_key},
    {"apost-extra-key", m_apost_extra_key},
    {"apost-popcount", m_apost_popcount},
    {"apost-granule-order", m_apost_granule_order},
    {"apost-shift", m_apost_shift},
    {"apost-run-bounds", m_apost_run_bounds},
    {"apostw-range", m_apostw_range},
    {"apostw-log2", m_apostw_log2},
    {"spost-stream", m_spost_stream},
    {"spost-entry-size", m_spost_entry_size},
    {"sspan-stream", m_sspan_stream},
    {"sspan-entry-size", m_sspan_entry_size},
    {"sruns-stream", m_sruns_stream},
    {"sruns-entry-size", m_sruns_entry_size},
    {"future-minor", m_future_minor},
};

int main(int argc, char **argv) {
    int force = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--force"))
            force = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: gen_golden [--force] OUTDIR\n"
                   "writes OUTDIR/tiny.store and OUTDIR/corrupt/<variant>.store\n");
            return 0;
        } else if (!out && argv[i][0] != '-')
            out = argv[i];
        else {
            fprintf(stderr, "gen_golden: unexpected argument '%s'\n"
                            "usage: gen_golden [--force] OUTDIR\n", argv[i]);
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "usage: gen_golden [--force] OUTDIR\n");
        return 2;
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST)
        se_die("cannot create", out);
    char tiny[4096], corrupt[4096];
    join(tiny, sizeof tiny, out, "tiny.store");
    join(corrupt, sizeof corrupt, out, "corrupt");
    struct stat st;
    if (stat(tiny, &st) == 0 || stat(corrupt, &st) == 0) {
        if (!force) {
            fprintf(stderr, "gen_golden: %s or %s exists (use --force to replace)\n", tiny,
                    corrupt);
            return 1;
        }
        remove_tree(tiny);
        remove_tree(corrupt);
    }
    write_tiny(tiny);
    if (mkdir(corrupt, 0755) != 0)
        se_die("cannot create", corrupt);
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        char path[4096], name[256];
        snprintf(name, sizeof name, "%s.store", variants[i].name);
        join(path, sizeof path, corrupt, name);
        copy_store(tiny, path);
        variants[i].fn(path);
    }
    printf("wrote %s and %zu variants in %s\n", tiny, sizeof variants / sizeof variants[0],
           corrupt);
    return 0;
}
