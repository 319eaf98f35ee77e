/*
 * cmd_export.c - `memhist export`: a store written out as the legacy SQLite
 * layout, as CSV (the import format) or as JSON lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "export.h"
#include "import.h"

static const char synopsis[] = "memhist export STORE --format sqlite|csv|jsonl OUT [--force] [--quiet]";
static const char help[] =
    "Writes every access of STORE, in id order, to OUT ('-' = standard output\n"
    "for csv and jsonl).\n\n"
    "formats:\n"
    "  sqlite   the legacy tables slices/chunks/accesses with their indexes;\n"
    "           operation bits execute=1 write=2 read=4, linear NULL when absent,\n"
    "           access rowid = id + 1; 64-bit values as SQLite int8 bit patterns\n"
    "  csv      the import format: transition,linear,physical,size,op (decimal),\n"
    "           then stream when the store has a stream other than 0, pc when\n"
    "           it has pc values (empty when absent), window when it has\n"
    "           windows (empty outside them)\n"
    "  jsonl    one object per line: id, transition, linear (or null), physical,\n"
    "           size, op, stream, pc (or null), and window (or null) when the\n"
    "           store has windows\n\n"
    "options:\n"
    "  -f, --format FMT   output format (required)\n"
    "      --force        overwrite OUT if it exists (csv, jsonl; sqlite never\n"
    "                     overwrites)\n"
    "  -q, --quiet        no progress, no summary\n"
    "  -h, --help         this help\n\n"
    "Exit status: 0 written, 1 failed (OUT is removed), 2 bad usage.\n";

static int run(int argc, char **argv);
const cli_cmd cmd_export = {"export", synopsis, help, run};

enum { FMT_NONE, FMT_SQLITE, FMT_CSV, FMT_JSONL };
enum { OPT_FORCE = 256 };

/* What the store has beyond the five base columns. */
typedef struct export_cols {
    int stream, pc;
    size_t nwin;           /* windows, in id order = access id order */
    mh_window_info *win;
} export_cols;

static int store_columns(const mh_reader *r, export_cols *c, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    size_t ns = mh_reader_stream_count(r);
    int rc = 0;
    for (size_t i = 0; i < ns && rc == 0; i++) {
        mh_stream_info si = {.struct_size = sizeof si};
        rc = mh_reader_stream_info(r, i, &si);
        c->stream |= rc == 0 && si.id != 0;
    }
    size_t nseg = mh_reader_segment_count(r);
    for (size_t i = 0; i < nseg && rc == 0; i++) {
        mh_segment_info si = {.struct_size = sizeof si};
        rc = mh_reader_segment_info(r, i, &si);
        c->pc |= rc == 0 && si.has_pc;
    }
    c->nwin = mh_reader_window_count(r);
    if (rc == 0 && c->nwin) {
        c->win = calloc(c->nwin, sizeof *c->win);
        if (c->win == NULL)
            return MH_ENOMEM;
        for (size_t i = 0; i < c->nwin && rc == 0; i++) {
            c->win[i].struct_size = sizeof c->win[i];
            rc = mh_reader_window_info(r, i, &c->win[i]);
        }
    }
    if (rc)
        mh_reader_errmsg(r, err, errlen);
    return rc;
}

/* A library failure leaves its detail in err (empty for a write error). */
static int export_text(const mh_reader *r, FILE *out, int fmt, cli_progress *prog,
                       uint64_t *written, char *err, size_t errlen) {
    export_cols cols;
    int rc = store_columns(r, &cols, err, errlen);
    if (rc) {
        free(cols.win);
        return rc;
    }
    mh_query q;
    mh_query_init(&q);
    q.start = 0;
    q.addr_first = 0;
    q.addr_last = UINT64_MAX;
    q.ops = MH_OPS_ALL;
    enum { N = 4096 };
    mh_access *buf = malloc(N * sizeof *buf);
    if (buf == NULL) {
        free(cols.win);
        return MH_ENOMEM;
    }
    mh_cursor *cur = NULL;
    rc = mh_cursor_open(r, &q, &cur);
    if (rc)
        mh_reader_errmsg(r, err, errlen);
    if (rc == 0 && fmt == FMT_CSV)
        fprintf(out, "%s%s%s%s\n", MH_CSV_HEADER, cols.stream ? ",stream" : "",
                cols.pc ? ",pc" : "", cols.nwin ? ",window" : "");
    size_t wi = 0; /* the window the next access may be in */
    while (rc == 0) {
        size_t n = 0;
        rc = mh_cursor_next(cur, buf, N, &n);
        if (rc)
            mh_cursor_errmsg(cur, err, errlen);
        if (rc || n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            const mh_access *a = &buf[i];
            int csv = fmt == FMT_CSV;
            char lin[24], pc[24], win[24];
            if (a->has_linear)
                snprintf(lin, sizeof lin, "%" PRIu64, a->linear);
            else
                strcpy(lin, csv ? "" : "null");
            if (a->has_pc)
                snprintf(pc, sizeof pc, "%" PRIu64, a->pc);
            else
                strcpy(pc, csv ? "" : "null");
            while (wi < cols.nwin && a->id >= cols.win[wi].id_first + cols.win[wi].accesses)
                wi++;
            if (wi < cols.nwin && a->id >= cols.win[wi].id_first)
                snprintf(win, sizeof win, "%" PRIu64, cols.win[wi].window);
            else
                strcpy(win, csv ? "" : "null");
            if (csv) {
                fprintf(out, "%" PRIu64 ",%s,%" PRIu64 ",%u,%c", a->transition, lin,
                        a->physical, a->size, cli_op_letter(a->op));
                if (cols.stream)
                    fprintf(out, ",%u", a->stream);
                if (cols.pc)
                    fprintf(out, ",%s", pc);
                if (cols.nwin)
                    fprintf(out, ",%s", win);
                fputc('\n', out);
            } else {
                fprintf(out,
                        "{\"id\":%" PRIu64 ",\"transition\":%" PRIu64 ",\"linear\":%s,"
                        "\"physical\":%" PRIu64 ",\"size\":%u,\"op\":\"%c\",\"stream\":%u,"
                        "\"pc\":%s",
                        a->id, a->transition, lin, a->physical, a->size, cli_op_letter(a->op),
                        a->stream, pc);
                if (cols.nwin)
                    fprintf(out, ",\"window\":%s", win);
                fputs("}\n", out);
            }
        }
        *written += n;
        if (ferror(out)) {
            rc = MH_EIO;
            break;
        }
        cli_progress_update(prog, *written);
    }
    mh_cursor_close(cur);
    free(buf);
    free(cols.win);
    return rc;
}

static int run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"force", no_argument, NULL, OPT_FORCE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const cli_cmd *cmd = &cmd_export;
    int fmt = FMT_NONE, force = 0, quiet = 0, c;
    while ((c = cli_getopt(cmd, argc, argv, "f:qh", longopts)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "sqlite") == 0)
                fmt = FMT_SQLITE;
            else if (strcmp(optarg, "csv") == 0)
                fmt = FMT_CSV;
            else if (strcmp(optarg, "jsonl") == 0)
                fmt = FMT_JSONL;
            else
                return cli_usage_error(cmd, "unknown format '%s' (sqlite, csv or jsonl)", optarg);
            break;
        case OPT_FORCE: force = 1; break;
        case 'q': quiet = 1; break;
        case 'h': return cli_help(cmd);
        default: return CLI_USAGE;
        }
    }
    if (fmt == FMT_NONE)
        return cli_usage_error(cmd, "missing --format (sqlite, csv or jsonl)");
    if (argc - optind != 2)
        return cli_usage_error(cmd, argc - optind < 2 ? "missing STORE or OUT" : "too many arguments");
    const char *store = argv[optind], *outp = argv[optind + 1];
    int to_stdout = strcmp(outp, "-") == 0;
    if (fmt == FMT_SQLITE && to_stdout)
        return cli_usage_error(cmd, "--format sqlite needs a file, not '-'");
#ifndef MH_WITH_SQLITE
    if (fmt == FMT_SQLITE)
        return cli_fail(cmd, "this memhist was built without SQLite support");
#endif
    if (!to_stdout && cli_exists(outp) && (fmt == FMT_SQLITE || !force))
        return cli_fail(cmd, "'%s' already exists%s", outp,
                        fmt == FMT_SQLITE ? "" : " (use --force to overwrite)");

    mh_reader *r = NULL;
    char lerr[MH_ERRMSG_MAX] = "";
    int rc = mh_reader_open_ex(store, NULL, &r, lerr, sizeof lerr);
    if (rc)
        return cli_fail(cmd, "cannot open store '%s': %s", store, cli_open_error(rc, lerr));
    cli_progress prog;
    cli_progress_init(&prog, "export:", quiet);
    uint64_t written = 0;
    int status = CLI_OK;
    if (fmt == FMT_SQLITE) {
#ifdef MH_WITH_SQLITE
        char err[512] = "";
        rc = mh_export_sqlite(r, outp, &prog, &written, err, sizeof err);
        cli_progress_done(&prog);
        if (rc)
            status = cli_fail(cmd, "%s", err[0] ? err : cli_errstr(rc));
#endif
    } else {
        FILE *out = cli_open_out(outp);
        if (out == NULL) {
            status = cli_fail(cmd, "cannot create '%s': %s", outp, strerror(errno));
        } else {
            /* Only a regular file is removed after a failure: never a
             * device or a pipe the user named. */
            struct stat st;
            int regular = !to_stdout && fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode);
            rc = export_text(r, out, fmt, &prog, &written, lerr, sizeof lerr);
            int e = errno;
            cli_progress_done(&prog);
            if (cli_close(out) != 0 && rc == 0) {
                rc = MH_EIO;
                e = errno;
            }
            if (rc) {
                if (lerr[0])
                    status = cli_fail(cmd, "%s", lerr);
                else if (rc == MH_EIO)
                    status = cli_fail(cmd, "writing '%s' failed: %s", outp, strerror(e));
                else
                    status = cli_fail(cmd, "reading '%s' failed: %s", store, cli_errstr(rc));
                if (regular)
                    unlink(outp);
            }
        }
    }
    mh_reader_close(r);
    if (status == CLI_OK && !quiet)
        fprintf(stderr, "exported %" PRIu64 " accesses to %s\n", written,
                to_stdout ? "standard output" : outp);
    return status;
}
