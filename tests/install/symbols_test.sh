#!/usr/bin/env bash
# symbols_test.sh CC LIB HEADER SOVERSION VERSION [DOC]
# The shared library's ABI surface: its dynamic symbol table defines exactly
# the functions HEADER marks MH_API (nothing internal leaks, nothing public is
# missing), it has no thread-local storage, its SONAME is
# libmemhist.so.SOVERSION, and the header's version
# macros agree with the build (MH_VERSION_STRING = VERSION, and
# MH_ABI_VERSION = SOVERSION when the header defines it). With DOC (the
# library man page's markdown, src/memhist.3.md): DOC names every public
# function and no mh_* function that is not one.
# The public list comes from the compiler: the header is preprocessed, so
# MH_API is seen as what it expands to, visibility("default").
set -euo pipefail
[ $# -eq 5 ] || [ $# -eq 6 ] ||
    { echo "usage: $0 CC LIB HEADER SOVERSION VERSION [DOC]" >&2; exit 2; }
cc=$1 lib=$2 header=$3 soversion=$4 version=$5 doc=${6-}
fails=0
fail() { echo "symbols: $*" >&2; fails=$((fails + 1)); }

marker='__attribute__((visibility("default")))'
public=$("$cc" -E -P -x c "$header" | tr '\n' ' ' | tr ';' '\n' | grep -F "$marker" |
         sed -e "s/__attribute__((visibility(\"default\")))//" |
         sed -n -E 's/^([^(]*[^A-Za-z0-9_(])?([A-Za-z_][A-Za-z0-9_]*) *\(.*/\2/p' | sort -u)
npublic=$(printf '%s\n' "$public" | grep -c . || true)
# a parse that finds next to nothing would make the comparison meaningless
[ "$npublic" -ge 20 ] || fail "found only $npublic MH_API functions in $header"

# What the toolchain may define in any shared object.
toolchain='^(_init|_fini|__bss_start|_edata|_end|__data_start|__dso_handle|_IO_stdin_used)$'
exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
           grep -vE "$toolchain" | sort -u)
[ -n "$exported" ] || fail "nm -D found no defined symbol in $lib"

missing=$(comm -23 <(printf '%s\n' "$public") <(printf '%s\n' "$exported"))
extra=$(comm -13 <(printf '%s\n' "$public") <(printf '%s\n' "$exported"))
[ -z "$missing" ] || fail "declared MH_API but not exported:" "${missing//$'\n'/ }"
[ -z "$extra" ] || fail "exported but not declared MH_API in memhist.h:" "${extra//$'\n'/ }"

# No thread-local storage: PIC thread-locals cost a __tls_get_addr call per
# use in a dlopen'd library, so the library keeps none (src/sort.c's scratch
# is the caller's).
if grep -qE '^ +TLS ' <<<"$(readelf -lW "$lib")"; then
    fail "$lib has a TLS segment (thread-local variables):" \
        "$(readelf -sW "$lib" | awk '$4 == "TLS" {print $8}' | sort -u | tr '\n' ' ')"
fi

soname=$(readelf -d "$lib" | sed -n -E 's/.*\(SONAME\).*\[(.*)\].*/\1/p')
[ "$soname" = "libmemhist.so.$soversion" ] ||
    fail "SONAME is '$soname', want libmemhist.so.$soversion"

# The version macros as a compiler sees them (undefined ones stay names).
macros=$(printf '#include "%s"\nmh_v MH_VERSION_STRING\nmh_abi MH_ABI_VERSION\n' "$header" |
         "$cc" -E -P -x c - | grep -E '^mh_(v|abi) ')
hv=$(printf '%s\n' "$macros" | sed -n 's/^mh_v //p' | tr -d '" ')
[ "$hv" = "$version" ] || fail "MH_VERSION_STRING is '$hv', the project version is $version"
habi=$(printf '%s\n' "$macros" | sed -n 's/^mh_abi //p' | tr -d '() u')
if [ "$habi" != MH_ABI_VERSION ] && [ "$habi" != "$soversion" ]; then
    fail "MH_ABI_VERSION is '$habi', the SONAME's version is $soversion"
fi

if [ -n "$doc" ]; then
    named=$(grep -oE '\bmh_[a-z0-9_]+ *\(' "$doc" | tr -d ' (' | sort -u)
    undocumented=$(comm -23 <(printf '%s\n' "$public") <(printf '%s\n' "$named"))
    stale=$(comm -13 <(printf '%s\n' "$public") <(printf '%s\n' "$named"))
    [ -z "$undocumented" ] ||
        fail "$(basename "$doc") does not describe:" "${undocumented//$'\n'/ }"
    [ -z "$stale" ] ||
        fail "$(basename "$doc") describes functions memhist.h does not declare:" "${stale//$'\n'/ }"
fi

if [ "$fails" -ne 0 ]; then
    echo "symbols: $fails problem(s)" >&2
    exit 1
fi
echo "symbols: $npublic MH_API functions exported, nothing else; SONAME $soname"
