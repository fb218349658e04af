// libFuzzer target: --duration text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/duration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto duration = hacoboot::parse_duration(text); duration && duration->count() <= 0) __builtin_trap();
  return 0;
}
