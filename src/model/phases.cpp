#include "model/phases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <sstream>
#include <utility>

#include "hacoboot/contract.h"
#include "util/errors.hpp"
#include "util/text.hpp"

namespace hacoboot {

// The BPF program tells launches apart by these phases: both sides must agree.
static_assert(kPhaseStartSupervisor == HACOBOOT_PHASE_START_SV);
static_assert(kPhaseStartFork == HACOBOOT_PHASE_START_FORK);

namespace {

constexpr std::string_view kUnnamedPrefix = "PHASE_";

// Names the outputs and --gate give to things other than phases.
constexpr std::array<std::string_view, 3> kReservedNames{"execve", "listen", "all"};

constexpr std::array<std::pair<std::int64_t, std::string_view>, 25> kPhaseNames{{
    {0, "CLI_START"},
    {1, "START_SV"},
    {2, "START_FORK"},
    {3, "END_SETUP"},
    {4, "START_WAIT"},
    {5, "END_WAIT"},
    {6, "CLEANUP"},
    {11, "CONTAINER_START"},
    {12, "CONTAINER_NAMESPACE_GENERATED"},
    {13, "CONTAINER_FILESYSTEM_SETUP"},
    {14, "CONTAINER_RLIMIT_SETUP"},
    {15, "CONTAINER_CGROUP_SETUP"},
    {16, "CONTAINER_REMOUNTED"},
    {17, "CONTAINER_UID_MAPPING_SETUP"},
    {18, "CONTAINER_CHROOTED"},
    {19, "CONTAINER_CAPABILITY_SETUP"},
    {20, "CONTAINER_SECCOMP_SETUP"},
    {21, "CONTAINER_EXECING"},
    {31, "START_CREATE_NETWORK"},
    {32, "END_CREATE_NETWORK"},
    {123, "USR1"},
    {124, "USR2"},
    {125, "USR3"},
    {126, "USR4"},
    {127, "USR5"},
}};

bool is_number(std::string_view text) {
  std::int64_t ignored = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, ignored);
  return ptr == end && ec != std::errc::invalid_argument;
}

// A number Haconiwa can pass as a phase.
std::optional<std::int64_t> phase_number(std::string_view text) {
  std::int64_t number = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc{} || ptr != end || number < 0 || number > kMaxPhase) return std::nullopt;
  return number;
}

}  // namespace

std::string phase_name(std::int64_t phase) {
  for (const auto& [number, name] : kPhaseNames) {
    if (number == phase) return std::string(name);
  }
  return std::string(kUnnamedPrefix) + std::to_string(phase);
}

std::optional<std::int64_t> parse_phase(std::string_view text) {
  if (is_number(text)) return phase_number(text);
  for (const auto& [number_of_name, name] : kPhaseNames) {
    if (iequals(name, text)) return number_of_name;
  }
  // What phase_name prints for a phase without a name reads back.
  if (text.size() > kUnnamedPrefix.size() && iequals(text.substr(0, kUnnamedPrefix.size()), kUnnamedPrefix)) {
    const auto number = text.substr(kUnnamedPrefix.size());
    if (is_number(number)) return phase_number(number);
  }
  return std::nullopt;
}

Expected<void> check_phase_name(std::string_view name) {
  if (name.size() > kMaxPhaseNameBytes) {
    return Failure{fmt::format("a phase name of {} bytes: at most {}", name.size(), kMaxPhaseNameBytes)};
  }
  if (!is_printable_utf8(name)) {
    return Failure{"phase name '" + printable(name) + "' is not printable UTF-8 (control characters or invalid bytes)"};
  }
  return {};
}

Expected<void> check_name_of_phase(std::int64_t phase, std::string_view name) {
  if (auto valid = check_phase_name(name); !valid) return valid;
  // Every name must lead to one phase: in --from, --gate and every output.
  if (const auto builtin = parse_phase(name); builtin && *builtin != phase) {
    return Failure{fmt::format("'{}' already names phase {}: choose another name", name, *builtin)};
  }
  if (std::any_of(kReservedNames.begin(), kReservedNames.end(), [&](auto word) { return iequals(word, name); })) {
    return Failure{fmt::format("'{}' names something else (execve and listen are milestones, all is --gate's)", name)};
  }
  return {};
}

PhaseNames PhaseNames::parse(std::string_view text, const std::string& source) {
  PhaseNames names;
  std::map<std::int64_t, std::size_t> line_of;  // of each phase named
  std::size_t line_number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::istringstream fields{std::string(line)};
    std::string number_text;
    std::string name;
    std::string extra;
    if (!(fields >> number_text)) continue;
    const auto refuse = [&](const std::string& why) {
      return UsageError(printable(source) + ":" + std::to_string(line_number) + ": " + why);
    };
    const auto number = phase_number(number_text);
    if (!number) {
      // Only a number is quoted: a file the user could not read (the tool
      // runs as root, often through sudo) must not reach the terminal a line
      // at a time.
      if (!is_number(number_text)) throw refuse("expected NUMBER NAME, NUMBER a phase number 0-127");
      throw refuse("'" + printable(number_text) + "' is not a phase number 0-127");
    }
    if (!(fields >> name) || (fields >> extra)) throw refuse("expected NUMBER NAME");
    if (const auto valid = check_name_of_phase(*number, name); !valid) throw refuse(valid.error());
    if (const auto named = line_of.find(*number); named != line_of.end()) {
      throw refuse(fmt::format("phase {} is named twice (lines {} and {})", *number, named->second, line_number));
    }
    for (const auto& [other, other_name] : names.custom_) {
      if (iequals(other_name, name)) {
        throw refuse(fmt::format("'{}' names two phases, {} (line {}) and {} (line {})", name, other, line_of[other],
                                 *number, line_number));
      }
    }
    names.custom_[*number] = name;
    line_of[*number] = line_number;
  }
  return names;
}

std::string PhaseNames::name(std::int64_t phase) const {
  const auto it = custom_.find(phase);
  return it != custom_.end() ? it->second : phase_name(phase);
}

std::optional<std::int64_t> PhaseNames::find(std::string_view text) const {
  for (const auto& [number, name] : custom_) {
    if (iequals(name, text)) return number;
  }
  return parse_phase(text);
}

}  // namespace hacoboot
