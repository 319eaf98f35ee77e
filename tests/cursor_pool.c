/*
 * cursor_pool.c - the query contexts cursors take from their reader's pool
 * (library 1.10.5, src/query.c ctx_take / ctx_give) and the block table
 * that grows as a context's cache takes entries (slot_room).
 *
 * On a synthetic store of 64-row blocks (about 3,000 of them, all fitting
 * the default cache):
 *   1. a reader's pool starts empty; a cursor read to its end, its answers
 *      the oracle's, gives its context back at the close with the blocks it
 *      decoded; the next cursor takes that context (the pool is empty while
 *      it is open) and two cursors open at once hold two, both kept after;
 *   2. the table starts at 256 slots and doubles: after questions over the
 *      whole store a context holds more than 1,000 entries, in a table at
 *      least twice that size (a table that did not grow would fill and its
 *      probes never end: the test's timeout); every answer the oracle's;
 *   3. a cursor whose call was refused (NULL n) goes back to the pool, and
 *      the next cursor, which takes the same context, has no detail ("");
 *      a cursor that met a data error (a block made to fail its checksum)
 *      frees its context instead;
 *   4. a cursor open across mh_reader_set_cache: its context, made for the
 *      old budget, is not kept at its close.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "mh_format.h"
#include "query_int.h"
#include "synth.h"
#include "testutil.h"

#define N 200000u

static void write_store(const char *dir, mh_access **all) {
    mh_synth *s = mh_synth_new(77, N, 0);
    CHECK(s != NULL);
    mh_access *a = malloc(N * sizeof *a);
    CHECK(a != NULL);
    CHECK(mh_synth_next(s, a, N) == N);
    mh_synth_free(s);
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.block_accesses = 64;
    o.slice_accesses = 4096;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open_ex(dir, MH_CREATE, &o, &w, NULL, 0));
    CHECK_OK(mh_writer_append_batch(w, a, N, NULL));
    CHECK_OK(mh_writer_close(w));
    *all = a;
}

static size_t pooled(const mh_reader *r, size_t *held) {
    size_t sum, largest;
    *held = 0;
    int n = mh_query_cache_audit(r, held, &sum, &largest);
    CHECKF(*held == sum, "pooled contexts say %zu bytes, their entries hold %zu", *held, sum);
    return (size_t)n;
}

/* A whole-space forward cursor read to its end in batches of 1,000. */
static size_t drain(mh_cursor *c, mh_access *buf) {
    size_t total = 0, k = 0;
    do {
        CHECK_OK(mh_cursor_next(c, buf, 1000, &k));
        total += k;
    } while (k > 0);
    return total;
}

static void check_pool(const mh_reader *r, const mh_access *all) {
    size_t held = 0;
    CHECK(pooled(r, &held) == 0);
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    tu_rng rng = {5};
    tu_check_cursor(r, all, N, &q, N, &rng);
    CHECKF(pooled(r, &held) == 1 && held > 0,
           "after a cursor's close: %zu pooled contexts holding %zu bytes", pooled(r, &held),
           held);
    mh_cursor *c1 = NULL, *c2 = NULL;
    CHECK_OK(mh_cursor_open(r, &q, &c1));
    CHECKF(pooled(r, &held) == 0, "an open cursor left %zu contexts in the pool",
           pooled(r, &held));
    CHECK_OK(mh_cursor_open(r, &q, &c2));
    mh_access *buf = malloc(1000 * sizeof *buf);
    CHECK(buf != NULL);
    CHECK(drain(c1, buf) == N && drain(c2, buf) == N);
    mh_cursor_close(c1);
    mh_cursor_close(c2);
    CHECK(pooled(r, &held) == 2);
    free(buf);
    printf("  pool: a cursor's context kept at its close and taken by the next\n");
}

static void check_table(const mh_reader *r, const mh_access *all) {
    /* questions spread over the whole store on one context (mh_query_run
     * from one thread takes the same pooled context each time) */
    tu_random_queries(r, all, N, 3000, 99);
    uint32_t nent = 0, slots = 0;
    CHECK(mh_query_cache_shape(r, &nent, &slots) >= 1);
    CHECKF(nent > 1000 && slots >= 2 * nent && slots > MHQ_SLOTS_FIRST,
           "a context with %u entries has a table of %u slots", nent, slots);
    printf("  table: %u entries in %u slots (first %u)\n", nent, slots, MHQ_SLOTS_FIRST);
}

static void check_detail(const char *dir) {
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    size_t held = 0;
    mh_cursor *c = NULL;
    CHECK_OK(mh_cursor_open(r, &q, &c));
    mh_access one;
    CHECK(mh_cursor_next(c, &one, 1, NULL) == MH_EINVAL);
    char msg[MH_ERRMSG_MAX];
    CHECK(mh_cursor_errmsg(c, msg, sizeof msg) > 0);
    mh_cursor_close(c);
    CHECK(pooled(r, &held) == 1);
    CHECK_OK(mh_cursor_open(r, &q, &c));
    CHECK(pooled(r, &held) == 0);
    CHECKF(mh_cursor_errmsg(c, msg, sizeof msg) == 0, "a new cursor says \"%s\"", msg);
    mh_cursor_close(c);
    CHECK(pooled(r, &held) == 1);

    /* a cursor open across a change of the cache option */
    CHECK_OK(mh_cursor_open(r, &q, &c));
    CHECK_OK(mh_reader_set_cache(r, (size_t)4 << 20));
    mh_access *buf = malloc(1000 * sizeof *buf);
    CHECK(buf != NULL);
    CHECK(drain(c, buf) == N);
    mh_cursor_close(c);
    CHECKF(pooled(r, &held) == 0, "a context made for the old budget was kept");
    CHECK_OK(mh_cursor_open(r, &q, &c));
    CHECK(drain(c, buf) == N);
    mh_cursor_close(c);
    CHECK(pooled(r, &held) == 1);
    mh_reader_close(r);
    free(buf);
    printf("  detail: a refused call's detail not passed on; old-budget context freed\n");
}

/* A block of the store's first segment made to fail its checksum (a byte
 * in the middle of its data section, which the blocks tile: SPEC.md 5.2):
 * the cursor that meets it frees its context. */
static void check_error(const char *dir) {
    char seg[4096];
    tu_join(seg, sizeof seg, dir, "seg-0000000000000000.mhs");
    size_t len = 0;
    unsigned char *p = tu_read_file(seg, &len);
    CHECK(p != NULL && len > MHF_SEG_HEADER_SIZE);
    uint32_t n = mhf_load_u32(p + MHF2_SEG_DIR_COUNT);
    uint32_t rsz = mhf_load_u32(p + MHF2_SEG_DIR_RECSZ);
    uint64_t at = mhf_load_u64(p + MHF2_SEG_DIR_OFF);
    CHECK(at <= len && (uint64_t)n * rsz <= len - at);
    uint64_t off = 0, size = 0;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *e = p + at + (uint64_t)i * rsz;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) == MHF_SECT_DATA) {
            off = mhf_load_u64(e + MHF2_DIR_OFFSET);
            size = mhf_load_u64(e + MHF2_DIR_BYTES);
        }
    }
    CHECK(size > 2 && off + size <= len);
    p[off + size / 2] ^= 0x40;
    tu_write_file(seg, p, len);
    free(p);
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    mh_cursor *c = NULL;
    CHECK_OK(mh_cursor_open(r, &q, &c));
    mh_access *buf = malloc(1000 * sizeof *buf);
    CHECK(buf != NULL);
    size_t k = 0;
    int rc = MH_OK;
    do
        rc = mh_cursor_next(c, buf, 1000, &k);
    while (rc == MH_OK && k > 0);
    CHECKF(rc == MH_ECHECKSUM || rc == MH_ECORRUPT, "a damaged block read: %s",
           mh_error_name(rc));
    mh_cursor_close(c);
    size_t held = 0;
    CHECKF(pooled(r, &held) == 0, "a cursor that met %s gave its context back",
           mh_error_name(rc));
    mh_reader_close(r);
    free(buf);
    printf("  error: a cursor that met %s freed its context\n", mh_error_name(rc));
}

int main(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "cursor-pool");
    mh_access *all = NULL;
    write_store(dir, &all);
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    check_pool(r, all);
    check_table(r, all);
    mh_reader_close(r);
    check_detail(dir);
    check_error(dir);
    tu_rmtree(dir);
    free(all);
    printf("cursor_pool: ok\n");
    return 0;
}
