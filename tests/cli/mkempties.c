/* mkempties STORE N E1 [E2 ...]: a new store of N segments of 400 accesses
 * each (commits of their own), with a segment holding no access (a
 * metadata commit) in place of seq E1, E2, ... (the test helper of the
 * cli case fsck_stale_span: stores with empty segments cannot be made
 * through the tool). Exit 0, or 1 with the library's error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memhist.h"

static int fail(const char *what, int rc) {
    fprintf(stderr, "mkempties: %s: %s\n", what, mh_strerror(rc));
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: mkempties STORE N [EMPTY_SEQ ...]\n");
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.commit_accesses = 0;
    o.background = 0;
    mh_writer *w;
    int rc = mh_writer_open(argv[1], MH_CREATE, &o, &w);
    if (rc != MH_OK)
        return fail("open", rc);
    uint64_t t = 0;
    for (long s = 0, seq = 0; s < n; seq++) {
        int empty = 0;
        for (int i = 3; i < argc; i++)
            empty |= strtol(argv[i], NULL, 10) == seq;
        if (empty) {
            char v[32];
            snprintf(v, sizeof v, "%ld", seq);
            if ((rc = mh_writer_set_meta(w, "empty", v)) != MH_OK)
                return fail("metadata", rc);
        } else {
            for (int i = 0; i < 400; i++, t++) {
                mh_access a;
                memset(&a, 0, sizeof a);
                a.transition = t;
                a.physical = 0x100000 * (uint64_t)(s + 1) + (uint64_t)(i % 50) * 8;
                a.size = 8;
                a.op = i % 4 ? MH_OP_READ : MH_OP_WRITE;
                if ((rc = mh_writer_append(w, &a)) != MH_OK)
                    return fail("append", rc);
            }
            s++;
        }
        if ((rc = mh_writer_commit(w)) != MH_OK)
            return fail("commit", rc);
    }
    rc = mh_writer_close(w);
    return rc == MH_OK ? 0 : fail("close", rc);
}
