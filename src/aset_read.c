/*
 * aset_read.c - the address set's reading half (SPEC.md "Address set",
 * section type 8): the section checked on a segment's first query (its
 * sum, or with piece sums the pieces of its header and run table, then
 * header and run table; a run's bytes by their pieces before its first
 * decode), runs decoded with every varint bounded by the run's bytes, and
 * the one question a query asks: does any interval of its operations meet
 * [A, B]? The span address sets (span_read.c) embed the same structure.
 *
 * The question costs a binary search over the operation's runs (the last
 * one starting at or before B) and the decoding of that run up to B: only
 * the interval holding or preceding B can meet [A, B], and it lies in that
 * run because the next run starts past B.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static inline uint64_t run_lo(const mh_aset_view *v, uint32_t i) {
    return mhf_load_u64(v->runs + (size_t)i * v->run_size + MHF_ASET_R_LO);
}

void mh_aset_view_fill(const uint8_t *p, uint64_t base_off, mh_aset_view *out) {
    out->k = mhf_load_u32(p + MHF_ASET_RUN_IVALS);
    out->run_size = mhf_load_u32(p + MHF_ASET_RUN_SIZE_OFF);
    out->nruns = mhf_load_u32(p + MHF_ASET_RUN_COUNT);
    out->data_bytes = mhf_load_u64(p + MHF_ASET_DATA_BYTES);
    out->off = base_off;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        const uint8_t *r = p + MHF_ASET_OPS + o * MHF_ASET_OP_SIZE;
        out->nivals[o] = mhf_load_u64(r + MHF_ASET_OP_IVALS);
        out->run_first[o] = mhf_load_u32(r + MHF_ASET_OP_RUN_FIRST);
        out->run_count[o] = mhf_load_u32(r + MHF_ASET_OP_RUN_COUNT);
    }
    out->runs = p + MHF_ASET_HEADER_SIZE;
    out->data = out->runs + (size_t)out->nruns * out->run_size;
    out->lazy = NULL;
    out->ptab = NULL;
    out->ptype = 0;
    out->prel = 0;
    out->run_ok = NULL;
}

int mh_aset_parse(const uint8_t *p, uint64_t size, uint64_t base_off,
                  uint16_t minor, mh_aset_view *out, mh_diag *d) {
    int later = minor > MHF_VERSION_MINOR;
    MH_CHECK(size >= MHF_ASET_HEADER_SIZE, MH_ECORRUPT, d, base_off,
             "address set: %llu bytes, less than its %u-byte header",
             (unsigned long long)size, MHF_ASET_HEADER_SIZE);
    uint32_t k = mhf_load_u32(p + MHF_ASET_RUN_IVALS);
    uint32_t rsz = mhf_load_u32(p + MHF_ASET_RUN_SIZE_OFF);
    uint32_t nruns = mhf_load_u32(p + MHF_ASET_RUN_COUNT);
    uint64_t data = mhf_load_u64(p + MHF_ASET_DATA_BYTES);
    MH_CHECK(k >= 1 && k <= MHF_ASET_K_MAX, MH_ECORRUPT, d,
             base_off + MHF_ASET_RUN_IVALS,
             "address set: %u intervals per run, not 1 ... %u", k,
             MHF_ASET_K_MAX);
    MH_CHECK(later ? rsz >= MHF_ASET_RUN_SIZE : rsz == MHF_ASET_RUN_SIZE,
             MH_ECORRUPT, d, base_off + MHF_ASET_RUN_SIZE_OFF,
             "address set: run_size %u, expected %s%u", rsz,
             later ? "at least " : "", MHF_ASET_RUN_SIZE);
    MH_CHECK(later || (mhf_load_u32(p + MHF_ASET_RESERVED0) == 0 &&
                       mhf_load_u64(p + MHF_ASET_RESERVED1) == 0),
             MH_ECORRUPT, d, base_off + MHF_ASET_RESERVED0,
             "address set: reserved header field not zero");
    uint64_t table = (uint64_t)nruns * rsz; /* < 2^64 */
    uint64_t room = size - MHF_ASET_HEADER_SIZE;
    MH_CHECK(table <= room && data <= room - table, MH_ECORRUPT, d, base_off,
             "address set: %u runs of %u bytes and %llu data bytes do not fit "
             "in its %llu bytes", nruns, rsz, (unsigned long long)data,
             (unsigned long long)size);
    uint64_t need = MHF_ASET_HEADER_SIZE + table + data;
    MH_CHECK(later || need == size, MH_ECORRUPT, d, base_off,
             "address set: %llu bytes, its header says %llu",
             (unsigned long long)size, (unsigned long long)need);
    const uint8_t *runs = p + MHF_ASET_HEADER_SIZE;
    uint32_t next_run = 0;
    uint64_t next_off = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        const uint8_t *r = p + MHF_ASET_OPS + o * MHF_ASET_OP_SIZE;
        uint64_t roff = base_off + MHF_ASET_OPS + o * MHF_ASET_OP_SIZE;
        uint64_t nv = mhf_load_u64(r + MHF_ASET_OP_IVALS);
        uint32_t first = mhf_load_u32(r + MHF_ASET_OP_RUN_FIRST);
        uint32_t cnt = mhf_load_u32(r + MHF_ASET_OP_RUN_COUNT);
        MH_CHECK(first == next_run && cnt <= nruns - first, MH_ECORRUPT, d,
                 roff + MHF_ASET_OP_RUN_FIRST,
                 "address set: op %u: runs [%u, +%u) do not follow the "
                 "previous op's (next is %u of %u)", o, first, cnt, next_run,
                 nruns);
        MH_CHECK(nv / k + (nv % k != 0) == cnt, MH_ECORRUPT, d, roff,
                 "address set: op %u: %llu intervals in %u runs of %u", o,
                 (unsigned long long)nv, cnt, k);
        next_run = first + cnt;
        uint64_t prev_lo = 0;
        for (uint32_t i = 0; i < cnt; i++) {
            const uint8_t *x = runs + (size_t)(first + i) * rsz;
            uint64_t xoff = base_off + MHF_ASET_HEADER_SIZE +
                            (uint64_t)(first + i) * rsz;
            uint64_t lo = mhf_load_u64(x + MHF_ASET_R_LO);
            uint64_t off = mhf_load_u64(x + MHF_ASET_R_OFFSET);
            uint32_t iv = mhf_load_u32(x + MHF_ASET_R_IVALS);
            uint32_t nb = mhf_load_u32(x + MHF_ASET_R_BYTES);
            uint64_t want = i + 1 < cnt ? k : nv - (uint64_t)(cnt - 1) * k;
            MH_CHECK(iv == want, MH_ECORRUPT, d, xoff + MHF_ASET_R_IVALS,
                     "address set: run %u (op %u): %u intervals, expected "
                     "%llu", first + i, o, iv, (unsigned long long)want);
            /* a run of >= 1 interval ends at lo or above, and the next
             * run's first interval starts at least 2 past its end */
            MH_CHECK(i == 0 || (prev_lo <= UINT64_MAX - 2 && lo >= prev_lo + 2),
                     MH_ECORRUPT, d, xoff + MHF_ASET_R_LO,
                     "address set: run %u (op %u) starts at 0x%llx, not past "
                     "the previous run's 0x%llx", first + i, o,
                     (unsigned long long)lo, (unsigned long long)prev_lo);
            MH_CHECK(off == next_off && nb >= 1 && nb <= data - off, MH_ECORRUPT,
                     d, xoff + MHF_ASET_R_OFFSET,
                     "address set: run %u: bytes [%llu, +%u) do not follow the "
                     "previous run's (next is %llu of %llu)", first + i,
                     (unsigned long long)off, nb, (unsigned long long)next_off,
                     (unsigned long long)data);
            prev_lo = lo;
            next_off = off + nb;
        }
    }
    MH_CHECK(next_run == nruns, MH_ECORRUPT, d, base_off + MHF_ASET_RUN_COUNT,
             "address set: the operations list %u runs, its header %u",
             next_run, nruns);
    MH_CHECK(next_off == data, MH_ECORRUPT, d, base_off + MHF_ASET_DATA_BYTES,
             "address set: the runs cover %llu data bytes, its header says "
             "%llu", (unsigned long long)next_off, (unsigned long long)data);
    mh_aset_view_fill(p, base_off, out);
    return MH_OK;
}

/* Marks of a run (seg->aset_marks, 2 words each): for its intervals m_j
 * = j n / 4, j = 1 .. 3, of its n, word 0 the lo of interval m_j (0: no
 * mark; m_j >= 1, so its lo is >= 2) and word 1 the byte its gap varint
 * starts at, from the run's start (low 32 bits), and that gap (high 32
 * bits). A decode that reached m_j with every check passed records it; a
 * later query whose B is at or past the lo resumes there (the last
 * interval starting at or before B is at m_j or later, and it alone
 * decides): at most a quarter of the run is decoded, where half was on
 * average (~30 intervals an op, ~1.3 k instructions a segment on the real
 * stores). Word 1 is stored before word 0's release, by every thread
 * decoding the run (the same values). */
#define ASET_MARKS 3

static inline uint32_t mark_ival(uint32_t n, unsigned j) { return (j + 1) * n / 4; }

void mh_aset_view_lazy(mh_aset_view *v, const mh_seg *seg, uint32_t type, uint32_t rel) {
    mh_seg *m = (mh_seg *)seg;
    v->lazy = seg;
    v->ptab = atomic_load_explicit(&m->psum, memory_order_acquire);
    v->ptype = type;
    v->prel = rel;
    /* the runs' checked bits; without them each decode asks its pieces' */
    v->run_ok = mh_seg_bits(seg, type == MHF_SECT_SPAN ? &m->span_run_ok : &m->aset_run_ok,
                            v->nruns);
}

int mh_aset_check(const mh_seg *seg, const mh_section *sec, uint32_t type,
                  uint32_t rel, int how, const char *what, mh_aset_view *out,
                  mh_diag *d) {
    const uint8_t *p = seg->base + sec->offset + rel;
    const uint64_t size = sec->size - rel; /* rel <= size: the caller's */
    /* with piece sums covering the section (§9f): the pieces of the header
     * and the run table, the runs' bytes as queries decode them; else the
     * section's own sum, which reads it whole. Either way the set is asked
     * for in one read: on a cold store each page a query faults in on its
     * own costs more than the bytes (the qemu python recording, 20 cold
     * point questions: asking for the header and table only read 219
     * pages instead of 304, in 13 page faults instead of 9, and took
     * longer) */
    int lazy = how == MH_ASET_LAZY ? mh_psum_check(seg, type, rel, 0, what, d) : 0;
    if (lazy < 0)
        return lazy;
    if (lazy) {
        mh_seg_willneed(seg, p, (size_t)size);
        int rc = mh_psum_check_table(seg, type, rel, p, size, MHF_ASET_HEADER_SIZE,
                                     MHF_ASET_RUN_COUNT, MHF_ASET_RUN_SIZE_OFF, what, d);
        if (rc < 0)
            return rc;
    } else if (how != MH_ASET_SUMMED) {
        MH_TRY(mh_seg_section_sum(seg, sec, what, d));
    }
    int rc = mh_aset_parse(p, size, sec->offset + rel, seg->minor, out, d);
    if (rc != MH_OK) {
        if (d)
            mh_diag_prefix(d, "%s at byte %llu", what,
                           (unsigned long long)sec->offset);
        return rc;
    }
    if (lazy)
        mh_aset_view_lazy(out, seg, type, rel);
    return lazy;
}

int mh_aset_run_bytes(const mh_aset_view *v, uint32_t run, mh_diag *d) {
    if (!v->lazy)
        return MH_OK;
    if (mh_bit_get(v->run_ok, run))
        return MH_OK;
    const uint8_t *x = v->runs + (size_t)run * v->run_size;
    uint64_t rel = v->prel + MHF_ASET_HEADER_SIZE + (uint64_t)v->nruns * v->run_size +
                   mhf_load_u64(x + MHF_ASET_R_OFFSET);
    uint32_t nb = mhf_load_u32(x + MHF_ASET_R_BYTES);
    if (!mh_psum_known(v->ptab, v->ptype, rel, nb)) {
        int rc = mh_psum_check(v->lazy, v->ptype, rel, nb,
                               v->ptype == MHF_SECT_SPAN ? "span address set" : "address set",
                               d);
        if (rc < 0)
            return rc;
    }
    mh_bit_set(v->run_ok, run);
    return MH_OK;
}

int mh_aset_view_whole(const mh_seg *seg, mh_aset_view *out, mh_diag *d) {
    const mh_section *sec;
    if (mh_seg_section(seg, MHF_SECT_ASET, &sec) != MH_OK)
        return MH_ENOTFOUND;
    int rc = mh_aset_check(seg, sec, MHF_SECT_ASET, 0, MH_ASET_WHOLE, "address set",
                           out, d);
    return rc < 0 ? rc : MH_OK;
}

int mh_aset_view_get(const mh_seg *seg, mh_aset_view *out, mh_diag *d) {
    const mh_section *sec;
    if (mh_seg_section(seg, MHF_SECT_ASET, &sec) != MH_OK)
        return MH_ENOTFOUND;
    const uint8_t *p = seg->base + sec->offset;
    mh_seg *m = (mh_seg *)seg;
    /* checked once per reader; a segment that failed is checked again on
     * each use, so each failing query says why */
    if (atomic_load_explicit(&m->aset_ok, memory_order_acquire)) {
        mh_aset_view_fill(p, sec->offset, out);
        if (atomic_load_explicit(&m->aset_lazy, memory_order_relaxed))
            mh_aset_view_lazy(out, seg, MHF_SECT_ASET, 0);
        return MH_OK;
    }
    int lazy = mh_aset_check(seg, sec, MHF_SECT_ASET, 0, MH_ASET_LAZY, "address set",
                             out, d);
    if (lazy < 0)
        return lazy;
    /* the runs' marks (their table, then a page of them when a query
     * first decodes one of its runs, out of the reader's budget): one
     * table wins, the others are freed; without them (budget spent, no
     * memory) every query decodes from its run's start */
    size_t nr = out->nruns ? out->nruns : 1;
    mh_marks *mk = mh_marks_new(seg, nr, ASET_MARKS * 2), *none = NULL;
    if (mk && !atomic_compare_exchange_strong(&m->aset_marks, &none, mk))
        mh_marks_free(mk); /* its budget stays spent: a rare race */
    atomic_store_explicit(&m->aset_lazy, lazy, memory_order_relaxed);
    atomic_store_explicit(&m->aset_ok, 1, memory_order_release);
    return MH_OK;
}

void mh_aset_run_open(const mh_aset_view *v, uint32_t op, uint32_t run,
                      mh_aset_cur *c) {
    uint32_t i = v->run_first[op] + run;
    const uint8_t *x = v->runs + (size_t)i * v->run_size;
    uint64_t off = mhf_load_u64(x + MHF_ASET_R_OFFSET);
    c->p = v->data + off;
    c->end = c->p + mhf_load_u32(x + MHF_ASET_R_BYTES);
    c->lo = mhf_load_u64(x + MHF_ASET_R_LO);
    c->hi = 0;
    /* parse checked: the next run starts >= 2 past this one's lo */
    c->bound = run + 1 < v->run_count[op] ? run_lo(v, i + 1) - 2u : UINT64_MAX;
    c->left = mhf_load_u32(x + MHF_ASET_R_IVALS);
    c->run = i;
    c->i = 0;
    c->off = v->off + MHF_ASET_HEADER_SIZE +
             (uint64_t)v->nruns * v->run_size + off;
}

int mh_aset_run_step(mh_aset_cur *c, mh_diag *d) {
    if (c->left == 0) {
        MH_CHECK(c->p == c->end, MH_ECORRUPT, d, c->off,
                 "address set: run %u: %llu bytes left after its intervals",
                 c->run, (unsigned long long)(c->end - c->p));
        return 0;
    }
    uint64_t gap = 0, len;
    int bad = c->i > 0 && mhf_get_varint(&c->p, c->end, &gap) != 0;
    bad = bad || mhf_get_varint(&c->p, c->end, &len) != 0;
    MH_CHECK(!bad, MH_ECORRUPT, d, c->off,
             "address set: run %u: interval %u's varint runs past the run's "
             "bytes or 64 bits", c->run, c->i);
    if (c->i > 0) {
        /* lo = hi + 2 + gap, without wrapping */
        MH_CHECK(c->hi <= UINT64_MAX - 2 && gap <= UINT64_MAX - 2 - c->hi,
                 MH_ECORRUPT, d, c->off,
                 "address set: run %u: interval %u starts past 2^64 - 1",
                 c->run, c->i);
        c->lo = c->hi + 2 + gap;
    }
    MH_CHECK(len <= UINT64_MAX - c->lo, MH_ECORRUPT, d, c->off,
             "address set: run %u: interval %u [0x%llx, +%llu] ends past "
             "2^64 - 1", c->run, c->i, (unsigned long long)c->lo,
             (unsigned long long)len);
    MH_CHECK(c->lo + len <= c->bound, MH_ECORRUPT, d, c->off,
             "address set: run %u: interval %u [0x%llx, +%llu] passes the "
             "next run's start", c->run, c->i, (unsigned long long)c->lo,
             (unsigned long long)len);
    c->hi = c->lo + len;
    c->i++;
    c->left--;
    return 1;
}

int mh_aset_meets(const mh_seg *seg, uint64_t a, uint64_t b, uint32_t ops,
                  mh_diag *d) {
    mh_aset_view v;
    int rc = mh_aset_view_get(seg, &v, d);
    if (rc == MH_ENOTFOUND)
        return 1;
    if (rc != MH_OK)
        return rc;
    rc = mh_aset_view_meets(&v, seg,
                            atomic_load_explicit(&((mh_seg *)seg)->aset_marks,
                                                 memory_order_acquire),
                            a, b, ops, d);
    /* a piece's checksum detail names its place already */
    if (rc < 0 && rc != MH_ECHECKSUM && d)
        mh_diag_prefix(d, "address set at byte %llu", (unsigned long long)v.off);
    return rc;
}

int mh_aset_view_meets(const mh_aset_view *vp, const mh_seg *seg, mh_marks *marks, uint64_t a,
                       uint64_t b, uint32_t ops, mh_diag *d) {
    const mh_aset_view v = *vp;
    int rc = 0;
    for (unsigned o = 0; o < MHF_OP_COUNT; o++) {
        if (!(ops >> o & 1u) || v.run_count[o] == 0)
            continue;
        /* the last run starting at or before b */
        uint32_t lo = 0, hi = v.run_count[o];
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (run_lo(&v, v.run_first[o] + mid) <= b)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0)
            continue; /* every interval starts past b */
        mh_aset_cur c;
        mh_aset_run_open(&v, o, lo - 1, &c);
        if (v.lazy && (rc = mh_aset_run_bytes(&v, c.run, d)) < 0)
            return rc;
        _Atomic uint64_t *mk = mh_marks_run(seg, marks, c.run, 1);
        const uint8_t *start = c.p;
        uint32_t n = c.left;
        for (unsigned j = ASET_MARKS; mk && j-- > 0;) {
            uint64_t mlo = atomic_load_explicit(&mk[2 * j], memory_order_acquire);
            if (mlo == 0 || mlo > b)
                continue;
            uint64_t w = atomic_load_explicit(&mk[2 * j + 1], memory_order_relaxed);
            uint32_t m = mark_ival(n, j);
            if ((uint32_t)w >= (size_t)(c.end - c.p) || m == 0 || m >= n)
                break; /* cannot be: decode from the start */
            c.p = start + (uint32_t)w;
            c.hi = mlo - 2 - (w >> 32); /* the end of interval m - 1 */
            c.lo = c.hi;                /* (only its end is read) */
            c.i = m;
            c.left = n - m;
            break;
        }
        /* the next mark to record: its interval is decoded alone */
        unsigned nj = 0;
        while (nj < ASET_MARKS && mark_ival(n, nj) < c.i)
            nj++;
        uint32_t next_mark = nj < ASET_MARKS && mk ? mark_ival(n, nj) : UINT32_MAX;
        /* the intervals starting at or before b: the last of them is the
         * only one that can reach a (they are sorted and disjoint), but
         * the first to reach it answers */
        for (;;) {
            /* the intervals inline, with mh_aset_run_step's checks (a
             * failing one, and the run's end, go through it: it reports
             * them). A never-accessed point query decodes ~30 intervals
             * per op in every segment (callgrind, sort in 20 segments: 31
             * k of 67 k instructions a query); on the real stores a third
             * of a point query's intervals have a gap of 128 or more, which
             * the call cost ~54 instructions each */
            while (c.i > 0 && c.left > 0) {
                /* four intervals of one-byte varints at a time while the
                 * fourth still ends before a: none of them meets [a, b]
                 * (each ends before a, so starts before b), and their
                 * ends only grow, so the fourth's bound check stands for
                 * all four */
                if (c.left >= 4 && c.end - c.p >= 8 && c.hi <= UINT64_MAX - 2048 &&
                    (c.i > next_mark || next_mark - c.i >= 4)) {
                    uint64_t x;
                    memcpy(&x, c.p, 8);
                    if (!(x & 0x8080808080808080u)) {
                        uint64_t pairs = (x & 0x00ff00ff00ff00ffu) +
                                         (x >> 8 & 0x00ff00ff00ff00ffu);
                        uint64_t nhi = c.hi + 8 + ((pairs * 0x0001000100010001u) >> 48);
                        if (nhi < a && nhi <= c.bound) {
                            c.lo = nhi - c.p[7];
                            c.hi = nhi;
                            c.p += 8;
                            c.i += 4;
                            c.left -= 4;
                            continue;
                        }
                    }
                }
                const uint8_t *p = c.p;
                uint64_t gap, len;
                if (mhf_get_varint(&p, c.end, &gap) != 0 ||
                    mhf_get_varint(&p, c.end, &len) != 0 || c.hi > UINT64_MAX - 2 ||
                    gap > UINT64_MAX - 2 - c.hi)
                    break;
                uint64_t nlo = c.hi + 2 + gap;
                if (len > UINT64_MAX - nlo || nlo + len > c.bound)
                    break;
                if (c.i == next_mark) {
                    if (gap <= UINT32_MAX && (size_t)(c.p - start) <= UINT32_MAX &&
                        atomic_load_explicit(&mk[2 * nj], memory_order_relaxed) == 0) {
                        atomic_store_explicit(&mk[2 * nj + 1],
                                              gap << 32 | (uint64_t)(c.p - start),
                                              memory_order_relaxed);
                        atomic_store_explicit(&mk[2 * nj], nlo, memory_order_release);
                    }
                    nj++;
                    while (nj < ASET_MARKS && mark_ival(n, nj) <= c.i)
                        nj++;
                    next_mark = nj < ASET_MARKS ? mark_ival(n, nj) : UINT32_MAX;
                }
                c.p = p;
                c.lo = nlo;
                c.hi = nlo + len;
                c.i++;
                c.left--;
                if (nlo > b)
                    break;
                if (c.hi >= a)
                    return 1;
            }
            if (c.i > 0 && c.lo > b) {
                rc = 0;
                break;
            }
            rc = mh_aset_run_step(&c, d);
            if (rc != 1 || c.lo > b)
                break;
            if (c.hi >= a)
                return 1;
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}
