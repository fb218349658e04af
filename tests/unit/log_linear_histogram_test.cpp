#include "model/log_linear_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/summary.hpp"

namespace hacoboot {
namespace {

// Every value read back lies within the documented relative error of the
// value that was added, across the whole 64-bit range.
TEST(LogLinearHistogram, EachValueReadsBackWithinTheDocumentedError) {
  std::mt19937_64 random(42);
  for (int i = 0; i < 20'000; ++i) {
    const auto value = random() >> (random() % 64);
    LogLinearHistogram h;
    h.add(value);
    const auto back = static_cast<double>(h.value_at_rank(1));
    EXPECT_LE(std::abs(back - static_cast<double>(value)),
              static_cast<double>(value) * LogLinearHistogram::kMaxRelativeError + 0.5)
        << value;
  }
}

TEST(LogLinearHistogram, SmallValuesAreExact) {
  LogLinearHistogram h;
  for (std::uint64_t v = 0; v < LogLinearHistogram::kSubBuckets; ++v) h.add(v);
  for (std::uint64_t rank = 1; rank <= LogLinearHistogram::kSubBuckets; ++rank)
    EXPECT_EQ(h.value_at_rank(rank), rank - 1);
}

TEST(LogLinearHistogram, Log2CountsMatchPowerOfTwoSlots) {
  LogLinearHistogram h;
  h.add(0);
  h.add(1);
  h.add(1'000'000, 3);               // [2^19, 2^20)
  h.add(std::uint64_t{1} << 40, 2);  // exactly 2^40: slot 41
  const auto slots = h.log2_counts();
  EXPECT_EQ(slots[0], 1U);
  EXPECT_EQ(slots[1], 1U);
  EXPECT_EQ(slots[20], 3U);
  EXPECT_EQ(slots[41], 2U);
  EXPECT_EQ(h.count(), 7U);
}

// Percentiles of a skewed distribution (boot times are: most fast, a long
// tail) past the exact limit stay within the documented error.
TEST(SampleStats, PercentilesOfALongTailedDistributionStayWithinTheError) {
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> boot_ns(std::log(20e6), 0.8);  // median 20 ms
  SampleStats stats;
  std::vector<std::uint64_t> all;
  for (std::size_t i = 0; i < 5 * SampleStats::kExactSamples; ++i) {
    const auto v = static_cast<std::uint64_t>(boot_ns(random));
    stats.add(v);
    all.push_back(v);
  }
  ASSERT_FALSE(stats.exact());
  std::sort(all.begin(), all.end());
  for (const double q : {50.0, 90.0, 99.0, 99.9}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(all.size())));
    const auto truth = static_cast<double>(all[rank - 1]);
    EXPECT_NEAR(static_cast<double>(stats.percentile(q)), truth, truth * LogLinearHistogram::kMaxRelativeError)
        << "p" << q;
  }
}

}  // namespace
}  // namespace hacoboot
