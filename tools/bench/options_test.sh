#!/bin/sh
# options_test.sh BENCH DIR PROBE: mh_bench's --classes, --asks, --cache
# and --no-pin on one --quick run of 2 timed passes (--timed-passes over
# --quick's 1), and mh_probe --asks on that CSV (ctest bench_options).
#   --classes "point max1 ,whole max1 ": the report holds those classes
#   and no other (point max10, page ...); a list no class matches fails
#   with its message.
#   --asks: a header, then one row per timed ask of each implementation;
#   memhist's rows count the blocks it decoded, SQLite's say -1; with
#   --faults every row counts its minor faults.
#   --no-pin: the report says the stores were not held.
#   --cache: the report gives the readers' cache option; with the
#   smallest a second pass decodes blocks again, with the default none.
#   --turns: pass (the default, in the report) alternates the
#   implementations pass by pass; impl gives each its passes back to back;
#   another value exits 2 with its message.
#   mh_probe --asks CSV --class NAME --qfile F: asks the class's questions
#   of memhist's first timed pass (not the second's), as many as the CSV
#   holds; an unknown class or an existing F is refused, and F is not
#   left behind.
set -eu
bench=$1
dir=$2
probe=$3
mkdir -p "$dir"
json=$dir/options.json
asks=$dir/options_asks.csv
fail() { echo "bench_options: $*" >&2; exit 1; }

"$bench" --quick --no-cold --no-pin --faults --timed-passes 2 --classes "point max1 ,whole max1 " \
  --asks "$asks" --json "$json" > /dev/null

grep -q '"pinned": false' "$json" || fail "--no-pin: the report does not say false"
! grep -q '"pinned": "' "$json" || fail "--no-pin: the report names a pinning"

# classes: every one named matches a part, both parts have some, no other
grep -o '"class": "[^"]*"' "$json" | sed 's/"class": "//; s/"$//' > "$dir/options_classes"
[ -s "$dir/options_classes" ] || fail "--classes: no class in the report"
while IFS= read -r c; do
  case "$c" in
    *"point max1 "* | *"whole max1 "*) ;;
    *) fail "--classes: class '$c' was not asked for" ;;
  esac
done < "$dir/options_classes"
grep -qx 'point max1 bwd write' "$dir/options_classes" || fail "--classes: point max1 bwd write missing"
grep -qx 'whole max1 fwd rw' "$dir/options_classes" || fail "--classes: whole max1 fwd rw missing"
nclass=$(wc -l < "$dir/options_classes")

# asks: the header, then rows of 15 fields; memhist decoded >= 0, SQLite -1;
# the question: its start, direction, range (hex) and ops
head -n 1 "$asks" | grep -qx 'workload,class,implementation,pass,query,us,minor_faults,blocks_decoded,start_kind,start,direction,addr_first,addr_last,ops,results' ||
  fail "--asks: bad header"
awk -F, -v nclass="$nclass" '
  NR == 1 { next }
  NF != 15 { print "row " NR ": " NF " fields"; bad = 1; next }
  $15 !~ /^[0-9]+$/ { print "row " NR ": results " $15; bad = 1 }
  $9 !~ /^(id|transition)$/ || $10 !~ /^[0-9]+$/ || $11 !~ /^(fwd|bwd)$/ ||
    $12 !~ /^0x[0-9a-f]+$/ || $13 !~ /^0x[0-9a-f]+$/ || $14 !~ /^[1-7]$/ {
    print "row " NR ": question " $9 " " $10 " " $11 " " $12 " " $13 " " $14; bad = 1 }
  $7 !~ /^[0-9]+$/ { print "row " NR ": minor faults " $7; bad = 1 }
  $3 == "memhist" { mh++; if ($8 !~ /^[0-9]+$/) { print "row " NR ": memhist decoded " $8; bad = 1 } }
  $3 != "memhist" { other++; if ($8 != "-1") { print "row " NR ": " $3 " decoded " $8; bad = 1 } }
  $6 !~ /^[0-9]+\.[0-9]+$/ { print "row " NR ": time " $6; bad = 1 }
  { seen[$2] = 1 }
  END {
    n = 0; for (c in seen) n++
    if (n != nclass) { print n " classes in the asks, " nclass " in the report"; bad = 1 }
    if (mh == 0 || other == 0) { print "memhist rows " mh ", others " other; bad = 1 }
    exit bad
  }' "$asks" || fail "--asks: rows above"

# --timed-passes 2 over --quick's 1: memhist's asks of a second pass
grep -q '",memhist,1,' "$asks" || fail "--quick --timed-passes 2: no second pass"

# mh_probe --asks: the CSV's questions of one class, asked on a store
want=$(grep -c '^"[^"]*","point max1 fwd read",memhist,0,' "$asks")
[ "$want" -gt 0 ] || fail "--asks: no memhist row of point max1 fwd read in pass 0"
rm -rf "$dir/probe.store" "$dir/probe.q"
"$probe" --size 2e4 --store "$dir/probe.store" --queries 2 > /dev/null ||
  fail "mh_probe: cannot make its store"
"$probe" --store "$dir/probe.store" --asks "$asks" --class "point max1 fwd read" \
  --qfile "$dir/probe.q" --reps 1 > "$dir/probe.out" || fail "mh_probe --asks failed"
grep -q "^$want queries x 1: " "$dir/probe.out" ||
  fail "mh_probe --asks: not the $want questions of the CSV"
if "$probe" --store "$dir/probe.store" --asks "$asks" --class "point max1 fwd read" \
  --qfile "$dir/probe.q" > /dev/null 2>&1; then
  fail "mh_probe --asks over an existing --qfile succeeded"
fi
rm -f "$dir/probe.q"
if "$probe" --store "$dir/probe.store" --asks "$asks" --class "no such class" \
  --qfile "$dir/probe.q" > /dev/null 2> "$dir/probe.err"; then
  fail "mh_probe --asks with an unknown class succeeded"
fi
grep -q 'no memhist ask of class "no such class"' "$dir/probe.err" ||
  fail "mh_probe --asks with an unknown class: no message"
[ ! -e "$dir/probe.q" ] || fail "mh_probe --asks left a query file behind"
rm -rf "$dir/probe.store"

# --cache BYTES: the readers' budget, in the report; the same questions'
# second timed pass decodes blocks again with the smallest cache (two
# blocks), none with the default (which holds this small store)
for c in 0 default; do
  set -- --quick --no-cold --timed-passes 2 --classes "page max10 fwd rw" \
    --asks "$dir/cache_$c.csv" --json "$dir/cache_$c.json"
  [ "$c" = default ] || set -- "$@" --cache "$c"
  "$bench" "$@" > /dev/null || fail "--cache $c: the run failed"
done
grep -q '"reader_cache_bytes": 0,' "$dir/cache_0.json" || fail "--cache 0: not in the report"
grep -q '"reader_cache_bytes": 16777216,' "$dir/cache_default.json" ||
  fail "no --cache: the report does not give the default 16 MiB"
decoded() { awk -F, '$3 == "memhist" && $4 == 1 { n += $8 } END { print n + 0 }' "$1"; }
small=$(decoded "$dir/cache_0.csv")
dflt=$(decoded "$dir/cache_default.csv")
[ "$small" -gt 0 ] || fail "--cache 0: the second pass decoded nothing ($small blocks)"
[ "$dflt" -eq 0 ] || fail "default cache: the second pass decoded $dflt blocks"
# the report's blocks decoded per timed ask: none with the default cache
grep -q '"memhist_blocks_decoded_per_ask": 0,' "$dir/cache_default.json" ||
  fail "default cache: the report's blocks decoded per ask are not 0"
grep -q '"memhist_blocks_decoded_per_ask": [1-9]' "$dir/cache_0.json" ||
  grep -q '"memhist_blocks_decoded_per_ask": 0\.[0-9]*[1-9]' "$dir/cache_0.json" ||
  fail "--cache 0: the report's blocks decoded per ask are 0"
if "$bench" --quick --cache 2e12 > /dev/null 2> "$dir/options_err"; then
  fail "--cache beyond 2^40 succeeded"
fi
grep -q 'bad --cache' "$dir/options_err" || fail "--cache beyond 2^40: no message"

# --turns: the default takes turns pass by pass (a class's rows change
# implementation with each pass), impl runs each one's passes back to back
# (a class's rows change implementation once a timed implementation)
grep -q '"turns": "pass"' "$json" || fail "no --turns: the report does not say pass"
switches() { awk -F, -v c="$2" 'NR > 1 && $2 == c { if ($3 != last) n++; last = $3 }
  END { print n + 0 }' "$1"; }
cls='"point max1 fwd read"'
impls=$(awk -F, -v c="$cls" 'NR > 1 && $2 == c { print $3 }' "$asks" | sort -u | wc -l)
[ "$(switches "$asks" "$cls")" -eq $((2 * impls)) ] ||
  fail "no --turns: $cls's asks do not take turns pass by pass"
"$bench" --quick --no-cold --timed-passes 2 --turns impl --classes "point max1 fwd read" \
  --asks "$dir/turns.csv" --json "$dir/turns.json" > /dev/null || fail "--turns impl failed"
grep -q '"turns": "impl"' "$dir/turns.json" || fail "--turns impl: not in the report"
[ "$(switches "$dir/turns.csv" "$cls")" -eq "$impls" ] ||
  fail "--turns impl: $cls's passes are not back to back"
if "$bench" --quick --turns class > /dev/null 2> "$dir/options_err"; then
  fail "--turns class succeeded"
fi
grep -q 'bad --turns (pass or impl): class' "$dir/options_err" || fail "--turns class: no message"

# a list no class matches: a failure that names it
if "$bench" --quick --no-cold --classes "no such class" > /dev/null 2> "$dir/options_err"; then
  fail "--classes with no match succeeded"
fi
grep -q 'no query class matches --classes no such class' "$dir/options_err" ||
  fail "--classes with no match: no message"
exit 0
