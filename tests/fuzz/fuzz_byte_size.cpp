// libFuzzer target: --ringbuf-size text.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/byte_size.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto bytes = hacoboot::parse_byte_size(text);
  if (!bytes) return 0;
  // An accepted size is its leading number times a power of 1024, never 0.
  std::uint64_t number = 0;
  std::from_chars(text.data(), text.data() + text.size(), number);
  if (number == 0 || *bytes % number != 0) __builtin_trap();
  const auto unit = *bytes / number;
  if (unit != 1 && unit != std::uint64_t{1} << 10 && unit != std::uint64_t{1} << 20 && unit != std::uint64_t{1} << 30) {
    __builtin_trap();
  }
  return 0;
}
