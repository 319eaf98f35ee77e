# A program that fails: memhist succeeds, the store is valid and says how
# the program ended.
need valgrind cc

cat > victim.c <<'C'
#include <stdio.h>
static volatile unsigned char buf[64];
int main(int argc, char **argv) {
    for (int i = 0; i < 64; i++)
        buf[i] = (unsigned char)i;
    printf("%lx\n", (unsigned long)buf);
    return argc > 1 ? 3 : 0;
}
C
cc -O0 -o victim victim.c

memhist record -q -o s --exec -- ./victim "fail now" > /dev/null
memhist inspect s | grep -E '^  (exit_status|command_line|exec) '
memhist query s --from 0 --op x --max 1 --format csv | tail -n +2 | cut -d, -f6
memhist fsck -q s
