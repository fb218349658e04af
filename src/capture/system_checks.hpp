#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capture/usdt_probe.hpp"

namespace hacoboot {

// Checks made before loading anything, so that a missing prerequisite is
// named instead of surfacing as a bare errno from the kernel.

// The kernel's own BTF: what CO-RE reads the kernel's types from.
inline constexpr const char* kKernelBtf = "/sys/kernel/btf/vmlinux";

// What the shell would run for NAME (without a '/'): the first executable
// regular file NAME in $PATH's directories (an empty entry is the current
// directory), then in `also_in`'s.
std::optional<std::string> find_executable(const std::string& name, const std::vector<std::string>& also_in = {});

// The haconiwa binary to attach to: NAME itself when it holds a '/', else
// find_executable(NAME). Throws HaconiwaNotFound saying what was looked up
// where when there is none.
std::string resolve_haconiwa(const std::string& name);

// Throws UsageError unless PATH is a native ELF with haconiwa:bootstrap_phase_pass;
// returns that probe's sites (their notes), which the tracer attaches to.
std::vector<UsdtProbe> require_phase_probe(const std::string& path);

// Throws RuntimeError unless the kernel exposes its BTF (CO-RE needs it).
void require_kernel_btf();

// Throws RuntimeError unless this process may load and attach tracing programs.
void require_bpf_privileges();

}  // namespace hacoboot
