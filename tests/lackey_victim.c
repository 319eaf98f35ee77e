/*
 * lackey_victim.c - a small real program for the oracle test to record with
 * valgrind lackey: it fills and copies buffers, walks a heap list and
 * recurses, so its trace has stack, heap, streaming and copy traffic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    unsigned value;
};

static unsigned depth_sum(unsigned d, volatile unsigned *acc) {
    unsigned local[4] = {d, d * 3, d ^ 5, d + 7};
    *acc += local[d & 3];
    return d == 0 ? local[1] : local[2] + depth_sum(d - 1, acc);
}

int main(void) {
    enum { N = 4096 };
    unsigned char *a = malloc(N), *b = malloc(N);
    struct node *head = NULL;
    volatile unsigned acc = 0;
    if (!a || !b)
        return 1;
    for (unsigned round = 0; round < 8; round++) {
        for (unsigned i = 0; i < N; i++)
            a[i] = (unsigned char)(i * 31u + round);
        memcpy(b, a, N);
        for (unsigned i = 0; i < N; i += 64)
            acc += b[i];
        struct node *n = malloc(sizeof *n);
        if (!n)
            return 1;
        n->next = head;
        n->value = round;
        head = n;
        acc += depth_sum(20 + round, &acc);
    }
    for (struct node *n = head; n; n = n->next)
        acc += n->value;
    while (head) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
    free(a);
    free(b);
    printf("%u\n", (unsigned)acc);
    return 0;
}
