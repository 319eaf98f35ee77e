/*
 * bench_query.c - the benchmark's query classes: drawn from the trace so
 * they hit, run on every implementation, answers compared one by one, and
 * latencies summarised.
 */
#include "bench.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "oracle.h" /* tests/oracle_lib */

/* The brute-force answer over the base trace (tests/oracle_lib). */
static int base_query(const mhb_oracle_ctx *o, const mh_query *q, mh_access *out,
                      size_t max, size_t *n)
{
    oracle_query oq;
    oracle_query_wrap(&oq, q);
    /* the 1.2 filters the bench uses, set here whether or not the wrap
     * already carries them */
    if (q->streams != NULL) {
        oq.streams = q->streams;
        oq.nstreams = q->nstreams;
    }
    if (q->filter & MH_FILTER_PC) {
        oq.has_pc = 1;
        oq.pc_first = q->pc_first;
        oq.pc_last = q->pc_last;
    }
    return oracle_run(o->trace, o->n, &oq, out, max, n);
}

/* Copy r's view of base answers: ids and transitions moved into copy r. */
static void to_copy(const mhb_oracle_ctx *o, uint64_t r, mh_access *a, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        a[i].id += r * o->n;
        a[i].transition += r * o->shift;
    }
}

int mhb_oracle_run(void *h, const mh_query *q, mh_access *out, size_t max,
                   size_t *n)
{
    const mhb_oracle_ctx *o = h;
    if (o->reps <= 1 || o->n == 0)
        return base_query(o, q, out, max, n);
    /* the copy the start falls in, and the start inside the base trace */
    mh_query sub = *q;
    uint64_t c;
    if (q->start_kind == MH_FROM_ID) {
        c = q->start / o->n;
        if (c >= o->reps)
            c = o->reps - 1;
        sub.start = q->start - c * o->n;
    } else {
        uint64_t first = o->trace[0].transition;
        c = q->start < first ? 0 : (q->start - first) / o->shift;
        if (c >= o->reps)
            c = o->reps - 1;
        sub.start = q->start - c * o->shift;
    }
    *n = 0;
    int rc = base_query(o, &sub, out, max, n);
    if (rc != MH_OK)
        return rc;
    to_copy(o, c, out, *n);
    /* then whole copies, each answering as the base does from its end */
    int fwd = q->direction == MH_FORWARD;
    if (*n == max || (fwd ? c + 1 >= o->reps : c == 0))
        return MH_OK;
    mh_query whole = *q;
    whole.start_kind = MH_FROM_TRANSITION;
    whole.start = fwd ? 0 : UINT64_MAX;
    mh_access *rest = out + *n;
    size_t k = 0;
    rc = base_query(o, &whole, rest, max - *n, &k);
    if (rc != MH_OK || k == 0)
        return rc;
    mh_access *copy = malloc(k * sizeof *copy);
    if (copy == NULL)
        return MH_ENOMEM;
    memcpy(copy, rest, k * sizeof *copy);
    for (uint64_t r = fwd ? c + 1 : c - 1; *n < max; r = fwd ? r + 1 : r - 1) {
        size_t take = max - *n < k ? max - *n : k;
        memcpy(out + *n, copy, take * sizeof *copy);
        to_copy(o, r, out + *n, take);
        *n += take;
        if (fwd ? r + 1 >= o->reps : r == 0)
            break;
    }
    free(copy);
    return MH_OK;
}

void mhb_classes_repeat(mhb_class *c, size_t count, uint64_t reps, uint64_t shift,
                        uint64_t seed)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t rng = seed ^ (0x2545F4914F6CDD1Dull * (i + 1));
        for (size_t j = 0; j < c[i].nq; j++)
            if (c[i].q[j].start_kind == MH_FROM_TRANSITION)
                c[i].q[j].start += (mhb_mix(&rng) % reps) * shift;
    }
}

static const char *const range_name[MHB_RANGES] = {"point", "page", "1MiB", "whole"};
static const uint64_t range_size[MHB_RANGES] = {8, 4096, 1u << 20, 0};

static const char *ops_name(unsigned ops)
{
    return ops == MH_OPS_READ ? "read" : ops == MH_OPS_WRITE ? "write" : "rw";
}

/* Appends to c[0 .. plain) the one-stream twin of each class: c[plain + i]
 * restricts c[i]'s queries, each to a stream drawn uniformly. */
static int add_stream_twins(mhb_class *c, size_t plain, const uint32_t *streams,
                            size_t nstreams, uint64_t seed)
{
    for (size_t i = 0; i < plain; i++) {
        mhb_class *x = &c[plain + i];
        *x = c[i];
        x->base = i;
        snprintf(x->name, sizeof x->name, "%s 1str", c[i].name);
        x->q = malloc((c[i].nq ? c[i].nq : 1) * sizeof *x->q);
        x->sid = malloc((c[i].nq ? c[i].nq : 1) * sizeof *x->sid);
        if (x->q == NULL || x->sid == NULL)
            return MH_ENOMEM;
        uint64_t rng = seed ^ (0x9E3779B97F4A7C15ull * (i + 1));
        for (size_t j = 0; j < x->nq; j++) {
            x->q[j] = c[i].q[j];
            x->sid[j] = streams[mhb_mix(&rng) % nstreams];
            x->q[j].streams = &x->sid[j];
            x->q[j].nstreams = 1;
        }
    }
    return MH_OK;
}

int mhb_classes_make(const mh_access *trace, size_t n, size_t per_class,
                     uint64_t seed, int dist, const uint32_t *streams,
                     size_t nstreams, mhb_class **out, size_t *count)
{
    static const size_t maxes[3] = {1, 10, 1000};
    static const unsigned opsets[3] = {MH_OPS_READ, MH_OPS_WRITE, MH_OPS_RW};
    size_t nnever = dist == MHB_DIST_USER ? 2 * 2 * 2 : 0;
    size_t plain = MHB_RANGES * 3 * 2 * 3 + 3 * 2 + nnever;
    size_t total = nstreams > 1 ? 2 * plain : plain;
    *out = NULL;
    *count = 0;
    mhb_trace_index ix;
    if (dist == MHB_DIST_USER && mhb_trace_index_make(trace, n, &ix) != MH_OK)
        return MH_ENOMEM;
    mhb_class *c = calloc(total, sizeof *c);
    if (c == NULL) {
        if (dist == MHB_DIST_USER)
            mhb_trace_index_free(&ix);
        return MH_ENOMEM;
    }
    size_t k = 0;
    for (int r = 0; r < MHB_RANGES; r++)
        for (int m = 0; m < 3; m++)
            for (unsigned d = 0; d < 2; d++)
                for (int o = 0; o < 3; o++) {
                    mhb_class *x = &c[k++];
                    x->range = r;
                    x->max = maxes[m];
                    x->dir = d;
                    x->ops = opsets[o];
                    x->pages = 1;
                    snprintf(x->name, sizeof x->name, "%s max%zu %s %s",
                             range_name[r], maxes[m], d ? "bwd" : "fwd",
                             ops_name(opsets[o]));
                }
    for (int r = MHB_PAGE; r < MHB_RANGES; r++)
        for (unsigned d = 0; d < 2; d++) {
            mhb_class *x = &c[k++];
            x->range = r;
            x->max = MHB_CHAIN_MAX;
            x->dir = d;
            x->ops = MH_OPS_RW;
            x->pages = MHB_CHAIN_PAGES;
            snprintf(x->name, sizeof x->name, "%s resume %ux%u %s rw",
                     range_name[r], MHB_CHAIN_PAGES, MHB_CHAIN_MAX,
                     d ? "bwd" : "fwd");
        }
    /* never accessed: "what touched this (unused) address?" answers nothing,
     * and must say so without walking the whole store */
    for (int r = MHB_POINT; r <= MHB_PAGE && nnever; r++)
        for (int m = 0; m < 2; m++)
            for (unsigned d = 0; d < 2; d++) {
                mhb_class *x = &c[k++];
                x->range = r;
                x->max = maxes[m];
                x->dir = d;
                x->ops = MH_OPS_RW;
                x->pages = 1;
                x->never = 1;
                snprintf(x->name, sizeof x->name, "never %s max%zu %s rw",
                         range_name[r], maxes[m], d ? "bwd" : "fwd");
            }
    for (size_t i = 0; i < plain; i++) {
        mhb_class *x = &c[i];
        x->nq = n == 0 ? 0 : per_class;
        x->q = calloc(x->nq ? x->nq : 1, sizeof *x->q);
        if (x->q == NULL) {
            if (dist == MHB_DIST_USER)
                mhb_trace_index_free(&ix);
            mhb_classes_free(c, total);
            return MH_ENOMEM;
        }
        uint64_t rng = seed ^ (0x5851F42D4C957F2Dull * (i + 1));
        for (size_t j = 0; j < x->nq; j++) {
            if (x->never) {
                if (!mhb_draw_never(&ix, x->ops, x->dir, range_size[x->range], &rng,
                                    &x->q[j])) {
                    x->nq = j; /* the trace leaves no such range */
                    break;
                }
            } else if (dist == MHB_DIST_USER) {
                mhb_draw_user(trace, n, &ix, x->ops, x->dir, range_size[x->range],
                              &rng, &x->q[j]);
            } else {
                mhb_draw_query(trace, n, x->ops, x->dir, range_size[x->range], &rng,
                               &x->q[j]);
            }
        }
    }
    if (dist == MHB_DIST_USER)
        mhb_trace_index_free(&ix);
    if (total > plain && add_stream_twins(c, plain, streams, nstreams, seed) != MH_OK) {
        mhb_classes_free(c, total);
        return MH_ENOMEM;
    }
    *out = c;
    *count = total;
    return MH_OK;
}

void mhb_classes_free(mhb_class *c, size_t count)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < count; i++) {
        free(c[i].q);
        free(c[i].sid);
    }
    free(c);
}

/* 1 when name contains one of list's comma-separated substrings (a part
 * longer than a class name cannot be in one) */
static int name_listed(const char *name, const char *list)
{
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char part[sizeof ((mhb_class *)0)->name];
        if (len > 0 && len < sizeof part) {
            memcpy(part, p, len);
            part[len] = '\0';
            if (strstr(name, part) != NULL)
                return 1;
        }
        p += len + (e != NULL);
    }
    return 0;
}

size_t mhb_classes_filter(mhb_class **c, size_t *count, const char *list)
{
    mhb_class *x = *c;
    size_t n = *count, kept = 0;
    unsigned char *keep = calloc(n ? n : 1, 1);
    size_t *to = calloc(n ? n : 1, sizeof *to);
    if (!keep || !to) {
        free(keep);
        free(to);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (name_listed(x[i].name, list)) {
            keep[i] = 1;
            if (x[i].sid != NULL && x[i].base < n)
                keep[x[i].base] = 1;
        }
    for (size_t i = 0; i < n; i++)
        if (keep[i])
            to[i] = kept++;
    if (kept == 0) {
        free(keep);
        free(to);
        return 0;
    }
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i]) {
            free(x[i].q);
            free(x[i].sid);
            continue;
        }
        mhb_class k = x[i];
        if (k.sid != NULL && k.base < n)
            k.base = to[k.base];
        x[j++] = k;
    }
    *count = kept;
    free(keep);
    free(to);
    return kept;
}

/* One query, or a chain: each next page resumes after (or before) the last
 * id returned, as a client paging through results does. */
int mhb_run_one(const mhb_impl *im, const mhb_class *c, size_t i,
                mh_access *out, size_t *n)
{
    mh_query q = c->q[i];
    size_t total = 0;
    *n = 0;
    for (unsigned p = 0; p < c->pages; p++) {
        size_t k = 0;
        int rc = im->run(im->h, &q, out + total, c->max, &k);
        if (rc != MH_OK)
            return rc;
        total += k;
        if (k < c->max)
            break;
        q.start_kind = MH_FROM_ID;
        q.start = out[total - 1].id;
    }
    *n = total;
    return MH_OK;
}

static void print_access(const char *who, const mh_access *a)
{
    fprintf(stderr,
            "    %-8s id %" PRIu64 " t %" PRIu64 " phys 0x%" PRIx64
            " size %u op %u linear %s0x%" PRIx64 " stream %u pc %s0x%" PRIx64 "\n",
            who, a->id, a->transition, a->physical, a->size, a->op,
            a->has_linear ? "" : "(absent) ", a->linear, a->stream,
            a->has_pc ? "" : "(absent) ", a->pc);
}

/* What oracle_equal may not look at (it was written for format 1.x). */
static int same_stream_pc(const mh_access *a, const mh_access *b)
{
    return a->stream == b->stream && a->has_pc == b->has_pc &&
           (!a->has_pc || a->pc == b->pc);
}

/* 1 when ref and got are equal: with full, stream and pc included; without,
 * they are ignored on both sides (SQLite stores neither). */
static int answers_equal(const mh_access *ref, size_t nref, const mh_access *got,
                         size_t ngot, int full, size_t *at)
{
    if (full) {
        if (!oracle_equal(ref, nref, got, ngot, at))
            return 0;
        for (size_t k = 0; k < nref; k++)
            if (!same_stream_pc(&ref[k], &got[k])) {
                *at = k;
                return 0;
            }
        return 1;
    }
    size_t m = nref < ngot ? nref : ngot;
    for (size_t k = 0; k < m; k++) {
        mh_access x = ref[k], y = got[k];
        x.stream = y.stream = 0;
        x.has_pc = y.has_pc = 0;
        x.pc = y.pc = 0;
        if (!oracle_equal(&x, 1, &y, 1, NULL)) {
            *at = k;
            return 0;
        }
    }
    *at = m;
    return nref == ngot;
}

int mhb_compare(const mhb_class *c, size_t i, const char *ref_name,
                const mh_access *ref, size_t nref, const char *name,
                const mh_access *got, size_t ngot, int full)
{
    size_t at = 0;
    if (answers_equal(ref, nref, got, ngot, full, &at))
        return 1;
    const mh_query *q = &c->q[i];
    fprintf(stderr,
            "MISMATCH %s query %zu (%s from %" PRIu64 ", [0x%" PRIx64 ", 0x%" PRIx64
            "], ops %u, max %zu x %u pages): %s gives %zu accesses, %s %zu; "
            "first difference at %zu\n",
            c->name, i, q->direction ? "backward" : "forward", q->start,
            q->addr_first, q->addr_last, q->ops, c->max, c->pages, ref_name, nref,
            name, ngot, at);
    if (at < nref)
        print_access(ref_name, &ref[at]);
    if (at < ngot)
        print_access(name, &got[at]);
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Nearest-rank percentiles. */
void mhb_summarise(double *us, size_t n, mhb_lat *out)
{
    memset(out, 0, sizeof *out);
    out->p99_rest = out->p99_calm = -1;
    out->fault_asks = out->minflt = -1;
    out->count = n;
    if (n == 0)
        return;
    qsort(us, n, sizeof *us, cmp_double);
    size_t i50 = (size_t)ceil(0.50 * (double)n) - 1;
    size_t i99 = (size_t)ceil(0.99 * (double)n) - 1;
    out->p50 = us[i50];
    out->p99 = us[i99];
    out->max = us[n - 1];
}

int mhb_classes_bench(mhb_class *c, size_t count, const mhb_impl *impl,
                      size_t nimpl, int timed, int by_impl, int faults,
                      const mhb_asks *asks, double budget, uint64_t *compared,
                      uint64_t *mismatches)
{
    int rc = MH_OK;
    size_t maxq = 0;
    for (size_t k = 0; k < count; k++)
        if (c[k].nq > maxq)
            maxq = c[k].nq;
    mh_access *ref = malloc((maxq ? maxq : 1) * MHB_OUT_CAP * sizeof *ref);
    size_t *nref = calloc(maxq ? maxq : 1, sizeof *nref);
    mh_access *got = malloc(MHB_OUT_CAP * sizeof *got);
    size_t passes = timed > 0 ? (size_t)timed : 1;
    double *us = calloc((maxq ? maxq : 1) * passes * (nimpl ? nimpl : 1), sizeof *us);
    double *rest = calloc((maxq ? maxq : 1) * passes, sizeof *rest);
    /* minor page faults of each timed ask, as us */
    long *mf = calloc((maxq ? maxq : 1) * passes * (nimpl ? nimpl : 1), sizeof *mf);
    /* the warm pass's times, by implementation: the first asks */
    double *fus = calloc((maxq ? maxq : 1) * (nimpl ? nimpl : 1), sizeof *fus);
    /* the answers of the untimed implementations (the brute-force scan),
     * asked before the reference's warm pass: a scan reads the whole
     * trace, and what it leaves in the caches and TLBs must meet a warm
     * pass, not the timed pass after it (with it last, the first timed
     * pass of the 35 M-access sort store had median 3.7 us and max 124 for
     * point max1 bwd write, against 1.6 and 5.6 without the scan) */
    size_t nchk = 0, pcap = 1; /* checkers; room for pcap answers each */
    for (size_t m = 1; m < nimpl; m++)
        if (impl[m].slot < 0) {
            nchk++;
            size_t k = impl[m].limit < maxq ? impl[m].limit : maxq;
            if (k > pcap)
                pcap = k;
        }
    mh_access *pre = malloc((nchk ? nchk : 1) * pcap * MHB_OUT_CAP * sizeof *pre);
    size_t *npre = calloc((nchk ? nchk : 1) * pcap, sizeof *npre);
    if (!ref || !nref || !got || !us || !fus || !rest || !mf || !pre || !npre) {
        rc = MH_ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < count && rc == MH_OK; k++) {
        mhb_class *x = &c[k];
        for (size_t m = 0; m < MHB_SLOTS; m++)
            x->majflt_first[m] = x->majflt[m] = -1;
        x->mh_decoded_per_ask = -1;
        /* warm pass: the reference's answers, then everyone else's
         * compared; each run timed, its question's first ask */
        x->nrun = x->nq;
        for (size_t m = 1, j = 0; m < nimpl && rc == MH_OK; m++) {
            if (impl[m].slot >= 0)
                continue;
            if (x->sid == NULL || impl[m].full)
                for (size_t i = 0; i < x->nq && i < impl[m].limit && rc == MH_OK; i++)
                    rc = mhb_run_one(&impl[m], x, i, pre + (j * pcap + i) * MHB_OUT_CAP,
                                     &npre[j * pcap + i]);
            j++;
        }
        long f0 = mhb_major_faults();
        double t0 = mhb_now();
        size_t nfirst[MHB_SLOTS + 1] = {0};
        for (size_t i = 0; i < x->nrun && rc == MH_OK; i++) {
            double t1 = mhb_now();
            rc = mhb_run_one(&impl[0], x, i, ref + i * MHB_OUT_CAP, &nref[i]);
            fus[i] = (mhb_now() - t1) * 1e6;
            nfirst[0] = i + 1;
            if (mhb_now() - t0 > budget)
                x->nrun = i + 1;
        }
        if (impl[0].slot >= 0 && f0 >= 0)
            x->majflt_first[impl[0].slot] = mhb_major_faults() - f0;
        /* a never-accessed range is proven untouched when drawn: an answer
         * there is a wrong answer, whoever gave it */
        for (size_t i = 0; x->never && i < x->nrun; i++)
            if (nref[i] != 0) {
                fprintf(stderr, "MISMATCH %s query %zu: %s returns %zu accesses on "
                                "[0x%" PRIx64 ", 0x%" PRIx64 "], which the trace never "
                                "touched\n",
                        x->name, i, impl[0].name, nref[i], x->q[i].addr_first,
                        x->q[i].addr_last);
                (*mismatches)++;
            }
        for (size_t m = 1, j = 0; m < nimpl && rc == MH_OK; m++) {
            t0 = mhb_now();
            const int pre_asked = impl[m].slot < 0; /* its answers in pre, slot j */
            j += pre_asked;
            if (x->sid != NULL && !impl[m].full)
                continue; /* SQLite cannot filter by stream */
            long g0 = mhb_major_faults();
            for (size_t i = 0; i < x->nrun && i < impl[m].limit && rc == MH_OK; i++) {
                size_t ng = 0;
                const mh_access *ga = got;
                if (pre_asked) {
                    ga = pre + ((j - 1) * pcap + i) * MHB_OUT_CAP;
                    ng = npre[(j - 1) * pcap + i];
                } else {
                    double t1 = mhb_now();
                    rc = mhb_run_one(&impl[m], x, i, got, &ng);
                    fus[m * maxq + i] = (mhb_now() - t1) * 1e6;
                }
                if (m <= MHB_SLOTS)
                    nfirst[m] = i + 1;
                if (rc != MH_OK)
                    break;
                (*compared)++;
                if (!mhb_compare(x, i, impl[0].name, ref + i * MHB_OUT_CAP, nref[i],
                             impl[m].name, ga, ng, impl[m].full))
                    (*mismatches)++;
                if (!pre_asked && mhb_now() - t0 > budget)
                    x->nrun = i + 1;
            }
            if (impl[m].slot >= 0 && g0 >= 0)
                x->majflt_first[impl[m].slot] = mhb_major_faults() - g0;
        }
        /* first asks of the x->nrun queries the timed pass runs again (an
         * implementation that ran fewer, by its limit, has none) */
        for (size_t m = 0; m < nimpl && m <= MHB_SLOTS && timed && rc == MH_OK; m++)
            if (impl[m].slot >= 0 && nfirst[m] >= x->nrun && x->nrun > 0) {
                mhb_summarise(fus + m * maxq, x->nrun, &x->first[impl[m].slot]);
                x->has_first[impl[m].slot] = 1;
            }
        double results = 0;
        for (size_t i = 0; i < x->nrun; i++)
            results += (double)nref[i];
        x->mean_results = x->nrun ? results / (double)x->nrun : 0;
        if (!timed || rc != MH_OK)
            continue;
        /* timed passes, each implementation warm from the pass above;
         * the implementations take turns pass after pass, so each pass of
         * one finds the CPU caches as the others left them, and a class's
         * p99 is read from passes x nrun asks, not from its 2nd slowest of
         * nrun (one machine stall of 100 us in a pass was a class's p99) */
        long flt[MHB_SLOTS] = {0};
        uint64_t mh_dec = 0, mh_asks = 0;
        /* the passes in their order: by_impl runs each implementation's
         * passes back to back instead (--turns impl), after one untimed
         * pass of its own (step p == passes), so that every timed pass of
         * it follows its own questions: what "warm" means to a user asking
         * one tool, where taking turns measures each after the others */
        const size_t steps = by_impl ? nimpl * (passes + 1) : passes * nimpl;
        for (size_t st = 0; st < steps && rc == MH_OK; st++) {
            size_t m, p;
            if (by_impl) { /* per implementation: the untimed pass, then 0 .. */
                m = st / (passes + 1);
                p = st % (passes + 1) == 0 ? passes : st % (passes + 1) - 1;
            } else {
                m = st % nimpl;
                p = st / nimpl;
            }
            if (impl[m].slot < 0 || (x->sid != NULL && !impl[m].full))
                continue;
            if (p == passes) { /* by_impl's untimed pass, answers unchecked */
                for (size_t i = 0; i < x->nrun && rc == MH_OK; i++) {
                    size_t ng = 0;
                    rc = mhb_run_one(&impl[m], x, i, got, &ng);
                }
                continue;
            }
            long g0 = mhb_major_faults();
            double *um = us + m * maxq * passes + p * x->nrun;
            long *fm = mf + m * maxq * passes + p * x->nrun;
            for (size_t i = 0; i < x->nrun && rc == MH_OK; i++) {
                size_t ng = 0;
                long m0 = faults ? mhb_minor_faults() : -1;
                uint64_t d0 = impl[m].decoded ? impl[m].decoded(impl[m].h) : 0;
                double t1 = mhb_now();
                rc = mhb_run_one(&impl[m], x, i, got, &ng);
                um[i] = (mhb_now() - t1) * 1e6;
                long m1 = faults ? mhb_minor_faults() : -1;
                fm[i] = m0 < 0 || m1 < 0 ? -1 : m1 - m0;
                if (rc != MH_OK)
                    break;
                long long dec = impl[m].decoded
                                    ? (long long)(impl[m].decoded(impl[m].h) - d0)
                                    : -1;
                if (impl[m].slot == MHB_MH && dec >= 0) {
                    mh_dec += (uint64_t)dec;
                    mh_asks++;
                }
                if (asks) {
                    const mh_query *aq = &x->q[i];
                    fprintf(asks->f,
                            "\"%s\",\"%s\",%s,%zu,%zu,%.3f,%ld,%lld,%s,%" PRIu64
                            ",%s,0x%" PRIx64 ",0x%" PRIx64 ",%u,%zu\n",
                            asks->workload, x->name, impl[m].name, p, i, um[i], fm[i],
                            dec, aq->start_kind == MH_FROM_ID ? "id" : "transition",
                            aq->start, aq->direction == MH_FORWARD ? "fwd" : "bwd",
                            aq->addr_first, aq->addr_last, aq->ops, ng);
                }
                if (m > 0)
                    (*compared)++;
                if (!mhb_compare(x, i, impl[0].name, ref + i * MHB_OUT_CAP, nref[i],
                             impl[m].name, got, ng, impl[m].full))
                    (*mismatches)++;
            }
            long g1 = mhb_major_faults();
            if (g0 < 0 || g1 < 0)
                flt[impl[m].slot] = -1;
            else if (flt[impl[m].slot] >= 0)
                flt[impl[m].slot] += g1 - g0;
        }
        if (mh_asks)
            x->mh_decoded_per_ask = (double)mh_dec / (double)mh_asks;
        for (size_t m = 0; m < nimpl && rc == MH_OK; m++) {
            if (impl[m].slot < 0 || (x->sid != NULL && !impl[m].full))
                continue;
            /* p99_rest: the asks of every pass but its first, copied out */
            double *um = us + m * maxq * passes;
            const long *fm = mf + m * maxq * passes;
            size_t nrest = 0, ncalm = 0;
            long nflt = faults ? 0 : -1, fault_asks = 0; /* -1: not measured */
            for (size_t p = 0; p < passes; p++)
                for (size_t i = 1; i < x->nrun; i++)
                    rest[nrest++] = um[p * x->nrun + i];
            /* the asks without a minor fault, in the same array after the
             * rest's p99 is read */
            mhb_lat lr = {0}, lc = {0};
            if (nrest)
                mhb_summarise(rest, nrest, &lr);
            for (size_t j = 0; faults && j < x->nrun * passes; j++) {
                if (fm[j] < 0) {
                    nflt = -1;
                    break;
                }
                if (fm[j] > 0) {
                    nflt += fm[j];
                    fault_asks++;
                } else {
                    rest[ncalm++] = um[j];
                }
            }
            if (nflt >= 0 && ncalm)
                mhb_summarise(rest, ncalm, &lc);
            mhb_summarise(um, x->nrun * passes, &x->lat[impl[m].slot]);
            if (nrest)
                x->lat[impl[m].slot].p99_rest = lr.p99;
            if (nflt >= 0) {
                x->lat[impl[m].slot].minflt = nflt;
                x->lat[impl[m].slot].fault_asks = fault_asks;
                x->lat[impl[m].slot].p99_calm = ncalm ? lc.p99 : -1;
            }
            x->has_lat[impl[m].slot] = 1;
            x->majflt[impl[m].slot] = flt[impl[m].slot];
        }
    }
out:
    if (rc != MH_OK)
        fprintf(stderr, "mh_bench: query failed: %s\n", mh_strerror(rc));
    free(ref);
    free(nref);
    free(got);
    free(us);
    free(rest);
    free(mf);
    free(fus);
    free(pre);
    free(npre);
    return rc;
}

int mhb_classes_run_once(const mhb_class *c, size_t count, const mhb_impl *impl,
                         double budget)
{
    mh_access *got = malloc(MHB_OUT_CAP * sizeof *got);
    if (got == NULL)
        return MH_ENOMEM;
    int rc = MH_OK;
    for (size_t k = 0; k < count && rc == MH_OK; k++) {
        double t0 = mhb_now();
        if (c[k].sid != NULL && !impl->full)
            continue;
        for (size_t i = 0; i < c[k].nq && rc == MH_OK; i++) {
            size_t n = 0;
            rc = mhb_run_one(impl, &c[k], i, got, &n);
            if (mhb_now() - t0 > budget)
                break;
        }
    }
    free(got);
    return rc;
}
