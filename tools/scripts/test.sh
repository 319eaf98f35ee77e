#!/usr/bin/env bash
# The whole memhist test suite, from a clean checkout on Debian:
#   1. install missing packages;
#   2. gcc release build (-Werror), the library, CLI and plugin at -O3 too,
#      every ctest test, then the Python package
#      (python/) installed into a venv of /usr/bin/python3 and its pytest;
#   3. clang ASan+UBSan build, every ctest test again, the Python tests
#      against that library;
#   4. a representative subset under valgrind memcheck;
#   5. cppcheck over the library and the tools;
#   6. every libFuzzer target for MH_FUZZ_SECONDS (default 10) each, as
#      many at once as there are processors: a smoke run on top of the
#      corpus replay ctest does; campaigns are fuzz/run.sh's (fuzz/README.md).
# Exit status: 0 when everything passed, 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${MH_FUZZ_SECONDS:-10}
step() { printf '\n=== memhist test: %s (%ss)\n' "$*" "$SECONDS"; }

step "dependencies"
tools/scripts/deps.sh

step "release build (gcc)"
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc >/dev/null
cmake --build build/release -j"$jobs"
step "-O3 build of what users install (gcc, -DCMAKE_BUILD_TYPE=Release)"
# gcc -O3 inlines further and warns (-Werror) where -O2 does not: 1.9.6
# failed to build so (-Wmaybe-uninitialized in segment_read.c)
cmake -S . -B build/o3 -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null
cmake --build build/o3 -j"$jobs" --target memhist memhist_shared memhist_cli memhist_qemu >/dev/null
step "ctest (release)"
ctest --test-dir build/release --output-on-failure -j"$jobs" --timeout 900

step "Python package (venv with Debian's python3, pip install offline, pytest)"
# The package under test is the installed one, loading the library just
# built; MEMHIST_REQUIRE_ALL turns every would-be skip into a failure.
pylib=build/release/libmemhist.so.1
if [ ! -e "$pylib" ]; then echo "no $pylib (the shared library target)" >&2; exit 1; fi
venv=build/python-venv
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-build-isolation --no-index --no-deps ./python
pyrc=0
(cd python/tests && MEMHIST_LIBRARY="$root/$pylib" MEMHIST_BUILD_DIR="$root/build/release" \
   MEMHIST_REQUIRE_ALL=1 MEMHIST_EXPECT_INSTALLED=1 \
   "$root/$venv/bin/python" -m pytest -q -p no:cacheprovider .) || pyrc=$?
# Any non-zero status fails, 5 (no tests collected) included.
if [ "$pyrc" -ne 0 ]; then echo "python tests failed (pytest exit $pyrc)" >&2; exit 1; fi
MEMHIST_LIBRARY="$root/$pylib" "$venv/bin/python" python/bench/bench_python.py \
  --size 20000 --queries 50 --reps 1 --dir build >/dev/null

step "ASan+UBSan build (clang)"
# -O1, as the sanitizers' own documentation advises for a usable speed:
# at -O0 this step's ctest took 750 s of a 25.8-minute CI run on a 2-core
# VM (stop 33), about twice what -O1 takes; -O1 keeps every check
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
  -DMH_SANITIZE=ON -DCMAKE_C_COMPILER=clang >/dev/null
cmake --build build/asan -j"$jobs"
step "ctest (ASan+UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" --timeout 1800 -LE no_sanitizer

step "Python tests against the ASan+UBSan library"
# Python is not instrumented, so the sanitizer runtime is preloaded; leaks
# are the C tests' business (the interpreter's own would drown them).
(cd python/tests && LD_PRELOAD="$(clang -print-file-name=libclang_rt.asan-x86_64.so)" \
   ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   MEMHIST_LIBRARY="$root/build/asan/libmemhist.so.1" MEMHIST_BUILD_DIR="$root/build/release" \
   MEMHIST_REQUIRE_ALL=1 "$root/$venv/bin/python" -m pytest -q -p no:cacheprovider .)

step "valgrind memcheck subset"
vg() { valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite "$@" >/dev/null; }
# side by side, $jobs at a time (each is one process, valgrind runs one
# thread at a time): 147 s one after the other on a 2-core VM. The two
# longest (edge, golden) first, so that they do not share a turn with
# shorter ones and then make the next turn wait
vgpids=()
vgfail=0
for t in build/release/tests/test_edge build/release/tests/test_golden build/release/tests/test_misuse build/release/tests/test_errdetail; do
  if [ -x "$t" ]; then
    echo "valgrind $t"
    (cd build/release/tests && vg "$root/$t") &
    vgpids+=("$!")
    if [ "${#vgpids[@]}" -ge "$jobs" ]; then
      for p in "${vgpids[@]}"; do wait "$p" || vgfail=1; done
      vgpids=()
    fi
  fi
done
for p in "${vgpids[@]}"; do wait "$p" || vgfail=1; done
if [ "$vgfail" -ne 0 ]; then echo "valgrind memcheck found errors (above)" >&2; exit 1; fi

step "cppcheck"
cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
  --std=c11 --inline-suppr -I src -I format -DMH_WITH_SQLITE \
  --suppress=missingIncludeSystem src tools/*.c

if [ "$fuzz_seconds" != "0" ] && [ -x fuzz/run.sh ]; then
  step "libFuzzer targets, ${fuzz_seconds}s each"
  fuzz/run.sh "$fuzz_seconds"
fi
step "all passed"
