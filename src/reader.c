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
                /* also refuses a segment of another major than the
                 * MANIFEST's, with fsck's words */
                rc = mh_store_seg_check(s, &r->recs[i], 1, &od);
                if (rc != MH_OK)
                    mh_seg_close(s);
                else {
                    s->marks_left = &m->marks_left;
                    s->marks_floor = &m->marks_floor;
                    s->psum_off = m->psum_off;
                }
            }
            if (rc == MH_OK) {
                uint32_t mx = atomic_load(&m->max_rows_per_block);
                while (s->rows_per_block > mx &&
                       !atomic_compare_exchange_weak(&m->max_rows_per_block,
                                                     &mx, s->rows_per_block))
                    ;
                st = MH_SEG_OPEN;
                atomic_fetch_add_explicit(&m->segs_opened, 1,
                                          memory_order_relaxed);
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
    atomic_init(&r->marks_left, cache_bytes > INT64_MAX ? INT64_MAX : (int64_t)cache_bytes);
    atomic_init(&r->marks_floor, (cache_bytes > INT64_MAX ? INT64_MAX : (int64_t)cache_bytes) / 4);
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
    mh_store_union_free(r);
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
    /* the marks' budget follows the option (marks already taken stay) */
    int64_t was = r->cache_bytes > INT64_MAX ? INT64_MAX : (int64_t)r->cache_bytes,
            now = bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes;
    atomic_fetch_add(&r->marks_left, now - was);
    atomic_store(&r->marks_floor, now / 4);
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

/* Bytes of the segment's section of a type its version defines (a reader
 * ignores the others), 0 when it has none. */
static uint64_t defined_bytes(const mh_seg *s, uint32_t type) {
    const mh_section *sec;
    return mh_section_defined(s->major, s->minor, type) &&
                   mh_seg_section(s, type, &sec) == MH_OK
               ? sec->size
               : 0;
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
    o->streams = s->dict.has_stream_table ? (uint32_t)s->dict.nstreams : 0;
    o->windows = (uint32_t)s->dict.nwindows;
    const mh_section *sum;
    o->summary_bytes = mh_seg_section(s, 6, &sum) == MH_OK ? sum->size : 0;
    o->has_pc = s->dict.has_pc_col ? 1 : 0;
    o->idmap_bytes = defined_bytes(s, MHF_SECT_IDMAP);
    o->aset_bytes = defined_bytes(s, MHF_SECT_ASET);
    o->fine_summary_bytes = defined_bytes(s, MHF_SECT_SUMMARY_FINE);
    o->apost_bytes = defined_bytes(s, MHF_SECT_APOST) + defined_bytes(s, MHF_SECT_APOSTW);
    o->span_bytes = defined_bytes(s, MHF_SECT_SPAN);
    o->idtime_bytes = defined_bytes(s, MHF_SECT_IDTIME);
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
    o->stream_mask = s.stream_mask;
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
    o->stream_mask = c.stream_mask;
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

/* ---- streams, windows and sections (since 1.2) ----------------------- */

#define STREAM_INFO_SIZE_1 MH_SIZE_UPTO(mh_stream_info, transition_last)
#define WINDOW_INFO_SIZE_1 MH_SIZE_UPTO(mh_window_info, transition_last)
#define SECTION_INFO_SIZE_1 MH_SIZE_UPTO(mh_section_info, size)

/* A stream with no description: kind other, nothing known (what
 * mh_stream_info_init gives; that one is the writer's, in its own file). */
static void stream_unknown(mh_stream_info *o, uint32_t id) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->id = id;
    o->kind = MH_STREAM_OTHER;
    o->parent = MH_NONE32;
    o->pid = MH_NONE64;
    o->tid = MH_NONE64;
    o->cpu = MH_NONE32;
}

static mh_rstream *find_rstream(mh_reader *r, uint32_t id) {
    size_t lo = 0, hi = r->nstreams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->streams[mid].info.id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nstreams && r->streams[lo].info.id == id ? &r->streams[lo]
                                                            : NULL;
}

/* The store's streams (design: the newest segment's descriptions and
 * stream metadata; accesses summed over segments, transition range over
 * the segments where the stream has accesses). */
static int build_streams(mh_reader *r, mh_diag *d) {
    /* a build that ran out of memory is tried again: start afresh */
    free(r->streams);
    r->streams = NULL;
    r->nstreams = 0;
    MH_TRY(open_all(r, d));
    if (r->nsegs == 0) { /* stream 0 exists in every store */
        r->streams = calloc(1, sizeof *r->streams);
        if (!r->streams)
            return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for streams");
        stream_unknown(&r->streams[0].info, 0);
        r->nstreams = 1;
        return MH_OK;
    }
    const mh_dict *nd = &r->segs[r->nsegs - 1].dict;
    r->streams = calloc(nd->nstreams ? nd->nstreams : 1, sizeof *r->streams);
    if (!r->streams)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for streams");
    r->nstreams = nd->nstreams;
    for (size_t i = 0; i < nd->nstreams; i++) {
        const mh_dict_stream *ds = &nd->streams[i];
        mh_stream_info *o = &r->streams[i].info;
        stream_unknown(o, ds->id);
        o->kind = ds->kind;
        o->parent = ds->parent;
        o->pid = ds->pid;
        o->tid = ds->tid;
        o->cpu = ds->cpu;
        o->name = ds->name;
    }
    /* stream metadata: runs of the newest dictionary's (sorted by stream) */
    for (size_t k = 0; k < nd->nstream_meta; k++) {
        mh_rstream *rs = find_rstream(r, nd->stream_meta[k].stream);
        if (!rs)
            return mh_diag_fail(d, MH_ECORRUPT, 0,
                                "%s: metadata of stream %u, which is not "
                                "declared", r->segs[r->nsegs - 1].name,
                                nd->stream_meta[k].stream);
        if (rs->nmeta == 0)
            rs->meta_first = k;
        rs->nmeta++;
    }
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_seg *s = &r->segs[i];
        uint64_t total = 0;
        for (size_t k = 0; k < s->dict.nstreams; k++) {
            const mh_dict_stream *ds = &s->dict.streams[k];
            /* a segment carries every stream declared when it was sealed:
             * the newest one carries them all */
            mh_rstream *rs = find_rstream(r, ds->id);
            if (!rs)
                return mh_diag_fail(d, MH_ECORRUPT, 0,
                                    "%s: stream %u is not in the newest "
                                    "segment's stream table", s->name, ds->id);
            total += ds->count;
            if (ds->count == 0)
                continue;
            mh_stream_info *o = &rs->info;
            if (o->accesses == 0 || ds->t_first < o->transition_first)
                o->transition_first = ds->t_first;
            if (o->accesses == 0 || ds->t_last > o->transition_last)
                o->transition_last = ds->t_last;
            o->accesses += ds->count;
        }
        if (total != s->count)
            return mh_diag_fail(d, MH_ECORRUPT, 0,
                                "%s: its streams hold %llu accesses, its header "
                                "%llu", s->name, (unsigned long long)total,
                                (unsigned long long)s->count);
    }
    return MH_OK;
}

/* The store's windows: each segment's parts merged by window id. A window
 * in two segments must end the first and begin the next, its ids going on. */
static int build_windows(mh_reader *r, mh_diag *d) {
    free(r->windows);
    r->windows = NULL;
    r->nwindows = 0;
    MH_TRY(open_all(r, d));
    size_t total = 0;
    for (size_t i = 0; i < r->nsegs; i++)
        total += r->segs[i].dict.nwindows;
    r->windows = calloc(total ? total : 1, sizeof *r->windows);
    if (!r->windows)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for windows");
    size_t n = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_seg *s = &r->segs[i];
        for (size_t k = 0; k < s->dict.nwindows; k++) {
            const mh_window_part *p = &s->dict.windows[k];
            if (p->id_first < s->id_first || p->count > s->count ||
                p->id_first - s->id_first > s->count - p->count)
                return mh_diag_fail(d, MH_ECORRUPT, 0,
                                    "%s: window %llu (ids %llu + %llu) lies "
                                    "outside the segment's ids", s->name,
                                    (unsigned long long)p->window,
                                    (unsigned long long)p->id_first,
                                    (unsigned long long)p->count);
            mh_window_info *last = n ? &r->windows[n - 1] : NULL;
            uint64_t last_end = last ? last->id_first + last->accesses : 0;
            if (last && last->window == p->window) {
                if (k != 0 || p->id_first != last_end)
                    return mh_diag_fail(d, MH_ECORRUPT, 0,
                                        "%s: window %llu goes on from an "
                                        "earlier segment without continuing "
                                        "its ids", s->name,
                                        (unsigned long long)p->window);
            } else if (last && (p->window < last->window || p->id_first < last_end)) {
                return mh_diag_fail(d, MH_ECORRUPT, 0,
                                    "%s: window %llu comes after window %llu "
                                    "(ids from %llu, the last ending at %llu)",
                                    s->name, (unsigned long long)p->window,
                                    (unsigned long long)last->window,
                                    (unsigned long long)p->id_first,
                                    (unsigned long long)last_end);
            } else {
                last = &r->windows[n++];
                memset(last, 0, sizeof *last);
                last->struct_size = sizeof *last;
                last->window = p->window;
                last->id_first = p->id_first;
            }
            if (p->count) {
                if (last->accesses == 0)
                    last->transition_first = p->t_first;
                last->transition_last = p->t_last;
                last->accesses += p->count;
            }
        }
    }
    r->nwindows = n;
    return MH_OK;
}

static int streams_ready(const mh_reader *r) {
    if (!r)
        return MH_EINVAL;
    mh_diag d = {0, 0, ""};
    int rc = table_once(r, &((mh_reader *)r)->streams_state, 1, build_streams, &d);
    if (rc != MH_OK)
        mh_reader_set_error(r, &d);
    return rc;
}

static int windows_ready(const mh_reader *r, mh_diag *d) {
    return table_once(r, &((mh_reader *)r)->windows_state, 2, build_windows, d);
}

size_t mh_reader_stream_count(const mh_reader *r) {
    return streams_ready(r) == MH_OK ? r->nstreams : 0;
}

int mh_reader_stream_info(const mh_reader *r, size_t i, mh_stream_info *out) {
    if (mh_struct_out_ok(out, STREAM_INFO_SIZE_1) != MH_OK)
        return bad_arg(r, "mh_reader_stream_info: NULL out or struct_size too small");
    MH_TRY(streams_ready(r));
    if (i >= r->nstreams)
        return bad_arg(r, "mh_reader_stream_info: stream index out of range");
    return mh_struct_out(out, &r->streams[i].info, STREAM_INFO_SIZE_1,
                         sizeof r->streams[i].info);
}

int mh_reader_stream_find(const mh_reader *r, uint32_t id, size_t *i) {
    if (!i)
        return bad_arg(r, "mh_reader_stream_find: NULL i");
    MH_TRY(streams_ready(r));
    const mh_rstream *rs = find_rstream((mh_reader *)r, id);
    if (!rs) {
        mh_diag d = {0, 0, ""};
        mh_diag_fail(&d, MH_ENOTFOUND, 0, "no stream %u in the store", id);
        mh_reader_set_error(r, &d);
        return MH_ENOTFOUND;
    }
    *i = (size_t)(rs - r->streams);
    return MH_OK;
}

size_t mh_reader_stream_meta_count(const mh_reader *r, size_t i) {
    if (streams_ready(r) != MH_OK || i >= r->nstreams)
        return 0;
    return r->streams[i].nmeta;
}

int mh_reader_stream_meta_get(const mh_reader *r, size_t i, size_t k,
                              const char **key, const char **value) {
    if (!key || !value)
        return bad_arg(r, "mh_reader_stream_meta_get: NULL key or value");
    MH_TRY(streams_ready(r));
    if (i >= r->nstreams || k >= r->streams[i].nmeta)
        return bad_arg(r, "mh_reader_stream_meta_get: index out of range");
    const mh_stream_kv *kv =
        &r->segs[r->nsegs - 1].dict.stream_meta[r->streams[i].meta_first + k];
    *key = kv->key;
    *value = kv->value;
    return MH_OK;
}

int mh_reader_window_get(const mh_reader *r, uint64_t window,
                         mh_window_info *out, mh_diag *d) {
    MH_TRY(windows_ready(r, d));
    size_t lo = 0, hi = r->nwindows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->windows[mid].window < window)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == r->nwindows || r->windows[lo].window != window)
        return mh_diag_fail(d, MH_ENOTFOUND, 0, "no window %llu in the store",
                            (unsigned long long)window);
    *out = r->windows[lo];
    return MH_OK;
}

size_t mh_reader_window_count(const mh_reader *r) {
    if (!r)
        return 0;
    mh_diag d = {0, 0, ""};
    if (windows_ready(r, &d) != MH_OK) {
        mh_reader_set_error(r, &d);
        return 0;
    }
    return r->nwindows;
}

int mh_reader_window_info(const mh_reader *r, size_t i, mh_window_info *out) {
    if (mh_struct_out_ok(out, WINDOW_INFO_SIZE_1) != MH_OK)
        return bad_arg(r, "mh_reader_window_info: NULL out or struct_size too small");
    if (!r)
        return MH_EINVAL;
    mh_diag d = {0, 0, ""};
    int rc = windows_ready(r, &d);
    if (rc != MH_OK) {
        mh_reader_set_error(r, &d);
        return rc;
    }
    if (i >= r->nwindows)
        return bad_arg(r, "mh_reader_window_info: window index out of range");
    return mh_struct_out(out, &r->windows[i], WINDOW_INFO_SIZE_1,
                         sizeof r->windows[i]);
}

int mh_reader_window_find(const mh_reader *r, uint64_t window,
                          mh_window_info *out) {
    if (mh_struct_out_ok(out, WINDOW_INFO_SIZE_1) != MH_OK)
        return bad_arg(r, "mh_reader_window_find: NULL out or struct_size too small");
    if (!r)
        return MH_EINVAL;
    mh_diag d = {0, 0, ""};
    mh_window_info w;
    int rc = mh_reader_window_get(r, window, &w, &d);
    if (rc != MH_OK) {
        mh_reader_set_error(r, &d);
        return rc;
    }
    return mh_struct_out(out, &w, WINDOW_INFO_SIZE_1, sizeof w);
}

/* SPEC.md section types, each named from the minor that defines it on
 * (§5.2: in an older segment the type is an unknown section). */
static const char *section_name(uint32_t type, uint16_t major, uint16_t minor) {
    static const char *const names[] = {
        NULL,     "data",   "dictionary",  "slices",      "chunks",
        "blocks", "address summary", "id map", "address set",
        "fine address summary", "address postings", "span address set",
        "piece sums", "id transitions", "wide address postings",
        "stream postings", "span stream address set", "stream id runs"};
    _Static_assert(sizeof names / sizeof names[0] == MHF_SECT_SRUNS + 1,
                   "a name for each type");
    if (!mh_section_defined(major, minor, type))
        return "unknown";
    return names[type];
}

size_t mh_reader_section_count(const mh_reader *r, size_t seg) {
    const mh_seg *s;
    if (!r || seg >= r->nsegs || seg_or_fail(r, seg, &s) != MH_OK)
        return 0;
    return s->nsections;
}

int mh_reader_section_info(const mh_reader *r, size_t seg, size_t i,
                           mh_section_info *out) {
    if (mh_struct_out_ok(out, SECTION_INFO_SIZE_1) != MH_OK)
        return bad_arg(r, "mh_reader_section_info: NULL out or struct_size too small");
    if (!r || seg >= r->nsegs)
        return bad_arg(r, "mh_reader_section_info: segment index out of range");
    const mh_seg *s;
    MH_TRY(seg_or_fail(r, seg, &s));
    if (i >= s->nsections)
        return bad_arg(r, "mh_reader_section_info: section index out of range");
    const mh_section *x = &s->sections[i];
    mh_section_info full;
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    full.type = x->type;
    full.name = section_name(x->type, s->major, s->minor);
    full.flags = x->flags;
    full.records = x->recsz ? x->count : 0;
    full.offset = x->offset;
    full.size = x->size;
    return mh_struct_out(out, &full, SECTION_INFO_SIZE_1, sizeof full);
}
