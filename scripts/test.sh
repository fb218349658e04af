#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test: unit tests always,
# BPF integration tests when root (they skip otherwise, or fail when
# HACOBOOT_REQUIRE_BPF=1, as in CI).
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${HACOBOOT_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh --when-root
# Explicit: the configure cached in the build directory may have them off
# (scripts/demo.sh's, run with the same BUILD_DIR).
CMAKE_ARGS="-DHACOBOOT_BUILD_TESTS=ON -DHACOBOOT_BUILD_BENCH=ON ${CMAKE_ARGS:-}" scripts/build.sh
# CTEST_ARGS: extra ctest arguments (CI leaves the load tests out of the sanitizer run).
# The package test (a fresh Debian root, minutes) is a stage of its own in CI.
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j 1 -LE package ${CTEST_ARGS:-}
