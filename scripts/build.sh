#!/usr/bin/env bash
# Configures and builds into build/ (or $BUILD_DIR): every target, or the
# targets named as arguments. CMAKE_ARGS: more configure arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
