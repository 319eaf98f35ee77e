#!/bin/sh
# fuzz/run.sh SECONDS [TARGET...] - builds every fuzz target with clang and
# libFuzzer (checksums skipped: MH_FUZZ_UNSAFE) and runs each for SECONDS,
# as many at once as there are processors.
#
# Exit status: 0 when every target ran clean; 1 when a target crashed, leaked,
# hit a sanitizer report, timed out or ran out of memory (its input is copied
# into fuzz/regressions/<target>/ for you to keep); 2 on a usage or build
# error.
#
# Environment:
#   MH_FUZZ_BUILD  build directory (default ${TMPDIR:-/tmp}/memhist-fuzz-build)
#   MH_FUZZ_WORK   where each target's growing corpus and log go; kept when
#                  set, a temporary directory removed at the end otherwise
#   MH_FUZZ_FLAGS  extra libFuzzer flags (e.g. "-max_len=65536")
#   MH_FUZZ_JOBS   targets run at once (default: the number of processors)
set -u

usage() { echo "usage: $0 SECONDS [TARGET...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
secs=$1
shift
case $secs in '' | *[!0-9]*) usage ;; esac

root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
build=${MH_FUZZ_BUILD:-${TMPDIR:-/tmp}/memhist-fuzz-build}
all="fuzz_segment_open fuzz_manifest fuzz_block_decode fuzz_section fuzz_differential fuzz_import_lackey fuzz_import_csv"
targets=${*:-$all}

command -v clang >/dev/null 2>&1 || { echo "run.sh: clang not found" >&2; exit 2; }

# a build directory configured from another checkout cannot be reused
# (cmake refuses a cache made for another source directory): start afresh
if [ -f "$build/CMakeCache.txt" ] &&
   ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$root" "$build/CMakeCache.txt"; then
    echo "== $build was configured for another checkout: removing it"
    rm -rf "$build" || exit 2
fi
echo "== configuring $build"
if ! cmake -S "$root" -B "$build" -DMH_FUZZ=ON -DMH_FUZZ_UNSAFE=ON \
        -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        >"$build.configure.log" 2>&1; then
    cat "$build.configure.log" >&2
    echo "run.sh: cmake configure failed" >&2
    exit 2
fi
echo "== building $targets"
# shellcheck disable=SC2086
if ! cmake --build "$build" -j2 --target $targets >"$build.build.log" 2>&1; then
    tail -n 60 "$build.build.log" >&2
    echo "run.sh: build failed (full log: $build.build.log)" >&2
    exit 2
fi

# the targets' scratch stores (fuzz_store.c) go to memory when possible:
# the writer syncs every commit, which a disk makes slow
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    scratch=$(mktemp -d /dev/shm/memhist-fuzz.XXXXXX) || exit 2
else
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/memhist-fuzz.XXXXXX") || exit 2
fi
if [ -n "${MH_FUZZ_WORK:-}" ]; then
    work=$MH_FUZZ_WORK
    mkdir -p "$work" || exit 2
    trap 'rm -rf "$scratch"' EXIT
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/memhist-fuzz.XXXXXX") || exit 2
    trap 'rm -rf "$work" "$scratch"' EXIT
fi

# one target: its verdict line in $work/$t/verdict, exit 1 when it failed
run_target() {
    t=$1
    exe="$build/fuzz/$t"
    corpus="$work/$t/corpus"
    arts="$work/$t/artifacts"
    log="$work/$t/fuzz.log"
    mkdir -p "$corpus" "$arts"
    # the committed corpus and regressions are read, never written: new
    # inputs go to the first directory only
    set -- "$corpus"
    for d in "$root/fuzz/corpus/$t" "$root/fuzz/regressions/$t"; do
        [ -d "$d" ] && set -- "$@" "$d"
    done
    echo "== $t: ${secs}s"
    # shellcheck disable=SC2086
    TMPDIR="$scratch" ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        "$exe" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$arts/" ${MH_FUZZ_FLAGS:-} \
        "$@" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    found=$(find "$arts" -type f | wc -l)
    if [ $rc -eq 0 ] && [ "$found" -eq 0 ]; then
        echo "$t: ${execs:-?} executions, clean" >"$work/$t/verdict"
        return 0
    fi
    {
        echo "!! $t failed (exit $rc), last lines of $log:"
        tail -n 40 "$log"
    } >&2
    mkdir -p "$root/fuzz/regressions/$t"
    for a in "$arts"/*; do
        [ -f "$a" ] || continue
        known=""
        for e in "$root/fuzz/regressions/$t"/* "$root/fuzz/findings/$t"/*; do
            [ -f "$e" ] && cmp -s "$a" "$e" && known=$e && break
        done
        if [ -n "$known" ]; then
            echo "!! the input is already kept as $known" >&2
        else
            cp "$a" "$root/fuzz/regressions/$t/" &&
                echo "!! kept $root/fuzz/regressions/$t/$(basename "$a")" >&2
        fi
    done
    echo "$t: FAILED after ${execs:-?} executions" >"$work/$t/verdict"
    return 1
}

# the targets run side by side, MH_FUZZ_JOBS at a time (default: the
# processors; each libFuzzer process is one thread), each for SECONDS
jobs=${MH_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) jobs=1 ;; esac
for t in $targets; do
    [ -x "$build/fuzz/$t" ] || { echo "run.sh: no binary $build/fuzz/$t" >&2; exit 2; }
done
status=0
batch=""
n=0
for t in $targets; do
    run_target "$t" &
    batch="$batch $!"
    n=$((n + 1))
    if [ $n -eq "$jobs" ]; then
        for p in $batch; do wait "$p" || status=1; done
        batch=""
        n=0
    fi
done
for p in $batch; do wait "$p" || status=1; done
summary=""
for t in $targets; do
    summary="$summary
$(cat "$work/$t/verdict" 2>/dev/null || echo "$t: no verdict")"
done
echo "== summary (${secs}s per target)$summary"
exit $status
