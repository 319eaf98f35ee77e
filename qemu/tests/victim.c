/*
 * victim.c - the program the QEMU engine tests record (qemu/tests/README.md).
 * Built without PIE so its globals sit at the same addresses under qemu and
 * under valgrind. Each mode prints the addresses the test looks for on
 * stdout, one "name 0xADDR" per line, before doing it.
 *
 *   global V     writes mh_target = V once, exits 0
 *   exit N       some work, exits N
 *   segv         writes mh_target = 0x5e9f, then dies of SIGSEGV
 *   threads N    N threads: thread i writes mh_slots[i] = i + 1 once, then
 *                adds to mh_shared[(7i + r) % 256] for r = 0 .. 1999 under
 *                a mutex; exits 0 (also prints text/etext: its code)
 *   fork         the child writes mh_child, the parent mh_target after the
 *                child ended
 *   spin         writes mh_target, prints "ready", then loops until killed
 *   work N       N rounds of 1/2/4/8-byte loads and stores on mh_arena
 *                (the lackey comparison), exits 0
 *   exec         writes mh_target, then execs /bin/true
 *   kill9 N      work N, writes mh_target, then SIGKILLs itself (qemu
 *                dies at once: no callback of the plugin runs)
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char __executable_start[], etext[]; /* GNU ld: start and end of the code */
volatile uint64_t mh_target;
volatile uint64_t mh_child;
volatile uint64_t mh_slots[64];
volatile uint64_t mh_shared[256];
volatile unsigned char mh_arena[4096];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *name, const volatile void *p) {
    printf("%s %p\n", name, (const void *)p);
    fflush(stdout);
}

static void *thread_main(void *arg) {
    uintptr_t i = (uintptr_t)arg;
    mh_slots[i] = i + 1;
    for (int r = 0; r < 2000; r++) {
        pthread_mutex_lock(&lock);
        mh_shared[(i * 7 + (unsigned)r) % 256] += i;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void work(long rounds) {
    for (long r = 0; r < rounds; r++) {
        for (unsigned i = 0; i < 512; i++) {
            volatile uint8_t *b = &mh_arena[i];
            *b = (uint8_t)(*b + r);
            volatile uint16_t *h = (volatile uint16_t *)&mh_arena[1024 + 2 * (i % 256)];
            *h = (uint16_t)(*h ^ i);
            volatile uint32_t *w = (volatile uint32_t *)&mh_arena[2048 + 4 * (i % 128)];
            *w = *w + (uint32_t)i;
            volatile uint64_t *q = (volatile uint64_t *)&mh_arena[3072 + 8 * (i % 128)];
            *q = *q * 3 + 1;
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: victim MODE [N]\n");
        return 2;
    }
    const char *mode = argv[1];
    long n = argc > 2 ? strtol(argv[2], NULL, 0) : 0;
    say("target", &mh_target);
    if (strcmp(mode, "global") == 0) {
        work(1);
        mh_target = (uint64_t)n;
        work(1);
        return 0;
    }
    if (strcmp(mode, "exit") == 0) {
        work(1);
        return (int)n;
    }
    if (strcmp(mode, "segv") == 0) {
        work(1);
        mh_target = 0x5e9f;
        *(volatile int *)(uintptr_t)n = 1;
        return 0;
    }
    if (strcmp(mode, "threads") == 0) {
        say("slots", mh_slots);
        say("shared", mh_shared);
        /* the program's code (non-PIE: where GNU ld put it) */
        say("text", __executable_start);
        say("etext", etext);
        pthread_t t[64];
        if (n < 1 || n > 64)
            return 2;
        for (long i = 0; i < n; i++)
            pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)i);
        for (long i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    if (strcmp(mode, "fork") == 0) {
        say("child", &mh_child);
        pid_t pid = fork();
        if (pid == 0) {
            mh_child = 1;
            work(2);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        mh_target = 2;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    if (strcmp(mode, "spin") == 0) {
        mh_target = 1;
        say("ready", &mh_target);
        for (;;)
            work(1);
    }
    if (strcmp(mode, "work") == 0) {
        say("arena", mh_arena);
        work(n);
        return 0;
    }
    if (strcmp(mode, "kill9") == 0) {
        say("arena", mh_arena);
        work(n);
        mh_target = 9;
        kill(getpid(), SIGKILL);
        return 1;
    }
    if (strcmp(mode, "exec") == 0) {
        mh_target = 3;
        execl("/bin/true", "true", (char *)NULL);
        return 1;
    }
    fprintf(stderr, "victim: unknown mode %s\n", mode);
    return 2;
}
