#pragma once

// The JSON fields the summary and the --events rows share, so that a step
// and its scheduler states read the same in both.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/boot.hpp"
#include "model/phases.hpp"
#include "model/sched_totals.hpp"

namespace hacoboot {

inline nlohmann::ordered_json optional_json(std::optional<std::uint64_t> value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

// "kind" (phase, execve, listen), "phase" (its number, or null) and "name";
// all three null for a thread's time after its last step.
inline void put_step(nlohmann::ordered_json& object, const std::optional<Step>& step, const PhaseNames& names) {
  if (!step) {
    object["kind"] = nullptr;
    object["phase"] = nullptr;
    object["name"] = nullptr;
    return;
  }
  const bool is_phase = step->kind == Step::Kind::Phase;
  const auto name = step_name(*step, names);
  object["kind"] = is_phase ? "phase" : name;
  object["phase"] = is_phase ? nlohmann::ordered_json(step->phase) : nlohmann::ordered_json();
  object["name"] = name;
}

// cpu_ns, run_queue_ns, sleep_ns, io_ns: null when the kernel side did not
// account the stretch.
inline void put_states(nlohmann::ordered_json& object, const std::optional<SchedTotals>& states) {
  const auto field = [&states](std::uint64_t SchedTotals::*member) {
    return states ? nlohmann::ordered_json((*states).*member) : nlohmann::ordered_json();
  };
  object["cpu_ns"] = field(&SchedTotals::cpu);
  object["run_queue_ns"] = field(&SchedTotals::run_queue);
  object["sleep_ns"] = field(&SchedTotals::sleep);
  object["io_ns"] = field(&SchedTotals::io);
}

}  // namespace hacoboot
