/*
 * oracle.c - the brute-force query (see oracle.h). match_at is the
 * definition, one condition per line of memhist.h's query semantics; the
 * bounds oracle_run computes first only skip accesses match_at would refuse
 * (transitions and ids only grow along the trace), so they can make it
 * faster but never change an answer.
 */
#include "oracle.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void oracle_query_wrap(oracle_query *oq, const mh_query *q) {
    memset(oq, 0, sizeof *oq);
    oq->q = *q;
}

int oracle_query_from(oracle_query *oq, const mh_query *q, const oracle_window *w,
                      size_t nw) {
    oracle_query_wrap(oq, q);
    if ((q->streams == NULL) != (q->nstreams == 0) || q->nstreams > 65536u ||
        (q->filter & ~(MH_FILTER_PC | MH_FILTER_WINDOW)) ||
        ((q->filter & MH_FILTER_PC) && q->pc_first > q->pc_last))
        return MH_EINVAL;
    oq->streams = q->streams;
    oq->nstreams = q->nstreams;
    if (q->filter & MH_FILTER_PC) {
        oq->has_pc = 1;
        oq->pc_first = q->pc_first;
        oq->pc_last = q->pc_last;
    }
    if (q->filter & MH_FILTER_WINDOW) {
        size_t i = 0;
        while (i < nw && w[i].window != q->window)
            i++;
        if (i == nw)
            return MH_ENOTFOUND;
        oq->has_window = 1;
        if (w[i].count == 0) {
            /* no access of a trace has id UINT64_MAX: nothing matches */
            oq->id_first = oq->id_last = UINT64_MAX;
        } else {
            oq->id_first = w[i].id_first;
            oq->id_last = w[i].id_first + w[i].count - 1;
        }
    }
    return MH_OK;
}

int oracle_query_check(const oracle_query *oq) {
    const mh_query *q = &oq->q;
    if (q->addr_first > q->addr_last || q->ops == 0 || (q->ops & ~MH_OPS_ALL) ||
        q->start_kind > MH_FROM_ID || q->direction > MH_BACKWARD ||
        q->end_kind > MH_END_ID || q->reserved != 0)
        return MH_EINVAL;
    if ((oq->has_pc && oq->pc_first > oq->pc_last) ||
        (oq->has_window && oq->id_first > oq->id_last) ||
        (oq->streams == NULL && oq->nstreams > 0))
        return MH_EINVAL;
    return MH_OK;
}

static int in_streams(const oracle_query *oq, uint32_t stream) {
    if (oq->streams == NULL)
        return 1;
    for (size_t i = 0; i < oq->nstreams; i++)
        if (oq->streams[i] == stream)
            return 1;
    return 0;
}

/* Is a, taken as the access with id id, in the answer of oq? */
static int match_at(const oracle_query *oq, const mh_access *a, uint64_t id) {
    const mh_query *q = &oq->q;
    int fwd = q->direction == MH_FORWARD;
    if (a->op >= MH_OP_COUNT || !((q->ops >> a->op) & 1u))
        return 0;
    /* overlap of [physical, last] with [A, B]; the writer refuses a wrap */
    uint64_t last = a->physical + (uint64_t)(a->size - 1u);
    if (a->physical > q->addr_last || last < q->addr_first)
        return 0;
    /* the start: a transition T is inclusive, an id X exclusive */
    if (q->start_kind == MH_FROM_TRANSITION) {
        if (fwd ? a->transition < q->start : a->transition > q->start)
            return 0;
    } else if (fwd ? id <= q->start : id >= q->start) {
        return 0;
    }
    /* the end bound, inclusive, in query order */
    if (q->end_kind != MH_END_NONE) {
        uint64_t v = q->end_kind == MH_END_TRANSITION ? a->transition : id;
        if (fwd ? v > q->end : v < q->end)
            return 0;
    }
    if (!in_streams(oq, a->stream))
        return 0;
    if (oq->has_pc && (!a->has_pc || a->pc < oq->pc_first || a->pc > oq->pc_last))
        return 0;
    if (oq->has_window && (id < oq->id_first || id > oq->id_last))
        return 0;
    return 1;
}

int oracle_matches(const oracle_query *oq, const mh_access *a) {
    return match_at(oq, a, a->id);
}

/* First index whose transition is > t (below = 0) or >= t (below = 1). */
static size_t bound_t(const mh_access *all, size_t n, uint64_t t, int below) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (below ? all[mid].transition < t : all[mid].transition <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t oracle_lower_bound(const mh_access *all, size_t n, uint64_t t) {
    return bound_t(all, n, t, 1);
}

size_t oracle_upper_bound(const mh_access *all, size_t n, uint64_t t) {
    return bound_t(all, n, t, 0);
}

/* min(v, n) as an index. */
static size_t clamp(uint64_t v, size_t n) {
    return v < (uint64_t)n ? (size_t)v : n;
}

/* The ids [*lo, *hi) outside of which match_at refuses every access: the
 * start, the end bound and the window, each on its own axis. */
static void scan_bounds(const mh_access *all, size_t n, const oracle_query *oq,
                        size_t *lo_out, size_t *hi_out) {
    const mh_query *q = &oq->q;
    size_t lo = 0, hi = n, b;
    if (q->direction == MH_FORWARD) {
        lo = q->start_kind == MH_FROM_TRANSITION ? bound_t(all, n, q->start, 1)
             : q->start >= (uint64_t)n           ? n
                                                 : (size_t)q->start + 1;
        if (q->end_kind == MH_END_TRANSITION)
            hi = bound_t(all, n, q->end, 0);
        else if (q->end_kind == MH_END_ID)
            hi = q->end >= (uint64_t)n ? n : (size_t)q->end + 1;
    } else {
        hi = q->start_kind == MH_FROM_TRANSITION ? bound_t(all, n, q->start, 0)
                                                 : clamp(q->start, n);
        if (q->end_kind == MH_END_TRANSITION)
            lo = bound_t(all, n, q->end, 1);
        else if (q->end_kind == MH_END_ID)
            lo = clamp(q->end, n);
    }
    if (oq->has_window) {
        if ((b = clamp(oq->id_first, n)) > lo)
            lo = b;
        b = oq->id_last >= (uint64_t)n ? n : (size_t)oq->id_last + 1;
        if (b < hi)
            hi = b;
    }
    *lo_out = lo;
    *hi_out = hi > lo ? hi : lo;
}

int oracle_run(const mh_access *all, size_t n, const oracle_query *oq,
               mh_access *out, size_t max, size_t *got) {
    *got = 0;
    if (oracle_query_check(oq) != MH_OK || (out == NULL && max > 0))
        return MH_EINVAL;
    size_t lo, hi, k = 0;
    scan_bounds(all, n, oq, &lo, &hi);
    if (oq->q.direction == MH_FORWARD) {
        for (size_t i = lo; i < hi && k < max; i++)
            if (match_at(oq, &all[i], i)) {
                out[k] = all[i];
                out[k++].id = i;
            }
    } else {
        for (size_t i = hi; i-- > lo && k < max;)
            if (match_at(oq, &all[i], i)) {
                out[k] = all[i];
                out[k++].id = i;
            }
    }
    *got = k;
    return MH_OK;
}

size_t oracle_answer(const mh_access *all, size_t n, const mh_query *q,
                     mh_access *out, size_t max) {
    oracle_query oq;
    oracle_query_wrap(&oq, q);
    size_t got = 0;
    if (oracle_run(all, n, &oq, out, max, &got) != MH_OK) {
        fprintf(stderr, "oracle_answer: invalid query or output: ");
        oracle_print_query(stderr, &oq);
        fputc('\n', stderr);
        abort();
    }
    return got;
}

void oracle_resume(mh_query *q, const mh_access *last) {
    q->start_kind = MH_FROM_ID;
    q->start = last->id;
}

int oracle_same_access(const mh_access *a, const mh_access *b) {
    return a->id == b->id && a->transition == b->transition &&
           a->physical == b->physical && a->size == b->size && a->op == b->op &&
           a->has_linear == b->has_linear && (!a->has_linear || a->linear == b->linear) &&
           a->stream == b->stream && a->has_pc == b->has_pc &&
           (!a->has_pc || a->pc == b->pc);
}

int oracle_equal(const mh_access *a, size_t na, const mh_access *b, size_t nb,
                 size_t *at) {
    size_t m = na < nb ? na : nb, i = 0;
    while (i < m && oracle_same_access(&a[i], &b[i]))
        i++;
    if (at)
        *at = i;
    return i == m && na == nb;
}

int oracle_compare(const char *what, const mh_access *got, size_t ngot,
                   const mh_access *want, size_t nwant) {
    size_t at = 0;
    if (oracle_equal(got, ngot, want, nwant, &at))
        return 0;
    fprintf(stderr, "%s: got %zu accesses, want %zu, first difference at %zu:", what,
            ngot, nwant, at);
    if (at < ngot) {
        fputs(" got {", stderr);
        oracle_print_access(stderr, &got[at]);
        fputc('}', stderr);
    }
    if (at < nwant) {
        fputs(" want {", stderr);
        oracle_print_access(stderr, &want[at]);
        fputc('}', stderr);
    }
    fputc('\n', stderr);
    return -1;
}

void oracle_print_access(FILE *f, const mh_access *a) {
    fprintf(f, "id %" PRIu64 " t %" PRIu64 " phys 0x%" PRIx64 " size %" PRIu32
               " op %u linear %s0x%" PRIx64,
            a->id, a->transition, a->physical, a->size, (unsigned)a->op,
            a->has_linear ? "" : "(absent) ", a->linear);
    if (a->has_pc || a->stream)
        fprintf(f, " pc %s0x%" PRIx64 " stream %" PRIu32, a->has_pc ? "" : "(absent) ",
                a->pc, a->stream);
}

/* snprintf at *len into buf, keeping *len the full length written so far. */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*len < cap ? buf + *len : NULL, *len < cap ? cap - *len : 0, fmt, ap);
    va_end(ap);
    if (k > 0)
        *len += (size_t)k;
}

size_t oracle_format_query(char *buf, size_t cap, const oracle_query *oq) {
    const mh_query *q = &oq->q;
    size_t len = 0;
    if (cap > 0)
        buf[0] = '\0';
    put(buf, cap, &len, "%s from %s %" PRIu64,
        q->direction == MH_FORWARD ? "forward" : "backward",
        q->start_kind == MH_FROM_TRANSITION ? "transition" : "id", q->start);
    if (q->end_kind != MH_END_NONE)
        put(buf, cap, &len, " %s %" PRIu64,
            q->end_kind == MH_END_TRANSITION ? "until transition" : "to id", q->end);
    put(buf, cap, &len, " addr [0x%" PRIx64 ", 0x%" PRIx64 "] ops 0x%x", q->addr_first,
        q->addr_last, q->ops);
    if (q->direction > MH_BACKWARD || q->start_kind > MH_FROM_ID ||
        q->end_kind > MH_END_ID || q->reserved)
        put(buf, cap, &len, " (direction %u start kind %u end kind %u reserved %u)",
            q->direction, q->start_kind, q->end_kind, q->reserved);
    if (oq->streams) {
        put(buf, cap, &len, " streams {");
        for (size_t i = 0; i < oq->nstreams; i++)
            put(buf, cap, &len, "%s%" PRIu32, i ? "," : "", oq->streams[i]);
        put(buf, cap, &len, "}");
    }
    if (oq->has_pc)
        put(buf, cap, &len, " pc [0x%" PRIx64 ", 0x%" PRIx64 "]", oq->pc_first, oq->pc_last);
    if (oq->has_window)
        put(buf, cap, &len, " ids [%" PRIu64 ", %" PRIu64 "]", oq->id_first, oq->id_last);
    return len;
}

void oracle_print_query(FILE *f, const oracle_query *oq) {
    char buf[512];
    size_t len = oracle_format_query(buf, sizeof buf, oq);
    if (len < sizeof buf) {
        fputs(buf, f);
        return;
    }
    char *big = malloc(len + 1); /* a long stream list */
    if (big == NULL) {
        fprintf(f, "%s...", buf);
        return;
    }
    oracle_format_query(big, len + 1, oq);
    fputs(big, f);
    free(big);
}
