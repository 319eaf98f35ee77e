/*
 * fuzz_segment_open.c - a segment file made of arbitrary bytes.
 *
 * The input becomes the only segment of a store whose MANIFEST is derived
 * from the input's own header (fuzz_manifest_for), so the reader goes past
 * the manifest and into the segment. It runs twice when that changes
 * anything: on the bytes as they are, and with every checksum recomputed
 * (fuzz_segment_fix), so that a normal build replaying the corpus reaches
 * the structures behind the checksums as the fuzz build does.
 *
 * Each time: mh_reader_open must succeed or return a data error; an open
 * reader is driven through everything it claims to hold with every answer
 * checked (fuzz_exercise_reader; against a brute-force scan only when
 * fsck calls the store clean); fsck (mh_verify) must agree with what the
 * reader met - a store it calls clean must open and answer every query
 * without error, and a store whose reader failed on bad data must not be
 * called clean; after fsck --repair says the store is clean, it must open
 * and answer without error.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_helpers.h"
#include "fuzz_segfix.h"
#include "fuzz_store.h"

#define QUERY_LIMIT 4096 /* accesses read per query */

/* Opens the store and drives it; returns the first error met (open or
 * query), MH_OK when everything worked. */
static int open_and_exercise(const char *dir) {
    mh_reader *r = NULL;
    int rc = mh_reader_open(dir, &r);
    FUZZ_ASSERT_NAMED(rc);
    if (rc != MH_OK) {
        FUZZ_ASSERT_MSG(fuzz_is_data_error(rc) || rc == MH_ENOMEM,
                        mh_error_name(rc));
        FUZZ_ASSERT(r == NULL);
        return rc;
    }
    FUZZ_ASSERT(r != NULL);
    rc = fuzz_exercise_reader(r, QUERY_LIMIT);
    mh_reader_close(r);
    return rc;
}

static void run(const char *dir, const uint8_t *seg, size_t size) {
    fuzz_rmtree(dir);
    fuzz_mkdir(dir);
    uint64_t seq;
    size_t man_size;
    uint8_t *man = fuzz_manifest_for(seg, size, &seq, &man_size);
    char name[32];
    fuzz_segment_name(name, seq);
    fuzz_write_file(dir, name, seg, size);
    fuzz_write_file(dir, "MANIFEST", man, man_size);
    free(man);

    /* fsck first: a well-formed but inexact index (address summary, set or
     * postings: their exactness is fsck's to check, SPEC.md §9-§9d) may
     * make a query miss rows, so answers are held to the brute-force scan
     * only in a store fsck calls clean (as fuzz_section does) */
    mh_verify_result res = {.struct_size = sizeof res};
    int vrc = fuzz_verify(dir, 0, &res);
    fuzz_set_lenient(vrc != MH_OK);
    int rc = open_and_exercise(dir);
    fuzz_set_lenient(0);
    if (vrc == MH_OK)
        FUZZ_ASSERT_MSG(rc == MH_OK,
                        "fsck calls the store clean but reading it fails");
    if (fuzz_is_data_error(rc))
        FUZZ_ASSERT_MSG(vrc != MH_OK,
                        "reading the store fails but fsck calls it clean");

    vrc = fuzz_verify(dir, MH_VERIFY_REPAIR, &res);
    if (vrc == MH_OK) {
        rc = open_and_exercise(dir);
        FUZZ_ASSERT_MSG(rc == MH_OK,
                        "fsck --repair calls the store clean but reading it "
                        "fails");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char dir[FUZZ_PATH_MAX];
    fuzz_join(dir, sizeof dir, fuzz_workdir(), "seg");
    run(dir, data, size);
    if (size >= 256) {
        uint8_t *fixed = fuzz_malloc(size);
        memcpy(fixed, data, size);
        fuzz_segment_fix(fixed, size);
        if (memcmp(fixed, data, size) != 0)
            run(dir, fixed, size);
        free(fixed);
    }
    fuzz_rmtree(dir);
    return 0;
}
