#!/usr/bin/env bash
# Times the README's first run, `sudo scripts/demo.sh`, on a fresh Debian 12
# machine: a pristine bookworm root (scripts/fresh-root.sh) holding a copy of
# this checkout's files, as a clone has them. Prints the demo's summary, then
# the total time and its two parts: the package installation
# (scripts/setup.sh --demo, which demo.sh runs first) and the build and trace.
# As root; the root is made in $ROOT_DIR (default build-fresh/demo-root).
# Arguments go to scripts/demo.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${ROOT_DIR:-build-fresh/demo-root}

scripts/fresh-root.sh make "$root"
mkdir "$root/src"
# Tracked and new files, edits included; no build trees.
git ls-files -z --cached --others --exclude-standard | tar --null -T - -c | tar -x -C "$root/src"
cat >"$root/first-run" <<'EOF'
#!/bin/bash
set -euo pipefail
cd /src
start=$EPOCHREALTIME
scripts/setup.sh --demo
installed=$EPOCHREALTIME
HACOBOOT_SKIP_SETUP=1 scripts/demo.sh "$@"
end=$EPOCHREALTIME
awk -v s="$start" -v i="$installed" -v e="$end" \
  'BEGIN { printf "first run: %.0f s (packages %.0f s, build and trace %.0f s)\n", e - s, i - s, e - i }' >&2
EOF
chmod +x "$root/first-run"
scripts/fresh-root.sh run "$root" /first-run "$@"
