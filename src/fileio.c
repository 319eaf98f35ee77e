/*
 * fileio.c - the few file operations the format needs: complete writes,
 * fsync of files and directories, atomic replacement, small-file reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int mh_io_error(void) {
    return (errno == ENOSPC || errno == EFBIG || errno == EDQUOT) ? MH_ENOSPC
                                                                  : MH_EIO;
}

int mh_write_all(int fd, const void *buf, size_t n) {
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return mh_io_error();
        }
        if (w == 0) {
            errno = ENOSPC;
            return MH_ENOSPC;
        }
        p += w;
        n -= (size_t)w;
    }
    return MH_OK;
}

int mh_pwrite_all(int fd, const void *buf, size_t n, uint64_t off) {
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return mh_io_error();
        }
        if (w == 0) {
            errno = ENOSPC;
            return MH_ENOSPC;
        }
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return MH_OK;
}

int mh_fsync_dir(const char *dir, mh_diag *d) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return mh_diag_os(d, MH_EIO, "cannot open directory", dir);
    int rc = MH_OK;
    if (fsync(fd) != 0)
        rc = mh_diag_os(d, MH_EIO, "cannot fsync directory", dir);
    close(fd);
    return rc;
}

char *mh_path_join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

void mh_segment_name(char out[MHF_SEGMENT_NAME_LEN + 1], uint64_t seq) {
    snprintf(out, MHF_SEGMENT_NAME_LEN + 1, MHF_SEGMENT_PREFIX "%016" PRIx64
             MHF_SEGMENT_SUFFIX, seq);
}

int mh_read_file(const char *path, uint8_t **out, size_t *size, mh_diag *d) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return mh_diag_os(d, MH_ENOENT, "cannot open", path);
        return mh_diag_os(d, MH_EIO, "cannot open", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        mh_diag_os(d, MH_EIO, "cannot stat", path);
        close(fd);
        return MH_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return mh_diag_fail(d, MH_EIO, 0, "%s is not a regular file", path);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory reading %s (%zu bytes)",
                            path, n);
    }
    size_t got = 0;
    int e = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            e = errno;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(buf);
        if (e) {
            errno = e;
            return mh_diag_os(d, MH_EIO, "cannot read", path);
        }
        return mh_diag_fail(d, MH_EIO, got, "%s shrank while read: %zu of %zu bytes",
                            path, got, n);
    }
    *out = buf;
    *size = n;
    return MH_OK;
}

int mh_write_atomic(const char *dir, const char *tmp_name, const char *name,
                    const void *buf, size_t n, mh_diag *d) {
    char *tmp = mh_path_join(dir, tmp_name), *dst = mh_path_join(dir, name);
    int rc = MH_ENOMEM;
    if (!tmp || !dst) {
        mh_diag_fail(d, rc, 0, "out of memory");
        goto out;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = mh_diag_os(d, 0, "cannot create", tmp);
        goto out;
    }
    rc = mh_write_all(fd, buf, n);
    if (rc != MH_OK)
        mh_diag_os(d, rc, "cannot write", tmp);
    if (rc == MH_OK && fsync(fd) != 0)
        rc = mh_diag_os(d, 0, "cannot fsync", tmp);
    if (close(fd) != 0 && rc == MH_OK)
        rc = mh_diag_os(d, 0, "cannot close", tmp);
    if (rc == MH_OK && rename(tmp, dst) != 0)
        rc = mh_diag_os(d, 0, "cannot rename to its final name", tmp);
    if (rc != MH_OK) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
    } else {
        rc = mh_fsync_dir(dir, d);
    }
out:
    free(tmp);
    free(dst);
    return rc;
}
