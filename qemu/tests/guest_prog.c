/*
 * guest_prog.c - the program the full-system test runs inside the guest
 * (statically linked: the guest has only busybox). It writes one known
 * page and says where it is:
 *   page 0xVIRTUAL       its virtual address (page-aligned)
 *   phys 0xPHYSICAL      its physical address, from /proc/self/pagemap
 *   writes N             the 8-byte stores it made to the page
 * then exits with status 7 (the test checks the status comes back).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define PAGE 4096
#define WORDS (PAGE / 8)

static _Alignas(PAGE) volatile uint64_t page[WORDS];

int main(void) {
    /* Each word once, in order: the test expects exactly these stores. */
    for (unsigned i = 0; i < WORDS; i++)
        page[i] = 0x6d656d6869737400ull + i;
    uint64_t va = (uint64_t)(uintptr_t)page, entry = 0, pa = 0;
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd >= 0 && pread(fd, &entry, 8, (off_t)(va / PAGE * 8)) == 8 && (entry >> 63) & 1)
        pa = (entry & ((1ull << 55) - 1)) * PAGE;
    if (fd >= 0)
        close(fd);
    printf("page 0x%" PRIx64 "\nphys 0x%" PRIx64 "\nwrites %u\n", va, pa, WORDS);
    return 7;
}
