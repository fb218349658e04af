#pragma once

// The JSON fields the summary and the --events rows share, so that a step
// and its scheduler states read the same in both.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/boot.hpp"
#include "model/lane.hpp"
#include "model/phases.hpp"
#include "model/sched_totals.hpp"
#include "model/syscall_names.hpp"
#include "model/syscalls.hpp"

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

// A step's syscalls: null without figures; else "user" (its time in user
// space, time_ns and the states) and "calls", the most time first: each
// syscall's "name" (by number where it has none), "nr", "calls" (over
// `boots`), "time_ns", "max_ns" and the states. Calls and user time add up
// to the step's own time and states, per boot. Then "blocking", where the
// calls blocked, the most time first: "name", "nr", "time_ns", "count",
// "frames" (innermost first, "symbol+0xoff" or a raw address) and "waker"
// (null unless a traced thread woke it: its "tid", 0 when several, its
// "role", the boot's lane it is of, null when unknown or several, and its
// "frames").
// A waker's role: its lane's name, null when unknown.
inline nlohmann::ordered_json role_json(const std::optional<Lane>& lane) {
  return lane ? nlohmann::ordered_json(lane_name(*lane)) : nlohmann::ordered_json();
}

inline nlohmann::ordered_json blocking_json(const std::vector<BlockingPoint>& points) {
  auto rows = nlohmann::ordered_json::array();
  for (const auto& point : points) {
    nlohmann::ordered_json waker;
    if (!point.waker_frames.empty() || point.waker_tid != 0) {
      waker = {{"tid", point.waker_tid}, {"role", role_json(point.waker_lane)}, {"frames", point.waker_frames}};
    }
    rows.push_back({{"name", syscall_name(point.nr)},
                    {"nr", point.nr},
                    {"time_ns", point.time_ns},
                    {"count", point.count},
                    {"frames", point.frames},
                    {"waker", std::move(waker)}});
  }
  return rows;
}

// "kernel_cpu" (--kernel-profile; null without): "hz", "samples" (all of
// the step's, over `boots`), "partly_sampled" (sampling began after the
// step did, in some boot) and "stacks", the most samples first: "name" (the
// syscall, "user" outside any), "nr", "user_mode" (no frames then),
// "samples" and "frames" (innermost first).
inline nlohmann::ordered_json kernel_cpu_json(const std::optional<StepKernelCpu>& cpu) {
  if (!cpu) return nullptr;
  auto stacks = nlohmann::ordered_json::array();
  for (const auto& point : cpu->points) {
    stacks.push_back({{"name", syscall_name(point.nr)},
                      {"nr", point.nr},
                      {"user_mode", point.user_mode},
                      {"samples", point.samples},
                      {"frames", point.frames}});
  }
  return {{"hz", cpu->hz},
          {"samples", cpu->samples()},
          {"partly_sampled", cpu->partly_sampled},
          {"stacks", std::move(stacks)}};
}

inline nlohmann::ordered_json syscalls_json(const std::optional<StepSyscalls>& syscalls) {
  if (!syscalls) return nullptr;
  nlohmann::ordered_json user{{"time_ns", syscalls->user.total()}};
  put_states(user, syscalls->user);
  auto calls = nlohmann::ordered_json::array();
  for (const auto& call : syscalls->calls) {
    nlohmann::ordered_json row{{"name", syscall_name(call.nr)},
                               {"nr", call.nr},
                               {"calls", call.count},
                               {"time_ns", call.states.total()},
                               {"max_ns", call.max_ns}};
    put_states(row, call.states);
    calls.push_back(std::move(row));
  }
  return {{"user", std::move(user)},
          {"calls", std::move(calls)},
          {"blocking", blocking_json(syscalls->blocking)},
          {"kernel_cpu", kernel_cpu_json(syscalls->kernel_cpu)}};
}

}  // namespace hacoboot
