#!/bin/sh
# abprof_test.sh ABPROF LIB MEMHIST GOLDEN DIR: mh_abprof dump then ingest
# (ctest bench_abprof) on the golden store (two streams, pcs): the store
# ingest writes with LIB holds the same accesses, streams and pcs included
# (the streams a dump holds are declared), as `memhist export --format csv`
# shows them; a dump with a stream above 65535 is refused.
set -eu
abprof=$1
lib=$2
memhist=$3
golden=$4
dir=$5
fail() { echo "bench_abprof: $*" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir"

"$abprof" dump "$golden" 1e9 "$dir/t.bin" > /dev/null || fail "dump failed"
"$abprof" ingest "$lib" "$dir/t.bin" "$dir/out.mh" > "$dir/ingest.out" ||
  fail "ingest failed: $(cat "$dir/ingest.out")"
grep -q ': success$' "$dir/ingest.out" || fail "ingest: $(cat "$dir/ingest.out")"
"$memhist" inspect "$dir/out.mh" | grep -Eq '^streams: +2$' || fail "the store has not 2 streams"
"$memhist" export "$golden" --format csv "$dir/golden.csv" --quiet
"$memhist" export "$dir/out.mh" --format csv "$dir/out.csv" --quiet
# the golden store has windows; the dump keeps none (the last column)
cut -d, -f1-7 "$dir/golden.csv" > "$dir/golden7.csv"
cut -d, -f1-7 "$dir/out.csv" > "$dir/out7.csv"
cmp -s "$dir/golden7.csv" "$dir/out7.csv" || fail "the accesses differ"

# a record with stream 65536 (mh_access: stream, a little-endian u32, at
# byte 44 of the first record)
cp "$dir/t.bin" "$dir/bad.bin"
printf '\000\000\001\000' | dd of="$dir/bad.bin" bs=1 seek=44 conv=notrunc 2> /dev/null
if "$abprof" ingest "$lib" "$dir/bad.bin" "$dir/bad.mh" > /dev/null 2> "$dir/bad.err"; then
  fail "a stream above 65535 was taken"
fi
grep -q 'a stream above 65535' "$dir/bad.err" || fail "bad dump: $(cat "$dir/bad.err")"
echo "bench_abprof: ok"
