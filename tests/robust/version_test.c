/*
 * version_test.c - a store claiming another byte order, a future major
 * version or an unknown incompatible feature is refused with MH_EVERSION.
 *
 *   version_test WORKDIR
 *
 * Builds a valid two-segment store, then for each case patches one field
 * of the MANIFEST header or of a segment header and recomputes every
 * checksum that covers it with libxxhash (the segment's header checksum,
 * the manifest record's copy of it, the manifest's own checksum), so that
 * only the version check can trip. mh_reader_open and mh_writer_open must
 * return MH_EVERSION and mh_verify must report an MH_EVERSION problem. A
 * newer minor version, which only adds optional content, must still open
 * with the same accesses.
 */
#include "robust_util.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "mh_format.h"

enum { TOTAL = 3000 };

static int g_saw_version;
static void on_problem(void *ctx, const mh_problem *p) {
    (void)ctx;
    if (p->code == MH_EVERSION)
        g_saw_version = 1;
}

/* Rewrites the manifest checksum (its last 8 bytes) after a patch. */
static void reseal_manifest(unsigned char *m, size_t len) {
    RB_CHECK(len >= MHF_MAN_HEADER_SIZE + 8, "manifest of %zu bytes", len);
    mhf_store_u64(m + len - 8, XXH3_64bits(m, len - 8));
}

typedef struct patch {
    const char *what;
    int in_segment;      /* 0 manifest, 1 first segment, 2 last segment */
    size_t off;          /* field offset */
    int width;           /* 2 or 4 bytes */
    uint32_t value;
    int expect;          /* MH_EVERSION or MH_OK */
} patch;

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: version_test WORKDIR\n");
        return 2;
    }
    const char *work = argv[1];
    rb_rm_dir(work);
    RB_CHECK(mkdir(work, 0755) == 0, "mkdir %s: %s", work, strerror(errno));
    char good[4096], bad[4096];
    rb_path(good, sizeof good, work, "good");
    rb_path(bad, sizeof bad, work, "bad");
    mh_access *all = rb_gen_accesses(66, TOTAL);
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.slice_accesses = 512;
    o.block_accesses = 128;
    o.commit_accesses = 0;
    mh_writer *w = NULL;
    RB_OK(mh_writer_open(good, MH_CREATE, &o, &w));
    RB_OK(mh_writer_append_batch(w, all, TOTAL / 2, NULL));
    RB_OK(mh_writer_commit(w));
    RB_OK(mh_writer_append_batch(w, all + TOTAL / 2, TOTAL - TOTAL / 2, NULL));
    RB_OK(mh_writer_close(w));

    /* the manifest checksum layout this test assumes: XXH3-64 of the rest */
    char man_path[4096];
    rb_path(man_path, sizeof man_path, good, MHF_MANIFEST_NAME);
    size_t mlen = 0;
    unsigned char *man = rb_read_file(man_path, &mlen);
    RB_CHECK(man != NULL && mlen >= MHF_MAN_HEADER_SIZE + 8, "no MANIFEST");
    RB_CHECK(XXH3_64bits(man, mlen - 8) == mhf_load_u64(man + mlen - 8),
             "the MANIFEST does not end with the XXH3-64 of its other bytes");
    uint32_t nseg = mhf_load_u32(man + MHF_MAN_SEG_COUNT);
    RB_CHECK(nseg >= 2, "%u segments", nseg);

    static const patch cases[] = {
        {"manifest byte order swapped", 0, MHF_MAN_BOM, 4, MHF_BYTE_ORDER_SWAPPED, MH_EVERSION},
        {"manifest major version 3", 0, MHF_MAN_MAJOR, 2, MHF_VERSION_MAJOR + 1, MH_EVERSION},
        {"manifest major version 0", 0, MHF_MAN_MAJOR, 2, 0, MH_EVERSION},
        {"manifest incompatible feature flag", 0, MHF_MAN_FLAGS, 4, 1, MH_EVERSION},
        {"manifest newer minor version", 0, MHF_MAN_MINOR, 2, MHF_VERSION_MINOR + 1, MH_OK},
        {"first segment byte order swapped", 1, MHF_SEG_BOM, 4, MHF_BYTE_ORDER_SWAPPED, MH_EVERSION},
        {"last segment byte order swapped", 2, MHF_SEG_BOM, 4, MHF_BYTE_ORDER_SWAPPED, MH_EVERSION},
        {"first segment major version 3", 1, MHF_SEG_MAJOR, 2, MHF_VERSION_MAJOR + 1, MH_EVERSION},
        {"last segment major version 3", 2, MHF_SEG_MAJOR, 2, MHF_VERSION_MAJOR + 1, MH_EVERSION},
        {"last segment incompatible feature flag", 2, MHF_SEG_FLAGS, 4, 1, MH_EVERSION},
        {"last segment newer minor version", 2, MHF_SEG_MINOR, 2, MHF_VERSION_MINOR + 1, MH_OK},
    };
    int checked = 0, writer_accepted = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const patch *pc = &cases[c];
        rb_copy_dir(good, bad);
        char mp[4096];
        rb_path(mp, sizeof mp, bad, MHF_MANIFEST_NAME);
        size_t ml = 0;
        unsigned char *m = rb_read_file(mp, &ml);
        if (pc->in_segment == 0) {
            if (pc->width == 2)
                mhf_store_u16(m + pc->off, (uint16_t)pc->value);
            else
                mhf_store_u32(m + pc->off, pc->value);
        } else {
            uint32_t k = pc->in_segment == 1 ? 0 : nseg - 1;
            unsigned char *rec = m + MHF_MAN_HEADER_SIZE + (size_t)k * MHF_MAN_REC_SIZE;
            char name[64], sp[4096];
            snprintf(name, sizeof name, "seg-%016llx.mhs",
                     (unsigned long long)mhf_load_u64(rec + MHF_MREC_SEQ));
            rb_path(sp, sizeof sp, bad, name);
            size_t sl = 0;
            unsigned char *s = rb_read_file(sp, &sl);
            RB_CHECK(s != NULL && sl >= MHF_SEG_HEADER_SIZE, "segment %s missing", name);
            RB_CHECK(XXH3_64bits(s, MHF_SEG_HEADER_SUM) == mhf_load_u64(s + MHF_SEG_HEADER_SUM),
                     "%s: header checksum is not XXH3-64 of bytes 0..247", name);
            RB_CHECK(mhf_load_u64(rec + MHF_MREC_HEADER_SUM) == mhf_load_u64(s + MHF_SEG_HEADER_SUM),
                     "manifest record of %s holds another header checksum", name);
            if (pc->width == 2)
                mhf_store_u16(s + pc->off, (uint16_t)pc->value);
            else
                mhf_store_u32(s + pc->off, pc->value);
            uint64_t sum = XXH3_64bits(s, MHF_SEG_HEADER_SUM);
            mhf_store_u64(s + MHF_SEG_HEADER_SUM, sum);
            mhf_store_u64(rec + MHF_MREC_HEADER_SUM, sum);
            rb_write_file(sp, s, sl);
            free(s);
        }
        reseal_manifest(m, ml);
        rb_write_file(mp, m, ml);
        free(m);

        mh_reader *r = NULL;
        int rc = mh_reader_open(bad, &r);
        if (pc->expect == MH_OK) {
            RB_CHECK(rc == MH_OK, "%s: open returned %s, want MH_OK", pc->what, mh_error_name(rc));
            mh_access *got = NULL;
            size_t n = 0;
            rc = rb_read_all(r, &got, &n);
            RB_CHECK(rc == MH_OK && n == TOTAL, "%s: read %s, %zu", pc->what, mh_error_name(rc), n);
            RB_CHECK(oracle_compare(pc->what, got, n, all, n) == 0, "%s: content differs", pc->what);
            free(got);
            mh_reader_close(r);
        } else {
            /* the open reads the MANIFEST only: a segment's version is
             * refused by the first query that reaches the segment */
            if (pc->in_segment && rc == MH_OK) {
                mh_access *got = NULL;
                size_t n = 0;
                rc = rb_read_all(r, &got, &n);
                free(got);
                mh_reader_close(r);
                r = NULL;
            }
            RB_CHECK(rc == MH_EVERSION && r == NULL, "%s: open returned %s, want MH_EVERSION",
                     pc->what, mh_error_name(rc));
            mh_writer *bw = NULL;
            rc = mh_writer_open(bad, MH_APPEND, NULL, &bw);
            /* the manifest is read by every writer; segment headers are
             * the reader's business (a writer only adds new segments), so
             * a writer that does not look at old segments is tolerated */
            RB_CHECK(rc == MH_EVERSION || (pc->in_segment && rc == MH_OK),
                     "%s: writer open returned %s, want MH_EVERSION", pc->what,
                     mh_error_name(rc));
            if (rc == MH_OK)
                writer_accepted++;
            mh_writer_abandon(bw);
            g_saw_version = 0;
            mh_verify_result res = {.struct_size = sizeof res};
            rc = mh_verify(bad, 0, on_problem, NULL, &res);
            RB_CHECK(rc != MH_OK && res.problems > 0 && g_saw_version,
                     "%s: mh_verify returned %s with %llu problems, %s MH_EVERSION", pc->what,
                     mh_error_name(rc), (unsigned long long)res.problems,
                     g_saw_version ? "one" : "none");
        }
        printf("%-42s -> %s\n", pc->what, mh_error_name(pc->expect));
        checked++;
    }
    printf("version and byte-order cases checked: %d (segment cases a writer opened "
           "without looking: %d)\n", checked, writer_accepted);
    free(man);
    free(all);
    rb_rm_dir(work);
    return 0;
}
