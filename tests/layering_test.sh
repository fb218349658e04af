#!/bin/bash
# The layering checks that need more than a build (cmake/Layering.cmake).
#   layering_test.sh includes SOURCE_DIR STAGE=DEP,DEP...
#     every `#include "<stage>/..."` in src/<stage>/ names the stage itself or
#     one it declares
#   layering_test.sh wrong-way CMAKE BUILD_DIR
#     a library whose code calls into an undeclared stage does not link
set -euo pipefail

includes() {
  local source_dir=$1 failures=0
  shift
  declare -A allowed
  local entry
  for entry in "$@"; do allowed[${entry%%=*}]=",${entry#*=},"; done
  local stage file line included
  for stage in "${!allowed[@]}"; do
    for file in "$source_dir/src/$stage"/*; do
      while IFS= read -r line; do
        included=${line#*\"}
        included=${included%%/*}
        [[ $included == "$stage" || -z ${allowed[$included]+set} ]] && continue
        if [[ ${allowed[$stage]} != *",$included,"* ]]; then
          echo "${file#"$source_dir"/}: includes $included/, which stage $stage does not depend on: $line"
          failures=$((failures + 1))
        fi
      done < <(grep -E '^#include "[a-z_]+/' "$file" || true)
    done
  done
  [[ ${#allowed[@]} -ge 6 ]] || { echo "expected the six stages, got: ${!allowed[*]}"; exit 1; }
  [[ $failures -eq 0 ]] && echo "includes follow the stage table: ${*}"
  return $((failures > 0))
}

wrong_way() {
  local cmake=$1 build_dir=$2 output
  if output=$("$cmake" --build "$build_dir" --target hacoboot_layering_wrong_way 2>&1); then
    echo "a model library calling format_duration (report stage) linked: the layering check is not enforced"
    exit 1
  fi
  if ! grep -q 'undefined reference to .*format_duration' <<<"$output"; then
    echo "the wrong-way build failed, but not for the undefined call into the report stage:"
    echo "$output" | tail -20
    exit 1
  fi
  echo "the wrong-way call failed to link, as it should:"
  grep 'undefined reference' <<<"$output" | head -1
}

mode=$1
shift
case $mode in
  includes) includes "$@" ;;
  wrong-way) wrong_way "$@" ;;
  *) echo "usage: $0 includes|wrong-way ..." >&2; exit 2 ;;
esac
