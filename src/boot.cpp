#include "hacoboot/boot.hpp"

namespace hacoboot {

std::optional<std::uint64_t> BootRecord::since_start(std::uint64_t ts_ns) const {
  if (!start_ns || ts_ns < *start_ns) return std::nullopt;
  return ts_ns - *start_ns;
}

std::optional<std::int64_t> BootRecord::last_phase() const {
  if (phases.empty()) return std::nullopt;
  return phases.back().phase;
}

}  // namespace hacoboot
