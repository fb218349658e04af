#!/usr/bin/env bash
# Checks contrib/bash-completion/hacoboot-sampler: sources it (alone, then over
# bash-completion when that is installed) and compares COMPREPLY for typical
# command lines; also that it offers every option src/cli/options.cpp defines.
# The option names, the formats and the phase names are also read from the
# sources, so that the completion cannot drift from them.
# Usage: completion_test.sh COMPLETION_SCRIPT SOURCE_DIR
set -uo pipefail
script=$1
options_cpp=$2/src/cli/options.cpp
phases_cpp=$2/src/model/phases.cpp
failures=0

fail() {
    echo "FAIL [$mode]: $*" >&2
    failures=$((failures + 1))
}

# complete WORD... : COMPREPLY, sorted, one per line, for the command line
# "hacoboot-sampler WORD...", the cursor in the last word.
complete_words() {
    COMP_WORDS=(hacoboot-sampler "$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _hacoboot_sampler
    printf '%s\n' "${COMPREPLY[@]}" | sort
}

expect() { # expect "EXPECTED (space-separated)" WORD...
    local expected actual
    expected=$(tr ' ' '\n' <<<"$1" | sort)
    shift
    actual=$(complete_words "$@")
    [[ $actual == "$expected" ]] || fail "'$*': expected [${expected//$'\n'/ }], got [${actual//$'\n'/ }]"
}

expect_contains() { # expect_contains ITEM WORD...
    local item=$1
    shift
    grep -qxF -- "$item" <<<"$(complete_words "$@")" || fail "'$*': '$item' not offered"
}

run_cases() {
    expect "--format" --fo
    expect "table bpftrace json tsv" --format ""
    expect "table bpftrace json tsv" -f ""
    expect "json" --format j
    expect "json" --format = j # "--format=j" as bash splits it
    expect "table bpftrace json tsv" --format =
    expect "tsv jsonl" --events-format ""
    expect "p50 p90 p99" --gate-stat p
    expect "noise-free wall" --gate-on ""
    expect "--alpha" --alp
    expect "--all-syscalls" --all
    expect "compare" comp
    expect "record report" re
    expect "record" reco
    expect "--events --events-format" report run.hbrec --ev
    expect "--record" --rec
    expect "check" che
    expect "list" lis
    expect "trace" trac
    expect "--list" list --li
    expect "--gate --gate-json --gate-junit --gate-markdown --gate-on --gate-stat" compare a.json b.json --gate
    expect "wall" compare a.json b.json --gate-on w
    expect "--textfile --textfile-interval --timeline --trace-out" --t
    expect "--serve" --se
    expect "--list" --li
    expect "--pid" --pi
    expect "CONTAINER_SECCOMP_SETUP CONTAINER_START" --from CONTAINER_S
    expect "execve,listen" --gate execve,li
    expect "" --count ""
    expect "" --serve ""
    expect_contains root --run-as ro
    expect_contains "$$" --pid "$$"
    expect_contains 1 -p ""

    # Files: in a scratch directory.
    local dir
    dir=$(mktemp -d)
    mkdir "$dir/sub"
    touch "$dir/base.json" "$dir/boots.tsv" "$dir/plot.svg"
    (
        cd "$dir" || exit 1
        expect "base.json boots.tsv plot.svg sub" -o ""
        expect "boots.tsv" --events bo
        expect "base.json sub" --baseline ""
        expect "base.json sub" compare ""
        expect "base.json sub" compare base.json ""
        expect "plot.svg sub" --timeline ""
        expect "base.json boots.tsv plot.svg sub" -- ""
        expect "boots.tsv" /dev/null -q bo # COMMAND
    ) || failures=$((failures + 1))
    rm -rf "$dir"

    # What the sources define is offered: formats, phase names, options.
    expect "$(grep -oE '\{"[a-z]+", ReportFormat::' "$options_cpp" | cut -d'"' -f2)" --format ""
    expect "$(grep -oE '\{"[a-z]+", EventsFormat::' "$options_cpp" | cut -d'"' -f2)" --events-format ""
    expect "$(grep -oE '\{[0-9]+, "[A-Z0-9_]+"\}' "$phases_cpp" | cut -d'"' -f2)" --from ""
    local option offered
    offered=$(complete_words -)
    while read -r option; do
        grep -qxF -- "$option" <<<"$offered" || fail "option $option (src/cli/options.cpp) not completed"
    done < <(grep -oE '(add_option|add_flag|set_version_flag|\.value|\.flag)\("[^"]*"' "$options_cpp" |
        sed -E 's/.*\("//; s/"$//' | tr ',' '\n' | grep -E '^-')
}

mode=alone
# shellcheck source=/dev/null
source "$script"
run_cases

for bash_completion in /usr/share/bash-completion/bash_completion /etc/bash_completion; do
    if [[ -r $bash_completion ]]; then
        mode=bash-completion
        # shellcheck source=/dev/null
        source "$bash_completion" >/dev/null 2>&1
        declare -F _filedir >/dev/null || { echo "bash-completion did not load" >&2; break; }
        # shellcheck source=/dev/null
        source "$script"
        run_cases
        break
    fi
done

if ((failures > 0)); then
    echo "completion: $failures failure(s)" >&2
    exit 1
fi
echo "completion: ok ($mode last)"
