#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "util/expected.hpp"

namespace hacoboot {

// Haconiwa's bootstrap_phase_pass numbers (arg0 of the USDT probe).
inline constexpr std::int64_t kPhaseCliStart = 0;
inline constexpr std::int64_t kPhaseStartSupervisor = 1;
inline constexpr std::int64_t kPhaseStartFork = 2;  // the container child is forked next
inline constexpr std::int64_t kMaxPhase = 127;      // the largest number Haconiwa can fire

// Haconiwa groups its phases by the process that passes them: up to 10 the
// supervisor (and CLI), 11-30 the container child, 31-122 network set-up by
// the supervisor; user markers 123-127 may come from either.
inline constexpr std::int64_t kFirstContainerPhase = 11;
inline constexpr std::int64_t kFirstNetworkPhase = 31;
inline constexpr std::int64_t kFirstUserPhase = 123;

// Name of a phase from Haconiwa's table; unknown phases by number ("PHASE_42").
std::string phase_name(std::int64_t phase);

// A phase given by number or by name (case-insensitive; "PHASE_42" too);
// nullopt when it is neither a known name nor a number Haconiwa can fire (0..127).
std::optional<std::int64_t> parse_phase(std::string_view text);

// The longest name --phase-names accepts (man page).
inline constexpr std::size_t kMaxPhaseNameBytes = 64;

// Whether `name` may name a phase: printable UTF-8 (is_printable_utf8), at
// most kMaxPhaseNameBytes bytes; else why not, in a few words. The names go
// into terminals, SVG, JSON and Prometheus labels: no byte may break them.
Expected<void> check_phase_name(std::string_view name);

// Whether `name` may name phase number `phase` (0..kMaxPhase): a name
// check_phase_name accepts that leads to no other phase or milestone (a
// built-in name such as "START_SV", "PHASE_7" or "12" given to another
// number; execve, listen, all). Else why not.
Expected<void> check_name_of_phase(std::int64_t phase, std::string_view name);

// Haconiwa's phase names with the user's own layered over them
// (--phase-names: user markers 123-127, or phases of a newer Haconiwa).
class PhaseNames {
 public:
  PhaseNames() = default;
  // "NUMBER NAME" lines; blank lines and '#' comments are skipped. Throws
  // UsageError naming `source` and the line(s) when one is malformed, its
  // name is not one check_phase_name accepts, or it would make a name lead
  // to two phases: a number or a name given twice, a built-in name
  // ("START_SV", "PHASE_7", "12") given to another number, or execve,
  // listen or all.
  static PhaseNames parse(std::string_view text, const std::string& source);

  [[nodiscard]] std::string name(std::int64_t phase) const;
  // By number or by (built-in or user) name, as parse_phase.
  [[nodiscard]] std::optional<std::int64_t> find(std::string_view text) const;

 private:
  std::map<std::int64_t, std::string> custom_;
};

}  // namespace hacoboot
