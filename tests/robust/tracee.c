/*
 * tracee.c - the small program whose memory accesses the robustness tests
 * record with valgrind lackey: a seeded fill, an insertion sort (dense,
 * data-dependent reads and writes) and a checksum. The argument sets the
 * array length and so the size of the trace (quadratic in it). Built
 * without sanitizers so that valgrind can run it in every build.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 1)
        n = 1;
    unsigned *a = malloc((size_t)n * sizeof *a);
    if (a == NULL)
        return 1;
    unsigned s = 1;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = s >> 8;
    }
    for (int i = 1; i < n; i++) {
        unsigned v = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
    unsigned long sum = 0;
    for (int i = 0; i < n; i++)
        sum += a[i] * (unsigned long)i;
    printf("%lu\n", sum);
    free(a);
    return 0;
}
