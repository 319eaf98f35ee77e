/* The long-running program of the record signal tests: some work, then
 * "ready" on stdout, then an endless loop. With --ignore-term it ignores
 * SIGTERM (record must then SIGKILL it after its grace period). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
static volatile unsigned long counter;
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--ignore-term") == 0)
        signal(SIGTERM, SIG_IGN);
    for (unsigned long i = 0; i < 200000; i++)
        counter += i;
    printf("ready\n");
    fflush(stdout);
    for (;;)
        counter++;
}
