#include "gate/baseline.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gate/summary_json.hpp"
#include "model/sample_stats.hpp"
#include "report/report.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

// A schema 3 summary around `metrics` (the execve and listen objects).
std::string schema3(const std::string& metrics,
                    const std::string& tool = R"({"name": "hacoboot-sampler", "version": "0.1.0"})") {
  return R"({"schema": 3, "tool": )" + tool + R"(, "start_phase": {"phase": 1, "name": "START_SV"}, "command": null,
    "boots": {"started": 2}, "metrics": )" +
         metrics + R"(, "phases": []})";
}

// Figures of two boots with these samples: those of [[10, 1], [20, 1]]
// (other samples are refused before their figures are read).
std::string stats_with(const std::string& samples, const std::string& count = "2",
                       const std::string& figures = R"("avg_ns": 15, "p50_ns": 10, "p90_ns": 20, "p99_ns": 20,
                                                        "max_ns": 20, "exact": true)") {
  return R"({"count": )" + count + ", " + figures + R"(, "samples": )" + samples + "}";
}

std::string execve_with(const std::string& samples, const std::string& count = "2") {
  return R"({"execve": )" + stats_with(samples, count) + R"(, "listen": {"count": 0}})";
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

  const RunFacts facts{.start_phase = 1, .command = "/bin/app"};
  std::ostringstream with_facts;
  make_report_writer(ReportFormat::Json)->write(summary, facts, with_facts);

  const auto run = parse_baseline(with_facts.str(), "saved.json");
  const auto expected = figures_of_run(summary, facts);
  EXPECT_EQ(run.metrics, expected.metrics);
  EXPECT_EQ(run.origin, expected.origin);
  ASSERT_TRUE(run.steps.has_value()) << "schema 4 keeps every step's samples";
  EXPECT_EQ(run.steps, expected.steps);
  EXPECT_EQ(
      run.origin,
      (RunOrigin{.schema = kSummarySchema, .tool_version = tool_version(), .start_phase = 1, .command = "/bin/app"}));
  EXPECT_EQ(run.boots, 1U);
  const auto& table = run.metrics;
  ASSERT_TRUE(table.contains("listen"));
  EXPECT_EQ(table.at("listen").wall.p50_ns, 20'000U);
  EXPECT_EQ(table.at("listen").wall.samples.counts,
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{20'000, 1}}));
  ASSERT_TRUE(table.contains("phase:2"));
  EXPECT_EQ(table.at("phase:2").name, "START_FORK");
  EXPECT_EQ(parse_baseline(json.str(), "saved.json").origin.command, "") << "null: any first execve";
}

// Beyond SampleStats::kExactSamples boots the samples are histogram buckets:
// they still read back as written, and say they are not exact.
TEST(Baseline, ReadsBackTheHistogramOfALongRun) {
  Summary summary;
  for (std::uint64_t i = 0; i <= SampleStats::kExactSamples; ++i) {
    BootRecord boot;
    boot.start_ns = 1'000;
    boot.phases = {{1, 1'000}};
    boot.execve_ns = 1'000 + 1'000'000 + i * 997;
    summary.add(boot);
  }
  std::ostringstream json;
  make_report_writer(ReportFormat::Json)->write(summary, RunFacts{}, json);
  const auto run = parse_baseline(json.str(), "long.json");
  const auto& samples = run.metrics.at("execve").wall.samples;
  EXPECT_FALSE(samples.exact);
  EXPECT_EQ(samples.boots(), SampleStats::kExactSamples + 1);
  EXPECT_LT(samples.counts.size(), SampleStats::kExactSamples);
  EXPECT_EQ(run.metrics, figures_of_run(summary, RunFacts{}).metrics);
}

// A summary written before schema 2 (no noise_free, critical_path, steps)
// is still a baseline: schema 2 only added fields.
TEST(Baseline, ASchema1SummaryStillLoads) {
  const auto run = parse_baseline(R"({"schema": 1, "start_phase": {"phase": 1, "name": "START_SV"},
    "metrics": {"execve": {"count": 0, "avg_ns": 0, "min_ns": 0, "max_ns": 0},
                "listen": {"count": 2, "avg_ns": 20000, "min_ns": 19000, "max_ns": 21000, "p50_ns": 19000,
                           "p90_ns": 21000, "p99_ns": 21000}},
    "phases": [{"phase": 2, "name": "START_FORK", "count": 2, "avg_ns": 2000, "min_ns": 2000, "max_ns": 2000,
                "p50_ns": 2000, "p90_ns": 2000, "p99_ns": 2000}]})",
                                  "old.json");
  const auto& table = run.metrics;
  ASSERT_TRUE(table.contains("listen"));
  EXPECT_EQ(table.at("listen").wall.p90_ns, 21'000U);
  EXPECT_TRUE(table.at("listen").wall.samples.empty()) << "schema 1 has no samples";
  EXPECT_FALSE(table.contains("execve")) << "no sample, no metric";
  EXPECT_EQ(table.at("phase:2").name, "START_FORK");
  EXPECT_EQ(run.origin.schema, 1);
  EXPECT_EQ(run.origin.tool_version, "") << "schema 1 does not say";
  EXPECT_EQ(run.boots, 2U) << "no boots object: the most any figure counts";
}

// Schema 2: noise-free figures, but no samples yet.
TEST(Baseline, ASchema2SummaryLoadsItsNoiseFreeFiguresWithoutSamples) {
  const auto run = parse_baseline(R"({"schema": 2, "start_phase": {"phase": 13, "name": "CONTAINER_START"},
    "command": "/bin/app", "boots": {"started": 3},
    "metrics": {"execve": {"count": 0, "avg_ns": 0, "p50_ns": 0, "p90_ns": 0, "p99_ns": 0, "max_ns": 0},
                "listen": {"count": 3, "avg_ns": 9, "p50_ns": 9, "p90_ns": 9, "p99_ns": 9, "max_ns": 9,
                           "noise_free": {"count": 3, "avg_ns": 7, "p50_ns": 7, "p90_ns": 7, "p99_ns": 7, "max_ns": 7}}},
    "phases": []})",
                                  "v2.json");
  EXPECT_EQ(run.origin, (RunOrigin{.schema = 2, .tool_version = "", .start_phase = 13, .command = "/bin/app"}));
  EXPECT_EQ(run.boots, 3U);
  const auto& listen = run.metrics.at("listen");
  ASSERT_TRUE(listen.noise_free);
  EXPECT_EQ(listen.noise_free->p50_ns, 7U);
  EXPECT_TRUE(listen.noise_free->samples.empty());
  EXPECT_TRUE(listen.wall.samples.empty());
}

TEST(Baseline, ASchemaNewerThanTheToolIsRefused) {
  const int future = kSummarySchema + 1;
  try {
    parse_baseline(R"({"schema": )" + std::to_string(future) + R"(, "metrics": {}, "phases": []})", "future.json");
    ADD_FAILURE() << "accepted schema " << future;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("schema " + std::to_string(future) +
                                         " is not supported (this version reads schemas 1 to " +
                                         std::to_string(kSummarySchema) + ")"),
              std::string::npos)
        << e.what();
  }
}

TEST(Baseline, Schema3SamplesLoad) {
  const auto run = parse_baseline(schema3(execve_with("[[10, 1], [20, 1]]")), "base.json");
  EXPECT_EQ(run.metrics.at("execve").wall.samples.counts,
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{10, 1}, {20, 1}}));
  EXPECT_EQ(run.origin.tool_version, "0.1.0");
}

// What the rank test would read as boots no run had is refused, naming the field.
TEST(Baseline, BadSamplesAreRefused) {
  for (const auto& [text, fault] : std::vector<std::pair<std::string, std::string>>{
           {schema3(execve_with("[[20, 1], [10, 1]]")),
            R"("metrics.execve.samples[1]" is not above the pair before it: samples go in ascending value)"},
           {schema3(execve_with("[[10, 1], [10, 1]]")), R"("metrics.execve.samples[1]" is not above)"},
           {schema3(execve_with("[[-10, 1], [20, 1]]")),
            R"("metrics.execve.samples[0][0]" is -10, not a non-negative integer)"},
           {schema3(execve_with("[[10.5, 1], [20, 1]]")),
            R"("metrics.execve.samples[0][0]" is 10.5, not a non-negative integer)"},
           {schema3(execve_with(R"([[10, "1"], [20, 1]])")),
            R"("metrics.execve.samples[0][1]" is a string, not a non-negative integer)"},
           {schema3(execve_with("[[10, 0], [20, 2]]")),
            R"("metrics.execve.samples[0][1]" is 0, not a number of boots (1 or more))"},
           {schema3(execve_with("[[10, 1, 1], [20, 1]]")),
            R"("metrics.execve.samples[0]" is an array, not a [value_ns, boots] pair)"},
           {schema3(execve_with("[10, 20]")), R"("metrics.execve.samples[0]" is 10, not an array)"},
           {schema3(execve_with("[[10, 1]]")), R"("metrics.execve.samples" hold 1 boots, its count says 2)"},
           {schema3(execve_with("[[10, 18446744073709551615], [20, 18446744073709551615]]")),
            R"("metrics.execve.samples" hold more boots than its count, 2)"},
           {schema3(R"({"execve": {"count": 1, "avg_ns": 1, "p50_ns": 1, "p90_ns": 1, "p99_ns": 1, "max_ns": 1},
                        "listen": {"count": 0}})"),
            R"(no "metrics.execve.samples")"},
           {schema3(execve_with("[[10, 1], [20, 1]]"), R"({"name": "other-tool", "version": "1.0"})"),
            R"("tool.name" is 'other-tool', not "hacoboot-sampler")"},
           {R"({"schema": 3, "metrics": {}, "phases": []})", R"(no "tool")"}}) {
    try {
      parse_baseline(text, "base.json");
      ADD_FAILURE() << "accepted: " << text.substr(0, 300);
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("base.json: not a hacoboot-sampler summary: " + fault), std::string::npos)
          << e.what();
    }
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
  EXPECT_EQ(parse_baseline(summary("1", "1", "12"), "base.json").metrics.size(), 2U);
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
  EXPECT_EQ(parse_baseline(summary(both, phase(R"("NS")")), "base.json").metrics.size(), 3U);
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

// The message of a summary parse_baseline refuses; "" when it accepts it.
std::string refusal_of(const std::string& text) {
  try {
    parse_baseline(text, "base.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool refused_for(const std::string& text, const std::string& fault) {
  return refusal_of(text).find("base.json: not a hacoboot-sampler summary: " + fault) != std::string::npos;
}

// A schema 3 summary with these phase rows.
std::string with_phases(const std::string& phases) {
  return R"({"schema": 3, "tool": {"name": "hacoboot-sampler", "version": "0.1.0"},
    "start_phase": {"phase": 1, "name": "START_SV"}, "command": null, "boots": {"started": 2},
    "metrics": )" +
         execve_with("[[10, 1], [20, 1]]") + R"(, "phases": [)" + phases + "]}";
}

std::string phase_row(const std::string& number, const std::string& name, const std::string& count = "2") {
  const auto samples = count == "0" ? std::string("[]") : std::string("[[10, 1], [20, 1]]");
  return R"({"phase": )" + number + R"(, "name": ")" + name + R"(", )" + stats_with(samples, count).substr(1);
}

// A baseline whose p50 is 1e15 but whose boots took 10 and 20 ns passed a
// run twice as slow as "+0.0 %": the gate's shift is told in % of the
// median, which must be the samples'.
TEST(Baseline, FiguresThatContradictTheirSamplesAreRefused) {
  const auto execve = [](const std::string& figures, const std::string& samples = "[[10, 1], [20, 1]]",
                         const std::string& count = "2") {
    return schema3(R"({"execve": )" + stats_with(samples, count, figures) + R"(, "listen": {"count": 0}})");
  };
  EXPECT_EQ(refusal_of(execve(R"("avg_ns": 15, "p50_ns": 10, "p90_ns": 20, "p99_ns": 20, "max_ns": 20)")), "");
  EXPECT_TRUE(refused_for(execve(R"("avg_ns": 15, "p50_ns": 1000000000000000, "p90_ns": 20, "p99_ns": 20,
                                     "max_ns": 20)"),
                          R"("metrics.execve.p50_ns" is 1000000000000000, but its samples give 10)"));
  EXPECT_TRUE(refused_for(execve(R"("avg_ns": 15, "p50_ns": 10, "p90_ns": 10, "p99_ns": 20, "max_ns": 20)"),
                          R"("metrics.execve.p90_ns" is 10, but its samples give 20)"));
  EXPECT_TRUE(refused_for(execve(R"("avg_ns": 16, "p50_ns": 10, "p90_ns": 20, "p99_ns": 20, "max_ns": 20)"),
                          R"("metrics.execve.avg_ns" is 16, but its samples give 15)"));
  EXPECT_TRUE(refused_for(execve(R"("avg_ns": 15, "p50_ns": 10, "p90_ns": 20, "p99_ns": 20, "max_ns": 99)"),
                          R"("metrics.execve.max_ns" is 99, but its samples give 20)"));
  EXPECT_TRUE(refused_for(execve(R"("avg_ns": 10, "p50_ns": 10, "p90_ns": 10, "p99_ns": 10, "max_ns": 10,
                                     "exact": true)",
                                 "[[10, 10001]]", "10001"),
                          R"("metrics.execve.exact" is true for 10001 boots)"));
  // Histogram buckets: within the histogram's error of what they read.
  const auto bucketed = [&](const std::string& avg, const std::string& max) {
    return execve(R"("avg_ns": )" + avg + R"(, "p50_ns": 1000000, "p90_ns": 1000000, "p99_ns": 1000000, "max_ns": )" +
                      max + R"(, "exact": false)",
                  "[[1000000, 20000]]", "20000");
  };
  EXPECT_EQ(refusal_of(bucketed("999000", "1003000")), "");
  EXPECT_TRUE(
      refused_for(bucketed("1000000", "1000000000000000"),
                  R"("metrics.execve.max_ns" is 1000000000000000, but its samples end in a bucket of 1000000)"));
  EXPECT_TRUE(refused_for(bucketed("900000", "1000000"),
                          R"("metrics.execve.avg_ns" is 900000, but its samples lie between 1000000 and 1000000)"));
  // A phase's row is held to its samples as well.
  EXPECT_TRUE(refused_for(with_phases(R"({"phase": 13, "name": "X", )" +
                                      stats_with("[[10, 1], [20, 1]]", "2",
                                                 R"("avg_ns": 15, "p50_ns": 5, "p90_ns": 20, "p99_ns": 20,
                                                    "max_ns": 20)")
                                          .substr(1)),
                          R"("phases[0].p50_ns" is 5, but its samples give 10)"));
}

// Rows that would let one phase's figures stand for another's, or show
// what no boot passed.
TEST(Baseline, SuspiciousPhaseRowsAreRefused) {
  EXPECT_EQ(refusal_of(with_phases(phase_row("13", "CONTAINER_FILESYSTEM_SETUP") + ", " + phase_row("123", "mine"))),
            "");
  for (const auto& [phases, fault] : std::vector<std::pair<std::string, std::string>>{
           {phase_row("13", "A") + ", " + phase_row("13", "B"),
            R"("phases[0]" and "phases[1]" are both phase 13: a summary has one row per phase)"},
           {phase_row("-1", "A"), R"("phases[0].phase" is -1, not a phase number 0-127)"},
           {phase_row("128", "A"), R"("phases[0].phase" is 128, not a phase number 0-127)"},
           {phase_row("1000000000000000000", "A"),
            R"("phases[0].phase" is 1000000000000000000, not a phase number 0-127)"},
           {phase_row("1e18", "A"), R"("phases[0].phase" is 1e+18, not an integer)"},
           {phase_row("13", "execve"), R"("phases[0].name": 'execve' names something else)"},
           {phase_row("13", "ALL"), R"("phases[0].name": 'ALL' names something else)"},
           {phase_row("13", "START_SV"), R"("phases[0].name": 'START_SV' already names phase 1)"},
           {phase_row("13", "PHASE_7"), R"("phases[0].name": 'PHASE_7' already names phase 7)"},
           {phase_row("123", "mine") + ", " + phase_row("124", "MINE"),
            R"("phases[0]" and "phases[1]" are both named 'MINE')"},
           {phase_row("13", "A", "0"),
            R"("phases[0].count" is 0: a summary has rows only of phases some boot passed)"}}) {
    EXPECT_TRUE(refused_for(with_phases(phases), fault)) << refusal_of(with_phases(phases));
  }
}

// A summary of this schema (4 on) with these step rows.
std::string with_steps(const std::string& steps, int schema = 4) {
  return R"({"schema": )" + std::to_string(schema) + R"(, "tool": {"name": "hacoboot-sampler", "version": "0.1.0"},
    "start_phase": {"phase": 1, "name": "START_SV"}, "command": null, "boots": {"started": 2},
    "metrics": )" +
         execve_with("[[10, 1], [20, 1]]") + R"(, "phases": [], "steps": [)" + steps + "]}";
}

std::string step_row(const std::string& lane, const std::string& kind_phase_name,
                     const std::string& path = stats_with("[[10, 1], [20, 1]]"), const std::string& more = "") {
  const auto stats = stats_with("[[10, 1], [20, 1]]");
  return R"({"lane": ")" + lane + R"(", )" + kind_phase_name + R"(, "own": )" + stats + R"(, "own_noise_free": )" +
         stats + R"(, "listen_path_time": {"wall": )" + path + R"(, "noise_free": )" + path +
         R"(}, "execve_path_time": {"wall": )" + stats + R"(, "noise_free": )" + stats +
         R"(}, "cpu_ns": 10, "run_queue_ns": 0, "sleep_ns": 5, "io_ns": 0)" + more + "}";
}

constexpr const char* kPhase18 = R"("kind": "phase", "phase": 18, "name": "CONTAINER_CHROOTED")";

// The gate names the steps it compares in its report: rows that are not a
// step of a lane the tool knows, or two rows of one step, are refused.
TEST(Baseline, SuspiciousStepRowsAreRefused) {
  const auto good = with_steps(step_row("container", kPhase18) + ", " +
                               step_row("listener", R"("kind": "listen", "phase": null, "name": "listen")") + ", " +
                               step_row("other", R"("kind": null, "phase": null, "name": null)"));
  EXPECT_EQ(refusal_of(good), "");
  const auto run = parse_baseline(good, "base.json");
  ASSERT_TRUE(run.steps);
  EXPECT_EQ(run.steps->size(), 3U);
  EXPECT_TRUE(run.steps->contains("container phase:18"));
  EXPECT_TRUE(run.steps->contains("listener listen"));
  EXPECT_TRUE(run.steps->contains("other after"));
  EXPECT_EQ(run.steps->at("container phase:18").states->sleep, 5U);
  for (const auto& [steps, fault] : std::vector<std::pair<std::string, std::string>>{
           {step_row("container", kPhase18) + ", " + step_row("container", kPhase18),
            R"("steps[1]" is a second row of container phase:18: a summary has one row per step of a lane)"},
           {step_row("sidecar", kPhase18),
            R"("steps[0].lane" is 'sidecar', not a lane: supervisor, container, listener or other)"},
           {step_row("container", R"("kind": "mount", "phase": 13, "name": "X")"),
            R"("steps[0].kind" is 'mount', not "phase", "execve", "listen" or null)"},
           {step_row("container", R"("kind": "phase", "phase": 200, "name": "X")"),
            R"("steps[0].phase" is 200, not a phase number 0-127)"},
           {step_row("container", kPhase18, stats_with("[[10, 1]]")),
            R"("steps[0].listen_path_time.wall.samples" hold 1 boots, its count says 2)"},
           {R"({"lane": "container", )" + std::string(kPhase18) + "}", R"(no "steps[0].own")"}}) {
    EXPECT_TRUE(refused_for(with_steps(steps), fault)) << refusal_of(with_steps(steps));
  }
}

// A step row of schema 5 with these syscall rows ("calls").
std::string traced_step(const std::string& calls) {
  return step_row("container", kPhase18, stats_with("[[10, 1], [20, 1]]"),
                  R"(, "syscalls": {"user": {"time_ns": 1, "cpu_ns": 1, "run_queue_ns": 0, "sleep_ns": 0, "io_ns": 0},
                     "calls": [)" +
                      calls + "]}");
}

std::string call_row(const std::string& name, const std::string& time_ns = "7") {
  return R"({"name": )" + name + R"(, "nr": 83, "calls": 2, "time_ns": )" + time_ns +
         R"(, "max_ns": 4, "cpu_ns": 5, "run_queue_ns": 2, "sleep_ns": 0, "io_ns": 0})";
}

// Schema 5 keeps each step's mean syscall times (null without --syscalls);
// older schemas have none, and a schema 4 file is read as before.
TEST(Baseline, Schema5StepsKeepTheirSyscalls) {
  const auto run = parse_baseline(with_steps(traced_step(call_row(R"("mkdir")")), 5), "base.json");
  const auto& syscalls = run.steps->at("container phase:18").syscalls;
  ASSERT_TRUE(syscalls);
  ASSERT_TRUE(syscalls->contains("mkdir"));
  EXPECT_EQ(syscalls->at("mkdir"), (SchedTotals{.cpu = 5, .run_queue = 2, .sleep = 0, .io = 0}));
  const auto untraced = parse_baseline(
      with_steps(step_row("container", kPhase18, stats_with("[[10, 1], [20, 1]]"), R"(, "syscalls": null)"), 5),
      "base.json");
  EXPECT_FALSE(untraced.steps->at("container phase:18").syscalls) << "null: the run did not trace them";
  const auto schema4 = parse_baseline(with_steps(step_row("container", kPhase18)), "base.json");
  EXPECT_FALSE(schema4.steps->at("container phase:18").syscalls);
  for (const auto& [calls, fault] : std::vector<std::pair<std::string, std::string>>{
           {call_row(R"("mkdir")", "8"), R"("steps[0].syscalls.calls[0].time_ns" is 8, but its states add up to 7)"},
           {call_row(R"("mkdir")") + ", " + call_row(R"("mkdir")"),
            R"("steps[0].syscalls.calls[1].name" is a second 'mkdir' of the step)"},
           {call_row("83"), R"("steps[0].syscalls.calls[0].name" is 83, not a string)"},
           // 3 x 2^63 wraps to 2^63, its time
           {R"({"name": "mkdir", "nr": 83, "calls": 2, "time_ns": 9223372036854775808, "max_ns": 4,
                "cpu_ns": 9223372036854775808, "run_queue_ns": 9223372036854775808,
                "sleep_ns": 9223372036854775808, "io_ns": 0})",
            R"("steps[0].syscalls.calls[0]": its states add up to more than 2^64 ns)"}}) {
    EXPECT_TRUE(refused_for(with_steps(traced_step(calls), 5), fault)) << refusal_of(with_steps(traced_step(calls), 5));
  }
  EXPECT_TRUE(refused_for(with_steps(step_row("container", kPhase18), 5), R"(no "steps[0].syscalls")"));
}

// -0 is valid JSON, but no count the tool writes: its message says what the file holds.
TEST(Baseline, ASignedZeroIsRefusedAsWhatItIs) {
  EXPECT_TRUE(refused_for(schema3(execve_with("[[10, 1], [20, 1]]", "-0")),
                          R"("metrics.execve.count" is -0, not a non-negative integer)"))
      << refusal_of(schema3(execve_with("[[10, 1], [20, 1]]", "-0")));
}

// The COMMAND is compared as this run's is given, byte for byte: a tab in
// it is a tab, not the "\x09" a message shows.
TEST(Baseline, TheCommandIsKeptAsItsBytes) {
  auto text = schema3(execve_with("[[10, 1], [20, 1]]"));
  text.replace(text.find(R"("command": null)"), 15, R"("command": "/bin/a\tb")");
  EXPECT_EQ(parse_baseline(text, "base.json").origin.command, "/bin/a\tb");
}

// Bounds checked while the JSON is read, before it takes memory: each is
// told in the tool's words, naming the file.
// The DOM keeps a name's last value: a file that reads as schema 8 to a
// reviewer would be judged as the schema 1 written after it.
TEST(Baseline, AMemberTwiceInOneObjectIsRefused) {
  EXPECT_EQ(refusal_of(R"({"schema": 8, "schema": 1})"),
            "base.json: the member \"schema\" twice in one object (expected a --format json summary)");
  EXPECT_EQ(refusal_of(R"({"a": {"x": 1}, "b": {"x": 1}})").find("twice"), std::string::npos)
      << "one name in two objects is no repetition";
}

TEST(Baseline, JsonBeyondItsBoundsIsRefusedAsItIsRead) {
  const auto flat = [](std::size_t items, const std::string& item) {
    std::string text = "[";
    for (std::size_t i = 0; i < items; ++i) text += (i > 0 ? "," : "") + item;
    return text + "]";
  };
  const auto refused = [](const std::string& text, const std::string& why) {
    return refusal_of(text) == "base.json: " + why + " (expected a --format json summary)";
  };
  EXPECT_TRUE(refused(std::string(1 << 20, '['), "arrays or objects nested deeper than 16 levels"));
  EXPECT_TRUE(refused(R"({"schema": 3, "x": )" + std::string(17, '[') + std::string(17, ']') + "}",
                      "arrays or objects nested deeper than 16 levels"));
  EXPECT_TRUE(refused(schema3(execve_with(flat(SampleStats::kExactSamples + 1, "[1, 1]"), "10001")),
                      "an array or object of more than 10000 items"));
  std::string members = "{";
  for (std::size_t i = 0; i <= SampleStats::kExactSamples; ++i)
    members += (i > 0 ? ",\"" : "\"") + std::to_string(i) + "\":0";
  EXPECT_TRUE(refused(members + "}", "an array or object of more than 10000 items"));
  // Arrays each within bounds, too many in all: the document would take
  // many times the file's size in memory.
  EXPECT_TRUE(refused(flat(SummaryJsonBounds::kMaxDocumentBytes / SummaryJsonBounds::kMaxItems / 64,
                           flat(SummaryJsonBounds::kMaxItems, "{}")),
                      "values that would take more than 64 MiB in memory"));
  // What the tool writes is within them: a figure of as many samples as it keeps.
  std::string pairs;
  for (std::size_t i = 0; i < SampleStats::kExactSamples; ++i)
    pairs += (i > 0 ? ", [" : "[") + std::to_string(i + 1) + ", 1]";
  const auto full = schema3(R"({"execve": )" +
                            stats_with("[" + pairs + "]", "10000",
                                       R"("avg_ns": 5000, "p50_ns": 5000, "p90_ns": 9000, "p99_ns": 9900,
                                          "max_ns": 10000, "exact": true)") +
                            R"(, "listen": {"count": 0}})");
  EXPECT_EQ(refusal_of(full), "");
  // And a long run's: 40 phases, each of 10,000 boots all different.
  std::string phases;
  for (int phase = 40; phase < 80; ++phase) {
    phases += fmt::format(R"({}{{"phase": {}, "name": "P{}", )", phases.empty() ? "" : ", ", phase, phase) +
              stats_with("[" + pairs + "]", "10000",
                         R"("avg_ns": 5000, "p50_ns": 5000, "p90_ns": 9000, "p99_ns": 9900, "max_ns": 10000)")
                  .substr(1);
  }
  EXPECT_EQ(refusal_of(with_phases(phases)), "");
}

// U+FFFE and the other noncharacters: an XML document cannot hold U+FFFE or
// U+FFFF, so the JUnit file and the SVG would not be well-formed.
TEST(Baseline, APhaseNameWithANoncharacterIsRefused) {
  for (const char* name :
       {"A\xEF\xBF\xBE", "A\xEF\xBF\xBF", "A\xEF\xB7\x90", "A\xF0\x9F\xBF\xBE", "A\xF4\x8F\xBF\xBF"}) {
    EXPECT_TRUE(refused_for(with_phases(phase_row("123", name)), R"("phases[0].name": phase name 'A\x)"))
        << refusal_of(with_phases(phase_row("123", name)));
  }
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
