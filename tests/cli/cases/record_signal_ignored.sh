# A program that ignores SIGTERM: record forwards the signal, waits 5 s,
# then SIGKILLs it. The trace then ends without valgrind's summary, maybe
# inside a transition (that last transition is discarded). Exit 143, the
# message's count is the store's, the store is clean, the program's end is
# saved as signal 9.
need valgrind cc

cc -O1 -o spin "$MH_CLI_DATA/spin.c"

"$MEMHIST" record -o s -- ./spin --ignore-term > out 2> err &
pid=$!
until grep -q ready out 2>/dev/null; do sleep 0.1; done
kill -s TERM "$pid"
rc=0
wait "$pid" || rc=$?
echo "exit $rc"
n=$(sed -n 's/^memhist record: interrupted: \([0-9]*\) accesses committed$/\1/p' err)
count=$(memhist inspect s | awk '/^accesses:/ {print $2}')
[ -n "$n" ] && [ "$n" = "$count" ] && echo "count = N"
memhist fsck -q s
memhist inspect s | grep -E '^  (exit_status|interrupted) '
