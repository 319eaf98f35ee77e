/*
 * import_streams.c - the stream descriptions of `memhist import --streams
 * FILE` (import.h): a small CSV file, read whole, in the style of the trace
 * CSV (a header naming the columns, numbers decimal or 0x hex, empty =
 * unknown), so that a user who can write the one can write the other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_util.h"

enum { C_ID, C_KIND, C_NAME, C_PID, C_TID, C_CPU, C_PARENT, NCOLS };
static const char *const names[NCOLS] = {"id", "kind", "name", "pid", "tid", "cpu", "parent"};
static const char *const kinds[] = {"other", "thread", "cpu", "process"};

/* The line [s, e) without its trailing '\r'. */
static const char *trim_cr(const char *s, const char *e) {
    return e > s && e[-1] == '\r' ? e - 1 : e;
}

/* Splits [s, e) at commas into at most max fields; returns the count, or
 * max + 1 when there are more. */
static size_t split(const char *s, const char *e, const char **f, const char **fe, size_t max) {
    size_t n = 0;
    for (;;) {
        const char *c = memchr(s, ',', (size_t)(e - s));
        if (n == max)
            return max + 1;
        f[n] = s;
        fe[n++] = c ? c : e;
        if (!c)
            return n;
        s = c + 1;
    }
}

static int header(const char *s, const char *e, int col[NCOLS], char *err, size_t errlen) {
    const char *f[NCOLS + 1], *fe[NCOLS + 1];
    size_t n = split(s, e, f, fe, NCOLS);
    for (int k = 0; k < NCOLS; k++)
        col[k] = -1;
    for (size_t i = 0; i < n; i++) {
        int k = 0;
        while (k < NCOLS && !((size_t)(fe[i] - f[i]) == strlen(names[k]) &&
                              memcmp(f[i], names[k], (size_t)(fe[i] - f[i])) == 0))
            k++;
        if (i == NCOLS || k == NCOLS || col[k] >= 0) {
            mh_format_line_error(err, errlen, 1, s, e,
                                 "bad header (columns id, kind, name, pid, tid, cpu, "
                                 "parent, each at most once)");
            return MH_ECORRUPT;
        }
        col[k] = (int)i;
    }
    if (col[C_ID] < 0) {
        mh_format_line_error(err, errlen, 1, s, e, "bad header (no id column)");
        return MH_ECORRUPT;
    }
    return 0;
}

/* A number field of at most max, or empty: none. */
static int number(const char *s, const char *e, uint64_t max, uint64_t none, uint64_t *v) {
    if (s == e) {
        *v = none;
        return 0;
    }
    return mh_parse_u64_field(s, e, 0, v) == 0 && *v <= max ? 0 : -1;
}

static int line(const char *s, const char *e, uint64_t lineno, const int col[NCOLS],
                mh_stream_info *si, char *err, size_t errlen) {
    const char *f[NCOLS + 1], *fe[NCOLS + 1];
    size_t n = split(s, e, f, fe, NCOLS);
    size_t want = 0;
    for (int k = 0; k < NCOLS; k++)
        want += col[k] >= 0;
    const char *why = NULL;
    uint64_t v;
    mh_stream_info_init(si);
    if (n != want)
        why = "wrong number of fields";
    else if (number(f[col[C_ID]], fe[col[C_ID]], MH_STREAM_MAX, UINT64_MAX, &v) || v > MH_STREAM_MAX)
        why = "bad id (a stream id, at most 65535)";
    else
        si->id = (uint32_t)v;
    if (!why && col[C_KIND] >= 0) {
        const char *a = f[col[C_KIND]], *b = fe[col[C_KIND]];
        unsigned k = 0;
        while (a != b && k < 4 && !((size_t)(b - a) == strlen(kinds[k]) &&
                                    memcmp(a, kinds[k], (size_t)(b - a)) == 0))
            k++;
        if (k == 4)
            why = "bad kind (other, thread, cpu or process)";
        else
            si->kind = a == b ? MH_STREAM_OTHER : k;
    }
    if (!why && col[C_PID] >= 0 &&
        number(f[col[C_PID]], fe[col[C_PID]], MH_NONE64 - 1, MH_NONE64, &si->pid))
        why = "bad pid";
    if (!why && col[C_TID] >= 0 &&
        number(f[col[C_TID]], fe[col[C_TID]], MH_NONE64 - 1, MH_NONE64, &si->tid))
        why = "bad tid";
    if (!why && col[C_CPU] >= 0) {
        if (number(f[col[C_CPU]], fe[col[C_CPU]], MH_NONE32 - 1, MH_NONE32, &v))
            why = "bad cpu";
        else
            si->cpu = (uint32_t)v;
    }
    if (!why && col[C_PARENT] >= 0) {
        if (number(f[col[C_PARENT]], fe[col[C_PARENT]], MH_STREAM_MAX, MH_NONE32, &v) ||
            v == si->id)
            why = "bad parent (another stream's id)";
        else
            si->parent = (uint32_t)v;
    }
    if (!why && col[C_NAME] >= 0 && f[col[C_NAME]] != fe[col[C_NAME]]) {
        size_t len = (size_t)(fe[col[C_NAME]] - f[col[C_NAME]]);
        char *name = len <= 65535 ? malloc(len + 1) : NULL;
        if (len > 65535)
            why = "name longer than 65535 bytes";
        else if (!name || memchr(f[col[C_NAME]], '\0', len)) {
            free(name);
            if (!name)
                return MH_ENOMEM;
            why = "NUL byte in the name";
        } else {
            memcpy(name, f[col[C_NAME]], len);
            name[len] = '\0';
            si->name = name;
        }
    }
    if (why) {
        mh_format_line_error(err, errlen, lineno, s, e, "%s", why);
        return MH_ECORRUPT;
    }
    return 0;
}

void mh_streams_free(mh_stream_info *s, size_t n) {
    for (size_t i = 0; s && i < n; i++)
        free((char *)s[i].name);
    free(s);
}

int mh_streams_parse(const char *buf, size_t len, mh_stream_info **out, size_t *nout,
                     char *err, size_t errlen) {
    *out = NULL;
    *nout = 0;
    const char *p = buf, *end = buf + len;
    int col[NCOLS];
    mh_stream_info *s = NULL;
    size_t n = 0;
    int rc = 0;
    uint64_t lineno = 0;
    while (rc == 0 && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = trim_cr(p, nl ? nl : end);
        lineno++;
        if (lineno == 1) {
            rc = header(p, e, col, err, errlen);
        } else if (e != p) { /* an empty line says nothing */
            mh_stream_info *g = realloc(s, (n + 1) * sizeof *g);
            if (!g) {
                rc = MH_ENOMEM;
                break;
            }
            s = g;
            rc = line(p, e, lineno, col, &s[n], err, errlen);
            if (rc == 0) {
                for (size_t i = 0; i < n && rc == 0; i++)
                    if (s[i].id == s[n].id) {
                        mh_format_line_error(err, errlen, lineno, p, e,
                                             "stream %u described twice", s[n].id);
                        free((char *)s[n].name);
                        rc = MH_ECORRUPT;
                    }
                n += rc == 0;
            }
        }
        p = nl ? nl + 1 : end;
    }
    if (rc == 0 && lineno == 0) {
        snprintf(err, errlen, "empty file (no header)");
        rc = MH_ECORRUPT;
    }
    if (rc != 0) {
        mh_streams_free(s, n);
        return rc;
    }
    *out = s;
    *nout = n;
    return 0;
}
