#!/bin/sh
# summarize_test.sh SCRIPT DIR: summarize.py on a made-up mh_bench JSON
# whose figures are chosen so that each target line has one answer
# (ctest bench_summarize):
#   the six point max1 classes: p50 1..7 us (two above 5), p99 10..70 (two
#   above 50), SQLite 100x three of them and 51-55x the others, the
#   design 200-205x all: each count, the classes that miss and the
#   lowest ratio;
#   the 24 wide classes: 1 MiB at half its point class's p50, whole space
#   at twice: 12 of 24, the others 2.00x;
#   the run's turns in the workload's header; a JSON of the default turns
#   says so too;
#   the ingest line: its rate's verdict and the cores its median run kept
#   busy, of the machine's.
set -eu
script=$1
dir=$2
mkdir -p "$dir"
fail() { echo "bench_summarize: $*" >&2; exit 1; }

make_json() { # make_json FILE TURNS
  python3 - "$1" "$2" <<'PY'
import json, sys
out, turns = sys.argv[1], sys.argv[2]
def impl(p50, p99):
    return {"p50_us": p50, "p99_us": p99, "max_us": p99, "asks": 300}
qs = []
names = [f"{d} {o}" for d in ("fwd", "bwd") for o in ("read", "write", "rw")]
for i, n in enumerate(names):
    m = float(i + 1 + (i >= 4))  # 1 2 3 4 6 7
    qs.append({"class": f"point max1 {n}", "queries": 100, "mean_results": 1,
               "memhist": impl(m, 10.0 * (i + 1 + (i >= 4))),
               "sqlite": impl(m * (100 if i % 2 == 0 else 50 + i), 1e4),
               "sqlite_design": impl(m * (200 + i), 1e4)})
for n in names:
    qs.append({"class": f"point max10 {n}", "queries": 100, "mean_results": 5,
               "memhist": impl(2.0, 9.0), "sqlite": impl(500, 1e4),
               "sqlite_design": impl(500, 1e4)})
for mx in ("max1", "max10"):
    for n in names:
        p = next(q for q in qs if q["class"] == f"point {mx} {n}")["memhist"]["p50_us"]
        for wide, f in (("1MiB", 0.5), ("whole", 2.0)):
            qs.append({"class": f"{wide} {mx} {n}", "queries": 100, "mean_results": 1,
                       "memhist": impl(p * f, 50.0), "sqlite": impl(1e3, 1e4),
                       "sqlite_design": impl(1e3, 1e4)})
w = {"name": "store-made.mh", "accesses": 30000000, "dist": "user", "turns": turns,
     "answers_compared": 42, "mismatches": 0,
     "ingest_accesses_per_s": {"memhist_bg": 3e7, "sqlite": 6e5, "sqlite_design": 6e5},
     "ingest_cpu_cores": {"memhist_bg": 1.874, "memhist_nobg": 0.99},
     "bytes_per_access": {"memhist": 3.0, "sqlite": 66.0, "sqlite_design": 69.0},
     "open_ms": {"memhist": 0.01, "sqlite": 0.2, "sqlite_design": 0.1},
     "writer_peak_rss_mib": {"memhist_bg": 100, "sqlite": 900, "sqlite_design": 80},
     "reader_peak_rss_mib": {"memhist": 130, "sqlite": 70, "sqlite_design": 70},
     "queries": qs}
json.dump({"machine": {"nproc": 2}, "workloads": [w]}, open(out, "w"))
PY
}
make_json "$dir/impl.json" impl
python3 "$script" "$dir/impl.json" > "$dir/impl.out" || fail "summarize.py failed"
want='- every point max1 class (both directions, read / write / rw): p50 <= 5 us 4 of 6 (not: bwd write 6, bwd rw 7): **missed**; >= 100x SQLite 3 of 6 (lowest: fwd write 51.0x); >= 100x design 6 of 6 (lowest: fwd read 200.0x): **missed**; p99 <= 50 us 4 of 6 (not: bwd write 60, bwd rw 70): **missed**'
grep -qxF -- "$want" "$dir/impl.out" || fail "point family line: want
$want
got
$(grep 'every point' "$dir/impl.out")"
want='- 1 MiB and whole-space max1 / max10 classes at most their point class'"'"'s p50: 12 of 24 (the others 2.00-2.00x the point'"'"'s): **missed**'
grep -qxF -- "$want" "$dir/impl.out" || fail "wide line: want
$want
got
$(grep '1 MiB and whole' "$dir/impl.out")"
want='- ingest 30.0 M/s (target >= 25 M/s on each real trace): met; its median run kept 1.87 of 2 cores busy (CPU time over wall time)'
grep -qxF -- "$want" "$dir/impl.out" || fail "ingest line: want
$want
got
$(grep '^- ingest' "$dir/impl.out")"
grep -q '^store-made.mh (.*; timed: each implementation'"'"'s passes back to back (--turns impl)):$' \
  "$dir/impl.out" || fail "the header does not name --turns impl"
make_json "$dir/pass.json" pass
python3 "$script" "$dir/pass.json" > "$dir/pass.out" || fail "summarize.py failed (pass)"
grep -q '^store-made.mh (.*; timed: the implementations taking turns pass by pass):$' \
  "$dir/pass.out" || fail "the header does not name the default turns"
exit 0
