/*
 * cmd_import.c - `memhist import`: stream a lackey, CSV or legacy SQLite
 * trace into a store.
 *
 * The input is read in 1 MiB pieces and pushed through the parser, which
 * hands batches to the writer; nothing is buffered whole. On a failure the
 * writer is abandoned, so the store keeps exactly what was committed, and a
 * store this run created with nothing committed is removed again.
 *
 * SIGINT, SIGTERM and SIGHUP (cli_signal.h) stop the reading instead: the
 * parser is handed whole lines only (the bytes after the last newline wait
 * for the next read), so on a stop what it holds is complete; it is
 * flushed, the last transition (maybe cut by the stop) is discarded, and
 * the rest committed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_signal.h"
#include "commands.h"
#include "import.h"

static const char synopsis[] =
    "memhist import --format lackey|csv|sqlite [OPTIONS] INPUT STORE";
static const char help[] =
    "Reads a memory trace and stores it in STORE (a new directory).\n"
    "INPUT may be '-' (standard input) for lackey and csv.\n\n"
    "formats:\n"
    "  lackey   output of valgrind --tool=lackey --trace-mem=yes\n"
    "  csv      header transition,linear,physical,size,op; numbers decimal or 0x hex;\n"
    "           linear may be empty; op r, w or x\n"
    "  sqlite   the legacy tables slices/chunks/accesses (operation bits x=1 w=2 r=4)\n\n"
    "options:\n"
    "  -f, --format FMT       input format (required)\n"
    "  -a, --append           add to STORE if it exists (created otherwise)\n"
    "  -x, --exec             lackey: store instruction fetches as execute accesses\n"
    "  -c, --commit-every N   commit after every N accesses (default: the library's\n"
    "                         automatic commit interval and once at the end)\n"
    "      --report-commits   print 'committed N' on stdout after every commit\n"
    "      --streams FILE     declare the streams FILE describes first: a CSV file,\n"
    "                         header id then any of kind,name,pid,tid,cpu,parent\n"
    "  -q, --quiet            no progress and no summary\n"
    "  -h, --help             this help\n\n"
    "On bad input the error names the line (or rowid); accesses committed before\n"
    "it stay in the store, and a store created by this run with nothing\n"
    "committed is removed.\n\n"
    "SIGINT, SIGTERM or SIGHUP: reading stops, the accesses read so far are\n"
    "committed (but for the last transition, which the stop may have cut),\n"
    "memhist prints 'memhist import: interrupted: N accesses committed' (N = the\n"
    "store's total) and exits 128 + the signal (130, 143, 129). A second signal\n"
    "while committing is ignored: the commit finishes.\n\n"
    "Exit status: 0 imported, 1 failed, 2 bad usage, 128 + N interrupted by\n"
    "signal N (the store is complete up to what it reports).\n";

static int run(int argc, char **argv);
const cli_cmd cmd_import = {"import", synopsis, help, run};

enum { FMT_NONE, FMT_LACKEY, FMT_CSV, FMT_SQLITE };
enum { OPT_REPORT = 256, OPT_STREAMS };
/* Returned by the sink (positive: MH_E* are negative) once a stop signal
 * arrived, after it stored its batch: the parser stops there. */
#define IMPORT_STOPPED 1

typedef struct import_ctx {
    mh_writer *w;
    uint64_t commit_every; /* 0 = library's automatic commits */
    uint64_t since_commit;
    uint64_t appended;
    uint64_t reported;     /* last committed count printed */
    uint64_t last_t;       /* transition of the last access appended */
    int report;
    int writer_rc;         /* the writer's error, when it failed (not the parser) */
    int declared;          /* a stream was declared by sink(): last_declared */
    uint32_t last_declared;
    cli_progress prog;
} import_ctx;

static void report_commits(import_ctx *c) {
    if (!c->report)
        return;
    uint64_t done = mh_writer_committed(c->w);
    if (done != c->reported) {
        c->reported = done;
        printf("committed %llu\n", (unsigned long long)done);
        fflush(stdout);
    }
}

/* Appends a parser batch, committing exactly at multiples of commit_every. */
static int sink(void *ctx, const mh_access *a, size_t n) {
    import_ctx *c = ctx;
    while (n > 0) {
        size_t take = n;
        if (c->commit_every && take > c->commit_every - c->since_commit)
            take = (size_t)(c->commit_every - c->since_commit);
        size_t bad = take;
        int rc = mh_writer_append_batch(c->w, a, take, &bad);
        if (rc == MH_ENOSTREAM && bad < take &&
            !(c->declared && c->last_declared == a[bad].stream)) {
            /* the first access of a stream the store does not have yet:
             * declare it (kind other, nothing known about it) and retry.
             * Asking the writer, not a list of our own, keeps the
             * descriptions of the streams an appended store has. */
            mh_stream_info si;
            mh_stream_info_init(&si);
            si.id = a[bad].stream;
            rc = mh_writer_stream_declare(c->w, &si);
            if (rc)
                return c->writer_rc = rc;
            c->declared = 1; /* refused again after this: an error, not a loop */
            c->last_declared = si.id;
            continue;
        }
        if (rc)
            return c->writer_rc = rc;
        c->appended += take;
        c->since_commit += take;
        c->last_t = a[take - 1].transition;
        a += take;
        n -= take;
        if (c->commit_every && c->since_commit == c->commit_every) {
            rc = mh_writer_commit(c->w);
            if (rc)
                return c->writer_rc = rc;
            c->since_commit = 0;
        }
        report_commits(c);
    }
    cli_progress_update(&c->prog, c->appended);
    return cli_stop ? IMPORT_STOPPED : 0;
}

/* CSV window column: the parser handed every access before the change to
 * sink() already. */
static int window_sink(void *ctx, int in_window, uint64_t window) {
    import_ctx *c = ctx;
    int rc = in_window ? mh_writer_window_begin(c->w, window) : mh_writer_window_end(c->w);
    if (rc)
        return c->writer_rc = rc;
    return 0;
}

/* Pushes the whole of in through a lackey or CSV parser, whole lines at a
 * time. Returns 0, a parser or sink error, or IMPORT_STOPPED when a stop
 * signal arrived (the parser then holds whole lines only). */
static int feed_text(FILE *in, mh_lackey_parser *lp, mh_csv_parser *cp,
                     int *read_errno) {
    enum { BUF = 1 << 20 };
    char *buf = malloc(BUF);
    if (buf == NULL)
        return MH_ENOMEM;
    int fd = fileno(in);
    int rc = 0;
    size_t have = 0; /* bytes of an unfinished line kept at the front of buf */
    for (;;) {
        if (cli_stop) {
            rc = IMPORT_STOPPED;
            break;
        }
        /* a pipe may stay silent: wait in steps, to see a stop signal even
         * when it was delivered to one of the writer's threads */
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) == 0)
            continue;
        ssize_t got = read(fd, buf + have, BUF - have);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            *read_errno = errno;
            rc = MH_EIO;
            break;
        }
        if (got == 0) {
            if (have)
                rc = lp ? mh_lackey_feed(lp, buf, have) : mh_csv_feed(cp, buf, have);
            if (rc == 0)
                rc = lp ? mh_lackey_finish(lp) : mh_csv_finish(cp);
            break;
        }
        size_t len = have + (size_t)got, upto = len;
        while (upto > 0 && buf[upto - 1] != '\n')
            upto--;
        if (upto == 0 && len == BUF)
            upto = len; /* no newline in a whole buffer: the parser judges it */
        rc = upto ? (lp ? mh_lackey_feed(lp, buf, upto) : mh_csv_feed(cp, buf, upto)) : 0;
        if (rc)
            break;
        have = len - upto;
        memmove(buf, buf + upto, have);
    }
    free(buf);
    return rc;
}

/* After a stop: stores what the parser holds (whole lines), then drops the
 * last transition, which the stop may have cut, unless it is committed.
 * finish() fails harmlessly when the parser already stopped on the sink's
 * IMPORT_STOPPED (MH_ESTATE) or no CSV header came yet (MH_ECORRUPT). */
static int stop_cleanly(import_ctx *c, mh_lackey_parser *lp, mh_csv_parser *cp) {
    if (lp || cp) {
        int rc = lp ? mh_lackey_finish(lp) : mh_csv_finish(cp);
        if (rc != 0 && rc != IMPORT_STOPPED && rc != MH_ESTATE && rc != MH_ECORRUPT)
            return rc;
    }
    if (c->appended == 0)
        return 0;
    int rc = mh_writer_discard_from(c->w, c->last_t);
    return rc == MH_ECOMMITTED ? 0 : rc;
}

/* The descriptions of --streams FILE (import.h mh_streams_parse), read
 * whole before the store is touched, so a bad file leaves nothing behind;
 * names are made UTF-8 as file names are (SPEC.md 7.2). 0, or 1 after
 * printing the error. */
static int load_streams(const cli_cmd *cmd, const char *path, mh_stream_info **out,
                        size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return cli_fail(cmd, "cannot open streams file '%s': %s", path, strerror(errno)), 1;
    char *buf = NULL, err[512] = "";
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len == cap) {
            char *b = cap < (64u << 20) ? realloc(buf, cap ? 2 * cap : 65536) : NULL;
            if (!b) {
                rc = cap < (64u << 20) ? MH_ENOMEM : MH_EINVAL;
                break;
            }
            buf = b;
            cap = cap ? 2 * cap : 65536;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (rc == 0 && ferror(f))
        rc = MH_EIO;
    fclose(f);
    if (rc == 0)
        rc = mh_streams_parse(buf, len, out, n, err, sizeof err);
    free(buf);
    for (size_t i = 0; rc == 0 && i < *n; i++) {
        if (!(*out)[i].name)
            continue;
        char *fixed = cli_utf8_fix((*out)[i].name);
        if (!fixed) {
            rc = MH_ENOMEM;
            break;
        }
        free((char *)(*out)[i].name);
        (*out)[i].name = fixed;
    }
    if (rc == 0)
        return 0;
    mh_streams_free(*out, *n);
    *out = NULL;
    *n = 0;
    cli_fail(cmd, "streams file '%s': %s", path,
             rc == MH_ECORRUPT ? err
             : rc == MH_EINVAL ? "larger than 64 MiB"
             : rc == MH_EIO    ? strerror(errno)
                               : mh_strerror(rc));
    return 1;
}

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"append", no_argument, NULL, 'a'},
        {"exec", no_argument, NULL, 'x'},
        {"commit-every", required_argument, NULL, 'c'},
        {"report-commits", no_argument, NULL, OPT_REPORT},
        {"streams", required_argument, NULL, OPT_STREAMS},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_import;
    int fmt = FMT_NONE, append = 0, exec = 0, quiet = 0, report = 0, installed = 0;
    uint64_t every = 0;
    const char *streams_file = NULL;
    int c;
    while ((c = cli_getopt(cmd, argc, argv, "f:axc:qh", longopts)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "lackey") == 0)
                fmt = FMT_LACKEY;
            else if (strcmp(optarg, "csv") == 0)
                fmt = FMT_CSV;
            else if (strcmp(optarg, "sqlite") == 0)
                fmt = FMT_SQLITE;
            else
                return cli_usage_error(cmd, "unknown format '%s' (lackey, csv or sqlite)", optarg);
            break;
        case 'a': append = 1; break;
        case 'x': exec = 1; break;
        case 'c':
            if (cli_parse_u64(optarg, &every) || every == 0)
                return cli_usage_error(cmd, "bad --commit-every '%s' (a number >= 1)", optarg);
            break;
        case OPT_REPORT: report = 1; break;
        case OPT_STREAMS: streams_file = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': return cli_help(cmd);
        default: return CLI_USAGE;
        }
    }
    if (fmt == FMT_NONE)
        return cli_usage_error(cmd, "missing --format (lackey, csv or sqlite)");
    if (argc - optind != 2)
        return cli_usage_error(cmd, argc - optind < 2 ? "missing INPUT or STORE"
                                                      : "too many arguments");
    const char *input = argv[optind], *store = argv[optind + 1];
    if (exec && fmt != FMT_LACKEY)
        return cli_usage_error(cmd, "--exec applies to --format lackey only");
#ifndef MH_WITH_SQLITE
    if (fmt == FMT_SQLITE)
        return cli_fail(cmd, "this memhist was built without SQLite support");
#endif
    if (fmt == FMT_SQLITE && strcmp(input, "-") == 0)
        return cli_usage_error(cmd, "--format sqlite needs a file, not '-'");

    /* Read the stream descriptions and open the input before touching the
     * store: a bad file or a missing input must not leave an empty store. */
    mh_stream_info *streams = NULL;
    size_t nstreams = 0;
    if (streams_file && load_streams(cmd, streams_file, &streams, &nstreams))
        return CLI_FAIL;
    FILE *in = NULL;
    char err[512] = "";
#ifdef MH_WITH_SQLITE
    mh_sqlite_source *src = NULL;
#endif
    if (fmt == FMT_SQLITE) {
#ifdef MH_WITH_SQLITE
        int orc = 0;
        src = mh_sqlite_open(input, &orc, err, sizeof err);
        if (src == NULL) {
            mh_streams_free(streams, nstreams);
            return cli_fail(cmd, "%s: %s", input, err);
        }
#endif
    } else {
        in = cli_open_in(input);
        if (in == NULL) {
            mh_streams_free(streams, nstreams);
            return cli_fail(cmd, "cannot open '%s': %s", input, strerror(errno));
        }
    }

    int existed = cli_exists(store);
    int status = CLI_FAIL;
    mh_writer *w = NULL;
    mh_lackey_parser *lp = NULL;
    mh_csv_parser *cp = NULL;
    if (existed && !append) {
        cli_fail(cmd, "'%s' already exists (use --append to add to a store)", store);
        goto done;
    }
    mh_writer_options opt;
    mh_writer_options_init(&opt);
    if (every)
        opt.commit_accesses = 0; /* we commit ourselves, at exact multiples */
    char werr[MH_ERRMSG_MAX] = "";
    int rc = mh_writer_open_ex(store, append ? (MH_CREATE | MH_APPEND) : MH_CREATE, &opt, &w,
                               werr, sizeof werr);
    if (rc) {
        cli_fail(cmd, "cannot %s store '%s': %s", existed ? "open" : "create", store,
                 cli_open_error(rc, werr));
        goto done;
    }
    static const char *const fmt_names[] = {"", "lackey", "csv", "sqlite"};
    rc = mh_writer_set_meta(w, "importer", "memhist import");
    if (rc == 0)
        rc = mh_writer_set_meta(w, "import_format", fmt_names[fmt]);
    if (rc == 0) { /* a file name is any bytes: stored as UTF-8 (SPEC.md 7.2) */
        char *source = cli_utf8_fix(strcmp(input, "-") ? input : "(stdin)");
        rc = source ? mh_writer_set_meta(w, "import_source", source) : MH_ENOMEM;
        free(source);
    }
    if (rc == 0 && fmt == FMT_LACKEY)
        rc = mh_writer_set_meta(w, "tracer", "valgrind-lackey");
    if (rc) {
        mh_writer_errmsg(w, werr, sizeof werr);
        cli_fail(cmd, "cannot set metadata: %s", cli_lib_error(rc, werr));
        goto abandon;
    }
    /* --streams: declared before any access (a stream already in an
     * appended store takes the new description: the newest one wins) */
    for (size_t i = 0; i < nstreams; i++) {
        rc = mh_writer_stream_declare(w, &streams[i]);
        if (rc) {
            mh_writer_errmsg(w, werr, sizeof werr);
            cli_fail(cmd, "streams file '%s': cannot declare stream %u: %s", streams_file,
                     streams[i].id, cli_lib_error(rc, werr));
            goto abandon;
        }
    }

    if (cli_stop_install() != 0) {
        cli_fail(cmd, "sigaction: %s", strerror(errno));
        goto abandon;
    }
    installed = 1;
    import_ctx ctx = {.w = w, .commit_every = every, .report = report};
    uint64_t base = mh_writer_committed(w);
    ctx.reported = base;
    cli_progress_init(&ctx.prog, "import:", quiet);
    double t0 = cli_now();
    int read_errno = 0;
    if (fmt == FMT_SQLITE) {
#ifdef MH_WITH_SQLITE
        if (every)
            mh_sqlite_set_batch(src, every < MH_IMPORT_BATCH ? (size_t)every : 0);
        rc = mh_sqlite_run(src, sink, &ctx, err, sizeof err);
#endif
    } else {
        if (fmt == FMT_LACKEY)
            lp = mh_lackey_new(exec ? MH_IMPORT_EXEC : 0, sink, &ctx);
        else
            cp = mh_csv_new(0, sink, &ctx);
        if (cp)
            mh_csv_set_window_fn(cp, window_sink);
        if (lp == NULL && cp == NULL) {
            cli_fail(cmd, "%s", mh_strerror(MH_ENOMEM));
            goto abandon;
        }
        if (every && every < MH_IMPORT_BATCH) {
            if (lp)
                mh_lackey_set_batch(lp, (size_t)every);
            else
                mh_csv_set_batch(cp, (size_t)every);
        }
        rc = feed_text(in, lp, cp, &read_errno);
        if (rc == MH_EIO && read_errno)
            snprintf(err, sizeof err, "read error: %s", strerror(read_errno));
        else if (rc)
            snprintf(err, sizeof err, "%s", lp ? mh_lackey_error(lp) : mh_csv_error(cp));
    }
    cli_progress_done(&ctx.prog);
    int stopped = 0;
    if (rc == 0 && cli_stop) {
        stopped = (int)cli_stop; /* came as the input ended: all of it is in */
    } else if (rc == IMPORT_STOPPED) {
        rc = stop_cleanly(&ctx, lp, cp);
        if (rc) {
            mh_writer_errmsg(w, werr, sizeof werr);
            cli_fail(cmd, "storing the accesses read before the signal failed: %s",
                     cli_lib_error(rc, werr));
            goto abandon;
        }
        stopped = (int)cli_stop;
    }
    if (rc) {
        /* the parser says which line; a failure of the writer itself
         * (I/O, space) adds the library's detail */
        if (ctx.writer_rc && ctx.writer_rc != MH_EINVAL && ctx.writer_rc != MH_EORDER &&
            mh_writer_errmsg(w, werr, sizeof werr) > 0)
            cli_fail(cmd, "%s: %s: %s", strcmp(input, "-") ? input : "(stdin)",
                     err[0] ? err : mh_strerror(rc), werr);
        else
            cli_fail(cmd, "%s: %s", strcmp(input, "-") ? input : "(stdin)",
                     err[0] ? err : cli_errstr(rc));
        goto abandon;
    }
    /* commit before close: a failed close leaves no handle to ask why. A
     * second signal from here on only sets cli_stop again: the commit
     * finishes */
    rc = mh_writer_commit(w);
    if (rc) {
        mh_writer_errmsg(w, werr, sizeof werr);
        cli_fail(cmd, "final commit of '%s' failed: %s", store, cli_lib_error(rc, werr));
        goto abandon;
    }
    uint64_t total = mh_writer_committed(w);
    rc = mh_writer_close(w);
    w = NULL;
    if (rc) {
        cli_fail(cmd, "final commit of '%s' failed: %s", store, cli_errstr(rc));
        goto done;
    }
    if (stopped) {
        if (report && total != ctx.reported)
            printf("committed %llu\n", (unsigned long long)total);
        fflush(stdout);
        fprintf(stderr, "memhist import: interrupted: %llu accesses committed\n",
                (unsigned long long)total);
        status = 128 + stopped;
        goto done;
    }
    if (report && base + ctx.appended != ctx.reported) /* the close committed the rest */
        printf("committed %llu\n", (unsigned long long)(base + ctx.appended));
    double el = cli_now() - t0;
    if (!quiet)
        fprintf(stderr, "imported %llu accesses in %.2f s (%.0f accesses/s) into %s\n",
                (unsigned long long)ctx.appended, el, el > 0 ? (double)ctx.appended / el : 0.0,
                store);
    status = fflush(stdout) == 0 && !ferror(stdout) ? CLI_OK : CLI_FAIL;
    goto done;

abandon:
    if (w != NULL) {
        uint64_t committed = mh_writer_committed(w);
        mh_writer_abandon(w);
        w = NULL;
        if (!existed && committed == 0)
            cli_remove_store(store);
        else if (!quiet && committed > 0)
            fprintf(stderr, "memhist import: %s keeps the %llu accesses committed before the error\n",
                    store, (unsigned long long)committed);
    }
done:
    mh_streams_free(streams, nstreams);
    if (installed)
        cli_stop_restore();
    mh_lackey_free(lp);
    mh_csv_free(cp);
#ifdef MH_WITH_SQLITE
    mh_sqlite_close(src);
#endif
    if (in != NULL)
        cli_close(in);
    return status;
}
