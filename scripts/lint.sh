#!/usr/bin/env bash
# clang-format and clang-tidy over the project's own sources (configs in the
# repository), and pyflakes over its Python.
#
#   scripts/lint.sh            # all, the quick ones first: a slip fails in seconds
#   scripts/lint.sh --format   # clang-format, the layering of includes, pyflakes: no build needed
#   scripts/lint.sh --tidy     # clang-tidy only
#
# clang-tidy reads the compile database of $BUILD_DIR (default build/), which
# must be configured and built (src/capture includes the generated BPF
# skeleton). TIDY_JOBS: parallel clang-tidy runs (default: nproc).
# HACOBOOT_TIDY_CACHE: a directory where files that passed are remembered, so
# that unchanged code is not linted again (see scripts/tidy.py).
set -euo pipefail
cd "$(dirname "$0")/.."

format() {
  mapfile -t cxx < <(git ls-files 'src/*.cpp' 'src/*.hpp' 'cmake/*.cpp' 'demo/*.cpp' 'demo/*.hpp' 'tests/*.cpp' 'tests/*.hpp')
  mapfile -t c < <(git ls-files 'bpf/*.c' 'bpf/*.h' 'include/*.h')
  clang-format --dry-run -Werror "${cxx[@]}" "${c[@]}"
  scripts/check-layering.sh
  # Debian's pyflakes (unused imports, undefined names), not style: the
  # Python is a few tools and tests, held to what breaks them.
  mapfile -t py < <(git ls-files '*.py')
  pyflakes3 "${py[@]}"
}

# The pure core and the system layer; tests and the demo are held to format only.
tidy() {
  local build_dir=${BUILD_DIR:-build}
  # clang-tidy 14 runs its matchers over every system header, which 22 no
  # longer traverses: most of its time (CONTRIBUTING.md).
  if ! command -v clang-tidy-22 >/dev/null; then
    echo "lint: clang-tidy-22 not found: scripts/setup.sh installs it (Debian 12's security suite)" >&2
    exit 1
  fi
  if [[ ! -f $build_dir/compile_commands.json ]]; then
    echo "lint: no $build_dir/compile_commands.json: configure and build first (scripts/build.sh)," \
      "clang-tidy also needs the BPF skeleton header the build generates" >&2
    exit 1
  fi
  mapfile -t files < <(git ls-files 'src/*.cpp')
  scripts/tidy.py "$build_dir" "${files[@]}"
}

case ${1:-} in
  --format) format ;;
  --tidy) tidy ;;
  '')
    format
    tidy
    ;;
  *)
    echo "usage: scripts/lint.sh [--format | --tidy]" >&2
    exit 2
    ;;
esac
echo "lint: clean"
