#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace hacoboot {

// Two-sample rank statistics for the regression gate: is the candidate run's
// metric shifted from the baseline's, by how much, and how sure is that. Rank
// based, as benchstat and TracerBench compare benchmark runs: boot times are
// skewed with outliers (a CPU taken by a neighbour), which a rank test and a
// median-of-differences shift take in their stride and a mean does not.

// Mann-Whitney U test (Wilcoxon rank-sum), two-sided.
struct RankTest {
  // Pairs (baseline x, candidate y) with y > x, ties counting a half: m*n
  // when every candidate boot is slower than every baseline boot.
  double u = 0;
  double p_value = 1;
  // Exact distribution of U (no ties, both samples under 50, as R's
  // wilcox.test), else the normal approximation with tie and continuity
  // corrections.
  bool exact = false;
};
// p_value is 1 when either sample is empty or every value is the same.
RankTest mann_whitney(std::span<const double> baseline, std::span<const double> candidate);

// Hodges-Lehmann estimate of the shift candidate - baseline (the median of
// all pairwise differences) with its rank-based confidence interval (the
// interval of pairwise differences that U's distribution bounds, as R's
// wilcox.test(conf.int = TRUE)).
struct ShiftEstimate {
  double estimate = 0;
  double low = 0;
  double high = 0;
  // What the samples achieve: small samples cannot reach every level (two
  // boots against two cannot give 95 %).
  double confidence = 0;
};
// nullopt when a sample is empty.
std::optional<ShiftEstimate> hodges_lehmann(std::span<const double> baseline, std::span<const double> candidate,
                                            double confidence);

// Holm's step-down procedure: which of these hypotheses to reject while
// keeping the chance of any false rejection among them at most `alpha`.
std::vector<bool> holm_rejections(std::span<const double> p_values, double alpha);
// Holm-adjusted p-values, in the same order: the least alpha at which
// holm_rejections would reject each (at most 1).
std::vector<double> holm_adjusted(std::span<const double> p_values);

// Benjamini-Hochberg adjusted p-values, in the same order: rejecting those
// at most q keeps the expected share of false discoveries among the
// rejections at most q (for independent or positively dependent tests), and
// the chance of any false rejection at most q when nothing moved at all.
std::vector<double> benjamini_hochberg_adjusted(std::span<const double> p_values);

// Boots per run a rank test needs to detect a shift of `shift` with
// probability `power` at level `alpha` (two-sided) when boots vary with
// standard deviation `spread`: the t-test's size over the rank test's
// asymptotic relative efficiency (3/pi under normality). nullopt when the
// shift is not positive or the figures are not finite.
std::optional<std::size_t> boots_needed(double spread, double shift, double alpha, double power);

// The fewest boots per run (n against n) whose rank test can reach `alpha`
// at all, however far apart the runs are.
std::size_t fewest_boots_for(double alpha);

// The value at quantile q (0..1) of boots' values, by the nearest rank on
// n - 1 (the median of an even count is the upper middle value); 0 when
// there are none. The spreads of boots the gate reads (interquartile range,
// median absolute deviation) rest on it.
double quantile_of(std::vector<double> values, double q);

// The standard normal quantile: z with P(Z <= z) = p, for 0 < p < 1.
double normal_quantile(double p);

}  // namespace hacoboot
