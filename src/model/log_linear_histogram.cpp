#include "model/log_linear_histogram.hpp"

#include <bit>
#include <limits>

namespace hacoboot {
namespace {

// Values below kSubBuckets get a bucket each; above, every power of two
// 2^e (e >= kSubBucketBits) is split into kSubBuckets equal buckets.
constexpr std::size_t kBucketCount = LogLinearHistogram::kSubBuckets * (64 - LogLinearHistogram::kSubBucketBits + 1);

unsigned log2_floor(std::uint64_t value) {
  return 63U - static_cast<unsigned>(std::countl_zero(value));
}

}  // namespace

LogLinearHistogram::LogLinearHistogram() : buckets_(kBucketCount, 0) {}

std::size_t LogLinearHistogram::index_of(std::uint64_t value) {
  if (value < kSubBuckets) return value;
  const unsigned shift = log2_floor(value) - kSubBucketBits;
  // value >> shift lies in [kSubBuckets, 2 * kSubBuckets).
  return (shift + 1) * kSubBuckets + ((value >> shift) - kSubBuckets);
}

std::uint64_t LogLinearHistogram::lowest_of(std::size_t index) {
  if (index < kSubBuckets) return index;
  const std::size_t shift = index / kSubBuckets - 1;
  return (kSubBuckets + index % kSubBuckets) << shift;
}

std::uint64_t LogLinearHistogram::highest_of(std::size_t index) {
  if (index + 1 >= kBucketCount) return std::numeric_limits<std::uint64_t>::max();
  return lowest_of(index + 1) - 1;
}

void LogLinearHistogram::add(std::uint64_t value, std::uint64_t times) {
  buckets_[index_of(value)] += times;
  count_ += times;
}

std::uint64_t LogLinearHistogram::middle_of(std::size_t index) {
  const std::uint64_t low = lowest_of(index);
  return low + (highest_of(index) - low) / 2;
}

std::uint64_t LogLinearHistogram::value_at_rank(std::uint64_t rank) const {
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank && buckets_[i] > 0) return middle_of(i);
  }
  return 0;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> LogLinearHistogram::value_counts() const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> counts;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] > 0) counts.emplace_back(middle_of(i), buckets_[i]);
  }
  return counts;
}

std::array<std::uint64_t, 65> LogLinearHistogram::log2_counts() const {
  std::array<std::uint64_t, 65> slots{};
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] == 0) continue;
    const std::uint64_t low = lowest_of(i);
    // Buckets never straddle a power of two, so the lower bound decides.
    slots.at(low == 0 ? 0 : log2_floor(low) + 1) += buckets_[i];
  }
  return slots;
}

}  // namespace hacoboot
