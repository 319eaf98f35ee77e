/*
 * verify.c - fsck: reads every byte of a store, checks every checksum and
 * invariant of SPEC.md and reports each problem with its file and offset;
 * repair removes only what a crash leaves behind (temporary files, torn
 * uncommitted segments) and rebuilds the MANIFEST (SPEC.md "Repair").
 *
 * Two questions come before any check: is the directory a store at all (a
 * directory holding none of a store's files is MH_ENOTSTORE, and repair
 * must not turn it into one by creating LOCK or MANIFEST), and is a writer
 * at work in it (its temporary files and not yet committed segments are
 * then work in progress, reported as MH_ELOCKED, not as crash leftovers).
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

typedef struct vctx {
    const char *dir;
    mh_report_fn fn;
    void *arg;
    mh_verify_result *res;
    int quiet; /* count, but do not report (repair's dry run) */
    int busy;  /* a writer holds the store's lock */
    uint64_t in_progress; /* files reported as the active writer's (MH_ELOCKED) */
    int fatal; /* MH_ENOMEM or MH_EIO met: the answer is incomplete */
    /* the MANIFEST's records while its segments are checked: a span
     * address set is checked against its place among them */
    const mh_manrec *recs;
    size_t nrecs;
    /* NULL, or nrecs entries during a pass: the segments verified so far
     * that match their record, kept open for the checks across segments
     * (span address sets, store tables) instead of opened again */
    mh_seg **open;
    /* non-NULL on a worker thread of the pass: report() records each line
     * here (with its counts in res, a worker's own) and verify_pass gives
     * them to the real context in MANIFEST order */
    mh_buf *sink;
    unsigned threads; /* MH_VERIFY_THREADS' count: 0 for the library's choice */
} vctx;

/* A worker's report line, as report() was called; a worker's lines are
 * these records back to back in an mh_buf. */
typedef struct vline {
    int code;
    uint64_t off;
    char *file, *msg;
} vline;

static int sink_push(mh_buf *s, int code, const char *file, uint64_t off,
                     const char *msg) {
    vline x = {code, off, strdup(file), strdup(msg)};
    if (!x.file || !x.msg || mh_buf_append(s, &x, sizeof x) != MH_OK) {
        free(x.file);
        free(x.msg);
        return MH_ENOMEM;
    }
    return MH_OK;
}

static void sink_free(mh_buf *s) {
    vline *l = (vline *)(void *)s->p;
    for (size_t i = 0; i < s->n / sizeof *l; i++) {
        free(l[i].file);
        free(l[i].msg);
    }
    mh_buf_free(s);
}

/* report's code for a note: reported with code MH_OK, neither a problem
 * nor a repair action (a stale span address set, SPEC.md §9e) */
#define MH_NOTE 1
static void report(vctx *v, int code, const char *file, uint64_t off,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void report(vctx *v, int code, const char *file, uint64_t off,
                   const char *fmt, ...) {
    if (code == MH_ENOMEM || code == MH_EIO) {
        /* the machine failed, not the store: stop calling it damage */
        if (!v->fatal)
            v->fatal = code;
        return;
    }
    const int asked = code;
    if (code == MH_ELOCKED)
        v->in_progress++;
    if (code == MH_NOTE)
        code = MH_OK; /* a note: counted as nothing */
    else if (code != MH_OK)
        v->res->problems++;
    else
        v->res->repaired++;
    if (!v->sink && (!v->fn || v->quiet))
        return;
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (v->sink) { /* given again, as asked, in order by verify_pass */
        if (sink_push(v->sink, asked, file, off, msg) != MH_OK && !v->fatal)
            v->fatal = MH_ENOMEM;
        return;
    }
    mh_problem p = {sizeof p, code, file, off, msg};
    v->fn(v->arg, &p);
}

/* What fsck adds up over a segment's rows to hold against its tables:
 * per stream of the streams table, count and transition range. */
typedef struct seg_tally {
    uint64_t *count, *t_first, *t_last; /* per entry of dict.streams */
    uint64_t unknown;                   /* rows of a stream not in the table */
    uint32_t unknown_id;
} seg_tally;

static size_t stream_index(const mh_dict *dc, uint32_t id) {
    size_t lo = 0, hi = dc->nstreams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dc->streams[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < dc->nstreams && dc->streams[lo].id == id ? lo : SIZE_MAX;
}

/* Window parts against the transitions of their first and last ids that
 * lie in slice s (t_by_id holds the slice's, by id offset). */
static void check_windows(vctx *v, const mh_seg *seg, const mh_slice *s,
                          uint32_t si, const uint64_t *t_by_id) {
    const mh_dict *dc = &seg->dict;
    for (size_t i = 0; i < dc->nwindows; i++) {
        const mh_window_part *w = &dc->windows[i];
        if (w->count == 0)
            continue;
        uint64_t last = w->id_first + w->count - 1;
        if (w->id_first >= s->id_first && w->id_first - s->id_first < s->count &&
            t_by_id[w->id_first - s->id_first] != w->t_first)
            report(v, MH_ECORRUPT, seg->name, seg->dict_off,
                   "window %llu: first transition %llu, its first access "
                   "(slice %u) has %llu", (unsigned long long)w->window,
                   (unsigned long long)w->t_first, si,
                   (unsigned long long)t_by_id[w->id_first - s->id_first]);
        if (last >= s->id_first && last - s->id_first < s->count &&
            t_by_id[last - s->id_first] != w->t_last)
            report(v, MH_ECORRUPT, seg->name, seg->dict_off,
                   "window %llu: last transition %llu, its last access "
                   "(slice %u) has %llu", (unsigned long long)w->window,
                   (unsigned long long)w->t_last, si,
                   (unsigned long long)t_by_id[last - s->id_first]);
    }
}

/* Checks the rows of one slice against its chunks, blocks and record. */
/* Verifies slice si (into *sp) from its rows, decoding each block once;
 * t_by_id and chunk_of get the transition and the chunk (relative to the
 * slice) of every id offset for the checks of the id transitions and the
 * id map, trip the (op, lo, hi) of every row read, in row order, for the
 * address set's and postings' checks. Returns 1 when t_by_id and chunk_of
 * are whole: every block decoded and every id given once. */
static int verify_slice(vctx *v, const mh_seg *seg, uint32_t si, mh_slice *sp,
                        mh_rows *rows, uint8_t *scratch, uint8_t *seen,
                        uint64_t *t_by_id, uint32_t *chunk_of, uint32_t *s_by_id,
                        mh_buf *trip, mh_buf *strm, seg_tally *tl, uint32_t *cmask,
                        mh_sum_fsck *sum) {
    mh_slice s;
    mh_diag d = {0, 0, ""};
    mh_seg_slice(seg, si, &s);
    *sp = s;
    trip->n = 0;
    strm->n = 0;
    int rc = mh_seg_slice_check(seg, si, &s, &d);
    if (rc != MH_OK) {
        /* the message names the slice and byte, as a query's detail does */
        report(v, rc, seg->name, d.offset, "%s", d.msg);
        sum->on = 0; /* its rows unread: the summary's totals cannot add up */
        return 0;
    }
    int whole = 1; /* every block decoded, no id twice */
    uint32_t nseen = 0;
    /* (op, lo, hi) of every row in row order, for the address set's and
     * the address postings' checks */
    if (mh_buf_reserve(trip, (size_t)s.count * 24) != MH_OK ||
        mh_buf_reserve(strm, (size_t)s.count * 4) != MH_OK) {
        report(v, MH_ENOMEM, seg->name, 0, "out of memory verifying the segment");
        return 0;
    }
    uint64_t *tp = (uint64_t *)(void *)trip->p;
    memset(seen, 0, s.count);
    memset(cmask, 0, (size_t)s.chunk_count * sizeof *cmask);
    uint32_t smask = 0;
    if (mh_sum_fsck_slice_begin(sum, s.count) != MH_OK)
        report(v, MH_ENOMEM, seg->name, 0, "out of memory checking the address summary");
    uint32_t R = seg->rows_per_block;
    uint64_t expect_off = 0;
    int ok_all = 1;
    uint32_t lo = s.chunk_first; /* the chunk of the rows being read */
    mh_chunk c = {0};
    if (s.chunk_count)
        mh_seg_chunk(seg, &s, lo, &c, NULL);
    for (uint32_t b = 0; b < s.block_count; b++) {
        mh_block bl;
        mh_seg_block(seg, &s, s.block_first + b, &bl, NULL);
        if (b == 0 && si == 0)
            expect_off = seg->data_off;
        if (expect_off && bl.offset != expect_off)
            report(v, MH_ECORRUPT, seg->name,
                   seg->block_off + (uint64_t)(s.block_first + b) * seg->block_recsz,
                   "block %u does not follow the previous block's bytes",
                   s.block_first + b);
        expect_off = bl.offset + bl.comp_size;
        v->res->bytes += bl.comp_size;
        rc = mh_seg_decode_block(seg, &s, b, scratch, rows, &d);
        if (rc != MH_OK) {
            report(v, rc, seg->name, d.offset, "%s", d.msg);
            ok_all = whole = 0;
            continue;
        }
        uint64_t pmin = UINT64_MAX, pmax = 0;
        uint32_t bmask = 0;
        for (uint32_t k = 0; k < rows->n; k++) {
            uint32_t row = b * R + k, id = rows->id_off[k];
            uint32_t st = rows->stream[k], bit = 1u << (st & 31u);
            bmask |= bit;
            size_t sx = stream_index(&seg->dict, st);
            if (sx == SIZE_MAX) {
                if (!tl->unknown++)
                    tl->unknown_id = st;
            } else {
                if (!tl->count[sx]++ || rows->t[k] < tl->t_first[sx])
                    tl->t_first[sx] = rows->t[k];
                if (rows->t[k] > tl->t_last[sx])
                    tl->t_last[sx] = rows->t[k];
            }
            uint64_t end = rows->phy[k] + (rows->size[k] - 1u);
            if (rows->phy[k] < pmin)
                pmin = rows->phy[k];
            if (end > pmax)
                pmax = end;
            if (seen[id]) {
                report(v, MH_ECORRUPT, seg->name, bl.offset,
                       "slice %u: id %llu stored twice", si,
                       (unsigned long long)(s.id_first + id));
                ok_all = whole = 0;
                continue;
            }
            seen[id] = 1;
            nseen++;
            t_by_id[id] = rows->t[k];
            s_by_id[id] = st;
            /* the row's chunk: the chunks tile the rows in order (checked
             * with the slice), and rows only move forward */
            while (row - c.row_first >= c.row_count &&
                   lo + 1 < s.chunk_first + s.chunk_count)
                mh_seg_chunk(seg, &s, ++lo, &c, NULL);
            cmask[lo - s.chunk_first] |= bit;
            chunk_of[id] = lo - s.chunk_first;
            if (trip->n < (size_t)s.count * 24) {
                uint64_t *t3 = tp + trip->n / 8;
                t3[0] = c.op;
                t3[1] = rows->phy[k];
                t3[2] = end;
                trip->n += 24;
                ((uint32_t *)(void *)strm->p)[strm->n / 4] = rows->stream[k];
                strm->n += 4;
            }
            if (sum->on && mh_sumset_add(&sum->set, rows->phy[k], rows->size[k],
                                         c.op) != MH_OK)
                sum->on = 0; /* out of memory: the summary goes unchecked */
            if (rows->phy[k] < c.phy_first || end > c.phy_last ||
                rows->t[k] < c.t_first || rows->t[k] > c.t_last ||
                id < c.id_first || id > c.id_last ||
                (row == c.row_first && (id != c.id_first || rows->t[k] != c.t_first)) ||
                (row == c.row_first + c.row_count - 1 &&
                 (id != c.id_last || rows->t[k] != c.t_last))) {
                report(v, MH_ECORRUPT, seg->name, bl.offset,
                       "slice %u, block %u at byte %llu: access %llu lies "
                       "outside its chunk %u", si, s.block_first + b,
                       (unsigned long long)bl.offset,
                       (unsigned long long)(s.id_first + id), lo);
                ok_all = 0;
            }
            if (row > c.row_first && k > 0 && rows->id_off[k - 1] >= id) {
                report(v, MH_ECORRUPT, seg->name, bl.offset,
                       "slice %u, block %u at byte %llu: ids not increasing "
                       "inside chunk %u", si, s.block_first + b,
                       (unsigned long long)bl.offset, lo);
                ok_all = 0;
            }
        }
        if (pmin != bl.phy_min || pmax != bl.phy_max)
            report(v, MH_ECORRUPT, seg->name,
                   seg->block_off + (uint64_t)(s.block_first + b) * seg->block_recsz,
                   "block %u: address range differs from its rows",
                   s.block_first + b);
        if (bmask != bl.stream_mask)
            report(v, MH_ECORRUPT, seg->name,
                   seg->block_off + (uint64_t)(s.block_first + b) * seg->block_recsz +
                       MHF2_BLOCK_STREAM_MASK,
                   "block %u: stream mask %08x, its rows make %08x",
                   s.block_first + b, bl.stream_mask, bmask);
        smask |= bmask;
        v->res->accesses += rows->n;
    }
    rc = mh_sum_fsck_slice_end(sum, ok_all, &d);
    if (rc != MH_OK)
        report(v, rc, seg->name, d.offset, "%s", d.msg);
    for (unsigned k = 0; k < MH_SUM_KINDS; k++)
        if ((rc = mh_sum_fsck_slice_check(sum, k, si, &d)) != MH_OK)
            report(v, rc, seg->name, d.offset, "%s", d.msg);
    whole = whole && nseen == s.count;
    if (!ok_all)
        return whole;
    for (uint32_t k = 0; k < s.chunk_count; k++) {
        mh_seg_chunk(seg, &s, s.chunk_first + k, &c, NULL);
        if (c.stream_mask != cmask[k])
            report(v, MH_ECORRUPT, seg->name,
                   seg->chunk_off + (uint64_t)(s.chunk_first + k) * seg->chunk_recsz +
                       MHF2_CHUNK_STREAM_MASK,
                   "chunk %u: stream mask %08x, its rows make %08x",
                   s.chunk_first + k, c.stream_mask, cmask[k]);
    }
    if (smask != s.stream_mask)
        report(v, MH_ECORRUPT, seg->name,
               seg->slice_off + (uint64_t)si * seg->slice_recsz + MHF2_SLICE_STREAM_MASK,
               "slice %u: stream mask %08x, its rows make %08x", si,
               s.stream_mask, smask);
    for (uint32_t i = 0; i < s.count; i++) {
        if (i > 0 && t_by_id[i] < t_by_id[i - 1]) {
            report(v, MH_ECORRUPT, seg->name,
                   seg->slice_off + (uint64_t)si * seg->slice_recsz,
                   "slice %u: transition decreases at id %llu", si,
                   (unsigned long long)(s.id_first + i));
            return whole;
        }
    }
    if (t_by_id[0] != s.t_first || t_by_id[s.count - 1] != s.t_last)
        report(v, MH_ECORRUPT, seg->name,
               seg->slice_off + (uint64_t)si * seg->slice_recsz,
               "slice %u: transition range differs from its accesses", si);
    check_windows(v, seg, &s, si, t_by_id);
    return whole;
}

/* The section sums a reader leaves to fsck: data (and the block records'
 * own sums are the decoder's), chunks, blocks and any section this version
 * does not know (the address summaries' are mh_sum_fsck_begin's). */
static void verify_sections(vctx *v, const mh_seg *seg) {
    for (uint32_t i = 0; i < seg->nsections; i++) {
        const mh_section *x = &seg->sections[i];
        if (seg->major < 2 && x->type == MHF_SECT_DATA)
            continue; /* 1.0 has no data sum */
        if (x->type == MHF_SECT_DICT || x->type == MHF_SECT_SLICES)
            continue; /* checked when the segment was opened */
        if (x->type == MHF_SECT_SUMMARY || x->type == MHF_SECT_ASET ||
            x->type == MHF_SECT_APOST ||
            (x->type == MHF_SECT_APOSTW &&
             mh_section_defined(seg->major, seg->minor, MHF_SECT_APOSTW)) ||
            (x->type == MHF_SECT_SPOST &&
             mh_section_defined(seg->major, seg->minor, MHF_SECT_SPOST)) ||
            (x->type == MHF_SECT_SPAN &&
             mh_section_defined(seg->major, seg->minor, MHF_SECT_SPAN)) ||
            (x->type == MHF_SECT_SSPAN &&
             mh_section_defined(seg->major, seg->minor, MHF_SECT_SSPAN)) ||
            (x->type == MHF_SECT_SRUNS &&
             mh_section_defined(seg->major, seg->minor, MHF_SECT_SRUNS)) ||
            (x->type == MHF_SECT_PSUM &&
             mh_section_defined(seg->major, seg->minor, MHF_SECT_PSUM)) ||
            (x->type == MHF_SECT_IDMAP && mh_idmap_present(seg)) ||
            (x->type == MHF_SECT_IDTIME && mh_idtime_present(seg)) ||
            (x->type == MHF_SECT_SUMMARY_FINE &&
             mh_summary_section(seg, MH_SUM_FINE) == x))
            continue; /* mh_sum_fsck_begin / mh_idmap_fsck / mh_idtime_fsck / mh_aset_fsck / mh_apost_fsck / mh_spost_fsck / mh_span_fsck / mh_sspan_fsck / mh_sruns_fsck / mh_psum_fsck check them */
        uint64_t sum = mh_hash(seg->base + x->offset, (size_t)x->size);
        if (sum != x->sum)
            report(v, MH_ECHECKSUM, seg->name, x->offset,
                   "section type %u (%llu bytes at byte %llu) checksum "
                   "mismatch: stored 0x%016llx, computed 0x%016llx", x->type,
                   (unsigned long long)x->size, (unsigned long long)x->offset,
                   (unsigned long long)x->sum, (unsigned long long)sum);
    }
}

/* The streams table against the rows: every row's stream is in the table,
 * each entry's count and transition range are exact. */
static void verify_streams(vctx *v, const mh_seg *seg, const seg_tally *tl) {
    const mh_dict *dc = &seg->dict;
    if (tl->unknown)
        report(v, MH_ECORRUPT, seg->name, seg->dict_off,
               "%llu accesses of streams not in the streams table (first: %u)",
               (unsigned long long)tl->unknown, tl->unknown_id);
    for (size_t i = 0; i < dc->nstreams; i++) {
        const mh_dict_stream *x = &dc->streams[i];
        uint64_t tf = tl->count[i] ? tl->t_first[i] : 0;
        uint64_t tt = tl->count[i] ? tl->t_last[i] : 0;
        if (x->count != tl->count[i] || x->t_first != tf || x->t_last != tt)
            report(v, MH_ECORRUPT, seg->name, seg->dict_off,
                   "stream %u: table says %llu accesses in [%llu, %llu], its "
                   "rows are %llu in [%llu, %llu]", x->id,
                   (unsigned long long)x->count, (unsigned long long)x->t_first,
                   (unsigned long long)x->t_last,
                   (unsigned long long)tl->count[i], (unsigned long long)tf,
                   (unsigned long long)tt);
    }
}

/* A segment between its own checks (seg_check, on any thread) and those
 * that need the segments before it (seg_finish, in MANIFEST order). */
typedef struct segpass {
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_seg seg;
    int open;                /* seg is open: seg_finish closes or keeps it */
    int rows_read;           /* the row checks ran (memory for them) */
    int matched;             /* seg matches its MANIFEST record */
    size_t ri;               /* that record's index in v->recs, or SIZE_MAX */
    uint64_t prev_data_end;  /* where the last block ends */
} segpass;

/* The checks of one segment file that need no other segment (all but its
 * span address set's); rec is its manifest record or NULL. */
static void seg_check(vctx *v, const char *name, const mh_manrec *rec, segpass *sp) {
    mh_seg *const seg = &sp->seg;
    snprintf(sp->name, sizeof sp->name, "%s", name);
    sp->open = sp->rows_read = sp->matched = 0;
    sp->ri = SIZE_MAX;
    mh_diag d = {0, 0, ""};
    int rc = mh_store_seg_open(v->dir, name, seg, 0, &d);
    if (rc != MH_OK) {
        report(v, rc, name, d.offset, "%s", d.msg[0] ? d.msg : mh_strerror(rc));
        return;
    }
    sp->open = 1;
    /* every byte is read, mostly front to back: the kernel's readahead
     * at its most (the mapping is MADV_RANDOM for queries) */
    mh_seg_advise_sequential(seg);
    v->res->segments++;
    v->res->bytes += seg->size - seg->data_size;
    if (mh_hash(seg->chunks, (size_t)seg->nchunks * seg->chunk_recsz) != seg->chunk_sum)
        report(v, MH_ECHECKSUM, name, seg->chunk_off, "chunk array checksum mismatch");
    if (mh_hash(seg->blocks, (size_t)seg->nblocks * seg->block_recsz) != seg->block_sum)
        report(v, MH_ECHECKSUM, name, seg->block_off, "block array checksum mismatch");
    if (seg->major >= 2)
        verify_sections(v, seg);
    /* rec's index among the MANIFEST's records being checked, if it is one */
    sp->ri = rec && v->recs && rec >= v->recs && rec < v->recs + v->nrecs
                 ? (size_t)(rec - v->recs) : SIZE_MAX;
    if (rec && (rc = mh_store_seg_check(seg, rec, 0, &d)) != MH_OK)
        report(v, rc, name, d.offset, "%s", d.msg);
    else if (rec)
        sp->matched = 1;
    char expect[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(expect, seg->seq);
    if (strcmp(expect, name) != 0)
        report(v, MH_ECORRUPT, name, MHF_SEG_SEQ,
               "sequence number %llu does not match the file name",
               (unsigned long long)seg->seq);
    mh_rows rows = {0};
    uint8_t *scratch = malloc(mh_block_raw_bound(seg->rows_per_block));
    uint32_t maxc = 1;
    for (uint32_t i = 0; i < seg->nslices; i++) {
        mh_slice s;
        mh_seg_slice(seg, i, &s);
        if (s.count > maxc)
            maxc = s.count;
    }
    mh_sum_fsck sum;
    mh_sum_fsck_init(&sum);
    for (unsigned k = 0; k < MH_SUM_KINDS; k++)
        if ((rc = mh_sum_fsck_begin(&sum, seg, k, &d)) != MH_OK)
            report(v, rc, name, d.offset, "%s", d.msg);
    uint8_t *seen = malloc(maxc);
    uint64_t *tby = malloc((size_t)maxc * sizeof *tby);
    uint32_t *cmask = malloc((size_t)maxc * sizeof *cmask);
    uint32_t *chunk_of = malloc((size_t)maxc * sizeof *chunk_of);
    uint32_t *sby = malloc((size_t)maxc * sizeof *sby); /* stream by id offset */
    size_t nst = seg->dict.nstreams ? seg->dict.nstreams : 1;
    seg_tally tl = {calloc(nst, 8), calloc(nst, 8), calloc(nst, 8), 0, 0};
    if (!scratch || !seen || !tby || !cmask || !chunk_of || !sby || !tl.count || !tl.t_first ||
        !tl.t_last || mh_rows_reserve(&rows, seg->rows_per_block) != MH_OK) {
        report(v, MH_ENOMEM, name, 0, "out of memory verifying the segment");
    } else {
        uint64_t prev_data_end = seg->data_off;
        uint64_t before_slices = v->res->problems;
        /* the id map's, id transitions', address set's and postings'
         * checks take each slice's rows from the one decode of its blocks */
        mh_idmap_chk im;
        mh_idtime_chk it;
        mh_aset_chk *as = NULL;
        mh_apost_chk *ap = NULL;
        mh_spost_chk *spc = NULL;
        mh_buf trip = {0}, strm = {0};
        mh_idmap_fsck_begin(&im, seg);
        mh_idtime_fsck_begin(&it, seg);
        (void)mh_aset_fsck_begin(&as, seg); /* NULL: its end says so */
        (void)mh_apost_fsck_begin(&ap, seg);
        (void)mh_spost_fsck_begin(&spc, seg);
        mh_sruns_chk *src = NULL;
        (void)mh_sruns_fsck_begin(&src, seg);
        for (uint32_t i = 0; i < seg->nslices; i++) {
            mh_slice s;
            int whole = verify_slice(v, seg, i, &s, &rows, scratch, seen, tby, chunk_of,
                                     sby, &trip, &strm, &tl, cmask, &sum);
            if (whole) {
                mh_idmap_fsck_slice(&im, seg, i, &s, chunk_of);
                mh_idtime_fsck_slice(&it, i, &s, tby);
            }
            mh_sruns_fsck_slice(src, sby, s.count, whole);
            /* the set and the stream postings first: the postings' check
             * reorders the triples */
            mh_aset_fsck_rows(as, (const uint64_t *)(void *)trip.p, trip.n / 24);
            mh_spost_fsck_slice(spc, (const uint64_t *)(void *)trip.p,
                                (const uint32_t *)(void *)strm.p, trip.n / 24);
            mh_apost_fsck_slice(ap, (uint64_t *)(void *)trip.p, trip.n / 24);
        }
        mh_buf_free(&trip);
        mh_buf_free(&strm);
        int rows_ok = v->res->problems == before_slices;
        /* a count is only worth comparing when every row was read */
        if (rows_ok)
            verify_streams(v, seg, &tl);
        for (unsigned k = 0; k < MH_SUM_KINDS; k++)
            if ((rc = mh_sum_fsck_end(&sum, k, &d)) != MH_OK)
                report(v, rc, name, d.offset, "%s", d.msg);
        if ((rc = mh_idmap_fsck_end(&im, &d)) != MH_OK)
            report(v, rc, name, d.offset, "%s", d.msg);
        if ((rc = mh_idtime_fsck_end(&it, &d)) != MH_OK)
            report(v, rc, name, d.offset, "%s", d.msg);
        if ((rc = mh_aset_fsck_end(as, rows_ok, &d)) != MH_OK)
            report(v, rc, name, d.offset, "%s", d.msg);
        if ((rc = mh_apost_fsck_end(ap, rows_ok, &d)) != MH_OK)
            report(v, rc, name, d.offset, "%s", d.msg);
        if ((rc = mh_spost_fsck_end(spc, rows_ok, &d)) != MH_OK)
            report(v, rc, name, d.offset, "%s", d.msg);
        if ((rc = mh_sruns_fsck_end(src, rows_ok, &d)) != MH_OK)
            report(v, rc, name, d.offset, "%s", d.msg);
        if ((rc = mh_psum_fsck(seg, &d)) != MH_OK)
            report(v, rc, name, d.offset, "%s", d.msg);
        if (seg->nblocks) {
            const uint8_t *p = seg->blocks + (size_t)(seg->nblocks - 1) * seg->block_recsz;
            prev_data_end = mhf_load_u64(p + MHF_BLOCK_OFFSET) +
                            mhf_load_u32(p + MHF_BLOCK_COMP_SIZE);
        }
        sp->prev_data_end = prev_data_end;
        sp->rows_read = 1;
    }
    mh_sum_fsck_free(&sum);
    mh_rows_free(&rows);
    free(scratch);
    free(seen);
    free(tby);
    free(cmask);
    free(chunk_of);
    free(sby);
    free(tl.count);
    free(tl.t_first);
    free(tl.t_last);
}

/* The rest of a segment's checks, after seg_check and in MANIFEST order:
 * its span address set against the segments before it, then whether its
 * blocks cover its data section. Keeps the segment in *keep when it
 * verified (problems still at before), in v->open when it matched its
 * record, else closes it. Returns the problems found since before. */
static uint64_t seg_finish(vctx *v, segpass *sp, mh_seg *keep, uint64_t before) {
    if (!sp->open)
        return v->res->problems - before;
    const mh_seg *seg = &sp->seg;
    const char *name = sp->name;
    mh_diag d = {0, 0, ""};
    int rc;
    /* a node needs its place in the MANIFEST: a segment fsck found
     * outside one (repair) has its node checked when listed */
    if (sp->rows_read && sp->ri != SIZE_MAX &&
        (rc = mh_span_fsck(v->dir, seg, sp->ri, v->recs, v->nrecs, v->open, &d)) != MH_OK)
        /* a stale node is a note, not a problem (SPEC.md §9e) */
        report(v, rc == MH_SPAN_STALE ? MH_NOTE : rc, name, d.offset, "%s%s%s",
               rc == MH_SPAN_STALE ? name : "", rc == MH_SPAN_STALE ? ": " : "", d.msg);
    d = (mh_diag){0, 0, ""};
    if (sp->rows_read && sp->ri != SIZE_MAX &&
        (rc = mh_sspan_fsck(v->dir, seg, sp->ri, v->recs, v->nrecs, v->open, &d)) != MH_OK)
        /* and a stale stream node (SPEC.md §9e.1) */
        report(v, rc == MH_SPAN_STALE ? MH_NOTE : rc, name, d.offset, "%s%s%s",
               rc == MH_SPAN_STALE ? name : "", rc == MH_SPAN_STALE ? ": " : "", d.msg);
    if (sp->rows_read && sp->prev_data_end != seg->data_off + seg->data_size)
        report(v, MH_ECORRUPT, name,
               seg->major >= 2 ? seg->data_off + seg->data_size : MHF_SEG_DATA_SIZE,
               "data section holds bytes no block covers");
    mh_seg *held = NULL;
    if (keep && v->res->problems == before)
        *keep = sp->seg; /* the caller closes what verified */
    else if (sp->matched && !keep && v->open && sp->ri != SIZE_MAX && !v->open[sp->ri] &&
             (held = malloc(sizeof *held)) != NULL) {
        *held = sp->seg; /* verify_pass closes it */
        v->open[sp->ri] = held;
        mh_seg_release_pages(held); /* read whole: its pages go */
    } else {
        mh_seg_close(&sp->seg);
    }
    sp->open = 0;
    return v->res->problems - before;
}

/* Verifies one segment file on the calling thread; rec is its manifest
 * record or NULL. Returns the number of problems found. */
static uint64_t verify_segment(vctx *v, const char *name, const mh_manrec *rec,
                               mh_seg *keep) {
    uint64_t before = v->res->problems;
    segpass sp;
    seg_check(v, name, rec, &sp);
    return seg_finish(v, &sp, keep, before);
}

typedef struct dirlist {
    char **segs;      /* seg-*.mhs */
    size_t nsegs;
    char **tmps;      /* MANIFEST.tmp, seg-*.mhs.tmp */
    size_t ntmps;
    char **others;
    size_t nothers;
} dirlist;

static int push(char ***v, size_t *n, const char *s) {
    char **p = realloc(*v, (*n + 1) * sizeof *p);
    if (!p)
        return MH_ENOMEM;
    *v = p;
    p[*n] = strdup(s);
    if (!p[*n])
        return MH_ENOMEM;
    (*n)++;
    return MH_OK;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dir(const char *dir, dirlist *l) {
    memset(l, 0, sizeof *l);
    DIR *d = opendir(dir);
    if (!d)
        return MH_EIO;
    struct dirent *e;
    int rc = MH_OK;
    while (rc == MH_OK && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        int kind = mh_store_file_kind(n);
        if (kind == MH_STORE_FILE_SEGMENT)
            rc = push(&l->segs, &l->nsegs, n);
        else if (kind == MH_STORE_FILE_TMP)
            rc = push(&l->tmps, &l->ntmps, n);
        else if (kind == MH_STORE_FILE_OTHER)
            rc = push(&l->others, &l->nothers, n);
    }
    closedir(d);
    if (l->segs)
        qsort(l->segs, l->nsegs, sizeof *l->segs, cmp_str);
    return rc;
}

static void free_list(dirlist *l) {
    for (size_t i = 0; i < l->nsegs; i++)
        free(l->segs[i]);
    for (size_t i = 0; i < l->ntmps; i++)
        free(l->tmps[i]);
    for (size_t i = 0; i < l->nothers; i++)
        free(l->others[i]);
    free(l->segs);
    free(l->tmps);
    free(l->others);
}

static int in_manifest(const mh_manifest *m, const char *name) {
    for (size_t i = 0; i < m->nrecs; i++) {
        char n[MHF_SEGMENT_NAME_LEN + 1];
        mh_segment_name(n, m->recs[i].seq);
        if (!strcmp(n, name))
            return 1;
    }
    return 0;
}

static void report_line(void *v, int code, const char *file, uint64_t off,
                        const char *msg) {
    report(v, code, file, off, "%s", msg);
}

/* ---- the listed segments on worker threads ---------------------------
 * Each segment's own checks (seg_check) run on a worker with a context of
 * its own that records the report lines; the calling thread then gives
 * them, segment by segment in MANIFEST order, to the caller's context and
 * runs seg_finish (the span address set's check needs the segments before
 * it, held open in v->open): the same lines, in the same order, with the
 * same counts as one thread gives. */
typedef struct vjob {
    segpass sp;
    vctx local;
    mh_verify_result res;
    mh_buf lines; /* vline records */
} vjob;

typedef struct vpar {
    vctx *v;
    const mh_manifest *m;
    vjob *jobs;
    uint64_t *bad; /* NULL, or per segment: the problems it had */
    int *fatal;    /* NULL, or per segment: v->fatal once it was given */
} vpar;

static void par_work(void *arg, size_t i) {
    vpar *p = arg;
    vjob *j = &p->jobs[i];
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, p->m->recs[i].seq);
    seg_check(&j->local, name, &p->m->recs[i], &j->sp);
    if (j->sp.open)
        mh_seg_release_pages(&j->sp.seg); /* read whole: its pages go */
}

static void par_done(void *arg, size_t i) {
    vpar *p = arg;
    vctx *v = p->v;
    vjob *j = &p->jobs[i];
    uint64_t before = v->res->problems;
    const vline *l = (const vline *)(void *)j->lines.p;
    for (size_t k = 0; k < j->lines.n / sizeof *l; k++)
        report(v, l[k].code, l[k].file, l[k].off, "%s", l[k].msg);
    sink_free(&j->lines);
    v->res->segments += j->res.segments;
    v->res->bytes += j->res.bytes;
    v->res->accesses += j->res.accesses;
    if (j->local.fatal && !v->fatal)
        v->fatal = j->local.fatal;
    uint64_t b = seg_finish(v, &j->sp, NULL, before);
    if (p->bad)
        p->bad[i] = b;
    if (p->fatal)
        p->fatal[i] = v->fatal;
}

_Static_assert(MH_VERIFY_THREADS_MAX <= MH_ORDERED_MAX_THREADS,
               "every count mh_verify takes runs on that many threads");

/* Worker threads for the pass: the caller's MH_VERIFY_THREADS count
 * when given, else the processors online (at most 8) for a store of at
 * least two segments and 32 MiB; 1 below that (threads would cost more
 * than they save). */
static unsigned pass_threads(const vctx *v, const mh_manifest *m) {
    if (v->threads)
        return v->threads;
    uint64_t bytes = 0;
    for (size_t i = 0; i < m->nrecs; i++)
        bytes += m->recs[i].file_size;
    if (m->nrecs < 2 || bytes < ((uint64_t)32 << 20))
        return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
}

/* Verifies m's segments in order (on worker threads when pass_threads
 * says so); bad and fatal, when not NULL, get per segment the problems it
 * had and v->fatal once it was verified, as verify_segment one after
 * another would give them. */
static void verify_listed(vctx *v, const mh_manifest *m, uint64_t *bad, int *fatal) {
    unsigned threads = pass_threads(v, m);
    vjob *jobs = threads > 1 && m->nrecs > 1 ? calloc(m->nrecs, sizeof *jobs) : NULL;
    if (!jobs) { /* one thread (or no memory for the jobs) */
        if (m->nrecs && v->res->threads < 1)
            v->res->threads = 1;
        for (size_t i = 0; i < m->nrecs; i++) {
            char name[MHF_SEGMENT_NAME_LEN + 1];
            mh_segment_name(name, m->recs[i].seq);
            uint64_t b = verify_segment(v, name, &m->recs[i], NULL);
            if (bad)
                bad[i] = b;
            if (fatal)
                fatal[i] = v->fatal;
        }
        return;
    }
    for (size_t i = 0; i < m->nrecs; i++) {
        vctx *l = &jobs[i].local;
        *l = *v;
        l->res = &jobs[i].res;
        l->fn = NULL;
        l->quiet = 0;
        l->in_progress = 0;
        l->fatal = 0;
        l->open = NULL; /* seg_check opens no other segment */
        l->sink = &jobs[i].lines;
    }
    vpar p = {v, m, jobs, bad, fatal};
    unsigned ran = mh_run_ordered(m->nrecs, threads, par_work, par_done, &p);
    if (v->res->threads < ran)
        v->res->threads = ran;
    free(jobs);
}

/* One read-only pass over the whole store. */
static void verify_pass(vctx *v, dirlist *l, mh_manifest *m, int *man_ok) {
    mh_diag d = {0, 0, ""};
    int rc = mh_store_manifest_load(v->dir, m, 0, &d);
    *man_ok = rc == MH_OK;
    if (rc != MH_OK)
        report(v, rc, MHF_MANIFEST_NAME, d.offset, "%s", d.msg);
    if (rc == MH_ENOMEM || rc == MH_EIO)
        return; /* unread is not unlisted: classify nothing */
    if (*man_ok) {
        v->recs = m->recs;
        v->nrecs = m->nrecs;
        /* without this memory each check opens what it needs itself */
        v->open = calloc(m->nrecs ? m->nrecs : 1, sizeof *v->open);
        verify_listed(v, m, NULL, NULL);
        mh_verify_store_tables(v->dir, m, v->open, report_line, v); /* SPEC.md 8 */
    }
    for (size_t i = 0; v->open && i < m->nrecs; i++)
        if (v->open[i]) {
            mh_seg_close(v->open[i]);
            free(v->open[i]);
        }
    free(v->open);
    v->open = NULL;
    for (size_t i = 0; i < l->nsegs; i++)
        if (!*man_ok || !in_manifest(m, l->segs[i])) {
            if (v->busy)
                report(v, MH_ELOCKED, l->segs[i], 0,
                       "a writer is active: segment it has not committed yet (not checked)");
            else
                report(v, MH_ECORRUPT, l->segs[i], 0,
                       "segment file not listed in a valid MANIFEST (uncommitted)");
        }
    for (size_t i = 0; i < l->ntmps; i++) {
        if (v->busy)
            report(v, MH_ELOCKED, l->tmps[i], 0,
                   "a writer is active: file it is writing (not checked)");
        else
            report(v, MH_ECORRUPT, l->tmps[i], 0,
                   "temporary file left by an interrupted writer");
    }
    for (size_t i = 0; i < l->nothers; i++)
        report(v, MH_ECORRUPT, l->others[i], 0, "unexpected file in the store");
}

static int remove_file(vctx *v, const char *name, const char *why) {
    char *p = mh_path_join(v->dir, name);
    if (!p)
        return MH_ENOMEM;
    int rc = unlink(p) == 0 ? MH_OK : MH_EIO;
    free(p);
    if (rc == MH_OK)
        report(v, MH_OK, name, 0, "removed %s (%s)", name, why);
    else
        report(v, MH_EIO, name, 0, "cannot remove %s", name);
    return rc;
}

static int repair(vctx *v) {
    dirlist l;
    int lrc = list_dir(v->dir, &l);
    if (lrc != MH_OK) {
        free_list(&l);
        return lrc;
    }
    mh_manifest m;
    mh_diag d = {0, 0, ""};
    int rc = mh_store_manifest_load(v->dir, &m, 0, &d);
    if (rc == MH_ENOMEM || rc == MH_EIO) {
        free_list(&l);
        return rc; /* never decide what to delete without the manifest */
    }
    int man_ok = rc == MH_OK;
    rc = MH_OK;
    for (size_t i = 0; i < l.ntmps; i++)
        remove_file(v, l.tmps[i], "temporary file of an interrupted writer");
    /* committed segments must verify: repair does not touch damage */
    mh_verify_result scratch_res = {0};
    vctx quiet = *v;
    quiet.res = &scratch_res;
    quiet.quiet = 1;
    mh_manifest next = {0};
    next.generation = man_ok ? m.generation + 1 : 1;
    next.major = man_ok ? m.major : 0; /* 0: that of the first segment adopted */
    next.recs = calloc(l.nsegs + 1, sizeof *next.recs);
    if (!next.recs) {
        rc = MH_ENOMEM;
        goto out;
    }
    if (man_ok) {
        quiet.recs = m.recs;
        quiet.nrecs = m.nrecs;
        /* every committed segment verified (on worker threads for a large
         * store), then taken in order up to the first damaged one */
        uint64_t *bads = calloc(m.nrecs ? m.nrecs : 1, sizeof *bads);
        int *fatals = calloc(m.nrecs ? m.nrecs : 1, sizeof *fatals);
        if (!bads || !fatals) {
            free(bads);
            free(fatals);
            rc = MH_ENOMEM;
            goto out;
        }
        verify_listed(&quiet, &m, bads, fatals);
        size_t i = 0;
        while (i < m.nrecs && !fatals[i] && !bads[i])
            next.recs[next.nrecs++] = m.recs[i++];
        if (i < m.nrecs && fatals[i]) {
            rc = fatals[i];
        } else if (i < m.nrecs) {
            char name[MHF_SEGMENT_NAME_LEN + 1];
            mh_segment_name(name, m.recs[i].seq);
            report(v, MH_ECORRUPT, name, 0,
                   "committed segment is damaged: repair leaves the store "
                   "as it is");
            rc = MH_ECORRUPT;
        }
        free(bads);
        free(fatals);
        if (rc != MH_OK)
            goto out;
        next.access_count = m.access_count;
        next.next_seq = m.next_seq;
    }
    /* extend the chain with sealed segments that verify and follow it */
    for (size_t i = 0; i < l.nsegs; i++) {
        if (man_ok && in_manifest(&m, l.segs[i]))
            continue;
        mh_seg seg;
        uint64_t bad = verify_segment(&quiet, l.segs[i], NULL, &seg);
        if (quiet.fatal) {
            if (!bad)
                mh_seg_close(&seg);
            rc = quiet.fatal;
            goto out;
        }
        int fits = !bad && seg.id_first == next.access_count &&
                   (next.nrecs == 0 || seg.seq > next.recs[next.nrecs - 1].seq) &&
                   (next.major == 0 || seg.major == next.major);
        if (fits) {
            next.major = seg.major;
            mh_manrec *r = &next.recs[next.nrecs++];
            r->seq = seg.seq;
            r->id_first = seg.id_first;
            r->count = seg.count;
            r->t_first = seg.t_first;
            r->t_last = seg.t_last;
            r->file_size = seg.size;
            r->header_sum = seg.header_sum;
            r->major = seg.major;
            next.access_count += seg.count;
            if (seg.seq + 1 > next.next_seq)
                next.next_seq = seg.seq + 1;
            report(v, MH_OK, l.segs[i], 0,
                   "adopted sealed segment %s (%llu accesses)", l.segs[i],
                   (unsigned long long)seg.count);
        }
        if (!bad)
            mh_seg_close(&seg);
        if (bad)
            remove_file(v, l.segs[i], "torn segment that was never committed");
    }
    if (!man_ok || next.nrecs != m.nrecs) {
        rc = mh_manifest_store(v->dir, &next, &d);
        if (rc == MH_OK)
            report(v, MH_OK, MHF_MANIFEST_NAME, 0,
                   "wrote MANIFEST with %zu segments, %llu accesses", next.nrecs,
                   (unsigned long long)next.access_count);
        else
            report(v, rc, MHF_MANIFEST_NAME, 0, "cannot write MANIFEST: %s", d.msg);
    }
out:
    free(next.recs);
    if (man_ok)
        mh_manifest_free(&m);
    free_list(&l);
    return rc;
}

/* mh_verify on the library's own result struct (zeroed by the caller). */
static int verify_store(const char *path, unsigned flags, mh_report_fn fn,
                        void *ctx, mh_verify_result *res) {
    unsigned threads = (flags & MH_VERIFY_THREADS(0xffu)) >> 8;
    if (!path || !*path || (flags & ~(MH_VERIFY_REPAIR | MH_VERIFY_THREADS(0xffu))) ||
        threads > MH_VERIFY_THREADS_MAX)
        return MH_EINVAL;
    MH_TRY(mh_store_dir_check(path, NULL));
    /* a directory holding none of a store's files is not one (and repair
     * must not make it one by creating LOCK or MANIFEST) */
    int kind = mh_store_dir_kind(path);
    if (kind < 0)
        return MH_EIO;
    if (kind != MH_STORE_DIR_STORE)
        return MH_ENOTSTORE;
    vctx v = {path, fn, ctx, res, 0, 0, 0, 0, NULL, 0, NULL, NULL, threads};
    int lock_fd = -1;
    if (flags & MH_VERIFY_REPAIR) {
        int rc = mh_store_lock(path, &lock_fd, NULL);
        if (rc != MH_OK) /* a LOCK that cannot be created is MH_EIO here */
            return rc == MH_ENOSPC ? MH_EIO : rc;
        mh_verify_result tmp = {0};
        v.res = &tmp;
        rc = repair(&v);
        v.res = res;
        res->repaired = tmp.repaired;
        res->threads = tmp.threads;
        if ((rc == MH_ENOMEM || rc == MH_EIO || v.fatal) && lock_fd >= 0) {
            close(lock_fd);
            return v.fatal ? v.fatal : rc;
        }
    }
    dirlist l;
    /* after repair (which holds the lock) this is our own lock: not busy */
    v.busy = lock_fd < 0 && mh_store_lock_busy(path);
    int rc = list_dir(path, &l);
    if (rc == MH_OK) {
        mh_manifest m = {0};
        int man_ok;
        uint64_t repaired = res->repaired;
        verify_pass(&v, &l, &m, &man_ok);
        res->repaired = repaired;
        if (man_ok)
            mh_manifest_free(&m);
        /* only the active writer's files: nothing wrong, but not all checked */
        rc = v.fatal                                 ? v.fatal
             : res->problems > v.in_progress         ? MH_ECORRUPT
             : res->problems                         ? MH_ELOCKED
                                                     : MH_OK;
    }
    free_list(&l); /* also after a failed listing: it may hold names */
    if (lock_fd >= 0)
        close(lock_fd);
    return rc;
}

int mh_verify(const char *path, unsigned flags, mh_report_fn fn, void *ctx,
              mh_verify_result *res) {
    if (res)
        MH_TRY(mh_struct_out_ok(res, MH_VERIFY_RESULT_SIZE_1));
    mh_verify_result local;
    memset(&local, 0, sizeof local);
    int rc = verify_store(path, flags, fn, ctx, &local);
    if (res)
        MH_STRUCT_OUT(res, &local, MH_VERIFY_RESULT_SIZE_1);
    return rc;
}
