# SIGINT, SIGTERM and SIGHUP to `memhist import` in the middle of a big
# trace (a generator that never ends, through a pipe, in CSV and lackey
# format): the accesses read are committed but for the last transition,
# the exit status is 128 + N, the message's count is the store's, the store
# is fsck clean and answers queries.
need python3

cat > gen.py <<'PY'
import sys
fmt = sys.argv[1]
out = sys.stdout
if fmt == "csv":
    out.write("transition,linear,physical,size,op\n")
i = 0
try:
    while True:
        lines = []
        for _ in range(1000):
            t = i // 3
            if fmt == "csv":
                lines.append("%d,,%d,8,%s\n" % (t, 4096 + (i * 8) % 65536, "rw"[i % 2]))
            else:
                if i % 3 == 0:
                    lines.append("I  %08x,4\n" % (0x400000 + (t % 100) * 4))
                lines.append(" %s %08x,8\n" % ("LS"[i % 2], 4096 + (i * 8) % 65536))
            i += 1
        out.write("".join(lines))
        out.flush()
except BrokenPipeError:
    pass
PY

# Imports format $2 into store $1 until 2 commits were reported, then
# sends signal $3 and prints what happened.
import_and_signal() {
    local store=$1 fmt=$2 sig=$3 pid rc=0 n count
    python3 gen.py "$fmt" 2>/dev/null |
        "$MEMHIST" import --report-commits --commit-every 100000 -f "$fmt" - "$store" \
            > "$store.out" 2> "$store.err" &
    pid=$! # memhist: the last command of the pipeline
    until [ "$(grep -c committed "$store.out" 2>/dev/null)" -ge 2 ]; do sleep 0.1; done
    kill -s "$sig" "$pid"
    wait "$pid" || rc=$?
    n=$(sed -n 's/^memhist import: interrupted: \([0-9]*\) accesses committed$/\1/p' "$store.err")
    count=$(memhist inspect "$store" | awk '/^accesses:/ {print $2}')
    memhist fsck -q "$store"
    echo "$fmt $sig: exit $rc, message $([ -n "$n" ] && echo yes || echo no)," \
         "store count $([ "$n" = "$count" ] && echo "= N" || echo "$count != '$n'")," \
         "N >= 200000 $([ "${n:-0}" -ge 200000 ] && echo yes || echo no)," \
         "last reported = N $([ "$(tail -n 1 "$store.out")" = "committed $n" ] && echo yes || echo no)," \
         "query rows $(memhist query "$store" --from 0 --max 3 --op rw --format csv | tail -n +2 | wc -l)"
}

import_and_signal c_int csv INT
import_and_signal c_term csv TERM
import_and_signal c_hup csv HUP
import_and_signal l_int lackey INT
import_and_signal l_term lackey TERM
import_and_signal l_hup lackey HUP
