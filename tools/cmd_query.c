/*
 * cmd_query.c - `memhist query`: the half-axis query from the command line.
 *
 * Validates every argument itself (exit 2) before the library sees it, so
 * a library MH_EINVAL here would be a bug, and streams the answer through a
 * cursor so --all never holds the whole answer in memory. An end bound
 * (--until, --to-id) goes to the library, which stops reading there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static const char synopsis[] =
    "memhist query STORE (--from T [--forward|--backward] | --after ID | --before ID)\n"
    "                    [--until T | --to-id ID] [--addr A:B] [--op OPS] [--stream LIST]\n"
    "                    [--pc A:B] [--window K] [--max N | --all] [--format table|csv|json]";
static const char help[] =
    "Prints the first N accesses, forward or backward from a transition or an\n"
    "access id, whose operation is in OPS and whose bytes overlap [A, B].\n\n"
    "start (exactly one):\n"
    "  -t, --from T        from transition T, inclusive\n"
    "      --forward       ascending ids, transition >= T (default)\n"
    "      --backward      descending ids, transition <= T\n"
    "      --after ID      ascending ids, id > ID (resume a forward query)\n"
    "      --before ID     descending ids, id < ID (resume a backward query)\n\n"
    "end (at most one; inclusive, in the query's direction; the store is not\n"
    "read past it, and an end before the start gives no access):\n"
    "      --until T       stop after transition T (forward: transition <= T,\n"
    "                      backward: transition >= T)\n"
    "      --to-id ID      stop after id ID (forward: id <= ID, backward: id >= ID)\n\n"
    "filters and output:\n"
    "  -a, --addr A:B      physical range, inclusive (default 0:0xffffffffffffffff)\n"
    "  -o, --op OPS        letters r, w, x (default rw)\n"
    "  -s, --stream LIST   only these streams: comma-separated ids, e.g. 0,3\n"
    "                      (an id the store does not have matches nothing)\n"
    "      --pc A:B        only accesses whose instruction address (pc) is in\n"
    "                      [A, B], inclusive (accesses without a pc never match)\n"
    "  -w, --window K      only the accesses of window K (exit 1 if the store\n"
    "                      has no window K)\n"
    "  -n, --max N         at most N accesses (default 10)\n"
    "      --all           every match\n"
    "  -f, --format FMT    table (default), csv (id,transition,linear,physical,size,\n"
    "                      op,stream,pc; decimal, empty linear and pc when absent)\n"
    "                      or json (an array; null linear and pc when absent)\n"
    "  -h, --help          this help\n\n"
    "Numbers are decimal or 0x hex. Format 1.0 stores have stream 0 and no pc.\n"
    "Exit status: 0 answered (even with no match),\n"
    "1 the store cannot be read, 2 bad usage.\n";

static int run(int argc, char **argv);
const cli_cmd cmd_query = {"query", synopsis, help, run};

enum { OUT_TABLE, OUT_CSV, OUT_JSON };
enum { OPT_FORWARD = 256, OPT_BACKWARD, OPT_AFTER, OPT_BEFORE, OPT_ALL, OPT_UNTIL, OPT_TO_ID,
       OPT_PC };

/* "linear" and "pc" are the optional fields: each output format has its
 * own way of saying "absent" (table "-", CSV empty, JSON null). */
static void opt_u64(char *buf, size_t len, int present, uint64_t v, int fmt) {
    if (present)
        snprintf(buf, len, fmt == OUT_TABLE ? "0x%016" PRIx64 : "%" PRIu64, v);
    else
        snprintf(buf, len, "%s", fmt == OUT_TABLE ? "-" : fmt == OUT_JSON ? "null" : "");
}

static void print_access(int fmt, const mh_access *a, uint64_t index) {
    char op = cli_op_letter(a->op);
    char lin[24], pc[24];
    opt_u64(lin, sizeof lin, a->has_linear, a->linear, fmt);
    opt_u64(pc, sizeof pc, a->has_pc, a->pc, fmt);
    switch (fmt) {
    case OUT_CSV:
        printf("%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%u,%c,%u,%s\n", a->id, a->transition,
               lin, a->physical, a->size, op, a->stream, pc);
        break;
    case OUT_JSON:
        printf("%s\n  {\"id\": %" PRIu64 ", \"transition\": %" PRIu64
               ", \"linear\": %s, \"physical\": %" PRIu64
               ", \"size\": %u, \"op\": \"%c\", \"stream\": %u, \"pc\": %s}",
               index ? "," : "", a->id, a->transition, lin, a->physical, a->size, op,
               a->stream, pc);
        break;
    default:
        printf("%12" PRIu64 " %12" PRIu64 " %18s 0x%016" PRIx64 " %6u  %c %6u %18s\n", a->id,
               a->transition, lin, a->physical, a->size, op, a->stream, pc);
        break;
    }
}

/* Runs q on store and prints the answer; returns the exit status. */
static int answer(const cli_cmd *cmd, const char *store, const mh_query *q, int fmt, int all,
                  uint64_t max) {
    mh_reader *r = NULL;
    char err[MH_ERRMSG_MAX] = "";
    int rc = mh_reader_open_ex(store, NULL, &r, err, sizeof err);
    if (rc)
        return cli_fail(cmd, "cannot open store '%s': %s", store, cli_open_error(rc, err));

    enum { CHUNK = 4096 };
    mh_access *buf = malloc(CHUNK * sizeof *buf);
    mh_cursor *cur = NULL;
    if (buf == NULL) {
        mh_reader_close(r);
        return cli_fail(cmd, "%s", mh_strerror(MH_ENOMEM));
    }
    rc = mh_cursor_open(r, q, &cur);
    if (rc) {
        mh_reader_errmsg(r, err, sizeof err);
        mh_reader_close(r);
        free(buf);
        return cli_fail(cmd, "%s", cli_lib_error(rc, err));
    }
    if (fmt == OUT_CSV)
        printf("id,transition,linear,physical,size,op,stream,pc\n");
    else if (fmt == OUT_JSON)
        printf("[");
    else
        printf("%12s %12s %18s %18s %6s  %s %6s %18s\n", "id", "transition", "linear",
               "physical", "size", "op", "stream", "pc");
    uint64_t printed = 0;
    while (rc == 0 && (all || printed < max)) {
        size_t want = CHUNK, n = 0;
        if (!all && max - printed < want)
            want = (size_t)(max - printed);
        rc = mh_cursor_next(cur, buf, want, &n);
        if (rc || n == 0)
            break;
        for (size_t i = 0; i < n; i++, printed++)
            print_access(fmt, &buf[i], printed);
    }
    if (fmt == OUT_JSON)
        printf(printed ? "\n]\n" : "]\n");
    if (rc)
        mh_cursor_errmsg(cur, err, sizeof err);
    mh_cursor_close(cur);
    mh_reader_close(r);
    free(buf);
    if (rc) {
        fflush(stdout); /* the answer so far, then the error */
        return cli_fail(cmd, "%s", cli_lib_error(rc, err));
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_fail(cmd, "cannot write the answer: %s", strerror(errno));
    return CLI_OK;
}

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"from", required_argument, NULL, 't'},
        {"forward", no_argument, NULL, OPT_FORWARD},
        {"backward", no_argument, NULL, OPT_BACKWARD},
        {"after", required_argument, NULL, OPT_AFTER},
        {"before", required_argument, NULL, OPT_BEFORE},
        {"until", required_argument, NULL, OPT_UNTIL},
        {"to-id", required_argument, NULL, OPT_TO_ID},
        {"addr", required_argument, NULL, 'a'},
        {"op", required_argument, NULL, 'o'},
        {"stream", required_argument, NULL, 's'},
        {"pc", required_argument, NULL, OPT_PC},
        {"window", required_argument, NULL, 'w'},
        {"max", required_argument, NULL, 'n'},
        {"all", no_argument, NULL, OPT_ALL},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_query;
    mh_query q;
    mh_query_init(&q);
    q.addr_first = 0;
    q.addr_last = UINT64_MAX;
    q.ops = MH_OPS_RW;
    int starts = 0, ends = 0, dir_given = -1, all = 0, max_given = 0, fmt = OUT_TABLE;
    uint64_t max = 10;
    const char *stream_arg = NULL; /* the last --stream, parsed once all is checked */
    int c;
    while ((c = cli_getopt(cmd, argc, argv, "t:a:o:s:w:n:f:h", longopts)) != -1) {
        switch (c) {
        case 't':
        case OPT_AFTER:
        case OPT_BEFORE:
            if (cli_parse_u64(optarg, &q.start))
                return cli_usage_error(cmd, "bad %s '%s' (decimal or 0x hex)",
                                       c == 't' ? "transition" : "id", optarg);
            q.start_kind = c == 't' ? MH_FROM_TRANSITION : MH_FROM_ID;
            if (c != 't')
                q.direction = c == OPT_AFTER ? MH_FORWARD : MH_BACKWARD;
            starts++;
            break;
        case OPT_UNTIL:
        case OPT_TO_ID:
            if (cli_parse_u64(optarg, &q.end))
                return cli_usage_error(cmd, "bad %s '%s' (decimal or 0x hex)",
                                       c == OPT_UNTIL ? "--until" : "--to-id", optarg);
            q.end_kind = c == OPT_UNTIL ? MH_END_TRANSITION : MH_END_ID;
            ends++;
            break;
        case OPT_FORWARD:
        case OPT_BACKWARD: {
            int d = c == OPT_FORWARD ? MH_FORWARD : MH_BACKWARD;
            if (dir_given >= 0 && dir_given != d)
                return cli_usage_error(cmd, "--forward and --backward exclude each other");
            dir_given = d;
            break;
        }
        case 'a':
            if (cli_parse_range(optarg, &q.addr_first, &q.addr_last))
                return cli_usage_error(cmd, "bad --addr '%s' (A:B, decimal or 0x hex)", optarg);
            if (q.addr_first > q.addr_last)
                return cli_usage_error(cmd, "bad --addr '%s': A > B", optarg);
            break;
        case 'o':
            q.ops = cli_parse_ops(optarg);
            if (q.ops == 0)
                return cli_usage_error(cmd, "bad --op '%s' (letters r, w, x, e.g. rw)", optarg);
            break;
        case 's': stream_arg = optarg; break;
        case OPT_PC:
            if (cli_parse_range(optarg, &q.pc_first, &q.pc_last))
                return cli_usage_error(cmd, "bad --pc '%s' (A:B, decimal or 0x hex)", optarg);
            if (q.pc_first > q.pc_last)
                return cli_usage_error(cmd, "bad --pc '%s': A > B", optarg);
            q.filter |= MH_FILTER_PC;
            break;
        case 'w':
            if (cli_parse_u64(optarg, &q.window))
                return cli_usage_error(cmd, "bad --window '%s' (a window id)", optarg);
            q.filter |= MH_FILTER_WINDOW;
            break;
        case 'n':
            if (cli_parse_u64(optarg, &max))
                return cli_usage_error(cmd, "bad --max '%s' (a number)", optarg);
            max_given = 1;
            break;
        case OPT_ALL: all = 1; break;
        case 'f':
            if (strcmp(optarg, "table") == 0)
                fmt = OUT_TABLE;
            else if (strcmp(optarg, "csv") == 0)
                fmt = OUT_CSV;
            else if (strcmp(optarg, "json") == 0)
                fmt = OUT_JSON;
            else
                return cli_usage_error(cmd, "unknown format '%s' (table, csv or json)", optarg);
            break;
        case 'h': return cli_help(cmd);
        default: return CLI_USAGE;
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(cmd, argc == optind ? "missing STORE" : "too many arguments");
    if (starts != 1)
        return cli_usage_error(cmd, starts == 0 ? "missing start: --from T, --after ID or --before ID"
                                                : "give only one of --from, --after, --before");
    if (ends > 1)
        return cli_usage_error(cmd, "give only one of --until, --to-id");
    if (dir_given >= 0) {
        if (q.start_kind != MH_FROM_TRANSITION)
            return cli_usage_error(cmd, "--forward/--backward go with --from only");
        q.direction = (uint32_t)dir_given;
    }
    if (all && max_given)
        return cli_usage_error(cmd, "--max and --all exclude each other");
    /* parsed last: the only option that allocates */
    uint32_t *streams = NULL;
    if (stream_arg != NULL) {
        int prc = cli_parse_streams(stream_arg, &streams, &q.nstreams);
        if (prc == -2)
            return cli_fail(cmd, "%s", mh_strerror(MH_ENOMEM));
        if (prc)
            return cli_usage_error(cmd, "bad --stream '%s' (comma-separated stream ids, each "
                                        "at most %u, none twice)", stream_arg, MH_STREAM_MAX);
        q.streams = streams;
    }
    int status = answer(cmd, argv[optind], &q, fmt, all, max);
    free(streams);
    return status;
}
