/*
 * bench_cold.c - cold figures: a store's pages dropped from the page cache,
 * then the open and the first queries timed, as a user who opens a store
 * written yesterday sees them (issue 10).
 *
 * posix_fadvise(POSIX_FADV_DONTNEED) drops only clean pages that no live
 * process maps: the caller closes every reader of the store first, and the
 * drop fsyncs each file so no dirty page stays. mincore() then checks what
 * is still resident, and the figure is reported beside the timings.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

size_t mhb_cold_list(const mhb_class *c, size_t count, size_t *ci, size_t *qi)
{
    size_t n = 0;
    for (size_t round = 0; n < MHB_COLD_QUERIES; round++) {
        size_t added = 0;
        for (size_t k = 0; k < count && n < MHB_COLD_QUERIES; k++)
            if (round < c[k].nq) {
                ci[n] = k;
                qi[n] = round;
                n++;
                added++;
            }
        if (added == 0)
            break;
    }
    return n;
}

typedef int (*file_fn)(const char *file, void *ctx);

/* fn on path, or on every regular file of the flat directory path. */
static int each_file(const char *path, file_fn fn, void *ctx)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return MH_EIO;
    if (!S_ISDIR(st.st_mode))
        return fn(path, ctx);
    DIR *d = opendir(path);
    if (d == NULL)
        return MH_EIO;
    int rc = MH_OK;
    struct dirent *e;
    char p[4096];
    while (rc == MH_OK && (e = readdir(d)) != NULL) {
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
            rc = fn(p, ctx);
    }
    closedir(d);
    return rc;
}

static int drop_one(const char *file, void *ctx)
{
    (void)ctx;
    int fd = open(file, O_RDONLY);
    if (fd < 0)
        return MH_EIO;
    /* dirty pages are not dropped: write them back first */
    int rc = fsync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0
                 ? MH_OK
                 : MH_EIO;
    if (rc != MH_OK)
        fprintf(stderr, "mh_bench: cannot drop the cached pages of %s: %s\n", file,
                strerror(errno));
    close(fd);
    return rc;
}

int mhb_drop_cache(const char *path)
{
    return each_file(path, drop_one, NULL);
}

/* Maps file whole, read-only and shared; an empty file gives *map NULL and
 * *len 0. Returns MH_OK or MH_EIO. */
static int map_whole(const char *file, void **map, size_t *len)
{
    *map = NULL;
    *len = 0;
    int fd = open(file, O_RDONLY);
    if (fd < 0)
        return MH_EIO;
    struct stat st;
    int rc = MH_EIO;
    if (fstat(fd, &st) == 0) {
        rc = MH_OK;
        if (st.st_size > 0) {
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED) {
                rc = MH_EIO;
            } else {
                *map = m;
                *len = (size_t)st.st_size;
            }
        }
    }
    close(fd);
    return rc;
}

/* The pinning child's state: what it mapped (kept until it exits). */
typedef struct pin_state {
    uint64_t pages;
    int locked, refused;
} pin_state;

/* Maps a file whole and keeps it: mlock (every page read in and held,
 * unevictable), or where the lock is refused (RLIMIT_MEMLOCK), a byte of
 * every page read, so that the pages are mapped (the reclaim this
 * benchmark's machines run takes unmapped page cache only). */
static int pin_one(const char *file, void *ctx)
{
    pin_state *ps = ctx;
    void *map;
    size_t len;
    if (map_whole(file, &map, &len) != MH_OK)
        return MH_EIO;
    if (len == 0)
        return MH_OK;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (mlock(map, len) == 0) {
        ps->locked = 1;
    } else {
        ps->refused = 1;
        const volatile unsigned char *b = map;
        unsigned sum = 0;
        for (size_t off = 0; off < len; off += page)
            sum += b[off];
        (void)sum;
    }
    ps->pages += (len + page - 1) / page;
    return MH_OK; /* mapped until the child exits */
}

int mhb_pin_child_main(int n, char **paths)
{
    pin_state ps = {0, 0, 0};
    int rc = MH_OK;
    for (int i = 0; i < n && rc == MH_OK; i++)
        rc = each_file(paths[i], pin_one, &ps);
    int64_t msg[3] = {rc, (int64_t)ps.pages, ps.locked && !ps.refused ? 1 : 2};
    if (write(STDOUT_FILENO, msg, sizeof msg) != (ssize_t)sizeof msg)
        return 1;
    char c;
    while (read(STDIN_FILENO, &c, 1) < 0 && errno == EINTR) /* until the pipe closes */
        ;
    return 0;
}

int mhb_pin_stores(const char *const *paths, size_t n, mhb_pin *p)
{
    memset(p, 0, sizeof *p);
    p->pid = -1;
    p->fd = -1;
    char **argv = calloc(n + 3, sizeof *argv);
    int up[2] = {-1, -1}, down[2] = {-1, -1};
    if (argv == NULL || pipe(up) != 0 || pipe(down) != 0) {
        free(argv);
        for (int i = 0; i < 2; i++) {
            if (up[i] >= 0)
                close(up[i]);
            if (down[i] >= 0)
                close(down[i]);
        }
        return MH_EIO;
    }
    argv[0] = (char *)"mh_bench";
    argv[1] = (char *)MHB_PIN_CHILD;
    for (size_t i = 0; i < n; i++)
        argv[i + 2] = (char *)paths[i];
    /* a new image (posix_spawn: no copy-on-write of this process's memory,
     * whose pages the queries would then fault on as they write) */
    posix_spawn_file_actions_t fa;
    int ok = posix_spawn_file_actions_init(&fa) == 0;
    ok = ok && posix_spawn_file_actions_adddup2(&fa, down[0], STDIN_FILENO) == 0 &&
         posix_spawn_file_actions_adddup2(&fa, up[1], STDOUT_FILENO) == 0 &&
         posix_spawn_file_actions_addclose(&fa, down[1]) == 0 &&
         posix_spawn_file_actions_addclose(&fa, up[0]) == 0;
    pid_t pid = -1;
    fflush(NULL);
    if (ok && posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    close(up[1]);
    close(down[0]);
    if (pid < 0) {
        close(up[0]);
        close(down[1]);
        return MH_EIO;
    }
    p->pid = pid;
    p->fd = down[1];
    int64_t msg[3];
    ssize_t got;
    while ((got = read(up[0], msg, sizeof msg)) < 0 && errno == EINTR)
        ;
    close(up[0]);
    if (got != (ssize_t)sizeof msg || msg[0] != MH_OK) {
        mhb_unpin(p);
        return MH_EIO;
    }
    p->pages = (uint64_t)msg[1];
    p->how = (int)msg[2];
    return MH_OK;
}

void mhb_unpin(mhb_pin *p)
{
    if (p->pid <= 0)
        return;
    close(p->fd); /* the child reads EOF and exits: its mappings go */
    (void)kill(p->pid, SIGKILL); /* also if another child holds the pipe */
    int st;
    while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
        ;
    p->pid = -1;
    p->how = 0;
}

typedef struct resident {
    uint64_t pages, in_core;
} resident;

/* Which of file's pages are in the page cache: *vec (malloc'd, *np
 * entries, bit 0 set for a resident page; NULL with *np 0 for an empty
 * file). Mapping without touching faults nothing in: mincore only looks.
 * Returns MH_OK or MH_EIO. */
static int residency(const char *file, unsigned char **vec, size_t *np)
{
    *vec = NULL;
    *np = 0;
    void *map;
    size_t len;
    if (map_whole(file, &map, &len) != MH_OK)
        return MH_EIO;
    if (len == 0)
        return MH_OK;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (len + page - 1) / page;
    unsigned char *v = malloc(n);
    int rc = MH_EIO;
    if (v && mincore(map, len, v) == 0) {
        *vec = v;
        *np = n;
        rc = MH_OK;
    } else {
        free(v);
    }
    munmap(map, len);
    return rc;
}

static int count_one(const char *file, void *ctx)
{
    resident *r = ctx;
    unsigned char *vec;
    size_t np;
    int rc = residency(file, &vec, &np);
    for (size_t i = 0; rc == MH_OK && i < np; i++)
        r->in_core += vec[i] & 1;
    r->pages += np;
    free(vec);
    return rc;
}

double mhb_resident_pages(const char *path)
{
    resident r = {0, 0};
    if (each_file(path, count_one, &r) != MH_OK)
        return -1;
    return (double)r.in_core;
}

double mhb_resident_pct(const char *path)
{
    resident r = {0, 0};
    if (each_file(path, count_one, &r) != MH_OK)
        return -1;
    return r.pages ? 100.0 * (double)r.in_core / (double)r.pages : 0;
}

/* SPEC.md 5.2's section types 1 .. 13 by name (14 counts as 10), kind 0
 * and the rest. */
const char *mhb_kind_name(unsigned kind)
{
    static const char *const names[MHB_KINDS] = {
        "header and directory", "data", "dictionary", "slices", "chunks", "blocks",
        "address summary", "id map", "address set", "fine address summary",
        "address postings", "span address set", "piece sums", "id transitions",
        "other"};
    return kind < MHB_KINDS ? names[kind] : names[MHB_KIND_OTHER];
}

void mhb_layout_free(mhb_layout *l)
{
    for (size_t i = 0; l->file != NULL && i < l->nfiles; i++)
        free(l->file[i].sec);
    free(l->file);
    l->file = NULL;
    l->nfiles = 0;
}

int mhb_layout_read(const char *store, mhb_layout *out)
{
    memset(out, 0, sizeof *out);
    mh_reader *r = NULL;
    int rc = mh_reader_open(store, &r);
    size_t nseg = rc == MH_OK ? mh_reader_segment_count(r) : 0;
    if (rc == MH_OK && nseg > 0) {
        out->file = calloc(nseg, sizeof *out->file);
        if (out->file == NULL)
            rc = MH_ENOMEM;
    }
    for (size_t i = 0; rc == MH_OK && i < nseg; i++) {
        mh_segment_info si = {.struct_size = sizeof si};
        if ((rc = mh_reader_segment_info(r, i, &si)) != MH_OK)
            break;
        mhb_layout_file *f = &out->file[out->nfiles++];
        snprintf(f->name, sizeof f->name, "%s", si.file_name);
        size_t ns = mh_reader_section_count(r, i);
        f->sec = calloc(ns ? ns : 1, sizeof *f->sec);
        if (f->sec == NULL) {
            rc = MH_ENOMEM;
            break;
        }
        for (size_t k = 0; rc == MH_OK && k < ns; k++) {
            mh_section_info x = {.struct_size = sizeof x};
            if ((rc = mh_reader_section_info(r, i, k, &x)) != MH_OK)
                break;
            /* a section 14 (SPEC 5.2) is the address postings (10) with wide ranges */
            unsigned kind = x.type == 14u ? 10u
                            : x.type >= 1 && x.type < MHB_KIND_OTHER ? x.type
                                                                     : MHB_KIND_OTHER;
            f->sec[f->nsec++] = (mhb_layout_sec){kind, x.offset, x.size};
        }
    }
    mh_reader_close(r);
    if (rc != MH_OK)
        mhb_layout_free(out);
    return rc;
}

/* The kind of the page at byte off of the file named base. */
static unsigned page_kind(const mhb_layout *l, const char *base, uint64_t off)
{
    for (size_t i = 0; i < l->nfiles; i++) {
        const mhb_layout_file *f = &l->file[i];
        if (strcmp(f->name, base) != 0)
            continue;
        for (size_t k = 0; k < f->nsec; k++)
            if (off >= f->sec[k].offset && off - f->sec[k].offset < f->sec[k].size)
                return f->sec[k].kind;
        return 0; /* the header, the directory: bytes no section holds */
    }
    return MHB_KIND_OTHER;
}

typedef struct kinds_ctx {
    const mhb_layout *l;
    double *kinds;
} kinds_ctx;

static int kinds_one(const char *file, void *ctx)
{
    kinds_ctx *kc = ctx;
    unsigned char *vec;
    size_t np;
    int rc = residency(file, &vec, &np);
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; rc == MH_OK && i < np; i++)
        if (vec[i] & 1)
            kc->kinds[page_kind(kc->l, base, (uint64_t)i * page)] += 1;
    free(vec);
    return rc;
}

int mhb_resident_kinds(const char *store, const mhb_layout *l, double *kinds)
{
    for (unsigned k = 0; k < MHB_KINDS; k++)
        kinds[k] = 0;
    kinds_ctx kc = {l, kinds};
    return each_file(store, kinds_one, &kc);
}

int mhb_cold_measure(const char *path, const mhb_layout *layout, mhb_open_fn open_fn,
                     mhb_close_fn close_fn, void *ctx, const mhb_class *c, size_t count,
                     const char *ref_name, mh_access *ref, size_t *nref,
                     mhb_cold *out, uint64_t *compared, uint64_t *mismatches)
{
    size_t ci[MHB_COLD_QUERIES], qi[MHB_COLD_QUERIES];
    double us[MHB_COLD_QUERIES], pages[MHB_COLD_QUERIES], kinds[MHB_KINDS] = {0};
    size_t nl = mhb_cold_list(c, count, ci, qi);
    memset(out, 0, sizeof *out);
    int rc = mhb_drop_cache(path);
    if (rc != MH_OK)
        return rc;
    out->resident_pct = mhb_resident_pct(path);
    mh_access *got = malloc(MHB_OUT_CAP * sizeof *got);
    if (got == NULL)
        return MH_ENOMEM;
    mhb_impl im;
    memset(&im, 0, sizeof im);
    double t0 = mhb_now();
    rc = open_fn(ctx, &im);
    out->open_ms = (mhb_now() - t0) * 1e3;
    for (size_t i = 0; i < nl && rc == MH_OK; i++) {
        size_t n = 0;
        double t1 = mhb_now();
        rc = mhb_run_one(&im, &c[ci[i]], qi[i], got, &n);
        us[i] = (mhb_now() - t1) * 1e6;
        if (rc != MH_OK)
            break;
        if (ref_name == NULL) {
            memcpy(ref + i * MHB_OUT_CAP, got, n * sizeof *got);
            nref[i] = n;
        } else {
            (*compared)++;
            if (!mhb_compare(&c[ci[i]], qi[i], ref_name, ref + i * MHB_OUT_CAP,
                             nref[i], im.name, got, n, im.full))
                (*mismatches)++;
        }
    }
    if (im.h)
        close_fn(&im);
    if (rc == MH_OK)
        mhb_summarise(us, nl, &out->lat);
    /* the cold question: each query alone on a store just dropped */
    size_t nq = nl < MHB_COLD_QUESTIONS ? nl : MHB_COLD_QUESTIONS;
    for (size_t i = 0; i < nq && rc == MH_OK; i++) {
        if ((rc = mhb_drop_cache(path)) != MH_OK)
            break;
        memset(&im, 0, sizeof im);
        size_t n = 0;
        double t1 = mhb_now();
        rc = open_fn(ctx, &im);
        if (rc == MH_OK)
            rc = mhb_run_one(&im, &c[ci[i]], qi[i], got, &n);
        us[i] = (mhb_now() - t1) * 1e6;
        /* before the close: nothing evicted. With a layout the pages are
         * counted once, by kind, and their sum is the question's figure */
        double k[MHB_KINDS];
        if (layout != NULL && mhb_resident_kinds(path, layout, k) == MH_OK) {
            pages[i] = 0;
            for (unsigned j = 0; j < MHB_KINDS; j++) {
                kinds[j] += k[j];
                pages[i] += k[j];
            }
        } else {
            layout = NULL; /* unreadable now: no figure by kind, not a failure */
            pages[i] = mhb_resident_pages(path);
        }
        if (im.h)
            close_fn(&im);
        if (rc != MH_OK)
            break;
        /* against the reference's cold pass; the reference itself against
         * its own answers there (alone, as in the sequence) */
        (*compared)++;
        if (!mhb_compare(&c[ci[i]], qi[i], ref_name ? ref_name : "its cold sequence",
                         ref + i * MHB_OUT_CAP, nref[i], im.name, got, n, im.full))
            (*mismatches)++;
    }
    free(got);
    if (rc != MH_OK)
        return rc;
    mhb_summarise(us, nq, &out->question);
    mhb_summarise(pages, nq, &out->question_pages);
    if (layout != NULL && nq > 0) {
        out->has_kinds = 1;
        for (unsigned j = 0; j < MHB_KINDS; j++)
            out->question_kinds[j] = kinds[j] / (double)nq;
    }
    out->done = 1;
    return MH_OK;
}
