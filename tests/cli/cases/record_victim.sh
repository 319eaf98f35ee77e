# Record a small real program with each engine; its 64 byte-wide writes to
# buf are all there, and the last write to buf is to its last byte.
need valgrind qemu-x86_64 cc

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

for engine in valgrind qemu; do
    rm -rf s
    memhist record -q --engine "$engine" -o s -- ./victim > addr
    echo "engine $engine"
    a=$((0x$(cat addr)))
    b=$((a + 63))
    memhist query s --from 0 --addr $a:$b --op w --all --format csv | tail -n +2 | wc -l
    memhist query s --from 0 --addr $a:$b --op r --all --format csv | tail -n +2 | wc -l
    last=$(memhist query s --from 18446744073709551615 --backward --addr $a:$b --op w --max 1 --format csv | tail -n 1)
    echo "$last" | awk -F, -v want=$b '{print ($4 == want && $5 == 1) ? "last byte" : "wrong: " $0}'
    memhist inspect s | grep -E '^  (tracer|exit_status|command_line|exec) '
    memhist inspect s | grep -qE '^  tracer_version = (valgrind-)?[0-9]' && echo version ok
    memhist inspect s | grep -qE '^  pid = [0-9]+$' && echo pid ok
    memhist inspect s | grep -qE '^  start_time = 20[0-9-]+T[0-9:]+Z$' && echo time ok
    memhist inspect s | grep -qE '^  architecture = .+' && echo arch ok
    memhist fsck -q s
done
