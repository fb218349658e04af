// The table's breakdown by lane, fed hand-built analyses (Summary::add with
// a BootAnalysis), so what it shows does not hang on analyse_boot's details.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "event_builders.hpp"
#include "golden.hpp"
#include "model/boot_analysis.hpp"
#include "model/summary.hpp"
#include "report/report.hpp"

namespace hacoboot {
namespace {

using test::matches_golden;

constexpr std::uint32_t kSupervisor = 200;
constexpr std::uint32_t kContainer = 201;

Step phase(std::int64_t number) {
  return Step{Step::Kind::Phase, number};
}
const Step kExecve{Step::Kind::Execve, 0};
const Step kListen{Step::Kind::Listen, 0};

// One step of the hand-built boot, in µs since its start, times `stretch`.
struct StepSpec {
  Lane lane;
  Step step;
  std::uint64_t begin_us;
  std::uint64_t end_us;
  SchedTotals states_us;  // adds up to end - begin
  bool on_listen_path;
  bool on_execve_path;
};

// Haconiwa's "done" pipe: the supervisor forks, then blocks until the
// container closes the pipe just before it execs. Its END_SETUP (4.8 ms,
// mostly sleep) is off the path; the path to listen (8 ms) runs through
// START_FORK, then the container's steps: shares 3.75 %, 6.25 %, 2.5 %,
// 50 %, 0.25 % and 37.25 %. Run queue on the path: 430 us, so noise-free 7.57 ms.
const std::vector<StepSpec> kDonePipeBoot{
    {Lane::Supervisor, phase(2), 0, 300, {250, 50, 0, 0}, true, true},
    {Lane::Container, phase(11), 300, 800, {450, 50, 0, 0}, true, true},
    {Lane::Container, phase(12), 800, 1'000, {150, 50, 0, 0}, true, true},
    {Lane::Container, phase(21), 1'000, 5'000, {3'000, 200, 0, 800}, true, true},
    {Lane::Container, kExecve, 5'000, 5'020, {20, 0, 0, 0}, true, true},
    {Lane::Supervisor, phase(3), 300, 5'100, {100, 20, 4'680, 0}, false, false},
    {Lane::Supervisor, phase(4), 5'100, 5'500, {380, 20, 0, 0}, false, false},
    {Lane::Container, kListen, 5'020, 8'000, {2'900, 80, 0, 0}, true, false},
};

SchedTotals scaled(const SchedTotals& us, std::uint64_t factor) {
  return {us.cpu * factor, us.run_queue * factor, us.sleep * factor, us.io * factor};
}

struct HandBuiltBoot {
  BootRecord record;
  BootAnalysis analysis;
};

// The boot of `specs` starting at `start_ns`, every duration times `stretch`;
// `with_states` false: an old capture, paths following the fork only.
HandBuiltBoot hand_built_boot(const std::vector<StepSpec>& specs, std::uint64_t start_ns, std::uint64_t stretch,
                              bool with_states = true) {
  const std::uint64_t ns = 1'000 * stretch;
  HandBuiltBoot boot;
  boot.record = test::started_boot(start_ns, {{1, start_ns}}, std::nullopt, std::nullopt);
  boot.analysis.forks_only = !with_states;
  CriticalPath to_listen;
  CriticalPath to_execve;
  for (const auto& spec : specs) {
    const auto tid = spec.lane == Lane::Supervisor ? kSupervisor : kContainer;
    const auto begin = start_ns + spec.begin_us * ns;
    const auto end = start_ns + spec.end_us * ns;
    std::optional<SchedTotals> states;
    if (with_states) states = scaled(spec.states_us, ns);
    LaneStep step{spec.lane, spec.step, tid, begin, end, end - start_ns, states, 0, 0};
    const PathPiece piece{tid, spec.step, begin, end, states};
    if (spec.on_listen_path) {
      step.on_listen_path_ns = step.duration();
      to_listen.pieces.push_back(piece);
    }
    if (spec.on_execve_path) {
      step.on_execve_path_ns = step.duration();
      to_execve.pieces.push_back(piece);
    }
    boot.analysis.steps.push_back(step);
    if (spec.step.kind == Step::Kind::Phase) boot.record.phases.push_back({spec.step.phase, end});
    if (spec.step == kExecve) boot.record.execve_ns = end;
    if (spec.step == kListen) boot.record.listen_ns = end;
  }
  std::sort(boot.record.phases.begin(), boot.record.phases.end(),
            [](const PhaseMark& a, const PhaseMark& b) { return a.ts_ns < b.ts_ns; });
  if (!to_listen.pieces.empty()) boot.analysis.to_listen = to_listen;
  if (!to_execve.pieces.empty()) boot.analysis.to_execve = to_execve;
  return boot;
}

// Two done-pipe boots, the second three times as long: means are twice the first's.
Summary done_pipe_summary(bool with_states = true) {
  Summary summary;
  for (const auto& [start, stretch] : {std::pair{1'000'000ULL, 1ULL}, std::pair{50'000'000ULL, 3ULL}}) {
    const auto boot = hand_built_boot(kDonePipeBoot, start, stretch, with_states);
    summary.add(boot.record, boot.analysis);
  }
  return summary;
}

std::string render(const Summary& summary, const RunFacts& facts = {}) {
  std::ostringstream out;
  make_report_writer(ReportFormat::Table)->write(summary, facts, out);
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The breakdown's row of a step ("3 END_SETUP"); "" when absent.
std::string row_of(const std::string& table, const std::string& label) {
  for (const auto& line : lines_of(table)) {
    if (line.find(label + " ") != std::string::npos && line.find("BREAKDOWN") == std::string::npos) return line;
  }
  return "";
}

// The share a row shows, in percent; nullopt when it shows none.
std::optional<double> share_of(const std::string& row) {
  const auto percent = row.rfind('%');
  if (percent == std::string::npos) return std::nullopt;
  const auto begin = row.rfind(' ', percent - 1);
  return std::stod(row.substr(begin + 1, percent - begin - 1));
}

TEST(TableBreakdown, Golden) {
  EXPECT_TRUE(matches_golden("breakdown.table.txt", render(done_pipe_summary())));
}

TEST(TableBreakdown, WaitingForTheDonePipeIsOffThePathAndSharesSumTo100) {
  const auto table = render(done_pipe_summary());
  const auto end_setup = row_of(table, "3 END_SETUP");
  ASSERT_FALSE(end_setup.empty()) << table;
  EXPECT_NE(end_setup.find("off path"), std::string::npos) << end_setup;
  EXPECT_FALSE(share_of(end_setup)) << end_setup;

  double sum = 0;
  for (const auto* label : {"2 START_FORK", "11 CONTAINER_START", "12 CONTAINER_NAMESPACE_GENERATED",
                            "21 CONTAINER_EXECING", "execve", "listen"}) {
    const auto row = row_of(table, std::string("  ") + label);
    const auto share = share_of(row);
    ASSERT_TRUE(share) << label << " has no share: " << row;
    sum += *share;
  }
  EXPECT_NEAR(sum, 100.0, 0.1) << table;
  EXPECT_EQ(share_of(row_of(table, "21 CONTAINER_EXECING")), 50.0);
}

TEST(TableBreakdown, RowsAreGroupedByLaneWithTheirStates) {
  const auto lines = lines_of(render(done_pipe_summary()));
  const auto at = [&lines](const std::string& text) {
    return std::find_if(lines.begin(), lines.end(), [&text](const auto& l) { return l.find(text) == 0; }) -
           lines.begin();
  };
  EXPECT_LT(at("supervisor"), at("    2 START_FORK"));
  EXPECT_LT(at("    4 START_WAIT"), at("container"));
  EXPECT_LT(at("container"), at("   11 CONTAINER_START"));
  // Mean of 3.00 ms and 9.00 ms CPU, 800 us and 2.40 ms I/O.
  const auto execing = lines.at(static_cast<std::size_t>(at("   21 CONTAINER_EXECING")));
  EXPECT_NE(execing.find("6.00 ms   400 us     0 ns  1.60 ms"), std::string::npos) << execing;
}

TEST(TableBreakdown, PathLineAndNoiseFreeMilestones) {
  const auto table = render(done_pipe_summary());
  // Paths of 8 and 24 ms, run queue 430 us and 1.29 ms.
  EXPECT_NE(table.find("CRITICAL PATH TO listen (boots: 2): mean 16.0 ms, CPU 13.5 ms, RUNQ 860 us, SLEEP 0 ns, "
                       "I/O 1.60 ms; noise-free 15.1 ms\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("listen (noise-free)                     2   15.1 ms   7.57 ms   22.7 ms"), std::string::npos)
      << table;
  EXPECT_NE(table.find("execve (noise-free)                     2"), std::string::npos) << table;
}

TEST(TableBreakdown, FitsIn120Columns) {
  for (const auto& line : lines_of(render(done_pipe_summary()))) EXPECT_LE(line.size(), 120U) << line;
}

TEST(TableBreakdown, OldCapturesSayThePathFollowsTheForkOnly) {
  const auto table = render(done_pipe_summary(/*with_states=*/false));
  EXPECT_NE(table.find("2 boots carry no scheduler readings"), std::string::npos) << table;
  EXPECT_NE(table.find("their path follows the fork only, their states are unknown"), std::string::npos) << table;
  EXPECT_EQ(table.find("noise-free"), std::string::npos) << "no states, no noise-free figure:\n" << table;
  const auto execing = row_of(table, "21 CONTAINER_EXECING");
  EXPECT_NE(execing.find("       -        -        -        -   50.0%"), std::string::npos) << execing;
}

TEST(TableBreakdown, SharesOfThePathToExecveWhenNothingListened) {
  std::vector<StepSpec> no_listen(kDonePipeBoot);
  std::erase_if(no_listen, [](const StepSpec& spec) { return spec.step == kListen; });
  for (auto& spec : no_listen) spec.on_listen_path = false;
  Summary summary;
  const auto boot = hand_built_boot(no_listen, 1'000'000, 1);
  summary.add(boot.record, boot.analysis);
  const auto table = render(summary);
  EXPECT_NE(table.find("CRITICAL PATH TO execve (boots: 1): mean 5.02 ms"), std::string::npos) << table;
  // 4 ms of 5.02 ms.
  EXPECT_NEAR(share_of(row_of(table, "21 CONTAINER_EXECING")).value_or(0), 79.7, 0.05) << table;
}

// The same done-pipe boot as the kernel side records it (thread readings
// and the wakeup), for analyse_boot to take apart. Totals in us.
ThreadSample reading(std::uint64_t start_ns, std::uint64_t at_us, SchedTotals totals_us,
                     std::optional<Step> step = std::nullopt) {
  return {start_ns + at_us * 1'000, scaled(totals_us, 1'000), step};
}

BootRecord recorded_done_pipe_boot(std::uint64_t start_ns) {
  auto boot = test::started_boot(start_ns,
                                 {{1, start_ns},
                                  {2, start_ns + 280'000},
                                  {11, start_ns + 1'000'000},
                                  {21, start_ns + 5'000'000},
                                  {3, start_ns + 5'100'000},
                                  {4, start_ns + 5'500'000}},
                                 start_ns + 5'020'000, start_ns + 8'000'000);
  boot.hpid = kSupervisor;
  boot.container_pid = kContainer;
  boot.start_tid = kSupervisor;
  boot.execve_tid = kContainer;
  boot.listen_tid = kContainer;
  // The supervisor runs until it has forked, sleeps on the done pipe until
  // the container closes it at 5 ms, waits 20 us for a CPU, then runs on.
  ThreadTimeline supervisor{kSupervisor, std::nullopt, 0, {}};
  supervisor.samples = {reading(start_ns, 0, {1'000, 0, 0, 0}, phase(1)),
                        reading(start_ns, 280, {1'280, 0, 0, 0}, phase(2)),
                        reading(start_ns, 290, {1'290, 0, 0, 0}),  // the fork
                        reading(start_ns, 5'100, {1'380, 20, 4'700, 0}, phase(3)),
                        reading(start_ns, 5'500, {1'780, 20, 4'700, 0}, phase(4))};
  // The container runs from its fork to listen, with 1 ms of I/O before
  // CONTAINER_EXECING and 80 us on the run queue before listen.
  ThreadTimeline container{kContainer, kSupervisor, start_ns + 290'000, {}};
  container.samples = {reading(start_ns, 1'000, {710, 0, 0, 0}, phase(11)),
                       reading(start_ns, 5'000, {3'710, 0, 0, 1'000}, phase(21)),
                       reading(start_ns, 5'020, {3'730, 0, 0, 1'000}, kExecve),
                       reading(start_ns, 8'000, {6'630, 80, 0, 1'000}, kListen)};
  boot.threads = {supervisor, container};
  boot.wakeups = {{start_ns + 5'000'000, kContainer, kSupervisor, scaled({3'710, 0, 0, 1'000}, 1'000),
                   scaled({1'300, 0, 4'700, 0}, 1'000)}};
  return boot;
}

// Passes once analyse_boot gives a boot's steps (model/boot_analysis.cpp).
TEST(TableFromRecords, TheSupervisorsWaitOnTheDonePipeIsOffThePath) {
  Summary summary;
  summary.add(recorded_done_pipe_boot(1'000'000));
  const auto table = render(summary);
  const auto end_setup = row_of(table, "3 END_SETUP");
  ASSERT_FALSE(end_setup.empty()) << table;
  EXPECT_NE(end_setup.find("off path"), std::string::npos) << table;
  EXPECT_NE(end_setup.find("4.70 ms"), std::string::npos) << "its sleep on the pipe:\n" << table;
  double sum = 0;
  for (const auto& line : lines_of(table)) sum += share_of(line).value_or(0);
  EXPECT_NEAR(sum, 100.0, 0.3) << table;
  // Path 8 ms, 80 us of it on the run queue.
  EXPECT_NE(table.find("CRITICAL PATH TO listen (boots: 1): mean 8.00 ms"), std::string::npos) << table;
  EXPECT_NE(table.find("listen (noise-free)                     1   7.92 ms"), std::string::npos) << table;
}

TEST(TableWarnings, UnaccountedThreadsAreReported) {
  RunFacts facts;
  facts.unaccounted_threads = 3;
  EXPECT_NE(render(done_pipe_summary(), facts)
                .find("WARNING: 3 threads unaccounted (scheduler map full): CPU / RUNQ / SLEEP / I/O figures may be "
                      "incomplete\n"),
            std::string::npos);
  EXPECT_EQ(render(done_pipe_summary()).find("unaccounted"), std::string::npos);
}

// Each loss is told on its own, with its cause: a stack map rarely fills,
// but a stack whose hash bucket holds another is not taken either.
TEST(TableWarnings, StacksNotTakenAreReportedWithoutTheOtherLosses) {
  RunFacts facts;
  facts.stacks_dropped = 12;
  const auto table = render(done_pipe_summary(), facts);
  EXPECT_NE(table.find("WARNING: 12 kernel stacks not taken (stack map full, or another stack in the same bucket of "
                       "its hash)"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("blocked stretches"), std::string::npos) << "none was dropped:\n" << table;
}

TEST(TableWarnings, RepairedSwitchInsAreReportedAsNoLoss) {
  RunFacts facts;
  facts.repaired_switch_ins = 4;
  const auto table = render(done_pipe_summary(), facts);
  EXPECT_NE(table.find("Repaired: 4 switches onto a CPU the scheduler hooks missed"), std::string::npos) << table;
  EXPECT_EQ(table.find("WARNING"), std::string::npos) << "a repair loses nothing:\n" << table;
  EXPECT_EQ(render(done_pipe_summary()).find("Repaired"), std::string::npos);
}

}  // namespace
}  // namespace hacoboot
