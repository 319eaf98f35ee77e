# bash completion for memhist(1); installed as
# share/bash-completion/completions/memhist.
#
# It keeps no list of its own: the commands come from `memhist --help`, each
# command's options (and the values of --format) from `memhist COMMAND
# --help`, run on the very executable being completed. A new or renamed
# option is completed as soon as the CLI's help shows it
# (tests/install/completion_test.sh checks every option is).

# The help text of the memhist being completed: $1 executable, $2 command
# (empty for the top-level help).
_memhist_help() {
    local exe=$1
    # the word as typed: a leading ~/ is not expanded yet
    # shellcheck disable=SC2088
    [[ $exe == "~/"* ]] && exe=$HOME/${exe#"~/"}
    if [[ -n ${2-} ]]; then
        "$exe" "$2" --help 2>/dev/null
    else
        "$exe" --help 2>/dev/null
    fi
}

# Commands: the "  memhist NAME ..." lines under "commands:".
_memhist_commands() {
    _memhist_help "$1" | sed -n -E 's/^  memhist ([a-z][a-z0-9-]*) .*/\1/p'
}

# Options of command $2 (top level when empty), one per line, as the help
# lists them: "  -f, --format FMT   text" or "      --all   text"; the top
# level lists its own in the synopsis ("memhist --help | --version").
_memhist_options() {
    if [[ -z ${2-} ]]; then
        _memhist_help "$1" | sed -n -E 's/^ *(usage: )?memhist (--.*)/\2/p' |
            grep -oE -- '--?[a-zA-Z][a-zA-Z0-9-]*'
        return
    fi
    _memhist_help "$1" "$2" |
        sed -n -E 's/^ +(-[a-zA-Z0-9], )?(--[a-zA-Z0-9][a-zA-Z0-9-]*).*/\1\2/p' |
        sed 's/, /\n/'
}

# The long name of option $3 of command $2 when it takes a value (its help
# line shows an upper-case word after it: "-n, --max N", "--output STORE");
# nothing otherwise.
_memhist_value_option() {
    _memhist_help "$1" "$2" |
        sed -n -E 's/^ +(-[a-zA-Z0-9], )?(--[a-zA-Z0-9-]+) [A-Z][A-Z:]*( .*|$)/ \1\2 /p' |
        grep -E -- "[ ,]$3[ ,]" | grep -oE -- '--[a-zA-Z0-9-]+' | head -n 1
    return 0 # no match is an answer too (and harmless under set -e)
}

# The choices the synopsis gives for --format of command $2 ("--format
# lackey|csv|sqlite"), one per line.
_memhist_formats() {
    _memhist_help "$1" "$2" | sed -n -E 's/.*--format ([a-z0-9]+(\|[a-z0-9]+)+).*/\1/p' |
        head -n 1 | tr '|' '\n'
}

_memhist() {
    local exe=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
    local prev=${COMP_WORDS[COMP_CWORD - 1]} cmd=${COMP_WORDS[1]-}
    COMPREPLY=()

    if ((COMP_CWORD == 1)); then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$(_memhist_options "$exe" "")" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$(_memhist_commands "$exe") help" -- "$cur")
        fi
        return 0
    fi
    if [[ $cmd == help || $cmd == -h || $cmd == --help ]]; then
        ((COMP_CWORD == 2)) &&
            mapfile -t COMPREPLY < <(compgen -W "$(_memhist_commands "$exe")" -- "$cur")
        return 0
    fi
    [[ $cmd == -* ]] && return 0

    # after "--" (record): the traced program and its arguments
    local i
    for ((i = 2; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
            if declare -F _command_offset >/dev/null; then
                _command_offset $((i + 1))
            elif ((COMP_CWORD == i + 1)); then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            return 0
        fi
    done

    local valued=
    [[ $prev == -* ]] && valued=$(_memhist_value_option "$exe" "$cmd" "$prev")
    if [[ -n $valued ]]; then
        case $valued in
        --format)
            mapfile -t COMPREPLY < <(compgen -W "$(_memhist_formats "$exe" "$cmd")" -- "$cur")
            ;;
        --output)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            ;;
        esac
        return 0 # numbers, ranges, operation letters: nothing to offer
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_memhist_options "$exe" "$cmd")" -- "$cur")
        return 0
    fi
    # STORE, INPUT, OUT: files and directories
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    return 0
}

complete -F _memhist memhist
