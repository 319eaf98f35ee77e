#!/bin/sh
# abtest_test.sh ABTEST LIB DIR: mh_abtest's --thrash and --classes on a
# small synthetic trace, the same library as base and new (ctest
# bench_abtest).
#   --thrash 1 --reps 3: the class table says each query's time is its
#   median of 3 passes, each after a thrash; every answer of the two
#   builds agrees (mismatches 0).
#   --classes "point max1 ,whole max1 ": the table holds the classes whose
#   name contains either part (never point max1 too: a part is a
#   substring, as for mh_bench) and no other, and the verdict counts them
#   alone.
#   A bad --thrash is refused as bad usage (exit 2).
#   A --dir whose parent is missing fails (exit 1) saying which directory
#   it could not create and why, the library's detail.
set -eu
abtest=$1
lib=$2
dir=$3
mkdir -p "$dir"
out=$dir/abtest.out
fail() { echo "bench_abtest: $*" >&2; exit 1; }

"$abtest" "$lib" "$lib" --sizes 20000 --queries 5 --reps 3 --ingest-runs 1 --dir "$dir" \
  --thrash 1 --classes "point max1 ,whole max1 " > "$out" 2> "$dir/abtest.err" ||
  fail "mh_abtest failed: $(tail -1 "$dir/abtest.err")"
grep -q 'median of 3 passes per query, each after a thrash' "$out" ||
  fail "--thrash: the table does not say how a query was timed"
grep -q 'mismatches 0' "$out" || fail "answers of the two builds differ"
rows=$(grep -Ec '^\| (never )?(point|whole) max1 [fb]' "$out" || true)
[ "$rows" -eq 14 ] || fail "--classes: $rows class rows, expected 14 ((never) point, whole max1)"
if grep '^| ' "$out" | grep -v -e '^| figure' -e '^| ingest' -e '^| bytes' -e '^| a fresh' \
  -e '^| cursor' -e '^| open' -e '^| class' -e '^| point max1 ' -e '^| whole max1 ' \
  -e '^| never point max1 ' |
  grep -q .; then
  fail "--classes: a class that was not asked for"
fi
grep -q 'of 14 classes more than 10 % slower' "$out" ||
  fail "--classes: the verdict does not count the 14 classes alone"
set +e
"$abtest" "$lib" "$lib" --sizes 20000 --thrash x > /dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--thrash x: exit $rc, expected 2"
set +e
err=$("$abtest" "$lib" "$lib" --sizes 1000 --ingest-runs 1 --dir "$dir/missing/sub" 2>&1 >/dev/null)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "--dir in a missing directory: exit $rc, expected 1"
echo "$err" | grep -q "writing $dir/missing/sub/.*: cannot create directory .*: No such file or directory" ||
  fail "--dir in a missing directory: $(echo "$err" | grep writing)"
exit 0
