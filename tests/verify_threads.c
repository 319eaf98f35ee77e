/*
 * verify_threads.c - fsck on worker threads (verify.c's parallel pass,
 * ordered_jobs.c) says exactly what fsck on one thread says: the same
 * report lines (code, file, offset, message) in the same order, the same
 * result counts and the same return code, on a clean store and on every
 * damage below, with 1, 2 and 7 threads (MH_VERIFY_THREADS).
 *
 *   verify_threads              a synthetic store of 7 segments
 *   verify_threads --real MEMHIST
 *                               a qemu recording (sort) rewritten into 6
 *                               segments (skipped, 77, without qemu)
 *
 * Damage: single bytes flipped all over every segment file (headers,
 * index records, blocks, sections), a segment truncated, one removed, one
 * replaced by another's bytes, a temporary file left, the MANIFEST lost.
 * Each is undone before the next. fsck --repair (MH_VERIFY_REPAIR) on
 * copies, one thread and three: the same lines and the same files left.
 */
#include <string.h>
#include <unistd.h>

#include "testutil.h"

typedef struct lines {
    char *p;
    size_t n, cap;
    uint64_t calls;
} lines;

static void on_line(void *ctx, const mh_problem *p) {
    lines *l = ctx;
    char one[1024];
    int k = snprintf(one, sizeof one, "%d|%s|%llu|%s\n", p->code, p->file,
                     (unsigned long long)p->offset, p->message);
    CHECK(k > 0 && (size_t)k < sizeof one);
    if (l->n + (size_t)k + 1 > l->cap) {
        l->cap = (l->n + (size_t)k + 1) * 2;
        l->p = realloc(l->p, l->cap);
        CHECK(l->p != NULL);
    }
    memcpy(l->p + l->n, one, (size_t)k + 1);
    l->n += (size_t)k;
    l->calls++;
}

typedef struct outcome {
    int rc;
    mh_verify_result res;
    lines l;
} outcome;

static outcome fsck_with(const char *dir, unsigned threads, unsigned flags) {
    outcome o;
    memset(&o, 0, sizeof o);
    o.res.struct_size = sizeof o.res;
    o.rc = mh_verify(dir, flags | MH_VERIFY_THREADS(threads), on_line, &o.l, &o.res);
    return o;
}

/* fsck on 2 and 7 threads against one thread; returns the problems. */
static uint64_t same_all_ways(const char *dir, const char *what) {
    static const unsigned ways[] = {2, 7};
    outcome one = fsck_with(dir, 1, 0);
    for (size_t w = 0; w < sizeof ways / sizeof *ways; w++) {
        outcome o = fsck_with(dir, ways[w], 0);
        CHECKF(o.rc == one.rc, "%s, %u threads: returned %s, one thread %s", what,
               ways[w], mh_error_name(o.rc), mh_error_name(one.rc));
        CHECKF(o.res.problems == one.res.problems && o.res.accesses == one.res.accesses &&
                   o.res.bytes == one.res.bytes && o.res.segments == one.res.segments &&
                   o.res.repaired == one.res.repaired,
               "%s, %u threads: counts %llu/%llu/%llu/%llu, one thread %llu/%llu/%llu/%llu",
               what, ways[w], (unsigned long long)o.res.problems,
               (unsigned long long)o.res.accesses, (unsigned long long)o.res.bytes,
               (unsigned long long)o.res.segments, (unsigned long long)one.res.problems,
               (unsigned long long)one.res.accesses, (unsigned long long)one.res.bytes,
               (unsigned long long)one.res.segments);
        /* on a clean store every segment is checked: as many workers as
         * asked for, at most one a segment (the count, 1.10.0) */
        uint64_t want = ways[w] < one.res.segments ? ways[w] : one.res.segments;
        CHECKF(one.res.problems || (one.res.threads == 1 && o.res.threads == want),
               "%s, %u threads: %llu reported, %llu on one thread", what, ways[w],
               (unsigned long long)o.res.threads, (unsigned long long)one.res.threads);
        CHECKF(o.l.n == one.l.n && (o.l.n == 0 || memcmp(o.l.p, one.l.p, o.l.n) == 0),
               "%s, %u threads: other lines:\n%s--- one thread:\n%s", what, ways[w],
               o.l.p ? o.l.p : "", one.l.p ? one.l.p : "");
        free(o.l.p);
    }
    free(one.l.p);
    return one.res.problems;
}

/* fsck --repair on two copies of dir, one thread and three: the same
 * lines, counts and code, and the same files left (MANIFEST bytes, the
 * segments kept or removed). dir itself is left as it is. */
static void same_repair(const char *dir, const char *what) {
    char one[4200], three[4200];
    snprintf(one, sizeof one, "%s.r1", dir);
    snprintf(three, sizeof three, "%s.r3", dir);
    tu_rmtree(one);
    tu_rmtree(three);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s' && cp -a '%s' '%s'", dir, one, dir, three);
    CHECK(system(cmd) == 0);
    outcome a = fsck_with(one, 1, MH_VERIFY_REPAIR);
    outcome b = fsck_with(three, 3, MH_VERIFY_REPAIR);
    CHECKF(a.rc == b.rc, "%s, repair: 3 threads returned %s, one thread %s", what,
           mh_error_name(b.rc), mh_error_name(a.rc));
    CHECKF(a.res.problems == b.res.problems && a.res.repaired == b.res.repaired &&
               a.res.accesses == b.res.accesses && a.res.segments == b.res.segments,
           "%s, repair: counts differ", what);
    CHECKF(a.l.n == b.l.n && (a.l.n == 0 || memcmp(a.l.p, b.l.p, a.l.n) == 0),
           "%s, repair, 3 threads:\n%s--- one thread:\n%s", what, b.l.p ? b.l.p : "",
           a.l.p ? a.l.p : "");
    snprintf(cmd, sizeof cmd, "diff -r '%s' '%s' >/dev/null", one, three);
    CHECKF(system(cmd) == 0, "%s, repair: the stores left differ", what);
    free(a.l.p);
    free(b.l.p);
    tu_rmtree(one);
    tu_rmtree(three);
}

/* The store's segment files, sorted (names give MANIFEST order). */
static size_t segment_files(const char *dir, char names[][64], size_t cap) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep '^seg-.*\\.mhs$' | sort", dir);
    FILE *f = popen(cmd, "r");
    CHECK(f != NULL);
    size_t n = 0;
    while (n < cap && fgets(names[n], 64, f)) {
        names[n][strcspn(names[n], "\n")] = 0;
        n++;
    }
    CHECK(pclose(f) == 0);
    return n;
}

static void damage(const char *dir, uint64_t seed, size_t flips) {
    char names[64][64];
    size_t nseg = segment_files(dir, names, 64);
    CHECKF(nseg >= 5, "%zu segment files", nseg);
    CHECK(same_all_ways(dir, "clean store") == 0);
    tu_rng rng = {seed};
    size_t found = 0;
    for (size_t k = 0; k < flips; k++) {
        /* one byte of the first (largest) segment and, every other time,
         * one of another segment too: lines of two segments to order */
        size_t segs[2] = {0, 1 + (size_t)tu_below(&rng, nseg - 1)};
        size_t nd = k % 2 ? 2 : 1;
        if (k % 4 == 0)
            segs[0] = segs[1]; /* and the others alone */
        unsigned char *b[2];
        size_t len[2], at[2];
        unsigned char was[2];
        char path[2][4200], what[512];
        int w = snprintf(what, sizeof what, "seed %llu, flip %zu:", (unsigned long long)seed, k);
        for (size_t d = 0; d < nd; d++) {
            tu_join(path[d], sizeof path[d], dir, names[segs[d]]);
            b[d] = tu_read_file(path[d], &len[d]);
            CHECK(b[d] != NULL && len[d] > 0);
            /* half the flips in the first 64 KiB (header, index, sections) */
            at[d] = (size_t)(k % 3 && len[d] > 65536 ? tu_below(&rng, 65536)
                                                      : tu_below(&rng, len[d]));
            was[d] = b[d][at[d]];
            b[d][at[d]] ^= (unsigned char)(1u << tu_below(&rng, 8));
            tu_write_file(path[d], b[d], len[d]);
            w += snprintf(what + w, sizeof what - (size_t)w, " %s byte %zu", names[segs[d]],
                          at[d]);
        }
        found += same_all_ways(dir, what) > 0;
        for (size_t d = nd; d-- > 0;) { /* the same file twice: undo in reverse */
            b[d][at[d]] = was[d];
            tu_write_file(path[d], b[d], len[d]);
            free(b[d]);
        }
    }
    CHECKF(found > flips / 2, "only %zu of %zu flips found", found, flips);
    /* a segment cut short, one missing, one holding another's bytes */
    size_t s = nseg / 2, o = nseg / 2 + 1;
    char path[4200], other[4200];
    tu_join(path, sizeof path, dir, names[s]);
    tu_join(other, sizeof other, dir, names[o]);
    size_t len = 0, olen = 0;
    unsigned char *b = tu_read_file(path, &len), *ob = tu_read_file(other, &olen);
    CHECK(b && ob);
    tu_write_file(path, b, len / 2);
    CHECK(same_all_ways(dir, "a segment cut in half") > 0);
    same_repair(dir, "a segment cut in half");
    CHECK(unlink(path) == 0);
    CHECK(same_all_ways(dir, "a segment missing") > 0);
    same_repair(dir, "a segment missing");
    tu_write_file(path, ob, olen);
    CHECK(same_all_ways(dir, "a segment holding the next one's bytes") > 0);
    tu_write_file(path, b, len);
    /* what a crash leaves: a temporary file, and the MANIFEST lost (repair
     * adopts every sealed segment again) */
    char tmp[4200], man[4200], keep[4200];
    tu_join(tmp, sizeof tmp, dir, "seg-9999999999999999.mhs.tmp");
    tu_write_file(tmp, "torn", 4);
    CHECK(same_all_ways(dir, "a temporary file left") > 0);
    same_repair(dir, "a temporary file left");
    CHECK(unlink(tmp) == 0);
    tu_join(man, sizeof man, dir, "MANIFEST");
    snprintf(keep, sizeof keep, "%s.kept", dir);
    CHECK(rename(man, keep) == 0);
    same_repair(dir, "the MANIFEST lost");
    CHECK(rename(keep, man) == 0);
    free(b);
    free(ob);
    CHECK(same_all_ways(dir, "restored") == 0);
}

/* Writes the accesses in nseg segments (a commit each), the first holding
 * about half of them and the others the rest in equal parts: a worker on
 * the first still runs when the others are done, so lines given in the
 * order the workers finish would not be MANIFEST order. */
static void write_store(const char *dir, mh_access *a, size_t n, size_t nseg) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 4096;
    o.commit_accesses = (uint64_t)1 << 40; /* the commits below cut */
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    size_t at = 0;
    for (size_t s = 0; s < nseg; s++) {
        size_t end = s + 1 == nseg ? n : n / 2 + (n / 2) * s / (nseg - 1);
        for (size_t i = at; i < end; i += 4096)
            CHECK_OK(mh_writer_append_batch(w, a + i, end - i < 4096 ? end - i : 4096, NULL));
        CHECK_OK(mh_writer_commit(w));
        at = end;
    }
    CHECK_OK(mh_writer_close(w));
}

static void run_synthetic(void) {
    char dir[4096], store[4200];
    tu_mkdtemp(dir, sizeof dir, "verify-threads");
    tu_join(store, sizeof store, dir, "s.mh");
    size_t n = 140000;
    mh_access *a = calloc(n, sizeof *a);
    CHECK(a != NULL);
    tu_rng rng = {7};
    uint64_t t = 1000;
    for (size_t i = 0; i < n; i++) {
        t += tu_below(&rng, 3);
        a[i].transition = t;
        /* a hot stack, a heap of 4000 words, and anywhere in 1 GiB */
        uint64_t pick = tu_below(&rng, 10);
        a[i].physical = pick < 4   ? 0x7ff000 + 8 * tu_below(&rng, 64)
                        : pick < 9 ? 0x100000 + 8 * tu_below(&rng, 4000)
                                   : tu_below(&rng, (uint64_t)1 << 30);
        a[i].size = 1u << tu_below(&rng, 4);
        a[i].op = (uint8_t)(tu_below(&rng, 3) == 0 ? MH_OP_WRITE : MH_OP_READ);
        a[i].pc = 0x400000 + 4 * tu_below(&rng, 500);
        a[i].has_pc = 1;
    }
    write_store(store, a, n, 7);
    free(a);
    damage(store, 11, 40);
    tu_rmtree(dir);
    printf("verify_threads: synthetic store: ok\n");
}

static int run_real(const char *memhist) {
    char dir[4096], rec[4096], multi[4200];
    tu_mkdtemp(dir, sizeof dir, "verify-threads-real");
    tu_join(multi, sizeof multi, dir, "multi.mh");
    size_t n = 0;
    int rc;
    mh_access *a = tu_record_sort_all(memhist, dir, 2000, rec, sizeof rec,
                                      "verify_threads --real", &n, &rc);
    if (!a) {
        tu_rmtree(dir);
        return rc;
    }
    CHECK(n > 100000);
    for (size_t i = 0; i < n; i++) /* one stream: none declared below */
        a[i].stream = 0;
    CHECK(same_all_ways(rec, "the recording") == 0);
    write_store(multi, a, n, 6);
    free(a);
    damage(multi, 12, 20);
    tu_rmtree(dir);
    printf("verify_threads --real: %zu accesses: ok\n", n);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "--real"))
        return run_real(argv[2]);
    run_synthetic();
    return 0;
}
