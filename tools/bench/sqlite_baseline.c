/*
 * sqlite_baseline.c - the legacy SQLite store (see sqlite_baseline.h):
 * slice buffering, chunk building, the insert path and the half-axis query
 * exactly as the old design did them, so the benchmark compares memhist with
 * the real thing and checks that both give the same answers.
 */
#include "sqlite_baseline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#define SQL_MAX63 ((uint64_t)INT64_MAX)

/* Ordered columns (transitions, addresses) hold value - 2^63: SQLite's
 * signed order is then the unsigned order, and phy_first + (size - 1) is
 * the encoded last byte without overflow (the last byte is <= 2^64 - 1). */
static int64_t enc(uint64_t v)
{
    return (int64_t)(v ^ 0x8000000000000000ull);
}

static uint64_t dec(int64_t v)
{
    return (uint64_t)v ^ 0x8000000000000000ull;
}

/* Legacy operation bits. */
static int op_bit(unsigned op)
{
    switch (op) {
    case MH_OP_EXEC: return 1;
    case MH_OP_WRITE: return 2;
    case MH_OP_READ: return 4;
    default: return 0;
    }
}

static int op_from_bit(int64_t bit)
{
    switch (bit) {
    case 1: return MH_OP_EXEC;
    case 2: return MH_OP_WRITE;
    case 4: return MH_OP_READ;
    default: return -1;
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void set_err(char *buf, size_t len, const char *fmt, ...)
{
    if (buf == NULL || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

void mhb_sql_options_init(mhb_sql_options *opt)
{
    opt->slice_accesses = 10000000u;
    opt->chunk_accesses = 100000u;
    opt->cache_kib = 65536;
}

static int exec_sql(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        set_err(err, errlen, "sqlite: %s: %s", sql, msg ? msg : "?");
        sqlite3_free(msg);
        return MH_EIO;
    }
    return MH_OK;
}

static int apply_pragmas(sqlite3 *db, int cache_kib, char *err, size_t errlen)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA cache_size=-%d", cache_kib);
    int rc = exec_sql(db, sql, err, errlen);
    if (rc == MH_OK)
        rc = exec_sql(db, "PRAGMA synchronous=OFF", err, errlen);
    if (rc == MH_OK)
        rc = exec_sql(db, "PRAGMA journal_mode=MEMORY", err, errlen);
    if (rc == MH_OK)
        rc = exec_sql(db, "PRAGMA temp_store=MEMORY", err, errlen);
    return rc;
}

/* ====================================================================== */
/* Writer                                                                 */
/* ====================================================================== */

/* Sort record for chunk building: address key and row of the slice. */
typedef struct sort_rec {
    uint64_t key;
    uint32_t row;
    uint32_t pad;
} sort_rec;

struct mhb_sql_writer {
    sqlite3 *db;
    char *path;
    mhb_sql_options opt;
    sqlite3_stmt *ins_slice, *ins_chunk, *ins_access;
    mh_access *buf;        /* the open slice */
    size_t buf_n, buf_cap;
    int64_t *chunk_of;     /* chunk rowid of each row of the slice */
    sort_rec *sort_a, *sort_b;
    uint64_t next_id;
    uint64_t last_t;
    int64_t slices;
    int failed;
    char err[256];
};

const char *mhb_sql_writer_error(const mhb_sql_writer *w)
{
    return w ? w->err : "";
}

static int prep(sqlite3 *db, const char *sql, sqlite3_stmt **st, char *err,
                size_t errlen)
{
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) !=
        SQLITE_OK) {
        set_err(err, errlen, "sqlite: prepare %s: %s", sql, sqlite3_errmsg(db));
        return MH_EIO;
    }
    return MH_OK;
}

int mhb_sql_writer_open(const char *path, const mhb_sql_options *opt,
                        mhb_sql_writer **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    mhb_sql_options o;
    if (opt)
        o = *opt;
    else
        mhb_sql_options_init(&o);
    if (o.slice_accesses < 1 || o.slice_accesses > (1u << 30) ||
        o.chunk_accesses < 1 || o.cache_kib < 1) {
        set_err(errbuf, errlen, "bad SQLite baseline options");
        return MH_EINVAL;
    }
    struct stat stbuf;
    if (stat(path, &stbuf) == 0) {
        set_err(errbuf, errlen, "%s already exists", path);
        return MH_EEXIST;
    }
    mhb_sql_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return MH_ENOMEM;
    w->opt = o;
    w->path = strdup(path);
    /* The slice can hold twice the cap (cut inside a transition). */
    w->buf_cap = (size_t)o.slice_accesses * 2;
    if (w->path == NULL) {
        free(w);
        return MH_ENOMEM;
    }
    if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        NULL) != SQLITE_OK) {
        set_err(errbuf, errlen, "sqlite: open %s: %s", path,
                w->db ? sqlite3_errmsg(w->db) : "out of memory");
        mhb_sql_writer_close(w);
        return MH_EIO;
    }
    int rc = apply_pragmas(w->db, o.cache_kib, errbuf, errlen);
    if (rc == MH_OK)
        rc = exec_sql(w->db,
                      "CREATE TABLE slices(id INTEGER PRIMARY KEY, "
                      "transition_first INTEGER NOT NULL, transition_last INTEGER NOT NULL);"
                      "CREATE TABLE chunks(id INTEGER PRIMARY KEY, slice_id INTEGER NOT NULL, "
                      "phy_first INTEGER NOT NULL, phy_last INTEGER NOT NULL, "
                      "operation INTEGER NOT NULL);"
                      "CREATE TABLE accesses(id INTEGER PRIMARY KEY, chunk_id INTEGER NOT NULL, "
                      "transition INTEGER NOT NULL, linear INTEGER, "
                      "phy_first INTEGER NOT NULL, size INTEGER NOT NULL, "
                      "operation INTEGER NOT NULL);"
                      "CREATE INDEX slices_tlast ON slices(transition_last);"
                      "CREATE INDEX chunks_walk ON chunks(operation, slice_id, phy_last);"
                      "CREATE INDEX accesses_chunk ON accesses(chunk_id, transition);",
                      errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(w->db, "INSERT INTO slices(id, transition_first, transition_last) "
                         "VALUES(?1, ?2, ?3)", &w->ins_slice, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(w->db, "INSERT INTO chunks(slice_id, phy_first, phy_last, operation) "
                         "VALUES(?1, ?2, ?3, ?4)", &w->ins_chunk, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(w->db, "INSERT INTO accesses(id, chunk_id, transition, linear, "
                         "phy_first, size, operation) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                  &w->ins_access, errbuf, errlen);
    if (rc != MH_OK) {
        mhb_sql_writer_close(w);
        unlink(path);
        return rc;
    }
    *out = w;
    return MH_OK;
}

/* LSD radix sort of recs by key, 16 bits a pass; passes where every key has
 * the same digit are skipped (addresses of one slice share their high bits). */
static sort_rec *radix_sort(sort_rec *a, sort_rec *b, size_t n)
{
    static size_t count[65536]; /* 512 KiB, off the stack; one writer thread */
    for (unsigned shift = 0; shift < 64; shift += 16) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(a[i].key >> shift) & 0xffff]++;
        if (n == 0 || count[(a[0].key >> shift) & 0xffff] == n)
            continue;
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            b[count[(a[i].key >> shift) & 0xffff]++] = a[i];
        sort_rec *t = a;
        a = b;
        b = t;
    }
    return a;
}

static int step_done(mhb_sql_writer *w, sqlite3_stmt *st)
{
    int s = sqlite3_step(st);
    sqlite3_reset(st);
    if (s != SQLITE_DONE) {
        set_err(w->err, sizeof w->err, "sqlite: insert: %s", sqlite3_errmsg(w->db));
        return MH_EIO;
    }
    return MH_OK;
}

static int insert_chunk(mhb_sql_writer *w, int64_t slice_id, uint64_t first,
                        uint64_t last, int bit, const sort_rec *recs,
                        size_t from, size_t to)
{
    sqlite3_bind_int64(w->ins_chunk, 1, slice_id);
    sqlite3_bind_int64(w->ins_chunk, 2, enc(first));
    sqlite3_bind_int64(w->ins_chunk, 3, enc(last));
    sqlite3_bind_int64(w->ins_chunk, 4, bit);
    int rc = step_done(w, w->ins_chunk);
    if (rc != MH_OK)
        return rc;
    int64_t id = sqlite3_last_insert_rowid(w->db);
    for (size_t i = from; i < to; i++)
        w->chunk_of[recs[i].row] = id;
    return MH_OK;
}

/* Chunks of one operation of the slice: accesses sorted by address form
 * overlap groups (always one chunk, whatever their number, so the chunks of a
 * slice and operation never overlap); a group touching the chunk before it
 * (first == last + 1) joins it while the chunk stays within the cap. */
static int build_chunks(mhb_sql_writer *w, int64_t slice_id, unsigned op)
{
    size_t n = 0;
    for (size_t i = 0; i < w->buf_n; i++) {
        if (w->buf[i].op == op) {
            w->sort_a[n].key = w->buf[i].physical;
            w->sort_a[n].row = (uint32_t)i;
            n++;
        }
    }
    if (n == 0)
        return MH_OK;
    const sort_rec *s = radix_sort(w->sort_a, w->sort_b, n);
    int bit = op_bit(op);
    size_t c_from = 0;          /* chunk: rows s[c_from .. g_from) so far */
    uint64_t c_first = 0, c_last = 0;
    int have_chunk = 0;
    size_t g_from = 0;          /* overlap group: rows s[g_from .. i) */
    uint64_t g_first = s[0].key;
    uint64_t g_last = s[0].key + w->buf[s[0].row].size - 1;
    for (size_t i = 1; i <= n; i++) {
        if (i < n) {
            uint64_t f = s[i].key;
            if (f <= g_last) {
                uint64_t l = f + w->buf[s[i].row].size - 1;
                if (l > g_last)
                    g_last = l;
                continue;
            }
        }
        /* the group [g_from, i) is complete */
        if (have_chunk && g_first == c_last + 1 &&
            (uint64_t)(i - c_from) <= w->opt.chunk_accesses) {
            c_last = g_last;
        } else {
            if (have_chunk) {
                int rc = insert_chunk(w, slice_id, c_first, c_last, bit, s, c_from, g_from);
                if (rc != MH_OK)
                    return rc;
            }
            have_chunk = 1;
            c_from = g_from;
            c_first = g_first;
            c_last = g_last;
        }
        if (i < n) {
            g_from = i;
            g_first = s[i].key;
            g_last = g_first + w->buf[s[i].row].size - 1;
        }
    }
    return insert_chunk(w, slice_id, c_first, c_last, bit, s, c_from, n);
}

static int flush_slice(mhb_sql_writer *w)
{
    if (w->buf_n == 0)
        return MH_OK;
    int rc = exec_sql(w->db, "BEGIN", w->err, sizeof w->err);
    if (rc != MH_OK)
        return rc;
    uint64_t id_first = w->next_id - w->buf_n;
    /* slice rowids 1, 2, ...: the query moves to the next slice by rowid */
    int64_t slice_id = ++w->slices;
    sqlite3_bind_int64(w->ins_slice, 1, slice_id);
    sqlite3_bind_int64(w->ins_slice, 2, enc(w->buf[0].transition));
    sqlite3_bind_int64(w->ins_slice, 3, enc(w->buf[w->buf_n - 1].transition));
    rc = step_done(w, w->ins_slice);
    for (unsigned op = 0; rc == MH_OK && op < MH_OP_COUNT; op++)
        rc = build_chunks(w, slice_id, op);
    sqlite3_stmt *ia = w->ins_access;
    for (size_t i = 0; rc == MH_OK && i < w->buf_n; i++) {
        const mh_access *a = &w->buf[i];
        sqlite3_bind_int64(ia, 1, (int64_t)(id_first + i));
        sqlite3_bind_int64(ia, 2, w->chunk_of[i]);
        sqlite3_bind_int64(ia, 3, enc(a->transition));
        if (a->has_linear)
            sqlite3_bind_int64(ia, 4, (int64_t)a->linear);
        else
            sqlite3_bind_null(ia, 4);
        sqlite3_bind_int64(ia, 5, enc(a->physical));
        sqlite3_bind_int64(ia, 6, a->size);
        sqlite3_bind_int64(ia, 7, op_bit(a->op));
        rc = step_done(w, ia);
    }
    if (rc == MH_OK)
        rc = exec_sql(w->db, "COMMIT", w->err, sizeof w->err);
    w->buf_n = 0;
    return rc;
}

static int writer_alloc(mhb_sql_writer *w)
{
    if (w->buf)
        return MH_OK;
    size_t cap = w->buf_cap;
    w->buf = malloc(cap * sizeof *w->buf);
    w->chunk_of = malloc(cap * sizeof *w->chunk_of);
    w->sort_a = malloc(cap * sizeof *w->sort_a);
    w->sort_b = malloc(cap * sizeof *w->sort_b);
    if (!w->buf || !w->chunk_of || !w->sort_a || !w->sort_b)
        return MH_ENOMEM;
    return MH_OK;
}

int mhb_sql_writer_append(mhb_sql_writer *w, const mh_access *a, size_t n)
{
    if (w == NULL || (a == NULL && n > 0))
        return MH_EINVAL;
    if (w->failed)
        return MH_ESTATE;
    int rc = writer_alloc(w);
    if (rc != MH_OK) {
        w->failed = 1;
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        const mh_access *x = &a[i];
        uint64_t id = w->next_id;
        if (x->size == 0 || op_bit(x->op) == 0 || x->has_linear > 1 ||
            x->physical > UINT64_MAX - (x->size - 1)) {
            set_err(w->err, sizeof w->err, "access %llu: bad size, op or range",
                    (unsigned long long)id);
            return MH_EINVAL;
        }
        if (id > 0 && x->transition < w->last_t) {
            set_err(w->err, sizeof w->err, "access %llu: transition decreases",
                    (unsigned long long)id);
            return MH_EORDER;
        }
        if (w->buf_n >= w->buf_cap ||
            (w->buf_n >= w->opt.slice_accesses && x->transition != w->last_t)) {
            rc = flush_slice(w);
            if (rc != MH_OK) {
                w->failed = 1;
                return rc;
            }
        }
        w->buf[w->buf_n++] = *x;
        w->last_t = x->transition;
        w->next_id++;
    }
    return MH_OK;
}

int mhb_sql_writer_close(mhb_sql_writer *w)
{
    if (w == NULL)
        return MH_OK;
    int rc = MH_OK;
    if (w->failed)
        rc = MH_ESTATE;
    else if (w->buf_n > 0)
        rc = flush_slice(w);
    sqlite3_finalize(w->ins_slice);
    sqlite3_finalize(w->ins_chunk);
    sqlite3_finalize(w->ins_access);
    if (w->db && sqlite3_close(w->db) != SQLITE_OK && rc == MH_OK)
        rc = MH_EIO;
    /* The design runs with synchronous=off; the benchmark still makes the
     * file durable at close so both sides are timed to the same point. */
    if (rc == MH_OK && w->db) {
        int fd = open(w->path, O_RDONLY);
        if (fd < 0 || fsync(fd) != 0)
            rc = MH_EIO;
        if (fd >= 0)
            close(fd);
    }
    free(w->path);
    free(w->buf);
    free(w->chunk_of);
    free(w->sort_a);
    free(w->sort_b);
    free(w);
    return rc;
}

/* ====================================================================== */
/* Reader and query                                                       */
/* ====================================================================== */

struct mhb_sql_reader {
    sqlite3 *db;
    sqlite3_stmt *slice_fwd, *slice_bwd, *slice_get, *chunks, *acc_fwd,
        *acc_bwd, *id_t, *begin, *commit;
    char err[256];
};

const char *mhb_sql_reader_error(const mhb_sql_reader *r)
{
    return r ? r->err : "";
}

void mhb_sql_reader_close(mhb_sql_reader *r)
{
    if (r == NULL)
        return;
    sqlite3_finalize(r->slice_fwd);
    sqlite3_finalize(r->slice_bwd);
    sqlite3_finalize(r->slice_get);
    sqlite3_finalize(r->chunks);
    sqlite3_finalize(r->acc_fwd);
    sqlite3_finalize(r->acc_bwd);
    sqlite3_finalize(r->id_t);
    sqlite3_finalize(r->begin);
    sqlite3_finalize(r->commit);
    sqlite3_close(r->db);
    free(r);
}

#define ACC_COLS "id, transition, linear, phy_first, size, operation"
#define ACC_WHERE                                                              \
    "chunk_id = ?1 AND transition >= ?2 AND transition <= ?3 AND id > ?4 "     \
    "AND id < ?5 AND phy_first <= ?6 AND phy_first + (size - 1) >= ?7"

int mhb_sql_reader_open(const char *path, const mhb_sql_options *opt,
                        mhb_sql_reader **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    mhb_sql_options o;
    if (opt)
        o = *opt;
    else
        mhb_sql_options_init(&o);
    struct stat stbuf;
    if (stat(path, &stbuf) != 0) {
        set_err(errbuf, errlen, "%s: %s", path, strerror(errno));
        return MH_ENOENT;
    }
    mhb_sql_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return MH_ENOMEM;
    if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        set_err(errbuf, errlen, "sqlite: open %s: %s", path,
                r->db ? sqlite3_errmsg(r->db) : "out of memory");
        mhb_sql_reader_close(r);
        return MH_EIO;
    }
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA cache_size=-%d", o.cache_kib);
    int rc = exec_sql(r->db, sql, errbuf, errlen);
    if (rc == MH_OK)
        rc = exec_sql(r->db, "PRAGMA temp_store=MEMORY", errbuf, errlen);
    /* Preparing reads the schema: a file without the legacy tables fails here. */
    if (rc == MH_OK)
        rc = prep(r->db, "SELECT id, transition_first, transition_last FROM slices "
                         "WHERE transition_last >= ?1 ORDER BY transition_last, id LIMIT 1",
                  &r->slice_fwd, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(r->db, "SELECT id, transition_first, transition_last FROM slices "
                         "WHERE transition_first <= ?1 "
                         "ORDER BY transition_first DESC, id DESC LIMIT 1",
                  &r->slice_bwd, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(r->db, "SELECT transition_first, transition_last FROM slices WHERE id = ?1",
                  &r->slice_get, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(r->db, "SELECT id, phy_first FROM chunks WHERE operation = ?1 AND "
                         "slice_id = ?2 AND phy_last >= ?3 ORDER BY phy_last",
                  &r->chunks, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(r->db, "SELECT " ACC_COLS " FROM accesses WHERE " ACC_WHERE
                         " ORDER BY transition, id LIMIT ?8",
                  &r->acc_fwd, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(r->db, "SELECT " ACC_COLS " FROM accesses WHERE " ACC_WHERE
                         " ORDER BY transition DESC, id DESC LIMIT ?8",
                  &r->acc_bwd, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(r->db, "SELECT transition FROM accesses WHERE id = ?1", &r->id_t,
                  errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(r->db, "BEGIN", &r->begin, errbuf, errlen);
    if (rc == MH_OK)
        rc = prep(r->db, "COMMIT", &r->commit, errbuf, errlen);
    if (rc != MH_OK) {
        mhb_sql_reader_close(r);
        return MH_ENOTSTORE;
    }
    *out = r;
    return MH_OK;
}

static int sql_fail(mhb_sql_reader *r, sqlite3_stmt *st)
{
    set_err(r->err, sizeof r->err, "sqlite: %s", sqlite3_errmsg(r->db));
    sqlite3_reset(st);
    return MH_EIO;
}

/* The best `cap` matches of a slice, kept as a binary heap whose root is the
 * worst one (largest id forward, smallest backward); it lives in the
 * caller's output array. */
typedef struct best {
    mh_access *a;
    size_t n, cap;
    int forward;
} best;

static int worse(const best *b, const mh_access *x, const mh_access *y)
{
    return b->forward ? x->id > y->id : x->id < y->id;
}

static void best_push(best *b, const mh_access *x)
{
    size_t i;
    if (b->n < b->cap) {
        i = b->n++;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (!worse(b, x, &b->a[p]))
                break;
            b->a[i] = b->a[p];
            i = p;
        }
        b->a[i] = *x;
        return;
    }
    if (!worse(b, &b->a[0], x))
        return;
    i = 0; /* replace the root and sift down */
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= b->n)
            break;
        if (c + 1 < b->n && worse(b, &b->a[c + 1], &b->a[c]))
            c++;
        if (!worse(b, &b->a[c], x))
            break;
        b->a[i] = b->a[c];
        i = c;
    }
    b->a[i] = *x;
}

static int cmp_id_asc(const void *x, const void *y)
{
    uint64_t a = ((const mh_access *)x)->id, b = ((const mh_access *)y)->id;
    return a < b ? -1 : a > b;
}

static int cmp_id_desc(const void *x, const void *y)
{
    return cmp_id_asc(y, x);
}

/* Reads one accesses row into *a; MH_ECORRUPT for a row the writer cannot
 * have produced. */
static int read_row(sqlite3_stmt *st, mh_access *a)
{
    memset(a, 0, sizeof *a);
    a->id = (uint64_t)sqlite3_column_int64(st, 0);
    a->transition = dec(sqlite3_column_int64(st, 1));
    if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
        a->linear = (uint64_t)sqlite3_column_int64(st, 2);
        a->has_linear = 1;
    }
    a->physical = dec(sqlite3_column_int64(st, 3));
    int64_t size = sqlite3_column_int64(st, 4);
    int op = op_from_bit(sqlite3_column_int64(st, 5));
    if (size < 1 || size > UINT32_MAX || op < 0)
        return MH_ECORRUPT;
    a->size = (uint32_t)size;
    a->op = (uint8_t)op;
    return MH_OK;
}

/* Matches of one slice into b (bounded by b->cap). */
static int query_slice(mhb_sql_reader *r, int64_t slice_id, const mh_query *q,
                       int64_t t_lo, int64_t t_hi, int64_t id_lo, int64_t id_hi,
                       int64_t a_first, int64_t a_last, best *b)
{
    int forward = q->direction == MH_FORWARD;
    sqlite3_stmt *acc = forward ? r->acc_fwd : r->acc_bwd;
    for (unsigned op = 0; op < MH_OP_COUNT; op++) {
        if (!(q->ops & (1u << op)))
            continue;
        sqlite3_stmt *ch = r->chunks;
        sqlite3_bind_int64(ch, 1, op_bit(op));
        sqlite3_bind_int64(ch, 2, slice_id);
        sqlite3_bind_int64(ch, 3, a_first);
        int s;
        while ((s = sqlite3_step(ch)) == SQLITE_ROW) {
            if (sqlite3_column_int64(ch, 1) > a_last)
                break; /* chunks of a slice and op never overlap: done */
            int64_t chunk_id = sqlite3_column_int64(ch, 0);
            /* once b is full, only rows better than its worst can enter */
            int64_t lo_t = t_lo, hi_t = t_hi, lo_id = id_lo, hi_id = id_hi;
            if (b->n == b->cap) {
                if (forward) {
                    hi_t = enc(b->a[0].transition);
                    hi_id = (int64_t)b->a[0].id;
                } else {
                    lo_t = enc(b->a[0].transition);
                    lo_id = (int64_t)b->a[0].id;
                }
            }
            sqlite3_bind_int64(acc, 1, chunk_id);
            sqlite3_bind_int64(acc, 2, lo_t);
            sqlite3_bind_int64(acc, 3, hi_t);
            sqlite3_bind_int64(acc, 4, lo_id);
            sqlite3_bind_int64(acc, 5, hi_id);
            sqlite3_bind_int64(acc, 6, a_last);
            sqlite3_bind_int64(acc, 7, a_first);
            sqlite3_bind_int64(acc, 8, (int64_t)b->cap);
            int sa;
            while ((sa = sqlite3_step(acc)) == SQLITE_ROW) {
                mh_access x;
                if (read_row(acc, &x) != MH_OK) {
                    set_err(r->err, sizeof r->err, "bad accesses row %lld",
                            (long long)sqlite3_column_int64(acc, 0));
                    sqlite3_reset(acc);
                    sqlite3_reset(ch);
                    return MH_ECORRUPT;
                }
                best_push(b, &x);
            }
            if (sa != SQLITE_DONE) {
                sqlite3_reset(ch);
                return sql_fail(r, acc);
            }
            sqlite3_reset(acc);
        }
        if (s != SQLITE_ROW && s != SQLITE_DONE)
            return sql_fail(r, ch);
        sqlite3_reset(ch);
    }
    return MH_OK;
}

/* Runs a one-row statement; returns 1 with the row ready, 0 when no row. */
static int step_row(mhb_sql_reader *r, sqlite3_stmt *st, int *rc)
{
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        return 1;
    if (s != SQLITE_DONE)
        *rc = sql_fail(r, st);
    return 0;
}

static int query_run(mhb_sql_reader *r, const mh_query *q, mh_access *out,
                     size_t max, size_t *n)
{
    if (r == NULL || q == NULL || n == NULL || (out == NULL && max > 0) ||
        q->addr_first > q->addr_last || q->ops == 0 || (q->ops & ~MH_OPS_ALL) ||
        q->start_kind > MH_FROM_ID || q->direction > MH_BACKWARD ||
        q->reserved != 0)
        return MH_EINVAL;
    /* the baseline measures the unbounded half-axis query only */
    if (q->end_kind != MH_END_NONE)
        return MH_EINVAL;
    if (max == 0)
        return MH_OK;
    int forward = q->direction == MH_FORWARD;
    int64_t a_first = enc(q->addr_first), a_last = enc(q->addr_last);
    int64_t t_lo = INT64_MIN, t_hi = INT64_MAX, id_lo = -1, id_hi = INT64_MAX;
    int rc = MH_OK;
    if (q->start_kind == MH_FROM_TRANSITION) {
        if (forward)
            t_lo = enc(q->start);
        else
            t_hi = enc(q->start);
    } else {
        /* ids are 0 .. n-1: an unknown X is past the end */
        uint64_t x = q->start;
        int found = 0;
        if (x <= SQL_MAX63) {
            sqlite3_bind_int64(r->id_t, 1, (int64_t)x);
            found = step_row(r, r->id_t, &rc);
            if (found) {
                int64_t t = sqlite3_column_int64(r->id_t, 0);
                if (forward)
                    t_lo = t;
                else
                    t_hi = t;
            }
            sqlite3_reset(r->id_t);
            if (rc != MH_OK)
                return rc;
        }
        if (forward) {
            if (!found)
                return MH_OK;
            id_lo = (int64_t)x;
        } else {
            if (x == 0)
                return MH_OK;
            id_hi = x > SQL_MAX63 ? INT64_MAX : (int64_t)x;
        }
    }
    /* the first slice */
    sqlite3_stmt *first = forward ? r->slice_fwd : r->slice_bwd;
    sqlite3_bind_int64(first, 1, forward ? t_lo : t_hi);
    int64_t slice_id = 0;
    if (step_row(r, first, &rc))
        slice_id = sqlite3_column_int64(first, 0);
    sqlite3_reset(first);
    if (rc != MH_OK || slice_id == 0)
        return rc;
    size_t got = 0;
    while (got < max) {
        best b = {out + got, 0, max - got, forward};
        rc = query_slice(r, slice_id, q, t_lo, t_hi, id_lo, id_hi, a_first, a_last, &b);
        if (rc != MH_OK)
            return rc;
        qsort(b.a, b.n, sizeof *b.a, forward ? cmp_id_asc : cmp_id_desc);
        got += b.n;
        if (got == max)
            break;
        slice_id += forward ? 1 : -1;
        if (slice_id < 1)
            break;
        sqlite3_bind_int64(r->slice_get, 1, slice_id);
        int more = step_row(r, r->slice_get, &rc);
        sqlite3_reset(r->slice_get);
        if (rc != MH_OK)
            return rc;
        if (!more)
            break;
    }
    *n = got;
    return MH_OK;
}

/* One read transaction per query: a consistent snapshot across its many
 * statements, and one lock instead of one per statement (in autocommit mode
 * SQLite takes and drops the file lock and re-checks the file around every
 * statement, which would cost the baseline several system calls each). */
int mhb_sql_query(mhb_sql_reader *r, const mh_query *q, mh_access *out,
                  size_t max, size_t *n)
{
    if (n)
        *n = 0;
    if (r == NULL || n == NULL)
        return MH_EINVAL;
    if (sqlite3_step(r->begin) != SQLITE_DONE)
        return sql_fail(r, r->begin);
    sqlite3_reset(r->begin);
    int rc = query_run(r, q, out, max, n);
    if (sqlite3_step(r->commit) != SQLITE_DONE) {
        int rc2 = sql_fail(r, r->commit);
        return rc != MH_OK ? rc : rc2;
    }
    sqlite3_reset(r->commit);
    return rc;
}

int mhb_sql_reader_stats(mhb_sql_reader *r, mhb_sql_stats *st)
{
    static const char *const sql[3] = {"SELECT count(*) FROM accesses",
                                       "SELECT count(*) FROM slices",
                                       "SELECT count(*) FROM chunks"};
    uint64_t v[3];
    for (int i = 0; i < 3; i++) {
        sqlite3_stmt *s = NULL;
        if (prep(r->db, sql[i], &s, r->err, sizeof r->err) != MH_OK)
            return MH_EIO;
        int ok = sqlite3_step(s) == SQLITE_ROW;
        v[i] = ok ? (uint64_t)sqlite3_column_int64(s, 0) : 0;
        sqlite3_finalize(s);
        if (!ok)
            return MH_EIO;
    }
    st->accesses = v[0];
    st->slices = v[1];
    st->chunks = v[2];
    return MH_OK;
}
