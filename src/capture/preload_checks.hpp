#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture_errors.hpp"
#include "capture/usdt_probe.hpp"
#include "util/expected.hpp"

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
// find_executable(NAME); or what was looked up where (the check reports it).
Expected<std::string, HaconiwaMissing> find_haconiwa(const std::string& name);
// The same, throwing HaconiwaNotFound when there is none: a run cannot start.
std::string resolve_haconiwa(const std::string& name);

// Throws UsageError unless PATH is a native ELF with haconiwa:bootstrap_phase_pass;
// returns that probe's sites (their notes), which the tracer attaches to.
std::vector<UsdtProbe> require_phase_probe(const std::string& path);
// The phase probe's sites among `probes` of binary `name`, or why there are none.
Expected<std::vector<UsdtProbe>> phase_probe_sites(std::vector<UsdtProbe> probes, const std::string& name);

// The kernel types CO-RE reads: `btf_file` (--btf) when given, else the
// kernel's own. Throws UsageError when btf_file is no BTF, RuntimeError when
// the kernel has none (built without CONFIG_DEBUG_INFO_BTF) and none is given.
void require_kernel_btf(const std::string& btf_file);

// The capabilities the tool asks about (capability numbers of linux/capability.h).
enum class Capability : std::uint8_t {
  DacReadSearch = 2,
  Kill = 5,
  SysPtrace = 19,
  SysAdmin = 21,
  Perfmon = 38,
  Bpf = 39
};
const char* capability_name(Capability capability);  // "CAP_BPF"

// This process's effective capabilities.
class Capabilities {
 public:
  static Capabilities effective();
  explicit Capabilities(std::uint64_t mask) : mask_(mask) {}
  [[nodiscard]] bool has(Capability capability) const { return ((mask_ >> static_cast<int>(capability)) & 1U) != 0; }
  // Load and attach tracing programs: CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN.
  [[nodiscard]] bool may_trace() const {
    return has(Capability::SysAdmin) || (has(Capability::Bpf) && has(Capability::Perfmon));
  }

 private:
  std::uint64_t mask_;
};

// Throws RuntimeError unless this process may load and attach tracing programs.
void require_bpf_privileges();

}  // namespace hacoboot
