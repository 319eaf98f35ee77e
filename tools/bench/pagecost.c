/*
 * pagecost.c - mh_pagecost: what a page of a store's mapping costs on this
 * machine when a question meets it again, against anonymous memory of the
 * same size. The library does not take part: it tells how much of a
 * benchmark figure is the machine's (address translation on a large
 * mapping), not memhist's work.
 *
 *   mh_pagecost STORE [--pages K] [--passes P] [--seed N] [--no-anon]
 *
 * Maps every regular file of the directory STORE read-only (a store's
 * segments and MANIFEST; nothing is parsed), reads one byte of every page
 * so that all are mapped and none is left to fault, then reads one byte in
 * each of K pages drawn uniformly (default 6,600: about what 100 point
 * questions touch), the offset of each read depending on the byte before
 * (a dependent chain: the latency of each, not the throughput), P passes
 * over the same pages (default 6). Then the same on an anonymous private
 * mapping of the same number of 4 KiB pages (MADV_NOHUGEPAGE), written
 * first (--no-anon: not). Prints one Markdown row per mapping: ns a page
 * in each pass and the minor and major page faults of the passes
 * (getrusage).
 *
 * Measured on the benchmark VM (stop 56): a page of a 2.7 GB store met for
 * the first time since the sweep costs 3.4 us there, 0.26 us in a 93 MB
 * one and 0.5 us anonymous; the same pages get cheaper for five passes.
 *
 * Exit status: 0 measured, 1 a file could not be opened or mapped (its
 * name and the reason on standard error), 2 bad usage.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"

#define PAGE 4096u
#define MAX_FILES 4096u
#define MAX_PASSES 32u

typedef struct map {
    const unsigned char *p;
    size_t pages;
} map;

typedef struct opts {
    const char *store;
    size_t pages;
    unsigned passes;
    uint64_t seed;
    int anon;
} opts;

#define USAGE "usage: mh_pagecost STORE [--pages K] [--passes P] [--seed N] [--no-anon]\n"

static int usage(const char *why, const char *arg) {
    fprintf(stderr, "mh_pagecost: %s%s%s\n" USAGE, why, arg ? ": " : "", arg ? arg : "");
    return 2;
}

/* what the chases read, kept so that no read is optimised out */
static volatile unsigned g_sink;

/* splitmix64: the page draw, the same for a seed on every machine */
static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* K pages of the maps drawn uniformly over their total pages: map index
 * and page, in at[2k], at[2k + 1] */
static void draw(const map *m, size_t total, size_t k, uint64_t seed, size_t *at) {
    for (size_t i = 0; i < k; i++) {
        size_t g = (size_t)(next_rand(&seed) % total), f = 0;
        while (g >= m[f].pages)
            g -= m[f++].pages;
        at[2 * i] = f;
        at[2 * i + 1] = g;
    }
}

/* One pass: a byte of each drawn page, each read's line chosen by the
 * byte before, so that no read starts before the one before it ends. */
static unsigned chase(const map *m, const size_t *at, size_t k) {
    unsigned x = 0;
    for (size_t i = 0; i < k; i++) {
        const volatile unsigned char *p = m[at[2 * i]].p;
        x += p[at[2 * i + 1] * PAGE + ((x & 1u) << 6)];
    }
    return x;
}

static unsigned measure(const char *what, const map *m, size_t n, size_t total,
                        const opts *o, const size_t *at) {
    unsigned sink = 0;
    double ns[MAX_PASSES];
    long f0 = mhb_minor_faults(), j0 = mhb_major_faults();
    for (unsigned p = 0; p < o->passes; p++) {
        double t0 = mhb_now();
        sink += chase(m, at, o->pages);
        ns[p] = (mhb_now() - t0) * 1e9 / (double)o->pages;
    }
    long f1 = mhb_minor_faults(), j1 = mhb_major_faults();
    printf("| %s | %zu | %zu |", what, n, total);
    for (unsigned p = 0; p < o->passes; p++)
        printf(" %.1f |", ns[p]);
    printf(" %ld / %ld |\n", f0 < 0 || f1 < 0 ? -1 : f1 - f0, j0 < 0 || j1 < 0 ? -1 : j1 - j0);
    return sink;
}

static int parse(int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    o->pages = 6600;
    o->passes = 6;
    o->seed = 1;
    o->anon = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--no-anon")) {
            o->anon = 0;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(USAGE, stdout);
            return 3; /* done: exit 0 */
        }
        if (a[0] == '-' && a[1] == '-') {
            if (i + 1 >= argc)
                return usage("missing value", a);
            const char *v = argv[++i];
            char *end = NULL;
            errno = 0;
            unsigned long long x = strtoull(v, &end, 10);
            if (errno || end == v || *end || v[0] == '-')
                return usage("bad number", v);
            if (!strcmp(a, "--pages")) {
                if (x < 1 || x > 100000000)
                    return usage("--pages must be 1 .. 100000000", v);
                o->pages = (size_t)x;
            } else if (!strcmp(a, "--passes")) {
                if (x < 1 || x > MAX_PASSES)
                    return usage("--passes must be 1 .. 32", v);
                o->passes = (unsigned)x;
            } else if (!strcmp(a, "--seed")) {
                o->seed = x;
            } else {
                return usage("unknown option", a);
            }
            continue;
        }
        if (a[0] == '-')
            return usage("unknown option", a);
        if (o->store)
            return usage("more than one store", a);
        o->store = a;
    }
    if (!o->store)
        return usage("no store given", NULL);
    return 0;
}

int main(int argc, char **argv) {
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc == 3 ? 0 : rc;
    DIR *d = opendir(o.store);
    if (!d) {
        fprintf(stderr, "mh_pagecost: cannot open %s: %s\n", o.store, strerror(errno));
        return 1;
    }
    static map m[MAX_FILES];
    size_t n = 0, total = 0;
    struct dirent *e;
    rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", o.store, e->d_name) >= (int)sizeof path)
            continue;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)PAGE)
            continue; /* the LOCK, anything under a page: nothing to chase */
        if (n == MAX_FILES) {
            fprintf(stderr, "mh_pagecost: %s: more than %u files\n", o.store, MAX_FILES);
            rc = 1;
            break;
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        void *p = fd < 0 ? MAP_FAILED
                         : mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "mh_pagecost: cannot %s %s: %s\n", fd < 0 ? "open" : "map", path,
                    strerror(errno));
            rc = 1;
        } else {
            m[n].p = p;
            m[n].pages = (size_t)st.st_size / PAGE;
            total += m[n++].pages;
        }
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    if (rc)
        return rc;
    if (total == 0) {
        fprintf(stderr, "mh_pagecost: %s: no file of a page or more\n", o.store);
        return 1;
    }
    size_t *at = malloc(2 * o.pages * sizeof *at);
    if (!at) {
        fprintf(stderr, "mh_pagecost: out of memory\n");
        return 1;
    }
    unsigned sink = 0;
    for (size_t f = 0; f < n; f++) /* every page mapped: no fault left */
        for (size_t g = 0; g < m[f].pages; g++)
            sink += ((const volatile unsigned char *)m[f].p)[g * PAGE];
    printf("| mapping | files | pages |");
    for (unsigned p = 0; p < o.passes; p++)
        printf(" pass %u ns |", p);
    printf(" minor / major faults |\n|---|---:|---:|");
    for (unsigned p = 0; p < o.passes; p++)
        printf("---:|");
    printf("---:|\n");
    draw(m, total, o.pages, o.seed, at);
    sink += measure(o.store, m, n, total, &o, at);
    if (o.anon) {
        size_t len = total * PAGE;
        unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a == MAP_FAILED) {
            fprintf(stderr, "mh_pagecost: cannot map %zu anonymous bytes: %s\n", len,
                    strerror(errno));
            free(at);
            return 1;
        }
        (void)madvise(a, len, MADV_NOHUGEPAGE); /* 4 KiB pages, as the files' */
        for (size_t g = 0; g < total; g++)
            a[g * PAGE] = (unsigned char)g;
        map am = {a, total};
        draw(&am, total, o.pages, o.seed, at);
        sink += measure("anonymous, same pages", &am, 1, total, &o, at);
        munmap(a, len);
    }
    free(at);
    g_sink = sink;
    return 0;
}
