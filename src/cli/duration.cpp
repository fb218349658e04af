#include "cli/duration.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <utility>

namespace hacoboot {

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::int64_t>, 7> kUnits{{
      {"ns", 1},
      {"us", 1'000},
      {"ms", 1'000'000},
      {"s", 1'000'000'000},
      {"m", 60'000'000'000},
      {"h", 3'600'000'000'000},
      {"", 1'000'000'000},
  }};
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || value <= 0) return std::nullopt;
  const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    if (value > std::numeric_limits<std::int64_t>::max() / scale) return std::nullopt;
    return std::chrono::nanoseconds(value * scale);
  }
  return std::nullopt;
}

}  // namespace hacoboot
