#include "gate/regression_gate.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gate/gate_report.hpp"
#include "gate_runs.hpp"
#include "report/report.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

using test::around;
using test::figure;
using test::run_of;
using test::wall_run;
using test::without_samples;

const MetricComparison& row_of(const GateResult& result, const std::string& key) {
  for (const auto& row : result.rows) {
    if (row.key == key) return row;
  }
  throw std::runtime_error("no row " + key);
}

std::string report_of(const GateResult& result, const GateConfig& config = {}) {
  std::ostringstream out;
  write_gate_report(result, config, out);
  return out.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RegressionGate, ASignificantShiftBeyondTheLimitRegresses) {
  const auto result = compare_runs(wall_run(around(10), around(100)), wall_run(around(10), around(130)), {});
  const auto& listen = row_of(result, "listen");
  EXPECT_EQ(listen.verdict, Verdict::Regressed);
  EXPECT_EQ(listen.method, GateMethod::RankTest);
  EXPECT_NEAR(listen.change_pct, 30, 1.5);
  EXPECT_LT(listen.change_low_pct, listen.change_pct);
  EXPECT_GT(listen.change_high_pct, listen.change_pct);
  EXPECT_LT(listen.adjusted_p, 0.001);
  EXPECT_EQ(row_of(result, "execve").verdict, Verdict::NoChange);
  EXPECT_EQ(result.outcome(), GateOutcome::Regressed);
  EXPECT_EQ(result.tested, 2U);
  const auto report = report_of(result);
  EXPECT_TRUE(contains(report,
                       "gate: REGRESSED: listen slower by more than the limit (alpha 0.05, Holm over 2 gated "
                       "metrics, at most +10%)"))
      << report;
}

// A significant shift is never "no significant change": within the limit it
// passes, and says it is slower and by which limit.
TEST(RegressionGate, ASignificantShiftWithinTheLimitPassesAndSaysSlower) {
  const auto result = compare_runs(wall_run(around(10), around(100)), wall_run(around(10), around(105)), {});
  const auto& listen = row_of(result, "listen");
  EXPECT_LT(listen.adjusted_p, 0.05) << "5 % with 1 % noise is significant";
  EXPECT_EQ(listen.verdict, Verdict::Slower);
  EXPECT_EQ(result.outcome(), GateOutcome::Passed);
  const auto report = report_of(result);
  EXPECT_TRUE(contains(report, "slower, within the limit +10%")) << report;
  EXPECT_TRUE(contains(report, "gate: passed")) << report;
}

TEST(RegressionGate, ASignificantShiftFasterWithinTheLimitSaysFaster) {
  const auto result = compare_runs(wall_run(around(10), around(100)), wall_run(around(10), around(95)), {});
  EXPECT_EQ(row_of(result, "listen").verdict, Verdict::Faster);
  EXPECT_TRUE(contains(report_of(result), "faster, within the limit -10%")) << report_of(result);
}

// An interval that reaches past the limit while the estimate stays within
// it must not read as a plain pass.
TEST(RegressionGate, AnIntervalStraddlingTheLimitSaysSo) {
  // Boots spread by +-10 %: the interval of an 8 % shift reaches past 10 %.
  const auto spread = [](double ms) {
    std::vector<double> values;
    for (int i = 0; i < 20; ++i) values.push_back(ms * (0.9 + 0.01 * i));
    return values;
  };
  const auto result = compare_runs(wall_run(around(10), spread(100)), wall_run(around(10), spread(108)), {});
  const auto& listen = row_of(result, "listen");
  ASSERT_EQ(listen.verdict, Verdict::Slower) << report_of(result);
  ASSERT_GT(listen.change_high_pct, 10.0) << report_of(result);
  EXPECT_TRUE(contains(report_of(result), "straddles the limit +10%")) << report_of(result);
}

TEST(RegressionGate, FasterBeyondTheLimitIsImprovedAndPasses) {
  const auto result = compare_runs(wall_run(around(10), around(100)), wall_run(around(10), around(70)), {});
  EXPECT_EQ(row_of(result, "listen").verdict, Verdict::Improved);
  EXPECT_EQ(gate_exit_status(result.outcome()), kExitOk);
}

// Boots that vary by +-50 %: three per run cannot tell +10 % from noise.
TEST(RegressionGate, TooFewBootsForTheLimitAreInconclusiveAndSayHowManyWouldDo) {
  const std::vector<double> noisy{50, 100, 150};
  const auto result = compare_runs(wall_run(noisy, noisy), wall_run(noisy, {55, 105, 160}), {});
  const auto& listen = row_of(result, "listen");
  EXPECT_EQ(listen.verdict, Verdict::Inconclusive);
  ASSERT_TRUE(listen.boots_needed);
  EXPECT_GT(*listen.boots_needed, 3U);
  EXPECT_FALSE(listen.reason.empty());
  EXPECT_EQ(result.outcome(), GateOutcome::Inconclusive);
  EXPECT_EQ(gate_exit_status(result.outcome()), kExitInconclusive);
  const auto report = report_of(result);
  EXPECT_TRUE(contains(report, "boots per run would tell")) << report;
  EXPECT_TRUE(contains(report, "gate: INCONCLUSIVE")) << report;
}

// Three boots per run can never reach p 0.05 (at best 0.1), nor four Holm's
// 0.025 for the smaller of two gated p-values (at best 0.029): advice of
// fewer boots than that, or than the runs have, would change nothing.
TEST(RegressionGate, TheAdviceOfBootsAsksForMoreThanTheRunsHave) {
  const std::vector<double> constant{100, 100, 100};
  const auto result = compare_runs(wall_run(around(10), constant), wall_run(around(10), {200, 200, 200}), {});
  const auto& listen = row_of(result, "listen");
  EXPECT_EQ(listen.verdict, Verdict::Inconclusive);
  ASSERT_TRUE(listen.boots_needed) << listen.reason;
  EXPECT_EQ(*listen.boots_needed, 5U) << "the fewest whose test reaches 0.025";
  EXPECT_TRUE(contains(report_of(result), "about 5 boots per run would tell")) << report_of(result);
}

// What --gate reads: "phase 13", not the key the tool keeps it by.
TEST(CheckBaseline, NamesAGatedPhaseAsUsersWriteIt) {
  GateConfig config;
  config.gated = {"phase:13"};
  const auto usable =
      check_baseline(wall_run(around(10), around(100)), wall_run(around(10), around(100)).origin, config);
  ASSERT_FALSE(usable) << "accepted";
  EXPECT_EQ(usable.error(), "no boot of the baseline run reached phase 13: it cannot gate it (--gate)");
}

// No gated row could be tested (too few boots) and none was compared by a
// percentile: the terms say so, not "p50 compared".
TEST(RegressionGate, TheTermsSayWhenNoGatedMetricWasTested) {
  const auto result = compare_runs(wall_run({10, 11}, {100, 101}), wall_run({10, 11}, {100, 101}), {});
  EXPECT_EQ(result.tested, 0U);
  const auto report = report_of(result);
  EXPECT_TRUE(contains(report, "(no gated metric tested, at most +10%)")) << report;
  EXPECT_FALSE(contains(report, "p50 compared")) << report;
}

// A metric of one run only has no medians to show: not "0 ns".
TEST(RegressionGate, AMetricOfOneRunOnlyShowsNoMedians) {
  auto baseline = wall_run(around(10), around(100));
  baseline.metrics.emplace("phase:13", MetricFigures{.name = "GONE", .wall = figure(around(2))});
  auto now = wall_run(around(10), around(100));
  now.metrics.emplace("phase:14", MetricFigures{.name = "ADDED", .wall = figure(around(3))});
  const auto report = report_of(compare_runs(baseline, now, {}));
  for (const char* name : {"GONE", "ADDED"}) {
    const auto at = report.find(name);
    ASSERT_NE(at, std::string::npos) << report;
    const auto line = report.substr(at, report.find('\n', at) - at);
    EXPECT_FALSE(contains(line, "0 ns")) << line;
    EXPECT_TRUE(contains(line, "         -         - ")) << line;
  }
}

TEST(RegressionGate, OneOrTwoBootsAreAlwaysInconclusive) {
  for (const auto& boots : {std::vector<double>{100}, std::vector<double>{100, 101}}) {
    const auto result = compare_runs(wall_run(around(10), around(100)), wall_run(around(10), boots), {});
    const auto& listen = row_of(result, "listen");
    EXPECT_EQ(listen.verdict, Verdict::Inconclusive) << boots.size();
    EXPECT_TRUE(contains(listen.reason, "too few for a rank test")) << listen.reason;
    EXPECT_EQ(result.tested, 1U) << "only execve was tested";
  }
}

// Five boots against five, U = 2: p = 8/252 = 0.032 each. Alone, a metric
// so shifted regresses at 0.05; two such metrics do not, since Holm asks
// 0.025 of the smaller p-value.
TEST(RegressionGate, HolmControlsTheErrorOverTheGatedMetrics) {
  const std::vector<double> before{10, 20, 30, 40, 70};
  const std::vector<double> after{50, 60, 80, 90, 100};
  const auto both = compare_runs(wall_run(before, before), wall_run(after, after), {});
  for (const char* key : {"execve", "listen"}) {
    const auto& row = row_of(both, key);
    EXPECT_NEAR(row.p_value, 8.0 / 252, 1e-9) << key;
    EXPECT_NEAR(row.adjusted_p, 16.0 / 252, 1e-9) << key;
    EXPECT_NE(row.verdict, Verdict::Regressed) << key;
  }
  GateConfig listen_only;
  listen_only.gated = {"listen"};
  const auto one = compare_runs(wall_run(before, before), wall_run(after, after), listen_only);
  EXPECT_EQ(row_of(one, "listen").verdict, Verdict::Regressed);
  EXPECT_NEAR(row_of(one, "listen").adjusted_p, 8.0 / 252, 1e-9);
  EXPECT_FALSE(row_of(one, "execve").gated);
  EXPECT_TRUE(contains(report_of(one, listen_only), "Holm over 1 gated metric,")) << report_of(one, listen_only);
}

// Contention: the wall time of the same code doubles, its noise-free time does not move.
TEST(RegressionGate, TheNoiseFreeFigureIsGatedByDefault) {
  const auto metric = [](double wall_ms, double noise_free_ms) {
    return MetricFigures{
        .name = "listen", .wall = figure(around(wall_ms)), .noise_free = figure(around(noise_free_ms))};
  };
  const auto baseline = run_of({{"listen", metric(100, 80)}});
  const auto busy = run_of({{"listen", metric(200, 80)}});
  GateConfig listen_only;
  listen_only.gated = {"listen"};
  const auto result = compare_runs(baseline, busy, listen_only);
  EXPECT_EQ(row_of(result, "listen").figure, GateFigure::NoiseFree);
  EXPECT_EQ(row_of(result, "listen").verdict, Verdict::NoChange);
  auto wall = listen_only;
  wall.figure = GateFigure::Wall;
  EXPECT_EQ(row_of(compare_runs(baseline, busy, wall), "listen").verdict, Verdict::Regressed);
}

TEST(RegressionGate, WithoutNoiseFreeFiguresTheGateFallsBackToWallAndSaysSo) {
  const auto result = compare_runs(wall_run(around(10), around(100)), wall_run(around(10), around(100)), {});
  EXPECT_EQ(row_of(result, "listen").figure, GateFigure::Wall);
  ASSERT_FALSE(result.notes.empty());
  EXPECT_TRUE(contains(report_of(result), "note: no noise-free figures in both runs")) << report_of(result);
}

TEST(RegressionGate, ABaselineWithoutSamplesIsComparedByItsPercentileAndSaysWhy) {
  auto baseline = wall_run(around(10), around(100));
  baseline.origin = {.schema = 2, .tool_version = "", .start_phase = 1, .command = ""};
  for (auto& [key, metric] : baseline.metrics) metric.wall = without_samples(metric.wall);
  const auto result = compare_runs(baseline, wall_run(around(10), around(120)), {});
  const auto& listen = row_of(result, "listen");
  EXPECT_EQ(listen.method, GateMethod::Percentile);
  EXPECT_EQ(listen.verdict, Verdict::Regressed);
  EXPECT_NEAR(listen.change_pct, 20, 0.5);
  EXPECT_EQ(result.tested, 0U);
  const auto report = report_of(result);
  EXPECT_TRUE(contains(report, "the baseline has no samples (schema 2): compared by p50 alone")) << report;
  EXPECT_TRUE(contains(report, "does not say which version wrote it")) << report;
  EXPECT_TRUE(contains(report, "(p50 compared, at most +10%)")) << report;
}

// It read "+0.0 % ok" whatever this run's figure.
TEST(RegressionGate, ABaselineFigureOfZeroIsInconclusiveNotAPass) {
  auto baseline = wall_run(around(10), around(100));
  baseline.metrics.at("listen").wall = without_samples(figure({0, 0, 0}));
  const auto result = compare_runs(baseline, wall_run(around(10), around(6000)), {});
  EXPECT_EQ(row_of(result, "listen").verdict, Verdict::Inconclusive);
  EXPECT_TRUE(contains(row_of(result, "listen").reason, "is 0 ns")) << row_of(result, "listen").reason;
}

TEST(RegressionGate, AGatedMetricNoBootOfThisRunReachedIsInconclusive) {
  auto now = wall_run(around(10), around(100));
  now.metrics.erase("listen");
  const auto result = compare_runs(wall_run(around(10), around(100)), now, {});
  EXPECT_EQ(row_of(result, "listen").verdict, Verdict::Inconclusive);
  EXPECT_EQ(result.outcome(), GateOutcome::Inconclusive);
  // This run saw no boot at all.
  const auto none = compare_runs(wall_run(around(10), around(100)), run_of({}), {});
  EXPECT_EQ(none.outcome(), GateOutcome::Inconclusive);
}

TEST(RegressionGate, UngatedAndNewOrMissingMetricsAreReportedNotFatal) {
  auto baseline = wall_run(around(10), around(100));
  baseline.metrics.emplace("phase:12", MetricFigures{.name = "X", .wall = figure(around(5)), .noise_free = {}});
  auto now = wall_run(around(10), around(100));
  now.metrics.emplace("phase:123", MetricFigures{.name = "USR1", .wall = figure(around(7)), .noise_free = {}});
  const auto result = compare_runs(baseline, now, {});
  EXPECT_EQ(row_of(result, "phase:12").verdict, Verdict::Missing);
  EXPECT_EQ(row_of(result, "phase:123").verdict, Verdict::New);
  EXPECT_EQ(result.outcome(), GateOutcome::Passed);

  auto slower_phase = wall_run(around(10), around(100));
  slower_phase.metrics.emplace("phase:12", MetricFigures{.name = "X", .wall = figure(around(50)), .noise_free = {}});
  EXPECT_EQ(compare_runs(baseline, slower_phase, {}).outcome(), GateOutcome::Passed) << "phase 12 is not gated";
  GateConfig all;
  all.gated = {};
  EXPECT_EQ(compare_runs(baseline, slower_phase, all).outcome(), GateOutcome::Regressed);
}

TEST(RegressionGate, TheReportKeepsItsRowsWithin118Columns) {
  auto baseline = wall_run(around(10), around(100));
  baseline.metrics.emplace(
      "phase:12", MetricFigures{.name = "CONTAINER_NAMESPACE_GENERATED", .wall = figure({1, 2, 3}), .noise_free = {}});
  auto now = wall_run(around(10), around(100));
  now.metrics.emplace(
      "phase:12",
      MetricFigures{.name = "CONTAINER_NAMESPACE_GENERATED", .wall = figure({900, 2, 3}), .noise_free = {}});
  GateConfig all;
  all.gated = {};
  std::istringstream report(report_of(compare_runs(baseline, now, all), all));
  std::string line;
  std::getline(report, line);
  EXPECT_TRUE(line.starts_with("BASELINE COMPARISON")) << line;
  for (int row = 0; row < 3 && std::getline(report, line); ++row) EXPECT_LE(line.size(), 118U) << line;
}

// Runs beyond 2,000 boots are ranked by 2,000 quantiles: still judged, and said.
TEST(RegressionGate, LongRunsAreRankedByTheirQuantiles) {
  const auto before = wall_run(around(10, 3000), around(100, 3000));
  const auto slower = compare_runs(before, wall_run(around(10, 3000), around(130, 3000)), {});
  EXPECT_EQ(row_of(slower, "listen").verdict, Verdict::Regressed);
  EXPECT_EQ(row_of(slower, "listen").boots, 3000U);
  EXPECT_TRUE(contains(report_of(slower), "runs of more than 2000 boots are ranked by 2000 evenly spaced quantiles"))
      << report_of(slower);
  EXPECT_EQ(compare_runs(before, before, {}).outcome(), GateOutcome::Passed);
}

TEST(RegressionGate, NothingRegressesAgainstItself) {
  const auto run = wall_run(around(10), around(100));
  const auto result = compare_runs(run, run, {});
  EXPECT_EQ(result.outcome(), GateOutcome::Passed);
  EXPECT_EQ(row_of(result, "listen").change_pct, 0);
}

// ---- refusals -----------------------------------------------------------

std::string refusal(const RunFigures& baseline, const RunFigures& now, const GateConfig& config = {}) {
  const auto comparable = check_comparable(baseline, now, config);
  return comparable ? "" : comparable.error();
}

TEST(CheckComparable, RefusesWhatCannotBeJudged) {
  const auto good = wall_run(around(10), around(100));
  EXPECT_EQ(refusal(good, good), "");

  EXPECT_TRUE(contains(refusal(run_of({}), good), "the baseline run saw no boot")) << refusal(run_of({}), good);

  auto no_listen = good;
  no_listen.metrics.erase("listen");
  EXPECT_TRUE(contains(refusal(no_listen, good), "no boot of the baseline run reached listen"));
  GateConfig execve_only;
  execve_only.gated = {"execve"};
  EXPECT_EQ(refusal(no_listen, good, execve_only), "");

  auto other_start = good;
  other_start.origin.start_phase = 13;
  EXPECT_TRUE(contains(refusal(other_start, good), "the baseline's clock starts at phase 13, this run's at phase 1"));

  auto other_command = good;
  other_command.origin.command = "/bin/app";
  EXPECT_EQ(refusal(other_command, good),
            "the baseline timed COMMAND '/bin/app', this run any first execve: their times are not comparable");
}

TEST(CheckComparable, RefusesSummariesOfAToolVersionWhoseFiguresDiffer) {
  const auto good = wall_run(around(10), around(100));
  const auto written_by = [&](const std::string& version) {
    auto run = good;
    run.origin.tool_version = version;
    return run;
  };
  EXPECT_TRUE(contains(refusal(written_by("999.0.0"), good), "newer than this one"));
  EXPECT_TRUE(contains(refusal(written_by("0.0.9"), good), "whose figures this version's do not match"));
  EXPECT_TRUE(contains(refusal(written_by("1.x"), good), "not a version this tool knows"));
  EXPECT_TRUE(contains(refusal(good, written_by("999.0.0")), "the new summary was written by"));
  EXPECT_EQ(refusal(written_by(""), good), "") << "summaries before the field are not checked";
}

TEST(CheckBaseline, IsWhatCheckComparableChecksOfTheBaseline) {
  auto baseline = wall_run(around(10), around(100));
  baseline.origin.start_phase = 2;
  EXPECT_FALSE(
      check_baseline(baseline, RunOrigin{.schema = 3, .tool_version = "", .start_phase = 1, .command = ""}, {}));
  EXPECT_TRUE(
      check_baseline(baseline, RunOrigin{.schema = 3, .tool_version = "", .start_phase = 2, .command = ""}, {}));
}

TEST(RegressionGate, NamesRoundTrip) {
  EXPECT_EQ(parse_gate_figure("noise-free"), GateFigure::NoiseFree);
  EXPECT_EQ(parse_gate_figure("WALL"), GateFigure::Wall);
  EXPECT_FALSE(parse_gate_figure("cpu"));
  EXPECT_STREQ(gate_figure_name(GateFigure::NoiseFree), "noise-free");
  EXPECT_STREQ(verdict_name(Verdict::NoChange), "no significant change");
  EXPECT_STREQ(gate_outcome_name(GateOutcome::Inconclusive), "INCONCLUSIVE");
  EXPECT_EQ(gate_exit_status(GateOutcome::Regressed), kExitRegressed);
  EXPECT_EQ(gate_exit_status(GateOutcome::Passed), kExitOk);
}

}  // namespace
}  // namespace hacoboot
