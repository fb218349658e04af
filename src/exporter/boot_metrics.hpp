#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "model/boot.hpp"
#include "model/boot_analysis.hpp"
#include "model/kernel_profile.hpp"
#include "model/path_breakdown.hpp"
#include "model/phases.hpp"
#include "model/summary.hpp"
#include "model/syscalls.hpp"

namespace hacoboot {

// What the kernel side could not aggregate or take, its maps full (the JSON
// summary's syscalls_dropped, blocking_dropped, stacks_dropped,
// samples_dropped): the steps' syscall, blocking and kernel CPU figures
// are then incomplete.
struct KernelDrops {
  std::uint64_t syscall_aggregates = 0;
  std::uint64_t blocked_stretches = 0;
  std::uint64_t kernel_stacks = 0;
  std::uint64_t cpu_samples = 0;
};

// Boot figures as Prometheus metrics (text exposition format 0.0.4) for the
// exporter: the families and their labels are docs/exporter.md's.
//
// Memory is fixed: a histogram is a fixed array of bucket counts, and there is
// at most one pair per phase Haconiwa can fire (0..kMaxPhase) and milestone,
// one pair of state sums per lane and such step, kSyscallSeriesPerStep + 1
// syscall sums and kKernelCpuSeriesPerStep + 1 sample counts at most per
// lane and such step, so it stays flat however many boots and days the
// exporter runs.
//
// Not thread-safe: the caller serializes every call, e.g. behind one mutex
// shared by the thread that adds boots and the one that serves write().
class BootMetrics {
 public:
  // Every histogram's bucket upper bounds in ns (le, inclusive), from 100 us
  // (a phase's own time) to 60 s (a slow app's listen); +Inf follows.
  static constexpr std::array<std::uint64_t, 18> kBucketBoundsNs{
      100'000,       250'000,       500'000,       1'000'000,      2'500'000,      5'000'000,
      10'000'000,    25'000'000,    50'000'000,    100'000'000,    250'000'000,    500'000'000,
      1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000, 30'000'000'000, 60'000'000'000};

  // Syscalls with a series of their own per lane and step: the first ones
  // met, the most time first within each boot; the others' time goes to
  // syscall="other". A series once made stays, so that its sums only grow.
  static constexpr std::size_t kSyscallSeriesPerStep = 8;
  // Places of kernel CPU samples (--kernel-profile: a syscall and the
  // short form of where in the kernel it ran, or user mode) with a series of
  // their own per lane and step, chosen the same way; the others' samples go
  // to syscall="other",where="other".
  static constexpr std::size_t kKernelCpuSeriesPerStep = 8;

  // A finished boot, after warm-up filtering, with analyse_boot() of it.
  // Unstarted boots count nowhere.
  void add(const BootRecord& boot);
  // The same with the boot's analysis given.
  void add(const BootRecord& boot, const BootAnalysis& analysis);
  // A boot's syscalls, once it ended: the loader takes them then, after the
  // boot settled and was added. Boots without syscalls count nowhere.
  void add_syscalls(const BootRecord& boot);
  // The same with the boot's analysis given.
  void add_syscalls(const BootAnalysis& analysis);
  // Events lost (kernel side) or undecodable, cumulative.
  void set_lost_events(std::uint64_t total) { lost_events_ = total; }
  // What the kernel side could not aggregate or take (its maps full), cumulative.
  void set_kernel_drops(const KernelDrops& drops) { kernel_drops_ = drops; }
  // The kernel side's count of phase events it dropped, cumulative.
  void set_untracked_phases(std::uint64_t total) { untracked_phases_ = total; }
  void set_boots_in_flight(std::uint64_t boots) { boots_in_flight_ = boots; }
  // The files the probe is attached to, and the new files seen at the
  // haconiwa binary's path (upgrades), cumulative.
  void set_haconiwa_files(std::uint64_t attached, std::uint64_t replacements) {
    haconiwa_files_ = attached;
    haconiwa_replacements_ = replacements;
  }

  // Every family, with HELP and TYPE, even before the first boot (counters
  // at 0) so that dashboards show zeros rather than "no data".
  void write(std::ostream& out, const PhaseNames& names) const;

 private:
  struct Histogram {
    std::array<std::uint64_t, kBucketBoundsNs.size()> buckets{};  // not cumulative; +Inf is count
    std::uint64_t count = 0;
    std::uint64_t sum_ns = 0;  // wraps after 584 years of boot time

    void add(std::uint64_t value_ns);
  };
  struct StepHistograms {
    Histogram since_start;
    Histogram delta;
  };
  // What the scheduler says of one step of one lane, summed over the boots
  // whose step had states.
  struct LaneStepStates {
    std::uint64_t count = 0;
    std::uint64_t cpu_ns = 0;
    std::uint64_t run_queue_ns = 0;
  };
  // One syscall's time and calls in one step of one lane, summed over boots.
  struct SyscallSeconds {
    std::uint64_t calls = 0;
    std::uint64_t ns = 0;
  };
  // A step's syscalls: at most kSyscallSeriesPerStep by name, the rest as one.
  struct LaneStepSyscalls {
    std::map<std::uint32_t, SyscallSeconds> named;
    SyscallSeconds other;
  };
  // A step's CPU samples: at most kKernelCpuSeriesPerStep by (syscall,
  // where), the rest as one.
  struct LaneStepKernelCpu {
    std::map<std::pair<std::uint32_t, std::string>, std::uint64_t> named;
    std::uint64_t other = 0;
  };
  class Exposition;

  void add_states(const BootAnalysis& analysis);
  void add_step_syscalls(const LaneStepKey& key, const StepSyscalls& syscalls);
  void add_step_kernel_cpu(const LaneStepKey& key, const StepKernelCpu& cpu);
  // The families of write(), in their order.
  void write_milestones(Exposition& e) const;
  void write_steps(Exposition& e, const PhaseNames& names) const;
  void write_syscalls(Exposition& e, const PhaseNames& names) const;
  void write_kernel_cpu(Exposition& e, const PhaseNames& names) const;
  void write_counters(Exposition& e, const PhaseNames& names) const;
  void write_failures(Exposition& e, const PhaseNames& names) const;

  BootCounts boots_;
  std::map<Step, StepHistograms> steps_;
  std::map<LaneStepKey, LaneStepStates> lane_steps_;
  std::map<LaneStepKey, LaneStepSyscalls> lane_step_syscalls_;
  std::map<LaneStepKey, LaneStepKernelCpu> lane_step_kernel_cpu_;
  std::uint32_t kernel_profile_hz_ = 0;  // the last sampled boot's
  Histogram noise_free_execve_;
  Histogram noise_free_listen_;
  std::uint64_t lost_events_ = 0;
  KernelDrops kernel_drops_;
  std::uint64_t untracked_phases_ = 0;
  std::uint64_t boots_in_flight_ = 0;
  std::uint64_t haconiwa_files_ = 1;
  std::uint64_t haconiwa_replacements_ = 0;
};

// A label value escaped for the text format: backslash, double quote and
// newline become \\, \" and \n.
std::string escape_label_value(std::string_view value);

}  // namespace hacoboot
