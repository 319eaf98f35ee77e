# On a terminal (a pty made by python3), record shows its progress line
# (accesses, rate, elapsed) and never mixes it into the program's output:
# rendered as a terminal would, every line of the program stands alone,
# also one it writes in two pieces with work in between; the progress line
# is gone at the end and the summary follows on a clean line. --quiet shows
# none; without a terminal there is no progress, no '\r'.
# (valgrind: the program runs for seconds, so the progress line is drawn
# whatever the load; under qemu it can end before the first draw.)
need valgrind cc python3

cat > printer.c <<'C'
#include <stdio.h>
static volatile unsigned long sink;
static void work(void) {
    for (unsigned long i = 0; i < 150000; i++)
        sink += i;
}
int main(void) {
    for (int k = 0; k < 3; k++) {
        work();
        printf("line %d\n", k);
        fflush(stdout);
    }
    fprintf(stderr, "partial-");
    work();
    fprintf(stderr, "done\n");
    return 0;
}
C
cc -O1 -o printer printer.c

cat > drive.py <<'PY'
import os, pty, re, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
raw = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    raw += d
_, st = os.waitpid(pid, 0)
text = raw.decode("utf-8", "replace")
# render: \r to column 0, ESC[K erases to the end of the line, \n ends it
lines, cur, col, i = [], [], 0, 0
while i < len(text):
    if text.startswith("\x1b[K", i):
        del cur[col:]
        i += 3
        continue
    ch = text[i]
    i += 1
    if ch == "\r":
        col = 0
    elif ch == "\n":
        lines.append("".join(cur))
        cur, col = [], 0
    else:
        if col < len(cur):
            cur[col] = ch
        else:
            cur.append(ch)
        col += 1
tail = "".join(cur)
progress = re.search(r"memhist record: \d+ accesses, [0-9.]+ M/s, [0-9.]+ s", text) is not None
print("exit", os.waitstatus_to_exitcode(st))
print("progress shown:", "yes" if progress else "no")
for want in ["line 0", "line 1", "line 2", "partial-done"]:
    print(want, "alone:", "yes" if want in lines else "no")
print("mixed lines:", sum(1 for l in lines if "M/s" in l))
between = text[text.find("partial-"):text.find("done")]
print("progress inside the unfinished line:", "yes" if "M/s" in between else "no")
summary = [l for l in lines if l.startswith("memhist record: ") and "recorded into" in l]
print("summary on its own line:", "yes" if len(summary) == 1 and lines[-1] == summary[0] else "no")
print("left on the last line:", repr(tail))
PY

python3 drive.py "$MEMHIST" record --engine valgrind -o s -- ./printer
python3 drive.py "$MEMHIST" record --engine valgrind -q -o q -- ./printer | grep "progress shown"
memhist record --engine valgrind -o n -- ./printer > out 2> err
cat out
grep -c $'\r' err || true
grep -c 'M/s' err || true
