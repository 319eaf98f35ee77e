/*
 * import_csv.c - streaming parser of the memhist CSV trace format
 * (header "transition,linear,physical,size,op" and the optional stream, pc
 * and window columns; see import.h).
 *
 * Same structure as the lackey parser: whole lines are parsed in place, a
 * line cut by a chunk boundary goes through a small bounded carry buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "import_util.h"

/* Eight fields of at most 20 characters each and seven commas fit easily. */
#define CSV_MAX_LINE 256

/* The optional columns, after the five of MH_CSV_HEADER, in any order. */
enum { COL_STREAM, COL_PC, COL_WINDOW, NCOLS };
static const char *const col_names[NCOLS] = {"stream", "pc", "window"};
#define MAX_FIELDS (5 + NCOLS)

struct mh_csv_parser {
    unsigned flags;
    int failed;
    int have_header;
    uint64_t line;
    uint64_t last_t;
    int nfields;           /* 5 + the optional columns of the header */
    int col_field[NCOLS];  /* field index of each optional column, or -1 */
    int in_window;         /* the previous line was in window cur_window */
    int any_window;        /* a window was seen (cur_window is the last one) */
    uint64_t cur_window;
    mh_import_window_fn window_fn;
    size_t carry_len;
    char carry[CSV_MAX_LINE];
    char err[256];
    mh_batch batch;
};

mh_csv_parser *mh_csv_new(unsigned flags, mh_import_sink_fn fn, void *ctx) {
    if (fn == NULL)
        return NULL;
    mh_csv_parser *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->flags = flags;
    for (int c = 0; c < NCOLS; c++)
        p->col_field[c] = -1;
    p->batch.fn = fn;
    p->batch.ctx = ctx;
    return p;
}

void mh_csv_set_batch(mh_csv_parser *p, size_t n) { mh_batch_set_limit(&p->batch, n); }
void mh_csv_set_window_fn(mh_csv_parser *p, mh_import_window_fn fn) { p->window_fn = fn; }
int mh_csv_has_column(const mh_csv_parser *p, const char *name) {
    for (int c = 0; c < NCOLS; c++)
        if (strcmp(name, col_names[c]) == 0)
            return p->col_field[c] >= 0;
    return 0;
}

void mh_csv_free(mh_csv_parser *p) { free(p); }
const char *mh_csv_error(const mh_csv_parser *p) { return p->err; }
uint64_t mh_csv_accesses(const mh_csv_parser *p) { return p->batch.total; }
uint64_t mh_csv_lines(const mh_csv_parser *p) { return p->line; }

static int fail_line(mh_csv_parser *p, const char *s, const char *e, const char *what) {
    mh_format_line_error(p->err, sizeof p->err, p->line, s, e, "%s", what);
    p->failed = 1;
    return MH_ECORRUPT;
}

/* Splits off the next field: [*s, comma) or [*s, e) for the last one. */
static const char *next_field(const char **s, const char *e) {
    const char *f = *s;
    const char *c = memchr(f, ',', (size_t)(e - f));
    if (c == NULL) {
        *s = e;
        return e;
    }
    *s = c + 1;
    return c;
}

/* "transition,linear,physical,size,op" then ",stream", ",pc", ",window" in
 * any order, each at most once. */
static int parse_header(mh_csv_parser *p, const char *s, const char *e) {
    static const char bad[] = "expected the header " MH_CSV_HEADER
                              " followed by any of ,stream ,pc ,window (each once)";
    const char *line = s;
    size_t hl = sizeof MH_CSV_HEADER - 1;
    if ((size_t)(e - s) < hl || memcmp(s, MH_CSV_HEADER, hl) != 0)
        return fail_line(p, line, e, bad);
    for (int c = 0; c < NCOLS; c++)
        p->col_field[c] = -1;
    p->nfields = 5;
    s += hl;
    while (s < e) {
        if (*s++ != ',')
            return fail_line(p, line, e, bad);
        const char *c = memchr(s, ',', (size_t)(e - s));
        size_t n = (size_t)((c ? c : e) - s);
        int k = 0;
        while (k < NCOLS && !(strlen(col_names[k]) == n && memcmp(col_names[k], s, n) == 0))
            k++;
        if (k == NCOLS || p->col_field[k] >= 0)
            return fail_line(p, line, e, bad);
        p->col_field[k] = p->nfields++;
        s += n;
    }
    p->have_header = 1;
    return 0;
}

/* The window column of a line: in_window/window as given; a change hands
 * the accesses before it to the sink, then tells the window callback. */
static int window_change(mh_csv_parser *p, const char *line, const char *e, int in_window,
                         uint64_t window) {
    if (in_window == p->in_window && (!in_window || window == p->cur_window))
        return 0;
    if (in_window && p->any_window && window <= p->cur_window)
        return fail_line(p, line, e, "window ids must increase (a window cannot resume)");
    int rc = mh_batch_flush(&p->batch);
    if (rc == 0 && p->window_fn != NULL)
        rc = p->window_fn(p->batch.ctx, in_window, window);
    if (rc) {
        snprintf(p->err, sizeof p->err, "line %llu: %s window failed: %s",
                 (unsigned long long)p->line, in_window ? "starting the" : "ending the",
                 mh_strerror(rc));
        p->failed = 1;
        return rc;
    }
    p->in_window = in_window;
    if (in_window) {
        p->cur_window = window;
        p->any_window = 1;
    }
    return 0;
}

static int parse_line(mh_csv_parser *p, const char *s, const char *e) {
    const char *line = s;
    p->line++;
    if (e > s && e[-1] == '\r')
        e--;
    if (!p->have_header)
        return parse_header(p, s, e);
    if (s == e)
        return fail_line(p, line, e, "empty line");
    const char *f[MAX_FIELDS] = {0}, *fe[MAX_FIELDS] = {0};
    int nf = p->nfields;
    for (int i = 0; i < nf; i++) {
        if (s >= e && i > 0 && fe[i - 1] == e) {
            char what[32];
            snprintf(what, sizeof what, "expected %d fields", nf);
            return fail_line(p, line, e, what);
        }
        f[i] = s;
        fe[i] = next_field(&s, e);
    }
    if (fe[nf - 1] != e) {
        char what[32];
        snprintf(what, sizeof what, "more than %d fields", nf);
        return fail_line(p, line, e, what);
    }

    uint64_t t, lin = 0, phy, size;
    if (mh_parse_u64_field(f[0], fe[0], 0, &t))
        return fail_line(p, line, e, "bad transition (decimal or 0x hex, at most 2^64-1)");
    int has_linear = f[1] != fe[1];
    if (has_linear && mh_parse_u64_field(f[1], fe[1], 0, &lin))
        return fail_line(p, line, e, "bad linear address (decimal or 0x hex, or empty)");
    if (mh_parse_u64_field(f[2], fe[2], 0, &phy))
        return fail_line(p, line, e, "bad physical address (decimal or 0x hex)");
    if (mh_parse_u64_field(f[3], fe[3], 0, &size) || size > UINT32_MAX)
        return fail_line(p, line, e, "bad size (decimal or 0x hex, at most 2^32-1)");
    if (size == 0)
        return fail_line(p, line, e, "size 0");
    if (phy + (size - 1) < phy)
        return fail_line(p, line, e, "address range wraps past 2^64");
    uint8_t op;
    if (fe[4] - f[4] != 1)
        return fail_line(p, line, e, "bad op (r, w or x)");
    switch (f[4][0]) {
    case 'r': op = MH_OP_READ; break;
    case 'w': op = MH_OP_WRITE; break;
    case 'x': op = MH_OP_EXEC; break;
    default: return fail_line(p, line, e, "bad op (r, w or x)");
    }
    uint64_t stream = 0, pc = 0, window = 0;
    int has_pc = 0, in_window = 0, k;
    if ((k = p->col_field[COL_STREAM]) >= 0 &&
        (mh_parse_u64_field(f[k], fe[k], 0, &stream) || stream > MH_STREAM_MAX))
        return fail_line(p, line, e, "bad stream (a stream id, at most 65535)");
    if ((k = p->col_field[COL_PC]) >= 0 && f[k] != fe[k]) {
        has_pc = 1;
        if (mh_parse_u64_field(f[k], fe[k], 0, &pc))
            return fail_line(p, line, e, "bad pc (decimal or 0x hex, or empty)");
    }
    if ((k = p->col_field[COL_WINDOW]) >= 0 && f[k] != fe[k]) {
        in_window = 1;
        if (mh_parse_u64_field(f[k], fe[k], 0, &window))
            return fail_line(p, line, e, "bad window (decimal or 0x hex, or empty)");
    }
    if (p->batch.total + p->batch.n > 0 && t < p->last_t)
        return fail_line(p, line, e, "transition decreases");
    int rc = window_change(p, line, e, in_window, window);
    if (rc)
        return rc;
    p->last_t = t;

    mh_access *a = mh_batch_slot(&p->batch, &rc);
    if (a == NULL) {
        snprintf(p->err, sizeof p->err, "line %llu: storing accesses failed: %s",
                 (unsigned long long)p->line, mh_strerror(rc));
        p->failed = 1;
        return rc;
    }
    a->transition = t;
    a->linear = lin;
    a->physical = phy;
    a->size = (uint32_t)size;
    a->op = op;
    a->has_linear = (uint8_t)has_linear;
    a->stream = (uint32_t)stream;
    a->pc = pc;
    a->has_pc = (uint8_t)has_pc;
    return 0;
}

static int carry_append(mh_csv_parser *p, const char *s, const char *e) {
    size_t n = (size_t)(e - s);
    if (p->carry_len + n > sizeof p->carry) {
        size_t keep = sizeof p->carry - p->carry_len;
        memcpy(p->carry + p->carry_len, s, keep);
        p->carry_len += keep;
        p->line++;
        return fail_line(p, p->carry, p->carry + p->carry_len, "line too long");
    }
    memcpy(p->carry + p->carry_len, s, n);
    p->carry_len += n;
    return 0;
}

int mh_csv_feed(mh_csv_parser *p, const char *buf, size_t len) {
    if (p->failed)
        return MH_ESTATE;
    if (len == 0)
        return 0;
    if (buf == NULL)
        return MH_EINVAL;
    const char *s = buf, *end = buf + len;
    if (p->carry_len > 0) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (nl == NULL)
            return carry_append(p, s, end);
        int rc = carry_append(p, s, nl);
        if (rc == 0)
            rc = parse_line(p, p->carry, p->carry + p->carry_len);
        if (rc)
            return rc;
        p->carry_len = 0;
        s = nl + 1;
    }
    for (;;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (nl == NULL)
            break;
        int rc = parse_line(p, s, nl);
        if (rc)
            return rc;
        s = nl + 1;
    }
    return s < end ? carry_append(p, s, end) : 0;
}

int mh_csv_finish(mh_csv_parser *p) {
    if (p->failed)
        return MH_ESTATE;
    if (p->carry_len > 0) {
        int rc = parse_line(p, p->carry, p->carry + p->carry_len);
        p->carry_len = 0;
        if (rc)
            return rc;
    }
    if (!p->have_header) {
        snprintf(p->err, sizeof p->err, "empty input: expected the header %s", MH_CSV_HEADER);
        p->failed = 1;
        return MH_ECORRUPT;
    }
    int rc = mh_batch_flush(&p->batch);
    if (rc) {
        snprintf(p->err, sizeof p->err, "storing accesses failed: %s", mh_strerror(rc));
        p->failed = 1;
        return rc;
    }
    return 0;
}
