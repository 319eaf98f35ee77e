/*
 * kill_test.c - crash safety of `memhist import` under SIGKILL, and power
 * loss modelled as the kill's temporary files truncated to other lengths.
 *
 *   kill_test MEMHIST TRACEE WORKDIR [KILLS [SEED]]
 *
 * Records a real trace (valgrind lackey of TRACEE; a synthetic CSV when
 * valgrind is absent, and the test then exits 77 = skipped after running),
 * imports it once whole as the reference, then KILLS times (default 24):
 * starts `memhist import --report-commits --commit-every N` into a fresh
 * store, waits for a seeded number of "committed" lines plus a seeded
 * delay, SIGKILLs it and checks:
 *   - the store opens, or mh_verify(MH_VERIFY_REPAIR) makes it open;
 *   - it holds exactly a prefix of the reference that includes every access
 *     whose commit was reported before the kill;
 *   - random queries (with resume chains) match a brute-force oracle over
 *     that prefix;
 *   - after repair (mh_verify, or `memhist fsck --repair` every 4th kill)
 *     fsck is clean (library, and `memhist fsck` every 4th kill) and the
 *     store lost nothing it opened with.
 * Every temporary file the kill left (the unsealed tail segment, the
 * manifest's temporary file) is also truncated at several seeded lengths in
 * a copy of the store, with the same checks. The kill moments depend on
 * timing; the checks do not.
 */
#include "robust_util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct ctx {
    const char *memhist;
    const mh_access *all; /* reference content, ids 0..total-1 */
    size_t total;
    rb_rng rng;
    unsigned long opened_directly, needed_repair, fsck_dirty_before_repair,
        empty_stores, truncations, cli_fsck_runs;
} ctx;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Checks the store at dir after a crash: min_count accesses were reported
 * committed. label names the case in messages. */
static void check_store(ctx *c, const char *dir, uint64_t min_count, int queries,
                        int cli_fsck, const char *label) {
    char man[4096];
    rb_path(man, sizeof man, dir, "MANIFEST");
    mh_reader *r = NULL;
    int rc = mh_reader_open(dir, &r);
    if (rc != MH_OK) {
        RB_CHECK(rb_is_data_error(rc) || rc == MH_ENOENT,
                 "%s: open gave %s, not a store error", label, mh_error_name(rc));
        int vrc;
        rb_verify(dir, MH_VERIFY_REPAIR, 0, &vrc);
        rc = mh_reader_open(dir, &r);
        if (rc != MH_OK && min_count == 0 && !rb_exists(man)) {
            /* killed before the store had its first manifest: nothing was
             * committed and there is nothing to keep */
            RB_CHECK(rc == MH_ENOENT || rc == MH_ENOTSTORE,
                     "%s: store without MANIFEST gives %s", label, mh_error_name(rc));
            c->empty_stores++;
            return;
        }
        RB_CHECK(rc == MH_OK, "%s: store does not open even after repair (repair "
                 "returned %s): %s", label, mh_error_name(vrc), mh_error_name(rc));
        c->needed_repair++;
    } else {
        c->opened_directly++;
    }
    mh_access *got = NULL;
    size_t n = 0;
    rc = rb_read_all(r, &got, &n);
    RB_CHECK(rc == MH_OK, "%s: reading the store: %s", label, mh_error_name(rc));
    RB_CHECK(n >= min_count, "%s: store holds %zu accesses, %llu were reported "
             "committed", label, n, (unsigned long long)min_count);
    RB_CHECK(n <= c->total, "%s: store holds %zu accesses, the trace %zu", label,
             n, c->total);
    RB_CHECK(oracle_compare(label, got, n, c->all, n) == 0, "%s: not a prefix of the trace", label);
    free(got);
    mh_stats st = {.struct_size = sizeof st};
    RB_OK(mh_reader_stats(r, &st));
    RB_CHECK(st.accesses == n, "%s: stats say %llu accesses, the cursor read %zu",
             label, (unsigned long long)st.accesses, n);
    rc = rb_check_queries(r, c->all, n, &c->rng, queries);
    RB_CHECK(rc == MH_OK, "%s: queries on the prefix: %s", label,
             rc == -100 ? "wrong answer" : mh_error_name(rc));
    mh_reader_close(r);

    int vrc;
    if (rb_verify(dir, 0, 0, &vrc) != 0 || vrc != MH_OK)
        c->fsck_dirty_before_repair++;
    if (cli_fsck) { /* the command-line repair, as a user would run it */
        char *argv[] = {(char *)c->memhist, "fsck", "--repair", "--quiet", (char *)dir, NULL};
        int st2 = rb_run(argv, NULL, NULL);
        RB_CHECK(st2 == 0, "%s: memhist fsck --repair %s exited with %d", label, dir, st2);
    } else {
        rb_verify(dir, MH_VERIFY_REPAIR, 0, &vrc);
        RB_CHECK(vrc == MH_OK, "%s: fsck --repair returned %s", label, mh_error_name(vrc));
    }
    uint64_t problems = rb_verify(dir, 0, 1, &vrc);
    RB_CHECK(vrc == MH_OK && problems == 0, "%s: fsck after repair: %s, %llu problems",
             label, mh_error_name(vrc), (unsigned long long)problems);
    size_t n2 = 0;
    rc = rb_load_store(dir, &got, &n2);
    RB_CHECK(rc == MH_OK, "%s: open after repair: %s", label, mh_error_name(rc));
    RB_CHECK(n2 >= n && n2 <= c->total, "%s: repair changed %zu accesses into %zu",
             label, n, n2);
    RB_CHECK(oracle_compare(label, got, n2, c->all, n2) == 0, "%s: not a prefix after repair", label);
    free(got);
    if (cli_fsck) {
        char *argv[] = {(char *)c->memhist, "fsck", (char *)dir, NULL};
        int st2 = rb_run(argv, NULL, NULL);
        RB_CHECK(st2 == 0, "%s: memhist fsck %s exited with %d on a repaired store",
                 label, dir, st2);
        c->cli_fsck_runs++;
    }
}

/* Truncates each temporary file of store at a few seeded lengths, in a copy
 * at scratch, and checks each result. */
static void power_loss(ctx *c, const char *store, const char *scratch,
                       uint64_t min_count, int kill_no) {
    size_t nn = 0;
    char **names = rb_list_dir(store, &nn);
    if (names == NULL)
        return;
    for (size_t i = 0; i < nn; i++) {
        size_t len = strlen(names[i]);
        if (len < 4 || strcmp(names[i] + len - 4, ".tmp") != 0)
            continue;
        char p[4096];
        rb_path(p, sizeof p, store, names[i]);
        struct stat stt;
        if (stat(p, &stt) != 0)
            continue;
        uint64_t size = (uint64_t)stt.st_size;
        uint64_t lens[4] = {0, size / 2, size ? rb_below(&c->rng, size) : 0,
                            size ? size - 1 : 0};
        for (int k = 0; k < 4; k++) {
            rb_copy_dir(store, scratch);
            char q[4096];
            rb_path(q, sizeof q, scratch, names[i]);
            RB_CHECK(truncate(q, (off_t)lens[k]) == 0, "truncate %s: %s", q, strerror(errno));
            char label[256];
            snprintf(label, sizeof label, "kill %d, %s truncated to %llu of %llu bytes",
                     kill_no, names[i], (unsigned long long)lens[k],
                     (unsigned long long)size);
            check_store(c, scratch, min_count, 3, 0, label);
            c->truncations++;
        }
    }
    rb_free_names(names, nn);
}

/* Runs the import; returns the exit status, fills the commit counts
 * reported (up to max) and their number. */
static int import_whole(const char *memhist, const char *fmt, const char *trace,
                        const char *store, const char *every, uint64_t *reported,
                        size_t max, size_t *nrep) {
    int fds[2];
    RB_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
    /* -x: instruction fetches too, a denser trace (lackey only) */
    char *argv[] = {(char *)memhist, "import", "-q", "--format", (char *)fmt,
                    "--commit-every", (char *)every, "--report-commits",
                    (char *)trace, (char *)store, NULL, NULL};
    if (strcmp(fmt, "lackey") == 0) {
        argv[10] = argv[9];
        argv[9] = argv[8];
        argv[8] = "-x";
    }
    pid_t pid = rb_spawn(argv, fds[1], NULL);
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[256];
    *nrep = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long v;
        if (sscanf(line, "committed %llu", &v) == 1 && *nrep < max)
            reported[(*nrep)++] = v;
    }
    fclose(f);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: kill_test MEMHIST TRACEE WORKDIR [KILLS [SEED]]\n");
        return 2;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.memhist = argv[1];
    const char *tracee = argv[2], *work = argv[3];
    int kills = argc > 4 ? atoi(argv[4]) : 24;
    c.rng.s = argc > 5 ? strtoull(argv[5], NULL, 0) : 20261122;
    signal(SIGPIPE, SIG_IGN);
    rb_rm_dir(work); /* a flat scratch directory of this test only */
    RB_CHECK(mkdir(work, 0755) == 0, "mkdir %s: %s", work, strerror(errno));

    char trace[4096];
    const char *fmt = NULL;
    int real = rb_make_trace(work, tracee, "200", 300000, trace, sizeof trace, &fmt);

    /* Reference: the whole trace imported, and the commit points. */
    char ref[4096], store[4096], scratch[4096], errlog[4096];
    rb_path(errlog, sizeof errlog, work, "import.err");
    rb_path(ref, sizeof ref, work, "ref");
    rb_path(store, sizeof store, work, "store");
    rb_path(scratch, sizeof scratch, work, "scratch");
    enum { MAXREP = 100000 };
    uint64_t *rep = malloc(MAXREP * sizeof *rep);
    RB_CHECK(rep != NULL, "out of memory");
    size_t nrep = 0;
    double t0 = now();
    int st = import_whole(c.memhist, fmt, trace, ref, "1000000000", rep, MAXREP, &nrep);
    RB_CHECK(st == 0, "reference import exited with %d", st);
    mh_access *all = NULL;
    int rc = rb_load_store(ref, &all, &c.total);
    RB_CHECK(rc == MH_OK, "reading the reference store: %s", mh_error_name(rc));
    c.all = all;
    RB_CHECK(c.total >= 1000, "the trace holds only %zu accesses", c.total);
    for (size_t i = 0; i < c.total; i++)
        RB_CHECK(all[i].id == i, "reference access %zu has id %llu", i,
                 (unsigned long long)all[i].id);
    RB_CHECK(nrep >= 1 && rep[nrep - 1] == c.total,
             "reference import reported %zu commits, last %llu, store holds %zu", nrep,
             nrep ? (unsigned long long)rep[nrep - 1] : 0ull, c.total);

    char every[32];
    snprintf(every, sizeof every, "%zu", c.total / 40 + 1);
    rb_rm_dir(ref);
    t0 = now();
    st = import_whole(c.memhist, fmt, trace, ref, every, rep, MAXREP, &nrep);
    double full = now() - t0;
    RB_CHECK(st == 0, "reference import with --commit-every %s exited with %d", every, st);
    RB_CHECK(nrep >= 2, "only %zu commits reported with --commit-every %s", nrep, every);
    for (size_t i = 0; i < nrep; i++)
        RB_CHECK(rep[i] <= c.total && (i == 0 || rep[i] > rep[i - 1]),
                 "commit report %zu: %llu", i, (unsigned long long)rep[i]);
    RB_CHECK(rep[nrep - 1] == c.total, "last commit reported %llu of %zu",
             (unsigned long long)rep[nrep - 1], c.total);
    printf("trace: %s (%s), %zu accesses, %zu commits of %s, import %.2f s\n", trace,
           real ? "valgrind lackey" : "synthetic", c.total, nrep, every, full);
    double gap_us = full / (double)nrep * 1e6;

    int survived = 0, finished = 0;
    /* a kill that comes after the import finished does not count: try again */
    for (int k = 0; survived < kills && k < 2 * kills; k++) {
        rb_rm_dir(store);
        size_t wait_lines = (size_t)rb_below(&c.rng, nrep);
        useconds_t delay = (useconds_t)rb_below(&c.rng, (uint64_t)(2 * gap_us) + 1);
        if (k < 2) { /* the first two: during start-up and the first commit */
            wait_lines = 0;
            delay = k == 0 ? 0 : (useconds_t)(gap_us / 2);
        }
        int fds[2];
        RB_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
        char *args[] = {(char *)c.memhist, "import", "-q", "--format", (char *)fmt,
                        "--commit-every", every, "--report-commits", trace, store, NULL,
                        NULL};
        if (strcmp(fmt, "lackey") == 0) {
            args[10] = args[9];
            args[9] = args[8];
            args[8] = "-x";
        }
        pid_t pid = rb_spawn(args, fds[1], errlog); /* a killed ASan build may chatter */
        close(fds[1]);
        FILE *f = fdopen(fds[0], "r");
        char line[256];
        uint64_t last = 0;
        size_t lines = 0;
        while (lines < wait_lines && fgets(line, sizeof line, f) != NULL) {
            unsigned long long v;
            if (sscanf(line, "committed %llu", &v) == 1) {
                last = v;
                lines++;
            }
        }
        usleep(delay);
        kill(pid, SIGKILL);
        int wst = 0;
        waitpid(pid, &wst, 0);
        while (fgets(line, sizeof line, f) != NULL) { /* reported before the kill */
            unsigned long long v;
            if (sscanf(line, "committed %llu", &v) == 1)
                last = v;
        }
        fclose(f);
        char label[128];
        snprintf(label, sizeof label, "kill %d (after %zu commit lines + %u us)", k,
                 wait_lines, (unsigned)delay);
        if (WIFEXITED(wst)) {
            RB_CHECK(WEXITSTATUS(wst) == 0, "%s: import exited with %d", label,
                     WEXITSTATUS(wst));
            RB_CHECK(last == c.total, "%s: import finished reporting %llu", label,
                     (unsigned long long)last);
            finished++;
        } else {
            RB_CHECK(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL,
                     "%s: import died with status %d", label, wst);
            survived++;
        }
        /* power loss first: check_store repairs the store in place */
        power_loss(&c, store, scratch, last, k);
        check_store(&c, store, last, 20, k % 4 == 0, label);
    }
    printf("kills survived: %d (asked %d; %d imports finished before their kill)\n",
           survived, kills, finished);
    printf("stores that opened directly: %lu, needed repair: %lu, fsck dirty before "
           "repair: %lu, killed before the first manifest: %lu\n",
           c.opened_directly, c.needed_repair, c.fsck_dirty_before_repair, c.empty_stores);
    printf("temporary-file truncations checked: %lu; memhist fsck runs: %lu\n",
           c.truncations, c.cli_fsck_runs);
    RB_CHECK(survived >= kills, "only %d of %d kills landed during an import",
             survived, kills);
    free(all);
    free(rep);
    rb_rm_dir(scratch);
    rb_rm_dir(store);
    rb_rm_dir(ref);
    if (!real) {
        printf("SKIP: valgrind not found; ran on a synthetic CSV trace instead of a real one\n");
        return RB_SKIP;
    }
    return 0;
}
