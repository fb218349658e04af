#!/usr/bin/env bash
# The Debian package as an operator gets it: builds the .deb
# (scripts/package.sh), installs it with apt into a fresh Debian 12 minbase
# root that has none of the build dependencies (apt fetches its dependencies
# from the mirror), runs the installed tool there (--version, --check, its man
# page, --serve, a traced run of the demo launcher), checks the installed unit
# (tests/systemd_unit_test.sh), purges the package and checks that nothing of
# it is left.
#
#   tests/package_test.sh SOURCE_DIR WORK_DIR [BUILD_DIR]
#
# BUILD_DIR: a build configured for /usr to package as it is (CI's main
# build); without it the package is built in WORK_DIR/build. Root, and the
# network to the Debian mirror. The first run debootstraps the root and keeps
# it as a tarball in WORK_DIR (or $HACOBOOT_FRESH_ROOT_TARBALL), which later
# runs unpack.
set -euo pipefail
source_dir=$1
work=$2
build=${3:-}
if [ "$(id -u)" -ne 0 ]; then
  echo "package test: needs root (debootstrap, mount, chroot): skipped"
  exit 77
fi
start=$SECONDS
step() { echo "--- $* ($((SECONDS - start)) s)"; }

step "building the package"
mkdir -p "$work"
if [ -n "$build" ]; then
  deb=$(BUILD_DIR="$build" "$source_dir/scripts/package.sh" --built)
else
  build=$work/build
  deb=$(BUILD_DIR="$build" "$source_dir/scripts/package.sh")
fi
echo "$deb"
demo=$build/demo

step "a fresh Debian 12 root"
root=$work/root
"$source_dir/scripts/fresh-root.sh" make "$root"
in_root() { "$source_dir/scripts/fresh-root.sh" run "$root" "$@"; }
export DEBIAN_FRONTEND=noninteractive
in_root apt-get update -qq
# man -w below needs man-db; installed before the first file list, it is no
# change of the package's.
in_root apt-get install -y -qq --no-install-recommends man-db >/dev/null

# Every path of the root but what apt, dpkg and man-db keep about themselves,
# logs, temporary files, the demo and the mounted file systems.
file_list() {
  (cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp -o -path ./var/tmp \
    -o -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./var/cache/apt -o -path ./var/cache/debconf \
    -o -path ./var/cache/man -o -path ./var/log -o -path ./opt/hacoboot-demo \) -prune -o -print | sort)
}
file_list >"$work/files-before"

step "apt-get install ./$(basename "$deb")"
cp "$deb" "$root/tmp/"
in_root apt-get install -y -qq "/tmp/$(basename "$deb")" >/dev/null
mkdir -p "$root/opt/hacoboot-demo"
cp "$demo/hacoboot-launcher" "$demo/hacoboot-demo-app" "$root/opt/hacoboot-demo/"

step "the installed tool"
in_root hacoboot-sampler --version
launcher=/opt/hacoboot-demo/hacoboot-launcher
app=/opt/hacoboot-demo/hacoboot-demo-app
in_root hacoboot-sampler --check --haconiwa "$launcher" >"$work/check.out" 2>&1 || { cat "$work/check.out"; exit 1; }
cat "$work/check.out"
tail -n 1 "$work/check.out" | grep -q '^ready to trace' || { echo "--check: not ready"; exit 1; }
man_page=$(in_root man -w hacoboot-sampler)
[ "$man_page" = /usr/share/man/man1/hacoboot-sampler.1.gz ] || { echo "man -w: $man_page"; exit 1; }
# The HTTP module is found from the installed binary's directory, or --serve would fail here.
in_root hacoboot-sampler --serve 127.0.0.1:0 --duration 200ms --quiet --haconiwa "$launcher" >/dev/null
in_root hacoboot-sampler --haconiwa "$launcher" --run "$launcher -n 3 -- $app" "$app" | tee "$work/summary.txt"
grep -q '^Boots: 3 started, 3 reached execve, 3 reached listen, 0 incomplete$' "$work/summary.txt"

step "the installed unit"
# The root has no systemd to verify with: the host's checks the installed unit,
# its ExecStart the installed binary.
"$source_dir/tests/systemd_unit_test.sh" "$root/lib/systemd/system/hacoboot-sampler.service" \
  "$root/usr/bin/hacoboot-sampler" "$source_dir/docs/deploying.md"

step "apt-get purge hacoboot-sampler"
# As an operator's `systemctl enable` would have left it.
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -s /lib/systemd/system/hacoboot-sampler.service "$root/etc/systemd/system/multi-user.target.wants/"
in_root apt-get purge -y -qq hacoboot-sampler >/dev/null
in_root apt-get autoremove --purge -y -qq >/dev/null
file_list >"$work/files-after"
if ! diff "$work/files-before" "$work/files-after" >"$work/files-left"; then
  echo "left by the package or its dependencies after the purge:"
  cat "$work/files-left"
  exit 1
fi
step "passed"
