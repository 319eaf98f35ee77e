#!/bin/sh
# fuzz/gen_corpus.sh [BUILD_DIR] - regenerates fuzz/corpus/ (the seed corpus
# of every fuzz target) with fuzz/gen_corpus.c built in a normal build, and
# adds the small segment files and traces committed under tests/ (golden
# files). Review and commit the result; keep it under 2 MB.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${TMPDIR:-/tmp}/memhist-corpus-build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target fuzz_gen_corpus >/dev/null
new="$root/fuzz/corpus.new"
rm -rf "$new"
"$build/fuzz/fuzz_gen_corpus" "$new"

# golden files: small committed segments, manifests and traces (the
# format's golden stores, good and deliberately corrupt, and test data)
add() { # TARGET FILE
    name=$(echo "${2#"$root"/}" | tr '/' '_')
    cp "$2" "$new/$1/golden-$name"
}
golden="$root/tests"
[ -d "$root/format/golden" ] && golden="$golden $root/format/golden"
# shellcheck disable=SC2086
find $golden -type f -name 'seg-*.mhs' -size -64k 2>/dev/null | sort |
    while read -r f; do add fuzz_segment_open "$f"; done
# shellcheck disable=SC2086
find $golden -type f -name 'MANIFEST' -size -8k 2>/dev/null | sort |
    while read -r f; do add fuzz_manifest "$f"; done
find "$root/tests" -type f \( -name '*.lackey' -o -name '*lackey*.txt' \) -size -64k 2>/dev/null | sort |
    while read -r f; do add fuzz_import_lackey "$f"; done
find "$root/tests" -type f -name '*.csv' -size -64k 2>/dev/null | sort |
    while read -r f; do add fuzz_import_csv "$f"; done

rm -rf "$root/fuzz/corpus"
mv "$new" "$root/fuzz/corpus"
du -sh "$root/fuzz/corpus"
for d in "$root/fuzz/corpus"/*; do
    echo "$(basename "$d"): $(find "$d" -type f | wc -l) files"
done
