/*
 * verify_store.c - fsck's checks of the store as a whole (SPEC.md 8): what
 * no single segment can show, because it is a rule between segments.
 *
 *  - Streams (8.1): a writer never forgets a declared stream, so every
 *    stream an older segment lists (its table, or the stream 0 a segment
 *    without a table has) is listed by the newest segment.
 *  - Windows (8.2): window ids increase over the whole store and windows do
 *    not overlap; a window in two segments is the last of the first and the
 *    first of the next, its ids going on (the second part's id_first = the
 *    first's id_first + count).
 *
 * The reader checks the same when it builds the store's stream and window
 * tables (reader.c build_streams / build_windows) and stops at the first
 * problem; fsck goes on and reports each, in the reader's words, so a
 * detail line names what fsck names. Segments are opened one at a time
 * (the store may hold 10^5): only the newest segment's stream ids and the
 * last window seen are kept. A segment that does not open was reported by
 * verify_segment; it is skipped, and the window after it is not judged
 * against what came before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct sv {
    mh_verify_line_fn fn;
    void *ctx;
    char msg[MH_ERRMSG_MAX];
} sv;

static void line(sv *v, int code, const char *file, uint64_t off) {
    v->fn(v->ctx, code, file, off, v->msg);
}

static int has_id(const uint32_t *ids, size_t n, uint32_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ids[lo] == id;
}

/* One older segment's streams against the newest segment's ids: one line
 * per segment (the first missing stream, and how many more), so a hostile
 * table of 65536 streams does not make 65536 lines. */
static void check_streams(sv *v, const mh_seg *s, const uint32_t *ids, size_t n) {
    uint64_t missing = 0;
    uint32_t first = 0;
    for (size_t k = 0; k < s->dict.nstreams; k++)
        if (!has_id(ids, n, s->dict.streams[k].id) && !missing++)
            first = s->dict.streams[k].id;
    if (!missing)
        return;
    int len = snprintf(v->msg, sizeof v->msg,
                       "stream %u is not in the newest segment's stream table", first);
    if (missing > 1 && len > 0 && (size_t)len < sizeof v->msg)
        snprintf(v->msg + len, sizeof v->msg - (size_t)len, " (and %llu more)",
                 (unsigned long long)(missing - 1));
    line(v, MH_ECORRUPT, s->name, s->dict_off);
}

/* The last window seen, as the reader's merged table holds it. */
typedef struct wlast {
    int have;
    uint64_t window, end; /* end: id_first + accesses of the merged window */
} wlast;

static void check_windows(sv *v, const mh_seg *s, wlast *w) {
    for (size_t k = 0; k < s->dict.nwindows; k++) {
        const mh_window_part *p = &s->dict.windows[k];
        if (w->have && w->window == p->window) {
            if (k != 0 || p->id_first != w->end) {
                snprintf(v->msg, sizeof v->msg,
                         "window %llu goes on from an earlier segment without "
                         "continuing its ids", (unsigned long long)p->window);
                line(v, MH_ECORRUPT, s->name, s->dict_off);
                w->end = p->id_first; /* judge what follows from this part */
            }
            w->end += p->count;
            continue;
        }
        if (w->have && (p->window < w->window || p->id_first < w->end)) {
            snprintf(v->msg, sizeof v->msg,
                     "window %llu comes after window %llu (ids from %llu, the "
                     "last ending at %llu)", (unsigned long long)p->window,
                     (unsigned long long)w->window,
                     (unsigned long long)p->id_first, (unsigned long long)w->end);
            line(v, MH_ECORRUPT, s->name, s->dict_off);
        }
        w->have = 1;
        w->window = p->window;
        w->end = p->id_first + p->count; /* inside the segment: checked at open */
    }
}

/* Segment i of m: the caller's open one, else opened into *tmp (closed by
 * put_seg). NULL when it cannot be opened (verify_segment reports why). */
static const mh_seg *get_seg(const char *dir, const mh_manifest *m,
                             mh_seg *const *open, size_t i, mh_seg *tmp) {
    if (open && open[i])
        return open[i];
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_diag d = {0, 0, ""};
    mh_segment_name(name, m->recs[i].seq);
    return mh_store_seg_open(dir, name, tmp, 0, &d) == MH_OK ? tmp : NULL;
}

static void put_seg(const mh_seg *s, mh_seg *tmp) {
    if (s == tmp)
        mh_seg_close(tmp);
}

void mh_verify_store_tables(const char *dir, const mh_manifest *m,
                            mh_seg *const *open, mh_verify_line_fn fn, void *ctx) {
    sv v = {fn, ctx, ""};
    if (m->nrecs < 1)
        return;
    mh_seg tmp;
    const mh_seg *seg = get_seg(dir, m, open, m->nrecs - 1, &tmp);
    if (!seg)
        return; /* reported by verify_segment: the store has no stream table */
    size_t nids = seg->dict.nstreams;
    uint32_t *ids = malloc((nids ? nids : 1) * sizeof *ids);
    for (size_t k = 0; ids && k < nids; k++)
        ids[k] = seg->dict.streams[k].id; /* increasing: checked at open */
    if (!ids) {
        snprintf(v.msg, sizeof v.msg, "out of memory checking the store's streams");
        line(&v, MH_ENOMEM, seg->name, 0);
        put_seg(seg, &tmp);
        return;
    }
    put_seg(seg, &tmp);
    wlast w = {0, 0, 0};
    for (size_t i = 0; i < m->nrecs; i++) {
        if (!(seg = get_seg(dir, m, open, i, &tmp))) {
            w.have = 0; /* nothing known of the windows it holds */
            continue;
        }
        if (i + 1 < m->nrecs)
            check_streams(&v, seg, ids, nids);
        check_windows(&v, seg, &w);
        put_seg(seg, &tmp);
    }
    free(ids);
}
