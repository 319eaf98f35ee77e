# The valgrind engine stores each access's pc (the lackey I line before
# it): the 64 byte writes of the victim's loop are one store instruction,
# and querying by that pc finds exactly them.
need valgrind cc
cat > victim.c <<'C'
#include <stdio.h>
static volatile unsigned char buf[64];
int main(void) {
    for (int i = 0; i < 64; i++)
        buf[i] = (unsigned char)i;
    printf("%lx\n", (unsigned long)buf);
    return 0;
}
C
cc -O0 -o victim victim.c
memhist record -q --engine valgrind -o s -- ./victim > addr
a=$((0x$(cat addr)))
b=$((a + 63))
memhist query s --from 0 --addr $a:$b --op w --all --format csv | tail -n +2 > w.csv
wc -l < w.csv
cut -d, -f8 w.csv | sort -u > pcs
wc -l < pcs
grep -c '^$' pcs || true
pc=$(cat pcs)
memhist query s --from 0 --pc $pc:$pc --addr $a:$b --op rwx --all --format csv | tail -n +2 | cmp - w.csv && echo same
