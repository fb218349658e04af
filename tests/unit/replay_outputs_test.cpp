// What a user reads after a run, checked as a user would, on a recording of
// real demo boots (tests/fixtures/README.md) replayed through the pipeline,
// without root, BPF or sleeps: the --events rows (TSV and JSON lines), the
// summary's formats and --hist, the --timeline SVG, the --trace-out Chrome
// trace, --warmup, --phase-names and a renamed phase as --from; what the
// summary says of failed boots; and what the --baseline gate says of recorded
// runs of differing work. The settings
// a replay changes (warm-up, start phase, phase names) are the user space's
// alone, so the live run with them would have given the same outputs. What
// needs the capture itself stays in the integration tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/gate_run.hpp"
#include "cli/options.hpp"
#include "gate/baseline.hpp"
#include "model/phases.hpp"
#include "pipeline/pipeline.hpp"
#include "recording/recording_reader.hpp"
#include "recording/replay.hpp"
#include "report/boot_rows.hpp"
#include "report/chrome_trace.hpp"
#include "report/report.hpp"
#include "report/timeline_svg.hpp"
#include "support/build_paths.hpp"
#include "support/formats.hpp"
#include "support/summary_checks.hpp"
#include "system/temp_dir.hpp"
#include "util/errors.hpp"
#include "xml_checker.hpp"

namespace hacoboot {
namespace {

using test::expect_boot_counts;

using it::BootRow;
using it::rows_by_boot;
using it::split_lines;

// The recording: three boots of the demo launcher, one at a time.
constexpr const char* kRecording = "demo-3boots.hbrec";
constexpr std::uint64_t kBoots = 3;

// Every demo boot passes these phases (CLI 0, supervisor 1-6, container
// 11-21), then execve and listen: one --events row each.
const std::vector<std::int64_t> kBootPhases{0, 1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};
constexpr std::size_t kRowsPerBoot = 20;
// A summary's steps: every phase but the start and the CLI's phase 0 before
// it, then execve and listen.
constexpr std::size_t kSummarySteps = 18;

const std::set<std::string> kEventKeys{"boot",
                                       "hpid",
                                       "container_pid",
                                       "cgroup_id",
                                       "cgroup_path",
                                       "kind",
                                       "phase",
                                       "name",
                                       "t_ns",
                                       "since_start_ns",
                                       "delta_ns",
                                       "end",
                                       "lane",
                                       "tid",
                                       "begin_ns",
                                       "cpu_ns",
                                       "run_queue_ns",
                                       "sleep_ns",
                                       "io_ns",
                                       "on_listen_path_ns",
                                       "on_execve_path_ns",
                                       "noise_free_ns",
                                       "syscalls",
                                       "critical_path"};

// ---- the replay ------------------------------------------------------------

// The user-space settings of the run (--warmup, --from, --phase-names,
// --events-format); unset ones are the recording's.
struct Settings {
  std::string recording = kRecording;         // in tests/fixtures
  std::optional<std::uint64_t> warmup{};      // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
  std::optional<std::int64_t> start_phase{};  // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
  std::string phase_names{};                  // NOLINT(readability-redundant-member-init): a --phase-names file's text
  BootRowWriter::Format events_format = BootRowWriter::Format::Tsv;
};

// Every output of one replayed run.
struct Outputs {
  std::int64_t start_phase = kPhaseStartSupervisor;
  PhaseNames phase_names;
  std::string json;        // --format json, as written
  nlohmann::json summary;  // the same, parsed
  RunFigures figures;      // what the gate compares
  std::string table;       // --format table
  std::string hist;        // --format table --hist
  std::string tsv;         // --format tsv
  std::string bpftrace;    // --format bpftrace
  std::string rows;        // --events
  std::string timeline;    // --timeline
  std::string trace;       // --trace-out
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string summary_as(const Pipeline& pipeline, const RunFacts& facts, ReportFormat format, bool hist = false) {
  std::ostringstream out;
  make_report_writer(format, {.histograms = hist})->write(pipeline.sinks().summary(), facts, out);
  return out.str();
}

Outputs replay_demo(const Settings& settings = {}) {
  const auto recording = read_recording((test::fixtures_dir() / settings.recording).string());
  auto header = recording.header;
  header.warmup = settings.warmup.value_or(header.warmup);
  header.start_phase = settings.start_phase.value_or(header.start_phase);
  if (!settings.phase_names.empty()) header.phase_names = PhaseNames::parse(settings.phase_names, "names.txt");
  const test::TempDir dir;
  const auto rows_path = dir.path() / "rows";
  Pipeline pipeline(recorded_pipeline_config(header, {.events = rows_path.string(),
                                                      .events_format = settings.events_format,
                                                      .keep_for_pictures = true,
                                                      .phase_names = {}}),
                    recorded_cgroup_paths(recording));
  pipeline.take_syscalls_from(recorded_syscalls(recording));  // those of a run with --syscalls
  pipeline.sinks().open_rows();
  replay(recording, pipeline);
  EXPECT_EQ(pipeline.sinks().finish_rows(), std::nullopt);
  const auto facts = pipeline.run_facts(recording.end ? recording.end->tracked_at_exit : 0);

  Outputs out;
  out.start_phase = header.start_phase;
  out.phase_names = header.phase_names;
  out.json = summary_as(pipeline, facts, ReportFormat::Json);
  out.summary = nlohmann::json::parse(out.json);
  out.figures = figures_of_run(pipeline.sinks().summary(), facts);
  out.table = summary_as(pipeline, facts, ReportFormat::Table);
  out.hist = summary_as(pipeline, facts, ReportFormat::Table, true);
  out.tsv = summary_as(pipeline, facts, ReportFormat::Tsv);
  out.bpftrace = summary_as(pipeline, facts, ReportFormat::Bpftrace);
  out.rows = read_text(rows_path);
  std::ostringstream timeline;
  write_timeline_svg(pipeline.sinks().pictured(), timeline, header.phase_names);
  out.timeline = timeline.str();
  std::ostringstream trace;
  write_chrome_trace(pipeline.sinks().pictured(), trace, header.phase_names);
  out.trace = trace.str();
  return out;
}

// ---- small helpers ---------------------------------------------------------

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// "phase 12", "execve", "listen": a milestone (or summary step) for messages
// and set comparisons.
std::string milestone(const std::string& kind, std::optional<std::int64_t> phase) {
  return phase ? "phase " + std::to_string(*phase) : kind;
}

std::vector<std::string> sorted(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  return items;
}

std::vector<std::string> milestones_of(const std::vector<BootRow>& rows) {
  std::vector<std::string> found;
  for (const auto& row : rows) found.push_back(milestone(row.kind, row.phase));
  return sorted(found);
}

std::vector<std::string> boot_milestones() {
  std::vector<std::string> expected{"execve", "listen"};
  for (const auto phase : kBootPhases) expected.push_back(milestone("phase", phase));
  return sorted(expected);
}

std::vector<std::string> summary_steps() {
  std::vector<std::string> expected{"execve", "listen"};
  for (const auto phase : kBootPhases) {
    if (phase != 0 && phase != kPhaseStartSupervisor) expected.push_back(milestone("phase", phase));
  }
  return sorted(expected);
}

std::set<std::uint64_t> boot_numbers(const std::vector<BootRow>& rows) {
  std::set<std::uint64_t> numbers;
  for (const auto& row : rows) numbers.insert(row.boot);
  return numbers;
}

// ---- --events rows ---------------------------------------------------------

// `boots` boots, each with exactly the demo's milestones, one row each.
void expect_complete_boots(const std::vector<BootRow>& rows, std::size_t boots) {
  EXPECT_EQ(rows.size(), boots * kRowsPerBoot) << "rows in total";
  const auto by_boot = rows_by_boot(rows);
  EXPECT_EQ(by_boot.size(), boots) << "boots in the rows";
  for (const auto& [boot, its_rows] : by_boot) {
    EXPECT_EQ(its_rows.size(), kRowsPerBoot) << "rows of boot " << boot;
    EXPECT_EQ(milestones_of(its_rows), boot_milestones()) << "milestones of boot " << boot;
    // The launcher waits for each boot's supervisor: every boot was seen exiting.
    for (const auto& row : its_rows) EXPECT_EQ(row.end, "exited") << "end of boot " << boot;
  }
}

// Rows of a boot in time order; since_start_ns counts from its start phase's
// row (empty before it); delta_ns never reaches back before the boot's first
// row (a negative own time would wrap around to a huge number).
void expect_consistent_times(const std::vector<BootRow>& rows, std::int64_t start_phase = kPhaseStartSupervisor) {
  for (const auto& [boot, its_rows] : rows_by_boot(rows)) {
    SCOPED_TRACE("boot " + std::to_string(boot));
    const auto start = std::find_if(its_rows.begin(), its_rows.end(), [&](const BootRow& row) {
      return row.kind == "phase" && row.phase == start_phase;
    });
    if (start == its_rows.end()) {
      ADD_FAILURE() << "no row of the start phase " << start_phase;
      continue;
    }
    EXPECT_EQ(start->since_start_ns, std::optional<std::uint64_t>(0)) << "since_start_ns of the start";
    const auto first_ns = its_rows.front().t_ns;
    for (std::size_t i = 0; i < its_rows.size(); ++i) {
      const auto& row = its_rows[i];
      const auto what = milestone(row.kind, row.phase);
      if (i > 0) {
        EXPECT_GE(row.t_ns, its_rows[i - 1].t_ns) << what << " is out of time order";
      }
      if (row.t_ns < start->t_ns) {
        EXPECT_FALSE(row.since_start_ns) << what << " comes before the start: since_start_ns should be empty";
      } else {
        EXPECT_EQ(row.since_start_ns, std::optional<std::uint64_t>(row.t_ns - start->t_ns))
            << what << ": since_start_ns is not t_ns - t_ns of the start";
      }
      if (row.delta_ns) {
        EXPECT_LE(*row.delta_ns, row.t_ns - first_ns) << what << ": delta_ns is negative or reaches before the boot";
      }
    }
  }
}

template <typename T>
std::optional<T> optional_field(const nlohmann::json& object, const char* key) {
  const auto& value = object.at(key);
  return value.is_null() ? std::nullopt : std::optional<T>(value.get<T>());
}

// --events-format jsonl: each line one JSON object with exactly the documented
// keys, read into the same rows as the TSV.
std::vector<BootRow> parse_jsonl_rows(const std::string& text) {
  std::vector<BootRow> rows;
  std::size_t line_no = 0;
  for (const auto& line : split_lines(text)) {
    ++line_no;
    try {
      const auto object = nlohmann::json::parse(line);
      std::set<std::string> keys;
      for (const auto& [key, value] : object.items()) keys.insert(key);
      EXPECT_EQ(keys, kEventKeys) << "line " << line_no << ": " << line;
      BootRow row;
      row.boot = object.at("boot").get<std::uint64_t>();
      row.hpid = object.at("hpid").get<std::uint32_t>();
      row.container_pid = object.at("container_pid").get<std::uint32_t>();
      row.cgroup_id = object.at("cgroup_id").get<std::uint64_t>();
      row.kind = object.at("kind").get<std::string>();
      row.phase = optional_field<std::int64_t>(object, "phase");
      row.name = object.at("name").get<std::string>();
      row.t_ns = object.at("t_ns").get<std::uint64_t>();
      row.since_start_ns = optional_field<std::uint64_t>(object, "since_start_ns");
      row.delta_ns = optional_field<std::uint64_t>(object, "delta_ns");
      row.end = object.at("end").get<std::string>();
      EXPECT_EQ(row.phase.has_value(), row.kind == "phase") << "line " << line_no << ": " << line;
      rows.push_back(std::move(row));
    } catch (const nlohmann::json::exception& e) {
      ADD_FAILURE() << "line " << line_no << " is not a valid row: " << e.what() << "\n" << line;
    }
  }
  return rows;
}

TEST(ReplayOutputs, EventsHaveOneRowPerMilestoneOfEachBoot) {
  const auto rows = it::parse_boot_rows(replay_demo().rows);
  expect_complete_boots(rows, kBoots);
  expect_consistent_times(rows);
}

TEST(ReplayOutputs, EventsAsJsonLinesHaveTheSameRowsWithTheDocumentedKeys) {
  const auto out = replay_demo({.events_format = BootRowWriter::Format::Jsonl});
  EXPECT_EQ(split_lines(out.rows).size(), kBoots * kRowsPerBoot) << "one line per row, no header";
  const auto rows = parse_jsonl_rows(out.rows);
  expect_complete_boots(rows, kBoots);
  expect_consistent_times(rows);
  EXPECT_EQ(rows.size(), it::parse_boot_rows(replay_demo().rows).size()) << "as many rows as in the TSV";
}

// Each boot's listen row carries its critical path, start to listen without
// gap or overlap, and its noise-free figure: the path without its run-queue
// time; the summary has the same figures across boots.
TEST(ReplayOutputs, EventsAndSummaryCarryTheCriticalPathAndNoiseFreeFigures) {
  const auto out = replay_demo({.events_format = BootRowWriter::Format::Jsonl});
  std::uint64_t listens = 0;
  for (const auto& line : split_lines(out.rows)) {
    const auto row = nlohmann::json::parse(line);
    if (row.at("kind") != "listen") continue;
    ++listens;
    const auto t_ns = row.at("t_ns").get<std::uint64_t>();
    const auto since_start = row.at("since_start_ns").get<std::uint64_t>();
    const auto& path = row.at("critical_path");
    ASSERT_TRUE(path.is_array() && !path.empty()) << line;
    std::uint64_t at = t_ns - since_start;
    std::uint64_t queued = 0;
    for (const auto& piece : path) {
      EXPECT_EQ(piece.at("begin_ns"), at) << "a gap or an overlap before " << piece.dump() << " in " << line;
      at = piece.at("end_ns").get<std::uint64_t>();
      queued += piece.at("run_queue_ns").is_null() ? 0 : piece.at("run_queue_ns").get<std::uint64_t>();
    }
    EXPECT_EQ(at, t_ns) << "the path ends at listen: " << line;
    ASSERT_FALSE(row.at("noise_free_ns").is_null()) << "the kernel side accounted every boot here: " << line;
    EXPECT_EQ(row.at("noise_free_ns"), since_start - queued) << line;
  }
  EXPECT_EQ(listens, kBoots);

  const auto& summary = out.summary;
  EXPECT_EQ(summary.at("schema"), 8);
  // Per step, every boot's time on the path to listen: the steps' means add
  // up to the path's mean (what the gate's shares rest on).
  double path_sum = 0;
  for (const auto& step : summary.at("steps")) {
    const auto& path = step.at("listen_path_time").at("wall");
    path_sum += path.at("avg_ns").get<double>() * path.at("count").get<double>() / static_cast<double>(kBoots);
    EXPECT_EQ(path.at("samples").size() > 0, path.at("count").get<std::uint64_t>() > 0) << step.dump();
  }
  const auto path_mean = summary.at("critical_path").at("listen").at("length").at("avg_ns").get<double>();
  // Each step's avg is truncated to the ns: at most 1 ns per step off.
  EXPECT_NEAR(path_sum, path_mean, static_cast<double>(summary.at("steps").size()) + 1) << summary.dump(2);
  const auto& listen = summary.at("metrics").at("listen");
  EXPECT_EQ(listen.at("noise_free").at("count"), kBoots) << summary.dump(2);
  std::uint64_t sampled = 0;
  for (const auto& pair : listen.at("noise_free").at("samples")) sampled += pair.at(1).get<std::uint64_t>();
  EXPECT_EQ(sampled, kBoots) << "the gate ranks every boot's noise-free figure";
  EXPECT_LE(listen.at("noise_free").at("max_ns").get<std::uint64_t>(), listen.at("max_ns").get<std::uint64_t>());
  EXPECT_EQ(summary.at("critical_path").at("listen").at("length").at("count"), kBoots);
  EXPECT_EQ(summary.at("critical_path").at("forks_only"), false);
}

// ---- the summary's formats --------------------------------------------------

// Two rows per step, and a third, noise_free, for execve and listen: the
// kernel side accounted every boot here.
TEST(ReplayOutputs, TsvSummaryHasAHeaderThenTwoRowsPerStepAndNoiseFreeRows) {
  const auto out = replay_demo();
  const auto lines = split_lines(out.tsv);
  ASSERT_EQ(lines.size(), 1 + 2 * kSummarySteps + 2) << out.tsv;
  EXPECT_EQ(lines[0], "kind\tphase\tname\ttiming\tcount\tavg_ns\tmin_ns\tmax_ns\tstddev_ns\tp50_ns\tp90_ns\tp99_ns");

  const std::regex kRow(R"(^(phase|execve|listen)\t(\d*)\t([^\t]+)\t(since_start|delta|noise_free)\t(\d+)(\t\d+){7}$)");
  std::vector<std::string> steps;  // in file order, one entry per run of rows
  std::map<std::string, std::vector<std::string>> timings;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::smatch row;
    ASSERT_TRUE(std::regex_match(lines[i], row, kRow)) << "line " << i + 1 << ": " << lines[i];
    const auto step = row[2].length() > 0 ? milestone("phase", std::stoll(row[2].str())) : row[1].str();
    if (steps.empty() || steps.back() != step) steps.push_back(step);
    timings[step].push_back(row[4].str());
    EXPECT_EQ(row[5].str(), std::to_string(kBoots)) << "count of " << step << " " << row[4].str();
  }
  EXPECT_EQ(sorted(steps), summary_steps()) << "the rows of one step follow each other";
  const std::vector<std::string> kTwo{"since_start", "delta"};
  const std::vector<std::string> kThree{"since_start", "delta", "noise_free"};
  for (const auto& [step, rows] : timings) {
    EXPECT_EQ(rows, step == "execve" || step == "listen" ? kThree : kTwo) << step;
  }
}

TEST(ReplayOutputs, HistDrawsTheListenHistogram) {
  const auto out = replay_demo();
  const auto heading = out.hist.find("@listen (time since start):\n");
  ASSERT_NE(heading, std::string::npos) << out.hist;
  EXPECT_FALSE(contains(out.table, "@listen (time since start):")) << "a histogram without --hist";

  // "[8.39 ms, 16.8 ms)   3 |@@@@   |" lines, whose counts add up to the boots.
  const std::regex kBar(R"(^\[[^)]+\)\s+(\d+) \|@* *\|$)");
  std::uint64_t bars = 0;
  std::uint64_t counted = 0;
  for (const auto& line : split_lines(out.hist.substr(heading))) {
    std::smatch m;
    if (!std::regex_match(line, m, kBar)) continue;
    ++bars;
    counted += std::stoull(m[1].str());
  }
  EXPECT_GE(bars, 1U) << out.hist;
  EXPECT_EQ(counted, kBoots) << "boots in the listen histogram\n" << out.hist;
}

// The reference bpftrace script's eight lines, figure for figure what the
// same run's --events rows give (avg truncated, as bpftrace's avg()), and the
// counts of the JSON summary.
TEST(ReplayOutputs, BpftraceFormatIsTheReferenceScriptsEightLines) {
  const auto out = replay_demo();
  const auto lines = split_lines(out.bpftrace);
  ASSERT_EQ(lines.size(), 8U) << out.bpftrace;
  const std::vector<std::string> names{"execve__count", "execve_avg", "execve_max", "execve_min",
                                       "listen__count", "listen_avg", "listen_max", "listen_min"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_TRUE(std::regex_match(lines[i], std::regex("^@" + names[i] + R"(: \d+$)")))
        << "line " << i + 1 << ": " << lines[i];
  }
  auto values = it::map_values(it::parse_map_lines(out.bpftrace));
  const auto rows = it::parse_boot_rows(out.rows);
  for (const std::string metric : {"execve", "listen"}) {
    SCOPED_TRACE(metric);
    std::vector<std::uint64_t> samples;
    for (const auto& row : rows) {
      if (row.kind == metric && row.since_start_ns) samples.push_back(*row.since_start_ns);
    }
    ASSERT_EQ(samples.size(), kBoots);
    std::uint64_t sum = 0;
    for (const auto s : samples) sum += s;
    EXPECT_EQ(values[metric + "__count"], kBoots);
    EXPECT_EQ(values[metric + "_avg"], sum / samples.size());
    EXPECT_EQ(values[metric + "_min"], *std::min_element(samples.begin(), samples.end()));
    EXPECT_EQ(values[metric + "_max"], *std::max_element(samples.begin(), samples.end()));
    EXPECT_EQ(out.summary.at("metrics").at(metric).at("count"), kBoots);
  }
}

// ---- --timeline ------------------------------------------------------------

TEST(ReplayOutputs, TimelineIsWellFormedSvgWithOneRowPerBoot) {
  const auto out = replay_demo();
  EXPECT_EQ(test::XmlChecker(out.timeline).problem(), "");
  EXPECT_TRUE(contains(out.timeline, "<svg xmlns=\"http://www.w3.org/2000/svg\"")) << "not an SVG document";
  const std::regex kLabel(R"(boot \d+ \(hpid \d+\))");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(out.timeline.begin(), out.timeline.end(), kLabel), std::sregex_iterator()),
      static_cast<std::ptrdiff_t>(kBoots))
      << "boot rows in the timeline";
  for (const auto& [boot, rows] : rows_by_boot(it::parse_boot_rows(out.rows))) {
    const auto label = "boot " + std::to_string(boot) + " (hpid " + std::to_string(rows.front().hpid) + ")";
    EXPECT_TRUE(contains(out.timeline, label)) << "no row labelled '" << label << "'";
  }
}

// ---- --trace-out -----------------------------------------------------------

// What a --trace-out file shows of each boot.
struct TraceTrack {
  std::string name;                   // of its thread_name metadata
  std::vector<std::string> phases;    // X events of category "phase"
  std::vector<std::string> steps;     // X events of a process's steps
  std::vector<std::string> instants;  // i events
};
struct TraceProcess {
  std::string name;  // of its process_name metadata
  std::map<std::uint64_t, TraceTrack> tracks;
  std::size_t flows = 0;  // arrows along the critical paths

  // The first track whose name satisfies `pred`; nullptr when none does.
  template <typename Pred>
  [[nodiscard]] const TraceTrack* track(Pred pred) const {
    for (const auto& [tid, track] : tracks) {
      if (pred(track.name)) return &track;
    }
    return nullptr;
  }
};

// By pid: a boot's sequence. Adds a failure when the text is not a trace.
std::map<std::uint64_t, TraceProcess> read_trace(const std::string& text) {
  std::map<std::uint64_t, TraceProcess> processes;
  const auto trace = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    ADD_FAILURE() << "not a trace with a traceEvents array";
    return processes;
  }
  for (const auto& event : trace["traceEvents"]) {
    const auto ph = event.value("ph", "");
    auto& process = processes[event.value("pid", ~0ULL)];
    auto& track = process.tracks[event.value("tid", ~0ULL)];
    if (ph == "M" && event.value("name", "") == "process_name") {
      process.name = event.at("args").value("name", "");
    } else if (ph == "M" && event.value("name", "") == "thread_name") {
      track.name = event.at("args").value("name", "");
    } else if (ph == "X" && event.value("cat", "") == "phase") {
      track.phases.push_back(milestone("phase", event.at("args").at("phase").get<std::int64_t>()));
    } else if (ph == "X" && event.value("cat", "").starts_with("step")) {
      track.steps.push_back(event.value("name", ""));
    } else if (ph == "i") {
      track.instants.push_back(event.value("name", ""));
    } else if (ph == "s") {
      ++process.flows;
    }
    if (ph == "X" || ph == "i") {
      EXPECT_GE(event.value("ts", -1.0), 0.0) << event.dump();
    }
    if (ph == "X") {
      EXPECT_GE(event.value("dur", -1.0), 0.0) << event.dump();
    }
  }
  return processes;
}

TEST(ReplayOutputs, ChromeTraceHasAProcessPerBootWithItsPhasesAndMilestones) {
  const auto out = replay_demo();
  const auto processes = read_trace(out.trace);
  const auto boots = rows_by_boot(it::parse_boot_rows(out.rows));
  EXPECT_EQ(processes.size(), boots.size()) << "processes in the trace";
  std::vector<std::string> expected_phases;
  for (const auto phase : kBootPhases) expected_phases.push_back(milestone("phase", phase));
  for (const auto& [boot, rows] : boots) {
    SCOPED_TRACE("boot " + std::to_string(boot));
    ASSERT_TRUE(processes.contains(boot));
    const auto& process = processes.at(boot);
    const auto prefix = "boot " + std::to_string(boot) + " ";
    EXPECT_EQ(process.name, prefix + "hpid " + std::to_string(rows.front().hpid));
    const auto* phases = process.track([&](const std::string& name) { return name == prefix + "phases"; });
    ASSERT_NE(phases, nullptr) << "no phases track";
    EXPECT_EQ(sorted(phases->phases), sorted(expected_phases));
    EXPECT_EQ(sorted(phases->instants), (std::vector<std::string>{"execve", "listen"}));
  }
}

// The container's steps on its own track, a track of its scheduler states
// beside it, and the fork the path to execve went through as an arrow.
TEST(ReplayOutputs, ChromeTraceDrawsTheContainerStepsStatesAndThePathsArrows) {
  const auto out = replay_demo();
  const auto processes = read_trace(out.trace);
  for (const auto& [boot, rows] : rows_by_boot(it::parse_boot_rows(out.rows))) {
    SCOPED_TRACE("boot " + std::to_string(boot));
    ASSERT_TRUE(processes.contains(boot));
    const auto& process = processes.at(boot);
    const auto container_name = "boot " + std::to_string(boot) + " container (tid ";
    const auto* container = process.track(
        [&](const std::string& name) { return name.starts_with(container_name) && !name.ends_with(" states"); });
    ASSERT_NE(container, nullptr) << "no container track";
    EXPECT_NE(std::find(container->steps.begin(), container->steps.end(), "execve"), container->steps.end());
    EXPECT_NE(process.track([&](const std::string& name) { return name == container->name + " states"; }), nullptr);
    EXPECT_GE(process.flows, 1U);
  }
}

// ---- --warmup --------------------------------------------------------------

TEST(ReplayOutputs, WarmupBootsAreLeftOutOfTheSummaryAndTheRows) {
  constexpr std::uint64_t kWarmup = 1;
  const auto out = replay_demo({.warmup = kWarmup});
  expect_boot_counts(out.summary, kBoots - kWarmup, kBoots - kWarmup, kBoots - kWarmup, 0);
  const auto rows = it::parse_boot_rows(out.rows);
  std::set<std::uint64_t> measured;
  for (auto boot = kWarmup + 1; boot <= kBoots; ++boot) measured.insert(boot);
  EXPECT_EQ(boot_numbers(rows), measured) << "boots in the --events rows";
  expect_complete_boots(rows, kBoots - kWarmup);
}

// ---- failed boots ----------------------------------------------------------

// Boots recorded failing (tests/fixtures/make-recordings.sh).
Outputs replay_failed(const std::string& recording) {
  return replay_demo({.recording = "fail-" + recording + ".hbrec"});
}

nlohmann::json failures_of(const Outputs& out) {
  return out.summary.at("boots").value("failures", nlohmann::json::array());
}

// Containers that died where a real Haconiwa boot's died at pivot_root:
// after step 17, before passing 18.
TEST(ReplayOutputs, ContainersExitingAfterStep17AreOneFailureLineInJson) {
  const auto out = replay_failed("exit-after17");
  const auto boots = out.summary.at("boots");
  EXPECT_EQ(boots.value("started", ~0ULL), 2U) << out.summary.dump(2);
  EXPECT_EQ(boots.value("incomplete", ~0ULL), 2U) << out.summary.dump(2);
  EXPECT_EQ(boots.value("in_flight", ~0ULL), 0U) << out.summary.dump(2);
  const auto failures = failures_of(out);
  ASSERT_EQ(failures.size(), 1U) << out.summary.dump(2);
  const auto& group = failures.at(0);
  EXPECT_EQ(group.value("boots", 0), 2);
  EXPECT_EQ(group.value("last_phase", 0), 17);
  EXPECT_EQ(group.value("last_step", ""), "CONTAINER_UID_MAPPING_SETUP");
  EXPECT_EQ(group.value("process", ""), "container");
  EXPECT_EQ(group.value("exit_status", -1), 1);
  EXPECT_FALSE(group.contains("signal"));
  EXPECT_EQ(group.value("description", ""), "container exited 1 after 17 CONTAINER_UID_MAPPING_SETUP");
}

TEST(ReplayOutputs, ContainersExitingAfterStep17AreOneFailureLineInTheTable) {
  const auto out = replay_failed("exit-after17");
  EXPECT_TRUE(
      out.table.starts_with("Boots: 2 started, 0 reached execve, 0 reached listen, 2 incomplete\n"
                            "2 incomplete: container exited 1 after 17 CONTAINER_UID_MAPPING_SETUP\n"))
      << out.table;
}

TEST(ReplayOutputs, AContainerKilledByASignalSaysWhichSignal) {
  const auto out = replay_failed("killed-after17");
  const auto failures = failures_of(out);
  ASSERT_EQ(failures.size(), 1U) << out.summary.dump(2);
  const auto& group = failures.at(0);
  EXPECT_EQ(group.value("signal", 0), 9);
  EXPECT_FALSE(group.contains("exit_status"));
  EXPECT_EQ(group.value("description", ""),
            "container killed by signal 9 (SIGKILL) after 17 CONTAINER_UID_MAPPING_SETUP");
}

TEST(ReplayOutputs, ASupervisorDyingBeforeItsForkIsTheFailedProcess) {
  const auto failures = failures_of(replay_failed("supervisor-sigterm"));
  ASSERT_EQ(failures.size(), 1U);
  EXPECT_EQ(failures.at(0).value("description", ""), "supervisor killed by signal 15 (SIGTERM) after 1 START_SV");
}

// ---- --baseline ------------------------------------------------------------

// The gate's verdict on `now` against `baseline` saved as a JSON summary, as
// --baseline gives it: the exit status and the report on stderr.
struct Judged {
  int status = -1;
  std::string report;
};

Judged judge(const Outputs& baseline, const Outputs& now, double max_regression_pct = 10) {
  Options options;
  options.phase_names = now.phase_names;
  options.gate.max_regression_pct = max_regression_pct;
  std::ostringstream report;
  const auto status = judge_run(parse_baseline(baseline.json, "base.json"), now.figures, options, report);
  return {.status = status, .report = report.str()};
}

// Two boots per run can never tell 10 % from noise: the gate says so (exit
// 5) and how many boots would do, rather than pass.
TEST(ReplayOutputs, TooFewBootsMakeTheGateInconclusive) {
  const auto two_boots = replay_demo({.warmup = kBoots - 2});
  ASSERT_EQ(two_boots.summary.at("metrics").at("listen").at("count"), 2);
  const auto judged = judge(two_boots, two_boots);
  EXPECT_EQ(judged.status, kExitInconclusive) << judged.report;
  EXPECT_TRUE(contains(judged.report, "too few for a rank test")) << judged.report;
  EXPECT_TRUE(contains(judged.report, "gate: INCONCLUSIVE")) << judged.report;
}

// Runs of other work, recorded once (tests/fixtures/make-recordings.sh): what
// the gate tells of them no longer depends on how busy the host is now.
Outputs replay_gate_run(const std::string& recording) {
  return replay_demo({.recording = "gate-" + recording + ".hbrec"});
}

// The first line of text starting with prefix, or "".
std::string line_starting_with(const std::string& text, const std::string& prefix) {
  for (const auto& line : split_lines(text)) {
    if (line.starts_with(prefix)) return line;
  }
  return {};
}

TEST(ReplayOutputs, BaselineGatePassesTheSameSpeedAndFailsSlowerBoots) {
  const auto baseline = replay_gate_run("base");
  // +500 %: two runs of the same code, each on a host as busy as it was.
  const auto same = judge(baseline, replay_gate_run("same"), 500);
  EXPECT_EQ(same.status, kExitOk) << same.report;
  EXPECT_TRUE(contains(same.report, "BASELINE COMPARISON")) << "no comparison table:\n" << same.report;
  for (const std::string metric : {"execve", "listen"}) {
    const auto row = line_starting_with(same.report, metric + " ");
    EXPECT_TRUE(contains(row, "no significant change") || contains(row, "within the limit")) << metric << "\n"
                                                                                             << same.report;
  }
  EXPECT_TRUE(contains(same.report, "gate: passed")) << same.report;

  // Every container waited 500 ms after phase 12: execve and listen came far later.
  const auto slower = judge(baseline, replay_gate_run("delay12"), 500);
  EXPECT_EQ(slower.status, kExitRegressed) << slower.report;
  for (const std::string metric : {"execve", "listen"}) {
    EXPECT_TRUE(contains(line_starting_with(slower.report, metric + " "), "REGRESSED")) << metric << "\n"
                                                                                        << slower.report;
  }
  EXPECT_TRUE(contains(slower.report, "gate: REGRESSED")) << slower.report;
}

// The gate's figure by default, noise-free time, counts the CPU time a boot
// burns, not the time it waits for a CPU: 20 ms of CPU before phase 13
// passes against another run of the same, 40 ms regresses.
TEST(ReplayOutputs, TheGateOnNoiseFreeTimeTellsMoreCpuWork) {
  const auto baseline = replay_gate_run("burn13-20-base");
  const auto same = judge(baseline, replay_gate_run("burn13-20"), 25);
  EXPECT_EQ(same.status, kExitOk) << same.report;
  for (const std::string metric : {"execve", "listen"}) {
    EXPECT_TRUE(contains(line_starting_with(same.report, metric + " "), "noise-free")) << metric << "\n" << same.report;
  }
  EXPECT_TRUE(contains(same.report, "gate: passed")) << same.report;

  const auto more_work = judge(baseline, replay_gate_run("burn13-40"), 25);
  EXPECT_EQ(more_work.status, kExitRegressed) << more_work.report;
  for (const std::string metric : {"execve", "listen"}) {
    EXPECT_TRUE(contains(line_starting_with(more_work.report, metric + " "), "REGRESSED")) << metric << "\n"
                                                                                           << more_work.report;
  }
  EXPECT_TRUE(contains(more_work.report, "gate: REGRESSED")) << more_work.report;
}

// The share of listen's shift the report gives the step `step` ("container
// 14 CONTAINER_RLIMIT_SETUP"), when it is the first step named as moved.
std::optional<int> first_moved_share(const std::string& report, const std::string& step) {
  const auto line = line_starting_with(report, "  listen: ");
  const std::regex first("moved: " + step + R"( \+[^;]* \((-?\d+)% of the (?:shift|moved total)\), ([A-Za-z/ ]+) \+)");
  std::smatch match;
  if (!std::regex_search(line, match, first)) return std::nullopt;
  return std::stoi(match[1].str());
}

// The gate names the step that moved, not every step after it: CPU burnt
// before phase 14 is step 14's, first, with most of listen's shift, in
// CPU; tmpfs mounts before phase 17 are step 17's.
TEST(ReplayOutputs, TheGateNamesTheStepThatMovedAndItsShare) {
  const auto baseline = replay_gate_run("base");
  const auto burnt = judge(baseline, replay_gate_run("burn14"), 25);
  EXPECT_EQ(burnt.status, kExitRegressed) << burnt.report;
  EXPECT_TRUE(contains(burnt.report, "STEPS THAT MOVED (noise-free, Benjamini-Hochberg over")) << burnt.report;
  const auto share = first_moved_share(burnt.report, "container 14 CONTAINER_RLIMIT_SETUP");
  ASSERT_TRUE(share) << "step 14 is not the first step named:\n" << burnt.report;
  EXPECT_GE(*share, 80) << burnt.report;
  EXPECT_TRUE(contains(line_starting_with(burnt.report, "  listen: "), "CONTAINER_RLIMIT_SETUP +")) << burnt.report;

  const auto mounted = judge(baseline, replay_gate_run("mounts17"), 25);
  EXPECT_TRUE(first_moved_share(mounted.report, "container 17 CONTAINER_UID_MAPPING_SETUP"))
      << "step 17 is not the first step named:\n"
      << mounted.report;
}

// Both runs traced with --syscalls: within step 17, which moved, the gate
// names the mount and umount2 calls the launcher added, in every format. A
// baseline without them compares the steps as before and says why no call
// is named.
TEST(ReplayOutputs, TheGateNamesTheSyscallsThatMovedWithinTheStep) {
  const auto baseline = replay_gate_run("syscalls-base");
  const auto mounted = judge(baseline, replay_gate_run("syscalls-mounts17"), 25);
  EXPECT_EQ(mounted.status, kExitRegressed) << mounted.report;
  const auto listen = line_starting_with(mounted.report, "  listen: ");
  ASSERT_TRUE(first_moved_share(mounted.report, "container 17 CONTAINER_UID_MAPPING_SETUP")) << mounted.report;
  const std::regex step_17_calls("CONTAINER_UID_MAPPING_SETUP [^;]*, syscalls ([^;]*)");
  std::smatch calls;
  ASSERT_TRUE(std::regex_search(listen, calls, step_17_calls)) << "step 17 names no syscall:\n" << mounted.report;
  EXPECT_TRUE(contains(calls[1].str(), "umount2 +")) << calls[1].str();
  EXPECT_TRUE(contains(calls[1].str(), "mount +")) << calls[1].str();

  const auto untraced = judge(replay_gate_run("base"), replay_gate_run("syscalls-mounts17"), 25);
  EXPECT_TRUE(first_moved_share(untraced.report, "container 17 CONTAINER_UID_MAPPING_SETUP")) << untraced.report;
  EXPECT_FALSE(contains(untraced.report, ", syscalls ")) << untraced.report;
  EXPECT_TRUE(contains(untraced.report, "note: syscalls were traced in the new run only")) << untraced.report;
}

// ---- --phase-names, --from -------------------------------------------------

// A --phase-names file naming phase 12 MY_NAMESPACES.
constexpr const char* kPhaseNames = "# our name for the namespaces phase\n12 MY_NAMESPACES\n";

TEST(ReplayOutputs, PhaseNamesRenameThePhaseInTheSummaryAndTheRows) {
  const auto out = replay_demo({.phase_names = kPhaseNames});
  EXPECT_FALSE(contains(out.summary.dump(), "CONTAINER_NAMESPACE_GENERATED")) << out.summary.dump(2);
  std::vector<std::string> named_12;
  for (const auto& phase : out.summary.value("phases", nlohmann::json::array())) {
    if (phase.value("phase", -1) == 12) named_12.push_back(phase.value("name", ""));
  }
  EXPECT_EQ(named_12, std::vector<std::string>{"MY_NAMESPACES"}) << out.summary.dump(2);
  for (const auto& row : it::parse_boot_rows(out.rows)) {
    if (row.phase == 12) {
      EXPECT_EQ(row.name, "MY_NAMESPACES") << "boot " << row.boot;
    }
  }
  EXPECT_TRUE(std::regex_search(out.table, std::regex(R"((^|\n) *12 MY_NAMESPACES )"))) << out.table;
  EXPECT_FALSE(contains(out.table, "CONTAINER_NAMESPACE_GENERATED")) << out.table;
}

// The regression gate's report on stderr names phases as the summary does
// (the baseline, saved with the same names, says MY_NAMESPACES too).
TEST(ReplayOutputs, PhaseNamesRenameThePhaseInTheGateReport) {
  const auto named = replay_demo({.phase_names = kPhaseNames});
  // Only the names matter here, not the verdict (with so few boots, inconclusive).
  const auto judged = judge(named, named, 1000);
  EXPECT_TRUE(judged.status == kExitOk || judged.status == kExitRegressed || judged.status == kExitInconclusive)
      << judged.status << "\n"
      << judged.report;
  EXPECT_TRUE(std::regex_search(judged.report, std::regex("(^|\n)MY_NAMESPACES "))) << "no MY_NAMESPACES row:\n"
                                                                                    << judged.report;
  EXPECT_FALSE(contains(judged.report, "CONTAINER_NAMESPACE_GENERATED")) << judged.report;
}

// --from MY_NAMESPACES (options_test: the name is looked up in --phase-names)
// starts every boot's clock at phase 12.
TEST(ReplayOutputs, RenamedPhaseCanStartTheClock) {
  const auto out = replay_demo({.start_phase = 12, .phase_names = kPhaseNames});
  EXPECT_EQ(out.summary.value("start_phase", nlohmann::json()),
            (nlohmann::json{{"phase", 12}, {"name", "MY_NAMESPACES"}}));
  expect_boot_counts(out.summary, kBoots, kBoots, kBoots, 0);
  const auto rows = it::parse_boot_rows(out.rows);
  for (const auto& row : rows) {
    if (row.phase == 12) {
      EXPECT_EQ(row.since_start_ns, std::optional<std::uint64_t>(0)) << "boot " << row.boot;
    }
  }
  expect_consistent_times(rows, 12);
}

}  // namespace
}  // namespace hacoboot
