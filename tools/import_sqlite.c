/*
 * import_sqlite.c - reads the legacy SQLite layout (tables slices, chunks,
 * accesses; see import.h) in rowid order and hands validated accesses to a
 * sink. Built only with MH_WITH_SQLITE.
 *
 * The database is as untrusted as any input file: every column of every
 * row is type-checked and range-checked, and a bad row is reported by its
 * rowid. 64-bit values live in SQLite's signed int8 and are taken back as
 * the same bit pattern (export writes them that way).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "import.h"
#include "import_util.h"

struct mh_sqlite_source {
    sqlite3 *db;
    size_t batch;
};

void mh_sqlite_set_batch(mh_sqlite_source *src, size_t n) { src->batch = n; }

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *errbuf, size_t errlen, const char *fmt, ...) {
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
}

/* Checks that table has every column of want (a NULL-terminated list).
 * Returns 0, or MH_ENOTSTORE with a message. */
static int check_table(sqlite3 *db, const char *table, const char *const *want, char *errbuf,
                       size_t errlen) {
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        int code = sqlite3_errcode(db);
        set_err(errbuf, errlen, "not an SQLite database: %s", sqlite3_errmsg(db));
        return code == SQLITE_NOTADB ? MH_ENOTSTORE : MH_EIO;
    }
    unsigned found = 0, ncols = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        ncols++;
        for (unsigned i = 0; want[i]; i++)
            if (name && strcmp(name, want[i]) == 0)
                found |= 1u << i;
    }
    int step_rc = rc;
    sqlite3_finalize(st);
    if (step_rc != SQLITE_DONE) {
        set_err(errbuf, errlen, "not an SQLite database: %s", sqlite3_errmsg(db));
        return sqlite3_errcode(db) == SQLITE_NOTADB ? MH_ENOTSTORE : MH_EIO;
    }
    if (ncols == 0) {
        set_err(errbuf, errlen, "not the legacy memhist schema: no table '%s'", table);
        return MH_ENOTSTORE;
    }
    for (unsigned i = 0; want[i]; i++) {
        if (!(found & (1u << i))) {
            set_err(errbuf, errlen, "not the legacy memhist schema: table '%s' has no column '%s'",
                    table, want[i]);
            return MH_ENOTSTORE;
        }
    }
    return 0;
}

mh_sqlite_source *mh_sqlite_open(const char *db_path, int *rc, char *errbuf, size_t errlen) {
    struct stat stt;
    if (stat(db_path, &stt) != 0) {
        int e = errno;
        set_err(errbuf, errlen, "cannot open: %s", strerror(e));
        *rc = e == ENOENT ? MH_ENOENT : MH_EIO;
        return NULL;
    }
    if (!S_ISREG(stt.st_mode)) {
        set_err(errbuf, errlen, "not an SQLite database: %s", "not a regular file");
        *rc = MH_ENOTSTORE;
        return NULL;
    }
    mh_sqlite_source *src = calloc(1, sizeof *src);
    if (src == NULL) {
        *rc = MH_ENOMEM;
        set_err(errbuf, errlen, "%s", mh_strerror(MH_ENOMEM));
        return NULL;
    }
    int s = sqlite3_open_v2(db_path, &src->db, SQLITE_OPEN_READONLY, NULL);
    if (s != SQLITE_OK) {
        set_err(errbuf, errlen, "cannot open: %s", src->db ? sqlite3_errmsg(src->db) : "");
        *rc = MH_EIO;
        mh_sqlite_close(src);
        return NULL;
    }
    static const char *const slices[] = {"transition_first", "transition_last", NULL};
    static const char *const chunks[] = {"slice_id", "phy_first", "phy_last", "operation", NULL};
    static const char *const accesses[] = {"chunk_id", "transition", "linear", "phy_first",
                                           "size", "operation", NULL};
    *rc = check_table(src->db, "accesses", accesses, errbuf, errlen);
    if (*rc == 0)
        *rc = check_table(src->db, "slices", slices, errbuf, errlen);
    if (*rc == 0)
        *rc = check_table(src->db, "chunks", chunks, errbuf, errlen);
    if (*rc != 0) {
        mh_sqlite_close(src);
        return NULL;
    }
    return src;
}

void mh_sqlite_close(mh_sqlite_source *src) {
    if (src == NULL)
        return;
    sqlite3_close(src->db);
    free(src);
}

static int row_error(char *errbuf, size_t errlen, int64_t rowid, const char *what) {
    if (errbuf && errlen)
        snprintf(errbuf, errlen, "accesses rowid %lld: %s", (long long)rowid, what);
    return MH_ECORRUPT;
}

int mh_sqlite_run(mh_sqlite_source *src, mh_import_sink_fn fn, void *ctx, char *errbuf,
                  size_t errlen) {
    if (src == NULL || fn == NULL)
        return MH_EINVAL;
    static const char sql[] =
        "SELECT rowid, transition, linear, phy_first, size, operation FROM accesses ORDER BY rowid";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(src->db, sql, -1, &st, NULL) != SQLITE_OK) {
        set_err(errbuf, errlen, "cannot read table accesses: %s", sqlite3_errmsg(src->db));
        return MH_ENOTSTORE;
    }
    mh_batch *b = calloc(1, sizeof *b);
    if (b == NULL) {
        sqlite3_finalize(st);
        return MH_ENOMEM;
    }
    b->fn = fn;
    b->ctx = ctx;
    mh_batch_set_limit(b, src->batch);
    int rc = 0, s;
    uint64_t last_t = 0;
    int have = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rowid = sqlite3_column_int64(st, 0);
        if (sqlite3_column_type(st, 1) != SQLITE_INTEGER) {
            rc = row_error(errbuf, errlen, rowid, "transition is not an integer");
            break;
        }
        int lin_type = sqlite3_column_type(st, 2);
        if (lin_type != SQLITE_INTEGER && lin_type != SQLITE_NULL) {
            rc = row_error(errbuf, errlen, rowid, "linear is neither an integer nor NULL");
            break;
        }
        if (sqlite3_column_type(st, 3) != SQLITE_INTEGER) {
            rc = row_error(errbuf, errlen, rowid, "phy_first is not an integer");
            break;
        }
        if (sqlite3_column_type(st, 4) != SQLITE_INTEGER) {
            rc = row_error(errbuf, errlen, rowid, "size is not an integer");
            break;
        }
        if (sqlite3_column_type(st, 5) != SQLITE_INTEGER) {
            rc = row_error(errbuf, errlen, rowid, "operation is not an integer");
            break;
        }
        uint64_t t = (uint64_t)sqlite3_column_int64(st, 1);
        uint64_t phy = (uint64_t)sqlite3_column_int64(st, 3);
        int64_t size = sqlite3_column_int64(st, 4);
        int op = mh_legacy_op_from_bit(sqlite3_column_int64(st, 5));
        if (op < 0) {
            char what[96];
            snprintf(what, sizeof what, "bad operation %lld (execute=1, write=2, read=4)",
                     (long long)sqlite3_column_int64(st, 5));
            rc = row_error(errbuf, errlen, rowid, what);
            break;
        }
        if (size <= 0 || size > (int64_t)UINT32_MAX) {
            char what[96];
            snprintf(what, sizeof what, "bad size %lld (1 .. 2^32-1)", (long long)size);
            rc = row_error(errbuf, errlen, rowid, what);
            break;
        }
        if (phy + (uint64_t)(size - 1) < phy) {
            rc = row_error(errbuf, errlen, rowid, "address range wraps past 2^64");
            break;
        }
        if (have && t < last_t) {
            rc = row_error(errbuf, errlen, rowid, "transition decreases");
            break;
        }
        have = 1;
        last_t = t;
        mh_access *a = mh_batch_slot(b, &rc);
        if (a == NULL) {
            set_err(errbuf, errlen, "storing accesses failed: %s", mh_strerror(rc));
            break;
        }
        a->transition = t;
        a->has_linear = lin_type == SQLITE_INTEGER;
        a->linear = a->has_linear ? (uint64_t)sqlite3_column_int64(st, 2) : 0;
        a->physical = phy;
        a->size = (uint32_t)size;
        a->op = (uint8_t)op;
    }
    if (rc == 0 && s != SQLITE_DONE) {
        set_err(errbuf, errlen, "reading table accesses failed: %s", sqlite3_errmsg(src->db));
        rc = sqlite3_errcode(src->db) == SQLITE_CORRUPT ? MH_ECORRUPT : MH_EIO;
    }
    if (rc == 0) {
        rc = mh_batch_flush(b);
        if (rc)
            set_err(errbuf, errlen, "storing accesses failed: %s", mh_strerror(rc));
    }
    free(b);
    sqlite3_finalize(st);
    return rc;
}
