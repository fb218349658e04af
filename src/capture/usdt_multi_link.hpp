#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capture/usdt_arg_location.hpp"
#include "capture/usdt_probe.hpp"
#include "util/expected.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {

// The phase probe attached as one uprobe_multi BPF link (Linux 6.6+) rather
// than libbpf's one perf uprobe per probe site. Why: closing a perf uprobe
// waits for three RCU grace periods under the kernel's global event_mutex
// (serialized with the syscall tracepoints' teardown; BENCHMARKS.md), while
// a uprobe_multi link is released after one grace period, alongside the
// rest. Part of the loader (tracer.cpp): libbpf's USDT spec map is filled
// here the way libbpf's own attach fills it, so the BPF side keeps reading
// its arguments with bpf_usdt_arg().
struct UsdtMultiAttach {
  struct Site {
    std::uint64_t file_offset = 0;
    std::uint64_t semaphore_file_offset = 0;  // 0: none
    std::vector<UsdtArgLocation> arguments;
  };
  std::string binary;  // the path the kernel resolves: /proc/self/fd/N of the file read
  std::string name;    // the binary as the user named it, for messages
  std::vector<Site> sites;
};

// Whether the running kernel has uprobe_multi links (asked once: a probe program is loaded).
bool kernel_has_uprobe_multi();

// The phase probe's `sites` in `binary` (require_phase_probe), planned for
// the link, or why they cannot be attached this way (then libbpf attaches them).
Expected<UsdtMultiAttach> plan_usdt_multi_attach(const std::string& binary, const std::string& name,
                                                 const std::vector<UsdtProbe>& sites);

// Linux 6.6's BPF_TRACE_UPROBE_MULTI, newer than the uapi headers of libbpf
// 1.1 and Debian 12: the attach type a program is loaded with to take the link.
inline constexpr int kUprobeMultiAttachType = 48;

// Writes each site's argument locations into libbpf's spec map (entry
// first_spec_id + i for site i, its BPF cookie: a second binary's sites
// follow the first's) and creates the link; or why not. Throws
// UprobeMultiError when this libbpf's spec map is not the one it knows: no
// link of this build could work.
Expected<UniqueFd> attach_usdt_multi(int program_fd, int spec_map_fd, std::size_t spec_value_size,
                                     const UsdtMultiAttach& plan, std::uint32_t first_spec_id);

}  // namespace hacoboot
