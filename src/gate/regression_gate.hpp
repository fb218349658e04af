#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gate/baseline.hpp"
#include "gate/gate_config.hpp"
#include "gate/rank_comparison.hpp"
#include "gate/step_comparison.hpp"
#include "util/expected.hpp"

namespace hacoboot {

// The regression gate: is a run's boot time shifted from a baseline run's,
// by more than the operator tolerates, with the confidence the operator asks
// for? Per gated metric a Mann-Whitney rank test and a Hodges-Lehmann shift
// with its confidence interval, as benchstat and TracerBench judge benchmark
// runs; Holm's procedure over the gated metrics. Summaries written before the
// samples were kept (schemas 1 and 2) can only be compared by a percentile,
// and every row says which way it was judged.

enum class Verdict : std::uint8_t {
  NoChange,      // no significant shift
  Slower,        // significantly slower, but within --max-regression
  Faster,        // significantly faster, but within --max-regression
  Improved,      // significantly faster by more than --max-regression
  Regressed,     // significantly slower by more than --max-regression
  Inconclusive,  // too few boots to tell --max-regression from noise at --alpha
  New,           // in this run only
  Missing,       // in the baseline only
};
// "no significant change", "slower, within the limit", "faster, within the
// limit", "improved", "REGRESSED", "INCONCLUSIVE", "new", "missing"
const char* verdict_name(Verdict verdict);

// How a row was judged.
enum class GateMethod : std::uint8_t {
  RankTest,    // both runs kept their samples
  Percentile,  // a baseline of schema 1 or 2: GateConfig::statistic against --max-regression
};

struct MetricComparison {
  std::string key;   // "execve", "listen", "phase:13"
  std::string name;  // "execve", "listen", the phase's name
  bool gated = false;
  GateFigure figure = GateFigure::Wall;  // what was compared (phases: always wall)
  GateMethod method = GateMethod::RankTest;
  std::uint64_t baseline_boots = 0;
  std::uint64_t boots = 0;
  std::uint64_t baseline_median_ns = 0;  // of the compared figure (Percentile: the statistic)
  std::uint64_t median_ns = 0;
  // Shift of this run against the baseline in % of the baseline's median:
  // the Hodges-Lehmann estimate and its confidence interval (RankTest), or
  // the statistic's change (Percentile: low == high == change).
  double change_pct = 0;
  double change_low_pct = 0;
  double change_high_pct = 0;
  double confidence = 0;  // what the interval achieves (small samples cannot reach 1 - alpha)
  bool ranked = false;    // the rank test ran: p_value and adjusted_p are its
  double p_value = 1;     // Mann-Whitney, two-sided (RankTest)
  double adjusted_p = 1;  // Holm-adjusted over the gated rows (RankTest)
  // Inconclusive: boots per run that would detect --max-regression at --alpha.
  std::optional<std::uint64_t> boots_needed;
  // Why Inconclusive or Percentile, or that a passing row's interval
  // straddles the limit, in words; empty otherwise.
  std::string reason;
  Verdict verdict = Verdict::NoChange;
};

enum class GateOutcome : std::uint8_t { Passed, Regressed, Inconclusive };

struct GateResult {
  std::vector<MetricComparison> rows;  // in boot order
  // What applies to every row: "baseline has no samples (schema 2): ...",
  // "Holm over 2 gated metrics", ...
  std::vector<std::string> notes;
  // Gated rows compared by the rank test: the k of Holm's procedure.
  std::size_t tested = 0;
  // The steps that moved and their part of each milestone's shift.
  StepComparison steps;
  // Regressed when a gated row regressed; else Inconclusive when a gated row
  // is; else Passed.
  [[nodiscard]] GateOutcome outcome() const;
};

// kExitOk, kExitRegressed or kExitInconclusive.
int gate_exit_status(GateOutcome outcome);
const char* gate_outcome_name(GateOutcome outcome);  // "passed", "REGRESSED", "INCONCLUSIVE"

// Why `now` cannot be judged against `baseline` (the caller's usage error):
// a baseline without boots, a gated metric absent from it, another start
// phase or COMMAND, a tool version whose figures differ (a schema the tool
// cannot read is refused by parse_baseline). The messages do not name the
// file: the caller does.
Expected<void> check_comparable(const RunFigures& baseline, const RunFigures& now, const GateConfig& config);
// The same checks of the baseline alone, against the origin this run will
// have: a traced run refuses a baseline before it traces.
Expected<void> check_baseline(const RunFigures& baseline, const RunOrigin& now, const GateConfig& config);

GateResult compare_runs(const RunFigures& baseline, const RunFigures& now, const GateConfig& config);

}  // namespace hacoboot
