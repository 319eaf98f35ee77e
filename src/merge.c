/*
 * merge.c - several producers appending at once (issue 9 §2): each
 * producer, bound to one declared stream, fills its own single-producer
 * ring; one merge thread of the writer takes from the rings in transition
 * order (ties: lower stream id, then append order) and puts the merged
 * accesses into the writer's slice buffer, where they take the path of
 * every append (slices, builders, automatic commits).
 *
 * Why a merge thread and not the appending threads taking turns: the
 * producers are the traced program's threads. With turns, whichever
 * thread holds the turn pays for the others' accesses, for slice building
 * and for the fsync of an automatic commit, so the traced threads stall
 * unevenly; and when every producer is idle with accesses buffered,
 * nobody would merge them. A dedicated thread keeps a producer's append to
 * the check of its batch and a copy into memory that only it writes: the
 * ring's tail, the producer's last transition and its `pending` word live
 * in the producer's own cache line; the merge writes only the ring's head
 * (another line) and, rarely, `settled` (read-mostly).
 *
 * Order. A key is (transition, stream); a producer's accesses have
 * non-decreasing keys. The merge emits the smallest head among the rings
 * that hold accesses (a binary heap) as long as it is below the floor of
 * every open producer whose ring is empty: the smallest key that producer
 * can still append, which is the largest of
 *   - its open floor (what was emitted before it opened: an access below
 *     it is late, MH_ELATE);
 *   - (its last appended transition, its stream): a stream's transitions
 *     never decrease;
 *   - (settled, its stream), when the merge knows the producer has seen
 *     `settled` (below).
 * With reorder_window W > 0, a producer that lags behind holds the merge
 * back only while it is within W of the newest transition appended by any
 * producer: past that, the merge raises `settled` to newest - W, and
 * producers refuse accesses below it with MH_ELATE.
 *
 * The handshake that makes raising `settled` race-free (a producer that
 * checked an old `settled` must never see its accesses overtaken):
 *   producer: pending = t0 (seq_cst); s = settled (seq_cst);
 *             t0 < s ? (pending = NONE; MH_ELATE)
 *                    : (copy into the ring; tail = ...; pending = NONE)
 *   merge:    settled = V (seq_cst); ... later, per empty producer:
 *             p = pending (seq_cst); tail again (acquire)
 * In the single total order of seq_cst operations, either the producer's
 * store of pending precedes the merge's load of it (the merge sees t0, or a
 * later NONE that is released after the accesses are in the ring, which the
 * merge's next tail load then sees), or it follows it, and then the
 * producer's load of settled follows the merge's store of V and it refuses
 * t0 < V. So the merge uses (settled, stream) as a floor only for a
 * producer it read pending == NONE from after raising settled, and gets its
 * accesses right when they made it in. tests/streams_producers.c stresses
 * this with 8 producers, some stalling.
 *
 * The merge works in rounds under the writer's wmu (the slice buffer, the
 * producer list and the open floors); mh_producer_open and the removal of
 * a closed producer take wmu too, so a producer opened between rounds gets
 * the last emitted key as its open floor, exactly. Producers never take
 * wmu on the append path.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "writer_int.h"

#define RING_CAP 8192u      /* records per producer (48 bytes: 384 KiB) */
#define STAGE_CAP 4096u     /* records merged per hand-over to the writer */
#define NONE UINT64_MAX

typedef struct mkey {
    uint64_t t;
    uint32_t s;
} mkey;

static inline int key_lt(mkey a, mkey b) {
    return a.t < b.t || (a.t == b.t && a.s < b.s);
}
static inline mkey key_max(mkey a, mkey b) { return key_lt(a, b) ? b : a; }
static const mkey KEY_INF = {UINT64_MAX, UINT32_MAX};

struct mh_producer {
    /* written by the producer (its own line) */
    _Alignas(64) _Atomic uint64_t tail;  /* records appended, ever */
    _Atomic uint64_t last_t;             /* transition of the last appended */
    _Atomic uint64_t pending;            /* first transition of the batch
                                            being appended, or NONE */
    _Atomic int closed;
    uint64_t head_seen;                  /* the producer's view of head */
    uint64_t prev_t;                     /* for MH_EORDER */
    int has_prev;
    mh_diag err;                         /* detail of its last failure */
    /* written by the merge (another line) */
    _Alignas(64) _Atomic uint64_t head;  /* records taken, ever */
    int in_heap;                         /* merge thread only */
    /* set at open, read by both */
    _Alignas(64) mh_writer *w;
    uint32_t stream;
    mkey floor;                          /* below: MH_ELATE */
    mh_rec *ring;
};

typedef struct heap_ent {
    mkey key;
    mh_producer *p;
} heap_ent;

struct mh_merge {
    mh_writer *w;
    uint64_t reorder_window;
    /* under wmu */
    mh_producer **prods;
    size_t nprods, cap;
    mkey emitted;             /* the last key put into the slice buffer */
    pthread_cond_t gone_cv;   /* with wmu: a closed producer is merged */
    /* the merge thread's sleep */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic int sleeping;
    int stop;                 /* under mu */
    pthread_t thread;
    int started;
    /* read by producers */
    _Alignas(64) _Atomic uint64_t settled; /* below: MH_ELATE */
    _Atomic int failed;       /* the writer failed: MH_ESTATE */
    /* merge thread only */
    _Alignas(64) uint64_t settled_own; /* what it stored last */
    heap_ent *heap;
    size_t nheap;
    mh_rec *stage;
    size_t nstage;
    uint64_t *snap;           /* tails, pendings and closed at the last look */
    size_t nsnap;
};

/* ---- the heap of non-empty rings, by head key ---------------------------- */

static void heap_push(mh_merge *m, mkey k, mh_producer *p) {
    p->in_heap = 1;
    size_t i = m->nheap++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!key_lt(k, m->heap[up].key))
            break;
        m->heap[i] = m->heap[up];
        i = up;
    }
    m->heap[i] = (heap_ent){k, p};
}

static heap_ent heap_pop(mh_merge *m) {
    heap_ent top = m->heap[0], last = m->heap[--m->nheap];
    size_t i = 0, n = m->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && key_lt(m->heap[c + 1].key, m->heap[c].key))
            c++;
        if (!key_lt(m->heap[c].key, last.key))
            break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    if (n)
        m->heap[i] = last;
    top.p->in_heap = 0;
    return top;
}

static inline mkey head_key(const mh_producer *p, uint64_t head) {
    return (mkey){p->ring[head & (RING_CAP - 1)].transition, p->stream};
}

/* ---- the merge thread ---------------------------------------------------- */

/* For a producer whose ring looked empty: 1 when it holds accesses after
 * all (looked at again after its pending word, see the handshake), else 0
 * with its floor in *f. */
static int floor_of(mh_merge *m, mh_producer *p, mkey *f) {
    /* pending, then last_t, then tail: the producer stores them in the
     * opposite order (tail, last_t, pending), so a last_t seen here is
     * never one of accesses the tail load below would miss */
    uint64_t pend = atomic_load(&p->pending);
    uint64_t lt = atomic_load_explicit(&p->last_t, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&p->head, memory_order_relaxed);
    if (atomic_load_explicit(&p->tail, memory_order_acquire) != head)
        return 1;
    mkey k = key_max(p->floor, (mkey){lt, p->stream});
    if (pend == NONE)
        k = key_max(k, (mkey){m->settled_own, p->stream});
    *f = k;
    return 0;
}

/* A producer whose ring looked empty at head: left alone when it is closed
 * and merged to the end; else back into the heap when it holds accesses
 * after all (floor_of), or its floor lowers *bound. */
static void idle_producer(mh_merge *m, mh_producer *p, uint64_t head, mkey *bound) {
    if (atomic_load_explicit(&p->closed, memory_order_acquire) &&
        atomic_load_explicit(&p->tail, memory_order_acquire) == head)
        return;
    mkey f;
    if (floor_of(m, p, &f))
        heap_push(m, head_key(p, head), p);
    else if (key_lt(f, *bound))
        *bound = f;
}

/* Hands the staged records to the writer (wmu held). */
static void flush_stage(mh_merge *m) {
    mh_writer *w = m->w;
    if (m->nstage && !atomic_load(&m->failed)) {
        int rc = mh_writer_take_recs(w, m->stage, m->nstage);
        if (rc != MH_OK) {
            mh_writer_fail(w, rc);
            atomic_store(&m->failed, 1);
        }
    }
    if (w->failed)
        atomic_store(&m->failed, 1);
    m->nstage = 0;
}

/* One round (wmu held): looks at every producer, emits what the floors
 * allow, removes closed producers merged to the end. Returns whether it
 * did anything. */
static int merge_round(mh_merge *m) {
    mh_writer *w = m->w;
    int progress = 0;
    m->nheap = 0;
    mkey bound = KEY_INF;
    uint64_t newest = 0;
    for (size_t i = 0; i < m->nprods; i++)
        m->prods[i]->in_heap = 0;
    for (size_t i = 0; i < m->nprods; i++) {
        mh_producer *p = m->prods[i];
        uint64_t lt = atomic_load_explicit(&p->last_t, memory_order_acquire);
        if (lt > newest)
            newest = lt;
        uint64_t head = atomic_load_explicit(&p->head, memory_order_relaxed);
        if (atomic_load_explicit(&p->tail, memory_order_acquire) != head) {
            heap_push(m, head_key(p, head), p);
            continue;
        }
        idle_producer(m, p, head, &bound); /* closed and done: removed below */
    }
    for (;;) {
        if (m->nheap == 0)
            break;
        if (!key_lt(m->heap[0].key, bound)) {
            /* a producer with nothing buffered holds the merge back: past
             * reorder_window behind the newest, it is left behind */
            if (m->reorder_window == 0 || newest < m->reorder_window ||
                newest - m->reorder_window <= m->settled_own)
                break;
            m->settled_own = newest - m->reorder_window;
            atomic_store(&m->settled, m->settled_own);
            /* floors again, now that producers must see the new value */
            bound = KEY_INF;
            for (size_t i = 0; i < m->nprods; i++) {
                mh_producer *p = m->prods[i];
                uint64_t head = atomic_load_explicit(&p->head, memory_order_relaxed);
                if (p->in_heap)
                    continue;
                idle_producer(m, p, head, &bound);
            }
            continue;
        }
        heap_ent e = heap_pop(m);
        mh_producer *p = e.p;
        mkey limit = bound;
        if (m->nheap && key_lt(m->heap[0].key, limit))
            limit = m->heap[0].key;
        uint64_t head = atomic_load_explicit(&p->head, memory_order_relaxed);
        uint64_t tail = atomic_load_explicit(&p->tail, memory_order_acquire);
        mkey k = e.key;
        while (head != tail && key_lt(k, limit)) {
            if (m->nstage == STAGE_CAP) {
                atomic_store_explicit(&p->head, head, memory_order_release);
                flush_stage(m);
            }
            m->stage[m->nstage++] = p->ring[head & (RING_CAP - 1)];
            m->emitted = k;
            head++;
            progress = 1;
            if (head != tail)
                k = head_key(p, head);
        }
        /* equal keys of one stream go together (append order); the first
         * head at or past the limit waits for the next pop */
        atomic_store_explicit(&p->head, head, memory_order_release);
        if (head != tail) {
            heap_push(m, k, p);
            continue;
        }
        if (atomic_load_explicit(&p->tail, memory_order_acquire) != head) {
            heap_push(m, head_key(p, head), p);
            continue;
        }
        idle_producer(m, p, head, &bound);
    }
    flush_stage(m);
    /* closed and merged to the end: the closer may free it */
    size_t k = 0;
    for (size_t i = 0; i < m->nprods; i++) {
        mh_producer *p = m->prods[i];
        uint64_t head = atomic_load_explicit(&p->head, memory_order_relaxed);
        if (atomic_load_explicit(&p->closed, memory_order_acquire) &&
            atomic_load_explicit(&p->tail, memory_order_acquire) == head) {
            /* closed (its handle is dead) and merged to the end */
            free(p->ring);
            free(p);
            atomic_fetch_sub_explicit(&w->nproducers, 1, memory_order_release);
            progress = 1;
            pthread_cond_broadcast(&m->gone_cv);
        } else {
            m->prods[k++] = p;
        }
    }
    m->nprods = k;
    return progress;
}

/* Whether anything a producer can change moved since the last look (the
 * recheck before sleeping; wmu held). Refreshes the snapshot. */
static int changed(mh_merge *m) {
    int diff = m->nsnap != 3 * m->nprods;
    if (diff) {
        uint64_t *s = realloc(m->snap, (3 * m->nprods + 1) * sizeof *s);
        if (!s)
            return 1; /* no room to remember: never sleep on it */
        m->snap = s;
        m->nsnap = 3 * m->nprods;
    }
    for (size_t i = 0; i < m->nprods; i++) {
        mh_producer *p = m->prods[i];
        uint64_t v[3] = {atomic_load(&p->tail), atomic_load(&p->pending),
                         (uint64_t)atomic_load(&p->closed)};
        for (int j = 0; j < 3; j++) {
            diff |= m->snap[3 * i + j] != v[j];
            m->snap[3 * i + j] = v[j];
        }
    }
    return diff;
}

static void *merge_main(void *arg) {
    mh_merge *m = arg;
    mh_writer *w = m->w;
    for (;;) {
        pthread_mutex_lock(&w->wmu);
        int progress = merge_round(m);
        if (progress) {
            pthread_mutex_unlock(&w->wmu);
            continue;
        }
        /* nothing to do: sleep until a producer appends, retracts,
         * closes or opens (each looks at `sleeping` after its change,
         * with a seq_cst fence between: one of the two sees the other) */
        pthread_mutex_lock(&m->mu);
        atomic_store(&m->sleeping, 1);
        atomic_thread_fence(memory_order_seq_cst);
        int moved = changed(m);
        pthread_mutex_unlock(&w->wmu);
        if (!moved && !m->stop) {
            /* the timeout only bounds the cost of a missed wake-up */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 20 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&m->cv, &m->mu, &ts);
        }
        atomic_store(&m->sleeping, 0);
        int stop = m->stop;
        pthread_mutex_unlock(&m->mu);
        if (stop)
            break;
    }
    return NULL;
}

static void wake(mh_merge *m) {
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&m->sleeping, memory_order_relaxed)) {
        pthread_mutex_lock(&m->mu);
        pthread_cond_signal(&m->cv);
        pthread_mutex_unlock(&m->mu);
    }
}

/* Creates the merge and starts its thread (wmu held). */
static int merge_create(mh_writer *w, mh_diag *d) {
    mh_merge *m = calloc(1, sizeof *m);
    if (!m)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory for the merge");
    m->w = w;
    m->reorder_window = w->opt.reorder_window;
    m->stage = malloc(STAGE_CAP * sizeof *m->stage);
    int rc = m->stage ? MH_OK : MH_ENOMEM;
    int mu = 0, cv = 0, gcv = 0;
    if (rc == MH_OK && (mu = pthread_mutex_init(&m->mu, NULL) == 0) == 0)
        rc = MH_ENOMEM;
    if (rc == MH_OK && (cv = pthread_cond_init(&m->cv, NULL) == 0) == 0)
        rc = MH_ENOMEM;
    if (rc == MH_OK && (gcv = pthread_cond_init(&m->gone_cv, NULL) == 0) == 0)
        rc = MH_ENOMEM;
    int e = 0;
    if (rc == MH_OK && (e = pthread_create(&m->thread, NULL, merge_main, m)) != 0)
        rc = MH_ENOMEM;
    if (rc != MH_OK) {
        if (gcv)
            pthread_cond_destroy(&m->gone_cv);
        if (cv)
            pthread_cond_destroy(&m->cv);
        if (mu)
            pthread_mutex_destroy(&m->mu);
        free(m->stage);
        free(m);
        return mh_diag_fail(d, rc, 0, "cannot start the merge thread%s%s",
                            e ? ": " : "", e ? strerror(e) : "");
    }
    m->started = 1;
    w->merge = m;
    return MH_OK;
}

void mh_merge_destroy(mh_writer *w) {
    mh_merge *m = w->merge;
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    m->stop = 1;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
    /* producers left open (a contract breach): freed, their handles dead */
    for (size_t i = 0; i < m->nprods; i++) {
        free(m->prods[i]->ring);
        free(m->prods[i]);
    }
    free(m->prods);
    free(m->heap);
    free(m->stage);
    free(m->snap);
    pthread_cond_destroy(&m->gone_cv);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
    w->merge = NULL;
}

/* ---- producers ------------------------------------------------------------ */

int mh_producer_open(mh_writer *w, uint32_t stream, mh_producer **out) {
    if (!w)
        return MH_EINVAL;
    pthread_mutex_lock(&w->wmu);
    w->err.code = 0;
    mh_diag *d = &w->err;
    int rc = MH_OK;
    if (out)
        *out = NULL;
    if (!out)
        rc = mh_diag_fail(d, MH_EINVAL, 0, "mh_producer_open: NULL out");
    else if (w->failed)
        rc = mh_writer_refuse_failed(w);
    else if (!mh_writer_stream_declared(w, stream))
        rc = mh_diag_fail(d, MH_ENOSTREAM, 0,
                          "mh_producer_open: stream %u is not declared", stream);
    for (size_t i = 0; rc == MH_OK && w->merge && i < w->merge->nprods; i++)
        if (w->merge->prods[i]->stream == stream)
            rc = mh_diag_fail(d, MH_EINVAL, 0,
                              "mh_producer_open: stream %u already has a producer",
                              stream);
    if (rc == MH_OK && !w->merge)
        rc = merge_create(w, d);
    mh_merge *m = w->merge;
    mh_producer *p = NULL;
    if (rc == MH_OK) {
        if (m->nprods == m->cap) {
            size_t cap = m->cap ? 2 * m->cap : 8;
            mh_producer **np = realloc(m->prods, cap * sizeof *np);
            heap_ent *nh = np ? realloc(m->heap, cap * sizeof *nh) : NULL;
            if (np)
                m->prods = np;
            if (nh) {
                m->heap = nh;
                m->cap = cap;
            }
        }
        p = m->nprods < m->cap ? aligned_alloc(64, (sizeof *p + 63) / 64 * 64)
                               : NULL;
        if (p) {
            memset(p, 0, sizeof *p);
            p->ring = malloc(RING_CAP * sizeof *p->ring);
        }
        if (!p || !p->ring) {
            if (p)
                free(p);
            p = NULL;
            rc = mh_diag_fail(d, MH_ENOMEM, 0,
                              "out of memory for the producer of stream %u",
                              stream);
        }
    }
    if (rc == MH_OK) {
        p->w = w;
        p->stream = stream;
        /* nothing below what is already in the slice buffer (this
         * session's merge, or accesses appended before it) */
        mkey f = m->emitted;
        if (w->has_last)
            f = key_max(f, (mkey){w->last_t, 0});
        p->floor = f;
        atomic_init(&p->tail, 0);
        atomic_init(&p->head, 0);
        atomic_init(&p->last_t, f.t);
        atomic_init(&p->pending, NONE);
        atomic_init(&p->closed, 0);
        m->prods[m->nprods++] = p;
        atomic_fetch_add_explicit(&w->nproducers, 1, memory_order_release);
        atomic_fetch_add_explicit(&w->nopen, 1, memory_order_release);
        *out = p;
    }
    pthread_mutex_unlock(&w->wmu);
    if (rc == MH_OK) {
        pthread_mutex_lock(&m->mu);
        pthread_cond_signal(&m->cv);
        pthread_mutex_unlock(&m->mu);
    }
    return rc;
}

/* Why an access is refused (the stream is the producer's), or NULL. */
static const char *bad_access(const mh_access *a) {
    unsigned res = 0;
    for (size_t k = 0; k < sizeof a->reserved; k++)
        res |= a->reserved[k];
    return a->size == 0                ? "size 0"
           : a->op >= MH_OP_COUNT      ? "unknown operation"
           : a->has_linear > 1         ? "has_linear not 0 or 1"
           : a->has_pc > 1             ? "has_pc not 0 or 1"
           : a->physical + (a->size - 1u) < a->physical ? "address range wraps"
           : res != 0                  ? "reserved bytes not zero"
                                       : NULL;
}

int mh_producer_append_batch(mh_producer *p, const mh_access *a, size_t n,
                             size_t *bad) {
    if (!p)
        return MH_EINVAL;
    mh_merge *m = p->w->merge;
    p->err.code = 0;
    if (!a && n)
        return mh_diag_fail(&p->err, MH_EINVAL, 0,
                            "mh_producer_append_batch: NULL accesses, n %zu", n);
    if (atomic_load_explicit(&m->failed, memory_order_acquire))
        return mh_diag_fail(&p->err, MH_ESTATE, 0,
                            "the writer failed: only closing the producer and "
                            "the writer are allowed");
    if (n == 0)
        return MH_OK;
    /* the whole batch is checked before any of it is taken, branch-free
     * (writer.c's check); the first bad access is looked for on failure */
    uint64_t prev0 = p->has_prev ? p->prev_t : 0, prev = prev0;
    int bad_seen = 0;
    for (size_t i = 0; i < n; i++) {
        bad_seen |= mh_access_bad(&a[i]) | (a[i].transition < prev);
        prev = a[i].transition;
    }
    for (size_t i = 0; bad_seen && i < n; i++) {
        const char *why = bad_access(&a[i]);
        if (why || a[i].transition < prev0) {
            if (bad)
                *bad = i;
            if (why)
                return mh_diag_fail(&p->err, MH_EINVAL, 0,
                                    "stream %u, access %zu of the batch: %s",
                                    p->stream, i, why);
            return mh_diag_fail(&p->err, MH_EORDER, 0,
                                "stream %u, access %zu of the batch: transition "
                                "%llu after %llu", p->stream, i,
                                (unsigned long long)a[i].transition,
                                (unsigned long long)prev0);
        }
        prev0 = a[i].transition;
    }
    /* late: only a[0] can be (transitions do not decrease in the batch) */
    uint64_t t0 = a[0].transition;
    mkey k0 = {t0, p->stream};
    int late = key_lt(k0, p->floor);
    uint64_t s = 0;
    if (!late) {
        atomic_store(&p->pending, t0); /* the handshake: see the top */
        s = atomic_load(&m->settled);
        late = t0 < s;
        if (late) {
            atomic_store(&p->pending, NONE);
            wake(m);
        }
    }
    if (late) {
        if (bad)
            *bad = 0;
        return mh_diag_fail(&p->err, MH_ELATE, 0,
                            "stream %u, access 0 of the batch: transition %llu "
                            "is below what the merge has settled (%llu; "
                            "reorder_window %llu)", p->stream,
                            (unsigned long long)t0,
                            (unsigned long long)(t0 < s ? s : p->floor.t),
                            (unsigned long long)m->reorder_window);
    }
    uint64_t tail = atomic_load_explicit(&p->tail, memory_order_relaxed);
    size_t i = 0;
    unsigned spins = 0;
    while (i < n) {
        uint64_t room = RING_CAP - (tail - p->head_seen);
        if (room == 0) {
            p->head_seen = atomic_load_explicit(&p->head, memory_order_acquire);
            room = RING_CAP - (tail - p->head_seen);
        }
        if (room == 0) {
            /* the merge is behind (or held back by another producer) */
            if (atomic_load_explicit(&m->failed, memory_order_acquire)) {
                atomic_store(&p->pending, NONE);
                return mh_diag_fail(&p->err, MH_ESTATE, 0,
                                    "the writer failed while stream %u was "
                                    "appending", p->stream);
            }
            wake(m);
            if (++spins < 64) {
                sched_yield();
            } else {
                struct timespec ts = {0, 50 * 1000};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        spins = 0;
        size_t c = n - i < room ? n - i : (size_t)room;
        for (size_t k = 0; k < c; k++) {
            const mh_access *x = &a[i + k];
            mh_rec *r = &p->ring[(tail + k) & (RING_CAP - 1)];
            r->transition = x->transition;
            r->physical = x->physical;
            r->linear = x->linear;
            r->pc = x->pc & (0 - (uint64_t)x->has_pc);
            r->size = x->size;
            r->stream = p->stream;
            r->op = x->op;
            r->has_linear = x->has_linear;
            r->has_pc = x->has_pc;
            memset(r->pad, 0, sizeof r->pad);
        }
        tail += c;
        i += c;
        atomic_store_explicit(&p->tail, tail, memory_order_release);
        atomic_store_explicit(&p->last_t, a[i - 1].transition, memory_order_release);
    }
    atomic_store(&p->pending, NONE);
    wake(m);
    p->prev_t = a[n - 1].transition;
    p->has_prev = 1;
    return MH_OK;
}

/* Closing does not wait for the merge: another producer may hold it back,
 * and its thread may be this one. The merge frees p once it has taken its
 * last access; the writer's own calls wait for that (mh_merge_drain). */
int mh_producer_close(mh_producer *p) {
    if (!p)
        return MH_OK;
    mh_writer *w = p->w;
    mh_merge *m = w->merge;
    atomic_fetch_sub_explicit(&w->nopen, 1, memory_order_acq_rel);
    atomic_store_explicit(&p->closed, 1, memory_order_release);
    /* p may be freed from here on */
    pthread_mutex_lock(&m->mu);
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_mutex_lock(&w->wmu);
    int rc = w->failed ? w->failed : MH_OK;
    pthread_mutex_unlock(&w->wmu);
    return rc;
}

void mh_merge_drain(mh_writer *w) {
    mh_merge *m = w->merge;
    if (!m)
        return;
    pthread_mutex_lock(&w->wmu);
    while (atomic_load(&w->nproducers))
        pthread_cond_wait(&m->gone_cv, &w->wmu);
    pthread_mutex_unlock(&w->wmu);
}

int mh_writer_producers_check(mh_writer *w, const char *what) {
    if (atomic_load_explicit(&w->nopen, memory_order_acquire)) {
        pthread_mutex_lock(&w->wmu);
        w->err.code = 0;
        int rc = mh_diag_fail(&w->err, MH_ESTATE, 0,
                              "%s: producers are open (close them first)", what);
        pthread_mutex_unlock(&w->wmu);
        return rc;
    }
    mh_merge_drain(w);
    return MH_OK;
}
