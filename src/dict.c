/*
 * dict.c - the segment dictionary (SPEC.md "Dictionary section"): a string
 * dictionary, a type dictionary naming every column with its type, width
 * and encoding, the operation table, and the writer's metadata.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct std_column {
    const char *name;
    uint8_t type, width, encoding, flags;
} std_column;

/* The columns of format 1.0, in this order. */
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

typedef struct strtab {
    const char **s;
    size_t n, cap;
} strtab;

static int strtab_add(strtab *t, const char *s, uint32_t *idx) {
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->s[i], s) == 0) {
            *idx = (uint32_t)i;
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
    t->s[t->n++] = s;
    return MH_OK;
}

int mh_dict_build(const mh_kv *meta, size_t nmeta, uint8_t **out,
                  size_t *size) {
    strtab st = {0};
    uint32_t col_idx[K_NCOLUMNS], op_idx[MHF_OP_COUNT];
    uint32_t *meta_idx = calloc(nmeta * 2 + 1, sizeof *meta_idx);
    mh_buf b = {0};
    int rc = meta_idx ? MH_OK : MH_ENOMEM;
    for (size_t i = 0; rc == MH_OK && i < K_NCOLUMNS; i++)
        rc = strtab_add(&st, k_columns[i].name, &col_idx[i]);
    for (size_t i = 0; rc == MH_OK && i < MHF_OP_COUNT; i++)
        rc = strtab_add(&st, k_op_names[i], &op_idx[i]);
    for (size_t i = 0; rc == MH_OK && i < nmeta; i++) {
        rc = strtab_add(&st, meta[i].key, &meta_idx[2 * i]);
        if (rc == MH_OK)
            rc = strtab_add(&st, meta[i].value, &meta_idx[2 * i + 1]);
    }
    uint8_t hdr[MHF_DICT_HEADER_SIZE] = {0};
    memcpy(hdr, MHF_DICT_MAGIC, 8);
    mhf_store_u32(hdr + MHF_DICT_STRING_COUNT, (uint32_t)st.n);
    mhf_store_u32(hdr + MHF_DICT_COLUMN_COUNT, (uint32_t)K_NCOLUMNS);
    mhf_store_u32(hdr + MHF_DICT_OP_COUNT, MHF_OP_COUNT);
    mhf_store_u32(hdr + MHF_DICT_META_COUNT, (uint32_t)nmeta);
    if (rc == MH_OK)
        rc = mh_buf_append(&b, hdr, sizeof hdr);
    for (size_t i = 0; rc == MH_OK && i < st.n; i++) {
        uint8_t len[4];
        size_t l = strlen(st.s[i]);
        mhf_store_u32(len, (uint32_t)l);
        rc = mh_buf_append(&b, len, 4);
        if (rc == MH_OK)
            rc = mh_buf_append(&b, st.s[i], l);
    }
    for (size_t i = 0; rc == MH_OK && i < K_NCOLUMNS; i++) {
        uint8_t rec[MHF_DICT_COLUMN_SIZE];
        mhf_store_u32(rec, col_idx[i]);
        rec[4] = k_columns[i].type;
        rec[5] = k_columns[i].width;
        rec[6] = k_columns[i].encoding;
        rec[7] = k_columns[i].flags;
        rc = mh_buf_append(&b, rec, sizeof rec);
    }
    for (size_t i = 0; rc == MH_OK && i < MHF_OP_COUNT; i++) {
        uint8_t rec[MHF_DICT_OP_SIZE] = {0};
        mhf_store_u32(rec, op_idx[i]);
        rec[4] = (uint8_t)i;
        rec[5] = k_op_bits[i];
        rc = mh_buf_append(&b, rec, sizeof rec);
    }
    for (size_t i = 0; rc == MH_OK && i < nmeta; i++) {
        uint8_t rec[MHF_DICT_META_SIZE];
        mhf_store_u32(rec, meta_idx[2 * i]);
        mhf_store_u32(rec + 4, meta_idx[2 * i + 1]);
        rc = mh_buf_append(&b, rec, sizeof rec);
    }
    free(st.s);
    free(meta_idx);
    if (rc != MH_OK) {
        mh_buf_free(&b);
        return rc;
    }
    *out = b.p;
    *size = b.n;
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

static int dict_parse(const uint8_t *p, size_t size, uint64_t base,
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
    return MH_OK;
}

int mh_dict_parse(const uint8_t *p, size_t size, uint64_t base_off,
                  mh_dict *out, mh_diag *d) {
    memset(out, 0, sizeof *out);
    int rc = dict_parse(p, size, base_off, out, d);
    if (rc != MH_OK)
        mh_dict_free(out);
    return rc;
}
