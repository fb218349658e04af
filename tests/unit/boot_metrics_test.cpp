#include "exporter/boot_metrics.hpp"

#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "event_builders.hpp"
#include "golden.hpp"
#include "model/boot.hpp"
#include "model/boot_analysis.hpp"
#include "model/kernel_profile.hpp"
#include "model/phases.hpp"
#include "model/syscall_names.hpp"
#include "model/syscalls.hpp"

namespace hacoboot {
namespace {

using test::matches_golden;
using test::started_boot;

// The version changes with every release; the golden files do not.
std::string without_version(std::string text) {
  const std::string version = "version=\"" HACOBOOT_EXPECTED_VERSION "\"";
  if (const auto at = text.find(version); at != std::string::npos) text.replace(at, version.size(), "version=\"V\"");
  return text;
}

std::string render(const BootMetrics& metrics, const PhaseNames& names = {}) {
  std::ostringstream out;
  metrics.write(out, names);
  return without_version(out.str());
}

// The value of one sample, by its exact name and labels; nullopt when absent.
std::optional<std::string> sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(series + " ")) return line.substr(series.size() + 1);
  }
  return std::nullopt;
}

Step phase(std::int64_t n) {
  return Step{Step::Kind::Phase, n};
}

LaneStep lane_step(Lane lane, std::optional<Step> step, std::uint64_t begin, std::uint64_t end, SchedTotals states) {
  const std::uint32_t tid = lane == Lane::Supervisor ? 200 : 201;
  return {.lane = lane,
          .step = step,
          .tid = tid,
          .begin_ns = begin,
          .end_ns = end,
          .since_start = std::nullopt,
          .states = states};
}

// The path through `steps`, whole.
CriticalPath path_through(const std::vector<LaneStep>& steps) {
  CriticalPath path;
  for (const auto& s : steps) path.pieces.push_back({s.tid, s.step, s.begin_ns, s.end_ns, s.states});
  return path;
}

// Boot 1 of golden_metrics() as analyse_boot() would see it with the
// kernel's readings: 150 us of its path to execve and 1.15 ms of its path to
// listen waited for a CPU.
BootAnalysis golden_analysis() {
  const auto fork = lane_step(Lane::Supervisor, phase(2), 1'000'000, 1'250'000, {200'000, 50'000, 0, 0});
  const auto start = lane_step(Lane::Container, phase(11), 1'250'000, 1'500'000, {150'000, 100'000, 0, 0});
  auto execing = lane_step(Lane::Container, phase(21), 1'500'000, 3'000'000, {1'000'000, 0, 400'000, 100'000});
  execing.syscalls =
      StepSyscalls{.calls = {{.nr = SYS_read, .count = 3, .max_ns = 300'000, .states = {.sleep = 400'000}},
                             {.nr = SYS_fsync, .count = 2, .max_ns = 90'000, .states = {.cpu = 20'000, .io = 100'000}}},
                   .user = {.cpu = 980'000},
                   .kernel_cpu = StepKernelCpu{
                       .hz = 999,
                       .points = {{.nr = SYS_fsync, .frames = {"blkdev_issue_flush+0x1", "do_fsync+0x2"}, .samples = 3},
                                  {.nr = kUserTime, .user_mode = true, .samples = 2}}}};
  const auto marker = lane_step(Lane::Supervisor, phase(123), 1'250'000, 3'500'000, {0, 0, 2'250'000, 0});
  const auto execve = lane_step(Lane::Container, Step{Step::Kind::Execve}, 3'000'000, 4'000'000, {1'000'000, 0, 0, 0});
  const auto listen =
      lane_step(Lane::Container, Step{Step::Kind::Listen}, 4'000'000, 13'000'000, {8'000'000, 1'000'000, 0, 0});
  BootAnalysis a;
  a.steps = {fork, start, execing, marker, execve, listen};
  a.to_execve = path_through({fork, start, execing, execve});
  a.to_listen = path_through({fork, start, execing, execve, listen});
  return a;
}

// Boots behind tests/support/golden/metrics.prom (ms since start):
//   1: phases 2 at 0.25, 11 at 0.5, 21 at 2, 123 at 2.5; execve 3, listen 12;
//      with scheduler readings and phase 21's syscalls and CPU samples (golden_analysis())
//   2: phases 2 at 0.1 (on a bucket bound), 11 at 0.4, 21 at 2.5; execve 2.6, listen 1500
//   3: phases 2 at 0.3, 11 at 0.7, then died: incomplete
//   4: seen only after its start: counted nowhere
BootMetrics golden_metrics() {
  BootMetrics m;
  m.add(started_boot(1'000'000,
                     {{0, 900'000}, {1, 1'000'000}, {2, 1'250'000}, {11, 1'500'000}, {21, 3'000'000}, {123, 3'500'000}},
                     4'000'000, 13'000'000),
        golden_analysis());
  m.add_syscalls(golden_analysis());
  m.add(started_boot(2'000'000, {{1, 2'000'000}, {2, 2'100'000}, {11, 2'400'000}, {21, 4'500'000}}, 4'600'000,
                     1'502'000'000));
  m.add(started_boot(3'000'000, {{1, 3'000'000}, {2, 3'300'000}, {11, 3'700'000}}, std::nullopt, std::nullopt));
  BootRecord unstarted;
  unstarted.phases = {{12, 500}};
  unstarted.execve_ns = 900;
  m.add(unstarted);
  m.set_lost_events(3);
  m.set_untracked_phases(5);
  m.set_boots_in_flight(2);
  return m;
}

// A user name with every character the format escapes but newline, which a
// --phase-names line cannot hold (EscapesLabelValues covers it).
const PhaseNames kGoldenNames = PhaseNames::parse(R"(123 user"marker\1)", "names");

TEST(BootMetricsGolden, BeforeTheFirstBoot) {
  EXPECT_TRUE(matches_golden("metrics.empty.prom", render(BootMetrics{})));
}

TEST(BootMetricsGolden, Boots) {
  EXPECT_TRUE(matches_golden("metrics.prom", render(golden_metrics(), kGoldenNames)));
}

TEST(BootMetrics, BuildInfoCarriesTheVersion) {
  std::ostringstream out;
  BootMetrics{}.write(out, {});
  EXPECT_EQ(sample(out.str(), "hacoboot_build_info{version=\"" HACOBOOT_EXPECTED_VERSION "\"}"), "1");
}

TEST(BootMetrics, SayHowManyHaconiwaFilesTheProbeIsIn) {
  BootMetrics m;
  m.set_haconiwa_files(2, 1);
  std::ostringstream out;
  m.write(out, {});
  EXPECT_EQ(sample(out.str(), "hacoboot_haconiwa_files_attached"), "2");
  EXPECT_EQ(sample(out.str(), "hacoboot_haconiwa_replacements_total"), "1");
}

TEST(BootMetrics, ValueOnABoundGoesInThatBucket) {
  BootMetrics m;
  m.add(started_boot(0, {{1, 0}}, 1'000'000, 1'000'001));  // execve exactly 1 ms, listen 1 ns later
  const auto text = render(m);
  const auto bucket = [&](const std::string& family, const std::string& le) {
    return sample(text, family + "_bucket{le=\"" + le + "\"}");
  };
  EXPECT_EQ(bucket("hacoboot_boot_execve_seconds", "0.0005"), "0");
  EXPECT_EQ(bucket("hacoboot_boot_execve_seconds", "0.001"), "1");
  EXPECT_EQ(bucket("hacoboot_boot_listen_seconds", "0.001"), "0");
  EXPECT_EQ(bucket("hacoboot_boot_listen_seconds", "0.0025"), "1");
  EXPECT_EQ(bucket("hacoboot_boot_listen_seconds", "+Inf"), "1");
}

TEST(BootMetrics, ZeroAndBeyondTheLastBound) {
  BootMetrics m;
  m.add(started_boot(0, {{1, 0}}, 0, 60'000'000'001));
  const auto text = render(m);
  EXPECT_EQ(sample(text, R"(hacoboot_boot_execve_seconds_bucket{le="0.0001"})"), "1");
  EXPECT_EQ(sample(text, R"(hacoboot_boot_listen_seconds_bucket{le="60"})"), "0");
  EXPECT_EQ(sample(text, R"(hacoboot_boot_listen_seconds_bucket{le="+Inf"})"), "1");
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_seconds_sum"), "60.000000001");
}

TEST(BootMetrics, BucketsAreCumulativeAndSumIsExact) {
  BootMetrics m;
  for (const std::uint64_t listen : {200'000, 300'000, 7'000'000}) m.add(started_boot(0, {{1, 0}}, 1, listen));
  const auto text = render(m);
  EXPECT_EQ(sample(text, R"(hacoboot_boot_listen_seconds_bucket{le="0.00025"})"), "1");
  EXPECT_EQ(sample(text, R"(hacoboot_boot_listen_seconds_bucket{le="0.0005"})"), "2");
  EXPECT_EQ(sample(text, R"(hacoboot_boot_listen_seconds_bucket{le="0.01"})"), "3");
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_seconds_sum"), "0.0075");
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_seconds_count"), "3");
  EXPECT_EQ(sample(text, "hacoboot_boot_execve_seconds_sum"), "0.000000003");
}

TEST(BootMetrics, CountersFollowBootCounts) {
  BootMetrics m;
  m.add(started_boot(1'000, {{1, 1'000}}, 2'000, 3'000));                // complete
  m.add(started_boot(1'000, {{1, 1'000}}, 2'000, std::nullopt));         // never listened
  m.add(started_boot(1'000, {{1, 1'000}}, 500, 3'000));                  // execve before the start: missed
  m.add(started_boot(1'000, {{1, 1'000}}, std::nullopt, std::nullopt));  // died early
  BootRecord unstarted;
  unstarted.listen_ns = 10;
  m.add(unstarted);
  m.set_lost_events(7);
  m.set_lost_events(9);  // cumulative: the last value wins
  m.set_untracked_phases(20);
  m.set_untracked_phases(25);
  m.set_boots_in_flight(4);
  m.set_boots_in_flight(1);
  m.set_kernel_drops({.syscall_aggregates = 1, .blocked_stretches = 2, .kernel_stacks = 12, .cpu_samples = 3});
  const auto text = render(m);
  EXPECT_EQ(sample(text, R"(hacoboot_kernel_dropped_total{what="syscall_aggregates"})"), "1");
  EXPECT_EQ(sample(text, R"(hacoboot_kernel_dropped_total{what="blocked_stretches"})"), "2");
  EXPECT_EQ(sample(text, R"(hacoboot_kernel_dropped_total{what="kernel_stacks"})"), "12");
  EXPECT_EQ(sample(text, R"(hacoboot_kernel_dropped_total{what="cpu_samples"})"), "3");
  EXPECT_EQ(sample(text, "hacoboot_boots_started_total"), "4");
  EXPECT_EQ(sample(text, "hacoboot_boots_completed_total"), "1");
  EXPECT_EQ(sample(text, "hacoboot_boots_incomplete_total"), "3");
  EXPECT_EQ(sample(text, "hacoboot_events_lost_total"), "9");
  EXPECT_EQ(sample(text, "hacoboot_phase_events_untracked_total"), "25");
  EXPECT_EQ(sample(text, "hacoboot_boots_in_flight"), "1");
  EXPECT_EQ(sample(text, "hacoboot_boot_execve_seconds_count"), "2");
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_seconds_count"), "2");
}

TEST(BootMetrics, MilestonesOwnTimeIsLabelledByTheirName) {
  BootMetrics m;
  m.add(started_boot(0, {{1, 0}, {2, 100}, {11, 300}, {21, 700}}, 1'000, 5'000));
  const auto text = render(m);
  EXPECT_EQ(sample(text, R"(hacoboot_phase_delta_seconds_sum{phase="execve",phase_name="execve"})"), "0.0000003");
  EXPECT_EQ(sample(text, R"(hacoboot_phase_delta_seconds_sum{phase="listen",phase_name="listen"})"), "0.000004");
  EXPECT_EQ(sample(text, R"(hacoboot_phase_delta_seconds_sum{phase="11",phase_name="CONTAINER_START"})"), "0.0000002");
  // Milestones have their own since-start families; the start phase has no series.
  EXPECT_EQ(text.find(R"(hacoboot_phase_since_start_seconds_count{phase="execve")"), std::string::npos);
  EXPECT_EQ(text.find(R"(phase="1")"), std::string::npos);
  EXPECT_EQ(sample(text, R"(hacoboot_phase_since_start_seconds_sum{phase="21",phase_name="CONTAINER_EXECING"})"),
            "0.0000007");
}

TEST(BootMetrics, PhaseOutsideHaconiwasRangeGetsNoSeries) {
  BootMetrics m;
  m.add(started_boot(0, {{1, 0}, {kMaxPhase + 1, 10}, {-1, 20}, {kMaxPhase, 30}}, std::nullopt, std::nullopt));
  const auto text = render(m);
  EXPECT_EQ(text.find(R"(phase="128")"), std::string::npos);
  EXPECT_EQ(text.find(R"(phase="-1")"), std::string::npos);
  EXPECT_NE(text.find(R"(phase="127")"), std::string::npos);
}

TEST(BootMetrics, EscapesLabelValues) {
  EXPECT_EQ(escape_label_value("plain_NAME"), "plain_NAME");
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), R"(a\\b\"c\nd)");
  BootMetrics m;
  m.add(started_boot(0, {{1, 0}, {11, 10}}, std::nullopt, std::nullopt));
  const auto text = render(m, PhaseNames::parse(R"(11 a"b\c)", "names"));
  EXPECT_TRUE(sample(text, R"(hacoboot_phase_since_start_seconds_count{phase="11",phase_name="a\"b\\c"})")) << text;
}

TEST(BootMetrics, NoiseFreeTimesSitBesideTheWallClockOnes) {
  const auto text = render(golden_metrics(), kGoldenNames);
  // Only boot 1 has readings: 3 ms to execve less 150 us, 12 ms to listen less 1.15 ms.
  EXPECT_EQ(sample(text, "hacoboot_boot_execve_noise_free_seconds_sum"), "0.00285");
  EXPECT_EQ(sample(text, "hacoboot_boot_execve_noise_free_seconds_count"), "1");
  EXPECT_EQ(sample(text, R"(hacoboot_boot_execve_noise_free_seconds_bucket{le="0.0025"})"), "0");
  EXPECT_EQ(sample(text, R"(hacoboot_boot_execve_noise_free_seconds_bucket{le="0.005"})"), "1");
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_noise_free_seconds_sum"), "0.01085");
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_seconds_count"), "2");
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_noise_free_seconds_count"), "1");
  // Beside: each right after its wall-clock family.
  EXPECT_LT(text.find("# HELP hacoboot_boot_execve_seconds "), text.find("# HELP hacoboot_boot_execve_noise_free"));
  EXPECT_LT(text.find("# HELP hacoboot_boot_execve_noise_free"), text.find("# HELP hacoboot_boot_listen_seconds "));
}

TEST(BootMetrics, APathWithoutReadingsHasNoNoiseFreeTime) {
  auto analysis = golden_analysis();
  analysis.forks_only = true;
  BootMetrics m;
  m.add(started_boot(1'000'000, {{1, 1'000'000}}, 4'000'000, 13'000'000), analysis);
  const auto text = render(m);
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_noise_free_seconds_count"), "0");
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_seconds_count"), "1");
}

TEST(BootMetrics, StepStatesAreSummedPerLaneAndStep) {
  BootMetrics m;
  const auto boot = started_boot(1'000'000, {{1, 1'000'000}}, 4'000'000, 13'000'000);
  m.add(boot, golden_analysis());
  auto second = golden_analysis();
  second.steps.at(1).states = SchedTotals{50'000, 200'000, 0, 0};  // CONTAINER_START
  second.steps.at(3).states.reset();                               // phase 123: not accounted
  m.add(boot, second);
  const auto text = render(m);
  const std::string start = R"({lane="container",phase="11",phase_name="CONTAINER_START"})";
  EXPECT_EQ(sample(text, "hacoboot_step_cpu_seconds_sum" + start), "0.0002");
  EXPECT_EQ(sample(text, "hacoboot_step_cpu_seconds_count" + start), "2");
  EXPECT_EQ(sample(text, "hacoboot_step_run_queue_seconds_sum" + start), "0.0003");
  EXPECT_EQ(sample(text, "hacoboot_step_run_queue_seconds_count" + start), "2");
  // A step without states counts in neither sum nor count.
  const std::string marker = R"({lane="supervisor",phase="123",phase_name="USR1"})";
  EXPECT_EQ(sample(text, "hacoboot_step_cpu_seconds_count" + marker), "1");
  EXPECT_EQ(sample(text, "hacoboot_step_run_queue_seconds_sum" + marker), "0");
  EXPECT_EQ(sample(text, R"(hacoboot_step_cpu_seconds_sum{lane="container",phase="listen",phase_name="listen"})"),
            "0.016");
}

TEST(BootMetrics, TimeAfterAProcesssLastStepHasItsOwnSeries) {
  auto analysis = golden_analysis();
  analysis.steps.push_back({.lane = Lane::Other,
                            .step = std::nullopt,
                            .tid = 300,
                            .begin_ns = 1,
                            .end_ns = 11,
                            .since_start = std::nullopt,
                            .states = SchedTotals{4, 6, 0, 0}});
  BootMetrics m;
  m.add(started_boot(1'000'000, {{1, 1'000'000}}, 4'000'000, 13'000'000), analysis);
  const auto text = render(m);
  EXPECT_EQ(
      sample(text, R"(hacoboot_step_run_queue_seconds_sum{lane="other",phase="after",phase_name="after last step"})"),
      "0.000000006");
}

TEST(BootMetrics, StepStatesOfAPhaseOutsideHaconiwasRangeGetNoSeries) {
  auto analysis = golden_analysis();
  analysis.steps.push_back(lane_step(Lane::Container, phase(kMaxPhase + 1), 1, 2, {1, 0, 0, 0}));
  BootMetrics m;
  m.add(started_boot(1'000'000, {{1, 1'000'000}}, 4'000'000, 13'000'000), analysis);
  EXPECT_EQ(render(m).find(R"(phase="128")"), std::string::npos);
}

TEST(BootMetrics, SyscallSecondsArePerLaneStepAndSyscallWithTheirCalls) {
  BootMetrics m;
  const auto boot = started_boot(1'000'000, {{1, 1'000'000}}, 4'000'000, 13'000'000);
  m.add(boot, golden_analysis());
  m.add(boot, golden_analysis());
  m.add_syscalls(golden_analysis());
  m.add_syscalls(golden_analysis());
  const auto text = render(m);
  const std::string read = R"({lane="container",phase="21",phase_name="CONTAINER_EXECING",syscall="read"})";
  EXPECT_EQ(sample(text, "hacoboot_step_syscall_seconds_sum" + read), "0.0008");
  EXPECT_EQ(sample(text, "hacoboot_step_syscall_seconds_count" + read), "6") << "its calls, not its boots";
  EXPECT_EQ(sample(text, R"(hacoboot_step_syscall_seconds_sum{lane="container",phase="21",)"
                         R"(phase_name="CONTAINER_EXECING",syscall="fsync"})"),
            "0.00024");
  EXPECT_EQ(text.find(R"(syscall="other"})"), std::string::npos) << "no step has more syscalls than the bound";
  EXPECT_EQ(text.find(R"(phase="2",phase_name="START_FORK",syscall)"), std::string::npos) << "no figures there";
}

// Live, a boot settles (add) before it ends and its syscalls are taken
// (add_syscalls): each call counts what it is given, once.
TEST(BootMetrics, SyscallSecondsComeFromTheEndedBootNotTheSettledOne) {
  const auto boot = started_boot(1'000'000, {{1, 1'000'000}}, 4'000'000, 13'000'000);
  const std::string read = R"({lane="container",phase="21",phase_name="CONTAINER_EXECING",syscall="read"})";
  BootMetrics m;
  m.add(boot, golden_analysis());
  EXPECT_FALSE(sample(render(m), "hacoboot_step_syscall_seconds_count" + read));
  m.add_syscalls(golden_analysis());
  EXPECT_EQ(sample(render(m), "hacoboot_step_syscall_seconds_count" + read), "3");
}

// A step with one syscall per number 1..n, number k taking k ns: the most
// time first, as StepSyscalls has them.
StepSyscalls syscalls_numbered(std::uint32_t n) {
  StepSyscalls syscalls;
  for (std::uint32_t nr = n; nr >= 1; --nr) {
    syscalls.calls.push_back({.nr = nr, .count = 1, .max_ns = nr, .states = {.cpu = nr}});
  }
  return syscalls;
}

std::string syscall_series(std::uint32_t nr) {
  return R"(hacoboot_step_syscall_seconds_count{lane="container",phase="21",phase_name="CONTAINER_EXECING",syscall=")" +
         syscall_name(nr) + "\"}";
}

TEST(BootMetrics, AStepHasAtMostTheBoundOfSyscallsByNameAndTheRestAsOther) {
  constexpr auto kBound = BootMetrics::kSyscallSeriesPerStep;
  const auto boot = started_boot(1'000'000, {{1, 1'000'000}}, 4'000'000, 13'000'000);
  auto analysis = golden_analysis();
  analysis.steps.at(2).syscalls = syscalls_numbered(kBound + 2);
  BootMetrics m;
  m.add_syscalls(analysis);
  // The next boot: the lightest named one, and one never seen, which finds no free series.
  analysis.steps.at(2).syscalls = StepSyscalls{.calls = {{.nr = 100, .count = 5, .max_ns = 90, .states = {.io = 500}},
                                                         {.nr = 3, .count = 1, .max_ns = 1, .states = {.cpu = 1}}},
                                               .user = {}};
  m.add_syscalls(analysis);
  const auto text = render(m);
  for (std::uint32_t nr = 3; nr <= kBound + 2; ++nr) EXPECT_TRUE(sample(text, syscall_series(nr))) << nr;
  EXPECT_EQ(sample(text, syscall_series(3)), "2") << "a series once made stays";
  EXPECT_FALSE(sample(text, syscall_series(1)));
  EXPECT_FALSE(sample(text, syscall_series(100)));
  const std::string other = R"({lane="container",phase="21",phase_name="CONTAINER_EXECING",syscall="other"})";
  EXPECT_EQ(sample(text, "hacoboot_step_syscall_seconds_count" + other), "7");  // 1 + 1 + 5
  EXPECT_EQ(sample(text, "hacoboot_step_syscall_seconds_sum" + other), "0.000000503");
}

std::string kernel_cpu_series(const std::string& syscall, const std::string& where) {
  return R"(hacoboot_step_kernel_cpu_samples_total{lane="container",phase="21",phase_name="CONTAINER_EXECING",syscall=")" +
         syscall + R"(",where=")" + where + "\"}";
}

TEST(BootMetrics, KernelCpuSamplesArePerLaneStepSyscallAndPlaceWithTheFrequency) {
  BootMetrics m;
  EXPECT_EQ(sample(render(m), "hacoboot_kernel_profile_hertz"), "0") << "before a sampled boot";
  m.add_syscalls(golden_analysis());
  m.add_syscalls(golden_analysis());
  const auto text = render(m);
  EXPECT_EQ(sample(text, kernel_cpu_series("fsync", "blkdev_issue_flush")), "6");
  EXPECT_EQ(sample(text, kernel_cpu_series("user", "user")), "4") << "user mode, outside any call";
  EXPECT_FALSE(sample(text, kernel_cpu_series("other", "other"))) << "no step has more places than the bound";
  EXPECT_EQ(sample(text, "hacoboot_kernel_profile_hertz"), "999");
}

// A step sampled at n places, one per syscall 1..n, number k sampled k
// times: the most samples first.
StepKernelCpu kernel_cpu_numbered(std::uint32_t n) {
  StepKernelCpu cpu{.hz = 99};
  for (std::uint32_t nr = n; nr >= 1; --nr)
    cpu.points.push_back({.nr = nr, .frames = {"shmem_fill_super+0x1"}, .samples = nr});
  return cpu;
}

TEST(BootMetrics, AStepHasAtMostTheBoundOfKernelCpuPlacesAndTheRestAsOther) {
  constexpr auto kBound = static_cast<std::uint32_t>(BootMetrics::kKernelCpuSeriesPerStep);
  BootMetrics m;
  auto analysis = golden_analysis();
  analysis.steps.at(2).syscalls->kernel_cpu = kernel_cpu_numbered(kBound + 2);
  m.add_syscalls(analysis);
  analysis.steps.at(2).syscalls->kernel_cpu =
      StepKernelCpu{.hz = 99, .points = {{.nr = 100, .frames = {"shmem_fill_super+0x1"}, .samples = 5}}};
  m.add_syscalls(analysis);
  const auto text = render(m);
  for (std::uint32_t nr = 3; nr <= kBound + 2; ++nr) {
    EXPECT_EQ(sample(text, kernel_cpu_series(syscall_name(nr), "shmem_fill_super")), std::to_string(nr)) << nr;
  }
  EXPECT_FALSE(sample(text, kernel_cpu_series(syscall_name(1), "shmem_fill_super")));
  EXPECT_FALSE(sample(text, kernel_cpu_series(syscall_name(100), "shmem_fill_super")));
  EXPECT_EQ(sample(text, kernel_cpu_series("other", "other")), "8");  // 1 + 2 + 5
  EXPECT_EQ(sample(text, "hacoboot_kernel_profile_hertz"), "99");
}

TEST(BootMetrics, AnUnstartedBootsAnalysisCountsNowhere) {
  BootRecord unstarted;
  unstarted.listen_ns = 10;
  BootMetrics m;
  m.add(unstarted, golden_analysis());
  const auto text = render(m);
  EXPECT_EQ(sample(text, "hacoboot_boot_listen_noise_free_seconds_count"), "0");
  EXPECT_EQ(text.find("hacoboot_step_cpu_seconds_sum"), std::string::npos);
}

}  // namespace
}  // namespace hacoboot
