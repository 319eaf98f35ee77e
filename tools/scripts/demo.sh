#!/usr/bin/env bash
# The memhist demo, from a clean checkout on Debian: installs what is
# missing, builds memhist, records a small real program with the fastest
# engine available (qemu-x86_64 with the memhist plugin, else valgrind's
# lackey tool), shows the store, and asks it questions a debugger author
# would ask ("who last wrote this buffer before the end?").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# MEMHIST_DEMO_CLI=PATH: that memhist, nothing installed or built (ctest's
# `demo` test); MEMHIST_DEMO_DIR: where the demo writes (build/demo).
if [ -n "${MEMHIST_DEMO_CLI:-}" ]; then
  mh=$MEMHIST_DEMO_CLI
else
  tools/scripts/deps.sh
  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build/release -j"$(nproc 2>/dev/null || echo 2)" --target memhist_cli >/dev/null
  mh=build/release/tools/memhist
fi
work=${MEMHIST_DEMO_DIR:-build/demo}
rm -rf "$work" && mkdir -p "$work"
cc -O1 -o "$work/demo_victim" tools/scripts/demo_victim.c

echo "== memhist record -o $work/demo.store -- $work/demo_victim $work/addr.txt"
"$mh" record --quiet -o "$work/demo.store" -- "$work/demo_victim" "$work/addr.txt"
buf=$(cat "$work/addr.txt")
end=$(( $(printf '%d' "$buf") + 63 ))
# the store's last transition: the first "transition_last" of the JSON (each
# stream has one too); awk reads all of it, so inspect never gets SIGPIPE
last=$("$mh" inspect "$work/demo.store" --json |
       awk -F'"transition_last": ' 'NF > 1 && last == "" { split($2, v, ","); last = v[1] }
                                     END { print last }')

echo; echo "== memhist inspect $work/demo.store"
"$mh" inspect "$work/demo.store"

echo; echo "== the last write to the 64-byte buffer at $buf before transition $last"
"$mh" query "$work/demo.store" --from "$last" --backward --addr "$buf:$end" --op w --max 1

b40=$(( $(printf '%d' "$buf") + 40 ))
echo; echo "== the last write to byte 40 of the buffer (buf[40] = 0xAB) before transition $last"
"$mh" query "$work/demo.store" --from "$last" --backward --addr "$b40:$b40" --op w --max 1

echo; echo "== the first 5 reads of byte 40 of the buffer, from the start"
"$mh" query "$work/demo.store" --from 0 --addr "$b40:$b40" --op r --max 5

echo; echo "== every write to the buffer, as csv (into $work/writes.csv; its first lines)"
# into a file, not a pipe into head: head would close the pipe early and,
# under pipefail, the query's SIGPIPE would end the demo
"$mh" query "$work/demo.store" --from 0 --addr "$buf:$end" --op w --all --format csv >"$work/writes.csv"
head -n 6 "$work/writes.csv"
echo "($(($(wc -l <"$work/writes.csv") - 1)) writes in all)"

echo; echo "== memhist fsck $work/demo.store"
"$mh" fsck "$work/demo.store"
