#!/usr/bin/env bash
# Benchmarks hacoboot-sampler against the reference bpftrace script
# (bench/reference.bt) and prints one table; see BENCHMARKS.md.
#
#   sudo scripts/bench.sh            # full run: several alternating repetitions (~10 min)
#   sudo scripts/bench.sh --quick    # one short repetition of each (CI smoke run, ~1 min)
#
# Installs packages only through scripts/setup.sh, and only as root
# (HACOBOOT_SKIP_SETUP=1 skips it); builds into ${BUILD_DIR:-build-bench}.
# Benchmarks report, they do not fail: the exit status is 0 whether goals are
# met or not (non-zero only when the build fails). Without root only the
# user-side pipeline benchmark runs. Extra arguments go to bench/bench.py
# (--keep keeps every command's output).
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${HACOBOOT_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh --when-root

build_dir="${BUILD_DIR:-build-bench}"
cmake -S . -B "$build_dir" -DHACOBOOT_BUILD_TESTS=OFF -DHACOBOOT_BUILD_BENCH=ON >/dev/null
cmake --build "$build_dir" -j "$(nproc)" >/dev/null

exec python3 bench/bench.py --build-dir "$build_dir" "$@"
