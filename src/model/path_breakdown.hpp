#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "model/boot_analysis.hpp"
#include "model/sample_stats.hpp"
#include "model/sched_totals.hpp"
#include "model/syscalls.hpp"

namespace hacoboot {

// A row of the breakdown: one step of one lane.
struct LaneStepKey {
  Lane lane = Lane::Supervisor;
  std::optional<Step> step;  // nullopt: time after the lane's last step

  auto operator<=>(const LaneStepKey&) const = default;
};

// A step's figures per boot that the gate compares step by step: exact up
// to this many boots, then a histogram's.
inline constexpr std::size_t kStepSamples = 1'000;

// One step's time on a critical path, one value per boot that had the step.
struct PathTimeStats {
  SampleStats wall{kStepSamples};
  SampleStats noise_free{kStepSamples};  // without the run-queue time on the path
};

// One row across boots.
struct LaneStepStats {
  SampleStats since_start;                   // of the step's end
  SampleStats own;                           // LaneStep::duration()
  SampleStats own_noise_free{kStepSamples};  // LaneStep::noise_free_duration(), per boot
  // Per boot that had the step (two rows of one key in a boot add up): its
  // time on the path to listen / execve, 0 in a boot where it was off it.
  PathTimeStats listen_path;
  PathTimeStats execve_path;
  // Summed over the boots whose step had states; mean = states / boots_with_states.
  SchedTotals states;
  std::uint64_t boots_with_states = 0;
  // Summed over the boots whose step had syscall figures, by number (max_ns
  // the longest in any); mean = sum / boots_with_syscalls.
  std::map<std::uint32_t, SyscallTime> syscalls;
  SchedTotals user;
  std::vector<BlockingPoint> blocking;      // summed as the syscalls
  std::optional<StepKernelCpu> kernel_cpu;  // samples summed over the boots
  std::uint64_t boots_with_syscalls = 0;
  // Summed over boots; a row's share of the path is its sum over the
  // breakdown's path total, so the shares of all rows add up to 100 %.
  std::uint64_t on_listen_path_ns = 0;
  std::uint64_t on_execve_path_ns = 0;
  std::uint64_t boots_on_listen_path = 0;  // boots where the step had path time

  [[nodiscard]] std::optional<SchedTotals> mean_states() const;
  // Per boot: each syscall's mean states (its count over all boots, its max
  // the longest seen), the most time first, the mean user time, and the
  // blocking points (their mean time, their count over all boots) and the
  // CPU samples (over all boots); nullopt
  // without syscall figures.
  [[nodiscard]] std::optional<StepSyscalls> mean_syscalls() const;
  [[nodiscard]] bool ever_on_listen_path() const { return boots_on_listen_path > 0; }
};

// The critical-path view of finished boots.
class PathBreakdown {
 public:
  void add(const BootAnalysis& boot);

  [[nodiscard]] const std::map<LaneStepKey, LaneStepStats>& steps() const { return steps_; }
  // Rows grouped by lane (Lane order), in boot order inside a lane (by mean
  // time since the start).
  [[nodiscard]] std::vector<std::pair<LaneStepKey, const LaneStepStats*>> steps_by_lane() const;
  // Row's share of the path to listen (0..1); 0 when no boot had that path.
  [[nodiscard]] double listen_path_share(const LaneStepStats& row) const;
  [[nodiscard]] double execve_path_share(const LaneStepStats& row) const;

  // Per boot with such a path: its length (equal to the time to the
  // milestone), its noise-free length, and its states summed.
  [[nodiscard]] const SampleStats& listen_path() const { return listen_path_; }
  [[nodiscard]] const SampleStats& execve_path() const { return execve_path_; }
  [[nodiscard]] const SampleStats& noise_free_listen() const { return noise_free_listen_; }
  [[nodiscard]] const SampleStats& noise_free_execve() const { return noise_free_execve_; }
  [[nodiscard]] const SchedTotals& listen_path_states() const { return listen_path_states_; }
  [[nodiscard]] const SchedTotals& execve_path_states() const { return execve_path_states_; }
  // Boots whose paths followed the fork alone (no scheduler readings).
  [[nodiscard]] std::uint64_t forks_only_boots() const { return forks_only_boots_; }

 private:
  std::map<LaneStepKey, LaneStepStats> steps_;
  SampleStats listen_path_;
  SampleStats execve_path_;
  SampleStats noise_free_listen_;
  SampleStats noise_free_execve_;
  SchedTotals listen_path_states_;
  SchedTotals execve_path_states_;
  // Summed over boots, for the shares (the SampleStats' avg truncates).
  std::uint64_t listen_path_total_ns_ = 0;
  std::uint64_t execve_path_total_ns_ = 0;
  std::uint64_t forks_only_boots_ = 0;
};

}  // namespace hacoboot
