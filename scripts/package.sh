#!/usr/bin/env bash
# Builds the Debian package (cmake/Package.cmake) in ${BUILD_DIR:-build-deb}
# and prints the path of the .deb. Configured for /usr, where the package
# installs (the tool finds its HTTP module from there), without the tests and
# benchmarks, which it does not hold; the demo is built too, for the package
# test. CMAKE_ARGS: more configure arguments.
#
#   scripts/package.sh             # configure, build and package
#   scripts/package.sh --built     # package what BUILD_DIR has built already
#
# --built: a build directory configured for /usr with anything else on (CI's
# main build, with its tests): the package holds only what is installed, so
# the same build serves both and is not made twice.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-deb}
case ${1:-} in
  "")
    BUILD_DIR=$build_dir \
      CMAKE_ARGS="-DCMAKE_INSTALL_PREFIX=/usr -DHACOBOOT_BUILD_TESTS=OFF -DHACOBOOT_BUILD_BENCH=OFF ${CMAKE_ARGS:-}" \
      scripts/build.sh >/dev/null
    ;;
  --built)
    prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
    if [ "$prefix" != /usr ]; then
      echo "scripts/package.sh --built: $build_dir is not configured for /usr (CMAKE_INSTALL_PREFIX: ${prefix:-none})" >&2
      exit 2
    fi
    cmake --build "$build_dir" -j "$(nproc)" >/dev/null
    ;;
  *) echo "usage: $0 [--built]" >&2; exit 2 ;;
esac
cpack --config "$build_dir/CPackConfig.cmake" -B "$build_dir" >"$build_dir/cpack.log" 2>&1 || {
  cat "$build_dir/cpack.log" >&2
  exit 1
}
sed -n 's/^CPack: - package: \(.*\) generated\.$/\1/p' "$build_dir/cpack.log"
