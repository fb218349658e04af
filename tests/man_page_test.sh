#!/usr/bin/env bash
# Checks man/hacoboot-sampler.1: groff renders it without a warning, mandoc
# -Tlint (when installed) finds nothing, it documents every option of
# src/cli/options.cpp and every exit status of src/util/errors.hpp, and
# its header names the project's version. Exit 77 (skipped) without groff.
# Usage: man_page_test.sh MAN_PAGE SOURCE_DIR VERSION
set -uo pipefail
page=$1
source_dir=$2
version=$3
failures=0

if ! command -v groff >/dev/null; then
    echo "groff not installed (apt-get install groff-base): man page not checked"
    exit 77
fi

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || fail "groff failed"
[[ -z $warnings ]] || fail "groff warnings:"$'\n'"$warnings"

if command -v mandoc >/dev/null; then
    lint=$(mandoc -Tlint "$page" 2>&1) || fail "mandoc -Tlint:"$'\n'"$lint"
else
    echo "mandoc not installed: -Tlint skipped"
fi

grep -qE "^\.TH .*\"hacoboot-sampler ${version//./\\.}\"" "$page" ||
    fail ".TH does not name version $version: update it (and the date)"

# Options as roff writes them ("--run-as" is "\-\-run\-as"), in a tag or in
# the synopsis: a line of font macros (.B, .BR, .BI, .TP's next line).
while read -r option; do
    roff=${option//-/\\-}
    regex=${roff//\\/\\\\}
    grep -qE "^\.B[IR]? .*${regex}([^a-z\\\\]|$)" "$page" || fail "option $option (src/cli/options.cpp) not documented"
done < <(grep -oE '(add_option|add_flag|set_version_flag|\.value|\.flag)\("[^"]*"' "$source_dir/src/cli/options.cpp" |
    sed -E 's/.*\("//; s/"$//' | tr ',' '\n' | grep -E '^-')

# Exit statuses: each a tag of EXIT STATUS.
exit_section=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$page")
while read -r status; do
    grep -qxF ".B $status" <<<"$exit_section" || fail "exit status $status (errors.hpp) not documented"
done < <(grep -oE 'kExit[A-Za-z]+ = [0-9]+' "$source_dir/src/util/errors.hpp" | grep -oE '[0-9]+$')

if ((failures > 0)); then
    echo "man page: $failures failure(s)" >&2
    exit 1
fi
echo "man page: ok"
