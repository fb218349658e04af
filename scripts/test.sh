#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test: unit tests always,
# BPF integration tests when root (they skip otherwise, or fail when
# HACOBOOT_REQUIRE_BPF=1, as in CI).
#
#   scripts/test.sh           # everything but the package test (a stage of CI's own)
#   scripts/test.sh --quick   # the inner loop: unit, system and docs tests after an
#                             # incremental build of what they run; no setup, no root
#
# The tests that share nothing run side by side (unit, system, docs, build:
# ctest -j); the integration tests one at a time, since they trace the
# kernel's one view of every process and some time what they trace.
# BUILD_DIR, CMAKE_ARGS: the build (scripts/build.sh). CTEST_ARGS: more ctest
# arguments for every pass (CI leaves labels out of its sanitizer run).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
readonly parallel_labels='^(unit|system|docs|build)$'
readonly serial_labels='^integration'
# Every label a test may carry, these passes' and the ones CI runs apart.
readonly known_labels='^(unit|system|docs|build|integration(-tracefs|-other-user|-load)?|package|fuzz)$'

# shellcheck disable=SC2086 # CTEST_ARGS: words, as given
run_ctest() { ctest --test-dir "$build_dir" --output-on-failure ${CTEST_ARGS:-} "$@"; }

if [ "${1:-}" = --quick ]; then
  # unit_tests and system_tests bring what they run; the docs tests check the tool.
  CMAKE_ARGS="-DHACOBOOT_BUILD_TESTS=ON ${CMAKE_ARGS:-}" scripts/build.sh unit_tests system_tests hacoboot-sampler
  run_ctest -L '^(unit|system|docs)$' -j "$(nproc)"
  exit
fi
[ $# -eq 0 ] || { echo "usage: $0 [--quick]" >&2; exit 2; }

[ "${HACOBOOT_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh --when-root
# Explicit: the configure cached in the build directory may have them off
# (scripts/demo.sh's, run with the same BUILD_DIR).
CMAKE_ARGS="-DHACOBOOT_BUILD_TESTS=ON -DHACOBOOT_BUILD_BENCH=ON ${CMAKE_ARGS:-}" scripts/build.sh

# A test with a label no pass knows would never run: refuse it.
unknown=$(ctest --test-dir "$build_dir" -N -LE "$known_labels" | sed -n 's/^Total Tests: //p')
if [ "${unknown:-0}" -ne 0 ]; then
  ctest --test-dir "$build_dir" -N -LE "$known_labels" >&2
  echo "scripts/test.sh: $unknown tests have no label of $known_labels (tests/CMakeLists.txt)" >&2
  exit 1
fi
run_ctest -L "$parallel_labels" -j "$(nproc)"
run_ctest -L "$serial_labels" -j 1
