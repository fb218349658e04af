#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test: unit tests always,
# BPF integration tests when root (they skip otherwise, or fail when
# HACOBOOT_REQUIRE_BPF=1, as in CI).
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${HACOBOOT_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh --when-root
scripts/build.sh
# CTEST_ARGS: extra ctest arguments (CI leaves the load tests out of the sanitizer run).
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j 1 ${CTEST_ARGS:-}
