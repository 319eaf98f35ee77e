/*
 * sruns_build.c - the stream id runs' writing half (SPEC.md §9d.3, section
 * type 17, format 2.8): per stream of a multi-stream segment, the runs of
 * consecutive ids its rows fill, so that a question of one stream walked
 * in id order goes from one of its runs to the next instead of testing
 * every row the other streams have between them.
 *
 * The builder (mh_sruns_slice, on a slice's rows in id order) gives the
 * slice's runs in one pass; the segment keeps them in id order, a run that
 * goes on across a slice boundary joined, and serializes them at seal
 * grouped by stream.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void mh_sruns_slice(mh_builder *w, const mh_rec *a, uint32_t n) {
    w->sr_iv.n = 0;
    w->sr_lost = 0;
    if (!w->sruns || n == 0)
        return;
    /* a slice of one stream (slice_streams counted them): one run, no
     * pass over its rows (the lackey traces' every slice) */
    if (w->nstreams <= 1) {
        uint32_t r[3] = {a[0].stream, 0, n - 1};
        if (mh_buf_append(&w->sr_iv, r, sizeof r) != MH_OK)
            w->sr_lost = 1;
        return;
    }
    /* every run of the slice: a slice of streams taking turns access by
     * access (64 threads) gives one a row, 12 bytes each here; the
     * segment's budget (mh_sruns_acc_add) decides what it keeps */
    if (mh_buf_reserve(&w->sr_iv, (size_t)n * 3 * sizeof(uint32_t)) != MH_OK) {
        w->sr_lost = 1;
        return;
    }
    uint32_t *r = (uint32_t *)(void *)w->sr_iv.p, k = 0;
    uint32_t first = 0, cur = a[0].stream;
    for (uint32_t i = 1; i <= n; i++) {
        uint32_t st = i < n ? a[i].stream : ~cur;
        if (st == cur)
            continue;
        r[3 * k] = cur;
        r[3 * k + 1] = first;
        r[3 * k + 2] = i - 1;
        k++;
        first = i;
        cur = st;
    }
    w->sr_iv.n = (size_t)k * 3 * sizeof(uint32_t);
}

/* One run of a segment: stream, first and last id offsets. */
typedef struct srun {
    uint64_t a, b;
    uint32_t stream, pad;
} srun;

struct mh_sruns_acc {
    mh_buf runs; /* srun, increasing a */
    int lost;
};

int mh_sruns_acc_create(mh_sruns_acc **out) {
    *out = calloc(1, sizeof **out);
    return *out ? MH_OK : MH_ENOMEM;
}

void mh_sruns_acc_destroy(mh_sruns_acc *s) {
    if (!s)
        return;
    mh_buf_free(&s->runs);
    free(s);
}

/* The segment keeps its runs while, at the end of each slice, they number
 * at most rows / 8 + MH_SRUNS_SLACK (rows: the segment's so far), 24 bytes
 * each: 3 bytes a row and 384 KiB at the most (and one slice's runs while
 * they are added). Past that its streams take turns too often for bodies
 * to fit their budgets (a run costs two bytes at least, a stream's budget
 * is rows / 8 + 256, so bodies afford rows / 16 runs on average) and the
 * segment gets no section. The slack lets a few slices where the host ran
 * a recording's threads side by side (QEMU, xz -T2: up to 5,955 runs in
 * 32,768 rows, the other slices a few) pass without costing the whole
 * segment the section, as a cap of rows / 16 + 64 a slice did up to
 * 1.13.9. */
void mh_sruns_acc_add(mh_sruns_acc *s, const mh_builder *b, uint64_t base) {
    if (s->lost)
        return;
    if (b->sr_lost) {
        s->lost = 1;
        mh_buf_free(&s->runs);
        return;
    }
    const uint32_t *r = (const uint32_t *)(const void *)b->sr_iv.p;
    size_t n = b->sr_iv.n / (3 * sizeof *r);
    for (size_t i = 0; i < n; i++, r += 3) {
        size_t m = s->runs.n / sizeof(srun);
        srun *last = m ? (srun *)(void *)s->runs.p + (m - 1) : NULL;
        if (last && last->stream == r[0] && last->b + 1 == base + r[1]) {
            last->b = base + r[2]; /* goes on across the slice boundary */
            continue;
        }
        srun x = {base + r[1], base + r[2], r[0], 0};
        if (mh_buf_append(&s->runs, &x, sizeof x) != MH_OK) {
            s->lost = 1;
            return;
        }
    }
    if (s->runs.n / sizeof(srun) > (base + b->n) / 8 + MH_SRUNS_SLACK) {
        s->lost = 1;
        mh_buf_free(&s->runs);
    }
}

void mh_sruns_acc_truncate(mh_sruns_acc *s, uint64_t count) {
    srun *r = (srun *)(void *)s->runs.p;
    size_t n = s->runs.n / sizeof *r;
    while (n && r[n - 1].a >= count)
        n--;
    if (n && r[n - 1].b >= count)
        r[n - 1].b = count - 1; /* the rows kept of a run cut by the discard */
    s->runs.n = n * sizeof *r;
}

static int cmp_run(const void *x, const void *y) {
    const srun *p = x, *q = y;
    if (p->stream != q->stream)
        return p->stream < q->stream ? -1 : 1;
    return p->a < q->a ? -1 : p->a > q->a;
}

static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t k = 0;
    while (v >= 0x80) {
        p[k++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[k++] = (uint8_t)v;
    return k;
}

/* Stream r[0 .. n)'s body (runs sorted by a) appended to out, unless it
 * passes budget bytes (then nothing): MH_OK or MH_ENOMEM. */
static int put_body(const srun *r, size_t n, uint32_t k, uint64_t budget, mh_buf *out) {
    uint64_t groups = (n + k - 1) / k;
    size_t start = out->n;
    size_t head = MHF_SRUNS_B_HEADER_SIZE + (size_t)groups * MHF_SRUNS_G_SIZE;
    MH_TRY(mh_buf_reserve(out, head + n * 20));
    uint8_t *h = out->p + start;
    memset(h, 0, head);
    mhf_store_u64(h + MHF_SRUNS_B_RUNS, n);
    mhf_store_u32(h + MHF_SRUNS_B_K, k);
    mhf_store_u32(h + MHF_SRUNS_B_GROUPS, (uint32_t)groups);
    uint8_t *data = h + head, *p = data;
    for (size_t i = 0; i < n; i++) {
        if (i % k == 0) {
            uint8_t *g = h + MHF_SRUNS_B_HEADER_SIZE + (i / k) * MHF_SRUNS_G_SIZE;
            mhf_store_u64(g + MHF_SRUNS_G_FIRST, r[i].a);
            mhf_store_u64(g + MHF_SRUNS_G_DATA, (uint64_t)(p - data));
            p += put_varint(p, 0);
        } else {
            p += put_varint(p, r[i].a - r[i - 1].b - 2);
        }
        p += put_varint(p, r[i].b - r[i].a);
    }
    size_t size = head + (size_t)(p - data);
    if (size > budget)
        return MH_OK; /* no body: nothing kept */
    out->n = start + size;
    return MH_OK;
}

int mh_sruns_acc_serialize(mh_sruns_acc *s, mh_buf *out) {
    size_t n = s->runs.n / sizeof(srun);
    if (s->lost || n == 0)
        return MH_OK;
    srun *r = malloc(n * sizeof *r);
    if (!r)
        return MH_ENOMEM;
    memcpy(r, s->runs.p, n * sizeof *r);
    qsort(r, n, sizeof *r, cmp_run);
    uint32_t ns = 1;
    for (size_t i = 1; i < n; i++)
        ns += r[i].stream != r[i - 1].stream;
    if (ns < 2) {
        free(r);
        return MH_OK; /* one stream: its runs are the whole segment */
    }
    size_t start = out->n;
    size_t ents = start + MHF_SRUNS_HEADER_SIZE;
    int rc = mh_buf_reserve(out, MHF_SRUNS_HEADER_SIZE + (size_t)ns * MHF_SRUNS_ENTRY_SIZE);
    if (rc != MH_OK) {
        free(r);
        return rc;
    }
    memset(out->p + start, 0, MHF_SRUNS_HEADER_SIZE + (size_t)ns * MHF_SRUNS_ENTRY_SIZE);
    out->n = ents + (size_t)ns * MHF_SRUNS_ENTRY_SIZE;
    size_t data = out->n;
    int any = 0;
    uint32_t e = 0;
    for (size_t i = 0; i < n && rc == MH_OK; e++) {
        size_t j = i;
        uint64_t rows = 0;
        for (; j < n && r[j].stream == r[i].stream; j++)
            rows += r[j].b - r[j].a + 1;
        size_t before = out->n;
        rc = put_body(r + i, j - i, MHF_SRUNS_K_DEFAULT, rows / 8 + 256, out);
        uint8_t *x = out->p + ents + (size_t)e * MHF_SRUNS_ENTRY_SIZE;
        mhf_store_u32(x + MHF_SRUNS_E_STREAM, r[i].stream);
        mhf_store_u64(x + MHF_SRUNS_E_OFFSET, before - data);
        mhf_store_u64(x + MHF_SRUNS_E_BYTES, out->n - before);
        any |= out->n > before;
        i = j;
    }
    free(r);
    if (rc != MH_OK || !any) {
        out->n = start; /* out of memory, or no stream kept a body: none */
        return rc;
    }
    uint8_t *h = out->p + start;
    mhf_store_u32(h + MHF_SRUNS_COUNT, ns);
    mhf_store_u32(h + MHF_SRUNS_ENTRY_SIZE_OFF, MHF_SRUNS_ENTRY_SIZE);
    mhf_store_u64(h + MHF_SRUNS_DATA_BYTES, out->n - data);
    return MH_OK;
}
