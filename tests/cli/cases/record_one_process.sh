# One process, one history: valgrind options that would trace a forked
# child (--child-silent-after-fork=no) or exec'd programs
# (--trace-children=yes) into the same trace are overridden. The child
# writes 40960 times to a buffer the parent never touches: none of those
# writes is in the store.
need valgrind cc

cat > forker.c <<'C'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned char childbuf[4096];
int main(void) {
    printf("%lx\n", (unsigned long)childbuf);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        for (int k = 0; k < 10; k++)
            for (int i = 0; i < 4096; i++)
                childbuf[i] = (unsigned char)i;
        _exit(0);
    }
    waitpid(p, NULL, 0);
    return 0;
}
C
cc -O0 -o forker forker.c

VALGRIND_OPTS="--trace-children=yes --child-silent-after-fork=no" \
    memhist record -q -o s -- ./forker > addr
a=$((0x$(cat addr)))
b=$((a + 4095))
echo "child's writes in the store: $(memhist query s --from 0 --addr $a:$b --op w --all --format csv | tail -n +2 | wc -l)"
memhist fsck -q s
