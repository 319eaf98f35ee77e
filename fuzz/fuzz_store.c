/*
 * fuzz_store.c - see fuzz_store.h.
 */
#include "fuzz_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_helpers.h"

static char workdir[FUZZ_PATH_MAX];
static pid_t workdir_pid;

static void remove_workdir(void) {
    /* a forked child (none today) must not remove its parent's directory */
    if (workdir[0] && getpid() == workdir_pid)
        fuzz_rmtree(workdir);
}

const char *fuzz_workdir(void) {
    if (workdir[0])
        return workdir;
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    int n = snprintf(workdir, sizeof workdir, "%s/mhfuzz-XXXXXX", base);
    FUZZ_ASSERT(n > 0 && (size_t)n < sizeof workdir);
    if (!mkdtemp(workdir)) {
        fprintf(stderr, "fuzz: mkdtemp %s: %s\n", workdir, strerror(errno));
        abort();
    }
    workdir_pid = getpid();
    atexit(remove_workdir);
    return workdir;
}

void fuzz_join(char *buf, size_t cap, const char *dir, const char *name) {
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    FUZZ_ASSERT_MSG(n > 0 && (size_t)n < cap, "path too long");
}

void fuzz_write_file(const char *dir, const char *name, const void *data,
                     size_t size) {
    char path[FUZZ_PATH_MAX];
    fuzz_join(path, sizeof path, dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        fprintf(stderr, "fuzz: open %s: %s\n", path, strerror(errno));
        abort();
    }
    const uint8_t *p = data;
    while (size > 0) {
        ssize_t w = write(fd, p, size);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fprintf(stderr, "fuzz: write %s: %s\n", path, strerror(errno));
            abort();
        }
        p += w;
        size -= (size_t)w;
    }
    FUZZ_ASSERT(close(fd) == 0);
}

uint8_t *fuzz_read_file(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat st;
    FUZZ_ASSERT(fstat(fd, &st) == 0);
    size_t len = (size_t)st.st_size;
    uint8_t *buf = fuzz_malloc(len);
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        FUZZ_ASSERT_MSG(r > 0, path);
        got += (size_t)r;
    }
    close(fd);
    *size = len;
    return buf;
}

void fuzz_rmtree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[FUZZ_PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        fuzz_join(path, sizeof path, dir, e->d_name);
        if (unlink(path) != 0 && (errno == EISDIR || errno == EPERM))
            fuzz_rmtree(path);
    }
    closedir(d);
    rmdir(dir);
}

void fuzz_mkdir(const char *dir) {
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz: mkdir %s: %s\n", dir, strerror(errno));
        abort();
    }
}

void fuzz_segment_name(char out[32], uint64_t seq) {
    snprintf(out, 32, "seg-%016" PRIx64 ".mhs", seq);
}
