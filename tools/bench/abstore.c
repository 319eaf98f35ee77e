/*
 * abstore.c - mh_abstore: two builds of libmemhist reading the same store,
 * for recordings too large for mh_bench and mh_abtest (which hold the trace
 * in memory: a recording of 10^9 accesses is 56 GB of rows). Nothing is
 * written; the store is read as it is, by both.
 *
 *   mh_abstore BASE_LIB NEW_LIB --store DIR [--store-new DIR2] [--queries N]
 *              [--reps R] [--seed N] [--streams 0|1] [--classes LIST]
 *              [--asks CSV] [--cold N]
 *
 * The questions are drawn as mh_bench's user distribution
 * (tools/bench/README.md), from the store itself: an access at an id
 * uniform over the store (asked of this program's own static library,
 * MH_FROM_ID) gives the address (80 %, or 20 % a random address within
 * 64 KiB of it), the range of each class's width aligned around it; T
 * uniform over the store's transitions; ops rw. Classes: point (8 B),
 * page (4 KiB), 1 MiB and whole space, max 1 and 10, forward and
 * backward, and never (below); with --streams 1 each is asked instead
 * for one stream drawn uniformly over the store's (" 1str", as mh_bench's
 * twins). Classes never max1 fwd / bwd ask 8 bytes within 64 KiB of such
 * an access that no access of the store touches (checked with this
 * program's library, every operation, the whole trace): issue 10's
 * never-accessed address, at a size mh_bench cannot hold (exit 1 when
 * 1,000 draws a question find none). Each
 * question is asked once by both builds, their answers compared (a
 * mismatch: exit 1), then --reps passes, question by question, the order
 * of the two flipped at each question and pass; a question's time is its
 * best, a class's p50 / p99 over its questions, and the paired median the
 * median over its questions of new / base. --classes LIST keeps the
 * classes whose name contains one of LIST's comma-separated parts.
 * --asks CSV writes every question, one row each (header
 * class,question,direction,start,addr_first,addr_last,stream,
 * base_us,new_us,answers: stream empty without --streams 1, the times
 * each build's best), to find a class's slow questions and ask them again
 * (tools/bench/README.md). --cold N then opens the store N times with
 * each build, alternated, its pages dropped from the page cache before
 * each (issue 10's cold open), and prints p50 and max. --store-new DIR2:
 * the new build reads DIR2 instead, a store of the same accesses written
 * another way (a writer change: `memhist upgrade --rewrite` of DIR by each
 * build's memhist gives two such stores); the questions are drawn from DIR, the
 * answers must still be equal, and --cold drops and opens each build's
 * own store. Output: one
 * Markdown table (and the cold line). Exit 2 on bad usage, 1 when the CSV
 * cannot be written or a cold open fails.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h" /* mhb_drop_cache, mhb_resident_pct (bench_cold.c) */
#include "memhist.h"

typedef struct lib {
    const char *path;
    const char *store; /* the store this build reads */
    void *dl;
    /* mh_reader_open_ex: a failure's detail (every 1.x has it) */
    int (*open_ex)(const char *, const mh_reader_options *, mh_reader **, char *, size_t);
    void (*close)(mh_reader *);
    int (*run)(const mh_reader *, const mh_query *, mh_access *, size_t, size_t *);
    const char *(*version)(void);
    mh_reader *r;
} lib;

static int load(lib *l) {
    const char *store = l->store;
    l->dl = dlopen(l->path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!l->dl) {
        fprintf(stderr, "mh_abstore: %s\n", dlerror());
        return -1;
    }
    *(void **)&l->open_ex = dlsym(l->dl, "mh_reader_open_ex");
    *(void **)&l->close = dlsym(l->dl, "mh_reader_close");
    *(void **)&l->run = dlsym(l->dl, "mh_query_run");
    *(void **)&l->version = dlsym(l->dl, "mh_version_string");
    if (!l->open_ex || !l->close || !l->run || !l->version) {
        fprintf(stderr, "mh_abstore: %s: not a libmemhist\n", l->path);
        return -1;
    }
    char detail[512] = "";
    int rc = l->open_ex(store, NULL, &l->r, detail, sizeof detail);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_abstore: %s cannot open %s: %s: %s\n", l->path, store,
                mh_error_name(rc), detail);
        return -1;
    }
    return 0;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static uint64_t g_rng = 88172645463325252ull;
static uint64_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

static int cmp_d(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double pct(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp_d);
    size_t i = (size_t)(p * (double)n);
    return v[i < n ? i : n - 1];
}

static int usage(void) {
    fprintf(stderr, "usage: mh_abstore BASE_LIB NEW_LIB --store DIR [--queries N] [--reps R] "
                    "[--store-new DIR2] [--seed N] [--streams 0|1] [--classes LIST] [--asks CSV] "
                    "[--cold N]\n");
    return 2;
}

static int wanted(const char *name, const char *list) {
    if (!list)
        return 1;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (strstr(name, p))
            return 1;
    return 0;
}

/* --cold N: N opens by each build (alternated) of the store just dropped
 * from the page cache (every reader closed first: a mapped page is not
 * dropped), each closed at once; p50 and max of each build's. */
static int cold_opens(lib *L, long n) {
    double *ms[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
    double resident = 0;
    int rc = ms[0] && ms[1] ? 0 : 1;
    for (long i = 0; rc == 0 && i < 2 * n; i++) {
        int j = (int)(i & 1);
        const char *store = L[j].store;
        if (mhb_drop_cache(store) != MH_OK) {
            fprintf(stderr, "mh_abstore: %s: cannot drop its pages from the page cache\n",
                    store);
            rc = 1;
            break;
        }
        double pr = mhb_resident_pct(store);
        resident = pr > resident ? pr : resident;
        char detail[512] = "";
        double a = now_us();
        int orc = L[j].open_ex(store, NULL, &L[j].r, detail, sizeof detail);
        ms[j][i / 2] = (now_us() - a) / 1e3;
        if (orc != MH_OK) {
            fprintf(stderr, "mh_abstore: cold open of %s: %s: %s\n", store,
                    mh_error_name(orc), detail);
            rc = 1;
            break;
        }
        L[j].close(L[j].r);
    }
    if (rc == 0) /* pct sorts: its 1.0 is the largest */
        printf("cold open (pages dropped, at most %.1f %% still resident), %ld each: base p50 "
               "%.3f ms, max %.3f; new p50 %.3f ms, max %.3f\n", resident, n,
               pct(ms[0], (size_t)n, 0.5), pct(ms[0], (size_t)n, 1.0),
               pct(ms[1], (size_t)n, 0.5), pct(ms[1], (size_t)n, 1.0));
    free(ms[0]);
    free(ms[1]);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 3)
        return usage();
    lib L[2] = {{.path = argv[1]}, {.path = argv[2]}};
    const char *store = NULL, *store_new = NULL, *classes = NULL, *asks = NULL;
    long nq = 100, reps = 3, streams = 0, cold = 0;
    for (int i = 3; i < argc; i += 2) { /* each option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v)
            return usage();
        if (!strcmp(a, "--store"))
            store = v;
        else if (!strcmp(a, "--store-new"))
            store_new = v;
        else if (!strcmp(a, "--classes"))
            classes = v;
        else if (!strcmp(a, "--asks"))
            asks = v;
        else if (!strcmp(a, "--queries") && (nq = strtol(v, &end, 10)) > 0 && !*end)
            ;
        else if (!strcmp(a, "--reps") && (reps = strtol(v, &end, 10)) > 0 && !*end)
            ;
        else if (!strcmp(a, "--seed") && (g_rng = strtoull(v, &end, 10)) != 0 && !*end)
            ;
        else if (!strcmp(a, "--streams") && (streams = strtol(v, &end, 10)) >= 0 &&
                 streams <= 1 && !*end)
            ;
        else if (!strcmp(a, "--cold") && (cold = strtol(v, &end, 10)) >= 0 && cold <= 1000 &&
                 !*end)
            ;
        else
            return usage();
    }
    if (!store)
        return usage();
    /* the store's size, transitions and streams: this program's library */
    mh_reader *own;
    char detail[512] = "";
    int rc = mh_reader_open_ex(store, NULL, &own, detail, sizeof detail);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_abstore: cannot open %s: %s: %s\n", store, mh_error_name(rc),
                detail);
        return 1;
    }
    mh_stats st = {.struct_size = sizeof st};
    if (mh_reader_stats(own, &st) != MH_OK || st.accesses == 0) {
        fprintf(stderr, "mh_abstore: %s: no accesses\n", store);
        return 1;
    }
    size_t ns = mh_reader_stream_count(own);
    uint32_t *sid = calloc(ns ? ns : 1, sizeof *sid);
    for (size_t i = 0; i < ns; i++) {
        mh_stream_info si;
        mh_stream_info_init(&si);
        if (mh_reader_stream_info(own, i, &si) == MH_OK)
            sid[i] = si.id;
    }
    L[0].store = store;
    L[1].store = store_new ? store_new : store;
    if (load(&L[0]) || load(&L[1]))
        return 1;
    FILE *af = NULL;
    if (asks) {
        if (!(af = fopen(asks, "w"))) {
            fprintf(stderr, "mh_abstore: cannot write %s\n", asks);
            return 1;
        }
        fprintf(af, "class,question,direction,start,addr_first,addr_last,stream,base_us,new_us,"
                    "answers\n");
    }
    printf("mh_abstore: %s, %" PRIu64 " accesses, %zu streams; base %s (%s), new %s (%s)%s%s; "
           "%ld questions a class, best of %ld passes\n\n",
           store, st.accesses, ns, L[0].path, L[0].version(), L[1].path, L[1].version(),
           store_new ? " reading " : "", store_new ? store_new : "", nq, reps);
    printf("| class (rw) | base p50 / p99 us | new p50 / p99 us | paired median new/base | "
           "accesses returned |\n|---|---:|---:|---:|---:|\n");
    static const uint64_t width[5] = {8, 4096, 1u << 20, 0, 8};
    static const char *const wname[5] = {"point", "page", "1MiB", "whole", "never"};
    static const size_t maxes[2] = {1, 10};
    mh_query *q = calloc((size_t)nq, sizeof *q);
    uint32_t *qs = calloc((size_t)nq, sizeof *qs);
    double *best[2] = {calloc((size_t)nq, sizeof(double)), calloc((size_t)nq, sizeof(double))};
    double *ratio = calloc((size_t)nq, sizeof(double));
    size_t *nans = calloc((size_t)nq, sizeof *nans);
    if (!q || !qs || !best[0] || !best[1] || !ratio || !nans || !sid) {
        fprintf(stderr, "mh_abstore: out of memory for %ld questions\n", nq);
        return 1;
    }
    mh_access o[2][10];
    int mismatches = 0;
    for (int w = 0; w < 5; w++)
        for (int m = 0; m < 2 - (w == 4); m++) /* never: max 1 (no answer) */
            for (int d = 0; d < 2; d++) {
                char name[64];
                snprintf(name, sizeof name, "%s max%zu %s%s", wname[w], maxes[m],
                         d ? "bwd" : "fwd", streams ? " 1str" : "");
                if (!wanted(name, classes))
                    continue;
                long misses = 0;
                for (long i = 0; i < nq; i++) {
                    mh_query s;
                    mh_query_init(&s);
                    s.start_kind = MH_FROM_ID;
                    s.start = below(st.accesses);
                    s.ops = MH_OPS_ALL;
                    mh_access x;
                    size_t n = 0;
                    if (mh_query_run(own, &s, &x, 1, &n) != MH_OK || n == 0) {
                        i--; /* the last id: nothing after it */
                        continue;
                    }
                    uint64_t addr = x.physical;
                    if (w == 4) { /* 8 bytes within 64 KiB of it that no access touches */
                        addr = (addr + below(1u << 17) - (1u << 16)) & ~(uint64_t)7;
                        mh_query u;
                        mh_query_init(&u);
                        u.start_kind = MH_FROM_ID;
                        u.start = 0;
                        u.ops = MH_OPS_ALL;
                        u.addr_first = addr;
                        u.addr_last = addr + 7;
                        if (mh_query_run(own, &u, &x, 1, &n) != MH_OK || n != 0) {
                            if (++misses > 1000 * nq) {
                                fprintf(stderr, "mh_abstore: %s: no 8 bytes untouched within "
                                                "64 KiB of %ld accesses drawn\n", store, misses);
                                return 1;
                            }
                            i--; /* touched (or unreadable): draw again */
                            continue;
                        }
                    } else if (below(5) == 0) { /* near one */
                        addr += below(1u << 17) - (1u << 16);
                    }
                    mh_query_init(&q[i]);
                    q[i].ops = MH_OPS_ALL;
                    q[i].direction = d ? MH_BACKWARD : MH_FORWARD;
                    q[i].start = st.transition_first + below(st.transition_last - st.transition_first + 1);
                    if (width[w]) {
                        q[i].addr_first = addr & ~(width[w] - 1);
                        q[i].addr_last = q[i].addr_first + (width[w] - 1);
                    } else {
                        q[i].addr_first = 0;
                        q[i].addr_last = UINT64_MAX;
                    }
                    if (streams && ns) {
                        qs[i] = sid[below(ns)];
                        q[i].streams = &qs[i];
                        q[i].nstreams = 1;
                    }
                }
                /* the answers, compared */
                size_t answers = 0;
                for (long i = 0; i < nq; i++) {
                    size_t n0 = 0, n1 = 0;
                    int r0 = L[0].run(L[0].r, &q[i], o[0], maxes[m], &n0);
                    int r1 = L[1].run(L[1].r, &q[i], o[1], maxes[m], &n1);
                    int same = r0 == r1 && n0 == n1;
                    for (size_t k = 0; same && k < n0; k++)
                        same = o[0][k].id == o[1][k].id;
                    if (!same) {
                        mismatches++;
                        fprintf(stderr, "mh_abstore: %s question %ld: base %s %zu, new %s %zu\n",
                                name, i, mh_error_name(r0), n0, mh_error_name(r1), n1);
                    }
                    answers += n1;
                    nans[i] = n1;
                    best[0][i] = best[1][i] = 1e300;
                }
                for (long p = 0; p < reps; p++)
                    for (long i = 0; i < nq; i++)
                        for (int k = 0; k < 2; k++) {
                            int j = (int)((p + i + k) & 1);
                            size_t n;
                            double a = now_us();
                            L[j].run(L[j].r, &q[i], o[j], maxes[m], &n);
                            double t = now_us() - a;
                            if (t < best[j][i])
                                best[j][i] = t;
                        }
                for (long i = 0; i < nq; i++)
                    ratio[i] = best[1][i] / best[0][i];
                for (long i = 0; af && i < nq; i++) {
                    char sbuf[16] = "";
                    if (q[i].nstreams)
                        snprintf(sbuf, sizeof sbuf, "%u", qs[i]);
                    fprintf(af, "%s,%ld,%s,%" PRIu64 ",0x%" PRIx64 ",0x%" PRIx64 ",%s,%.3f,%.3f,%zu\n",
                            name, i, d ? "bwd" : "fwd", q[i].start, q[i].addr_first,
                            q[i].addr_last, sbuf, best[0][i], best[1][i], nans[i]);
                }
                double b50 = pct(best[0], (size_t)nq, 0.5), b99 = pct(best[0], (size_t)nq, 0.99);
                double n50 = pct(best[1], (size_t)nq, 0.5), n99 = pct(best[1], (size_t)nq, 0.99);
                printf("| %s | %.2f / %.1f | %.2f / %.1f | %.2fx | %zu |\n", name, b50, b99, n50,
                       n99, pct(ratio, (size_t)nq, 0.5), answers);
                fflush(stdout);
            }
    printf("\nmismatches %d\n", mismatches);
    if (af && fclose(af) != 0) {
        fprintf(stderr, "mh_abstore: cannot write %s\n", asks);
        return 1;
    }
    L[0].close(L[0].r);
    L[1].close(L[1].r);
    mh_reader_close(own);
    if (cold > 0 && cold_opens(L, cold) != 0)
        return 1;
    free(q);
    free(qs);
    free(best[0]);
    free(best[1]);
    free(ratio);
    free(nans);
    free(sid);
    return mismatches ? 1 : 0;
}
