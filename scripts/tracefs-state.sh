#!/bin/sh
# Runs a command (as root) in a private mount namespace where tracefs is
# mounted, or where it is not, whatever the host's own state: the tests and
# benchmarks that depend on it run in both states this way, and the host's
# mounts are left alone.
#
#   scripts/tracefs-state.sh mounted   COMMAND [ARG...]
#   scripts/tracefs-state.sh unmounted COMMAND [ARG...]
#
# mounted: the host's tracefs when it has one, else one mounted at
# /sys/kernel/tracing. unmounted: nothing at /sys/kernel/tracing, and no
# debugfs either (its tracing/ directory mounts tracefs when looked at).
set -eu

if [ $# -ge 2 ] && [ "$1" = mounted ]; then
  setup='[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing'
elif [ $# -ge 2 ] && [ "$1" = unmounted ]; then
  # shellcheck disable=SC2016 # expanded by the shell in the namespace
  setup='for point in /sys/kernel/tracing /sys/kernel/debug; do
           while mountpoint -q "$point"; do umount --lazy "$point"; done
         done'
else
  echo "usage: $0 mounted|unmounted COMMAND [ARG...]" >&2
  exit 2
fi
shift
exec unshare --mount --propagation private sh -euc "$setup"'
  exec "$@"' tracefs-state "$@"
