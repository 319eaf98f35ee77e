/*
 * cmd_inspect.c - `memhist inspect`: what a store holds and how it is laid
 * out, as text for people or one JSON document for scripts.
 *
 * Everything comes from the reader's index (segment, slice and chunk
 * records, dictionary, metadata): no access block is decompressed, so this
 * is fast on any store. The JSON field names are part of the interface:
 * add fields, never rename them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static const char synopsis[] =
    "memhist inspect STORE [--dict] [--segments] [--slices] [--chunks] [--windows] [--json]";
static const char help[] =
    "Describes STORE: format version, metadata, counts (accesses per operation,\n"
    "transitions, segments, slices, chunks, blocks), bytes on disk, bytes per\n"
    "access, compression ratio, and distributions (accesses per chunk, chunk\n"
    "address widths, slice transition spans: min/p50/p90/max), and its streams\n"
    "(id, kind, name, pid, tid, cpu, parent, accesses, transition range and\n"
    "key=value pairs; a format 1.0 store has one stream, 0).\n\n"
    "options:\n"
    "  -d, --dict       also the dictionary: strings, columns, operation names\n"
    "  -s, --segments   also one line per segment, and each segment's sections\n"
    "                   (type, name, required, offset, size, records)\n"
    "      --slices     also every slice record\n"
    "      --chunks     also every chunk record\n"
    "  -w, --windows    also every window (id, first access id, accesses,\n"
    "                   transition range)\n"
    "  -j, --json       one JSON document instead of text\n"
    "  -h, --help       this help\n\n"
    "Exit status: 0 described, 1 the store cannot be read, 2 bad usage.\n";

static int run(int argc, char **argv);
const cli_cmd cmd_inspect = {"inspect", synopsis, help, run};

enum { OPT_SLICES = 256, OPT_CHUNKS };

static const char *kind_name(uint32_t k) {
    static const char *const names[] = {"other", "thread", "cpu", "process"};
    return k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

typedef struct dist {
    uint64_t *v;
    size_t n, cap;
} dist;

static int dist_add(dist *d, uint64_t x) {
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        uint64_t *v = realloc(d->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = x;
    return 0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* min, p50, p90, max (nearest rank); all 0 when empty. */
static void dist_summary(dist *d, uint64_t out[4]) {
    memset(out, 0, 4 * sizeof out[0]);
    if (d->n == 0)
        return;
    qsort(d->v, d->n, sizeof d->v[0], cmp_u64);
    out[0] = d->v[0];
    out[1] = d->v[(d->n - 1) * 50 / 100];
    out[2] = d->v[(d->n - 1) * 90 / 100];
    out[3] = d->v[d->n - 1];
}

static const char *type_name(uint8_t t) {
    return t == 1 ? "uint" : t == 2 ? "enum" : "unknown";
}

static const char *encoding_name(uint8_t e) {
    static const char *const names[] = {"implicit", "delta-zigzag", "delta-physical-zigzag",
                                        "varint", "chunk"};
    return e < sizeof names / sizeof names[0] ? names[e] : "unknown";
}

typedef struct inspect_opts {
    int dict, segments, slices, chunks, windows, json;
} inspect_opts;

/* ---- JSON output --------------------------------------------------------- */

static void json_kv_u64(const char *k, uint64_t v, int comma) {
    printf("%s\"%s\": %" PRIu64, comma ? ", " : "", k, v);
}

/* x + plus (0 or 1) in decimal, computed in more than 64 bits: a span
 * t_last - t_first + 1 is 2^64 for 0 .. 2^64 - 1 (SPEC.md 16). */
static const char *dec(char buf[24], uint64_t x, int plus) {
    if (plus && x == UINT64_MAX)
        snprintf(buf, 24, "18446744073709551616");
    else
        snprintf(buf, 24, "%" PRIu64, x + (plus ? 1u : 0u));
    return buf;
}

/* plus: the values are spans less one (dec) */
static void json_dist(const char *name, const uint64_t s[4], size_t n, int plus) {
    char b[4][24];
    plus = plus && n; /* an empty distribution is all 0 */
    printf("    \"%s\": {\"count\": %zu, \"min\": %s, \"p50\": %s, \"p90\": %s, "
           "\"max\": %s}",
           name, n, dec(b[0], s[0], plus), dec(b[1], s[1], plus), dec(b[2], s[2], plus),
           dec(b[3], s[3], plus));
}

/* Prints before, s made valid UTF-8, after: a path from the command line
 * or a string of a 1.0 store may hold any bytes, and each byte of no UTF-8
 * sequence shows as U+FFFD (SPEC.md 7.2). */
static void print_utf8(const char *before, const char *s, const char *after) {
    char *f = cli_utf8_fix(s);
    fputs(before, stdout);
    fputs(f ? f : "?", stdout);
    fputs(after, stdout);
    free(f);
}

/* ---- gathering ------------------------------------------------------------ */

typedef struct gathered {
    dist per_chunk, width, span;
} gathered;

static int gather(const mh_reader *r, gathered *g) {
    size_t nseg = mh_reader_segment_count(r);
    for (size_t s = 0; s < nseg; s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        int rc = mh_reader_segment_info(r, s, &si);
        if (rc)
            return rc;
        for (uint32_t k = 0; k < si.slices; k++) {
            mh_slice_info sl = {.struct_size = sizeof sl};
            rc = mh_reader_slice_info(r, s, k, &sl);
            if (rc)
                return rc;
            /* the span less one: 2^64 does not fit (dec adds the one) */
            if (dist_add(&g->span, sl.transition_last - sl.transition_first))
                return MH_ENOMEM;
        }
        for (uint32_t k = 0; k < si.chunks; k++) {
            mh_chunk_info ch = {.struct_size = sizeof ch};
            rc = mh_reader_chunk_info(r, s, k, &ch);
            if (rc)
                return rc;
            uint64_t w = ch.phy_last - ch.phy_first;
            if (dist_add(&g->per_chunk, ch.accesses) ||
                dist_add(&g->width, w == UINT64_MAX ? w : w + 1))
                return MH_ENOMEM;
        }
    }
    return 0;
}

/* ---- listings (text and JSON share the iteration) ------------------------ */

/* The section directory of segment seg (synthesized for format 1.0). */
static int list_sections(const mh_reader *r, size_t seg, int json) {
    size_t n = mh_reader_section_count(r, seg);
    if (!json)
        printf("  %4s %-23s %8s %12s %12s %10s\n", "type", "name", "required", "offset", "size",
               "records");
    for (size_t i = 0; i < n; i++) {
        mh_section_info sec = {.struct_size = sizeof sec};
        int rc = mh_reader_section_info(r, seg, i, &sec);
        if (rc)
            return rc;
        if (json) {
            printf("%s{\"type\": %u, \"name\": ", i ? ", " : "", sec.type);
            cli_json_string(stdout, sec.name);
            printf(", \"required\": %s", sec.flags & 1 ? "true" : "false");
            json_kv_u64("offset", sec.offset, 1);
            json_kv_u64("size", sec.size, 1);
            json_kv_u64("records", sec.records, 1);
            printf("}");
        } else {
            printf("  %4u %-23s %8s %12" PRIu64 " %12" PRIu64 " %10u\n", sec.type, sec.name,
                   sec.flags & 1 ? "yes" : "no", sec.offset, sec.size, sec.records);
        }
    }
    return 0;
}

static int list_segments(const mh_reader *r, int json) {
    size_t nseg = mh_reader_segment_count(r);
    if (json)
        printf(",\n  \"segment_list\": [");
    else
        printf("\nsegments:\n  %-26s %7s %12s %12s %12s %8s %8s %8s %12s\n", "file", "version",
               "id_first", "accesses", "transitions", "slices", "chunks", "blocks", "bytes");
    for (size_t s = 0; s < nseg; s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        int rc = mh_reader_segment_info(r, s, &si);
        if (rc)
            return rc;
        if (json) {
            printf("%s\n    {\"seq\": %" PRIu64 ", \"file\": ", s ? "," : "", si.seq);
            cli_json_string(stdout, si.file_name);
            printf(", \"version\": \"%u.%u\"", si.version_major, si.version_minor);
            json_kv_u64("id_first", si.id_first, 1);
            json_kv_u64("accesses", si.accesses, 1);
            json_kv_u64("reads", si.op_counts[MH_OP_READ], 1);
            json_kv_u64("writes", si.op_counts[MH_OP_WRITE], 1);
            json_kv_u64("executes", si.op_counts[MH_OP_EXEC], 1);
            json_kv_u64("transition_first", si.transition_first, 1);
            json_kv_u64("transition_last", si.transition_last, 1);
            json_kv_u64("slices", si.slices, 1);
            json_kv_u64("chunks", si.chunks, 1);
            json_kv_u64("blocks", si.blocks, 1);
            json_kv_u64("rows_per_block", si.rows_per_block, 1);
            json_kv_u64("file_bytes", si.file_bytes, 1);
            json_kv_u64("compressed_bytes", si.compressed_bytes, 1);
            json_kv_u64("raw_bytes", si.raw_bytes, 1);
            json_kv_u64("dict_bytes", si.dict_bytes, 1);
            json_kv_u64("index_bytes", si.index_bytes, 1);
            json_kv_u64("streams", si.streams, 1);
            json_kv_u64("windows", si.windows, 1);
            json_kv_u64("summary_bytes", si.summary_bytes, 1);
            json_kv_u64("idmap_bytes", si.idmap_bytes, 1);
            json_kv_u64("aset_bytes", si.aset_bytes, 1);
            json_kv_u64("fine_summary_bytes", si.fine_summary_bytes, 1);
            json_kv_u64("apost_bytes", si.apost_bytes, 1);
            json_kv_u64("span_bytes", si.span_bytes, 1);
            json_kv_u64("idtime_bytes", si.idtime_bytes, 1);
            printf(", \"has_pc\": %s, \"sections\": [", si.has_pc ? "true" : "false");
            rc = list_sections(r, s, 1);
            if (rc)
                return rc;
            printf("]}");
        } else {
            char tr[48], ver[16];
            snprintf(tr, sizeof tr, "%" PRIu64 "-%" PRIu64, si.transition_first, si.transition_last);
            snprintf(ver, sizeof ver, "%u.%u", si.version_major, si.version_minor);
            printf("  %-26s %7s %12" PRIu64 " %12" PRIu64 " %12s %8u %8u %8u %12" PRIu64 "\n",
                   si.file_name, ver, si.id_first, si.accesses, tr, si.slices, si.chunks,
                   si.blocks, si.file_bytes);
        }
    }
    if (json) {
        printf(nseg ? "\n  ]" : "]");
        return 0;
    }
    for (size_t s = 0; s < nseg; s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        int rc = mh_reader_segment_info(r, s, &si);
        if (rc == 0) {
            printf("\nsections of %s (streams %u, windows %u, pc column %s):\n", si.file_name,
                   si.streams, si.windows, si.has_pc ? "yes" : "no");
            rc = list_sections(r, s, 0);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static int list_slices(const mh_reader *r, int json) {
    size_t nseg = mh_reader_segment_count(r);
    int first = 1;
    if (json)
        printf(",\n  \"slice_list\": [");
    else
        printf("\nslices:\n  %4s %7s %12s %12s %12s %9s %9s %9s %9s %8s %8s\n", "seg", "slice",
               "t_first", "t_last", "id_first", "accesses", "reads", "writes", "executes",
               "chunks", "blocks");
    for (size_t s = 0; s < nseg; s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        int rc = mh_reader_segment_info(r, s, &si);
        if (rc)
            return rc;
        for (uint32_t k = 0; k < si.slices; k++) {
            mh_slice_info sl = {.struct_size = sizeof sl};
            rc = mh_reader_slice_info(r, s, k, &sl);
            if (rc)
                return rc;
            if (json) {
                printf("%s\n    {\"segment\": %zu, \"slice\": %u", first ? "" : ",", s, k);
                json_kv_u64("transition_first", sl.transition_first, 1);
                json_kv_u64("transition_last", sl.transition_last, 1);
                json_kv_u64("id_first", sl.id_first, 1);
                json_kv_u64("accesses", sl.accesses, 1);
                json_kv_u64("reads", sl.op_counts[MH_OP_READ], 1);
                json_kv_u64("writes", sl.op_counts[MH_OP_WRITE], 1);
                json_kv_u64("executes", sl.op_counts[MH_OP_EXEC], 1);
                json_kv_u64("chunk_first", sl.chunk_first, 1);
                json_kv_u64("chunks", sl.chunks, 1);
                json_kv_u64("block_first", sl.block_first, 1);
                json_kv_u64("blocks", sl.blocks, 1);
                printf("}");
            } else {
                printf("  %4zu %7u %12" PRIu64 " %12" PRIu64 " %12" PRIu64
                       " %9u %9u %9u %9u %8u %8u\n",
                       s, k, sl.transition_first, sl.transition_last, sl.id_first, sl.accesses,
                       sl.op_counts[MH_OP_READ], sl.op_counts[MH_OP_WRITE],
                       sl.op_counts[MH_OP_EXEC], sl.chunks, sl.blocks);
            }
            first = 0;
        }
    }
    if (json)
        printf(first ? "]" : "\n  ]");
    return 0;
}

static int list_chunks(const mh_reader *r, int json) {
    size_t nseg = mh_reader_segment_count(r);
    int first = 1;
    if (json)
        printf(",\n  \"chunk_list\": [");
    else
        printf("\nchunks:\n  %4s %7s %2s %18s %18s %12s %12s %12s %12s %8s\n", "seg", "chunk",
               "op", "phy_first", "phy_last", "t_first", "t_last", "id_first", "id_last",
               "accesses");
    for (size_t s = 0; s < nseg; s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        int rc = mh_reader_segment_info(r, s, &si);
        if (rc)
            return rc;
        for (uint32_t k = 0; k < si.chunks; k++) {
            mh_chunk_info ch = {.struct_size = sizeof ch};
            rc = mh_reader_chunk_info(r, s, k, &ch);
            if (rc)
                return rc;
            if (json) {
                printf("%s\n    {\"segment\": %zu, \"chunk\": %u, \"op\": \"%c\"", first ? "" : ",",
                       s, k, cli_op_letter(ch.op));
                json_kv_u64("phy_first", ch.phy_first, 1);
                json_kv_u64("phy_last", ch.phy_last, 1);
                json_kv_u64("transition_first", ch.transition_first, 1);
                json_kv_u64("transition_last", ch.transition_last, 1);
                json_kv_u64("id_first", ch.id_first, 1);
                json_kv_u64("id_last", ch.id_last, 1);
                json_kv_u64("row_first", ch.row_first, 1);
                json_kv_u64("accesses", ch.accesses, 1);
                printf("}");
            } else {
                printf("  %4zu %7u %2c 0x%016" PRIx64 " 0x%016" PRIx64 " %12" PRIu64 " %12" PRIu64
                       " %12" PRIu64 " %12" PRIu64 " %8u\n",
                       s, k, cli_op_letter(ch.op), ch.phy_first, ch.phy_last,
                       ch.transition_first, ch.transition_last, ch.id_first, ch.id_last,
                       ch.accesses);
            }
            first = 0;
        }
    }
    if (json)
        printf(first ? "]" : "\n  ]");
    return 0;
}

static void print_dict_text(const mh_reader *r) {
    size_t ns = mh_reader_string_count(r), nc = mh_reader_column_count(r);
    printf("\ndictionary:\n  strings (%zu):\n", ns);
    for (size_t i = 0; i < ns; i++) {
        printf("    %4zu  ", i);
        print_utf8("", mh_reader_string(r, i), "\n");
    }
    printf("  columns (%zu):\n    %-12s %-5s %5s  %-22s %s\n", nc, "name", "type", "width",
           "encoding", "nullable");
    for (size_t i = 0; i < nc; i++) {
        mh_column_info ci = {.struct_size = sizeof ci};
        if (mh_reader_column(r, i, &ci) == 0)
            printf("    %-12s %-5s %5u  %-22s %s\n", ci.name, type_name(ci.type), ci.width,
                   encoding_name(ci.encoding), ci.nullable ? "yes" : "no");
    }
    printf("  operations:\n");
    for (unsigned op = 0; op < MH_OP_COUNT; op++) {
        const char *name = mh_reader_op_name(r, op);
        if (name)
            printf("    %u  %c  %s\n", op, cli_op_letter(op), name);
    }
}

static void print_dict_json(const mh_reader *r) {
    size_t ns = mh_reader_string_count(r), nc = mh_reader_column_count(r);
    printf(",\n  \"dictionary\": {\n    \"strings\": [");
    for (size_t i = 0; i < ns; i++) {
        printf("%s", i ? ", " : "");
        cli_json_string(stdout, mh_reader_string(r, i));
    }
    printf("],\n    \"columns\": [");
    for (size_t i = 0, k = 0; i < nc; i++) {
        mh_column_info ci = {.struct_size = sizeof ci};
        if (mh_reader_column(r, i, &ci) != 0)
            continue;
        printf("%s\n      {\"name\": ", k++ ? "," : "");
        cli_json_string(stdout, ci.name);
        printf(", \"type\": \"%s\", \"width\": %u, \"encoding\": \"%s\", \"nullable\": %s}",
               type_name(ci.type), ci.width, encoding_name(ci.encoding),
               ci.nullable ? "true" : "false");
    }
    printf("\n    ],\n    \"operations\": [");
    for (unsigned op = 0, k = 0; op < MH_OP_COUNT; op++) {
        const char *name = mh_reader_op_name(r, op);
        if (name == NULL)
            continue;
        printf("%s{\"code\": %u, \"letter\": \"%c\", \"name\": ", k++ ? ", " : "", op,
               cli_op_letter(op));
        cli_json_string(stdout, name);
        printf("}");
    }
    printf("]\n  }");
}

/* A u32/u64 "unknown" (MH_NONE32/64) is "-" in text, null in JSON. */
static void opt_num(char *buf, size_t len, uint64_t v, uint64_t none, int json) {
    if (v == none)
        snprintf(buf, len, "%s", json ? "null" : "-");
    else
        snprintf(buf, len, "%" PRIu64, v);
}

static int list_streams(const mh_reader *r, int json) {
    size_t n = mh_reader_stream_count(r);
    if (json)
        printf(",\n  \"streams\": [");
    else
        printf("streams:          %zu\n  %5s %-7s %-16s %8s %8s %5s %6s %12s %s\n", n, "id",
               "kind", "name", "pid", "tid", "cpu", "parent", "accesses", "transitions");
    for (size_t i = 0; i < n; i++) {
        mh_stream_info si = {.struct_size = sizeof si};
        int rc = mh_reader_stream_info(r, i, &si);
        if (rc)
            return rc;
        char pid[24], tid[24], cpu[24], parent[24];
        opt_num(pid, sizeof pid, si.pid, MH_NONE64, json);
        opt_num(tid, sizeof tid, si.tid, MH_NONE64, json);
        opt_num(cpu, sizeof cpu, si.cpu, MH_NONE32, json);
        opt_num(parent, sizeof parent, si.parent, MH_NONE32, json);
        size_t nm = mh_reader_stream_meta_count(r, i);
        if (json) {
            printf("%s\n    {\"id\": %u, \"kind\": \"%s\", \"name\": ", i ? "," : "", si.id,
                   kind_name(si.kind));
            if (si.name)
                cli_json_string(stdout, si.name);
            else
                printf("null");
            printf(", \"pid\": %s, \"tid\": %s, \"cpu\": %s, \"parent\": %s", pid, tid, cpu,
                   parent);
            json_kv_u64("accesses", si.accesses, 1);
            json_kv_u64("transition_first", si.transition_first, 1);
            json_kv_u64("transition_last", si.transition_last, 1);
            printf(", \"metadata\": {");
        } else {
            char tr[48] = "none";
            if (si.accesses)
                snprintf(tr, sizeof tr, "%" PRIu64 " .. %" PRIu64, si.transition_first,
                         si.transition_last);
            char *name = cli_utf8_fix(si.name ? si.name : "-");
            printf("  %5u %-7s %-16s %8s %8s %5s %6s %12" PRIu64 " %s\n", si.id,
                   kind_name(si.kind), name ? name : "?", pid, tid, cpu, parent,
                   si.accesses, tr);
            free(name);
        }
        for (size_t k = 0; k < nm; k++) {
            const char *key, *value;
            rc = mh_reader_stream_meta_get(r, i, k, &key, &value);
            if (rc)
                return rc;
            if (json) {
                printf("%s", k ? ", " : "");
                cli_json_string(stdout, key);
                printf(": ");
                cli_json_string(stdout, value);
            } else {
                print_utf8("          ", key, " = ");
                print_utf8("", value, "\n");
            }
        }
        if (json)
            printf("}}");
    }
    if (json)
        printf(n ? "\n  ]" : "]");
    return 0;
}

static int list_windows(const mh_reader *r, int json) {
    size_t n = mh_reader_window_count(r);
    if (json)
        printf(",\n  \"window_list\": [");
    else
        printf("\nwindows:\n  %12s %12s %12s %s\n", "window", "id_first", "accesses",
               "transitions");
    for (size_t i = 0; i < n; i++) {
        mh_window_info wi = {.struct_size = sizeof wi};
        int rc = mh_reader_window_info(r, i, &wi);
        if (rc)
            return rc;
        if (json) {
            printf("%s\n    {", i ? "," : "");
            json_kv_u64("window", wi.window, 0);
            json_kv_u64("id_first", wi.id_first, 1);
            json_kv_u64("accesses", wi.accesses, 1);
            json_kv_u64("transition_first", wi.transition_first, 1);
            json_kv_u64("transition_last", wi.transition_last, 1);
            printf("}");
        } else {
            char tr[48] = "none";
            if (wi.accesses)
                snprintf(tr, sizeof tr, "%" PRIu64 " .. %" PRIu64, wi.transition_first,
                         wi.transition_last);
            printf("  %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %s\n", wi.window, wi.id_first,
                   wi.accesses, tr);
        }
    }
    if (json)
        printf(n ? "\n  ]" : "]");
    return 0;
}

static int describe(const char *store, const mh_reader *r, const inspect_opts *o) {
    mh_stats st = {.struct_size = sizeof st};
    mh_reader_stats(r, &st);
    gathered g;
    memset(&g, 0, sizeof g);
    int rc = gather(r, &g);
    if (rc) {
        /* index records are verified lazily: print nothing half-checked */
        free(g.per_chunk.v);
        free(g.width.v);
        free(g.span.v);
        return rc;
    }
    /* the stream and window tables are built on first use from every
     * segment: check them before printing anything, like the index */
    size_t nstreams = mh_reader_stream_count(r), nwin = mh_reader_window_count(r);
    for (size_t i = 0; i < nstreams && rc == 0; i++) {
        mh_stream_info si = {.struct_size = sizeof si};
        rc = mh_reader_stream_info(r, i, &si);
    }
    for (size_t i = 0; i < nwin && rc == 0; i++) {
        mh_window_info wi = {.struct_size = sizeof wi};
        rc = mh_reader_window_info(r, i, &wi);
    }
    if (rc) {
        free(g.per_chunk.v);
        free(g.width.v);
        free(g.span.v);
        return rc;
    }
    uint64_t pc[4], wd[4], sp[4];
    dist_summary(&g.per_chunk, pc);
    dist_summary(&g.width, wd);
    dist_summary(&g.span, sp);
    size_t nseg = mh_reader_segment_count(r);
    unsigned vmaj = MH_FORMAT_MAJOR, vmin = MH_FORMAT_MINOR;
    if (nseg > 0) {
        mh_segment_info si = {.struct_size = sizeof si};
        if (mh_reader_segment_info(r, nseg - 1, &si) == 0) {
            vmaj = si.version_major;
            vmin = si.version_minor;
        }
    }
    /* Accesses as an uncompressed array of mh_access would take: the
     * natural yardstick for the compression ratio a user cares about. */
    double bpa = st.accesses ? (double)st.file_bytes / (double)st.accesses : 0.0;
    double block_ratio = st.compressed_bytes ? (double)st.raw_bytes / (double)st.compressed_bytes : 0.0;
    double struct_ratio = st.file_bytes ? (double)st.accesses * (double)sizeof(mh_access) /
                                              (double)st.file_bytes : 0.0;
    char tspan[24]; /* t_last - t_first + 1: 2^64 for 0 .. 2^64 - 1 */
    dec(tspan, st.transition_last - st.transition_first, 1);
    if (!st.accesses)
        snprintf(tspan, sizeof tspan, "0");
    size_t nmeta = mh_reader_meta_count(r);

    if (o->json) {
        printf("{\n  \"store\": ");
        cli_json_string(stdout, store);
        printf(",\n  \"format_version\": \"%u.%u\", \"memhist_version\": \"%s\",\n  ", vmaj, vmin,
               mh_version_string());
        json_kv_u64("accesses", st.accesses, 0);
        printf(",\n  \"op_counts\": {\"read\": %" PRIu64 ", \"write\": %" PRIu64
               ", \"execute\": %" PRIu64 "},\n  ",
               st.op_counts[MH_OP_READ], st.op_counts[MH_OP_WRITE], st.op_counts[MH_OP_EXEC]);
        json_kv_u64("transition_first", st.transition_first, 0);
        json_kv_u64("transition_last", st.transition_last, 1);
        printf(", \"transition_span\": %s", tspan);
        printf(",\n  ");
        json_kv_u64("segments", st.segments, 0);
        json_kv_u64("slices", st.slices, 1);
        json_kv_u64("chunks", st.chunks, 1);
        json_kv_u64("blocks", st.blocks, 1);
        printf(",\n  ");
        json_kv_u64("file_bytes", st.file_bytes, 0);
        json_kv_u64("compressed_bytes", st.compressed_bytes, 1);
        json_kv_u64("raw_bytes", st.raw_bytes, 1);
        printf(",\n  \"bytes_per_access\": %.3f, \"block_compression_ratio\": %.3f, "
               "\"compression_ratio\": %.3f",
               bpa, block_ratio, struct_ratio);
        printf(",\n  \"metadata\": {");
        for (size_t i = 0; i < nmeta; i++) {
            const char *k, *v;
            if (mh_reader_meta_get(r, i, &k, &v) != 0)
                continue;
            printf("%s\n    ", i ? "," : "");
            cli_json_string(stdout, k);
            printf(": ");
            cli_json_string(stdout, v);
        }
        printf(nmeta ? "\n  }" : "}");
        rc = list_streams(r, 1);
        printf(",\n  \"windows\": %zu", nwin);
        printf(",\n  \"distributions\": {\n");
        json_dist("accesses_per_chunk", pc, g.per_chunk.n, 0);
        printf(",\n");
        json_dist("chunk_address_width", wd, g.width.n, 0);
        printf(",\n");
        json_dist("slice_transition_span", sp, g.span.n, 1);
        printf("\n  }");
        if (o->dict)
            print_dict_json(r);
    } else {
        print_utf8("store:            ", store, "\n");
        printf("format version:   %u.%u (memhist %s)\n", vmaj, vmin, mh_version_string());
        printf("accesses:         %" PRIu64 " (read %" PRIu64 ", write %" PRIu64
               ", execute %" PRIu64 ")\n",
               st.accesses, st.op_counts[MH_OP_READ], st.op_counts[MH_OP_WRITE],
               st.op_counts[MH_OP_EXEC]);
        if (st.accesses)
            printf("transitions:      %" PRIu64 " .. %" PRIu64 " (span %s)\n",
                   st.transition_first, st.transition_last, tspan);
        else
            printf("transitions:      none\n");
        printf("segments:         %" PRIu64 "\nslices:           %" PRIu64
               "\nchunks:           %" PRIu64 "\nblocks:           %" PRIu64 "\n",
               st.segments, st.slices, st.chunks, st.blocks);
        printf("bytes on disk:    %" PRIu64 " (access blocks %" PRIu64 " compressed, %" PRIu64
               " raw)\n",
               st.file_bytes, st.compressed_bytes, st.raw_bytes);
        printf("bytes per access: %.3f\n", bpa);
        printf("compression:      %.2fx vs %zu-byte records, blocks %.2fx by LZ4\n",
               struct_ratio, sizeof(mh_access), block_ratio);
        printf("metadata:%s\n", nmeta ? "" : "         none");
        for (size_t i = 0; i < nmeta; i++) {
            const char *k, *v;
            if (mh_reader_meta_get(r, i, &k, &v) == 0) {
                print_utf8("  ", k, " = ");
                print_utf8("", v, "\n");
            }
        }
        rc = list_streams(r, 0);
        printf("windows:          %zu\n", nwin);
        printf("distributions:    %9s %12s %12s %12s %12s\n", "count", "min", "p50", "p90", "max");
        printf("  accesses/chunk  %9zu %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
               g.per_chunk.n, pc[0], pc[1], pc[2], pc[3]);
        printf("  chunk width     %9zu %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
               g.width.n, wd[0], wd[1], wd[2], wd[3]);
        char b[4][24];
        int one = g.span.n > 0; /* an empty distribution is all 0 */
        printf("  slice span      %9zu %12s %12s %12s %12s\n", g.span.n, dec(b[0], sp[0], one),
               dec(b[1], sp[1], one), dec(b[2], sp[2], one), dec(b[3], sp[3], one));
        if (o->dict)
            print_dict_text(r);
    }
    free(g.per_chunk.v);
    free(g.width.v);
    free(g.span.v);
    if (rc == 0 && o->segments)
        rc = list_segments(r, o->json);
    if (rc == 0 && o->slices)
        rc = list_slices(r, o->json);
    if (rc == 0 && o->chunks)
        rc = list_chunks(r, o->json);
    if (rc == 0 && o->windows)
        rc = list_windows(r, o->json);
    if (o->json)
        printf("\n}\n");
    return rc;
}

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"dict", no_argument, NULL, 'd'},
        {"segments", no_argument, NULL, 's'},
        {"slices", no_argument, NULL, OPT_SLICES},
        {"chunks", no_argument, NULL, OPT_CHUNKS},
        {"windows", no_argument, NULL, 'w'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_inspect;
    inspect_opts o = {0, 0, 0, 0, 0, 0};
    int c;
    while ((c = cli_getopt(cmd, argc, argv, "dswjh", longopts)) != -1) {
        switch (c) {
        case 'd': o.dict = 1; break;
        case 's': o.segments = 1; break;
        case OPT_SLICES: o.slices = 1; break;
        case OPT_CHUNKS: o.chunks = 1; break;
        case 'w': o.windows = 1; break;
        case 'j': o.json = 1; break;
        case 'h': return cli_help(cmd);
        default: return CLI_USAGE;
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(cmd, argc == optind ? "missing STORE" : "too many arguments");
    const char *store = argv[optind];
    mh_reader *r = NULL;
    char err[MH_ERRMSG_MAX] = "";
    int rc = mh_reader_open_ex(store, NULL, &r, err, sizeof err);
    if (rc)
        return cli_fail(cmd, "cannot open store '%s': %s", store, cli_open_error(rc, err));
    rc = describe(store, r, &o);
    if (rc)
        mh_reader_errmsg(r, err, sizeof err);
    mh_reader_close(r);
    if (rc) {
        fflush(stdout);
        return cli_fail(cmd, "%s", cli_lib_error(rc, err));
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_fail(cmd, "cannot write: %s", strerror(errno));
    return CLI_OK;
}
