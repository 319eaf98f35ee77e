/*
 * abprof.c - mh_abprof: mh_abtest's queries, one build at a time, for
 * callgrind. mh_abtest needs both stores written and the trace in memory,
 * which under valgrind takes far too long on a 35 M-access store; this
 * splits it in two:
 *
 *   mh_abprof prep BASE_LIB NEW_LIB SRC_STORE DIR [--queries N] [--seed N]
 *       loads SRC_STORE's accesses as mh_abtest does (pcs cleared, one
 *       stream), writes DIR/base.mh with BASE_LIB and DIR/new.mh with
 *       NEW_LIB, draws mh_abtest's classes (user distribution, same seed and
 *       per-class count give the same queries) and saves them to
 *       DIR/queries.bin;
 *   mh_abprof run LIB STORE QUERIES [CLASS_SUBSTRING]
 *       opens STORE with LIB and runs every query of the classes whose
 *       name contains CLASS_SUBSTRING (all without it; "=NAME": the class
 *       NAME only) twice, class by
 *       class: a warm pass, then again in abprof_run_class(): run it under
 *         valgrind --tool=callgrind --toggle-collect=abprof_run_class ...
 *       and the instructions counted are those of the queries alone (the
 *       library's and libc's they call). Prints each class's query count
 *       and the accesses returned (the same on both libraries, or a wrong
 *       answer: the prep step's mh_abtest-like warm pass is mh_abtest's job).
 *   mh_abprof dump SRC_STORE N FILE
 *       writes the first N accesses of SRC_STORE (streams and pcs kept) to
 *       FILE as raw mh_access records, so that
 *   mh_abprof ingest LIB FILE STORE
 *       can write them with LIB (default options: background threads on)
 *       in abprof_ingest(), without loading a store under valgrind:
 *         valgrind --tool=callgrind --toggle-collect=abprof_ingest ...
 *       counts the appending thread's instructions only (callgrind
 *       toggles per thread: the background builders' are left out, 90 %
 *       of the writer's on 64 threads); without --toggle-collect every
 *       thread's are counted, the file's reading with them (a few %).
 *       Prints the wall time, the process's CPU time (every thread's:
 *       the writer is CPU-bound on a small machine, and CPU time varies
 *       less with the neighbours than wall time) and its minor page
 *       faults over the writer's open, appends and close. A trace of
 *       several streams (a dump of a multi-stream store) has streams 1 ..
 *       its highest declared first, as threads without pid or cpu.
 */
#include "bench.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define ABPROF_DUMP(name) CALLGRIND_DUMP_STATS_AT(name)
#endif
#endif
#ifndef ABPROF_DUMP
#define ABPROF_DUMP(name) ((void)(name))
#endif

typedef struct lib {
    void *dl;
    int (*writer_open)(const char *, unsigned, const mh_writer_options *, mh_writer **);
    int (*append_batch)(mh_writer *, const mh_access *, size_t, size_t *);
    int (*writer_close)(mh_writer *);
    int (*stream_declare)(mh_writer *, const mh_stream_info *);
    int (*reader_open)(const char *, mh_reader **);
    void (*reader_close)(mh_reader *);
    int (*query_run)(const mh_reader *, const mh_query *, mh_access *, size_t, size_t *);
    mh_reader *r;
} lib;

static int lib_load(const char *path, lib *l)
{
    l->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (l->dl == NULL) {
        fprintf(stderr, "mh_abprof: %s\n", dlerror());
        return -1;
    }
#define SYM(field, name)                                                         \
    do {                                                                         \
        *(void **)&l->field = dlsym(l->dl, name);                                \
        if (l->field == NULL) {                                                  \
            fprintf(stderr, "mh_abprof: %s: no %s\n", path, name);               \
            return -1;                                                           \
        }                                                                        \
    } while (0)
    SYM(writer_open, "mh_writer_open");
    SYM(append_batch, "mh_writer_append_batch");
    SYM(writer_close, "mh_writer_close");
    SYM(reader_open, "mh_reader_open");
    SYM(reader_close, "mh_reader_close");
    SYM(query_run, "mh_query_run");
#undef SYM
    /* 1.2 on; only a dump of several streams needs it (ingest) */
    *(void **)&l->stream_declare = dlsym(l->dl, "mh_writer_stream_declare");
    return 0;
}

static int lib_run(void *h, const mh_query *q, mh_access *out, size_t max, size_t *n)
{
    const lib *l = h;
    return l->query_run(l->r, q, out, max, n);
}

static int write_store(const char *libpath, const char *store, const mhb_trace *t)
{
    lib l;
    memset(&l, 0, sizeof l);
    if (lib_load(libpath, &l))
        return 1;
    mh_writer *w = NULL;
    int rc = l.writer_open(store, MH_CREATE, NULL, &w);
    for (size_t i = 0; rc == MH_OK && i < t->n; i += 65536) {
        size_t k = t->n - i < 65536 ? t->n - i : 65536;
        rc = l.append_batch(w, t->a + i, k, NULL);
    }
    if (w != NULL) {
        int rc2 = l.writer_close(w);
        if (rc == MH_OK)
            rc = rc2;
    }
    if (rc != MH_OK)
        fprintf(stderr, "mh_abprof: writing %s: %s\n", store, mh_strerror(rc));
    return rc != MH_OK;
}

/* queries.bin: per class its mhb_class header fields, then nq mh_query
 * (streams NULL: one stream) */
typedef struct qhdr {
    char name[48];
    int32_t range;
    uint32_t dir, ops, pages;
    uint64_t max, nq;
} qhdr;

static int prep(int argc, char **argv)
{
    if (argc < 6)
        return 2;
    size_t per_class = 100;
    uint64_t seed = 1;
    for (int i = 6; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--queries"))
            per_class = (size_t)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else
            return 2;
    }
    const char *dir = argv[5];
    mhb_trace t;
    memset(&t, 0, sizeof t);
    int rc = mhb_load_store(argv[4], &t);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_abprof: %s: %s\n", argv[4], mh_strerror(rc));
        return 1;
    }
    mhb_trace_strip_pc(&t);
    for (size_t i = 0; i < t.n; i++)
        t.a[i].stream = 0;
    mkdir(dir, 0777);
    char p[4200];
    snprintf(p, sizeof p, "%s/base.mh", dir);
    if (write_store(argv[2], p, &t))
        return 1;
    snprintf(p, sizeof p, "%s/new.mh", dir);
    if (write_store(argv[3], p, &t))
        return 1;
    mhb_class *c = NULL;
    size_t nc = 0;
    if (mhb_classes_make(t.a, t.n, per_class, seed, MHB_DIST_USER, NULL, 0, &c, &nc) != MH_OK)
        return 1;
    snprintf(p, sizeof p, "%s/queries.bin", dir);
    FILE *f = fopen(p, "wb");
    if (f == NULL)
        return 1;
    for (size_t x = 0; x < nc; x++) {
        qhdr h;
        memset(&h, 0, sizeof h);
        memcpy(h.name, c[x].name, sizeof h.name);
        h.range = c[x].range;
        h.dir = c[x].dir;
        h.ops = c[x].ops;
        h.pages = c[x].pages;
        h.max = c[x].max;
        h.nq = c[x].nq;
        fwrite(&h, sizeof h, 1, f);
        fwrite(c[x].q, sizeof(mh_query), c[x].nq, f);
    }
    int bad = fclose(f) != 0;
    printf("mh_abprof: %zu accesses, %zu classes written to %s\n", t.n, nc, dir);
    mhb_classes_free(c, nc);
    mhb_trace_free(&t);
    return bad;
}

/* Everything callgrind counts (--toggle-collect=abprof_run_class). */
__attribute__((noinline)) size_t abprof_run_class(const mhb_impl *im, const mhb_class *c,
                                                  mh_access *out, int *rc)
{
    size_t total = 0;
    const char *per = getenv("ABPROF_PER_QUERY");
    char name[80] = "q";
    for (size_t i = 0; i < c->nq && *rc == MH_OK; i++) {
        size_t n = 0;
        *rc = mhb_run_one(im, c, i, out, &n);
        total += n;
        if (per != NULL && *per == '1')
            ABPROF_DUMP(name); /* one callgrind dump per query
                                  (ABPROF_PER_QUERY=1): the paired median
                                  of instructions, as mh_abtest pairs times */
    }
    return total;
}

static int run(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    const char *want = argc > 5 ? argv[5] : "";
    lib l;
    memset(&l, 0, sizeof l);
    if (lib_load(argv[2], &l))
        return 1;
    int rc = l.reader_open(argv[3], &l.r);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_abprof: %s: %s\n", argv[3], mh_strerror(rc));
        return 1;
    }
    FILE *f = fopen(argv[4], "rb");
    if (f == NULL)
        return 1;
    mh_access *out = malloc(MHB_OUT_CAP * sizeof *out);
    mhb_impl im = {"lib", lib_run, &l, -1, SIZE_MAX, 1, NULL};
    qhdr h;
    while (out != NULL && rc == MH_OK && fread(&h, sizeof h, 1, f) == 1) {
        mhb_class c;
        memset(&c, 0, sizeof c);
        memcpy(c.name, h.name, sizeof c.name);
        c.name[sizeof c.name - 1] = 0;
        c.range = h.range;
        c.dir = h.dir;
        c.ops = h.ops;
        c.pages = h.pages;
        c.max = h.max;
        c.nq = h.nq;
        c.q = malloc(h.nq * sizeof *c.q + 1);
        if (c.q == NULL || fread(c.q, sizeof *c.q, h.nq, f) != h.nq) {
            free(c.q);
            rc = MH_EIO;
            break;
        }
        /* "=NAME": that class only; else every class whose name holds it */
        if (want[0] == '=' ? !strcmp(c.name, want + 1) : strstr(c.name, want) != NULL) {
            /* once uncounted first: mh_abtest times the best of its passes,
             * after a warm pass, so the reader's block cache is warm */
            for (size_t i = 0; i < c.nq && rc == MH_OK; i++) {
                size_t n = 0;
                rc = mhb_run_one(&im, &c, i, out, &n);
            }
            size_t total = abprof_run_class(&im, &c, out, &rc);
            printf("%-32s %4zu queries %8zu accesses\n", c.name, c.nq, total);
        }
        free(c.q);
    }
    fclose(f);
    free(out);
    l.reader_close(l.r);
    if (rc != MH_OK)
        fprintf(stderr, "mh_abprof: %s\n", mh_strerror(rc));
    return rc != MH_OK;
}

static int dump(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    mhb_trace t;
    memset(&t, 0, sizeof t);
    int rc = mhb_load_store(argv[2], &t);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_abprof: %s: %s\n", argv[2], mh_strerror(rc));
        return 1;
    }
    size_t n = (size_t)strtod(argv[3], NULL);
    if (n > t.n)
        n = t.n;
    FILE *f = fopen(argv[4], "wb");
    int bad = f == NULL || fwrite(t.a, sizeof *t.a, n, f) != n;
    if (f != NULL && fclose(f) != 0)
        bad = 1;
    printf("mh_abprof: %zu of %zu accesses written to %s\n", n, t.n, argv[4]);
    mhb_trace_free(&t);
    return bad;
}

/* Everything callgrind counts (--toggle-collect=abprof_ingest). */
__attribute__((noinline)) int abprof_ingest(const lib *l, const char *store,
                                            const mh_access *a, size_t n, uint32_t streams)
{
    mh_writer *w = NULL;
    int rc = l->writer_open(store, MH_CREATE, NULL, &w);
    /* streams 1 .. streams - 1 (stream 0 needs no declaration) */
    for (uint32_t s = 1; rc == MH_OK && s < streams; s++) {
        mh_stream_info si;
        memset(&si, 0, sizeof si);
        si.struct_size = sizeof si;
        si.id = s;
        si.kind = MH_STREAM_THREAD;
        si.parent = MH_NONE32;
        si.pid = MH_NONE64;
        si.tid = s;
        si.cpu = MH_NONE32;
        rc = l->stream_declare(w, &si);
    }
    for (size_t i = 0; rc == MH_OK && i < n; i += 65536)
        rc = l->append_batch(w, a + i, n - i < 65536 ? n - i : 65536, NULL);
    if (w != NULL) {
        int rc2 = l->writer_close(w);
        if (rc == MH_OK)
            rc = rc2;
    }
    return rc;
}

static int ingest(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    lib l;
    memset(&l, 0, sizeof l);
    if (lib_load(argv[2], &l))
        return 1;
    FILE *f = fopen(argv[3], "rb");
    if (f == NULL)
        return 1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t n = len > 0 ? (size_t)len / sizeof(mh_access) : 0;
    mh_access *a = malloc(n * sizeof *a + 1);
    int bad = a == NULL || fread(a, sizeof *a, n, f) != n;
    fclose(f);
    uint32_t streams = 1;
    for (size_t i = 0; !bad && i < n; i++) {
        bad = a[i].stream > MH_STREAM_MAX;
        if (!bad && a[i].stream >= streams)
            streams = a[i].stream + 1u;
    }
    if (bad) {
        fprintf(stderr, "mh_abprof: %s: unreadable, or a stream above %u\n", argv[3],
                (unsigned)MH_STREAM_MAX);
        free(a);
        return 1;
    }
    if (streams > 1 && l.stream_declare == NULL) {
        fprintf(stderr, "mh_abprof: %s has %u streams; %s cannot declare them "
                        "(no mh_writer_stream_declare: a library before 1.2)\n",
                argv[3], streams, argv[2]);
        free(a);
        return 1;
    }
    double t0 = mhb_now(), c0 = mhb_cpu();
    long f0 = mhb_minor_faults();
    int rc = abprof_ingest(&l, argv[4], a, n, streams);
    double dt = mhb_now() - t0, cpu = mhb_cpu() - c0;
    long faults = mhb_minor_faults() - f0;
    printf("mh_abprof: %zu accesses written in %.3f s (%.2f M/s), %.3f CPU-s "
           "(%.1f ns an access), %ld minor faults: %s\n", n, dt,
           (double)n / dt / 1e6, cpu, cpu * 1e9 / (double)n, faults,
           mh_strerror(rc));
    free(a);
    return rc != MH_OK;
}

int main(int argc, char **argv)
{
    int rc = 2;
    if (argc > 1 && !strcmp(argv[1], "prep"))
        rc = prep(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "run"))
        rc = run(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "dump"))
        rc = dump(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "ingest"))
        rc = ingest(argc, argv);
    if (rc == 2)
        fprintf(stderr, "usage: mh_abprof prep BASE_LIB NEW_LIB SRC_STORE DIR [--queries N] "
                        "[--seed N]\n"
                        "       mh_abprof run LIB STORE QUERIES [CLASS_SUBSTRING]\n"
                        "       mh_abprof dump SRC_STORE N FILE\n"
                        "       mh_abprof ingest LIB FILE STORE\n");
    return rc;
}
