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

# Runs SQL on an SQLite database with the test helper (tests/cli/sqlexec.c).
sqlexec() {
    [ -n "${SQLEXEC:-}" ] || { echo "skipped: SQLEXEC not set (built without SQLite)" >&2; exit 77; }
    "$SQLEXEC" "$@"
}

# Creates an SQLite database $1 in the legacy schema holding the rows of
# accesses given as SQL values lists in $2, e.g. "(1,0,NULL,16,4,4)".
legacy_db() {
    sqlexec "$1" "
create table slices(transition_first int8 not null, transition_last int8 not null);
create table chunks(slice_id int8 not null, phy_first int8 not null, phy_last int8 not null, operation int not null);
create table accesses(chunk_id int8 not null, transition int8 not null, linear int8, phy_first int8 not null, size int not null, operation int not null);
insert into accesses(chunk_id, transition, linear, phy_first, size, operation) values $2;"
}

# Compares the answers of several queries on two stores; prints "same" or
# the first difference.
same_answers() {
    local a=$1 b=$2 q
    for q in "--from 0 --all --op rwx" "--from 5 --backward --all --op rw" \
             "--from 0 --addr 0x1000:0x1003 --all --op rwx" "--after 3 --max 4 --op w" \
             "--before 12 --max 5 --op rx" "--from 9 --addr 0xffffffffffffff00:0xffffffffffffffff --all --op rwx"; do
        # shellcheck disable=SC2086 # q is a list of options
        if ! cmp -s <(memhist query "$a" $q --format csv) <(memhist query "$b" $q --format csv); then
            echo "differ: query $q"
            return 1
        fi
    done
    echo same
}

# Prints the little-endian u64 at offset $2 of file $1 (decimal).
u64_at() {
    local b v=0 i
    for i in 7 6 5 4 3 2 1 0; do
        b=$(peek_byte "$1" $(($2 + i)))
        v=$(( (v << 8) | b ))
    done
    echo "$v"
}

# Offset of the section of type $2 in segment file $1 (format 2.0: the
# directory at the u64 at byte 96 holds dir_count = the u32 at byte 92
# entries of 48 bytes: u32 type, u32 flags, u64 offset, ...).
section_offset() {
    local dir count i
    dir=$(u64_at "$1" 96)
    count=$(( $(u64_at "$1" 88) >> 32 ))
    for ((i = 0; i < count; i++)); do
        if [ "$(( $(u64_at "$1" $((dir + 48 * i))) & 0xffffffff ))" = "$2" ]; then
            u64_at "$1" $((dir + 48 * i + 8))
            return 0
        fi
    done
    echo "section_offset: no section of type $2 in $1" >&2
    return 1
}
