#!/bin/sh
# wide_answer_test.sh SCRIPT DIR: wide_answer.py on a made-up --asks CSV
# whose figures give each column one answer (ctest bench_wide_answer):
#   point max10 fwd write: 5 asks of 10 accesses at 4 us, 5 of 2 at 1 us
#   (p50 over all 1 us, over its full answers 4 us); whole max10 fwd write:
#   10 asks of 10 at 3 us (3.00x the point over all, 0.75x at the same
#   answer); 1MiB max1 bwd read: 0.5 us against a point class that never
#   answers in full (0.50x over all, not judged at the same answer); a
#   SQLite row and a class the rule does not name are left out;
#   then a CSV without the results column, one with a row cut short and one
#   without a wide class: exit 2 and a message each.
set -eu
script=$1
dir=$2
mkdir -p "$dir"
fail() { echo "bench_wide_answer: $*" >&2; exit 1; }

csv=$dir/asks.csv
{
  echo "workload,class,implementation,pass,query,us,minor_faults,blocks_decoded,start_kind,start,direction,addr_first,addr_last,ops,results"
  for q in 0 1 2 3 4 5 6 7 8 9; do
    if [ "$q" -lt 5 ]; then us=4; n=10; else us=1; n=2; fi
    echo "w,point max10 fwd write,memhist,0,$q,$us,-1,0,transition,5,fwd,0x10,0x17,2,$n"
    echo "w,whole max10 fwd write,memhist,0,$q,3,-1,0,transition,5,fwd,0x0,0xffffffffffffffff,2,10"
    echo "w,whole max10 fwd write,sqlite,0,$q,900,-1,-1,transition,5,fwd,0x0,0xffffffffffffffff,2,10"
    echo "w,point max1 bwd read,memhist,0,$q,1,-1,0,transition,5,bwd,0x10,0x17,1,0"
    echo "w,1MiB max1 bwd read,memhist,0,$q,0.5,-1,0,transition,5,bwd,0x0,0xfffff,1,1"
    echo "w,page max1000 fwd rw,memhist,0,$q,7,-1,0,transition,5,fwd,0x0,0xfff,3,4"
  done
} > "$csv"

python3 "$script" "$csv" > "$dir/out.md" || fail "wide_answer.py failed on a good CSV"
row() { grep "^| $1 |" "$dir/out.md" || fail "no row for $1"; }
field() { echo "$1" | awk -F'|' -v k="$2" '{ gsub(/^ +| +$/, "", $k); print $k }'; }
r=$(row "whole max10 fwd write")
[ "$(field "$r" 3)" = 3 ] || fail "whole max10 fwd write p50: $(field "$r" 3)"
[ "$(field "$r" 4)" = 1 ] || fail "point max10 fwd write p50 over all asks: $(field "$r" 4)"
[ "$(field "$r" 5)" = 3.00x ] || fail "ratio over all asks: $(field "$r" 5)"
[ "$(field "$r" 6)" = "5 of 10" ] || fail "point asks with max answers: $(field "$r" 6)"
[ "$(field "$r" 7)" = 4 ] || fail "their p50: $(field "$r" 7)"
[ "$(field "$r" 9)" = 0.75x ] || fail "ratio at the same answer: $(field "$r" 9)"
r=$(row "1MiB max1 bwd read")
[ "$(field "$r" 5)" = 0.50x ] || fail "1MiB max1 bwd read over all asks: $(field "$r" 5)"
[ "$(field "$r" 6)" = "0 of 10" ] || fail "a point class without answers: $(field "$r" 6)"
[ "$(field "$r" 9)" = - ] || fail "a point class without answers judged: $(field "$r" 9)"
[ "$(grep -c '^| \(whole\|1MiB\|page\|point\)' "$dir/out.md")" -eq 2 ] ||
  fail "rows for classes the rule does not name"
grep -q "^1 of 2 wide classes at most their point class's p50 (memhist)$" "$dir/out.md" ||
  fail "count over all asks"
grep -q "^1 of 1 at most it at the same answer" "$dir/out.md" ||
  fail "count at the same answer"

# a CSV without the results column (an older mh_bench's)
cut -d, -f1-14 "$csv" > "$dir/old.csv"
if python3 "$script" "$dir/old.csv" > /dev/null 2> "$dir/err"; then
  fail "a CSV without results read"
fi
grep -q 'old.csv: not an --asks CSV of mh_bench since stop 47: no column results' "$dir/err" ||
  fail "a CSV without results: no message"

# a row cut short: its line named
{ cat "$csv"; sed -n 2p "$csv" | cut -d, -f1-5; } > "$dir/short.csv"
if python3 "$script" "$dir/short.csv" > /dev/null 2> "$dir/err"; then
  fail "a CSV with a short row read"
fi
grep -q "short.csv line $(wc -l < "$dir/short.csv"): not an ask" "$dir/err" ||
  fail "a short row: no message naming its line"

# no wide class with its point class
grep -v 'point max10 fwd write\|1MiB' "$csv" > "$dir/none.csv"
if python3 "$script" "$dir/none.csv" > /dev/null 2> "$dir/err"; then
  fail "a CSV without a wide class and its point class read"
fi
grep -q 'none.csv: no 1MiB or whole max1 / max10 class with its point class' "$dir/err" ||
  fail "no wide class: no message"
exit 0
