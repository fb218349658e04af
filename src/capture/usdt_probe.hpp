#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hacoboot {

// One SystemTap SDT probe, as described by a .note.stapsdt ELF note. Plain
// data: read by read_usdt_probes (usdt_notes.hpp, libelf), printed by the
// pure core (probe_listing.hpp).
struct UsdtProbe {
  std::string provider;
  std::string name;
  std::string arguments;        // e.g. "-8@%rdi -8@%rsi"
  std::uint64_t address = 0;    // link-time address of the probe site
  std::uint64_t semaphore = 0;  // link-time address of its semaphore; 0: none
  // Where the kernel's uprobe attaches: the offsets in the file of the probe
  // site and of the semaphore (0: none, or not in the file's segments).
  std::uint64_t file_offset = 0;
  std::uint64_t semaphore_file_offset = 0;
};

// The probe hacoboot-sampler attaches to: arg0 = phase, arg1 = hpid.
inline constexpr std::string_view kPhaseProbeProvider = "haconiwa";
inline constexpr std::string_view kPhaseProbeName = "bootstrap_phase_pass";

inline bool is_phase_probe(const UsdtProbe& probe) {
  return probe.provider == kPhaseProbeProvider && probe.name == kPhaseProbeName;
}

}  // namespace hacoboot
