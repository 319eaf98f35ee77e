/*
 * cli_util.c - number parsing, error printing, progress and file helpers
 * shared by the memhist subcommands.
 */
#include "cli_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "mh_format.h"

int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "memhist %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s\nTry 'memhist %s --help' for more information.\n",
            cmd->synopsis, cmd->name);
    return CLI_USAGE;
}

int cli_fail(const cli_cmd *cmd, const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "memhist %s: error: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_FAIL;
}

int cli_help(const cli_cmd *cmd) {
    printf("usage: %s\n\n%s", cmd->synopsis, cmd->help);
    return fflush(stdout) == 0 && !ferror(stdout) ? CLI_OK : CLI_FAIL;
}

int cli_parse_u64(const char *s, uint64_t *v) {
    if (s == NULL || *s == '\0')
        return -1;
    int hex = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        hex = 1;
        s += 2;
        if (*s == '\0')
            return -1;
    }
    uint64_t x = 0;
    for (; *s; s++) {
        unsigned c = (unsigned char)*s;
        unsigned d;
        if (c - '0' <= 9u)
            d = c - '0';
        else if (hex && (c | 0x20) - 'a' <= 5u)
            d = (c | 0x20) - 'a' + 10;
        else
            return -1;
        if (hex) {
            if (x >> 60)
                return -1;
            x = (x << 4) | d;
        } else {
            if (x > (UINT64_MAX - d) / 10)
                return -1;
            x = x * 10 + d;
        }
    }
    *v = x;
    return 0;
}

int cli_parse_range(const char *s, uint64_t *a, uint64_t *b) {
    const char *colon = strchr(s, ':');
    if (colon == NULL || strchr(colon + 1, ':') != NULL)
        return -1;
    char first[64];
    size_t n = (size_t)(colon - s);
    if (n == 0 || n >= sizeof first)
        return -1;
    memcpy(first, s, n);
    first[n] = '\0';
    return (cli_parse_u64(first, a) == 0 && cli_parse_u64(colon + 1, b) == 0) ? 0 : -1;
}

int cli_parse_streams(const char *s, uint32_t **ids, uint32_t *n) {
    /* a list has at most one id per two characters ("1,2,3"), and duplicates
     * are caught by a bitmap of every possible id (8 KiB) */
    size_t cap = strlen(s) / 2 + 1, count = 0;
    uint32_t *v = malloc(cap * sizeof *v);
    uint8_t *seen = calloc((MH_STREAM_MAX + 1) / 8, 1);
    int rc = 0;
    if (v == NULL || seen == NULL) {
        rc = -2;
        goto done;
    }
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char num[32];
        uint64_t id;
        if (len == 0 || len >= sizeof num) {
            rc = -1;
            goto done;
        }
        memcpy(num, p, len);
        num[len] = '\0';
        if (cli_parse_u64(num, &id) || id > MH_STREAM_MAX || (seen[id / 8] >> (id % 8)) & 1) {
            rc = -1;
            goto done;
        }
        seen[id / 8] |= (uint8_t)(1u << (id % 8));
        v[count++] = (uint32_t)id;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
done:
    free(seen);
    if (rc) {
        free(v);
        return rc;
    }
    *ids = v;
    *n = (uint32_t)count;
    return 0;
}

unsigned cli_parse_ops(const char *s) {
    unsigned ops = 0;
    for (; *s; s++) {
        unsigned bit;
        switch (*s) {
        case 'r': bit = MH_OPS_READ; break;
        case 'w': bit = MH_OPS_WRITE; break;
        case 'x': bit = MH_OPS_EXEC; break;
        default: return 0;
        }
        if (ops & bit)
            return 0;
        ops |= bit;
    }
    return ops;
}

char cli_op_letter(unsigned op) {
    switch (op) {
    case MH_OP_READ: return 'r';
    case MH_OP_WRITE: return 'w';
    case MH_OP_EXEC: return 'x';
    default: return '?';
    }
}

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, const char *what, int quiet) {
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->start = cli_now();
    p->last = p->start;
    p->what = what;
}

void cli_progress_update(cli_progress *p, uint64_t done) {
    if (!p->enabled)
        return;
    double now = cli_now();
    if (now - p->last < 0.25)
        return;
    p->last = now;
    double el = now - p->start;
    fprintf(stderr, "\r%s %llu accesses, %.2f M/s, %.1f s   ", p->what,
            (unsigned long long)done, el > 0 ? (double)done / el / 1e6 : 0.0, el);
    fflush(stderr);
}

void cli_progress_done(cli_progress *p) {
    if (p->enabled && p->last > p->start) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

FILE *cli_open_in(const char *path) {
    if (strcmp(path, "-") == 0)
        return stdin;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        return NULL;
    }
    return fopen(path, "rb");
}

FILE *cli_open_out(const char *path) {
    if (strcmp(path, "-") == 0)
        return stdout;
    return fopen(path, "wb");
}

int cli_close(FILE *f) {
    if (f == NULL)
        return 0;
    if (f == stdin)
        return 0;
    if (f == stdout) {
        if (fflush(f) != 0 || ferror(f))
            return -1;
        return 0;
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        if (bad && errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

static int is_store_entry(const char *name) {
    size_t n = strlen(name);
    size_t pl = strlen(MHF_SEGMENT_PREFIX), tl = strlen(MHF_TMP_SUFFIX);
    if (strcmp(name, MHF_MANIFEST_NAME) == 0 || strcmp(name, MHF_MANIFEST_TMP_NAME) == 0 ||
        strcmp(name, MHF_LOCK_NAME) == 0)
        return 1;
    if (n > pl && strncmp(name, MHF_SEGMENT_PREFIX, pl) == 0)
        return 1; /* seg-*.mhs and seg-*.mhs.tmp */
    return n > tl && strcmp(name + n - tl, MHF_TMP_SUFFIX) == 0;
}

int cli_remove_store(const char *path) {
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    struct dirent *e;
    char buf[4096];
    while ((e = readdir(d)) != NULL) {
        if (!is_store_entry(e->d_name))
            continue;
        if ((size_t)snprintf(buf, sizeof buf, "%s/%s", path, e->d_name) < sizeof buf)
            unlink(buf);
    }
    closedir(d);
    return rmdir(path);
}

int cli_exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

const char *cli_store_error(int rc) {
    switch (rc) {
    case MH_ENOENT: return "no such store";
    case MH_ENOTSTORE: return "not a memhist store";
    case MH_EVERSION: return "unsupported format version"; /* the detail says which */
    default: return cli_errstr(rc);
    }
}

const char *cli_lib_error(int rc, const char *detail) {
    return detail && detail[0] ? detail : cli_errstr(rc);
}

const char *cli_open_error(int rc, const char *detail) {
    static char buf[MH_ERRMSG_MAX + 128];
    /* a missing store needs no more words than its name */
    if (!detail || !detail[0] || rc == MH_ENOENT)
        return cli_store_error(rc);
    /* MH_EIO is any failure of the OS the library met, and its detail says
     * which and why (strerror): "input/output error: No such file or
     * directory" in front of it told a missing parent directory wrongly,
     * and twice */
    if (rc == MH_EIO)
        return detail;
    snprintf(buf, sizeof buf, "%s: %s", cli_store_error(rc), detail);
    return buf;
}

const char *cli_errstr(int rc) {
    static char buf[256];
    if (rc == MH_EIO || rc == MH_ENOSPC) {
        int e = errno;
        if (e != 0) {
            snprintf(buf, sizeof buf, "%s: %s", mh_strerror(rc), strerror(e));
            return buf;
        }
    }
    return mh_strerror(rc);
}

int cli_getopt(const cli_cmd *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts) {
    /* A leading ':' makes getopt tell a missing argument (':') from an
     * unknown option ('?'); a '+' must stay first. */
    char spec[128];
    int plus = shortopts[0] == '+';
    snprintf(spec, sizeof spec, "%s:%s", plus ? "+" : "", shortopts + plus);
    opterr = 0;
    int c = getopt_long(argc, argv, spec, longopts, NULL);
    if (c == '?' || c == ':') {
        /* glibc sets optopt to a long option's val too: name the option as
         * the user wrote it whenever it was a long one. */
        const char *arg = (optind > 0 && optind <= argc) ? argv[optind - 1] : "";
        int is_long = strncmp(arg, "--", 2) == 0;
        const char *what = c == '?' ? "unknown option" : "missing value for option";
        if (is_long || optopt == 0) {
            char name[64];
            size_t n = strcspn(arg, "=");
            snprintf(name, sizeof name, "%.*s", (int)(n < 60 ? n : 60), arg);
            cli_usage_error(cmd, "%s '%s'", what, name);
        } else {
            cli_usage_error(cmd, "%s '-%c'", what, optopt);
        }
        return CLI_OPT_BAD;
    }
    return c;
}

size_t cli_utf8_seq(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t k;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0)
        k = 1, cp = c & 0x1fu, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        k = 2, cp = c & 0x0fu, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        k = 3, cp = c & 0x07u, min = 0x10000;
    else
        return 0;
    for (size_t j = 1; j <= k; j++) { /* the NUL ends a truncated one */
        if ((p[j] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[j] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return k + 1;
}

char *cli_utf8_fix(const char *s) {
    if (!s)
        s = "";
    size_t n = 0;
    for (const char *c = s; *c;) { /* the bytes it takes */
        size_t k = cli_utf8_seq(c);
        n += k ? k : 3;
        c += k ? k : 1;
    }
    char *out = malloc(n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *c = s; *c;) {
        size_t k = cli_utf8_seq(c);
        if (k) {
            memcpy(o, c, k);
            o += k;
            c += k;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            c++;
        }
    }
    *o = '\0';
    return out;
}

void cli_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const char *p = s ? s : ""; *p;) {
        unsigned char c = (unsigned char)*p;
        size_t k = cli_utf8_seq(p);
        if (k == 0) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD for a byte of no sequence */
            p++;
            continue;
        }
        if (k > 1) {
            fwrite(p, 1, k, f);
            p += k;
            continue;
        }
        p++;
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c < 0x20)
                fprintf(f, "\\u%04x", c);
            else
                fputc(c, f);
        }
    }
    fputc('"', f);
}
