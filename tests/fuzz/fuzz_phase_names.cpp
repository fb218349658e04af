// libFuzzer target: --phase-names files.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/phases.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto names = hacoboot::PhaseNames::parse(text, "fuzz");
    for (std::int64_t phase = 0; phase <= hacoboot::kMaxPhase; ++phase) {
      // Every name leads back to its own phase, and prints as itself.
      const auto name = names.name(phase);
      if (names.find(name) != phase || !hacoboot::check_phase_name(name)) __builtin_trap();
    }
  } catch (const hacoboot::UsageError&) {
  }
  return 0;
}
