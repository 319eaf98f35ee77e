/*
 * store_copy.h - copying from a reader to a new store: what `memhist split`
 * and `memhist upgrade` share (metadata, streams, accesses).
 */
#ifndef MH_STORE_COPY_H
#define MH_STORE_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "cli_util.h"
#include "memhist.h"

/* Copies r's metadata and every stream of r (description and key/values)
 * to w. Returns 0 or an MH_E* code with the detail in err. */
int copy_meta_and_streams(const mh_reader *r, mh_writer *w, char *err, size_t errlen);

/* Appends to w every access q matches in r, in id order (q must go
 * forward); *copied counts them. Returns 0 or an MH_E* code with the
 * detail (the reader's or the writer's) in err. */
int copy_accesses(const mh_reader *r, const mh_query *q, mh_writer *w, cli_progress *prog,
                  uint64_t *copied, char *err, size_t errlen);

/* Appends every access of r to w (a new store: the ids stay the same), with
 * r's windows begun and ended around their accesses, so the copy has the
 * same window table. Returns 0 or an MH_E* code with the detail in err. */
int copy_all_with_windows(const mh_reader *r, mh_writer *w, cli_progress *prog,
                          uint64_t *copied, char *err, size_t errlen);

/* Creates OUT, a new store, for cmd's copy into it. OUT is checked first
 * so that a failure (which removes OUT) never removes someone else's
 * store. Returns CLI_OK with *w, or CLI_FAIL with the error reported. */
int store_copy_create(const cli_cmd *cmd, const char *out, mh_writer **w);

/* Ends cmd's copy into OUT: with rc 0, commits and closes w; otherwise,
 * or when the commit or the close fails, reports the error (rc's detail
 * in err), abandons w and removes OUT, so that a failed copy leaves
 * nothing behind. w is gone either way. Returns CLI_OK or CLI_FAIL. */
int store_copy_finish(const cli_cmd *cmd, mh_writer *w, const char *out, int rc, char *err,
                      size_t errlen);

/* A query matching every access of a store, in id order. */
void store_copy_query_all(mh_query *q);

#endif /* MH_STORE_COPY_H */
