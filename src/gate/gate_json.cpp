#include <nlohmann/json.hpp>
#include <ostream>

#include "gate/gate_report.hpp"
#include "gate/step_report.hpp"

namespace hacoboot {
namespace {

using GateJson = nlohmann::ordered_json;

// Identifiers a tool can branch on; the words are verdict_name's.
const char* verdict_id(Verdict verdict) {
  switch (verdict) {
    case Verdict::NoChange: return "no_change";
    case Verdict::Slower: return "slower_within_limit";
    case Verdict::Faster: return "faster_within_limit";
    case Verdict::Improved: return "improved";
    case Verdict::Regressed: return "regressed";
    case Verdict::Inconclusive: return "inconclusive";
    case Verdict::New: return "new";
    case Verdict::Missing: return "missing";
  }
  return "?";
}

const char* path_change_id(PathChange change) {
  switch (change) {
    case PathChange::None: return "none";
    case PathChange::Joined: return "joined";
    case PathChange::Left: return "left";
  }
  return "?";
}

GateJson metric_json(const MetricComparison& row) {
  return {{"key", row.key},
          {"name", row.name},
          {"gated", row.gated},
          {"figure", gate_figure_name(row.figure)},
          {"method", row.method == GateMethod::RankTest ? "rank_test" : "percentile"},
          {"baseline_boots", row.baseline_boots},
          {"boots", row.boots},
          {"baseline_median_ns", row.baseline_median_ns},
          {"median_ns", row.median_ns},
          {"change_pct", row.change_pct},
          {"change_low_pct", row.change_low_pct},
          {"change_high_pct", row.change_high_pct},
          {"confidence", row.confidence},
          {"p_value", row.ranked ? GateJson(row.p_value) : GateJson()},
          {"adjusted_p", row.ranked ? GateJson(row.adjusted_p) : GateJson()},
          {"boots_needed", row.boots_needed ? GateJson(*row.boots_needed) : GateJson()},
          {"verdict", verdict_id(row.verdict)},
          {"verdict_text", verdict_name(row.verdict)},
          {"reason", row.reason.empty() ? GateJson() : GateJson(row.reason)}};
}

GateJson moved_syscalls_json(const StepShift& shift) {
  auto calls = GateJson::array();
  for (const auto& call : shift.syscalls) calls.push_back({{"name", call.name}, {"shift_ns", call.shift_ns}});
  return calls;
}

GateJson state_json(const StateShift& state) {
  return {{"state", state.state}, {"shift_ns", state.shift_ns}};
}

GateJson states_json(const StepShift& shift) {
  auto states = GateJson::array();
  for (const auto& state : shift.states) states.push_back(state_json(state));
  return states;
}

GateJson step_json(const StepShift& shift, const MilestoneShift* milestone) {
  const bool share = milestone != nullptr && milestone->has_shares();
  return {{"key", shift.key},
          {"lane", shift.lane},
          {"name", shift.name.empty() ? GateJson() : GateJson(shift.name)},
          {"shown", step_shown(shift)},
          {"measure", step_measure_name(shift.measure)},
          {"baseline_boots", shift.baseline_boots},
          {"boots", shift.boots},
          {"shift_ns", shift.shift_ns},
          {"low_ns", shift.low_ns},
          {"high_ns", shift.high_ns},
          {"p_value", shift.p_value},
          {"adjusted_p", shift.adjusted_p},
          {"floor_ns", shift.floor_ns},
          {"share", share ? GateJson(milestone->share_of(shift)) : GateJson()},
          {"path_change", path_change_id(shift.path_change)},
          {"state", shift.states.empty() ? GateJson() : state_json(shift.states.front())},
          {"states", states_json(shift)},
          {"syscalls", moved_syscalls_json(shift)}};
}

GateJson steps_json(const StepComparison& steps) {
  if (!steps.unavailable.empty()) return {{"compared", false}, {"unavailable", steps.unavailable}};
  auto milestones = GateJson::array();
  for (const auto& milestone : steps.milestones) {
    // Share figures are null where no shares are given.
    const auto shared = [&](double ns) { return milestone.has_shares() ? GateJson(ns) : GateJson(); };
    auto moved = GateJson::array();
    for (const auto i : milestone.moved) moved.push_back(step_json(steps.shifts[i], &milestone));
    milestones.push_back({{"milestone", milestone.milestone},
                          {"shift_ns", milestone.shift_ns},
                          {"low_ns", milestone.low_ns},
                          {"high_ns", milestone.high_ns},
                          {"path_mean_shift_ns", milestone.path_mean_shift_ns},
                          {"path_same", milestone.path_same},
                          {"unattributed_ns", shared(milestone.unattributed_ns())},
                          {"unattributed_low_ns", shared(milestone.unattributed_low_ns())},
                          {"unattributed_high_ns", shared(milestone.unattributed_high_ns())},
                          {"moved_total_ns", milestone.moved_total_ns},
                          {"moved_low_ns", milestone.moved_low_ns},
                          {"moved_high_ns", milestone.moved_high_ns},
                          {"moved_explain_shift", milestone.moved_explain_shift()},
                          {"shares_of_ns", shared(milestone.shared_shift_ns())},
                          {"moved", std::move(moved)}});
  }
  auto off_path = GateJson::array();
  for (const auto i : steps.moved_off_path) off_path.push_back(step_json(steps.shifts[i], nullptr));
  return {
      {"compared", true},
      {"figure", gate_figure_name(steps.figure)},
      {"correction", "benjamini-hochberg"},
      {"tests", steps.tests},
      {"floor_ns", steps.floor_ns},
      {"syscalls_compared", steps.syscalls_compared},
      {"syscalls_unavailable", steps.syscalls_unavailable.empty() ? GateJson() : GateJson(steps.syscalls_unavailable)},
      {"milestones", std::move(milestones)},
      {"moved_off_path", std::move(off_path)}};
}

}  // namespace

void write_gate_json(const GateResult& result, const GateConfig& config, std::ostream& out) {
  auto metrics = GateJson::array();
  for (const auto& row : result.rows) metrics.push_back(metric_json(row));
  const GateJson doc{{"schema", kGateJsonSchema},
                     {"outcome", gate_outcome_name(result.outcome())},
                     {"terms",
                      {{"gate_on", gate_figure_name(config.figure)},
                       {"alpha", config.alpha},
                       {"max_regression_pct", config.max_regression_pct},
                       {"holm_metrics", result.tested}}},
                     {"metrics", std::move(metrics)},
                     {"notes", result.notes},
                     {"steps", steps_json(result.steps)}};
  out << doc.dump(2) << '\n';
}

void write_unjudged_json(std::string_view why, std::ostream& out) {
  const GateJson doc{{"schema", kGateJsonSchema}, {"outcome", "not judged"}, {"reason", why}};
  out << doc.dump(2) << '\n';
}

}  // namespace hacoboot
