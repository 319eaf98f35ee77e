/*
 * oracle.c - brute-force half-axis query (see oracle.h). Linear in the trace
 * on purpose: nothing clever that could share a bug with either store.
 */
#include "oracle.h"

#include <string.h>

static int matches(const mh_access *a, const mh_query *q)
{
    if (!(q->ops & (1u << a->op)))
        return 0;
    uint64_t last = a->physical + (a->size - 1);
    return a->physical <= q->addr_last && last >= q->addr_first;
}

/* Within q's end bound (memhist.h: inclusive, in query order)? */
static int within_end(const mh_query *q, uint64_t t, uint64_t id)
{
    if (q->end_kind == MH_END_NONE)
        return 1;
    uint64_t v = q->end_kind == MH_END_TRANSITION ? t : id;
    return q->direction == MH_FORWARD ? v <= q->end : v >= q->end;
}

static void emit(const mh_access *a, size_t id, mh_access *out, size_t *got)
{
    out[*got] = *a;
    out[*got].id = id;
    if (!out[*got].has_linear)
        out[*got].linear = 0;
    /* what a format 1.x store returns for the columns it does not have */
    out[*got].pc = 0;
    out[*got].has_pc = 0;
    out[*got].stream = 0;
    memset(out[*got].reserved, 0, sizeof out[*got].reserved);
    (*got)++;
}

int mhb_oracle_query(const mh_access *trace, size_t count, const mh_query *q,
                     mh_access *out, size_t max, size_t *n)
{
    *n = 0;
    if (q->addr_first > q->addr_last || q->ops == 0 || (q->ops & ~MH_OPS_ALL) ||
        q->start_kind > MH_FROM_ID || q->direction > MH_BACKWARD ||
        q->end_kind > MH_END_ID || q->reserved != 0 || (out == NULL && max > 0))
        return MH_EINVAL;
    size_t got = 0;
    if (q->direction == MH_FORWARD) {
        for (size_t i = 0; i < count && got < max; i++) {
            int after = q->start_kind == MH_FROM_TRANSITION
                            ? trace[i].transition >= q->start
                            : (uint64_t)i > q->start;
            if (after && within_end(q, trace[i].transition, i) &&
                matches(&trace[i], q))
                emit(&trace[i], i, out, &got);
        }
    } else {
        for (size_t i = count; i-- > 0 && got < max;) {
            int before = q->start_kind == MH_FROM_TRANSITION
                             ? trace[i].transition <= q->start
                             : (uint64_t)i < q->start;
            if (before && within_end(q, trace[i].transition, i) &&
                matches(&trace[i], q))
                emit(&trace[i], i, out, &got);
        }
    }
    *n = got;
    return MH_OK;
}

static int same(const mh_access *a, const mh_access *b)
{
    if (a->id != b->id || a->transition != b->transition ||
        a->physical != b->physical || a->size != b->size || a->op != b->op ||
        a->has_linear != b->has_linear)
        return 0;
    return !a->has_linear || a->linear == b->linear;
}

int mhb_results_equal(const mh_access *a, size_t na, const mh_access *b,
                      size_t nb, size_t *at)
{
    size_t m = na < nb ? na : nb;
    for (size_t i = 0; i < m; i++) {
        if (!same(&a[i], &b[i])) {
            *at = i;
            return 0;
        }
    }
    *at = m;
    return na == nb;
}
