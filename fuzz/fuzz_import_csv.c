/*
 * fuzz_import_csv.c - the CSV parser (tools/import_csv.c): whole vs pieces
 * (fuzz_import_common.c), and a clean parse written back as CSV and parsed
 * again gives the same accesses.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_helpers.h"
#include "fuzz_import_common.h"

static void *create(unsigned flags, mh_import_sink_fn fn, void *ctx) {
    return mh_csv_new(flags, fn, ctx);
}
static int feed(void *p, const char *buf, size_t len) {
    return mh_csv_feed(p, buf, len);
}
static int finish(void *p) { return mh_csv_finish(p); }
static const char *error(const void *p) { return mh_csv_error(p); }
static uint64_t accesses(const void *p) { return mh_csv_accesses(p); }
static uint64_t lines(const void *p) { return mh_csv_lines(p); }
static void destroy(void *p) { mh_csv_free(p); }

static const fuzz_import_ops ops = {"csv", create,   feed,  finish,
                                    error, accesses, lines, destroy};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_import_run(&ops, 0, data, size);

    fuzz_parse first;
    fuzz_import_parse(&ops, 0, data, size, NULL, 0, SIZE_MAX, &first);
    if (first.rc == 0) {
        /* print in the canonical form (decimal and hex alternate) and
         * parse again */
        static const char opc[] = {'r', 'w', 'x'};
        size_t cap = 64 + first.n * 96, len = 0;
        char *text = fuzz_malloc(cap);
        len += (size_t)snprintf(text, cap, "%s\n", MH_CSV_HEADER);
        for (size_t i = 0; i < first.n; i++) {
            const mh_access *a = &first.v[i];
            char lin[32] = "";
            if (a->has_linear)
                snprintf(lin, sizeof lin, "0x%" PRIx64, a->linear);
            len += (size_t)snprintf(text + len, cap - len,
                                    i % 2 ? "%" PRIu64 ",%s,%" PRIu64 ",%" PRIu32 ",%c\n"
                                          : "0x%" PRIx64 ",%s,0X%" PRIX64 ",0x%" PRIx32 ",%c\n",
                                    a->transition, lin, a->physical, a->size,
                                    opc[a->op]);
            FUZZ_ASSERT(len < cap);
        }
        fuzz_parse again;
        fuzz_import_parse(&ops, 0, (const uint8_t *)text, len, NULL, 0,
                          SIZE_MAX, &again);
        FUZZ_OK(again.rc);
        FUZZ_ASSERT(again.n == first.n);
        for (size_t i = 0; i < first.n; i++) {
            const mh_access *a = &first.v[i], *b = &again.v[i];
            FUZZ_ASSERT(a->transition == b->transition &&
                        a->physical == b->physical && a->size == b->size &&
                        a->op == b->op && a->has_linear == b->has_linear &&
                        (!a->has_linear || a->linear == b->linear));
        }
        fuzz_parse_free(&again);
        free(text);
    }
    fuzz_parse_free(&first);
    return 0;
}
