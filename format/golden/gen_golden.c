/*
 * gen_golden.c - writes the golden stores of format/golden: tiny.store (the
 * accesses of tiny_input.h, two segments, metadata) and corrupt/<name>.store,
 * copies of it each damaged in one precise way. Built with the tests, never
 * run by them except to compare its output with the committed bytes: any
 * change of the format shows up as a difference.
 *
 * Usage: gen_golden [--force] OUTDIR
 *   --force  replace OUTDIR/tiny.store and OUTDIR/corrupt if they exist
 * Exit status: 0 written, 1 failure, 2 usage.
 *
 * Variants whose damage is not meant to be a checksum mismatch get their
 * checksums recomputed as SPEC.md states them (header_sum, dict_sum,
 * slice_sum, index_sum, chunk_sum, block_sum, the MANIFEST record's copy of
 * header_sum and the MANIFEST checksum), so the reader must catch the damage
 * by the check meant for it. That recomputation is itself a check of SPEC.md:
 * the valid variant (newer minor, compatible flag) must open.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "memhist.h"
#include "mh_format.h"
#include "tiny_input.h"

static void die(const char *what, const char *detail) {
    fprintf(stderr, "gen_golden: %s: %s\n", what, detail);
    exit(1);
}

static void check(int rc, const char *what) {
    if (rc != MH_OK)
        die(what, mh_strerror(rc));
}

static void join(char *buf, size_t cap, const char *a, const char *b) {
    int k = snprintf(buf, cap, "%s/%s", a, b);
    if (k < 0 || (size_t)k >= cap)
        die("path too long", a);
}

/* ---- files ------------------------------------------------------------------ */
typedef struct file {
    unsigned char *data;
    size_t len;
} file;

static file load(const char *dir, const char *name) {
    char path[4096];
    join(path, sizeof path, dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    file r = {NULL, 0};
    if (fseek(f, 0, SEEK_END) != 0)
        die("cannot seek", path);
    long len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0)
        die("cannot size", path);
    r.len = (size_t)len;
    r.data = malloc(r.len + 64); /* room for appended garbage */
    if (!r.data)
        die("out of memory", path);
    if (fread(r.data, 1, r.len, f) != r.len)
        die("cannot read", path);
    fclose(f);
    return r;
}

static void save(const char *dir, const char *name, const file *f) {
    char path[4096];
    join(path, sizeof path, dir, name);
    FILE *o = fopen(path, "wb");
    if (!o || fwrite(f->data, 1, f->len, o) != f->len || fclose(o) != 0)
        die("cannot write", path);
}

static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d)
            die("cannot list", path);
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
            die("cannot remove", path);
    } else if (unlink(path) != 0) {
        die("cannot remove", path);
    }
}

static void copy_store(const char *from, const char *to) {
    if (mkdir(to, 0755) != 0)
        die("cannot create", to);
    DIR *d = opendir(from);
    if (!d)
        die("cannot list", from);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        file f = load(from, e->d_name);
        save(to, e->d_name, &f);
        free(f.data);
    }
    closedir(d);
}

/* ---- the tiny store ------------------------------------------------------- */
static mh_access to_access(const tiny_access *t) {
    mh_access a;
    memset(&a, 0, sizeof a);
    a.transition = t->transition;
    a.physical = t->physical;
    a.size = t->size;
    a.op = t->op;
    a.has_linear = t->has_linear;
    a.linear = t->linear;
    return a;
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
    for (size_t i = 0; i < sizeof tiny_meta_first / sizeof tiny_meta_first[0]; i++)
        check(mh_writer_set_meta(w, tiny_meta_first[i][0], tiny_meta_first[i][1]), "meta");
    for (size_t i = 0; i < TINY_FIRST_COMMIT; i++) { /* one at a time ... */
        mh_access a = to_access(&tiny_accesses[i]);
        check(mh_writer_append(w, &a), "append");
    }
    check(mh_writer_commit(w), "commit");
    for (size_t i = 0; i < sizeof tiny_meta_second / sizeof tiny_meta_second[0]; i++)
        check(mh_writer_set_meta(w, tiny_meta_second[i][0], tiny_meta_second[i][1]), "meta");
    mh_access batch[TINY_COUNT];
    size_t n = 0;
    for (size_t i = TINY_FIRST_COMMIT; i < TINY_COUNT; i++) /* ... then as a batch */
        batch[n++] = to_access(&tiny_accesses[i]);
    check(mh_writer_append_batch(w, batch, n, NULL), "append_batch");
    check(mh_writer_close(w), "close");
}

/* ---- checksums as SPEC.md states them ------------------------------------- */
static uint64_t ld64(const file *f, size_t off) {
    if (off + 8 > f->len)
        die("offset outside the file", "segment");
    return mhf_load_u64(f->data + off);
}
static uint32_t ld32(const file *f, size_t off) {
    if (off + 4 > f->len)
        die("offset outside the file", "segment");
    return mhf_load_u32(f->data + off);
}

static void fix_segment(file *s) {
    unsigned char *b = s->data;
    uint64_t dict_off = ld64(s, MHF_SEG_DICT_OFF), dict_size = ld64(s, MHF_SEG_DICT_SIZE);
    uint64_t slice_off = ld64(s, MHF_SEG_SLICE_OFF);
    uint32_t nslices = ld32(s, MHF_SEG_SLICE_COUNT);
    uint64_t chunk_off = ld64(s, MHF_SEG_CHUNK_OFF);
    uint32_t nchunks = ld32(s, MHF_SEG_CHUNK_COUNT);
    uint64_t block_off = ld64(s, MHF_SEG_BLOCK_OFF);
    uint32_t nblocks = ld32(s, MHF_SEG_BLOCK_COUNT);
    if (dict_off + dict_size > s->len || slice_off + 64ull * nslices > s->len ||
        chunk_off + 56ull * nchunks > s->len || block_off + 56ull * nblocks > s->len)
        die("sections outside the file", "segment");
    for (uint32_t i = 0; i < nslices; i++) {
        unsigned char *sl = b + slice_off + 64ull * i;
        uint32_t c0 = mhf_load_u32(sl + MHF_SLICE_CHUNK_FIRST);
        uint32_t cn = mhf_load_u32(sl + MHF_SLICE_CHUNK_COUNT);
        uint32_t b0 = mhf_load_u32(sl + MHF_SLICE_BLOCK_FIRST);
        uint32_t bn = mhf_load_u32(sl + MHF_SLICE_BLOCK_COUNT);
        if ((uint64_t)c0 + cn > nchunks || (uint64_t)b0 + bn > nblocks)
            die("slice records outside the arrays", "segment");
        uint64_t seed = XXH3_64bits(b + block_off + 56ull * b0, 56ull * bn);
        uint64_t idx = XXH3_64bits_withSeed(b + chunk_off + 56ull * c0, 56ull * cn, seed);
        mhf_store_u64(sl + 56, idx); /* SPEC 5.2: index_sum */
    }
    mhf_store_u64(b + MHF_SEG_DICT_SUM, XXH3_64bits(b + dict_off, dict_size));
    mhf_store_u64(b + MHF_SEG_SLICE_SUM, XXH3_64bits(b + slice_off, 64ull * nslices));
    mhf_store_u64(b + MHF_SEG_CHUNK_SUM, XXH3_64bits(b + chunk_off, 56ull * nchunks));
    mhf_store_u64(b + MHF_SEG_BLOCK_SUM, XXH3_64bits(b + block_off, 56ull * nblocks));
    mhf_store_u64(b + MHF_SEG_HEADER_SUM, XXH3_64bits(b, MHF_SEG_HEADER_SUM));
}

/* Points the MANIFEST records at the segments as they now are. */
static void fix_manifest(const char *store) {
    file m = load(store, MHF_MANIFEST_NAME);
    uint32_t n = ld32(&m, MHF_MAN_SEG_COUNT);
    for (uint32_t i = 0; i < n; i++) {
        size_t rec = MHF_MAN_HEADER_SIZE + (size_t)MHF_MAN_REC_SIZE * i;
        char name[64];
        snprintf(name, sizeof name, "seg-%016llx.mhs",
                 (unsigned long long)ld64(&m, rec + MHF_MREC_SEQ));
        char path[4096];
        join(path, sizeof path, store, name);
        if (access(path, F_OK) != 0)
            continue;
        file s = load(store, name);
        if (s.len >= MHF_SEG_HEADER_SIZE) {
            mhf_store_u64(m.data + rec + MHF_MREC_HEADER_SUM, ld64(&s, MHF_SEG_HEADER_SUM));
            mhf_store_u64(m.data + rec + MHF_MREC_FILE_SIZE, s.len);
        }
        free(s.data);
    }
    size_t body = MHF_MAN_HEADER_SIZE + (size_t)MHF_MAN_REC_SIZE * n;
    if (body + 8 > m.len)
        die("MANIFEST shorter than its records", store);
    mhf_store_u64(m.data + body, XXH3_64bits(m.data, body));
    save(store, MHF_MANIFEST_NAME, &m);
    free(m.data);
}

/* ---- the damage ------------------------------------------------------------ */
#define SEG0 "seg-0000000000000000.mhs"
#define SEG1 "seg-0000000000000001.mhs"

typedef void (*mutate_fn)(const char *store);

static void flip(const char *store, const char *name, size_t off, unsigned char mask) {
    file f = load(store, name);
    if (off >= f.len)
        die("flip outside the file", name);
    f.data[off] ^= mask;
    save(store, name, &f);
    free(f.data);
}

static void set_segment_u16(const char *store, const char *name, size_t off, uint16_t v) {
    file f = load(store, name);
    mhf_store_u16(f.data + off, v);
    fix_segment(&f);
    save(store, name, &f);
    free(f.data);
    fix_manifest(store);
}

static void set_segment_u32(const char *store, const char *name, size_t off, uint32_t v) {
    file f = load(store, name);
    mhf_store_u32(f.data + off, v);
    fix_segment(&f);
    save(store, name, &f);
    free(f.data);
    fix_manifest(store);
}

static void m_manifest_magic(const char *s) { flip(s, MHF_MANIFEST_NAME, 0, 0x20); }
static void m_manifest_major(const char *s) {
    file m = load(s, MHF_MANIFEST_NAME);
    mhf_store_u16(m.data + MHF_MAN_MAJOR, 2);
    save(s, MHF_MANIFEST_NAME, &m);
    free(m.data);
    fix_manifest(s);
}
static void m_manifest_checksum(const char *s) {
    file m = load(s, MHF_MANIFEST_NAME);
    m.data[m.len - 1] ^= 0x01;
    save(s, MHF_MANIFEST_NAME, &m);
    free(m.data);
}
static void m_manifest_trailing(const char *s) {
    file m = load(s, MHF_MANIFEST_NAME);
    memset(m.data + m.len, 0, 8);
    m.len += 8;
    save(s, MHF_MANIFEST_NAME, &m);
    free(m.data);
}
static void m_manifest_truncated(const char *s) {
    file m = load(s, MHF_MANIFEST_NAME);
    m.len -= 10;
    save(s, MHF_MANIFEST_NAME, &m);
    free(m.data);
}
static void m_segment_magic(const char *s) { flip(s, SEG0, 0, 0x20); }
static void m_segment_major(const char *s) { set_segment_u16(s, SEG0, MHF_SEG_MAJOR, 2); }
static void m_segment_byte_order(const char *s) {
    set_segment_u32(s, SEG0, MHF_SEG_BOM, MHF_BYTE_ORDER_SWAPPED);
}
static void m_segment_incompat_flag(const char *s) { set_segment_u32(s, SEG0, MHF_SEG_FLAGS, 1); }
static void m_segment_newer_minor(const char *s) {
    set_segment_u16(s, SEG0, MHF_SEG_MINOR, 1);
    set_segment_u32(s, SEG0, MHF_SEG_FLAGS, 1u << 16); /* a compatible flag */
}
static void m_segment_header_flip(const char *s) { flip(s, SEG1, MHF_SEG_COUNT, 0x01); }
static void m_segment_truncated(const char *s) {
    file f = load(s, SEG1);
    f.len /= 2;
    save(s, SEG1, &f);
    free(f.data);
}
static void m_segment_missing(const char *s) {
    char path[4096];
    join(path, sizeof path, s, SEG1);
    if (unlink(path) != 0)
        die("cannot remove", path);
}
static void m_dictionary_flip(const char *s) {
    file f = load(s, SEG0);
    size_t off = (size_t)ld64(&f, MHF_SEG_DICT_OFF) + MHF_DICT_HEADER_SIZE + 2;
    free(f.data);
    flip(s, SEG0, off, 0x40);
}
static void m_slice_flip(const char *s) {
    file f = load(s, SEG0);
    size_t off = (size_t)ld64(&f, MHF_SEG_SLICE_OFF) + 64 + MHF_SLICE_COUNT;
    free(f.data);
    flip(s, SEG0, off, 0x01);
}
static void m_chunk_flip(const char *s) {
    file f = load(s, SEG0);
    size_t off = (size_t)ld64(&f, MHF_SEG_CHUNK_OFF) + MHF_CHUNK_PHY_LAST;
    free(f.data);
    flip(s, SEG0, off, 0x04);
}
static void m_block_flip(const char *s) {
    file f = load(s, SEG0);
    size_t rec = (size_t)ld64(&f, MHF_SEG_BLOCK_OFF);
    size_t off = (size_t)ld64(&f, rec + MHF_BLOCK_OFFSET) + ld32(&f, rec + MHF_BLOCK_COMP_SIZE) / 2;
    free(f.data);
    flip(s, SEG0, off, 0x10);
}
static void m_block_raw_size(const char *s) {
    /* every checksum right, but the block cannot decompress to raw_size */
    file f = load(s, SEG0);
    size_t rec = (size_t)ld64(&f, MHF_SEG_BLOCK_OFF);
    mhf_store_u32(f.data + rec + MHF_BLOCK_RAW_SIZE, ld32(&f, rec + MHF_BLOCK_RAW_SIZE) + 1);
    mhf_store_u64(f.data + MHF_SEG_RAW_SIZE, ld64(&f, MHF_SEG_RAW_SIZE) + 1);
    fix_segment(&f);
    save(s, SEG0, &f);
    free(f.data);
    fix_manifest(s);
}
static void m_chunk_row_outside(const char *s) {
    /* every checksum right, but the widest chunk of segment 0 ends one byte
     * before the end of its last-reaching row */
    file f = load(s, SEG0);
    size_t arr = (size_t)ld64(&f, MHF_SEG_CHUNK_OFF), best = 0;
    uint64_t width = 0;
    for (uint32_t k = 0; k < ld32(&f, MHF_SEG_CHUNK_COUNT); k++) {
        size_t rec = arr + (size_t)k * MHF_CHUNK_SIZE;
        uint64_t w = ld64(&f, rec + MHF_CHUNK_PHY_LAST) - ld64(&f, rec + MHF_CHUNK_PHY_FIRST);
        if (w > width) {
            width = w;
            best = rec;
        }
    }
    if (width == 0)
        die("no chunk wider than one byte", s);
    mhf_store_u64(f.data + best + MHF_CHUNK_PHY_LAST, ld64(&f, best + MHF_CHUNK_PHY_LAST) - 1);
    fix_segment(&f);
    save(s, SEG0, &f);
    free(f.data);
    fix_manifest(s);
}

static const struct {
    const char *name;
    mutate_fn fn;
} variants[] = {
    {"manifest-bad-magic", m_manifest_magic},
    {"manifest-major-2", m_manifest_major},
    {"manifest-bad-checksum", m_manifest_checksum},
    {"manifest-trailing-garbage", m_manifest_trailing},
    {"manifest-truncated", m_manifest_truncated},
    {"segment-bad-magic", m_segment_magic},
    {"segment-major-2", m_segment_major},
    {"segment-byte-order", m_segment_byte_order},
    {"segment-incompatible-flag", m_segment_incompat_flag},
    {"segment-newer-minor", m_segment_newer_minor},
    {"segment-header-flip", m_segment_header_flip},
    {"segment-truncated", m_segment_truncated},
    {"segment-missing", m_segment_missing},
    {"dictionary-flip", m_dictionary_flip},
    {"slice-array-flip", m_slice_flip},
    {"chunk-record-flip", m_chunk_flip},
    {"block-flip", m_block_flip},
    {"block-raw-size", m_block_raw_size},
    {"chunk-row-outside", m_chunk_row_outside},
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
        die("cannot create", out);
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
        die("cannot create", corrupt);
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
