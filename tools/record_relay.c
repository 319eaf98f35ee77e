/*
 * record_relay.c - passes the traced program's output on and draws the
 * progress line of `memhist record` (see record_relay.h for why).
 *
 * Terminal state is one flag: whether the cursor is at the start of a line
 * (the program's last byte was '\n'). The progress line is drawn only then,
 * as "\r<text>ESC[K" without a newline, and erased ("\rESC[K") before any
 * byte of the program or message of record is written: so the program's
 * lines are never mixed with it. One mutex orders the writes of the relay
 * thread (program output, progress) and record's messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "record_relay.h"

#define DRAW_EVERY_S 0.25 /* progress redraws per second: at most 4 */
#define DRAIN_QUIET_S 0.05 /* after the program ended: silence that ends the copy */
#define DRAIN_MAX_S 1.0    /* ... and the longest the copy may go on */

struct rec_relay {
    int master;       /* read end: pty master or pipe */
    int saved_out;    /* the real stdout, when the relay took fd 1; else -1 */
    int saved_err;    /* the real stderr */
    int quit[2];      /* a byte on quit[1] tells the thread to finish */
    int progress;     /* draw the progress line */
    int tty;          /* the real stderr is a terminal */
    int at_bol;       /* the cursor is at the start of a line */
    int shown;        /* the progress line is on screen */
    double start, last_draw;
    _Atomic uint64_t done;
    char line[512];   /* the program's current stderr line */
    size_t line_len;
    char first[512];  /* its first complete non-empty line */
    pthread_t thread;
    pthread_mutex_t mu;
};


static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t got = write(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return; /* the terminal is gone: nothing useful to do */
        p += got;
        n -= (size_t)got;
    }
}

/* Caller holds mu. */
static void erase_progress(rec_relay *r) {
    if (r->shown) {
        write_all(r->saved_err, "\r\033[K", 4);
        r->shown = 0;
    }
}

/* Caller holds mu. */
static void draw_progress(rec_relay *r, double now) {
    if (!r->progress || !r->at_bol || now - r->last_draw < DRAW_EVERY_S)
        return;
    r->last_draw = now;
    double el = now - r->start;
    uint64_t done = atomic_load(&r->done);
    char text[160];
    int len = snprintf(text, sizeof text,
                       "\rmemhist record: %llu accesses, %.2f M/s, %.1f s\033[K",
                       (unsigned long long)done, el > 0 ? (double)done / el / 1e6 : 0.0, el);
    if (len > 0)
        write_all(r->saved_err, text, (size_t)len < sizeof text ? (size_t)len : sizeof text - 1);
    r->shown = 1;
}

/* Keeps the first complete non-empty line of the program's output. */
static void track_lines(rec_relay *r, const char *p, size_t n) {
    for (size_t i = 0; i < n && r->first[0] == 0; i++) {
        char ch = p[i];
        if (ch == '\n') {
            while (r->line_len > 0 && r->line[r->line_len - 1] == '\r')
                r->line_len--;
            if (r->line_len > 0 && r->first[0] == 0) {
                memcpy(r->first, r->line, r->line_len);
                r->first[r->line_len] = 0;
            }
            r->line_len = 0;
        } else if (r->line_len < sizeof r->line - 1) {
            r->line[r->line_len++] = ch;
        }
    }
}

/* Copies what the relay holds now; returns -1 at end of file (no writer
 * left), 0 when it would block, 1 when it copied something. */
static int copy_some(rec_relay *r) {
    char buf[4096];
    ssize_t got = read(r->master, buf, sizeof buf);
    if (got < 0 && errno == EINTR)
        return 1;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (got <= 0)
        return -1; /* EOF of a pipe, EIO of a pty whose last slave closed */
    pthread_mutex_lock(&r->mu);
    erase_progress(r);
    write_all(r->saved_err, buf, (size_t)got);
    r->at_bol = buf[got - 1] == '\n';
    track_lines(r, buf, (size_t)got);
    pthread_mutex_unlock(&r->mu);
    return 1;
}

static void *relay_main(void *arg) {
    rec_relay *r = arg;
    /* record's signal handler runs in the main thread, whose poll then
     * ends early: keep the stop signals away from this one. SIGPIPE too: a
     * closed stderr makes write() fail here instead of killing record (the
     * signal cannot be ignored process-wide: the program would inherit
     * that through exec) */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    int open_end = 1;
    for (;;) {
        struct pollfd p[2] = {{r->master, POLLIN, 0}, {r->quit[0], POLLIN, 0}};
        int n = poll(p, open_end ? 2 : 1, 100);
        if (n > 0 && (p[1].revents & POLLIN))
            break;
        if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            while (copy_some(r) == 1) {
            }
        pthread_mutex_lock(&r->mu);
        draw_progress(r, engine_now_s());
        pthread_mutex_unlock(&r->mu);
    }
    /* The program has ended. A pty hands on what it wrote a moment later
     * (the kernel pushes the bytes asynchronously): copy until the relay
     * reports end of file, or is quiet for a while (a background child of
     * the program may keep it open), or DRAIN_MAX_S have passed. */
    double t0 = engine_now_s(), last_data = t0;
    for (;;) {
        double t = engine_now_s();
        if (t - last_data > DRAIN_QUIET_S || t - t0 > DRAIN_MAX_S)
            break;
        struct pollfd p = {r->master, POLLIN, 0};
        poll(&p, 1, 10);
        int c;
        while ((c = copy_some(r)) == 1)
            last_data = engine_now_s();
        if (c < 0)
            break;
    }
    return NULL;
}

/* Whether fds a and b are the same file (same terminal, same pipe...). */
static int same_file(int a, int b) {
    struct stat sa, sb;
    if (fstat(a, &sa) != 0 || fstat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && sa.st_rdev == sb.st_rdev;
}

rec_relay *rec_relay_start(int progress) {
    rec_relay *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->master = r->saved_out = r->saved_err = r->quit[0] = r->quit[1] = -1;
    int slave = -1;
    int tty = isatty(STDERR_FILENO);
    if (tty) {
        struct termios tio;
        struct winsize ws;
        int have_tio = tcgetattr(STDERR_FILENO, &tio) == 0;
        int have_ws = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0;
        if (have_tio)
            tio.c_oflag &= ~(tcflag_t)OPOST; /* the real terminal does the output processing */
        if (openpty(&r->master, &slave, NULL, have_tio ? &tio : NULL, have_ws ? &ws : NULL) != 0)
            goto fail;
        fcntl(r->master, F_SETFD, FD_CLOEXEC);
        fcntl(slave, F_SETFD, FD_CLOEXEC);
    } else {
        int fds[2];
        if (engine_pipe_cloexec(fds) != 0)
            goto fail;
        r->master = fds[0];
        slave = fds[1];
    }
    fcntl(r->master, F_SETFL, fcntl(r->master, F_GETFL) | O_NONBLOCK);
    if (engine_pipe_cloexec(r->quit) != 0)
        goto fail;
    int merge = same_file(STDOUT_FILENO, STDERR_FILENO);
    fflush(NULL);
    r->saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (r->saved_err < 0)
        goto fail;
    if (merge && (r->saved_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) < 0)
        goto fail;
    r->progress = progress && tty;
    r->tty = tty;
    r->at_bol = 1;
    r->start = r->last_draw = engine_now_s();
    r->last_draw -= DRAW_EVERY_S; /* the first line right away */
    pthread_mutex_init(&r->mu, NULL);
    if (dup2(slave, STDERR_FILENO) < 0 || (merge && dup2(slave, STDOUT_FILENO) < 0)) {
        dup2(r->saved_err, STDERR_FILENO);
        pthread_mutex_destroy(&r->mu);
        goto fail;
    }
    close(slave);
    slave = -1;
    if (pthread_create(&r->thread, NULL, relay_main, r) != 0) {
        dup2(r->saved_err, STDERR_FILENO);
        if (r->saved_out >= 0)
            dup2(r->saved_out, STDOUT_FILENO);
        pthread_mutex_destroy(&r->mu);
        goto fail;
    }
    return r;
fail:
    if (slave >= 0)
        close(slave);
    for (int i = 0; i < 2; i++)
        if (r->quit[i] >= 0)
            close(r->quit[i]);
    if (r->master >= 0)
        close(r->master);
    if (r->saved_err >= 0)
        close(r->saved_err);
    if (r->saved_out >= 0)
        close(r->saved_out);
    free(r);
    return NULL;
}

void rec_relay_progress(rec_relay *r, uint64_t done) {
    if (r != NULL)
        atomic_store(&r->done, done);
}

void rec_relay_message(rec_relay *r, const char *msg) {
    if (r == NULL) {
        fprintf(stderr, "memhist record: %s\n", msg);
        fflush(stderr);
        return;
    }
    char line[1024];
    int len = snprintf(line, sizeof line, "memhist record: %s\n", msg);
    if (len < 0)
        return;
    size_t n = (size_t)len < sizeof line ? (size_t)len : sizeof line - 1;
    pthread_mutex_lock(&r->mu);
    erase_progress(r);
    if (!r->at_bol)
        write_all(r->saved_err, "\n", 1); /* the program's line was unfinished */
    write_all(r->saved_err, line, n);
    r->at_bol = 1;
    pthread_mutex_unlock(&r->mu);
}

void rec_relay_stop(rec_relay *r, char *first, size_t n) {
    if (n > 0)
        first[0] = '\0';
    if (r == NULL)
        return;
    fflush(NULL);
    /* this process's copies of the slave go: only the program's remain */
    dup2(r->saved_err, STDERR_FILENO);
    if (r->saved_out >= 0)
        dup2(r->saved_out, STDOUT_FILENO);
    write_all(r->quit[1], "q", 1);
    pthread_join(r->thread, NULL);
    pthread_mutex_lock(&r->mu);
    erase_progress(r);
    /* record's last words start a line of their own: after the program's
     * unfinished line, or over what the terminal echoed there (the "^C"
     * of a Ctrl-C) */
    if (r->tty)
        write_all(r->saved_err, r->at_bol ? "\r\033[K" : "\n", r->at_bol ? 4 : 1);
    pthread_mutex_unlock(&r->mu);
    if (n > 0)
        snprintf(first, n, "%s", r->first);
    pthread_mutex_destroy(&r->mu);
    close(r->quit[0]);
    close(r->quit[1]);
    close(r->master);
    close(r->saved_err);
    if (r->saved_out >= 0)
        close(r->saved_out);
    free(r);
}
