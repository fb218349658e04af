#!/usr/bin/env bash
# Benchmarks hacoboot-sampler against the reference bpftrace script
# (bench/reference.bt) and prints one table; see BENCHMARKS.md.
#
#   sudo scripts/bench.sh            # full run: several alternating repetitions (~10 min)
#   sudo scripts/bench.sh --quick    # one short repetition of each (CI smoke run, ~1 min)
#   sudo scripts/bench.sh --previous REV   # also the tool as of git revision REV,
#                                          # side by side in rows 1, 4, 7, 10 and 11
#   sudo scripts/bench.sh --gate-rates     # how often the regression gate is right,
#                                          # quiet and under load (~15 min; bench/gate_rates.py)
#   sudo scripts/bench.sh --step-rates     # how often the gate names the step that moved,
#                                          # and never one that did not (~15 min; bench/step_rates.py)
#   sudo scripts/bench.sh --step-rates --interleave   # the same, each run's boots alternated
#                                          # with its baseline's, two tracers at once (~15 min)
#   sudo scripts/bench.sh --step-rates --interleave --boots 80   # as BENCHMARKS.md's
#                                          # current step rates (~1 h; --conditions and
#                                          # --loads choose some, --help lists them)
#
# Installs packages only through scripts/setup.sh, and only as root
# (HACOBOOT_SKIP_SETUP=1 skips it); builds into ${BUILD_DIR:-build-bench}
# (REV's tool into its previous-REV/). Benchmarks report, they do not fail:
# the exit status is 0 whether goals are met or not (non-zero only when a
# build fails). Without root only the user-side pipeline benchmark runs.
# Other arguments go to bench/bench.py (--keep keeps every command's output).
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${HACOBOOT_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh --when-root

build_dir="${BUILD_DIR:-build-bench}"
# A build directory of its own is made without the tests; one that exists
# (CI's main build) keeps them, and gets the benchmarks.
tests=()
[ -f "$build_dir/CMakeCache.txt" ] || tests=(-DHACOBOOT_BUILD_TESTS=OFF)
cmake -S . -B "$build_dir" "${tests[@]}" -DHACOBOOT_BUILD_BENCH=ON >/dev/null
cmake --build "$build_dir" -j "$(nproc)" >/dev/null

case "${1:-}" in
  --gate-rates | --step-rates)
    rates=${1#--}
    shift
    exec python3 "bench/${rates//-/_}.py" --build-dir "$build_dir" "$@"
    ;;
esac

args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --previous ]; then
    [ $# -ge 2 ] || { echo "scripts/bench.sh: --previous needs a git revision" >&2; exit 2; }
    # The revision's own tree, from git: the working tree is left alone.
    previous="$build_dir/previous-$2"
    mkdir -p "$previous/src"
    git archive "$2" | tar -x -C "$previous/src"
    cmake -S "$previous/src" -B "$previous/build" -DHACOBOOT_BUILD_TESTS=OFF -DHACOBOOT_BUILD_BENCH=OFF >/dev/null
    cmake --build "$previous/build" -j "$(nproc)" --target hacoboot-sampler >/dev/null
    args+=(--previous-sampler "$previous/build/hacoboot-sampler")
    shift 2
  else
    args+=("$1")
    shift
  fi
done

exec python3 bench/bench.py --build-dir "$build_dir" "${args[@]}"
