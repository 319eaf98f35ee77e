/*
 * bench_streams.c - the multi-stream side of mh_bench: declaring a trace's
 * streams, ingest through producers, and the check that the producers'
 * store equals the batch appender's.
 */
#include "bench.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>


int mhb_declare_streams(mh_writer *w, const mhb_trace *t, char *err, size_t len)
{
    for (size_t i = 0; i < t->ndecl; i++) {
        int rc = mh_writer_stream_declare(w, &t->decl[i]);
        if (rc != MH_OK) {
            char msg[MH_ERRMSG_MAX] = "";
            mh_writer_errmsg(w, msg, sizeof msg);
            snprintf(err, len, "declaring stream %u: %s: %s", t->decl[i].id,
                     mh_strerror(rc), msg);
            return rc;
        }
    }
    return MH_OK;
}

/* ---- producers ---------------------------------------------------------- */

typedef struct prod_shared {
    const mhb_trace *t;
    size_t batch;
    unsigned threads;
    mh_access **part;  /* per stream index (in t->sids order): its accesses */
    size_t *len;
    mh_producer **p;
    uint64_t *round_end; /* transition ending each round (exclusive); last UINT64_MAX */
    size_t rounds;
    int rc[64];
    char err[64][160];
} prod_shared;

typedef struct prod_arg {
    prod_shared *s;
    unsigned j;
} prod_arg;

static void *prod_thread(void *p)
{
    prod_arg *a = p;
    prod_shared *s = a->s;
    size_t ns = s->t->nsids;
    size_t *pos = calloc(ns, sizeof *pos);
    int rc = pos ? MH_OK : MH_ENOMEM;
    for (size_t r = 0; r < s->rounds && rc == MH_OK; r++)
        for (size_t i = a->j; i < ns && rc == MH_OK; i += s->threads) {
            if (s->p[i] == NULL)
                continue;
            size_t e = pos[i];
            while (e < s->len[i] && s->part[i][e].transition < s->round_end[r])
                e++;
            while (pos[i] < e && rc == MH_OK) {
                size_t k = e - pos[i] < s->batch ? e - pos[i] : s->batch;
                size_t bad = 0;
                rc = mh_producer_append_batch(s->p[i], s->part[i] + pos[i], k, &bad);
                if (rc != MH_OK)
                    snprintf(s->err[a->j], sizeof s->err[0],
                             "producer of stream %u, access %zu: %s", s->t->sids[i],
                             pos[i] + bad, mh_strerror(rc));
                pos[i] += k;
            }
            /* a stream that has ended is closed at once: open, it would
             * hold the merge back (its floor) while this thread, blocked
             * on another stream's full ring, never came back to it */
            if (rc == MH_OK && pos[i] == s->len[i]) {
                rc = mh_producer_close(s->p[i]);
                s->p[i] = NULL;
                if (rc != MH_OK)
                    snprintf(s->err[a->j], sizeof s->err[0],
                             "closing the producer of stream %u: %s", s->t->sids[i],
                             mh_strerror(rc));
            }
        }
    for (size_t i = a->j; i < ns; i += s->threads) { /* after a failure */
        mh_producer_close(s->p[i]);
        s->p[i] = NULL;
    }
    free(pos);
    s->rc[a->j] = rc;
    return NULL;
}

/* The untimed part: each stream's accesses in a buffer of its own, as a
 * tracer's thread has, and the rounds. */
int mhb_producers_split(const mhb_trace *t, size_t batch, unsigned max_threads,
                        mhb_prod **out)
{
    *out = NULL;
    prod_shared *sp = calloc(1, sizeof *sp);
    if (sp == NULL)
        return MH_ENOMEM;
    prod_shared *s = sp;
    s->t = t;
    s->batch = batch;
    size_t ns = t->nsids;
    s->threads = (unsigned)(ns < max_threads ? ns : max_threads);
    if (s->threads == 0 || s->threads > 64) {
        free(sp);
        return MH_EINVAL;
    }
    s->part = calloc(ns, sizeof *s->part);
    s->len = calloc(ns, sizeof *s->len);
    s->p = calloc(ns, sizeof *s->p);
    /* rounds of about 1024 accesses a stream: a stream's round fits the
     * producer's ring many times over, so no thread blocks on one of its
     * streams while another of them is what the merge waits for */
    size_t round = ns * 1024 < batch ? ns * 1024 : batch;
    s->rounds = t->n / round + 1;
    s->round_end = malloc(s->rounds * sizeof *s->round_end);
    uint32_t *slot = malloc(((size_t)MH_STREAM_MAX + 1) * sizeof *slot);
    int rc = (s->part && s->len && s->p && s->round_end && slot) ? MH_OK : MH_ENOMEM;
    for (size_t i = 0; i < ns && rc == MH_OK; i++)
        slot[t->sids[i]] = (uint32_t)i;
    for (size_t i = 0; i < t->n && rc == MH_OK; i++)
        s->len[slot[t->a[i].stream]]++;
    for (size_t i = 0; i < ns && rc == MH_OK; i++)
        if ((s->part[i] = malloc((s->len[i] ? s->len[i] : 1) * sizeof **s->part)) == NULL)
            rc = MH_ENOMEM;
    if (rc == MH_OK) {
        size_t *fill = calloc(ns, sizeof *fill);
        if (fill == NULL)
            rc = MH_ENOMEM;
        for (size_t i = 0; i < t->n && rc == MH_OK; i++) {
            uint32_t k = slot[t->a[i].stream];
            s->part[k][fill[k]++] = t->a[i];
        }
        free(fill);
    }
    free(slot);
    /* round r ends before the transition of merged access (r + 1) * round,
     * so accesses of one transition are in one round */
    for (size_t r = 0; r < s->rounds && rc == MH_OK; r++) {
        size_t at = (r + 1) * round;
        s->round_end[r] = at < t->n ? t->a[at].transition : UINT64_MAX;
    }
    if (rc == MH_OK)
        s->round_end[s->rounds - 1] = UINT64_MAX;
    if (rc != MH_OK) {
        mhb_producers_free(sp);
        return rc;
    }
    *out = sp;
    return MH_OK;
}

void mhb_producers_free(mhb_prod *sp)
{
    prod_shared *s = sp;
    if (s == NULL)
        return;
    for (size_t i = 0; s->part && i < s->t->nsids; i++)
        free(s->part[i]);
    free(s->part);
    free(s->len);
    free(s->p);
    free(s->round_end);
    free(s);
}

int mhb_producers_run(mhb_prod *sp, const char *path, const mh_writer_options *opt,
                      double *seconds, char *err, size_t len)
{
    prod_shared *s = sp;
    const mhb_trace *t = s->t;
    size_t ns = t->nsids;
    int rc = MH_OK;
    mh_writer_options o = *opt;
    o.reorder_window = 0;
    mh_writer *w = NULL;
    char msg[MH_ERRMSG_MAX] = "";
    rc = mh_writer_open_ex(path, MH_CREATE, &o, &w, msg, sizeof msg);
    if (rc != MH_OK)
        snprintf(err, len, "writer open: %s: %s", mh_strerror(rc), msg);
    if (rc == MH_OK)
        rc = mhb_declare_streams(w, t, err, len);
    for (size_t i = 0; i < ns && rc == MH_OK; i++) {
        rc = mh_producer_open(w, t->sids[i], &s->p[i]);
        if (rc != MH_OK)
            snprintf(err, len, "producer open, stream %u: %s", t->sids[i], mh_strerror(rc));
    }
    double t0 = mhb_now();
    if (rc == MH_OK) {
        pthread_t th[64];
        prod_arg arg[64];
        unsigned started = 0;
        for (unsigned j = 0; j < s->threads; j++) {
            arg[j] = (prod_arg){s, j};
            if (pthread_create(&th[j], NULL, prod_thread, &arg[j]) != 0) {
                rc = MH_ENOMEM;
                snprintf(err, len, "pthread_create failed");
                break;
            }
            started++;
        }
        for (unsigned j = 0; j < started; j++)
            pthread_join(th[j], NULL);
        for (unsigned j = 0; j < started && rc == MH_OK; j++)
            if (s->rc[j] != MH_OK) {
                rc = s->rc[j];
                snprintf(err, len, "%s", s->err[j]);
            }
    }
    for (size_t i = 0; i < ns; i++) { /* threads never started, or a failure */
        mh_producer_close(s->p[i]);
        s->p[i] = NULL;
    }
    if (w != NULL) {
        int rc2 = rc == MH_OK ? mh_writer_close(w) : (mh_writer_abandon(w), rc);
        if (rc == MH_OK && rc2 != MH_OK) {
            rc = rc2;
            snprintf(err, len, "writer close: %s", mh_strerror(rc));
        }
    }
    *seconds = mhb_now() - t0;
    return rc;
}

/* ---- the producers' store against the batch store ------------------------ */

static int same_access(const mh_access *x, const mh_access *y)
{
    return x->id == y->id && x->transition == y->transition &&
           x->physical == y->physical && x->size == y->size && x->op == y->op &&
           x->has_linear == y->has_linear && (!x->has_linear || x->linear == y->linear) &&
           x->stream == y->stream && x->has_pc == y->has_pc &&
           (!x->has_pc || x->pc == y->pc);
}

int mhb_same_store(const char *a, const char *b)
{
    const char *path[2] = {a, b};
    mh_reader *r[2] = {NULL, NULL};
    mh_cursor *c[2] = {NULL, NULL};
    mh_access *buf[2] = {malloc(65536 * sizeof(mh_access)), malloc(65536 * sizeof(mh_access))};
    int rc = buf[0] && buf[1] ? MH_OK : MH_ENOMEM;
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    q.addr_last = UINT64_MAX;
    for (int k = 0; k < 2 && rc == MH_OK; k++) {
        rc = mh_reader_open(path[k], &r[k]);
        if (rc == MH_OK)
            rc = mh_cursor_open(r[k], &q, &c[k]);
        if (rc != MH_OK)
            mhb_store_fail(path[k], "open for the comparison", rc, r[k]);
    }
    int same = 1;
    size_t n[2] = {0, 0}, i[2] = {0, 0};
    uint64_t at = 0;
    while (rc == MH_OK && same) {
        for (int k = 0; k < 2 && rc == MH_OK; k++)
            if (i[k] == n[k]) {
                i[k] = 0;
                rc = mh_cursor_next(c[k], buf[k], 65536, &n[k]);
            }
        if (rc != MH_OK)
            break;
        if (n[0] == 0 || n[1] == 0) {
            if (n[0] != n[1]) {
                fprintf(stderr, "mh_bench: %s ends at access %" PRIu64 ", %s does not\n",
                        path[n[0] ? 1 : 0], at, path[n[0] ? 0 : 1]);
                same = 0;
            }
            break;
        }
        for (; i[0] < n[0] && i[1] < n[1]; i[0]++, i[1]++, at++)
            if (!same_access(&buf[0][i[0]], &buf[1][i[1]])) {
                const mh_access *x = &buf[0][i[0]], *y = &buf[1][i[1]];
                fprintf(stderr, "mh_bench: access %" PRIu64 " differs: %s has t %" PRIu64
                                " stream %u phys 0x%" PRIx64 ", %s t %" PRIu64
                                " stream %u phys 0x%" PRIx64 "\n",
                        at, a, x->transition, x->stream, x->physical, b, y->transition,
                        y->stream, y->physical);
                same = 0;
                break;
            }
    }
    for (int k = 0; k < 2; k++) {
        mh_cursor_close(c[k]);
        mh_reader_close(r[k]);
        free(buf[k]);
    }
    return rc != MH_OK ? rc : same;
}
