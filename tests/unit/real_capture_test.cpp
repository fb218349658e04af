// Boot reassembly on tests/fixtures/real-haconiwa-3boots.tsv: three real
// Haconiwa v0.11.5 boots of a busybox httpd container, captured system-wide.
// KernelModel tags the rows as the BPF program would; every expected figure
// below is read off the capture's rows by hand.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "event_builders.hpp"
#include "kernel_model.hpp"
#include "model/boot_tracker.hpp"
#include "model/summary.hpp"
#include "report/boot_rows.hpp"
#include "report/report.hpp"
#include "support/build_paths.hpp"

namespace hacoboot {
namespace {

using test::CaptureRow;
using test::KernelModel;
using test::RecordingTracker;

const char* const kCommand = "/bin/busybox";

struct ExpectedBoot {
  std::uint32_t cli;        // `haconiwa start`: passes phase 0
  std::uint32_t hpid;       // the supervisor it forks: passes 1
  std::uint32_t container;  // forked after phase 2, passes 11..21, execs busybox
  std::uint64_t cli_phase0;
  std::uint64_t phase1;
  std::uint64_t execve;  // execve(/bin/busybox) entry by the container
  std::uint64_t listen;  // its first successful listen
  std::uint64_t container_exit;
};

const ExpectedBoot kBoots[] = {
    {9034, 9045, 9046, 2353307919393, 2353313993320, 2353320764337, 2353327655077, 2353423700369},
    {9074, 9083, 9086, 2353530947884, 2353536057544, 2353543403319, 2353544382103, 2353612241600},
    {9110, 9118, 9119, 2353716317345, 2353719253566, 2353727589287, 2353728521542, 2353792916494},
};

std::vector<CaptureRow> capture_in_file_order() {
  return test::load_capture(test::fixtures_dir() / "real-haconiwa-3boots.tsv");
}

// Feeds the capture through KernelModel and a BootTracker; stops tracing at
// the end of the capture.
struct Run {
  std::vector<BootRecord> boots;  // in the order they ended
  std::size_t live_at_end = 0;    // before finish_all
  std::uint64_t settled = 0;
  std::vector<BootRecord> still_running;  // handed over by finish_all
};

Run run(const std::vector<CaptureRow>& rows, BootTracker::Config config) {
  RecordingTracker rt(std::move(config));
  rt.feed(KernelModel::replay(rows));
  Run r;
  r.boots = rt.done();
  r.live_at_end = rt.tracker().live_boots();
  r.settled = rt.tracker().settled_boots();
  rt.tracker().finish_all();
  r.still_running.assign(rt.done().begin() + static_cast<std::ptrdiff_t>(r.boots.size()), rt.done().end());
  return r;
}

Run run_sorted(std::int64_t start_phase = 1) {
  return run(test::sorted_by_time(capture_in_file_order()), {.start_phase = start_phase, .command = kCommand});
}

std::string summary_report(const std::vector<BootRecord>& boots, ReportFormat format) {
  Summary summary;
  for (const auto& b : boots) summary.add(b);
  std::ostringstream out;
  RunFacts facts;
  facts.command = kCommand;
  make_report_writer(format)->write(summary, facts, out);
  return out.str();
}

// Every field of a record, to compare two runs.
std::string describe(const BootRecord& b) {
  const auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
  std::string text = fmt::format(
      "seq={} hpid={} container={} cgroup={} from={} start={} execve={} listen={} "
      "container_exit={} end={} phases=",
      b.sequence, b.hpid, b.container_pid, b.cgroup_id, b.start_phase, opt(b.start_ns), opt(b.execve_ns),
      opt(b.listen_ns), opt(b.container_exit_ns), static_cast<int>(b.end));
  for (const auto& m : b.phases) text += fmt::format("{}@{},", m.phase, m.ts_ns);
  return text;
}

TEST(RealCapture, ThreeBootsNoPhantoms) {
  const auto r = run_sorted();
  EXPECT_TRUE(r.still_running.empty()) << "every boot of the capture ended";
  EXPECT_EQ(r.live_at_end, 0u);
  ASSERT_EQ(r.boots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.boots[i].hpid, kBoots[i].hpid);
    EXPECT_EQ(r.boots[i].container_pid, kBoots[i].container);
    EXPECT_EQ(r.boots[i].sequence, i + 1);
    EXPECT_EQ(r.boots[i].end, BootEnd::Exited);
  }
  EXPECT_EQ(r.settled, 3u);
}

// Tracing begins just after the first launch passed START_FORK: its later
// phases (the container's 11-21, the supervisor's 3-6) are dropped in the
// kernel and counted, and it is not reported at all, not even as a boot seen
// only after its start; the two launches that follow are whole.
TEST(RealCapture, ALaunchPastStartForkWhenTracingBeginsIsLeftOut) {
  constexpr std::uint64_t kFirstStartFork = 2353317281238;
  auto rows = test::sorted_by_time(capture_in_file_order());
  std::erase_if(rows, [](const CaptureRow& row) { return row.ts_ns <= kFirstStartFork; });
  KernelModel model;
  for (const auto& row : rows) model.on_row(row);
  EXPECT_EQ(model.untracked_phases(), 15u);

  const auto r = run(rows, {.command = kCommand});
  EXPECT_TRUE(r.still_running.empty());
  ASSERT_EQ(r.boots.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.boots[i].hpid, kBoots[i + 1].hpid);
    EXPECT_TRUE(r.boots[i].started());
    EXPECT_EQ(r.boots[i].end, BootEnd::Exited);
  }
}

TEST(RealCapture, EachBootsFiguresFromTheRows) {
  const auto r = run_sorted();
  ASSERT_EQ(r.boots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("boot " + std::to_string(i + 1));
    const auto& b = r.boots[i];
    const auto& x = kBoots[i];
    EXPECT_TRUE(b.complete());
    EXPECT_EQ(b.start_ns, x.phase1);
    EXPECT_EQ(b.execve_ns, x.execve);
    EXPECT_EQ(b.listen_ns, x.listen);
    EXPECT_EQ(b.since_start(*b.execve_ns), x.execve - x.phase1);
    EXPECT_EQ(b.since_start(*b.listen_ns), x.listen - x.phase1);
    EXPECT_EQ(b.container_exit_ns, x.container_exit);
    EXPECT_EQ(b.cgroup_id, 1u) << "this container set no cgroup";
    EXPECT_EQ(b.phases.front(), (PhaseMark{0, x.cli_phase0})) << "phase 0 of CLI " << x.cli;
    EXPECT_EQ(test::phase_numbers(b), test::full_launch_phases());
  }
  // Boot 1 spelled out: execve 2353320764337 - 2353313993320, listen 2353327655077 - 2353313993320.
  EXPECT_EQ(*r.boots[0].execve_ns - *r.boots[0].start_ns, 6771017u);
  EXPECT_EQ(*r.boots[0].listen_ns - *r.boots[0].start_ns, 13661757u);
}

TEST(RealCapture, BpftraceReportFigureForFigure) {
  // execve since phase 1: 6771017, 7345775, 8335721 -> avg 22452513 / 3 = 7484171
  // listen since phase 1: 13661757, 8324559, 9267976 -> avg 31254292 / 3 = 10418097 (.33)
  const std::string expected =
      "@execve__count: 3\n"
      "@execve_avg: 7484171\n"
      "@execve_max: 8335721\n"
      "@execve_min: 6771017\n"
      "@listen__count: 3\n"
      "@listen_avg: 10418097\n"
      "@listen_max: 13661757\n"
      "@listen_min: 8324559\n";
  EXPECT_EQ(summary_report(run_sorted().boots, ReportFormat::Bpftrace), expected);
}

TEST(RealCapture, SummaryCounts) {
  Summary s;
  for (const auto& b : run_sorted().boots) s.add(b);
  EXPECT_EQ(s.boots().started, 3u);
  EXPECT_EQ(s.boots().execve, 3u);
  EXPECT_EQ(s.boots().listen, 3u);
  EXPECT_EQ(s.boots().incomplete, 0u);
  EXPECT_EQ(s.boots().unstarted, 0u);
  // Phase 21 since phase 1: 2353320733331-2353313993320 = 6740011, 2353543366365-2353536057544 = 7308821,
  // 2353727568026-2353719253566 = 8314460.
  const auto* p21 = test::phase_since_start(s, 21);
  ASSERT_NE(p21, nullptr);
  EXPECT_EQ(p21->min(), 6740011u);
  EXPECT_EQ(p21->max(), 8314460u);
  EXPECT_EQ(p21->percentile(50), 7308821u);
}

TEST(RealCapture, FileOrderGivesTheSameBoots) {
  const auto sorted = run_sorted();
  const auto unsorted = run(capture_in_file_order(), {.command = kCommand});
  ASSERT_EQ(unsorted.boots.size(), sorted.boots.size());
  for (std::size_t i = 0; i < sorted.boots.size(); ++i) {
    EXPECT_EQ(describe(unsorted.boots[i]), describe(sorted.boots[i]));
  }
  EXPECT_TRUE(unsorted.still_running.empty());
  EXPECT_EQ(summary_report(unsorted.boots, ReportFormat::Bpftrace),
            summary_report(sorted.boots, ReportFormat::Bpftrace));
}

TEST(RealCapture, FromCliStartMeasuresFromEachCliPhaseZero) {
  const auto r = run_sorted(0);
  ASSERT_EQ(r.boots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("boot " + std::to_string(i + 1));
    EXPECT_EQ(r.boots[i].start_ns, kBoots[i].cli_phase0);
    EXPECT_EQ(r.boots[i].since_start(*r.boots[i].execve_ns), kBoots[i].execve - kBoots[i].cli_phase0);
  }
  EXPECT_EQ(*r.boots[0].execve_ns - *r.boots[0].start_ns, 12844944u);  // 2353320764337 - 2353307919393
}

TEST(RealCapture, WithoutCommandTheFirstExecIsBusybox) {
  const auto r = run(test::sorted_by_time(capture_in_file_order()), {.command = ""});
  ASSERT_EQ(r.boots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.boots[i].execve_ns, kBoots[i].execve);
}

TEST(RealCapture, OtherCommandNeverReachesExecve) {
  const auto r = run(test::sorted_by_time(capture_in_file_order()), {.command = "/u/app/bin/rails"});
  ASSERT_EQ(r.boots.size(), 3u);
  for (const auto& b : r.boots) {
    EXPECT_EQ(b.execve_ns, std::nullopt);
    EXPECT_TRUE(b.listen_ns.has_value());
  }
}

// Boot 3 listens (2353728521542) before its supervisor passes END_SETUP
// (2353728733697). With `--from END_SETUP -n 3`, all three boots end but only
// two are ever counted as settled: the run would never stop.
TEST(RealCapture, FromEndSetupSettlesEveryEndedBoot) {
  const auto r = run_sorted(3);
  ASSERT_EQ(r.boots.size(), 3u);
  EXPECT_EQ(r.settled, 3u) << "BUG: boot 3 (listen before phase 3) never counts for --count";
}

TEST(RealCapture, BootRowsOfTheFirstBoot) {
  const auto r = run_sorted();
  ASSERT_FALSE(r.boots.empty());
  std::ostringstream out;
  {
    BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
    writer.write(r.boots[0]);
  }
  std::istringstream lines(out.str());
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 1u + 18u + 2u) << out.str();  // header, 18 phases, execve, listen
  // The original twelve columns; the scheduler's follow them.
  const auto expect_columns = [&rows](std::size_t row, const std::string& columns) {
    EXPECT_EQ(rows[row].substr(0, columns.size() + 1), columns + "\t");
  };
  expect_columns(1, "1\t9045\t9046\t1\t\tphase\t0\tCLI_START\t2353307919393\t\t\texited");
  expect_columns(2, "1\t9045\t9046\t1\t\tphase\t1\tSTART_SV\t2353313993320\t0\t6073927\texited");
  // Deltas are per process: phase 3 counts from the supervisor's phase 2
  // (2353317281238), execve from the container's phase 21 (2353320733331).
  expect_columns(15, "1\t9045\t9046\t1\t\tphase\t3\tEND_SETUP\t2353320735980\t6742660\t3454742\texited");
  expect_columns(16, "1\t9045\t9046\t1\t\texecve\t\texecve\t2353320764337\t6771017\t31006\texited");
}

}  // namespace
}  // namespace hacoboot
