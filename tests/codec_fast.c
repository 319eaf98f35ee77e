/*
 * codec_fast.c - the access-block decoder (src/codec.c) against its
 * reference: mh_block_decode_raw (columns read as runs, checks or-ed and
 * tested once per column, the reference decoder on a failed column) must
 * give exactly what mh_block_decode_raw_ref (one value at a time, each
 * check where its value is read) gives: the same code, offset and detail
 * for every bad block, the same rows (every array, absent values included)
 * for every good one.
 *
 * Blocks: rows drawn with one- and multi-byte deltas mixed at several
 * rates, ends of the value ranges, presence bitmaps of every density,
 * every layout (1.0, 2.0 base / stream / stream and pc / an unknown
 * column), row counts around the 8-byte word and the 256-row run; then
 * each damaged many ways (bytes flipped, set to 0x80 / 0xff / 0, cut,
 * extended); then values the checks must refuse, made on purpose (an id
 * offset of 2^32, size 0 and 2^32, a wrapping address range, stream
 * 65536, an 11-byte varint, a varint beyond 64 bits), each with the detail
 * the reference gives checked by name.
 */
#include <string.h>

#include "internal.h"
#include "testutil.h"

#define MAX_N 4100u

typedef struct blockbuf {
    mh_rows in, a, b;
    uint8_t *raw;
} blockbuf;

static uint64_t draw_small(tu_rng *r, unsigned rate_multi) {
    /* mostly one-byte zigzag deltas, rate_multi percent longer ones */
    if (tu_below(r, 100) < rate_multi) {
        unsigned bits = 7u + (unsigned)tu_below(r, 58);
        return tu_next(r) >> (64u - bits);
    }
    return tu_below(r, 64);
}

/* Rows [0, n) of bb->in; mode picks the value mix. */
static void draw_rows(tu_rng *r, mh_rows *c, uint32_t n, unsigned mode) {
    unsigned rate = (unsigned[]){0, 3, 25, 60, 100}[mode % 5];
    unsigned lin_mode = (unsigned)tu_below(r, 5), pc_mode = (unsigned)tu_below(r, 5);
    uint64_t id = tu_below(r, 3) == 0 ? UINT32_MAX - 4u * n : tu_below(r, 1000);
    unsigned t_shift = tu_below(r, 2) ? 1 : 40;
    uint64_t t = tu_next(r) >> t_shift;
    uint64_t phy = tu_below(r, 4) == 0 ? UINT64_MAX - (uint64_t)n * 300u : tu_next(r) >> 16;
    uint64_t pc = tu_next(r) >> 20;
    for (uint32_t i = 0; i < n; i++) {
        id += 1u + (tu_below(r, 100) < rate ? tu_below(r, 3) : 0);
        c->id_off[i] = (uint32_t)id;
        t += draw_small(r, rate) >> 1;
        c->t[i] = t;
        uint64_t dp = draw_small(r, rate);
        phy = mode >= 5 && tu_below(r, 2) ? phy - dp : phy + dp;
        if (phy > UINT64_MAX - (1u << 20))
            phy = UINT64_MAX - (1u << 20) - tu_below(r, 100);
        c->phy[i] = phy;
        if (tu_below(r, 20) == 0) { /* a large size (draws in sequence) */
            uint32_t big = (uint32_t)(1u + tu_below(r, UINT32_MAX - 1u));
            c->size[i] = big >> tu_below(r, 20);
        } else {
            c->size[i] = (uint32_t)(1u + tu_below(r, 8));
        }
        if (c->size[i] == 0)
            c->size[i] = 1;
        uint8_t has = lin_mode == 0 ? 0 : lin_mode == 1 ? 1 : lin_mode == 2 ? (uint8_t)(tu_below(r, 2))
                      : lin_mode == 3 ? (uint8_t)(tu_below(r, 10) != 0) : (uint8_t)((i / 8) & 1);
        c->has_lin[i] = has;
        c->lin[i] = has ? phy + (tu_below(r, 4) ? 0 : draw_small(r, 50) - 40) : 0;
        c->stream[i] = (uint32_t)(tu_below(r, 4) ? tu_below(r, 3) : tu_below(r, MH_STREAM_MAX + 1u));
        uint8_t hp = pc_mode == 0 ? 0 : pc_mode == 1 ? 1 : pc_mode == 2 ? (uint8_t)(tu_below(r, 2))
                     : pc_mode == 3 ? (uint8_t)(tu_below(r, 10) == 0) : (uint8_t)(i % 9 == 0);
        c->has_pc[i] = hp;
        if (hp)
            pc += draw_small(r, rate) - 32;
        c->pc[i] = hp ? pc : 0;
    }
}

/* Rows lo .. n - 1 of a and b the same (and their stream / pc flags). */
static int rows_same(const mh_rows *a, const mh_rows *b, uint32_t lo, uint32_t n) {
    if (a->no_stream != b->no_stream || a->no_pc != b->no_pc)
        return 0;
    for (uint32_t i = lo; i < n; i++)
        if (a->id_off[i] != b->id_off[i] || a->t[i] != b->t[i] ||
            a->phy[i] != b->phy[i] || a->lin[i] != b->lin[i] ||
            a->size[i] != b->size[i] || a->has_lin[i] != b->has_lin[i] ||
            a->stream[i] != b->stream[i] || a->pc[i] != b->pc[i] ||
            a->has_pc[i] != b->has_pc[i])
            return 0;
    return 1;
}

typedef struct tally {
    unsigned ok, bad;
} tally;

/* Rows from .. upto - 1 of raw alone (mh_block_decode_raw_rows, the query
 * engine's decode of a chunk's rows: a head from row 0, or a window whose
 * earlier rows are passed over): when the whole block decodes, they are
 * its rows from .. upto - 1; when they fail, so does the whole block (the
 * failure is in the rows read). bb->a holds the whole block's rows when
 * full_rc is MH_OK. */
static void window(blockbuf *bb, const uint8_t *raw, size_t size, uint32_t n,
                   uint32_t from, uint32_t upto, uint64_t t_base,
                   const mh_block_layout *l, int full_rc) {
    mh_diag dh = {0};
    memset(bb->b.t, 0xa5, (size_t)n * sizeof *bb->b.t);
    int rh = mh_block_decode_raw_rows(raw, size, n, from, upto, MH_COLS_ALL, t_base, l,
                                      &bb->b, &dh);
    if (rh != MH_OK) {
        CHECKF(full_rc != MH_OK, "rows %u..%u of %u refused (%s), whole block taken",
               from, upto, n, dh.msg);
        return;
    }
    if (full_rc != MH_OK)
        return; /* the damage lies outside the rows read: not read */
    uint32_t m = l->major >= 2 ? upto : n, lo = l->major >= 2 ? from : 0;
    CHECKF(bb->b.n == m && bb->b.lo == lo, "rows decode gave %u..%u, want %u..%u",
           bb->b.lo, bb->b.n, lo, m);
    bb->b.no_stream = bb->a.no_stream, bb->b.no_pc = bb->a.no_pc;
    CHECKF(rows_same(&bb->a, &bb->b, lo, m), "rows %u..%u of %u differ", lo, m, n);
}

/* Rows of raw taken one at a time (mh_block_row_take, the id-order
 * path's located rows: forward runs, jumps and rewinds): when the whole
 * block decodes, each row's physical, size, linear, stream and pc equal
 * the whole decode's; when a taken row fails, so does the whole block.
 * (A damaged block may give rows whose values the damage does not reach.) */
/* Row i taken alone: 0 when refused (then the whole block must fail). */
static int take_one(blockbuf *bb, mh_block_cols *bc, uint32_t i, uint32_t n, int full_rc) {
    mh_access x;
    memset(&x, 0xa5, sizeof x);
    if (mh_block_row_take(bc, i, &x) != MH_OK) {
        CHECKF(full_rc != MH_OK, "row %u of a good block of %u refused", i, n);
        return 0;
    }
    if (full_rc == MH_OK) {
        const mh_rows *a = &bb->a;
        CHECKF(a->phy[i] == x.physical && a->size[i] == x.size &&
                   a->has_lin[i] == x.has_linear && a->lin[i] == x.linear &&
                   mh_rows_stream(a, i) == x.stream && mh_rows_has_pc(a, i) == x.has_pc &&
                   (mh_rows_has_pc(a, i) ? mh_rows_pc(a, i) : 0) == x.pc,
               "row %u of %u taken alone differs", i, n);
    }
    return 1;
}

static void take_rows(blockbuf *bb, tu_rng *r, const uint8_t *raw, size_t size, uint32_t n,
                      const mh_block_layout *l, int full_rc) {
    if (l->major < 2)
        return; /* 1.0 blocks have no column lengths: decoded whole */
    mh_block_cols bc;
    if (mh_block_cols_find(raw, size, n, l, &bc) != MH_OK) {
        CHECKF(full_rc != MH_OK, "columns of a good block of %u rows not found", n);
        return;
    }
    uint32_t i = (uint32_t)tu_below(r, n);
    for (unsigned k = 0; k < 24; k++) {
        if (!take_one(bb, &bc, i, n, full_rc))
            return;
        /* the next row, a jump ahead, anywhere (the cursor goes back to
         * a checkpoint), or the row before (a backward query's order) */
        unsigned how = (unsigned)tu_below(r, 4);
        i = how == 0 && i + 1 < n ? i + 1
            : how == 1            ? i + (uint32_t)tu_below(r, n - i)
            : how == 3 && i > 0   ? i - 1
                                  : (uint32_t)tu_below(r, n);
    }
    /* a question asked again: rows in increasing order, taken in three
     * passes on one cursor (from the second pass on, each row past the
     * cursor starts from the checkpoint saved at or before it) */
    if (mh_block_cols_find(raw, size, n, l, &bc) != MH_OK)
        return;
    uint32_t rows[8], nr = 0;
    for (i = (uint32_t)tu_below(r, n); nr < 8 && i < n; i += 1 + (uint32_t)tu_below(r, n / 4 + 1))
        rows[nr++] = i;
    for (unsigned pass = 0; pass < 3; pass++)
        for (uint32_t k = 0; k < nr; k++)
            if (!take_one(bb, &bc, rows[k], n, full_rc))
                return;
    /* a backward walk over checkpoints: rows in decreasing order, 1 .. 3
     * apart, from anywhere, on a cursor found again (none saved past row 0) */
    if (mh_block_cols_find(raw, size, n, l, &bc) != MH_OK)
        return;
    i = (uint32_t)tu_below(r, n);
    for (unsigned k = 0; k < 300; k++) {
        if (!take_one(bb, &bc, i, n, full_rc))
            return;
        uint32_t d = 1 + (uint32_t)tu_below(r, 3);
        if (i < d)
            break;
        i -= d;
    }
}

/* Decodes raw both ways: same code, offset, detail; same rows when OK.
 * Returns the code. */
static int both(blockbuf *bb, const uint8_t *raw, size_t size, uint32_t n,
                uint64_t t_base, const mh_block_layout *l, tally *ty,
                mh_diag *out) {
    mh_diag da = {0}, db = {0};
    /* different garbage in the outputs: nothing may depend on it */
    memset(bb->a.t, 0x5a, (size_t)n * sizeof *bb->a.t);
    memset(bb->b.t, 0xa5, (size_t)n * sizeof *bb->b.t);
    int ra = mh_block_decode_raw(raw, size, n, t_base, l, &bb->a, &da);
    int rb = mh_block_decode_raw_ref(raw, size, n, t_base, l, &bb->b, &db);
    CHECKF(ra == rb, "fast %s vs reference %s (%s | %s)", mh_error_name(ra),
           mh_error_name(rb), da.msg, db.msg);
    if (ra == MH_OK) {
        CHECKF(bb->a.n == n && bb->b.n == n && rows_same(&bb->a, &bb->b, 0, n),
               "rows differ, n %u", n);
        ty->ok++;
    } else {
        CHECKF(da.code == db.code && da.offset == db.offset &&
                   strcmp(da.msg, db.msg) == 0,
               "details differ: fast %d @%llu '%s', reference %d @%llu '%s'",
               da.code, (unsigned long long)da.offset, da.msg, db.code,
               (unsigned long long)db.offset, db.msg);
        ty->bad++;
    }
    if (out)
        *out = da;
    return ra;
}

static mh_block_layout layout_of(unsigned k, int *stream, int *pc) {
    mh_block_layout l;
    *stream = k == 1 || k == 2 || k == 4;
    *pc = k == 2 || k == 4;
    mh_block_layout_std(&l, k == 3 ? 1 : 2, *stream, *pc);
    if (k == 4)
        l.kind[l.ncols++] = MH_COL_UNKNOWN;
    return l;
}

/* A 2.0 block by hand: columns of the given varints, base layout. */
static size_t put_col(uint8_t *p, const uint64_t *v, uint32_t nv,
                      const uint8_t *bitmap, size_t bitmap_len) {
    uint8_t tmp[16 * 64];
    uint8_t *q = tmp;
    memcpy(q, bitmap, bitmap_len);
    q += bitmap_len;
    for (uint32_t i = 0; i < nv; i++)
        q = mhf_put_varint(q, v[i]);
    size_t len = (size_t)(q - tmp);
    uint8_t *s = mhf_put_varint(p, len);
    memcpy(s, tmp, len);
    return (size_t)(s - p) + len;
}

/* Sixteen rows, each column its varints; one value replaced by hostile. */
static void hostile(blockbuf *bb, unsigned col, uint32_t row, uint64_t val,
                    const char *want, tally *ty) {
    enum { N = 16 };
    uint64_t c[5][N];
    for (uint32_t i = 0; i < N; i++) {
        c[0][i] = 0;                    /* ids 0, 1, 2 ... */
        c[1][i] = 2;                    /* t + 1 each row */
        c[2][i] = i ? 16 : 0x1000;      /* phy 0x1000 + 8 i */
        c[3][i] = 0;                    /* lin = phy */
        c[4][i] = 8;                    /* size 8 */
    }
    if (col == 2 && val == UINT64_MAX) { /* a physical at the top: wraps */
        c[2][0] = mhf_zigzag(UINT64_MAX - 3u);
    } else {
        c[col][row] = val;
    }
    uint8_t raw[4096], ones[2] = {0xff, 0xff}, *p = raw;
    for (unsigned k = 0; k < 5; k++)
        p += put_col(p, c[k], N, ones, k == 3 ? 2 : 0);
    mh_block_layout l;
    mh_block_layout_std(&l, 2, 0, 0);
    mh_diag d;
    int rc = both(bb, raw, (size_t)(p - raw), N, 100, &l, ty, &d);
    CHECKF(rc == MH_ECORRUPT && strstr(d.msg, want),
           "column %u row %u value %llu: %s '%s', want '%s'", col, row,
           (unsigned long long)val, mh_error_name(rc), d.msg, want);
}

/* Raw varint bytes in place of a column's first value: an 11-byte varint
 * or one beyond 64 bits. */
static void bad_varint(blockbuf *bb, unsigned col, const uint8_t *bytes,
                       size_t nb, const char *want, tally *ty) {
    enum { N = 24 };
    uint8_t raw[4096], *p = raw, cb[512];
    mh_block_layout l;
    mh_block_layout_std(&l, 2, 0, 0);
    for (unsigned k = 0; k < 5; k++) {
        uint8_t *q = cb;
        if (k == 3) {
            memset(q, 0xff, 3);
            q += 3;
        }
        for (uint32_t i = 0; i < N; i++) {
            if (k == col && i == 9) {
                memcpy(q, bytes, nb);
                q += nb;
            } else {
                *q++ = k == 4 ? 4 : k == 1 ? 2 : 0;
            }
        }
        p = mhf_put_varint(p, (uint64_t)(q - cb));
        memcpy(p, cb, (size_t)(q - cb));
        p += q - cb;
    }
    mh_diag d;
    int rc = both(bb, raw, (size_t)(p - raw), N, 0, &l, ty, &d);
    CHECKF(rc == MH_ECORRUPT && strstr(d.msg, want), "%s '%s', want '%s'",
           mh_error_name(rc), d.msg, want);
}

int main(void) {
    blockbuf bb;
    memset(&bb, 0, sizeof bb);
    CHECK_OK(mh_rows_reserve(&bb.in, MAX_N));
    CHECK_OK(mh_rows_reserve(&bb.a, MAX_N));
    CHECK_OK(mh_rows_reserve(&bb.b, MAX_N));
    bb.raw = malloc(mh_block_raw_bound(MAX_N) + 64);
    uint8_t *mut = malloc(mh_block_raw_bound(MAX_N) + 64);
    CHECK(bb.raw && mut);
    tally ty = {0, 0};
    tu_rng r = {0x5eed0dec0de5u};
    static const uint32_t sizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65,
                                     255, 256, 257, 511, 512, 513, 1000, 4096};
    unsigned blocks = 0;
    for (unsigned round = 0; round < 6; round++)
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (unsigned mode = 0; mode < 10; mode++) {
                uint32_t n = sizes[si];
                unsigned lk = (unsigned)tu_below(&r, 5);
                int stream, pc;
                mh_block_layout l = layout_of(lk, &stream, &pc);
                draw_rows(&r, &bb.in, n, mode);
                uint64_t t_base = bb.in.t[0] - tu_below(&r, 3);
                size_t size;
                if (l.major < 2) { /* 1.0: the five columns without lengths */
                    size_t s2 = mh_block_encode_raw(bb.raw, n, &bb.in, t_base, 0, 0);
                    /* strip the length varints of the five columns */
                    const uint8_t *p = bb.raw, *e = bb.raw + s2;
                    uint8_t *q = mut;
                    while (p < e) {
                        uint64_t len;
                        CHECK(mhf_get_varint(&p, e, &len) == 0);
                        memcpy(q, p, len);
                        q += len;
                        p += len;
                    }
                    size = (size_t)(q - mut);
                    memcpy(bb.raw, mut, size);
                } else {
                    size = mh_block_encode_raw(bb.raw, n, &bb.in, t_base, stream, pc);
                    if (lk == 4) { /* a column of a newer minor */
                        uint8_t *q = bb.raw + size;
                        *q++ = 3;
                        memcpy(q, "\x81\x01\x07", 3);
                        size += 4;
                    }
                }
                /* bad streams are refused: keep the good rows good */
                int rc = both(&bb, bb.raw, size, n, t_base, &l, &ty, NULL);
                /* a head, a window (any rows of the block), rows alone */
                window(&bb, bb.raw, size, n, 0, 1 + (uint32_t)tu_below(&r, n), t_base, &l, rc);
                take_rows(&bb, &r, bb.raw, size, n, &l, rc);
                {
                    uint32_t up = 1 + (uint32_t)tu_below(&r, n);
                    window(&bb, bb.raw, size, n, (uint32_t)tu_below(&r, up), up, t_base, &l,
                           rc);
                }
                int in_range = 1;
                for (uint32_t i = 0; i < n; i++)
                    in_range &= bb.in.phy[i] + (bb.in.size[i] - 1u) >= bb.in.phy[i];
                if (in_range) {
                    CHECKF(rc == MH_OK, "good block refused, n %u mode %u", n, mode);
                    CHECK(bb.a.id_off[n - 1] == bb.in.id_off[n - 1]);
                    CHECK(bb.a.phy[n / 2] == bb.in.phy[n / 2]);
                }
                blocks++;
                /* damaged copies */
                for (unsigned m = 0; m < 40; m++) {
                    size_t ms = size;
                    memcpy(mut, bb.raw, size);
                    unsigned how = (unsigned)tu_below(&r, 6);
                    size_t at = tu_below(&r, size);
                    if (how == 0)
                        mut[at] ^= (uint8_t)(1u << tu_below(&r, 8));
                    else if (how == 1)
                        mut[at] = 0x80;
                    else if (how == 2)
                        mut[at] = 0xff;
                    else if (how == 3)
                        mut[at] = 0;
                    else if (how == 4)
                        ms = at;
                    else
                        for (unsigned k = 0; k < 1 + tu_below(&r, 12); k++)
                            mut[ms++] = (uint8_t)tu_next(&r);
                    int mrc = both(&bb, mut, ms, n, t_base, &l, &ty, NULL);
                    uint32_t up = 1 + (uint32_t)tu_below(&r, n);
                    window(&bb, mut, ms, n, m & 1 ? (uint32_t)tu_below(&r, up) : 0, up, t_base,
                           &l, mrc);
                    if (m % 4 == 0)
                        take_rows(&bb, &r, mut, ms, n, &l, mrc);
                }
            }
    /* every byte of a presence bitmap: row 8j + k has a linear address
     * (and a pc) when bit k of j is set, j = 0 .. 255 */
    {
        uint32_t n = 2048;
        draw_rows(&r, &bb.in, n, 1);
        for (uint32_t i = 0; i < n; i++) {
            bb.in.phy[i] &= 0xffffffffffu; /* no range wraps */
            bb.in.has_lin[i] = (uint8_t)((i / 8u) >> (i % 8u) & 1u);
            bb.in.lin[i] = bb.in.has_lin[i] ? bb.in.phy[i] ^ 0x10 : 0;
            bb.in.has_pc[i] = (uint8_t)!bb.in.has_lin[i];
            bb.in.pc[i] = bb.in.has_pc[i] ? 0x400000u + i : 0;
        }
        mh_block_layout l;
        mh_block_layout_std(&l, 2, 1, 1);
        size_t size = mh_block_encode_raw(bb.raw, n, &bb.in, bb.in.t[0], 1, 1);
        CHECK_OK(both(&bb, bb.raw, size, n, bb.in.t[0], &l, &ty, NULL));
        for (uint32_t i = 0; i < n; i++)
            CHECK(bb.a.has_lin[i] == bb.in.has_lin[i] && bb.a.lin[i] == bb.in.lin[i] &&
                  bb.a.has_pc[i] == bb.in.has_pc[i] && bb.a.pc[i] == bb.in.pc[i]);
    }
    /* values the checks must refuse, each by its detail */
    hostile(&bb, 0, 0, mhf_zigzag(UINT32_MAX + 1ull), "id offset out of range, row 0", &ty);
    hostile(&bb, 0, 13, mhf_zigzag(UINT32_MAX), "id offset out of range, row 13", &ty);
    hostile(&bb, 4, 0, 0, "size out of range, row 0", &ty);
    hostile(&bb, 4, 9, 0, "size out of range, row 9", &ty);
    hostile(&bb, 4, 15, UINT32_MAX + 1ull, "size out of range, row 15", &ty);
    hostile(&bb, 2, 0, UINT64_MAX, "address range wraps, row 0", &ty);
    static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                     0x80, 0x80, 0x80, 0x80, 0x00};
    static const uint8_t beyond[] = {0x80, 0x80, 0x80, 0x80, 0x80,
                                     0x80, 0x80, 0x80, 0x80, 0x02};
    static const char *const col[] = {"id", "transition", "physical", "linear", "size"};
    for (unsigned k = 0; k < 5; k++) {
        char want[64];
        snprintf(want, sizeof want, "bad varint in %s column, row 9", col[k]);
        bad_varint(&bb, k, eleven, sizeof eleven, want, &ty);
        bad_varint(&bb, k, beyond, sizeof beyond, want, &ty);
    }
    /* streams: 65535 passes, 65536 is refused */
    {
        uint32_t n = 40;
        draw_rows(&r, &bb.in, n, 1);
        for (uint32_t i = 0; i < n; i++)
            bb.in.phy[i] &= 0xffffffffu;
        bb.in.stream[17] = MH_STREAM_MAX;
        mh_block_layout l;
        mh_block_layout_std(&l, 2, 1, 1);
        size_t size = mh_block_encode_raw(bb.raw, n, &bb.in, bb.in.t[0], 1, 1);
        CHECK_OK(both(&bb, bb.raw, size, n, bb.in.t[0], &l, &ty, NULL));
        CHECK(bb.a.stream[17] == MH_STREAM_MAX);
        bb.in.stream[17] = MH_STREAM_MAX + 1u;
        size = mh_block_encode_raw(bb.raw, n, &bb.in, bb.in.t[0], 1, 1);
        mh_diag d;
        CHECK_RC(both(&bb, bb.raw, size, n, bb.in.t[0], &l, &ty, &d), MH_ECORRUPT);
        CHECKF(strstr(d.msg, "stream 65536 out of range, row 17"), "'%s'", d.msg);
    }
    printf("codec_fast: %u blocks, %u decoded alike, %u refused alike\n",
           blocks, ty.ok, ty.bad);
    /* the damage must have produced both outcomes in numbers */
    CHECK(ty.ok > blocks && ty.bad > blocks);
    mh_rows_free(&bb.in);
    mh_rows_free(&bb.a);
    mh_rows_free(&bb.b);
    free(bb.raw);
    free(mut);
    return 0;
}
