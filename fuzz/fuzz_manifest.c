/*
 * fuzz_manifest.c - a MANIFEST made of arbitrary bytes, next to real
 * segment files.
 *
 * At start-up the writer builds a small store of three segments
 * (fuzz_build.c); its segment files are copied into the store the target
 * uses, and each input becomes that store's MANIFEST. The seed corpus holds
 * the MANIFEST after each commit, so mutations start from records that
 * match real files. Each input runs as it is and, when that changes it,
 * with its trailing checksum recomputed (so a normal build reaches the
 * record checks too).
 *
 * mh_reader_open must succeed or return a named data error; an open reader
 * is driven through everything it claims (fuzz_exercise_reader); fsck must
 * agree with the reader (see fuzz_segment_open.c).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_build.h"
#include "fuzz_check.h"
#include "fuzz_helpers.h"
#include "fuzz_segfix.h"
#include "fuzz_store.h"

#define QUERY_LIMIT 4096

static char store[FUZZ_PATH_MAX];

/* Builds the fixture once and copies its segment files into store. */
static void init(void) {
    if (store[0])
        return;
    char fixture[FUZZ_PATH_MAX];
    fuzz_join(fixture, sizeof fixture, fuzz_workdir(), "fixture");
    fuzz_rmtree(fixture);
    fuzz_build_store(fixture, FUZZ_STORE_THREE_SEGMENTS, NULL);
    fuzz_join(store, sizeof store, fuzz_workdir(), "man");
    fuzz_rmtree(store);
    fuzz_mkdir(store);
    DIR *d = opendir(fixture);
    FUZZ_ASSERT(d != NULL);
    struct dirent *e;
    int segments = 0;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "seg-", 4) != 0)
            continue;
        char path[FUZZ_PATH_MAX];
        fuzz_join(path, sizeof path, fixture, e->d_name);
        size_t size;
        uint8_t *buf = fuzz_read_file(path, &size);
        FUZZ_ASSERT(buf != NULL);
        fuzz_write_file(store, e->d_name, buf, size);
        free(buf);
        segments++;
    }
    closedir(d);
    FUZZ_ASSERT_MSG(segments == 3, "the fixture should have three segments");
    fuzz_rmtree(fixture);
}

static int open_and_exercise(void) {
    mh_reader *r = NULL;
    int rc = mh_reader_open(store, &r);
    FUZZ_ASSERT_NAMED(rc);
    if (rc != MH_OK) {
        FUZZ_ASSERT_MSG(fuzz_is_data_error(rc) || rc == MH_ENOMEM,
                        mh_error_name(rc));
        FUZZ_ASSERT(r == NULL);
        return rc;
    }
    rc = fuzz_exercise_reader(r, QUERY_LIMIT);
    mh_reader_close(r);
    return rc;
}

static void run(const uint8_t *man, size_t size) {
    fuzz_write_file(store, "MANIFEST", man, size);
    int rc = open_and_exercise();
    mh_verify_result res = {.struct_size = sizeof res};
    int vrc = fuzz_verify(store, 0, &res);
    if (vrc == MH_OK)
        FUZZ_ASSERT_MSG(rc == MH_OK,
                        "fsck calls the store clean but reading it fails");
    if (fuzz_is_data_error(rc))
        FUZZ_ASSERT_MSG(vrc != MH_OK,
                        "reading the store fails but fsck calls it clean");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init();
    run(data, size);
    if (size >= 8) {
        uint8_t *fixed = fuzz_malloc(size);
        memcpy(fixed, data, size);
        fuzz_manifest_fix(fixed, size);
        if (memcmp(fixed, data, size) != 0)
            run(fixed, size);
        free(fixed);
    }
    return 0;
}
