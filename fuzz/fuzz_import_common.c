/*
 * fuzz_import_common.c - see fuzz_import_common.h.
 */
#include "fuzz_import_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_data_producer.h"
#include "fuzz_helpers.h"

#define MAX_PIECES 64

typedef struct sink_state {
    fuzz_parse *out;
    size_t fail_after;
    int refused;       /* the sink returned an error */
    uint64_t prev_t;
} sink_state;

static int sink(void *ctx, const mh_access *batch, size_t n) {
    sink_state *s = ctx;
    FUZZ_ASSERT_MSG(!s->refused, "the parser called the sink after its error");
    FUZZ_ASSERT_MSG(n >= 1 && n <= MH_IMPORT_BATCH, "bad batch size");
    FUZZ_ASSERT(batch != NULL);
    /* what mh_writer_append_batch() would refuse must never get here */
    for (size_t i = 0; i < n; i++) {
        const mh_access *a = &batch[i];
        FUZZ_ASSERT_MSG(a->size >= 1, "size 0 reached the sink");
        FUZZ_ASSERT_MSG(a->physical + (a->size - 1) >= a->physical,
                        "a wrapping range reached the sink");
        FUZZ_ASSERT_MSG(a->op < MH_OP_COUNT, "unknown op reached the sink");
        FUZZ_ASSERT_MSG(a->has_linear <= 1, "has_linear not 0/1");
        FUZZ_ASSERT_MSG(a->transition >= s->prev_t,
                        "transitions decrease across the sink");
        s->prev_t = a->transition;
    }
    fuzz_parse *o = s->out;
    if (s->fail_after != SIZE_MAX && o->n + n > s->fail_after) {
        s->refused = 1;
        return MH_EIO;
    }
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2;
        o->v = fuzz_realloc(o->v, o->cap * sizeof *o->v);
    }
    memcpy(o->v + o->n, batch, n * sizeof *batch);
    o->n += n;
    return 0;
}

void fuzz_import_parse(const fuzz_import_ops *ops, unsigned flags,
                       const uint8_t *text, size_t len, const size_t *pieces,
                       size_t npieces, size_t fail_after, fuzz_parse *out) {
    memset(out, 0, sizeof *out);
    sink_state s = {out, fail_after, 0, 0};
    void *p = ops->create(flags, sink, &s);
    FUZZ_ASSERT(p != NULL);
    const char *buf = (const char *)text;
    size_t off = 0;
    int rc = 0;
    for (size_t i = 0; i < npieces && rc == 0; i++) {
        size_t k = pieces[i] < len - off ? pieces[i] : len - off;
        rc = ops->feed(p, buf + off, k);
        off += k;
    }
    if (rc == 0 && off < len)
        rc = ops->feed(p, buf + off, len - off);
    if (rc == 0)
        rc = ops->finish(p);
    FUZZ_ASSERT_NAMED(rc);
    out->rc = rc;
    const char *err = ops->error(p);
    FUZZ_ASSERT(err != NULL);
    FUZZ_ASSERT_MSG(strchr(err, '\n') == NULL, "an error message has a newline");
    if (rc != 0)
        FUZZ_ASSERT_MSG(err[0] != '\0', "an error without a message");
    snprintf(out->err, sizeof out->err, "%s", err);
    out->accesses = ops->accesses(p);
    out->lines = ops->lines(p);
    FUZZ_ASSERT_MSG(out->accesses == out->n,
                    "the access counter disagrees with what the sink took");
    if (rc != 0) {
        /* after an error the parser accepts nothing */
        FUZZ_ASSERT(ops->feed(p, "I  10,4\n", 8) != 0);
        FUZZ_ASSERT(ops->finish(p) != 0);
        FUZZ_ASSERT(ops->accesses(p) == out->accesses);
    }
    ops->destroy(p);
}

void fuzz_parse_free(fuzz_parse *p) {
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}

static int same_access(const mh_access *a, const mh_access *b) {
    return a->transition == b->transition && a->linear == b->linear &&
           a->physical == b->physical && a->size == b->size && a->op == b->op &&
           a->has_linear == b->has_linear;
}

/* The part of an error message that must not depend on the cuts: up to
 * the first ':' ("line 12"). The rest (which rule failed first) may: a
 * parser may see that a line is too long before it sees its content. */
static size_t err_prefix(const char *e) {
    const char *c = strchr(e, ':');
    return c ? (size_t)(c - e) : strlen(e);
}

void fuzz_parse_compare(const fuzz_parse *a, const fuzz_parse *b,
                        const char *what) {
    size_t pa = err_prefix(a->err), pb = err_prefix(b->err);
    if (a->rc != b->rc || a->n != b->n || pa != pb ||
        memcmp(a->err, b->err, pa) != 0 || a->lines != b->lines) {
        fprintf(stderr,
                "fuzz: %s: rc %d vs %d, accesses %zu vs %zu, lines %llu vs "
                "%llu\n  error 1: %s\n  error 2: %s\n",
                what, a->rc, b->rc, a->n, b->n, (unsigned long long)a->lines,
                (unsigned long long)b->lines, a->err, b->err);
        abort();
    }
    for (size_t i = 0; i < a->n; i++)
        if (!same_access(&a->v[i], &b->v[i])) {
            fprintf(stderr, "fuzz: %s: access %zu differs\n", what, i);
            abort();
        }
}

void fuzz_import_run(const fuzz_import_ops *ops, unsigned flags_mask,
                     const uint8_t *data, size_t size) {
    fuzz_producer p;
    fuzz_producer_init(&p, data, size);
    const uint8_t *text = data;
    size_t len = fuzz_producer_reserve_payload(&p, MAX_PIECES + 2);
    unsigned flags = fuzz_producer_u32_range(&p, 0, 255) & flags_mask;
    size_t pieces[MAX_PIECES], npieces = 0;
    while (npieces < MAX_PIECES && !fuzz_producer_empty(&p)) {
        uint32_t b = fuzz_producer_u32_range(&p, 0, 255);
        /* 0 is an empty feed; the high bit makes long pieces */
        pieces[npieces++] = (b & 0x80) ? (size_t)(b & 0x7f) * 37 : b;
    }

    fuzz_parse whole, cut;
    fuzz_import_parse(ops, flags, text, len, NULL, 0, SIZE_MAX, &whole);
    fuzz_import_parse(ops, flags, text, len, pieces, npieces, SIZE_MAX, &cut);
    fuzz_parse_compare(&whole, &cut, "whole vs pieces");
    /* one byte at a time, for small inputs: every cut point at once */
    if (len <= 512) {
        size_t ones[512];
        for (size_t i = 0; i < len; i++)
            ones[i] = 1;
        fuzz_parse single;
        fuzz_import_parse(ops, flags, text, len, ones, len, SIZE_MAX, &single);
        fuzz_parse_compare(&whole, &single, "whole vs bytes");
        fuzz_parse_free(&single);
    }
    if (whole.n > 0) {
        /* a sink error stops the parse and is returned unchanged */
        size_t fail_after = (size_t)(data[0] | (size > 1 ? data[1] << 8 : 0)) %
                            whole.n;
        fuzz_parse failed;
        fuzz_import_parse(ops, flags, text, len, pieces, npieces, fail_after,
                          &failed);
        if (whole.rc == 0 || failed.rc != whole.rc)
            FUZZ_EXPECT_RC(failed.rc, MH_EIO);
        FUZZ_ASSERT(failed.n <= fail_after);
        for (size_t i = 0; i < failed.n; i++)
            FUZZ_ASSERT(same_access(&failed.v[i], &whole.v[i]));
        fuzz_parse_free(&failed);
    }
    fuzz_parse_free(&whole);
    fuzz_parse_free(&cut);
}
