/*
 * cmd_upgrade.c - `memhist upgrade`: a store of an older format (1.0, or a
 * 2.x older than the one this memhist writes) rewritten as a new store of
 * the format this memhist writes, with every index it has (id map, address
 * sets, postings, span sets, piece sums).
 *
 * A 2.0 writer never appends to a 1.0 store (its segments could not be
 * listed in a 2.0 MANIFEST), so an old store that must grow is copied:
 * every access (same ids, since the copy starts at 0 and keeps the order)
 * and the metadata. The source is only read.
 *
 * --rewrite copies a store already at this format too: its accesses through
 * this memhist's writer, which may keep indexes an older writer of the same
 * format gave up on, and a second store of the same accesses for measuring
 * a writer change (tools/bench/README.md, mh_abstore --store-new).
 */
#include <inttypes.h>
#include <string.h>

#include "commands.h"
#include "store_copy.h"

/* the format this memhist writes, as text: "2.4" */
#define STR_(x) #x
#define STR(x) STR_(x)
#define FORMAT STR(MH_FORMAT_MAJOR) "." STR(MH_FORMAT_MINOR)

static const char synopsis[] = "memhist upgrade SRC DST [--rewrite] [--quiet]";
static const char help[] =
    "Rewrites SRC, a store of format 1.0 or of a 2.x older than " FORMAT ", as\n"
    "DST, a new store of format " FORMAT " (the one this memhist writes, with\n"
    "every index it has): the same accesses with the same ids, and the same\n"
    "metadata, streams and windows. SRC is not modified; DST must not exist.\n"
    "A store whose segments are all format " FORMAT " already is refused,\n"
    "unless --rewrite is given.\n\n"
    "options:\n"
    "  -r, --rewrite  copy SRC even when it is format " FORMAT " already: its\n"
    "                 accesses written again by this memhist's writer (the\n"
    "                 indexes it keeps that an older writer may have given up)\n"
    "  -q, --quiet    no progress, no summary\n"
    "  -h, --help     this help\n\n"
    "Exit status: 0 upgraded, 1 failed (SRC is already " FORMAT " without\n"
    "--rewrite or cannot be read, DST exists, a write failed; DST is removed),\n"
    "2 bad usage.\n";

static int run(int argc, char **argv);
const cli_cmd cmd_upgrade = {"upgrade", synopsis, help, run};

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"rewrite", no_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_upgrade;
    int quiet = 0, rewrite = 0, c;
    while ((c = cli_getopt(cmd, argc, argv, "rqh", longopts)) != -1) {
        switch (c) {
        case 'r': rewrite = 1; break;
        case 'q': quiet = 1; break;
        case 'h': return cli_help(cmd);
        default: return CLI_USAGE;
        }
    }
    if (argc - optind != 2)
        return cli_usage_error(cmd, argc - optind < 2 ? "missing SRC or DST" : "too many arguments");
    const char *src = argv[optind], *dst = argv[optind + 1];

    mh_reader *r = NULL;
    char err[MH_ERRMSG_MAX] = "";
    int rc = mh_reader_open_ex(src, NULL, &r, err, sizeof err);
    if (rc)
        return cli_fail(cmd, "cannot open store '%s': %s", src, cli_open_error(rc, err));
    /* a store's segments all have its MANIFEST's major version */
    size_t nseg = mh_reader_segment_count(r);
    unsigned old_major = MH_FORMAT_MAJOR, old_minor = MH_FORMAT_MINOR;
    for (size_t i = 0; i < nseg; i++) {
        mh_segment_info si = {.struct_size = sizeof si};
        rc = mh_reader_segment_info(r, i, &si);
        if (rc) {
            mh_reader_errmsg(r, err, sizeof err);
            mh_reader_close(r);
            return cli_fail(cmd, "%s", cli_lib_error(rc, err));
        }
        if (si.version_major < old_major ||
            (si.version_major == old_major && si.version_minor < old_minor)) {
            old_major = si.version_major;
            old_minor = si.version_minor;
        }
    }
    if (!rewrite && nseg > 0 && old_major == MH_FORMAT_MAJOR && old_minor >= MH_FORMAT_MINOR) {
        mh_reader_close(r);
        return cli_fail(cmd, "'%s' is format %u.%u: nothing to upgrade", src, old_major,
                        old_minor);
    }
    mh_stats st = {.struct_size = sizeof st};
    mh_reader_stats(r, &st);
    mh_writer *w = NULL;
    if (store_copy_create(cmd, dst, &w)) {
        mh_reader_close(r);
        return CLI_FAIL;
    }
    cli_progress prog;
    cli_progress_init(&prog, "upgrade:", quiet);
    uint64_t copied = 0;
    rc = copy_meta_and_streams(r, w, err, sizeof err);
    if (rc == 0)
        rc = copy_all_with_windows(r, w, &prog, &copied, err, sizeof err);
    cli_progress_done(&prog);
    if (rc == 0 && copied != st.accesses) {
        snprintf(err, sizeof err, "'%s' holds %" PRIu64 " accesses, the copy read %" PRIu64,
                 src, st.accesses, copied);
        rc = MH_ECORRUPT;
    }
    int status = store_copy_finish(cmd, w, dst, rc, err, sizeof err);
    if (status == CLI_OK && !quiet)
        fprintf(stderr, "%s %s (format %u.%u, %" PRIu64 " accesses) to %s (format %d.%d)\n",
                rewrite ? "rewrote" : "upgraded", src, old_major, old_minor, copied, dst,
                MH_FORMAT_MAJOR, MH_FORMAT_MINOR);
    mh_reader_close(r);
    return status;
}
