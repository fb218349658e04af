#!/usr/bin/env bash
# Installs every Debian 12 package hacoboot-sampler needs to build, test and
# demo. The single list used by the README, scripts/*.sh and CI.
set -euo pipefail

packages=(
  # build
  cmake g++ make pkg-config
  clang          # BPF target compiler
  bpftool        # skeleton generation
  ninja-build    # the build tests (ctest -L build): Ninja follows the BPF depfile
  libbpf-dev libelf-dev zlib1g-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev
  libcpp-httplib-dev  # the metrics endpoint
  systemtap-sdt-dev   # <sys/sdt.h> for the demo launcher's USDT probe
  # tests and checks
  googletest libgtest-dev
  clang-format clang-tidy
  groff-base mandoc   # the man page check (ctest -L docs)
  bash-completion     # the completion test also runs over bash-completion's helpers
  bpftrace       # the reference tracer, compared against in the integration tests
  prometheus     # promtool checks the metrics exposition; the exporter test scrapes with the server
  prometheus-node-exporter  # the exporter test reads --textfile through its textfile collector
  chromium       # renders the --timeline SVG headless in the integration tests
  python3-junitparser  # reads --gate-junit as CI systems do (tests/support/junit_cases.py)
  # benchmarks (scripts/bench.sh)
  libbenchmark-dev
)

# --when-root: scripts that also work unprivileged skip the install then.
if [ "$(id -u)" -ne 0 ]; then
  if [ "${1:-}" = --when-root ]; then
    echo "setup: not root, not installing packages (sudo scripts/setup.sh installs them)" >&2
    exit 0
  fi
  echo "scripts/setup.sh installs packages with apt-get: run it as root (sudo $0)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "setup: ${#packages[@]} packages present"
