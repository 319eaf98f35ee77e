/*
 * memhist.c - the memhist command: dispatches to one subcommand per file
 * (cmd_*.c). Global options: --help, --version.
 */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

static const cli_cmd *const commands[] = {
    &cmd_import, &cmd_query, &cmd_inspect, &cmd_fsck, &cmd_export, &cmd_record,
    &cmd_split, &cmd_upgrade,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_usage(FILE *f) {
    fprintf(f, "usage: memhist COMMAND [OPTIONS] [ARGS]\n"
               "       memhist --help | --version\n\n"
               "The complete memory-access history of a traced program.\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %s\n", commands[i]->synopsis);
    fprintf(f, "\nRun 'memhist COMMAND --help' for the options of a command.\n"
               "Exit status: 0 success, 1 failure, 2 bad usage (see memhist(1)).\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "memhist: missing command\n");
        print_usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        if (strcmp(name, "help") == 0 && argc > 2) {
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(argv[2], commands[i]->name) == 0)
                    return cli_help(commands[i]);
            fprintf(stderr, "memhist: unknown command '%s'\n", argv[2]);
            return CLI_USAGE;
        }
        print_usage(stdout);
        return fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
    }
    if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
        /* the tool's own version, then the library's as linked at run time
         * (a shared libmemhist may be another build than the header's) */
        printf("memhist %s (library %s, format %d.%d)\n", MH_VERSION_STRING,
               mh_version_string(), MH_FORMAT_MAJOR, MH_FORMAT_MINOR);
        return fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(name, commands[i]->name) == 0)
            return commands[i]->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "memhist: unknown command '%s'\n", name);
    print_usage(stderr);
    return CLI_USAGE;
}
