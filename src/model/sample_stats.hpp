#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "model/log_linear_histogram.hpp"

namespace hacoboot {

// Distribution of durations in ns. count, avg, min and max are exact
// integers (avg truncated like bpftrace's); percentiles are exact up to
// kExactSamples samples, then read from a LogLinearHistogram (within its
// kMaxRelativeError), so memory stays bounded however many boots are seen.
class SampleStats {
 public:
  static constexpr std::size_t kExactSamples = 10'000;

  SampleStats() = default;
  // Exact up to `exact_samples` samples (at most kExactSamples): the
  // figures kept per step of the breakdown keep fewer than a milestone's.
  explicit SampleStats(std::size_t exact_samples) : exact_samples_(std::min(exact_samples, kExactSamples)) {}

  void add(std::uint64_t value_ns);

  [[nodiscard]] std::uint64_t count() const { return count_; }
  [[nodiscard]] bool empty() const { return count_ == 0; }
  // 0 when empty, as are min, max, stddev and percentiles.
  [[nodiscard]] std::uint64_t avg() const;
  [[nodiscard]] std::uint64_t min() const { return empty() ? 0 : min_; }
  [[nodiscard]] std::uint64_t max() const { return max_; }
  // Population standard deviation, rounded to the ns.
  [[nodiscard]] std::uint64_t stddev() const;
  // Nearest-rank percentile, q in (0, 100].
  [[nodiscard]] std::uint64_t percentile(double q) const;
  // Samples per power-of-two slot: [0]: 0 ns, [k]: [2^(k-1), 2^k) ns.
  [[nodiscard]] std::array<std::uint64_t, 65> log2_counts() const;
  [[nodiscard]] bool exact() const { return histogram_ == nullptr; }
  // The samples as [value, count] pairs in ascending value: exact while
  // exact(), then one pair per histogram bucket (its value as percentile
  // reads it; at most 8,192 in use), however many were added.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, std::uint64_t>> value_counts() const;

 private:
  void sort_samples() const;

  std::size_t exact_samples_ = kExactSamples;
  std::uint64_t count_ = 0;
  __extension__ using Sum = unsigned __int128;  // cannot overflow: 2^64 samples of 2^64 ns
  Sum sum_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
  // Welford's running mean and sum of squared deviations. In double, not
  // long double: x87 arithmetic made add() a fifth of the pipeline's time,
  // and a double's 53 bits keep the stddev of any run exact to the ns.
  double mean_ = 0;
  double squares_ = 0;
  mutable std::vector<std::uint64_t> samples_;  // sorted lazily, while exact()
  mutable bool sorted_ = true;
  std::unique_ptr<LogLinearHistogram> histogram_;
};

}  // namespace hacoboot
