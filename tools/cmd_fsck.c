/*
 * cmd_fsck.c - `memhist fsck`: verify (and optionally repair) a store with
 * the library's mh_verify(), one line per problem.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"

static const char synopsis[] = "memhist fsck STORE [--repair] [--quiet] [--threads N]";
static const char help[] =
    "Reads every byte of STORE and checks every checksum and invariant: magic,\n"
    "versions, reserved fields, header/dictionary/index/block checksums, slice\n"
    "and chunk ordering, every access against its chunk and slice, contiguous\n"
    "ids, counts, and the manifest against the files present.\n\n"
    "Each problem is printed on one line:  FILE:OFFSET: CODE: message\n"
    "then a summary line (unless --quiet).\n\n"
    "options:\n"
    "  -r, --repair   remove what a crash can leave behind (temporary files, a\n"
    "                 torn unsealed tail segment) and rewrite the manifest; never\n"
    "                 touches a sealed segment that verifies. Each action is\n"
    "                 printed as 'repair: ...'\n"
    "  -q, --quiet    print problems only, no summary\n"
    "  -j, --threads N  check the segments on N threads, 1 to 16 (default:\n"
    "                 $MEMHIST_FSCK_THREADS, else the processors online, at most\n"
    "                 8, for a store of 2 segments and 32 MiB or more, else 1);\n"
    "                 the lines are the same whatever the count\n"
    "  -h, --help     this help\n\n"
    "A directory that holds none of a store's files (MANIFEST, LOCK, segments)\n"
    "is refused as 'not a memhist store', and never made into one, with\n"
    "--repair too. While a writer holds the store, the files it is writing are\n"
    "reported as 'a writer is active' (MH_ELOCKED) and not checked; the\n"
    "committed part is, and the summary says 'busy'.\n\n"
    "A span address set written for MANIFEST positions that a repair has moved\n"
    "(a lost MANIFEST rebuilt without a lost empty segment) is stale: queries\n"
    "do not use it, and it is printed as 'note: ...', not a problem.\n\n"
    "Exit status: 0 the store is clean (after repair, with --repair), 1 problems\n"
    "remain, the store cannot be read, is not a store, or a writer is active\n"
    "(busy, or --repair refused), 2 bad usage.\n";

static int run(int argc, char **argv);
const cli_cmd cmd_fsck = {"fsck", synopsis, help, run};

typedef struct fsck_ctx {
    const char *store; /* named for problems of the store as a whole */
    int repair;
} fsck_ctx;

/* Problems as FILE:OFFSET: CODE: message; code MH_OK is a repair action
 * (with --repair) or a note (a stale span address set: not a problem). */
static void report(void *ctx, const mh_problem *p) {
    const fsck_ctx *x = ctx;
    const char *file = p->file && p->file[0] ? p->file : x->store;
    if (p->code == MH_OK && x->repair)
        printf("repair: %s\n", p->message ? p->message : "");
    else if (p->code == MH_OK)
        printf("note: %s\n", p->message ? p->message : "");
    else
        printf("%s:%" PRIu64 ": %s: %s\n", file, p->offset, mh_error_name(p->code),
               p->message ? p->message : mh_strerror(p->code));
    fflush(stdout);
}

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"repair", no_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},
        {"threads", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_fsck;
    int repair = 0, quiet = 0, c;
    const char *threads_arg = NULL;
    while ((c = cli_getopt(cmd, argc, argv, "rqj:h", longopts)) != -1) {
        switch (c) {
        case 'r': repair = 1; break;
        case 'q': quiet = 1; break;
        case 'j': threads_arg = optarg; break;
        case 'h': return cli_help(cmd);
        default: return CLI_USAGE;
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(cmd, argc == optind ? "missing STORE" : "too many arguments");
    const char *store = argv[optind];
    unsigned threads = 0; /* the library's choice */
    const char *env = getenv("MEMHIST_FSCK_THREADS");
    if (threads_arg || (env && *env)) {
        uint64_t n;
        if (cli_parse_u64(threads_arg ? threads_arg : env, &n) != 0 || n < 1 ||
            n > MH_VERIFY_THREADS_MAX)
            return cli_usage_error(cmd, threads_arg ? "--threads '%s': not a count in 1 .. %u"
                                                    : "MEMHIST_FSCK_THREADS='%s': not a count "
                                                      "in 1 .. %u",
                                   threads_arg ? threads_arg : env, MH_VERIFY_THREADS_MAX);
        threads = (unsigned)n;
    }

    mh_verify_result res = {.struct_size = sizeof res};
    double t0 = cli_now();
    fsck_ctx x = {store, repair};
    int rc = mh_verify(store, (repair ? MH_VERIFY_REPAIR : 0) | MH_VERIFY_THREADS(threads),
                       report, &x, &res);
    double el = cli_now() - t0;
    struct stat st;
    if (rc == MH_ENOTSTORE && res.problems == 0 && stat(store, &st) == 0 && S_ISDIR(st.st_mode))
        return cli_fail(cmd, "'%s' is not a memhist store (no MANIFEST, LOCK or segment file)",
                        store);
    if (rc == MH_ELOCKED && repair)
        return cli_fail(cmd, "cannot repair '%s': a writer is active", store);
    if (rc != MH_OK && rc != MH_ECORRUPT && rc != MH_ELOCKED && res.problems == 0) {
        /* mh_verify reports problems of the store, not why it could not
         * start: opening a reader says that (path and OS reason) */
        char err[MH_ERRMSG_MAX] = "";
        mh_reader *r = NULL;
        if ((rc == MH_ENOENT || rc == MH_ENOTSTORE || rc == MH_EIO) &&
            mh_reader_open_ex(store, NULL, &r, err, sizeof err) == MH_OK) {
            mh_reader_close(r);
            err[0] = '\0'; /* the reader got in: its detail is not fsck's reason */
        }
        return cli_fail(cmd, "cannot check '%s': %s", store, cli_open_error(rc, err));
    }
    if (!quiet) {
        printf("%s: %s: %" PRIu64 " problem%s, %" PRIu64 " segment%s, %" PRIu64
               " accesses, %" PRIu64 " bytes checked in %.2f s",
               store,
               rc == MH_ELOCKED ? "busy (a writer is active)"
               : rc != MH_OK    ? "damaged"
               : (repair && res.repaired) ? "repaired"
                                          : "clean",
               res.problems,
               res.problems == 1 ? "" : "s", res.segments, res.segments == 1 ? "" : "s",
               res.accesses, res.bytes, el);
        if (repair)
            printf(", %" PRIu64 " repair action%s", res.repaired, res.repaired == 1 ? "" : "s");
        printf("\n");
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        return CLI_FAIL;
    return rc == MH_OK ? CLI_OK : CLI_FAIL;
}
