/*
 * store.c - the store as a directory of files, one function per step every
 * opener takes: is the path a directory, the LOCK (taken by a writer and by
 * repair, probed by fsck), the MANIFEST, and a segment the MANIFEST lists
 * with the check against its record. reader.c, writer.c and verify.c open a
 * store through these, so that the rules (and the words of every detail)
 * live in one place; the format 2.0 store changes them here.
 *
 * Details come in two forms. The reader and the writer hand one line to
 * their caller, so the file name (and the byte of a failed check) leads it;
 * fsck reports file and offset apart (mh_problem), so it asks for the bare
 * message. tests/errdetail.c holds the two forms to each other.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int mh_store_dir_check(const char *path, mh_diag *d) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return mh_diag_os(d, MH_ENOENT, "no such store:", path);
        return mh_diag_os(d, MH_EIO, "cannot stat", path);
    }
    if (!S_ISDIR(st.st_mode))
        return mh_diag_fail(d, MH_ENOTSTORE, 0, "%s is not a directory", path);
    return MH_OK;
}

static int is_segment_name(const char *s, size_t len) {
    if (len != MHF_SEGMENT_NAME_LEN || strncmp(s, MHF_SEGMENT_PREFIX, 4) != 0 ||
        strcmp(s + 20, MHF_SEGMENT_SUFFIX) != 0)
        return 0;
    for (int i = 4; i < 20; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int mh_store_file_kind(const char *name) {
    size_t len = strlen(name);
    if (!strcmp(name, MHF_MANIFEST_NAME))
        return MH_STORE_FILE_MANIFEST;
    if (!strcmp(name, MHF_LOCK_NAME))
        return MH_STORE_FILE_LOCK;
    if (is_segment_name(name, len))
        return MH_STORE_FILE_SEGMENT;
    if (!strcmp(name, MHF_MANIFEST_TMP_NAME) ||
        (len == MHF_SEGMENT_NAME_LEN + 4 && !strncmp(name, MHF_SEGMENT_PREFIX, 4) &&
         !strcmp(name + MHF_SEGMENT_NAME_LEN, MHF_TMP_SUFFIX)))
        return MH_STORE_FILE_TMP;
    return MH_STORE_FILE_OTHER;
}

int mh_store_dir_kind(const char *path) {
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    int kind = MH_STORE_DIR_EMPTY;
    while (kind != MH_STORE_DIR_STORE && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        kind = mh_store_file_kind(n) == MH_STORE_FILE_OTHER ? MH_STORE_DIR_OTHER
                                                             : MH_STORE_DIR_STORE;
    }
    closedir(d);
    return kind;
}

int mh_store_lock(const char *dir, int *fd_out, mh_diag *d) {
    char *path = mh_path_join(dir, MHF_LOCK_NAME);
    if (!path)
        return mh_diag_fail(d, MH_ENOMEM, 0, "out of memory");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        int rc = mh_diag_os(d, 0, "cannot open", path);
        free(path);
        return rc;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        int rc = e == EWOULDBLOCK
                     ? mh_diag_fail(d, MH_ELOCKED, 0,
                                    "%s is held by another writer", path)
                     : mh_diag_os(d, MH_EIO, "cannot lock", path);
        free(path);
        return rc;
    }
    free(path);
    *fd_out = fd;
    return MH_OK;
}

int mh_store_lock_busy(const char *dir) {
    char *lp = mh_path_join(dir, MHF_LOCK_NAME);
    if (!lp)
        return 0;
    int fd = open(lp, O_RDONLY | O_CLOEXEC);
    free(lp);
    if (fd < 0)
        return 0;
    int busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* releases the probe's lock, if it got it */
    return busy;
}

int mh_store_manifest_load(const char *dir, mh_manifest *m, int named,
                           mh_diag *d) {
    int rc = mh_manifest_load(dir, m, d);
    if (rc == MH_OK || !named)
        return rc;
    mh_diag_code(d, rc);
    /* a MANIFEST that is absent, unreadable or not one has no byte to name */
    if (rc == MH_ENOMEM || rc == MH_EIO || rc == MH_ENOTSTORE)
        mh_diag_prefix(d, MHF_MANIFEST_NAME);
    else
        mh_diag_prefix(d, MHF_MANIFEST_NAME ": byte %llu",
                       (unsigned long long)d->offset);
    return rc;
}

int mh_store_seg_open(const char *dir, const char *name, mh_seg *seg,
                      int named, mh_diag *d) {
    int rc = mh_seg_open(dir, name, seg, d);
    if (rc == MH_EIO && errno == ENOENT)
        return named ? mh_diag_fail(d, MH_ECORRUPT, 0,
                                    "%s: " MH_MSG_SEGMENT_MISSING, name)
                     : mh_diag_fail(d, MH_ECORRUPT, 0, MH_MSG_SEGMENT_MISSING);
    if (rc == MH_OK || !named)
        return rc;
    mh_diag_code(d, rc);
    if (rc == MH_ENOMEM || rc == MH_EIO)
        mh_diag_prefix(d, "%s", name);
    else
        mh_diag_prefix(d, "%s: byte %llu", name, (unsigned long long)d->offset);
    return rc;
}

int mh_store_seg_check(const mh_seg *s, const mh_manrec *rec, int named,
                       mh_diag *d) {
    if (rec->major && s->major != rec->major) {
        if (named)
            return mh_diag_fail(d, MH_ECORRUPT, MHF_SEG_MAJOR,
                                "%s: format %u.%u segment in a format %u "
                                "MANIFEST", s->name, s->major, s->minor,
                                rec->major);
        return mh_diag_fail(d, MH_ECORRUPT, MHF_SEG_MAJOR,
                            "format %u.%u segment in a format %u MANIFEST",
                            s->major, s->minor, rec->major);
    }
    /* a segment without accesses has no transition range to compare */
    if (s->seq == rec->seq && s->id_first == rec->id_first &&
        s->count == rec->count && s->size == rec->file_size &&
        s->header_sum == rec->header_sum &&
        (!rec->count || (s->t_first == rec->t_first && s->t_last == rec->t_last)))
        return MH_OK;
    if (named)
        return mh_diag_fail(d, MH_ECORRUPT, 0,
                            "%s: segment differs from its MANIFEST record",
                            s->name);
    return mh_diag_fail(d, MH_ECORRUPT, 0,
                        "segment differs from its MANIFEST record");
}

int mh_store_seg_open_rec(const char *dir, const mh_manrec *rec, mh_seg *seg, mh_diag *d) {
    char name[MHF_SEGMENT_NAME_LEN + 1];
    mh_segment_name(name, rec->seq);
    int rc = mh_store_seg_open(dir, name, seg, 0, d);
    if (rc == MH_OK && (rc = mh_store_seg_check(seg, rec, 0, d)) != MH_OK)
        mh_seg_close(seg);
    return rc;
}

int mh_store_seg_covered(const char *dir, const mh_seg *self, size_t j, size_t ri,
                         const mh_manrec *recs, mh_seg *const *open, mh_seg *tmp,
                         const mh_seg **out, mh_diag *d) {
    if (j == ri)
        *out = self;
    else if (open && open[j])
        *out = open[j]; /* opened and matched to recs[j] by the caller */
    else {
        MH_TRY(mh_store_seg_open_rec(dir, &recs[j], tmp, d));
        *out = tmp;
    }
    return MH_OK;
}

void mh_store_seg_done(const mh_seg *s, mh_seg *tmp) {
    if (s == tmp)
        mh_seg_close(tmp);
}
