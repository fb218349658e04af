#include "pipeline/pipeline.hpp"

#include <algorithm>
#include <utility>

#include "model/event.hpp"
#include "model/syscalls.hpp"

namespace hacoboot {

Pipeline::Pipeline(PipelineConfig config, CgroupResolver cgroup_paths)
    : config_(std::move(config)),
      cgroup_paths_(std::move(cgroup_paths)),
      sinks_(config_.sinks),
      tracker_({.start_phase = config_.start_phase, .command = config_.command},
               [this](const BootRecord& boot) { boot_done(boot); }) {
  tracker_.on_settled([this](const BootRecord& boot) { boot_settled(boot); });
}

void Pipeline::on_record(std::span<const std::byte> record) {
  auto event = decode_event(record);
  if (!event) {
    ++undecodable_;
    return;
  }
  // Resolved while the container is alive: its cgroup may be gone when the boot ends.
  if (event->kind == EventKind::Exec && cgroup_paths_) event->cgroup_path = cgroup_paths_(event->cgroup_id);
  tracker_.on_event(*event);
}

void Pipeline::expire_vanished(const std::function<bool(std::uint32_t pid)>& is_alive) {
  tracker_.expire_vanished(is_alive);
}

void Pipeline::finish() {
  tracker_.finish_all();
}

RunFacts Pipeline::run_facts(std::uint64_t tracked_at_exit) const {
  return {.start_phase = config_.start_phase,
          .command = config_.command,
          .lost_events = events_lost(),
          .unaccounted_threads = counters_.unaccounted_threads,
          .untracked_phases = counters_.untracked_phases,
          .repaired_switch_ins = counters_.repaired_switch_ins,
          .syscalls_dropped = counters_.syscalls_dropped,
          .blocking_dropped = counters_.blocking_dropped,
          .stacks_dropped = counters_.stacks_dropped,
          .samples_dropped = counters_.samples_dropped,
          .tracked_at_exit = tracked_at_exit,
          .kernel_maps = counters_.kernel_maps,
          .names = config_.sinks.phase_names};
}

namespace {

// The boot's last instant its threads were surely accounted (sampled, with
// --kernel-profile): its first listen, else its last phase.
std::uint64_t last_accounted_ns(const BootRecord& boot) {
  if (boot.listen_ns) return *boot.listen_ns;
  std::uint64_t last = boot.start_ns.value_or(0);
  for (const auto& phase : boot.phases) last = std::max(last, phase.ts_ns);
  return last;
}

}  // namespace

// Every ended boot's aggregates are taken, a warm-up boot's too: the
// kernel's map keeps none of an ended launch.
void Pipeline::boot_done(BootRecord boot) {
  if (syscalls_ && boot.launch != 0) {
    const auto bytes = syscalls_(boot.launch);
    if (auto aggregates = decode_syscall_aggregates(bytes)) {
      boot.syscalls = std::move(*aggregates);
    } else {
      ++undecodable_;
    }
  }
  // After the syscalls: their sweep, which serves the boots that ended
  // before it began, is not held up by this walk.
  if (blocking_ && boot.launch != 0) boot.blocking = blocking_(boot.launch);
  if (kernel_profile_ && boot.launch != 0) boot.kernel_profile = kernel_profile_(boot.launch, last_accounted_ns(boot));
  if (boot.sequence <= config_.warmup) return;
  sinks_.add(boot);
  if (done_observer_) done_observer_(boot);
}

// A warm-up boot is in no figure, so it is none of the N boots of -n N either.
void Pipeline::boot_settled(const BootRecord& boot) {
  if (boot.sequence <= config_.warmup) return;
  ++settled_;
  if (settled_observer_) settled_observer_(boot);
}

}  // namespace hacoboot
