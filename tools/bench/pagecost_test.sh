#!/bin/sh
# pagecost_test.sh PAGECOST STORE DIR: mh_pagecost on a store (ctest
# bench_pagecost): a header and one row for the store's mapping and one for
# anonymous memory, each with a time for every pass asked and the faults of
# the passes (none major on a store just read whole); --no-anon: the store's
# row alone; a missing store, a directory without a file of a page and bad
# options refused with their exit statuses (1, 1, 2).
set -eu
pc=$1
store=$2
dir=$3
fail() { echo "bench_pagecost: $*" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/empty"

"$pc" "$store" --pages 200 --passes 3 > "$dir/out.md" || fail "exit $? on $store"
[ "$(wc -l < "$dir/out.md")" -eq 4 ] || fail "not 4 lines: $(cat "$dir/out.md")"
head -n 1 "$dir/out.md" | grep -q '^| mapping | files | pages | pass 0 ns | pass 1 ns | pass 2 ns | minor / major faults |$' ||
  fail "bad header: $(head -n 1 "$dir/out.md")"
row='| [0-9]+ | [0-9]+ \| [0-9]+\.[0-9] \| [0-9]+\.[0-9] \| [0-9]+\.[0-9] \| [0-9]+ / 0 \|$'
grep -Eq "^\\| $store $row" "$dir/out.md" || fail "no row for the store: $(cat "$dir/out.md")"
grep -Eq "^\\| anonymous, same pages $row" "$dir/out.md" || fail "no anonymous row: $(cat "$dir/out.md")"
# the store's pages: the sum of its files of a page or more
want=0
for f in "$store"/*; do
  s=$(wc -c < "$f")
  [ "$s" -ge 4096 ] && want=$((want + s / 4096))
done
grep -Eq "^\\| $store \\| [0-9]+ \\| $want \\|" "$dir/out.md" || fail "pages: want $want: $(cat "$dir/out.md")"

"$pc" "$store" --pages 50 --passes 2 --no-anon > "$dir/one.md" || fail "--no-anon: exit $?"
[ "$(wc -l < "$dir/one.md")" -eq 3 ] && ! grep -q anonymous "$dir/one.md" || fail "--no-anon: $(cat "$dir/one.md")"

st=0; "$pc" "$dir/missing" > /dev/null 2> "$dir/err" || st=$?
[ "$st" -eq 1 ] && grep -q "cannot open $dir/missing: No such file or directory" "$dir/err" ||
  fail "missing store: exit $st, $(cat "$dir/err")"
st=0; "$pc" "$dir/empty" > /dev/null 2> "$dir/err" || st=$?
[ "$st" -eq 1 ] && grep -q "no file of a page or more" "$dir/err" || fail "empty dir: exit $st, $(cat "$dir/err")"
for bad in "--passes 0" "--passes 33" "--pages 0" "--pages x" "--frob 1" "--pages" "-x"; do
  st=0; "$pc" "$store" $bad > /dev/null 2> "$dir/err" || st=$?
  [ "$st" -eq 2 ] && grep -q '^usage: mh_pagecost' "$dir/err" || fail "'$bad': exit $st, $(cat "$dir/err")"
done
st=0; "$pc" > /dev/null 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "no store: exit $st"
"$pc" --help | grep -q '^usage: mh_pagecost' || fail "--help"
echo "bench_pagecost: ok"
