# Ctrl-C typed on the terminal (a pty made by python3: the terminal sends
# SIGINT to memhist and the traced program together): exit 130, the
# interrupted line on a clean line (the progress line erased first), the
# store clean with the count printed.
need valgrind cc python3

cc -O1 -o spin "$MH_CLI_DATA/spin.c"

cat > ctrlc.py <<'PY'
import os, pty, re, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
raw, sent = b"", False
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    raw += d
    if not sent and b"ready" in raw:
        os.write(fd, b"\x03")  # the terminal's INTR character
        sent = True
_, st = os.waitpid(pid, 0)
text = raw.decode("utf-8", "replace")
print("exit", os.waitstatus_to_exitcode(st))
m = re.search(r"\r\x1b\[Kmemhist record: interrupted: (\d+) accesses committed\r?\n$", text)
print("message on a clean line:", "yes" if m else "no: %r" % text[-200:])
open("n", "w").write(m.group(1) if m else "")
PY

python3 ctrlc.py "$MEMHIST" record -o s -- ./spin
memhist fsck -q s
[ "$(cat n)" = "$(memhist inspect s | awk '/^accesses:/ {print $2}')" ] && echo "count = N"
