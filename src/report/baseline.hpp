#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/phases.hpp"
#include "model/stats.hpp"

namespace hacoboot {

// The statistic a regression gate compares.
enum class GateStatistic : std::uint8_t { Avg, P50, P90, P99, Max };

std::optional<GateStatistic> parse_gate_statistic(std::string_view text);  // "p50", "avg", ...
const char* gate_statistic_name(GateStatistic statistic);

// Time-since-start figures of one metric (execve, listen, or a phase).
struct MetricFigures {
  std::string name;  // "execve", "listen", or the phase's name
  std::uint64_t avg_ns = 0;
  std::uint64_t p50_ns = 0;
  std::uint64_t p90_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t max_ns = 0;

  [[nodiscard]] std::uint64_t get(GateStatistic statistic) const;
  bool operator==(const MetricFigures&) const = default;
};

// Metrics keyed "execve", "listen" and "phase:<number>".
using MetricTable = std::map<std::string, MetricFigures>;

// The metrics of a saved `--format json` summary. Throws UsageError naming
// `source` and what is wrong when it is not one.
MetricTable parse_baseline(std::string_view json_text, const std::string& source);

// The same metrics of this run (only those with samples).
MetricTable metrics_of(const Summary& summary, const PhaseNames& names = {});

struct GateConfig {
  GateStatistic statistic = GateStatistic::P50;
  double max_regression_pct = 10.0;
  std::set<std::string> gated = {"execve", "listen"};  // keys of MetricTable; empty: all
};

struct MetricComparison {
  enum class Verdict : std::uint8_t { Same, Improved, Regressed, New, Missing };
  std::string key;
  std::string name;
  std::optional<MetricFigures> baseline;
  std::optional<MetricFigures> now;
  double change_pct = 0;  // of the gated statistic, now vs baseline
  Verdict verdict = Verdict::Same;
  bool gated = false;
};

struct GateResult {
  std::vector<MetricComparison> rows;  // in boot order
  [[nodiscard]] bool regressed() const;
};

GateResult compare_to_baseline(const MetricTable& baseline, const MetricTable& now, const GateConfig& config);

// metric, baseline p50/p90, now, change %, verdict; a line saying whether the gate passed.
void write_gate_report(const GateResult& result, const GateConfig& config, std::ostream& out);

}  // namespace hacoboot
