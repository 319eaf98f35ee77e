/*
 * streams_producers.c - several producers appending at once (issue 9 §2,
 * src/merge.c). Every access carries who made it in its address:
 * physical = (stream + 1) << 40 | seq << 3, seq its index in its stream,
 * so the merged order can be read back through the query API and compared
 * with the oracle's: all accepted accesses sorted by (transition, stream,
 * seq).
 *   - 8 and 64 threads, reorder_window 0: every access is accepted, the
 *     store is the sort of all of them; automatic commits on the way.
 *   - 8 threads, some stalling, reorder_window small: batches may be
 *     refused with MH_ELATE (nothing of them stored); the store is the
 *     sort of the accepted ones (a late batch let through would break it:
 *     the race-free handshake of merge.c under stress).
 *   - MH_ELATE deterministic, and the refusals of the producer API.
 *
 *   test_streams_producers [SEED]
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oracle_merge.h"
#include "testutil.h"

typedef struct prod_arg {
    mh_writer *w;
    mh_producer *p;
    uint32_t stream;
    size_t count;       /* accesses to make */
    uint64_t seed;
    int stall;          /* sleeps now and then */
    oracle_rec *accepted; /* out: what the producer's calls took */
    size_t naccepted;
    size_t late_batches, late_accesses;
} prod_arg;

static void *producer_main(void *arg) {
    prod_arg *a = arg;
    tu_rng rng = {a->seed};
    mh_access *batch = calloc(512, sizeof *batch);
    CHECK(batch != NULL);
    a->accepted = calloc(a->count, sizeof *a->accepted);
    CHECK(a->accepted != NULL);
    uint64_t t = tu_below(&rng, 50);
    size_t seq = 0;
    while (seq < a->count) {
        size_t n = 1 + tu_below(&rng, tu_below(&rng, 4) ? 64 : 500);
        if (n > a->count - seq)
            n = a->count - seq;
        for (size_t i = 0; i < n; i++) {
            /* steps of 0 (equal transitions in a stream), 1 and more;
             * streams tie at equal transitions often */
            t += tu_below(&rng, 3);
            mh_access *x = &batch[i];
            memset(x, 0, sizeof *x);
            x->transition = t;
            x->physical = ORACLE_PHY(a->stream, seq + i);
            x->size = 8;
            x->op = (uint8_t)tu_below(&rng, 3);
            x->stream = 12345; /* ignored: the producer's stream is used */
            if (tu_below(&rng, 2)) {
                x->has_pc = 1;
                x->pc = 0x400000 + t;
            }
        }
        size_t bad = 999;
        int rc = mh_producer_append_batch(a->p, batch, n, &bad);
        if (rc == MH_ELATE) {
            CHECKF(bad == 0, "MH_ELATE names access %zu, not 0", bad);
            a->late_batches++;
            a->late_accesses += n;
        } else {
            CHECKF(rc == MH_OK, "stream %u: append gave %s", a->stream,
                   mh_error_name(rc));
            for (size_t i = 0; i < n; i++)
                a->accepted[a->naccepted++] =
                    (oracle_rec){batch[i].transition, a->stream, seq + i};
        }
        seq += n;
        if (a->stall && tu_below(&rng, 10) == 0) {
            struct timespec ts = {0, (long)tu_below(&rng, 5000) * 1000};
            nanosleep(&ts, NULL);
        }
    }
    free(batch);
    return NULL;
}

/* Reads every access of the store in id order. */
static mh_access *read_all(const char *dir, size_t *n_out) {
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    mh_access *all = calloc(st.accesses + 1, sizeof *all);
    CHECK(all != NULL);
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    q.addr_first = 0;
    q.addr_last = UINT64_MAX;
    mh_cursor *c = NULL;
    CHECK_OK(mh_cursor_open(r, &q, &c));
    size_t n = 0, got = 0;
    do {
        CHECK_OK(mh_cursor_next(c, all + n, st.accesses + 1 - n, &got));
        n += got;
    } while (got);
    mh_cursor_close(c);
    mh_reader_close(r);
    CHECKF(n == st.accesses, "read %zu of %llu accesses", n,
           (unsigned long long)st.accesses);
    *n_out = n;
    return all;
}

/* The store at dir must hold exactly want[0..n) in that order, with
 * contiguous ids. */
static void check_merged(const char *dir, const oracle_rec *want, size_t n) {
    size_t got_n = 0;
    mh_access *got = read_all(dir, &got_n);
    CHECKF(got_n == n, "store has %zu accesses, %zu accepted", got_n, n);
    CHECKF(oracle_merge_compare("merged order", got, want, n) == 0,
           "the store is not the oracle's merged order");
    free(got);
}

/* nprod producers of count accesses each, on their own threads. */
static void run_threads(const char *tag, int nprod, size_t count,
                        uint64_t window, int stalls, uint64_t seed,
                        size_t *late_out) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, tag);
    char store[4200];
    tu_join(store, sizeof store, dir, "s");
    snprintf(tu_context, sizeof tu_context, "%s: %d producers x %zu, window %llu, "
             "seed %llu", tag, nprod, count, (unsigned long long)window,
             (unsigned long long)seed);
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 1000;
    o.block_accesses = 64;
    o.commit_accesses = 20000; /* several automatic commits on the way */
    o.reorder_window = window;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &o, &w));
    prod_arg *args = calloc((size_t)nprod, sizeof *args);
    pthread_t *th = calloc((size_t)nprod, sizeof *th);
    CHECK(args && th);
    for (int i = 0; i < nprod; i++) {
        /* stream ids spread, not 0..n-1, so ties test the id order */
        uint32_t sid = (uint32_t)((i * 7919) % 65000 + 1);
        mh_stream_info si;
        mh_stream_info_init(&si);
        si.id = sid;
        si.kind = MH_STREAM_THREAD;
        si.tid = 1000 + (uint64_t)i;
        CHECK_OK(mh_writer_stream_declare(w, &si));
        args[i] = (prod_arg){.w = w, .stream = sid, .count = count,
                             .seed = seed * 1000 + (uint64_t)i,
                             .stall = stalls && i % 3 == 0};
        CHECK_OK(mh_producer_open(w, sid, &args[i].p));
    }
    for (int i = 0; i < nprod; i++)
        CHECK(pthread_create(&th[i], NULL, producer_main, &args[i]) == 0);
    /* the writer's thread meanwhile: what producers exclude is refused,
     * commits and metadata are allowed */
    mh_access one = {.transition = 1, .physical = 1, .size = 1};
    CHECK_RC(mh_writer_append(w, &one), MH_ESTATE);
    CHECK_RC(mh_writer_append_batch(w, &one, 1, NULL), MH_ESTATE);
    CHECK_RC(mh_writer_window_begin(w, 1), MH_ESTATE);
    CHECK_RC(mh_writer_discard_from(w, 0), MH_ESTATE);
    CHECK_OK(mh_writer_set_meta(w, "during", "producers"));
    CHECK_OK(mh_writer_commit(w));
    for (int i = 0; i < nprod; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    size_t total = 0, late = 0;
    for (int i = 0; i < nprod; i++) {
        CHECK_OK(mh_producer_close(args[i].p));
        total += args[i].naccepted;
        late += args[i].late_batches;
    }
    CHECK_OK(mh_writer_close(w));
    oracle_rec *want = calloc(total + 1, sizeof *want);
    CHECK(want != NULL);
    size_t k = 0;
    for (int i = 0; i < nprod; i++) {
        memcpy(want + k, args[i].accepted, args[i].naccepted * sizeof *want);
        k += args[i].naccepted;
        free(args[i].accepted);
    }
    oracle_merge_sort(want, total);
    check_merged(store, want, total);
    if (window == 0)
        CHECKF(late == 0, "%zu batches late with reorder_window 0", late);
    printf("%s: %d producers, %zu accesses merged in order, %zu batches late\n",
           tag, nprod, total, late);
    if (late_out)
        *late_out = late;
    free(want);
    free(args);
    free(th);
    tu_rmtree(dir);
    tu_context[0] = 0;
}

/* MH_ELATE made to happen for sure, and the producer API's refusals. */
static void late_and_misuse(void) {
    char dir[4096];
    tu_mkdtemp(dir, sizeof dir, "late");
    char store[4200];
    tu_join(store, sizeof store, dir, "s");
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.reorder_window = 100;
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(store, MH_CREATE, &o, &w));
    mh_producer *pa = NULL, *pb = NULL, *px = NULL;
    CHECK_RC(mh_producer_open(w, 1, &pa), MH_ENOSTREAM);
    CHECK(pa == NULL);
    CHECK_RC(mh_producer_open(w, MH_STREAM_MAX + 1, &pa), MH_ENOSTREAM);
    CHECK_RC(mh_producer_open(w, 0, NULL), MH_EINVAL);
    CHECK_RC(mh_producer_open(NULL, 0, &pa), MH_EINVAL);
    mh_stream_info si;
    mh_stream_info_init(&si);
    si.id = 2;
    CHECK_OK(mh_writer_stream_declare(w, &si));
    /* a few accesses appended directly first: producers start above them */
    mh_access d = {.transition = 10, .physical = ORACLE_PHY(0, 0), .size = 8};
    CHECK_OK(mh_writer_append(w, &d));
    CHECK_OK(mh_producer_open(w, 0, &pa));
    CHECK_OK(mh_producer_open(w, 2, &pb));
    CHECK_RC(mh_producer_open(w, 2, &px), MH_EINVAL); /* one per stream */
    mh_access a[3];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 3; i++) {
        a[i].physical = ORACLE_PHY(0, 1 + (uint64_t)i);
        a[i].size = 8;
    }
    /* below what was appended before the producers: late at once */
    a[0].transition = 9;
    size_t bad = 99;
    CHECK_RC(mh_producer_append_batch(pa, a, 1, &bad), MH_ELATE);
    CHECK(bad == 0);
    /* bad accesses and order: nothing taken, index named */
    a[0].transition = 1000;
    a[1].transition = 2000;
    a[2].transition = 1999;
    CHECK_RC(mh_producer_append_batch(pa, a, 3, &bad), MH_EORDER);
    CHECK(bad == 2);
    a[2].transition = 2000;
    a[1].has_pc = 2;
    CHECK_RC(mh_producer_append_batch(pa, a, 3, &bad), MH_EINVAL);
    CHECK(bad == 1);
    a[1].has_pc = 0;
    a[2].reserved[3] = 1;
    CHECK_RC(mh_producer_append_batch(pa, a, 3, &bad), MH_EINVAL);
    CHECK(bad == 2);
    a[2].reserved[3] = 0;
    CHECK_RC(mh_producer_append_batch(pa, NULL, 3, &bad), MH_EINVAL);
    CHECK_RC(mh_producer_append_batch(NULL, a, 3, &bad), MH_EINVAL);
    CHECK_OK(mh_producer_append_batch(pa, a, 0, &bad));
    /* stream 0 at 1000, 2000, 2000; stream 2 has appended nothing: the
     * merge holds 1000 back until it is more than 100 behind the newest
     * (2000), then settles below 1900 and takes 1000 */
    CHECK_OK(mh_producer_append_batch(pa, a, 3, &bad));
    for (int i = 0; i < 2000 && mh_writer_next_id(w) < 2; i++) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECKF(mh_writer_next_id(w) == 2, "merged %llu accesses, expected 2 (the "
           "direct one and transition 1000)",
           (unsigned long long)mh_writer_next_id(w));
    /* stream 2 below 1900: late, and nothing of the batch is taken */
    mh_access b[2];
    memset(b, 0, sizeof b);
    b[0] = (mh_access){.transition = 1500, .physical = ORACLE_PHY(2, 0), .size = 8};
    b[1] = (mh_access){.transition = 1950, .physical = ORACLE_PHY(2, 1), .size = 8};
    CHECK_RC(mh_producer_append_batch(pb, b, 2, &bad), MH_ELATE);
    CHECK(bad == 0);
    char msg[MH_ERRMSG_MAX];
    /* at the settled bound and above: taken */
    b[0].transition = 1900;
    CHECK_OK(mh_producer_append_batch(pb, b, 2, &bad));
    CHECK_OK(mh_writer_set_meta(w, "k", "v"));
    CHECK_OK(mh_producer_close(pa));
    CHECK_OK(mh_producer_close(pb));
    CHECK_OK(mh_producer_close(NULL));
    /* back to direct appends once every producer is closed and merged */
    CHECK(mh_writer_next_id(w) == 6);
    d.transition = 2000;
    d.physical = ORACLE_PHY(0, 4);
    CHECK_RC(mh_writer_append(w, &(mh_access){.transition = 1999, .size = 1}),
             MH_EORDER);
    CHECK_OK(mh_writer_append(w, &d));
    CHECK(mh_writer_errmsg(w, msg, sizeof msg) > 0);
    CHECK_OK(mh_writer_close(w));
    oracle_rec want[] = {{10, 0, 0}, {1000, 0, 1}, {1900, 2, 0}, {1950, 2, 1},
                  {2000, 0, 2}, {2000, 0, 3}, {2000, 0, 4}};
    check_merged(store, want, sizeof want / sizeof want[0]);
    tu_rmtree(dir);
    printf("late: MH_ELATE below the settled bound, refusals change nothing\n");
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    late_and_misuse();
    run_threads("prod8", 8, 30000, 0, 0, seed, NULL);
    run_threads("prod64", 64, 3000, 0, 1, seed + 1, NULL);
    /* stalling producers with a small window: some batches come late */
    size_t late = 0, total_late = 0;
    for (int r = 0; r < 6; r++) {
        run_threads("stall8", 8, 20000, 40, 1, seed + 10 + (uint64_t)r, &late);
        total_late += late;
    }
    printf("stall8: %zu late batches over 6 runs\n", total_late);
    printf("streams_producers: ok\n");
    return 0;
}
