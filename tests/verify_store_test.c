/*
 * verify_store_test.c - fsck's checks of the store as a whole (SPEC.md 8,
 * src/verify_store.c): every segment sound, the rules between them broken.
 * For each case fsck reports exactly the expected problems (code, file,
 * message), and the reader, building the same store-level table, fails with
 * the first of them as its detail ("<file>: <message>").
 *
 * Cases: the golden variants stream-not-in-newest and window-parts-gap, and
 * copies of the golden tiny.store edited here with seg_edit (checksums
 * recomputed, so only the store-level check can catch them): segment 1's
 * streams table dropped (its implicit stream 0 alone: stream 1 forgotten),
 * and segment 1's part of window 2 renamed window 1 (window ids going
 * back). The tiny store itself must verify clean.
 *
 * Usage: verify_store_test [GOLDEN_DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memhist.h"
#include "mh_format.h"
#include "seg_edit.h"
#include "testutil.h"

#define SEG0 "seg-0000000000000000.mhs"
#define SEG1 "seg-0000000000000001.mhs"

typedef struct problems {
    size_t n;
    struct {
        int code;
        char file[64];
        char msg[MH_ERRMSG_MAX];
    } p[16];
} problems;

static void collect(void *ctx, const mh_problem *p) {
    problems *ps = ctx;
    if (p->code == MH_OK || ps->n == sizeof ps->p / sizeof ps->p[0])
        return;
    ps->p[ps->n].code = p->code;
    snprintf(ps->p[ps->n].file, sizeof ps->p[ps->n].file, "%s", p->file ? p->file : "");
    snprintf(ps->p[ps->n].msg, sizeof ps->p[ps->n].msg, "%s", p->message ? p->message : "");
    ps->n++;
}

enum { STREAMS, WINDOWS };

/* fsck reports exactly one problem, MH_ECORRUPT in file with msg; the
 * reader's table (streams or windows) fails with "file: msg". */
static void expect_one(const char *dir, int table, const char *file, const char *msg) {
    problems ps;
    memset(&ps, 0, sizeof ps);
    mh_verify_result vr = {.struct_size = sizeof vr};
    CHECK_RC(mh_verify(dir, 0, collect, &ps, &vr), MH_ECORRUPT);
    for (size_t i = 0; i < ps.n; i++)
        printf("  fsck: %s: %s: %s\n", ps.p[i].file, mh_error_name(ps.p[i].code), ps.p[i].msg);
    CHECKF(ps.n == 1 && vr.problems == 1, "%zu problems", ps.n);
    if (ps.n >= 1) {
        CHECK_RC(ps.p[0].code, MH_ECORRUPT);
        CHECKF(strcmp(ps.p[0].file, file) == 0, "file %s", ps.p[0].file);
        CHECKF(strcmp(ps.p[0].msg, msg) == 0, "message '%s'", ps.p[0].msg);
    }
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(dir, &r));
    int rc;
    if (table == STREAMS) {
        mh_stream_info si;
        mh_stream_info_init(&si);
        rc = mh_reader_stream_info(r, 0, &si);
    } else {
        mh_window_info wi = {.struct_size = sizeof wi};
        rc = mh_reader_window_info(r, 0, &wi);
    }
    CHECK_RC(rc, MH_ECORRUPT);
    char want[2 * MH_ERRMSG_MAX], got[MH_ERRMSG_MAX];
    snprintf(want, sizeof want, "%s: %s", file, msg);
    mh_reader_errmsg(r, got, sizeof got);
    CHECKF(strcmp(got, want) == 0, "reader '%s', fsck '%s'", got, want);
    mh_reader_close(r);
}

typedef void (*seg_fn)(se_seg *s);

static void edit_segment(const char *store, const char *name, seg_fn fn) {
    se_buf f = se_load(store, name);
    se_seg s;
    se_seg_parse(&f, &s);
    free(f.p);
    fn(&s);
    se_buf out = se_seg_emit(&s);
    se_save(store, name, &out);
    free(out.p);
    se_seg_free(&s);
    se_manifest_fix(store);
}

static void drop_table(se_dict *d, uint32_t type) {
    for (size_t i = 0; i < d->ntables; i++)
        if (d->t[i].type == type) {
            free(d->t[i].data.p);
            memmove(&d->t[i], &d->t[i + 1], (d->ntables - i - 1) * sizeof d->t[0]);
            d->ntables--;
            return;
        }
    CHECKF(0, "no dictionary table %u", type);
}

/* Segment 1 without streams (and stream metadata) tables: it holds the
 * implicit stream 0 alone (SPEC.md 7.6), so stream 1 of segment 0 is
 * missing from the newest segment. */
static void seg_no_streams(se_seg *g) {
    se_section *x = se_seg_find(g, MHF_SECT_DICT);
    se_dict d;
    se_dict_parse(&x->data, &d);
    drop_table(&d, 5);
    drop_table(&d, 6);
    se_dict_emit(&d, &x->data);
    se_dict_free(&d);
}

/* Segment 1's first window part (window 2, going on from segment 0) named
 * window 1: a window id lower than segment 0's last. */
static void seg_window_back(se_seg *g) {
    se_section *x = se_seg_find(g, MHF_SECT_DICT);
    se_dict d;
    se_dict_parse(&x->data, &d);
    se_table *t = se_dict_find(&d, 7);
    CHECK(t && t->count >= 1 && mhf_load_u64(t->data.p) == 2);
    mhf_store_u64(t->data.p, 1);
    se_dict_emit(&d, &x->data);
    se_dict_free(&d);
}

static void edited(const char *golden, const char *tag, seg_fn fn, int table,
                   const char *file, const char *msg) {
    char src[4096], dir[4096];
    tu_join(src, sizeof src, golden, "tiny.store");
    tu_mkdtemp(dir, sizeof dir, tag);
    tu_copy_dir(src, dir);
    edit_segment(dir, SEG1, fn);
    snprintf(tu_context, sizeof tu_context, "%s", tag);
    printf("%s\n", tag);
    expect_one(dir, table, file, msg);
    tu_context[0] = '\0';
    tu_rmtree(dir);
}

static void golden_variant(const char *golden, const char *variant, int table,
                           const char *file, const char *msg) {
    char corrupt[4096], name[256], dir[4096];
    tu_join(corrupt, sizeof corrupt, golden, "corrupt");
    snprintf(name, sizeof name, "%s.store", variant);
    tu_join(dir, sizeof dir, corrupt, name);
    snprintf(tu_context, sizeof tu_context, "%s", variant);
    printf("%s\n", variant);
    expect_one(dir, table, file, msg);
    tu_context[0] = '\0';
}

int main(int argc, char **argv) {
    const char *golden = argc > 1 ? argv[1] : MH_GOLDEN_DIR;
    char tiny[4096];
    tu_join(tiny, sizeof tiny, golden, "tiny.store");
    problems ps;
    memset(&ps, 0, sizeof ps);
    mh_verify_result vr = {.struct_size = sizeof vr};
    CHECK_OK(mh_verify(tiny, 0, collect, &ps, &vr));
    CHECK(ps.n == 0 && vr.problems == 0);

    golden_variant(golden, "stream-not-in-newest", STREAMS, SEG0,
                   "stream 1 is not in the newest segment's stream table");
    golden_variant(golden, "window-parts-gap", WINDOWS, SEG1,
                   "window 2 goes on from an earlier segment without continuing its ids");
    edited(golden, "verify-store-no-streams", seg_no_streams, STREAMS, SEG0,
           "stream 1 is not in the newest segment's stream table");
    edited(golden, "verify-store-window-back", seg_window_back, WINDOWS, SEG1,
           "window 1 comes after window 2 (ids from 24, the last ending at 24)");
    printf("verify_store: all checks passed\n");
    return 0;
}
