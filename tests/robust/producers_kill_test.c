/*
 * producers_kill_test.c - SIGKILL during multi-producer appends (issue 9
 * §2, src/merge.c): a child process runs 8 producer threads appending
 * deterministic streams into one writer (reorder_window 0, automatic
 * commits every few thousand accesses); the parent kills it at a seeded
 * moment and checks:
 *   - the store opens, or mh_verify(MH_VERIFY_REPAIR) makes it open, and
 *     fsck is then clean;
 *   - ids are contiguous and the store holds exactly a prefix of the
 *     oracle's merged order: all accesses the producers would ever append,
 *     sorted by (transition, stream, seq) -- with reorder_window 0 the
 *     merge emits nothing an open producer could still undercut, so what
 *     is committed is always such a prefix;
 *   - kills after the first reported commit lose nothing reported.
 * Accesses carry who made them (ORACLE_PHY, tests/oracle_lib/oracle_merge.h).
 *
 *   producers_kill_test WORKDIR [KILLS [SEED]]
 */
#include "robust_util.h"
#include "oracle_merge.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NPROD 8
#define PER_STREAM 60000

static uint32_t stream_id(int i) { return (uint32_t)(i * 37 + 2); }

/* Stream i's accesses, the same in child and parent. */
static void gen_stream(int i, mh_access *out) {
    rb_rng rng = {0x5eed0000u + (uint64_t)i};
    uint64_t t = rb_below(&rng, 100);
    for (size_t j = 0; j < PER_STREAM; j++) {
        t += rb_below(&rng, 4);
        mh_access *a = &out[j];
        memset(a, 0, sizeof *a);
        a->transition = t;
        a->physical = ORACLE_PHY(stream_id(i), j);
        a->size = 8;
        a->op = (uint8_t)rb_below(&rng, 3);
        if (rb_below(&rng, 2)) {
            a->has_pc = 1;
            a->pc = 0x400000 + rb_below(&rng, 4096);
        }
    }
}

typedef struct parg {
    mh_producer *p;
    int i;
    uint64_t seed;
} parg;

static void *child_producer(void *v) {
    parg *a = v;
    mh_access *all = malloc(PER_STREAM * sizeof *all);
    if (!all)
        _exit(3);
    gen_stream(a->i, all);
    rb_rng rng = {a->seed};
    size_t j = 0;
    while (j < PER_STREAM) {
        size_t n = 1 + rb_below(&rng, rb_below(&rng, 4) ? 50 : 700);
        if (n > PER_STREAM - j)
            n = PER_STREAM - j;
        int rc = mh_producer_append_batch(a->p, all + j, n, NULL);
        if (rc != MH_OK)
            _exit(4);
        j += n;
        if (rb_below(&rng, 50) == 0)
            sched_yield();
    }
    free(all);
    return NULL;
}

/* The child: appends until killed (or done). Each commit the writer makes
 * automatically is not visible here; the parent learns the committed
 * count from the pipe the child writes mh_writer_committed() to. */
static void child(const char *dir, uint64_t seed, int report_fd) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 700;
    o.block_accesses = 128;
    o.commit_accesses = 5000;
    o.reorder_window = 0;
    mh_writer *w = NULL;
    if (mh_writer_open(dir, MH_CREATE, &o, &w) != MH_OK)
        _exit(2);
    parg args[NPROD];
    pthread_t th[NPROD];
    for (int i = 0; i < NPROD; i++) {
        mh_stream_info si;
        mh_stream_info_init(&si);
        si.id = stream_id(i);
        si.kind = MH_STREAM_THREAD;
        if (mh_writer_stream_declare(w, &si) != MH_OK)
            _exit(2);
        args[i] = (parg){NULL, i, seed * 100 + (uint64_t)i};
        if (mh_producer_open(w, si.id, &args[i].p) != MH_OK)
            _exit(2);
    }
    for (int i = 0; i < NPROD; i++)
        if (pthread_create(&th[i], NULL, child_producer, &args[i]) != 0)
            _exit(2);
    /* the writer's thread reports what is committed (for sure, as a
     * reader would see it) while the producers run */
    for (;;) {
        uint64_t c = mh_writer_committed(w);
        if (write(report_fd, &c, sizeof c) != sizeof c)
            _exit(5);
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: producers_kill_test WORKDIR [KILLS [SEED]]\n");
        return 2;
    }
    const char *work = argv[1];
    int kills = argc > 2 ? atoi(argv[2]) : 8;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
    mkdir(work, 0755);
    /* the oracle's merged order of everything the producers would append */
    size_t total = (size_t)NPROD * PER_STREAM;
    oracle_rec *want = malloc(total * sizeof *want);
    mh_access *tmp = malloc(PER_STREAM * sizeof *tmp);
    RB_CHECK(want && tmp, "out of memory");
    for (int i = 0; i < NPROD; i++) {
        gen_stream(i, tmp);
        for (size_t j = 0; j < PER_STREAM; j++)
            want[(size_t)i * PER_STREAM + j] = (oracle_rec){tmp[j].transition, stream_id(i), j};
    }
    free(tmp);
    oracle_merge_sort(want, total);
    rb_rng rng = {seed};
    unsigned long repaired = 0, partial = 0;
    size_t max_seen = 0;
    for (int k = 0; k < kills; k++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/k%d", work, k);
        rb_rm_dir(dir);
        int fds[2];
        RB_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
        pid_t pid = fork();
        RB_CHECK(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
            close(fds[0]);
            child(dir, seed + (uint64_t)k, fds[1]);
            _exit(0);
        }
        close(fds[1]);
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        /* kill at a seeded moment: 5 .. 400 ms in */
        uint64_t wait_us = 5000 + rb_below(&rng, 395000);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        uint64_t reported = 0;
        for (;;) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            uint64_t el = (uint64_t)(now.tv_sec - t0.tv_sec) * 1000000u +
                          (uint64_t)((now.tv_nsec - t0.tv_nsec) / 1000);
            if (el >= wait_us)
                break;
            uint64_t c;
            while (read(fds[0], &c, sizeof c) == sizeof c)
                if (c > reported)
                    reported = c;
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        kill(pid, SIGKILL);
        int st;
        RB_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
        RB_CHECK(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) == 0),
                 "kill %d: child failed on its own (status 0x%x)", k, st);
        uint64_t c;
        while (read(fds[0], &c, sizeof c) == sizeof c)
            if (c > reported)
                reported = c;
        close(fds[0]);
        /* open, or repair then open */
        mh_reader *r = NULL;
        int rc = mh_reader_open(dir, &r);
        if (rc != MH_OK) {
            int vrc;
            rb_verify(dir, MH_VERIFY_REPAIR, 0, &vrc);
            repaired++;
            rc = mh_reader_open(dir, &r);
            if (reported == 0 && (rc == MH_ENOENT || rc == MH_ENOTSTORE))
                continue; /* killed before the first MANIFEST */
            RB_CHECK(rc == MH_OK, "kill %d: store does not open after repair: %s",
                     k, mh_error_name(rc));
        }
        mh_access *got = NULL;
        size_t n = 0;
        RB_OK(rb_read_all(r, &got, &n));
        mh_reader_close(r);
        RB_CHECK(n >= reported, "kill %d: %zu accesses in the store, %llu were "
                 "reported committed", k, n, (unsigned long long)reported);
        char what[32];
        snprintf(what, sizeof what, "kill %d", k);
        RB_CHECK(oracle_merge_compare(what, got, want, n) == 0,
                 "kill %d: the store is not a prefix of the merged order", k);
        free(got);
        /* fsck clean (after removing what the kill left) */
        int vrc;
        rb_verify(dir, MH_VERIFY_REPAIR, 0, &vrc);
        uint64_t problems = rb_verify(dir, 0, 1, &vrc);
        RB_CHECK(problems == 0 && vrc == MH_OK, "kill %d: fsck finds %llu "
                 "problems (%s)", k, (unsigned long long)problems,
                 mh_error_name(vrc));
        if (n < total)
            partial++;
        if (n > max_seen)
            max_seen = n;
        rb_rm_dir(dir);
    }
    printf("producers_kill: %d kills, %lu cut short, %lu needed repair, up to "
           "%zu of %zu accesses committed, each a prefix of the merged order\n",
           kills, partial, repaired, max_seen, total);
    free(want);
    return 0;
}
