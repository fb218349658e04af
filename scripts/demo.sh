#!/usr/bin/env bash
# Installs what is needed, builds, then traces 20 boots of the bundled demo
# launcher (a stand-in for Haconiwa that fires the same USDT probe) and prints
# the summary. Extra arguments go to hacoboot-sampler, e.g. --format json.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "the demo loads BPF programs: run it as root (sudo $0)" >&2
  exit 1
fi
[ "${HACOBOOT_SKIP_SETUP:-0}" = 1 ] || scripts/setup.sh
scripts/build.sh >/dev/null

build_dir=$(pwd)/${BUILD_DIR:-build}
launcher=$build_dir/demo/hacoboot-launcher
app=$build_dir/demo/hacoboot-demo-app
boots=${BOOTS:-20}
exec "$build_dir/hacoboot-sampler" --haconiwa "$launcher" \
  --run "$launcher --boots $boots --parallel 2 -- $app --listen-from grandchild" \
  "$@" "$app"
