#!/bin/sh
# record_real_trace.sh - records the benchmark's real trace: CPython running
# a small dictionary/list/string workload under valgrind lackey.
#
#   tools/bench/record_real_trace.sh [OUT]     (default /tmp/mh_bench_real.lackey)
#
# Deterministic on one machine: address-space randomisation off (setarch -R),
# an empty environment, a fixed hash seed, no site module. About 16 million
# data accesses (56 million lines with the instructions, ~500 MB); takes
# 3 to 7 minutes.
set -eu
out=${1:-/tmp/mh_bench_real.lackey}
for tool in valgrind setarch; do
    command -v "$tool" >/dev/null 2>&1 || { echo "record_real_trace.sh: $tool not found" >&2; exit 1; }
done
# the system interpreter itself, not a wrapper script (pyenv shims, venvs)
py=/usr/bin/python3
[ -x "$py" ] || { echo "record_real_trace.sh: $py not found" >&2; exit 1; }
setarch "$(uname -m)" -R env -i PYTHONHASHSEED=0 \
    valgrind --tool=lackey --trace-mem=yes --log-file="$out" \
    "$py" -S -c '
d = {}
for i in range(3000):
    d["k%d" % i] = [i, i * i, str(i)]
s = sorted(d, key=lambda k: d[k][1] % 977)
t = "".join(x[1:] for x in s[:2000])
print(len(d), len(s), len(t))
' >/dev/null
lines=$(wc -l < "$out")
echo "record_real_trace.sh: wrote $out ($lines lines)" >&2
