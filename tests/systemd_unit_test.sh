#!/usr/bin/env bash
# The exporter's service unit: `systemd-analyze verify` finds nothing to say
# about it, and `systemd-analyze security` rates its exposure no higher than
# docs/deploying.md records ("rates the unit **N LEVEL**"): a change that
# loosens the sandbox fails here until that page explains the new score.
#
#   tests/systemd_unit_test.sh UNIT SAMPLER DEPLOYING_MD
#
# SAMPLER: the built tool. verify checks that ExecStart's binary exists, so a
# copy of the unit runs it instead of the installed /usr/bin/hacoboot-sampler.
set -euo pipefail
unit=$1
sampler=$2
deploying=$3
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze not found (package systemd): skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy=$work/hacoboot-sampler.service
sed "s|/usr/bin/hacoboot-sampler|$sampler|" "$unit" >"$copy"

# verify warns about unknown or misplaced settings without failing: any output fails.
systemd-analyze verify --man=no "$copy" >"$work/verify.out" 2>&1 || true
if [ -s "$work/verify.out" ]; then
  cat "$work/verify.out"
  exit 1
fi

recorded=$(sed -n 's/.*rates the unit \*\*\([0-9.]*\) [A-Z]*\*\*.*/\1/p' "$deploying")
[ -n "$recorded" ] || { echo "$deploying: no recorded exposure (\"rates the unit **N LEVEL**\")"; exit 1; }
systemd-analyze security --offline=true --no-pager "$copy" >"$work/security.out" 2>&1 || true
score=$(sed -n 's/^→ Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p' "$work/security.out")
[ -n "$score" ] || { cat "$work/security.out"; exit 1; }
echo "exposure $score (recorded $recorded)"
if awk -v s="$score" -v r="$recorded" 'BEGIN { exit !(s > r) }'; then
  grep '✗' "$work/security.out"
  echo "the unit's exposure rose from $recorded to $score: say why in $deploying, or tighten it again"
  exit 1
fi
