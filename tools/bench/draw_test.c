/*
 * draw_test.c - the benchmark's query distributions and its cold-cache
 * helpers checked against brute force: the touched-address set, the
 * never-accessed ranges (proven untouched), the user distribution's starts
 * (transitions of the trace) and anchors (80 % on an accessed address),
 * reproducibility from the seed, that dropping a file's pages leaves them
 * out of the page cache, and that a store's resident pages are counted by
 * the section holding them. Exit 77 (skipped) only for the last check on
 * a file system that keeps every page in memory (tmpfs).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bench.h"
#include "draw.h"
#include "mh_format.h"

#define TMPFS_MAGIC_ 0x01021994

static int failures;
#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static mh_access acc(uint64_t t, uint64_t phys, uint32_t size, unsigned op)
{
    mh_access a;
    memset(&a, 0, sizeof a);
    a.transition = t;
    a.physical = phys;
    a.size = size;
    a.op = (uint8_t)op;
    return a;
}

/* brute force: does any access touch a byte of [a, b]? */
static int touched(const mh_access *t, size_t n, uint64_t a, uint64_t b)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = t[i].physical, hi = lo + (t[i].size - 1);
        if (lo <= b && hi >= a)
            return 1;
    }
    return 0;
}

static void test_edges(void)
{
    /* overlapping, touching, apart, and the top of the address space */
    mh_access t[] = {
        acc(5, 0x1000, 8, MH_OP_READ),  acc(5, 0x1004, 8, MH_OP_WRITE),
        acc(7, 0x100c, 4, MH_OP_READ),  acc(9, 0x2000, 1, MH_OP_READ),
        acc(9, UINT64_MAX - 3, 4, MH_OP_WRITE), acc(12, 0, 2, MH_OP_READ),
    };
    size_t n = sizeof t / sizeof t[0];
    mhb_trace_index x;
    CHECK(mhb_trace_index_make(t, n, &x) == MH_OK);
    CHECK(x.ntrans == 4); /* 5, 7, 9, 12 */
    CHECK(x.trans[0] == 5 && x.trans[3] == 12);
    CHECK(x.nivl == 4);   /* [0,1] [0x1000,0x100f] [0x2000] [top-3,top] */
    CHECK(x.lo[1] == 0x1000 && x.hi[1] == 0x100f);
    static const uint64_t probe[][2] = {
        {0, 0}, {2, 0xfff}, {0xfff, 0x1000}, {0x1010, 0x1fff}, {0x1010, 0x2000},
        {0x2001, UINT64_MAX - 4}, {UINT64_MAX - 4, UINT64_MAX - 3},
        {UINT64_MAX, UINT64_MAX}, {0x100f, 0x100f}, {0x1008, 0x100b}};
    for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++)
        CHECK(mhb_untouched(&x, probe[i][0], probe[i][1]) ==
              !touched(t, n, probe[i][0], probe[i][1]));
    uint64_t rng = 7;
    mh_query q;
    for (int i = 0; i < 200; i++) {
        CHECK(mhb_draw_never(&x, MH_OPS_RW, MH_BACKWARD, 8, &rng, &q) == 1);
        CHECK(q.addr_last == q.addr_first + 7 && q.addr_first % 8 == 0);
        CHECK(!touched(t, n, q.addr_first, q.addr_last));
        CHECK(q.start_kind == MH_FROM_TRANSITION && q.direction == MH_BACKWARD);
        CHECK(q.start == 5 || q.start == 7 || q.start == 9 || q.start == 12);
    }
    mhb_trace_index_free(&x);

    /* [0, 2^32) covered by two accesses that touch: the only ranges left
     * lie above it */
    mh_access cover[] = {acc(1, 0, 0xffffffffu, MH_OP_READ),
                         acc(2, 0xffffffffu, 1, MH_OP_READ)};
    CHECK(mhb_trace_index_make(cover, 2, &x) == MH_OK);
    CHECK(x.nivl == 1 && x.lo[0] == 0 && x.hi[0] == 0xffffffffu);
    for (int i = 0; i < 50; i++) {
        CHECK(mhb_draw_never(&x, MH_OPS_RW, MH_FORWARD, 4096, &rng, &q) == 1);
        CHECK(q.addr_first > 0xffffffffu);
    }
    mhb_trace_index_free(&x);
}

static void test_user(void)
{
    size_t n = 20000;
    mh_access *t = malloc(n * sizeof *t);
    uint64_t rng = 99;
    for (size_t i = 0; i < n; i++)
        t[i] = acc(i / 3 * 2, 0x10000 + (mhb_mix(&rng) % 50000) * 8, 8,
                   i % 2 ? MH_OP_WRITE : MH_OP_READ);
    mhb_trace_index x;
    CHECK(mhb_trace_index_make(t, n, &x) == MH_OK);
    size_t exact = 0, draws = 5000;
    uint64_t r1 = 3, r2 = 3;
    for (size_t i = 0; i < draws; i++) {
        mh_query q, q2;
        mhb_draw_user(t, n, &x, MH_OPS_WRITE, MH_FORWARD, 8, &r1, &q);
        mhb_draw_user(t, n, &x, MH_OPS_WRITE, MH_FORWARD, 8, &r2, &q2);
        CHECK(memcmp(&q, &q2, sizeof q) == 0); /* seeded: reproducible */
        CHECK(q.start % 2 == 0 && q.start <= (n - 1) / 3 * 2); /* a transition */
        CHECK(q.addr_last == q.addr_first + 7 && q.ops == MH_OPS_WRITE);
        exact += touched(t, n, q.addr_first, q.addr_last);
    }
    /* 80 % anchored on an accessed address, plus the near ones that happen
     * to land on one; a deterministic draw, so the bounds are exact checks */
    CHECK(exact >= draws * 78 / 100 && exact <= draws * 92 / 100);
    mh_query q;
    mhb_draw_user(t, n, &x, MH_OPS_RW, MH_BACKWARD, 0, &r1, &q);
    CHECK(q.addr_first == 0 && q.addr_last == UINT64_MAX);
    mhb_trace_index_free(&x);
    free(t);
}

static int test_drop(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/draw_test.cache", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    CHECK(fd >= 0);
    if (fd < 0)
        return 0;
    static char buf[1 << 20];
    memset(buf, 0x5a, sizeof buf);
    CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
    CHECK(fsync(fd) == 0);
    CHECK(pread(fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf);
    struct statfs sf;
    int tmpfs = fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == TMPFS_MAGIC_;
    close(fd);
    CHECK(mhb_resident_pct(path) > 99.0);
    CHECK(mhb_drop_cache(path) == MH_OK);
    double after = mhb_resident_pct(path);
    unlink(path);
    if (tmpfs) {
        fprintf(stderr, "draw_test: %s is tmpfs, the drop cannot be checked\n", dir);
        return 77;
    }
    CHECK(after >= 0 && after < 50.0);
    CHECK(mhb_drop_cache("/nonexistent/mh_bench") != MH_OK);
    return 0;
}

/* A cold question's pages by section: a store written, its layout read,
 * its pages dropped, then one page in the middle of its chunk records read
 * (no readahead): that page, and only pages of that section, counted as
 * chunks; nothing as the header or the data; the kinds' sum the resident
 * pages. */
static int test_kinds(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/draw_test_kinds.mh", dir);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    CHECK(system(cmd) == 0);
    mh_writer *w = NULL;
    CHECK(mh_writer_open(path, MH_CREATE, NULL, &w) == MH_OK);
    if (w == NULL)
        return 0;
    uint64_t x = 88172645463325252u;
    for (uint64_t t = 0; t < 200000; t++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        mh_access a = acc(t, (x % 4000000u) * 8u, 8, t % 3 ? MH_OP_READ : MH_OP_WRITE);
        CHECK(mh_writer_append(w, &a) == MH_OK);
    }
    CHECK(mh_writer_close(w) == MH_OK);
    mhb_layout lay;
    CHECK(mhb_layout_read(path, &lay) == MH_OK);
    CHECK(lay.nfiles >= 1);
    const mhb_layout_sec *ck = NULL;
    char seg[4200] = "";
    for (size_t i = 0; ck == NULL && i < lay.nfiles; i++)
        for (size_t k = 0; k < lay.file[i].nsec; k++)
            if (lay.file[i].sec[k].kind == MHF_SECT_CHUNKS &&
                lay.file[i].sec[k].size >= 3 * 4096) {
                ck = &lay.file[i].sec[k];
                snprintf(seg, sizeof seg, "%s/%s", path, lay.file[i].name);
                break;
            }
    CHECK(ck != NULL);
    CHECK(!strcmp(mhb_kind_name(MHF_SECT_CHUNKS), "chunks") &&
          !strcmp(mhb_kind_name(MHF_SECT_APOST), "address postings"));
    CHECK(!strcmp(mhb_kind_name(99), "other"));
    CHECK(mhb_drop_cache(path) == MH_OK);
    double k0[MHB_KINDS], k1[MHB_KINDS];
    CHECK(mhb_resident_kinds(path, &lay, k0) == MH_OK);
    double before = 0;
    for (unsigned k = 0; k < MHB_KINDS; k++)
        before += k0[k];
    int fd = ck ? open(seg, O_RDONLY) : -1;
    CHECK(fd >= 0);
    int tmpfs = 0;
    if (fd >= 0) {
        struct statfs sf;
        tmpfs = fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == TMPFS_MAGIC_;
        CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) == 0);
        char b;
        off_t at = (off_t)((ck->offset + ck->size / 2) & ~(uint64_t)4095);
        CHECK(pread(fd, &b, 1, at) == 1);
        close(fd);
    }
    CHECK(mhb_resident_kinds(path, &lay, k1) == MH_OK);
    double sum = 0;
    for (unsigned k = 0; k < MHB_KINDS; k++)
        sum += k1[k];
    CHECK(sum == mhb_resident_pages(path));
    if (!tmpfs) {
        CHECK(before == 0);
        CHECK(k1[MHF_SECT_CHUNKS] >= 1);
        CHECK(k1[0] == 0 && k1[MHF_SECT_DATA] == 0 && k1[MHB_KIND_OTHER] == 0);
        CHECK(k1[MHF_SECT_CHUNKS] == sum);
    }
    mhb_layout_free(&lay);
    CHECK(lay.file == NULL && lay.nfiles == 0);
    CHECK(mhb_layout_read("/nonexistent/mh_bench", &lay) != MH_OK);
    CHECK(system(cmd) == 0);
    return tmpfs ? 77 : 0;
}

int main(int argc, char **argv)
{
    test_edges();
    test_user();
    int skip_kinds = test_kinds(argc > 1 ? argv[1] : ".");
    int skip = test_drop(argc > 1 ? argv[1] : ".");
    if (skip_kinds)
        skip = skip_kinds;
    if (failures) {
        fprintf(stderr, "draw_test: %d failures\n", failures);
        return 1;
    }
    return skip;
}
