#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace hacoboot {

// ASCII case-insensitive equality, for names users type (phases, formats).
inline bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
  });
}

}  // namespace hacoboot
