/*
 * ordered_jobs.c - n jobs run on worker threads, each job's results taken
 * on the calling thread in job order (fsck verifies segments in parallel
 * and reports them in MANIFEST order, as one thread would).
 */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

typedef struct ojobs {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t n, next;      /* next job to claim */
    unsigned char *done; /* per job: its work returned */
    void (*work)(void *, size_t);
    void *arg;
} ojobs;

static void *worker(void *p) {
    ojobs *o = p;
    for (;;) {
        pthread_mutex_lock(&o->mu);
        size_t i = o->next < o->n ? o->next++ : o->n;
        pthread_mutex_unlock(&o->mu);
        if (i == o->n)
            return NULL;
        o->work(o->arg, i);
        pthread_mutex_lock(&o->mu);
        o->done[i] = 1;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
    }
}

/* The calling thread alone: each job's work, then its done. */
static void serial(size_t from, size_t n, void (*work)(void *, size_t),
                   void (*done)(void *, size_t), void *arg) {
    for (size_t i = from; i < n; i++) {
        work(arg, i);
        done(arg, i);
    }
}

unsigned mh_run_ordered(size_t n, unsigned threads, void (*work)(void *, size_t),
                        void (*done)(void *, size_t), void *arg) {
    if (threads > n)
        threads = (unsigned)n;
    if (threads > MH_ORDERED_MAX_THREADS)
        threads = MH_ORDERED_MAX_THREADS;
    ojobs o;
    pthread_t tid[MH_ORDERED_MAX_THREADS];
    unsigned started = 0;
    if (threads >= 2 && (o.done = calloc(n, 1)) != NULL) {
        o.n = n;
        o.next = 0;
        o.work = work;
        o.arg = arg;
        if (pthread_mutex_init(&o.mu, NULL) != 0) {
            free(o.done);
        } else if (pthread_cond_init(&o.cv, NULL) != 0) {
            pthread_mutex_destroy(&o.mu);
            free(o.done);
        } else {
            while (started < threads &&
                   pthread_create(&tid[started], NULL, worker, &o) == 0)
                started++;
            if (started == 0) {
                pthread_cond_destroy(&o.cv);
                pthread_mutex_destroy(&o.mu);
                free(o.done);
            }
        }
    }
    if (started == 0) { /* one thread asked for, or none could start */
        serial(0, n, work, done, arg);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&o.mu);
        while (!o.done[i])
            pthread_cond_wait(&o.cv, &o.mu);
        pthread_mutex_unlock(&o.mu);
        done(arg, i);
    }
    for (unsigned t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_cond_destroy(&o.cv);
    pthread_mutex_destroy(&o.mu);
    free(o.done);
    return started;
}
