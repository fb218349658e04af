#include "model/boot.hpp"

#include <algorithm>

#include "model/phases.hpp"

namespace hacoboot {
namespace {

// Which process of a launch passes a step (model/boot_analysis.hpp's Lane knows the
// threads; this, only the phase numbers).
enum class Passer : std::uint8_t { Supervisor, Container, Either };

// The process that passes a phase, from its group (phases.hpp).
Passer passer_of(const Step& step) {
  if (step.kind != Step::Kind::Phase) return Passer::Container;
  if (step.phase >= kFirstUserPhase) return Passer::Either;
  if (step.phase >= kFirstContainerPhase && step.phase < kFirstNetworkPhase) return Passer::Container;
  return Passer::Supervisor;
}

}  // namespace

std::string step_name(const Step& step, const PhaseNames& names) {
  switch (step.kind) {
    case Step::Kind::Execve: return "execve";
    case Step::Kind::Listen: return "listen";
    case Step::Kind::Phase: break;
  }
  return names.name(step.phase);
}

std::string_view boot_end_name(BootEnd end) {
  switch (end) {
    case BootEnd::Exited: return "exited";
    case BootEnd::TracingStopped: return "tracing_stopped";
    case BootEnd::Replaced: return "replaced";
    case BootEnd::Evicted: return "evicted";
    case BootEnd::Vanished: return "vanished";
  }
  return "unknown";
}

std::string_view failed_process_name(FailedProcess process) {
  return process == FailedProcess::Supervisor ? "supervisor" : "container";
}

BootOutcome BootRecord::outcome() const {
  if (!started()) return BootOutcome::Unstarted;
  const auto reached = [this](const std::optional<std::uint64_t>& ts_ns) {
    return ts_ns && since_start(*ts_ns).has_value();
  };
  if (reached(execve_ns) && reached(listen_ns)) return BootOutcome::Complete;
  // A container that died before tracing stopped failed, even with its
  // supervisor still there; one still running was cut off.
  const bool container_died = container_pid != 0 ? container_exit_ns.has_value() : supervisor_exit_status.has_value();
  return end == BootEnd::TracingStopped && !container_died ? BootOutcome::InFlight : BootOutcome::Failed;
}

std::optional<BootFailure> BootRecord::failure() const {
  if (outcome() != BootOutcome::Failed) return std::nullopt;
  const auto steps = timeline();
  if (steps.empty()) return std::nullopt;
  BootFailure failure{.last_step = steps.back().step,
                      .process = FailedProcess::Supervisor,
                      .wait_status = supervisor_exit_status,
                      .end = end};
  if (container_pid == 0) return failure;
  failure.process = FailedProcess::Container;
  failure.wait_status = container_exit_status;
  // The supervisor goes on after its container died (END_SETUP, CLEANUP...):
  // the container's own last step says where it failed; before its first,
  // the fork that created it.
  const auto own = std::find_if(steps.rbegin(), steps.rend(), [](const StepTiming& s) {
    return passer_of(s.step) != Passer::Supervisor || s.step == Step{Step::Kind::Phase, kPhaseStartFork};
  });
  if (own != steps.rend()) failure.last_step = own->step;
  return failure;
}

std::optional<std::uint64_t> BootRecord::since_start(std::uint64_t ts_ns) const {
  if (!start_ns || ts_ns < *start_ns) return std::nullopt;
  return ts_ns - *start_ns;
}

std::vector<PhaseSpan> BootRecord::phase_spans() const {
  auto marks = phases;
  std::stable_sort(marks.begin(), marks.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  std::vector<PhaseSpan> spans;
  spans.reserve(marks.size());
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const auto end_ns = i + 1 < marks.size() ? std::optional(marks[i + 1].ts_ns) : std::nullopt;
    spans.push_back({.phase = marks[i].phase, .begin_ns = marks[i].ts_ns, .end_ns = end_ns});
  }
  return spans;
}

std::optional<TimeExtent> BootRecord::extent() const {
  std::optional<TimeExtent> extent;
  const auto widen = [&extent](std::uint64_t ts_ns) {
    if (!extent) extent = TimeExtent{.first_ns = ts_ns, .last_ns = ts_ns};
    extent->first_ns = std::min(extent->first_ns, ts_ns);
    extent->last_ns = std::max(extent->last_ns, ts_ns);
  };
  for (const auto& mark : phases) widen(mark.ts_ns);
  for (const auto& ts_ns : {execve_ns, listen_ns}) {
    if (ts_ns) widen(*ts_ns);
  }
  return extent;
}

std::vector<StepTiming> BootRecord::timeline() const {
  std::vector<StepTiming> steps;
  steps.reserve(phases.size() + 2);
  const auto add = [&steps](Step step, std::uint64_t ts_ns) {
    steps.push_back(StepTiming{.step = step, .ts_ns = ts_ns, .since_start = {}, .delta = {}});
  };
  for (const auto& mark : phases) add({Step::Kind::Phase, mark.phase}, mark.ts_ns);
  if (execve_ns) add({Step::Kind::Execve}, *execve_ns);
  if (listen_ns) add({Step::Kind::Listen}, *listen_ns);
  std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });

  for (auto it = steps.begin(); it != steps.end(); ++it) {
    it->since_start = since_start(it->ts_ns);
    if (it == steps.begin()) continue;
    const Passer passer = passer_of(it->step);
    const auto earlier = [&](auto predicate) {
      const auto found = std::find_if(std::make_reverse_iterator(it), steps.rend(), predicate);
      return found == steps.rend() ? std::optional<std::uint64_t>() : found->ts_ns;
    };
    auto previous =
        earlier([passer](const StepTiming& s) { return passer != Passer::Either && passer_of(s.step) == passer; });
    // The container's first step counts from the fork that created it.
    if (!previous && passer == Passer::Container) {
      previous = earlier([](const StepTiming& s) { return s.step == Step{Step::Kind::Phase, kPhaseStartFork}; });
    }
    if (!previous) previous = std::prev(it)->ts_ns;
    it->delta = it->ts_ns - *previous;
  }
  return steps;
}

std::vector<StepTiming> BootRecord::steps_after_start() const {
  auto steps = timeline();
  std::erase_if(steps, [this](const StepTiming& timing) {
    return !timing.since_start || timing.step == Step{Step::Kind::Phase, start_phase};
  });
  return steps;
}

}  // namespace hacoboot
