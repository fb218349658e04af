#!/usr/bin/env bash
# Installs the Debian 12 packages hacoboot-sampler needs. The single list used
# by the README, scripts/*.sh and CI:
#
#   scripts/setup.sh           # everything: build, tests and checks, benchmarks
#   scripts/setup.sh --demo    # only what building and running the tool and the demo need
#   scripts/setup.sh --when-root [--demo]   # the same, or nothing (with a note) when not root
set -euo pipefail

# What scripts/demo.sh needs: on a fresh machine their download and unpacking
# are part of the README's first run, so nothing else belongs here.
build_packages=(
  cmake make pkg-config
  clang          # BPF target compiler, and the demo's C++ compiler (g++ is the tests')
  bpftool        # skeleton generation
  libbpf-dev libelf-dev zlib1g-dev
  libseccomp-dev      # syscall names by number
  libcli11-dev libfmt-dev nlohmann-json3-dev
  libcpp-httplib-dev  # the metrics endpoint
  systemtap-sdt-dev   # <sys/sdt.h> for the demo launcher's USDT probe
)
check_packages=(
  # tests and checks
  g++            # the compiler of the tests and of CI
  ninja-build    # the build tests (ctest -L build): Ninja follows the BPF depfile
  googletest libgtest-dev
  clang-format clang-tidy-22   # from bookworm-security: clang-tidy 14 checks every system header, twice as slow
  python3-pyflakes  # pyflakes3: the Python check of scripts/lint.sh --format
  groff-base mandoc   # the man page check (ctest -L docs)
  bash-completion     # the completion test also runs over bash-completion's helpers
  bpftrace       # the reference tracer, compared against in the integration tests
  strace         # syscall counts per step are compared against strace -f's
  prometheus     # promtool checks the metrics exposition; the exporter test scrapes with the server
  prometheus-node-exporter  # the exporter test reads --textfile through its textfile collector
  chromium       # renders the --timeline SVG headless in the integration tests
  python3-junitparser  # reads --gate-junit as CI systems do (tests/support/junit_cases.py)
  debootstrap    # a fresh Debian root: the package test (ctest -L package), scripts/first-run-time.sh
  dpkg-dev       # dpkg-shlibdeps: CPack computes the package's dependencies with it
  systemd        # systemd-analyze verifies the service unit and scores its exposure
  ccache         # CI's compiler cache, kept across runs (.ci/run)
  # benchmarks (scripts/bench.sh)
  libbenchmark-dev
)

when_root=0
packages=("${build_packages[@]}" "${check_packages[@]}")
for arg in "$@"; do
  case $arg in
    --when-root) when_root=1 ;;
    --demo) packages=("${build_packages[@]}") ;;
    *) echo "usage: $0 [--when-root] [--demo]" >&2; exit 2 ;;
  esac
done

# --when-root: scripts that also work unprivileged skip the install then.
if [ "$(id -u)" -ne 0 ]; then
  if [ "$when_root" = 1 ]; then
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
