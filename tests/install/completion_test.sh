#!/usr/bin/env bash
# completion_test.sh MEMHIST COMPLETION
# The bash completion (tools/completion/memhist.bash) against the CLI's own
# help, read here independently of the completion's parser: every command
# `memhist --help` lists, every option a command's help shows (in its usage
# synopsis or its option table, short and long) and every --format choice
# of its synopsis must be offered; the top level's --help/--version too.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 MEMHIST COMPLETION" >&2; exit 2; }
memhist=$1 completion=$2
fails=0 checked=0
fail() { echo "completion: $*" >&2; fails=$((fails + 1)); }

# shellcheck source=/dev/null
source "$completion"

# COMPREPLY for the command line "$@" (the last word is the one completed).
complete_words() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    _memhist
    printf '%s\n' "${COMPREPLY[@]}"
}

# want WORD LINE...: WORD must be among the completions of LINE.
want() {
    local word=$1
    shift
    checked=$((checked + 1))
    local got
    got=$(complete_words "$@")
    grep -qxF -- "$word" <<<"$got" || fail "'$*<TAB>' does not offer $word"
}

# The usage synopsis (the usage: line and its indented continuation lines)
# and the option table lines (indented, starting with a dash).
help_options() {
    awk '/^usage:/ { u = 1 } u && /^$/ { u = 0 } u || /^ +-/' |
        grep -oE -- '(^|[][ ,|(])--?[a-zA-Z][a-zA-Z0-9-]*' | sed -E 's/^[][ ,|(]//' | sort -u
}

top=$("$memhist" --help)
commands=$(printf '%s\n' "$top" | sed -n -E 's/^  memhist ([a-z][a-z0-9-]*) .*/\1/p')
[ "$(printf '%s\n' "$commands" | grep -c .)" -ge 5 ] ||
    fail "found next to no command in 'memhist --help'"
for c in $commands; do
    want "$c" "$memhist" ""
    want "$c" "$memhist" "${c:0:1}"
    want "$c" "$memhist" help ""
done
for o in $(printf '%s\n' "$top" | help_options); do
    want "$o" "$memhist" -
done

for c in $commands; do
    help=$("$memhist" "$c" --help)
    opts=$(printf '%s\n' "$help" | help_options)
    [ -n "$opts" ] || fail "found no option in 'memhist $c --help'"
    for o in $opts; do
        want "$o" "$memhist" "$c" -
        want "$o" "$memhist" "$c" STORE "${o:0:3}"
    done
    formats=$(printf '%s\n' "$help" | { grep -oE -- '--format [a-z0-9]+(\|[a-z0-9]+)+' || true; } |
              head -n 1 | sed 's/^--format //' | tr '|' ' ')
    for f in $formats; do
        want "$f" "$memhist" "$c" --format ""
        want "$f" "$memhist" "$c" -f ""
    done
done

# record: after "--" the program to run
want bash "$memhist" record -o x -- bas

if [ "$fails" -ne 0 ]; then
    echo "completion: $fails of $checked checks failed" >&2
    exit 1
fi
echo "completion: $checked checks passed"
