#include "gate/step_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "report/report.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

constexpr std::string_view kPhaseKey = "phase:";

const MilestoneShift* milestone_named(const StepComparison& steps, const std::string& milestone) {
  const auto it = std::find_if(steps.milestones.begin(), steps.milestones.end(),
                               [&milestone](const MilestoneShift& m) { return m.milestone == milestone; });
  return it == steps.milestones.end() ? nullptr : &*it;
}

// "step 7 CONTAINER_X joined the path; step 9 left it"
std::string path_changes(const StepComparison& steps, StepMeasure measure) {
  std::vector<std::string> changes;
  for (const auto& shift : steps.shifts) {
    if (shift.measure != measure || shift.path_change == PathChange::None) continue;
    changes.push_back(
        fmt::format("{} {} the path", step_shown(shift), shift.path_change == PathChange::Joined ? "joined" : "left"));
  }
  return fmt::format("{}", fmt::join(changes, "; "));
}

StepMeasure measure_of(const std::string& milestone) {
  return milestone == "execve" ? StepMeasure::ExecvePath : StepMeasure::ListenPath;
}

}  // namespace

std::string step_shown(const StepShift& shift) {
  const auto step = std::string_view(shift.key).substr(shift.lane.size() + 1);
  if (step.starts_with(kPhaseKey)) {
    return fmt::format("{} {} {}", shift.lane, step.substr(kPhaseKey.size()), printable(shift.name));
  }
  if (shift.name.empty()) return shift.lane + " (after its last step)";
  return fmt::format("{} {}", shift.lane, printable(shift.name));
}

std::string signed_duration(double ns) {
  const auto magnitude = static_cast<std::uint64_t>(std::llround(std::abs(ns)));
  return (ns < 0 ? "-" : "+") + format_duration(magnitude);
}

std::string moved_syscalls(const StepShift& shift) {
  std::vector<std::string> calls;
  calls.reserve(shift.syscalls.size());
  for (const auto& call : shift.syscalls) {
    calls.push_back(fmt::format("{} {}", printable(call.name), signed_duration(call.shift_ns)));
  }
  return fmt::format("{}", fmt::join(calls, ", "));
}

std::string moved_states(const StepShift& shift) {
  std::vector<std::string> states;
  states.reserve(shift.states.size());
  for (const auto& state : shift.states)
    states.push_back(fmt::format("{} {}", state.state, signed_duration(state.shift_ns)));
  return fmt::format("{}", fmt::join(states, " and "));
}

std::string unattributed_shown(const MilestoneShift& milestone) {
  return fmt::format("{} [{}, {}]", signed_duration(milestone.unattributed_ns()),
                     signed_duration(milestone.unattributed_low_ns()),
                     signed_duration(milestone.unattributed_high_ns()));
}

std::string moved_step_line(const StepShift& shift, const MilestoneShift* milestone) {
  auto line = fmt::format("{} {} [{}, {}]", step_shown(shift), signed_duration(shift.shift_ns),
                          signed_duration(shift.low_ns), signed_duration(shift.high_ns));
  if (shift.measure == StepMeasure::Own) line += " own time";
  if (milestone != nullptr && milestone->has_shares()) {
    line += fmt::format(" ({:.0f}% of the {})", milestone->share_of(shift) * 100,
                        milestone->moved_explain_shift() ? "moved total" : "shift");
  }
  if (!shift.states.empty()) line += ", " + moved_states(shift);
  if (!shift.syscalls.empty()) line += ", syscalls " + moved_syscalls(shift);
  return line;
}

std::string milestone_attribution(const StepComparison& steps, const std::string& milestone) {
  if (!steps.unavailable.empty()) return {};
  const auto* shift = milestone_named(steps, milestone);
  if (shift == nullptr) return {};
  std::vector<std::string> moved;
  moved.reserve(shift->moved.size());
  for (const auto i : shift->moved) moved.push_back(moved_step_line(steps.shifts[i], shift));
  auto text = fmt::format("{}: {} [{}, {}]; ", milestone, signed_duration(shift->shift_ns),
                          signed_duration(shift->low_ns), signed_duration(shift->high_ns));
  text += moved.empty() ? std::string("no step moved") : fmt::format("moved: {}", fmt::join(moved, "; "));
  if (!shift->path_same) {
    text += fmt::format("; the path changed ({}): shares not given", path_changes(steps, measure_of(milestone)));
  } else if (!moved.empty() && shift->has_shares()) {
    text += fmt::format("; {} in no moved step", unattributed_shown(*shift));
    if (shift->moved_explain_shift()) {
      text +=
          fmt::format(", not told from 0: shares are of the moved total, {}", signed_duration(shift->moved_total_ns));
    }
  }
  return text;
}

std::string steps_terms(const StepComparison& steps, const GateConfig& config) {
  auto terms = fmt::format(
      "{}, Benjamini-Hochberg over {} step test{} at alpha {}; a step moved by at least {} ({}% of "
      "the baseline's time to listen), +{}% of its own and {} times the spread of its baseline boots",
      gate_figure_name(steps.figure), steps.tests, steps.tests == 1 ? "" : "s", config.alpha,
      format_duration(static_cast<std::uint64_t>(std::llround(steps.floor_ns))), kStepFloorShare * 100,
      config.max_regression_pct, kSpreadsOfDrift);
  if (steps.syscalls_compared) {
    terms += fmt::format("; within a moved step, the syscalls whose mean time moved by {:.0f}% of its shift",
                         kSyscallShareOfStep * 100);
  }
  return terms;
}

std::vector<std::string> step_report_lines(const StepComparison& steps, const GateConfig& config) {
  if (!steps.unavailable.empty()) return {"note: " + steps.unavailable};
  std::vector<std::string> lines{fmt::format("STEPS THAT MOVED ({})", steps_terms(steps, config))};
  for (const auto& milestone : steps.milestones) {
    lines.push_back("  " + milestone_attribution(steps, milestone.milestone));
  }
  if (!steps.moved_off_path.empty()) {
    std::vector<std::string> moved;
    moved.reserve(steps.moved_off_path.size());
    for (const auto i : steps.moved_off_path) moved.push_back(moved_step_line(steps.shifts[i], nullptr));
    lines.push_back(fmt::format("  off the paths: {}", fmt::join(moved, "; ")));
  }
  if (!steps.syscalls_unavailable.empty()) lines.push_back("  note: " + steps.syscalls_unavailable);
  return lines;
}

}  // namespace hacoboot
