/*
 * psum.c - the piece sums (SPEC.md §9f, section type 12, format 2.4):
 *
 *  - meaning: every segment with an optional section carries section 12,
 *    last, and its bytes equal the spec's recomputation (tests/resum.c,
 *    written from the spec);
 *  - laziness: a point query on a fresh reader checks a few pieces of the
 *    address postings, not all of them, and the view it uses is lazy;
 *  - answers: random queries and point queries equal the oracle with the
 *    piece sums used and ignored (psum_off: whole-section checks);
 *  - damage: a flipped postings byte is MH_ECHECKSUM naming its piece for
 *    the queries that read it and one fsck problem; broken piece sums are
 *    not used (queries answer, checked whole) and fsck names them; a stale
 *    sum whose section is fine is named by fsck and by the query reading it.
 *
 * `psum real MEMHIST` does the same on a qemu recording of /usr/bin/sort
 * (77: skipped when qemu cannot run here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "resum.h"
#include "testutil.h"


static const mh_seg *seg_of(const mh_reader *r, size_t i) {
    const mh_seg *s = NULL;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_reader_seg(r, i, &s, &d));
    return s;
}

/* Hot words, a stack-like sweep and scattered pages, reads and writes
 * (tu_read_all's default operations). */
static void make_trace(tu_rng *rng, mh_access *all, size_t n) {
    uint64_t pos = 0x7ffd00001000u;
    for (size_t i = 0; i < n; i++) {
        mh_access *x = &all[i];
        memset(x, 0, sizeof *x);
        x->transition = i / 2;
        x->size = (uint32_t)(1u << tu_below(rng, 4));
        unsigned k = (unsigned)tu_below(rng, 100);
        if (k < 30)
            x->physical = 0x601000 + 8 * tu_below(rng, 1000);
        else if (k < 98) {
            x->physical = pos;
            pos += 8 + 8 * tu_below(rng, 3);
            if (pos > 0x7ffd00001000u + 12000)
                pos = 0x7ffd00001000u + 8 * tu_below(rng, 64);
        } else
            x->physical = (tu_next(rng) & 0xffffffffff000u) + 8 * tu_below(rng, 512);
        x->op = (uint8_t)(tu_below(rng, 3) == 0 ? MH_OP_WRITE : MH_OP_READ);
    }
}

static void write_store(const char *dir, const mh_access *all, size_t n) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 2000;
    o.commit_accesses = n / 3 + 1;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    CHECK_OK(mh_writer_append_batch(w, all, n, NULL));
    CHECK_OK(mh_writer_close(w));
}

/* Section 12 in every segment that has an optional section, last, and
 * equal to the spec's recomputation. Returns the segments checked. */
static size_t check_meaning(const char *dir, const mh_reader *r) {
    size_t with = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_seg *s = seg_of(r, i);
        int optional = 0;
        for (uint32_t k = 0; k < s->nsections; k++)
            optional |= s->sections[k].type >= MHF_PSUM_TYPE_MIN &&
                        s->sections[k].type != MHF_SECT_PSUM;
        const mh_section *ps;
        int has = mh_seg_section(s, MHF_SECT_PSUM, &ps) == MH_OK;
        CHECKF(has == optional && s->minor == MHF_VERSION_MINOR, "segment %zu (2.%u): piece sums %d, "
               "optional sections %d", i, s->minor, has, optional);
        if (!has)
            continue;
        with++;
        CHECK(ps == &s->sections[s->nsections - 1]);
        char path[600];
        tu_join(path, sizeof path, dir, s->name);
        size_t len;
        uint8_t *b = tu_read_file(path, &len);
        CHECK(b);
        uint8_t *c = malloc(len);
        CHECK(c);
        memcpy(c, b, len);
        size_t ents = (size_t)mhf_load_u32(b + ps->offset + MHF_PSUM_ENTRY_COUNT) *
                      MHF_PSUM_ENTRY_SIZE;
        memset(c + ps->offset + MHF_PSUM_HEADER_SIZE + ents, 0xa5,
               (size_t)ps->size - MHF_PSUM_HEADER_SIZE - ents); /* the sums, destroyed */
        tu_resum_pieces(c, len);
        CHECKF(memcmp(b, c, len) == 0, "segment %zu: piece sums differ from the spec's", i);
        free(b);
        free(c);
    }
    return with;
}

/* An 8-byte query at the address of a random access. */
static void point_query(tu_rng *rng, const mh_access *all, size_t n, mh_query *q) {
    mh_query_init(q);
    const mh_access *a = &all[tu_below(rng, n)];
    q->addr_first = a->physical & ~(uint64_t)7;
    q->addr_last = q->addr_first + 7;
    q->ops = (uint32_t)tu_range(rng, 1, 7);
    q->direction = tu_below(rng, 2) ? MH_FORWARD : MH_BACKWARD;
    q->start = all[tu_below(rng, n)].transition;
}

/* The pieces of section `type` (an address set at byte rel of it: 0, or
 * a span address set's after its header) a reader checked, against what
 * a lazy read of one query may check: its header and run table, and the
 * bytes of one run per op (each within two pieces). */
static void check_lazy_set(const mh_seg *s, const mh_psum_tab *t, uint32_t type,
                           uint32_t rel, size_t i, size_t *sets) {
    const mh_section *sec;
    CHECK(mh_seg_section(s, type, &sec) == MH_OK);
    const uint8_t *p = s->base + sec->offset + rel;
    uint64_t table_end = rel + MHF_ASET_HEADER_SIZE +
                         (uint64_t)mhf_load_u32(p + MHF_ASET_RUN_COUNT) * MHF_ASET_RUN_SIZE;
    uint64_t head = (table_end + 4095) / 4096; /* pieces of 4 KiB: the writer's */
    uint64_t f = t->first[type], c = t->count[type], done = 0;
    for (uint64_t k = f; k < f + c; k++)
        done += atomic_load(&t->done[k >> 6]) >> (k & 63) & 1u;
    CHECKF(done >= head && done <= head + 2 * MHF_OP_COUNT,
           "segment %zu: %llu of %llu pieces of section %u checked by one point "
           "query (header and run table: %llu)", i, (unsigned long long)done,
           (unsigned long long)c, type, (unsigned long long)head);
    (*sets)++;
}

/* The pieces of an address summary (kind: section 6 or 9) a reader
 * checked: its header and entries, and the postings of the entries one
 * page query reads (at most 64 granules of each op, each entry's postings
 * within a few pieces: far fewer than a whole summary of real traces). */
static void check_lazy_summary(const mh_seg *s, const mh_psum_tab *t, unsigned kind,
                               size_t i, size_t *sums) {
    uint32_t type = kind == MH_SUM_FINE ? MHF_SECT_SUMMARY_FINE : MHF_SECT_SUMMARY;
    const mh_section *sec = mh_summary_section(s, kind);
    CHECK(sec != NULL);
    const uint8_t *p = s->base + sec->offset;
    uint64_t table_end = MHF_SUM_HEADER_SIZE + (uint64_t)mhf_load_u32(p + MHF_SUM_ENTRY_COUNT) *
                                                   MHF_SUM_ENTRY_SIZE;
    uint64_t head = (table_end + 4095) / 4096;
    uint64_t f = t->first[type], c = t->count[type], done = 0;
    for (uint64_t k = f; k < f + c; k++)
        done += atomic_load(&t->done[k >> 6]) >> (k & 63) & 1u;
    CHECKF(done >= head && (c <= head + 8 || done < c),
           "segment %zu: %llu of %llu pieces of section %u checked by one page query "
           "(header and entries: %llu)", i, (unsigned long long)done,
           (unsigned long long)c, type, (unsigned long long)head);
    (*sums)++;
}

/* A fresh reader's first point query checks a few of the postings'
 * pieces, through a lazy view; of the address sets and span address sets
 * it reads, their header and run table and the runs it decodes. */
static void check_lazy(const char *dir, const mh_access *all, size_t n) {
    tu_rng rng = {11};
    size_t lazy_segs = 0, asets = 0, spans = 0, sums = 0;
    int with_aset = 0; /* a segment read has an address set */
    uint64_t most = 0; /* the most pieces a section had */
    for (int rep = 0; rep < 20; rep++) {
        mh_reader *r;
        CHECK_OK(mh_reader_open(dir, &r));
        mh_query q;
        point_query(&rng, all, n, &q);
        tu_check_query(r, all, n, &q, 1);
        /* and a 4 KiB one, too wide for the postings: the summaries */
        mh_query pq = q;
        pq.addr_first &= ~(uint64_t)4095;
        pq.addr_last = pq.addr_first + 4095;
        tu_check_query(r, all, n, &pq, 1);
        for (size_t i = 0; i < r->nsegs; i++) {
            if (atomic_load(&r->seg_state[i]) != MH_SEG_OPEN)
                continue;
            const mh_seg *s = &r->segs[i];
            const mh_section *as;
            with_aset |= mh_seg_section(s, MHF_SECT_ASET, &as) == MH_OK;
            const mh_psum_tab *t = atomic_load(&s->psum);
            if (!atomic_load(&s->apost_ok) || !t || !t->sec[MHF_SECT_APOST])
                continue;
            CHECK(atomic_load(&s->apost_lazy));
            uint64_t f = t->first[MHF_SECT_APOST], c = t->count[MHF_SECT_APOST], done = 0;
            for (uint64_t k = f; k < f + c; k++)
                done += atomic_load(&t->done[k >> 6]) >> (k & 63) & 1u;
            CHECKF(done >= 1 && (c < 8 || done < c), "segment %zu: %llu of %llu postings "
                   "pieces checked by one point query", i, (unsigned long long)done,
                   (unsigned long long)c);
            lazy_segs++;
            most = c > most ? c : most;
            if (atomic_load(&s->aset_ok)) {
                CHECK(atomic_load(&s->aset_lazy));
                check_lazy_set(s, t, MHF_SECT_ASET, 0, i, &asets);
            }
            for (unsigned kind = 0; kind < 2; kind++) {
                if (!atomic_load(&s->summary_ok[kind]))
                    continue;
                CHECK(atomic_load(&s->summary_lazy[kind]));
                check_lazy_summary(s, t, kind, i, &sums);
            }
            if (atomic_load(&s->span_ok) && !atomic_load(&s->span_stale)) {
                CHECK(atomic_load(&s->span_lazy));
                check_lazy_set(s, t, MHF_SECT_SPAN, MHF_SPAN_HEADER_SIZE, i, &spans);
            }
        }
        mh_reader_close(r);
    }
    CHECKF(lazy_segs > 0 && most >= 8, "%zu lazy segments, at most %llu pieces", lazy_segs,
           (unsigned long long)most);
    CHECKF(asets > 0 || !with_aset, "no address set read by piece sums (%zu spans)", spans);
    CHECKF(sums > 0, "no address summary read by piece sums");
    printf("lazy reads: %zu postings, %zu address sets, %zu span address sets, "
           "%zu summaries\n", lazy_segs, asets, spans, sums);
}

/* Random queries and point queries against the oracle, piece sums used
 * (0) or ignored (1). */
static void check_answers(const char *dir, const mh_access *all, size_t n, int off) {
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    r->psum_off = off;
    tu_rng rng = {5u + (uint64_t)off};
    for (int i = 0; i < 400; i++) {
        mh_query q;
        point_query(&rng, all, n, &q);
        tu_check_query(r, all, n, &q, 1 + tu_below(&rng, 20));
    }
    tu_random_queries(r, all, n, 150, 99u + (uint64_t)off);
    for (size_t i = 0; i < r->nsegs; i++)
        if (atomic_load(&r->seg_state[i]) == MH_SEG_OPEN)
            CHECK(off ? atomic_load(&r->segs[i].psum) == NULL
                      : atomic_load(&r->segs[i].psum_state) != 0);
    mh_reader_close(r);
}

/* A point query at an address segment 0's postings list, starting in it:
 * the run of its granule (and the header piece) are read. */
static int first_query(const mh_reader *r, const mh_access *all, mh_query *q,
                       size_t max, size_t *got, char *msg, size_t cap) {
    static mh_access out[64];
    mh_query_init(q);
    q->addr_first = all[0].physical & ~(uint64_t)7;
    q->addr_last = q->addr_first + 7;
    q->ops = MH_OPS_ALL;
    q->start_kind = MH_FROM_ID;
    q->start = 0;
    int rc = mh_query_run(r, q, out, max, got);
    mh_reader_errmsg(r, msg, cap);
    return rc;
}

static void flip(uint8_t *p, uint64_t size, void *ctx) {
    uint64_t at = *(const uint64_t *)ctx;
    CHECK(at < size);
    p[at] ^= 0x10;
}

/* bad: a fresh copy of the store dir */
static void fresh_copy(const char *dir, const char *bad) {
    tu_rmtree(bad);
    CHECK(mkdir(bad, 0755) == 0);
    tu_copy_dir(dir, bad);
}

static void check_damage(const char *dir, const mh_access *all, size_t n) {
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    const mh_seg *s0 = seg_of(r, 0);
    const mh_section *ap, *ps;
    CHECK(mh_seg_section(s0, MHF_SECT_APOST, &ap) == MH_OK);
    CHECK(mh_seg_section(s0, MHF_SECT_PSUM, &ps) == MH_OK);
    uint64_t ap_off = ap->offset, ps_off = ps->offset, ps_size = ps->size;
    char name[MHF_SEGMENT_NAME_LEN + 1];
    memcpy(name, s0->name, sizeof name);
    mh_reader_close(r);
    char bad[600], path[700], msg[MH_ERRMSG_MAX];
    mh_query q;
    size_t got;
    /* (a) a byte of the postings' header flipped: a query reading it names
     * piece 0; ignoring the piece sums, the whole sum fails; fsck: one */
    snprintf(bad, sizeof bad, "%s.a", dir);
    fresh_copy(dir, bad);
    tu_join(path, sizeof path, bad, name);
    size_t len;
    uint8_t *b = tu_read_file(path, &len);
    CHECK(b);
    b[ap_off + MHF_APOST_POSTINGS] ^= 0x01;
    tu_write_file(path, b, len);
    free(b);
    CHECK_OK(mh_reader_open(bad, &r));
    int rc = first_query(r, all, &q, 1, &got, msg, sizeof msg);
    CHECKF(rc == MH_ECHECKSUM && strstr(msg, "address postings at byte") &&
               strstr(msg, "piece 0 (section bytes 0-"),
           "(a) %s %s", mh_error_name(rc), msg);
    mh_reader_close(r);
    CHECK_OK(mh_reader_open(bad, &r));
    r->psum_off = 1;
    rc = first_query(r, all, &q, 1, &got, msg, sizeof msg);
    CHECKF(rc == MH_ECHECKSUM && strstr(msg, "address postings at byte") &&
               strstr(msg, ": checksum mismatch"), "(a, whole) %s %s", mh_error_name(rc), msg);
    mh_reader_close(r);
    tu_problems x = tu_fsck(bad);
    CHECKF(x.n == 1 && x.code == MH_ECHECKSUM && strstr(x.msg, "address postings"),
           "(a) fsck: %d problems, %d %s", x.n, x.code, x.msg);
    /* (b) a byte of the piece sums flipped (their own sum fails): not
     * used, queries answer as the oracle; fsck names them, once */
    fresh_copy(dir, bad);
    b = tu_read_file(path, &len);
    CHECK(b && ps_size > 24);
    b[ps_off + ps_size - 3] ^= 0x04;
    tu_write_file(path, b, len);
    free(b);
    check_answers(bad, all, n, 0);
    x = tu_fsck(bad);
    CHECKF(x.n == 1 && x.code == MH_ECHECKSUM && strstr(x.msg, "piece sums at byte") &&
               strstr(x.msg, "checksum mismatch"),
           "(b) fsck: %d problems, %d %s", x.n, x.code, x.msg);
    /* (c) a sum changed with section 12's own sum made right: fsck names
     * the piece; a query reading it reports MH_ECHECKSUM */
    fresh_copy(dir, bad);
    b = tu_read_file(path, &len);
    CHECK(b);
    uint32_t ne = mhf_load_u32(b + ps_off + MHF_PSUM_ENTRY_COUNT);
    uint64_t at = 0; /* the sum of the postings' piece 0 */
    for (uint32_t i = 0; i < ne; i++) {
        const uint8_t *e = b + ps_off + MHF_PSUM_HEADER_SIZE + (size_t)i * MHF_PSUM_ENTRY_SIZE;
        if (mhf_load_u32(e + MHF_PSUM_E_TYPE) == MHF_SECT_APOST)
            at = MHF_PSUM_HEADER_SIZE + (uint64_t)ne * MHF_PSUM_ENTRY_SIZE +
                 mhf_load_u64(e + MHF_PSUM_E_FIRST) * 8u;
    }
    free(b);
    CHECK(at > 0);
    tu_resum_segment(bad, name, MHF_SECT_PSUM, flip, &at);
    x = tu_fsck(bad);
    CHECKF(x.n == 1 && x.code == MH_ECHECKSUM && strstr(x.msg, "piece sums at byte") &&
               strstr(x.msg, "section type 10 piece 0") && strstr(x.msg, "its bytes hash to"),
           "(c) fsck: %d problems, %d %s", x.n, x.code, x.msg);
    CHECK_OK(mh_reader_open(bad, &r));
    rc = first_query(r, all, &q, 1, &got, msg, sizeof msg);
    CHECKF(rc == MH_ECHECKSUM && strstr(msg, "piece 0 (section bytes 0-"),
           "(c) %s %s", mh_error_name(rc), msg);
    mh_reader_close(r);
    tu_rmtree(bad);
}

static void run_all(const char *dir, const char *what) {
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    size_t n;
    mh_access *all = tu_read_all(r, &n);
    size_t with = check_meaning(dir, r);
    mh_reader_close(r);
    CHECK(with >= 1);
    check_lazy(dir, all, n);
    check_answers(dir, all, n, 0);
    check_answers(dir, all, n, 1);
    check_damage(dir, all, n);
    printf("psum %s: %zu accesses, %zu segments with piece sums\n", what, n, with);
    free(all);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "real") == 0) {
        char dir[512], rec[700];
        tu_mkdtemp(dir, sizeof dir, "psum-real");
        int rc = tu_record_sort(argv[2], dir, 6000, 7919, 100003, rec, sizeof rec, "psum");
        if (rc != 0) {
            tu_rmtree(dir);
            return rc;
        }
        /* rewritten in three segments */
        mh_reader *r;
        CHECK_OK(mh_reader_open(rec, &r));
        size_t n;
        mh_access *all = tu_read_all(r, &n);
        mh_reader_close(r);
        CHECK(n > 200000);
        char multi[800];
        tu_join(multi, sizeof multi, dir, "multi.mh");
        write_store(multi, all, n);
        free(all);
        run_all(multi, "real (qemu, sort)");
        tu_rmtree(dir);
        return 0;
    }
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "psum");
    size_t n = 300000;
    mh_access *all = calloc(n, sizeof *all);
    CHECK(all);
    tu_rng rng = {42};
    make_trace(&rng, all, n);
    char store[600];
    tu_join(store, sizeof store, dir, "s.mh");
    write_store(store, all, n);
    free(all);
    run_all(store, "synthetic");
    tu_rmtree(dir);
    return 0;
}
