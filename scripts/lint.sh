#!/usr/bin/env bash
# clang-format and clang-tidy over the project's own sources (configs in the
# repository). Needs a configured build dir for compile_commands.json.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}

mapfile -t cxx < <(git ls-files 'src/*.cpp' 'src/*.hpp' 'cmake/*.cpp' 'demo/*.cpp' 'demo/*.hpp' 'tests/*.cpp' 'tests/*.hpp')
mapfile -t c < <(git ls-files 'bpf/*.c' 'bpf/*.h')
clang-format --dry-run -Werror "${cxx[@]}" "${c[@]}"
# The pure core and the system layer; tests and the demo are held to format only.
mapfile -t tidy < <(git ls-files 'src/*.cpp' ':!src/capture/tracer.cpp')
clang-tidy -p "$build_dir" --quiet --warnings-as-errors='*' "${tidy[@]}" 2>/dev/null
# The analyzer follows tracer.cpp into the bpftool-generated skeleton and, not
# knowing that libbpf's bpf_object__destroy_skeleton() frees it, reports a
# leak on the skeleton's own error path: that one check is off for this file.
clang-tidy -p "$build_dir" --quiet --warnings-as-errors='*' --checks='-clang-analyzer-unix.Malloc' src/capture/tracer.cpp \
  2>/dev/null
echo "lint: clean"
