/*
 * store_copy.c - copying from a reader to a new store (store_copy.h).
 */
#include "store_copy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int writer_fail(mh_writer *w, int rc, char *err, size_t errlen) {
    if (mh_writer_errmsg(w, err, errlen) == 0)
        snprintf(err, errlen, "%s", cli_errstr(rc));
    return rc;
}

static int reader_fail(const mh_reader *r, int rc, char *err, size_t errlen) {
    if (mh_reader_errmsg(r, err, errlen) == 0)
        snprintf(err, errlen, "%s", cli_errstr(rc));
    return rc;
}

int copy_meta_and_streams(const mh_reader *r, mh_writer *w, char *err, size_t errlen) {
    size_t nmeta = mh_reader_meta_count(r);
    for (size_t i = 0; i < nmeta; i++) {
        const char *k, *v;
        int rc = mh_reader_meta_get(r, i, &k, &v);
        if (rc)
            return reader_fail(r, rc, err, errlen);
        rc = mh_writer_set_meta(w, k, v);
        if (rc)
            return writer_fail(w, rc, err, errlen);
    }
    size_t ns = mh_reader_stream_count(r);
    for (size_t i = 0; i < ns; i++) {
        mh_stream_info si = {.struct_size = sizeof si};
        int rc = mh_reader_stream_info(r, i, &si);
        if (rc)
            return reader_fail(r, rc, err, errlen);
        /* what the reader computed over the store is output only: the new
         * store counts its own */
        si.accesses = si.transition_first = si.transition_last = 0;
        rc = mh_writer_stream_declare(w, &si);
        if (rc)
            return writer_fail(w, rc, err, errlen);
        size_t nm = mh_reader_stream_meta_count(r, i);
        for (size_t k = 0; k < nm; k++) {
            const char *key, *value;
            rc = mh_reader_stream_meta_get(r, i, k, &key, &value);
            if (rc)
                return reader_fail(r, rc, err, errlen);
            rc = mh_writer_stream_set_meta(w, si.id, key, value);
            if (rc)
                return writer_fail(w, rc, err, errlen);
        }
    }
    return 0;
}

int copy_accesses(const mh_reader *r, const mh_query *q, mh_writer *w, cli_progress *prog,
                  uint64_t *copied, char *err, size_t errlen) {
    enum { N = 4096 };
    mh_access *buf = malloc(N * sizeof *buf);
    if (buf == NULL) {
        snprintf(err, errlen, "%s", mh_strerror(MH_ENOMEM));
        return MH_ENOMEM;
    }
    mh_cursor *cur = NULL;
    int rc = mh_cursor_open(r, q, &cur);
    if (rc)
        reader_fail(r, rc, err, errlen);
    while (rc == 0) {
        size_t n = 0;
        rc = mh_cursor_next(cur, buf, N, &n);
        if (rc) {
            if (mh_cursor_errmsg(cur, err, errlen) == 0)
                snprintf(err, errlen, "%s", cli_errstr(rc));
            break;
        }
        if (n == 0)
            break;
        /* the writer gives the ids (from 0 in a new store) */
        rc = mh_writer_append_batch(w, buf, n, NULL);
        if (rc) {
            writer_fail(w, rc, err, errlen);
            break;
        }
        *copied += n;
        cli_progress_update(prog, *copied);
    }
    mh_cursor_close(cur);
    free(buf);
    return rc;
}

int store_copy_create(const cli_cmd *cmd, const char *out, mh_writer **w) {
    if (cli_exists(out))
        return cli_fail(cmd, "'%s' already exists", out);
    char err[MH_ERRMSG_MAX] = "";
    int rc = mh_writer_open_ex(out, MH_CREATE, NULL, w, err, sizeof err);
    if (rc)
        return cli_fail(cmd, "cannot create store '%s': %s", out, cli_open_error(rc, err));
    return CLI_OK;
}

int store_copy_finish(const cli_cmd *cmd, mh_writer *w, const char *out, int rc, char *err,
                      size_t errlen) {
    if (rc == 0) {
        rc = mh_writer_commit(w);
        if (rc)
            mh_writer_errmsg(w, err, errlen);
    }
    if (rc) {
        cli_fail(cmd, "%s", cli_lib_error(rc, err));
        mh_writer_abandon(w);
        cli_remove_store(out);
        return CLI_FAIL;
    }
    rc = mh_writer_close(w);
    if (rc) {
        cli_fail(cmd, "closing '%s' failed: %s", out, cli_errstr(rc));
        cli_remove_store(out);
        return CLI_FAIL;
    }
    return CLI_OK;
}

void store_copy_query_all(mh_query *q) {
    mh_query_init(q);
    q->ops = MH_OPS_ALL;
    q->addr_last = UINT64_MAX;
}

/* Accesses with ids in [a, b) (b = UINT64_MAX: to the end), appended to w,
 * which must be about to give id a: the copy keeps every id. */
static int copy_ids(const mh_reader *r, mh_writer *w, uint64_t a, uint64_t b,
                    cli_progress *prog, uint64_t *copied, char *err, size_t errlen) {
    if (a >= b)
        return 0;
    if (mh_writer_next_id(w) != a) {
        snprintf(err, errlen, "the copy would give id %" PRIu64 " to the source's access %" PRIu64,
                 mh_writer_next_id(w), a);
        return MH_ECORRUPT;
    }
    mh_query q;
    store_copy_query_all(&q);
    if (a > 0) {
        q.start_kind = MH_FROM_ID;
        q.start = a - 1;
    }
    if (b != UINT64_MAX) {
        q.end_kind = MH_END_ID;
        q.end = b - 1;
    }
    return copy_accesses(r, &q, w, prog, copied, err, errlen);
}

int copy_all_with_windows(const mh_reader *r, mh_writer *w, cli_progress *prog,
                          uint64_t *copied, char *err, size_t errlen) {
    size_t nw = mh_reader_window_count(r);
    uint64_t next = 0; /* first id not copied yet */
    int rc = 0;
    for (size_t i = 0; i < nw && rc == 0; i++) {
        mh_window_info wi = {.struct_size = sizeof wi};
        rc = mh_reader_window_info(r, i, &wi);
        if (rc)
            return reader_fail(r, rc, err, errlen);
        rc = copy_ids(r, w, next, wi.id_first, prog, copied, err, errlen);
        if (rc == 0 && (rc = mh_writer_window_begin(w, wi.window)) != 0)
            writer_fail(w, rc, err, errlen);
        if (rc == 0)
            rc = copy_ids(r, w, wi.id_first, wi.id_first + wi.accesses, prog, copied, err,
                          errlen);
        if (rc == 0 && (rc = mh_writer_window_end(w)) != 0)
            writer_fail(w, rc, err, errlen);
        next = wi.id_first + wi.accesses;
    }
    if (rc == 0)
        rc = copy_ids(r, w, next, UINT64_MAX, prog, copied, err, errlen);
    return rc;
}
