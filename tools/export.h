/*
 * export.h - writing a store out in other formats (used by cmd_export.c).
 */
#ifndef MH_EXPORT_H
#define MH_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cli_util.h"
#include "memhist.h"

/* Writes every access of r into a new SQLite database at path in the
 * legacy schema (import.h), with slices and chunks as the store keeps them
 * and accesses in id order (rowid = id + 1). path must not exist. On
 * failure the partial database is removed. Returns 0, or an MH_E* code
 * with a one-line message in err. Only with MH_WITH_SQLITE. */
int mh_export_sqlite(const mh_reader *r, const char *path, cli_progress *prog,
                     uint64_t *written, char *err, size_t errlen);

#endif /* MH_EXPORT_H */
