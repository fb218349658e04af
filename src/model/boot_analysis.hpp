#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "model/boot.hpp"
#include "model/critical_path.hpp"
#include "model/lane.hpp"
#include "model/syscalls.hpp"

namespace hacoboot {

// The lane of one of the boot's threads, by its role.
Lane lane_of_thread(const BootRecord& boot, std::uint32_t tid);

// One step of one process of a boot: its time from the previous step of the
// same lane (its creation for its first; the container's first counts from
// START_FORK, as StepTiming::delta) to this step, what the scheduler says of
// that time, and how much of it lies on the critical paths.
struct LaneStep {
  Lane lane = Lane::Supervisor;
  // nullopt: the thread's time after its last step, when a path went through it.
  std::optional<Step> step;
  std::uint32_t tid = 0;
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
  // Time from the boot's start to end_ns; nullopt for a row the path
  // crossed before the start.
  std::optional<std::uint64_t> since_start;
  // CPU / run queue / sleep / I/O of [begin, end]; they add up to
  // end - begin exactly. nullopt when the kernel side did not account it.
  std::optional<SchedTotals> states;
  // Time of the path to listen (to execve) inside [begin, end] on this
  // thread; 0 for a step off that path.
  std::uint64_t on_listen_path_ns = 0;
  std::uint64_t on_execve_path_ns = 0;
  // The run-queue part of that path time (pieces with known states): the
  // path time without it is the step's noise-free share of the path.
  std::uint64_t listen_path_run_queue_ns = 0;
  std::uint64_t execve_path_run_queue_ns = 0;
  // Its syscalls and user time, which add up to `states` exactly; nullopt
  // without states or without the boot's syscall aggregates.
  std::optional<StepSyscalls> syscalls;

  [[nodiscard]] std::uint64_t duration() const { return end_ns - begin_ns; }
  // The step's own time without its run-queue time (all of it without states).
  [[nodiscard]] std::uint64_t noise_free_duration() const {
    return duration() - (states ? std::min(states->run_queue, duration()) : 0);
  }
  [[nodiscard]] bool on_listen_path() const { return on_listen_path_ns > 0; }
};

// Why one boot took its time: its steps by lane, and its critical paths.
struct BootAnalysis {
  // Every step after the boot's start (not the start phase itself), in
  // time order of their ends, plus a row per stretch a path crossed after a
  // thread's last step.
  std::vector<LaneStep> steps;
  std::optional<CriticalPath> to_execve;
  std::optional<CriticalPath> to_listen;
  // The boot carries no scheduler readings (an old capture, or accounting
  // off): the paths follow the fork alone (supervisor until START_FORK, then
  // the container) and have no states.
  bool forks_only = false;

  // The path to listen without its run-queue time: what the boot would have
  // taken with a CPU always free. nullopt without a path or without states.
  [[nodiscard]] std::optional<std::uint64_t> noise_free_listen() const;
  [[nodiscard]] std::optional<std::uint64_t> noise_free_execve() const;
};

BootAnalysis analyse_boot(const BootRecord& boot);

}  // namespace hacoboot
