#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace hacoboot {

// "500ms", "30s", "5m", "1h", "250us", "100ns"; a bare number is seconds.
// nullopt for anything else, zero, or a value that does not fit.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);

}  // namespace hacoboot
