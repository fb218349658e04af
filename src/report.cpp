#include "hacoboot/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <ostream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hacoboot/phases.hpp"

namespace hacoboot {
namespace {

// Phases in the order a boot passes them: by mean time since the start.
std::vector<std::pair<std::int64_t, const SampleStats*>> phases_in_boot_order(const Summary& summary) {
  std::vector<std::pair<std::int64_t, const SampleStats*>> rows;
  for (const auto& [phase, stats] : summary.phases()) rows.emplace_back(phase, &stats);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second->avg() < b.second->avg(); });
  return rows;
}

class TableWriter final : public ReportWriter {
 public:
  void write(const Summary& summary, const RunFacts& facts, std::ostream& out) const override {
    const auto& boots = summary.boots();
    out << fmt::format("Boots: {} started, {} reached execve, {} reached listen, {} incomplete", boots.started,
                       boots.execve, boots.listen, boots.incomplete);
    if (boots.unstarted > 0) out << fmt::format(", {} seen only after their start", boots.unstarted);
    out << '\n';
    out << "execve of: " << (facts.command.empty() ? "the container's first execve" : facts.command) << '\n';
    if (facts.lost_events > 0) {
      out << fmt::format("WARNING: {} events lost (ring buffer full): figures may be incomplete\n",
                         facts.lost_events);
    }
    out << '\n'
        << fmt::format("{:<40} {:>7} {:>10} {:>10} {:>10}\n",
                       fmt::format("TIME SINCE {}", phase_name(facts.start_phase)), "COUNT", "AVG", "MIN", "MAX");
    row(out, "execve", summary.execve());
    row(out, "listen", summary.listen());
    for (const auto& [phase, stats] : phases_in_boot_order(summary)) {
      row(out, fmt::format("{:>3} {}", phase, phase_name(phase)), *stats);
    }
  }

 private:
  static void row(std::ostream& out, const std::string& label, const SampleStats& s) {
    if (s.empty()) {
      out << fmt::format("{:<40} {:>7} {:>10} {:>10} {:>10}\n", label, 0, "-", "-", "-");
      return;
    }
    out << fmt::format("{:<40} {:>7} {:>10} {:>10} {:>10}\n", label, s.count(), format_duration(s.avg()),
                       format_duration(s.min()), format_duration(s.max()));
  }
};

// The reference bpftrace script's lines, figure for figure. Like bpftrace, a
// metric with no sample prints nothing.
class BpftraceWriter final : public ReportWriter {
 public:
  void write(const Summary& summary, const RunFacts& /*facts*/, std::ostream& out) const override {
    metric(out, "execve", summary.execve());
    metric(out, "listen", summary.listen());
  }

 private:
  static void metric(std::ostream& out, const char* name, const SampleStats& s) {
    if (s.empty()) return;
    out << fmt::format("@{0}__count: {1}\n@{0}_avg: {2}\n@{0}_max: {3}\n@{0}_min: {4}\n", name, s.count(),
                       s.avg(), s.max(), s.min());
  }
};

class JsonWriter final : public ReportWriter {
 public:
  static constexpr int kSchema = 1;

  void write(const Summary& summary, const RunFacts& facts, std::ostream& out) const override {
    const auto& boots = summary.boots();
    nlohmann::ordered_json doc;
    doc["schema"] = kSchema;
    doc["start_phase"] = {{"phase", facts.start_phase}, {"name", phase_name(facts.start_phase)}};
    doc["command"] = facts.command.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(facts.command);
    doc["boots"] = {{"started", boots.started},
                    {"execve", boots.execve},
                    {"listen", boots.listen},
                    {"incomplete", boots.incomplete},
                    {"unstarted", boots.unstarted}};
    doc["lost_events"] = facts.lost_events;
    doc["metrics"] = {{"execve", stats(summary.execve())}, {"listen", stats(summary.listen())}};
    auto phases = nlohmann::ordered_json::array();
    for (const auto& [phase, s] : phases_in_boot_order(summary)) {
      auto row = nlohmann::ordered_json{{"phase", phase}, {"name", phase_name(phase)}};
      row.update(stats(*s));
      phases.push_back(std::move(row));
    }
    doc["phases"] = std::move(phases);
    out << doc.dump(2) << '\n';
  }

 private:
  static nlohmann::ordered_json stats(const SampleStats& s) {
    return {{"count", s.count()}, {"avg_ns", s.avg()}, {"min_ns", s.min()}, {"max_ns", s.max()}};
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_report_writer(ReportFormat format) {
  switch (format) {
    case ReportFormat::Table: return std::make_unique<TableWriter>();
    case ReportFormat::Bpftrace: return std::make_unique<BpftraceWriter>();
    case ReportFormat::Json: return std::make_unique<JsonWriter>();
  }
  return nullptr;
}

std::string format_duration(std::uint64_t ns) {
  struct Unit {
    std::uint64_t scale;
    const char* name;
  };
  static constexpr std::array<Unit, 3> kUnits{{{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}}};
  for (const auto& unit : kUnits) {
    if (ns < unit.scale) continue;
    const double value = static_cast<double>(ns) / static_cast<double>(unit.scale);
    const int decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;
    return fmt::format("{:.{}f} {}", value, decimals, unit.name);
  }
  return fmt::format("{} ns", ns);
}

}  // namespace hacoboot
