#include "gate/gate_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "gate_runs.hpp"

namespace hacoboot {
namespace {

using test::around;
using test::figure;
using test::wall_run;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string junit_of(const GateResult& result, const GateConfig& config = {}) {
  std::ostringstream out;
  write_gate_junit(result, config, out);
  return out.str();
}

std::string markdown_of(const GateResult& result, const GateConfig& config = {}) {
  std::ostringstream out;
  write_gate_markdown(result, config, out);
  return out.str();
}

std::string report_of(const GateResult& result, const GateConfig& config = {}) {
  std::ostringstream out;
  write_gate_report(result, config, out);
  return out.str();
}

// The <testcase> element of the case named `name`, up to its end.
std::string case_named(const std::string& junit, const std::string& name) {
  const auto at = junit.find("<testcase classname=\"hacoboot-sampler.gate\" name=\"" + name + "\"");
  if (at == std::string::npos) return {};
  const auto open_end = junit.find('>', at);
  if (junit.at(open_end - 1) == '/') return junit.substr(at, open_end + 1 - at);
  const auto end = junit.find("</testcase>", at);
  return junit.substr(at, end + 11 - at);
}

// Listen 30 % slower, execve the same, and a phase that is not gated 50 % slower.
GateResult regressed_listen_and_slower_phase() {
  auto baseline = wall_run(around(10), around(100));
  baseline.metrics.emplace("phase:13", MetricFigures{.name = "CONTAINER_FILESYSTEM_SETUP", .wall = figure(around(2))});
  auto now = wall_run(around(10), around(130));
  now.metrics.emplace("phase:13", MetricFigures{.name = "CONTAINER_FILESYSTEM_SETUP", .wall = figure(around(3))});
  return compare_runs(baseline, now, {});
}

TEST(GateJunit, ARegressionIsAFailureWithItsFiguresTheRestPassOrAreSkipped) {
  const auto junit = junit_of(regressed_listen_and_slower_phase());
  EXPECT_TRUE(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")) << junit;
  EXPECT_TRUE(contains(junit, R"(<testsuite name="hacoboot-sampler regression gate" tests="3" failures="1" )"
                              R"(errors="0" skipped="1">)"))
      << junit;
  const auto listen = case_named(junit, "listen");
  EXPECT_TRUE(contains(listen, R"(<failure type="regressed" message="listen, wall: median 99.9 ms -&gt; 130 ms, +30)"))
      << listen;
  EXPECT_TRUE(contains(listen, ": REGRESSED; limit +10%\"")) << listen;
  EXPECT_EQ(case_named(junit, "execve"), R"(<testcase classname="hacoboot-sampler.gate" name="execve"/>)");
  const auto phase = case_named(junit, "CONTAINER_FILESYSTEM_SETUP");
  EXPECT_TRUE(contains(phase, R"(<skipped message="not gated (--gate): CONTAINER_FILESYSTEM_SETUP, wall:)")) << phase;
  EXPECT_TRUE(contains(phase, "regressed *")) << phase;
  // The suite's terms, and the text report for whoever opens the case.
  EXPECT_TRUE(contains(junit, R"(<property name="outcome" value="REGRESSED"/>)")) << junit;
  EXPECT_TRUE(contains(junit, R"(<property name="gate_on" value="noise-free"/>)")) << junit;
  EXPECT_TRUE(contains(junit, R"(<property name="alpha" value="0.05"/>)")) << junit;
  EXPECT_TRUE(contains(junit, R"(<property name="max_regression_pct" value="10"/>)")) << junit;
  EXPECT_TRUE(contains(junit, "<system-out>BASELINE COMPARISON")) << junit;
  EXPECT_TRUE(contains(junit, "gate: REGRESSED: listen slower by more than the limit")) << junit;
  EXPECT_TRUE(junit.ends_with("  </testsuite>\n</testsuites>\n")) << junit;
}

TEST(GateJunit, AnInconclusiveMetricIsAnErrorSayingHowManyBootsWouldTell) {
  const auto result =
      compare_runs(wall_run(around(10, 2), around(100, 2)), wall_run(around(10, 2), around(100, 2)), {});
  const auto junit = junit_of(result);
  EXPECT_TRUE(contains(junit, R"(tests="2" failures="0" errors="2" skipped="0")")) << junit;
  const auto listen = case_named(junit, "listen");
  EXPECT_TRUE(contains(listen, R"(<error type="inconclusive" message=")")) << listen;
  EXPECT_TRUE(contains(listen, "listen: 2 boots against 2: too few for a rank test; about ")) << listen;
  EXPECT_TRUE(contains(listen, " boots per run would tell</error>")) << listen;
}

TEST(GateJunit, PassingMetricsAreTestCasesWithoutFailure) {
  const auto run = wall_run(around(10), around(100));
  const auto junit = junit_of(compare_runs(run, run, {}));
  EXPECT_TRUE(contains(junit, R"(tests="2" failures="0" errors="0" skipped="0")")) << junit;
  EXPECT_FALSE(contains(junit, "<failure")) << junit;
  EXPECT_TRUE(contains(junit, R"(<property name="outcome" value="passed"/>)")) << junit;
}

// Names come from saved summaries: markup in them stays text.
TEST(GateJunit, MarkupAndControlBytesInNamesStayText) {
  auto baseline = wall_run(around(10), around(100));
  baseline.metrics.emplace("phase:123", MetricFigures{.name = "A<&\"'>\x1b", .wall = figure(around(2))});
  const auto junit = junit_of(compare_runs(baseline, baseline, {}));
  EXPECT_TRUE(contains(junit, R"(name="A&lt;&amp;&quot;&apos;&gt;\x1B")")) << junit;
  EXPECT_FALSE(contains(junit, "\x1b")) << junit;
}

TEST(GateJunit, AGateThatJudgedNothingIsOneErroredCase) {
  std::ostringstream out;
  write_unjudged_junit("--run command exited 1: the figures of a failed run are no verdict", out);
  const auto junit = out.str();
  EXPECT_TRUE(contains(junit, R"(tests="1" failures="0" errors="1" skipped="0")")) << junit;
  EXPECT_TRUE(contains(junit, R"(<testcase classname="hacoboot-sampler.gate" name="gate">)")) << junit;
  EXPECT_TRUE(contains(junit, R"(<error type="not judged" message="--run command exited 1: the figures)")) << junit;
}

// The rows of a Markdown table: lines starting with '|'.
std::vector<std::string> table_rows(const std::string& markdown) {
  std::vector<std::string> rows;
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("|")) rows.push_back(line);
  }
  return rows;
}

// Cells of a row, an escaped \| inside a cell not ending it.
std::size_t cells_in(const std::string& row) {
  std::size_t bars = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '|' && (i == 0 || row[i - 1] != '\\')) ++bars;
  }
  return bars - 1;
}

TEST(GateMarkdown, ATableWithTheOutcomeAboveAndBelow) {
  const auto markdown = markdown_of(regressed_listen_and_slower_phase());
  EXPECT_TRUE(markdown.starts_with("### Boot time against the baseline: REGRESSED\n\n")) << markdown;
  const auto rows = table_rows(markdown);
  ASSERT_EQ(rows.size(), 5U) << markdown;  // header, alignment, three metrics
  EXPECT_EQ(rows[0], "| metric | figure | baseline p50 | this p50 | change | CI 95% | p (Holm) | verdict |");
  for (const auto& row : rows) EXPECT_EQ(cells_in(row), 8U) << row;
  const auto listen = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.starts_with("| listen |"); });
  ASSERT_NE(listen, rows.end()) << markdown;
  EXPECT_TRUE(listen->starts_with("| listen | wall | 99.9 ms | 130 ms | +30")) << *listen;
  EXPECT_TRUE(listen->ends_with(" | **REGRESSED** |")) << *listen;
  EXPECT_TRUE(contains(markdown, "| CONTAINER\\_FILESYSTEM\\_SETUP | wall |")) << markdown;
  EXPECT_TRUE(contains(markdown, "regressed \\* |")) << markdown;
  EXPECT_TRUE(contains(markdown,
                       "\n**gate: REGRESSED**: listen slower by more than the limit \\(alpha 0\\.05\\, Holm over "
                       "2 gated metrics\\, at most \\+10\\%\\)\n"))
      << markdown;
  EXPECT_TRUE(contains(markdown, "- note\\: \\* not gated")) << markdown;
}

TEST(GateMarkdown, APipeInANameDoesNotSplitItsCell) {
  auto baseline = wall_run(around(10), around(100));
  baseline.metrics.emplace("phase:123", MetricFigures{.name = "A|B", .wall = figure(around(2))});
  const auto markdown = markdown_of(compare_runs(baseline, baseline, {}));
  for (const auto& row : table_rows(markdown)) EXPECT_EQ(cells_in(row), 8U) << row;
  EXPECT_TRUE(contains(markdown, "| A\\|B |")) << markdown;
}

// A phase name is the user's text: in a pull-request comment it must read
// as itself, strike nothing through, ping no team and link nowhere.
TEST(GateMarkdown, NamesReadLiterallyPingNobodyAndLinkNowhere) {
  auto baseline = wall_run(around(10), around(100));
  baseline.metrics.emplace(
      "phase:123", MetricFigures{.name = "~~s~~&amp;@everyone:https://x/www.y!#[a](b)", .wall = figure(around(2))});
  const auto markdown = markdown_of(compare_runs(baseline, baseline, {}));
  const std::string zwsp = "\u200B";
  EXPECT_TRUE(contains(markdown, "| \\~\\~s\\~\\~&amp;amp\\;\\@" + zwsp + "everyone\\:https\\:" + zwsp +
                                     "\\/\\/x\\/www" + zwsp + "\\.y\\!\\#\\[a\\]\\(b\\) |"))
      << markdown;
  for (const char* raw : {"~~", "@everyone", "https://", "www.", "&amp;@"}) {
    EXPECT_FALSE(contains(markdown, raw)) << raw << " in " << markdown;
  }
}

// The three formats read the same cells: the text report's row of listen
// holds what the Markdown row does.
TEST(GateReports, AllFormatsShowTheSameFigures) {
  const auto result = regressed_listen_and_slower_phase();
  const auto report = report_of(result);
  const auto markdown = markdown_of(result);
  const auto& listen = *std::find_if(result.rows.begin(), result.rows.end(), [](auto& r) { return r.key == "listen"; });
  const auto interval = "[" + format_change(listen.change_low_pct) + ", " + format_change(listen.change_high_pct) + "]";
  EXPECT_TRUE(contains(report, interval)) << report;
  EXPECT_TRUE(contains(markdown, interval)) << markdown;
  EXPECT_TRUE(contains(junit_of(result), interval));
}

TEST(GateMarkdown, AGateThatJudgedNothingSaysWhy) {
  std::ostringstream out;
  write_unjudged_markdown("--run command exited 1", out);
  EXPECT_EQ(out.str(), "### Boot time against the baseline: not judged\n\n\\-\\-run command exited 1\n");
}

}  // namespace
}  // namespace hacoboot
