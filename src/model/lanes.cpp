#include "model/lanes.hpp"

namespace hacoboot {

std::string_view lane_name(Lane lane) {
  switch (lane) {
    case Lane::Supervisor: return "supervisor";
    case Lane::Container: return "container";
    case Lane::Listener: return "listener";
    case Lane::Other: break;
  }
  return "other";
}

std::optional<std::uint64_t> BootAnalysis::noise_free_listen() const {
  if (!to_listen || forks_only) return std::nullopt;
  return to_listen->noise_free();
}

std::optional<std::uint64_t> BootAnalysis::noise_free_execve() const {
  if (!to_execve || forks_only) return std::nullopt;
  return to_execve->noise_free();
}

// PLACEHOLDER: being implemented (lanes, per-step states, path attribution, forks-only fallback).
BootAnalysis analyse_boot(const BootRecord& boot) {
  BootAnalysis analysis;
  analysis.to_execve = path_to_execve(boot);
  analysis.to_listen = path_to_listen(boot);
  return analysis;
}

}  // namespace hacoboot
