/*
 * misuse.c - every documented error of the public API, and that a rejected
 * call changes nothing: NULL arguments, bad flags and options, bad accesses
 * (single and in a batch), decreasing transitions, discarding committed
 * accesses, a second writer, stores that are missing or not stores, bad
 * queries, a writer failed by a file size limit, and the error names; the
 * ABI rules: versions, struct layouts, struct_size of growable structs in
 * and out, reserved fields, fields format 1.x cannot store, end bounds.
 */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char g_dir[4096];

static void path_in(char *buf, size_t cap, const char *name) {
    tu_join(buf, cap, g_dir, name);
}

static mh_access acc(uint64_t t, uint64_t phys, uint32_t size, uint8_t op) {
    mh_access a = {0};
    a.transition = t;
    a.physical = phys;
    a.linear = phys + 0x1000;
    a.has_linear = 1;
    a.size = size;
    a.op = op;
    return a;
}

/* ---- errors -------------------------------------------------------------- */
static void test_error_names(void) {
#define X(name, value, text)                                                   \
    CHECK(name == value);                                                      \
    CHECKF(!strcmp(mh_strerror(value), text), "mh_strerror(%d) = '%s'", value, \
           mh_strerror(value));                                                \
    CHECKF(!strcmp(mh_error_name(value), #name), "mh_error_name(%d) = '%s'",   \
           value, mh_error_name(value));
    MH_ERROR_LIST(X)
#undef X
    static const int unknown[] = {1, 2, 100, -19, -20, -1000, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        CHECK(!strcmp(mh_strerror(unknown[i]), "unknown error"));
        CHECK(!strcmp(mh_error_name(unknown[i]), "MH_UNKNOWN"));
    }
    CHECK(!strcmp(mh_op_name(MH_OP_READ), "read"));
    CHECK(!strcmp(mh_op_name(MH_OP_WRITE), "write"));
    CHECK(!strcmp(mh_op_name(MH_OP_EXEC), "execute"));
    CHECK(mh_op_name(3) == NULL && mh_op_name(255) == NULL && mh_op_name(~0u) == NULL);
}

/* ---- writer open ---------------------------------------------------------- */
static void test_writer_open(void) {
    char store[4096], missing[4096], file[4096], other[4096], empty[4096];
    path_in(store, sizeof store, "open.store");
    path_in(missing, sizeof missing, "missing.store");
    path_in(file, sizeof file, "plain-file");
    path_in(other, sizeof other, "other-dir");
    path_in(empty, sizeof empty, "empty-dir");
    tu_write_file(file, "hello\n", 6);
    CHECK(mkdir(other, 0755) == 0);
    char inside[4096];
    tu_join(inside, sizeof inside, other, "notes.txt");
    tu_write_file(inside, "not a store\n", 12);
    CHECK(mkdir(empty, 0755) == 0);

    mh_writer *w = NULL;
    CHECK_RC(mh_writer_open(NULL, MH_CREATE, NULL, &w), MH_EINVAL);
    CHECK_RC(mh_writer_open("", MH_CREATE, NULL, &w), MH_EINVAL);
    CHECK_RC(mh_writer_open(store, MH_CREATE, NULL, NULL), MH_EINVAL);
    CHECK_RC(mh_writer_open(store, 0, NULL, &w), MH_EINVAL);
    CHECK_RC(mh_writer_open(store, 4, NULL, &w), MH_EINVAL);
    CHECK_RC(mh_writer_open(store, MH_CREATE | 8, NULL, &w), MH_EINVAL);
    struct stat st;
    CHECKF(stat(store, &st) != 0, "a rejected open created %s", store);

    /* options outside their documented ranges */
    mh_writer_options o;
    mh_writer_options_init(&o);
    /* the defaults memhist.h documents */
    CHECK(o.slice_accesses == 32768 && o.block_accesses == 512 &&
          o.chunk_min_accesses == 128 && o.lz4_acceleration == 1 &&
          o.commit_accesses == (1ull << 24) && o.background == 2 && o.reserved == 0);
    mh_writer_options bad;
    bad = o, bad.block_accesses = 63;
    CHECK_RC(mh_writer_open(store, MH_CREATE, &bad, &w), MH_EINVAL);
    bad = o, bad.block_accesses = 65537;
    CHECK_RC(mh_writer_open(store, MH_CREATE, &bad, &w), MH_EINVAL);
    bad = o, bad.block_accesses = 0;
    CHECK_RC(mh_writer_open(store, MH_CREATE, &bad, &w), MH_EINVAL);
    bad = o, bad.slice_accesses = 0;
    CHECK_RC(mh_writer_open(store, MH_CREATE, &bad, &w), MH_EINVAL);
    bad = o, bad.background = -1; /* 0 .. 8 threads */
    CHECK_RC(mh_writer_open(store, MH_CREATE, &bad, &w), MH_EINVAL);
    bad = o, bad.background = 9;
    CHECK_RC(mh_writer_open(store, MH_CREATE, &bad, &w), MH_EINVAL);
    CHECKF(stat(store, &st) != 0, "a rejected open created %s", store);
    /* the bounds themselves are fine */
    bad = o, bad.block_accesses = 64;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &bad, &w));
    mh_writer_abandon(w);
    tu_rmtree(store);
    bad = o, bad.block_accesses = 65536;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &bad, &w));
    mh_writer_abandon(w);
    tu_rmtree(store);
    bad = o, bad.background = 8;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &bad, &w));
    mh_writer_abandon(w);
    tu_rmtree(store);

    /* existence */
    CHECK_RC(mh_writer_open(missing, MH_APPEND, NULL, &w), MH_ENOENT);
    CHECKF(stat(missing, &st) != 0, "MH_APPEND created %s", missing);
    CHECK_RC(mh_writer_open(file, MH_APPEND, NULL, &w), MH_ENOTSTORE);
    CHECK_RC(mh_writer_open(other, MH_APPEND, NULL, &w), MH_ENOTSTORE);
    CHECK_RC(mh_writer_open(other, MH_CREATE, NULL, &w), MH_EEXIST);
    CHECK_RC(mh_writer_open(file, MH_CREATE, NULL, &w), MH_EEXIST);

    /* no background threads: the fork below must not copy a thread that
     * holds an allocator lock (under ASan a child once hung in free(),
     * waiting for a lock of the parent's idle builder threads) */
    mh_writer_options fg;
    mh_writer_options_init(&fg);
    fg.background = 0;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &fg, &w));
    mh_access a = acc(5, 0x100, 8, MH_OP_WRITE);
    CHECK_OK(mh_writer_append(w, &a));
    /* a second writer, in this process and in another one */
    mh_writer *w2 = NULL;
    CHECK_RC(mh_writer_open(store, MH_APPEND, NULL, &w2), MH_ELOCKED);
    CHECK_RC(mh_writer_open(store, MH_CREATE | MH_APPEND, NULL, &w2), MH_ELOCKED);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        mh_writer *w3 = NULL;
        _exit(mh_writer_open(store, MH_APPEND, NULL, &w3) == MH_ELOCKED ? 0 : 1);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "a writer in another process was not refused with MH_ELOCKED");
    CHECK_OK(mh_writer_close(w));
    /* the lock is released by close */
    CHECK_RC(mh_writer_open(store, MH_CREATE, NULL, &w2), MH_EEXIST);
    CHECK_OK(mh_writer_open(store, MH_APPEND, NULL, &w2));
    mh_writer_abandon(w2);
    CHECK_OK(mh_writer_open(store, MH_CREATE | MH_APPEND, NULL, &w2));
    CHECK(mh_writer_next_id(w2) == 1 && mh_writer_committed(w2) == 1);
    CHECK_OK(mh_writer_close(w2));
    /* both flags on a missing store create it; an empty directory is fine */
    CHECK_OK(mh_writer_open(missing, MH_CREATE | MH_APPEND, NULL, &w2));
    CHECK_OK(mh_writer_close(w2));
    CHECK_OK(mh_writer_open(empty, MH_CREATE, NULL, &w2));
    CHECK_OK(mh_writer_close(w2));

    /* NULL handles are accepted where documented */
    CHECK_OK(mh_writer_close(NULL));
    mh_writer_abandon(NULL);
    mh_reader_close(NULL);
    mh_cursor_close(NULL);
}

/* ---- appends --------------------------------------------------------------- */
static void test_append(void) {
    char store[4096];
    path_in(store, sizeof store, "append.store");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 100;
    o.block_accesses = 64;
    o.commit_accesses = 0;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &o, &w));

    mh_access good = acc(10, 0x1000, 4, MH_OP_READ);
    CHECK_RC(mh_writer_append(NULL, &good), MH_EINVAL);
    CHECK_RC(mh_writer_append(w, NULL), MH_EINVAL);
    CHECK_OK(mh_writer_append(w, &good));
    CHECK(mh_writer_next_id(w) == 1);

    enum { NBAD = 13 };
    mh_access bad[NBAD];
    bad[0] = acc(10, 0x1000, 0, MH_OP_READ);            /* size 0 */
    bad[1] = acc(10, UINT64_MAX, 2, MH_OP_READ);        /* wraps */
    bad[2] = acc(10, UINT64_MAX - 7, 9, MH_OP_WRITE);   /* wraps by one */
    bad[3] = acc(10, 0x1000, 4, 3);                     /* unknown op */
    bad[4] = acc(10, 0x1000, 4, MH_OP_READ);
    bad[4].has_linear = 2;                              /* not 0/1 */
    bad[5] = acc(10, 0x1000, UINT32_MAX, 200);          /* unknown op, big */
    /* streams not declared (1), or above MH_STREAM_MAX: MH_ENOSTREAM */
    bad[6] = acc(10, 0x1000, 4, MH_OP_READ);
    bad[6].stream = 1;
    bad[7] = acc(10, 0x1000, 4, MH_OP_READ);
    bad[7].stream = UINT32_MAX;
    bad[8] = acc(10, 0x1000, 4, MH_OP_READ);
    bad[8].stream = MH_STREAM_MAX + 1;
    bad[9] = acc(10, 0x1000, 4, MH_OP_READ);
    bad[9].has_pc = 2;                                  /* not 0/1 either */
    /* reserved bytes */
    for (int k = 0; k < 3; k++) {
        bad[10 + k] = acc(10, 0x1000, 4, MH_OP_READ);
        bad[10 + k].reserved[k == 0 ? 0 : k == 1 ? 2 : 4] = (uint8_t)(1u << k);
    }
#define WANT(kind) ((kind) >= 6 && (kind) <= 8 ? MH_ENOSTREAM : MH_EINVAL)
    for (int i = 0; i < NBAD; i++) {
        snprintf(tu_context, sizeof tu_context, "bad access %d", i);
        CHECK_RC(mh_writer_append(w, &bad[i]), WANT(i));
        CHECK(mh_writer_next_id(w) == 1);
    }
    tu_context[0] = 0;
    mh_access dec = acc(9, 0x1000, 4, MH_OP_READ);
    CHECK_RC(mh_writer_append(w, &dec), MH_EORDER);
    CHECK(mh_writer_next_id(w) == 1);
    /* the largest valid ones */
    mh_access top = acc(10, UINT64_MAX, 1, MH_OP_EXEC);
    CHECK_OK(mh_writer_append(w, &top));
    top = acc(10, UINT64_MAX - (UINT32_MAX - 1ull), UINT32_MAX, MH_OP_WRITE);
    CHECK_OK(mh_writer_append(w, &top));
    CHECK(mh_writer_next_id(w) == 3);

    /* batches: one bad entry, nothing taken, its index reported */
    enum { B = 50 };
    mh_access batch[B];
    for (int i = 0; i < B; i++)
        batch[i] = acc(11 + (uint64_t)i, 0x2000 + 8u * (unsigned)i, 8, (uint8_t)(i % 3));
    static const size_t where[] = {0, 1, 17, B - 1};
    for (size_t k = 0; k < sizeof where / sizeof where[0]; k++) {
        for (int kind = 0; kind < NBAD; kind++) {
            mh_access saved = batch[where[k]];
            mh_access b = bad[kind];
            b.transition = saved.transition;
            batch[where[k]] = b;
            size_t at = 999;
            snprintf(tu_context, sizeof tu_context, "batch: bad %d at %zu", kind, where[k]);
            CHECK_RC(mh_writer_append_batch(w, batch, B, &at), WANT(kind));
            CHECK(at == where[k]);
            CHECK_RC(mh_writer_append_batch(w, batch, B, NULL), WANT(kind));
            CHECK(mh_writer_next_id(w) == 3);
            batch[where[k]] = saved;
        }
        /* a decreasing transition inside the batch */
        if (where[k] > 0) {
            uint64_t saved_t = batch[where[k]].transition;
            batch[where[k]].transition = batch[where[k] - 1].transition - 1;
            size_t at = 999;
            CHECK_RC(mh_writer_append_batch(w, batch, B, &at), MH_EORDER);
            CHECK(at == where[k]);
            CHECK(mh_writer_next_id(w) == 3);
            batch[where[k]].transition = saved_t;
        }
    }
    /* a batch longer than the slice buffer (2 x 100 here) is checked on
     * another path: the same refusals, the same index, nothing taken */
    {
        enum { L = 450 };
        mh_access *lb = calloc(L, sizeof *lb);
        CHECK(lb != NULL);
        for (int i = 0; i < L; i++)
            lb[i] = acc(11 + (uint64_t)i / 2, 0x3000 + 8u * (unsigned)i, 8, (uint8_t)(i % 3));
        static const size_t lwhere[] = {0, 300, L - 1};
        for (size_t k = 0; k < sizeof lwhere / sizeof lwhere[0]; k++) {
            for (int kind = 0; kind < NBAD; kind++) {
                mh_access saved = lb[lwhere[k]];
                mh_access b = bad[kind];
                b.transition = saved.transition;
                lb[lwhere[k]] = b;
                size_t at = 999;
                snprintf(tu_context, sizeof tu_context, "long batch: bad %d at %zu", kind,
                         lwhere[k]);
                CHECK_RC(mh_writer_append_batch(w, lb, L, &at), WANT(kind));
                CHECK(at == lwhere[k]);
                CHECK(mh_writer_next_id(w) == 3);
                lb[lwhere[k]] = saved;
            }
            if (lwhere[k] > 0) {
                uint64_t saved_t = lb[lwhere[k]].transition;
                lb[lwhere[k]].transition = lb[lwhere[k] - 1].transition - 1;
                size_t at = 999;
                CHECK_RC(mh_writer_append_batch(w, lb, L, &at), MH_EORDER);
                CHECK(at == lwhere[k]);
                CHECK(mh_writer_next_id(w) == 3);
                lb[lwhere[k]].transition = saved_t;
            }
        }
        free(lb);
    }
    tu_context[0] = 0;
    /* a batch starting before the writer's last transition */
    {
        mh_access early[2] = {acc(9, 1, 1, MH_OP_READ), acc(12, 1, 1, MH_OP_READ)};
        size_t at = 999;
        CHECK_RC(mh_writer_append_batch(w, early, 2, &at), MH_EORDER);
        CHECK(at == 0);
        CHECK(mh_writer_next_id(w) == 3);
    }
    size_t at = 999;
    CHECK_RC(mh_writer_append_batch(NULL, batch, B, &at), MH_EINVAL);
    CHECK_RC(mh_writer_append_batch(w, NULL, B, &at), MH_EINVAL);
    CHECK_OK(mh_writer_append_batch(w, batch, 0, &at)); /* nothing is fine */
    CHECK(mh_writer_next_id(w) == 3);
    CHECK_OK(mh_writer_append_batch(w, batch, B, &at));
    CHECK(mh_writer_next_id(w) == 3 + B);
    /* pc without has_pc means nothing (like linear without has_linear) */
    {
        mh_access p = acc(batch[B - 1].transition + 1, 0x9000, 1, MH_OP_READ);
        p.pc = 0x400123;
        CHECK_OK(mh_writer_append(w, &p));
        CHECK_OK(mh_writer_discard_from(w, p.transition)); /* takes it back */
        CHECK(mh_writer_next_id(w) == 3 + B);
    }

    /* metadata */
    CHECK_RC(mh_writer_set_meta(NULL, "k", "v"), MH_EINVAL);
    CHECK_RC(mh_writer_set_meta(w, NULL, "v"), MH_EINVAL);
    CHECK_RC(mh_writer_set_meta(w, "", "v"), MH_EINVAL);
    CHECK_RC(mh_writer_set_meta(w, "k", NULL), MH_EINVAL);
    char *longs = malloc(65537);
    CHECK(longs != NULL);
    memset(longs, 'x', 65536);
    longs[65536] = 0;
    CHECK_RC(mh_writer_set_meta(w, longs, "v"), MH_EINVAL);
    CHECK_RC(mh_writer_set_meta(w, "k", longs), MH_EINVAL);
    longs[65535] = 0; /* 65535 bytes: the largest allowed */
    CHECK_OK(mh_writer_set_meta(w, longs, "long key"));
    CHECK_OK(mh_writer_set_meta(w, "long value", longs));
    /* not UTF-8 (SPEC.md 7.2): refused, since the reader would refuse the
     * store; a valid multi-byte one is stored */
    CHECK_RC(mh_writer_set_meta(w, "k", "in\xff.csv"), MH_EINVAL);
    CHECK_RC(mh_writer_set_meta(w, "\xc0\xaf", "v"), MH_EINVAL); /* overlong '/' */
    CHECK_RC(mh_writer_set_meta(w, "k", "\xed\xa0\x80"), MH_EINVAL); /* surrogate */
    CHECK_OK(mh_writer_set_meta(w, "k\xc3\xa9", "\xef\xbf\xbd"));
    {
        mh_stream_info si;
        mh_stream_info_init(&si);
        si.id = 7;
        si.name = "t\xfe";
        CHECK_RC(mh_writer_stream_declare(w, &si), MH_EINVAL);
        si.name = "t\xc3\xa9";
        CHECK_OK(mh_writer_stream_declare(w, &si));
        CHECK_RC(mh_writer_stream_set_meta(w, 7, "k", "\xf4\x90\x80\x80"), MH_EINVAL);
        CHECK_OK(mh_writer_stream_set_meta(w, 7, "k", "\xf4\x8f\xbf\xbf"));
    }

    /* discard: committed accesses cannot go */
    CHECK_OK(mh_writer_commit(w));
    uint64_t committed = mh_writer_committed(w);
    CHECK(committed == 3 + B);
    mh_access more = acc(1000, 0x5000, 8, MH_OP_WRITE);
    CHECK_OK(mh_writer_append(w, &more));
    CHECK_RC(mh_writer_discard_from(w, batch[B - 1].transition), MH_ECOMMITTED);
    CHECK_RC(mh_writer_discard_from(w, 0), MH_ECOMMITTED);
    CHECK(mh_writer_next_id(w) == committed + 1); /* nothing discarded */
    CHECK_OK(mh_writer_discard_from(w, batch[B - 1].transition + 1));
    CHECK(mh_writer_next_id(w) == committed);
    CHECK_OK(mh_writer_close(w));

    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    CHECK(st.accesses == committed);
    CHECK(mh_reader_meta_find(r, longs) && !strcmp(mh_reader_meta_find(r, longs), "long key"));
    CHECK(mh_reader_meta_find(r, "long value") &&
          !strcmp(mh_reader_meta_find(r, "long value"), longs));
    mh_reader_close(r);
    free(longs);
}

/* ---- reader and queries ---------------------------------------------------- */
static void test_reader(void) {
    char store[4096], missing[4096], file[4096], other[4096], garbage[4096];
    path_in(store, sizeof store, "reader.store");
    path_in(missing, sizeof missing, "missing-reader.store");
    path_in(file, sizeof file, "plain-file");     /* made by test_writer_open */
    path_in(other, sizeof other, "other-dir");    /* idem */
    path_in(garbage, sizeof garbage, "garbage.store");
    CHECK(mkdir(garbage, 0755) == 0);
    char man[4096];
    tu_join(man, sizeof man, garbage, "MANIFEST");
    tu_write_file(man, "this is not a manifest at all, but long enough to look like one"
                       " if nobody checked the magic bytes..........", 108);

    mh_reader *r = NULL;
    CHECK_RC(mh_reader_open(NULL, &r), MH_EINVAL);
    CHECK_RC(mh_reader_open("", &r), MH_EINVAL);
    CHECK_RC(mh_reader_open(store, NULL), MH_EINVAL);
    CHECK_RC(mh_reader_open(missing, &r), MH_ENOENT);
    CHECK_RC(mh_reader_open(file, &r), MH_ENOTSTORE);
    CHECK_RC(mh_reader_open(other, &r), MH_ENOTSTORE);
    CHECK_RC(mh_reader_open(garbage, &r), MH_ENOTSTORE);

    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(store, MH_CREATE, NULL, &w));
    for (uint64_t i = 0; i < 100; i++) {
        mh_access a = acc(i / 3, 0x1000 + 4 * i, 4, (uint8_t)(i % 3));
        CHECK_OK(mh_writer_append(w, &a));
    }
    CHECK_OK(mh_writer_set_meta(w, "tracer", "misuse"));
    CHECK_OK(mh_writer_close(w));
    CHECK_OK(mh_reader_open(store, &r));

    mh_stats st = {.struct_size = sizeof st};
    CHECK_RC(mh_reader_stats(NULL, &st), MH_EINVAL);
    CHECK_RC(mh_reader_set_cache(NULL, 1 << 20), MH_EINVAL);
    CHECK_RC(mh_reader_stats(r, NULL), MH_EINVAL);
    const char *k = NULL, *v = NULL;
    size_t nmeta = mh_reader_meta_count(r);
    CHECK(nmeta >= 1);
    CHECK_RC(mh_reader_meta_get(r, nmeta, &k, &v), MH_EINVAL);
    CHECK(mh_reader_meta_find(r, "no such key") == NULL);
    mh_segment_info si = {.struct_size = sizeof si};
    mh_slice_info sl = {.struct_size = sizeof sl};
    mh_chunk_info ci = {.struct_size = sizeof ci};
    mh_column_info col = {.struct_size = sizeof col};
    size_t segs = mh_reader_segment_count(r);
    CHECK(segs == 1);
    CHECK_RC(mh_reader_segment_info(r, segs, &si), MH_EINVAL);
    CHECK_RC(mh_reader_segment_info(r, SIZE_MAX, &si), MH_EINVAL);
    CHECK_OK(mh_reader_segment_info(r, 0, &si));
    CHECK_RC(mh_reader_slice_info(r, segs, 0, &sl), MH_EINVAL);
    CHECK_RC(mh_reader_slice_info(r, 0, si.slices, &sl), MH_EINVAL);
    CHECK_RC(mh_reader_chunk_info(r, segs, 0, &ci), MH_EINVAL);
    CHECK_RC(mh_reader_chunk_info(r, 0, si.chunks, &ci), MH_EINVAL);
    CHECK_RC(mh_reader_column(r, mh_reader_column_count(r), &col), MH_EINVAL);
    CHECK(mh_reader_op_name(r, 3) == NULL);
    CHECK(mh_reader_op_name(r, MH_OP_READ) && !strcmp(mh_reader_op_name(r, MH_OP_READ), "read"));

    /* queries */
    mh_access out[8];
    size_t n = 77;
    mh_query q;
    mh_query_init(&q);
    CHECK(q.start_kind == MH_FROM_TRANSITION && q.direction == MH_FORWARD && q.start == 0 &&
          q.addr_first == 0 && q.addr_last == UINT64_MAX && q.ops == MH_OPS_RW);
    CHECK_OK(mh_query_run(r, &q, out, 8, &n));
    CHECK(n == 8);
    mh_query bad;
    bad = q, bad.addr_first = 10, bad.addr_last = 9;
    CHECK_RC(mh_query_run(r, &bad, out, 8, &n), MH_EINVAL);
    bad = q, bad.addr_first = UINT64_MAX, bad.addr_last = 0;
    CHECK_RC(mh_query_run(r, &bad, out, 8, &n), MH_EINVAL);
    bad = q, bad.ops = 0;
    CHECK_RC(mh_query_run(r, &bad, out, 8, &n), MH_EINVAL);
    bad = q, bad.ops = 8;
    CHECK_RC(mh_query_run(r, &bad, out, 8, &n), MH_EINVAL);
    bad = q, bad.ops = MH_OPS_ALL | 16;
    CHECK_RC(mh_query_run(r, &bad, out, 8, &n), MH_EINVAL);
    bad = q, bad.ops = 0x80000000u;
    CHECK_RC(mh_query_run(r, &bad, out, 8, &n), MH_EINVAL);
    bad = q, bad.start_kind = 2;
    CHECK_RC(mh_query_run(r, &bad, out, 8, &n), MH_EINVAL);
    bad = q, bad.direction = 2;
    CHECK_RC(mh_query_run(r, &bad, out, 8, &n), MH_EINVAL);
    CHECK_RC(mh_query_run(r, &q, NULL, 8, &n), MH_EINVAL);
    CHECK_RC(mh_query_run(NULL, &q, out, 8, &n), MH_EINVAL);
    CHECK_RC(mh_query_run(r, NULL, out, 8, &n), MH_EINVAL);
    CHECK_RC(mh_query_run(r, &q, out, 8, NULL), MH_EINVAL);
    n = 77;
    CHECK_OK(mh_query_run(r, &q, NULL, 0, &n)); /* max 0: nothing to write */
    CHECK(n == 0);
    n = 77;
    CHECK_OK(mh_query_run(r, &q, out, 0, &n));
    CHECK(n == 0);

    mh_cursor *c = NULL;
    bad = q, bad.addr_first = 10, bad.addr_last = 9;
    CHECK_RC(mh_cursor_open(r, &bad, &c), MH_EINVAL);
    bad = q, bad.ops = 0;
    CHECK_RC(mh_cursor_open(r, &bad, &c), MH_EINVAL);
    bad = q, bad.ops = 9;
    CHECK_RC(mh_cursor_open(r, &bad, &c), MH_EINVAL);
    bad = q, bad.start_kind = 7;
    CHECK_RC(mh_cursor_open(r, &bad, &c), MH_EINVAL);
    bad = q, bad.direction = 3;
    CHECK_RC(mh_cursor_open(r, &bad, &c), MH_EINVAL);
    CHECK_RC(mh_cursor_open(NULL, &q, &c), MH_EINVAL);
    CHECK_RC(mh_cursor_open(r, NULL, &c), MH_EINVAL);
    CHECK_RC(mh_cursor_open(r, &q, NULL), MH_EINVAL);
    c = NULL;
    CHECK_OK(mh_cursor_open(r, &q, &c));
    CHECK_RC(mh_cursor_next(c, NULL, 4, &n), MH_EINVAL);
    CHECK_RC(mh_cursor_next(NULL, out, 4, &n), MH_EINVAL);
    CHECK_RC(mh_cursor_next(c, out, 4, NULL), MH_EINVAL);
    n = 77;
    CHECK_OK(mh_cursor_next(c, out, 4, &n));
    CHECK(n == 4 && out[0].id == 0 && out[1].id == 1 && out[2].id == 3 && out[3].id == 4);
    mh_cursor_close(c);
    mh_reader_close(r);

    /* verify */
    mh_verify_result res = {.struct_size = sizeof res};
    CHECK_RC(mh_verify(missing, 0, NULL, NULL, &res), MH_ENOENT);
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &res));
    CHECK(res.problems == 0 && res.accesses == 100 && res.segments == 1);
    /* a thread count (1.10.0): 1 to 16, else MH_EINVAL, as an unknown flag;
     * the library reads no environment variable */
    CHECK(setenv("MEMHIST_FSCK_THREADS", "many", 1) == 0);
    for (unsigned t = 0; t <= MH_VERIFY_THREADS_MAX; t++) {
        CHECK_OK(mh_verify(store, MH_VERIFY_THREADS(t), NULL, NULL, &res));
        CHECK(res.problems == 0 && res.accesses == 100 && res.segments == 1);
    }
    CHECK(unsetenv("MEMHIST_FSCK_THREADS") == 0);
    CHECK(res.threads == 1); /* one segment: the calling thread */
    /* a caller of 1.9 sends the 48 bytes it knows: threads is not written */
    union {
        mh_verify_result r;
        unsigned char b[sizeof(mh_verify_result)];
    } old;
    memset(&old, 0xab, sizeof old);
    old.r.struct_size = (uint32_t)offsetof(mh_verify_result, threads);
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &old.r));
    CHECK(old.r.accesses == 100 && old.r.segments == 1 &&
          old.r.struct_size == offsetof(mh_verify_result, threads));
    for (size_t i = old.r.struct_size; i < sizeof old; i++)
        CHECK(old.b[i] == 0xab);
    CHECK_RC(mh_verify(store, MH_VERIFY_THREADS(MH_VERIFY_THREADS_MAX + 1), NULL, NULL, &res),
             MH_EINVAL);
    CHECK_RC(mh_verify(store, MH_VERIFY_THREADS(255), NULL, NULL, &res), MH_EINVAL);
    CHECK_RC(mh_verify(store, 1u << 16, NULL, NULL, &res), MH_EINVAL);
    CHECK_RC(mh_verify(store, 2u, NULL, NULL, &res), MH_EINVAL);
    CHECK_OK(mh_writer_open(store, MH_APPEND, NULL, &w));
    CHECK_RC(mh_verify(store, MH_VERIFY_REPAIR, NULL, NULL, &res), MH_ELOCKED);
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &res)); /* checking alone is fine */
    mh_writer_abandon(w);
}

/* ---- the ABI -------------------------------------------------------------- */
/* The layouts bindings map byte for byte (memhist.h); LP64 sizes. A grown
 * struct keeps its first published size up to its ABI-1 last member. */
#define SIZE_UPTO(T, f)                                                        \
    ((offsetof(T, f) + sizeof(((T *)0)->f) + _Alignof(T) - 1) / _Alignof(T) *  \
     _Alignof(T))
_Static_assert(sizeof(mh_access) == 56, "mh_access size");
_Static_assert(offsetof(mh_access, id) == 0 && offsetof(mh_access, transition) == 8 &&
                   offsetof(mh_access, linear) == 16 && offsetof(mh_access, physical) == 24 &&
                   offsetof(mh_access, pc) == 32 && offsetof(mh_access, size) == 40 &&
                   offsetof(mh_access, stream) == 44 && offsetof(mh_access, op) == 48 &&
                   offsetof(mh_access, has_linear) == 49 && offsetof(mh_access, has_pc) == 50 &&
                   offsetof(mh_access, reserved) == 51 && sizeof(((mh_access *)0)->reserved) == 5,
               "mh_access layout");
_Static_assert(SIZE_UPTO(mh_query, end) == 56, "mh_query size");
_Static_assert(offsetof(mh_query, struct_size) == 0 && offsetof(mh_query, start_kind) == 4 &&
                   offsetof(mh_query, direction) == 8 && offsetof(mh_query, ops) == 12 &&
                   offsetof(mh_query, start) == 16 && offsetof(mh_query, addr_first) == 24 &&
                   offsetof(mh_query, addr_last) == 32 && offsetof(mh_query, end_kind) == 40 &&
                   offsetof(mh_query, reserved) == 44 && offsetof(mh_query, end) == 48,
               "mh_query layout");
_Static_assert(SIZE_UPTO(mh_writer_options, reserved) == 40 && offsetof(mh_writer_options, struct_size) == 0 &&
                   offsetof(mh_writer_options, slice_accesses) == 4 &&
                   offsetof(mh_writer_options, commit_accesses) == 24 &&
                   offsetof(mh_writer_options, reserved) == 36,
               "mh_writer_options layout");
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(mh_stats) == 112 && SIZE_UPTO(mh_segment_info, index_bytes) == 144 &&
                   SIZE_UPTO(mh_slice_info, blocks) == 64 && sizeof(mh_chunk_info) == 72 &&
                   sizeof(mh_column_info) == 24 &&
                   SIZE_UPTO(mh_verify_result, repaired) == 48 &&
                   sizeof(mh_verify_result) == 56 && /* threads: 1.10.0 */
                   sizeof(mh_problem) == 32,
               "first published sizes (LP64)");
#endif
_Static_assert(offsetof(mh_stats, struct_size) == 0 && offsetof(mh_segment_info, struct_size) == 0 &&
                   offsetof(mh_slice_info, struct_size) == 0 &&
                   offsetof(mh_chunk_info, struct_size) == 0 &&
                   offsetof(mh_column_info, struct_size) == 0 &&
                   offsetof(mh_verify_result, struct_size) == 0 &&
                   offsetof(mh_problem, struct_size) == 0,
               "struct_size comes first");
_Static_assert(MH_VERSION_NUMBER == MH_VERSION_MAJOR * 10000 + MH_VERSION_MINOR * 100 +
                                        MH_VERSION_PATCH && MH_ABI_VERSION == 1,
               "version macros");

/* A struct as a newer caller would send it: ours plus a tail of fields
 * this library does not know. */
#define TAIL 24
typedef struct big_query {
    mh_query q;
    unsigned char tail[TAIL];
} big_query;
typedef struct big_options {
    mh_writer_options o;
    unsigned char tail[TAIL];
} big_options;

/* Output struct rule for one introspection call: too small a struct_size is
 * refused before anything is written; a larger one gets exactly the
 * library's sizeof bytes, struct_size and the tail untouched. call fills
 * the struct at p (of sizeof size bytes plus TAIL). */
typedef int (*fill_fn)(const mh_reader *r, void *p);
static void check_out_struct(const char *what, const mh_reader *r, fill_fn call, size_t size,
                             size_t first) {
    snprintf(tu_context, sizeof tu_context, "output struct %s", what);
    unsigned char ref[512], buf[512];
    CHECK(size + TAIL <= sizeof ref);
    memset(ref, 0, sizeof ref);
    uint32_t ss = (uint32_t)size;
    memcpy(ref, &ss, 4);
    CHECK_OK(call(r, ref));
    static const uint32_t small[] = {0, 4, 8};
    for (int i = 0; i < 4; i++) {
        uint32_t bad = i < 3 ? small[i] : (uint32_t)first - 1;
        memset(buf, 0x5a, sizeof buf);
        memcpy(buf, &bad, 4);
        CHECK_RC(call(r, buf), MH_EINVAL);
        for (size_t k = 4; k < sizeof buf; k++)
            CHECKF(buf[k] == 0x5a, "struct_size %u: byte %zu written", bad, k);
    }
    memset(buf, 0xa5, sizeof buf);
    ss = (uint32_t)(size + TAIL);
    memcpy(buf, &ss, 4);
    CHECK_OK(call(r, buf));
    uint32_t back;
    memcpy(&back, buf, 4);
    CHECK(back == size + TAIL);
    CHECKF(!memcmp(buf + 4, ref + 4, size - 4), "a larger struct got other contents");
    for (size_t k = size; k < sizeof buf; k++)
        CHECKF(buf[k] == 0xa5, "byte %zu past the library's struct written", k);
    tu_context[0] = 0;
}

static int fill_stats(const mh_reader *r, void *p) { return mh_reader_stats(r, p); }
static int fill_seg(const mh_reader *r, void *p) { return mh_reader_segment_info(r, 0, p); }
static int fill_slice(const mh_reader *r, void *p) { return mh_reader_slice_info(r, 0, 0, p); }
static int fill_chunk(const mh_reader *r, void *p) { return mh_reader_chunk_info(r, 0, 0, p); }
static int fill_column(const mh_reader *r, void *p) { return mh_reader_column(r, 0, p); }

typedef struct problem_sizes {
    size_t calls, wrong;
} problem_sizes;

static void count_problem(void *ctx, const mh_problem *p) {
    problem_sizes *ps = ctx;
    ps->calls++;
    ps->wrong += p->struct_size != sizeof *p;
}

/* The init functions write exactly the caller's bytes: the exported
 * symbols of older headers (called through the parenthesized names, as a
 * program built against 1.1 or 1.2 does) fill only the first published size
 * of a buffer that holds nothing more (ASan would see a byte past it), and
 * the sized ones zero what a newer caller's struct has beyond this
 * library's. */
static void test_init_sizes(void) {
    unsigned char *old = malloc(40);
    CHECK(old != NULL);
    memset(old, 0xee, 40);
    (mh_writer_options_init)((mh_writer_options *)(void *)old);
    uint32_t sz;
    memcpy(&sz, old, 4);
    CHECK(sz == 40);
    free(old);
    old = malloc(56);
    CHECK(old != NULL);
    (mh_query_init)((mh_query *)(void *)old);
    memcpy(&sz, old, 4);
    CHECK(sz == 56);
    free(old);
    /* a struct from a newer header: longer, its tail zeroed, accepted */
    unsigned char big[sizeof(mh_writer_options) + 16];
    memset(big, 0xee, sizeof big);
    mh_writer_options_init_size((mh_writer_options *)(void *)big, sizeof big);
    memcpy(&sz, big, 4);
    CHECK(sz == sizeof big);
    for (size_t i = sizeof(mh_writer_options); i < sizeof big; i++)
        CHECK(big[i] == 0);
    char store[4096];
    path_in(store, sizeof store, "init-sizes.store");
    mh_writer *w = NULL;
    CHECK(mh_writer_open(store, MH_CREATE, (mh_writer_options *)(void *)big, &w) == MH_OK);
    CHECK(mh_writer_close(w) == MH_OK);
    /* below the first published size: nothing is written */
    mh_writer_options tiny;
    memset(&tiny, 0xee, sizeof tiny);
    mh_writer_options_init_size(&tiny, 39);
    CHECK(tiny.struct_size == 0xeeeeeeeeu);
    mh_query q;
    mh_query_init(&q);
    CHECK(q.struct_size == sizeof q && q.addr_last == UINT64_MAX);
}

static void test_abi(void) {
    /* the runtime version is the library's; here the same build */
    CHECK(mh_version_number() == MH_VERSION_NUMBER);
    CHECK(mh_version_number() == 11311);
    CHECK(!strcmp(mh_version_string(), MH_VERSION_STRING));
    CHECK(!strcmp(mh_version_string(), "1.13.11"));

    char store[4096];
    path_in(store, sizeof store, "abi.store");
    mh_writer *w = NULL;
    mh_writer_options o;
    mh_writer_options_init(&o);
    CHECK(o.struct_size == sizeof o);
    mh_writer_options bad;
    static const uint32_t small[] = {0, 1, 4, (uint32_t)SIZE_UPTO(mh_writer_options, reserved) - 1};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        bad = o, bad.struct_size = small[i];
        CHECK_RC(mh_writer_open(store, MH_CREATE, &bad, &w), MH_EINVAL);
    }
    bad = o, bad.reserved = 1;
    CHECK_RC(mh_writer_open(store, MH_CREATE, &bad, &w), MH_EINVAL);
    /* a newer caller's options: a non-zero unknown field is refused, zero
     * ones are accepted and the known fields are used */
    big_options bo;
    memset(&bo, 0, sizeof bo);
    mh_writer_options_init(&bo.o);
    bo.o.struct_size = sizeof bo;
    bo.o.block_accesses = 64;
    bo.o.slice_accesses = 200;
    for (size_t k = 0; k < TAIL; k++) {
        bo.tail[k] = 1;
        CHECK_RC(mh_writer_open(store, MH_CREATE, &bo.o, &w), MH_EINVAL);
        bo.tail[k] = 0;
    }
    struct stat st;
    CHECKF(stat(store, &st) != 0, "a rejected open created %s", store);
    CHECK_OK(mh_writer_open(store, MH_CREATE, &bo.o, &w));
    for (uint64_t i = 0; i < 500; i++) {
        mh_access a = acc(i / 2, 0x1000 + 8 * (i % 50), 8, (uint8_t)(i % 3));
        a.pc = i; /* without has_pc: not stored, not refused */
        CHECK_OK(mh_writer_append(w, &a));
    }
    CHECK_OK(mh_writer_close(w));

    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    mh_segment_info si = {.struct_size = sizeof si};
    CHECK_OK(mh_reader_segment_info(r, 0, &si));
    CHECK(si.rows_per_block == 64 && si.slices >= 2); /* the big struct was read */

    check_out_struct("mh_stats", r, fill_stats, sizeof(mh_stats), SIZE_UPTO(mh_stats, raw_bytes));
    check_out_struct("mh_segment_info", r, fill_seg, sizeof(mh_segment_info),
                     SIZE_UPTO(mh_segment_info, index_bytes));
    check_out_struct("mh_slice_info", r, fill_slice, sizeof(mh_slice_info),
                     SIZE_UPTO(mh_slice_info, blocks));
    check_out_struct("mh_chunk_info", r, fill_chunk, sizeof(mh_chunk_info),
                     SIZE_UPTO(mh_chunk_info, op));
    check_out_struct("mh_column_info", r, fill_column, sizeof(mh_column_info),
                     SIZE_UPTO(mh_column_info, nullable));
    CHECK_RC(mh_reader_stats(r, NULL), MH_EINVAL);

    /* queries: struct_size, reserved, end_kind */
    mh_query q;
    mh_query_init(&q);
    CHECK(q.struct_size == sizeof q && q.end_kind == MH_END_NONE && q.reserved == 0);
    q.ops = MH_OPS_ALL;
    mh_access want[600], out[600];
    size_t nw = 0, n = 0;
    CHECK_OK(mh_query_run(r, &q, want, 600, &nw));
    CHECK(nw == 500);
    mh_cursor *c = NULL;
    mh_query badq;
    static const uint32_t qsmall[] = {0, 4, 40, (uint32_t)SIZE_UPTO(mh_query, end) - 1};
    for (size_t i = 0; i < sizeof qsmall / sizeof qsmall[0]; i++) {
        badq = q, badq.struct_size = qsmall[i];
        CHECK_RC(mh_query_run(r, &badq, out, 600, &n), MH_EINVAL);
        CHECK_RC(mh_cursor_open(r, &badq, &c), MH_EINVAL);
    }
    badq = q, badq.reserved = 1;
    CHECK_RC(mh_query_run(r, &badq, out, 600, &n), MH_EINVAL);
    CHECK_RC(mh_cursor_open(r, &badq, &c), MH_EINVAL);
    static const uint32_t kinds[] = {3, 4, 0x80000000u, UINT32_MAX};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        badq = q, badq.end_kind = kinds[i];
        CHECK_RC(mh_query_run(r, &badq, out, 600, &n), MH_EINVAL);
        CHECK_RC(mh_cursor_open(r, &badq, &c), MH_EINVAL);
    }
    /* without an end kind, end is ignored */
    badq = q, badq.end = 3;
    CHECK_OK(mh_query_run(r, &badq, out, 600, &n));
    CHECK(n == 500);
    big_query bq;
    memset(&bq, 0, sizeof bq);
    bq.q = q;
    bq.q.struct_size = sizeof bq;
    for (size_t k = 0; k < TAIL; k += 5) {
        bq.tail[k] = 0x80;
        CHECK_RC(mh_query_run(r, &bq.q, out, 600, &n), MH_EINVAL);
        CHECK_RC(mh_cursor_open(r, &bq.q, &c), MH_EINVAL);
        bq.tail[k] = 0;
    }
    /* zero tail: the same answer; queries clear the fields 1.x lacks */
    memset(out, 0xff, sizeof out);
    CHECK_OK(mh_query_run(r, &bq.q, out, 600, &n));
    CHECK(n == nw);
    for (size_t i = 0; i < n; i++) {
        CHECK(oracle_same_access(&out[i], &want[i]));
        CHECK(out[i].pc == 0 && out[i].has_pc == 0 && out[i].stream == 0);
        for (size_t k = 0; k < sizeof out[i].reserved; k++)
            CHECK(out[i].reserved[k] == 0);
    }
    CHECK_OK(mh_cursor_open(r, &bq.q, &c));
    memset(out, 0xff, sizeof out);
    CHECK_OK(mh_cursor_next(c, out, 600, &n));
    CHECK(n == nw && out[0].pc == 0 && out[n - 1].stream == 0 && out[n / 2].has_pc == 0);
    mh_cursor_close(c);
    mh_reader_close(r);

    /* verify: struct_size checked at entry, before the store is looked at */
    char missing[4096];
    path_in(missing, sizeof missing, "abi-missing.store");
    mh_verify_result vr = {.struct_size = 8};
    CHECK_RC(mh_verify(store, 0, NULL, NULL, &vr), MH_EINVAL);
    CHECK_RC(mh_verify(missing, 0, NULL, NULL, &vr), MH_EINVAL);
    vr.struct_size = offsetof(mh_verify_result, threads) - 1; /* below the first size */
    CHECK_RC(mh_verify(store, 0, NULL, NULL, &vr), MH_EINVAL);
    CHECK(vr.problems == 0 && vr.accesses == 0); /* not written */
    struct {
        mh_verify_result v;
        unsigned char tail[TAIL];
    } bv;
    memset(&bv, 0xa5, sizeof bv);
    bv.v.struct_size = sizeof bv;
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &bv.v));
    CHECK(bv.v.struct_size == sizeof bv && bv.v.accesses == 500 && bv.v.problems == 0);
    for (size_t k = 0; k < TAIL; k++)
        CHECK(bv.tail[k] == 0xa5);
    CHECK_OK(mh_verify(store, 0, NULL, NULL, NULL)); /* no result is fine */

    /* mh_problem: struct_size set by the library, for repair actions too */
    char tmp[4096];
    tu_join(tmp, sizeof tmp, store, "MANIFEST.tmp");
    tu_write_file(tmp, "x", 1);
    problem_sizes ps = {0, 0};
    mh_verify_result res = {.struct_size = sizeof res};
    CHECK_RC(mh_verify(store, 0, count_problem, &ps, &res), MH_ECORRUPT);
    CHECK_OK(mh_verify(store, MH_VERIFY_REPAIR, count_problem, &ps, &res));
    CHECK(ps.calls >= 2 && ps.wrong == 0);
}

/* ---- a writer failed by the file size limit -------------------------------- */
static int failed_writer_child(const char *store) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {256 << 10, 256 << 10};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 10;
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 1000;
    o.block_accesses = 64;
    o.commit_accesses = 0;
    mh_writer *w = NULL;
    if (mh_writer_open(store, MH_CREATE, &o, &w) != MH_OK)
        return 11;
    tu_rng rng = {99};
    uint64_t committed = 0;
    int rc = MH_OK;
    for (uint64_t i = 0; i < 1000000 && rc == MH_OK; i++) {
        /* random addresses do not compress: the limit comes soon */
        mh_access a = acc(i, tu_next(&rng) >> 1, 8, (uint8_t)(i & 1));
        rc = mh_writer_append(w, &a);
        /* one small committed segment; the next one grows past the limit
         * (every commit seals a segment, so only a long one can reach it) */
        if (rc == MH_OK && i == 4999) {
            rc = mh_writer_commit(w);
            if (rc == MH_OK)
                committed = mh_writer_committed(w);
        }
    }
    if (rc == MH_OK)
        rc = mh_writer_commit(w);
    if (rc != MH_ENOSPC) {
        fprintf(stderr, "expected MH_ENOSPC, got %s\n", mh_error_name(rc));
        return 12;
    }
    if (committed == 0)
        return 13;
    /* failed: only close and abandon remain */
    mh_access a = acc(UINT64_MAX, 0, 1, MH_OP_READ);
    if (mh_writer_append(w, &a) != MH_ESTATE || mh_writer_append_batch(w, &a, 1, NULL) != MH_ESTATE ||
        mh_writer_commit(w) != MH_ESTATE || mh_writer_set_meta(w, "k", "v") != MH_ESTATE ||
        mh_writer_discard_from(w, UINT64_MAX) != MH_ESTATE)
        return 14;
    if (mh_writer_close(w) == MH_OK)
        return 15;
    /* what was committed stays */
    mh_reader *r = NULL;
    if (mh_reader_open(store, &r) != MH_OK)
        return 16;
    mh_stats st = {.struct_size = sizeof st};
    mh_reader_stats(r, &st);
    mh_reader_close(r);
    if (st.accesses != committed) {
        fprintf(stderr, "reader sees %llu accesses, %llu were committed\n",
                (unsigned long long)st.accesses, (unsigned long long)committed);
        return 17;
    }
    return 0;
}

static void test_failed_writer(void) {
    char store[4096];
    path_in(store, sizeof store, "fsize.store");
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(failed_writer_child(store));
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "failed-writer check stopped at step %d (status 0x%x)",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1, status);
    /* a failed writer may leave a temporary file; repair makes it clean */
    mh_verify_result res = {.struct_size = sizeof res};
    CHECK_OK(mh_verify(store, MH_VERIFY_REPAIR, NULL, NULL, &res));
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &res));
}

int main(void) {
    tu_mkdtemp(g_dir, sizeof g_dir, "misuse");
    test_error_names();
    test_writer_open();
    test_append();
    test_reader();
    test_abi();
    test_init_sizes();
    test_failed_writer();
    tu_rmtree(g_dir);
    printf("misuse: ok\n");
    return 0;
}
