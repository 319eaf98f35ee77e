/*
 * cli_signal.h - how `memhist record` and `memhist import` stop on SIGINT,
 * SIGTERM and SIGHUP: the signal only sets a flag; the command notices it,
 * stops reading, commits what it has and exits 128 + the signal number
 * (130, 143, 129) after printing "memhist CMD: interrupted: N accesses
 * committed". The handlers stay in place until the commit is done, so a
 * second signal while committing is only noted: the commit finishes and
 * the store stays whole (SIGKILL is the way to abandon a commit; the store
 * then keeps its previous commit, as after any crash).
 */
#ifndef MH_CLI_SIGNAL_H
#define MH_CLI_SIGNAL_H

#include <signal.h>

/* 0, or the first stop signal received since cli_stop_install(). */
extern volatile sig_atomic_t cli_stop;

/* Installs the handlers (without SA_RESTART: a blocking read or poll
 * returns EINTR). Returns 0, or -1 with errno. */
int cli_stop_install(void);

/* Puts back the dispositions cli_stop_install() replaced. */
void cli_stop_restore(void);

#endif /* MH_CLI_SIGNAL_H */
