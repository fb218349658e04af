#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hacoboot {

// One SystemTap SDT probe, as described by a .note.stapsdt ELF note.
struct UsdtProbe {
  std::string provider;
  std::string name;
  std::string arguments;  // e.g. "-8@%rdi -8@%rsi"
  std::uint64_t address = 0;
  std::uint64_t semaphore = 0;
};

// The USDT probes of a native ELF binary. Throws UsageError naming the file
// when it is missing, not a regular file, not ELF, or built for another
// architecture or word size.
std::vector<UsdtProbe> read_usdt_probes(const std::string& path);

}  // namespace hacoboot
