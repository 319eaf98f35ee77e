#!/bin/sh
# compare_versions.sh - two builds' mh_bench on the same workloads, side by
# side (issue 9: no single-stream class more than 10 % slower, no more than
# +0.05 bytes per access):
#
#   tools/bench/compare_versions.sh BASE_BUILD NEW_BUILD [OUTDIR]
#
# BASE_BUILD, NEW_BUILD: cmake build directories (BASE_BUILD may be a 1.x
# build, e.g. /tmp/base/build at 8c99aee, format 1.0). Workloads, from the
# environment:
#   SIZES=1e7            synthetic traces (tools/synth, the same in both)
#   STORES="DIR ..."     real stores (record_real_stores.sh): each is turned
#                        into a lackey log by NEW_BUILD's mh_store_lackey
#                        (kept in OUTDIR) and both builds run that log, so
#                        a base without --store runs the same accesses
#   QUERIES=100          queries per class
#   EXTRA="..."          more mh_bench options for both
#   ROUNDS=2             runs of each build, alternating base, new, base,
#                        new: compare.py keeps each class's best p50 and p99
#                        (other jobs on a shared machine only slow a run)
# The new build runs with --no-pc when it has it (format 1.x stores no pc:
# the comparison is of the same accesses; the pc column's cost is reported
# by mh_bench --store). SQLite is skipped (--sqlite-max 0): this compares
# memhist with memhist. The two builds run one after the other, base first.
# OUTDIR (default ./compare-out) gets base-R.md, base-R.json, new-R.md,
# new-R.json for each round R and compare.md (printed); then, when both
# builds have libmemhist.so.1, mh_abtest runs the same workloads with the
# two libraries in one process, queries alternated (ab.md, printed): the
# figures to judge issue 9's 10 % on (see abtest.c).
set -eu
[ $# -ge 2 ] && [ $# -le 3 ] || {
    echo "usage: compare_versions.sh BASE_BUILD NEW_BUILD [OUTDIR]" >&2
    exit 2
}
base=$1
new=$2
out=${3:-compare-out}
here=$(cd "$(dirname "$0")" && pwd)
for b in "$base" "$new"; do
    [ -x "$b/tools/bench/mh_bench" ] || {
        echo "compare_versions.sh: $b/tools/bench/mh_bench not found" >&2
        exit 1
    }
done
mkdir -p "$out"
sizes=${SIZES-1e7}
queries=${QUERIES:-100}
args="--queries $queries --sqlite-max 0 ${EXTRA:-}"
[ -n "$sizes" ] && args="$args --sizes $sizes"
for s in ${STORES:-}; do
    name=$(basename "$s" .mh)
    log="$out/$name.lackey"
    if [ ! -s "$log" ] || [ "$s" -nt "$log" ]; then
        "$new/tools/bench/mh_store_lackey" "$s" "$log"
    fi
    args="$args --lackey $log"
done
newargs=$args
if "$new/tools/bench/mh_bench" --help 2>&1 | grep -q -- '--no-pc'; then
    newargs="$args --no-pc"
fi
rounds=${ROUNDS:-2}
bj=
nj=
r=1
while [ "$r" -le "$rounds" ]; do
    echo "compare_versions.sh: round $r: base: mh_bench $args" >&2
    # shellcheck disable=SC2086
    "$base/tools/bench/mh_bench" $args --json "$out/base-$r.json" > "$out/base-$r.md"
    echo "compare_versions.sh: round $r: new: mh_bench $newargs" >&2
    # shellcheck disable=SC2086
    "$new/tools/bench/mh_bench" $newargs --json "$out/new-$r.json" > "$out/new-$r.md"
    bj=${bj:+$bj,}$out/base-$r.json
    nj=${nj:+$nj,}$out/new-$r.json
    r=$((r + 1))
done
python3 "$here/compare.py" "$bj" "$nj" | tee "$out/compare.md"
# then both libraries in one process (mh_abtest): each query on one build
# then the other, judged on the paired median, which separate processes on
# a shared machine cannot give within 10 %
if [ -x "$new/tools/bench/mh_abtest" ] && [ -e "$base/libmemhist.so.1" ] &&
    [ -e "$new/libmemhist.so.1" ]; then
    abargs="--queries $queries"
    [ -n "$sizes" ] && abargs="$abargs --sizes $sizes"
    for s in ${STORES:-}; do
        abargs="$abargs --lackey $out/$(basename "$s" .mh).lackey"
    done
    echo "compare_versions.sh: A/B in one process: mh_abtest $abargs" >&2
    # shellcheck disable=SC2086
    "$new/tools/bench/mh_abtest" "$base/libmemhist.so.1" "$new/libmemhist.so.1" $abargs \
        --dir "$out" | tee "$out/ab.md"
fi
