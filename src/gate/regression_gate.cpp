#include "gate/regression_gate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <ostream>
#include <utility>

#include "report/report.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

constexpr std::array<std::pair<std::string_view, GateFigure>, 2> kFigures{{
    {"noise-free", GateFigure::NoiseFree},
    {"wall", GateFigure::Wall},
}};

// The oldest version whose summaries measure what this one's do: figures of
// an older tool (none yet) or of a newer one may be measured otherwise.
constexpr std::string_view kOldestComparableVersion = "0.1.0";

// A rank test of fewer boots per run cannot be significant at any useful
// level (two against two: p >= 1/3).
constexpr std::uint64_t kFewestBoots = 3;

// The chance boots_needed aims at of detecting --max-regression: the usual 80 %.
constexpr double kPower = 0.8;

// MAD * 1.4826 estimates the standard deviation of normal data without
// being moved by the outliers boot times have.
constexpr double kMadToSpread = 1.4826;

using Version = std::array<std::uint64_t, 3>;

// "0.1.0"; nullopt for anything else.
std::optional<Version> version_of(std::string_view text) {
  Version version{};
  const char* at = text.data();
  const char* end = text.data() + text.size();
  for (std::size_t i = 0; i < version.size(); ++i) {
    if (i > 0) {
      if (at == end || *at != '.') return std::nullopt;
      ++at;
    }
    const auto [next, ec] = std::from_chars(at, end, version.at(i));
    if (ec != std::errc{} || next == at) return std::nullopt;
    at = next;
  }
  return at == end ? std::optional(version) : std::nullopt;
}

// Summaries of another tool version are refused when their figures may
// not be this version's; those that predate the field are not checked.
Expected<void> check_version(const RunOrigin& origin, const char* whose) {
  if (origin.tool_version.empty()) return {};
  const auto version = version_of(origin.tool_version);
  if (!version) {
    return Failure{fmt::format("{} was written by hacoboot-sampler '{}', not a version this tool knows", whose,
                               printable(origin.tool_version))};
  }
  // This tool's own versions, well-formed: checked all the same, for the analyzer.
  const auto newest = version_of(tool_version());
  const auto oldest = version_of(kOldestComparableVersion);
  if (newest && *version > *newest) {
    return Failure{
        fmt::format("{} was written by hacoboot-sampler {}, newer than this one ({}): its figures may "
                    "be measured otherwise; compare with that version",
                    whose, origin.tool_version, tool_version())};
  }
  if (oldest && *version < *oldest) {
    return Failure{
        fmt::format("{} was written by hacoboot-sampler {}, whose figures this version's do not match "
                    "(those of {} on do): renew it",
                    whose, origin.tool_version, kOldestComparableVersion)};
  }
  return {};
}

// A metric as users name it in --gate: "execve", "phase 13".
std::string metric_shown(const std::string& key) {
  constexpr std::string_view kPhaseKey = "phase:";
  return key.starts_with(kPhaseKey) ? "phase " + key.substr(kPhaseKey.size()) : key;
}

std::string command_shown(const std::string& command) {
  return command.empty() ? std::string("any first execve") : "COMMAND '" + printable(command) + "'";
}

// How much a run's boots vary, robustly: the scaled median absolute deviation.
double spread_of(const std::vector<double>& values) {
  const double median = quantile_of(values, 0.5);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (const double v : values) deviations.push_back(std::abs(v - median));
  return kMadToSpread * quantile_of(std::move(deviations), 0.5);
}

// The figures a row compares: noise-free when asked for and both runs have
// it (execve and listen), wall otherwise.
struct Compared {
  const FigureStats* baseline;
  const FigureStats* now;
  GateFigure figure;
};

Compared compared_of(const MetricFigures& baseline, const MetricFigures& now, GateFigure wanted) {
  if (wanted == GateFigure::NoiseFree && baseline.noise_free && now.noise_free) {
    return {&*baseline.noise_free, &*now.noise_free, GateFigure::NoiseFree};
  }
  return {&baseline.wall, &now.wall, GateFigure::Wall};
}

// The row's samples, kept between the test and the verdict.
struct Ranked {
  std::vector<double> baseline;
  std::vector<double> now;
};

// A change beyond --max-regression either way, or none.
Verdict verdict_of_change(double change_pct, const GateConfig& config) {
  if (change_pct > config.max_regression_pct) return Verdict::Regressed;
  if (change_pct < -config.max_regression_pct) return Verdict::Improved;
  return Verdict::NoChange;
}

void judge_by_percentile(MetricComparison& row, const Compared& compared, const GateConfig& config) {
  row.method = GateMethod::Percentile;
  const auto before = compared.baseline->get(config.statistic);
  const auto after = compared.now->get(config.statistic);
  row.baseline_median_ns = before;
  row.median_ns = after;
  if (before == 0) {
    row.verdict = Verdict::Inconclusive;
    row.reason = fmt::format("the baseline's {} is 0 ns: no change can be told in % of it",
                             gate_statistic_name(config.statistic));
    return;
  }
  row.change_pct = (static_cast<double>(after) - static_cast<double>(before)) / static_cast<double>(before) * 100.0;
  row.change_low_pct = row.change_high_pct = row.change_pct;
  row.verdict = verdict_of_change(row.change_pct, config);
}

// Boots per run that would tell a shift of --max-regression at the level
// Holm asks of the smallest p-value (alpha / k).
std::optional<std::uint64_t> needed_for(const Ranked& ranked, double baseline_median, const GateConfig& config,
                                        std::size_t tested) {
  const double spread = std::max(spread_of(ranked.baseline), spread_of(ranked.now));
  const double alpha = config.alpha / static_cast<double>(std::max<std::size_t>(tested, 1));
  return boots_needed(spread, config.max_regression_pct / 100.0 * baseline_median, alpha, kPower);
}

// The boots per run a row's advice names: never fewer than the test needs
// to reach its level at all (boots that vary little need few by the
// estimate, but not fewer than that), and no advice when the runs have that
// many already: the estimate then does not tell what would.
std::optional<std::uint64_t> advised_boots(std::optional<std::uint64_t> needed, const MetricComparison& row,
                                           const GateConfig& config, std::size_t tested) {
  if (!needed) return std::nullopt;
  const double alpha = config.alpha / static_cast<double>(std::max<std::size_t>(tested, 1));
  const auto advised = std::max<std::uint64_t>(*needed, fewest_boots_for(alpha));
  if (advised <= std::min(row.baseline_boots, row.boots)) return std::nullopt;
  return advised;
}

// The rank test and the shift; nullopt when the row cannot be tested (its
// verdict and reason are then set).
std::optional<Ranked> test_row(MetricComparison& row, const Compared& compared, const GateConfig& config) {
  row.method = GateMethod::RankTest;
  row.baseline_median_ns = compared.baseline->p50_ns;
  row.median_ns = compared.now->p50_ns;
  Ranked ranked{compared.baseline->samples.ranked_values(), compared.now->samples.ranked_values()};
  if (row.baseline_median_ns == 0) {
    row.verdict = Verdict::Inconclusive;
    row.reason = "the baseline's median is 0 ns: no change can be told in % of it";
    return std::nullopt;
  }
  const auto base = static_cast<double>(row.baseline_median_ns);
  const auto shift = hodges_lehmann(ranked.baseline, ranked.now, 1 - config.alpha);
  if (!shift) return std::nullopt;  // never: row_of tests only rows with samples on both sides
  row.change_pct = shift->estimate / base * 100.0;
  row.change_low_pct = shift->low / base * 100.0;
  row.change_high_pct = shift->high / base * 100.0;
  row.confidence = shift->confidence;
  if (std::min(row.baseline_boots, row.boots) < kFewestBoots) {
    row.verdict = Verdict::Inconclusive;
    row.boots_needed = advised_boots(needed_for(ranked, base, config, 1), row, config, 1);
    row.reason = fmt::format("{} boots against {}: too few for a rank test", row.baseline_boots, row.boots);
    return std::nullopt;
  }
  row.p_value = row.adjusted_p = mann_whitney(ranked.baseline, ranked.now).p_value;
  row.ranked = true;
  return ranked;
}

// The verdict of a tested row once its p-value is adjusted.
void judge_by_rank_test(MetricComparison& row, bool rejected, const Ranked& ranked, const GateConfig& config,
                        std::size_t tested) {
  if (rejected) {
    row.verdict = verdict_of_change(row.change_pct, config);
    if (row.verdict == Verdict::NoChange) row.verdict = row.change_pct > 0 ? Verdict::Slower : Verdict::Faster;
    const double limit = config.max_regression_pct;
    if (row.verdict != Verdict::Regressed && row.change_high_pct > limit) {
      row.reason = fmt::format("its interval [{}, {}] straddles the limit +{}%: it may be slower than that",
                               format_change(row.change_low_pct), format_change(row.change_high_pct), limit);
    } else if (row.verdict != Verdict::Improved && row.change_low_pct < -limit) {
      row.reason = fmt::format("its interval [{}, {}] straddles the limit -{}%", format_change(row.change_low_pct),
                               format_change(row.change_high_pct), limit);
    }
    return;
  }
  const auto needed = needed_for(ranked, static_cast<double>(row.baseline_median_ns), config, tested);
  const bool too_few = needed && *needed > std::min(row.baseline_boots, row.boots);
  if (row.change_high_pct <= config.max_regression_pct && !too_few) {
    row.verdict = Verdict::NoChange;
    return;
  }
  row.verdict = Verdict::Inconclusive;
  row.boots_needed = advised_boots(needed, row, config, tested);
  row.reason =
      row.change_high_pct > config.max_regression_pct
          ? fmt::format("no significant change, but the shift may reach {}", format_change(row.change_high_pct))
          : fmt::format("{} boots against {} cannot tell +{}% from noise", row.baseline_boots, row.boots,
                        config.max_regression_pct);
}

// One row per metric of either run, figures compared but not yet judged by
// the rank test (which needs every gated row's p-value first).
MetricComparison row_of(const std::string& key, const std::string& name, const MetricFigures* baseline,
                        const MetricFigures* now, const GateConfig& config, std::optional<Ranked>& ranked) {
  MetricComparison row;
  row.key = key;
  row.name = name;
  row.gated = config.gated.empty() || config.gated.contains(key);
  row.baseline_boots = baseline ? baseline->wall.count : 0;
  row.boots = now ? now->wall.count : 0;
  if (!baseline) {
    row.verdict = Verdict::New;
  } else if (!now) {
    row.verdict = row.gated ? Verdict::Inconclusive : Verdict::Missing;
    if (row.gated) row.reason = "no boot of this run reached it";
  } else {
    const auto compared = compared_of(*baseline, *now, key.starts_with("phase:") ? GateFigure::Wall : config.figure);
    row.figure = compared.figure;
    row.baseline_boots = compared.baseline->count;
    row.boots = compared.now->count;
    if (compared.baseline->samples.empty() || compared.now->samples.empty()) {
      judge_by_percentile(row, compared, config);
    } else {
      ranked = test_row(row, compared, config);
    }
  }
  return row;
}

// Holm over the gated rows that were tested, the others at alpha alone.
// Returns Holm's k: how many gated rows were tested.
std::size_t judge_tested_rows(std::vector<MetricComparison>& rows, const std::vector<std::optional<Ranked>>& ranked,
                              const GateConfig& config) {
  std::vector<std::size_t> gated;
  std::vector<double> p_values;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (ranked[i] && rows[i].gated) {
      gated.push_back(i);
      p_values.push_back(rows[i].p_value);
    }
  }
  const auto adjusted = holm_adjusted(p_values);
  for (std::size_t j = 0; j < gated.size(); ++j) rows[gated[j]].adjusted_p = adjusted[j];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& tested_ranks = ranked[i];
    if (!tested_ranks) continue;
    const std::size_t tested = rows[i].gated ? gated.size() : 1;
    judge_by_rank_test(rows[i], rows[i].adjusted_p <= config.alpha, *tested_ranks, config, tested);
  }
  return gated.size();
}

void add_notes(GateResult& result, const RunFigures& baseline, const GateConfig& config) {
  const auto any = [&](auto predicate) { return std::any_of(result.rows.begin(), result.rows.end(), predicate); };
  if (any([](const auto& row) { return row.method == GateMethod::Percentile && row.verdict != Verdict::New; })) {
    result.notes.push_back(fmt::format(
        "the baseline has no samples (schema {}): compared by {} alone against --max-regression, without a test "
        "of significance; renew it with this version to gate by a rank test",
        baseline.origin.schema, gate_statistic_name(config.statistic)));
  }
  if (config.figure == GateFigure::NoiseFree && any([](const auto& row) {
        return row.gated && !row.key.starts_with("phase:") && row.figure == GateFigure::Wall &&
               row.baseline_boots > 0 && row.boots > 0;
      })) {
    result.notes.emplace_back(
        "no noise-free figures in both runs (an older summary, or boots without the scheduler's readings): "
        "execve and listen compared by wall-clock time, which moves with CPU contention");
  }
  if (baseline.origin.tool_version.empty()) {
    result.notes.push_back(fmt::format("the baseline (schema {}) does not say which version wrote it: not checked",
                                       baseline.origin.schema));
  }
  if (any([](const auto& row) { return std::max(row.baseline_boots, row.boots) > Distribution::kMaxRankedBoots; })) {
    result.notes.push_back(fmt::format("runs of more than {} boots are ranked by {} evenly spaced quantiles",
                                       Distribution::kMaxRankedBoots, Distribution::kMaxRankedBoots));
  }
  if (any([](const auto& row) { return !row.gated; })) {
    result.notes.emplace_back("* not gated: reported only, its p-value not adjusted");
  }
}

}  // namespace

std::optional<GateFigure> parse_gate_figure(std::string_view text) {
  for (const auto& [name, figure] : kFigures) {
    if (iequals(name, text)) return figure;
  }
  return std::nullopt;
}

const char* gate_figure_name(GateFigure figure) {
  for (const auto& [name, candidate] : kFigures) {
    if (candidate == figure) return name.data();
  }
  return "?";
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::NoChange: return "no significant change";
    case Verdict::Slower: return "slower, within the limit";
    case Verdict::Faster: return "faster, within the limit";
    case Verdict::Improved: return "improved";
    case Verdict::Regressed: return "REGRESSED";
    case Verdict::Inconclusive: return "INCONCLUSIVE";
    case Verdict::New: return "new";
    case Verdict::Missing: return "missing";
  }
  return "?";
}

GateOutcome GateResult::outcome() const {
  const auto gated_is = [this](Verdict verdict) {
    return std::any_of(rows.begin(), rows.end(), [&](const auto& row) { return row.gated && row.verdict == verdict; });
  };
  if (gated_is(Verdict::Regressed)) return GateOutcome::Regressed;
  if (gated_is(Verdict::Inconclusive)) return GateOutcome::Inconclusive;
  return GateOutcome::Passed;
}

int gate_exit_status(GateOutcome outcome) {
  switch (outcome) {
    case GateOutcome::Passed: return kExitOk;
    case GateOutcome::Regressed: return kExitRegressed;
    case GateOutcome::Inconclusive: return kExitInconclusive;
  }
  return kExitInconclusive;
}

const char* gate_outcome_name(GateOutcome outcome) {
  switch (outcome) {
    case GateOutcome::Passed: return "passed";
    case GateOutcome::Regressed: return "REGRESSED";
    case GateOutcome::Inconclusive: return "INCONCLUSIVE";
  }
  return "?";
}

Expected<void> check_baseline(const RunFigures& baseline, const RunOrigin& now, const GateConfig& config) {
  if (baseline.boots == 0) {
    return Failure{"the baseline run saw no boot (boots.started is 0): there is nothing to compare with"};
  }
  for (const auto& key : config.gated) {
    if (!baseline.metrics.contains(key)) {
      return Failure{
          fmt::format("no boot of the baseline run reached {}: it cannot gate it (--gate)", metric_shown(key))};
    }
  }
  if (baseline.origin.start_phase != now.start_phase) {
    return Failure{
        fmt::format("the baseline's clock starts at phase {}, this run's at phase {} (--from): their "
                    "times are not comparable",
                    baseline.origin.start_phase, now.start_phase)};
  }
  if (baseline.origin.command != now.command) {
    return Failure{fmt::format("the baseline timed {}, this run {}: their times are not comparable",
                               command_shown(baseline.origin.command), command_shown(now.command))};
  }
  return check_version(baseline.origin, "the baseline");
}

Expected<void> check_comparable(const RunFigures& baseline, const RunFigures& now, const GateConfig& config) {
  if (auto comparable = check_baseline(baseline, now.origin, config); !comparable) return comparable;
  return check_version(now.origin, "the new summary");
}

GateResult compare_runs(const RunFigures& baseline, const RunFigures& now, const GateConfig& config) {
  std::set<std::string> keys;
  for (const auto& [key, metric] : baseline.metrics) keys.insert(key);
  for (const auto& [key, metric] : now.metrics) keys.insert(key);
  GateResult result;
  std::vector<std::optional<Ranked>> ranked(keys.size());
  for (const auto& key : keys) {
    const auto b = baseline.metrics.find(key);
    const auto n = now.metrics.find(key);
    const bool in_baseline = b != baseline.metrics.end();
    const bool in_now = n != now.metrics.end();
    result.rows.push_back(row_of(key, in_now ? n->second.name : b->second.name, in_baseline ? &b->second : nullptr,
                                 in_now ? &n->second : nullptr, config, ranked.at(result.rows.size())));
  }
  result.tested = judge_tested_rows(result.rows, ranked, config);
  // Boot order, as the summary's breakdown.
  const auto time_of = [&](const MetricComparison& row) {
    const auto n = now.metrics.find(row.key);
    return n != now.metrics.end() ? n->second.wall.avg_ns : baseline.metrics.at(row.key).wall.avg_ns;
  };
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [&](const auto& a, const auto& b) { return time_of(a) < time_of(b); });
  add_notes(result, baseline, config);
  result.steps = compare_steps(baseline, now, config);
  return result;
}

}  // namespace hacoboot
