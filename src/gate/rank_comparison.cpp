#include "gate/rank_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

namespace hacoboot {
namespace {

// R's wilcox.test computes the exact distribution below this sample size.
constexpr std::size_t kExactBelow = 50;

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::numbers::sqrt2);
}

struct RankSums {
  double candidate_rank_sum = 0;
  double tie_term = 0;  // sum over groups of equal values of t^3 - t
};

RankSums rank(std::span<const double> baseline, std::span<const double> candidate) {
  struct Value {
    double value;
    bool from_candidate;
  };
  std::vector<Value> all;
  all.reserve(baseline.size() + candidate.size());
  for (const double v : baseline) all.push_back({v, false});
  for (const double v : candidate) all.push_back({v, true});
  std::sort(all.begin(), all.end(), [](const Value& a, const Value& b) { return a.value < b.value; });
  RankSums ranked;
  for (std::size_t first = 0; first < all.size();) {
    std::size_t last = first;
    while (last + 1 < all.size() && all[last + 1].value == all[first].value) ++last;
    const auto tied = static_cast<double>(last - first + 1);
    const double midrank = static_cast<double>(first + last) / 2 + 1;
    for (std::size_t i = first; i <= last; ++i) {
      if (all[i].from_candidate) ranked.candidate_rank_sum += midrank;
    }
    ranked.tie_term += tied * tied * tied - tied;
    first = last + 1;
  }
  return ranked;
}

// P(U = u) for u = 0..m*n under the null hypothesis: the coefficients of
// the Gaussian binomial [m+n choose m]_q over C(m+n, m), built as the
// product over i = 1..m of (1 - q^(n+i)) / (1 - q^i).
std::vector<double> u_distribution(std::size_t m, std::size_t n) {
  std::vector<double> ways(m * n + 1, 0.0);
  ways[0] = 1;
  for (std::size_t i = 1; i <= m; ++i) {
    for (std::size_t u = ways.size(); u-- > n + i;) ways[u] -= ways[u - n - i];
    for (std::size_t u = i; u < ways.size(); ++u) ways[u] += ways[u - i];
  }
  const double total = std::accumulate(ways.begin(), ways.end(), 0.0);
  for (double& w : ways) w /= total;
  return ways;
}

double cdf(const std::vector<double>& distribution, std::size_t u) {
  return std::accumulate(distribution.begin(), distribution.begin() + static_cast<std::ptrdiff_t>(u) + 1, 0.0);
}

bool exact_applies(std::size_t m, std::size_t n, const RankSums& ranked) {
  return m < kExactBelow && n < kExactBelow && ranked.tie_term == 0;
}

// U's standard deviation under the null hypothesis, corrected for ties.
double u_spread(std::size_t m, std::size_t n, const RankSums& ranked) {
  const auto mm = static_cast<double>(m);
  const auto nn = static_cast<double>(n);
  const double all = mm + nn;
  return std::sqrt(mm * nn / 12 * ((all + 1) - ranked.tie_term / (all * (all - 1))));
}

// A p-value as the corrections read it: a NaN (no test) as 1.
double p_or_one(std::span<const double> p_values, std::size_t i) {
  return std::isnan(p_values[i]) ? 1.0 : p_values[i];
}

// The indices of the p-values, smallest first (ties in their order).
std::vector<std::size_t> ascending(std::span<const double> p_values) {
  std::vector<std::size_t> order(p_values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p_or_one(p_values, a) < p_or_one(p_values, b); });
  return order;
}

}  // namespace

double normal_quantile(double p) {
  double low = -40;
  double high = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (low + high) / 2;
    (normal_cdf(mid) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

RankTest mann_whitney(std::span<const double> baseline, std::span<const double> candidate) {
  RankTest test;
  const std::size_t m = baseline.size();
  const std::size_t n = candidate.size();
  if (m == 0 || n == 0) return test;
  const RankSums ranked = rank(baseline, candidate);
  const auto nn = static_cast<double>(n);
  test.u = ranked.candidate_rank_sum - nn * (nn + 1) / 2;
  const double middle = static_cast<double>(m * n) / 2;
  if (exact_applies(m, n, ranked)) {
    test.exact = true;
    const auto distribution = u_distribution(m, n);
    const auto u = static_cast<std::size_t>(test.u);
    const double tail = test.u > middle ? 1 - cdf(distribution, u - 1) : cdf(distribution, u);
    test.p_value = std::min(1.0, 2 * tail);
    return test;
  }
  const double spread = u_spread(m, n, ranked);
  if (spread == 0) return test;
  const double shift = test.u - middle;
  const double corrected = shift - std::copysign(0.5, shift);
  const double z = (shift == 0 ? 0 : corrected) / spread;
  test.p_value = std::min(1.0, 2 * std::min(normal_cdf(z), normal_cdf(-z)));
  return test;
}

std::optional<ShiftEstimate> hodges_lehmann(std::span<const double> baseline, std::span<const double> candidate,
                                            double confidence) {
  const std::size_t m = baseline.size();
  const std::size_t n = candidate.size();
  if (m == 0 || n == 0) return std::nullopt;
  std::vector<double> differences;
  differences.reserve(m * n);
  for (const double y : candidate) {
    for (const double x : baseline) differences.push_back(y - x);
  }
  std::sort(differences.begin(), differences.end());
  const std::size_t pairs = differences.size();
  ShiftEstimate shift;
  shift.estimate = pairs % 2 == 1 ? differences[pairs / 2] : (differences[pairs / 2 - 1] + differences[pairs / 2]) / 2;

  // The interval [D(k), D(pairs + 1 - k)] (1-based) leaves out k - 1
  // differences on each side: P(U <= k - 1) each, alpha / 2 at most.
  const double alpha = 1 - confidence;
  const RankSums ranked = rank(baseline, candidate);
  std::size_t k = 1;
  if (exact_applies(m, n, ranked)) {
    const auto distribution = u_distribution(m, n);
    k = 0;  // R's qwilcox(alpha / 2): the least k with P(U <= k) >= alpha / 2
    while (k < pairs && cdf(distribution, k) < alpha / 2) ++k;
    k = std::max<std::size_t>(k, 1);
    shift.confidence = 1 - 2 * cdf(distribution, k - 1);
  } else {
    const double spread = u_spread(m, n, ranked);
    const double middle = static_cast<double>(pairs) / 2;
    const double reach = std::floor(middle - normal_quantile(1 - alpha / 2) * spread);
    k = static_cast<std::size_t>(std::clamp(reach, 1.0, middle));
    shift.confidence = spread == 0 ? 1 : 1 - 2 * normal_cdf((static_cast<double>(k) - 0.5 - middle) / spread);
  }
  k = std::clamp<std::size_t>(k, 1, (pairs + 1) / 2);
  shift.low = differences[k - 1];
  shift.high = differences[pairs - k];
  return shift;
}

std::vector<bool> holm_rejections(std::span<const double> p_values, double alpha) {
  // A p-value that is not a number is never rejected (NaN <= alpha is false).
  const auto order = ascending(p_values);
  std::vector<bool> rejected(p_values.size(), false);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!(p_values[order[i]] <= alpha / static_cast<double>(order.size() - i))) break;
    rejected[order[i]] = true;
  }
  return rejected;
}

std::vector<double> holm_adjusted(std::span<const double> p_values) {
  const auto order = ascending(p_values);
  const auto key = [&](std::size_t i) { return p_or_one(p_values, i); };
  std::vector<double> adjusted(p_values.size(), 1.0);
  double running = 0;  // adjusted p-values never decrease along the order
  for (std::size_t i = 0; i < order.size(); ++i) {
    running = std::max(running, std::min(1.0, static_cast<double>(order.size() - i) * key(order[i])));
    adjusted[order[i]] = running;
  }
  return adjusted;
}

std::vector<double> benjamini_hochberg_adjusted(std::span<const double> p_values) {
  const auto order = ascending(p_values);
  const auto key = [&](std::size_t i) { return p_or_one(p_values, i); };
  std::vector<double> adjusted(p_values.size(), 1.0);
  const auto m = static_cast<double>(order.size());
  double running = 1.0;  // from the largest p-value down, adjusted ones never increase
  for (std::size_t i = order.size(); i-- > 0;) {
    running = std::min({running, 1.0, m / static_cast<double>(i + 1) * key(order[i])});
    adjusted[order[i]] = running;
  }
  return adjusted;
}

// n against n boots, all of one run below all of the other, have the
// smallest two-sided p-value: 2 / C(2n, n).
std::size_t fewest_boots_for(double alpha) {
  if (!(alpha > 0)) return std::numeric_limits<std::size_t>::max();
  std::size_t n = 1;
  double ways = 2;  // C(2n, n) for n = 1
  while (2 / ways > alpha) {
    ++n;
    const auto size = static_cast<double>(n);
    ways *= (2 * size - 1) * (2 * size) / (size * size);
  }
  return n;
}

std::optional<std::size_t> boots_needed(double spread, double shift, double alpha, double power) {
  if (!std::isfinite(spread) || !std::isfinite(shift) || !(shift > 0) || !(spread >= 0)) return std::nullopt;
  // Negated as a whole, so that a NaN, false to every comparison, fails too.
  const bool in_range = alpha > 0 && alpha < 1 && power > 0 && power < 1;
  if (!in_range) return std::nullopt;
  const double z = normal_quantile(1 - alpha / 2) + normal_quantile(power);
  const double t_test = 2 * z * z * spread * spread / (shift * shift);
  const double needed = std::ceil(t_test * std::numbers::pi / 3);
  if (!(needed < 1e9)) return std::nullopt;
  return std::max<std::size_t>(2, static_cast<std::size_t>(needed));
}

double quantile_of(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const auto rank = static_cast<std::ptrdiff_t>(std::lround(q * static_cast<double>(values.size() - 1)));
  const auto at = values.begin() + rank;
  std::nth_element(values.begin(), at, values.end());
  return *at;
}

}  // namespace hacoboot
