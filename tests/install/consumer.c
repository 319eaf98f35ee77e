/*
 * consumer.c - a program outside the memhist tree, built against an
 * installed memhist (tests/install/install_test.sh: with pkg-config, shared
 * and static, and with CMake's find_package). It sees only <memhist.h>:
 * writes a store, reopens it, asks "the last write to these 8 bytes at or
 * before transition T" and the first reads after it, checks the answers
 * against a scan of the same trace, and prints the linked library's
 * version (mh_version_string), which must be the header's.
 * Usage: consumer STORE (STORE must not exist). Exit 0 when every answer is
 * right, 1 otherwise.
 */
#include <stdio.h>
#include <string.h>

#include <memhist.h>

#define N 100000u   /* about three slices at the default size */
#define BASE 0x7f0000100000ull
#define WORDS 1000u /* 8-byte words the trace touches, round robin */

/* Access i of the trace: two per transition, one in three a write. */
static mh_access trace_at(uint64_t i) {
    mh_access a;
    memset(&a, 0, sizeof a);
    a.transition = i / 2;
    a.physical = BASE + (i % WORDS) * 8;
    a.linear = a.physical;
    a.has_linear = 1;
    a.size = 8;
    a.op = i % 3 == 0 ? MH_OP_WRITE : MH_OP_READ;
    return a;
}

static int fail(const char *what, int rc) {
    fprintf(stderr, "consumer: %s: %s (%s)\n", what, mh_strerror(rc), mh_error_name(rc));
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: consumer STORE\n");
        return 2;
    }
    mh_writer *w;
    int rc = mh_writer_open(argv[1], MH_CREATE, NULL, &w);
    if (rc != MH_OK)
        return fail("mh_writer_open", rc);
    if ((rc = mh_writer_set_meta(w, "tracer", "memhist install consumer")) != MH_OK)
        return fail("mh_writer_set_meta", rc);
    mh_access batch[4096];
    for (uint64_t i = 0; i < N;) {
        size_t n = 0;
        while (n < sizeof batch / sizeof *batch && i < N)
            batch[n++] = trace_at(i++);
        if ((rc = mh_writer_append_batch(w, batch, n, NULL)) != MH_OK)
            return fail("mh_writer_append_batch", rc);
    }
    if ((rc = mh_writer_commit(w)) != MH_OK)
        return fail("mh_writer_commit", rc);
    uint64_t committed = mh_writer_committed(w);
    if ((rc = mh_writer_close(w)) != MH_OK)
        return fail("mh_writer_close", rc);

    mh_reader *r;
    if ((rc = mh_reader_open(argv[1], &r)) != MH_OK)
        return fail("mh_reader_open", rc);
    const char *tracer = mh_reader_meta_find(r, "tracer");
    int bad = committed != N || !tracer || strcmp(tracer, "memhist install consumer") != 0;

    /* the last write to word 123 at or before transition T */
    const uint64_t word = 123, T = 31337;
    mh_query q;
    mh_query_init(&q);
    q.direction = MH_BACKWARD;
    q.start = T;
    q.addr_first = BASE + word * 8;
    q.addr_last = q.addr_first + 7;
    q.ops = MH_OPS_WRITE;
    mh_access got[4];
    size_t n;
    if ((rc = mh_query_run(r, &q, got, 1, &n)) != MH_OK)
        return fail("mh_query_run (backward)", rc);
    uint64_t want = UINT64_MAX;
    for (uint64_t i = 0; i < N; i++) {
        mh_access a = trace_at(i);
        if (a.transition <= T && a.op == MH_OP_WRITE && a.physical == q.addr_first)
            want = i;
    }
    bad |= want == UINT64_MAX || n != 1 || got[0].id != want ||
           got[0].transition != trace_at(want).transition ||
           got[0].physical != q.addr_first || got[0].op != MH_OP_WRITE;
    uint64_t last_write = n == 1 ? got[0].id : UINT64_MAX;

    /* the first four reads of that word after it, resuming after its id */
    q.start_kind = MH_FROM_ID;
    q.direction = MH_FORWARD;
    q.start = want;
    q.ops = MH_OPS_READ;
    size_t m;
    memset(got, 0, sizeof got);
    if ((rc = mh_query_run(r, &q, got, 4, &m)) != MH_OK)
        return fail("mh_query_run (forward)", rc);
    uint64_t next = want + 1;
    for (size_t k = 0; k < 4; k++) {
        while (next < N && (trace_at(next).op != MH_OP_READ ||
                            trace_at(next).physical != q.addr_first))
            next++;
        bad |= m != 4 || got[k].id != next || got[k].op != MH_OP_READ;
        next++;
    }
    mh_reader_close(r);

    /* the library actually loaded against the header compiled with: an
     * installed header and library from different builds show here */
    const char *lib_version = mh_version_string();
    if (strcmp(lib_version, MH_VERSION_STRING) != 0 || mh_version_number() != MH_VERSION_NUMBER) {
        fprintf(stderr, "consumer: library %s (%u), header %s (%u)\n", lib_version,
                mh_version_number(), MH_VERSION_STRING, (unsigned)MH_VERSION_NUMBER);
        bad = 1;
    }

    printf("memhist %s: %llu accesses; last write to word %llu at or before "
           "transition %llu: id %llu; then reads %llu %llu %llu %llu: %s\n",
           lib_version, (unsigned long long)committed,
           (unsigned long long)word, (unsigned long long)T,
           (unsigned long long)last_write,
           (unsigned long long)got[0].id, (unsigned long long)got[1].id,
           (unsigned long long)got[2].id, (unsigned long long)got[3].id,
           bad ? "WRONG" : "ok");
    return bad ? 1 : 0;
}
