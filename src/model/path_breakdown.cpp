#include "model/path_breakdown.hpp"

#include <algorithm>
#include <set>

namespace hacoboot {

std::optional<SchedTotals> LaneStepStats::mean_states() const {
  if (boots_with_states == 0) return std::nullopt;
  return SchedTotals{states.cpu / boots_with_states, states.run_queue / boots_with_states,
                     states.sleep / boots_with_states, states.io / boots_with_states};
}

void PathBreakdown::add(const BootAnalysis& boot) {
  if (boot.forks_only) ++forks_only_boots_;
  // Threads of one lane (Lane::Other) can give a boot two rows of one key.
  std::set<LaneStepKey> on_listen_path;
  for (const auto& step : boot.steps) {
    const LaneStepKey key{step.lane, step.step};
    auto& row = steps_[key];
    if (step.since_start) row.since_start.add(*step.since_start);
    row.own.add(step.duration());
    if (step.states) {
      row.states += *step.states;
      ++row.boots_with_states;
    }
    row.on_listen_path_ns += step.on_listen_path_ns;
    row.on_execve_path_ns += step.on_execve_path_ns;
    if (step.on_listen_path() && on_listen_path.insert(key).second) ++row.boots_on_listen_path;
  }
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
