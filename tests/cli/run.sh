#!/usr/bin/env bash
# run.sh - runs memhist CLI tests in the style of zstd's tests/cli-tests.
#
#   MEMHIST=/path/to/memhist bash run.sh cases/NAME.sh [more.sh ...]
#
# Each test is a bash script run with `set -e` in a fresh scratch directory,
# with the helpers of common.sh loaded. Beside it may stand:
#   NAME.sh.exit          expected exit status (default 0)
#   NAME.sh.stdout.exact  expected standard output, byte for byte
#   NAME.sh.stdout.glob   a bash pattern the whole standard output must match
#   NAME.sh.stderr.exact  expected standard error
#   NAME.sh.stderr.glob   a bash pattern for standard error
# (trailing newlines are ignored in both comparisons). A script that exits
# 77 is skipped (ctest reports it as skipped). Prints one line per test and
# the closing line "N passed, N failed"; exits 1 if any failed, 77 if every
# test was skipped.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${MEMHIST:-}" ] || [ ! -x "${MEMHIST}" ]; then
    echo "run.sh: set MEMHIST to the memhist binary" >&2
    exit 2
fi
MEMHIST=$(cd "$(dirname "$MEMHIST")" && pwd)/$(basename "$MEMHIST")
export MEMHIST
export MH_CLI_DATA="$here/data"
export MH_CLI_COMMON="$here/common.sh"
export LC_ALL=C

passed=0 failed=0 skipped=0
for test in "$@"; do
    test=$(cd "$(dirname "$test")" && pwd)/$(basename "$test")
    name=$(basename "$test" .sh)
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/memhist-cli.$name.XXXXXX")
    (cd "$scratch" && bash -c 'set -e; source "$MH_CLI_COMMON"; source "$1"' test "$test" \
        </dev/null >"$scratch.out" 2>"$scratch.err")
    status=$?
    want_status=0
    [ -f "$test.exit" ] && want_status=$(cat "$test.exit")
    problems=()
    if [ "$status" = 77 ]; then
        echo "SKIP $name: $(tail -n 1 "$scratch.err")"
        skipped=$((skipped + 1))
        rm -rf "$scratch" "$scratch.out" "$scratch.err"
        continue
    fi
    [ "$status" = "$want_status" ] || problems+=("exit status $status, expected $want_status")
    compgen -G "$test.std*" >/dev/null ||
        problems+=("no $name.sh.stdout or .stderr expectation: the case could not fail")
    for stream in stdout stderr; do
        if [ $stream = stdout ]; then file="$scratch.out"; else file="$scratch.err"; fi
        actual=$(cat "$file")
        if [ -f "$test.$stream.exact" ]; then
            expected=$(cat "$test.$stream.exact")
            [ "$actual" == "$expected" ] || problems+=("$stream differs from $name.sh.$stream.exact")
        fi
        if [ -f "$test.$stream.glob" ]; then
            pattern=$(cat "$test.$stream.glob")
            # shellcheck disable=SC2053 # the right side is a pattern on purpose
            [[ "$actual" == $pattern ]] || problems+=("$stream does not match $name.sh.$stream.glob")
        fi
    done
    if [ ${#problems[@]} -eq 0 ]; then
        echo "PASS $name"
        passed=$((passed + 1))
        rm -rf "$scratch" "$scratch.out" "$scratch.err"
    else
        echo "FAIL $name"
        for p in "${problems[@]}"; do echo "  $p"; done
        echo "  --- stdout ($scratch.out):"; head -n 40 "$scratch.out" | sed 's/^/  | /'
        echo "  --- stderr ($scratch.err):"; head -n 40 "$scratch.err" | sed 's/^/  | /'
        for stream in stdout stderr; do
            if [ -f "$test.$stream.exact" ]; then
                echo "  --- diff expected/actual $stream:"
                if [ $stream = stdout ]; then f="$scratch.out"; else f="$scratch.err"; fi
                diff "$test.$stream.exact" "$f" | head -n 40 | sed 's/^/  | /'
            fi
        done
        echo "  scratch directory kept: $scratch"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed, $skipped skipped"
if [ "$failed" -gt 0 ]; then exit 1; fi
if [ "$passed" -eq 0 ] && [ "$skipped" -gt 0 ]; then exit 77; fi
exit 0
