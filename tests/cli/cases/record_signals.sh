# SIGINT, SIGTERM and SIGHUP to `memhist record` of a long-running real
# program (an endless loop, under each engine: valgrind and qemu): the signal is
# forwarded, what was traced is committed, the exit status is 128 + N, the
# message gives the count, which is the store's, and the store is clean and
# answers queries. Then two signals in a row: the first decides, the
# second does not harm the commit.
need valgrind qemu-x86_64 cc

cc -O1 -o spin "$MH_CLI_DATA/spin.c"

# Starts a recording with engine $ENGINE into store $1, waits until the program has run a
# while (it printed "ready"), sends the signals $2..., and prints the exit
# status and what the store says.
record_and_signal() {
    local store=$1 pid rc=0 n count
    shift
    # "$MEMHIST", not the memhist function: $! must be the pid of memhist
    "$MEMHIST" record --engine "$ENGINE" -o "$store" -- ./spin > "$store.out" 2> "$store.err" &
    pid=$!
    until grep -q ready "$store.out" 2>/dev/null; do sleep 0.1; done
    # A second signal goes 0.3 s after the first: two signals pending at
    # once are delivered lowest number first (SIGINT before SIGTERM), not
    # in the order they were sent, so only a gap makes "the first decides"
    # testable. The program may be gone by then.
    kill -s "$1" "$pid"
    if [ $# -gt 1 ]; then sleep 0.3; kill -s "$2" "$pid" 2>/dev/null || true; fi
    wait "$pid" || rc=$?
    n=$(sed -n 's/^memhist record: interrupted: \([0-9]*\) accesses committed$/\1/p' "$store.err")
    count=$(memhist inspect "$store" | awk '/^accesses:/ {print $2}')
    memhist fsck -q "$store"
    echo "$ENGINE $*: exit $rc, message $([ -n "$n" ] && echo yes || echo no)," \
         "store count $([ "$n" = "$count" ] && echo "= N" || echo "$count != '$n'")," \
         "N > 200000 $([ "${n:-0}" -gt 200000 ] && echo yes || echo no)," \
         "query rows $(memhist query "$store" --from 0 --max 3 --op rw --format csv | tail -n +2 | wc -l)," \
         "$(memhist inspect "$store" | grep -E '^  interrupted ')"
}

for ENGINE in valgrind qemu; do
    record_and_signal "$ENGINE-int" INT
    record_and_signal "$ENGINE-term" TERM
    record_and_signal "$ENGINE-hup" HUP
    record_and_signal "$ENGINE-twice" TERM INT
done
