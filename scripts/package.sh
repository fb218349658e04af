#!/usr/bin/env bash
# Builds the Debian package (cmake/Package.cmake) in ${BUILD_DIR:-build-deb}
# and prints the path of the .deb. Configured for /usr, where the package
# installs (the tool finds its HTTP module from there), without the tests and
# benchmarks, which it does not hold; the demo is built too, for the package
# test. CMAKE_ARGS: more configure arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-deb}
BUILD_DIR=$build_dir \
  CMAKE_ARGS="-DCMAKE_INSTALL_PREFIX=/usr -DHACOBOOT_BUILD_TESTS=OFF -DHACOBOOT_BUILD_BENCH=OFF ${CMAKE_ARGS:-}" \
  scripts/build.sh >/dev/null
cpack --config "$build_dir/CPackConfig.cmake" -B "$build_dir" >"$build_dir/cpack.log" 2>&1 || {
  cat "$build_dir/cpack.log" >&2
  exit 1
}
sed -n 's/^CPack: - package: \(.*\) generated\.$/\1/p' "$build_dir/cpack.log"
