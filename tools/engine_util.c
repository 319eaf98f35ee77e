/*
 * engine_util.c - small process helpers shared by `memhist record` and its
 * engines (engine.h): finding an executable, close-on-exec pipes, a
 * monotonic clock.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

/* An empty PATH entry is the current directory, as for execvp. */
char *engine_find_in_path(const char *name) {
    if (name == NULL || *name == '\0')
        return NULL;
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? strdup(name) : NULL;
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    size_t nl = strlen(name);
    for (;;) {
        const char *colon = strchr(path, ':');
        size_t dl = colon ? (size_t)(colon - path) : strlen(path);
        char *full = malloc(dl + nl + 3);
        if (full == NULL)
            return NULL;
        if (dl == 0)
            snprintf(full, dl + nl + 3, "./%s", name);
        else
            snprintf(full, dl + nl + 3, "%.*s/%s", (int)dl, path, name);
        if (access(full, X_OK) == 0)
            return full;
        free(full);
        if (colon == NULL)
            return NULL;
        path = colon + 1;
    }
}

/* pipe() with both ends close-on-exec (pipe2 is not POSIX). */
int engine_pipe_cloexec(int fds[2]) {
    if (pipe(fds) != 0)
        return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

double engine_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
