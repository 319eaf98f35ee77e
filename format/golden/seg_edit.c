/*
 * seg_edit.c - see seg_edit.h. Offsets are SPEC.md 2.0's, spelled out here
 * rather than taken from mh_format.h, so that the golden variants are an
 * independent reading of the spec.
 */
#include "seg_edit.h"

#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* SPEC.md 2.0 section 5.1: header */
#define H_MINOR 10 /* u16, after the magic (8) and the major (8) */
#define H_ROWS_PER_BLOCK 88
#define H_DIR_COUNT 92
#define H_DIR_OFF 96
#define H_DIR_RECSZ 104
#define H_DIR_SUM 112
#define H_FILE_SIZE 120
#define H_RAW_SIZE 128
#define H_HEADER_SUM 248
/* 5.2: directory entry */
#define D_TYPE 0
#define D_FLAGS 4
#define D_OFFSET 8
#define D_SIZE 16
#define D_RECSZ 24
#define D_COUNT 28
#define D_SUM 32
#define D_SIZE_KNOWN 48
/* section types */
#define T_DATA 1u
#define T_DICT 2u
#define T_SLICES 3u
#define T_CHUNKS 4u
#define T_BLOCKS 5u
/* 5.3 slice record */
#define SL_COUNT 24
#define SL_CHUNK_FIRST 28
#define SL_CHUNK_COUNT 32
#define SL_BLOCK_FIRST 36
#define SL_BLOCK_COUNT 40
#define SL_INDEX_SUM 56
/* 5.5 block record */
#define BL_OFFSET 0
#define BL_COMP 8
#define BL_RAW 12
#define BL_SUM 16

static uint32_t ld32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const unsigned char *p) { return ld32(p) | (uint64_t)ld32(p + 4) << 32; }
static void st32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void st64(unsigned char *p, uint64_t v) {
    st32(p, (uint32_t)v);
    st32(p + 4, (uint32_t)(v >> 32));
}

void se_die(const char *what, const char *detail) {
    fprintf(stderr, "gen_golden: %s: %s\n", what, detail);
    exit(1);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p)
        se_die("out of memory", "seg_edit");
    return p;
}

se_buf se_load(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        se_die("cannot open", path);
    se_buf r = {NULL, 0};
    if (fseek(f, 0, SEEK_END) != 0)
        se_die("cannot seek", path);
    long len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0)
        se_die("cannot size", path);
    r.len = (size_t)len;
    r.p = xmalloc(r.len + 64); /* room for appended garbage */
    if (fread(r.p, 1, r.len, f) != r.len)
        se_die("cannot read", path);
    fclose(f);
    return r;
}

void se_save(const char *dir, const char *name, const se_buf *b) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *o = fopen(path, "wb");
    if (!o || fwrite(b->p, 1, b->len, o) != b->len || fclose(o) != 0)
        se_die("cannot write", path);
}

void se_append(se_buf *b, const void *p, size_t n) {
    unsigned char *q = realloc(b->p, b->len + n + 1);
    if (!q)
        se_die("out of memory", "append");
    memcpy(q + b->len, p, n);
    b->p = q;
    b->len += n;
}

void se_append_varint(se_buf *b, uint64_t v) {
    unsigned char tmp[10];
    size_t k = 0;
    do {
        tmp[k] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[k] |= 0x80;
        k++;
    } while (v);
    se_append(b, tmp, k);
}

static se_buf dup_bytes(const unsigned char *p, size_t n) {
    se_buf b = {xmalloc(n), n};
    memcpy(b.p, p, n);
    return b;
}

/* ---- segment ------------------------------------------------------------ */
void se_seg_parse(const se_buf *file, se_seg *s) {
    memset(s, 0, sizeof *s);
    if (file->len < 256)
        se_die("segment shorter than its header", "parse");
    memcpy(s->hdr, file->p, 256);
    uint32_t n = ld32(s->hdr + H_DIR_COUNT);
    uint64_t off = ld64(s->hdr + H_DIR_OFF);
    uint32_t rsz = ld32(s->hdr + H_DIR_RECSZ);
    if (n > SE_MAX_SECTIONS || rsz < D_SIZE_KNOWN || off > file->len ||
        (uint64_t)n * rsz > file->len - off)
        se_die("bad directory", "parse");
    s->dir_recsz = rsz;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *e = file->p + off + (size_t)i * rsz;
        se_section *x = &s->s[s->nsect++];
        x->type = ld32(e + D_TYPE);
        x->flags = ld32(e + D_FLAGS);
        x->recsz = ld32(e + D_RECSZ);
        x->count = ld32(e + D_COUNT);
        uint64_t o = ld64(e + D_OFFSET), sz = ld64(e + D_SIZE);
        if (o > file->len || sz > file->len - o)
            se_die("section outside the file", "parse");
        x->data = dup_bytes(file->p + o, (size_t)sz);
    }
}

void se_seg_free(se_seg *s) {
    for (size_t i = 0; i < s->nsect; i++)
        free(s->s[i].data.p);
    for (size_t i = 0; i < s->nblocks && s->raw; i++)
        free(s->raw[i].p);
    free(s->raw);
    free(s->rows);
    memset(s, 0, sizeof *s);
}

se_section *se_seg_find(se_seg *s, uint32_t type) {
    for (size_t i = 0; i < s->nsect; i++)
        if (s->s[i].type == type)
            return &s->s[i];
    se_die("segment lacks a section", "find");
    return NULL;
}

void se_seg_insert(se_seg *s, size_t pos, uint32_t type, uint32_t flags,
                   const void *data, size_t len) {
    if (s->nsect == SE_MAX_SECTIONS || pos > s->nsect)
        se_die("cannot insert a section", "insert");
    memmove(&s->s[pos + 1], &s->s[pos], (s->nsect - pos) * sizeof s->s[0]);
    s->nsect++;
    se_section *x = &s->s[pos];
    memset(x, 0, sizeof *x);
    x->type = type;
    x->flags = flags;
    x->data = dup_bytes(data, len);
}

/* Rows of each block, from the slice records (block b of a slice holds
 * rows [b R, min((b + 1) R, count))). */
static void block_rows(se_seg *s) {
    se_section *sl = se_seg_find(s, T_SLICES), *bl = se_seg_find(s, T_BLOCKS);
    uint32_t R = ld32(s->hdr + H_ROWS_PER_BLOCK);
    s->nblocks = bl->count;
    s->rows = xmalloc(sizeof *s->rows * (s->nblocks ? s->nblocks : 1));
    for (uint32_t i = 0; i < sl->count; i++) {
        const unsigned char *r = sl->data.p + (size_t)i * sl->recsz;
        uint32_t count = ld32(r + SL_COUNT), b0 = ld32(r + SL_BLOCK_FIRST);
        uint32_t bn = ld32(r + SL_BLOCK_COUNT);
        for (uint32_t b = 0; b < bn; b++) {
            if (b0 + b >= s->nblocks)
                se_die("slice blocks outside the block array", "rows");
            uint32_t left = count - b * R;
            s->rows[b0 + b] = left < R ? left : R;
        }
    }
}

void se_seg_decode_blocks(se_seg *s) {
    block_rows(s);
    se_section *bl = se_seg_find(s, T_BLOCKS);
    uint64_t data_off = 256; /* the writer puts the data section first */
    se_section *data = se_seg_find(s, T_DATA);
    if (data != &s->s[0])
        se_die("data section not first", "decode");
    s->raw = xmalloc(sizeof *s->raw * (s->nblocks ? s->nblocks : 1));
    for (size_t i = 0; i < s->nblocks; i++) {
        const unsigned char *r = bl->data.p + i * bl->recsz;
        uint64_t at = ld64(r + BL_OFFSET) - data_off;
        uint32_t comp = ld32(r + BL_COMP), raw = ld32(r + BL_RAW);
        if (at > data->data.len || comp > data->data.len - at)
            se_die("block outside the data section", "decode");
        s->raw[i].p = xmalloc(raw);
        s->raw[i].len = raw;
        int got = LZ4_decompress_safe((const char *)data->data.p + at, (char *)s->raw[i].p,
                                      (int)comp, (int)raw);
        if (got != (int)raw)
            se_die("block does not decompress", "decode");
    }
}

/* Recompresses the raw blocks into a new data section (at byte 256). */
static void encode_blocks(se_seg *s) {
    se_section *bl = se_seg_find(s, T_BLOCKS), *data = se_seg_find(s, T_DATA);
    se_buf out = {NULL, 0};
    uint64_t raw_total = 0;
    for (size_t i = 0; i < s->nblocks; i++) {
        int cap = LZ4_compressBound((int)s->raw[i].len);
        char *c = xmalloc((size_t)cap);
        int k = LZ4_compress_default((const char *)s->raw[i].p, c, (int)s->raw[i].len, cap);
        if (k <= 0)
            se_die("LZ4 failed", "encode");
        unsigned char *r = bl->data.p + i * bl->recsz;
        st64(r + BL_OFFSET, 256 + out.len);
        st32(r + BL_COMP, (uint32_t)k);
        st32(r + BL_RAW, (uint32_t)s->raw[i].len);
        st64(r + BL_SUM, XXH3_64bits(c, (size_t)k));
        se_append(&out, c, (size_t)k);
        raw_total += s->raw[i].len;
        free(c);
    }
    free(data->data.p);
    data->data = out;
    st64(s->hdr + H_RAW_SIZE, raw_total);
}

/* index_sum of every slice: SPEC 5.3, over the records as stored. */
static void fix_index_sums(se_seg *s) {
    se_section *sl = se_seg_find(s, T_SLICES), *ch = se_seg_find(s, T_CHUNKS);
    se_section *bl = se_seg_find(s, T_BLOCKS);
    for (uint32_t i = 0; i < sl->count; i++) {
        unsigned char *r = sl->data.p + (size_t)i * sl->recsz;
        uint32_t c0 = ld32(r + SL_CHUNK_FIRST), cn = ld32(r + SL_CHUNK_COUNT);
        uint32_t b0 = ld32(r + SL_BLOCK_FIRST), bn = ld32(r + SL_BLOCK_COUNT);
        if ((uint64_t)c0 + cn > ch->count || (uint64_t)b0 + bn > bl->count)
            continue; /* a variant damaged the slice on purpose */
        uint64_t seed = XXH3_64bits(bl->data.p + (size_t)b0 * bl->recsz, (size_t)bn * bl->recsz);
        st64(r + SL_INDEX_SUM, XXH3_64bits_withSeed(ch->data.p + (size_t)c0 * ch->recsz,
                                                    (size_t)cn * ch->recsz, seed));
    }
}

/* The section of `type`, NULL if the segment has none. */
static se_section *find_opt(se_seg *s, uint32_t type) {
    for (size_t i = 0; i < s->nsect; i++)
        if (s->s[i].type == type)
            return &s->s[i];
    return NULL;
}

/* The piece sums (SPEC.md §9f, section type 12, from minor 4) rebuilt for
 * the sections as they are now: the same shift and covered types, each
 * type's first sum and its pieces' XXH3-64 (a covered section may have
 * changed size). The covered types must be as §9f has them: strictly
 * increasing, at least 6, never 12, each in the directory. From minor 5
 * the id transitions (§9g, type 13) are covered whenever present (the
 * reference writer covers every section of type 6 or more): an entry for
 * type 13 is added, in its place, to piece sums that lack it. */
#define T_PSUM 12u
#define T_PSUM_MIN 6u
#define T_IDTIME 13u
static void fix_piece_sums(se_seg *s) {
    uint16_t minor = (uint16_t)(s->hdr[H_MINOR] | s->hdr[H_MINOR + 1] << 8);
    se_section *ps = minor >= 4 ? find_opt(s, T_PSUM) : NULL;
    if (!ps)
        return;
    if (ps->data.len < 16)
        se_die("piece sums shorter than their header", "emit");
    uint32_t shift = ld32(ps->data.p), ne = ld32(ps->data.p + 4);
    uint32_t esz = ld32(ps->data.p + 8);
    if (ne > SE_MAX_SECTIONS || esz < 16 || 16 + (size_t)ne * esz > ps->data.len)
        se_die("piece sums entries", "emit");
    /* the entries (each esz bytes, as found), maybe one more for type 13 */
    unsigned char ent[SE_MAX_SECTIONS + 1][64];
    if (esz > sizeof ent[0])
        se_die("piece sums entries longer than 64 bytes", "emit");
    uint32_t types[SE_MAX_SECTIONS + 1], n_ent = 0;
    int has13 = 0;
    for (uint32_t i = 0; i < ne; i++) {
        const unsigned char *e = ps->data.p + 16 + (size_t)i * esz;
        uint32_t t = ld32(e);
        if (t < T_PSUM_MIN || t == T_PSUM || (n_ent && t <= types[n_ent - 1]))
            se_die("piece sums: covered types not strictly increasing, >= 6, never 12",
                   "emit");
        has13 |= t == T_IDTIME;
        memcpy(ent[n_ent], e, esz);
        types[n_ent++] = t;
    }
    if (minor >= 5 && !has13 && find_opt(s, T_IDTIME)) {
        uint32_t at = 0;
        while (at < n_ent && types[at] < T_IDTIME)
            at++;
        memmove(&ent[at + 1], &ent[at], (n_ent - at) * sizeof ent[0]);
        memmove(&types[at + 1], &types[at], (n_ent - at) * sizeof types[0]);
        memset(ent[at], 0, esz);
        st32(ent[at], T_IDTIME);
        types[at] = T_IDTIME;
        n_ent++;
    }
    uint64_t piece = (uint64_t)1 << shift, n = 0;
    const se_section *cov[SE_MAX_SECTIONS + 1];
    for (uint32_t i = 0; i < n_ent; i++) {
        cov[i] = find_opt(s, types[i]);
        if (!cov[i])
            se_die("piece sums cover a missing section", "emit");
        n += (cov[i]->data.len + piece - 1) / piece;
    }
    size_t head = 16 + (size_t)n_ent * esz;
    se_buf out = {xmalloc(head + (size_t)n * 8), head + (size_t)n * 8};
    memcpy(out.p, ps->data.p, 16);
    st32(out.p + 4, n_ent);
    uint64_t k = 0;
    for (uint32_t i = 0; i < n_ent; i++) {
        memcpy(out.p + 16 + (size_t)i * esz, ent[i], esz);
        st64(out.p + 16 + (size_t)i * esz + 8, k);
        for (uint64_t off = 0; off < cov[i]->data.len; off += piece, k++) {
            uint64_t len = cov[i]->data.len - off < piece ? cov[i]->data.len - off : piece;
            st64(out.p + head + k * 8, XXH3_64bits(cov[i]->data.p + off, (size_t)len));
        }
    }
    free(ps->data.p);
    ps->data = out;
}

se_buf se_seg_emit(se_seg *s) {
    if (s->raw)
        encode_blocks(s);
    fix_index_sums(s);
    fix_piece_sums(s);
    se_buf out = {NULL, 0};
    se_append(&out, s->hdr, 256);
    for (size_t i = 0; i < s->nsect; i++)
        se_append(&out, s->s[i].data.p, s->s[i].data.len);
    uint64_t dir_off = out.len, at = 256;
    size_t dir_len = s->nsect * (size_t)s->dir_recsz;
    unsigned char *dir = xmalloc(dir_len);
    memset(dir, s->dir_pad, dir_len);
    for (size_t i = 0; i < s->nsect; i++) {
        unsigned char *e = dir + i * s->dir_recsz;
        const se_section *x = &s->s[i];
        memset(e, 0, D_SIZE_KNOWN);
        st32(e + D_TYPE, x->type);
        st32(e + D_FLAGS, x->flags);
        st64(e + D_OFFSET, at);
        st64(e + D_SIZE, x->data.len);
        st32(e + D_RECSZ, x->recsz);
        st32(e + D_COUNT, x->count);
        st64(e + D_SUM, XXH3_64bits(x->data.p, x->data.len));
        at += x->data.len;
    }
    se_append(&out, dir, dir_len);
    free(dir);
    unsigned char *h = out.p;
    st32(h + H_DIR_COUNT, (uint32_t)s->nsect);
    st64(h + H_DIR_OFF, dir_off);
    st32(h + H_DIR_RECSZ, s->dir_recsz);
    st64(h + H_DIR_SUM, XXH3_64bits(out.p + dir_off, dir_len));
    st64(h + H_FILE_SIZE, out.len);
    if (s->raw)
        memcpy(h + H_RAW_SIZE, s->hdr + H_RAW_SIZE, 8);
    st64(h + H_HEADER_SUM, XXH3_64bits(h, H_HEADER_SUM));
    memcpy(s->hdr, h, 256);
    return out;
}

void se_widen(se_buf *data, uint32_t *recsz, uint32_t count, uint32_t newsz,
              unsigned char pad) {
    if (newsz < *recsz)
        se_die("cannot narrow records", "widen");
    se_buf out = {xmalloc((size_t)count * newsz), (size_t)count * newsz};
    memset(out.p, pad, out.len);
    for (uint32_t i = 0; i < count; i++)
        memcpy(out.p + (size_t)i * newsz, data->p + (size_t)i * *recsz, *recsz);
    free(data->p);
    *data = out;
    *recsz = newsz;
}

/* ---- dictionary --------------------------------------------------------- */
void se_dict_parse(const se_buf *b, se_dict *d) {
    memset(d, 0, sizeof *d);
    if (b->len < 16 || memcmp(b->p, "MHDICT\0\2", 8) != 0)
        se_die("not a 2.0 dictionary", "dict");
    uint32_t n = ld32(b->p + 8);
    d->reserved = ld32(b->p + 12);
    size_t at = 16;
    if (n > SE_MAX_TABLES)
        se_die("too many tables", "dict");
    for (uint32_t i = 0; i < n; i++) {
        if (b->len - at < 24)
            se_die("table header outside the dictionary", "dict");
        const unsigned char *h = b->p + at;
        se_table *t = &d->t[d->ntables++];
        t->type = ld32(h);
        t->flags = ld32(h + 4);
        t->recsz = ld32(h + 8);
        t->count = ld32(h + 12);
        uint64_t sz = ld64(h + 16);
        at += 24;
        if (sz > b->len - at)
            se_die("table outside the dictionary", "dict");
        t->data = dup_bytes(b->p + at, (size_t)sz);
        at += (size_t)sz;
    }
}

void se_dict_free(se_dict *d) {
    for (size_t i = 0; i < d->ntables; i++)
        free(d->t[i].data.p);
    memset(d, 0, sizeof *d);
}

se_table *se_dict_find(se_dict *d, uint32_t type) {
    for (size_t i = 0; i < d->ntables; i++)
        if (d->t[i].type == type)
            return &d->t[i];
    return NULL;
}

void se_dict_emit(const se_dict *d, se_buf *section) {
    se_buf out = {NULL, 0};
    unsigned char h[24];
    memcpy(h, "MHDICT\0\2", 8);
    st32(h + 8, (uint32_t)d->ntables);
    st32(h + 12, d->reserved);
    se_append(&out, h, 16);
    for (size_t i = 0; i < d->ntables; i++) {
        const se_table *t = &d->t[i];
        st32(h, t->type);
        st32(h + 4, t->flags);
        st32(h + 8, t->recsz);
        st32(h + 12, t->count);
        st64(h + 16, t->data.len);
        se_append(&out, h, 24);
        se_append(&out, t->data.p, t->data.len);
    }
    free(section->p);
    *section = out;
}

uint32_t se_dict_add_string(se_dict *d, const char *s) {
    se_table *t = se_dict_find(d, 1);
    if (!t)
        se_die("no strings table", "dict");
    unsigned char len[4];
    st32(len, (uint32_t)strlen(s));
    se_append(&t->data, len, 4);
    se_append(&t->data, s, strlen(s));
    return t->count++;
}

/* ---- MANIFEST ------------------------------------------------------------- */
void se_manifest_fix(const char *store) {
    se_buf m = se_load(store, "MANIFEST");
    if (m.len < 72)
        se_die("MANIFEST too short", store);
    uint32_t hsz = ld32(m.p + 16), n = ld32(m.p + 20), rsz = ld32(m.p + 24);
    size_t body = hsz + (size_t)n * rsz;
    if (body + 8 > m.len)
        se_die("MANIFEST shorter than its records", store);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *r = m.p + hsz + (size_t)i * rsz;
        char name[64], path[4096];
        snprintf(name, sizeof name, "seg-%016llx.mhs", (unsigned long long)ld64(r));
        snprintf(path, sizeof path, "%s/%s", store, name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue; /* the segment-missing variant */
        fclose(f);
        se_buf s = se_load(store, name);
        if (s.len >= 256) {
            st64(r + 48, ld64(s.p + H_HEADER_SUM));
            st64(r + 40, s.len);
        }
        free(s.p);
    }
    st64(m.p + body, XXH3_64bits(m.p, body));
    se_save(store, "MANIFEST", &m);
    free(m.p);
}
