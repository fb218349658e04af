#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace hacoboot {

// Haconiwa's bootstrap_phase_pass numbers (arg0 of the USDT probe).
inline constexpr std::int64_t kPhaseCliStart = 0;
inline constexpr std::int64_t kPhaseStartSupervisor = 1;
inline constexpr std::int64_t kPhaseStartFork = 2;  // the container child is forked next
inline constexpr std::int64_t kMaxPhase = 127;      // the largest number Haconiwa can fire

// Name of a phase from Haconiwa's table; unknown phases by number ("PHASE_42").
std::string phase_name(std::int64_t phase);

// A phase given by number or by name (case-insensitive; "PHASE_42" too);
// nullopt when it is neither a known name nor a number Haconiwa can fire (0..127).
std::optional<std::int64_t> parse_phase(std::string_view text);

// Haconiwa's phase names with the user's own layered over them
// (--phase-names: user markers 123-127, or phases of a newer Haconiwa).
class PhaseNames {
 public:
  PhaseNames() = default;
  // "NUMBER NAME" lines; blank lines and '#' comments are skipped. Throws
  // UsageError naming `source` and the line when one is malformed.
  static PhaseNames parse(std::string_view text, const std::string& source);

  [[nodiscard]] std::string name(std::int64_t phase) const;
  // By number or by (built-in or user) name, as parse_phase.
  [[nodiscard]] std::optional<std::int64_t> find(std::string_view text) const;

 private:
  std::map<std::int64_t, std::string> custom_;
};

}  // namespace hacoboot
