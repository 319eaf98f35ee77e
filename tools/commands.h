/*
 * commands.h - the memhist subcommands, one file each (cmd_<name>.c), and
 * the option scanner they share.
 */
#ifndef MH_COMMANDS_H
#define MH_COMMANDS_H

#include <getopt.h>

#include "cli_util.h"

extern const cli_cmd cmd_import;
extern const cli_cmd cmd_query;
extern const cli_cmd cmd_inspect;
extern const cli_cmd cmd_fsck;
extern const cli_cmd cmd_export;
extern const cli_cmd cmd_record;
extern const cli_cmd cmd_split;
extern const cli_cmd cmd_upgrade;

/* Returned by cli_getopt after it printed a usage error: exit CLI_USAGE. */
#define CLI_OPT_BAD (-2)

/* getopt_long() with memhist's messages: returns the next option (its val),
 * -1 after the last one (optind then indexes the first operand), or
 * CLI_OPT_BAD after printing "unknown option" / "missing argument". Start
 * shortopts with '+' to stop at the first operand. */
int cli_getopt(const cli_cmd *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts);

#endif /* MH_COMMANDS_H */
