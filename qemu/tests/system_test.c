/*
 * system_test.c - `memhist record --engine qemu-system` end to end: boots
 * Debian's kernel under TCG with the initramfs the engine builds, runs
 * guest_prog (guest_prog.c, static) inside, and checks the store:
 *   - the command exits 0 and passes the program's stdout and exit status
 *     (exit 7) through; metadata says engine qemu-system and how many I/O
 *     accesses were skipped;
 *   - the store verifies clean;
 *   - user-space accesses have physical != linear, kernel accesses are
 *     there too; every physical address is in the 512 MiB of RAM (I/O
 *     accesses are skipped);
 *   - the page guest_prog wrote (it prints its virtual and, from
 *     /proc/self/pagemap, its physical address): a query on the physical
 *     page finds exactly its 512 8-byte stores, in order, at linear =
 *     virtual address, and matches the brute-force oracle (tu_check_query);
 *     the kernel writes the same physical page through another linear
 *     address (its direct map, zeroing the page at the first fault).
 *   test_qemu_system MEMHIST GUEST_PROG
 * Skips (77) when qemu-system-x86_64, a static busybox or a kernel is
 * missing (tools/scripts/deps.sh installs them).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "engine_qemu_initramfs.h"
#include "testutil.h"

#define USER_TOP 0x0000800000000000ull
#define KERNEL_BOTTOM 0xffff800000000000ull

static int have_kernel(void) {
    const char *env = getenv("MEMHIST_KERNEL");
    if (env && *env)
        return access(env, R_OK) == 0;
    if (access("/var/cache/memhist/vmlinuz", R_OK) == 0)
        return 1;
    /* the engine also takes /boot/vmlinuz-*; so does this check */
    return system("ls /boot/vmlinuz-* >/dev/null 2>&1") == 0;
}

static uint64_t value_of(const char *out, const char *key) {
    const char *p = strstr(out, key);
    CHECKF(p != NULL, "guest_prog did not print '%s': [%s]", key, out);
    return strtoull(p + strlen(key), NULL, 0);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_qemu_system MEMHIST GUEST_PROG\n");
        return 2;
    }
    char *qemu = engine_find_in_path("qemu-system-x86_64"), *bb = engine_find_in_path("busybox");
    if (qemu == NULL || bb == NULL || mhq_elf_static(bb) != 1 || !have_kernel()) {
        printf("SKIP: needs qemu-system-x86_64, busybox-static and a kernel "
               "(tools/scripts/deps.sh)\n");
        return 77;
    }
    free(qemu);
    free(bb);
    CHECK(mhq_elf_static(argv[2]) == 1);

    char dir[512], store[600], outp[600], cmd[4096];
    tu_mkdtemp(dir, sizeof dir, "qemu-system");
    tu_join(store, sizeof store, dir, "s.store");
    tu_join(outp, sizeof outp, dir, "stdout.txt");
    snprintf(cmd, sizeof cmd,
             "'%s' record --engine qemu-system -q -o '%s' -- '%s' > '%s' < /dev/null", argv[1],
             store, argv[2], outp);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = system(cmd);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "record failed: status %d", st);
    size_t len = 0;
    char *out = (char *)tu_read_file(outp, &len);
    CHECK(out != NULL);
    char *text = calloc(1, len + 1);
    CHECK(text != NULL);
    memcpy(text, out, len);
    free(out);
    uint64_t page = value_of(text, "page "), phys = value_of(text, "phys ");
    uint64_t writes = value_of(text, "writes ");
    CHECKF(page % 4096 == 0 && page != 0 && phys % 4096 == 0 && phys != 0 && writes == 512,
           "guest_prog said: [%s]", text);
    /* the program's output lines arrive as they were written: no \r */
    CHECKF(strchr(text, '\r') == NULL, "carriage returns in the guest's output: [%s]", text);

    mh_verify_result vr = {.struct_size = sizeof vr};
    CHECK_OK(mh_verify(store, 0, NULL, NULL, &vr));
    CHECK(vr.problems == 0);

    mh_reader *r;
    CHECK_OK(mh_reader_open(store, &r));
    const char *m = mh_reader_meta_find(r, "engine");
    CHECK(m != NULL && strcmp(m, "qemu-system") == 0);
    m = mh_reader_meta_find(r, "exit_status");
    CHECKF(m != NULL && strcmp(m, "exit 7") == 0, "exit_status %s", m ? m : "(none)");
    CHECK(mh_reader_meta_find(r, "qemu_io_accesses_skipped") != NULL);
    CHECK(mh_reader_meta_find(r, "qemu_instructions") != NULL);
    m = mh_reader_meta_find(r, "qemu_system_kernel_version");
    CHECKF(m != NULL && m[0] >= '1' && m[0] <= '9' && strchr(m, '.') != NULL,
           "kernel version '%s'", m ? m : "(none)"); /* "6.1.0-56-amd64 (...) #1 SMP ..." */

    mh_stats stats = {.struct_size = sizeof stats};
    CHECK_OK(mh_reader_stats(r, &stats));
    size_t n = (size_t)stats.accesses;
    CHECK(n > 10000);
    mh_access *all = malloc(n * sizeof *all);
    CHECK(all != NULL);
    mh_query q;
    mh_query_init(&q);
    q.ops = MH_OPS_ALL;
    size_t got = 0;
    CHECK_OK(mh_query_run(r, &q, all, n, &got));
    CHECK(got == n);

    uint64_t user = 0, user_same = 0, kernel = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(all[i].has_linear == 1);
        /* RAM is 512 MiB at physical 0: a device register (the local APIC
         * at 0xfee00000, the HPET...) would be an I/O access not skipped */
        CHECKF(all[i].physical + all[i].size <= (512ull << 20),
               "access %zu at physical 0x%" PRIx64 " beyond RAM", i, all[i].physical);
        if (all[i].linear < USER_TOP) {
            user++;
            user_same += all[i].linear == all[i].physical;
        } else if (all[i].linear >= KERNEL_BOTTOM) {
            kernel++;
        }
    }
    /* A user page may by chance sit at the physical address equal to its
     * virtual one; paging makes that rare, never the rule. */
    CHECKF(user > 1000 && user_same * 100 < user, "user %" PRIu64 ", physical == linear %" PRIu64,
           user, user_same);
    CHECK(kernel > 1000);

    /* The written page, by its physical address. */
    mh_query pq;
    mh_query_init(&pq);
    pq.ops = MH_OPS_WRITE;
    pq.addr_first = phys;
    pq.addr_last = phys + 4095;
    size_t nw = tu_check_query(r, all, n, &pq, n);
    mh_access *hits = malloc((nw ? nw : 1) * sizeof *hits);
    CHECK(hits != NULL);
    CHECK_OK(mh_query_run(r, &pq, hits, nw, &got));
    CHECK(got == nw);
    uint64_t mine = 0, other = 0, last_t = 0;
    for (size_t i = 0; i < got; i++) {
        if (hits[i].linear >= page && hits[i].linear < page + 4096) {
            CHECKF(hits[i].linear == page + 8 * mine && hits[i].size == 8 &&
                       hits[i].physical == phys + 8 * mine && hits[i].transition > last_t,
                   "store %" PRIu64 ": linear 0x%" PRIx64 " physical 0x%" PRIx64 " size %u",
                   mine, hits[i].linear, hits[i].physical, hits[i].size);
            last_t = hits[i].transition;
            mine++;
        } else if (hits[i].linear >= KERNEL_BOTTOM) {
            other++; /* the kernel's direct map: zeroing the page at the fault */
        }
        /* else an earlier owner of the frame (another process) */
    }
    CHECKF(mine == writes, "%" PRIu64 " of the %" PRIu64 " stores found", mine, writes);
    CHECK(other > 0);
    /* the same page by its virtual address reaches no other physical page */
    uint64_t via_linear = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].linear >= page && all[i].linear < page + 4096 && all[i].op == MH_OP_WRITE) {
            CHECK(all[i].physical >= phys && all[i].physical < phys + 4096);
            via_linear++;
        }
    CHECK(via_linear == writes);

    printf("qemu-system: %zu accesses (%" PRIu64 " user, %" PRIu64 " kernel), page 0x%" PRIx64
           " at physical 0x%" PRIx64 ": %" PRIu64 " stores of the program, %" PRIu64
           " of the kernel; boot + record %.1f s\n",
           n, user, kernel, page, phys, mine, other, secs);
    free(hits);
    free(all);
    free(text);
    mh_reader_close(r);
    tu_rmtree(dir);
    printf("ok\n");
    return 0;
}
