/*
 * reader.c - opens the committed state of a store: the MANIFEST only; each
 * segment it lists is mapped, validated and checked against its MANIFEST
 * record the first time a query or an introspection call needs it
 * (mh_reader_seg), so that opening costs the same whatever the store's
 * size. Answers the introspection calls; queries are in query.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

/* Keeps the MANIFEST's records: the segments are opened on first use. */
static int take_manifest(mh_reader *r, mh_manifest *m, mh_diag *d) {
    size_t n = m->nrecs ? m->nrecs : 1;
    r->segs = calloc(n, sizeof *r->segs);
    r->live = calloc(n, sizeof *r->live);
    r->seg_state = calloc(n, sizeof *r->seg_state);
    r->seg_err = calloc(n, sizeof *r->seg_err);
    if (!r->segs || !r->live || !r->seg_state || !r->seg_err)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for %zu segments",
                            m->nrecs);
    r->recs = m->recs; /* taken over */
    m->recs = NULL;
    r->nsegs = m->nrecs;
    m->nrecs = 0;
    r->major = m->major;
    for (size_t i = 0; i < r->nsegs; i++)
        if (r->recs[i].count)
            r->live[r->nlive++] = i;
    return MH_OK;
}

int mh_reader_seg(const mh_reader *r, size_t i, const mh_seg **out,
                  mh_diag *d) {
    mh_reader *m = (mh_reader *)r;
    int st = atomic_load_explicit(&m->seg_state[i], memory_order_acquire);
    if (st == MH_SEG_UNOPENED) {
        pthread_mutex_lock(&m->open_mu);
        st = atomic_load_explicit(&m->seg_state[i], memory_order_relaxed);
        if (st == MH_SEG_UNOPENED) {
            char name[MHF_SEGMENT_NAME_LEN + 1];
            mh_segment_name(name, r->recs[i].seq);
            mh_diag od = {0, 0, ""};
            mh_seg *s = &m->segs[i];
            int rc = mh_store_seg_open(r->path, name, s, 1, &od);
            if (rc == MH_OK) {
                rc = mh_store_seg_check(s, &r->recs[i], 1, &od);
                if (rc == MH_OK && s->major != r->major)
                    rc = mh_diag_fail(&od, MH_ECORRUPT, 0,
                                      "%s: format %u segment listed in a "
                                      "format %u MANIFEST", s->name,
                                      (unsigned)s->major, (unsigned)r->major);
                if (rc != MH_OK)
                    mh_seg_close(s);
            }
            if (rc == MH_OK) {
                uint32_t mx = atomic_load(&m->max_rows_per_block);
                while (s->rows_per_block > mx &&
                       !atomic_compare_exchange_weak(&m->max_rows_per_block,
                                                     &mx, s->rows_per_block))
                    ;
                st = MH_SEG_OPEN;
            } else {
                mh_diag_code(&od, rc);
                /* the detail is kept for every later call; without memory
                 * for it, the next call tries again */
                m->seg_err[i] = malloc(sizeof od);
                if (m->seg_err[i]) {
                    *m->seg_err[i] = od;
                    atomic_store_explicit(&m->seg_state[i], rc,
                                          memory_order_release);
                }
                if (d)
                    *d = od;
                pthread_mutex_unlock(&m->open_mu);
                return rc;
            }
            atomic_store_explicit(&m->seg_state[i], st, memory_order_release);
        }
        pthread_mutex_unlock(&m->open_mu);
    }
    if (st != MH_SEG_OPEN) {
        if (d)
            *d = *r->seg_err[i]; /* written before the state, under the lock */
        return st;
    }
    *out = &r->segs[i];
    return MH_OK;
}

/* Opens every segment (the calls that sum over the store). */
static int open_all(const mh_reader *r, mh_diag *d) {
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_seg *s;
        MH_TRY(mh_reader_seg(r, i, &s, d));
    }
    return MH_OK;
}

/* Builds r->stats from every segment, once. */
static int build_stats(mh_reader *r, mh_diag *d) {
    MH_TRY(open_all(r, d));
    mh_stats *st = &r->stats;
    memset(st, 0, sizeof *st);
    st->struct_size = sizeof *st;
    st->file_bytes = r->manifest_bytes;
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_seg *s = &r->segs[i];
        if (s->count) {
            if (st->accesses == 0)
                st->transition_first = s->t_first;
            st->transition_last = s->t_last;
        }
        st->accesses += s->count;
        for (unsigned k = 0; k < MH_OP_COUNT; k++)
            st->op_counts[k] += s->op_counts[k];
        st->slices += s->nslices;
        st->chunks += s->nchunks;
        st->blocks += s->nblocks;
        st->file_bytes += s->size;
        st->compressed_bytes += s->data_size;
        st->raw_bytes += s->raw_size;
    }
    st->segments = r->nsegs;
    return MH_OK;
}

/* Runs build once under tab_mu; its failure (code and detail, slot k of
 * tab_err) is returned again by every later call. */
static int table_once(const mh_reader *r, _Atomic int *state, int k,
                      int (*build)(mh_reader *, mh_diag *), mh_diag *d) {
    mh_reader *m = (mh_reader *)r;
    int st = atomic_load_explicit(state, memory_order_acquire);
    if (st == 0) {
        pthread_mutex_lock(&m->tab_mu);
        st = atomic_load_explicit(state, memory_order_relaxed);
        if (st == 0) {
            mh_diag td = {0, 0, ""};
            int rc = build(m, &td);
            if (rc != MH_OK) {
                mh_diag_code(&td, rc);
                m->tab_err[k] = td;
            }
            /* MH_ENOMEM is not kept: the next call tries again */
            st = rc == MH_OK ? 1 : rc;
            if (rc != MH_ENOMEM)
                atomic_store_explicit(state, st, memory_order_release);
        }
        pthread_mutex_unlock(&m->tab_mu);
    }
    if (st == 1)
        return MH_OK;
    if (d)
        *d = r->tab_err[k];
    return st;
}

/* The newest segment's dictionary (metadata, strings, columns), or NULL
 * when the store has no segment or it fails to open (the reader's detail
 * says why). */
static const mh_dict *newest_dict(const mh_reader *r) {
    if (!r || r->nsegs == 0)
        return NULL;
    const mh_seg *s;
    mh_diag d = {0, 0, ""};
    if (mh_reader_seg(r, r->nsegs - 1, &s, &d) != MH_OK) {
        mh_reader_set_error(r, &d);
        return NULL;
    }
    return &s->dict;
}

void mh_reader_options_init(mh_reader_options *opt) {
    if (!opt)
        return;
    memset(opt, 0, sizeof *opt);
    opt->struct_size = sizeof *opt;
    opt->cache_bytes = MH_READER_CACHE_DEFAULT;
}

static int open_store(const char *path, size_t cache_bytes, mh_reader **out,
                      mh_diag *d) {
    MH_TRY(mh_store_dir_check(path, d));
    mh_reader *r = calloc(1, sizeof *r);
    if (!r)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
    if (pthread_mutex_init(&r->pool_mu, NULL) != 0) {
        free(r);
        return mh_diag_fail(d, MH_ENOMEM, 0, "cannot create a mutex");
    }
    if (pthread_mutex_init(&r->err_mu, NULL) != 0) {
        pthread_mutex_destroy(&r->pool_mu);
        free(r);
        return mh_diag_fail(d, MH_ENOMEM, 0, "cannot create a mutex");
    }
    if (pthread_mutex_init(&r->open_mu, NULL) != 0) {
        pthread_mutex_destroy(&r->pool_mu);
        pthread_mutex_destroy(&r->err_mu);
        free(r);
        return mh_diag_fail(d, MH_ENOMEM, 0, "cannot create a mutex");
    }
    if (pthread_mutex_init(&r->tab_mu, NULL) != 0) {
        pthread_mutex_destroy(&r->pool_mu);
        pthread_mutex_destroy(&r->err_mu);
        pthread_mutex_destroy(&r->open_mu);
        free(r);
        return mh_diag_fail(d, MH_ENOMEM, 0, "cannot create a mutex");
    }
    r->path = strdup(path);
    r->cache_bytes = cache_bytes;
    mh_manifest m;
    int rc = r->path ? mh_store_manifest_load(path, &m, 1, d)
                     : mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
    if (rc == MH_OK) {
        char *mp = mh_path_join(path, MHF_MANIFEST_NAME);
        struct stat ms;
        if (mp && stat(mp, &ms) == 0)
            r->manifest_bytes = (uint64_t)ms.st_size;
        free(mp);
        rc = take_manifest(r, &m, d);
        mh_manifest_free(&m);
    }
    if (rc != MH_OK) {
        mh_reader_close(r);
        return mh_diag_code(d, rc);
    }
    *out = r;
    return MH_OK;
}

int mh_reader_open_ex(const char *path, const mh_reader_options *opt,
                      mh_reader **out, char *err, size_t err_size) {
    mh_diag d = {0, 0, ""};
    int rc = MH_OK;
    size_t cache = MH_READER_CACHE_DEFAULT;
    if (out)
        *out = NULL;
    if (!path || !*path || !out)
        rc = mh_diag_fail(&d, MH_EINVAL, 0, "mh_reader_open: %s",
                          !out ? "NULL out" : "empty or NULL path");
    else if (opt) {
        mh_reader_options o;
        mh_reader_options_init(&o);
        if (mh_struct_in(opt, MH_READER_OPTIONS_SIZE_1, sizeof o, &o) != MH_OK)
            rc = mh_diag_fail(&d, MH_EINVAL, 0,
                              "mh_reader_options: struct_size %u (this library "
                              "knows %zu; larger needs zero bytes beyond it)",
                              opt->struct_size, sizeof o);
        else if (o.reserved)
            rc = mh_diag_fail(&d, MH_EINVAL, 0,
                              "mh_reader_options: reserved field not zero");
        else if (o.cache_bytes > SIZE_MAX)
            rc = mh_diag_fail(&d, MH_EINVAL, 0,
                              "mh_reader_options: cache_bytes %llu above SIZE_MAX",
                              (unsigned long long)o.cache_bytes);
        else
            cache = (size_t)o.cache_bytes;
    }
    if (rc == MH_OK)
        rc = open_store(path, cache, out, &d);
    if (rc != MH_OK && err && err_size)
        mh_diag_copy(&d, err, err_size);
    return rc;
}

int mh_reader_open(const char *path, mh_reader **out) {
    return mh_reader_open_ex(path, NULL, out, NULL, 0);
}

size_t mh_reader_errmsg(const mh_reader *r, char *buf, size_t size) {
    if (!r)
        return mh_diag_copy(NULL, buf, size);
    mh_reader *m = (mh_reader *)r;
    pthread_mutex_lock(&m->err_mu);
    size_t n = mh_diag_copy(&m->err, buf, size);
    pthread_mutex_unlock(&m->err_mu);
    return n;
}

void mh_reader_close(mh_reader *r) {
    if (!r)
        return;
    mh_query_pool_free(r);
    pthread_mutex_destroy(&r->pool_mu);
    pthread_mutex_destroy(&r->err_mu);
    pthread_mutex_destroy(&r->open_mu);
    pthread_mutex_destroy(&r->tab_mu);
    for (size_t i = 0; r->segs && i < r->nsegs; i++) {
        if (r->seg_state[i] == MH_SEG_OPEN)
            mh_seg_close(&r->segs[i]);
        free(r->seg_err[i]);
    }
    free(r->segs);
    free(r->seg_state);
    free(r->seg_err);
    free(r->recs);
    free(r->live);
    free(r->streams);
    free(r->windows);
    free(r->path);
    free(r);
}

int mh_reader_set_cache(mh_reader *r, size_t bytes) {
    if (!r)
        return MH_EINVAL;
    pthread_mutex_lock(&r->pool_mu);
    r->cache_bytes = bytes;
    pthread_mutex_unlock(&r->pool_mu);
    /* pooled contexts were sized for the old budget */
    mh_query_pool_free(r);
    return MH_OK;
}

int mh_reader_stats(const mh_reader *r, mh_stats *st) {
    if (!r)
        return MH_EINVAL;
    MH_TRY(mh_struct_out_ok(st, MH_STATS_SIZE_1));
    mh_diag d = {0, 0, ""};
    int rc = table_once(r, &((mh_reader *)r)->stats_state, 0, build_stats, &d);
    if (rc != MH_OK) {
        mh_reader_set_error(r, &d);
        return rc;
    }
    return MH_STRUCT_OUT(st, &r->stats, MH_STATS_SIZE_1);
}

size_t mh_reader_meta_count(const mh_reader *r) {
    const mh_dict *dict = newest_dict(r);
    return dict ? dict->nmeta : 0;
}

int mh_reader_meta_get(const mh_reader *r, size_t i, const char **key,
                       const char **value) {
    if (!r || !key || !value || i >= mh_reader_meta_count(r))
        return MH_EINVAL;
    const mh_dict *dict = newest_dict(r);
    *key = dict->meta[i].key;
    *value = dict->meta[i].value;
    return MH_OK;
}

const char *mh_reader_meta_find(const mh_reader *r, const char *key) {
    if (!r || !key)
        return NULL;
    const mh_dict *dict = newest_dict(r);
    const char *found = NULL;
    for (size_t i = 0; dict && i < dict->nmeta; i++)
        if (strcmp(dict->meta[i].key, key) == 0)
            found = dict->meta[i].value; /* the last one wins */
    return found;
}

/* An introspection call's bad argument, kept as r's detail. */
static int bad_arg(const mh_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bad_arg(const mh_reader *r, const char *fmt, ...) {
    if (!r)
        return MH_EINVAL;
    char msg[MH_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mh_diag d = {0, 0, ""};
    mh_diag_fail(&d, MH_EINVAL, 0, "%s", msg);
    mh_reader_set_error(r, &d);
    return MH_EINVAL;
}

size_t mh_reader_segment_count(const mh_reader *r) { return r ? r->nsegs : 0; }

/* Segment i, opened; a failed open is kept as r's detail. */
static int seg_or_fail(const mh_reader *r, size_t i, const mh_seg **out) {
    mh_diag d = {0, 0, ""};
    int rc = mh_reader_seg(r, i, out, &d);
    if (rc != MH_OK)
        mh_reader_set_error(r, &d);
    return rc;
}

int mh_reader_segment_info(const mh_reader *r, size_t i, mh_segment_info *o) {
    if (mh_struct_out_ok(o, MH_SEGMENT_INFO_SIZE_1) != MH_OK)
        return bad_arg(r, "mh_reader_segment_info: NULL out or struct_size too small");
    if (!r || i >= r->nsegs)
        return bad_arg(r, "mh_reader_segment_info: segment index out of range");
    const mh_seg *s;
    MH_TRY(seg_or_fail(r, i, &s));
    mh_segment_info full, *dst = o;
    memset(&full, 0, sizeof full);
    o = &full;
    o->seq = s->seq;
    o->file_name = s->name;
    o->version_major = s->major;
    o->version_minor = s->minor;
    o->id_first = s->id_first;
    o->accesses = s->count;
    for (unsigned k = 0; k < MH_OP_COUNT; k++)
        o->op_counts[k] = s->op_counts[k];
    o->transition_first = s->t_first;
    o->transition_last = s->t_last;
    o->slices = s->nslices;
    o->chunks = s->nchunks;
    o->blocks = s->nblocks;
    o->rows_per_block = s->rows_per_block;
    o->file_bytes = s->size;
    o->compressed_bytes = s->data_size;
    o->raw_bytes = s->raw_size;
    o->dict_bytes = s->dict_size;
    o->index_bytes = (uint64_t)s->nslices * s->slice_recsz +
                     (uint64_t)s->nchunks * s->chunk_recsz +
                     (uint64_t)s->nblocks * s->block_recsz;
    return MH_STRUCT_OUT(dst, o, MH_SEGMENT_INFO_SIZE_1);
}

int mh_reader_slice_info(const mh_reader *r, size_t seg, size_t slice,
                         mh_slice_info *o) {
    if (mh_struct_out_ok(o, MH_SLICE_INFO_SIZE_1) != MH_OK)
        return bad_arg(r, "mh_reader_slice_info: NULL out or struct_size too small");
    if (!r || seg >= r->nsegs)
        return bad_arg(r, "mh_reader_slice_info: segment index out of range");
    const mh_seg *sg;
    MH_TRY(seg_or_fail(r, seg, &sg));
    if (slice >= sg->nslices)
        return bad_arg(r, "mh_reader_slice_info: slice index out of range");
    mh_slice s;
    mh_seg_slice(sg, (uint32_t)slice, &s);
    mh_slice_info full, *dst = o;
    memset(&full, 0, sizeof full);
    o = &full;
    o->transition_first = s.t_first;
    o->transition_last = s.t_last;
    o->id_first = s.id_first;
    o->accesses = s.count;
    for (unsigned k = 0; k < MH_OP_COUNT; k++)
        o->op_counts[k] = s.op_counts[k];
    o->chunk_first = s.chunk_first;
    o->chunks = s.chunk_count;
    o->block_first = s.block_first;
    o->blocks = s.block_count;
    return MH_STRUCT_OUT(dst, o, MH_SLICE_INFO_SIZE_1);
}

int mh_reader_chunk_info(const mh_reader *r, size_t seg, size_t chunk,
                         mh_chunk_info *o) {
    if (mh_struct_out_ok(o, MH_CHUNK_INFO_SIZE_1) != MH_OK)
        return bad_arg(r, "mh_reader_chunk_info: NULL out or struct_size too small");
    if (!r || seg >= r->nsegs)
        return bad_arg(r, "mh_reader_chunk_info: segment index out of range");
    const mh_seg *sg;
    MH_TRY(seg_or_fail(r, seg, &sg));
    if (chunk >= sg->nchunks)
        return bad_arg(r, "mh_reader_chunk_info: chunk index out of range");
    /* find the slice holding the chunk, and check it before trusting it */
    uint32_t lo = 0, hi = sg->nslices;
    mh_slice s;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        mh_seg_slice(sg, mid, &s);
        if (s.chunk_first <= chunk)
            lo = mid;
        else
            hi = mid;
    }
    mh_seg_slice(sg, lo, &s);
    mh_diag d = {0, 0, ""};
    int rc = mh_seg_slice_check(sg, lo, &s, &d);
    mh_chunk c;
    if (rc == MH_OK)
        rc = mh_seg_chunk(sg, &s, (uint32_t)chunk, &c, &d);
    if (rc != MH_OK) {
        mh_diag_code(&d, rc);
        mh_diag_prefix(&d, "%s", sg->name);
        mh_reader_set_error(r, &d);
        return rc;
    }
    mh_chunk_info full, *dst = o;
    memset(&full, 0, sizeof full);
    o = &full;
    o->phy_first = c.phy_first;
    o->phy_last = c.phy_last;
    o->transition_first = c.t_first;
    o->transition_last = c.t_last;
    o->id_first = s.id_first + c.id_first;
    o->id_last = s.id_first + c.id_last;
    o->row_first = c.row_first;
    o->accesses = c.row_count;
    o->op = c.op;
    return MH_STRUCT_OUT(dst, o, MH_CHUNK_INFO_SIZE_1);
}

size_t mh_reader_string_count(const mh_reader *r) {
    const mh_dict *dict = newest_dict(r);
    return dict ? dict->nstrings : 0;
}

const char *mh_reader_string(const mh_reader *r, size_t i) {
    const mh_dict *dict = newest_dict(r);
    return dict && i < dict->nstrings ? dict->strings[i] : NULL;
}

size_t mh_reader_column_count(const mh_reader *r) {
    const mh_dict *dict = newest_dict(r);
    return dict ? dict->ncolumns : 0;
}

int mh_reader_column(const mh_reader *r, size_t i, mh_column_info *out) {
    MH_TRY(mh_struct_out_ok(out, MH_COLUMN_INFO_SIZE_1));
    const mh_dict *dict = newest_dict(r);
    if (!dict || i >= dict->ncolumns)
        return MH_EINVAL;
    return MH_STRUCT_OUT(out, &dict->columns[i], MH_COLUMN_INFO_SIZE_1);
}

const char *mh_reader_op_name(const mh_reader *r, unsigned op) {
    if (op >= MH_OP_COUNT)
        return NULL;
    if (!r || r->nsegs == 0)
        return mh_op_name(op);
    const mh_dict *dict = newest_dict(r);
    return dict ? dict->op_names[op] : NULL;
}
