#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/phases.hpp"
#include "model/summary.hpp"
#include "report/report.hpp"

namespace hacoboot {

// The statistic of the percentile comparison (baselines without samples).
enum class GateStatistic : std::uint8_t { Avg, P50, P90, P99, Max };

std::optional<GateStatistic> parse_gate_statistic(std::string_view text);  // "p50", "avg", ...
const char* gate_statistic_name(GateStatistic statistic);

// Per-boot values of one figure as [value_ns, boots] pairs in ascending
// value: exact up to SampleStats::kExactSamples boots, beyond that one pair
// per histogram bucket (its representative value), which a rank test reads
// as ties.
struct Distribution {
  // Boots per run the rank test and the shift read at most; a longer run is
  // read as this many evenly spaced quantiles of its samples. The shift's
  // estimate takes every pair of boots (m * n differences in memory), and
  // 2,000 boots per run detect shifts far below any --max-regression.
  static constexpr std::size_t kMaxRankedBoots = 2'000;

  std::vector<std::pair<std::uint64_t, std::uint64_t>> counts;
  bool exact = true;
  [[nodiscard]] std::uint64_t boots() const;
  // Every boot's value, or kMaxRankedBoots evenly spaced quantiles of them.
  [[nodiscard]] std::vector<double> ranked_values() const;
  [[nodiscard]] bool empty() const { return counts.empty(); }
  bool operator==(const Distribution&) const = default;
};

// One figure of a metric across a run's boots.
struct FigureStats {
  std::uint64_t count = 0;
  std::uint64_t avg_ns = 0;
  std::uint64_t p50_ns = 0;
  std::uint64_t p90_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t max_ns = 0;
  Distribution samples;  // empty in summaries of schemas 1 and 2

  [[nodiscard]] std::uint64_t get(GateStatistic statistic) const;
  bool operator==(const FigureStats&) const = default;
};

// Time-since-start figures of one metric (execve, listen, or a phase).
struct MetricFigures {
  std::string name;  // "execve", "listen", or the phase's name
  FigureStats wall;
  // execve and listen, schema 2 on; {} for -Wmissing-field-initializers
  std::optional<FigureStats> noise_free{};  // NOLINT(readability-redundant-member-init)
  bool operator==(const MetricFigures&) const = default;
};

// Metrics keyed "execve", "listen" and "phase:<number>".
using MetricTable = std::map<std::string, MetricFigures>;

// A step's time on one critical path, one value per boot with that path
// that had the step (0 where it was off the path).
struct PathFigures {
  FigureStats wall;
  FigureStats noise_free;  // without the run-queue time on the path
  bool operator==(const PathFigures&) const = default;
};

// A step's mean time per boot in each syscall, by state, keyed by the
// syscall's name (as the summary names it: "syscall_<nr>" where it has none).
// Means only: a summary keeps no per-boot samples of a step's syscalls.
using SyscallMeans = std::map<std::string, SchedTotals>;

// One step of one lane across a run's boots, as the gate compares steps
// (summaries of schema 4 on).
struct StepFigures {
  std::string lane;  // "supervisor", "container", "listener", "other"
  std::string name;  // the phase's name, "execve", "listen"; "" for a thread's time after its last step
  FigureStats own;
  FigureStats own_noise_free;
  PathFigures listen_path;
  PathFigures execve_path;
  // Its mean own time in each scheduler state, over the boots that had them.
  std::optional<SchedTotals> states{};  // NOLINT(readability-redundant-member-init)
  // Its syscalls, when the run traced them (--syscalls, summaries of schema 5 on).
  std::optional<SyscallMeans> syscalls{};  // NOLINT(readability-redundant-member-init)
  bool operator==(const StepFigures&) const = default;
};

// Steps keyed "<lane> <step>": "container phase:15", "container execve",
// "listener listen", "other after".
using StepTable = std::map<std::string, StepFigures>;

// What a run's figures depend on besides the code under test.
struct RunOrigin {
  int schema = 0;
  std::string tool_version;  // empty in summaries that predate the field
  std::int64_t start_phase = 1;
  std::string command;  // empty: any first execve
  bool operator==(const RunOrigin&) const = default;
};

// A run's figures as the gate compares them: a saved summary's or this run's.
struct RunFigures {
  RunOrigin origin;
  std::uint64_t boots = 0;  // boots that started and count in the figures
  MetricTable metrics;
  // nullopt: a summary older than schema 4, which kept no per-step samples.
  std::optional<StepTable> steps{};  // NOLINT(readability-redundant-member-init)
};

// The figures of a saved `--format json` summary. Throws UsageError naming
// `source` and what is wrong when it is not one.
RunFigures parse_baseline(std::string_view json_text, const std::string& source);

// The same figures of this run (metrics with samples only).
RunFigures figures_of_run(const Summary& summary, const RunFacts& facts);
// One figure of this run, from its SampleStats.
FigureStats figure_of(const SampleStats& s);

}  // namespace hacoboot
