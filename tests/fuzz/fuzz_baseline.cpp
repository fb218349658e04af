// libFuzzer target: --baseline JSON summaries.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "report/baseline.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto baseline = hacoboot::parse_baseline(text, "fuzz");
    const auto gate = hacoboot::compare_to_baseline(baseline, baseline, hacoboot::GateConfig{});
    if (gate.regressed()) __builtin_trap();  // nothing regresses against itself
  } catch (const hacoboot::UsageError&) {
  }
  return 0;
}
