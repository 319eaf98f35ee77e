/*
 * fuzz_build.c - see fuzz_build.h. Accesses come from a fixed linear
 * congruential generator, not from the synthetic-trace library, so the
 * fixtures only change when this file does.
 */
#include "fuzz_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_helpers.h"
#include "fuzz_store.h"
#include "memhist.h"

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void save_manifest(const char *dir, const char *manifests, int n) {
    if (!manifests)
        return;
    char path[FUZZ_PATH_MAX], name[32];
    fuzz_join(path, sizeof path, dir, "MANIFEST");
    size_t size;
    uint8_t *buf = fuzz_read_file(path, &size);
    if (!buf)
        return; /* a store that never committed may have none */
    snprintf(name, sizeof name, "MANIFEST.%d", n);
    fuzz_write_file(manifests, name, buf, size);
    free(buf);
}

/* Appends n accesses; every access touches one of a few regions. */
static void append_some(mh_writer *w, uint64_t *seed, uint64_t *t, size_t n,
                        int exec, int sparse, int no_linear) {
    static const uint64_t regions[] = {0x1000, 0x7ffe0000, 0x600000};
    for (size_t i = 0; i < n; i++) {
        mh_access a;
        memset(&a, 0, sizeof a);
        uint64_t r = lcg(seed);
        if (r % 3 == 0)
            *t += sparse && r % 7 == 0 ? 100000 + r % 1000 : 1;
        a.transition = *t;
        a.physical = regions[r % 3] + (lcg(seed) % 64) * 8;
        a.size = 1u << (r % 4);
        a.op = (uint8_t)(exec ? r % 3 : r % 2);
        a.has_linear = (uint8_t)(no_linear ? 0 : (r % 5 != 0));
        a.linear = a.has_linear ? a.physical + 0x400000000000ull : 0;
        FUZZ_OK(mh_writer_append(w, &a));
    }
}

uint64_t fuzz_build_store(const char *dir, enum fuzz_store_kind kind,
                          const char *manifests) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.background = 0;
    o.commit_accesses = 0;
    o.block_accesses = 64;
    o.chunk_min_accesses = 4;
    uint64_t seed = 12345 + (uint64_t)kind, t = 0, total = 0;
    mh_writer *w = NULL;
    switch (kind) {
    case FUZZ_STORE_THREE_SEGMENTS:
        o.slice_accesses = 16;
        FUZZ_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
        FUZZ_OK(mh_writer_set_meta(w, "tool", "fuzz_build"));
        for (int c = 0; c < 3; c++) {
            append_some(w, &seed, &t, 120, c == 2, 0, 0);
            FUZZ_OK(mh_writer_commit(w));
            save_manifest(dir, manifests, c);
        }
        total = 360;
        break;
    case FUZZ_STORE_ONE_BLOCK:
        o.slice_accesses = 1000;
        FUZZ_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
        append_some(w, &seed, &t, 50, 1, 0, 0);
        total = 50;
        break;
    case FUZZ_STORE_EXEC_SPARSE:
        o.slice_accesses = 64;
        o.block_accesses = 100;
        FUZZ_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
        append_some(w, &seed, &t, 500, 1, 1, 1);
        total = 500;
        break;
    case FUZZ_STORE_EMPTY:
        FUZZ_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
        break;
    case FUZZ_STORE_STREAMS: {
        /* what format 2.0 adds: streams (declared, with metadata), pcs on
         * most rows, windows (one across the commit, one empty), so every
         * dictionary table, the stream and pc columns and the address
         * summary are in the segments; segment 1 with two wide accesses,
         * so its address postings are a section 14 (2.6), segment 0's a
         * section 10 */
        o.slice_accesses = 16;
        FUZZ_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
        for (uint32_t id = 1; id <= 2; id++) {
            mh_stream_info si;
            mh_stream_info_init(&si);
            si.id = id;
            si.kind = MH_STREAM_THREAD;
            si.parent = 0;
            si.tid = 100 + id;
            si.name = id == 1 ? "worker-1" : "worker-2";
            FUZZ_OK(mh_writer_stream_declare(w, &si));
        }
        FUZZ_OK(mh_writer_stream_set_meta(w, 2, "role", "io"));
        FUZZ_OK(mh_writer_set_meta(w, "tool", "fuzz_build streams"));
        for (int c = 0; c < 2; c++) {
            for (size_t i = 0; i < 100; i++) {
                if (i == 10 && c == 0)
                    FUZZ_OK(mh_writer_window_begin(w, 1));
                if (i == 30 && c == 0)
                    FUZZ_OK(mh_writer_window_end(w));
                if (i == 80 && c == 0)
                    FUZZ_OK(mh_writer_window_begin(w, 2)); /* ends in commit 2 */
                if (i == 20 && c == 1) {
                    FUZZ_OK(mh_writer_window_end(w));
                    FUZZ_OK(mh_writer_window_begin(w, 3)); /* empty */
                    FUZZ_OK(mh_writer_window_end(w));
                }
                mh_access a;
                memset(&a, 0, sizeof a);
                uint64_t r = lcg(&seed);
                if (r % 3 == 0)
                    t++;
                a.transition = t;
                a.physical = 0x1000 + (r % 5) * 0x10000 + (lcg(&seed) % 64) * 8;
                a.size = 1u << (r % 4);
                a.op = (uint8_t)(r % 3);
                a.stream = (uint32_t)(c == 1 && i >= 50 ? 0 : r % 3);
                a.has_pc = (uint8_t)(r % 7 != 0);
                a.pc = a.has_pc ? 0x400000 + (r % 97) * 4 : 0;
                if (c == 1 && (i == 60 || i == 61)) {
                    /* a write of 64 KiB and a read of 256 KiB: segment 1's
                     * address postings have wide ranges (section 14, 2.6) */
                    a.physical = i == 60 ? 0x200000 : 0x7f0000;
                    a.size = i == 60 ? 1u << 16 : 1u << 18;
                    a.op = i == 60 ? MH_OP_WRITE : MH_OP_READ;
                }
                FUZZ_OK(mh_writer_append(w, &a));
            }
            FUZZ_OK(mh_writer_commit(w));
            save_manifest(dir, manifests, c);
        }
        total = 200;
        break;
    }
    case FUZZ_STORE_META_ONLY:
        FUZZ_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
        FUZZ_OK(mh_writer_set_meta(w, "trace", "none yet"));
        FUZZ_EXPECT_RC(mh_writer_set_meta(w, "", "x"), MH_EINVAL);
        break;
    default:
        FUZZ_ASSERT_MSG(0, "unknown store kind");
    }
    FUZZ_OK(mh_writer_close(w));
    save_manifest(dir, manifests, 9);
    return total;
}
