/*
 * golden.c - the committed golden stores of format/golden.
 *
 * (a) tiny.store, as committed, reads back as exactly the accesses,
 *     slicing and metadata of tiny_input.h (the generator's input, not its
 *     output), and answers queries like the oracle;
 * (b) gen_golden, run now into a scratch directory, writes byte for byte the
 *     committed files: an accidental format change fails here;
 * (c) each corrupt/<variant>.store fails with exactly the error code SPEC.md
 *     gives for its damage, at the step that should catch it (open, query or
 *     verify), and damage in one slice does not stop queries elsewhere.
 *
 * Usage: golden [GOLDEN_DIR [GEN_GOLDEN]] (defaults: format/golden of the
 * source tree and the gen_golden of the build, as CMake configured them).
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tiny_input.h"

static mh_access g_all[TINY_COUNT];

static void load_expected(void) {
    for (size_t i = 0; i < TINY_COUNT; i++) {
        const tiny_access *t = &tiny_accesses[i];
        mh_access *a = &g_all[i];
        memset(a, 0, sizeof *a);
        a->id = i;
        a->transition = t->transition;
        a->physical = t->physical;
        a->size = t->size;
        a->op = t->op;
        a->has_linear = t->has_linear;
        a->linear = t->linear;
    }
}

/* ---- (a) the committed store reads back as its input ---------------------- */
static void check_tiny(const char *store) {
    snprintf(tu_context, sizeof tu_context, "%.400s", store);
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(store, &r));
    tu_check_stats(r, g_all, TINY_COUNT);
    CHECK(mh_reader_segment_count(r) == 2);
    mh_segment_info si = {.struct_size = sizeof si};
    CHECK_OK(mh_reader_segment_info(r, 0, &si));
    CHECK(si.id_first == 0 && si.accesses == TINY_FIRST_COMMIT && si.seq == 0);
    CHECK(si.rows_per_block == TINY_BLOCK_ACCESSES);
    CHECK(si.version_major == 1 && si.version_minor == 0);
    CHECK_OK(mh_reader_segment_info(r, 1, &si));
    CHECK(si.id_first == TINY_FIRST_COMMIT && si.accesses == TINY_COUNT - TINY_FIRST_COMMIT);

    /* SPEC 7.2 on the input: a slice closes at the first new transition
     * once it holds 10 accesses, and at each commit */
    static const struct {
        size_t seg, slice;
        uint64_t id_first;
        uint32_t accesses;
    } slices[] = {{0, 0, 0, 10}, {0, 1, 10, 10}, {0, 2, 20, 4}, {1, 0, 24, 11}, {1, 1, 35, 5}};
    size_t nslices = 0;
    for (size_t s = 0; s < 2; s++) {
        CHECK_OK(mh_reader_segment_info(r, s, &si));
        nslices += si.slices;
    }
    CHECK(nslices == sizeof slices / sizeof slices[0]);
    for (size_t i = 0; i < nslices; i++) {
        mh_slice_info sl = {.struct_size = sizeof sl};
        CHECK_OK(mh_reader_slice_info(r, slices[i].seg, slices[i].slice, &sl));
        CHECKF(sl.id_first == slices[i].id_first && sl.accesses == slices[i].accesses,
               "slice %zu.%zu: ids %llu + %u, expected %llu + %u", slices[i].seg,
               slices[i].slice, (unsigned long long)sl.id_first, sl.accesses,
               (unsigned long long)slices[i].id_first, slices[i].accesses);
    }
    /* the worked example of SPEC.md: ids 5, 6, 9 are the write chunk of slice 0 */
    int found = 0;
    mh_slice_info s0 = {.struct_size = sizeof s0};
    CHECK_OK(mh_reader_slice_info(r, 0, 0, &s0));
    for (uint32_t c = 0; c < s0.chunks; c++) {
        mh_chunk_info ci = {.struct_size = sizeof ci};
        CHECK_OK(mh_reader_chunk_info(r, 0, s0.chunk_first + c, &ci));
        if (ci.op == MH_OP_WRITE) {
            CHECK(ci.phy_first == 0x1000 && ci.phy_last == 0x1013 && ci.accesses == 3 &&
                  ci.id_first == 5 && ci.id_last == 9 && ci.transition_first == 100 &&
                  ci.transition_last == 103);
            found++;
        }
    }
    CHECK(found == 1);

    /* every access, in both directions */
    tu_rng rng = {5};
    for (int dir = 0; dir < 2; dir++) {
        mh_query q;
        mh_query_init(&q);
        q.direction = (uint32_t)dir;
        q.start = dir ? UINT64_MAX : 0;
        q.ops = MH_OPS_ALL;
        mh_access out[TINY_COUNT + 1];
        size_t n = 0;
        CHECK_OK(mh_query_run(r, &q, out, TINY_COUNT + 1, &n));
        CHECK(n == TINY_COUNT);
        for (size_t i = 0; i < n; i++) {
            const mh_access *want = &g_all[dir ? TINY_COUNT - 1 - i : i];
            if (!oracle_same_access(&out[i], want)) {
                oracle_print_access(stderr, &out[i]);
                fputc('\n', stderr);
                oracle_print_access(stderr, want);
                fputc('\n', stderr);
                tu_fail(__FILE__, __LINE__, "access %zu of the golden store differs", i);
            }
        }
        tu_check_cursor(r, g_all, TINY_COUNT, &q, TINY_COUNT + 1, &rng);
    }
    tu_random_queries(r, g_all, TINY_COUNT, 3000, 2024);

    /* metadata of the newest segment */
    CHECK(mh_reader_meta_count(r) == TINY_META_FINAL_COUNT);
    for (size_t i = 0; i < TINY_META_FINAL_COUNT; i++) {
        const char *v = mh_reader_meta_find(r, tiny_meta_final[i][0]);
        CHECKF(v && !strcmp(v, tiny_meta_final[i][1]), "metadata %s = '%s', expected '%s'",
               tiny_meta_final[i][0], v ? v : "(absent)", tiny_meta_final[i][1]);
    }
    mh_reader_close(r);
    mh_verify_result res = {.struct_size = sizeof res};
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &res));
    CHECK(res.problems == 0 && res.accesses == TINY_COUNT && res.segments == 2);
    tu_context[0] = 0;
}

/* ---- (b) the generator still writes the committed bytes -------------------- */
static int is_compared(const char *name) {
    /* LOCK is empty and only ever locked; git may not even keep it */
    return name[0] != '.' && strcmp(name, "LOCK") != 0;
}

static size_t count_files(const char *dir) {
    DIR *d = opendir(dir);
    CHECKF(d != NULL, "cannot list %s", dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += is_compared(e->d_name);
    closedir(d);
    return n;
}

static void compare_dirs(const char *committed, const char *fresh) {
    DIR *d = opendir(fresh);
    CHECKF(d != NULL, "cannot list %s", fresh);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d)) != NULL) {
        if (!is_compared(e->d_name))
            continue;
        char a[4096], b[4096];
        tu_join(a, sizeof a, committed, e->d_name);
        tu_join(b, sizeof b, fresh, e->d_name);
        size_t la = 0, lb = 0;
        unsigned char *da = tu_read_file(a, &la), *db = tu_read_file(b, &lb);
        CHECKF(da != NULL, "%s is written by gen_golden but not committed", a);
        CHECK(db != NULL);
        size_t first = 0;
        while (first < la && first < lb && da[first] == db[first])
            first++;
        CHECKF(la == lb && first == la,
               "%s differs from what gen_golden writes now (sizes %zu and %zu, first "
               "difference at byte %zu): the format changed. If on purpose, regenerate "
               "format/golden (see its README.md) and update SPEC.md",
               a, la, lb, first);
        free(da);
        free(db);
        n++;
    }
    closedir(d);
    CHECKF(count_files(committed) == n, "%s holds files gen_golden no longer writes",
           committed);
}

static void regenerate(const char *golden, const char *gen) {
    char tmp[4096];
    tu_mkdtemp(tmp, sizeof tmp, "golden");
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execl(gen, gen, tmp, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s %s failed", gen, tmp);
    char a[4096], b[4096];
    tu_join(a, sizeof a, golden, "tiny.store");
    tu_join(b, sizeof b, tmp, "tiny.store");
    compare_dirs(a, b);
    char ca[4096], cb[4096];
    tu_join(ca, sizeof ca, golden, "corrupt");
    tu_join(cb, sizeof cb, tmp, "corrupt");
    DIR *d = opendir(cb);
    CHECK(d != NULL);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        tu_join(a, sizeof a, ca, e->d_name);
        tu_join(b, sizeof b, cb, e->d_name);
        compare_dirs(a, b);
        n++;
    }
    closedir(d);
    CHECKF(count_files(ca) == n, "%s holds variants gen_golden no longer writes", ca);
    tu_rmtree(tmp);
    printf("gen_golden writes the committed bytes (tiny.store and %zu variants)\n", n);
}

/* ---- (c) every corrupt variant fails as SPEC.md says ----------------------- */
typedef struct expect {
    const char *name;
    int open;   /* mh_reader_open */
    int query;  /* a full scan (when open succeeds) */
    int verify; /* a code mh_verify must report (MH_OK: the store is clean) */
} expect;

static const expect expects[] = {
    {"manifest-bad-magic", MH_ENOTSTORE, 0, MH_ENOTSTORE},
    {"manifest-major-2", MH_EVERSION, 0, MH_EVERSION},
    {"manifest-bad-checksum", MH_ECHECKSUM, 0, MH_ECHECKSUM},
    {"manifest-trailing-garbage", MH_ECORRUPT, 0, MH_ECORRUPT},
    {"manifest-truncated", MH_ETRUNCATED, 0, MH_ETRUNCATED},
    {"segment-bad-magic", MH_ENOTSTORE, 0, MH_ENOTSTORE},
    {"segment-major-2", MH_EVERSION, 0, MH_EVERSION},
    {"segment-byte-order", MH_EVERSION, 0, MH_EVERSION},
    {"segment-incompatible-flag", MH_EVERSION, 0, MH_EVERSION},
    {"segment-newer-minor", MH_OK, MH_OK, MH_OK},
    {"segment-header-flip", MH_ECHECKSUM, 0, MH_ECHECKSUM},
    {"segment-truncated", MH_ETRUNCATED, 0, MH_ETRUNCATED},
    {"segment-missing", MH_ECORRUPT, 0, MH_ECORRUPT},
    {"dictionary-flip", MH_ECHECKSUM, 0, MH_ECHECKSUM},
    {"slice-array-flip", MH_ECHECKSUM, 0, MH_ECHECKSUM},
    {"chunk-record-flip", MH_OK, MH_ECHECKSUM, MH_ECHECKSUM},
    {"block-flip", MH_OK, MH_ECHECKSUM, MH_ECHECKSUM},
    {"block-raw-size", MH_OK, MH_ECORRUPT, MH_ECORRUPT},
    {"chunk-row-outside", MH_OK, MH_ECORRUPT, MH_ECORRUPT},
};

typedef struct problems {
    int codes[64];
    size_t n;
} problems;

static void collect(void *ctx, const mh_problem *p) {
    problems *ps = ctx;
    CHECK(p->file != NULL && p->message != NULL && strchr(p->message, '\n') == NULL);
    CHECK(p->struct_size == sizeof *p); /* the library says what it filled */
    if (ps->n < 64)
        ps->codes[ps->n++] = p->code;
}

static void check_variant(const char *dir, const expect *x) {
    snprintf(tu_context, sizeof tu_context, "corrupt variant %s", x->name);
    mh_reader *r = NULL;
    /* the open reads the MANIFEST only (issue 10): a damaged segment fails
     * the first query that reaches it, with the code an eager open gave */
    int lazy = x->open != MH_OK && strncmp(x->name, "manifest-", 9) != 0;
    int want_open = lazy ? MH_OK : x->open, want_query = lazy ? x->open : x->query;
    CHECK_RC(mh_reader_open(dir, &r), want_open);
    if (want_open == MH_OK) {
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        mh_access out[TINY_COUNT];
        size_t n = 0;
        CHECK_RC(mh_query_run(r, &q, out, TINY_COUNT, &n), want_query);
        /* a cursor stops at the error too, and stays there */
        mh_cursor *c = NULL;
        CHECK_OK(mh_cursor_open(r, &q, &c));
        int rc = MH_OK;
        size_t total = 0;
        do {
            rc = mh_cursor_next(c, out, 3, &n);
            total += rc == MH_OK ? n : 0;
        } while (rc == MH_OK && n > 0);
        CHECK_RC(rc, want_query);
        if (rc != MH_OK)
            CHECK_RC(mh_cursor_next(c, out, 3, &n), want_query);
        mh_cursor_close(c);
        if (want_query == MH_OK) {
            CHECK(total == TINY_COUNT);
            tu_check_stats(r, g_all, TINY_COUNT);
        } else if (!lazy) {
            /* the damage is in segment 0: segment 1 still answers */
            q.start = tiny_accesses[TINY_FIRST_COMMIT].transition;
            CHECK_OK(mh_query_run(r, &q, out, TINY_COUNT, &n));
            CHECK(n == TINY_COUNT - TINY_FIRST_COMMIT);
            for (size_t i = 0; i < n; i++)
                CHECK(oracle_same_access(&out[i], &g_all[TINY_FIRST_COMMIT + i]));
        }
        mh_reader_close(r);
    }
    problems ps = {{0}, 0};
    mh_verify_result res = {.struct_size = sizeof res};
    int vrc = mh_verify(dir, 0, collect, &ps, &res);
    if (x->verify == MH_OK) {
        CHECK_RC(vrc, MH_OK);
        CHECK(res.problems == 0 && ps.n == 0 && res.accesses == TINY_COUNT);
    } else {
        CHECK_RC(vrc, MH_ECORRUPT);
        CHECK(res.problems >= 1 && ps.n >= 1);
        int seen = 0;
        for (size_t i = 0; i < ps.n; i++)
            seen |= ps.codes[i] == x->verify;
        CHECKF(seen, "mh_verify did not report %s (first problem: %s)",
               mh_error_name(x->verify), mh_error_name(ps.codes[0]));
    }
    tu_context[0] = 0;
}

static void check_corrupt(const char *golden) {
    char corrupt[4096];
    tu_join(corrupt, sizeof corrupt, golden, "corrupt");
    size_t nx = sizeof expects / sizeof expects[0];
    for (size_t i = 0; i < nx; i++) {
        char name[256], dir[4096];
        snprintf(name, sizeof name, "%s.store", expects[i].name);
        tu_join(dir, sizeof dir, corrupt, name);
        check_variant(dir, &expects[i]);
    }
    /* every committed variant has its expectation here */
    DIR *d = opendir(corrupt);
    CHECK(d != NULL);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !strstr(e->d_name, ".store"))
            continue;
        int known = 0;
        for (size_t i = 0; i < nx; i++)
            known |= !strncmp(e->d_name, expects[i].name, strlen(expects[i].name)) &&
                     !strcmp(e->d_name + strlen(expects[i].name), ".store");
        CHECKF(known, "corrupt variant %s has no expected error in golden.c", e->d_name);
        n++;
    }
    closedir(d);
    CHECK(n == nx);
    printf("%zu corrupt variants fail with their expected codes\n", nx);
}

static void copy_store_dir(const char *from, const char *to) {
    CHECKF(mkdir(to, 0755) == 0, "cannot create %s", to);
    tu_copy_dir(from, to);
}

static void copy_golden(const char *golden, const char *work) {
    char a[4096], b[4096];
    tu_join(a, sizeof a, golden, "tiny.store");
    tu_join(b, sizeof b, work, "tiny.store");
    copy_store_dir(a, b);
    char ca[4096], cb[4096];
    tu_join(ca, sizeof ca, golden, "corrupt");
    tu_join(cb, sizeof cb, work, "corrupt");
    CHECKF(mkdir(cb, 0755) == 0, "cannot create %s", cb);
    DIR *d = opendir(ca);
    CHECKF(d != NULL, "cannot list %s", ca);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        tu_join(a, sizeof a, ca, e->d_name);
        tu_join(b, sizeof b, cb, e->d_name);
        copy_store_dir(a, b);
    }
    closedir(d);
}

int main(int argc, char **argv) {
    /* without arguments: the paths of the build that made this binary */
    const char *golden = argc > 1 ? argv[1] : MH_GOLDEN_DIR;
    const char *gen = argc > 2 ? argv[2] : MH_GEN_GOLDEN;
    if (argc > 3) {
        fprintf(stderr, "usage: golden [GOLDEN_DIR [GEN_GOLDEN]]\n");
        return 2;
    }
    load_expected();
    /* the committed files are fixtures in the source tree, maybe read-only:
     * read and verify copies of them */
    char work[4096], tiny[4096];
    tu_mkdtemp(work, sizeof work, "golden-copy");
    copy_golden(golden, work);
    tu_join(tiny, sizeof tiny, work, "tiny.store");
    check_tiny(tiny);
    regenerate(golden, gen);
    check_corrupt(work);
    tu_rmtree(work);
    printf("golden: ok\n");
    return 0;
}
