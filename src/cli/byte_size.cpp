#include "cli/byte_size.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <utility>

#include "util/text.hpp"

namespace hacoboot {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, unsigned>, 10> kSuffixes{{
      {"", 0},
      {"B", 0},
      {"K", 10},
      {"KiB", 10},
      {"M", 20},
      {"MiB", 20},
      {"G", 30},
      {"GiB", 30},
      {"KB", 10},
      {"MB", 20},
  }};
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || value == 0) return std::nullopt;
  const std::string_view suffix(ptr, static_cast<std::size_t>(end - ptr));
  for (const auto& [name, shift] : kSuffixes) {
    if (!iequals(name, suffix)) continue;
    if (value > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
    return value << shift;
  }
  return std::nullopt;
}

}  // namespace hacoboot
