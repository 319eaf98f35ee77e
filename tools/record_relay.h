/*
 * record_relay.h - the terminal side of `memhist record`: passes the traced
 * program's output on and draws the progress line, so that the two never
 * share a line.
 *
 * The program's stderr (and its stdout when both are the same file, e.g.
 * the same terminal) goes through this process: into a pseudo-terminal when
 * stderr is a terminal (the program still sees a terminal), a pipe
 * otherwise. A thread copies it to the real stderr. Knowing every byte the
 * program writes is what lets the progress line be erased before the
 * program's output and redrawn only when the program's last line is
 * complete. It also keeps the first line written to the relay: when the
 * engine fails before starting the program, that is the engine's own error
 * (valgrind's "Unknown option"), which record quotes in its message.
 */
#ifndef MH_RECORD_RELAY_H
#define MH_RECORD_RELAY_H

#include <stddef.h>
#include <stdint.h>

typedef struct rec_relay rec_relay;

/* Points fds 1 (when it is the same file as fd 2) and 2 of this process at
 * the relay and starts its thread. progress: draw the progress line (only
 * done when stderr is a terminal). Returns NULL when the relay cannot be
 * set up (no pseudo-terminal, out of memory): the program then writes
 * straight to the real fds and there is no progress line. */
rec_relay *rec_relay_start(int progress);

/* Number of accesses recorded so far (any thread). NULL accepted. */
void rec_relay_progress(rec_relay *r, uint64_t done);

/* Prints "memhist record: MSG" on the real stderr, on a line of its own.
 * NULL r: prints to stderr. */
void rec_relay_message(rec_relay *r, const char *msg);

/* Restores fds 1 and 2, copies what the program wrote last, erases the
 * progress line, stops the thread and frees r. The first non-empty line
 * written to the relay is copied to first (size n, "" when none). NULL
 * accepted (first gets ""). */
void rec_relay_stop(rec_relay *r, char *first, size_t n);

#endif /* MH_RECORD_RELAY_H */
