/*
 * store_lackey.c - mh_store_lackey STORE OUT: writes a store's read and
 * write accesses as a valgrind lackey log, so that an mh_bench that has no
 * --store (the 1.x benchmark, compare_versions.sh's base build) runs the
 * same accesses as mh_bench --store.
 *
 * What survives the trip through lackey's grammar (tools/import.h): order,
 * physical = linear address, size, read/write, and each access's pc (the
 * address of the I line before it, when the access has one). Transitions
 * do not survive as numbers: lackey's transition is the count of I lines,
 * and a qemu store's transitions span several times its accesses, which
 * would be gigabytes of I lines; so the k-th distinct transition of the
 * store becomes transition k (one I line each). Order, ties and every
 * query drawn from the trace are the same; the absolute values are not.
 * Accesses whose linear address is absent or differs from the physical
 * one, and execute accesses, cannot be written: they are counted, skipped
 * and reported (exit 1 if any, the log is then not the same workload).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memhist.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mh_store_lackey STORE OUT.lackey\n");
        return 2;
    }
    mh_reader *r = NULL;
    char err[MH_ERRMSG_MAX] = "";
    int rc = mh_reader_open_ex(argv[1], NULL, &r, err, sizeof err);
    if (rc != MH_OK) {
        fprintf(stderr, "mh_store_lackey: %s: %s: %s\n", argv[1], mh_strerror(rc), err);
        return 1;
    }
    FILE *f = fopen(argv[2], "w");
    if (f == NULL) {
        fprintf(stderr, "mh_store_lackey: %s: %s\n", argv[2], strerror(errno));
        mh_reader_close(r);
        return 1;
    }
    static char fbuf[1 << 20];
    setvbuf(f, fbuf, _IOFBF, sizeof fbuf);
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    q.addr_last = UINT64_MAX;
    mh_cursor *c = NULL;
    rc = mh_cursor_open(r, &q, &c);
    mh_access *a = malloc(65536 * sizeof *a);
    if (a == NULL)
        rc = MH_ENOMEM;
    uint64_t n = 0, skipped = 0, ilines = 0, last_t = 0, pc = 0x400000;
    int any = 0;
    while (rc == MH_OK) {
        size_t k = 0;
        rc = mh_cursor_next(c, a, 65536, &k);
        if (rc != MH_OK || k == 0)
            break;
        for (size_t i = 0; i < k; i++) {
            const mh_access *x = &a[i];
            if (x->op == MH_OP_EXEC || !x->has_linear || x->linear != x->physical) {
                skipped++;
                continue;
            }
            if (!any || x->transition != last_t || (x->has_pc && x->pc != pc)) {
                /* a new transition, or the same one with another pc (lackey
                 * gives one pc per I line, a store one per access): the
                 * next I line. A transition is one instruction in a
                 * recording, so the second case is a synthetic trace's. */
                if (x->has_pc)
                    pc = x->pc;
                fprintf(f, "I  %08" PRIx64 ",1\n", pc);
                ilines++;
                last_t = x->transition;
                any = 1;
            }
            fprintf(f, " %c %08" PRIx64 ",%u\n", x->op == MH_OP_WRITE ? 'S' : 'L',
                    x->physical, x->size);
            n++;
        }
    }
    if (rc != MH_OK) {
        char msg[MH_ERRMSG_MAX] = "";
        if (c)
            mh_cursor_errmsg(c, msg, sizeof msg);
        fprintf(stderr, "mh_store_lackey: %s: %s: %s\n", argv[1], mh_strerror(rc), msg);
    }
    mh_cursor_close(c);
    mh_reader_close(r);
    free(a);
    if (fclose(f) != 0 && rc == MH_OK) {
        fprintf(stderr, "mh_store_lackey: %s: %s\n", argv[2], strerror(errno));
        rc = MH_EIO;
    }
    fprintf(stderr, "mh_store_lackey: %" PRIu64 " accesses, %" PRIu64 " I lines, %" PRIu64
                    " skipped\n",
            n, ilines, skipped);
    return rc != MH_OK || skipped ? 1 : 0;
}
