/*
 * bench_load.c - the traces of mh_bench and mh_abtest, loaded into memory
 * before anything is timed: synthetic (tools/synth), K synthetic threads
 * merged by transition (--threads), a valgrind lackey log (--lackey), the
 * accesses of an existing store (--store).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"
#include "synth.h"

void mhb_trace_free(mhb_trace *t)
{
    free(t->a);
    for (size_t i = 0; i < t->ndecl; i++)
        free((char *)t->decl[i].name);
    free(t->decl);
    free(t->sids);
    memset(t, 0, sizeof *t);
}

static int trace_reserve(mhb_trace *t, size_t more)
{
    if (t->n + more <= t->cap)
        return MH_OK;
    size_t cap = t->cap ? t->cap * 2 : (1u << 20);
    while (cap < t->n + more)
        cap *= 2;
    mh_access *p = realloc(t->a, cap * sizeof *p);
    if (p == NULL)
        return MH_ENOMEM;
    t->a = p;
    t->cap = cap;
    return MH_OK;
}

static int decl_add(mhb_trace *t, const mh_stream_info *s)
{
    mh_stream_info *p = realloc(t->decl, (t->ndecl + 1) * sizeof *p);
    if (p == NULL)
        return MH_ENOMEM;
    t->decl = p;
    mh_stream_info *d = &t->decl[t->ndecl];
    mh_stream_info_init(d);
    d->id = s->id;
    d->kind = s->kind;
    d->parent = s->parent;
    d->pid = s->pid;
    d->tid = s->tid;
    d->cpu = s->cpu;
    d->name = NULL;
    if (s->name != NULL && (d->name = strdup(s->name)) == NULL)
        return MH_ENOMEM;
    t->ndecl++;
    return MH_OK;
}

int mhb_trace_streams(mhb_trace *t)
{
    /* a bitmap of the 65536 possible ids: 8 KiB */
    uint8_t *seen = calloc(MH_STREAM_MAX / 8 + 1, 1);
    if (seen == NULL)
        return MH_ENOMEM;
    t->with_pc = 0;
    for (size_t i = 0; i < t->n; i++) {
        uint32_t s = t->a[i].stream & MH_STREAM_MAX;
        seen[s >> 3] |= (uint8_t)(1u << (s & 7));
        t->with_pc += t->a[i].has_pc;
    }
    free(t->sids);
    t->sids = NULL;
    t->nsids = 0;
    size_t k = 0;
    for (uint32_t s = 0; s <= MH_STREAM_MAX; s++)
        k += (seen[s >> 3] >> (s & 7)) & 1;
    t->sids = malloc((k ? k : 1) * sizeof *t->sids);
    if (t->sids == NULL) {
        free(seen);
        return MH_ENOMEM;
    }
    int rc = MH_OK;
    for (uint32_t s = 0; s <= MH_STREAM_MAX && rc == MH_OK; s++) {
        if (!((seen[s >> 3] >> (s & 7)) & 1))
            continue;
        t->sids[t->nsids++] = s;
        int known = s == 0;
        for (size_t i = 0; i < t->ndecl && !known; i++)
            known = t->decl[i].id == s;
        if (!known) {
            mh_stream_info d;
            mh_stream_info_init(&d);
            d.id = s;
            rc = decl_add(t, &d);
        }
    }
    free(seen);
    return rc;
}

void mhb_trace_strip_pc(mhb_trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        t->a[i].has_pc = 0;
        t->a[i].pc = 0;
    }
    t->with_pc = 0;
}

int mhb_store_fail(const char *path, const char *what, int rc, const mh_reader *r)
{
    char msg[MH_ERRMSG_MAX] = "";
    if (r != NULL)
        mh_reader_errmsg(r, msg, sizeof msg);
    fprintf(stderr, "mh_bench: %s: %s: %s%s%s\n", path, what, mh_strerror(rc),
            msg[0] ? ": " : "", msg);
    return rc;
}

int mhb_load_store(const char *path, mhb_trace *t)
{
    mh_reader *r = NULL;
    char err[MH_ERRMSG_MAX] = "";
    int rc = mh_reader_open_ex(path, NULL, &r, err, sizeof err);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_bench: %s: %s: %s\n", path, mh_strerror(rc), err);
        return rc;
    }
    mh_stats st = {.struct_size = sizeof st};
    rc = mh_reader_stats(r, &st);
    if (rc == MH_OK && st.accesses > SIZE_MAX / sizeof *t->a)
        rc = MH_ENOMEM;
    if (rc == MH_OK)
        rc = trace_reserve(t, (size_t)st.accesses);
    /* the streams as the store describes them, declared again on ingest */
    size_t ns = rc == MH_OK ? mh_reader_stream_count(r) : 0;
    for (size_t i = 0; i < ns && rc == MH_OK; i++) {
        mh_stream_info s = {.struct_size = sizeof s};
        rc = mh_reader_stream_info(r, i, &s);
        if (rc != MH_OK)
            return mhb_store_fail(path, "stream table", rc, r);
        if (s.id != 0)
            rc = decl_add(t, &s);
    }
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    q.addr_first = 0;
    q.addr_last = UINT64_MAX;
    mh_cursor *c = NULL;
    if (rc == MH_OK && (rc = mh_cursor_open(r, &q, &c)) != MH_OK) {
        mhb_store_fail(path, "cursor", rc, r);
        mh_reader_close(r);
        return rc;
    }
    while (rc == MH_OK) {
        if ((rc = trace_reserve(t, 65536)) != MH_OK)
            break;
        size_t k = 0;
        rc = mh_cursor_next(c, t->a + t->n, 65536, &k);
        if (rc != MH_OK) {
            char msg[MH_ERRMSG_MAX] = "";
            mh_cursor_errmsg(c, msg, sizeof msg);
            fprintf(stderr, "mh_bench: %s: reading: %s: %s\n", path, mh_strerror(rc), msg);
            break;
        }
        if (k == 0)
            break;
        /* the trace's ids are its positions (what a new store gives them) */
        for (size_t i = 0; i < k; i++)
            if (t->a[t->n + i].id != t->n + i) {
                fprintf(stderr, "mh_bench: %s: access %zu has id %" PRIu64 "\n", path,
                        t->n + i, t->a[t->n + i].id);
                rc = MH_ECORRUPT;
                break;
            }
        t->n += k;
    }
    mh_cursor_close(c);
    mh_reader_close(r);
    if (rc == MH_OK && t->n != st.accesses) {
        fprintf(stderr, "mh_bench: %s: read %zu accesses, the store holds %" PRIu64 "\n",
                path, t->n, st.accesses);
        rc = MH_ECORRUPT;
    }
    return rc == MH_OK ? mhb_trace_streams(t) : rc;
}

int mhb_load_threads(uint64_t seed, uint64_t n, uint32_t k, mhb_trace *t)
{
    if (k == 0 || k - 1 > MH_STREAM_MAX || n / k == 0)
        return MH_EINVAL;
    int rc = trace_reserve(t, (size_t)n);
    mh_access **part = calloc(k, sizeof *part);
    size_t *len = calloc(k, sizeof *len), *pos = calloc(k, sizeof *pos);
    if (rc != MH_OK || !part || !len || !pos) {
        free(part);
        free(len);
        free(pos);
        return MH_ENOMEM;
    }
    for (uint32_t j = 0; j < k && rc == MH_OK; j++) {
        len[j] = (size_t)(n / k + (j < n % k));
        part[j] = malloc(len[j] * sizeof **part);
        /* seeds far apart: thread j's trace is not thread 0's shifted */
        mh_synth *s = mh_synth_new_thread(seed + 0x9E3779B97F4A7C15ull * j, len[j], 0, j);
        if (part[j] == NULL || s == NULL) {
            mh_synth_free(s);
            rc = MH_ENOMEM;
            break;
        }
        size_t got = 0;
        while (got < len[j]) {
            size_t m = mh_synth_next(s, part[j] + got, len[j] - got);
            if (m == 0)
                break;
            got += m;
        }
        mh_synth_free(s);
        if (got != len[j])
            rc = MH_EINVAL;
        /* the threads of one program start together: thread j's clock is
         * moved to begin where thread 0's does (synth starts a trace at a
         * seed-dependent transition) */
        if (rc == MH_OK && j > 0) {
            uint64_t t0 = part[0][0].transition, tj = part[j][0].transition;
            for (size_t i = 0; i < len[j]; i++)
                part[j][i].transition = part[j][i].transition - tj + t0;
        }
        if (rc == MH_OK && j > 0) {
            mh_stream_info d;
            mh_stream_info_init(&d);
            char name[32];
            snprintf(name, sizeof name, "thread-%u", j);
            d.id = j;
            d.kind = MH_STREAM_THREAD;
            d.tid = j + 1;
            d.pid = 1;
            d.name = name;
            rc = decl_add(t, &d);
        }
    }
    /* the merge: smallest transition, then smallest stream; k <= 64 in the
     * bench, so a linear scan of the heads is fast enough */
    for (size_t i = 0; rc == MH_OK && i < n; i++) {
        uint32_t best = UINT32_MAX;
        for (uint32_t j = 0; j < k; j++)
            if (pos[j] < len[j] &&
                (best == UINT32_MAX ||
                 part[j][pos[j]].transition < part[best][pos[best]].transition))
                best = j;
        mh_access *a = &t->a[t->n++];
        *a = part[best][pos[best]++];
        a->id = i;
    }
    for (uint32_t j = 0; j < k; j++)
        free(part[j]);
    free(part);
    free(len);
    free(pos);
    return rc == MH_OK ? mhb_trace_streams(t) : rc;
}

static int trace_sink(void *ctx, const mh_access *batch, size_t n)
{
    mhb_trace *t = ctx;
    int rc = trace_reserve(t, n);
    if (rc != MH_OK)
        return rc;
    memcpy(t->a + t->n, batch, n * sizeof *batch);
    t->n += n;
    return MH_OK;
}

int mhb_load_lackey(const char *path, mhb_trace *t)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "mh_bench: %s: %s\n", path, strerror(errno));
        return MH_ENOENT;
    }
    mh_lackey_parser *p = mh_lackey_new(0, trace_sink, t);
    if (p == NULL) {
        close(fd);
        return MH_ENOMEM;
    }
    static char buf[1 << 20];
    int rc = MH_OK;
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            fprintf(stderr, "mh_bench: %s: %s\n", path, strerror(errno));
            rc = MH_EIO;
            break;
        }
        if (k == 0) {
            rc = mh_lackey_finish(p);
            break;
        }
        rc = mh_lackey_feed(p, buf, (size_t)k);
        if (rc != MH_OK)
            break;
    }
    if (rc != MH_OK && rc != MH_EIO)
        fprintf(stderr, "mh_bench: %s: %s (%s)\n", path, mh_strerror(rc),
                mh_lackey_error(p));
    mh_lackey_free(p);
    close(fd);
    return rc;
}

int mhb_load_synth(uint64_t seed, uint64_t n, mhb_trace *t)
{
    t->a = malloc((size_t)n * sizeof *t->a);
    if (t->a == NULL)
        return MH_ENOMEM;
    mh_synth *s = mh_synth_new(seed, n, 0);
    if (s == NULL)
        return MH_ENOMEM;
    while (t->n < n) {
        size_t k = mh_synth_next(s, t->a + t->n, (size_t)(n - t->n));
        if (k == 0)
            break;
        t->n += k;
    }
    mh_synth_free(s);
    return t->n == n ? MH_OK : MH_EINVAL;
}

