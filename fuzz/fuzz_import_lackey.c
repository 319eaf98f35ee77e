/*
 * fuzz_import_lackey.c - the valgrind lackey parser (tools/import_lackey.c):
 * whole vs pieces (fuzz_import_common.c), and with MH_IMPORT_EXEC the same
 * accesses plus one execute access per instruction line.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_helpers.h"
#include "fuzz_import_common.h"

static void *create(unsigned flags, mh_import_sink_fn fn, void *ctx) {
    return mh_lackey_new(flags, fn, ctx);
}
static int feed(void *p, const char *buf, size_t len) {
    return mh_lackey_feed(p, buf, len);
}
static int finish(void *p) { return mh_lackey_finish(p); }
static const char *error(const void *p) { return mh_lackey_error(p); }
static uint64_t accesses(const void *p) { return mh_lackey_accesses(p); }
static uint64_t lines(const void *p) { return mh_lackey_lines(p); }
static void destroy(void *p) { mh_lackey_free(p); }

static const fuzz_import_ops ops = {"lackey", create,   feed,   finish,
                                    error,    accesses, lines,  destroy};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_import_run(&ops, MH_IMPORT_EXEC, data, size);

    /* With MH_IMPORT_EXEC, removing the execute accesses gives the parse
     * without it: an I line only adds its own access. */
    fuzz_parse plain, exec;
    fuzz_import_parse(&ops, 0, data, size, NULL, 0, SIZE_MAX, &plain);
    fuzz_import_parse(&ops, MH_IMPORT_EXEC, data, size, NULL, 0, SIZE_MAX,
                      &exec);
    FUZZ_ASSERT_MSG(plain.rc == exec.rc, "MH_IMPORT_EXEC changes the outcome");
    /* after an error each parse has handed over only its full batches, so
     * only a common prefix is comparable */
    size_t k = 0;
    for (size_t i = 0; i < exec.n; i++) {
        if (exec.v[i].op == MH_OP_EXEC)
            continue;
        if (plain.rc != 0 && k == plain.n)
            break;
        FUZZ_ASSERT_MSG(k < plain.n, "MH_IMPORT_EXEC adds a data access");
        FUZZ_ASSERT(exec.v[i].transition == plain.v[k].transition &&
                    exec.v[i].physical == plain.v[k].physical &&
                    exec.v[i].size == plain.v[k].size &&
                    exec.v[i].op == plain.v[k].op);
        k++;
    }
    for (size_t i = 0; i < plain.n; i++)
        FUZZ_ASSERT_MSG(plain.v[i].op != MH_OP_EXEC,
                        "an execute access without MH_IMPORT_EXEC");
    if (plain.rc == 0)
        FUZZ_ASSERT_MSG(k == plain.n, "MH_IMPORT_EXEC loses data accesses");
    fuzz_parse_free(&plain);
    fuzz_parse_free(&exec);
    return 0;
}
