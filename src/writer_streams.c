/*
 * writer_streams.c - what a writer records besides accesses (format 2.0,
 * issue 9 §2-§3): the declared streams with their descriptions and free
 * key/values, and the windows; and what a commit hands mh_segw_seal for
 * them (design2.md, dictionary tables 5, 6 and 7).
 *
 * Windows are kept as id ranges, not counted per access: the append path
 * pays one predictable branch per call (win_need_t), and a commit cuts the
 * ranges at the segment's ids. The transitions at their ends are taken
 * when they are known for sure: a window's first transition from the first
 * access kept after it began (settle), its last from the last access kept
 * when it ends; a part that begins or ends at a segment boundary takes the
 * segment's first or last transition.
 */
#include <stdlib.h>
#include <string.h>

#include "writer_int.h"

/* ---- streams ---------------------------------------------------------- */

void mh_stream_info_init(mh_stream_info *s) {
    if (!s)
        return;
    memset(s, 0, sizeof *s);
    s->struct_size = sizeof *s;
    s->kind = MH_STREAM_OTHER;
    s->parent = MH_NONE32;
    s->pid = MH_NONE64;
    s->tid = MH_NONE64;
    s->cpu = MH_NONE32;
}

static void declare_bit(mh_writer *w, uint32_t s) {
    w->declared[s >> 6] |= (uint64_t)1 << (s & 63);
}

/* Index of stream id in w->streams, or where it would go (*found 0). */
static size_t stream_index(const mh_writer *w, uint32_t id, int *found) {
    size_t lo = 0, hi = w->nstreams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->streams[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < w->nstreams && w->streams[lo].id == id;
    return lo;
}

/* Puts a copy of s (name copied) at its place, replacing a declared one. */
static int put_stream(mh_writer *w, const mh_stream_info *s) {
    char *name = NULL;
    if (s->name && !(name = strdup(s->name)))
        return MH_ENOMEM;
    int found;
    size_t i = stream_index(w, s->id, &found);
    if (!found) {
        mh_stream_info *p = realloc(w->streams, (w->nstreams + 1) * sizeof *p);
        if (!p) {
            free(name);
            return MH_ENOMEM;
        }
        w->streams = p;
        memmove(p + i + 1, p + i, (w->nstreams - i) * sizeof *p);
        w->nstreams++;
    } else {
        free((char *)w->streams[i].name);
    }
    w->streams[i] = *s;
    w->streams[i].struct_size = sizeof *s;
    w->streams[i].name = name;
    w->streams[i].accesses = 0;
    w->streams[i].transition_first = w->streams[i].transition_last = 0;
    declare_bit(w, s->id);
    return MH_OK;
}

int mh_writer_streams_init(mh_writer *w) {
    mh_stream_info s0;
    mh_stream_info_init(&s0);
    return put_stream(w, &s0);
}

/* Why a stream description is refused, or NULL. */
static const char *bad_stream(const mh_stream_info *s) {
    if (s->id > MH_STREAM_MAX)
        return "id above MH_STREAM_MAX (65535)";
    if (s->kind > MH_STREAM_PROCESS)
        return "unknown kind";
    if (s->parent != MH_NONE32 && s->parent > MH_STREAM_MAX)
        return "parent neither a stream id nor MH_NONE32";
    if (s->parent == s->id)
        return "stream is its own parent";
    if (s->reserved != 0)
        return "reserved field not zero";
    if (s->accesses || s->transition_first || s->transition_last)
        return "output fields (accesses, transition_first/last) not zero";
    if (s->name && strlen(s->name) > 65535)
        return "name longer than 65535 bytes";
    if (s->name && !mh_utf8_valid((const uint8_t *)s->name, strlen(s->name)))
        return "name is not valid UTF-8";
    return NULL;
}

/* Takes wmu while producers may run (the merge thread seals segments,
 * which reads the streams); nothing otherwise. */
static void lock_state(mh_writer *w) {
    if (w->wmu_ready)
        pthread_mutex_lock(&w->wmu);
}
static void unlock_state(mh_writer *w) {
    if (w->wmu_ready)
        pthread_mutex_unlock(&w->wmu);
}

int mh_writer_stream_declare(mh_writer *w, const mh_stream_info *s_in) {
    if (!w)
        return MH_EINVAL;
    lock_state(w);
    w->err.code = 0;
    mh_stream_info s;
    mh_stream_info_init(&s);
    const char *why = NULL;
    int rc = MH_OK;
    if (!s_in)
        rc = mh_diag_fail(&w->err, MH_EINVAL, 0,
                          "mh_writer_stream_declare: NULL stream");
    else if (mh_struct_in(s_in, MH_STREAM_INFO_SIZE_1, sizeof s, &s) != MH_OK)
        rc = mh_diag_fail(&w->err, MH_EINVAL, 0,
                          "mh_stream_info: struct_size %u too small, or non-zero "
                          "bytes past the %zu this library knows",
                          s_in->struct_size, sizeof s);
    else if ((why = bad_stream(&s)) != NULL)
        rc = mh_diag_fail(&w->err, MH_EINVAL, 0, "stream %u: %s", s.id, why);
    else if (w->failed)
        rc = mh_writer_refuse_failed(w);
    else if (put_stream(w, &s) != MH_OK)
        rc = mh_diag_fail(&w->err, MH_ENOMEM, 0, "out of memory for stream %u",
                          s.id);
    else
        w->meta_dirty = 1;
    unlock_state(w);
    return rc;
}

int mh_writer_stream_set_meta(mh_writer *w, uint32_t stream, const char *key,
                              const char *value) {
    if (!w)
        return MH_EINVAL;
    lock_state(w);
    w->err.code = 0;
    int rc = MH_OK;
    if (!key || !value || !*key)
        rc = mh_diag_fail(&w->err, MH_EINVAL, 0,
                          "mh_writer_stream_set_meta: NULL or empty key, or "
                          "NULL value");
    else if (strlen(key) > 65535 || strlen(value) > 65535)
        rc = mh_diag_fail(&w->err, MH_EINVAL, 0,
                          "mh_writer_stream_set_meta: key or value longer than "
                          "65535 bytes (key %zu, value %zu)", strlen(key),
                          strlen(value));
    else if (!mh_utf8_valid((const uint8_t *)key, strlen(key)) ||
             !mh_utf8_valid((const uint8_t *)value, strlen(value)))
        rc = mh_diag_fail(&w->err, MH_EINVAL, 0,
                          "mh_writer_stream_set_meta: key or value is not valid "
                          "UTF-8");
    else if (!mh_writer_stream_declared(w, stream))
        rc = mh_diag_fail(&w->err, MH_ENOSTREAM, 0,
                          "mh_writer_stream_set_meta: stream %u is not declared",
                          stream);
    else if (w->failed)
        rc = mh_writer_refuse_failed(w);
    if (rc != MH_OK) {
        unlock_state(w);
        return rc;
    }
    /* replace in place, or insert after the stream's last entry: sorted by
     * stream, each stream's keys in the order they were first set */
    size_t at = w->nsmeta;
    for (size_t i = 0; i < w->nsmeta; i++) {
        if (w->smeta[i].stream == stream && strcmp(w->smeta[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v) {
                rc = mh_diag_fail(&w->err, MH_ENOMEM, 0, "out of memory");
            } else {
                free((char *)w->smeta[i].value);
                w->smeta[i].value = v;
                w->meta_dirty = 1;
            }
            unlock_state(w);
            return rc;
        }
        if (w->smeta[i].stream > stream && at == w->nsmeta)
            at = i;
    }
    char *k = strdup(key), *v = strdup(value);
    mh_stream_kv *m = k && v ? realloc(w->smeta, (w->nsmeta + 1) * sizeof *m)
                             : NULL;
    if (!m) {
        free(k);
        free(v);
        rc = mh_diag_fail(&w->err, MH_ENOMEM, 0, "out of memory");
    } else {
        w->smeta = m;
        memmove(m + at + 1, m + at, (w->nsmeta - at) * sizeof *m);
        m[at] = (mh_stream_kv){stream, k, v};
        w->nsmeta++;
        w->meta_dirty = 1;
    }
    unlock_state(w);
    return rc;
}

int mh_writer_streams_load(mh_writer *w, const mh_seg *newest) {
    const mh_dict *dict = &newest->dict;
    w->streams_table = dict->has_stream_table;
    for (size_t i = 0; i < dict->nstreams; i++) {
        const mh_dict_stream *ds = &dict->streams[i];
        mh_stream_info s;
        mh_stream_info_init(&s);
        s.id = ds->id;
        s.kind = ds->kind;
        s.parent = ds->parent;
        s.pid = ds->pid;
        s.tid = ds->tid;
        s.cpu = ds->cpu;
        s.name = ds->name;
        if (s.id > MH_STREAM_MAX || put_stream(w, &s) != MH_OK)
            return mh_diag_fail(&w->err, s.id > MH_STREAM_MAX ? MH_ECORRUPT
                                                               : MH_ENOMEM, 0,
                                "%s: stream %u of its streams table",
                                newest->name, s.id);
    }
    for (size_t i = 0; i < dict->nstream_meta; i++) {
        const mh_stream_kv *kv = &dict->stream_meta[i];
        char *k = strdup(kv->key), *v = strdup(kv->value);
        mh_stream_kv *m = k && v ? realloc(w->smeta, (w->nsmeta + 1) * sizeof *m)
                                 : NULL;
        if (!m) {
            free(k);
            free(v);
            return mh_diag_fail(&w->err, MH_ENOMEM, 0,
                                "out of memory for the stream metadata of %s",
                                newest->name);
        }
        w->smeta = m;
        m[w->nsmeta++] = (mh_stream_kv){kv->stream, k, v};
    }
    return MH_OK;
}

void mh_writer_window_seen(mh_writer *w, const mh_seg *seg) {
    for (size_t i = 0; i < seg->dict.nwindows; i++)
        if (!w->has_window || seg->dict.windows[i].window > w->last_window) {
            w->last_window = seg->dict.windows[i].window;
            w->has_window = 1;
        }
}

void mh_writer_streams_free(mh_writer *w) {
    for (size_t i = 0; i < w->nstreams; i++)
        free((char *)w->streams[i].name);
    free(w->streams);
    for (size_t i = 0; i < w->nsmeta; i++) {
        free((char *)w->smeta[i].key);
        free((char *)w->smeta[i].value);
    }
    free(w->smeta);
    free(w->wins);
}

/* ---- windows ---------------------------------------------------------- */

/* What every window call checks first: w given, no producer open (the
 * merge thread owns the slice buffer then), w not failed. */
static int window_call(mh_writer *w, const char *what) {
    if (!w)
        return MH_EINVAL;
    if (mh_writer_has_producers(w))
        MH_TRY(mh_writer_producers_check(w, what));
    w->err.code = 0;
    if (w->failed)
        return mh_writer_refuse_failed(w);
    return MH_OK;
}

/* Ends the open window, if any, before id next_id. */
static void end_open(mh_writer *w) {
    if (!w->nwins || !w->wins[w->nwins - 1].open)
        return;
    mh_wwin *x = &w->wins[w->nwins - 1];
    x->open = 0;
    x->id_end = w->next_id;
    x->t_end = w->last_t; /* the last access kept is id next_id - 1 */
    w->win_need_t = 0;
}

int mh_writer_window_begin(mh_writer *w, uint64_t window) {
    MH_TRY(window_call(w, "mh_writer_window_begin"));
    if (w->has_window && window <= w->last_window)
        return mh_diag_fail(&w->err, MH_EORDER, 0,
                            "window %llu after window %llu: window ids strictly "
                            "increase", (unsigned long long)window,
                            (unsigned long long)w->last_window);
    if (w->nwins == w->wins_cap) {
        size_t cap = w->wins_cap ? 2 * w->wins_cap : 8;
        mh_wwin *p = realloc(w->wins, cap * sizeof *p);
        if (!p)
            return mh_diag_fail(&w->err, MH_ENOMEM, 0,
                                "out of memory for window %llu",
                                (unsigned long long)window);
        w->wins = p;
        w->wins_cap = cap;
    }
    end_open(w);
    w->wins[w->nwins++] = (mh_wwin){.window = window,
                                    .id_begin = w->next_id,
                                    .id_end = w->next_id,
                                    .open = 1};
    w->win_need_t = 1;
    w->last_window = window;
    w->has_window = 1;
    w->meta_dirty = 1; /* a window with no access yet is still recorded */
    return MH_OK;
}

int mh_writer_window_end(mh_writer *w) {
    MH_TRY(window_call(w, "mh_writer_window_end"));
    end_open(w);
    return MH_OK;
}

int mh_writer_seal_info(mh_writer *w, uint64_t id_first, uint64_t id_end,
                        uint64_t t_last, mh_seal_info *si,
                        mh_window_part **parts_out) {
    /* streams: none while the store is single-stream and undescribed, so
     * such a segment has no streams table (as 1.0) */
    int plain = !w->streams_table && w->nstreams == 1 && w->nsmeta == 0 &&
                w->streams[0].id == 0 && w->streams[0].kind == MH_STREAM_OTHER &&
                w->streams[0].parent == MH_NONE32 &&
                w->streams[0].pid == MH_NONE64 && w->streams[0].tid == MH_NONE64 &&
                w->streams[0].cpu == MH_NONE32 && !w->streams[0].name;
    si->streams = plain ? NULL : w->streams;
    si->nstreams = plain ? 0 : w->nstreams;
    si->stream_meta = w->smeta;
    si->nstream_meta = w->nsmeta;
    *parts_out = NULL;
    si->windows = NULL;
    si->nwindows = 0;
    if (!w->nwins)
        return MH_OK;
    mh_window_part *parts = malloc(w->nwins * sizeof *parts);
    if (!parts)
        return mh_diag_fail(&w->err, MH_ENOMEM, 0, "out of memory for windows");
    size_t np = 0;
    for (size_t i = 0; i < w->nwins; i++) {
        const mh_wwin *x = &w->wins[i];
        uint64_t lo = x->id_begin < id_first ? id_first : x->id_begin;
        uint64_t hi = x->open ? id_end : (x->id_end < id_end ? x->id_end : id_end);
        if (hi < lo)
            hi = lo;
        uint64_t count = hi - lo;
        if (count == 0 && x->cont)
            continue; /* nothing new of a window already recorded */
        mh_window_part *p = &parts[np++];
        *p = (mh_window_part){.window = x->window, .id_first = lo, .count = count};
        if (count) {
            p->t_first = lo == id_first ? w->seg_t_first : x->t_begin;
            p->t_last = x->open || x->id_end >= id_end ? t_last : x->t_end;
        }
    }
    si->windows = parts;
    si->nwindows = np;
    *parts_out = parts;
    return MH_OK;
}

/* Bytes of a copy of the string s (NUL included; 0 for NULL). */
static size_t str_bytes(const char *s) { return s ? strlen(s) + 1 : 0; }

/* Copies s to *at and moves *at past it (NULL stays NULL). */
static const char *str_put(char **at, const char *s) {
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = memcpy(*at, s, n);
    *at += n;
    return d;
}

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

int mh_seal_snap_make(const mh_seal_info *si, mh_seal_snap *out) {
    memset(out, 0, sizeof *out);
    size_t a_meta = ALIGN8(si->nmeta * sizeof(mh_kv));
    size_t a_st = ALIGN8(si->nstreams * sizeof(mh_stream_info));
    size_t a_sm = ALIGN8(si->nstream_meta * sizeof(mh_stream_kv));
    size_t a_win = ALIGN8(si->nwindows * sizeof(mh_window_part));
    size_t strs = 0;
    for (size_t i = 0; i < si->nmeta; i++)
        strs += str_bytes(si->meta[i].key) + str_bytes(si->meta[i].value);
    for (size_t i = 0; i < si->nstreams; i++)
        strs += str_bytes(si->streams[i].name);
    for (size_t i = 0; i < si->nstream_meta; i++)
        strs += str_bytes(si->stream_meta[i].key) +
                str_bytes(si->stream_meta[i].value);
    char *mem = malloc(a_meta + a_st + a_sm + a_win + strs + 1);
    if (!mem)
        return MH_ENOMEM;
    mh_kv *meta = (mh_kv *)(void *)mem;
    mh_stream_info *st = (mh_stream_info *)(void *)(mem + a_meta);
    mh_stream_kv *sm = (mh_stream_kv *)(void *)(mem + a_meta + a_st);
    mh_window_part *win = (mh_window_part *)(void *)(mem + a_meta + a_st + a_sm);
    char *at = mem + a_meta + a_st + a_sm + a_win;
    for (size_t i = 0; i < si->nmeta; i++) {
        meta[i].key = (char *)str_put(&at, si->meta[i].key);
        meta[i].value = (char *)str_put(&at, si->meta[i].value);
    }
    for (size_t i = 0; i < si->nstreams; i++) {
        st[i] = si->streams[i];
        st[i].name = str_put(&at, si->streams[i].name);
    }
    for (size_t i = 0; i < si->nstream_meta; i++) {
        sm[i] = si->stream_meta[i];
        sm[i].key = str_put(&at, si->stream_meta[i].key);
        sm[i].value = str_put(&at, si->stream_meta[i].value);
    }
    if (si->nwindows)
        memcpy(win, si->windows, si->nwindows * sizeof *win);
    /* the tests-only fields (extra sections, tables, columns, minor) are
     * never set by the writer: they stay zero */
    out->si.meta = meta;
    out->si.nmeta = si->nmeta;
    out->si.streams = si->nstreams ? st : NULL;
    out->si.nstreams = si->nstreams;
    out->si.stream_meta = sm;
    out->si.nstream_meta = si->nstream_meta;
    out->si.windows = si->nwindows ? win : NULL;
    out->si.nwindows = si->nwindows;
    out->mem = mem;
    return MH_OK;
}

void mh_seal_snap_free(mh_seal_snap *s) {
    free(s->mem);
    memset(s, 0, sizeof *s);
}

void mh_writer_windows_sealed(mh_writer *w, uint64_t id_end) {
    /* the open window (recorded in the sealed segment, maybe as an empty
     * part) continues from the next segment's first id */
    size_t k = 0;
    for (size_t i = 0; i < w->nwins; i++)
        if (w->wins[i].open) {
            mh_wwin x = w->wins[i];
            x.cont = 1;
            x.id_begin = x.id_end = id_end;
            w->wins[k++] = x;
        }
    w->nwins = k;
}

void mh_writer_windows_discarded(mh_writer *w) {
    uint64_t n = w->next_id;
    for (size_t i = 0; i < w->nwins; i++) {
        mh_wwin *x = &w->wins[i];
        if (x->id_begin > n)
            x->id_begin = n;
        if (!x->open && x->id_end > n) {
            x->id_end = n;
            x->t_end = w->last_t; /* id n - 1 is the last access kept */
        }
        if (x->open && x->id_begin == n && !x->cont)
            w->win_need_t = 1; /* its first access is still to come */
    }
}
