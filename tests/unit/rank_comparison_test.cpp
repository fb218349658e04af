#include "gate/rank_comparison.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace hacoboot {
namespace {

using Sample = std::vector<double>;

// Exact two-sided p-values for m = n = 5 (the Mann-Whitney table: 252
// arrangements; U <= 2 in 4 of them, U <= 3 in 7), so the 5 % critical
// value of U is 2.
TEST(MannWhitney, ExactPValuesMatchTheTableForFiveAgainstFive) {
  const auto separated = mann_whitney(Sample{1, 2, 3, 4, 5}, Sample{6, 7, 8, 9, 10});
  EXPECT_TRUE(separated.exact);
  EXPECT_EQ(separated.u, 25);
  EXPECT_NEAR(separated.p_value, 2.0 / 252, 1e-12);

  const auto u_two = mann_whitney(Sample{1, 2, 3, 4, 7}, Sample{5, 6, 8, 9, 10});
  EXPECT_EQ(u_two.u, 23);  // 25 - 2: U = 2 from the other side
  EXPECT_NEAR(u_two.p_value, 8.0 / 252, 1e-12);
  EXPECT_LT(u_two.p_value, 0.05);

  const auto u_three = mann_whitney(Sample{1, 2, 3, 5, 7}, Sample{4, 6, 8, 9, 10});
  EXPECT_EQ(u_three.u, 22);
  EXPECT_NEAR(u_three.p_value, 14.0 / 252, 1e-12);
  EXPECT_GT(u_three.p_value, 0.05);
}

TEST(MannWhitney, TheTestIsSymmetric) {
  const Sample a{3.1, 4.7, 2.2, 9.0, 5.5, 6.1};
  const Sample b{7.3, 8.8, 6.6, 10.2};
  const auto ab = mann_whitney(a, b);
  const auto ba = mann_whitney(b, a);
  EXPECT_EQ(ab.u + ba.u, 24);
  EXPECT_NEAR(ab.p_value, ba.p_value, 1e-12);
}

// Derived by hand: U = 13 of 16 pairs; ties of three 2s and three 3s give
// var(U) = 16/12 * (9 - 48/56); z = (13 - 8 - 0.5) / 3.29502 = 1.36570.
TEST(MannWhitney, TiesUseTheNormalApproximationWithCorrections) {
  const auto test = mann_whitney(Sample{1, 2, 2, 3}, Sample{2, 3, 3, 4});
  EXPECT_FALSE(test.exact);
  EXPECT_EQ(test.u, 13);
  EXPECT_NEAR(test.p_value, 0.1720337, 1e-6);
}

TEST(MannWhitney, IdenticalSamplesShowNoShift) {
  const auto test = mann_whitney(Sample{5, 5, 5}, Sample{5, 5, 5});
  EXPECT_EQ(test.p_value, 1);
}

TEST(MannWhitney, OneBootAgainstOneProvesNothing) {
  const auto test = mann_whitney(Sample{1}, Sample{2});
  EXPECT_EQ(test.u, 1);
  EXPECT_EQ(test.p_value, 1);
  EXPECT_EQ(mann_whitney(Sample{}, Sample{2}).p_value, 1);
}

// Past 49 boots a side the normal approximation takes over: it must reach
// the same verdicts as the exact distribution on the same kind of samples.
TEST(MannWhitney, ExactAndApproximateAgreeAcrossTheSizeBound) {
  const auto samples = [](int boots, double shift) {
    std::pair<Sample, Sample> pair;
    for (int i = 0; i < boots; ++i) {
      pair.first.push_back(i * 2.0);
      pair.second.push_back(i * 2.0 + 1 + 2 * std::floor(shift * boots));  // odd: no ties
    }
    return pair;
  };
  for (const double shift : {0.0, 0.3}) {
    const auto [small_base, small_new] = samples(45, shift);
    const auto [large_base, large_new] = samples(60, shift);
    const auto exact = mann_whitney(small_base, small_new);
    const auto approximate = mann_whitney(large_base, large_new);
    EXPECT_TRUE(exact.exact);
    EXPECT_FALSE(approximate.exact);
    EXPECT_EQ(exact.p_value<0.05, shift> 0) << exact.p_value;
    EXPECT_EQ(approximate.p_value<0.05, shift> 0) << approximate.p_value;
  }
}

// Pairwise differences of 6..10 minus 1..5: 1 once, 2 twice ... 5 five
// times ... 9 once. qwilcox(0.025, 5, 5) = 3: the interval [D3, D23] = [2, 8]
// with an achieved confidence of 1 - 2 * 4/252.
TEST(HodgesLehmann, ShiftAndIntervalForFiveAgainstFive) {
  const auto shift = hodges_lehmann(Sample{1, 2, 3, 4, 5}, Sample{6, 7, 8, 9, 10}, 0.95);
  ASSERT_TRUE(shift);
  EXPECT_EQ(shift->estimate, 5);
  EXPECT_EQ(shift->low, 2);
  EXPECT_EQ(shift->high, 8);
  EXPECT_NEAR(shift->confidence, 1 - 8.0 / 252, 1e-12);
}

TEST(HodgesLehmann, SmallSamplesSayTheConfidenceTheyReach) {
  // Three against three: 20 arrangements, the widest interval leaves out
  // none and reaches 1 - 2/20 = 90 %, not 95 %.
  const auto shift = hodges_lehmann(Sample{1, 2, 3}, Sample{4, 5, 6}, 0.95);
  ASSERT_TRUE(shift);
  EXPECT_EQ(shift->estimate, 3);
  EXPECT_EQ(shift->low, 1);
  EXPECT_EQ(shift->high, 5);
  EXPECT_NEAR(shift->confidence, 0.9, 1e-12);
  EXPECT_FALSE(hodges_lehmann(Sample{}, Sample{1}, 0.95));
}

TEST(HodgesLehmann, TiedSamplesKeepTheIntervalAroundTheEstimate) {
  const auto shift = hodges_lehmann(Sample{10, 10, 12, 12, 14}, Sample{11, 11, 13, 13, 15}, 0.95);
  ASSERT_TRUE(shift);
  EXPECT_EQ(shift->estimate, 1);
  EXPECT_LE(shift->low, shift->estimate);
  EXPECT_GE(shift->high, shift->estimate);
  const auto identical = hodges_lehmann(Sample{5, 5}, Sample{5, 5}, 0.95);
  ASSERT_TRUE(identical);
  EXPECT_EQ(identical->low, 0);
  EXPECT_EQ(identical->high, 0);
}

TEST(Holm, StepsDownAndStopsAtTheFirstKeptHypothesis) {
  EXPECT_EQ(holm_rejections(std::vector<double>{0.01, 0.04, 0.03}, 0.05), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(holm_rejections(std::vector<double>{0.01, 0.02, 0.04}, 0.05), (std::vector<bool>{true, true, true}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(holm_rejections(std::vector<double>{nan, 0.001}, 0.05), (std::vector<bool>{false, true}));
}

// By hand: sorted 0.01, 0.03, 0.04 times 3/1, 3/2, 3/3 give 0.03, 0.045,
// 0.04; from the largest down each keeps the least so far: 0.03, 0.04, 0.04.
// At 0.05 all three are discoveries, where Holm rejects the first only.
TEST(BenjaminiHochberg, AdjustsByRankAndKeepsTheOrder) {
  const auto adjusted = benjamini_hochberg_adjusted(std::vector<double>{0.01, 0.04, 0.03});
  ASSERT_EQ(adjusted.size(), 3U);
  EXPECT_DOUBLE_EQ(adjusted[0], 0.03);
  EXPECT_DOUBLE_EQ(adjusted[1], 0.04);
  EXPECT_DOUBLE_EQ(adjusted[2], 0.04);
  // Five p-values at i * 0.01: each times 5 / i is 0.05.
  for (const double p : benjamini_hochberg_adjusted(std::vector<double>{0.05, 0.04, 0.03, 0.02, 0.01})) {
    EXPECT_NEAR(p, 0.05, 1e-15);
  }
  // Capped at 1; a NaN (no test) counts as 1 and is adjusted to 1.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto capped = benjamini_hochberg_adjusted(std::vector<double>{0.5, 0.01, 1.0, nan});
  EXPECT_DOUBLE_EQ(capped[0], 1.0);
  EXPECT_DOUBLE_EQ(capped[1], 0.04);
  EXPECT_DOUBLE_EQ(capped[2], 1.0);
  EXPECT_DOUBLE_EQ(capped[3], 1.0);
  EXPECT_TRUE(benjamini_hochberg_adjusted(std::vector<double>{}).empty());
}

// z(0.975) + z(0.8) = 2.80159; 2 * 2.80159^2 * pi / 3 = 16.44 boots.
TEST(BootsNeeded, ForAShiftOfOneSpreadAtFivePercentAndEightyPercentPower) {
  EXPECT_EQ(boots_needed(1, 1, 0.05, 0.8), 17U);
  EXPECT_EQ(boots_needed(1, 0.5, 0.05, 0.8), 66U);
  EXPECT_FALSE(boots_needed(1, 0, 0.05, 0.8));
  EXPECT_FALSE(boots_needed(std::nan(""), 1, 0.05, 0.8));
  EXPECT_FALSE(boots_needed(1e300, 1e-300, 0.05, 0.8));
}

TEST(NormalQuantile, KnownValues) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.5), 0, 1e-12);
  EXPECT_NEAR(normal_quantile(0.8), 0.841621, 1e-6);
}

// The gate's spreads read quantiles by the nearest rank on n - 1: the
// median of an even count is its upper middle value. Checked by hand.
TEST(Quantile, NearestRankOfTheValuesInAnyOrder) {
  EXPECT_EQ(quantile_of({5, 1, 4, 2, 3}, 0.5), 3);
  EXPECT_EQ(quantile_of({4, 1, 3, 2}, 0.5), 3) << "the upper middle of four";
  const std::vector<double> twenty{20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(quantile_of(twenty, 0.25), 6) << "rank 4.75 rounds to 5: the 6th value";
  EXPECT_EQ(quantile_of(twenty, 0.75), 15) << "rank 14.25 rounds to 14: the 15th value";
  EXPECT_EQ(quantile_of({}, 0.5), 0);
  EXPECT_EQ(quantile_of({7}, 0.9), 7);
}

}  // namespace
}  // namespace hacoboot
