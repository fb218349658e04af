#!/bin/bash
# scripts/check-layering.sh passes this tree and refuses a wrong-way include
# (the model including a report header) in a copy of it: a check that could
# not fail would prove nothing.
#   layering_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
check=$source_dir/scripts/check-layering.sh

"$check" "$source_dir"

copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -r "$source_dir/src" "$source_dir/CMakeLists.txt" "$copy/"
model_file=$(ls "$copy"/src/model/*.cpp | head -1)
sed -i '0,/^#include "/s//#include "report\/report_json.hpp"\n&/' "$model_file"
if output=$("$check" "$copy" 2>&1); then
  echo "a model source including report/report_json.hpp passed the layering check"
  exit 1
fi
if ! grep -q 'includes report/, which stage model does not depend on' <<<"$output"; then
  echo "the layering check failed the wrong-way copy, but not for its include:"
  echo "$output"
  exit 1
fi
echo "the wrong-way include was refused: $output"
