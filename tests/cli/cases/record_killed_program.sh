# A program killed by SIGKILL in the middle: the store keeps what was
# traced and records the signal.
need valgrind
memhist record -q -o s -- /bin/sh -c 'kill -9 $$'
memhist inspect s | grep -E '^  exit_status '
memhist fsck -q s
memhist inspect s | awk '/^accesses:/ {print ($2 > 0) ? "traced" : "empty"}'
