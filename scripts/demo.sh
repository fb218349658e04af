#!/usr/bin/env bash
# Installs what the demo needs, builds the tool and the demo, then traces 20
# boots of the bundled demo launcher (a stand-in for Haconiwa that fires the
# same USDT probe) and prints the summary. Extra arguments go to
# hacoboot-sampler, e.g. --format json.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "the demo loads BPF programs: run it as root (sudo $0)" >&2
  exit 1
fi
[ "${HACOBOOT_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh --demo
# The first run's build, kept short (README "Quick start"): only what the demo
# runs; one compile per few files of a stage (unity build), the stages side by
# side; no debug information, which the demo never reads; clang, which the
# BPF object needs anyway, for the C++ too, so that g++ need not be
# installed. In a build directory of its own: none of it reaches the tests'.
export BUILD_DIR=${BUILD_DIR:-build-demo} BUILD_TYPE=${BUILD_TYPE:-Release} CC=${CC:-clang} CXX=${CXX:-clang++}
mkdir -p "$BUILD_DIR"
log=$BUILD_DIR/demo-build.log
CMAKE_ARGS="-DHACOBOOT_BUILD_TESTS=OFF -DHACOBOOT_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_OPTIMIZE_DEPENDENCIES=ON ${CMAKE_ARGS:-}" \
  scripts/build.sh hacoboot-sampler hacoboot-sampler-http hacoboot-launcher hacoboot-demo-app >"$log" 2>&1 || {
  cat "$log" >&2
  exit 1
}

build_dir=$(pwd)/$BUILD_DIR
launcher=$build_dir/demo/hacoboot-launcher
app=$build_dir/demo/hacoboot-demo-app
boots=${BOOTS:-20}
exec "$build_dir/hacoboot-sampler" --haconiwa "$launcher" \
  --run "$launcher --boots $boots --parallel 2 -- $app --listen-from grandchild" \
  "$@" "$app"
