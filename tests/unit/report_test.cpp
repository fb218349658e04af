#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "event_builders.hpp"
#include "golden.hpp"
#include "model/boot.hpp"
#include "model/summary.hpp"
#include "model/syscalls.hpp"
#include "report/report.hpp"

namespace hacoboot {
namespace {

using test::matches_golden;
using test::started_boot;

// The fixed summary behind tests/support/golden/summary.*: three started boots
// (two complete, one died before execve) and one seen only after its start.
//   execve since start: 4 ms, 5.000002 ms     -> avg 4500001, stddev 500001
//   listen since start: 11 ms, 12.6 ms        -> avg 11800000, stddev 800000
//   phase 31: 100, 150 us; 2: 300, 200, 250 us; 11: 500, 700, 900 us
//   (31 comes first in boot order although its number is the largest)
Summary golden_summary() {
  Summary s;
  s.add(started_boot(1'000'000, {{0, 900'000}, {1, 1'000'000}, {31, 1'100'000}, {2, 1'300'000}, {11, 1'500'000}},
                     5'000'000, 12'000'000));
  s.add(started_boot(2'000'000, {{1, 2'000'000}, {31, 2'150'000}, {2, 2'200'000}, {11, 2'700'000}}, 7'000'002,
                     14'600'000));
  auto failed = started_boot(3'000'000, {{1, 3'000'000}, {2, 3'250'000}, {11, 3'900'000}}, std::nullopt, std::nullopt);
  failed.container_pid = 3'001;
  failed.container_exit_ns = 4'000'000;
  failed.container_exit_status = 1 << 8;  // exited 1
  s.add(failed);
  BootRecord unstarted;
  unstarted.phases = {{12, 500}};
  unstarted.execve_ns = 900;
  s.add(unstarted);
  return s;
}

RunFacts facts(std::int64_t start_phase, std::string command, std::uint64_t lost_events,
               std::uint64_t untracked_phases = 0) {
  RunFacts f;
  f.start_phase = start_phase;
  f.command = std::move(command);
  f.lost_events = lost_events;
  f.untracked_phases = untracked_phases;
  return f;
}

const RunFacts kGoldenFacts = facts(1, "/u/app/bin/rails", 2, 5);

std::string render(ReportFormat format, const Summary& summary, const RunFacts& facts) {
  const auto writer = make_report_writer(format);
  EXPECT_NE(writer, nullptr);
  std::ostringstream out;
  if (writer) writer->write(summary, facts, out);
  return out.str();
}

// A JSON summary with the tool's version as "V": the golden files stay
// those of every version.
std::string json_of(const Summary& summary) {
  auto json = render(ReportFormat::Json, summary, kGoldenFacts);
  const std::string version = "\"version\": \"" HACOBOOT_EXPECTED_VERSION "\"";
  const auto at = json.find(version);
  EXPECT_NE(at, std::string::npos) << json.substr(0, 200);
  if (at != std::string::npos) json.replace(at, version.size(), "\"version\": \"V\"");
  return json;
}

TEST(ReportGolden, Table) {
  EXPECT_TRUE(matches_golden("summary.table.txt", render(ReportFormat::Table, golden_summary(), kGoldenFacts)));
}

TEST(ReportGolden, Bpftrace) {
  EXPECT_TRUE(matches_golden("summary.bpftrace.txt", render(ReportFormat::Bpftrace, golden_summary(), kGoldenFacts)));
}

TEST(ReportGolden, Json) {
  EXPECT_TRUE(matches_golden("summary.json", json_of(golden_summary())));
}

TEST(ReportGolden, Tsv) {
  EXPECT_TRUE(matches_golden("summary.tsv", render(ReportFormat::Tsv, golden_summary(), kGoldenFacts)));
}

// The keys docs/outputs.md documents, with the golden summary's values (more keys
// may follow: percentiles, stddev, own time under "delta").
void expect_stats(const nlohmann::json& j, std::uint64_t count, std::uint64_t avg, std::uint64_t min,
                  std::uint64_t max) {
  EXPECT_EQ(j.at("count"), count) << j.dump();
  EXPECT_EQ(j.at("avg_ns"), avg) << j.dump();
  EXPECT_EQ(j.at("min_ns"), min) << j.dump();
  EXPECT_EQ(j.at("max_ns"), max) << j.dump();
}

TEST(JsonReport, ParsesWithTheDocumentedKeys) {
  const auto doc = nlohmann::json::parse(render(ReportFormat::Json, golden_summary(), kGoldenFacts));
  for (const char* key : {"schema", "tool", "start_phase", "command", "boots", "lost_events", "untracked_phase_events",
                          "tracked_at_exit", "metrics", "phases", "critical_path", "steps"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc.at("schema"), 8);
  EXPECT_EQ(doc.at("tool"), (nlohmann::json{{"name", "hacoboot-sampler"}, {"version", HACOBOOT_EXPECTED_VERSION}}));
  EXPECT_EQ(doc.at("start_phase"), (nlohmann::json{{"phase", 1}, {"name", "START_SV"}}));
  EXPECT_EQ(doc.at("command"), "/u/app/bin/rails");
  const nlohmann::json failure{{"boots", 1},
                               {"last_phase", 11},
                               {"last_step", "CONTAINER_START"},
                               {"process", "container"},
                               {"end", "exited"},
                               {"exit_status", 1},
                               {"description", "container exited 1 after 11 CONTAINER_START"}};
  EXPECT_EQ(doc.at("boots"), (nlohmann::json{{"started", 3},
                                             {"execve", 2},
                                             {"listen", 2},
                                             {"incomplete", 1},
                                             {"unstarted", 1},
                                             {"in_flight", 0},
                                             {"failures", {failure}}}));
  EXPECT_EQ(doc.at("lost_events"), 2);
  EXPECT_EQ(doc.at("untracked_phase_events"), 5);
  const auto& metrics = doc.at("metrics");
  EXPECT_EQ(metrics.size(), 2u) << metrics.dump();
  expect_stats(metrics.at("execve"), 2, 4500001, 4000000, 5000002);
  expect_stats(metrics.at("listen"), 2, 11800000, 11000000, 12600000);

  const auto& phases = doc.at("phases");
  ASSERT_TRUE(phases.is_array());
  ASSERT_EQ(phases.size(), 3u) << "the start phase and phases before it are left out";
  EXPECT_EQ(phases[0].at("phase"), 31);
  EXPECT_EQ(phases[0].at("name"), "START_CREATE_NETWORK");
  expect_stats(phases[0], 2, 125000, 100000, 150000);
  EXPECT_EQ(phases[1].at("phase"), 2);
  EXPECT_EQ(phases[1].at("name"), "START_FORK");
  expect_stats(phases[1], 3, 250000, 200000, 300000);
  EXPECT_EQ(phases[2].at("phase"), 11);
  EXPECT_EQ(phases[2].at("name"), "CONTAINER_START");
  expect_stats(phases[2], 3, 700000, 500000, 900000);
}

TEST(JsonReport, PercentilesAndOwnTime) {
  const auto doc = nlohmann::json::parse(render(ReportFormat::Json, golden_summary(), kGoldenFacts));
  const auto& phase11 = doc.at("phases").at(2);
  // Nearest rank of 500, 700, 900 us.
  EXPECT_EQ(phase11.at("p50_ns"), 700000);
  EXPECT_EQ(phase11.at("p90_ns"), 900000);
  EXPECT_EQ(phase11.at("p99_ns"), 900000);
  // Own time of phase 11: since START_FORK, 200, 500 and 650 us.
  expect_stats(phase11.at("delta"), 3, 450000, 200000, 650000);
  // execve's own time: since phase 11, 3.5 ms and 4.300002 ms.
  expect_stats(doc.at("metrics").at("execve").at("delta"), 2, 3900001, 3500000, 4300002);
}

TEST(JsonReport, EmptyCommandIsNullAndStartPhaseNamed) {
  const auto doc = nlohmann::json::parse(render(ReportFormat::Json, Summary{}, facts(0, "", 0)));
  EXPECT_TRUE(doc.at("command").is_null());
  EXPECT_EQ(doc.at("start_phase"), (nlohmann::json{{"phase", 0}, {"name", "CLI_START"}}));
  expect_stats(doc.at("metrics").at("execve"), 0, 0, 0, 0);
  expect_stats(doc.at("metrics").at("listen"), 0, 0, 0, 0);
  EXPECT_TRUE(doc.at("phases").is_array());
  EXPECT_TRUE(doc.at("phases").empty());
  EXPECT_EQ(doc.at("lost_events"), 0);
}

// A boot shaped like Haconiwa's with the scheduler's readings, as
// analyse_boot makes it: the supervisor forks the container (START_FORK,
// 300 ns of CPU), the container execs and listens, the supervisor's
// END_SETUP sleeps off the path. `queued` of listen's 5000 ns waited for a
// CPU.
std::pair<BootRecord, BootAnalysis> analysed_boot(std::uint64_t t, std::uint64_t queued) {
  const Step fork{Step::Kind::Phase, 2};
  const Step execve{Step::Kind::Execve};
  const Step listen{Step::Kind::Listen};
  BootAnalysis a;
  a.steps = {
      {Lane::Supervisor, fork, 200, t, t + 300, 300, SchedTotals{300, 0, 0, 0}, 300, 300},
      {Lane::Container, execve, 201, t + 300, t + 3'000, 3'000, SchedTotals{2'700, 0, 0, 0}, 2'700, 2'700},
      {Lane::Supervisor, Step{Step::Kind::Phase, 3}, 200, t + 300, t + 3'100, 3'100, SchedTotals{0, 0, 2'800, 0}, 0, 0},
      {Lane::Container, listen, 201, t + 3'000, t + 8'000, 8'000, SchedTotals{5'000 - queued, queued, 0, 0}, 5'000, 0},
  };
  a.to_execve = CriticalPath{{{200, fork, t, t + 300, SchedTotals{300, 0, 0, 0}},
                              {201, execve, t + 300, t + 3'000, SchedTotals{2'700, 0, 0, 0}}}};
  a.to_listen = a.to_execve;
  a.to_listen->pieces.push_back({201, listen, t + 3'000, t + 8'000, SchedTotals{5'000 - queued, queued, 0, 0}});
  return {started_boot(t, {{1, t}, {2, t + 300}, {3, t + 3'100}}, t + 3'000, t + 8'000), a};
}

// Two such boots, 1000 ns and nothing of listen queued.
Summary analysed_summary() {
  Summary s;
  for (const auto& [boot, analysis] : {analysed_boot(1'000'000, 1'000), analysed_boot(2'000'000, 0)}) {
    s.add(boot, analysis);
  }
  return s;
}

// Schema 2: beside each milestone's wall-clock figures its noise-free ones
// (the critical path without its run-queue time: listen 7000 and 8000 ns).
TEST(JsonReport, NoiseFreeFiguresBesideTheWallClockOnes) {
  const auto doc = nlohmann::json::parse(render(ReportFormat::Json, analysed_summary(), kGoldenFacts));
  const auto& listen = doc.at("metrics").at("listen");
  expect_stats(listen, 2, 8000, 8000, 8000);
  expect_stats(listen.at("noise_free"), 2, 7500, 7000, 8000);
  EXPECT_EQ(listen.at("noise_free").at("p90_ns"), 8000);
  expect_stats(doc.at("metrics").at("execve").at("noise_free"), 2, 3000, 3000, 3000);
}

TEST(JsonReport, CriticalPathSummaryOfTheRun) {
  const auto doc = nlohmann::json::parse(render(ReportFormat::Json, analysed_summary(), kGoldenFacts));
  const auto& path = doc.at("critical_path");
  EXPECT_EQ(path.at("forks_only"), false);
  EXPECT_EQ(path.at("forks_only_boots"), 0);
  expect_stats(path.at("execve").at("length"), 2, 3000, 3000, 3000);
  const auto& listen = path.at("listen");
  expect_stats(listen.at("length"), 2, 8000, 8000, 8000);
  // Mean states of the path per boot: they add up to its mean length.
  EXPECT_EQ(listen.at("cpu_ns"), 7500);
  EXPECT_EQ(listen.at("run_queue_ns"), 500);
  EXPECT_EQ(listen.at("sleep_ns"), 0);
  EXPECT_EQ(listen.at("io_ns"), 0);
}

// Steps by lane, in boot order inside a lane, with their mean states and
// their share of the critical path: the supervisor's END_SETUP slept in
// parallel (no share), the shares of the path add up to 100 %.
TEST(JsonReport, StepsByLaneWithStatesAndShareOfThePath) {
  const auto doc = nlohmann::json::parse(render(ReportFormat::Json, analysed_summary(), kGoldenFacts));
  const auto& steps = doc.at("steps");
  ASSERT_EQ(steps.size(), 4u) << steps.dump(2);
  const auto names = [&steps] {
    std::vector<std::string> out;
    for (const auto& step : steps)
      out.push_back(step.at("lane").get<std::string>() + " " + step.at("name").get<std::string>());
    return out;
  }();
  EXPECT_EQ(names, (std::vector<std::string>{"supervisor START_FORK", "supervisor END_SETUP", "container execve",
                                             "container listen"}));
  const auto& fork = steps[0];
  EXPECT_EQ(fork.at("kind"), "phase");
  EXPECT_EQ(fork.at("phase"), 2);
  expect_stats(fork.at("since_start"), 2, 300, 300, 300);
  expect_stats(fork.at("own"), 2, 300, 300, 300);
  EXPECT_EQ(fork.at("cpu_ns"), 300);
  EXPECT_EQ(fork.at("on_listen_path"), true);
  EXPECT_DOUBLE_EQ(fork.at("listen_path_share").get<double>(), 600.0 / 16000.0);
  EXPECT_DOUBLE_EQ(fork.at("execve_path_share").get<double>(), 0.1);

  const auto& end_setup = steps[1];
  EXPECT_EQ(end_setup.at("sleep_ns"), 2800);
  EXPECT_EQ(end_setup.at("on_listen_path"), false);
  EXPECT_EQ(end_setup.at("listen_path_share"), 0.0);

  const auto& listen = steps[3];
  EXPECT_EQ(listen.at("kind"), "listen");
  EXPECT_TRUE(listen.at("phase").is_null());
  EXPECT_EQ(listen.at("cpu_ns"), 4500);
  EXPECT_EQ(listen.at("run_queue_ns"), 500);
  EXPECT_EQ(listen.at("on_execve_path"), false);

  double shares = 0;
  for (const auto& step : steps) shares += step.at("listen_path_share").get<double>();
  EXPECT_DOUBLE_EQ(shares, 1.0);
}

// Boots without the scheduler's readings (an old capture): the paths follow
// the fork alone, states and noise-free figures are null or empty, never 0.
TEST(JsonReport, ForksOnlyPathsHaveNoStatesNorNoiseFreeFigures) {
  auto [boot, analysis] = analysed_boot(1'000'000, 1'000);
  analysis.forks_only = true;
  for (auto& step : analysis.steps) step.states.reset();
  for (auto* path : {&analysis.to_execve, &analysis.to_listen}) {
    for (auto& piece : (*path)->pieces) piece.states.reset();
  }
  Summary s;
  s.add(boot, analysis);
  const auto doc = nlohmann::json::parse(render(ReportFormat::Json, s, kGoldenFacts));
  EXPECT_EQ(doc.at("critical_path").at("forks_only"), true);
  EXPECT_EQ(doc.at("critical_path").at("forks_only_boots"), 1);
  EXPECT_TRUE(doc.at("critical_path").at("listen").at("cpu_ns").is_null());
  EXPECT_EQ(doc.at("metrics").at("listen").at("noise_free").at("count"), 0);
  for (const auto& step : doc.at("steps")) EXPECT_TRUE(step.at("cpu_ns").is_null()) << step.dump();
  EXPECT_EQ(doc.at("steps").at(0).at("on_listen_path"), true) << "the path is known, its states are not";
}

// The tidy summary gains a noise_free row after execve's and listen's
// delta rows; a run without the scheduler's readings has none.
TEST(TsvReport, NoiseFreeRowsFollowExecveAndListen) {
  const auto tsv = render(ReportFormat::Tsv, analysed_summary(), kGoldenFacts);
  EXPECT_NE(tsv.find("execve\t\texecve\tnoise_free\t2\t3000\t3000\t3000\t0\t3000\t3000\t3000\n"), std::string::npos)
      << tsv;
  EXPECT_NE(tsv.find("listen\t\tlisten\tdelta\t2\t5000\t5000\t5000\t0\t5000\t5000\t5000\n"
                     "listen\t\tlisten\tnoise_free\t2\t7500\t7000\t8000\t500\t7000\t8000\t8000\n"),
            std::string::npos)
      << tsv;
  EXPECT_EQ(render(ReportFormat::Tsv, golden_summary(), kGoldenFacts).find("noise_free"), std::string::npos);
}

// The whole schema 3 document of analysed_summary(): scheduler states, path
// shares, noise-free figures and samples where a reader finds them.
TEST(ReportGolden, JsonWithCriticalPaths) {
  EXPECT_TRUE(matches_golden("summary.paths.json", json_of(analysed_summary())));
}

// analysed_summary() with syscall figures in two steps of each boot: the
// table's top three per step and top blocking points (or all, and their
// stacks, with --all-syscalls), JSON's per step.
Summary syscalls_summary() {
  Summary s;
  for (auto [boot, analysis] : {analysed_boot(1'000'000, 1'000), analysed_boot(2'000'000, 0)}) {
    auto& end_setup = analysis.steps[2];
    end_setup.syscalls =
        StepSyscalls{.calls = {{.nr = 0, .count = 3, .max_ns = 2'000, .states = {.cpu = 100, .sleep = 2'600}},
                               {.nr = 56, .count = 1, .max_ns = 60, .states = {.cpu = 60}},
                               {.nr = 22, .count = 2, .max_ns = 20, .states = {.cpu = 30}},
                               {.nr = 1023, .count = 5, .max_ns = 2, .states = {.cpu = 8}}},
                     .user = {.cpu = 0, .run_queue = 0, .sleep = 2, .io = 0},
                     // Where the reads blocked: woken by the container's write.
                     .blocking = {{.nr = 0,
                                   .frames = {"__schedule+0x628", "schedule+0x23", "anon_pipe_read+0x4fa"},
                                   .waker_tid = boot.container_pid,
                                   .waker_lane = Lane::Container,
                                   .waker_frames = {"try_to_wake_up+0x3b6", "anon_pipe_write+0x3ad"},
                                   .count = 1,
                                   .time_ns = 2'500}}};
    auto& execve = analysis.steps[1];
    execve.syscalls = StepSyscalls{
        .calls = {{.nr = 74, .count = 1, .max_ns = 2'000, .states = {.cpu = 200, .io = 1'800}}}, .user = {.cpu = 700}};
    s.add(boot, analysis);
  }
  return s;
}

TEST(ReportGolden, TableWithSyscalls) {
  EXPECT_TRUE(
      matches_golden("summary.syscalls.table.txt", render(ReportFormat::Table, syscalls_summary(), kGoldenFacts)));
  std::ostringstream all;
  make_report_writer(ReportFormat::Table, {.all_syscalls = true})->write(syscalls_summary(), kGoldenFacts, all);
  EXPECT_TRUE(matches_golden("summary.all-syscalls.table.txt", all.str()));
}

TEST(ReportGolden, JsonWithSyscalls) {
  EXPECT_TRUE(matches_golden("summary.syscalls.json", json_of(syscalls_summary())));
}

// With --syscalls, how full the aggregation maps got, so that an operator
// sizes a busy host's run before a map fills and figures are dropped.
RunFacts facts_with_maps(std::uint64_t syscall_peak) {
  auto with_maps = kGoldenFacts;
  with_maps.kernel_maps = {{.map = "syscall_aggregates", .peak = syscall_peak, .capacity = 32'768},
                           {.map = "blocking_stacks", .peak = 95, .capacity = 8'192}};
  return with_maps;
}

TEST(JsonReport, SaysHowFullTheKernelMapsGot) {
  const auto doc = nlohmann::json::parse(render(ReportFormat::Json, golden_summary(), facts_with_maps(1'242)));
  EXPECT_EQ(doc.at("kernel_maps"), (nlohmann::json{{"syscall_aggregates", {{"peak", 1'242}, {"capacity", 32'768}}},
                                                   {"blocking_stacks", {{"peak", 95}, {"capacity", 8'192}}}}));
  const auto without = nlohmann::json::parse(render(ReportFormat::Json, golden_summary(), kGoldenFacts));
  EXPECT_EQ(without.at("kernel_maps"), nlohmann::json::object());
}

TEST(TableReport, NotesAKernelMapWithLessThanAQuarterLeft) {
  const auto roomy = render(ReportFormat::Table, golden_summary(), facts_with_maps(24'575));
  EXPECT_EQ(roomy.find("NOTE: kernel map"), std::string::npos) << roomy;
  const auto full = render(ReportFormat::Table, golden_summary(), facts_with_maps(24'576));
  EXPECT_NE(full.find("NOTE: kernel map syscall_aggregates held up to 24576 of its 32768 entries"), std::string::npos)
      << full;
  EXPECT_EQ(full.find("kernel map blocking_stacks"), std::string::npos) << full;
}

TEST(BpftraceReport, EmptyMetricPrintsNothing) {
  Summary s;
  s.add(started_boot(1'000, {{1, 1'000}}, 4'000, std::nullopt));  // never listened
  EXPECT_EQ(render(ReportFormat::Bpftrace, s, RunFacts{}),
            "@execve__count: 1\n"
            "@execve_avg: 3000\n"
            "@execve_max: 3000\n"
            "@execve_min: 3000\n");
  EXPECT_EQ(render(ReportFormat::Bpftrace, Summary{}, RunFacts{}), "");
}

TEST(TableReport, EmptySummary) {
  const std::string expected =
      "Boots: 0 started, 0 reached execve, 0 reached listen, 0 incomplete\n"
      "execve of: the container's first execve\n"
      "\n"
      "TIME SINCE CLI_START                COUNT       AVG       P50       P90       P99       MIN       MAX\n"
      "execve                                  0         -         -         -         -         -         -\n"
      "listen                                  0         -         -         -         -         -         -\n";
  const auto actual = render(ReportFormat::Table, Summary{}, facts(0, "", 0));
  EXPECT_EQ(actual, expected) << test::line_diff(expected, actual);
}

TEST(TableReport, HistogramsOnlyWhenAsked) {
  const auto plain = render(ReportFormat::Table, golden_summary(), kGoldenFacts);
  EXPECT_EQ(plain.find("@execve"), std::string::npos) << plain;
  std::ostringstream out;
  make_report_writer(ReportFormat::Table, {.histograms = true})->write(golden_summary(), kGoldenFacts, out);
  // 4 ms is in [2^21, 2^22) ns, 5.000002 ms in [2^22, 2^23) ns: a row each.
  EXPECT_NE(out.str().find("@execve (time since start):\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("[2.10 ms, 4.19 ms)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("[4.19 ms, 8.39 ms)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("@listen (time since start):\n"), std::string::npos) << out.str();
}

TEST(FormatDuration, UnitsAndThreeSignificantDigits) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(812), "812 ns");
  EXPECT_EQ(format_duration(999), "999 ns");
  EXPECT_EQ(format_duration(1'000), "1.00 us");
  EXPECT_EQ(format_duration(12'300), "12.3 us");
  EXPECT_EQ(format_duration(358'000), "358 us");
  EXPECT_EQ(format_duration(1'000'000), "1.00 ms");
  EXPECT_EQ(format_duration(1'500'000), "1.50 ms");
  EXPECT_EQ(format_duration(7'210'000), "7.21 ms");
  EXPECT_EQ(format_duration(11'200'000), "11.2 ms");
  EXPECT_EQ(format_duration(1'000'000'000), "1.00 s");
  EXPECT_EQ(format_duration(2'240'287'035), "2.24 s");
  EXPECT_EQ(format_duration(125'000'000'000), "125 s");
}

// Rounding to three significant digits can carry into the next digit or unit:
// 999999 ns is 999.999 us, which prints "1.00 ms", never "1000 us".
TEST(FormatDuration, RoundingCarriesIntoTheNextDigitOrUnit) {
  EXPECT_EQ(format_duration(999'999), "1.00 ms");
  EXPECT_EQ(format_duration(999'500), "1.00 ms");
  EXPECT_EQ(format_duration(999'499), "999 us");
  EXPECT_EQ(format_duration(999'999'999), "1.00 s");
  EXPECT_EQ(format_duration(9'999), "10.0 us");
  EXPECT_EQ(format_duration(9'994), "9.99 us");
  EXPECT_EQ(format_duration(99'999), "100 us");
  EXPECT_EQ(format_duration(99'949), "99.9 us");
  EXPECT_EQ(format_duration(99'990'000), "100 ms");
}

}  // namespace
}  // namespace hacoboot
