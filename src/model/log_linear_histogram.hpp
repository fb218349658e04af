#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace hacoboot {

// Counts of non-negative integers in buckets whose width is 1/128 of their
// lower bound (HDR-style: 128 linear sub-buckets per power of two), so any
// value read back is within kMaxRelativeError of a value that was added.
// Fixed size, whatever the number of samples.
class LogLinearHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kSubBucketBits;
  // Upper bound of |reported - true| / true for values read back.
  static constexpr double kMaxRelativeError = 0.5 / static_cast<double>(kSubBuckets);

  LogLinearHistogram();

  void add(std::uint64_t value, std::uint64_t times = 1);
  [[nodiscard]] std::uint64_t count() const { return count_; }
  // The value of 1-based rank `rank` in sorted order, to within kMaxRelativeError.
  [[nodiscard]] std::uint64_t value_at_rank(std::uint64_t rank) const;
  // Samples per power-of-two slot: [0]: value 0, [k]: [2^(k-1), 2^k).
  [[nodiscard]] std::array<std::uint64_t, 65> log2_counts() const;
  // [value, count] per non-empty bucket in ascending value, the value being
  // the one value_at_rank reads for the bucket.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, std::uint64_t>> value_counts() const;

 private:
  static std::size_t index_of(std::uint64_t value);
  static std::uint64_t lowest_of(std::size_t index);
  static std::uint64_t highest_of(std::size_t index);
  static std::uint64_t middle_of(std::size_t index);  // what a bucket's samples read as

  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0;
};

}  // namespace hacoboot
