/*
 * fault_driver.c - runs fault_prog under the failmalloc shim with the
 * allocation budget N = 0, 1, 2, ... up to the number of allocations the
 * session makes (sampled evenly when there are more than about 60), in
 * both failure modes (every allocation after N fails / only number N+1
 * fails) and with no, one and three background builder threads (with
 * three, a slice built before its turn is parked until the thread that
 * writes the slice before it writes it too: writer.c builder_main; a
 * failure then meets parked slices).
 *
 *   fault_driver SHIM PROG WORKDIR [sanitized]
 *
 * Every run must end with exit 0 (no failure reached) or 3 (a clean
 * MH_ENOMEM / MH_EIO), never a signal, a wrong code, a leak or a damaged
 * store (fault_prog checks those). With "sanitized" the test is skipped
 * (exit 77): AddressSanitizer replaces malloc itself and refuses to run
 * behind a preloaded allocator, so this shim cannot be combined with it;
 * the ASan build still runs every other robust test.
 */
#include "robust_util.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static int run_prog(const char *prog, const char *dir, int bg, const char *out_path,
                    const char *err_path, unsigned long *allocs) {
    char bgs[8];
    snprintf(bgs, sizeof bgs, "%d", bg);
    char *argv[] = {(char *)prog, (char *)dir, bgs, NULL};
    int st = rb_run(argv, out_path, err_path);
    size_t len = 0;
    unsigned char *out = rb_read_file(out_path, &len);
    *allocs = 0;
    if (out != NULL) {
        char *s = malloc(len + 1);
        RB_CHECK(s != NULL, "out of memory");
        memcpy(s, out, len);
        s[len] = 0;
        const char *a = strstr(s, "allocs=");
        if (a)
            *allocs = strtoul(a + 7, NULL, 10);
        free(s);
        free(out);
    }
    return st;
}

static void show(const char *path) {
    size_t len = 0;
    unsigned char *b = rb_read_file(path, &len);
    if (b) {
        fwrite(b, 1, len, stderr);
        free(b);
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: fault_driver SHIM PROG WORKDIR [sanitized]\n");
        return 2;
    }
    if (argc > 4 && strcmp(argv[4], "sanitized") == 0) {
        printf("SKIP: allocation failure injection by LD_PRELOAD is not possible in the "
               "ASan build (ASan intercepts malloc and must come first)\n");
        return RB_SKIP;
    }
    const char *shim = argv[1], *prog = argv[2], *work = argv[3];
    rb_rm_dir(work);
    RB_CHECK(mkdir(work, 0755) == 0, "mkdir %s: %s", work, strerror(errno));
    char dir[4096], out[4096], err[4096];
    rb_path(dir, sizeof dir, work, "store");
    rb_path(out, sizeof out, work, "out.txt");
    rb_path(err, sizeof err, work, "err.txt");
    RB_CHECK(setenv("LD_PRELOAD", shim, 1) == 0, "setenv");
    unsigned long runs = 0, clean_errors = 0, successes = 0, bad = 0;
    static const int builders[] = {0, 1, 3};
    for (size_t bi = 0; bi < sizeof builders / sizeof *builders; bi++) {
        int bg = builders[bi];
        unsigned long total = 0;
        unsetenv("FAILMALLOC_ONCE");
        setenv("FAILMALLOC_N", "-1", 1);
        int st = run_prog(prog, dir, bg, out, err, &total);
        if (st != 0)
            show(err);
        RB_CHECK(st == 0, "counting run (background %d) exited with %d", bg, st);
        RB_CHECK(total > 0, "the shim saw no allocation: is it preloaded?");
        printf("background %d: the session makes %lu allocations\n", bg, total);
        unsigned long step = total / 60 + 1;
        for (int once = 0; once < 2; once++) {
            if (once)
                setenv("FAILMALLOC_ONCE", "1", 1);
            else
                unsetenv("FAILMALLOC_ONCE");
            for (unsigned long n = 0; n <= total + 1; n += step) {
                char ns[32];
                snprintf(ns, sizeof ns, "%lu", n);
                setenv("FAILMALLOC_N", ns, 1);
                unsigned long seen = 0;
                st = run_prog(prog, dir, bg, out, err, &seen);
                runs++;
                if (st != 0 && st != 3) {
                    if (bad < 10) {
                        fprintf(stderr, "FAILED: background %d, %s, N = %lu: exit %d%s\n",
                                bg, once ? "FAILMALLOC_ONCE=1" : "all fail after N", n, st,
                                st > 128 ? " (signal)" : "");
                        show(out);
                        show(err);
                    }
                    bad++;
                    continue;
                }
                if (st == 0)
                    successes++;
                else
                    clean_errors++;
            }
        }
    }
    printf("allocation-failure runs: %lu (clean errors %lu, completed %lu, failed %lu)\n",
           runs, clean_errors, successes, bad);
    RB_CHECK(bad == 0, "%lu runs crashed, leaked or returned a wrong code (reproduce: "
             "FAILMALLOC_N=N [FAILMALLOC_ONCE=1] [FAILMALLOC_DEBUG=1] LD_PRELOAD=SHIM PROG "
             "DIR BACKGROUND)", bad);
    RB_CHECK(clean_errors > runs / 4, "too few runs hit an allocation failure");
    rb_rm_dir(work);
    return 0;
}
