#include "hacoboot/phases.hpp"

#include <array>
#include <charconv>
#include <utility>

#include "hacoboot/text.hpp"

namespace hacoboot {
namespace {

constexpr std::int64_t kMaxPhase = 127;

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

}  // namespace

std::string phase_name(std::int64_t phase) {
  for (const auto& [number, name] : kPhaseNames) {
    if (number == phase) return std::string(name);
  }
  return "PHASE_" + std::to_string(phase);
}

std::optional<std::int64_t> parse_phase(std::string_view text) {
  std::int64_t number = 0;
  const auto* end = text.data() + text.size();
  if (auto [ptr, ec] = std::from_chars(text.data(), end, number); ec == std::errc{} && ptr == end) {
    if (number < 0 || number > kMaxPhase) return std::nullopt;
    return number;
  }
  for (const auto& [number_of_name, name] : kPhaseNames) {
    if (iequals(name, text)) return number_of_name;
  }
  return std::nullopt;
}

}  // namespace hacoboot
