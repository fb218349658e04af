#!/usr/bin/env bash
# A fresh Debian 12 machine in a directory, for the tests and measurements that
# must start from nothing (the package test, the demo's first-run time):
#
#   scripts/fresh-root.sh make DIR         # DIR becomes a pristine bookworm minbase root
#   scripts/fresh-root.sh tarball FILE     # only the tarball that make unpacks
#   scripts/fresh-root.sh run DIR CMD...   # CMD chrooted in DIR, with /proc, /sys, /dev
#
# make: debootstrap --variant=minbase from the host's mirror, with the host's
# apt sources; the result is kept as a tarball (DIR.tar, or
# $HACOBOOT_FRESH_ROOT_TARBALL: CI keeps one across runs) that later makes
# unpack in seconds instead of downloading it all again. A tarball is used
# only when it matches the checksum written beside it (FILE.sha256) and is
# younger than $HACOBOOT_FRESH_ROOT_MAX_DAYS (default 7: the mirror moves on,
# and an old root would test the package against old dependencies); else it
# is made again. Any DIR there was is replaced. run: the mounts are undone
# however CMD ends; DEBIAN_FRONTEND is passed in, nothing else of the
# environment. As root.
set -euo pipefail

usage() {
  echo "usage: $0 make DIR | tarball FILE | run DIR COMMAND [ARG...]" >&2
  exit 2
}

# The host's Debian mirror: the first URIs of its deb822 sources, else of its
# one-line sources.list.
host_mirror() {
  local mirror
  mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  echo "${mirror:-http://deb.debian.org/debian}"
}

mounts_under() {
  awk -v root="$(realpath "$1")" '$5 == root || index($5, root "/") == 1 { print $5 }' /proc/self/mountinfo
}
# Every mount at or below DIR, newest first (--lazy detaches the mounts below
# each too: /dev/pts).
unmount_under() {
  local point
  mounts_under "$1" | tac | while read -r point; do umount --lazy "$point" 2>/dev/null || true; done
}
# A run killed outright (SIGKILL: a test runner's timeout) leaves its mounts,
# host directories among them: undone before anything under DIR is deleted,
# and DIR is kept if one stays.
unmount_leftovers() {
  unmount_under "$1"
  if [ -n "$(mounts_under "$1")" ]; then
    echo "$0: still mounted under $1, not deleting it: $(mounts_under "$1" | tr '\n' ' ')" >&2
    exit 1
  fi
}

# Whether TARBALL can be unpacked as it is: its checksum matches, and it is
# not older than the mirror's changes may be let go.
tarball_usable() {
  local tarball=$1 max_days=${HACOBOOT_FRESH_ROOT_MAX_DAYS:-7}
  [ -f "$tarball" ] && [ -f "$tarball.sha256" ] || return 1
  if [ -n "$(find "$tarball" -mtime "+$((max_days - 1))")" ]; then
    echo "$0: $tarball is older than $max_days days: made again" >&2
    return 1
  fi
  (cd "$(dirname "$tarball")" && sha256sum --quiet --check "$(basename "$tarball").sha256") || {
    echo "$0: $tarball does not match its checksum: made again" >&2
    return 1
  }
}

# A pristine root in DIR, from the mirror.
bootstrap() {
  local root=$1
  debootstrap --variant=minbase bookworm "$root" "$(host_mirror)" >"$root.debootstrap.log" 2>&1 || {
    tail -20 "$root.debootstrap.log" >&2
    exit 1
  }
  # The host's suites (updates, security) and mirror, as a real machine has.
  rm -f "$root/etc/apt/sources.list"
  cp -a /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/"
  [ ! -f /etc/apt/sources.list ] || cp /etc/apt/sources.list "$root/etc/apt/"
  cp /etc/resolv.conf "$root/etc/"
  # Only apt's lists are missing then: apt-get update is part of every first run.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
}

# TARBALL, usable (tarball_usable), made from a new root when it was not.
make_tarball() {
  local tarball=$1 scratch
  tarball_usable "$tarball" && return
  mkdir -p "$(dirname "$tarball")"
  scratch=$(mktemp -d "$tarball.root.XXXXXX")
  bootstrap "$scratch"
  tar -cf "$tarball.tmp" -C "$scratch" .
  rm -rf --one-file-system "$scratch" "$scratch.debootstrap.log"
  (cd "$(dirname "$tarball")" && sha256sum "$(basename "$tarball").tmp" | sed 's/\.tmp$//' >"$(basename "$tarball").sha256")
  mv "$tarball.tmp" "$tarball"
}

make_root() {
  local root=$1 tarball=${HACOBOOT_FRESH_ROOT_TARBALL:-$1.tar}
  [ ! -d "$root" ] || unmount_leftovers "$root"
  rm -rf --one-file-system "$root"
  make_tarball "$tarball"
  mkdir -p "$root"
  tar -xf "$tarball" -C "$root"
}

run_in_root() {
  local root=$1
  shift
  # shellcheck disable=SC2064 # the root as it is now: the trap runs after this function
  trap "unmount_under $(printf %q "$root")" EXIT
  # A mount point as a machine's / is (the demo launcher makes it private).
  mount --bind "$root" "$root"
  mount --make-private "$root"
  mount -t proc proc "$root/proc"
  # Read-only: nothing inside may change the host's kernel settings.
  mount --bind -o ro /sys "$root/sys"
  # With /dev/pts, which apt wants for its log.
  mount --rbind /dev "$root/dev"
  mount --make-rslave "$root/dev"
  # A clean environment, as a login has; the caller's apt front end passes.
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    ${DEBIAN_FRONTEND:+DEBIAN_FRONTEND="$DEBIAN_FRONTEND"} "$@"
}

[ $# -ge 2 ] || usage
[ "$(id -u)" -eq 0 ] || { echo "$0: debootstrap, mount and chroot need root" >&2; exit 1; }
case $1 in
  make) [ $# -eq 2 ] || usage; make_root "$2" ;;
  tarball) [ $# -eq 2 ] || usage; make_tarball "$2" ;;
  run) [ $# -ge 3 ] || usage; shift; run_in_root "$@" ;;
  *) usage ;;
esac
