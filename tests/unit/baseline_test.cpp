#include "report/baseline.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report/report.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

MetricFigures figures(const std::string& name, std::uint64_t p50_ms) {
  const std::uint64_t ns = p50_ms * 1'000'000;
  return {name, ns, ns, ns * 2, ns * 3, ns * 4};
}

const MetricComparison& row_of(const GateResult& result, const std::string& key) {
  for (const auto& row : result.rows) {
    if (row.key == key) return row;
  }
  throw std::runtime_error("no row " + key);
}

TEST(Baseline, ReadsBackWhatTheJsonWriterWrote) {
  Summary summary;
  BootRecord boot;
  boot.start_ns = 1'000;
  boot.phases = {{1, 1'000}, {2, 3'000}};
  boot.execve_ns = 11'000;
  boot.listen_ns = 21'000;
  summary.add(boot);
  std::ostringstream json;
  make_report_writer(ReportFormat::Json)->write(summary, RunFacts{}, json);

  const auto table = parse_baseline(json.str(), "saved.json");
  EXPECT_EQ(table, metrics_of(summary));
  ASSERT_TRUE(table.contains("listen"));
  EXPECT_EQ(table.at("listen").p50_ns, 20'000U);
  ASSERT_TRUE(table.contains("phase:2"));
  EXPECT_EQ(table.at("phase:2").name, "START_FORK");
}

// A summary written before schema 2 (no noise_free, critical_path, steps)
// is still a baseline: schema 2 only added fields.
TEST(Baseline, ASchema1SummaryStillLoads) {
  const auto table = parse_baseline(R"({"schema": 1, "start_phase": {"phase": 1, "name": "START_SV"},
    "metrics": {"execve": {"count": 0, "avg_ns": 0, "min_ns": 0, "max_ns": 0},
                "listen": {"count": 2, "avg_ns": 20000, "min_ns": 19000, "max_ns": 21000, "p50_ns": 19000,
                           "p90_ns": 21000, "p99_ns": 21000}},
    "phases": [{"phase": 2, "name": "START_FORK", "count": 2, "avg_ns": 2000, "min_ns": 2000, "max_ns": 2000,
                "p50_ns": 2000, "p90_ns": 2000, "p99_ns": 2000}]})",
                                    "old.json");
  ASSERT_TRUE(table.contains("listen"));
  EXPECT_EQ(table.at("listen").p90_ns, 21'000U);
  EXPECT_FALSE(table.contains("execve")) << "no sample, no metric";
  EXPECT_EQ(table.at("phase:2").name, "START_FORK");
}

TEST(Baseline, ASchemaNewerThanTheToolIsRefused) {
  try {
    parse_baseline(R"({"schema": 3, "metrics": {}, "phases": []})", "future.json");
    ADD_FAILURE() << "accepted schema 3";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("schema 3 is not supported"), std::string::npos) << e.what();
  }
}

TEST(Baseline, MalformedInputIsAUsageErrorNamingTheFile) {
  for (const char* text : {"not json", "[]", R"({"schema": 99})", R"({"schema": 1})",
                           R"({"schema": 1, "metrics": {"execve": {"count": "x"}}, "phases": []})"}) {
    try {
      parse_baseline(text, "base.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("base.json"), std::string::npos) << e.what();
    }
  }
}

// Found by fuzz_baseline: nlohmann casts a float to an integer without a range
// check (undefined behaviour), so numbers that are not the tool's must be refused.
TEST(Baseline, NumbersThatAreNotIntegersInRangeAreRefused) {
  const std::string figures = R"("avg_ns": 1, "p50_ns": 1, "p90_ns": 1, "p99_ns": 1, "max_ns": 1)";
  const auto summary = [&](const std::string& count, const std::string& avg, const std::string& phase) {
    return R"({"schema": 1, "metrics": {"execve": {"count": )" + count + ", " + figures +
           R"(}, "listen": {"count": 0}}, "phases": [{"phase": )" + phase + R"(, "name": "START", "avg_ns": )" + avg +
           R"(, "p50_ns": 1, "p90_ns": 1, "p99_ns": 1, "max_ns": 1}]})";
  };
  EXPECT_EQ(parse_baseline(summary("1", "1", "-1"), "base.json").size(), 2U);
  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {summary("1e99", "1", "1"), R"("metrics.execve.count" is 1e+99, not a non-negative integer)"},
           {summary("1", "2.5", "1"), R"("phases[0].avg_ns" is 2.5, not a non-negative integer)"},
           {summary("1", "-3", "1"), R"("phases[0].avg_ns" is -3, not a non-negative integer)"},
           {summary("1", "1", "9223372036854775808"), R"("phases[0].phase" is 9223372036854775808, not an integer)"},
           {summary("1", "1", "\"1\""), R"("phases[0].phase" is a string, not an integer)"}}) {
    try {
      parse_baseline(text, "base.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("base.json: not a hacoboot-sampler summary: " + field), std::string::npos)
          << e.what();
    }
  }
}

// A summary of the right schema whose fields have another shape: the
// message names the file and the field in the tool's words, never the JSON
// library's ("[json.exception.type_error.304] cannot use at() with array").
TEST(Baseline, WrongShapesNameTheFieldInTheToolsWords) {
  const std::string stats = R"({"count": 1, "avg_ns": 1, "p50_ns": 1, "p90_ns": 1, "p99_ns": 1, "max_ns": 1})";
  const auto summary = [&](const std::string& metrics, const std::string& phases) {
    return R"({"schema": 1, "metrics": )" + metrics + R"(, "phases": )" + phases + "}";
  };
  const auto both = R"({"execve": )" + stats + R"(, "listen": )" + stats + "}";
  const auto phase = [&](const std::string& name) {
    return R"([{"phase": 12, "name": )" + name +
           R"(, "avg_ns": 1, "p50_ns": 1, "p90_ns": 1, "p99_ns": 1, "max_ns": 1}])";
  };
  EXPECT_EQ(parse_baseline(summary(both, phase(R"("NS")")), "base.json").size(), 3U);
  for (const auto& [text, fault] : std::vector<std::pair<std::string, std::string>>{
           {summary("[]", "[]"), R"("metrics" is an array, not an object)"},
           {summary("{}", "[]"), R"(no "metrics.execve")"},
           {summary(R"({"execve": [], "listen": {}})", "[]"), R"("metrics.execve" is an array, not an object)"},
           {summary(R"({"execve": {"count": 0}, "listen": 7})", "[]"), R"("metrics.listen" is 7, not an object)"},
           {summary(R"({"execve": {"count": null}, "listen": {}})", "[]"),
            R"("metrics.execve.count" is null, not a non-negative integer)"},
           {summary(R"({"execve": {"count": 1}, "listen": {"count": 0}})", "[]"), R"(no "metrics.execve.avg_ns")"},
           {summary(both, "{}"), R"("phases" is an object, not an array)"},
           {summary(both, "[true]"), R"("phases[0]" is true, not an object)"},
           {summary(both, phase("12")), R"("phases[0].name" is 12, not a phase name)"},
           {summary(both, phase(R"("A\u001b[31mB")")),
            R"("phases[0].name": phase name 'A\x1B[31mB' is not printable UTF-8)"}}) {
    try {
      parse_baseline(text, "base.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("base.json: not a hacoboot-sampler summary: " + fault), std::string::npos) << message;
      EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
    }
  }
}

TEST(Baseline, TextThatIsNotJsonSaysWhere) {
  for (const auto& [text, where] : std::vector<std::pair<std::string, std::string>>{
           {"", "line 1, column 1"},
           {"not json", "line 1, column 2"},
           {"{\n  \"schema\": 1,\n  oops\n}", "line 3, column 3"},
           {"{\"schema\": 1, \"metrics\": \"\xFF\"}", "line 1, column 27"}}) {
    try {
      parse_baseline(text, "base.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "base.json: not JSON at " + where + " (expected a --format json summary)");
    }
  }
}

// nlohmann reads a number beyond a double as an out_of_range error, not a
// parse error: it must not escape as the library's exception (the baseline
// fuzzer found it).
TEST(Baseline, ANumberBeyondADoubleIsRefusedInTheToolsWords) {
  try {
    parse_baseline(R"({"schema": 1, "metrics": {"execve": {"count": 1e990}}})", "base.json");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "base.json: a number too large for any figure (expected a --format json summary)");
  }
}

TEST(Baseline, GatedRegressionBeyondTheLimitFails) {
  const MetricTable before{{"listen", figures("listen", 100)}, {"execve", figures("execve", 10)}};
  const MetricTable after{{"listen", figures("listen", 111)}, {"execve", figures("execve", 10)}};
  const auto result = compare_to_baseline(before, after, GateConfig{});
  EXPECT_TRUE(result.regressed());
  EXPECT_EQ(row_of(result, "listen").verdict, MetricComparison::Verdict::Regressed);
  EXPECT_NEAR(row_of(result, "listen").change_pct, 11.0, 1e-9);
  EXPECT_EQ(row_of(result, "execve").verdict, MetricComparison::Verdict::Same);
}

TEST(Baseline, WithinTheLimitPassesAndImprovementsNeverFail) {
  const MetricTable before{{"listen", figures("listen", 100)}};
  EXPECT_FALSE(compare_to_baseline(before, {{"listen", figures("listen", 110)}}, GateConfig{}).regressed());
  const auto faster = compare_to_baseline(before, {{"listen", figures("listen", 50)}}, GateConfig{});
  EXPECT_FALSE(faster.regressed());
  EXPECT_EQ(faster.rows.at(0).verdict, MetricComparison::Verdict::Improved);
}

TEST(Baseline, UngatedMetricsAndNewOrMissingOnesAreReportedNotFatal) {
  const MetricTable before{{"listen", figures("listen", 100)},
                           {"phase:12", figures("CONTAINER_NAMESPACE_GENERATED", 5)}};
  const MetricTable after{{"listen", figures("listen", 100)}, {"phase:123", figures("USR1", 7)}};
  GateConfig config;
  const auto result = compare_to_baseline(before, after, config);
  EXPECT_FALSE(result.regressed());
  EXPECT_EQ(row_of(result, "phase:12").verdict, MetricComparison::Verdict::Missing);
  EXPECT_EQ(row_of(result, "phase:123").verdict, MetricComparison::Verdict::New);

  const MetricTable slower_phase{{"listen", figures("listen", 100)}, {"phase:12", figures("X", 50)}};
  EXPECT_FALSE(compare_to_baseline(before, slower_phase, config).regressed()) << "phase 12 is not gated by default";
  config.gated = {};  // all
  EXPECT_TRUE(compare_to_baseline(before, slower_phase, config).regressed());
}

TEST(Baseline, TheChosenStatisticIsCompared) {
  const MetricTable before{{"listen", figures("listen", 100)}};
  MetricTable after{{"listen", figures("listen", 100)}};
  after.at("listen").p99_ns *= 2;  // only the tail got slower
  GateConfig config;
  EXPECT_FALSE(compare_to_baseline(before, after, config).regressed());
  config.statistic = GateStatistic::P99;
  EXPECT_TRUE(compare_to_baseline(before, after, config).regressed());
}

TEST(Baseline, ReportSaysWhetherTheGatePassed) {
  const MetricTable before{{"listen", figures("listen", 100)}};
  GateConfig config;
  std::ostringstream failed;
  write_gate_report(compare_to_baseline(before, {{"listen", figures("listen", 200)}}, config), config, failed);
  EXPECT_NE(failed.str().find("REGRESSED"), std::string::npos) << failed.str();
  EXPECT_NE(failed.str().find("gate: FAILED"), std::string::npos) << failed.str();
  std::ostringstream passed;
  write_gate_report(compare_to_baseline(before, before, config), config, passed);
  EXPECT_NE(passed.str().find("gate: passed"), std::string::npos) << passed.str();
}

TEST(Baseline, StatisticNamesRoundTrip) {
  for (const char* name : {"avg", "p50", "p90", "p99", "max"}) {
    const auto statistic = parse_gate_statistic(name);
    ASSERT_TRUE(statistic) << name;
    EXPECT_STREQ(gate_statistic_name(*statistic), name);
  }
  EXPECT_EQ(parse_gate_statistic("P90"), GateStatistic::P90);
  EXPECT_FALSE(parse_gate_statistic("median"));
}

}  // namespace
}  // namespace hacoboot
