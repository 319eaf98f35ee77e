/*
 * replay_main.c - runs a fuzz target's LLVMFuzzerTestOneInput on files,
 * without libFuzzer, so ctest replays every corpus file and every past crash
 * with any compiler (gcc, the sanitizer build, valgrind).
 *
 * Usage: <target>_replay PATH...   (a PATH may be a file or a directory; the
 * regular files of a directory are replayed in name order, names starting
 * with '.' skipped). Each input gets a buffer of exactly its size, so an
 * overread is caught by ASan or valgrind. Exit 0 when every input ran, 2 on
 * an unreadable path; a failed check aborts (the crash is the report).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_helpers.h"

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = fuzz_malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            buf = fuzz_realloc(buf, cap);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    /* exact-size copy: the target must not read past the input */
    uint8_t *exact = len ? fuzz_malloc(len) : NULL;
    if (len)
        memcpy(exact, buf, len);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, size_t *count) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = fuzz_realloc(names, cap * sizeof *names);
        }
        size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
        names[n] = fuzz_malloc(len);
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_names);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) != 0)
                rc = -1;
            else
                (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE-OR-DIRECTORY...\n", argv[0]);
        return 2;
    }
    size_t count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            rc = 2;
        } else if (S_ISDIR(st.st_mode)) {
            if (replay_dir(argv[i], &count) != 0)
                rc = 2;
        } else if (replay_file(argv[i]) != 0) {
            rc = 2;
        } else {
            count++;
        }
    }
    printf("replayed %zu input(s)\n", count);
    return rc;
}
