/*
 * cli_signal.c - the stop flag of record and import (see cli_signal.h).
 */
#include <string.h>

#include "cli_signal.h"

volatile sig_atomic_t cli_stop;

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP (sizeof stop_signals / sizeof stop_signals[0])
static struct sigaction saved[NSTOP];

static void on_stop(int sig) {
    if (cli_stop == 0) /* the first signal decides the exit status */
        cli_stop = sig;
}

int cli_stop_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    cli_stop = 0;
    for (size_t i = 0; i < NSTOP; i++)
        if (sigaction(stop_signals[i], &sa, &saved[i]) != 0) {
            while (i-- > 0)
                sigaction(stop_signals[i], &saved[i], NULL);
            return -1;
        }
    return 0;
}

void cli_stop_restore(void) {
    for (size_t i = 0; i < NSTOP; i++)
        sigaction(stop_signals[i], &saved[i], NULL);
}
