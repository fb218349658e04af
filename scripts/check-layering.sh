#!/usr/bin/env bash
# The arrows between the pipeline's stages (CONTRIBUTING, "Layering"): every
# `#include "<stage>/..."` in src/<stage>/ names the stage itself or one that
# its hacoboot_stage() call in CMakeLists.txt DEPENDS on. Includes are where a
# wrong-way use shows first, types and inline functions included, and this
# needs no build.
#
#   scripts/check-layering.sh [SOURCE_DIR]   # default: this checkout
set -euo pipefail
source_dir=${1:-$(dirname "$0")/..}

declare -A allowed
while read -r stage depends; do
  allowed[$stage]=",${depends// /,},"
done < <(sed -nE 's/^hacoboot_stage\(([a-z_]+)( DEPENDS(( [a-z_]+)+))?.*/\1\3/p' "$source_dir/CMakeLists.txt")
if [[ ${#allowed[@]} -lt 6 ]]; then
  echo "check-layering: expected six hacoboot_stage() calls in CMakeLists.txt, found: ${!allowed[*]}" >&2
  exit 1
fi

failures=0
for stage in "${!allowed[@]}"; do
  for file in "$source_dir/src/$stage"/*; do
    while IFS= read -r line; do
      included=${line#*\"}
      included=${included%%/*}
      [[ $included == "$stage" || -z ${allowed[$included]+set} ]] && continue
      if [[ ${allowed[$stage]} != *",$included,"* ]]; then
        echo "${file#"$source_dir"/}: includes $included/, which stage $stage does not depend on: $line" >&2
        failures=$((failures + 1))
      fi
    done < <(grep -E '^#include "[a-z_]+/' "$file" || true)
  done
done
((failures == 0)) || exit 1
echo "check-layering: includes follow the stage table"
