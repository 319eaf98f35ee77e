/*
 * export_sqlite.c - a store written out in the legacy SQLite layout
 * (slices, chunks, accesses with operation bits x=1 w=2 r=4), so tools
 * written for that layout keep working.
 *
 * Rows are loaded in one transaction with journaling off (the file is new:
 * on failure it is deleted, not recovered), then the indexes are built.
 * Each access gets the rowid of the chunk that holds it: the chunk of its
 * slice and operation whose address range contains its physical address
 * (chunks of one slice and operation never overlap, so it is unique).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "export.h"
#include "import.h"

typedef struct chunk_ref {
    uint64_t phy_first, phy_last;
    int64_t rowid;
    uint8_t op;
} chunk_ref;

static int cmp_chunk(const void *a, const void *b) {
    const chunk_ref *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    return (x->phy_first > y->phy_first) - (x->phy_first < y->phy_first);
}

typedef struct exporter {
    sqlite3 *db;
    sqlite3_stmt *ins_slice, *ins_chunk, *ins_access;
    char *err;
    size_t errlen;
} exporter;

static int db_fail(exporter *x, const char *what) {
    snprintf(x->err, x->errlen, "%s: %s", what, sqlite3_errmsg(x->db));
    return MH_EIO;
}

static int exec_sql(exporter *x, const char *sql) {
    char *msg = NULL;
    if (sqlite3_exec(x->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(x->err, x->errlen, "sqlite: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return MH_EIO;
    }
    return 0;
}

static int step_reset(exporter *x, sqlite3_stmt *st) {
    int s = sqlite3_step(st);
    sqlite3_reset(st);
    return s == SQLITE_DONE ? 0 : db_fail(x, "insert failed");
}

/* Loads slice k of segment seg into the slices and chunks tables, and its
 * chunks into refs (sorted by op, then address) for the access lookup. */
static int load_slice(exporter *x, const mh_reader *r, size_t seg, const mh_slice_info *sl,
                      int64_t slice_rowid, int64_t *next_chunk_rowid, chunk_ref **refs,
                      size_t *cap) {
    sqlite3_bind_int64(x->ins_slice, 1, (int64_t)sl->transition_first);
    sqlite3_bind_int64(x->ins_slice, 2, (int64_t)sl->transition_last);
    int rc = step_reset(x, x->ins_slice);
    if (rc)
        return rc;
    if (sl->chunks > *cap) {
        chunk_ref *n = realloc(*refs, sl->chunks * sizeof *n);
        if (n == NULL)
            return MH_ENOMEM;
        *refs = n;
        *cap = sl->chunks;
    }
    for (uint32_t k = 0; k < sl->chunks; k++) {
        mh_chunk_info ch = {.struct_size = sizeof ch};
        rc = mh_reader_chunk_info(r, seg, (size_t)sl->chunk_first + k, &ch);
        if (rc) {
            char detail[MH_ERRMSG_MAX];
            mh_reader_errmsg(r, detail, sizeof detail);
            snprintf(x->err, x->errlen, "%s", detail[0] ? detail : mh_strerror(rc));
            return rc;
        }
        int bit = mh_legacy_op_bit(ch.op);
        sqlite3_bind_int64(x->ins_chunk, 1, slice_rowid);
        sqlite3_bind_int64(x->ins_chunk, 2, (int64_t)ch.phy_first);
        sqlite3_bind_int64(x->ins_chunk, 3, (int64_t)ch.phy_last);
        sqlite3_bind_int(x->ins_chunk, 4, bit);
        rc = step_reset(x, x->ins_chunk);
        if (rc)
            return rc;
        (*refs)[k] = (chunk_ref){ch.phy_first, ch.phy_last, (*next_chunk_rowid)++, ch.op};
    }
    qsort(*refs, sl->chunks, sizeof **refs, cmp_chunk);
    return 0;
}

static int64_t find_chunk(const chunk_ref *refs, size_t n, const mh_access *a) {
    size_t lo = 0, hi = n; /* first ref greater than (op, physical) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (refs[mid].op < a->op || (refs[mid].op == a->op && refs[mid].phy_first <= a->physical))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const chunk_ref *c = &refs[lo - 1];
    if (c->op != a->op || a->physical > c->phy_last)
        return -1;
    return c->rowid;
}

static int export_all(exporter *x, const mh_reader *r, cli_progress *prog, uint64_t *written) {
    mh_query q;
    mh_query_init(&q);
    q.start_kind = MH_FROM_TRANSITION;
    q.direction = MH_FORWARD;
    q.start = 0;
    q.addr_first = 0;
    q.addr_last = UINT64_MAX;
    q.ops = MH_OPS_ALL;
    mh_cursor *cur = NULL;
    enum { N = 4096 };
    mh_access *buf = malloc(N * sizeof *buf);
    chunk_ref *refs = NULL;
    size_t cap = 0, nrefs = 0;
    if (buf == NULL)
        return MH_ENOMEM;
    int rc = mh_cursor_open(r, &q, &cur);
    if (rc)
        mh_reader_errmsg(r, x->err, x->errlen);
    size_t nseg = mh_reader_segment_count(r), seg = 0;
    mh_segment_info si = {.struct_size = sizeof si};
    uint32_t slice = 0;
    int have_slice = 0;
    mh_slice_info sl = {.struct_size = sizeof sl};
    int64_t slice_rowid = 0, chunk_rowid = 1;
    uint64_t expect_id = 0;
    while (rc == 0) {
        size_t n = 0;
        rc = mh_cursor_next(cur, buf, N, &n);
        if (rc)
            mh_cursor_errmsg(cur, x->err, x->errlen);
        if (rc || n == 0)
            break;
        for (size_t i = 0; i < n && rc == 0; i++) {
            const mh_access *a = &buf[i];
            if (a->id != expect_id) {
                snprintf(x->err, x->errlen, "access ids are not contiguous at id %llu",
                         (unsigned long long)a->id);
                rc = MH_ECORRUPT;
                break;
            }
            expect_id++;
            /* Move to the slice holding a->id: slices cover the ids in order. */
            while (!have_slice || a->id >= sl.id_first + sl.accesses) {
                if (have_slice && ++slice < si.slices) {
                    /* next slice of this segment */
                } else {
                    if (have_slice)
                        seg++;
                    slice = 0;
                    for (; seg < nseg; seg++) {
                        rc = mh_reader_segment_info(r, seg, &si);
                        if (rc || si.slices > 0)
                            break;
                    }
                    if (rc == 0 && seg >= nseg) {
                        snprintf(x->err, x->errlen, "access %llu lies in no slice",
                                 (unsigned long long)a->id);
                        rc = MH_ECORRUPT;
                    }
                    if (rc)
                        break;
                }
                rc = mh_reader_slice_info(r, seg, slice, &sl);
                if (rc)
                    break;
                have_slice = 1;
                slice_rowid++;
                rc = load_slice(x, r, seg, &sl, slice_rowid, &chunk_rowid, &refs, &cap);
                if (rc)
                    break;
                nrefs = sl.chunks;
            }
            if (rc)
                break;
            if (a->id < sl.id_first) {
                snprintf(x->err, x->errlen, "access %llu lies in no slice", (unsigned long long)a->id);
                rc = MH_ECORRUPT;
                break;
            }
            int64_t chunk = find_chunk(refs, nrefs, a);
            if (chunk < 0) {
                snprintf(x->err, x->errlen, "access %llu lies in no chunk of its slice",
                         (unsigned long long)a->id);
                rc = MH_ECORRUPT;
                break;
            }
            sqlite3_stmt *st = x->ins_access;
            sqlite3_bind_int64(st, 1, (int64_t)a->id + 1);
            sqlite3_bind_int64(st, 2, chunk);
            sqlite3_bind_int64(st, 3, (int64_t)a->transition);
            if (a->has_linear)
                sqlite3_bind_int64(st, 4, (int64_t)a->linear);
            else
                sqlite3_bind_null(st, 4);
            sqlite3_bind_int64(st, 5, (int64_t)a->physical);
            sqlite3_bind_int64(st, 6, a->size);
            sqlite3_bind_int(st, 7, mh_legacy_op_bit(a->op));
            rc = step_reset(x, st);
        }
        *written = expect_id;
        cli_progress_update(prog, expect_id);
    }
    /* Slices after the last access cannot exist (slices are never empty),
     * but a store with no access still exports its empty tables. */
    mh_cursor_close(cur);
    free(buf);
    free(refs);
    if (rc && x->err[0] == '\0')
        snprintf(x->err, x->errlen, "%s", mh_strerror(rc));
    return rc;
}

int mh_export_sqlite(const mh_reader *r, const char *path, cli_progress *prog, uint64_t *written,
                     char *err, size_t errlen) {
    exporter x = {.err = err, .errlen = errlen};
    err[0] = '\0';
    *written = 0;
    if (access(path, F_OK) == 0) {
        snprintf(err, errlen, "'%s' already exists", path);
        return MH_EEXIST;
    }
    if (sqlite3_open_v2(path, &x.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot create '%s': %s", path, x.db ? sqlite3_errmsg(x.db) : "error");
        sqlite3_close(x.db);
        return MH_EIO;
    }
    int rc = exec_sql(&x, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;");
    if (rc == 0)
        rc = exec_sql(&x, MH_LEGACY_SCHEMA_SQL);
    if (rc == 0 &&
        (sqlite3_prepare_v2(x.db, "INSERT INTO slices(transition_first, transition_last) VALUES(?,?)",
                            -1, &x.ins_slice, NULL) != SQLITE_OK ||
         sqlite3_prepare_v2(x.db,
                            "INSERT INTO chunks(slice_id, phy_first, phy_last, operation) "
                            "VALUES(?,?,?,?)",
                            -1, &x.ins_chunk, NULL) != SQLITE_OK ||
         sqlite3_prepare_v2(x.db,
                            "INSERT INTO accesses(rowid, chunk_id, transition, linear, phy_first, "
                            "size, operation) VALUES(?,?,?,?,?,?,?)",
                            -1, &x.ins_access, NULL) != SQLITE_OK))
        rc = db_fail(&x, "cannot prepare inserts");
    if (rc == 0)
        rc = export_all(&x, r, prog, written);
    if (rc == 0)
        rc = exec_sql(&x, MH_LEGACY_INDEX_SQL "COMMIT;");
    sqlite3_finalize(x.ins_slice);
    sqlite3_finalize(x.ins_chunk);
    sqlite3_finalize(x.ins_access);
    if (sqlite3_close(x.db) != SQLITE_OK && rc == 0) {
        snprintf(err, errlen, "closing '%s' failed", path);
        rc = MH_EIO;
    }
    if (rc)
        unlink(path);
    return rc;
}
