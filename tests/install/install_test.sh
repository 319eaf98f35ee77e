#!/usr/bin/env bash
# install_test.sh BUILD_DIR CC VERSION SOVERSION LIBDIR MAN
# Installs the build into a temporary prefix (cmake --install BUILD_DIR
# --prefix TMP) and uses it as someone outside the tree would:
#   - every file is where GNUInstallDirs puts it (LIBDIR relative to the prefix);
#   - consumer.c built with pkg-config (shared, run through LD_LIBRARY_PATH),
#     with pkg-config --static (no libmemhist.so needed at run time), into a
#     shared object with libmemhist.a that plugin_main.c dlopens, and by
#     the CMake project beside this script with find_package (memhist::memhist
#     and memhist::memhist_static); each run must print "ok";
#   - the man pages memhist.1 and memhist.3 render without a groff warning
#     (MAN=ON);
#   - the bash completion sources cleanly in a strict shell.
# Exit status: 0 all passed, 1 a check failed, 2 bad usage.
set -euo pipefail
[ $# -eq 6 ] || { echo "usage: $0 BUILD_DIR CC VERSION SOVERSION LIBDIR MAN" >&2; exit 2; }
build=$1 cc=$2 version=$3 soversion=$4 libdir=$5 man=$6
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memhist-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fails=0
fail() { echo "install: $*" >&2; fails=$((fails + 1)); }
step() { echo "== $*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
    { cat "$tmp/install.log" >&2; exit 1; }

step "installed files"
files=(include/memhist.h "$libdir/libmemhist.so" "$libdir/libmemhist.so.$soversion"
       "$libdir/libmemhist.so.$version" "$libdir/libmemhist.a" "$libdir/pkgconfig/memhist.pc"
       "$libdir/cmake/memhist/memhistConfig.cmake"
       "$libdir/cmake/memhist/memhistConfigVersion.cmake"
       "$libdir/cmake/memhist/memhistTargets.cmake"
       "$libdir/cmake/memhist/memhistStaticTargets.cmake"
       bin/memhist share/bash-completion/completions/memhist)
[ "$man" = ON ] && files+=(share/man/man1/memhist.1 share/man/man3/memhist.3)
for f in "${files[@]}"; do
    [ -e "$prefix/$f" ] || fail "missing $f"
done
# the development link and the SONAME link both lead to the real file
for l in libmemhist.so "libmemhist.so.$soversion"; do
    [ "$(readlink -f "$prefix/$libdir/$l")" = "$prefix/$libdir/libmemhist.so.$version" ] ||
        fail "$libdir/$l does not lead to libmemhist.so.$version"
done
grep -qF "memhist $version" <<<"$("$prefix/bin/memhist" --version)" ||
    fail "the installed memhist --version does not say $version"

# run_consumer NAME EXE [ENV...] [-- ARG...]: runs EXE [ARG...] on a new
# store; it must print "ok".
run_consumer() {
    local name=$1 exe=$2 out env=() args=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=("$1"); shift; done
    [ $# -gt 0 ] && shift && args=("$@")
    if ! out=$(env "${env[@]}" "$exe" "${args[@]}" "$tmp/$name.store" 2>&1); then
        fail "$name: $out"
        return
    fi
    echo "$name: $out"
    case $out in
    "memhist $version: "*": ok") ;;
    *) fail "$name printed '$out'" ;;
    esac
}
# needs EXE yes|no: whether EXE loads libmemhist.so.SOVERSION at run time
needs() {
    local has=no
    grep -qF "[libmemhist.so.$soversion]" <<<"$(readelf -d "$1")" && has=yes
    [ "$has" = "$2" ] || fail "$(basename "$1"): NEEDED libmemhist.so.$soversion is $has, want $2"
}

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
step "pkg-config, shared"
[ "$(pkg-config --modversion memhist)" = "$version" ] ||
    fail "pkg-config --modversion memhist is not $version"
# shellcheck disable=SC2046 # pkg-config's flags are meant to split
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/consumer_pc" "$here/consumer.c" \
    $(pkg-config --cflags --libs memhist) || fail "build with pkg-config failed"
if [ -x "$tmp/consumer_pc" ]; then
    needs "$tmp/consumer_pc" yes
    # grep -q on a captured text, not a pipe: under pipefail an early grep
    # exit can end ldd with SIGPIPE and fail a check that holds
    grep -qF "$prefix/$libdir/libmemhist.so.$soversion" \
        <<<"$(LD_LIBRARY_PATH=$prefix/$libdir ldd "$tmp/consumer_pc")" ||
        fail "consumer_pc does not load the installed libmemhist.so.$soversion"
    run_consumer consumer_pc "$tmp/consumer_pc" "LD_LIBRARY_PATH=$prefix/$libdir"
fi

step "pkg-config --static"
# -Bstatic makes -lmemhist (and its Requires.private) take the archives
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/consumer_pc_static" "$here/consumer.c" \
    $(pkg-config --cflags memhist) -Wl,-Bstatic $(pkg-config --static --libs memhist) \
    -Wl,-Bdynamic || fail "static build with pkg-config --static failed"
if [ -x "$tmp/consumer_pc_static" ]; then
    needs "$tmp/consumer_pc_static" no
    run_consumer consumer_pc_static "$tmp/consumer_pc_static"
fi

step "libmemhist.a inside a dlopen'd shared object"
# What a QEMU plugin or a Python extension does: the archive's objects must
# be PIC (a non-PIC one fails here with "relocation ... recompile with -fPIC").
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -shared -fPIC -Dmain=consumer_main \
    -o "$tmp/consumer_plugin.so" "$here/consumer.c" $(pkg-config --cflags memhist) \
    -Wl,--no-undefined -Wl,-Bstatic $(pkg-config --static --libs memhist) -Wl,-Bdynamic ||
    fail "libmemhist.a does not link into a shared object"
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/plugin_main" "$here/plugin_main.c" -ldl ||
    fail "plugin_main did not build"
if [ -f "$tmp/consumer_plugin.so" ] && [ -x "$tmp/plugin_main" ]; then
    needs "$tmp/consumer_plugin.so" no
    run_consumer consumer_plugin "$tmp/plugin_main" -- "$tmp/consumer_plugin.so"
fi

step "CMake find_package"
if cmake -S "$here" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
         -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 &&
   cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1; then
    grep -F "memhist $version found in $prefix/" "$tmp/cmake.log" ||
        fail "find_package did not find the installed memhist $version"
    needs "$tmp/cmake/consumer_shared" yes
    needs "$tmp/cmake/consumer_static" no
    # the shared one runs through the build tree's RPATH, not LD_LIBRARY_PATH
    run_consumer cmake_shared "$tmp/cmake/consumer_shared"
    run_consumer cmake_static "$tmp/cmake/consumer_static"
else
    cat "$tmp/cmake.log" >&2
    fail "the find_package consumer project did not build"
fi

if [ "$man" = ON ]; then
    step "man pages"
    for page in "$prefix/share/man/man1/memhist.1" "$prefix/share/man/man3/memhist.3"; do
        name=$(basename "$page")
        warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
        [ -z "$warnings" ] || fail "groff warns about $name: $warnings"
        rendered=$(MANWIDTH=80 man -l "$page" 2>"$tmp/man.err") || fail "man -l $name failed"
        [ -s "$tmp/man.err" ] && fail "man -l $name: $(cat "$tmp/man.err")"
        for s in NAME SYNOPSIS DESCRIPTION; do
            grep -q "^$s" <<<"$rendered" || fail "the rendered $name has no $s section"
        done
        grep -q "memhist $version" <<<"$rendered" || fail "$name does not carry version $version"
    done
    grep -q "^EXIT STATUS" < <(MANWIDTH=80 man -l "$prefix/share/man/man1/memhist.1" 2>/dev/null) ||
        fail "the rendered memhist.1 has no EXIT STATUS section"
fi

step "bash completion"
comp=$prefix/share/bash-completion/completions/memhist
if ! out=$(bash -c 'set -euo pipefail; source "$1"; complete -p memhist' _ "$comp" 2>&1); then
    fail "sourcing the completion failed: $out"
elif [ "$out" != "complete -F _memhist memhist" ]; then
    fail "sourcing the completion printed or registered '$out'"
fi

if [ "$fails" -ne 0 ]; then
    echo "install: $fails check(s) failed" >&2
    exit 1
fi
echo "install: all checks passed"
