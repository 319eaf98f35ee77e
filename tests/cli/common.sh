# common.sh - helpers every CLI test script gets (sourced by run.sh).
# Variables: MEMHIST (the binary), MH_CLI_DATA (tests/cli/data).

DATA=$MH_CLI_DATA

memhist() { "$MEMHIST" "$@"; }

# Runs a command that is expected to fail and prints "[exit N]" on stdout,
# so a script can check a failure in the middle and go on.
status() {
    local rc=0
    "$@" || rc=$?
    echo "[exit $rc]"
}

# A store with the 14 accesses of data/small.csv.
small_store() {
    memhist import --quiet --format csv "$DATA/small.csv" "$1"
}

# Writes byte value $3 (0..255) at offset $2 of file $1.
poke_byte() {
    printf "\\$(printf %03o "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# Prints the byte at offset $2 of file $1 as a number.
peek_byte() {
    od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' '
}

# Inverts every bit of the byte at offset $2 of file $1.
flip_byte() {
    poke_byte "$1" "$2" $(( $(peek_byte "$1" "$2") ^ 255 ))
}

# The only segment file of a store.
segment_of() {
    local s
    s=$(ls "$1"/seg-*.mhs)
    [ "$(echo "$s" | wc -l)" = 1 ] || { echo "segment_of: not one segment in $1" >&2; return 1; }
    echo "$s"
}

# Skips the test (exit 77) unless every named command exists.
need() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || { echo "skipped: $c not installed" >&2; exit 77; }
    done
}
