/*
 * apost_util.c - the address postings' tests' shared helpers
 * (apost_util.h).
 */
#include <stdlib.h>
#include <string.h>

#include "apost_util.h"
#include "testutil.h"

int tu_cmp_trip(const void *x, const void *y) {
    const trip *a = x, *b = y;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->w != b->w)
        return a->w < b->w ? -1 : 1;
    return (a->s > b->s) - (a->s < b->s);
}

size_t tu_apost_decode(const mh_apost_view *v, trip **out) {
    size_t cap = 1024, m = 0;
    trip *t = malloc(cap * sizeof *t);
    uint32_t *list = malloc(((size_t)v->nslices + 1) * sizeof *list);
    CHECK(t && list);
    uint64_t postings = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++)
        for (uint32_t r = 0; r < v->run_count[o]; r++) {
            mh_apost_cur c;
            mh_apost_run_open(v, o, r, &c);
            uint32_t n;
            int rc;
            mh_diag d = {0, 0, ""};
            while ((rc = mh_apost_run_step(&c, NULL, list, &n, &d)) == 1) {
                postings += n;
                for (uint32_t i = 0; i < n; i++) {
                    if (m == cap) {
                        cap *= 2;
                        t = realloc(t, cap * sizeof *t);
                        CHECK(t);
                    }
                    t[m++] = (trip){c.w, o, list[i]};
                }
            }
            CHECKF(rc == 0, "run %u of op %u: %d %s", r, o, rc, d.msg);
        }
    CHECK(postings == v->postings);
    free(list);
    *out = t;
    return m;
}

const mh_seg *tu_seg_of(const mh_reader *r, size_t i) {
    const mh_seg *s = NULL;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_reader_seg(r, i, &s, &d));
    return s;
}

mh_access *tu_apost_write(const char *dir, const mh_access *all, size_t n, size_t commit,
                          uint32_t slice_accesses, int discard, int postings, size_t *nout) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = slice_accesses;
    o.block_accesses = 64;
    o.commit_accesses = commit;
    o.address_postings = (uint32_t)postings;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    /* the streams of the accesses, declared (stream 0 needs none) */
    uint8_t *seen = calloc(MH_STREAM_MAX + 1, 1);
    CHECK(seen);
    for (size_t i = 0; i < n; i++) {
        uint32_t s = all[i].stream;
        if (s == 0 || seen[s])
            continue;
        seen[s] = 1;
        mh_stream_info si;
        mh_stream_info_init(&si);
        si.id = s;
        si.kind = MH_STREAM_THREAD;
        CHECK_OK(mh_writer_stream_declare(w, &si));
    }
    free(seen);
    mh_access *kept = malloc((n ? n : 1) * sizeof *kept);
    CHECK(kept);
    size_t i = 0, m = 0;
    if (discard) {
        size_t h = commit + commit / 2;
        CHECK_OK(mh_writer_append_batch(w, all, h, NULL));
        i = commit + commit / 4;
        while (i > 0 && all[i - 1].transition == all[i].transition)
            i--;
        CHECK_OK(mh_writer_discard_from(w, all[i].transition));
        memcpy(kept, all, i * sizeof *kept);
        m = i;
    }
    for (; i < n; i += 777) {
        size_t k = n - i < 777 ? n - i : 777;
        CHECK_OK(mh_writer_append_batch(w, all + i, k, NULL));
        memcpy(kept + m, all + i, k * sizeof *kept);
        m += k;
    }
    CHECK_OK(mh_writer_close(w));
    *nout = m;
    return kept;
}
