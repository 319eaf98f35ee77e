/*
 * fuzz_section.c - one section of a real format 2.0 segment replaced by
 * arbitrary bytes: the dictionary (its typed tables: strings, columns,
 * operations, metadata, streams, stream metadata, windows), the slice array
 * (stream masks), the address summary, the id map (format 2.1: replaced
 * whole, or the real one with bytes flipped, which reaches the label
 * decoding and fsck's tight label check), the address set (2.1: replaced
 * whole, or the real one with bytes flipped, which reaches the run decoding
 * and fsck's exactness check), the address postings (2.2: replaced whole,
 * or the real one with bytes flipped, which reaches the run decoding and
 * fsck's exactness check; segment 1's are a section 14 since 2.6, its
 * wide ranges' records before the postings, so the same two reach their
 * checks and fsck's comparison with the rows), the span address set (2.3: replaced whole, or
 * segment 1's real one with bytes flipped, which reaches its header checks
 * against the MANIFEST, the embedded set's run decoding and fsck's union
 * check), the id transitions (2.5: replaced whole, or the real ones with
 * bytes flipped, which reaches the group records, the Elias-Fano decoding
 * and fsck's check of every sample against its row), the stream address
 * postings (2.7: replaced whole, or the real ones with bytes flipped, which
 * reaches the entries, each body's runs and fsck's comparison with each
 * stream's rows), the span stream address set (2.8: replaced whole, or
 * segment 1's real one with bytes flipped, which reaches its entries, each
 * set's runs and fsck's comparison with the covered segments' stream
 * postings), the stream id runs (2.8: replaced whole, or the real ones
 * with bytes flipped, which reaches the bodies' groups as stream-filtered
 * questions walk ids, and fsck's comparison with the rows), or a section
 * of a
 * type the reader does not know (required or not) added to the directory.
 *
 * At start-up the writer builds FUZZ_STORE_STREAMS (fuzz_build.c: three
 * streams, pcs, windows across two commits); its full answer is kept. For
 * each input the chosen segment gets the section (the directory laid out
 * again, every checksum and the MANIFEST record fixed: fuzz_segfix.c), so
 * the parsers behind the checksums are reached in a normal build too.
 *
 * Checks: open succeeds (it reads the MANIFEST only); every call fails with
 * a named data error or succeeds; fsck agrees with the reader both ways;
 * when fsck calls the store clean, every query answer (the exercise of
 * fuzz_check.c, stream-set and window filters) equals the brute-force
 * answer over the full scan, and the stream and window tables describe it.
 * The address postings are asked (mh_apost_query) for a point and a
 * 64-byte range at addresses of the scan and at 0 and 2^64 - 1 in every
 * segment: clean by fsck means every such query is served.
 * Each stream (and an undeclared one) is asked for a page and a word at
 * addresses of the scan, which the stream postings serve: clean by fsck
 * means the answers equal the scan's rows of that stream in that range.
 * The span address set is asked by forward queries from the first
 * segment (the skip into segment 1 asks its node) with the span sets used
 * and ignored, and, for pages of one stream, the span stream address set
 * too: clean by fsck means both answer, the same.
 * The id map's labels are read group by group through mh_idmap_labels:
 * clean by fsck means every group decodes, and a group that fails to
 * decode with a data error means fsck found a problem.
 * The id transitions are decoded group by group (mh_idtime_decode) and
 * searched (mh_idtime_first_at_least) at each sample's transition: clean
 * by fsck means every group decodes and each search lands on the first
 * sample at or above it.
 * When fsck finds a problem, answers may be incomplete (a summary that lies
 * consistently is only fsck's to find, SPEC.md 9) but every call still
 * fails cleanly.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_build.h"
#include "fuzz_check.h"
#include "fuzz_data_producer.h"
#include "fuzz_helpers.h"
#include "fuzz_segfix.h"
#include "fuzz_store.h"
#include "internal.h"

#define QUERY_LIMIT 4096

static uint8_t *g_seg[2], *g_man;
static size_t g_seg_size[2], g_man_size;

static void init(void) {
    if (g_man)
        return;
    char fixture[FUZZ_PATH_MAX], path[FUZZ_PATH_MAX], name[32];
    fuzz_join(fixture, sizeof fixture, fuzz_workdir(), "sect-fixture");
    fuzz_rmtree(fixture);
    fuzz_build_store(fixture, FUZZ_STORE_STREAMS, NULL);
    for (int i = 0; i < 2; i++) {
        fuzz_segment_name(name, (uint64_t)i);
        fuzz_join(path, sizeof path, fixture, name);
        g_seg[i] = fuzz_read_file(path, &g_seg_size[i]);
        FUZZ_ASSERT_MSG(g_seg[i] != NULL, "the streams fixture has two segments");
    }
    fuzz_join(path, sizeof path, fixture, "MANIFEST");
    g_man = fuzz_read_file(path, &g_man_size);
    FUZZ_ASSERT(g_man != NULL && g_man_size == MHF_MAN_HEADER_SIZE + 2 * MHF_MAN_REC_SIZE + 8);
    fuzz_rmtree(fixture);
}

/* Filter queries against the full scan (SPEC.md 8.3). */
static void check_filters(const mh_reader *r, const fuzz_vec *all, int *err) {
    size_t nw = mh_reader_window_count(r);
    for (size_t i = 0; i < nw && i < 8; i++) {
        mh_window_info wi = {.struct_size = sizeof wi};
        int rc = mh_reader_window_info(r, i, &wi);
        FUZZ_ASSERT_NAMED(rc);
        if (rc != MH_OK) {
            *err = *err ? *err : rc;
            continue;
        }
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        q.filter = MH_FILTER_WINDOW;
        q.window = wi.window;
        fuzz_vec got = {0};
        int done = 0;
        rc = fuzz_cursor_scan(r, &q, QUERY_LIMIT, 7, &got, &done);
        FUZZ_ASSERT_NAMED(rc);
        if (rc == MH_OK && done && all && !fuzz_lenient()) {
            FUZZ_ASSERT_MSG(got.n == wi.accesses, "a window filter disagrees with its table");
            for (size_t k = 0; k < got.n; k++)
                fuzz_assert_same(&got.v[k], &all->v[wi.id_first + k], "window filter", k);
        }
        if (rc != MH_OK && !*err)
            *err = rc;
        fuzz_vec_free(&got);
    }
    for (uint32_t s = 0; s < 4; s++) { /* stream 3 is not declared: nothing */
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        q.streams = &s;
        q.nstreams = 1;
        fuzz_vec got = {0}, want = {0};
        int done = 0;
        int rc = fuzz_cursor_scan(r, &q, QUERY_LIMIT, 11 + s, &got, &done);
        FUZZ_ASSERT_NAMED(rc);
        if (rc == MH_OK && done && all && !fuzz_lenient()) {
            for (size_t k = 0; k < all->n; k++)
                if (all->v[k].stream == s)
                    fuzz_vec_push(&want, &all->v[k]);
            fuzz_assert_equal(&got, &want, "stream filter vs full scan", &q);
        }
        if (rc != MH_OK && !*err)
            *err = rc;
        fuzz_vec_free(&got);
        fuzz_vec_free(&want);
    }
    /* narrow one-stream questions (the stream postings serve them) */
    size_t n = all ? all->n : 0;
    for (size_t k = 0; k < n && k < 24; k++) {
        const mh_access *x = &all->v[k * (n / 24 + 1) % n];
        uint32_t s = (uint32_t)(k % 4);
        uint64_t a = k & 1 ? x->physical & ~(uint64_t)0xfff : x->physical;
        uint64_t b = k & 1 ? a + 0xfff : a + 7;
        if (b < a)
            b = UINT64_MAX;
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        q.addr_first = a;
        q.addr_last = b;
        q.streams = &s;
        q.nstreams = 1;
        fuzz_vec got = {0}, want = {0};
        int done = 0;
        int rc = fuzz_cursor_scan(r, &q, QUERY_LIMIT, 17 + (unsigned)k, &got, &done);
        FUZZ_ASSERT_NAMED(rc);
        if (rc == MH_OK && done && !fuzz_lenient()) {
            for (size_t j = 0; j < n; j++) {
                const mh_access *y = &all->v[j];
                if (y->stream == s && y->physical <= b && y->physical + (y->size - 1u) >= a)
                    fuzz_vec_push(&want, y);
            }
            fuzz_assert_equal(&got, &want, "narrow stream filter vs full scan", &q);
        }
        if (rc != MH_OK && !*err)
            *err = rc;
        fuzz_vec_free(&got);
        fuzz_vec_free(&want);
    }
    /* a stream's next and previous accesses anywhere from an id (the walk
     * in id order, the stream id runs) */
    for (size_t k = 0; k < n && k < 16; k++) {
        uint64_t from = all->v[k * (n / 16 + 1) % n].id;
        uint32_t s = (uint32_t)(k % 4);
        int fwd = (k / 4) % 2 == 0;
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        q.start_kind = MH_FROM_ID;
        q.start = from;
        q.direction = fwd ? MH_FORWARD : MH_BACKWARD;
        q.streams = &s;
        q.nstreams = 1;
        mh_access got[3];
        size_t ng = 0;
        int rc = mh_query_run(r, &q, got, 3, &ng);
        FUZZ_ASSERT_NAMED(rc);
        if (rc == MH_OK && !fuzz_lenient()) {
            const mh_access *want[3];
            size_t nwant = 0;
            for (size_t j = 0; j < n && nwant < 3; j++) {
                const mh_access *y = &all->v[fwd ? j : n - 1 - j];
                if (y->stream == s && (fwd ? y->id > from : y->id < from))
                    want[nwant++] = y;
            }
            FUZZ_ASSERT_MSG(nwant == ng, "a stream's next accesses: count differs from the scan");
            for (size_t j = 0; j < nwant; j++)
                fuzz_assert_same(&got[j], want[j], "a stream's next access vs full scan", j);
        }
        if (rc != MH_OK && !*err)
            *err = rc;
    }
}

/* The full scan, when it succeeds whole (else an empty vector). */
static int full_scan(const mh_reader *r, fuzz_vec *all) {
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    int done = 0;
    int rc = fuzz_cursor_scan(r, &q, QUERY_LIMIT, 3, all, &done);
    FUZZ_ASSERT_NAMED(rc);
    if (rc != MH_OK || !done)
        all->n = 0;
    return rc;
}

/* Every group of every segment's id map through the reader's API (what a
 * query following labels reads): MH_OK, or the first data error. */
static int read_labels(const mh_reader *r) {
    uint32_t *labels = fuzz_malloc(MH_IDMAP_GROUP_MAX * sizeof *labels);
    int first_err = MH_OK;
    for (size_t i = 0; i < 2; i++) {
        const mh_seg *seg = NULL;
        mh_diag d = {0, 0, ""};
        if (mh_reader_seg(r, i, &seg, &d) != MH_OK)
            continue; /* the segment's own damage, seen by the exercise */
        for (uint32_t s = 0; s < seg->nslices; s++) {
            mh_slice sl;
            mh_seg_slice(seg, s, &sl);
            for (uint32_t x = 0; x < sl.count;) {
                uint32_t first = 0, n = 0;
                int rc = mh_idmap_labels(seg, s, x, labels, &first, &n, &d);
                if (rc == MH_ENOTFOUND)
                    goto next_seg; /* no id map: nothing to read */
                FUZZ_ASSERT_NAMED(rc);
                if (rc != MH_OK) {
                    FUZZ_ASSERT_MSG(d.msg[0] != 0, "an id map failure without a detail");
                    if (first_err == MH_OK)
                        first_err = rc;
                    break;
                }
                FUZZ_ASSERT(first <= x && n >= 1 && x - first < n && n <= MH_IDMAP_GROUP_MAX);
                for (uint32_t k = 0; k < n; k++)
                    FUZZ_ASSERT_MSG(labels[k] < sl.chunk_count, "a label past the slice's chunks");
                x = first + n;
            }
        }
    next_seg:;
    }
    free(labels);
    return first_err;
}

/* Every group of every segment's id transitions decoded, and the search at
 * each sample's transition compared with the decoded samples: MH_OK, or
 * the first data error. */
static int read_idtime(const mh_reader *r) {
    int first_err = MH_OK;
    uint64_t *t = fuzz_malloc(MHF_IDTIME_S_MAX * sizeof *t);
    for (size_t i = 0; i < 2; i++) {
        const mh_seg *seg = NULL;
        mh_diag d = {0, 0, ""};
        if (mh_reader_seg(r, i, &seg, &d) != MH_OK)
            continue;
        /* w checked whole (what decoding needs), v as a query gets it (by
         * pieces when the piece sums cover it: what the search needs) */
        mh_idtime_view v, w;
        int rc = mh_idtime_view_get(seg, &v, &d);
        if (rc == MH_OK)
            rc = mh_idtime_view_whole(seg, &w, &d);
        if (rc == MH_ENOTFOUND)
            continue;
        FUZZ_ASSERT_NAMED(rc);
        if (rc != MH_OK) {
            FUZZ_ASSERT_MSG(d.msg[0] != 0, "an id transitions failure without a detail");
            if (first_err == MH_OK)
                first_err = rc;
            continue;
        }
        for (uint32_t s = 0; s < seg->nslices; s++) {
            mh_slice sl;
            mh_seg_slice(seg, s, &sl);
            uint32_t ns = (uint32_t)(((uint64_t)sl.count + w.k - 1) / w.k);
            uint32_t g = mh_idtime_first_group(&w, s);
            for (uint32_t j0 = 0; j0 < ns; j0 += w.s, g++) {
                uint32_t c = ns - j0 < w.s ? ns - j0 : w.s;
                rc = mh_idtime_decode(&w, g, c, t, &d);
                FUZZ_ASSERT_NAMED(rc);
                if (rc != MH_OK) {
                    FUZZ_ASSERT_MSG(d.msg[0] != 0, "an id transitions failure without a detail");
                    if (first_err == MH_OK)
                        first_err = rc;
                    break;
                }
                /* the search (which reads group records and words only)
                 * never lands past the slice's samples */
                for (uint32_t k = 0; k < c; k++) {
                    uint32_t j = 0;
                    rc = mh_idtime_first_at_least(&v, s, sl.count, t[k], &j, &d);
                    FUZZ_ASSERT_NAMED(rc);
                    if (rc != MH_OK) {
                        if (first_err == MH_OK)
                            first_err = rc;
                        break;
                    }
                    FUZZ_ASSERT(j <= ns);
                    /* clean by fsck: samples do not decrease across groups,
                     * so j is the first of the run of samples equal to t[k] */
                    if (!fuzz_lenient()) {
                        FUZZ_ASSERT_MSG(j <= j0 + k, "the search passes a sample at its transition");
                        if (j >= j0)
                            FUZZ_ASSERT_MSG(t[j - j0] == t[k] && (j == j0 || t[j - j0 - 1] < t[k]),
                                            "the search misses the first sample at a transition");
                    }
                }
            }
        }
    }
    free(t);
    return first_err;
}

/* Narrow candidate queries on every segment's address postings (what a
 * query on a few words reads): MH_OK, or the first data error. */
static int read_apost(const mh_reader *r, const fuzz_vec *all) {
    int first_err = MH_OK;
    uint64_t *scratch = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < 2; i++) {
        const mh_seg *seg = NULL;
        mh_diag d = {0, 0, ""};
        if (mh_reader_seg(r, i, &seg, &d) != MH_OK)
            continue;
        size_t n = all ? all->n : 0;
        for (size_t k = 0; k < n + 2 && k < 66; k++) {
            uint64_t a = k < n ? all->v[k * (n / 64 + 1) % n].physical : k == n ? 0 : UINT64_MAX;
            uint64_t b = a > UINT64_MAX - 63 ? UINT64_MAX : a + (k & 1 ? 63 : 0);
            mh_apost_iter it;
            int rc = mh_apost_query(seg, a, b, (uint32_t)(k % 7) + 1, &it, &scratch, &cap, &d);
            FUZZ_ASSERT_NAMED(rc < 0 ? rc : MH_OK); /* 1 served, 0 not */
            if (rc < 0) {
                FUZZ_ASSERT_MSG(d.msg[0] != 0, "an address postings failure without a detail");
                if (first_err == MH_OK)
                    first_err = rc;
                break;
            }
            if (rc == 1) { /* next and prev stay inside the slices */
                uint32_t x = mh_apost_next(&it, 0), y = mh_apost_prev(&it, UINT32_MAX - 1);
                FUZZ_ASSERT(x == UINT32_MAX || x < seg->nslices);
                FUZZ_ASSERT(y == UINT32_MAX || (y < seg->nslices && x <= y));
            }
        }
    }
    free(scratch);
    return first_err;
}

/* Forward queries from transition 0 on addresses of the scan (and at 0
 * and 2^64 - 1) with the span sets used and ignored (the skip into segment
 * 1 asks its node): MH_OK, or the first data error; when fsck calls the
 * store clean both ways answer the same. */
static int read_span(mh_reader *r, const fuzz_vec *all) {
    int first_err = MH_OK;
    size_t n = all ? all->n : 0;
    mh_access got[2][8];
    for (size_t k = 0; k < 2 * (n + 2) && k < 68; k++) {
        mh_query q;
        mh_query_init(&q);
        size_t j = k / 2; /* odd k: a page, of one stream (the stream nodes) */
        q.addr_first = j < n ? all->v[j * (n / 32 + 1) % n].physical + 1 : j == n ? 0 : UINT64_MAX;
        q.addr_last = q.addr_first;
        q.ops = (uint32_t)(j % 7) + 1;
        uint32_t stream = (uint32_t)(j % 4); /* the fixture's three and one more */
        if (k & 1) {
            q.addr_first &= ~(uint64_t)0xfff;
            q.addr_last = q.addr_first + 0xfff;
            q.streams = &stream;
            q.nstreams = 1;
        }
        size_t m[2] = {0, 0};
        int rc[2];
        for (int off = 0; off < 2; off++) {
            r->span_off = off;
            r->sspan_off = off;
            rc[off] = mh_query_run(r, &q, got[off], 8, &m[off]);
            FUZZ_ASSERT_NAMED(rc[off]);
        }
        r->span_off = 0;
        r->sspan_off = 0;
        if (rc[0] != MH_OK && first_err == MH_OK)
            first_err = rc[0];
        if (rc[0] == MH_OK && rc[1] == MH_OK && !fuzz_lenient()) {
            FUZZ_ASSERT_MSG(m[0] == m[1], "span sets used and ignored disagree");
            for (size_t i = 0; i < m[0]; i++)
                fuzz_assert_same(&got[0][i], &got[1][i], "span sets used and ignored", i);
        }
    }
    return first_err;
}

/* The real section `type` of segment seg with bytes flipped: payload bytes
 * taken three at a time, a 16-bit offset into the section and an XOR mask
 * (the id map, the address set, the address postings, the id transitions,
 * and segment 1's span address set: the fixture's segment 0, position 1,
 * has none). */
static uint8_t *mutated_real(int seg, uint32_t type, const char *what, const uint8_t *data,
                             size_t len, size_t *out_len) {
    uint64_t off = 0, size = 0;
    uint32_t cnt = 0;
    FUZZ_ASSERT_MSG(mhf_seg_find(g_seg[seg], g_seg_size[seg], type, &off, &size, &cnt), what);
    uint8_t *m = fuzz_malloc((size_t)size);
    memcpy(m, g_seg[seg] + off, (size_t)size);
    for (size_t i = 0; i + 3 <= len; i += 3) {
        size_t at = ((size_t)data[i] | (size_t)data[i + 1] << 8) % (size_t)size;
        m[at] ^= data[i + 2] ? data[i + 2] : 1;
    }
    *out_len = (size_t)size;
    return m;
}

/* The address postings' type in segment seg of the fixture: 10, or 14
 * (with wide ranges, format 2.6: segment 1's). */
static uint32_t apost_type(int seg) {
    uint64_t off, size;
    uint32_t cnt;
    return mhf_seg_find(g_seg[seg], g_seg_size[seg], MHF_SECT_APOSTW, &off, &size, &cnt)
               ? MHF_SECT_APOSTW
               : MHF_SECT_APOST;
}

static void run(uint32_t which, int seg, uint32_t type, uint32_t flags, const uint8_t *data,
                size_t len) {
    static const uint32_t types[5] = {MHF_SECT_DICT, MHF_SECT_SLICES, MHF_SECT_SUMMARY, 0,
                                      MHF_SECT_IDMAP};
    uint32_t t = which == 3 ? type : which == 5 ? MHF_SECT_IDMAP
                                   : which >= 18 ? MHF_SECT_SRUNS
                                   : which >= 16 ? MHF_SECT_SSPAN
                                   : which >= 14 ? MHF_SECT_SPOST
                                   : which >= 12 ? MHF_SECT_IDTIME
                                   : which >= 10 ? MHF_SECT_SPAN
                                   : which >= 8 ? apost_type(seg)
                                   : which >= 6 ? MHF_SECT_ASET : types[which];
    uint32_t f = which == 3 ? flags
                            : (t == MHF_SECT_SUMMARY || t == MHF_SECT_IDMAP || t == MHF_SECT_ASET ||
                                       t == MHF_SECT_APOST || t == MHF_SECT_APOSTW ||
                                       t == MHF_SECT_SPAN ||
                                       t == MHF_SECT_IDTIME || t == MHF_SECT_SPOST ||
                                       t == MHF_SECT_SSPAN || t == MHF_SECT_SRUNS
                                   ? 0 : MHF_SECT_REQUIRED);
    uint8_t *mutated = NULL;
    if (which == 5)
        data = mutated = mutated_real(seg, MHF_SECT_IDMAP, "the streams fixture has an id map",
                                      data, len, &len);
    if (which == 7)
        data = mutated = mutated_real(seg, MHF_SECT_ASET,
                                      "the streams fixture has an address set", data, len, &len);
    if (which == 9)
        data = mutated = mutated_real(seg, apost_type(seg),
                                      "the streams fixture has address postings", data, len, &len);
    if (which == 11) /* segment 1's, whichever segment gets it */
        data = mutated = mutated_real(1, MHF_SECT_SPAN,
                                      "the streams fixture's segment 1 has a span address set",
                                      data, len, &len);
    if (which == 13)
        data = mutated = mutated_real(seg, MHF_SECT_IDTIME,
                                      "the streams fixture has id transitions", data, len, &len);
    if (which == 15)
        data = mutated = mutated_real(seg, MHF_SECT_SPOST,
                                      "the streams fixture has stream postings", data, len, &len);
    if (which == 19)
        data = mutated = mutated_real(seg, MHF_SECT_SRUNS,
                                      "the streams fixture has stream id runs", data, len, &len);
    if (which == 17) /* segment 1's, whichever segment gets it */
        data = mutated = mutated_real(1, MHF_SECT_SSPAN,
                                      "the streams fixture's segment 1 has a span stream "
                                      "address set", data, len, &len);
    size_t size = 0;
    uint8_t *bytes = fuzz_segment_put_section(g_seg[seg], g_seg_size[seg], t, f, data, len, &size);
    free(mutated);
    uint8_t *man = fuzz_malloc(g_man_size);
    memcpy(man, g_man, g_man_size);
    uint8_t *rec = man + MHF_MAN_HEADER_SIZE + (size_t)seg * MHF_MAN_REC_SIZE;
    mhf_store_u64(rec + MHF_MREC_FILE_SIZE, size);
    mhf_store_u64(rec + MHF_MREC_HEADER_SUM, mhf_load_u64(bytes + MHF_SEG_HEADER_SUM));
    fuzz_manifest_fix(man, g_man_size);

    char dir[FUZZ_PATH_MAX], name[32];
    fuzz_join(dir, sizeof dir, fuzz_workdir(), "sect");
    fuzz_rmtree(dir);
    fuzz_mkdir(dir);
    for (int i = 0; i < 2; i++) {
        fuzz_segment_name(name, (uint64_t)i);
        fuzz_write_file(dir, name, i == seg ? bytes : g_seg[i], i == seg ? size : g_seg_size[i]);
    }
    fuzz_write_file(dir, "MANIFEST", man, g_man_size);
    free(bytes);
    free(man);

    mh_verify_result res = {.struct_size = sizeof res};
    int vrc = fuzz_verify(dir, 0, &res);
    fuzz_set_lenient(vrc != MH_OK);
    mh_reader *r = NULL;
    FUZZ_OK(mh_reader_open(dir, &r)); /* the MANIFEST is untouched */
    int rc = fuzz_exercise_reader(r, QUERY_LIMIT);
    fuzz_vec all = {0};
    mh_stats st = {.struct_size = sizeof st};
    if (mh_reader_stats(r, &st) != MH_OK) { /* a segment refused: exercise saw it */
        FUZZ_ASSERT(rc != MH_OK);
        mh_reader_close(r);
        goto verdict;
    }
    int src = full_scan(r, &all);
    if (rc == MH_OK)
        rc = src;
    int lrc = read_labels(r);
    if (rc == MH_OK)
        rc = lrc;
    int trc = read_idtime(r);
    if (rc == MH_OK)
        rc = trc;
    int arc = read_apost(r, all.n ? &all : NULL);
    if (rc == MH_OK)
        rc = arc;
    int nrc = read_span(r, all.n ? &all : NULL);
    if (rc == MH_OK)
        rc = nrc;
    check_filters(r, all.n ? &all : NULL, &rc);
    /* the tables: named errors or a description of the scan */
    size_t ns = mh_reader_stream_count(r);
    for (size_t i = 0; i < ns && i < 8; i++) {
        mh_stream_info si;
        mh_stream_info_init(&si);
        int irc = mh_reader_stream_info(r, i, &si);
        FUZZ_ASSERT_NAMED(irc);
        if (irc == MH_OK && all.n && !fuzz_lenient()) {
            uint64_t n = 0;
            for (size_t k = 0; k < all.n; k++)
                n += all.v[k].stream == si.id;
            FUZZ_ASSERT_MSG(n == si.accesses, "a stream's count disagrees with the scan");
        }
    }
    mh_reader_close(r);
verdict:
    fuzz_vec_free(&all);
    fuzz_set_lenient(0);
    if (vrc == MH_OK)
        FUZZ_ASSERT_MSG(rc == MH_OK, "fsck calls the store clean but reading it fails");
    if (fuzz_is_data_error(rc))
        FUZZ_ASSERT_MSG(vrc != MH_OK, "reading the store fails but fsck calls it clean");
    fuzz_rmtree(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init();
    fuzz_producer p;
    fuzz_producer_init(&p, data, size);
    const uint8_t *payload = data;
    size_t len = fuzz_producer_reserve_payload(&p, 8);
    /* 0 dictionary, 1 slices, 2 summary, 3 an unknown type, 4 the id map
     * replaced, 5 the id map with bytes flipped, 6 the address set
     * replaced, 7 the address set with bytes flipped, 8 the address
     * postings replaced, 9 the address postings with bytes flipped, 10
     * the span address set replaced, 11 segment 1's with bytes flipped,
     * 12 the id transitions replaced, 13 with bytes flipped, 14 the
     * stream postings replaced, 15 with bytes flipped, 16 the span
     * stream address set replaced, 17 segment 1's with bytes flipped, 18
     * the stream id runs replaced, 19 with bytes flipped */
    uint32_t which = fuzz_producer_u32_range(&p, 0, 19);
    int seg = fuzz_producer_bool(&p);
    uint32_t type = fuzz_producer_u32_range(&p, MHF_SECT_SRUNS + 1, 0xffff);
    uint32_t flags = fuzz_producer_u32_range(&p, 0, 1);
    if (len > (1u << 20))
        return 0;
    run(which, seg, type, flags, payload, len);
    return 0;
}
