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

#endif /* MH_STORE_COPY_H */
