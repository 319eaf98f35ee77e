/*
 * engine_util.c - small process helpers shared by `memhist record` and its
 * engines (engine.h): finding an executable, close-on-exec pipes, a
 * monotonic clock, the version line of a tool.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
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

int engine_tool_version(const char *exe, char *out, size_t len) {
    snprintf(out, len, "unknown");
    int fds[2];
    if (engine_pipe_cloexec(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        execl(exe, exe, "--version", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    char buf[256];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof buf - 1 && ((got = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0 ||
                                  (got < 0 && errno == EINTR)))
        if (got > 0)
            n += (size_t)got;
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    if (n == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    snprintf(out, len, "%s", buf);
    return 0;
}
