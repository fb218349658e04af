#include "hacoboot/phases.hpp"

#include <array>
#include <charconv>
#include <sstream>
#include <utility>

#include "hacoboot/errors.hpp"
#include "hacoboot/text.hpp"

namespace hacoboot {
namespace {

constexpr std::string_view kUnnamedPrefix = "PHASE_";

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

PhaseNames PhaseNames::parse(std::string_view text, const std::string& source) {
  PhaseNames names;
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
    const auto where = [&] { return source + ":" + std::to_string(line_number) + ": "; };
    const auto number = phase_number(number_text);
    if (!number) throw UsageError(where() + "'" + number_text + "' is not a phase number 0-127");
    if (!(fields >> name) || (fields >> extra)) throw UsageError(where() + "expected NUMBER NAME");
    names.custom_[*number] = name;
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
