/*
 * bench_files.c - the stores mh_bench and mh_abtest write, measured and
 * removed (bench.h).
 */
#include "bench.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes of the regular files of a flat directory, or of one file. */
uint64_t mhb_path_bytes(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return (uint64_t)st.st_size;
    uint64_t sum = 0;
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL) {
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
            sum += (uint64_t)st.st_size;
    }
    closedir(d);
    return sum;
}

/* Removes a file, or a flat directory and its files. */
void mhb_remove_path(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            char p[4096];
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                snprintf(p, sizeof p, "%s/%s", path, e->d_name);
                unlink(p);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}
