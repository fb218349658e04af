#!/usr/bin/env bash
# How the BPF object builds, on a copy of the source tree in WORK_DIR (the
# tree under test is never touched):
#   without-host-btf  configure with Ninja and build the skeleton in a private
#                     mount namespace where /sys/kernel/btf is empty: the build
#                     must not need the build machine's kernel BTF.
#   header-rebuilds   after that build, touch the contract header shared with
#                     the C++ decoder: Ninja must plan to recompile the object.
#   no-checkout-path  that build's object, which the skeleton embeds, names
#                     neither the copy's path nor its build's: every clone
#                     generates the same skeleton.
# Usage: tests/bpf_build_test.sh STEP SOURCE_DIR WORK_DIR (ctest -L build runs it)
set -euo pipefail

usage() {
  echo "usage: $0 without-host-btf|header-rebuilds|no-checkout-path SOURCE_DIR WORK_DIR" >&2
  exit 2
}
[ $# -eq 3 ] || usage
step=$1
source_dir=$2
work_dir=$3
tree=$work_dir/src
build=$work_dir/build
object_step='Compiling BPF object hacoboot.bpf.o'

# CI (HACOBOOT_REQUIRE_BPF=1) turns a skip into a failure, as the BPF tests do.
skip() {
  if [ "${HACOBOOT_REQUIRE_BPF:-0}" = 1 ]; then
    echo "$* (HACOBOOT_REQUIRE_BPF=1: not skipping)" >&2
    exit 1
  fi
  echo "skipped: $*"
  exit 77
}

# The sources without build directories (any directory holding a CMakeCache.txt).
copy_tree() {
  rm -rf "$work_dir"
  mkdir -p "$tree"
  for entry in "$source_dir"/*; do
    [ -e "$entry" ] || continue
    [ -e "$entry/CMakeCache.txt" ] && continue
    cp -r "$entry" "$tree/"
  done
}

case $step in
without-host-btf)
  [ "$(id -u)" -eq 0 ] || skip "hiding /sys/kernel/btf needs root (a private mount namespace)"
  command -v ninja >/dev/null || skip "ninja is not installed (ninja-build)"
  copy_tree
  # shellcheck disable=SC2016 # $1 and $2 are the inner shell's arguments
  unshare --mount --propagation private sh -euc '
    mount -t tmpfs none /sys/kernel/btf
    test ! -e /sys/kernel/btf/vmlinux
    cmake -S "$1" -B "$2" -G Ninja -DHACOBOOT_BUILD_TESTS=OFF -DHACOBOOT_BUILD_BENCH=OFF >/dev/null
    cmake --build "$2" --target hacoboot_skeleton_gen
  ' sh "$tree" "$build"
  test -s "$build/bpf-gen/hacoboot.skel.h"
  ;;
header-rebuilds)
  [ -f "$build/build.ninja" ] || skip "no Ninja build from without-host-btf"
  plan=$(ninja -C "$build" -n hacoboot_skeleton_gen)
  if grep -q "$object_step" <<<"$plan"; then
    echo "the object is out of date before the header changes" >&2
    exit 1
  fi
  touch "$tree/include/hacoboot/contract.h"
  plan=$(ninja -C "$build" -n -d explain hacoboot_skeleton_gen 2>&1)
  if ! grep -q "$object_step" <<<"$plan"; then
    echo "touching include/hacoboot/contract.h leaves the BPF object as it is:" >&2
    echo "$plan" >&2
    exit 1
  fi
  ;;
no-checkout-path)
  object=$build/bpf-gen/hacoboot.bpf.o
  [ -f "$object" ] || skip "no BPF object from without-host-btf"
  if grep -qaF "$work_dir" "$object"; then
    echo "the BPF object holds the path of the tree it was built from ($work_dir):" >&2
    grep -aoF "$work_dir" "$object" | sort | uniq -c >&2
    exit 1
  fi
  ;;
*)
  usage
  ;;
esac
