/*
 * fault_prog.c - a small writer + reader session run under the failmalloc
 * shim (LD_PRELOAD) by fault_driver.
 *
 *   fault_prog DIR [BACKGROUND]
 *
 * Arms the shim (when preloaded), creates a store, appends and commits in
 * two steps, closes, opens a reader, reads stats, runs a query, scans with
 * a cursor, runs mh_verify and a repair; stops at the first error, frees everything and
 * disarms. Then, with allocations working again, checks that the store
 * holds a prefix of the data including every successful commit.
 * Prints one line "rc=NAME committed=N allocs=A failed=F live=L".
 * Exit: 0 all steps succeeded, 3 a step failed cleanly (MH_ENOMEM, or
 * MH_EIO for a thread that could not start), 1 anything else (wrong code,
 * leak, store damaged).
 */
#include "robust_util.h"

#include <dlfcn.h>
#include <string.h>

enum { TOTAL = 3000, FIRST = 1200 };

typedef void (*arm_fn)(void);
typedef void (*disarm_fn)(unsigned long *, unsigned long *, unsigned long *);

static int session(const char *dir, const mh_access *all, int bg, uint64_t *committed) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 256;
    o.block_accesses = 64;
    o.chunk_min_accesses = 8;
    o.commit_accesses = 0;
    o.background = bg;
    mh_writer *w = NULL;
    int rc = mh_writer_open(dir, MH_CREATE, &o, &w);
    if (rc != MH_OK)
        return rc;
    rc = mh_writer_set_meta(w, "tracer", "fault_prog");
    if (rc == MH_OK)
        rc = mh_writer_append_batch(w, all, FIRST, NULL);
    if (rc == MH_OK)
        rc = mh_writer_commit(w);
    if (rc == MH_OK)
        *committed = FIRST;
    if (rc == MH_OK)
        rc = mh_writer_append_batch(w, all + FIRST, TOTAL - FIRST, NULL);
    if (rc != MH_OK) {
        mh_writer_abandon(w);
        return rc;
    }
    rc = mh_writer_close(w);
    if (rc != MH_OK)
        return rc;
    *committed = TOTAL;

    mh_reader *r = NULL;
    rc = mh_reader_open(dir, &r);
    if (rc != MH_OK)
        return rc;
    mh_stats st = {.struct_size = sizeof st};
    rc = mh_reader_stats(r, &st);
    mh_access out[300];
    size_t n = 0;
    mh_query q;
    mh_query_init(&q);
    q.direction = MH_BACKWARD;
    q.start = UINT64_MAX;
    q.addr_first = 0x10000000ull;
    q.addr_last = 0x10008000ull;
    if (rc == MH_OK)
        rc = mh_query_run(r, &q, out, 300, &n);
    mh_cursor *c = NULL;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    if (rc == MH_OK)
        rc = mh_cursor_open(r, &q, &c);
    size_t seen = 0;
    while (rc == MH_OK) {
        rc = mh_cursor_next(c, out, 300, &n);
        if (rc != MH_OK || n == 0)
            break;
        seen += n;
    }
    mh_cursor_close(c);
    mh_reader_close(r);
    if (rc != MH_OK)
        return rc;
    if (seen != TOTAL)
        return -100;
    mh_verify_result res = {.struct_size = sizeof res};
    rc = mh_verify(dir, 0, NULL, NULL, &res);
    if (rc != MH_OK)
        return rc;
    /* repair of a clean store must not lose anything, even when it runs
     * out of memory half-way (checked after the session) */
    return mh_verify(dir, MH_VERIFY_REPAIR, NULL, NULL, &res);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fault_prog DIR [BACKGROUND]\n");
        return 2;
    }
    const char *dir = argv[1];
    int bg = argc > 2 ? atoi(argv[2]) : 0;
    arm_fn arm = (arm_fn)dlsym(RTLD_DEFAULT, "failmalloc_arm");
    disarm_fn disarm = (disarm_fn)dlsym(RTLD_DEFAULT, "failmalloc_disarm");
    mh_access *all = rb_gen_accesses(8, TOTAL);
    rb_rm_dir(dir);
    uint64_t committed = 0;
    if (arm)
        arm();
    int rc = session(dir, all, bg, &committed);
    unsigned long allocs = 0, failed = 0, live = 0;
    if (disarm)
        disarm(&allocs, &failed, &live);
    printf("rc=%s committed=%llu allocs=%lu failed=%lu live=%ld\n",
           rc == -100 ? "WRONG_COUNT" : mh_error_name(rc), (unsigned long long)committed,
           allocs, failed, (long)live);
    int status = rc == MH_OK ? 0 : 3;
    if (rc != MH_OK && rc != MH_ENOMEM && rc != MH_EIO) {
        fprintf(stderr, "fault_prog: unexpected %s\n", rc == -100 ? "scan count" : mh_error_name(rc));
        status = 1;
    }
    if (live != 0) {
        fprintf(stderr, "fault_prog: %ld allocations made while armed were never freed\n",
                (long)live);
        status = 1;
    }
    /* allocations work again: the store must keep every commit */
    mh_access *got = NULL;
    size_t n = 0;
    int lrc = rb_load_store(dir, &got, &n);
    if (lrc != MH_OK && !(committed == 0 && (lrc == MH_ENOENT || lrc == MH_ENOTSTORE))) {
        int vrc;
        rb_verify(dir, MH_VERIFY_REPAIR, 0, &vrc);
        lrc = rb_load_store(dir, &got, &n);
    }
    if (committed > 0) {
        if (lrc != MH_OK || n < committed || n > TOTAL ||
            oracle_compare("after the fault", got, n, all, n) != 0) {
            fprintf(stderr, "fault_prog: store after the fault: %s, %zu accesses, %llu "
                    "committed\n", mh_error_name(lrc), n, (unsigned long long)committed);
            status = 1;
        }
    }
    free(got);
    free(all);
    return status;
}
