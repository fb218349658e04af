#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/phases.hpp"
#include "model/sched_totals.hpp"
#include "model/syscalls.hpp"

namespace hacoboot {

// The most boots a run counts or leaves out (--count, --warmup, a
// recording's warm-up): far beyond any run, and a range a message can state.
inline constexpr std::uint64_t kMaxBoots = 1'000'000'000;

struct PhaseMark {
  std::int64_t phase = 0;
  std::uint64_t ts_ns = 0;

  bool operator==(const PhaseMark&) const = default;
};

// A step of a boot: a phase passed, or a milestone of the container.
struct Step {
  enum class Kind : std::uint8_t { Phase, Execve, Listen };
  Kind kind = Kind::Phase;
  std::int64_t phase = 0;  // Kind::Phase only

  auto operator<=>(const Step&) const = default;
};

// "CONTAINER_CHROOTED", "execve", "listen".
std::string step_name(const Step& step, const PhaseNames& names = {});

// One reading of a thread's totals: an event it emitted. `step` is set when
// the event is a step of the boot (a phase, execve, listen), which then ends
// at that instant; a fork or an exit only reads the totals.
struct ThreadSample {
  std::uint64_t ts_ns = 0;
  SchedTotals totals;
  std::optional<Step> step;
};

// What the boot's events say of one thread, in time order.
struct ThreadTimeline {
  std::uint32_t tid = 0;
  // The thread that forked this one, when the fork was traced; its totals
  // were zero at `created_ns`.
  std::optional<std::uint32_t> parent_tid;
  std::uint64_t created_ns = 0;
  std::vector<ThreadSample> samples;
};

// A traced thread woke another process's blocked thread: the wakee waited
// for the waker until `ts_ns`. Both threads' totals at that instant.
struct WakeupEdge {
  std::uint64_t ts_ns = 0;
  std::uint32_t waker_tid = 0;
  std::uint32_t wakee_tid = 0;
  SchedTotals waker_totals;
  SchedTotals wakee_totals;
};

// When a boot passed a step: the time since its start, and the step's own
// cost, the time since the previous step of the same process (supervisor or
// container; the container's first step counts from START_FORK).
struct StepTiming {
  Step step;
  std::uint64_t ts_ns = 0;
  std::optional<std::uint64_t> since_start;  // unset before the start
  std::optional<std::uint64_t> delta;        // unset for the first step

  bool operator==(const StepTiming&) const = default;
};

// A phase of a boot and how long it lasted: until the next phase in time,
// whichever process passed it. The last phase seen has no end.
struct PhaseSpan {
  std::int64_t phase = 0;
  std::uint64_t begin_ns = 0;
  std::optional<std::uint64_t> end_ns;  // unset for the last phase

  bool operator==(const PhaseSpan&) const = default;
};

// The first and the last time a boot has (phases and milestones).
struct TimeExtent {
  std::uint64_t first_ns = 0;
  std::uint64_t last_ns = 0;

  bool operator==(const TimeExtent&) const = default;
};

// Why a boot stopped being tracked.
enum class BootEnd : std::uint8_t {
  Exited,          // supervisor and container child both exited
  TracingStopped,  // still running when tracing stopped
  Replaced,        // its hpid started a new launch (its exit was never seen)
  Evicted,         // too many boots in flight at once
  Vanished,        // its processes are gone though their exit was never seen (events lost)
};

// "exited", "tracing_stopped", "replaced", "evicted", "vanished": the end
// column of --events.
std::string_view boot_end_name(BootEnd end);

// What a boot came to, as the summary counts it.
enum class BootOutcome : std::uint8_t {
  Unstarted,  // its start phase was not seen
  Complete,   // reached execve and listen after its start
  InFlight,   // cut off by the end of tracing (-n reached, --duration over, a signal)
  Failed,     // its container (or its supervisor before forking one) ended before completing
};

// Which process of a failed boot ended it.
enum class FailedProcess : std::uint8_t { Supervisor, Container };

// Where a failed boot failed: the last step its dying process passed, and
// how that process ended. Failed boots with equal keys are one group.
struct BootFailure {
  Step last_step;
  FailedProcess process = FailedProcess::Container;
  // The wait(2) status of its exit; nullopt when its exit was not seen
  // (`end` says why: replaced, evicted, vanished).
  std::optional<int> wait_status;
  BootEnd end = BootEnd::Exited;

  auto operator<=>(const BootFailure&) const = default;
};

// "container", "supervisor".
std::string_view failed_process_name(FailedProcess process);

// Everything one Haconiwa launch did, in absolute CLOCK_MONOTONIC ns.
struct BootRecord {
  std::uint64_t sequence = 0;  // 1-based, in order of the boots' first events
  std::uint32_t hpid = 0;
  std::uint32_t launch = 0;               // the kernel side's id of this launch (0: unknown)
  std::uint32_t container_pid = 0;        // 0: no container child was seen
  std::uint64_t cgroup_id = 0;            // the container's cgroup v2 id, when seen
  std::string cgroup_path;                // that cgroup's path, when resolvable
  std::int64_t start_phase = 1;           // the phase that starts the clock
  std::optional<std::uint64_t> start_ns;  // unset: tracing began mid-launch
  std::vector<PhaseMark> phases;          // first pass of each phase, by time
  std::optional<std::uint64_t> execve_ns;
  std::optional<std::uint64_t> listen_ns;
  std::optional<std::uint64_t> container_exit_ns;
  std::optional<int> container_exit_status;   // its wait(2) status, with container_exit_ns
  std::optional<int> supervisor_exit_status;  // the supervisor's, once it exited
  BootEnd end = BootEnd::Exited;
  // The scheduler's view, from START_SV to the first listen (what the
  // kernel side accounts): each accounted thread's readings and the
  // wakeups across its processes. Bounded per boot (kMaxThreadSamples).
  std::vector<ThreadTimeline> threads;
  std::vector<WakeupEdge> wakeups;
  // Its threads' syscalls and user time per segment, as the kernel side
  // aggregated them, taken when the boot ended; empty when none were.
  std::vector<SyscallAggregate> syscalls;
  // Where they blocked, taken with them; empty when none were.
  std::vector<BlockingAggregate> blocking;
  // Its threads' CPU samples (--kernel-profile), taken with them.
  KernelProfile kernel_profile;
  std::uint32_t start_tid = 0;   // passed the start phase
  std::uint32_t execve_tid = 0;  // made the counted execve
  std::uint32_t listen_tid = 0;  // made the first listen

  [[nodiscard]] bool started() const { return start_ns.has_value(); }
  [[nodiscard]] bool complete() const { return started() && execve_ns && listen_ns; }
  // Complete only counts milestones after the start; in flight only boots
  // whose container still ran when tracing stopped.
  [[nodiscard]] BootOutcome outcome() const;
  // Set when outcome() is Failed.
  [[nodiscard]] std::optional<BootFailure> failure() const;
  // Time from the start to ts; nullopt before the start or when not started.
  [[nodiscard]] std::optional<std::uint64_t> since_start(std::uint64_t ts_ns) const;
  // Its phases in time order, each lasting until the next.
  [[nodiscard]] std::vector<PhaseSpan> phase_spans() const;
  // nullopt when it has neither a phase nor a milestone.
  [[nodiscard]] std::optional<TimeExtent> extent() const;
  // Every phase and milestone, in time order.
  [[nodiscard]] std::vector<StepTiming> timeline() const;
  // The timeline after the start, without the start phase itself (its time
  // since start is always 0): the steps every figure aggregates. Each has
  // since_start set; empty when not started.
  [[nodiscard]] std::vector<StepTiming> steps_after_start() const;
};

}  // namespace hacoboot
