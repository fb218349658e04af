#pragma once

#include <string>
#include <vector>

#include "capture/usdt_probe.hpp"

namespace hacoboot {

// Checks made before loading anything, so that a missing prerequisite is
// named instead of surfacing as a bare errno from the kernel.

// The haconiwa binary to attach to: NAME itself when it holds a '/', else the
// first executable regular file NAME in $PATH. Throws UsageError saying what
// was looked up where when there is none.
std::string resolve_haconiwa(const std::string& name);

// Throws UsageError unless PATH is a native ELF with haconiwa:bootstrap_phase_pass;
// returns that probe's sites (their notes), which the tracer attaches to.
std::vector<UsdtProbe> require_phase_probe(const std::string& path);

// Throws RuntimeError unless the kernel exposes its BTF (CO-RE needs it).
void require_kernel_btf();

// Throws RuntimeError unless this process may load and attach tracing programs.
void require_bpf_privileges();

}  // namespace hacoboot
