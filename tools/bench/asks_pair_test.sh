#!/bin/sh
# asks_pair_test.sh BENCH DIR SCRIPT: asks_pair.py on two mh_bench --asks
# runs of one generated lackey trace (ctest bench_asks_pair), once as it is
# and once written 9 times (--repeat 9), the same seed:
#   every class of the runs has its row, no row counts more questions with
#   the same or a grown answer than it has; the never-accessed classes
#   answer nothing in both (all "same"), and the point max1000 questions
#   that ran out of the single trace grow in the repeated one;
#   a run drawn with another seed does not pair, and a CSV without the
#   results column or with a row cut short is refused: exit 2 and a
#   message each.
set -eu
bench=$1
dir=$2
script=$3
mkdir -p "$dir"
fail() { echo "bench_asks_pair: $*" >&2; exit 1; }

awk 'BEGIN { for (i = 0; i < 4000; i++) { printf "I  %08x,3\n", 4194304 + i % 97 * 4;
  if (i % 3 != 2) printf " %s %08x,8\n", i % 3 ? "S" : "L", 268435456 + (i * 7919) % 2000 * 8 } }' \
  > "$dir/pair.lackey"
run() { # run NAME SEED [options]
  name=$1 seed=$2
  shift 2
  rm -rf "$dir/$name.stores" "$dir/$name.csv"
  "$bench" --lackey "$dir/pair.lackey" --sqlite-max 0 --no-cold --ingest-runs 1 \
    --queries 12 --timed-passes 2 --seed "$seed" --classes "point max1000 ,never point" \
    --asks "$dir/$name.csv" --dir "$dir/$name.stores" "$@" > /dev/null ||
    fail "mh_bench $name failed"
}
run small 7
run big 7 --repeat 9
run other 8

python3 "$script" "$dir/big.csv" "$dir/small.csv" > "$dir/pair.out" ||
  fail "asks_pair.py failed on two runs of one seed"
ncls=$(awk -F, 'NR > 1 && $3 == "memhist" { print $2 }' "$dir/small.csv" | sort -u | wc -l)
rows=$(grep -c '^| \(point\|never\)' "$dir/pair.out")
[ "$rows" -eq "$ncls" ] || fail "$rows rows for $ncls classes"
awk -F'|' '/^\| (point|never)/ {
    q = $3 + 0; same = $4 + 0; grown = $6 + 0
    if (same + grown > q) { print "row " NR ": " same " + " grown " > " q; bad = 1 }
    if ($2 ~ /never/ && same != q) { print "row " NR ": a never class with other answers"; bad = 1 }
    if ($2 ~ /point max1000/ && grown == 0) { print "row " NR ": nothing grew"; bad = 1 }
  } END { exit bad }' "$dir/pair.out" || fail "table rows above"
grep -q "^[0-9]* of $ncls classes within 2x at the same answer" "$dir/pair.out" ||
  fail "no summary line"

if python3 "$script" "$dir/big.csv" "$dir/other.csv" > /dev/null 2> "$dir/pair.err"; then
  fail "runs of two seeds paired"
fi
grep -q 'asks another range, direction or operations' "$dir/pair.err" ||
  fail "runs of two seeds: no message"

# a CSV without the results column (an older mh_bench's): refused, named
cut -d, -f1-14 "$dir/small.csv" > "$dir/old.csv"
if python3 "$script" "$dir/big.csv" "$dir/old.csv" > /dev/null 2> "$dir/pair.err"; then
  fail "a CSV without results paired"
fi
grep -q 'old.csv: not an --asks CSV of mh_bench since stop 47: no column results' "$dir/pair.err" ||
  fail "a CSV without results: no message"

# a row cut short (a run stopped while writing it): refused, its line named
{ cat "$dir/small.csv"; head -n 2 "$dir/small.csv" | tail -n 1 | cut -d, -f1-7; } > "$dir/short.csv"
if python3 "$script" "$dir/big.csv" "$dir/short.csv" > /dev/null 2> "$dir/pair.err"; then
  fail "a CSV with a short row paired"
fi
grep -q "short.csv line $(wc -l < "$dir/short.csv"): not an ask" "$dir/pair.err" ||
  fail "a CSV with a short row: no message naming its line"
exit 0
