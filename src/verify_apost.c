/*
 * verify_apost.c - fsck's check of a segment's address postings (SPEC.md
 * "Address postings"): the section's sum and structure and every run
 * decoded with the reader's own decoder (apost_read.c), so fsck refuses
 * exactly what a query refuses; its posting_count; and, when the
 * segment's slices verified, exactness: every slice's rows are decoded
 * again, their ranges merged per op, their granules at the section's shift
 * put through the writer's accumulator (at that fixed shift), and the keys
 * it yields compared one by one with the section's.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The section's keys in order, as a stream. */
typedef struct sect_keys {
    const mh_apost_view *v;
    unsigned op;
    uint32_t run;   /* within op */
    int open;
    mh_apost_cur c;
    uint32_t *list, n;
    uint64_t off;   /* where the current key starts, for details */
    mh_diag *d;
    uint64_t nkeys; /* compared so far */
} sect_keys;

/* Next key of the section: 1, 0 at the end, < 0 broken. */
static int sect_next(sect_keys *k) {
    for (;;) {
        if (k->op >= MHF_OP_COUNT)
            return 0;
        if (!k->open) {
            if (k->run >= k->v->run_count[k->op]) {
                k->op++;
                k->run = 0;
                continue;
            }
            mh_apost_run_open(k->v, k->op, k->run, &k->c);
            k->open = 1;
        }
        k->off = k->v->off + MHF_APOST_HEADER_SIZE +
                 (uint64_t)k->v->nruns * k->v->run_size +
                 (uint64_t)(k->c.p - k->v->data);
        int rc = mh_apost_run_step(&k->c, NULL, k->list, &k->n, k->d);
        if (rc != 0)
            return rc;
        k->open = 0;
        k->run++;
    }
}

typedef struct cmp_ctx {
    sect_keys *k;
    mh_diag *d;
} cmp_ctx;

/* The rows' key (op, w) with its postings against the section's next. */
static int compare_key(void *ctx, unsigned op, uint64_t w, const uint32_t *post,
                       uint32_t n) {
    cmp_ctx *x = ctx;
    sect_keys *k = x->k;
    int rc = sect_next(k);
    if (rc < 0)
        return rc;
    if (rc == 0 || k->op > op || (k->op == op && k->c.w > w))
        return mh_diag_fail(x->d, MH_ECORRUPT, k->off,
                            "address postings at byte %llu: op %u granule "
                            "0x%llx (slice %u meets it) is missing",
                            (unsigned long long)k->off, op,
                            (unsigned long long)w, post[0]);
    if (k->op < op || k->c.w < w)
        return mh_diag_fail(x->d, MH_ECORRUPT, k->off,
                            "address postings at byte %llu: op %u granule "
                            "0x%llx is listed, no row of its op meets it",
                            (unsigned long long)k->off, k->op,
                            (unsigned long long)k->c.w);
    uint32_t i = 0;
    while (i < n && i < k->n && post[i] == k->list[i])
        i++;
    if (i < n || i < k->n) {
        uint32_t s = i < n && (i >= k->n || post[i] < k->list[i]) ? post[i]
                                                                   : k->list[i];
        int listed = i < k->n && k->list[i] == s;
        return mh_diag_fail(x->d, MH_ECORRUPT, k->off,
                            "address postings at byte %llu: op %u granule "
                            "0x%llx: slice %u %s", (unsigned long long)k->off,
                            op, (unsigned long long)w, s,
                            listed ? "is listed, none of its rows meets it"
                                   : "meets it, not listed");
    }
    k->nkeys++;
    return MH_OK;
}

static int cmp_op_lo(const void *a, const void *b) {
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}

/* What merge_add sorts with: the radix sort's scratch and its two word
 * arrays, and the merged pairs. */
struct mh_apost_sorter {
    mh_sort_scratch s;
    mh_buf word, pairs;
};
typedef mh_apost_sorter ap_sort;

mh_apost_sorter *mh_apost_sorter_new(void) { return calloc(1, sizeof(ap_sort)); }

void mh_apost_sorter_free(mh_apost_sorter *as) {
    if (!as)
        return;
    mh_buf_free(&as->word);
    mh_buf_free(&as->pairs);
    free(as);
}

/* Merges range [lo, hi] into the pairs ending at *end (those of one op,
 * starting at start, in lo order; touching ranges merged, as the
 * writer's). */
static void merge_one(uint64_t *start, uint64_t **end, uint64_t lo, uint64_t hi) {
    uint64_t *e = *end;
    if (e > start && (e[-1] == UINT64_MAX || lo <= e[-1] + 1u)) {
        if (hi > e[-1])
            e[-1] = hi;
        return;
    }
    e[0] = lo;
    e[1] = hi;
    *end = e + 2;
}

/* The m (op, lo, hi) triples p of one slice put in lo order, merged per op
 * (maximal ranges) and added to acc. The order is mh_radix_order's; when
 * the addresses spread over more regions than it ranks, p is sorted in
 * place by (op, lo) with qsort, which gives each op's ranges the same
 * order. */
int mh_apost_merge_add(mh_apost_sorter *as, mh_apost_acc *acc, uint64_t *p, size_t m,
                       mh_diag *d) {
    uint32_t n[MHF_OP_COUNT] = {0};
    as->word.n = as->pairs.n = 0;
    if (m == 0) { /* a slice without rows (one verify_slice could not read) */
        static const uint64_t none[2];
        mh_apost_acc_add(acc, none, n, 0);
        return MH_OK;
    }
    if (mh_buf_reserve(&as->word, m * 16) != MH_OK ||
        mh_buf_reserve(&as->pairs, m * 16) != MH_OK)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the "
                            "address postings");
    uint64_t *word = (uint64_t *)(void *)as->word.p;
    const int radix = mh_radix_order(&as->s, p + 1, 3, m, word, word + m);
    if (!radix)
        qsort(p, m, 24, cmp_op_lo);
    size_t cnt[MHF_OP_COUNT] = {0};
    for (size_t i = 0; i < m; i++)
        cnt[p[3 * i]]++;
    uint64_t *out = (uint64_t *)(void *)as->pairs.p, *start[MHF_OP_COUNT],
             *end[MHF_OP_COUNT];
    for (unsigned o = 0, at = 0; o < MHF_OP_COUNT; at += (unsigned)cnt[o], o++)
        start[o] = end[o] = out + 2 * (size_t)at;
    for (size_t k = 0; k < m; k++) {
        const uint64_t *t = p + 3 * (radix ? word[k] & 0xffffffffu : k);
        merge_one(start[t[0]], &end[t[0]], t[1], t[2]);
    }
    uint64_t *w = out; /* each op's pairs moved down after the previous op's */
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        size_t len = (size_t)(end[o] - start[o]);
        memmove(w, start[o], len * sizeof *w);
        w += len;
        n[o] = (uint32_t)(len / 2);
    }
    mh_apost_acc_add(acc, out, n, 0);
    return MH_OK;
}

/* Slice si's rows as (op, lo, hi) triples in iv (mh_apost_fsck's own
 * decode, without verify.c's pass); *m gets their count. */
static int slice_rows(const mh_seg *seg, uint32_t si, mh_rows *rows, uint8_t *scratch,
                      mh_buf *iv, size_t *m, mh_diag *d) {
    mh_slice s;
    mh_seg_slice(seg, si, &s);
    MH_TRY(mh_seg_slice_check(seg, si, &s, d));
    uint32_t R = seg->rows_per_block;
    iv->n = 0;
    MH_TRY(mh_buf_reserve(iv, (size_t)s.count * 24) == MH_OK
               ? MH_OK
               : mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the "
                              "address postings"));
    uint64_t *p = (uint64_t *)(void *)iv->p;
    *m = 0;
    uint32_t ck = s.chunk_first;
    mh_chunk c;
    MH_TRY(mh_seg_chunk(seg, &s, ck, &c, d));
    for (uint32_t b = 0; b < s.block_count; b++) {
        MH_TRY(mh_seg_decode_block(seg, &s, b, scratch, rows, d));
        for (uint32_t r = 0; r < rows->n && *m < s.count; r++) {
            uint32_t row = b * R + r;
            /* the chunks tile the slice's rows in order */
            while (row - c.row_first >= c.row_count &&
                   ck + 1 < s.chunk_first + s.chunk_count)
                MH_TRY(mh_seg_chunk(seg, &s, ++ck, &c, d));
            p[3 * *m] = c.op;
            p[3 * *m + 1] = rows->phy[r];
            p[3 * *m + 2] = rows->phy[r] + (rows->size[r] - 1u);
            (*m)++;
        }
    }
    return MH_OK;
}

/* A section 14's wide ranges against the rows' (a section 10 has none,
 * and the rows' accumulator then sets none apart), merged in their order
 * (mh_apost_wide_cmp). */
static int compare_wide(const mh_apost_view *v, mh_apost_acc *acc, mh_diag *d) {
    const mh_apost_wide *r;
    size_t n = mh_apost_acc_wide(acc, &r), i = 0;
    /* where a missing range is reported: the record it would come before,
     * else the table's start */
    uint64_t mo = v->wide_off;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        for (uint64_t j = 0; j < v->wide_n[o]; j++, i++) {
            uint64_t at = v->wide_first[o] + j;
            const uint8_t *x = v->wide + at * v->wide_rsz;
            uint64_t xo = v->wide_off + at * v->wide_rsz;
            mh_apost_wide got = {mhf_load_u64(x + MHF_APOSTW_R_FIRST),
                                 mhf_load_u64(x + MHF_APOSTW_R_LAST),
                                 mhf_load_u32(x + MHF_APOSTW_R_SLICE), o};
            int c = i < n ? mh_apost_wide_cmp(&r[i], &got) : 1;
            if (c == 0 && r[i].last == got.last)
                continue;
            if (c < 0) { /* the rows' range comes first: the section lacks it */
                mo = xo;
                goto missing;
            }
            return mh_diag_fail(d, MH_ECORRUPT, xo,
                                "address postings (wide ranges) at byte %llu: op "
                                "%u range [0x%llx, 0x%llx] of slice %u is not a "
                                "maximal range of its rows of 2^%u bytes or more",
                                (unsigned long long)xo, o, (unsigned long long)got.first,
                                (unsigned long long)got.last, got.slice, v->wide_log2);
        }
    }
    if (i == n)
        return MH_OK;
missing:
    return mh_diag_fail(d, MH_ECORRUPT, mo,
                        "address postings (wide ranges) at byte %llu: op %u range "
                        "[0x%llx, 0x%llx] of slice %u is missing", (unsigned long long)mo,
                        r[i].op, (unsigned long long)r[i].first,
                        (unsigned long long)r[i].last, r[i].slice);
}

int mh_apost_compare(const mh_apost_view *vp, mh_apost_acc *acc, mh_diag *d) {
    mh_apost_view v = *vp;
    int rc = MH_OK;
    if (!acc) {
        /* every run decodes, whatever the rows say, and the counts add up */
        uint64_t postings = 0;
        for (unsigned o = 0; rc == MH_OK && o < MHF_OP_COUNT; o++)
            for (uint32_t r = 0; rc == MH_OK && r < v.run_count[o]; r++) {
                mh_apost_cur cur;
                mh_apost_run_open(&v, o, r, &cur);
                uint32_t n;
                while ((rc = mh_apost_run_step(&cur, NULL, NULL, &n, d)) == 1)
                    postings += n;
            }
        if (rc == MH_OK && postings != v.postings)
            rc = mh_diag_fail(d, MH_ECORRUPT, v.off + MHF_APOST_POSTINGS,
                              "address postings at byte %llu: posting_count %llu, its "
                              "keys have %llu",
                              (unsigned long long)(v.off + MHF_APOST_POSTINGS),
                              (unsigned long long)v.postings, (unsigned long long)postings);
        return rc;
    }
    if (mh_apost_acc_failed(acc))
        return mh_diag_fail(d, MH_ENOMEM, v.off,
                            "address postings at byte %llu: a slice meets more "
                            "than 2^26 granules at shift %u: not checked",
                            (unsigned long long)v.off, v.shift);
    uint32_t *list = malloc(((size_t)v.nslices + 1) * sizeof *list);
    if (!list)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the address postings");
    sect_keys k = {.v = &v, .list = list, .d = d};
    cmp_ctx x = {&k, d};
    rc = mh_apost_acc_walk(acc, compare_key, &x);
    if (rc == MH_OK && (rc = sect_next(&k)) == 1)
        rc = mh_diag_fail(d, MH_ECORRUPT, k.off,
                          "address postings at byte %llu: op %u granule "
                          "0x%llx is listed, no row of its op meets it",
                          (unsigned long long)k.off, k.op,
                          (unsigned long long)k.c.w);
    if (rc == MH_OK)
        rc = compare_wide(&v, acc, d);
    if (rc == MH_ENOMEM)
        rc = mh_diag_fail(d, MH_ENOMEM, 0,
                          "out of memory checking the address postings");
    free(list);
    return rc;
}

struct mh_apost_chk {
    int rc;       /* the view's verdict */
    mh_diag d;
    mh_apost_view v;
    mh_apost_acc *acc;
    ap_sort *as;
    int nomem;    /* the accumulator or the sort's memory failed */
    int slice_rc; /* the first failure adding the slices */
    mh_diag sd;
};

int mh_apost_fsck_begin(mh_apost_chk **out, const mh_seg *seg) {
    mh_apost_chk *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return MH_ENOMEM;
    c->d = c->sd = (mh_diag){0, 0, ""};
    c->rc = mh_apost_view_whole(seg, &c->v, &c->d);
    if (c->rc != MH_OK)
        return MH_OK; /* none, or end's first problem */
    c->as = mh_apost_sorter_new();
    if (!c->as || mh_apost_acc_create(&c->acc, c->v.shift) != MH_OK)
        c->nomem = 1;
    else if (c->v.wide) /* a section 14: its ranges of 2^v bytes apart */
        mh_apost_acc_set_wide(c->acc, c->v.wide_log2);
    return MH_OK;
}

void mh_apost_fsck_slice(mh_apost_chk *c, uint64_t *trip, size_t m) {
    if (!c || c->rc != MH_OK || c->nomem || c->slice_rc != MH_OK)
        return;
    c->slice_rc = mh_apost_merge_add(c->as, c->acc, trip, m, &c->sd);
}

int mh_apost_fsck_end(mh_apost_chk *c, int rows_ok, mh_diag *d) {
    if (!c)
        return mh_diag_fail(d, MH_ENOMEM, 0,
                            "out of memory checking the address postings");
    int rc;
    mh_apost_view v = c->v;
    if (!mh_fsck_view_ok(c->rc, &c->d, d, &rc))
        goto out;
    if ((rc = mh_apost_compare(&v, NULL, d)) != MH_OK || !rows_ok)
        goto out;
    if (c->nomem) {
        rc = mh_diag_fail(d, MH_ENOMEM, 0, "out of memory checking the address postings");
        goto out;
    }
    if (c->slice_rc != MH_OK) {
        rc = c->slice_rc;
        if (d)
            *d = c->sd;
        goto out;
    }
    rc = mh_apost_compare(&v, c->acc, d);
out:
    mh_apost_acc_destroy(c->acc);
    mh_apost_sorter_free(c->as);
    free(c);
    return rc;
}

int mh_apost_fsck(const mh_seg *seg, int rows_ok, mh_diag *d) {
    mh_apost_chk *c;
    if (mh_apost_fsck_begin(&c, seg) != MH_OK)
        return mh_apost_fsck_end(NULL, rows_ok, d);
    if (rows_ok && c->rc == MH_OK && !c->nomem) {
        mh_rows rows = {0};
        mh_buf iv = {0};
        uint8_t *scratch = malloc(mh_block_raw_bound(seg->rows_per_block));
        if (!scratch || mh_rows_reserve(&rows, seg->rows_per_block) != MH_OK)
            c->nomem = 1;
        for (uint32_t si = 0; !c->nomem && c->slice_rc == MH_OK && si < seg->nslices; si++) {
            size_t m = 0;
            c->slice_rc = slice_rows(seg, si, &rows, scratch, &iv, &m, &c->sd);
            if (c->slice_rc == MH_OK)
                mh_apost_fsck_slice(c, (uint64_t *)(void *)iv.p, m);
        }
        mh_rows_free(&rows);
        mh_buf_free(&iv);
        free(scratch);
    }
    return mh_apost_fsck_end(c, rows_ok, d);
}
