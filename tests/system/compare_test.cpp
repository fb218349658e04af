// `hacoboot-sampler compare BASE NEW` on crafted summaries: no root, no
// tracing; the gate's report on stdout and its exit status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "temp_dir.hpp"

namespace hacoboot {
namespace {

using Json = nlohmann::ordered_json;

// Statistics and samples of boots taking these many ms, as schema 3 writes them.
Json figure(std::vector<double> ms, bool with_samples = true) {
  std::sort(ms.begin(), ms.end());
  std::vector<std::uint64_t> ns;
  for (const double v : ms) ns.push_back(static_cast<std::uint64_t>(v * 1e6));
  const auto at = [&](double q) {
    if (ns.empty()) return std::uint64_t{0};
    const auto rank = static_cast<std::size_t>(std::ceil(q / 100 * static_cast<double>(ns.size())));
    return ns.at(std::clamp<std::size_t>(rank, 1, ns.size()) - 1);
  };
  std::uint64_t sum = 0;
  for (const auto v : ns) sum += v;
  Json out{{"count", ns.size()},
           {"avg_ns", ns.empty() ? 0 : sum / ns.size()},
           {"min_ns", ns.empty() ? 0 : ns.front()},
           {"max_ns", ns.empty() ? 0 : ns.back()},
           {"exact", true},
           {"p50_ns", at(50)},
           {"p90_ns", at(90)},
           {"p99_ns", at(99)}};
  if (!with_samples) return out;
  auto samples = Json::array();
  for (const auto v : ns) {
    if (!samples.empty() && samples.back()[0] == v) {
      samples.back()[1] = samples.back()[1].get<std::uint64_t>() + 1;
    } else {
      samples.push_back(Json::array({v, 1}));
    }
  }
  out["samples"] = std::move(samples);
  return out;
}

// 20 boots around `ms`, +-1 %.
std::vector<double> around(double ms, std::size_t boots = 20) {
  std::vector<double> values;
  for (std::size_t i = 0; i < boots; ++i) {
    values.push_back(ms * (0.99 + 0.02 * static_cast<double>(i) / static_cast<double>(boots)));
  }
  return values;
}

struct RunShape {
  std::vector<double> execve_wall;
  std::vector<double> listen_wall;
  std::vector<double> noise_free;  // of both execve and listen; empty: none
  int schema = 3;
  std::int64_t start_phase = 1;
};

Json summary_of(const RunShape& run) {
  const bool samples = run.schema >= 3;
  Json doc{{"schema", run.schema}};
  if (samples) doc["tool"] = {{"name", "hacoboot-sampler"}, {"version", HACOBOOT_EXPECTED_VERSION}};
  doc["start_phase"] = {{"phase", run.start_phase}, {"name", "X"}};
  doc["command"] = nullptr;
  doc["boots"] = {{"started", std::max(run.execve_wall.size(), run.listen_wall.size())}};
  doc["metrics"] = {{"execve", figure(run.execve_wall, samples)}, {"listen", figure(run.listen_wall, samples)}};
  for (const char* metric : {"execve", "listen"})
    doc["metrics"][metric]["noise_free"] = figure(run.noise_free, samples);
  doc["phases"] = Json::array();
  return doc;
}

class CompareTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const RunShape& run) {
    const auto path = dir_.path() / name;
    std::ofstream(path) << summary_of(run).dump(2);
    return path.string();
  }
  it::ProcessResult compare(const std::string& base, const std::string& now, std::vector<std::string> options = {}) {
    std::vector<std::string> argv{test::sampler().string(), "compare", base, now};
    argv.insert(argv.end(), options.begin(), options.end());
    return it::run_process(argv, dir_.path(), std::chrono::seconds(30));
  }
  static void expect_exit(const it::ProcessResult& r, int code) {
    EXPECT_TRUE(r.status.exited && r.status.code == code)
        << r.status.describe() << ", expected exit " << code << "\nstdout:\n"
        << r.out << "stderr:\n"
        << r.err;
  }
  test::TempDir dir_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(CompareTest, TheSameFiguresPass) {
  const auto base = write("base.json", {around(10), around(30), around(8)});
  const auto r = compare(base, write("new.json", {around(10), around(30), around(8)}));
  expect_exit(r, 0);
  EXPECT_TRUE(contains(r.out, "gate: passed")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(CompareTest, ASlowerRunRegresses) {
  const auto base = write("base.json", {around(10), around(30), around(8)});
  const auto r = compare(base, write("new.json", {around(10), around(45), around(12)}));
  expect_exit(r, 3);
  EXPECT_TRUE(contains(r.out, "gate: REGRESSED")) << r.out;
}

// CPU contention doubles the wall time of the same work, not its noise-free time.
TEST_F(CompareTest, ContentionFailsOnlyAWallClockGate) {
  const auto base = write("base.json", {around(10), around(30), around(8)});
  const auto busy = write("busy.json", {around(20), around(60), around(8)});
  expect_exit(compare(base, busy), 0);
  expect_exit(compare(base, busy, {"--gate-on", "wall"}), 3);
}

TEST_F(CompareTest, TwoBootsPerRunAreInconclusive) {
  const auto base = write("base.json", {around(10, 2), around(30, 2), around(8, 2)});
  const auto r = compare(base, write("new.json", {around(10, 2), around(30, 2), around(8, 2)}));
  expect_exit(r, 5);
  EXPECT_TRUE(contains(r.out, "gate: INCONCLUSIVE")) << r.out;
  EXPECT_TRUE(contains(r.out, "too few for a rank test")) << r.out;
}

TEST_F(CompareTest, ASchema2BaselineIsComparedByItsPercentileAndSaysSo) {
  const auto base = write("base.json", {around(10), around(30), around(8), 2});
  const auto r = compare(base, write("new.json", {around(10), around(45), around(12)}));
  expect_exit(r, 3);
  EXPECT_TRUE(contains(r.out, "the baseline has no samples (schema 2)")) << r.out;
}

TEST_F(CompareTest, WhatCannotBeJudgedIsRefused) {
  const auto now = write("new.json", {around(10), around(30), around(8)});
  const auto no_boots = write("none.json", {{}, {}, {}});
  auto r = compare(no_boots, now);
  expect_exit(r, 2);
  EXPECT_TRUE(contains(r.err, "none.json")) << r.err;
  EXPECT_TRUE(contains(r.err, "the baseline run saw no boot")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  r = compare(write("from13.json", {around(10), around(30), around(8), 3, 13}), now);
  expect_exit(r, 2);
  EXPECT_TRUE(contains(r.err, "the baseline's clock starts at phase 13, this run's at phase 1")) << r.err;

  const auto not_json = dir_.path() / "not.json";
  std::ofstream(not_json) << "Boots: 20 started\n";
  r = compare(not_json.string(), now);
  expect_exit(r, 2);
  EXPECT_TRUE(contains(r.err, "not.json: not JSON")) << r.err;

  expect_exit(compare(now, now, {"--alpha", "0"}), 2);
  expect_exit(compare(now, (dir_.path() / "missing.json").string()), 2);
}

// What the CI system reads of the --gate-junit file: junitparser's view
// (tests/support/junit_cases.py), as "case NAME RESULT TYPE MESSAGE" lines
// after a "suite NAME TESTS FAILURES ERRORS SKIPPED" line.
std::string as_ci_reads_it(const std::filesystem::path& junit, const std::filesystem::path& dir) {
  const auto r = it::run_process({test::junit_cases().string(), junit.string()}, dir, std::chrono::seconds(30));
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << ": " << r.err;
  return r.out;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(CompareTest, ARegressionIsAFailedTestCaseForTheCiAndARowForTheReviewer) {
  const auto base = write("base.json", {around(10), around(30), around(8)});
  const auto junit = dir_.path() / "gate.xml";
  const auto markdown = dir_.path() / "gate.md";
  const auto r = compare(base, write("new.json", {around(10), around(45), around(12)}),
                         {"--gate-junit", junit.string(), "--gate-markdown", markdown.string()});
  expect_exit(r, 3);
  const auto cases = as_ci_reads_it(junit, dir_.path());
  EXPECT_TRUE(contains(cases, "suite\thacoboot-sampler regression gate\t2\t2\t0\t0\n")) << cases;
  EXPECT_TRUE(contains(cases, "case\tlisten\tfailure\tregressed\tlisten, noise-free: median 7.99 ms -> 12.0 ms, +50"))
      << cases;
  EXPECT_TRUE(contains(cases, ": REGRESSED; limit +10%\n")) << cases;
  const auto table = read_text(markdown);
  EXPECT_TRUE(table.starts_with("### Boot time against the baseline: REGRESSED\n")) << table;
  EXPECT_TRUE(contains(table, "| listen | noise-free | 7.99 ms | 12.0 ms | +50")) << table;
  EXPECT_TRUE(contains(table, "| **REGRESSED** |")) << table;
}

TEST_F(CompareTest, APassAndAnInconclusiveGateAsTheCiReadsThem) {
  const auto base = write("base.json", {around(10), around(30), around(8)});
  const auto junit = dir_.path() / "gate.xml";
  expect_exit(compare(base, base, {"--gate-junit", junit.string()}), 0);
  auto cases = as_ci_reads_it(junit, dir_.path());
  EXPECT_TRUE(contains(cases, "suite\thacoboot-sampler regression gate\t2\t0\t0\t0\n")) << cases;
  EXPECT_TRUE(contains(cases, "case\texecve\tpassed\t")) << cases;
  EXPECT_TRUE(contains(cases, "case\tlisten\tpassed\t")) << cases;

  const auto two = write("two.json", {around(10, 2), around(30, 2), around(8, 2)});
  expect_exit(compare(two, two, {"--gate-junit", junit.string()}), 5);
  cases = as_ci_reads_it(junit, dir_.path());
  EXPECT_TRUE(contains(cases, "suite\thacoboot-sampler regression gate\t2\t0\t2\t0\n")) << cases;
  EXPECT_TRUE(contains(cases, ": INCONCLUSIVE: 2 boots against 2: too few for a rank test; about ")) << cases;
}

// A compare that fails once the gate's files are named leaves no earlier
// verdict for CI to read: both say the run was not judged, and why.
TEST_F(CompareTest, AFailedCompareReplacesAnEarlierVerdictWithNotJudged) {
  const auto base = write("base.json", {around(10), around(30), around(8)});
  const auto junit = dir_.path() / "gate.xml";
  const auto markdown = dir_.path() / "gate.md";
  const auto json = dir_.path() / "gate.json";
  const std::vector<std::string> files{"--gate-junit",    junit.string(), "--gate-markdown",
                                       markdown.string(), "--gate-json",  json.string()};
  expect_exit(compare(base, base, files), 0);
  ASSERT_EQ(nlohmann::json::parse(read_text(json)).at("outcome"), "passed") << read_text(json);
  ASSERT_TRUE(contains(read_text(junit), R"(<property name="outcome" value="passed"/>)")) << read_text(junit);

  // A forged median: refused, naming the file, the row and the field.
  auto forged = summary_of({around(10), around(30), around(8)});
  forged["metrics"]["listen"]["noise_free"]["p50_ns"] = 1'000'000'000'000'000;
  const auto now = dir_.path() / "forged.json";
  std::ofstream(now) << forged.dump(2);
  const auto r = compare(base, now.string(), files);
  expect_exit(r, 2);
  EXPECT_TRUE(contains(r.err, R"("metrics.listen.noise_free.p50_ns" is 1000000000000000, but its samples give)"))
      << r.err;
  const auto cases = as_ci_reads_it(junit, dir_.path());
  EXPECT_TRUE(contains(cases, "suite\thacoboot-sampler regression gate\t1\t0\t1\t0\n")) << cases;
  EXPECT_TRUE(contains(read_text(junit), R"(<error type="not judged" message="the run failed: )")) << read_text(junit);
  EXPECT_FALSE(contains(read_text(junit), "passed")) << read_text(junit);
  EXPECT_TRUE(read_text(markdown).starts_with("### Boot time against the baseline: not judged\n"))
      << read_text(markdown);
  const auto verdict = nlohmann::json::parse(read_text(json));
  EXPECT_EQ(verdict.at("outcome"), "not judged") << verdict.dump();
  EXPECT_TRUE(verdict.at("reason").get<std::string>().starts_with("the run failed: ")) << verdict.dump();
}

// For tools: the same rows as the report, with identifiers to branch on.
TEST_F(CompareTest, TheVerdictAsJsonHasTheRowsAndTheirIdentifiers) {
  const auto base = write("base.json", {around(10), around(30), around(8)});
  const auto json = dir_.path() / "gate.json";
  expect_exit(compare(base, write("new.json", {around(10), around(45), around(12)}), {"--gate-json", json.string()}),
              3);
  const auto verdict = nlohmann::json::parse(read_text(json));
  EXPECT_EQ(verdict.at("outcome"), "REGRESSED");
  EXPECT_EQ(verdict.at("terms").at("gate_on"), "noise-free");
  bool listen_seen = false;
  for (const auto& row : verdict.at("metrics")) {
    if (row.at("key") != "listen") continue;
    listen_seen = true;
    EXPECT_EQ(row.at("verdict"), "regressed") << row.dump();
    EXPECT_GT(row.at("change_pct").get<double>(), 40) << row.dump();
  }
  EXPECT_TRUE(listen_seen) << verdict.dump();
  // Summaries without per-step samples: the steps say why they were not compared.
  EXPECT_FALSE(verdict.at("steps").at("compared").get<bool>()) << verdict.dump();
}

// The gate's files are outputs like any other: checked before anything is
// read, never an input, never a link.
TEST_F(CompareTest, GateFilesThatCannotBeWrittenSafelyAreRefused) {
  const auto base = write("base.json", {around(10), around(30), around(8)});
  const auto now = write("new.json", {around(10), around(30), around(8)});
  auto r = compare(base, now, {"--gate-junit", base});
  expect_exit(r, 2);
  EXPECT_TRUE(contains(r.err, "--gate-junit")) << r.err;
  EXPECT_TRUE(read_text(base).starts_with("{")) << "the baseline was overwritten";

  const auto both = (dir_.path() / "gate.out").string();
  expect_exit(compare(base, now, {"--gate-junit", both, "--gate-markdown", both}), 2);

  const auto target = dir_.path() / "elsewhere";
  std::ofstream(target) << "keep";
  std::filesystem::create_symlink(target, dir_.path() / "link.xml");
  expect_exit(compare(base, now, {"--gate-junit", (dir_.path() / "link.xml").string()}), 2);
  EXPECT_EQ(read_text(target), "keep");

  expect_exit(compare(base, now, {"--gate-markdown", dir_.path().string()}), 2);
  expect_exit(compare(base, now, {"--gate-markdown", ""}), 2);
}

}  // namespace
}  // namespace hacoboot
