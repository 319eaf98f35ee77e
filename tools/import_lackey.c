/*
 * import_lackey.c - streaming parser of valgrind lackey's --trace-mem=yes
 * output (see import.h for the grammar and the mapping to accesses).
 *
 * Bytes arrive in chunks of any size. Whole lines are parsed straight from
 * the caller's buffer; only a line cut by a chunk boundary is copied into
 * a small carry buffer. Access lines are short (an address of at most 16
 * hex digits and a size), so the carry is bounded; the commentary lines
 * valgrind writes ("==pid== ...") can be long and are skipped without being
 * stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "import_util.h"

/* Longest access line accepted: "I" + spaces + 16 hex digits + "," + 10
 * digits is far below this; more is garbage. */
#define LACKEY_MAX_LINE 256

struct mh_lackey_parser {
    unsigned flags;
    int failed;        /* an error was returned: accept nothing more */
    int skipping;      /* inside an ignored line that crossed a chunk boundary */
    uint64_t line;     /* lines completed so far (= number of the current line - 1) */
    uint64_t instrs;   /* I lines seen */
    uint64_t cur_t;    /* current transition */
    uint64_t cur_pc;   /* address of the last I line: the pc of what follows */
    size_t carry_len;
    char carry[LACKEY_MAX_LINE];
    char err[256];
    mh_batch batch;    /* last: it is large */
};

mh_lackey_parser *mh_lackey_new(unsigned flags, mh_import_sink_fn fn, void *ctx) {
    if (fn == NULL)
        return NULL;
    mh_lackey_parser *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->flags = flags;
    p->batch.fn = fn;
    p->batch.ctx = ctx;
    return p;
}

void mh_lackey_set_batch(mh_lackey_parser *p, size_t n) { mh_batch_set_limit(&p->batch, n); }

void mh_lackey_free(mh_lackey_parser *p) { free(p); }

const char *mh_lackey_error(const mh_lackey_parser *p) { return p->err; }
uint64_t mh_lackey_accesses(const mh_lackey_parser *p) { return p->batch.total; }
uint64_t mh_lackey_lines(const mh_lackey_parser *p) { return p->line; }

static int fail_line(mh_lackey_parser *p, const char *s, const char *e, const char *what) {
    mh_format_line_error(p->err, sizeof p->err, p->line, s, e, "%s", what);
    p->failed = 1;
    return MH_ECORRUPT;
}

static int fail_sink(mh_lackey_parser *p, int rc) {
    snprintf(p->err, sizeof p->err, "line %llu: storing accesses failed: %s",
             (unsigned long long)p->line, mh_strerror(rc));
    p->failed = 1;
    return rc;
}

/* "==..." commentary, or "--<digits>--" warnings. Decidable from the first
 * few bytes; *undecided is set when more bytes are needed. */
static int is_ignored(const char *s, const char *e, int *undecided) {
    *undecided = 0;
    if (e - s < 2) {
        *undecided = (s < e && (*s == '=' || *s == '-'));
        return 0;
    }
    if (s[0] == '=' && s[1] == '=')
        return 1;
    if (s[0] != '-' || s[1] != '-')
        return 0;
    const char *c = s + 2;
    while (c < e && (unsigned)(*c - '0') <= 9u)
        c++;
    if (c == e) {
        *undecided = 1;
        return 0;
    }
    if (c == s + 2 || e - c < 2) {
        *undecided = (c > s + 2 && e - c < 2 && *c == '-');
        return 0;
    }
    return c[0] == '-' && c[1] == '-';
}

static inline int emit(mh_lackey_parser *p, uint64_t addr, uint32_t size, uint8_t op) {
    int rc = 0;
    mh_access *a = mh_batch_slot(&p->batch, &rc);
    if (a == NULL)
        return fail_sink(p, rc);
    a->transition = p->cur_t;
    a->linear = addr;
    a->physical = addr;
    a->size = size;
    a->op = op;
    a->has_linear = 1;
    /* lackey prints an instruction's data accesses right after its I line,
     * so that line's address is their pc; nothing precedes the first I */
    a->pc = p->cur_pc;
    a->has_pc = p->instrs > 0;
    return 0;
}

/* One complete line [s, e), without its '\n'. */
static int parse_line(mh_lackey_parser *p, const char *s, const char *e) {
    const char *line = s;
    p->line++;
    if (e > s && e[-1] == '\r')
        e--;
    char kind;
    if (s < e && s[0] == 'I') {
        kind = 'I';
        s++;
    } else if (e - s >= 2 && s[0] == ' ' && (s[1] == 'L' || s[1] == 'S' || s[1] == 'M')) {
        kind = s[1];
        s += 2;
    } else {
        int undecided;
        if (is_ignored(s, e, &undecided))
            return 0;
        return fail_line(p, line, e, s == e ? "empty line" : "not a lackey trace line");
    }
    if (s >= e || *s != ' ')
        return fail_line(p, line, e, "expected a space after the record letter");
    while (s < e && *s == ' ')
        s++;

    uint64_t addr = 0;
    const char *d = s;
    for (; s < e; s++) {
        int v = mh_hex_digit((unsigned char)*s);
        if (v < 0)
            break;
        if (addr >> 60)
            return fail_line(p, line, e, "address does not fit in 64 bits");
        addr = (addr << 4) | (uint64_t)v;
    }
    if (s == d)
        return fail_line(p, line, e, "expected a hexadecimal address");
    if (s >= e || *s != ',')
        return fail_line(p, line, e, "expected ',' after the address");
    s++;
    uint64_t size = 0;
    d = s;
    for (; s < e; s++) {
        unsigned v = (unsigned)(unsigned char)*s - '0';
        if (v > 9)
            break;
        size = size * 10 + v;
        if (size > UINT32_MAX)
            return fail_line(p, line, e, "size does not fit in 32 bits");
    }
    if (s == d)
        return fail_line(p, line, e, "expected a decimal size");
    if (s != e)
        return fail_line(p, line, e, "unexpected characters after the size");
    if (size == 0)
        return fail_line(p, line, e, "size 0");
    if (addr + (size - 1) < addr)
        return fail_line(p, line, e, "address range wraps past 2^64");

    switch (kind) {
    case 'I':
        p->cur_t = p->instrs++;
        p->cur_pc = addr;
        if (p->flags & MH_IMPORT_EXEC)
            return emit(p, addr, (uint32_t)size, MH_OP_EXEC);
        return 0;
    case 'L':
        return emit(p, addr, (uint32_t)size, MH_OP_READ);
    case 'S':
        return emit(p, addr, (uint32_t)size, MH_OP_WRITE);
    default: { /* 'M': a modify is a read then a write of the same bytes */
        int rc = emit(p, addr, (uint32_t)size, MH_OP_READ);
        return rc ? rc : emit(p, addr, (uint32_t)size, MH_OP_WRITE);
    }
    }
}

/* Keeps the unfinished tail [s, e) of a chunk for the next call. */
static int carry_append(mh_lackey_parser *p, const char *s, const char *e) {
    size_t n = (size_t)(e - s);
    if (p->carry_len + n > sizeof p->carry) {
        int undecided;
        size_t keep = sizeof p->carry - p->carry_len;
        memcpy(p->carry + p->carry_len, s, keep);
        p->carry_len += keep;
        if (is_ignored(p->carry, p->carry + p->carry_len, &undecided)) {
            p->skipping = 1;
            p->carry_len = 0;
            return 0;
        }
        p->line++;
        return fail_line(p, p->carry, p->carry + p->carry_len, "line too long");
    }
    memcpy(p->carry + p->carry_len, s, n);
    p->carry_len += n;
    return 0;
}

int mh_lackey_feed(mh_lackey_parser *p, const char *buf, size_t len) {
    if (p->failed)
        return MH_ESTATE;
    if (len == 0)
        return 0;
    if (buf == NULL)
        return MH_EINVAL;
    const char *s = buf, *end = buf + len;
    if (p->skipping) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (nl == NULL)
            return 0;
        p->skipping = 0;
        p->line++;
        s = nl + 1;
    }
    if (p->carry_len > 0) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (nl == NULL)
            return carry_append(p, s, end);
        int rc = carry_append(p, s, nl);
        if (rc)
            return rc;
        if (p->skipping) {
            p->skipping = 0;
            p->line++;
        } else {
            rc = parse_line(p, p->carry, p->carry + p->carry_len);
            if (rc)
                return rc;
        }
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

void mh_lackey_drop_partial(mh_lackey_parser *p) {
    p->carry_len = 0;
    p->skipping = 0;
}

int mh_lackey_finish(mh_lackey_parser *p) {
    if (p->failed)
        return MH_ESTATE;
    if (p->skipping) {
        p->skipping = 0;
        p->line++;
    } else if (p->carry_len > 0) {
        int rc = parse_line(p, p->carry, p->carry + p->carry_len);
        p->carry_len = 0;
        if (rc)
            return rc;
    }
    int rc = mh_batch_flush(&p->batch);
    if (rc)
        return fail_sink(p, rc);
    return 0;
}
