/*
 * demo_victim.c - a small real program for the README's demo: it fills a
 * 64-byte buffer, checksums it, overwrites part of it, and saves the
 * buffer's address (as valgrind's guest sees it) in the file named by argv[1],
 * so the demo can ask "who last wrote this buffer before transition T?".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned checksum(const volatile unsigned char *p, size_t n) {
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31u + p[i];
    return s;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: demo_victim ADDRESS_FILE\n");
        return 2;
    }
    volatile unsigned char *buf = malloc(64);
    if (!buf)
        return 1;
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < 64; i++)
            buf[i] = (unsigned char)(i * 7u + (unsigned)round);
    unsigned before = checksum(buf, 64);
    buf[40] = 0xAB; /* the last write to the buffer */
    unsigned after = checksum(buf, 64);
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 1;
    fprintf(f, "0x%jx\n", (uintmax_t)(uintptr_t)buf);
    fclose(f);
    printf("checksums %08x %08x\n", before, after);
    free((void *)buf);
    return 0;
}
