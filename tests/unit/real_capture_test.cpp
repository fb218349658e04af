// Boot reassembly on the real Haconiwa capture (tests/fixtures/README.md):
// three Haconiwa v0.11.5 boots of a busybox httpd container among host
// noise, re-enacted under the real BPF program and recorded
// (real-haconiwa-3boots.hbrec), replayed here through the pipeline as
// `report` replays it. Every expected figure is read off the recording's own
// records, what the kernel side emitted.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "event_builders.hpp"
#include "model/event.hpp"
#include "pipeline/pipeline.hpp"
#include "recording/recording_reader.hpp"
#include "recording/replay.hpp"
#include "report/boot_rows.hpp"
#include "report/report.hpp"
#include "support/build_paths.hpp"

namespace hacoboot {
namespace {

Recording recording(const std::string& fixture) {
  return read_recording((test::fixtures_dir() / fixture).string());
}

const Recording& whole() {
  static const Recording kWhole = recording("real-haconiwa-3boots.hbrec");
  return kWhole;
}

std::vector<Event> events_of(const Recording& recording) {
  std::vector<Event> events;
  for (const auto& record : recording.records) {
    auto event = decode_event(record);
    if (!event) throw std::runtime_error("a record of the recording does not decode");
    events.push_back(std::move(*event));
  }
  return events;
}

// One launch as its records tell it.
struct Launch {
  std::uint32_t cli = 0;        // `haconiwa start`: passes phase 0, forks the supervisor
  std::uint32_t hpid = 0;       // the supervisor: passes 1
  std::uint32_t container = 0;  // its container fork
  std::uint64_t cli_phase0 = 0;
  std::uint64_t phase1 = 0;
  std::uint64_t phase2 = 0;
  std::uint64_t phase21 = 0;
  std::uint64_t end_setup = 0;  // the supervisor's phase 3
  std::uint64_t execve = 0;     // the container's execve of COMMAND (its time: the entry's)
  std::uint64_t listen = 0;     // its first successful listen
  std::uint64_t container_exit = 0;
  std::uint64_t cgroup_id = 0;  // of the execve
};

const Event& first(const std::vector<Event>& events, const std::function<bool(const Event&)>& which,
                   const std::string& what) {
  const auto found = std::find_if(events.begin(), events.end(), which);
  if (found == events.end()) throw std::runtime_error("no record of " + what);
  return *found;
}

Launch launch_of(const std::vector<Event>& events, std::uint32_t hpid, const std::string& command) {
  Launch l;
  l.hpid = hpid;
  const auto phase = [&](std::uint32_t pid, std::int64_t n) {
    return first(
        events, [&](const Event& e) { return e.kind == EventKind::Phase && e.pid == pid && e.phase == n; },
        fmt::format("phase {} of {}", n, pid));
  };
  const auto of_kind = [&](EventKind kind, std::uint32_t pid, const std::string& what) -> const Event& {
    return first(
        events,
        [&](const Event& e) {
          return e.kind == kind && e.pid == pid && (kind != EventKind::Exec || e.filename == command);
        },
        what);
  };
  l.cli =
      first(
          events, [&](const Event& e) { return e.kind == EventKind::Fork && e.child_pid == hpid; }, "the CLI's fork")
          .pid;
  l.container =
      first(
          events,
          [&](const Event& e) { return e.kind == EventKind::Fork && e.pid == hpid && e.role == Role::Container; },
          "the container's fork")
          .child_pid;
  l.cli_phase0 = phase(l.cli, 0).ts_ns;
  l.phase1 = phase(hpid, 1).ts_ns;
  l.phase2 = phase(hpid, 2).ts_ns;
  l.phase21 = phase(l.container, 21).ts_ns;
  l.end_setup = phase(hpid, 3).ts_ns;
  const auto& execve = of_kind(EventKind::Exec, l.container, "the container's execve");
  l.execve = execve.ts_ns;
  l.cgroup_id = execve.cgroup_id;
  l.listen = of_kind(EventKind::Listen, l.container, "the container's listen").ts_ns;
  l.container_exit = of_kind(EventKind::Exit, l.container, "the container's exit").ts_ns;
  return l;
}

// The launches of a recording by their supervisors' START_SV, in order.
std::vector<Launch> launches(const Recording& recording) {
  const auto events = events_of(recording);
  std::vector<Launch> found;
  for (const auto& e : events) {
    if (e.kind == EventKind::Phase && e.phase == 1 && e.pid == e.hpid) {
      found.push_back(launch_of(events, e.hpid, recording.header.command));
    }
  }
  return found;
}

// The recording replayed through the pipeline, with its settings or others.
struct Run {
  std::vector<BootRecord> boots;  // in the order they ended; at the end of the records too
  std::uint64_t settled = 0;
  std::string bpftrace;
};

struct Settings {
  std::optional<std::int64_t> start_phase;
  std::optional<std::string> command;
};

Run replayed(const Recording& recording, const Settings& settings = {}) {
  auto header = recording.header;
  header.start_phase = settings.start_phase.value_or(header.start_phase);
  header.command = settings.command.value_or(header.command);
  Pipeline pipeline(recorded_pipeline_config(header, {}), recorded_cgroup_paths(recording));
  Run run;
  pipeline.on_boot_done([&run](const BootRecord& boot) { run.boots.push_back(boot); });
  replay(recording, pipeline);
  run.settled = pipeline.settled_boots();
  std::ostringstream out;
  const auto facts = pipeline.run_facts(recording.end ? recording.end->tracked_at_exit : 0);
  make_report_writer(ReportFormat::Bpftrace)->write(pipeline.sinks().summary(), facts, out);
  run.bpftrace = out.str();
  return run;
}

TEST(RealCapture, TheRecordingHoldsThreeLaunchesWholly) {
  EXPECT_FALSE(whole().cut.has_value()) << *whole().cut;
  ASSERT_TRUE(whole().end.has_value());
  EXPECT_EQ(whole().end->counters.untracked_phases, 0u);
  EXPECT_EQ(whole().end->counters.lost_events, 0u);
  EXPECT_EQ(launches(whole()).size(), 3u);
}

TEST(RealCapture, ThreeBootsNoPhantoms) {
  const auto r = replayed(whole());
  const auto l = launches(whole());
  ASSERT_EQ(r.boots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.boots[i].hpid, l[i].hpid);
    EXPECT_EQ(r.boots[i].container_pid, l[i].container);
    EXPECT_EQ(r.boots[i].sequence, i + 1);
    EXPECT_EQ(r.boots[i].end, BootEnd::Exited) << "every boot of the capture ended before tracing stopped";
  }
  EXPECT_EQ(r.settled, 3u);
}

// Tracing began just after the first launch passed START_FORK (the second
// recording): its later phases (the container's 11-21, the supervisor's
// 3-6) were dropped in the kernel and counted, and it is not reported at
// all, not even as a boot seen only after its start; the two launches that
// follow are whole.
TEST(RealCapture, ALaunchPastStartForkWhenTracingBeginsIsLeftOut) {
  const auto late = recording("real-haconiwa-3boots-from-start-fork.hbrec");
  ASSERT_TRUE(late.end.has_value());
  EXPECT_EQ(late.end->counters.untracked_phases, 15u);
  const auto l = launches(late);
  ASSERT_EQ(l.size(), 2u);

  const auto r = replayed(late);
  ASSERT_EQ(r.boots.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.boots[i].hpid, l[i].hpid);
    EXPECT_TRUE(r.boots[i].started());
    EXPECT_EQ(r.boots[i].end, BootEnd::Exited);
  }
}

TEST(RealCapture, EachBootsFiguresFromTheRecords) {
  const auto r = replayed(whole());
  const auto l = launches(whole());
  ASSERT_EQ(r.boots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("boot " + std::to_string(i + 1));
    const auto& b = r.boots[i];
    const auto& x = l[i];
    EXPECT_TRUE(b.complete());
    EXPECT_EQ(b.start_ns, x.phase1);
    EXPECT_EQ(b.execve_ns, x.execve);
    EXPECT_EQ(b.listen_ns, x.listen);
    EXPECT_EQ(b.since_start(*b.execve_ns), x.execve - x.phase1);
    EXPECT_EQ(b.since_start(*b.listen_ns), x.listen - x.phase1);
    EXPECT_EQ(b.container_exit_ns, x.container_exit);
    EXPECT_EQ(b.cgroup_id, x.cgroup_id) << "the container's execve's";
    ASSERT_FALSE(b.phases.empty());
    EXPECT_EQ(b.phases.front(), (PhaseMark{0, x.cli_phase0})) << "phase 0 of CLI " << x.cli;
    EXPECT_EQ(test::phase_numbers(b), test::full_launch_phases());
  }
}

// The average as the bpftrace script's avg(): integer division.
std::string bpftrace_lines(const std::string& metric, const std::vector<std::uint64_t>& values) {
  std::uint64_t sum = 0;
  for (const auto v : values) sum += v;
  return fmt::format("@{0}__count: {1}\n@{0}_avg: {2}\n@{0}_max: {3}\n@{0}_min: {4}\n", metric, values.size(),
                     sum / values.size(), *std::max_element(values.begin(), values.end()),
                     *std::min_element(values.begin(), values.end()));
}

TEST(RealCapture, BpftraceReportFigureForFigure) {
  std::vector<std::uint64_t> execve;
  std::vector<std::uint64_t> listen;
  for (const auto& l : launches(whole())) {
    execve.push_back(l.execve - l.phase1);
    listen.push_back(l.listen - l.phase1);
  }
  EXPECT_EQ(replayed(whole()).bpftrace, bpftrace_lines("execve", execve) + bpftrace_lines("listen", listen));
}

TEST(RealCapture, SummaryCounts) {
  Summary s;
  for (const auto& b : replayed(whole()).boots) s.add(b);
  EXPECT_EQ(s.boots().started, 3u);
  EXPECT_EQ(s.boots().execve, 3u);
  EXPECT_EQ(s.boots().listen, 3u);
  EXPECT_EQ(s.boots().incomplete, 0u);
  EXPECT_EQ(s.boots().unstarted, 0u);
  std::vector<std::uint64_t> phase21;
  for (const auto& l : launches(whole())) phase21.push_back(l.phase21 - l.phase1);
  std::sort(phase21.begin(), phase21.end());
  const auto* p21 = test::phase_since_start(s, 21);
  ASSERT_NE(p21, nullptr);
  EXPECT_EQ(p21->min(), phase21[0]);
  EXPECT_EQ(p21->max(), phase21[2]);
  EXPECT_EQ(p21->percentile(50), phase21[1]);
}

TEST(RealCapture, FromCliStartMeasuresFromEachCliPhaseZero) {
  const auto r = replayed(whole(), {.start_phase = 0, .command = std::nullopt});
  const auto l = launches(whole());
  ASSERT_EQ(r.boots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("boot " + std::to_string(i + 1));
    EXPECT_EQ(r.boots[i].start_ns, l[i].cli_phase0);
    EXPECT_EQ(r.boots[i].since_start(*r.boots[i].execve_ns), l[i].execve - l[i].cli_phase0);
  }
}

TEST(RealCapture, WithoutCommandTheFirstExecIsBusybox) {
  const auto r = replayed(whole(), {.start_phase = std::nullopt, .command = ""});
  const auto l = launches(whole());
  ASSERT_EQ(r.boots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.boots[i].execve_ns, l[i].execve);
}

TEST(RealCapture, OtherCommandNeverReachesExecve) {
  const auto r = replayed(whole(), {.start_phase = std::nullopt, .command = "/u/app/bin/rails"});
  ASSERT_EQ(r.boots.size(), 3u);
  for (const auto& b : r.boots) {
    EXPECT_EQ(b.execve_ns, std::nullopt);
    EXPECT_TRUE(b.listen_ns.has_value());
  }
}

// Boot 3 listens before its supervisor passes END_SETUP. With `--from
// END_SETUP -n 3`, all three boots end but only two were ever counted as
// settled: the run would never stop.
TEST(RealCapture, FromEndSetupSettlesEveryEndedBoot) {
  const auto l = launches(whole());
  ASSERT_EQ(l.size(), 3u);
  ASSERT_LT(l[2].listen, l[2].end_setup) << "the case this test is about";
  const auto r = replayed(whole(), {.start_phase = 3, .command = std::nullopt});
  ASSERT_EQ(r.boots.size(), 3u);
  EXPECT_EQ(r.settled, 3u) << "BUG: boot 3 (listen before phase 3) never counts for --count";
}

TEST(RealCapture, BootRowsOfTheFirstBoot) {
  const auto r = replayed(whole());
  const auto x = launches(whole()).front();
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
  const auto boot = fmt::format("1\t{}\t{}\t{}\t{}", x.hpid, x.container, x.cgroup_id,
                                whole().cgroup_paths.count(x.cgroup_id) ? whole().cgroup_paths.at(x.cgroup_id) : "");
  const auto expect_columns = [&rows, &boot](std::size_t row, const std::string& columns) {
    const auto expected = boot + "\t" + columns + "\t";
    EXPECT_EQ(rows[row].substr(0, expected.size()), expected);
  };
  expect_columns(1, fmt::format("phase\t0\tCLI_START\t{}\t\t\texited", x.cli_phase0));
  expect_columns(2, fmt::format("phase\t1\tSTART_SV\t{}\t0\t{}\texited", x.phase1, x.phase1 - x.cli_phase0));
  // Deltas are per process: phase 3 counts from the supervisor's phase 2,
  // execve from the container's phase 21.
  expect_columns(15, fmt::format("phase\t3\tEND_SETUP\t{}\t{}\t{}\texited", x.end_setup, x.end_setup - x.phase1,
                                 x.end_setup - x.phase2));
  expect_columns(
      16, fmt::format("execve\t\texecve\t{}\t{}\t{}\texited", x.execve, x.execve - x.phase1, x.execve - x.phase21));
}

}  // namespace
}  // namespace hacoboot
