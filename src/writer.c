/*
 * writer.c - the writer API: validates and buffers accesses into slices,
 * hands full slices to the segment builder (on a background thread when
 * asked, so the producer keeps appending while the previous slice is
 * sorted, encoded, compressed and written), and commits: seal the segment,
 * then replace the MANIFEST atomically. With background threads, the
 * automatic commit (every commit_accesses) hands the segment to a seal
 * thread and goes on: the seal (postings, id map, summaries, fsync, ...)
 * overlaps the next segment's slices instead of stalling producer and
 * builders; an explicit commit, close, discard and abandon wait for it.
 *
 * Memory bound: (2 * threads + 1) slice buffers of 2 * slice_accesses
 * records (mh_rec, 48 bytes each), the builder states' scratch (about 60
 * bytes per access of one slice; two states per builder thread, one
 * without), the index records of the segment being written (at most
 * 56 bytes per chunk and per block, 72 per slice) until the next commit,
 * the same of at most one more segment while its seal runs, and with
 * producers open their rings (merge.c).
 */
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer_int.h"

/* Clears the code (not the message) of w's detail at the start of a call:
 * mh_diag_code then knows whether the failure was described. */
static void call_start(mh_writer *w) { w->err.code = 0; }

void mh_writer_options_init_size(mh_writer_options *opt, size_t size) {
    if (!opt || size < MH_WRITER_OPTIONS_SIZE_1)
        return;
    mh_writer_options d;
    memset(&d, 0, sizeof d);
    d.struct_size = (uint32_t)(size < UINT32_MAX ? size : UINT32_MAX);
    d.slice_accesses = 32768;
    d.block_accesses = 512;
    d.chunk_min_accesses = 128;
    d.lz4_acceleration = 1;
    d.commit_accesses = (uint64_t)1 << 24;
    d.background = 2;
    d.reorder_window = (uint64_t)1 << 20;
    d.id_map = 1;
    d.address_postings = 1;
    d.span_sets = 1;
    /* exactly the caller's bytes: its struct may be older (shorter) than
     * this library's or newer (longer: the bytes this library does not
     * know are zeroed, which is what the checks on open want) */
    size_t n = size < sizeof d ? size : sizeof d;
    memcpy(opt, &d, n);
    if (size > n)
        memset((char *)opt + n, 0, size - n);
}

/* The exported symbol of the 1.1 / 1.2 headers (the macro of memhist.h
 * hides it from code built with this one): its callers' structs may be as
 * short as the first published size. */
void(mh_writer_options_init)(mh_writer_options *opt) {
    mh_writer_options_init_size(opt, MH_WRITER_OPTIONS_SIZE_1);
}

/* A background thread's failure (mu held): the first one is kept, for
 * the writer's thread to report (job_error_locked); seq: the first slice
 * job it loses. */
static void job_fail_locked(mh_writer *w, int rc, int e, const mh_diag *d,
                            uint64_t seq) {
    if (w->job_rc != MH_OK)
        return;
    w->job_rc = rc;
    w->job_errno = e;
    w->job_diag = *d;
    w->job_fail_seq = seq;
}

/* The background threads' first failure (mu held), its detail and errno
 * made the caller's: MH_OK when none. */
static int job_error_locked(mh_writer *w) {
    int rc = w->job_rc;
    if (rc != MH_OK) {
        w->err = w->job_diag;
        errno = w->job_errno;
    }
    return rc;
}

/* Appends the slice built in state st (mu held; returns with mu held),
 * in its turn: without mu, as only the builder whose turn it is appends,
 * and the writer's thread (or the seal thread) touches the segment only
 * once jobs_done has caught up (wait_idle, seal_main), so the producer and
 * the other builders go on meanwhile. Then the turn passes on and the
 * state is free again. */
static void append_turn(mh_writer *w, int st, const job *j, int rc) {
    mh_diag d = {0, 0, ""};
    if (rc != MH_OK)
        mh_diag_fail(&d, rc, 0, "building a slice of %u accesses: %s", j->n,
                     mh_strerror(rc));
    if (rc == MH_OK && w->job_rc == MH_OK) {
        pthread_mutex_unlock(&w->mu);
        rc = mh_segw_append(j->seg, w->builder[st], &d);
        pthread_mutex_lock(&w->mu);
    }
    if (rc != MH_OK)
        job_fail_locked(w, rc, errno, &d, j->seq);
    w->jobs_done++;
    w->free_state[w->nfree_state++] = st;
    pthread_cond_broadcast(&w->cv);
}

/* A builder thread: builds queued slices, each in a free builder state,
 * and appends them to the segment in id order. A slice built before its
 * turn is parked, and the thread builds the next one meanwhile; the thread
 * that appends the slice before it appends it too. Waiting for the turn
 * instead had kept a builder idle about 13 % of an ingest (two builders on
 * two cores). */
static void *builder_main(void *arg) {
    mh_writer *w = arg; /* any thread takes any job: no index of its own */
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while ((w->qlen == 0 || w->nfree_state == 0) &&
               !(w->stop && w->qlen == 0))
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->qlen == 0)
            break;
        job j = w->queue[w->qhead];
        w->qhead = (w->qhead + 1) % QUEUE_CAP;
        w->qlen--;
        int st = w->free_state[--w->nfree_state];
        int failed = w->job_rc != MH_OK;
        pthread_mutex_unlock(&w->mu);
        int rc = failed ? MH_OK : mh_builder_run(w->builder[st], j.buf, j.n, j.id_base);
        pthread_mutex_lock(&w->mu);
        /* the built slice is the state's own copy: the rows go back to
         * the producer now, not after this slice's turn to be appended */
        w->pool[w->npool++] = j.buf;
        pthread_cond_broadcast(&w->cv);
        if (w->jobs_done != j.seq) {
            w->park[w->npark++] = (parked){j, st, rc};
            continue;
        }
        for (;;) {
            append_turn(w, st, &j, rc);
            int k = 0;
            while (k < w->npark && w->park[k].j.seq != w->jobs_done)
                k++;
            if (k == w->npark)
                break;
            j = w->park[k].j;
            st = w->park[k].state;
            rc = w->park[k].rc;
            w->park[k] = w->park[--w->npark];
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Seals seg with si and stores the MANIFEST that lists it: the commit
 * (SPEC.md §10.1 steps 2-3). In the writer's thread (explicit commit,
 * close, no background threads) or the seal thread (automatic commit);
 * either way nothing else touches man meanwhile. seg stays the caller's. */
static int publish(mh_writer *w, mh_segw *seg, const mh_seal_info *si,
                   mh_diag *d) {
    mh_manrec rec;
    /* its place in the MANIFEST, for its span address set: the seal holds
     * man until it is stored */
    mh_segw_set_position(seg, w->man.recs, w->man.nrecs);
    MH_TRY(mh_segw_seal(seg, si, &rec, d));
    mh_manifest next = w->man;
    next.recs = malloc((w->man.nrecs + 1) * sizeof *next.recs);
    if (!next.recs)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for the next MANIFEST");
    if (w->man.nrecs)
        memcpy(next.recs, w->man.recs, w->man.nrecs * sizeof *next.recs);
    next.recs[next.nrecs++] = rec;
    next.generation++;
    next.access_count += rec.count;
    next.next_seq = rec.seq + 1;
    int rc = mh_manifest_store(w->dir, &next, d);
    if (rc != MH_OK) {
        free(next.recs);
        return rc;
    }
    free(w->man.recs);
    w->man = next;
    atomic_store(&w->committed, next.access_count);
    return MH_OK;
}

/* The seal thread: seals the segments automatic commits hand it, one at a
 * time, once their slices are all appended. A segment whose slices failed
 * (or came after a failed seal) is not sealed: the error is already in
 * job_rc for the writer's thread, and the store keeps its last commit. */
static void *seal_main(void *arg) {
    mh_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->seal_busy && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->seal_busy)
            break;
        while (w->jobs_done < w->seal_after)
            pthread_cond_wait(&w->cv, &w->mu);
        int lost = w->job_rc != MH_OK && w->job_fail_seq < w->seal_after;
        mh_segw *seg = w->seal_segw;
        pthread_mutex_unlock(&w->mu);
        mh_diag d = {0, 0, ""};
        int rc = lost ? MH_OK : publish(w, seg, &w->seal_snap.si, &d);
        int e = errno;
        mh_segw_destroy(seg); /* removes its .tmp when the seal failed */
        mh_seal_snap_free(&w->seal_snap);
        pthread_mutex_lock(&w->mu);
        /* the detail is the seal's own, as when the writer's thread
         * sealed: the file and why; the next segment's slices are lost */
        if (rc != MH_OK)
            job_fail_locked(w, rc, e, &d, w->seal_after);
        w->seal_segw = NULL;
        w->seal_busy = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Waits until no seal runs (with background threads; else none can). */
static void wait_seal(mh_writer *w) {
    if (!w->mu_ready)
        return;
    pthread_mutex_lock(&w->mu);
    while (w->seal_busy)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* Waits until every slice handed out is appended and no seal runs;
 * returns the first error. */
static int wait_idle(mh_writer *w) {
    if (!w->nthreads)
        return MH_OK;
    pthread_mutex_lock(&w->mu);
    while (w->jobs_done != w->jobs_sent || w->seal_busy)
        pthread_cond_wait(&w->cv, &w->mu);
    int rc = job_error_locked(w);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Fails w for good: the detail is kept for the MH_ESTATE that follows. */
static int fail(mh_writer *w, int rc) {
    mh_diag_code(&w->err, rc);
    if (rc < 0 && !w->failed) {
        w->failed = rc;
        w->failed_diag = w->err;
    }
    return rc;
}

int mh_writer_fail(mh_writer *w, int rc) { return fail(w, rc); }

int mh_writer_refuse_failed(mh_writer *w) {
    return mh_diag_fail(&w->err, MH_ESTATE, 0,
                        "writer failed earlier (%s: %s); only close or abandon "
                        "are allowed", mh_error_name(w->failed),
                        w->failed_diag.msg);
}

static int ensure_segment(mh_writer *w) {
    if (w->segw)
        return MH_OK;
    mh_segw_config cfg = {
        .dir = w->dir,
        .seq = w->seg_seq,
        .id_first = w->seg_id_first,
        .rows_per_block = w->opt.block_accesses,
        .chunk_min_accesses = w->opt.chunk_min_accesses,
        .lz4_acceleration = w->opt.lz4_acceleration,
        .summary = mh_summary_hooks_default(),
        .idmap_group_ids = w->opt.id_map ? MH_IDMAP_GROUP_IDS : 0,
        .idtime_stride = w->opt.id_map ? MH_IDTIME_STRIDE : 0,
        .aset = 1,
        .apost = w->opt.address_postings != 0,
        .span = w->opt.span_sets != 0,
    };
    return mh_segw_create(&cfg, &w->segw, &w->err);
}

static int commit_locked(mh_writer *w);
static int commit_background(mh_writer *w);

/* Hands the filled buffer to a builder (or builds it here). */
static int close_slice(mh_writer *w) {
    if (w->n == 0)
        return MH_OK;
    int rc = ensure_segment(w);
    if (rc != MH_OK)
        return fail(w, rc);
    uint64_t id_base = w->next_id - w->n;
    if (id_base == w->seg_id_first)
        w->seg_t_first = w->buf[0].transition; /* the segment's first slice */
    w->seg_t_last = w->buf[w->n - 1].transition;
    if (w->nthreads) {
        pthread_mutex_lock(&w->mu);
        while (w->npool == 0 && w->job_rc == MH_OK)
            pthread_cond_wait(&w->cv, &w->mu);
        rc = job_error_locked(w);
        if (rc == MH_OK) {
            size_t tail = (w->qhead + w->qlen) % QUEUE_CAP;
            w->queue[tail] = (job){w->buf, w->n, id_base, w->jobs_sent++, w->segw};
            w->qlen++;
            w->buf = w->pool[--w->npool];
            pthread_cond_broadcast(&w->cv);
        }
        pthread_mutex_unlock(&w->mu);
    } else {
        rc = mh_builder_run(w->builder[0], w->buf, w->n, id_base);
        if (rc != MH_OK)
            mh_diag_fail(&w->err, rc, 0, "building a slice of %u accesses: %s",
                         w->n, mh_strerror(rc));
        if (rc == MH_OK)
            rc = mh_segw_append(w->segw, w->builder[0], &w->err);
    }
    if (rc != MH_OK)
        return fail(w, rc);
    w->n = 0;
    if (w->opt.commit_accesses &&
        w->next_id - w->seg_id_first >= w->opt.commit_accesses)
        return w->nthreads ? commit_background(w) : commit_locked(w);
    return MH_OK;
}

static inline int stream_bad(const mh_writer *w, uint32_t s) {
    return !mh_writer_stream_declared(w, s);
}

/* Checks one access: mh_access_bad() on the hot path, then, only for a bad one,
 * the detail naming the access by id (and by index in a batch when batch is
 * set) and what is wrong with it. */
static int check_access(const mh_writer *w, const mh_access *a, uint64_t id,
                        int batch, size_t i, mh_diag *d) {
    if (!mh_access_bad(a) && !stream_bad(w, a->stream))
        return MH_OK;
    unsigned res = 0;
    for (size_t k = 0; k < sizeof a->reserved; k++)
        res |= a->reserved[k];
    const char *why = a->size == 0                ? "size 0"
                      : a->op >= MH_OP_COUNT      ? "unknown operation"
                      : a->has_linear > 1         ? "has_linear not 0 or 1"
                      : a->has_pc > 1             ? "has_pc not 0 or 1"
                      : a->physical + (a->size - 1u) < a->physical
                          ? "address range wraps"
                      : res != 0 ? "reserved bytes not zero"
                                 : NULL;
    int code = MH_EINVAL;
    char buf[64];
    if (!why) {
        /* only the stream is wrong */
        code = MH_ENOSTREAM;
        snprintf(buf, sizeof buf, "stream %u not declared", a->stream);
        why = buf;
    }
    if (batch)
        return mh_diag_fail(d, code, 0,
                            "access %zu of the batch (would be id %llu): %s "
                            "(physical 0x%llx, size %u, op %u, has_linear %u, "
                            "stream %u, has_pc %u)",
                            i, (unsigned long long)id, why,
                            (unsigned long long)a->physical, a->size, a->op,
                            a->has_linear, a->stream, a->has_pc);
    return mh_diag_fail(d, code, 0,
                        "access (would be id %llu): %s (physical 0x%llx, size "
                        "%u, op %u, has_linear %u, stream %u, has_pc %u)",
                        (unsigned long long)id, why,
                        (unsigned long long)a->physical, a->size, a->op,
                        a->has_linear, a->stream, a->has_pc);
}

static int load_meta(mh_writer *w) {
    /* refuse to extend a store a reader would refuse: every listed segment
     * must open (header, dictionary, slice array); the largest window id
     * begun so far bounds the next */
    for (size_t i = 0; i + 1 < w->man.nrecs; i++) {
        char seg_name[MHF_SEGMENT_NAME_LEN + 1];
        mh_segment_name(seg_name, w->man.recs[i].seq);
        mh_seg other;
        int rc = mh_store_seg_open(w->dir, seg_name, &other, 1, &w->err);
        if (rc != MH_OK)
            return rc;
        mh_writer_window_seen(w, &other);
        mh_seg_close(&other);
    }
    /* carry the metadata and streams of the newest segment forward */
    if (w->man.nrecs == 0)
        return MH_OK;
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, w->man.recs[w->man.nrecs - 1].seq);
    mh_seg seg;
    int rc = mh_store_seg_open(w->dir, name, &seg, 1, &w->err);
    if (rc != MH_OK)
        return rc;
    mh_writer_window_seen(w, &seg);
    w->meta = calloc(seg.dict.nmeta ? seg.dict.nmeta : 1, sizeof *w->meta);
    if (!w->meta)
        rc = MH_ENOMEM;
    for (size_t i = 0; rc == MH_OK && i < seg.dict.nmeta; i++) {
        w->meta[i].key = strdup(seg.dict.meta[i].key);
        w->meta[i].value = strdup(seg.dict.meta[i].value);
        w->nmeta = i + 1;
        if (!w->meta[i].key || !w->meta[i].value)
            rc = MH_ENOMEM;
    }
    if (rc != MH_OK)
        mh_diag_fail(&w->err, rc, 0, "out of memory for the metadata of %s", name);
    else
        rc = mh_writer_streams_load(w, &seg);
    mh_seg_close(&seg);
    return rc;
}

static void free_writer(mh_writer *w) {
    mh_merge_destroy(w);
    if (w->mu_ready) {
        pthread_mutex_lock(&w->mu);
        w->stop = 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        for (int i = 0; i < w->nthreads; i++)
            pthread_join(w->thread[i], NULL);
        /* after the builders: a seal handed over finishes first (it was
         * committed, automatically, before this call) */
        if (w->seal_started)
            pthread_join(w->seal_thread, NULL);
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
    }
    for (int i = 0; i < MAX_STATES; i++)
        mh_builder_destroy(w->builder[i]);
    mh_segw_destroy(w->segw);
    mh_segw_destroy(w->seal_segw); /* handed over to no seal thread */
    mh_seal_snap_free(&w->seal_snap);
    if (w->lock_fd >= 0)
        close(w->lock_fd);
    mh_manifest_free(&w->man);
    for (size_t i = 0; i < w->nmeta; i++) {
        free(w->meta[i].key);
        free(w->meta[i].value);
    }
    free(w->meta);
    free(w->buf);
    for (size_t i = 0; i < w->npool; i++)
        free(w->pool[i]);
    free(w->dir);
    mh_writer_streams_free(w);
    if (w->wmu_ready)
        pthread_mutex_destroy(&w->wmu);
    free(w);
}

static int start_builders(mh_writer *w) {
    mh_segw_config cfg = {
        .rows_per_block = w->opt.block_accesses,
        .chunk_min_accesses = w->opt.chunk_min_accesses,
        .lz4_acceleration = w->opt.lz4_acceleration,
        .summary = mh_summary_hooks_default(),
        .idmap_group_ids = w->opt.id_map ? MH_IDMAP_GROUP_IDS : 0,
        .idtime_stride = w->opt.id_map ? MH_IDTIME_STRIDE : 0,
        .aset = 1,
        .apost = w->opt.address_postings != 0, /* each stream's ranges (2.7) */
    };
    int nb = w->opt.background ? w->opt.background : 1;
    int ns = w->opt.background ? nb * STATES_PER_BUILDER : 1;
    for (int i = 0; i < ns; i++) {
        if (mh_builder_create(&cfg, &w->builder[i]) != MH_OK)
            return mh_diag_fail(&w->err, MH_ENOMEM, 0,
                                "out of memory for slice builder state %d", i);
        w->free_state[w->nfree_state++] = i;
    }
    if (!w->opt.background)
        return MH_OK;
    /* a buffer for each state (a state holds its rows while it builds),
     * and the producer's own: with one per thread, the producer waited for
     * a buffer 0.75 s of a 1.5 s ingest (python trace, two builders) */
    for (int i = 0; i < nb * STATES_PER_BUILDER; i++) {
        w->pool[i] = malloc((size_t)w->cap * sizeof *w->buf);
        if (!w->pool[i])
            return mh_diag_fail(&w->err, MH_ENOMEM, 0,
                                "out of memory for slice buffer %d", i);
        w->npool = (size_t)i + 1;
    }
    if (pthread_mutex_init(&w->mu, NULL) != 0)
        return mh_diag_fail(&w->err, MH_ENOMEM, 0, "cannot create a mutex");
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        return mh_diag_fail(&w->err, MH_ENOMEM, 0, "cannot create a condition");
    }
    w->mu_ready = 1;
    for (int i = 0; i < nb; i++) {
        int e = pthread_create(&w->thread[i], NULL, builder_main, w);
        if (e != 0)
            return mh_diag_fail(&w->err, MH_ENOMEM, 0,
                                "cannot start builder thread %d: %s", i, strerror(e));
        w->nthreads = i + 1;
    }
    int e = pthread_create(&w->seal_thread, NULL, seal_main, w);
    if (e != 0)
        return mh_diag_fail(&w->err, MH_ENOMEM, 0,
                            "cannot start the seal thread: %s", strerror(e));
    w->seal_started = 1;
    return MH_OK;
}

/* Why opt is refused, or NULL. */
static const char *bad_option(const mh_writer_options *o) {
    if (o->slice_accesses < 1 || o->slice_accesses > MHF_MAX_SLICE_ROWS / 2)
        return "slice_accesses out of range";
    if (o->block_accesses < 64 || o->block_accesses > MHF_MAX_ROWS_PER_BLOCK)
        return "block_accesses out of range (64 .. 65536)";
    if (o->chunk_min_accesses < 1)
        return "chunk_min_accesses is 0";
    if (o->lz4_acceleration < 1)
        return "lz4_acceleration below 1";
    if (o->background < 0 || o->background > MAX_BUILDERS)
        return "background out of range (0 .. 8)";
    if (o->reserved != 0 || o->reserved2 != 0 || o->reserved3 != 0 ||
        o->reserved4 != 0)
        return "reserved field not zero";
    if (o->id_map > 1)
        return "id_map is neither 0 nor 1";
    if (o->address_postings > 1)
        return "address_postings is neither 0 nor 1";
    if (o->span_sets > 1)
        return "span_sets is neither 0 nor 1";
    return NULL;
}

/* Opens or creates the store; every failure is described in w->err. */
static int open_store(mh_writer *w, const char *path, unsigned flags) {
    mh_diag *d = &w->err;
    if (!w->dir || !w->buf)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for the writer");
    int rc = MH_OK;
    /* an absent path is no failure yet (MH_CREATE makes it): the check's
     * detail is kept only when it is the answer */
    mh_diag dir_d = {0, 0, ""};
    rc = mh_store_dir_check(path, &dir_d);
    int exists = rc != MH_ENOENT;
    int is_store = 0;
    if (rc == MH_ENOTSTORE && (flags & MH_CREATE) && !(flags & MH_APPEND))
        return mh_diag_fail(d, MH_EEXIST, 0, "%s exists (not a directory)", path);
    if (rc == MH_ENOTSTORE || rc == MH_EIO) {
        *d = dir_d;
        return rc;
    }
    rc = MH_OK;
    if (exists) {
        char *m = mh_path_join(path, MHF_MANIFEST_NAME);
        if (!m)
            return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
        is_store = access(m, F_OK) == 0;
        free(m);
    }
    if (is_store && !(flags & MH_APPEND))
        return mh_diag_fail(d, MH_EEXIST, 0, "store %s already exists", path);
    if (!exists && !(flags & MH_CREATE))
        return mh_diag_fail(d, MH_ENOENT, 0, "no such store: %s", path);
    if (exists && !is_store) {
        if (!(flags & MH_CREATE))
            return mh_diag_fail(d, MH_ENOTSTORE, 0, "%s has no MANIFEST: not a store",
                                path);
        /* an empty directory may become a store (mkdtemp, a prepared mount) */
        if (mh_store_dir_kind(path) != MH_STORE_DIR_EMPTY)
            return mh_diag_fail(d, MH_EEXIST, 0,
                                "%s exists, is not empty and is not a store", path);
    }
    if (!exists && mkdir(path, 0755) != 0)
        return errno == EEXIST
                   ? mh_diag_fail(d, MH_EEXIST, 0, "%s appeared meanwhile", path)
                   : mh_diag_os(d, 0, "cannot create directory", path);
    rc = mh_writer_streams_init(w);
    if (rc != MH_OK)
        return mh_diag_fail(d, rc, 0, "out of memory for the writer");
    rc = mh_store_lock(path, &w->lock_fd, d);
    if (rc == MH_OK && is_store) {
        rc = mh_store_manifest_load(path, &w->man, 1, d);
        if (rc == MH_OK)
            rc = mh_manifest_writable(&w->man, d);
        if (rc == MH_OK)
            rc = load_meta(w);
    } else if (rc == MH_OK) {
        w->man.generation = 1;
        rc = mh_manifest_store(path, &w->man, d);
    }
    if (rc == MH_OK) {
        w->next_id = w->man.access_count;
        w->seg_seq = w->man.next_seq;
        w->seg_id_first = w->man.access_count;
        atomic_store(&w->committed, w->man.access_count);
        for (size_t i = w->man.nrecs; i-- > 0;)
            if (w->man.recs[i].count) {
                w->last_t = w->man.recs[i].t_last;
                w->has_last = 1;
                break;
            }
    }
    if (rc == MH_OK)
        rc = start_builders(w);
    return rc;
}

int mh_writer_open_ex(const char *path, unsigned flags,
                      const mh_writer_options *opt_in, mh_writer **out,
                      char *err, size_t err_size) {
    mh_diag d = {0, 0, ""};
    mh_writer_options opt;
    mh_writer_options_init(&opt);
    const char *why = NULL;
    if (out)
        *out = NULL;
    if (!path || !*path || !out)
        mh_diag_fail(&d, MH_EINVAL, 0, "mh_writer_open: %s",
                     !out ? "NULL out" : "empty or NULL path");
    else if (flags == 0 || (flags & ~(MH_CREATE | MH_APPEND)))
        mh_diag_fail(&d, MH_EINVAL, 0,
                     "mh_writer_open: flags 0x%x (MH_CREATE, MH_APPEND or both)",
                     flags);
    else if (opt_in && mh_struct_in(opt_in, MH_WRITER_OPTIONS_SIZE_1, sizeof opt,
                                    &opt) != MH_OK)
        mh_diag_fail(&d, MH_EINVAL, 0,
                     "mh_writer_options: struct_size %u too small, or non-zero "
                     "bytes past the %zu this library knows",
                     opt_in->struct_size, sizeof opt);
    else if ((why = bad_option(&opt)) != NULL)
        mh_diag_fail(&d, MH_EINVAL, 0, "mh_writer_options: %s", why);
    mh_writer *w = NULL;
    if (d.code == 0) {
        w = calloc(1, sizeof *w);
        if (!w)
            mh_diag_fail(&d, MH_ENOMEM, 0, "out of memory for the writer");
    }
    if (w) {
        w->lock_fd = -1;
        w->opt = opt;
        w->dir = strdup(path);
        w->cap = opt.slice_accesses * 2;
        w->buf = malloc((size_t)w->cap * sizeof *w->buf);
        int rc = pthread_mutex_init(&w->wmu, NULL) == 0
                     ? MH_OK
                     : mh_diag_fail(&w->err, MH_ENOMEM, 0, "cannot create a mutex");
        w->wmu_ready = rc == MH_OK;
        if (rc == MH_OK)
            rc = open_store(w, path, flags);
        if (rc == MH_OK) {
            *out = w;
            return MH_OK;
        }
        mh_diag_code(&w->err, rc);
        d = w->err;
        int e = errno;
        free_writer(w);
        errno = e;
    }
    if (err && err_size)
        mh_diag_copy(&d, err, err_size);
    return d.code;
}

int mh_writer_open(const char *path, unsigned flags,
                   const mh_writer_options *opt_in, mh_writer **out) {
    return mh_writer_open_ex(path, flags, opt_in, out, NULL, 0);
}

size_t mh_writer_errmsg(const mh_writer *w, char *buf, size_t size) {
    if (!w)
        return mh_diag_copy(NULL, buf, size);
    /* wmu: the merge thread writes the detail when it fails w */
    mh_writer *mw = (mh_writer *)w;
    pthread_mutex_lock(&mw->wmu);
    size_t n = mh_diag_copy(&w->err, buf, size);
    pthread_mutex_unlock(&mw->wmu);
    return n;
}

static int set_meta(mh_writer *w, const char *key, const char *value);

int mh_writer_set_meta(mh_writer *w, const char *key, const char *value) {
    if (!w)
        return MH_EINVAL;
    pthread_mutex_lock(&w->wmu); /* a commit of the merge thread reads meta */
    call_start(w);
    int rc = set_meta(w, key, value);
    pthread_mutex_unlock(&w->wmu);
    return rc;
}

static int set_meta(mh_writer *w, const char *key, const char *value) {
    if (!key || !value || !*key)
        return mh_diag_fail(&w->err, MH_EINVAL, 0,
                            "mh_writer_set_meta: NULL or empty key, or NULL value");
    if (strlen(key) > 65535 || strlen(value) > 65535)
        return mh_diag_fail(&w->err, MH_EINVAL, 0,
                            "mh_writer_set_meta: key or value longer than 65535 "
                            "bytes (key %zu, value %zu)", strlen(key), strlen(value));
    if (!mh_utf8_valid((const uint8_t *)key, strlen(key)) ||
        !mh_utf8_valid((const uint8_t *)value, strlen(value)))
        return mh_diag_fail(&w->err, MH_EINVAL, 0,
                            "mh_writer_set_meta: key or value is not valid UTF-8");
    if (w->failed)
        return mh_writer_refuse_failed(w);
    for (size_t i = 0; i < w->nmeta; i++)
        if (strcmp(w->meta[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v)
                return mh_diag_fail(&w->err, MH_ENOMEM, 0, "out of memory");
            free(w->meta[i].value);
            w->meta[i].value = v;
            w->meta_dirty = 1;
            return MH_OK;
        }
    mh_kv *m = realloc(w->meta, (w->nmeta + 1) * sizeof *m);
    if (!m)
        return mh_diag_fail(&w->err, MH_ENOMEM, 0, "out of memory");
    w->meta = m;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return mh_diag_fail(&w->err, MH_ENOMEM, 0, "out of memory");
    }
    m[w->nmeta].key = k;
    m[w->nmeta].value = v;
    w->nmeta++;
    w->meta_dirty = 1;
    return MH_OK;
}

/* The compact record of an access: its 48 bytes from the transition on
 * (internal.h asserts the layouts match), three vector moves where the
 * field-by-field copy with the pc masked took ~20 instructions an access.
 * The access is checked (before, or in the same batch pass, the records
 * then kept only when all are good), so its reserved bytes are the zero
 * pad. A pc without has_pc is ignored (memhist.h): the builder stores 0
 * for it (put_block), so the file does not depend on it. */
static inline void to_rec(mh_rec *r, const mh_access *a) {
    memcpy(r, &a->transition, sizeof *r);
}

/* Index in the slice buffer where a slice holding buf[0..end) closes: at
 * the first new transition once it holds slice_accesses, anywhere at the
 * hard cap (cap = twice that); end when it stays open. buf[soft - 1 ..
 * from) are known to share one transition (an open slice past soft keeps
 * only that), so the scan starts at from: one long transition appended
 * access by access costs linear time, not quadratic. */
static uint32_t close_point(const mh_writer *w, uint32_t from, uint32_t end) {
    uint32_t soft = w->opt.slice_accesses;
    if (end <= soft)
        return end;
    uint64_t t = w->buf[soft - 1].transition;
    uint32_t c = from > soft ? from : soft;
    while (c < end && c < w->cap && w->buf[c].transition == t)
        c++;
    return c;
}

/* How many of the next n accesses a (in transition order) to copy into the
 * slice buffer: up to the point where the open slice will close (its
 * slice_accesses-th access, the accesses sharing that one's transition and
 * one more), so that settle() moves at most one record to the next buffer.
 * Filling the whole buffer (twice slice_accesses) moved about half of every
 * batch a second time: 47 of the producer's 95 instructions per access on
 * gzip's qemu trace (callgrind). Where the slices close is settle()'s
 * business alone; this only sizes the pieces it is given. */
static size_t room_to_close(const mh_writer *w, const mh_access *a, size_t n) {
    uint32_t soft = w->opt.slice_accesses, have = w->n;
    size_t room = w->cap - have, r;
    if (n < room)
        room = n;
    uint64_t t;
    if (have < soft) {
        r = soft - have;
        if (r >= room)
            return room;
        t = a[r - 1].transition;
    } else {
        r = 0; /* buf[soft - 1 .. have) share one transition (close_point) */
        t = w->buf[soft - 1].transition;
    }
    while (r < room && a[r].transition == t)
        r++;
    return r < room ? r + 1 : room;
}

/* The n records just written at buf[w->n ..] (checked, in order) become
 * accesses: the slices they fill are closed, what follows the last close
 * moves to the front of the next buffer. */
static int settle(mh_writer *w, uint32_t n) {
    if (w->win_need_t && n) {
        /* the first access of the window begun last */
        w->wins[w->nwins - 1].t_begin = w->buf[w->n].transition;
        w->win_need_t = 0;
    }
    uint32_t from = w->n, end = w->n + n;
    uint64_t base = w->next_id - w->n; /* id of buf[0] */
    for (;;) {
        uint32_t c = close_point(w, from, end);
        if (c == end && end < w->cap) {
            w->n = end;
            w->next_id = base + end;
            return MH_OK;
        }
        w->n = c;
        w->next_id = base + c;
        /* the builder reads old[0..c) only; the rest is copied out before
         * the next close can hand this buffer out again */
        const mh_rec *old = w->buf;
        MH_TRY(close_slice(w));
        memmove(w->buf, old + c, (size_t)(end - c) * sizeof *old);
        base += c;
        end -= c;
        from = 0;
    }
}

/* Copies accesses into the slice buffer, closing slices at transition
 * boundaries once they hold slice_accesses (or anywhere at twice that).
 * Used by single appends and by batches too long for the buffer's room. */
static int take(mh_writer *w, const mh_access *a, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint32_t m = (uint32_t)room_to_close(w, a + i, n - i);
        mh_rec *r = w->buf + w->n;
        for (uint32_t k = 0; k < m; k++)
            to_rec(&r[k], &a[i + k]);
        i += m;
        MH_TRY(settle(w, m));
    }
    w->last_t = a[n - 1].transition;
    w->has_last = 1;
    w->fast_stream = a[n - 1].stream;
    return MH_OK;
}

int mh_writer_take_recs(mh_writer *w, const mh_rec *r, size_t n) {
    if (w->failed)
        return w->failed;
    size_t i = 0;
    while (i < n) {
        uint32_t m = w->cap - w->n;
        if (m > n - i)
            m = (uint32_t)(n - i);
        memcpy(w->buf + w->n, r + i, (size_t)m * sizeof *r);
        i += m;
        MH_TRY(settle(w, m));
    }
    if (n) {
        w->last_t = r[n - 1].transition;
        w->has_last = 1;
    }
    return MH_OK;
}

static int order_fail(mh_writer *w, const mh_access *a, uint64_t prev,
                      int batch, size_t i) {
    if (batch)
        return mh_diag_fail(&w->err, MH_EORDER, 0,
                            "access %zu of the batch: transition %llu after %llu",
                            i, (unsigned long long)a->transition,
                            (unsigned long long)prev);
    return mh_diag_fail(&w->err, MH_EORDER, 0,
                        "access (would be id %llu): transition %llu after %llu",
                        (unsigned long long)w->next_id,
                        (unsigned long long)a->transition, (unsigned long long)prev);
}

/* While producers exist the merge thread owns the slice buffer: the
 * writer's own appends, windows and discards are refused while one is
 * open and wait for the merge to finish with closed ones (one load on the
 * hot path). */
#define PRODUCERS_CHECK(w, what)                                               \
    do {                                                                       \
        if (mh_writer_has_producers(w))                                        \
            MH_TRY(mh_writer_producers_check((w), (what)));                    \
    } while (0)

int mh_writer_append(mh_writer *w, const mh_access *a) {
    if (!w)
        return MH_EINVAL;
    PRODUCERS_CHECK(w, "mh_writer_append");
    call_start(w);
    if (!a)
        return mh_diag_fail(&w->err, MH_EINVAL, 0, "mh_writer_append: NULL access");
    if (w->failed)
        return mh_writer_refuse_failed(w);
    MH_TRY(check_access(w, a, w->next_id, 0, 0, &w->err));
    if (w->has_last && a->transition < w->last_t)
        return order_fail(w, a, w->last_t, 0, 0);
    return take(w, a, 1);
}

/* Finds the first bad access of a batch known to hold one (prev: the
 * transition before a[0]) and names it in w's detail and *bad; off the
 * hot path. */
static int batch_fail(mh_writer *w, const mh_access *a, size_t n, uint64_t prev,
                      size_t *bad) {
    size_t i = 0;
    while (i < n && !mh_access_bad(&a[i]) && !stream_bad(w, a[i].stream) &&
           a[i].transition >= prev)
        prev = a[i++].transition;
    int rc = MH_EINVAL; /* unreachable when n holds a bad access */
    if (i < n) {
        rc = check_access(w, &a[i], w->next_id + i, 1, i, &w->err);
        if (rc == MH_OK)
            rc = order_fail(w, &a[i], prev, 1, i);
    } else {
        mh_diag_fail(&w->err, rc, 0, "batch check disagrees with itself");
    }
    if (bad)
        *bad = i < n ? i : 0;
    return rc;
}

int mh_writer_append_batch(mh_writer *w, const mh_access *a, size_t n,
                           size_t *bad) {
    if (!w)
        return MH_EINVAL;
    PRODUCERS_CHECK(w, "mh_writer_append_batch");
    call_start(w);
    if (!a && n)
        return mh_diag_fail(&w->err, MH_EINVAL, 0,
                            "mh_writer_append_batch: NULL accesses, n %zu", n);
    if (w->failed)
        return mh_writer_refuse_failed(w);
    if (n == 0)
        return MH_OK;
    uint64_t prev0 = w->has_last ? w->last_t : 0, prev = prev0;
    int bad_seen = 0;
    /* streams: every access is compared with the stream of the last access
     * appended (one xor and one or); only a batch where some differs has
     * its streams looked up in the declared bitmap */
    uint32_t fast = w->fast_stream, other = 0;
    /* what fits the buffer's room is checked and copied in one pass, behind
     * the accesses kept (w->n moves only once all n are good); the rest of
     * a longer batch is checked here and copied by take(). The checks
     * accumulate: the first bad access is looked for only on failure. */
    size_t m = room_to_close(w, a, n);
    mh_rec *r = w->buf + w->n;
    for (size_t i = 0; i < m; i++) {
        const mh_access *x = &a[i];
        bad_seen |= mh_access_bad(x) | (x->transition < prev);
        other |= x->stream ^ fast;
        to_rec(&r[i], x);
        prev = x->transition;
    }
    for (size_t i = m; i < n; i++) {
        bad_seen |= mh_access_bad(&a[i]) | (a[i].transition < prev);
        other |= a[i].stream ^ fast;
        prev = a[i].transition;
    }
    if (other)
        for (size_t i = 0; i < n; i++)
            bad_seen |= stream_bad(w, a[i].stream);
    if (bad_seen)
        return batch_fail(w, a, n, prev0, bad);
    MH_TRY(settle(w, (uint32_t)m));
    if (m < n)
        return take(w, a + m, n - m);
    w->last_t = prev;
    w->has_last = 1;
    w->fast_stream = a[n - 1].stream;
    return MH_OK;
}

uint64_t mh_writer_next_id(const mh_writer *w) {
    if (!w)
        return 0;
    mh_writer *mw = (mh_writer *)w; /* wmu: the merge thread moves it */
    if (!atomic_load(&mw->nopen))
        mh_merge_drain(mw); /* closed producers: their accesses count */
    pthread_mutex_lock(&mw->wmu);
    uint64_t v = w->next_id;
    pthread_mutex_unlock(&mw->wmu);
    return v;
}

uint64_t mh_writer_committed(const mh_writer *w) {
    if (!w)
        return 0;
    mh_writer *mw = (mh_writer *)w;
    /* an automatic commit in the background counts once it is done, as it
     * did when it was done in the append that made it: a caller that
     * abandons after this sees what the store keeps */
    wait_seal(mw);
    return atomic_load(&mw->committed);
}

/* What a commit's seal info holds is committed (or handed to the seal
 * thread, which commits it): the metadata, the stream table, the windows
 * up to id_end. */
static void sealed(mh_writer *w, const mh_seal_info *si, uint64_t id_end) {
    w->meta_dirty = 0;
    if (si->nstreams)
        w->streams_table = 1;
    mh_writer_windows_sealed(w, id_end);
}

static int commit_locked(mh_writer *w) {
    int rc = MH_OK;
    if (w->n) {
        /* flush without recursing into the automatic commit */
        uint64_t saved = w->opt.commit_accesses;
        w->opt.commit_accesses = 0;
        rc = close_slice(w);
        w->opt.commit_accesses = saved;
        if (rc != MH_OK)
            return rc;
    }
    rc = wait_idle(w);
    if (rc != MH_OK)
        return fail(w, rc);
    int has_new = w->segw && mh_segw_count(w->segw) > 0;
    if (!has_new && !w->meta_dirty) {
        mh_segw_destroy(w->segw); /* emptied by a discard */
        w->segw = NULL;
        return MH_OK;
    }
    rc = ensure_segment(w);
    mh_seal_info si = {.meta = w->meta, .nmeta = w->nmeta};
    mh_window_part *parts = NULL;
    uint64_t id_first = w->man.access_count;
    uint64_t id_end = rc == MH_OK ? mh_segw_next_id(w->segw) : id_first;
    if (rc == MH_OK)
        rc = mh_writer_seal_info(w, id_first, id_end, mh_segw_t_last(w->segw),
                                 &si, &parts);
    /* no builder runs now (wait_idle): the seal may use a second core */
    if (rc == MH_OK) {
        mh_segw_set_seal_thread(w->segw, w->nthreads > 0);
        rc = publish(w, w->segw, &si, &w->err);
    }
    free(parts);
    if (rc != MH_OK)
        return fail(w, rc);
    mh_segw_destroy(w->segw);
    w->segw = NULL;
    w->seg_seq = w->man.next_seq;
    w->seg_id_first = w->man.access_count;
    sealed(w, &si, id_end);
    return MH_OK;
}

/* The automatic commit with background threads, right after the segment's
 * last slice was queued: the seal info is taken now (what the commit
 * holds is fixed here, as if it were sealed here), the segment goes to
 * the seal thread, and the next accesses start the next segment. A seal
 * already running is waited for first: one at a time bounds the memory,
 * and the seals (MANIFEST generations) stay in order. Its failure, or a
 * builder's, comes back as job_rc: here, or at the next slice or commit. */
static int commit_background(mh_writer *w) {
    pthread_mutex_lock(&w->mu);
    while (w->seal_busy && w->job_rc == MH_OK)
        pthread_cond_wait(&w->cv, &w->mu);
    int rc = job_error_locked(w);
    pthread_mutex_unlock(&w->mu);
    if (rc != MH_OK)
        return fail(w, rc);
    uint64_t id_end = w->next_id; /* every access kept is in the segment */
    mh_seal_info si = {.meta = w->meta, .nmeta = w->nmeta};
    mh_window_part *parts = NULL;
    mh_seal_snap snap;
    rc = mh_writer_seal_info(w, w->seg_id_first, id_end, w->seg_t_last, &si,
                             &parts);
    if (rc == MH_OK && mh_seal_snap_make(&si, &snap) != MH_OK)
        rc = mh_diag_fail(&w->err, MH_ENOMEM, 0,
                          "out of memory for the seal of segment %llu",
                          (unsigned long long)w->seg_seq);
    free(parts);
    if (rc != MH_OK)
        return fail(w, rc);
    pthread_mutex_lock(&w->mu);
    w->seal_segw = w->segw;
    w->seal_snap = snap;
    w->seal_after = w->jobs_sent;
    w->seal_busy = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    w->segw = NULL;
    w->seg_seq++;
    w->seg_id_first = id_end;
    sealed(w, &si, id_end);
    return MH_OK;
}

int mh_writer_commit_locked(mh_writer *w) { return commit_locked(w); }

int mh_writer_commit(mh_writer *w) {
    if (!w)
        return MH_EINVAL;
    /* wmu: the merge thread may be putting accesses into the buffer */
    pthread_mutex_lock(&w->wmu);
    call_start(w);
    int rc = w->failed ? mh_writer_refuse_failed(w) : commit_locked(w);
    pthread_mutex_unlock(&w->wmu);
    return rc;
}

int mh_writer_discard_from(mh_writer *w, uint64_t t) {
    if (!w)
        return MH_EINVAL;
    PRODUCERS_CHECK(w, "mh_writer_discard_from");
    call_start(w);
    if (w->failed)
        return mh_writer_refuse_failed(w);
    /* an automatic commit in the background is a commit: its accesses
     * cannot go either (its failure comes from wait_idle) */
    wait_seal(w);
    for (size_t i = w->man.nrecs; i-- > 0;)
        if (w->man.recs[i].count) {
            if (w->man.recs[i].t_last >= t)
                return mh_diag_fail(&w->err, MH_ECOMMITTED, 0,
                                    "discard from transition %llu: transition "
                                    "%llu is already committed",
                                    (unsigned long long)t,
                                    (unsigned long long)w->man.recs[i].t_last);
            break;
        }
    int rc = wait_idle(w);
    if (rc != MH_OK)
        return fail(w, rc);
    mh_access *kept = NULL;
    uint32_t nkept = 0;
    if (w->segw) {
        rc = mh_segw_discard_from(w->segw, t, &kept, &nkept, &w->err);
        if (rc != MH_OK)
            return fail(w, rc);
    }
    if (kept) {
        /* a flushed slice was cut: everything buffered came after it */
        for (uint32_t i = 0; i < nkept; i++)
            to_rec(&w->buf[i], &kept[i]);
        w->n = nkept;
        free(kept);
    } else {
        while (w->n > 0 && w->buf[w->n - 1].transition >= t)
            w->n--;
    }
    uint64_t base = w->segw ? mh_segw_next_id(w->segw) : w->seg_id_first;
    w->next_id = base + w->n;
    /* the last kept access bounds the transitions that may come next */
    w->has_last = 0;
    if (w->n) {
        w->last_t = w->buf[w->n - 1].transition;
        w->has_last = 1;
    } else if (w->segw && mh_segw_count(w->segw)) {
        w->last_t = mh_segw_t_last(w->segw);
        w->has_last = 1;
    } else {
        for (size_t i = w->man.nrecs; i-- > 0;)
            if (w->man.recs[i].count) {
                w->last_t = w->man.recs[i].t_last;
                w->has_last = 1;
                break;
            }
    }
    mh_writer_windows_discarded(w);
    return MH_OK;
}

int mh_writer_close(mh_writer *w) {
    if (!w)
        return MH_OK;
    int rc = MH_ESTATE;
    if (!atomic_load(&w->nopen)) {
        mh_merge_drain(w);
        rc = w->failed ? MH_ESTATE : commit_locked(w);
    }
    free_writer(w);
    return rc;
}

void mh_writer_abandon(mh_writer *w) {
    if (!w)
        return;
    (void)wait_idle(w);
    free_writer(w);
}
