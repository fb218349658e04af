#include "model/path_breakdown.hpp"

#include <algorithm>
#include <set>

namespace hacoboot {

std::optional<SchedTotals> LaneStepStats::mean_states() const {
  if (boots_with_states == 0) return std::nullopt;
  return SchedTotals{states.cpu / boots_with_states, states.run_queue / boots_with_states,
                     states.sleep / boots_with_states, states.io / boots_with_states};
}

namespace {

SchedTotals mean_of(const SchedTotals& sum, std::uint64_t boots) {
  return {sum.cpu / boots, sum.run_queue / boots, sum.sleep / boots, sum.io / boots};
}

void add_syscalls(LaneStepStats& row, const StepSyscalls& step) {
  for (const auto& call : step.calls) {
    auto& sum = row.syscalls[call.nr];
    sum.nr = call.nr;
    sum.count += call.count;
    sum.max_ns = std::max(sum.max_ns, call.max_ns);
    sum.states += call.states;
  }
  row.user += step.user;
  for (const auto& point : step.blocking) add_blocking_point(row.blocking, point);
  if (step.kernel_cpu) {
    if (!row.kernel_cpu) row.kernel_cpu.emplace();
    *row.kernel_cpu += *step.kernel_cpu;
  }
  ++row.boots_with_syscalls;
}

// One boot's time in a step, its rows of one key added up.
struct BootStepTime {
  std::uint64_t own_noise_free = 0;
  std::uint64_t listen_path = 0;
  std::uint64_t listen_path_run_queue = 0;
  std::uint64_t execve_path = 0;
  std::uint64_t execve_path_run_queue = 0;
};

void add_boot_time(LaneStepStats& row, const BootStepTime& time, const BootAnalysis& boot) {
  row.own_noise_free.add(time.own_noise_free);
  if (boot.to_listen) {
    row.listen_path.wall.add(time.listen_path);
    row.listen_path.noise_free.add(time.listen_path - time.listen_path_run_queue);
  }
  if (boot.to_execve) {
    row.execve_path.wall.add(time.execve_path);
    row.execve_path.noise_free.add(time.execve_path - time.execve_path_run_queue);
  }
}

}  // namespace

std::optional<StepSyscalls> LaneStepStats::mean_syscalls() const {
  if (boots_with_syscalls == 0) return std::nullopt;
  StepSyscalls mean;
  for (const auto& [nr, sum] : syscalls) {
    mean.calls.push_back(
        {.nr = nr, .count = sum.count, .max_ns = sum.max_ns, .states = mean_of(sum.states, boots_with_syscalls)});
  }
  sort_by_time(mean.calls);
  mean.user = mean_of(user, boots_with_syscalls);
  mean.blocking = blocking;
  for (auto& point : mean.blocking) point.time_ns /= boots_with_syscalls;
  mean.kernel_cpu = kernel_cpu;
  return mean;
}

void PathBreakdown::add(const BootAnalysis& boot) {
  if (boot.forks_only) ++forks_only_boots_;
  // Threads of one lane (Lane::Other) can give a boot two rows of one key.
  std::set<LaneStepKey> on_listen_path;
  std::map<LaneStepKey, BootStepTime> boot_times;
  for (const auto& step : boot.steps) {
    const LaneStepKey key{step.lane, step.step};
    auto& row = steps_[key];
    if (step.since_start) row.since_start.add(*step.since_start);
    row.own.add(step.duration());
    if (step.states) {
      row.states += *step.states;
      ++row.boots_with_states;
    }
    if (step.syscalls) add_syscalls(row, *step.syscalls);
    row.on_listen_path_ns += step.on_listen_path_ns;
    row.on_execve_path_ns += step.on_execve_path_ns;
    if (step.on_listen_path() && on_listen_path.insert(key).second) ++row.boots_on_listen_path;
    auto& time = boot_times[key];
    time.own_noise_free += step.noise_free_duration();
    time.listen_path += step.on_listen_path_ns;
    time.listen_path_run_queue += step.listen_path_run_queue_ns;
    time.execve_path += step.on_execve_path_ns;
    time.execve_path_run_queue += step.execve_path_run_queue_ns;
  }
  for (const auto& [key, time] : boot_times) add_boot_time(steps_[key], time, boot);
  if (boot.to_listen) {
    listen_path_.add(boot.to_listen->duration());
    listen_path_total_ns_ += boot.to_listen->duration();
    listen_path_states_ += boot.to_listen->states();
  }
  if (boot.to_execve) {
    execve_path_.add(boot.to_execve->duration());
    execve_path_total_ns_ += boot.to_execve->duration();
    execve_path_states_ += boot.to_execve->states();
  }
  if (const auto value = boot.noise_free_listen()) noise_free_listen_.add(*value);
  if (const auto value = boot.noise_free_execve()) noise_free_execve_.add(*value);
}

std::vector<std::pair<LaneStepKey, const LaneStepStats*>> PathBreakdown::steps_by_lane() const {
  std::vector<std::pair<LaneStepKey, const LaneStepStats*>> rows;
  rows.reserve(steps_.size());
  for (const auto& [key, stats] : steps_) rows.emplace_back(key, &stats);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.first.lane != b.first.lane) return a.first.lane < b.first.lane;
    return a.second->since_start.avg() < b.second->since_start.avg();
  });
  return rows;
}

double PathBreakdown::listen_path_share(const LaneStepStats& row) const {
  if (listen_path_total_ns_ == 0) return 0;
  return static_cast<double>(row.on_listen_path_ns) / static_cast<double>(listen_path_total_ns_);
}

double PathBreakdown::execve_path_share(const LaneStepStats& row) const {
  if (execve_path_total_ns_ == 0) return 0;
  return static_cast<double>(row.on_execve_path_ns) / static_cast<double>(execve_path_total_ns_);
}

}  // namespace hacoboot
