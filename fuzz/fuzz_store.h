/*
 * fuzz_store.h - the file system side of the fuzz targets: one private
 * scratch directory per process, and small file helpers that abort on
 * failure (a harness that cannot write its files has nothing to test).
 */
#ifndef FUZZ_STORE_H
#define FUZZ_STORE_H

#include <stddef.h>
#include <stdint.h>

#define FUZZ_PATH_MAX 512

/* A directory private to this process, created on first use and removed
 * (with everything in it) at exit. It lives under $TMPDIR when set, else
 * under /dev/shm when writable (no disk syncs), else under /tmp. */
const char *fuzz_workdir(void);

/* buf = dir "/" name; aborts when it does not fit. */
void fuzz_join(char *buf, size_t cap, const char *dir, const char *name);

/* Creates (or replaces) dir/name with exactly these bytes. */
void fuzz_write_file(const char *dir, const char *name, const void *data,
                     size_t size);
/* Reads a whole file into a malloc'd buffer; NULL when it does not exist. */
uint8_t *fuzz_read_file(const char *path, size_t *size);

/* Removes dir and everything in it (stores have no subdirectories, but
 * one level of them is removed too); a missing dir is fine. */
void fuzz_rmtree(const char *dir);
/* Creates dir (mode 0700) if it does not exist. */
void fuzz_mkdir(const char *dir);

/* "seg-<16 lower-case hex digits>.mhs" */
void fuzz_segment_name(char out[32], uint64_t seq);

#endif /* FUZZ_STORE_H */
