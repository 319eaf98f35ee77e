/*
 * corrupt_test.c - every byte of a small store flipped, one at a time.
 *
 *   corrupt_test [--big] WORKDIR [MAX_FLIPS [MEMHIST [CLI_EVERY [SEED]]]]
 *
 * Builds a store of a few thousand accesses in several segments with the
 * writer API (small slices and blocks, metadata) - or with --big, 10,000
 * accesses in two segments with the writer's default options - then for every byte of
 * every file but LOCK (or, when there are more than MAX_FLIPS bytes, a
 * seeded sample of MAX_FLIPS of them) changes that byte in place and checks:
 *   - mh_verify reports a problem for every flip: SPEC.md section 12 says
 *     every byte but LOCK is covered by a checksum (the MANIFEST, a
 *     segment's header, dictionary, slice, chunk and block arrays, and the
 *     blocks, which tile the data section). The flips are counted per
 *     region, and bytes outside all of them (there should be none) apart;
 *   - mh_reader_open either fails with a store error code or succeeds with
 *     statistics and introspection equal to the intact store's;
 *   - a full scan and a fixed set of queries either return exactly the
 *     intact answers or stop with a store error code (accesses returned
 *     before the error must still be right);
 *   - nothing crashes or hangs (a 60 s alarm per flip; the flip is named on
 *     a crash or a sanitizer report).
 * With MEMHIST, every CLI_EVERY-th flip of each region (default 64) also
 * runs `memhist fsck` (exit 1 when the library found a problem),
 * `memhist inspect` (exit 0 or 1, no crash) and
 * `memhist query --all` (exit 1, or exit 0 with exactly the intact dump).
 * Prints flips made / detected per region.
 */
#include "robust_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mh_format.h"

#if defined(__SANITIZE_ADDRESS__)
#define RB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RB_ASAN 1
#endif
#endif
#ifdef RB_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

enum { NQUERIES = 10, MAXANS = 3000 };

/* accesses in the store: 1600 with small options (the default), or 40000
 * with the writer's default options (--big) */
static size_t TOTAL = 1600;

/* what is being flipped, for the crash and hang handlers */
static char g_where[256] = "(setup)";

static void say_where(void) {
    static const char msg[] = "corrupt_test: died while checking flip ";
    ssize_t rc = write(STDERR_FILENO, msg, sizeof msg - 1);
    rc = write(STDERR_FILENO, g_where, strlen(g_where));
    rc = write(STDERR_FILENO, "\n", 1);
    (void)rc;
}

static void on_fatal(int sig) {
    say_where();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "corrupt_test: HANG (60 s) ";
    ssize_t rc = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)rc;
    say_where();
    _exit(1);
}

/* Regions of a file: 1 = covered by a checksum. */
static void mark(unsigned char *cov, size_t len, uint64_t off, uint64_t n) {
    for (uint64_t i = off; i < off + n && i < len; i++)
        cov[i] = 1;
}

/* The section of type `type` of a 2.0 segment (SPEC.md 5.2), from its
 * directory: 1 with *off and *size set, 0 when absent. */
static int section(const unsigned char *p, size_t len, uint32_t type, uint64_t *off,
                   uint64_t *size) {
    uint32_t n = mhf_load_u32(p + MHF2_SEG_DIR_COUNT);
    uint32_t rsz = mhf_load_u32(p + MHF2_SEG_DIR_RECSZ);
    uint64_t dir = mhf_load_u64(p + MHF2_SEG_DIR_OFF);
    RB_CHECK(dir <= len && (uint64_t)n * rsz <= len - dir, "directory past the end");
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *e = p + dir + (uint64_t)i * rsz;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) == type) {
            *off = mhf_load_u64(e + MHF2_DIR_OFFSET);
            *size = mhf_load_u64(e + MHF2_DIR_BYTES);
            return 1;
        }
    }
    return 0;
}

/* Coverage map of a segment file, from its intact bytes: the header,
 * the directory and every section are each under a checksum (SPEC.md 15). */
static unsigned char *segment_coverage(const unsigned char *p, size_t len) {
    unsigned char *cov = calloc(len ? len : 1, 1);
    RB_CHECK(cov != NULL && len >= MHF_SEG_HEADER_SIZE, "segment of %zu bytes", len);
    RB_CHECK(mhf_load_u16(p + MHF_SEG_MAJOR) == 2, "not a 2.0 segment");
    mark(cov, len, 0, MHF_SEG_HEADER_SIZE);
    mark(cov, len, mhf_load_u64(p + MHF2_SEG_DIR_OFF),
         (uint64_t)mhf_load_u32(p + MHF2_SEG_DIR_COUNT) * mhf_load_u32(p + MHF2_SEG_DIR_RECSZ));
    for (uint32_t t = MHF_SECT_DATA; t <= MHF_SECT_SUMMARY; t++) {
        uint64_t off, size;
        if (section(p, len, t, &off, &size))
            mark(cov, len, off, size);
    }
    return cov;
}

/* regions: 0 manifest, 1 header, 2 dict, 3 slices, 4 chunks, 5 block array,
 * 6 block data, 7 address summary, 8 directory, 9 elsewhere */
#define NREGIONS 10
static const char *const region_names[NREGIONS] = {
    "MANIFEST",   "segment header", "dictionary",      "slice array", "chunk array",
    "block array", "block data",    "address summary", "directory",   "other segment bytes"};

/* Which named region of a segment offset o falls in (for the report). */
static int segment_region(const unsigned char *p, size_t len, uint64_t o) {
    if (o < MHF_SEG_HEADER_SIZE)
        return 1;
    static const struct {
        uint32_t type;
        int region;
    } map[] = {{MHF_SECT_DICT, 2},   {MHF_SECT_SLICES, 3}, {MHF_SECT_CHUNKS, 4},
               {MHF_SECT_BLOCKS, 5}, {MHF_SECT_DATA, 6},   {MHF_SECT_SUMMARY, 7}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        uint64_t off, size;
        if (section(p, len, map[i].type, &off, &size) && o >= off && o - off < size)
            return map[i].region;
    }
    if (o >= mhf_load_u64(p + MHF2_SEG_DIR_OFF))
        return 8;
    return 9;
}

typedef struct intact {
    mh_stats st;
    size_t nseg;
    mh_segment_info seg[16];
    mh_access *all;
    mh_query q[NQUERIES];
    size_t qn[NQUERIES];
    mh_access *qans[NQUERIES];
} intact;

static int same_stats(const mh_stats *a, const mh_stats *b) {
    return a->accesses == b->accesses && memcmp(a->op_counts, b->op_counts, sizeof a->op_counts) == 0 &&
           a->transition_first == b->transition_first && a->transition_last == b->transition_last &&
           a->segments == b->segments && a->slices == b->slices && a->chunks == b->chunks &&
           a->blocks == b->blocks && a->compressed_bytes == b->compressed_bytes &&
           a->raw_bytes == b->raw_bytes;
}

static int same_seg(const mh_segment_info *a, const mh_segment_info *b) {
    return a->seq == b->seq && a->id_first == b->id_first && a->accesses == b->accesses &&
           a->transition_first == b->transition_first && a->transition_last == b->transition_last &&
           a->slices == b->slices && a->chunks == b->chunks && a->blocks == b->blocks &&
           a->rows_per_block == b->rows_per_block &&
           memcmp(a->op_counts, b->op_counts, sizeof a->op_counts) == 0 &&
           strcmp(a->file_name, b->file_name) == 0;
}

/* Everything a reader does on the flipped store. Returns a description of a
 * violation, or NULL. opened gets 1 when the store opened. */
static const char *read_checks(const char *dir, const intact *in, mh_access *buf,
                               int *opened, int *errored) {
    static char why[512];
    mh_reader *r = NULL;
    *opened = 0;
    *errored = 0;
    int rc = mh_reader_open(dir, &r);
    if (rc != MH_OK) {
        *errored = 1;
        if (!rb_is_data_error(rc)) {
            snprintf(why, sizeof why, "open returned %s", mh_error_name(rc));
            return why;
        }
        return NULL;
    }
    *opened = 1;
    const char *bad = NULL;
    mh_stats st = {.struct_size = sizeof st};
    /* the open reads the MANIFEST only: the statistics open every segment
     * and may meet the damage */
    rc = mh_reader_stats(r, &st);
    if (rc != MH_OK && !rb_is_data_error(rc)) {
        bad = "statistics returned an unexpected code";
        goto out;
    }
    if (rc != MH_OK)
        *errored = 1;
    else if (!same_stats(&st, &in->st)) {
        bad = "statistics differ from the intact store's";
        goto out;
    }
    if (mh_reader_segment_count(r) != in->nseg) {
        bad = "segment count differs";
        goto out;
    }
    for (size_t s = 0; s < in->nseg; s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        rc = mh_reader_segment_info(r, s, &si);
        if (rc != MH_OK) {
            if (!rb_is_data_error(rc)) {
                bad = "segment_info returned an unexpected code";
                goto out;
            }
            *errored = 1;
            continue;
        }
        if (!same_seg(&si, &in->seg[s])) {
            bad = "segment_info differs";
            goto out;
        }
        for (uint32_t k = 0; k < si.slices; k++) {
            mh_slice_info sl = {.struct_size = sizeof sl};
            rc = mh_reader_slice_info(r, s, k, &sl);
            if (rc != MH_OK && !rb_is_data_error(rc)) {
                bad = "slice_info returned an unexpected code";
                goto out;
            }
        }
        for (uint32_t k = 0; k < si.chunks; k++) {
            mh_chunk_info ch = {.struct_size = sizeof ch};
            rc = mh_reader_chunk_info(r, s, k, &ch);
            if (rc != MH_OK && !rb_is_data_error(rc)) {
                bad = "chunk_info returned an unexpected code";
                goto out;
            }
        }
    }
    for (size_t i = 0; i < mh_reader_meta_count(r); i++) {
        const char *k = NULL, *v = NULL;
        rc = mh_reader_meta_get(r, i, &k, &v);
        if (rc == MH_OK && (k == NULL || v == NULL || strlen(k) > (1u << 20))) {
            bad = "metadata entry without strings";
            goto out;
        }
    }
    /* full scan, batch by batch: what comes before an error must be right */
    {
        mh_query q;
        mh_query_init(&q);
        q.ops = MH_OPS_ALL;
        mh_cursor *c = NULL;
        rc = mh_cursor_open(r, &q, &c);
        size_t pos = 0;
        while (rc == MH_OK) {
            size_t k = 0;
            rc = mh_cursor_next(c, buf, 500, &k);
            if (rc != MH_OK || k == 0)
                break;
            if (pos + k > TOTAL || oracle_compare("scan", buf, k, in->all + pos, k) != 0) {
                mh_cursor_close(c);
                bad = "the full scan returned different accesses";
                goto out;
            }
            pos += k;
        }
        mh_cursor_close(c);
        if (rc != MH_OK) {
            *errored = 1;
            if (!rb_is_data_error(rc)) {
                snprintf(why, sizeof why, "scan returned %s", mh_error_name(rc));
                bad = why;
                goto out;
            }
        } else if (pos != TOTAL) {
            snprintf(why, sizeof why, "scan ended after %zu of %zu accesses without error",
                     pos, TOTAL);
            bad = why;
            goto out;
        }
    }
    for (int i = 0; i < NQUERIES; i++) {
        size_t n = 0;
        rc = mh_query_run(r, &in->q[i], buf, MAXANS, &n);
        if (rc != MH_OK) {
            *errored = 1;
            if (!rb_is_data_error(rc)) {
                snprintf(why, sizeof why, "query %d returned %s", i, mh_error_name(rc));
                bad = why;
                goto out;
            }
            continue;
        }
        if (n != in->qn[i] || oracle_compare("query", buf, n, in->qans[i], n) != 0) {
            snprintf(why, sizeof why, "query %d: %zu accesses, intact %zu, or different ones",
                     i, n, in->qn[i]);
            bad = why;
            goto out;
        }
    }
out:
    mh_reader_close(r);
    return bad;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: corrupt_test [--big] WORKDIR [MAX_FLIPS [MEMHIST [CLI_EVERY [SEED]]]]\n");
        return 2;
    }
    int big = strcmp(argv[1], "--big") == 0;
    if (big) {
        argv++;
        argc--;
        TOTAL = 10000;
        RB_CHECK(argc >= 2, "--big needs WORKDIR");
    }
    const char *work = argv[1];
    size_t max_flips = argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : 1000000;
    const char *memhist = argc > 3 && argv[3][0] ? argv[3] : NULL;
    unsigned long cli_every = argc > 4 ? strtoul(argv[4], NULL, 0) : 64;
    if (cli_every == 0)
        cli_every = 1;
    rb_rng rng = {argc > 5 ? strtoull(argv[5], NULL, 0) : 99};
    signal(SIGSEGV, on_fatal);
    signal(SIGBUS, on_fatal);
    signal(SIGFPE, on_fatal);
    signal(SIGILL, on_fatal);
    signal(SIGABRT, on_fatal);
    signal(SIGALRM, on_alarm);
#ifdef RB_ASAN
    __sanitizer_set_death_callback(say_where);
#endif
    rb_rm_dir(work);
    RB_CHECK(mkdir(work, 0755) == 0, "mkdir %s: %s", work, strerror(errno));
    char store[4096];
    rb_path(store, sizeof store, work, "store");

    intact in;
    memset(&in, 0, sizeof in);
    in.all = rb_gen_accesses(1234, TOTAL);
    mh_writer_options o;
    mh_writer_options_init(&o);
    size_t cuts[] = {0, 500, 1000, 1300, TOTAL};
    if (big) { /* default layout: large blocks and slices, two segments */
        cuts[1] = TOTAL / 4;
        cuts[2] = cuts[3] = TOTAL / 2;
    } else {
        o.slice_accesses = 200;
        o.block_accesses = 64;
        o.chunk_min_accesses = 32;
        o.background = 0;
    }
    o.commit_accesses = 0;
    mh_writer *w = NULL;
    RB_OK(mh_writer_open(store, MH_CREATE, &o, &w));
    RB_OK(mh_writer_set_meta(w, "tracer", "corrupt_test"));
    RB_OK(mh_writer_set_meta(w, "note", "every byte of this store gets flipped"));
    for (int i = 0; i + 1 < 5; i++) {
        if (cuts[i + 1] == cuts[i])
            continue;
        RB_OK(mh_writer_append_batch(w, in.all + cuts[i], cuts[i + 1] - cuts[i], NULL));
        RB_OK(mh_writer_commit(w));
    }
    RB_OK(mh_writer_close(w));

    /* intact answers */
    mh_reader *r = NULL;
    RB_OK(mh_reader_open(store, &r));
    in.st.struct_size = sizeof in.st;
    RB_OK(mh_reader_stats(r, &in.st));
    RB_CHECK(in.st.accesses == TOTAL, "store holds %llu", (unsigned long long)in.st.accesses);
    in.nseg = mh_reader_segment_count(r);
    RB_CHECK(in.nseg >= 2 && in.nseg <= 16, "%zu segments", in.nseg);
    for (size_t s = 0; s < in.nseg; s++) {
        in.seg[s].struct_size = sizeof in.seg[s];
        RB_OK(mh_reader_segment_info(r, s, &in.seg[s]));
        in.seg[s].file_name = strdup(in.seg[s].file_name); /* outlives r */
        RB_CHECK(in.seg[s].file_name != NULL, "out of memory");
    }
    for (int i = 0; i < NQUERIES; i++) {
        rb_random_query(&rng, in.all, TOTAL, &in.q[i]);
        in.qans[i] = malloc(MAXANS * sizeof(mh_access));
        RB_CHECK(in.qans[i] != NULL, "out of memory");
        in.qn[i] = oracle_answer(in.all, TOTAL, &in.q[i], in.qans[i], MAXANS);
        size_t n = 0;
        mh_access *tmp = malloc(MAXANS * sizeof(mh_access));
        RB_CHECK(tmp != NULL, "out of memory");
        RB_OK(mh_query_run(r, &in.q[i], tmp, MAXANS, &n));
        RB_CHECK(n == in.qn[i] && oracle_compare("intact", tmp, n, in.qans[i], n) == 0,
                 "the intact store answers query %d wrongly", i);
        free(tmp);
    }
    mh_reader_close(r);
    int vrc;
    uint64_t p0 = rb_verify(store, 0, 1, &vrc);
    RB_CHECK(vrc == MH_OK && p0 == 0, "intact store: fsck %s", mh_error_name(vrc));

    /* the CLI's intact full dump, to compare flipped stores' dumps with */
    char cli_out[4096];
    rb_path(cli_out, sizeof cli_out, work, "query.csv");
    unsigned char *intact_csv = NULL;
    size_t intact_csv_len = 0;
    if (memhist != NULL) {
        char *qa[] = {(char *)memhist, "query", store, "--from", "0", "--all",
                      "--op", "rwx", "--format", "csv", NULL};
        int st = rb_run(qa, cli_out, NULL);
        intact_csv = rb_read_file(cli_out, &intact_csv_len);
        RB_CHECK(st == 0 && intact_csv != NULL && intact_csv_len > 1000,
                 "memhist query on the intact store exited %d", st);
    }

    /* every file, its coverage and the flips */
    size_t nn = 0;
    char **names = rb_list_dir(store, &nn);
    RB_CHECK(names != NULL, "cannot list the store");
    size_t total_bytes = 0;
    for (size_t i = 0; i < nn; i++) {
        char p[4096];
        rb_path(p, sizeof p, store, names[i]);
        struct stat stt;
        RB_CHECK(stat(p, &stt) == 0, "stat %s", p);
        if (strcmp(names[i], "LOCK") != 0)
            total_bytes += (size_t)stt.st_size;
    }
    /* sampling: each byte is flipped with probability max/total */
    uint64_t keep_num = max_flips >= total_bytes ? 1 : max_flips, keep_den =
        max_flips >= total_bytes ? 1 : total_bytes;
    unsigned long made[NREGIONS] = {0}, detected[NREGIONS] = {0}, opened[NREGIONS] = {0},
                  errored[NREGIONS] = {0};
    unsigned long missed = 0, wrong = 0, cli_runs = 0;
    mh_access *buf = malloc(MAXANS * sizeof *buf);
    RB_CHECK(buf != NULL, "out of memory");
    for (size_t i = 0; i < nn; i++) {
        if (strcmp(names[i], "LOCK") == 0)
            continue;
        char p[4096];
        rb_path(p, sizeof p, store, names[i]);
        size_t len = 0;
        unsigned char *orig = rb_read_file(p, &len);
        int is_man = strcmp(names[i], MHF_MANIFEST_NAME) == 0;
        RB_CHECK(is_man || strncmp(names[i], MHF_SEGMENT_PREFIX, 4) == 0,
                 "unexpected file %s in a closed store", names[i]);
        unsigned char *cov = NULL;
        if (is_man) {
            cov = malloc(len ? len : 1);
            RB_CHECK(cov != NULL, "out of memory");
            memset(cov, 1, len);
        } else {
            cov = segment_coverage(orig, len);
        }
        int fd = open(p, O_RDWR);
        RB_CHECK(fd >= 0, "open %s: %s", p, strerror(errno));
        for (size_t off = 0; off < len; off++) {
            if (keep_den > 1 && rb_below(&rng, keep_den) >= keep_num)
                continue;
            int region = is_man ? 0 : segment_region(orig, len, off);
            unsigned char mask = (off & 1) ? 0xFF : (unsigned char)(1u << ((off >> 1) % 8));
            unsigned char v = (unsigned char)(orig[off] ^ mask);
            snprintf(g_where, sizeof g_where, "%s offset %zu (%s) xor 0x%02x", names[i], off,
                     region_names[region], mask);
            RB_CHECK(pwrite(fd, &v, 1, (off_t)off) == 1, "pwrite: %s", strerror(errno));
            alarm(60);
            made[region]++;
            mh_verify_result res = {.struct_size = sizeof res};
            int rc = mh_verify(store, 0, NULL, NULL, &res);
            int found = rc != MH_OK || res.problems > 0;
            if (found && rc != MH_ECORRUPT && !rb_is_data_error(rc)) {
                fprintf(stderr, "%s: mh_verify returned %s\n", g_where, mh_error_name(rc));
                wrong++;
            }
            if (found)
                detected[region]++;
            else { /* SPEC.md section 12: every byte but LOCK is covered */
                if (missed < 20)
                    fprintf(stderr, "NOT DETECTED: %s%s\n", g_where,
                            cov[off] ? "" : " (outside every region the header maps)");
                missed++;
            }
            int op = 0, er = 0;
            const char *why = read_checks(store, &in, buf, &op, &er);
            opened[region] += (unsigned long)op;
            errored[region] += (unsigned long)er;
            if (why != NULL) {
                if (wrong < 20)
                    fprintf(stderr, "WRONG: %s: %s\n", g_where, why);
                wrong++;
            }
            if (memhist != NULL && made[region] % cli_every == 1 % cli_every) {
                char *fa[] = {(char *)memhist, "fsck", store, NULL};
                int st = rb_run(fa, NULL, NULL);
                if (st != (found ? 1 : 0)) {
                    fprintf(stderr, "%s: memhist fsck exited %d, library %s\n", g_where, st,
                            found ? "found a problem" : "found none");
                    wrong++;
                }
                char *ia[] = {(char *)memhist, "inspect", store, NULL};
                st = rb_run(ia, NULL, NULL);
                if (st != 0 && st != 1) {
                    fprintf(stderr, "%s: memhist inspect exited %d\n", g_where, st);
                    wrong++;
                }
                /* the CLI's full dump: all or nothing, never other data */
                char *qa[] = {(char *)memhist, "query", store, "--from", "0", "--all",
                              "--op", "rwx", "--format", "csv", NULL};
                st = rb_run(qa, cli_out, NULL);
                size_t ql = 0;
                unsigned char *qb = rb_read_file(cli_out, &ql);
                if (st == 0 && (qb == NULL || ql != intact_csv_len ||
                                memcmp(qb, intact_csv, ql) != 0)) {
                    fprintf(stderr, "%s: memhist query exited 0 with other output\n", g_where);
                    wrong++;
                } else if (st != 0 && st != 1) {
                    fprintf(stderr, "%s: memhist query exited %d\n", g_where, st);
                    wrong++;
                }
                free(qb);
                cli_runs++;
            }
            alarm(0);
            RB_CHECK(pwrite(fd, orig + off, 1, (off_t)off) == 1, "pwrite: %s", strerror(errno));
        }
        close(fd);
        free(orig);
        free(cov);
    }
    snprintf(g_where, sizeof g_where, "(after the flips)");
    p0 = rb_verify(store, 0, 1, &vrc);
    RB_CHECK(vrc == MH_OK && p0 == 0, "restored store: fsck %s", mh_error_name(vrc));

    unsigned long tm = 0, td = 0;
    printf("%-20s %8s %8s %8s %10s\n", "region", "flips", "detected", "opened", "err-seen");
    for (int k = 0; k < NREGIONS; k++) {
        if (made[k] == 0)
            continue;
        printf("%-20s %8lu %8lu %8lu %10lu\n", region_names[k], made[k], detected[k],
               opened[k], errored[k]);
        tm += made[k];
        td += detected[k];
    }
    printf("flips made %lu, detected by fsck %lu (store bytes %zu, %s); undetected "
           "flips %lu; wrong reader behaviour %lu; CLI checks %lu\n",
           tm, td, total_bytes, keep_den > 1 ? "sampled" : "every byte", missed, wrong,
           cli_runs);
    for (size_t s = 0; s < in.nseg; s++)
        free((char *)in.seg[s].file_name);
    rb_free_names(names, nn);
    for (int i = 0; i < NQUERIES; i++)
        free(in.qans[i]);
    free(in.all);
    free(buf);
    free(intact_csv);
    RB_CHECK(missed == 0, "%lu flips went undetected", missed);
    RB_CHECK(wrong == 0, "%lu flips made a reader misbehave", wrong);
    rb_rm_dir(work);
    return 0;
}
