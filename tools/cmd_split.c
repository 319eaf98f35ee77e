/*
 * cmd_split.c - `memhist split`: one window of a store as a store of its
 * own.
 *
 * The new store keeps the metadata and every stream (descriptions and
 * key/values) of the source, and holds the window's accesses under the
 * same window id; the writer numbers them again from 0. The window's
 * accesses are found by the query's window filter, which reads only the
 * slices the window covers.
 */
#include <inttypes.h>
#include <string.h>

#include "commands.h"
#include "store_copy.h"

static const char synopsis[] = "memhist split STORE --window K OUT [--quiet]";
static const char help[] =
    "Writes the accesses of window K of STORE into OUT, a new store: the same\n"
    "accesses (transitions, addresses, sizes, operations, streams, pc), the\n"
    "metadata and every stream of STORE, and window K holding all of them.\n"
    "Access ids are renumbered from 0 (id N of OUT is the window's N-th access).\n\n"
    "options:\n"
    "  -w, --window K   the window to copy (required)\n"
    "  -q, --quiet      no progress, no summary\n"
    "  -h, --help       this help\n\n"
    "Exit status: 0 written, 1 failed (STORE has no window K, OUT exists, a\n"
    "read or write failed; OUT is removed), 2 bad usage.\n";

static int run(int argc, char **argv);
const cli_cmd cmd_split = {"split", synopsis, help, run};

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"window", required_argument, NULL, 'w'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_split;
    uint64_t window = 0;
    int have_window = 0, quiet = 0, c;
    while ((c = cli_getopt(cmd, argc, argv, "w:qh", longopts)) != -1) {
        switch (c) {
        case 'w':
            if (cli_parse_u64(optarg, &window))
                return cli_usage_error(cmd, "bad --window '%s' (a window id)", optarg);
            have_window = 1;
            break;
        case 'q': quiet = 1; break;
        case 'h': return cli_help(cmd);
        default: return CLI_USAGE;
        }
    }
    if (!have_window)
        return cli_usage_error(cmd, "missing --window K");
    if (argc - optind != 2)
        return cli_usage_error(cmd, argc - optind < 2 ? "missing STORE or OUT" : "too many arguments");
    const char *store = argv[optind], *out = argv[optind + 1];

    mh_reader *r = NULL;
    char err[MH_ERRMSG_MAX] = "";
    int rc = mh_reader_open_ex(store, NULL, &r, err, sizeof err);
    if (rc)
        return cli_fail(cmd, "cannot open store '%s': %s", store, cli_open_error(rc, err));
    mh_window_info wi = {.struct_size = sizeof wi};
    rc = mh_reader_window_find(r, window, &wi);
    if (rc) {
        mh_reader_errmsg(r, err, sizeof err);
        mh_reader_close(r);
        if (rc == MH_ENOTFOUND)
            return cli_fail(cmd, "'%s' has no window %" PRIu64, store, window);
        return cli_fail(cmd, "%s", cli_lib_error(rc, err));
    }
    mh_writer *w = NULL;
    if (store_copy_create(cmd, out, &w)) {
        mh_reader_close(r);
        return CLI_FAIL;
    }
    cli_progress prog;
    cli_progress_init(&prog, "split:", quiet);
    uint64_t copied = 0;
    rc = copy_meta_and_streams(r, w, err, sizeof err);
    if (rc == 0) {
        rc = mh_writer_window_begin(w, window);
        if (rc)
            mh_writer_errmsg(w, err, sizeof err);
    }
    if (rc == 0) {
        mh_query q;
        store_copy_query_all(&q);
        q.filter = MH_FILTER_WINDOW;
        q.window = window;
        rc = copy_accesses(r, &q, w, &prog, &copied, err, sizeof err);
    }
    cli_progress_done(&prog);
    if (rc == 0 && copied != wi.accesses) {
        /* the window table and the filter disagree: a damaged store */
        snprintf(err, sizeof err, "window %" PRIu64 " lists %" PRIu64
                 " accesses, the query found %" PRIu64, window, wi.accesses, copied);
        rc = MH_ECORRUPT;
    }
    int status = store_copy_finish(cmd, w, out, rc, err, sizeof err);
    if (status == CLI_OK && !quiet)
        fprintf(stderr, "split window %" PRIu64 " of %s: %" PRIu64 " accesses (ids %" PRIu64
                "..) into %s\n", window, store, copied, wi.id_first, out);
    mh_reader_close(r);
    return status;
}
