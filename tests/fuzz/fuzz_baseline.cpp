// libFuzzer target: --baseline JSON summaries, and the gate on what they hold.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gate/regression_gate.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto baseline = hacoboot::parse_baseline(text, "fuzz");
    const auto gate = hacoboot::compare_runs(baseline, baseline, hacoboot::GateConfig{});
    // Nothing regresses against itself.
    if (gate.outcome() == hacoboot::GateOutcome::Regressed) __builtin_trap();
  } catch (const hacoboot::UsageError&) {
  }
  return 0;
}
