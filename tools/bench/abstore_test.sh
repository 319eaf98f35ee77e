#!/bin/sh
# abstore_test.sh ABSTORE LIB STORE: mh_abstore with the same library as
# base and new on a small store of two streams (ctest bench_abstore).
#   --streams 0 and 1: 16 class rows each (point, page, 1 MiB, whole; max 1
#   and 10; forward and backward) and 2 never-accessed ones (max 1, no
#   answer), the twins named " 1str"; every answer of the two builds
#   agrees (mismatches 0).
#   --classes "point ": only the 4 point classes.
#   --asks CSV: a header and one row per question (4 classes x 4), each
#   with its class, direction, range, stream (--streams 1), two times and
#   its answers (the 1str rows' streams those the store has).
#   --cold 3: one line, both builds' cold opens (p50, max).
#   --store-new: the new build reads the 2.7 fixture of the same accesses
#   (memhist 1.12's writer), named in the header; every answer agrees and
#   --cold opens each build's own store; a store-new that does not exist
#   exits 1.
#   Bad usage (no --store, --streams 2, --cold x) exits 2. A store that does not
#   exist exits 1 with the library's detail.
set -eu
abstore=$1
lib=$2
store=$3
fail() { echo "bench_abstore: $*" >&2; exit 1; }
for s in 0 1; do
  out=$("$abstore" "$lib" "$lib" --store "$store" --queries 8 --reps 2 --streams $s) ||
    fail "--streams $s: mh_abstore failed"
  echo "$out" | grep -q '^mismatches 0$' || fail "--streams $s: answers differ"
  rows=$(echo "$out" | grep -Ec '^\| (point|page|1MiB|whole) max(1|10) (fwd|bwd)' || true)
  [ "$rows" -eq 16 ] || fail "--streams $s: $rows class rows, expected 16"
  never=$(echo "$out" | grep -Ec '^\| never max1 (fwd|bwd)( 1str)? \|.*\| 0 \|$' || true)
  [ "$never" -eq 2 ] || fail "--streams $s: $never never-accessed rows with no answer, expected 2"
  twins=$(echo "$out" | grep -c ' 1str |' || true)
  [ "$twins" -eq $((18 * s)) ] || fail "--streams $s: $twins one-stream rows"
done
out=$("$abstore" "$lib" "$lib" --store "$store" --queries 4 --reps 1 --classes "point ")
rows=$(echo "$out" | grep -c '^| point' || true)
all=$(echo "$out" | grep -Ec '^\| (page|1MiB|whole)' || true)
[ "$rows" -eq 4 ] && [ "$all" -eq 0 ] || fail "--classes: $rows point rows, $all others"
csv=${TMPDIR:-/tmp}/abstore_test.$$.csv
trap 'rm -f "$csv"' EXIT
"$abstore" "$lib" "$lib" --store "$store" --queries 4 --reps 1 --streams 1 \
  --classes "point " --asks "$csv" >/dev/null || fail "--asks: mh_abstore failed"
head -1 "$csv" | grep -qx 'class,question,direction,start,addr_first,addr_last,stream,base_us,new_us,answers' ||
  fail "--asks: header $(head -1 "$csv")"
n=$(tail -n +2 "$csv" | wc -l)
[ "$n" -eq 16 ] || fail "--asks: $n rows, expected 16"
bad=$(tail -n +2 "$csv" | awk -F, '$1 !~ /^point max(1|10) (fwd|bwd) 1str$/ ||
  index($1, " " $3 " ") == 0 || $4 !~ /^[0-9]+$/ || $5 !~ /^0x[0-9a-f]+$/ ||
  $6 !~ /^0x[0-9a-f]+$/ || $7 !~ /^[0-9]+$/ || $8 <= 0 || $9 <= 0 || $10 !~ /^[0-9]+$/ ||
  $10 > 10' | wc -l)
[ "$bad" -eq 0 ] || fail "--asks: $bad malformed rows"
rc=0; "$abstore" "$lib" "$lib" --store "$store" --asks /nonexistent/dir/x.csv >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--asks unwritable: exit $rc, expected 1"
out=$("$abstore" "$lib" "$lib" --store "$store" --queries 2 --reps 1 --classes "never" --cold 3) ||
  fail "--cold: mh_abstore failed"
echo "$out" | grep -Eq '^cold open \(pages dropped, at most [0-9.]+ % still resident\), 3 each: base p50 [0-9]+\.[0-9]{3} ms, max [0-9]+\.[0-9]{3}; new p50 [0-9]+\.[0-9]{3} ms, max [0-9]+\.[0-9]{3}$' ||
  fail "--cold: no cold line in: $out"
old=$(dirname "$store")/v2.7/tiny.store
out=$("$abstore" "$lib" "$lib" --store "$store" --store-new "$old" --queries 8 --reps 1 \
  --streams 1 --cold 2) || fail "--store-new: mh_abstore failed"
echo "$out" | grep -q "^mh_abstore: $store, 40 accesses, 2 streams; base .* reading $old; " ||
  fail "--store-new: header $(echo "$out" | head -1)"
echo "$out" | grep -q '^mismatches 0$' || fail "--store-new: answers differ"
rows=$(echo "$out" | grep -Ec '^\| (point|page|1MiB|whole) max(1|10) (fwd|bwd) 1str' || true)
[ "$rows" -eq 16 ] || fail "--store-new: $rows class rows, expected 16"
echo "$out" | grep -q '^cold open (pages dropped' || fail "--store-new: no cold line"
rc=0; "$abstore" "$lib" "$lib" --store "$store" --store-new "$store.missing" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--store-new missing: exit $rc, expected 1"
rc=0; "$abstore" "$lib" "$lib" --store "$store" --cold x 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "--cold x: exit $rc, expected 2"
rc=0; "$abstore" "$lib" "$lib" --queries 4 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "no --store: exit $rc, expected 2"
rc=0; "$abstore" "$lib" "$lib" --store "$store" --streams 2 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "--streams 2: exit $rc, expected 2"
rc=0; err=$("$abstore" "$lib" "$lib" --store "$store.missing" 2>&1 >/dev/null) || rc=$?
[ "$rc" -eq 1 ] || fail "missing store: exit $rc, expected 1"
[ "$err" = "mh_abstore: cannot open $store.missing: MH_ENOENT: no such store: $store.missing: No such file or directory" ] ||
  fail "missing store: $err"
echo "bench_abstore: ok"
