#!/bin/sh
# record_real_traces.sh - records the benchmark's three real traces, each of
# more than 20 million data accesses, with valgrind lackey (--trace-mem=yes):
#
#   tools/bench/record_real_traces.sh DIR
#
# writes DIR/gzip.lackey   gzip -9 of a generated 330 KB text   (51.6 M data accesses)
#        DIR/sort.lackey   sort of a generated 50,000-line file (27.8 M)
#        DIR/python.lackey python3 -S, a dict/list/string workload (29.3 M)
# and prints each log's size, data-access count and recording time. Together
# about 6.6 GB of logs (lackey writes every instruction too: 3.7, 1.4 and
# 1.5 GB) and about 19 minutes on a loaded 2-core machine (332, 414 and
# 405 s on 2026-11-23). ONLY="sort python" records a subset. Deterministic on one machine: address-space
# randomisation off (setarch -R), an empty environment (the C locale, so sort
# compares bytes), a fixed hash seed, no site module. The inputs are generated
# by awk from fixed seeds, so every run traces the same work (real_programs.sh,
# shared with record_real_stores.sh).
set -eu
[ $# -eq 1 ] || { echo "usage: record_real_traces.sh DIR" >&2; exit 2; }
dir=$1
. "$(dirname "$0")/real_programs.sh"
real_programs_setup record_real_traces.sh "$dir" valgrind

record() { # name, then the command
    name=$1
    shift
    t0=$(date +%s)
    setarch "$(uname -m)" -R env -i PYTHONHASHSEED=0 \
        valgrind --tool=lackey --trace-mem=yes --log-file="$dir/$name.lackey" "$@" >/dev/null
    t1=$(date +%s)
    bytes=$(wc -c < "$dir/$name.lackey")
    data=$(grep -c '^ [LSM]' "$dir/$name.lackey" || true)
    echo "record_real_traces.sh: $dir/$name.lackey: $bytes bytes, $data data accesses, $((t1 - t0)) s" >&2
}
real_programs_run record
