/*
 * streams_writer.c - the writer's streams and windows (issue 9 §2-§3,
 * design2.md dictionary tables 5-7), read back at the record level (every
 * segment's dictionary and decoded blocks, src/internal.h) so that the
 * test does not depend on the reader's stream and window tables:
 *   - streams: declaration rules, MH_ENOSTREAM (single and batch, with the
 *     index), stream metadata, the newest description wins, per-segment
 *     counts and transition ranges, stream and pc of every row, streams
 *     carried over an MH_APPEND reopen;
 *   - windows: parts per segment merged by window id equal the test's own
 *     model (id range, count, transition range) through automatic and
 *     explicit commits, empty windows, MH_EORDER, and discard_from cutting
 *     through windows; window ids keep increasing after a reopen.
 */
#include <string.h>

#include "internal.h"
#include "testutil.h"

/* ---- the store read back at the record level --------------------------- */
typedef struct row {
    uint64_t id, t, phy, pc;
    uint32_t stream;
    uint8_t has_pc;
} row;

typedef struct segview {
    uint64_t id_first, count;
    mh_dict_stream *streams;
    size_t nstreams;
    char **names; /* copies of the stream names */
    mh_stream_kv *smeta;
    char **smeta_strs;
    size_t nsmeta;
    mh_window_part *windows;
    size_t nwindows;
} segview;

typedef struct storeview {
    row *rows;
    size_t nrows;
    segview *segs;
    size_t nsegs;
} storeview;

static int row_cmp(const void *a, const void *b) {
    const row *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static char *dup_or_null(const char *s) {
    if (!s)
        return NULL;
    char *d = strdup(s);
    CHECK(d != NULL);
    return d;
}

static void load_store(const char *dir, storeview *v) {
    memset(v, 0, sizeof *v);
    mh_manifest man;
    mh_diag d = {0, 0, ""};
    int rc = mh_store_manifest_load(dir, &man, 1, &d);
    CHECKF(rc == MH_OK, "MANIFEST: %s", d.msg);
    v->segs = calloc(man.nrecs + 1, sizeof *v->segs);
    v->rows = calloc(man.access_count + 1, sizeof *v->rows);
    CHECK(v->segs && v->rows);
    uint8_t *scratch = malloc(mh_block_raw_bound(MHF_MAX_ROWS_PER_BLOCK));
    mh_rows rows = {0};
    CHECK(scratch && mh_rows_reserve(&rows, MHF_MAX_ROWS_PER_BLOCK) == MH_OK);
    for (size_t i = 0; i < man.nrecs; i++) {
        char name[MHF_SEGMENT_NAME_LEN + 1];
        mh_segment_name(name, man.recs[i].seq);
        mh_seg seg;
        rc = mh_seg_open(dir, name, &seg, &d);
        CHECKF(rc == MH_OK, "%s: %s", name, d.msg);
        CHECKF(seg.major == 2, "%s is format %u", name, seg.major);
        segview *sv = &v->segs[v->nsegs++];
        sv->id_first = seg.id_first;
        sv->count = seg.count;
        sv->nstreams = seg.dict.nstreams;
        sv->streams = calloc(sv->nstreams + 1, sizeof *sv->streams);
        sv->names = calloc(sv->nstreams + 1, sizeof *sv->names);
        CHECK(sv->streams && sv->names);
        for (size_t k = 0; k < sv->nstreams; k++) {
            sv->streams[k] = seg.dict.streams[k];
            sv->names[k] = dup_or_null(seg.dict.streams[k].name);
            sv->streams[k].name = sv->names[k];
        }
        sv->nsmeta = seg.dict.nstream_meta;
        sv->smeta = calloc(sv->nsmeta + 1, sizeof *sv->smeta);
        sv->smeta_strs = calloc(2 * sv->nsmeta + 1, sizeof *sv->smeta_strs);
        CHECK(sv->smeta && sv->smeta_strs);
        for (size_t k = 0; k < sv->nsmeta; k++) {
            sv->smeta_strs[2 * k] = dup_or_null(seg.dict.stream_meta[k].key);
            sv->smeta_strs[2 * k + 1] = dup_or_null(seg.dict.stream_meta[k].value);
            sv->smeta[k] = (mh_stream_kv){seg.dict.stream_meta[k].stream,
                                          sv->smeta_strs[2 * k],
                                          sv->smeta_strs[2 * k + 1]};
        }
        sv->nwindows = seg.dict.nwindows;
        sv->windows = calloc(sv->nwindows + 1, sizeof *sv->windows);
        CHECK(sv->windows);
        if (sv->nwindows)
            memcpy(sv->windows, seg.dict.windows, sv->nwindows * sizeof *sv->windows);
        for (uint32_t s = 0; s < seg.nslices; s++) {
            mh_slice sl;
            mh_seg_slice(&seg, s, &sl);
            rc = mh_seg_slice_check(&seg, s, &sl, &d);
            CHECKF(rc == MH_OK, "%s slice %u: %s", name, s, d.msg);
            for (uint32_t b = 0; b < sl.block_count; b++) {
                rows.n = 0;
                rc = mh_seg_decode_block(&seg, &sl, b, scratch, &rows, &d);
                CHECKF(rc == MH_OK, "%s slice %u block %u: %s", name, s, b, d.msg);
                for (uint32_t k = 0; k < rows.n; k++) {
                    CHECK(v->nrows < man.access_count);
                    v->rows[v->nrows++] = (row){
                        .id = sl.id_first + rows.id_off[k], .t = rows.t[k],
                        .phy = rows.phy[k], .pc = rows.pc[k],
                        .stream = rows.stream[k], .has_pc = rows.has_pc[k]};
                }
            }
        }
        mh_seg_close(&seg);
    }
    CHECKF(v->nrows == man.access_count, "decoded %zu rows of %llu", v->nrows,
           (unsigned long long)man.access_count);
    qsort(v->rows, v->nrows, sizeof *v->rows, row_cmp);
    for (size_t i = 0; i < v->nrows; i++)
        CHECK(v->rows[i].id == i);
    mh_rows_free(&rows);
    free(scratch);
    mh_manifest_free(&man);
}

static void free_store(storeview *v) {
    for (size_t i = 0; i < v->nsegs; i++) {
        segview *sv = &v->segs[i];
        for (size_t k = 0; k < sv->nstreams; k++)
            free(sv->names[k]);
        for (size_t k = 0; k < 2 * sv->nsmeta; k++)
            free(sv->smeta_strs[k]);
        free(sv->names);
        free(sv->streams);
        free(sv->smeta);
        free(sv->smeta_strs);
        free(sv->windows);
    }
    free(v->segs);
    free(v->rows);
}

/* ---- streams ----------------------------------------------------------- */
static mh_access acc(uint64_t t, uint64_t phy, uint32_t stream) {
    mh_access a;
    memset(&a, 0, sizeof a);
    a.transition = t;
    a.physical = phy;
    a.size = 4;
    a.op = (uint8_t)(t % 3);
    a.stream = stream;
    return a;
}

static void test_streams(const char *root) {
    char dir[4200];
    tu_join(dir, sizeof dir, root, "streams");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 100;
    o.block_accesses = 64;
    o.commit_accesses = 700;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    mh_stream_info s;
    /* declaration rules */
    CHECK_RC(mh_writer_stream_declare(w, NULL), MH_EINVAL);
    mh_stream_info_init(&s);
    CHECK(s.parent == MH_NONE32 && s.pid == MH_NONE64 && s.tid == MH_NONE64 &&
          s.cpu == MH_NONE32 && s.kind == MH_STREAM_OTHER && !s.name);
    s.id = MH_STREAM_MAX + 1;
    CHECK_RC(mh_writer_stream_declare(w, &s), MH_EINVAL);
    mh_stream_info_init(&s);
    s.id = 3;
    s.kind = 4;
    CHECK_RC(mh_writer_stream_declare(w, &s), MH_EINVAL);
    s.kind = MH_STREAM_THREAD;
    s.reserved = 1;
    CHECK_RC(mh_writer_stream_declare(w, &s), MH_EINVAL);
    s.reserved = 0;
    s.accesses = 1;
    CHECK_RC(mh_writer_stream_declare(w, &s), MH_EINVAL);
    s.accesses = 0;
    s.transition_last = 1;
    CHECK_RC(mh_writer_stream_declare(w, &s), MH_EINVAL);
    s.transition_last = 0;
    s.struct_size = 8;
    CHECK_RC(mh_writer_stream_declare(w, &s), MH_EINVAL);
    s.struct_size = sizeof s;
    char *longname = malloc(65537);
    CHECK(longname);
    memset(longname, 'x', 65536);
    longname[65536] = 0;
    s.name = longname;
    CHECK_RC(mh_writer_stream_declare(w, &s), MH_EINVAL);
    free(longname);
    s.name = "worker";
    s.tid = 77;
    s.parent = 0;
    CHECK_OK(mh_writer_stream_declare(w, &s));
    /* stream metadata */
    CHECK_RC(mh_writer_stream_set_meta(w, 5, "role", "io"), MH_ENOSTREAM);
    CHECK_RC(mh_writer_stream_set_meta(w, 3, "", "io"), MH_EINVAL);
    CHECK_RC(mh_writer_stream_set_meta(w, 3, NULL, "io"), MH_EINVAL);
    CHECK_OK(mh_writer_stream_set_meta(w, 3, "role", "compute"));
    CHECK_OK(mh_writer_stream_set_meta(w, 0, "role", "main"));
    CHECK_OK(mh_writer_stream_set_meta(w, 3, "role", "io")); /* replaced */
    CHECK_OK(mh_writer_stream_set_meta(w, 3, "core", "2"));

    /* appends: undeclared streams refused with their index, nothing taken */
    enum { N = 3000 };
    mh_access *all = calloc(N, sizeof *all);
    CHECK(all);
    tu_rng rng = {42};
    uint64_t t = 1;
    size_t n = 0;
    mh_access bad = acc(t, 0x100, 5);
    CHECK_RC(mh_writer_append(w, &bad), MH_ENOSTREAM);
    char msg[MH_ERRMSG_MAX];
    mh_writer_errmsg(w, msg, sizeof msg);
    CHECKF(strstr(msg, "stream 5 not declared") != NULL, "detail: %s", msg);
    int declared5 = 0;
    while (n < N) {
        size_t m = 1 + tu_below(&rng, 150);
        if (m > N - n)
            m = N - n;
        for (size_t i = 0; i < m; i++) {
            t += tu_below(&rng, 3);
            uint32_t st = tu_below(&rng, 4) == 0 ? 3 : 0;
            if (declared5 && tu_below(&rng, 5) == 0)
                st = 5;
            all[n + i] = acc(t, 0x1000 + 8 * (n + i), st);
            if (tu_below(&rng, 3) == 0) {
                all[n + i].has_pc = 1;
                all[n + i].pc = 0x400000 + tu_below(&rng, 1 << 20);
            } else if (tu_below(&rng, 2)) {
                all[n + i].pc = 0xdead; /* ignored without has_pc */
            }
        }
        if (!declared5 && n > N / 3) {
            /* an undeclared stream at index k of a batch: MH_ENOSTREAM, k */
            size_t k = m / 2;
            mh_access saved = all[n + k];
            all[n + k].stream = 5;
            size_t at = 999;
            uint64_t before = mh_writer_next_id(w);
            CHECK_RC(mh_writer_append_batch(w, all + n, m, &at), MH_ENOSTREAM);
            CHECK(at == k && mh_writer_next_id(w) == before);
            all[n + k].stream = 65536;
            CHECK_RC(mh_writer_append_batch(w, all + n, m, &at), MH_ENOSTREAM);
            CHECK(at == k);
            all[n + k] = saved;
            mh_stream_info_init(&s);
            s.id = 5;
            s.kind = MH_STREAM_CPU;
            s.cpu = 1;
            CHECK_OK(mh_writer_stream_declare(w, &s));
            declared5 = 1;
        }
        if (m == 1)
            CHECK_OK(mh_writer_append(w, &all[n]));
        else
            CHECK_OK(mh_writer_append_batch(w, all + n, m, NULL));
        n += m;
        if (n > 2 * N / 3 && n - m <= 2 * N / 3) {
            /* a new description of 3: the newest wins */
            mh_stream_info_init(&s);
            s.id = 3;
            s.kind = MH_STREAM_THREAD;
            s.name = "worker2";
            s.tid = 78;
            CHECK_OK(mh_writer_stream_declare(w, &s));
        }
    }
    CHECK_OK(mh_writer_close(w));

    /* reopen: the streams are carried, the undeclared still refused */
    CHECK_OK(mh_writer_open(dir, MH_APPEND, &o, &w));
    bad = acc(t, 0x100, 6);
    CHECK_RC(mh_writer_append(w, &bad), MH_ENOSTREAM);
    all = realloc(all, (N + 1) * sizeof *all);
    all[N] = acc(t + 1, 0x2000, 5);
    CHECK_OK(mh_writer_append(w, &all[N]));
    CHECK_OK(mh_writer_close(w));
    n = N + 1;

    storeview v;
    load_store(dir, &v);
    CHECK(v.nrows == n);
    CHECK(v.nsegs >= 3);
    uint64_t cnt[6] = {0}, tf[6] = {0}, tl[6] = {0};
    uint64_t sum_cnt[6] = {0}, sum_tf[6] = {0}, sum_tl[6] = {0};
    for (size_t i = 0; i < n; i++) {
        const row *r = &v.rows[i];
        const mh_access *a = &all[i];
        CHECKF(r->t == a->transition && r->phy == a->physical &&
                   r->stream == a->stream && r->has_pc == a->has_pc &&
                   (!a->has_pc || r->pc == a->pc),
               "row %zu: t %llu phy %llx stream %u pc %u/%llx, appended t %llu "
               "phy %llx stream %u pc %u/%llx", i, (unsigned long long)r->t,
               (unsigned long long)r->phy, r->stream, r->has_pc,
               (unsigned long long)r->pc, (unsigned long long)a->transition,
               (unsigned long long)a->physical, a->stream, a->has_pc,
               (unsigned long long)a->pc);
    }
    /* per-segment stream counts and transition ranges */
    uint64_t seg_cnt[6];
    for (size_t g = 0; g < v.nsegs; g++) {
        const segview *sv = &v.segs[g];
        memset(seg_cnt, 0, sizeof seg_cnt);
        uint64_t stf[6] = {0}, stl[6] = {0};
        for (uint64_t id = sv->id_first; id < sv->id_first + sv->count; id++) {
            uint32_t st = all[id].stream;
            if (!seg_cnt[st]++)
                stf[st] = all[id].transition;
            stl[st] = all[id].transition;
            if (!cnt[st]++)
                tf[st] = all[id].transition;
            tl[st] = all[id].transition;
        }
        for (size_t k = 0; k < sv->nstreams; k++) {
            const mh_dict_stream *ds = &sv->streams[k];
            CHECK(ds->id <= 5);
            CHECKF(ds->count == seg_cnt[ds->id], "segment %zu stream %u: count "
                   "%llu, %llu appended", g, ds->id,
                   (unsigned long long)ds->count,
                   (unsigned long long)seg_cnt[ds->id]);
            if (ds->count)
                CHECK(ds->t_first == stf[ds->id] && ds->t_last == stl[ds->id]);
            else
                CHECK(ds->t_first == 0 && ds->t_last == 0);
            if (ds->count && !sum_cnt[ds->id])
                sum_tf[ds->id] = ds->t_first;
            if (ds->count)
                sum_tl[ds->id] = ds->t_last;
            sum_cnt[ds->id] += ds->count;
        }
    }
    /* the store's figures: counts summed, t range over the segments */
    for (int k = 0; k < 6; k++)
        CHECKF(sum_cnt[k] == cnt[k] && sum_tf[k] == tf[k] && sum_tl[k] == tl[k],
               "stream %d: %llu accesses in the stream tables, %llu appended", k,
               (unsigned long long)sum_cnt[k], (unsigned long long)cnt[k]);
    /* the newest segment: every stream declared, newest descriptions */
    const segview *last = &v.segs[v.nsegs - 1];
    CHECKF(last->nstreams == 3, "newest segment has %zu streams", last->nstreams);
    CHECK(last->streams[0].id == 0 && last->streams[1].id == 3 &&
          last->streams[2].id == 5);
    CHECK(last->streams[1].kind == MH_STREAM_THREAD &&
          last->streams[1].tid == 78 && last->streams[1].parent == MH_NONE32 &&
          last->streams[1].name && !strcmp(last->streams[1].name, "worker2"));
    CHECK(last->streams[2].kind == MH_STREAM_CPU && last->streams[2].cpu == 1 &&
          !last->streams[2].name);
    CHECK(last->nsmeta == 3);
    CHECK(last->smeta[0].stream == 0 && !strcmp(last->smeta[0].key, "role") &&
          !strcmp(last->smeta[0].value, "main"));
    CHECK(last->smeta[1].stream == 3 && !strcmp(last->smeta[1].key, "role") &&
          !strcmp(last->smeta[1].value, "io"));
    CHECK(last->smeta[2].stream == 3 && !strcmp(last->smeta[2].key, "core") &&
          !strcmp(last->smeta[2].value, "2"));
    /* the first segment: the first description of 3 */
    CHECK(v.segs[0].nstreams >= 2 && v.segs[0].streams[1].id == 3 &&
          v.segs[0].streams[1].tid == 77 && v.segs[0].streams[1].parent == 0 &&
          !strcmp(v.segs[0].streams[1].name, "worker"));
    printf("streams: %zu accesses of 3 streams in %zu segments read back\n", n,
           v.nsegs);
    free_store(&v);
    free(all);
}

/* ---- windows ------------------------------------------------------------ */
typedef struct wmodel {
    uint64_t window, id_first, count, t_first, t_last;
} wmodel;

typedef struct wtest {
    mh_writer *w;
    mh_access *all;
    size_t n, cap;
    uint64_t t;
    tu_rng rng;
    wmodel win[64];
    size_t nwin;
    int open; /* the last window is open */
} wtest;

static void wt_append(wtest *x, size_t m) {
    CHECK(x->n + m <= x->cap);
    for (size_t i = 0; i < m; i++) {
        x->t += 1 + tu_below(&x->rng, 2);
        x->all[x->n + i] = acc(x->t, 0x1000 + 8 * (x->n + i), 0);
    }
    CHECK_OK(mh_writer_append_batch(x->w, x->all + x->n, m, NULL));
    if (x->open) {
        wmodel *k = &x->win[x->nwin - 1];
        if (!k->count)
            k->t_first = x->all[x->n].transition;
        k->count += m;
        k->t_last = x->all[x->n + m - 1].transition;
    }
    x->n += m;
}

static void wt_begin(wtest *x, uint64_t window) {
    CHECK_OK(mh_writer_window_begin(x->w, window));
    x->win[x->nwin++] = (wmodel){window, x->n, 0, 0, 0};
    x->open = 1;
}

static void wt_end(wtest *x) {
    CHECK_OK(mh_writer_window_end(x->w));
    x->open = 0;
}

/* discard from transition dt: the model's windows trimmed */
static void wt_discard(wtest *x, uint64_t dt) {
    CHECK_OK(mh_writer_discard_from(x->w, dt));
    while (x->n && x->all[x->n - 1].transition >= dt)
        x->n--;
    for (size_t i = 0; i < x->nwin; i++) {
        wmodel *k = &x->win[i];
        if (k->id_first > x->n)
            k->id_first = x->n;
        if (k->id_first + k->count > x->n)
            k->count = x->n - k->id_first;
        k->t_first = k->count ? x->all[k->id_first].transition : 0;
        k->t_last = k->count ? x->all[k->id_first + k->count - 1].transition : 0;
    }
    x->t = x->n ? x->all[x->n - 1].transition : 0;
    CHECK(mh_writer_next_id(x->w) == x->n);
}

static void check_windows(const char *dir, const wtest *x) {
    storeview v;
    load_store(dir, &v);
    CHECK(v.nrows == x->n);
    wmodel got[64];
    size_t ngot = 0;
    for (size_t g = 0; g < v.nsegs; g++) {
        const segview *sv = &v.segs[g];
        for (size_t k = 0; k < sv->nwindows; k++) {
            const mh_window_part *p = &sv->windows[k];
            snprintf(tu_context, sizeof tu_context, "segment %zu [%llu, +%llu), "
                     "window %llu part [%llu, +%llu)", g,
                     (unsigned long long)sv->id_first,
                     (unsigned long long)sv->count, (unsigned long long)p->window,
                     (unsigned long long)p->id_first, (unsigned long long)p->count);
            CHECK(p->id_first >= sv->id_first &&
                  p->id_first + p->count <= sv->id_first + sv->count);
            if (k)
                CHECK(p->window > sv->windows[k - 1].window &&
                      p->id_first >= sv->windows[k - 1].id_first +
                                         sv->windows[k - 1].count);
            if (p->count)
                CHECK(p->t_first == x->all[p->id_first].transition &&
                      p->t_last == x->all[p->id_first + p->count - 1].transition);
            else
                CHECK(p->t_first == 0 && p->t_last == 0);
            if (ngot && got[ngot - 1].window == p->window) {
                /* continued from the segment before: its last part, this
                 * segment's first, contiguous in ids */
                wmodel *q = &got[ngot - 1];
                CHECK(k == 0 && p->id_first == q->id_first + q->count);
                if (p->count) {
                    if (!q->count)
                        q->t_first = p->t_first;
                    q->t_last = p->t_last;
                }
                q->count += p->count;
            } else {
                CHECK(!ngot || p->window > got[ngot - 1].window);
                got[ngot++] = (wmodel){p->window, p->id_first, p->count,
                                       p->t_first, p->t_last};
            }
        }
    }
    tu_context[0] = 0;
    CHECKF(ngot == x->nwin, "%zu windows in the store, %zu begun", ngot, x->nwin);
    for (size_t i = 0; i < ngot; i++) {
        const wmodel *a = &got[i], *b = &x->win[i];
        CHECKF(a->window == b->window && a->id_first == b->id_first &&
                   a->count == b->count && a->t_first == b->t_first &&
                   a->t_last == b->t_last,
               "window %zu: store (%llu, id %llu, %llu accesses, t %llu..%llu), "
               "model (%llu, id %llu, %llu accesses, t %llu..%llu)", i,
               (unsigned long long)a->window, (unsigned long long)a->id_first,
               (unsigned long long)a->count, (unsigned long long)a->t_first,
               (unsigned long long)a->t_last, (unsigned long long)b->window,
               (unsigned long long)b->id_first, (unsigned long long)b->count,
               (unsigned long long)b->t_first, (unsigned long long)b->t_last);
    }
    free_store(&v);
}

static void test_windows(const char *root) {
    char dir[4200];
    tu_join(dir, sizeof dir, root, "windows");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 50;
    o.block_accesses = 64;
    o.commit_accesses = 300;
    wtest x = {.cap = 20000, .rng = {7}};
    x.all = calloc(x.cap, sizeof *x.all);
    CHECK(x.all);
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &x.w));
    wt_append(&x, 10);                /* before any window */
    wt_begin(&x, 5);
    wt_append(&x, 1000);              /* spans several automatic commits */
    CHECK_RC(mh_writer_window_begin(x.w, 5), MH_EORDER);
    CHECK_RC(mh_writer_window_begin(x.w, 4), MH_EORDER);
    wt_begin(&x, 6);                  /* ends 5 */
    wt_append(&x, 20);
    wt_end(&x);
    CHECK_OK(mh_writer_window_end(x.w)); /* none open: nothing */
    wt_append(&x, 30);                /* in no window */
    wt_begin(&x, 9);                  /* empty window */
    wt_end(&x);
    wt_begin(&x, 10);                 /* begun right before a commit */
    CHECK_OK(mh_writer_commit(x.w));
    wt_append(&x, 5);
    CHECK_OK(mh_writer_commit(x.w));
    CHECK_OK(mh_writer_commit(x.w));  /* nothing new: no segment */
    wt_append(&x, 295);
    CHECK_OK(mh_writer_commit(x.w));  /* what follows stays uncommitted */
    wt_begin(&x, 11);
    wt_append(&x, 40);
    /* discard through window 11, then window 12 begun and cut away */
    uint64_t cut = x.all[x.n - 15].transition;
    wt_begin(&x, 12);
    wt_append(&x, 10);
    wt_discard(&x, cut);
    wt_append(&x, 7);                 /* still in 12, the open one */
    wt_begin(&x, 13);
    wt_append(&x, 3);
    CHECK_OK(mh_writer_close(x.w));
    check_windows(dir, &x);

    /* reopen: ids keep increasing over the store */
    CHECK_OK(mh_writer_open(dir, MH_APPEND, &o, &x.w));
    x.open = 0;
    CHECK_RC(mh_writer_window_begin(x.w, 13), MH_EORDER);
    CHECK_RC(mh_writer_window_begin(x.w, 2), MH_EORDER);
    wt_append(&x, 4);
    wt_begin(&x, 20);
    wt_append(&x, 500);
    CHECK_OK(mh_writer_close(x.w));
    check_windows(dir, &x);
    printf("windows: %zu windows over %zu accesses read back\n", x.nwin, x.n);
    free(x.all);
}

int main(void) {
    char root[4096];
    tu_mkdtemp(root, sizeof root, "streams-writer");
    test_streams(root);
    test_windows(root);
    tu_rmtree(root);
    printf("streams_writer: ok\n");
    return 0;
}
