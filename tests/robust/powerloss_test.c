/*
 * powerloss_test.c - power loss modelled as "every file the writer was
 * writing is truncated to any length at the moment of the crash".
 *
 *   powerloss_test WORKDIR [SEED]
 *
 * Builds with the writer API (small slices and blocks) a store A of
 * COMMITTED accesses in two commits, then three crash states on top of it:
 *   killed:  a child appends more to A and SIGKILLs itself before its
 *            commit: the unsealed tail segment temp file it leaves is
 *            truncated at many lengths;
 *   torn:    the segment the next commit seals, as its temp file, truncated
 *            at many lengths (a crash while sealing);
 *   manifest: that segment sealed, plus the next MANIFEST as MANIFEST.tmp
 *            truncated at every length, complete included (a crash while
 *            the manifest was written, before its rename);
 * plus random combinations. For each: the store opens with exactly the
 * committed accesses (the MANIFEST is still A's), queries match the oracle,
 * mh_verify(MH_VERIFY_REPAIR) succeeds, fsck is then clean, the repaired
 * store is a prefix of the data holding at least the committed part, and
 * (for a sample) a writer can append the rest and the store then holds the
 * whole sequence.
 */
#include "robust_util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { FIRST = 1500, COMMITTED = 3000, TOTAL = 4400 };

typedef struct file {
    char *name;
    unsigned char *data;
    size_t len;
} file;

typedef struct state {
    file f[64];
    size_t n;
} state;

static void load_state(const char *dir, state *s) {
    memset(s, 0, sizeof *s);
    size_t nn = 0;
    char **names = rb_list_dir(dir, &nn);
    RB_CHECK(names != NULL && nn <= 64, "cannot list %s", dir);
    for (size_t i = 0; i < nn; i++) {
        if (strcmp(names[i], "LOCK") == 0)
            continue;
        char p[4096];
        rb_path(p, sizeof p, dir, names[i]);
        file *f = &s->f[s->n++];
        f->name = strdup(names[i]);
        f->data = rb_read_file(p, &f->len);
        RB_CHECK(f->name != NULL && f->data != NULL, "reading %s", p);
    }
    rb_free_names(names, nn);
}

static void free_state(state *s) {
    for (size_t i = 0; i < s->n; i++) {
        free(s->f[i].name);
        free(s->f[i].data);
    }
    s->n = 0;
}

static const file *find(const state *s, const char *name) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->f[i].name, name) == 0)
            return &s->f[i];
    return NULL;
}

/* Writes base into dir, plus up to two extra files (name, bytes, length). */
static void materialize(const char *dir, const state *base, const char *x1,
                        const unsigned char *d1, size_t l1, const char *x2,
                        const unsigned char *d2, size_t l2) {
    rb_rm_dir(dir);
    RB_CHECK(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
    char p[4096];
    for (size_t i = 0; i < base->n; i++) {
        rb_path(p, sizeof p, dir, base->f[i].name);
        rb_write_file(p, base->f[i].data, base->f[i].len);
    }
    if (x1) {
        rb_path(p, sizeof p, dir, x1);
        rb_write_file(p, d1, l1);
    }
    if (x2) {
        rb_path(p, sizeof p, dir, x2);
        rb_write_file(p, d2, l2);
    }
}

static mh_access *g_all;
static rb_rng g_rng;
static unsigned long g_cases, g_dirty, g_grew, g_resumed;

static void small_options(mh_writer_options *o) {
    mh_writer_options_init(o);
    o->slice_accesses = 256;
    o->block_accesses = 64;
    o->chunk_min_accesses = 8;
    o->commit_accesses = 0;
    o->background = 0;
}

static void append_range(mh_writer *w, size_t from, size_t to) {
    size_t bad = 0;
    int rc = mh_writer_append_batch(w, g_all + from, to - from, &bad);
    RB_CHECK(rc == MH_OK, "append [%zu, %zu): %s at %zu", from, to, mh_error_name(rc), bad);
}

/* The checks of one crash state at dir. */
static void check_case(const char *dir, const char *label, int resume) {
    g_cases++;
    mh_access *got = NULL;
    size_t n = 0;
    mh_reader *r = NULL;
    int rc = mh_reader_open(dir, &r);
    RB_CHECK(rc == MH_OK, "%s: open: %s", label, mh_error_name(rc));
    rc = rb_read_all(r, &got, &n);
    RB_CHECK(rc == MH_OK, "%s: read: %s", label, mh_error_name(rc));
    RB_CHECK(n == COMMITTED, "%s: the store opens with %zu accesses, %d committed",
             label, n, COMMITTED);
    RB_CHECK(oracle_compare(label, got, n, g_all, n) == 0, "%s: wrong content", label);
    free(got);
    rc = rb_check_queries(r, g_all, n, &g_rng, 3);
    RB_CHECK(rc == MH_OK, "%s: queries: %s", label, rc == -100 ? "wrong answer" : mh_error_name(rc));
    mh_reader_close(r);

    if (resume) { /* a writer resumes on the crashed store without repair */
        mh_writer_options o;
        small_options(&o);
        mh_writer *w = NULL;
        rc = mh_writer_open(dir, MH_APPEND, &o, &w);
        RB_CHECK(rc == MH_OK, "%s: writer reopen after the crash: %s", label, mh_error_name(rc));
        RB_CHECK(mh_writer_next_id(w) == COMMITTED, "%s: writer resumes at id %llu", label,
                 (unsigned long long)mh_writer_next_id(w));
        append_range(w, COMMITTED, TOTAL);
        rc = mh_writer_close(w);
        RB_CHECK(rc == MH_OK, "%s: close after resuming: %s", label, mh_error_name(rc));
        rc = rb_load_store(dir, &got, &n);
        RB_CHECK(rc == MH_OK && n == TOTAL, "%s: after resuming: %s, %zu accesses", label,
                 mh_error_name(rc), n);
        RB_CHECK(oracle_compare(label, got, n, g_all, n) == 0, "%s: wrong content after resuming", label);
        free(got);
        int vrc;
        uint64_t p = rb_verify(dir, 0, 1, &vrc);
        RB_CHECK(vrc == MH_OK && p == 0, "%s: fsck after resuming: %s", label, mh_error_name(vrc));
        g_resumed++;
        return;
    }

    int vrc;
    if (rb_verify(dir, 0, 0, &vrc) != 0 || vrc != MH_OK)
        g_dirty++;
    rb_verify(dir, MH_VERIFY_REPAIR, 0, &vrc);
    RB_CHECK(vrc == MH_OK, "%s: repair returned %s", label, mh_error_name(vrc));
    uint64_t p = rb_verify(dir, 0, 1, &vrc);
    RB_CHECK(vrc == MH_OK && p == 0, "%s: fsck after repair: %s, %llu problems", label,
             mh_error_name(vrc), (unsigned long long)p);
    rc = rb_load_store(dir, &got, &n);
    RB_CHECK(rc == MH_OK, "%s: open after repair: %s", label, mh_error_name(rc));
    RB_CHECK(n >= COMMITTED && n <= TOTAL, "%s: %zu accesses after repair", label, n);
    RB_CHECK(oracle_compare(label, got, n, g_all, n) == 0, "%s: not a prefix after repair", label);
    if (n > COMMITTED)
        g_grew++;
    free(got);
}

/* Lengths to try for a file of len bytes: every length up to dense, then a
 * seeded sample of about sparse more, always including len - 1 and len. */
static size_t pick_lengths(size_t len, size_t dense, size_t sparse, size_t *out,
                           size_t max) {
    size_t n = 0;
    for (size_t l = 0; l <= len && l <= dense && n < max; l++)
        out[n++] = l;
    if (len > dense) {
        size_t step = (len - dense) / (sparse ? sparse : 1) + 1;
        for (size_t l = dense + 1 + (size_t)rb_below(&g_rng, step); l < len && n < max;
             l += step)
            out[n++] = l;
        if (n < max)
            out[n++] = len - 1;
        if (n < max)
            out[n++] = len;
    }
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: powerloss_test WORKDIR [SEED]\n");
        return 2;
    }
    const char *work = argv[1];
    g_rng.s = argc > 2 ? strtoull(argv[2], NULL, 0) : 4242;
    rb_rm_dir(work);
    RB_CHECK(mkdir(work, 0755) == 0, "mkdir %s: %s", work, strerror(errno));
    g_all = rb_gen_accesses(77, TOTAL);
    char a_dir[4096], b_dir[4096], k_dir[4096], dir[4096];
    rb_path(a_dir, sizeof a_dir, work, "A");
    rb_path(b_dir, sizeof b_dir, work, "B");
    rb_path(k_dir, sizeof k_dir, work, "killed");
    rb_path(dir, sizeof dir, work, "case");

    /* A: two commits. */
    mh_writer_options o;
    small_options(&o);
    mh_writer *w = NULL;
    RB_OK(mh_writer_open(a_dir, MH_CREATE, &o, &w));
    append_range(w, 0, FIRST);
    RB_OK(mh_writer_commit(w));
    append_range(w, FIRST, COMMITTED);
    RB_OK(mh_writer_close(w));
    /* B: A plus one more commit. */
    rb_copy_dir(a_dir, b_dir);
    RB_OK(mh_writer_open(b_dir, MH_APPEND, &o, &w));
    append_range(w, COMMITTED, TOTAL);
    RB_OK(mh_writer_close(w));

    state A, B, K;
    load_state(a_dir, &A);
    load_state(b_dir, &B);
    const file *bman = find(&B, "MANIFEST");
    RB_CHECK(find(&A, "MANIFEST") != NULL && bman != NULL, "no MANIFEST written");
    /* the segment(s) B has and A has not */
    const file *newseg = NULL;
    for (size_t i = 0; i < B.n; i++)
        if (find(&A, B.f[i].name) == NULL && strcmp(B.f[i].name, "MANIFEST") != 0) {
            RB_CHECK(newseg == NULL, "one commit wrote two new files (%s, %s)",
                     newseg->name, B.f[i].name);
            newseg = &B.f[i];
        }
    RB_CHECK(newseg != NULL, "the third commit wrote no new segment file");
    char tmpname[256];
    snprintf(tmpname, sizeof tmpname, "%s.tmp", newseg->name);

    /* killed: a child appends and dies before committing. */
    rb_copy_dir(a_dir, k_dir);
    fflush(NULL);
    pid_t pid = fork();
    RB_CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        mh_writer *cw = NULL;
        if (mh_writer_open(k_dir, MH_APPEND, &o, &cw) != MH_OK)
            _exit(3);
        if (mh_writer_append_batch(cw, g_all + COMMITTED, TOTAL - COMMITTED, NULL) != MH_OK)
            _exit(4);
        raise(SIGKILL);
        _exit(5);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    RB_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "writer child: status %d", st);
    load_state(k_dir, &K);
    size_t lens[4096];
    unsigned long killed_cases = 0, torn_cases = 0, man_cases = 0, combo_cases = 0;
    char label[512];
    for (size_t i = 0; i < K.n; i++) {
        const file *f = &K.f[i];
        const file *old = find(&A, f->name);
        if (old != NULL) { /* committed files are never rewritten in place */
            RB_CHECK(old->len == f->len && memcmp(old->data, f->data, f->len) == 0,
                     "the killed writer changed the committed file %s", f->name);
            continue;
        }
        size_t nl = pick_lengths(f->len, 200, 200, lens, 4096);
        for (size_t j = 0; j < nl; j++) {
            materialize(dir, &A, f->name, f->data, lens[j], NULL, NULL, 0);
            snprintf(label, sizeof label, "killed writer's %s truncated to %zu of %zu",
                     f->name, lens[j], f->len);
            check_case(dir, label, j % 50 == 7);
            killed_cases++;
        }
    }
    if (killed_cases == 0)
        printf("note: the killed writer left no new file (it buffers the whole "
               "uncommitted tail in memory)\n");

    /* torn: the next segment, unsealed, at many lengths */
    size_t nl = pick_lengths(newseg->len, 200, 250, lens, 4096);
    for (size_t j = 0; j < nl; j++) {
        materialize(dir, &A, tmpname, newseg->data, lens[j], NULL, NULL, 0);
        snprintf(label, sizeof label, "%s truncated to %zu of %zu", tmpname, lens[j],
                 newseg->len);
        check_case(dir, label, j % 50 == 11);
        torn_cases++;
    }
    /* manifest: next segment sealed, next MANIFEST.tmp at every length */
    for (size_t l = 0; l <= bman->len; l++) {
        materialize(dir, &A, newseg->name, newseg->data, newseg->len, "MANIFEST.tmp",
                    bman->data, l);
        snprintf(label, sizeof label, "%s sealed, MANIFEST.tmp truncated to %zu of %zu",
                 newseg->name, l, bman->len);
        check_case(dir, label, l % 50 == 13);
        man_cases++;
    }
    /* combinations: segment temp file and MANIFEST.tmp both cut */
    for (int k = 0; k < 120; k++) {
        size_t l1 = (size_t)rb_below(&g_rng, newseg->len + 1);
        size_t l2 = (size_t)rb_below(&g_rng, bman->len + 1);
        materialize(dir, &A, tmpname, newseg->data, l1, "MANIFEST.tmp", bman->data, l2);
        snprintf(label, sizeof label, "%s cut to %zu, MANIFEST.tmp cut to %zu", tmpname,
                 l1, l2);
        check_case(dir, label, k % 50 == 17);
        combo_cases++;
    }
    printf("truncation lengths tried: killed-writer temp files %lu, torn segment %lu, "
           "MANIFEST.tmp %lu, combinations %lu (total %lu cases)\n",
           killed_cases, torn_cases, man_cases, combo_cases, g_cases);
    printf("fsck reported problems before repair in %lu cases; repair kept more than "
           "the committed accesses in %lu; writers resumed without repair in %lu\n",
           g_dirty, g_grew, g_resumed);
    free_state(&A);
    free_state(&B);
    free_state(&K);
    free(g_all);
    rb_rm_dir(work);
    return 0;
}
