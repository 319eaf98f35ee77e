/*
 * writer_int.h - the writer's state, shared by its three files:
 *   writer.c          open, append, slice buffer, commit, discard, close;
 *   writer_streams.c  stream declarations and metadata, windows, and what
 *                     a commit hands mh_segw_seal besides the accesses;
 *   merge.c           producers (several threads appending at once) and
 *                     the merge thread that feeds the slice buffer.
 * Not included anywhere else: the rest of the library sees only memhist.h
 * and internal.h.
 */
#ifndef MH_WRITER_INT_H
#define MH_WRITER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"

#define MAX_BUILDERS 8
/* Builder states (scratch and output of one slice): two per builder thread,
 * so that a thread whose slice is built but not yet its turn to be appended
 * parks it and builds the next one instead of waiting. */
#define STATES_PER_BUILDER 2
#define MAX_STATES (MAX_BUILDERS * STATES_PER_BUILDER)
/* slice buffers: one per state and the producer's; at most all but the
 * producer's wait in the queue */
#define QUEUE_CAP (MAX_STATES + 1)

typedef struct job {
    mh_rec *buf;
    uint32_t n;
    uint64_t id_base, seq;
    mh_segw *seg; /* the segment it goes to: an automatic commit hands the
                     segment to the seal thread while its last slices are
                     still being built */
} job;

/* A slice built before its turn to be appended: its state stays out of
 * the free list until the builder that appends the slice before it
 * appends this one too (builder_main). */
typedef struct parked {
    job j;
    int state; /* index in mh_writer.builder */
    int rc;    /* of mh_builder_run */
} parked;

/* A window touched since the last commit (design2.md, dictionary table 7):
 * its accesses are the ids [id_begin, id_end) (id_end = next id while it is
 * open). A window still open at a commit stays in the list as a
 * continuation that begins at the next segment's first id. */
typedef struct mh_wwin {
    uint64_t window;
    uint64_t id_begin, id_end;
    uint64_t t_begin; /* transition of id_begin (when it exists and !cont) */
    uint64_t t_end;   /* transition of id_end - 1 (closed, non-empty) */
    uint8_t open;
    uint8_t cont;     /* carried over from an earlier segment */
} mh_wwin;

typedef struct mh_merge mh_merge;

/* The seal info of an automatic commit, copied (arrays and strings in one
 * block) so that the seal thread can use it while the writer's thread
 * declares streams, sets metadata and begins windows for the next segment. */
typedef struct mh_seal_snap {
    mh_seal_info si;
    void *mem; /* what si points to; free() */
} mh_seal_snap;

typedef struct mh_writer {
    char *dir;
    int lock_fd;
    mh_writer_options opt;
    mh_manifest man;          /* committed state */
    _Atomic uint64_t committed; /* man.access_count, for any thread */
    mh_kv *meta;
    size_t nmeta;
    int meta_dirty;           /* something besides accesses to commit:
                                 metadata, a stream, a window begun */
    mh_rec *buf;              /* slice being filled (ids implied: the
                                 first is next_id - n) */
    uint32_t n, cap;
    uint64_t next_id;
    uint64_t last_t;          /* transition of the last access kept */
    int has_last;
    mh_segw *segw;            /* segment being written, or NULL */
    uint64_t seg_t_first;     /* transition of the segment's first access */
    uint64_t seg_t_last;      /* of the last access handed to a builder */
    /* where the segment being written begins: the MANIFEST's next_seq and
     * access_count, or past the segment an automatic commit handed to the
     * seal thread (man is the seal thread's until that seal is done) */
    uint64_t seg_seq, seg_id_first;
    int failed;
    /* builder states: builder[0] works in the appending thread when
     * nthreads = 0; with background threads, STATES_PER_BUILDER per thread,
     * taken by whichever thread needs one (free_state, under mu) */
    int nthreads;
    mh_builder *builder[MAX_STATES];
    int free_state[MAX_STATES];
    int nfree_state;
    parked park[MAX_STATES]; /* built, waiting for their turn (under mu) */
    int npark;
    pthread_t thread[MAX_BUILDERS];
    int mu_ready;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job queue[QUEUE_CAP];     /* slices waiting for a builder, in order */
    size_t qhead, qlen;
    mh_rec *pool[QUEUE_CAP];  /* free slice buffers */
    size_t npool;
    uint64_t jobs_sent, jobs_done; /* slices handed out / appended */
    int job_rc;
    uint64_t job_fail_seq;    /* the first job job_rc may have cost (a
                                 builder's own; after a failed seal, the
                                 next segment's first) */
    int job_errno;            /* errno of the builder that failed */
    mh_diag job_diag;         /* its detail (under mu) */
    int stop;
    /* The seal of an automatic commit (background threads only): the
     * seal thread waits until the segment's slices are appended (jobs_done
     * reaches seal_after), then seals it and stores the MANIFEST, while
     * the builders go on with the next segment's slices. One at a time:
     * the next automatic commit waits for it; an explicit commit, close,
     * discard and abandon wait for it too. Under mu. */
    int seal_busy;
    mh_segw *seal_segw;
    mh_seal_snap seal_snap;
    uint64_t seal_after;
    int seal_started;
    pthread_t seal_thread;
    mh_diag err;              /* detail of the last failed call; code 0 at
                                 the start of each call */
    mh_diag failed_diag;      /* detail of the failure that failed w */

    /* ---- streams (writer_streams.c) ---- */
    /* bit s set: stream s is declared (stream 0 always); 8 KiB, read on
     * the append path only for a batch whose streams are not all the
     * previous batch's last one */
    uint64_t declared[(MH_STREAM_MAX + 1) / 64];
    uint32_t fast_stream;     /* stream of the last access appended */
    mh_stream_info *streams;  /* declared, increasing id, names owned */
    size_t nstreams;
    mh_stream_kv *smeta;      /* stream metadata, sorted by stream, owned */
    size_t nsmeta;
    int streams_table;        /* the store already has a streams table */

    /* ---- windows (writer_streams.c) ---- */
    mh_wwin *wins;            /* touched since the last commit, in order */
    size_t nwins, wins_cap;
    int win_need_t;           /* the open window's t_begin comes with the
                                 next access kept */
    int has_window;           /* some window was ever begun in the store */
    uint64_t last_window;     /* the largest window id begun */

    /* ---- producers (merge.c) ---- */
    /* wmu guards the writer's state above while producers are open: the
     * merge thread takes it to put merged accesses into the slice buffer
     * (and to commit automatically), the writer's thread for commit,
     * set_meta, stream_declare and stream_set_meta. */
    int wmu_ready;
    pthread_mutex_t wmu;
    mh_merge *merge;          /* NULL until the first mh_producer_open */
    _Atomic int nproducers;   /* producers not yet merged to the end */
    _Atomic int nopen;        /* of which not closed */
} mh_writer;

/* The last 8 bytes of an mh_access: op, has_linear, has_pc, then the
 * reserved bytes. */
_Static_assert(offsetof(mh_access, has_linear) == offsetof(mh_access, op) + 1 &&
                   offsetof(mh_access, has_pc) == offsetof(mh_access, op) + 2 &&
                   offsetof(mh_access, reserved) == offsetof(mh_access, op) + 3 &&
                   offsetof(mh_access, op) + 8 == sizeof(mh_access),
               "mh_access tail");

/* On the append path of every access: one 8-byte load and one test for
 * the flag bytes (the byte-by-byte form cost ~18 instructions an access):
 * has_linear and has_pc (second and third bytes) may only have their low
 * bit set, the reserved bytes none. Branch-free, so that a batch checks
 * with no branch per access. The stream is checked apart (stream_bad):
 * whether it is declared is the writer's, not the access's. */
static inline int mh_access_bad(const mh_access *a) {
    static const uint8_t flag_mask[8] = {0, 0xfe, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint64_t tail, mask;
    memcpy(&tail, &a->op, sizeof tail);
    memcpy(&mask, flag_mask, sizeof mask);
    return (a->size == 0) | (a->op >= MH_OP_COUNT) |
           (a->physical + (a->size - 1u) < a->physical) | ((tail & mask) != 0);
}

/* ---- writer.c, for merge.c ------------------------------------------ */
/* Fails w for good (its detail in w->err kept for the MH_ESTATE after). */
int mh_writer_fail(mh_writer *w, int rc);
/* MH_ESTATE with the detail every call but close and abandon gives once
 * w has failed: "writer failed earlier (CODE: DETAIL); ...". */
int mh_writer_refuse_failed(mh_writer *w);
/* Appends n checked records (the merge's output) behind the accesses kept,
 * closing slices and committing automatically as append does. Call with
 * wmu held. */
int mh_writer_take_recs(mh_writer *w, const mh_rec *r, size_t n);
/* Commits (wmu held when producers are open). */
int mh_writer_commit_locked(mh_writer *w);

/* ---- writer_streams.c ----------------------------------------------- */
/* Whether stream s is declared. */
static inline int mh_writer_stream_declared(const mh_writer *w, uint32_t s) {
    return s <= MH_STREAM_MAX && ((w->declared[s >> 6] >> (s & 63)) & 1);
}
/* Stream 0 declared, nothing else (a new writer). */
int mh_writer_streams_init(mh_writer *w);
/* Takes streams, stream metadata and the last window id from the store's
 * segments (seg: the newest). */
int mh_writer_streams_load(mh_writer *w, const mh_seg *newest);
void mh_writer_window_seen(mh_writer *w, const mh_seg *seg);
/* Fills si's streams, stream metadata and window parts for the segment
 * being sealed, ids [id_first, id_end), its last access at transition
 * t_last; *parts is malloc'd (free after the seal). */
int mh_writer_seal_info(mh_writer *w, uint64_t id_first, uint64_t id_end,
                        uint64_t t_last, mh_seal_info *si,
                        mh_window_part **parts);
/* Copies si (metadata, streams, stream metadata, window parts and their
 * strings) into out; MH_ENOMEM. mh_seal_snap_free(out) frees it. */
int mh_seal_snap_make(const mh_seal_info *si, mh_seal_snap *out);
void mh_seal_snap_free(mh_seal_snap *s);
/* After a successful seal of [.., id_end): closed windows go, the open one
 * continues at id_end. */
void mh_writer_windows_sealed(mh_writer *w, uint64_t id_end);
/* After a discard that left next_id accesses: windows trimmed. */
void mh_writer_windows_discarded(mh_writer *w);
void mh_writer_streams_free(mh_writer *w);

/* ---- merge.c -------------------------------------------------------- */
/* Stops the merge thread and frees the merge (producers all closed). */
void mh_merge_destroy(mh_writer *w);
/* Waits until closed producers are merged to the end (wmu not held). */
void mh_merge_drain(mh_writer *w);
/* For the writer's own calls while producers exist: MH_ESTATE (detail
 * under wmu) when one is open; else waits for the merge to finish with
 * the closed ones and returns MH_OK. */
int mh_writer_producers_check(mh_writer *w, const char *what);
static inline int mh_writer_has_producers(const mh_writer *w) {
    return atomic_load_explicit(&w->nproducers, memory_order_acquire) != 0;
}

#endif /* MH_WRITER_INT_H */
