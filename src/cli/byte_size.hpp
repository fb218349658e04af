#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hacoboot {

// "65536", "256K", "4M", "1G" (powers of 1024, case-insensitive, optional
// trailing "B" or "iB"); nullopt for anything else, zero, or an overflow.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace hacoboot
