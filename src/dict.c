/*
 * dict.c - the segment dictionary (SPEC.md "Dictionary section"): a string
 * dictionary, a type dictionary naming every column with its type, width
 * and encoding, the operation table, and the writer's metadata; since 2.0
 * as typed tables (skippable when not required), with the streams, their
 * metadata and the segment's window parts.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct std_column {
    const char *name;
    uint8_t type, width, encoding, flags;
} std_column;

/* The columns of format 1.0, in this order (1.0 readers compare them
 * byte for byte). */
static const std_column k_columns[] = {
    {"id", MHF_TYPE_UINT, 8, MHF_ENC_DELTA_ZZ, 0},
    {"transition", MHF_TYPE_UINT, 8, MHF_ENC_DELTA_ZZ, 0},
    {"physical", MHF_TYPE_UINT, 8, MHF_ENC_DELTA_ZZ, 0},
    {"linear", MHF_TYPE_UINT, 8, MHF_ENC_DELTA_PHY_ZZ, MHF_COL_NULLABLE},
    {"size", MHF_TYPE_UINT, 4, MHF_ENC_VARINT, 0},
    {"operation", MHF_TYPE_ENUM, 1, MHF_ENC_CHUNK, 0},
};
#define K_NCOLUMNS (sizeof k_columns / sizeof k_columns[0])

static const char *const k_op_names[MHF_OP_COUNT] = {"read", "write", "execute"};
static const uint8_t k_op_bits[MHF_OP_COUNT] = {4, 2, 1}; /* legacy SQLite bits */

/* The strings of a dictionary being built, each once: a hash of their
 * indexes (open addressing, at most half full) so that a segment with
 * tens of thousands of named streams seals in linear time. */
typedef struct strtab {
    const char **s;
    size_t n, cap;
    uint32_t *slot; /* index + 1, 0 = empty */
    size_t nslot;   /* power of two */
} strtab;

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211u;
    return h;
}

static int strtab_rehash(strtab *t, size_t nslot) {
    uint32_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return MH_ENOMEM;
    for (size_t i = 0; i < t->n; i++) {
        size_t h = (size_t)str_hash(t->s[i]) & (nslot - 1);
        while (slot[h])
            h = (h + 1) & (nslot - 1);
        slot[h] = (uint32_t)i + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    return MH_OK;
}

static int strtab_add(strtab *t, const char *s, uint32_t *idx) {
    if (2 * (t->n + 1) > t->nslot)
        MH_TRY(strtab_rehash(t, t->nslot ? 2 * t->nslot : 64));
    size_t h = (size_t)str_hash(s) & (t->nslot - 1);
    for (; t->slot[h]; h = (h + 1) & (t->nslot - 1))
        if (strcmp(t->s[t->slot[h] - 1], s) == 0) {
            *idx = t->slot[h] - 1;
            return MH_OK;
        }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        const char **p = realloc(t->s, cap * sizeof *p);
        if (!p)
            return MH_ENOMEM;
        t->s = p;
        t->cap = cap;
    }
    *idx = (uint32_t)t->n;
    t->slot[h] = (uint32_t)t->n + 1;
    t->s[t->n++] = s;
    return MH_OK;
}

void mh_dict_free(mh_dict *dict) {
    if (!dict)
        return;
    for (size_t i = 0; i < dict->nstrings; i++)
        free(dict->strings[i]);
    free(dict->strings);
    free(dict->columns);
    free(dict->meta);
    free(dict->streams);
    free(dict->stream_meta);
    free(dict->windows);
    memset(dict, 0, sizeof *dict);
}

static int dict_parse1(const uint8_t *p, size_t size, uint64_t base,
                       mh_dict *o, mh_diag *d) {
    MH_CHECK(size >= MHF_DICT_HEADER_SIZE, MH_ECORRUPT, d, base,
             "dictionary shorter than its header");
    MH_CHECK(memcmp(p, MHF_DICT_MAGIC, 8) == 0, MH_ECORRUPT, d, base,
             "bad dictionary magic");
    uint32_t ns = mhf_load_u32(p + MHF_DICT_STRING_COUNT);
    uint32_t nc = mhf_load_u32(p + MHF_DICT_COLUMN_COUNT);
    uint32_t no = mhf_load_u32(p + MHF_DICT_OP_COUNT);
    uint32_t nm = mhf_load_u32(p + MHF_DICT_META_COUNT);
    MH_CHECK(mhf_load_u64(p + MHF_DICT_RESERVED) == 0, MH_ECORRUPT, d,
             base + MHF_DICT_RESERVED, "dictionary reserved field not zero");
    /* each string takes at least 4 bytes: bounds the allocation */
    MH_CHECK(ns <= (size - MHF_DICT_HEADER_SIZE) / 4, MH_ECORRUPT, d,
             base + MHF_DICT_STRING_COUNT, "string count %u too large", ns);
    size_t off = MHF_DICT_HEADER_SIZE;
    o->strings = calloc(ns ? ns : 1, sizeof *o->strings);
    if (!o->strings)
        MH_FAIL(MH_ENOMEM, d, base, "out of memory for %u dictionary strings", ns);
    for (uint32_t i = 0; i < ns; i++) {
        MH_CHECK(size - off >= 4, MH_ECORRUPT, d, base + off,
                 "dictionary ends inside string %u", i);
        uint32_t len = mhf_load_u32(p + off);
        MH_CHECK(len <= MHF_DICT_MAX_STRING && len <= size - off - 4,
                 MH_ECORRUPT, d, base + off, "string %u length %u out of range",
                 i, len);
        MH_CHECK(memchr(p + off + 4, 0, len) == NULL, MH_ECORRUPT, d,
                 base + off, "string %u contains a NUL byte", i);
        o->strings[i] = malloc((size_t)len + 1);
        if (!o->strings[i])
            MH_FAIL(MH_ENOMEM, d, base + off, "out of memory for dictionary string %u", i);
        o->nstrings = i + 1;
        memcpy(o->strings[i], p + off + 4, len);
        o->strings[i][len] = 0;
        off += 4 + (size_t)len;
    }
    uint64_t rest = (uint64_t)nc * MHF_DICT_COLUMN_SIZE +
                    (uint64_t)no * MHF_DICT_OP_SIZE +
                    (uint64_t)nm * MHF_DICT_META_SIZE;
    MH_CHECK(rest == size - off, MH_ECORRUPT, d, base + off,
             "dictionary tables do not end at the section's end");
    /* columns must be exactly those of format 1.0 */
    MH_CHECK(nc == K_NCOLUMNS, MH_EVERSION, d, base + MHF_DICT_COLUMN_COUNT,
             "unknown column layout (%u columns)", nc);
    o->columns = calloc(nc, sizeof *o->columns);
    if (!o->columns)
        MH_FAIL(MH_ENOMEM, d, base, "out of memory for the dictionary's columns");
    for (uint32_t i = 0; i < nc; i++, off += MHF_DICT_COLUMN_SIZE) {
        uint32_t name = mhf_load_u32(p + off);
        MH_CHECK(name < ns, MH_ECORRUPT, d, base + off,
                 "column %u names string %u of %u", i, name, ns);
        const std_column *k = &k_columns[i];
        MH_CHECK(strcmp(o->strings[name], k->name) == 0 &&
                     p[off + 4] == k->type && p[off + 5] == k->width &&
                     p[off + 6] == k->encoding && p[off + 7] == k->flags,
                 MH_EVERSION, d, base + off,
                 "column %u is not the format 1.0 column \"%s\"", i, k->name);
        o->columns[i].name = o->strings[name];
        o->columns[i].type = k->type;
        o->columns[i].width = k->width;
        o->columns[i].encoding = k->encoding;
        o->columns[i].nullable = (k->flags & MHF_COL_NULLABLE) ? 1 : 0;
    }
    o->ncolumns = nc;
    MH_CHECK(no == MHF_OP_COUNT, MH_EVERSION, d, base + MHF_DICT_OP_COUNT,
             "unknown operation table (%u operations)", no);
    for (uint32_t i = 0; i < no; i++, off += MHF_DICT_OP_SIZE) {
        uint32_t name = mhf_load_u32(p + off);
        MH_CHECK(name < ns, MH_ECORRUPT, d, base + off,
                 "operation %u names string %u of %u", i, name, ns);
        MH_CHECK(p[off + 4] == i && p[off + 5] == k_op_bits[i] &&
                     mhf_load_u16(p + off + 6) == 0 &&
                     strcmp(o->strings[name], k_op_names[i]) == 0,
                 MH_EVERSION, d, base + off,
                 "operation %u is not the format 1.0 operation \"%s\"", i,
                 k_op_names[i]);
        o->op_names[i] = o->strings[name];
        o->op_sqlite_bit[i] = k_op_bits[i];
    }
    o->meta = calloc(nm ? nm : 1, sizeof *o->meta);
    if (!o->meta)
        MH_FAIL(MH_ENOMEM, d, base, "out of memory for %u metadata entries", nm);
    for (uint32_t i = 0; i < nm; i++, off += MHF_DICT_META_SIZE) {
        uint32_t k = mhf_load_u32(p + off), v = mhf_load_u32(p + off + 4);
        MH_CHECK(k < ns && v < ns, MH_ECORRUPT, d, base + off,
                 "metadata entry %u names a missing string", i);
        o->meta[i].key = o->strings[k];
        o->meta[i].value = o->strings[v];
    }
    o->nmeta = nm;
    mh_block_layout_std(&o->layout, 1, 0, 0);
    return MH_OK;
}

/* ---- format 2.0 ------------------------------------------------------ */

/* The columns of 2.0, in this order (SPEC.md "Type dictionary"); stream
 * and pc only in segments that store them. */
typedef struct std_column2 {
    const char *name;
    uint8_t type, width, encoding, flags;
    uint8_t kind; /* MH_COL_*, or MH_COL_UNKNOWN for operation (not stored) */
    uint8_t optional;
} std_column2;

static const std_column2 k_columns2[] = {
    {"id", MHF_TYPE_UINT, 8, MHF_ENC_DELTA_ZZ, MHF_COL_REQUIRED, MH_COL_ID, 0},
    {"transition", MHF_TYPE_UINT, 8, MHF_ENC_DELTA_ZZ, MHF_COL_REQUIRED,
     MH_COL_TRANSITION, 0},
    {"physical", MHF_TYPE_UINT, 8, MHF_ENC_DELTA_ZZ, MHF_COL_REQUIRED,
     MH_COL_PHYSICAL, 0},
    {"linear", MHF_TYPE_UINT, 8, MHF_ENC_DELTA_PHY_ZZ,
     MHF_COL_REQUIRED | MHF_COL_NULLABLE, MH_COL_LINEAR, 0},
    {"size", MHF_TYPE_UINT, 4, MHF_ENC_VARINT, MHF_COL_REQUIRED, MH_COL_SIZE, 0},
    {"operation", MHF_TYPE_ENUM, 1, MHF_ENC_CHUNK, MHF_COL_REQUIRED,
     MH_COL_UNKNOWN, 0},
    {"stream", MHF_TYPE_UINT, 4, MHF_ENC_VARINT, MHF_COL_REQUIRED, MH_COL_STREAM,
     1},
    {"pc", MHF_TYPE_UINT, 8, MHF_ENC_PC, MHF_COL_REQUIRED | MHF_COL_NULLABLE,
     MH_COL_PC, 1},
};
#define K_NCOLUMNS2 (sizeof k_columns2 / sizeof k_columns2[0])
#define K_STREAM_COL 6u
#define K_PC_COL 7u

/* the fixed record size of known table types (0: strings, variable) */
static uint32_t table_recsz(uint32_t type) {
    switch (type) {
    case MHF2_TAB_COLUMNS:
        return MHF_DICT_COLUMN_SIZE;
    case MHF2_TAB_OPS:
        return MHF_DICT_OP_SIZE;
    case MHF2_TAB_META:
        return MHF_DICT_META_SIZE;
    case MHF2_TAB_STREAMS:
        return MHF2_STREAM_SIZE;
    case MHF2_TAB_STREAM_META:
        return MHF2_STREAM_META_SIZE;
    case MHF2_TAB_WINDOWS:
        return MHF2_WINDOW_SIZE;
    default:
        return 0;
    }
}

static int put_table(mh_buf *b, uint32_t type, uint32_t flags, uint32_t recsz,
                     uint32_t count, const void *body, size_t bytes) {
    uint8_t h[MHF2_TAB_HEADER_SIZE];
    mhf_store_u32(h + MHF2_TAB_TYPE, type);
    mhf_store_u32(h + MHF2_TAB_FLAGS, flags);
    mhf_store_u32(h + MHF2_TAB_RECSZ, recsz);
    mhf_store_u32(h + MHF2_TAB_COUNT, count);
    mhf_store_u64(h + MHF2_TAB_BYTES, bytes);
    MH_TRY(mh_buf_append(b, h, sizeof h));
    return mh_buf_append(b, body, bytes);
}

static int build2(const mh_seal_info *si, const mh_dict_stream *streams,
                  size_t nstreams, int stream_col, int pc_col, strtab *st,
                  mh_buf *out) {
    mh_buf t = {0};
    int rc = MH_OK;
    uint32_t idx, idx2;
    uint32_t ntables = 0;
    uint8_t rec[MHF2_STREAM_SIZE];
    /* columns */
    mh_buf cols = {0};
    uint32_t ncols = 0;
    for (size_t i = 0; rc == MH_OK && i < K_NCOLUMNS2; i++) {
        if ((i == K_STREAM_COL && !stream_col) || (i == K_PC_COL && !pc_col))
            continue;
        const std_column2 *k = &k_columns2[i];
        rc = strtab_add(st, k->name, &idx);
        mhf_store_u32(rec, idx);
        rec[4] = k->type;
        rec[5] = k->width;
        rec[6] = k->encoding;
        rec[7] = k->flags;
        if (rc == MH_OK)
            rc = mh_buf_append(&cols, rec, MHF_DICT_COLUMN_SIZE);
        ncols++;
    }
    for (size_t i = 0; rc == MH_OK && i < si->nextra_columns; i++) {
        const mh_extra_column *x = &si->extra_columns[i];
        rc = strtab_add(st, x->name, &idx);
        mhf_store_u32(rec, idx);
        rec[4] = x->type;
        rec[5] = x->width;
        rec[6] = x->encoding;
        rec[7] = x->flags;
        if (rc == MH_OK)
            rc = mh_buf_append(&cols, rec, MHF_DICT_COLUMN_SIZE);
        ncols++;
    }
    mh_buf ops = {0};
    for (unsigned i = 0; rc == MH_OK && i < MHF_OP_COUNT; i++) {
        rc = strtab_add(st, k_op_names[i], &idx);
        memset(rec, 0, MHF_DICT_OP_SIZE);
        mhf_store_u32(rec, idx);
        rec[4] = (uint8_t)i;
        rec[5] = k_op_bits[i];
        if (rc == MH_OK)
            rc = mh_buf_append(&ops, rec, MHF_DICT_OP_SIZE);
    }
    mh_buf meta = {0};
    for (size_t i = 0; rc == MH_OK && i < si->nmeta; i++) {
        rc = strtab_add(st, si->meta[i].key, &idx);
        if (rc == MH_OK)
            rc = strtab_add(st, si->meta[i].value, &idx2);
        mhf_store_u32(rec, idx);
        mhf_store_u32(rec + 4, idx2);
        if (rc == MH_OK)
            rc = mh_buf_append(&meta, rec, MHF_DICT_META_SIZE);
    }
    mh_buf str = {0};
    for (size_t i = 0; rc == MH_OK && i < nstreams; i++) {
        const mh_dict_stream *x = &streams[i];
        memset(rec, 0, sizeof rec);
        idx = MHF2_NONE32;
        if (x->name)
            rc = strtab_add(st, x->name, &idx);
        mhf_store_u32(rec + MHF2_STREAM_ID, x->id);
        rec[MHF2_STREAM_KIND] = x->kind;
        mhf_store_u32(rec + MHF2_STREAM_NAME, idx);
        mhf_store_u32(rec + MHF2_STREAM_PARENT, x->parent);
        mhf_store_u64(rec + MHF2_STREAM_PID, x->pid);
        mhf_store_u64(rec + MHF2_STREAM_TID, x->tid);
        mhf_store_u32(rec + MHF2_STREAM_CPU, x->cpu);
        mhf_store_u64(rec + MHF2_STREAM_COUNT, x->count);
        mhf_store_u64(rec + MHF2_STREAM_T_FIRST, x->t_first);
        mhf_store_u64(rec + MHF2_STREAM_T_LAST, x->t_last);
        if (rc == MH_OK)
            rc = mh_buf_append(&str, rec, MHF2_STREAM_SIZE);
    }
    mh_buf smeta = {0};
    for (size_t i = 0; rc == MH_OK && i < si->nstream_meta; i++) {
        const mh_stream_kv *x = &si->stream_meta[i];
        rc = strtab_add(st, x->key, &idx);
        if (rc == MH_OK)
            rc = strtab_add(st, x->value, &idx2);
        mhf_store_u32(rec, x->stream);
        mhf_store_u32(rec + 4, idx);
        mhf_store_u32(rec + 8, idx2);
        if (rc == MH_OK)
            rc = mh_buf_append(&smeta, rec, MHF2_STREAM_META_SIZE);
    }
    mh_buf win = {0};
    for (size_t i = 0; rc == MH_OK && i < si->nwindows; i++) {
        const mh_window_part *x = &si->windows[i];
        mhf_store_u64(rec, x->window);
        mhf_store_u64(rec + 8, x->id_first);
        mhf_store_u64(rec + 16, x->count);
        mhf_store_u64(rec + 24, x->t_first);
        mhf_store_u64(rec + 32, x->t_last);
        rc = mh_buf_append(&win, rec, MHF2_WINDOW_SIZE);
    }
    /* the strings are complete now */
    mh_buf sb = {0};
    for (size_t i = 0; rc == MH_OK && i < st->n; i++) {
        uint8_t len[4];
        size_t l = strlen(st->s[i]);
        mhf_store_u32(len, (uint32_t)l);
        rc = mh_buf_append(&sb, len, 4);
        if (rc == MH_OK)
            rc = mh_buf_append(&sb, st->s[i], l);
    }
    if (rc == MH_OK)
        rc = put_table(&t, MHF2_TAB_STRINGS, MHF2_TAB_REQUIRED, 0,
                       (uint32_t)st->n, sb.p, sb.n);
    if (rc == MH_OK)
        rc = put_table(&t, MHF2_TAB_COLUMNS, MHF2_TAB_REQUIRED,
                       MHF_DICT_COLUMN_SIZE, ncols, cols.p, cols.n);
    if (rc == MH_OK)
        rc = put_table(&t, MHF2_TAB_OPS, MHF2_TAB_REQUIRED, MHF_DICT_OP_SIZE,
                       MHF_OP_COUNT, ops.p, ops.n);
    ntables += 3;
    if (rc == MH_OK && si->nmeta) {
        rc = put_table(&t, MHF2_TAB_META, 0, MHF_DICT_META_SIZE,
                       (uint32_t)si->nmeta, meta.p, meta.n);
        ntables++;
    }
    if (rc == MH_OK && nstreams) {
        rc = put_table(&t, MHF2_TAB_STREAMS, 0, MHF2_STREAM_SIZE,
                       (uint32_t)nstreams, str.p, str.n);
        ntables++;
    }
    if (rc == MH_OK && si->nstream_meta) {
        rc = put_table(&t, MHF2_TAB_STREAM_META, 0, MHF2_STREAM_META_SIZE,
                       (uint32_t)si->nstream_meta, smeta.p, smeta.n);
        ntables++;
    }
    if (rc == MH_OK && si->nwindows) {
        rc = put_table(&t, MHF2_TAB_WINDOWS, 0, MHF2_WINDOW_SIZE,
                       (uint32_t)si->nwindows, win.p, win.n);
        ntables++;
    }
    for (size_t i = 0; rc == MH_OK && i < si->nextra_tables; i++) {
        const mh_extra_section *x = &si->extra_tables[i];
        rc = put_table(&t, x->type, x->flags, x->recsz, x->count, x->p, x->size);
        ntables++;
    }
    uint8_t h[MHF2_DICT_HEADER_SIZE] = {0};
    memcpy(h, MHF2_DICT_MAGIC, 8);
    mhf_store_u32(h + MHF2_DICT_TABLE_COUNT, ntables);
    if (rc == MH_OK)
        rc = mh_buf_append(out, h, sizeof h);
    if (rc == MH_OK)
        rc = mh_buf_append(out, t.p, t.n);
    mh_buf_free(&t);
    mh_buf_free(&cols);
    mh_buf_free(&ops);
    mh_buf_free(&meta);
    mh_buf_free(&str);
    mh_buf_free(&smeta);
    mh_buf_free(&win);
    mh_buf_free(&sb);
    return rc;
}

int mh_dict_build(const mh_seal_info *si, const mh_dict_stream *streams,
                  size_t nstreams, int stream_col, int pc_col, uint8_t **out,
                  size_t *size) {
    strtab st = {0};
    mh_buf b = {0};
    int rc = build2(si, streams, nstreams, stream_col, pc_col, &st, &b);
    free(st.s);
    free(st.slot);
    if (rc != MH_OK) {
        mh_buf_free(&b);
        return rc;
    }
    *size = b.n;
    if ((*out = mh_buf_detach(&b)) == NULL) {
        mh_buf_free(&b);
        return MH_ENOMEM;
    }
    return MH_OK;
}

/* Whether p[0..n) is valid UTF-8 (no overlongs, surrogates, or code
 * points past U+10FFFF). */
int mh_utf8_valid(const uint8_t *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) {
            k = 1, cp = c & 0x1fu, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            k = 2, cp = c & 0x0fu, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            k = 3, cp = c & 0x07u, min = 0x10000;
        } else {
            return 0;
        }
        if (n - i - 1 < k)
            return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((p[i + j] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i + j] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += k + 1;
    }
    return 1;
}

typedef struct table_ref {
    const uint8_t *p; /* first record */
    uint64_t off;     /* file offset of p */
    uint32_t recsz, count, flags;
    uint64_t bytes;
    int present;
} table_ref;

static int parse_strings2(const table_ref *t, mh_dict *o, mh_diag *d) {
    uint32_t ns = t->count;
    /* each string takes at least 4 bytes: bounds the allocation */
    MH_CHECK(ns <= t->bytes / 4, MH_ECORRUPT, d, t->off - MHF2_TAB_HEADER_SIZE + MHF2_TAB_COUNT,
             "string count %u too large", ns);
    o->strings = calloc(ns ? ns : 1, sizeof *o->strings);
    if (!o->strings)
        MH_FAIL(MH_ENOMEM, d, t->off, "out of memory for %u dictionary strings", ns);
    uint64_t off = 0;
    for (uint32_t i = 0; i < ns; i++) {
        MH_CHECK(t->bytes - off >= 4, MH_ECORRUPT, d, t->off + off,
                 "string table ends inside string %u", i);
        uint32_t len = mhf_load_u32(t->p + off);
        MH_CHECK(len <= MHF_DICT_MAX_STRING && len <= t->bytes - off - 4,
                 MH_ECORRUPT, d, t->off + off, "string %u length %u out of range",
                 i, len);
        const uint8_t *sp = t->p + off + 4;
        MH_CHECK(memchr(sp, 0, len) == NULL, MH_ECORRUPT, d, t->off + off,
                 "string %u contains a NUL byte", i);
        MH_CHECK(mh_utf8_valid(sp, len), MH_ECORRUPT, d, t->off + off,
                 "string %u is not valid UTF-8", i);
        o->strings[i] = malloc((size_t)len + 1);
        if (!o->strings[i])
            MH_FAIL(MH_ENOMEM, d, t->off + off, "out of memory for dictionary string %u", i);
        o->nstrings = i + 1;
        memcpy(o->strings[i], sp, len);
        o->strings[i][len] = 0;
        off += 4 + (uint64_t)len;
    }
    MH_CHECK(off == t->bytes, MH_ECORRUPT, d, t->off + off,
             "string table does not end at its declared size");
    return MH_OK;
}

static int parse_columns2(const table_ref *t, int strict, mh_dict *o,
                          mh_diag *d) {
    uint32_t nc = t->count;
    o->columns = calloc(nc ? nc : 1, sizeof *o->columns);
    if (!o->columns)
        MH_FAIL(MH_ENOMEM, d, t->off, "out of memory for the dictionary's columns");
    unsigned next_known = 0; /* known columns come in k_columns2 order */
    uint32_t seen = 0;
    mh_block_layout *l = &o->layout;
    memset(l, 0, sizeof *l);
    l->major = 2;
    for (uint32_t i = 0; i < nc; i++) {
        const uint8_t *r = t->p + (size_t)i * t->recsz;
        uint64_t off = t->off + (uint64_t)i * t->recsz;
        uint32_t name = mhf_load_u32(r);
        MH_CHECK(name < o->nstrings, MH_ECORRUPT, d, off,
                 "column %u names string %u of %zu", i, name, o->nstrings);
        uint8_t type = r[4], width = r[5], enc = r[6], flags = r[7];
        const char *nm = o->strings[name];
        for (uint32_t j = 0; j < i; j++)
            MH_CHECK(strcmp(o->columns[j].name, nm) != 0, MH_ECORRUPT, d, off,
                     "column %u: \"%s\" listed twice", i, nm);
        if (strict)
            MH_CHECK((flags & ~(MHF_COL_NULLABLE | MHF_COL_REQUIRED)) == 0,
                     MH_ECORRUPT, d, off + 7,
                     "column %u: reserved flag bits %02x set", i, flags);
        unsigned k = 0;
        while (k < K_NCOLUMNS2 && strcmp(k_columns2[k].name, nm) != 0)
            k++;
        uint8_t kind;
        if (k < K_NCOLUMNS2) {
            const std_column2 *c = &k_columns2[k];
            MH_CHECK(type == c->type && width == c->width &&
                         enc == c->encoding && flags == c->flags,
                     MH_EVERSION, d, off,
                     "column %u is not the format 2.0 column \"%s\"", i, nm);
            MH_CHECK(k >= next_known, MH_ECORRUPT, d, off,
                     "column %u \"%s\" out of the format's column order", i, nm);
            next_known = k + 1;
            seen |= 1u << k;
            kind = c->kind;
            if (k == K_STREAM_COL)
                o->has_stream_col = 1;
            if (k == K_PC_COL)
                o->has_pc_col = 1;
            if (kind != MH_COL_UNKNOWN) {
                MH_CHECK(l->ncols < MH_MAX_STORED_COLUMNS, MH_ECORRUPT, d, off,
                         "more than %u stored columns", MH_MAX_STORED_COLUMNS);
                l->kind[l->ncols++] = kind;
            }
        } else {
            MH_CHECK(!(flags & MHF_COL_REQUIRED), MH_EVERSION, d, off,
                     "column %u \"%s\" is required and unknown to this reader",
                     i, nm);
            /* stored unless implicit or from the chunk: skipped by length */
            if (enc != MHF_ENC_IMPLICIT && enc != MHF_ENC_CHUNK) {
                MH_CHECK(l->ncols < MH_MAX_STORED_COLUMNS, MH_ECORRUPT, d, off,
                         "more than %u stored columns", MH_MAX_STORED_COLUMNS);
                l->kind[l->ncols++] = MH_COL_UNKNOWN;
            }
        }
        o->columns[i].name = nm;
        o->columns[i].type = type;
        o->columns[i].width = width;
        o->columns[i].encoding = enc;
        o->columns[i].nullable = (flags & MHF_COL_NULLABLE) ? 1 : 0;
        o->ncolumns = i + 1;
    }
    for (unsigned k = 0; k < K_NCOLUMNS2; k++)
        MH_CHECK(k_columns2[k].optional || (seen >> k & 1u), MH_ECORRUPT, d,
                 t->off, "column table lacks the column \"%s\"",
                 k_columns2[k].name);
    return MH_OK;
}

static int parse_ops2(const table_ref *t, int strict, mh_dict *o, mh_diag *d) {
    MH_CHECK(t->count == MHF_OP_COUNT, MH_EVERSION, d, t->off,
             "unknown operation table (%u operations)", t->count);
    for (uint32_t i = 0; i < MHF_OP_COUNT; i++) {
        const uint8_t *r = t->p + (size_t)i * t->recsz;
        uint64_t off = t->off + (uint64_t)i * t->recsz;
        uint32_t name = mhf_load_u32(r);
        MH_CHECK(name < o->nstrings, MH_ECORRUPT, d, off,
                 "operation %u names string %u of %zu", i, name, o->nstrings);
        if (strict)
            MH_CHECK(mhf_load_u16(r + 6) == 0, MH_ECORRUPT, d, off + 6,
                     "operation %u: reserved field not zero", i);
        MH_CHECK(r[4] == i && r[5] == k_op_bits[i] &&
                     strcmp(o->strings[name], k_op_names[i]) == 0,
                 MH_EVERSION, d, off,
                 "operation %u is not the format 2.0 operation \"%s\"", i,
                 k_op_names[i]);
        o->op_names[i] = o->strings[name];
        o->op_sqlite_bit[i] = k_op_bits[i];
    }
    return MH_OK;
}

static int parse_meta2(const table_ref *t, mh_dict *o, mh_diag *d) {
    o->meta = calloc(t->count ? t->count : 1, sizeof *o->meta);
    if (!o->meta)
        MH_FAIL(MH_ENOMEM, d, t->off, "out of memory for %u metadata entries",
                t->count);
    for (uint32_t i = 0; i < t->count; i++) {
        const uint8_t *r = t->p + (size_t)i * t->recsz;
        uint32_t k = mhf_load_u32(r), v = mhf_load_u32(r + 4);
        MH_CHECK(k < o->nstrings && v < o->nstrings, MH_ECORRUPT, d,
                 t->off + (uint64_t)i * t->recsz,
                 "metadata entry %u names a missing string", i);
        o->meta[i].key = o->strings[k];
        o->meta[i].value = o->strings[v];
    }
    o->nmeta = t->count;
    return MH_OK;
}

static const mh_dict_stream *find_stream(const mh_dict *o, uint32_t id) {
    size_t lo = 0, hi = o->nstreams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->streams[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->nstreams && o->streams[lo].id == id ? &o->streams[lo] : NULL;
}

static int parse_streams2(const table_ref *t, int strict, mh_dict *o,
                          mh_diag *d) {
    MH_CHECK(t->count >= 1, MH_ECORRUPT, d, t->off, "empty streams table");
    o->streams = calloc(t->count, sizeof *o->streams);
    if (!o->streams)
        MH_FAIL(MH_ENOMEM, d, t->off, "out of memory for %u streams", t->count);
    for (uint32_t i = 0; i < t->count; i++) {
        const uint8_t *r = t->p + (size_t)i * t->recsz;
        uint64_t off = t->off + (uint64_t)i * t->recsz;
        mh_dict_stream *x = &o->streams[i];
        x->id = mhf_load_u32(r + MHF2_STREAM_ID);
        x->kind = r[MHF2_STREAM_KIND];
        uint32_t name = mhf_load_u32(r + MHF2_STREAM_NAME);
        x->parent = mhf_load_u32(r + MHF2_STREAM_PARENT);
        x->pid = mhf_load_u64(r + MHF2_STREAM_PID);
        x->tid = mhf_load_u64(r + MHF2_STREAM_TID);
        x->cpu = mhf_load_u32(r + MHF2_STREAM_CPU);
        x->count = mhf_load_u64(r + MHF2_STREAM_COUNT);
        x->t_first = mhf_load_u64(r + MHF2_STREAM_T_FIRST);
        x->t_last = mhf_load_u64(r + MHF2_STREAM_T_LAST);
        MH_CHECK(x->id <= MH_STREAM_MAX, MH_ECORRUPT, d, off + MHF2_STREAM_ID,
                 "stream %u: id out of range", x->id);
        MH_CHECK(i == 0 || x->id > o->streams[i - 1].id, MH_ECORRUPT, d,
                 off + MHF2_STREAM_ID, "stream %u: ids not increasing", x->id);
        if (strict) {
            MH_CHECK(x->kind <= MHF2_STREAM_KIND_MAX, MH_ECORRUPT, d,
                     off + MHF2_STREAM_KIND, "stream %u: unknown kind %u",
                     x->id, x->kind);
            MH_CHECK(r[MHF2_STREAM_RESERVED0] == 0 &&
                         r[MHF2_STREAM_RESERVED0 + 1] == 0 &&
                         r[MHF2_STREAM_RESERVED0 + 2] == 0 &&
                         mhf_load_u32(r + MHF2_STREAM_RESERVED1) == 0,
                     MH_ECORRUPT, d, off + MHF2_STREAM_RESERVED0,
                     "stream %u: reserved bytes not zero", x->id);
        }
        MH_CHECK(name == MHF2_NONE32 || name < o->nstrings, MH_ECORRUPT, d,
                 off + MHF2_STREAM_NAME, "stream %u names string %u of %zu",
                 x->id, name, o->nstrings);
        x->name = name == MHF2_NONE32 ? NULL : o->strings[name];
        MH_CHECK(x->count ? x->t_first <= x->t_last
                          : x->t_first == 0 && x->t_last == 0,
                 MH_ECORRUPT, d, off + MHF2_STREAM_T_FIRST,
                 "stream %u: transition range does not fit its count", x->id);
        o->nstreams = i + 1;
    }
    for (uint32_t i = 0; i < t->count; i++) {
        const mh_dict_stream *x = &o->streams[i];
        MH_CHECK(x->parent == MHF2_NONE32 ||
                     (x->parent != x->id && find_stream(o, x->parent)),
                 MH_ECORRUPT, d,
                 t->off + (uint64_t)i * t->recsz + MHF2_STREAM_PARENT,
                 "stream %u: parent %u is not another stream of the table",
                 x->id, x->parent);
    }
    o->has_stream_table = 1;
    return MH_OK;
}

static int parse_stream_meta2(const table_ref *t, mh_dict *o, mh_diag *d) {
    o->stream_meta = calloc(t->count ? t->count : 1, sizeof *o->stream_meta);
    if (!o->stream_meta)
        MH_FAIL(MH_ENOMEM, d, t->off, "out of memory for %u stream metadata",
                t->count);
    for (uint32_t i = 0; i < t->count; i++) {
        const uint8_t *r = t->p + (size_t)i * t->recsz;
        uint64_t off = t->off + (uint64_t)i * t->recsz;
        mh_stream_kv *x = &o->stream_meta[i];
        x->stream = mhf_load_u32(r);
        uint32_t k = mhf_load_u32(r + 4), v = mhf_load_u32(r + 8);
        MH_CHECK(o->has_stream_table ? find_stream(o, x->stream) != NULL
                                     : x->stream == 0,
                 MH_ECORRUPT, d, off,
                 "stream metadata %u: stream %u not in the streams table", i,
                 x->stream);
        MH_CHECK(i == 0 || x->stream >= o->stream_meta[i - 1].stream,
                 MH_ECORRUPT, d, off,
                 "stream metadata %u: not sorted by stream", i);
        MH_CHECK(k < o->nstrings && v < o->nstrings, MH_ECORRUPT, d, off + 4,
                 "stream metadata %u names a missing string", i);
        x->key = o->strings[k];
        x->value = o->strings[v];
        o->nstream_meta = i + 1;
    }
    return MH_OK;
}

static int parse_windows2(const table_ref *t, mh_dict *o, mh_diag *d) {
    o->windows = calloc(t->count ? t->count : 1, sizeof *o->windows);
    if (!o->windows)
        MH_FAIL(MH_ENOMEM, d, t->off, "out of memory for %u windows", t->count);
    for (uint32_t i = 0; i < t->count; i++) {
        const uint8_t *r = t->p + (size_t)i * t->recsz;
        uint64_t off = t->off + (uint64_t)i * t->recsz;
        mh_window_part *x = &o->windows[i];
        x->window = mhf_load_u64(r);
        x->id_first = mhf_load_u64(r + 8);
        x->count = mhf_load_u64(r + 16);
        x->t_first = mhf_load_u64(r + 24);
        x->t_last = mhf_load_u64(r + 32);
        MH_CHECK(i == 0 || x->window > o->windows[i - 1].window, MH_ECORRUPT,
                 d, off, "window part %u: window ids not increasing", i);
        MH_CHECK(x->count ? x->t_first <= x->t_last
                          : x->t_first == 0 && x->t_last == 0,
                 MH_ECORRUPT, d, off + 24,
                 "window %llu: transition range does not fit its count",
                 (unsigned long long)x->window);
        MH_CHECK(x->count <= UINT64_MAX - x->id_first, MH_ECORRUPT, d, off + 8,
                 "window %llu: id range overflows", (unsigned long long)x->window);
        MH_CHECK(i == 0 || x->id_first >= o->windows[i - 1].id_first +
                                               o->windows[i - 1].count,
                 MH_ECORRUPT, d, off + 8,
                 "window %llu overlaps the previous window part",
                 (unsigned long long)x->window);
        o->nwindows = i + 1;
    }
    return MH_OK;
}

static int dict_parse2(const uint8_t *p, size_t size, uint64_t base,
                       uint16_t minor, mh_dict *o, mh_diag *d) {
    int strict = minor <= MHF_VERSION_MINOR;
    MH_CHECK(size >= MHF2_DICT_HEADER_SIZE, MH_ECORRUPT, d, base,
             "dictionary shorter than its header");
    MH_CHECK(memcmp(p, MHF2_DICT_MAGIC, 8) == 0, MH_ECORRUPT, d, base,
             "bad dictionary magic");
    uint32_t nt = mhf_load_u32(p + MHF2_DICT_TABLE_COUNT);
    if (strict)
        MH_CHECK(mhf_load_u32(p + MHF2_DICT_RESERVED) == 0, MH_ECORRUPT, d,
                 base + MHF2_DICT_RESERVED, "dictionary reserved field not zero");
    table_ref tab[MHF2_TAB_WINDOWS + 1];
    memset(tab, 0, sizeof tab);
    uint64_t off = MHF2_DICT_HEADER_SIZE;
    /* first the table headers (bounds, sizes, required bits), then the
     * tables, strings first since the others name strings */
    for (uint32_t i = 0; i < nt; i++) {
        uint64_t at = base + off;
        MH_CHECK(size - off >= MHF2_TAB_HEADER_SIZE, MH_ECORRUPT, d, at,
                 "dictionary ends inside the header of table %u", i);
        const uint8_t *h = p + off;
        uint32_t type = mhf_load_u32(h + MHF2_TAB_TYPE);
        uint32_t flags = mhf_load_u32(h + MHF2_TAB_FLAGS);
        uint32_t recsz = mhf_load_u32(h + MHF2_TAB_RECSZ);
        uint32_t count = mhf_load_u32(h + MHF2_TAB_COUNT);
        uint64_t bytes = mhf_load_u64(h + MHF2_TAB_BYTES);
        off += MHF2_TAB_HEADER_SIZE;
        MH_CHECK(bytes <= size - off, MH_ECORRUPT, d, at + MHF2_TAB_BYTES,
                 "table %u (type %u) of %llu bytes runs past the dictionary",
                 i, type, (unsigned long long)bytes);
        if (strict)
            MH_CHECK((flags & ~MHF2_TAB_REQUIRED) == 0, MH_ECORRUPT, d,
                     at + MHF2_TAB_FLAGS, "table %u: reserved flag bits %08x",
                     i, flags);
        if (type >= MHF2_TAB_STRINGS && type <= MHF2_TAB_WINDOWS) {
            table_ref *t = &tab[type];
            MH_CHECK(!t->present, MH_ECORRUPT, d, at,
                     "table type %u appears twice", type);
            uint32_t want = table_recsz(type);
            if (type == MHF2_TAB_STRINGS)
                MH_CHECK(recsz == 0, MH_ECORRUPT, d, at + MHF2_TAB_RECSZ,
                         "string table record size %u, not 0 (variable)", recsz);
            else
                MH_CHECK(strict ? recsz == want : recsz >= want, MH_ECORRUPT,
                         d, at + MHF2_TAB_RECSZ,
                         "table type %u: record size %u, this reader knows %u",
                         type, recsz, want);
            if (type != MHF2_TAB_STRINGS)
                MH_CHECK((uint64_t)recsz * count == bytes, MH_ECORRUPT, d,
                         at + MHF2_TAB_BYTES,
                         "table type %u: %u records of %u bytes in %llu bytes",
                         type, count, recsz, (unsigned long long)bytes);
            if (type <= MHF2_TAB_OPS)
                MH_CHECK(!strict || (flags & MHF2_TAB_REQUIRED), MH_ECORRUPT,
                         d, at + MHF2_TAB_FLAGS,
                         "table type %u is not marked required", type);
            *t = (table_ref){p + off, base + off, recsz, count, flags, bytes, 1};
        } else {
            MH_CHECK(!(flags & MHF2_TAB_REQUIRED), MH_EVERSION, d, at,
                     "dictionary table type %u is required and unknown to "
                     "this reader", type);
        }
        off += bytes;
    }
    MH_CHECK(off == size, MH_ECORRUPT, d, base + off,
             "dictionary tables do not end at the section's end");
    for (uint32_t type = MHF2_TAB_STRINGS; type <= MHF2_TAB_OPS; type++)
        MH_CHECK(tab[type].present, MH_ECORRUPT, d, base,
                 "dictionary lacks table type %u", type);
    MH_TRY(parse_strings2(&tab[MHF2_TAB_STRINGS], o, d));
    MH_TRY(parse_columns2(&tab[MHF2_TAB_COLUMNS], strict, o, d));
    MH_TRY(parse_ops2(&tab[MHF2_TAB_OPS], strict, o, d));
    if (tab[MHF2_TAB_META].present)
        MH_TRY(parse_meta2(&tab[MHF2_TAB_META], o, d));
    if (tab[MHF2_TAB_STREAMS].present)
        MH_TRY(parse_streams2(&tab[MHF2_TAB_STREAMS], strict, o, d));
    if (tab[MHF2_TAB_STREAM_META].present)
        MH_TRY(parse_stream_meta2(&tab[MHF2_TAB_STREAM_META], o, d));
    if (tab[MHF2_TAB_WINDOWS].present)
        MH_TRY(parse_windows2(&tab[MHF2_TAB_WINDOWS], o, d));
    return MH_OK;
}

int mh_dict_parse(const uint8_t *p, size_t size, uint64_t base_off,
                  uint16_t major, uint16_t minor, mh_dict *out, mh_diag *d) {
    memset(out, 0, sizeof *out);
    out->major = major;
    int rc = major < 2 ? dict_parse1(p, size, base_off, out, d)
                       : dict_parse2(p, size, base_off, minor, out, d);
    if (rc != MH_OK)
        mh_dict_free(out);
    return rc;
}
