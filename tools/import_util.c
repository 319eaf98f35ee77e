/*
 * import_util.c - number parsing and error messages shared by the trace
 * parsers, plus the sink that appends to an mh_writer.
 */
#include "import_util.h"

#include <stdio.h>
#include <string.h>


int mh_parse_u64_field(const char *s, const char *e, int hex_only, uint64_t *v) {
    int hex = hex_only;
    if (!hex && e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        hex = 1;
        s += 2;
    }
    if (s >= e)
        return -1;
    uint64_t x = 0;
    if (hex) {
        for (; s < e; s++) {
            int d = mh_hex_digit((unsigned char)*s);
            if (d < 0 || (x >> 60) != 0)
                return -1;
            x = (x << 4) | (uint64_t)d;
        }
    } else {
        for (; s < e; s++) {
            unsigned d = (unsigned)(unsigned char)*s - '0';
            if (d > 9)
                return -1;
            /* x * 10 + d must stay below 2^64 */
            if (x > (UINT64_MAX - d) / 10)
                return -1;
            x = x * 10 + d;
        }
    }
    *v = x;
    return 0;
}

void mh_format_line_error(char *buf, size_t len, uint64_t line, const char *s,
                          const char *e, const char *fmt, ...) {
    char what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* Quote a printable excerpt so the user can find the line. */
    char excerpt[44];
    size_t k = 0;
    for (const char *c = s; c < e && k < 40; c++)
        excerpt[k++] = (*c >= 0x20 && *c < 0x7f) ? *c : '?';
    excerpt[k] = '\0';
    snprintf(buf, len, "line %llu: %s: '%s%s'", (unsigned long long)line, what,
             excerpt, (e - s > 40) ? "..." : "");
}

int mh_import_writer_sink(void *ctx, const mh_access *batch, size_t n) {
    return mh_writer_append_batch((mh_writer *)ctx, batch, n, NULL);
}

int mh_legacy_op_bit(unsigned op) {
    switch (op) {
    case MH_OP_READ: return MH_LEGACY_READ_BIT;
    case MH_OP_WRITE: return MH_LEGACY_WRITE_BIT;
    case MH_OP_EXEC: return MH_LEGACY_EXEC_BIT;
    default: return 0;
    }
}

int mh_legacy_op_from_bit(int64_t bit) {
    switch (bit) {
    case MH_LEGACY_READ_BIT: return MH_OP_READ;
    case MH_LEGACY_WRITE_BIT: return MH_OP_WRITE;
    case MH_LEGACY_EXEC_BIT: return MH_OP_EXEC;
    default: return -1;
    }
}
