/*
 * cli_util.h - what every memhist subcommand shares: number and option
 * parsing, the error conventions, and the progress line.
 *
 * Exit codes (see memhist.1.md, EXIT STATUS):
 *   0  success;
 *   1  the command failed (I/O, bad input data, a damaged store, ...);
 *   2  bad usage (unknown option, bad number, missing argument, ...).
 */
#ifndef MH_CLI_UTIL_H
#define MH_CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memhist.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

/* A subcommand: name, one-line synopsis (shown after a usage error) and the
 * full help text (printed by -h/--help). */
typedef struct cli_cmd {
    const char *name;
    const char *synopsis;
    const char *help;
    int (*run)(int argc, char **argv);
} cli_cmd;

/* Prints "memhist NAME: <msg>", the synopsis and a hint to stderr; returns
 * CLI_USAGE. */
int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "memhist NAME: error: <msg>" to stderr; returns CLI_FAIL. */
int cli_fail(const cli_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints the help text to stdout; returns CLI_OK (or CLI_FAIL when stdout
 * cannot be written). */
int cli_help(const cli_cmd *cmd);

/* Parses a whole string as an unsigned 64-bit number: decimal, or hex after
 * 0x/0X. Returns 0, or -1 (empty, bad digit, sign, spaces, overflow). */
int cli_parse_u64(const char *s, uint64_t *v);

/* Parses "A:B" (each as cli_parse_u64). Returns 0, or -1. Does not check
 * A <= B: the caller reports that separately. */
int cli_parse_range(const char *s, uint64_t *a, uint64_t *b);

/* Parses a comma-separated list of stream ids ("0,3,12"; each as
 * cli_parse_u64, at most MH_STREAM_MAX, none twice, at least one) into a
 * malloc'ed array *ids of *n entries (the caller frees it). Returns 0, -1
 * when bad, -2 when out of memory. */
int cli_parse_streams(const char *s, uint32_t **ids, uint32_t *n);

/* Parses an operation set made of the letters r, w, x (each at most once,
 * any order, at least one). Returns the MH_OPS_* mask, or 0 when bad. */
unsigned cli_parse_ops(const char *s);

/* Letter of an operation: 'r', 'w', 'x', or '?'. */
char cli_op_letter(unsigned op);

/* Monotonic seconds. */
double cli_now(void);

/* Progress on stderr, shown only when stderr is a terminal and not quiet:
 * "\r<what> 1234567 accesses, 2.1 M/s, 3.4 s". Updates at most 4 times a
 * second; cli_progress_done erases the line. */
typedef struct cli_progress {
    int enabled;
    double start, last;
    const char *what;
} cli_progress;

void cli_progress_init(cli_progress *p, const char *what, int quiet);
void cli_progress_update(cli_progress *p, uint64_t done);
void cli_progress_done(cli_progress *p);

/* Opens path for reading ("-" = stdin); NULL with errno on failure. */
FILE *cli_open_in(const char *path);
/* Opens path for writing ("-" = stdout); NULL with errno on failure. */
FILE *cli_open_out(const char *path);
/* Closes a stream from cli_open_in/out (stdin/stdout are only flushed);
 * returns 0, or -1 with errno when a write or the close failed. */
int cli_close(FILE *f);

/* Removes a store directory this process created: only the entries a
 * store is made of (MANIFEST, MANIFEST.tmp, LOCK, seg-*.mhs, *.tmp), then
 * the directory itself (which fails, harmlessly, if anything else is in
 * it). Returns 0 when the directory is gone. */
int cli_remove_store(const char *path);

/* Whether path exists (any kind of file). */
int cli_exists(const char *path);

/* The store-opening error message for rc, with the hint users need:
 * "cannot open store 'X': not a memhist store or file". */
const char *cli_store_error(int rc);

/* mh_strerror(rc), followed by strerror(errno) for MH_EIO and MH_ENOSPC.
 * Returns a static buffer: use it before the next call. */
const char *cli_errstr(int rc);

/* What to print for a library failure: the library's detail line (from
 * mh_*_errmsg or an _ex call) when it gave one, else cli_errstr(rc). */
const char *cli_lib_error(int rc, const char *detail);

/* What to print after "cannot open store 'X': ": the kind of failure
 * (cli_store_error) then ": " and the library's detail (which file, where,
 * why); a missing store (or no detail) gets the kind alone. Static buffer,
 * as cli_errstr. */
const char *cli_open_error(int rc, const char *detail);

/* Writes s as a JSON string literal (quotes, escapes; valid UTF-8 is
 * passed through, each byte of no valid UTF-8 sequence becomes U+FFFD, so
 * the output is always UTF-8: SPEC.md 7.2). NULL writes "". */
void cli_json_string(FILE *f, const char *s);

/* Length of the valid UTF-8 sequence (RFC 3629: no overlong form,
 * surrogate or code point past U+10FFFF) that s begins, 0 when the byte at
 * s begins none. s is NUL-terminated and *s != 0. */
size_t cli_utf8_seq(const char *s);

/* A copy of s (NULL: "") with each byte that belongs to no valid UTF-8
 * sequence replaced by U+FFFD (EF BF BD), as SPEC.md 7.2 has the CLI store
 * and show file names and command lines; NULL when out of memory. */
char *cli_utf8_fix(const char *s);

#endif /* MH_CLI_UTIL_H */
