// Reading integers from JSON that came from outside: nlohmann converts a
// float, or an integer out of the target's range, with a plain cast, which
// is undefined behaviour. Every reader of untrusted JSON asks fits() first.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace hacoboot {

// Whether `value` is an integer within Integer's range. nlohmann keeps every
// non-negative integer as unsigned, negative ones as signed.
template <typename Integer>
bool fits(const nlohmann::json& value) {
  if constexpr (std::is_signed_v<Integer>) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<Integer>::max());
    return value.is_number_unsigned() ? value.get<std::uint64_t>() <= kMax : value.is_number_integer();
  } else {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<Integer>::max());
    return value.is_number_unsigned() && value.get<std::uint64_t>() <= kMax;
  }
}

}  // namespace hacoboot
