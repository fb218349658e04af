// Reading integers from JSON that came from outside: nlohmann converts a
// float, or an integer out of the target's range, with a plain cast, which
// is undefined behaviour. Every reader of untrusted JSON reads through here.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace hacoboot {

// `value` as an Integer, or nothing when it is no integer within Integer's
// range (a float, a string, too large). nlohmann keeps every non-negative
// integer as unsigned, negative ones as signed.
template <typename Integer>
std::optional<Integer> json_integer(const nlohmann::json& value) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<Integer>::max());
  constexpr auto kMin = static_cast<std::int64_t>(std::numeric_limits<Integer>::min());
  const bool fits = value.is_number_unsigned()
                        ? value.get<std::uint64_t>() <= kMax
                        : std::is_signed_v<Integer> && value.is_number_integer() && value.get<std::int64_t>() >= kMin;
  if (!fits) return std::nullopt;
  return value.get<Integer>();
}

}  // namespace hacoboot
