#include "model/summary.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace hacoboot {

void SampleStats::add(std::uint64_t value_ns) {
  ++count_;
  sum_ += value_ns;
  min_ = std::min(min_, value_ns);
  max_ = std::max(max_, value_ns);
  const auto value = static_cast<double>(value_ns);
  const double delta = value - mean_;
  mean_ += delta / static_cast<double>(count_);
  squares_ += delta * (value - mean_);

  if (histogram_) {
    histogram_->add(value_ns);
    return;
  }
  if (samples_.size() < exact_samples_) {
    sorted_ = sorted_ && (samples_.empty() || samples_.back() <= value_ns);
    samples_.push_back(value_ns);
    return;
  }
  histogram_ = std::make_unique<LogLinearHistogram>();
  for (const auto sample : samples_) histogram_->add(sample);
  histogram_->add(value_ns);
  samples_ = {};
}

std::uint64_t SampleStats::avg() const {
  return empty() ? 0 : static_cast<std::uint64_t>(sum_ / count_);
}

std::uint64_t SampleStats::stddev() const {
  if (empty()) return 0;
  return static_cast<std::uint64_t>(std::llround(std::sqrt(squares_ / static_cast<double>(count_))));
}

void SampleStats::sort_samples() const {
  if (sorted_) return;
  std::sort(samples_.begin(), samples_.end());
  sorted_ = true;
}

std::uint64_t SampleStats::percentile(double q) const {
  if (empty()) return 0;
  const auto n = static_cast<double>(count_);
  const auto rank = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(q / 100.0 * n)), 1, count_);
  if (histogram_) return std::clamp(histogram_->value_at_rank(rank), min(), max());
  sort_samples();
  return samples_[rank - 1];
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> SampleStats::value_counts() const {
  if (histogram_) {
    auto counts = histogram_->value_counts();
    // As percentile() reads them: a bucket's middle never beyond what was seen.
    for (auto& [value, count] : counts) value = std::clamp(value, min(), max());
    return counts;
  }
  sort_samples();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> counts;
  for (const auto sample : samples_) {
    if (!counts.empty() && counts.back().first == sample) {
      ++counts.back().second;
    } else {
      counts.emplace_back(sample, 1);
    }
  }
  return counts;
}

std::array<std::uint64_t, 65> SampleStats::log2_counts() const {
  if (histogram_) return histogram_->log2_counts();
  std::array<std::uint64_t, 65> slots{};
  for (const auto sample : samples_) {
    slots.at(sample == 0 ? 0 : 64 - static_cast<std::size_t>(std::countl_zero(sample)))++;
  }
  return slots;
}

void BootCounts::add(const BootRecord& boot) {
  const auto outcome = boot.outcome();
  if (outcome == BootOutcome::Unstarted) {
    ++unstarted;
    return;
  }
  ++started;
  const auto reached = [&boot](const std::optional<std::uint64_t>& ts_ns) {
    return ts_ns && boot.since_start(*ts_ns).has_value();
  };
  execve += reached(boot.execve_ns) ? 1 : 0;
  listen += reached(boot.listen_ns) ? 1 : 0;
  in_flight += outcome == BootOutcome::InFlight ? 1 : 0;
  if (outcome != BootOutcome::Failed) return;
  ++incomplete;
  const auto failure = boot.failure();
  if (!failure) return;
  if (const auto group = failures.find(*failure); group != failures.end()) {
    ++group->second;
  } else if (failures.size() < kMaxFailureGroups) {
    failures.emplace(*failure, 1);
  }
}

std::vector<std::pair<BootFailure, std::uint64_t>> BootCounts::failures_by_count() const {
  std::vector<std::pair<BootFailure, std::uint64_t>> groups(failures.begin(), failures.end());
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return groups;
}

void Summary::add(const BootRecord& boot) {
  add(boot, analyse_boot(boot));
}

void Summary::add(const BootRecord& boot, const BootAnalysis& analysis) {
  boots_.add(boot);
  for (const auto& timing : boot.steps_after_start()) {
    // steps_after_start() keeps only steps with since_start: checked for the analyzer
    if (!timing.since_start) continue;
    auto& stats = steps_[timing.step];
    stats.since_start.add(*timing.since_start);
    if (timing.delta) stats.delta.add(*timing.delta);
  }
  if (boot.started()) paths_.add(analysis);
}

const SampleStats& Summary::since_start_of(const Step& step) const {
  static const SampleStats kNone;
  const auto it = steps_.find(step);
  return it == steps_.end() ? kNone : it->second.since_start;
}

std::vector<std::pair<Step, const StepStats*>> Summary::steps_in_boot_order() const {
  std::vector<std::pair<Step, const StepStats*>> rows;
  rows.reserve(steps_.size());
  for (const auto& [step, stats] : steps_) rows.emplace_back(step, &stats);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second->since_start.avg() < b.second->since_start.avg();
  });
  return rows;
}

}  // namespace hacoboot
