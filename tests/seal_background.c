/*
 * seal_background.c - the automatic commit's seal in the seal thread
 * (writer.c commit_background): with background threads, a segment that
 * reaches commit_accesses is handed to a thread that seals it while the
 * next segment's slices are built, and the writer's thread goes on.
 *
 * 1. Same calls, same store: one script of batches, metadata, stream
 *    declarations, stream metadata, windows, discards and
 *    mh_writer_committed calls, many of them made while a seal is running
 *    (right after the batch that committed), gives byte-identical files and
 *    the same return codes and committed counts with 0 background threads
 *    (the seal in the appending thread) as with 1, 2 and 3. What the seal
 *    takes is fixed at the commit point: a set_meta after it belongs to the
 *    next segment. A discard of accesses an automatic commit holds is
 *    MH_ECOMMITTED even while their seal runs.
 * 2. A seal that fails in the seal thread (RLIMIT_FSIZE just below the
 *    first automatic commit's segment size, SIGXFSZ ignored, in a child,
 *    after an explicit commit): the writer fails
 *    with MH_ENOSPC or MH_EIO and errno EFBIG at a later call, is then
 *    failed (MH_ESTATE), mh_writer_committed tells what the store keeps
 *    (the explicit commit), and the store verifies (after repair at most:
 *    it removes nothing here, the failed seal's .tmp is gone) with exactly
 *    that prefix.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memhist.h"
#include "synth.h"
#include "testutil.h"

#define N 400000u
#define COMMIT 50000u
#define FIRST 10000u /* committed explicitly before the limit */

static mh_writer_options opts(int background) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 2048;
    o.block_accesses = 256;
    o.commit_accesses = COMMIT;
    o.background = background;
    return o;
}

/* What the script saw: every return code and committed count, in order. */
typedef struct log {
    uint64_t v[4096];
    size_t n;
} log;

static void note(log *l, uint64_t v) {
    CHECK(l->n < sizeof l->v / sizeof l->v[0]);
    l->v[l->n++] = v;
}

/* The script: batches of 1 .. 9000 accesses; after each, one of the calls
 * that change what the next commit holds, or a committed count, or a
 * discard below the last automatic commit. */
static void script(const char *dir, const mh_access *a, int background, log *l) {
    mh_writer_options o = opts(background);
    mh_writer *w = NULL;
    char err[256] = "";
    CHECKF(mh_writer_open_ex(dir, MH_CREATE, &o, &w, err, sizeof err) == MH_OK,
           "open %s: %s", dir, err);
    tu_rng rng = {12345};
    uint64_t window = 0;
    uint32_t stream = 0;
    for (size_t i = 0, step = 0; i < N; step++) {
        size_t k = 1 + (size_t)tu_below(&rng, 9000);
        if (k > N - i)
            k = N - i;
        CHECK_OK(mh_writer_append_batch(w, a + i, k, NULL));
        i += k;
        char key[32], value[64];
        int rc = MH_OK;
        switch (tu_below(&rng, 8)) {
        case 0:
        case 1:
            snprintf(key, sizeof key, "key%u", (unsigned)tu_below(&rng, 3));
            snprintf(value, sizeof value, "value at %zu, step %zu", i, step);
            rc = mh_writer_set_meta(w, key, value);
            break;
        case 2: {
            mh_stream_info si;
            mh_stream_info_init(&si);
            si.id = ++stream; /* declared, never appended to: count 0 */
            snprintf(value, sizeof value, "stream declared at %zu", i);
            si.name = value;
            rc = mh_writer_stream_declare(w, &si);
            if (rc == MH_OK)
                rc = mh_writer_stream_set_meta(w, stream, "at", value);
            break;
        }
        case 3:
            rc = mh_writer_window_begin(w, ++window);
            break;
        case 4:
            rc = mh_writer_window_end(w);
            break;
        case 5:
            note(l, mh_writer_committed(w));
            break;
        case 6: {
            /* a transition up to 20,000 accesses back: committed when a
             * commit point lies after it (MH_ECOMMITTED, even while the
             * seal of that commit runs), else discarded and appended
             * again so that the script stays in step */
            uint64_t t = a[i > 20000 ? i - 20000 : 0].transition;
            rc = mh_writer_discard_from(w, t);
            if (rc == MH_OK) {
                uint64_t id = mh_writer_next_id(w);
                CHECK(id <= i);
                note(l, id);
                CHECK_OK(mh_writer_append_batch(w, a + id, i - id, NULL));
            }
            break;
        }
        default:
            break;
        }
        note(l, (uint64_t)(int64_t)rc);
    }
    note(l, mh_writer_committed(w));
    CHECK_OK(mh_writer_close(w));
}

static size_t segments_of(const char *dir) {
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    mh_reader_close(r);
    return (size_t)st.segments;
}

static void same_calls_same_store(const mh_access *a) {
    char d0[4096], d1[4096];
    tu_mkdtemp(d0, sizeof d0, "sealbg-0");
    static log l0, l1;
    script(d0, a, 0, &l0);
    size_t nseg = segments_of(d0);
    CHECKF(nseg >= N / COMMIT / 2, "%zu segments", nseg);
    static const int bgs[] = {1, 2, 3, 2};
    for (size_t k = 0; k < sizeof bgs / sizeof *bgs; k++) {
        tu_mkdtemp(d1, sizeof d1, "sealbg-1");
        l1.n = 0;
        script(d1, a, bgs[k], &l1);
        CHECKF(l1.n == l0.n, "background %d: %zu calls logged, %zu without",
               bgs[k], l1.n, l0.n);
        for (size_t i = 0; i < l0.n; i++)
            CHECKF(l1.v[i] == l0.v[i], "background %d: call %zu gave %lld, %lld without",
                   bgs[k], i, (long long)l1.v[i], (long long)l0.v[i]);
        CHECK(segments_of(d1) == nseg);
        tu_same_file(d0, d1, "MANIFEST");
        for (size_t s = 0; s < nseg; s++) {
            char name[64];
            snprintf(name, sizeof name, "seg-%016zx.mhs", s);
            tu_same_file(d0, d1, name);
        }
        tu_rmtree(d1);
    }
    size_t ecommitted = 0;
    for (size_t i = 0; i < l0.n; i++)
        ecommitted += l0.v[i] == (uint64_t)(int64_t)MH_ECOMMITTED;
    printf("same store with 0-3 background threads: %zu segments, %zu calls, "
           "%zu discards refused as committed\n", nseg, l0.n, ecommitted);
    CHECK(ecommitted > 0);
    tu_rmtree(d0);
}

/* child exit codes */
enum { C_OK = 0, C_NEVER_FAILED = 10, C_BAD_CODE = 11, C_NOT_FAILED_STATE = 12,
       C_SETUP = 13, C_BAD_ERRNO = 14 };

static int child(const char *dir, const mh_access *a, rlim_t limit, int fd) {
    mh_writer_options o = opts(2);
    mh_writer *w = NULL;
    if (mh_writer_open(dir, MH_CREATE, &o, &w) != MH_OK)
        return C_SETUP;
    if (mh_writer_append_batch(w, a, FIRST, NULL) != MH_OK || mh_writer_commit(w) != MH_OK)
        return C_SETUP;
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return C_SETUP;
    int rc = MH_OK;
    for (size_t i = FIRST; i < N && rc == MH_OK; i += 4096)
        rc = mh_writer_append_batch(w, a + i, N - i < 4096 ? N - i : 4096, NULL);
    if (rc == MH_OK)
        rc = mh_writer_commit(w);
    if (rc == MH_OK) {
        mh_writer_abandon(w);
        return C_NEVER_FAILED;
    }
    int e = errno;
    char msg[MH_ERRMSG_MAX];
    mh_writer_errmsg(w, msg, sizeof msg);
    uint64_t committed = mh_writer_committed(w);
    fprintf(stderr, "  limit %llu: %s (errno %s) after %llu committed: %s\n",
            (unsigned long long)limit, mh_error_name(rc), strerror(e),
            (unsigned long long)committed, msg);
    char line[64];
    int n = snprintf(line, sizeof line, "%llu %d\n", (unsigned long long)committed,
                     strstr(msg, "cannot write the index of") != NULL);
    if (write(fd, line, (size_t)n) != n)
        return C_SETUP;
    if (rc != MH_ENOSPC && rc != MH_EIO)
        return C_BAD_CODE;
    if (e != EFBIG)
        return C_BAD_ERRNO;
    if (mh_writer_append(w, &a[N - 1]) != MH_ESTATE || mh_writer_commit(w) != MH_ESTATE)
        return C_NOT_FAILED_STATE;
    if (mh_writer_close(w) == MH_OK)
        return C_NOT_FAILED_STATE;
    return C_OK;
}

static void failed_seal(const mh_access *a) {
    /* the second segment's size (the first automatic commit), unlimited */
    char ref[4096], path[4096];
    tu_mkdtemp(ref, sizeof ref, "sealbg-ref");
    mh_writer_options o = opts(2);
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(ref, MH_CREATE, &o, &w));
    CHECK_OK(mh_writer_append_batch(w, a, FIRST, NULL));
    CHECK_OK(mh_writer_commit(w));
    CHECK_OK(mh_writer_append_batch(w, a + FIRST, N - FIRST, NULL));
    CHECK_OK(mh_writer_close(w));
    tu_join(path, sizeof path, ref, "seg-0000000000000001.mhs");
    struct stat st;
    CHECK(stat(path, &st) == 0);
    tu_rmtree(ref);
    /* just below: the seal's last writes (directory) cross the limit; a
     * few KiB below: its index sections do. That segment's data stays
     * below either, so its slices are appended and the seal thread is the
     * one that fails (the detail says so: "cannot write the index of"). */
    rlim_t limits[] = {(rlim_t)st.st_size - 1, (rlim_t)st.st_size - 3000};
    int seal_failed = 0;
    for (size_t li = 0; li < sizeof limits / sizeof *limits; li++) {
        char dir[4096];
        tu_mkdtemp(dir, sizeof dir, "sealbg-fsize");
        tu_rmtree(dir); /* the writer creates it */
        int fds[2];
        CHECK(pipe(fds) == 0);
        fflush(NULL);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            _exit(child(dir, a, limits[li], fds[1]));
        }
        close(fds[1]);
        FILE *f = fdopen(fds[0], "r");
        unsigned long long committed = 0;
        int in_seal = 0;
        CHECK(fscanf(f, "%llu %d", &committed, &in_seal) == 2);
        fclose(f);
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == C_OK,
               "limit %llu: child status 0x%x", (unsigned long long)limits[li], status);
        seal_failed += in_seal;
        /* the store: what the writer said it committed, nothing else */
        mh_verify_result res = {.struct_size = sizeof res};
        CHECK_OK(mh_verify(dir, MH_VERIFY_REPAIR, NULL, NULL, &res));
        CHECK_OK(mh_verify(dir, 0, NULL, NULL, &res));
        CHECKF(committed == FIRST && res.problems == 0 && res.accesses == committed,
               "limit %llu: %llu problems, %llu accesses, %llu committed",
               (unsigned long long)limits[li], (unsigned long long)res.problems,
               (unsigned long long)res.accesses, committed);
        mh_reader *r = NULL;
        CHECK_OK(mh_reader_open(dir, &r));
        tu_check_stats(r, a, (size_t)committed);
        mh_reader_close(r);
        tu_rmtree(dir);
    }
    printf("failed seals in the seal thread: %d of %zu limits\n", seal_failed,
           sizeof limits / sizeof *limits);
    CHECK(seal_failed > 0);
}

int main(void) {
    mh_access *a = calloc(N, sizeof *a);
    CHECK(a);
    mh_synth *s = mh_synth_new(11, N, 0);
    CHECK(s);
    CHECK(mh_synth_next(s, a, N) == N);
    mh_synth_free(s);
    same_calls_same_store(a);
    failed_seal(a);
    free(a);
    return 0;
}
