#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "model/phases.hpp"
#include "report/report_writers.hpp"

namespace hacoboot {
namespace {

using Json = nlohmann::ordered_json;

Json stats_of(const SampleStats& s) {
  Json out{{"count", s.count()}, {"avg_ns", s.avg()},       {"min_ns", s.min()},
           {"max_ns", s.max()},  {"stddev_ns", s.stddev()}, {"exact", s.exact()}};
  for (const double q : kReportedPercentiles) out[fmt::format("p{}_ns", q)] = s.percentile(q);
  return out;
}

// Since-start figures at the top level (schema 1 readers), own time under "delta".
Json step_of(const StepStats& s) {
  Json out = stats_of(s.since_start);
  out["delta"] = stats_of(s.delta);
  return out;
}

class JsonWriter final : public ReportWriter {
 public:
  static constexpr int kSchema = 1;

  void write(const Summary& summary, const RunFacts& facts, std::ostream& out) const override {
    const auto& boots = summary.boots();
    Json doc;
    doc["schema"] = kSchema;
    doc["start_phase"] = {{"phase", facts.start_phase}, {"name", facts.names.name(facts.start_phase)}};
    doc["command"] = facts.command.empty() ? Json() : Json(facts.command);
    doc["boots"] = {{"started", boots.started},
                    {"execve", boots.execve},
                    {"listen", boots.listen},
                    {"incomplete", boots.incomplete},
                    {"unstarted", boots.unstarted}};
    doc["lost_events"] = facts.lost_events;
    doc["untracked_phase_events"] = facts.untracked_phases;
    doc["tracked_at_exit"] = facts.tracked_at_exit;
    doc["metrics"] = Json::object();
    auto phases = Json::array();
    for (const auto& [step, stats] : summary.steps_in_boot_order()) {
      if (step.kind != Step::Kind::Phase) {
        doc["metrics"][step_name(step, facts.names)] = step_of(*stats);
        continue;
      }
      Json row{{"phase", step.phase}, {"name", step_name(step, facts.names)}};
      row.update(step_of(*stats));
      phases.push_back(std::move(row));
    }
    for (const char* metric : {"execve", "listen"}) {
      if (!doc["metrics"].contains(metric)) doc["metrics"][metric] = step_of(StepStats{});
    }
    doc["phases"] = std::move(phases);
    out << doc.dump(2) << '\n';
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_json_writer() {
  return std::make_unique<JsonWriter>();
}

}  // namespace hacoboot
