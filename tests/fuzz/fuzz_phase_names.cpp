// libFuzzer target: --phase-names files.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hacoboot/errors.hpp"
#include "hacoboot/phases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto names = hacoboot::PhaseNames::parse(text, "fuzz");
    for (std::int64_t phase = 0; phase < 128; ++phase) {
      // Every name a file gives must lead back to a phase.
      if (names.name(phase).empty() || !names.find(names.name(phase))) __builtin_trap();
    }
  } catch (const hacoboot::UsageError&) {
  }
  return 0;
}
