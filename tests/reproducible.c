/*
 * reproducible.c - a store's bytes depend on its accesses and options
 * only, not on what a slice builder compressed before: not on whether the
 * writer was reopened between two segments, nor on which background
 * builder took which slice.
 *
 * LZ4_resetStream_fast before each block leaves the stream's hash table
 * dirty, and the compressed bytes depended on what the stream had
 * compressed before in a way a single builder never showed (the same
 * builder history gives the same bytes) but two background builders did,
 * from run to run, depending on which took which slice: an id map section
 * of a real qemu recording 1 byte longer or shorter, blocks of another.
 * Each slice now starts from a clean stream (slice_build.c).
 *
 * Same accesses, same options: one writer committing between two halves,
 * and a writer closed after the first half and reopened (a fresh builder)
 * for the second, must write byte-identical second segments; then 1, 2 and
 * 3 background builders must write the files of no background builder
 * (without the fix, this part failed in most runs: the scheduler decides
 * which builder builds which slice, so no run is sure to show it).
 */
#include <string.h>

#include "memhist.h"
#include "synth.h"
#include "testutil.h"

#define HALF 300000u

/* a[0 .. n) into dir, a commit before a[commit_at]; reopen: the writer
 * is closed there instead and a new one appends the rest. */
static void write_store(const char *dir, const mh_access *a, size_t n,
                        size_t commit_at, int background, int reopen) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.background = background;
    o.commit_accesses = 0; /* segments cut by the explicit commit only */
    mh_writer *w = NULL;
    char err[256] = "";
    CHECKF(mh_writer_open_ex(dir, MH_CREATE, &o, &w, err, sizeof err) == MH_OK,
           "open %s: %s", dir, err);
    for (size_t i = 0; i < n;) {
        if (i == commit_at && !reopen)
            CHECK_OK(mh_writer_commit(w));
        if (i == commit_at && reopen) {
            CHECK_OK(mh_writer_close(w));
            CHECKF(mh_writer_open_ex(dir, MH_APPEND, &o, &w, err, sizeof err) ==
                       MH_OK, "reopen %s: %s", dir, err);
        }
        size_t k = n - i < 4096 ? n - i : 4096;
        if (i < commit_at && i + k > commit_at)
            k = commit_at - i;
        CHECK_OK(mh_writer_append_batch(w, a + i, k, NULL));
        i += k;
    }
    CHECK_OK(mh_writer_close(w));
}

int main(void) {
    size_t n = 2 * HALF;
    mh_access *a = calloc(n, sizeof *a);
    CHECK(a);
    mh_synth *s = mh_synth_new(7, n, 0);
    CHECK(s);
    CHECK(mh_synth_next(s, a, n) == n);
    mh_synth_free(s);
    char d1[4096], d2[4096];
    tu_mkdtemp(d1, sizeof d1, "repro-a");
    tu_mkdtemp(d2, sizeof d2, "repro-b");
    write_store(d1, a, n, HALF, 0, 0);
    write_store(d2, a, n, HALF, 0, 1);
    tu_same_file(d1, d2, "seg-0000000000000000.mhs");
    tu_same_file(d1, d2, "seg-0000000000000001.mhs");
    /* which builder takes which slice is up to the scheduler: several
     * runs (the failure this guards against showed in 2 runs of 3). With
     * more builder states than the machine has cores, most slices are
     * built before their turn, parked, and appended by the thread that
     * appends the slice before them (writer.c builder_main): 8 builders,
     * 16 states for 19 slices */
    static const int bgs[] = {1, 2, 3, 2, 3, 2, 3, 2, 8, 8};
    for (size_t k = 0; k < sizeof bgs / sizeof *bgs; k++) {
        int bg = bgs[k];
        tu_rmtree(d2);
        tu_mkdtemp(d2, sizeof d2, "repro-b");
        write_store(d2, a, n, HALF, bg, 0);
        tu_same_file(d1, d2, "seg-0000000000000000.mhs");
        tu_same_file(d1, d2, "seg-0000000000000001.mhs");
        tu_same_file(d1, d2, "MANIFEST");
    }
    tu_rmtree(d1);
    tu_rmtree(d2);
    free(a);
    return 0;
}
