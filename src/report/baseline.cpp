#include "report/baseline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/errors.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

// Schema 2 added fields only: a baseline of either reads the same.
constexpr int kOldestSchema = 1;
constexpr int kNewestSchema = 2;

constexpr std::array<std::pair<std::string_view, GateStatistic>, 5> kStatistics{{
    {"avg", GateStatistic::Avg},
    {"p50", GateStatistic::P50},
    {"p90", GateStatistic::P90},
    {"p99", GateStatistic::P99},
    {"max", GateStatistic::Max},
}};

std::string phase_key(std::int64_t phase) {
  return "phase:" + std::to_string(phase);
}

MetricFigures figures_of(std::string name, const SampleStats& s) {
  return {std::move(name), s.avg(), s.percentile(50), s.percentile(90), s.percentile(99), s.max()};
}

// A summary that is JSON but not one the tool wrote (hand-edited, another
// tool's); the caller names the file.
struct NotASummary : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A value of the summary and where it sits ("metrics.execve.count",
// "phases[2].name"): its faults are told in the tool's words, never in the
// JSON library's.
struct Field {
  const nlohmann::json* value;
  std::string path;
};

std::string shown(const nlohmann::json& value) {
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return value.dump();  // a number, true, false or null
}

[[noreturn]] void refuse(const Field& field, const char* wanted) {
  throw NotASummary(fmt::format("\"{}\" is {}, not {}", field.path, shown(*field.value), wanted));
}

Field member(const Field& object, const char* key) {
  if (!object.value->is_object()) refuse(object, "an object");
  const auto it = object.value->find(key);
  const auto path = object.path.empty() ? std::string(key) : object.path + "." + key;
  if (it == object.value->end()) throw NotASummary("no \"" + path + "\"");
  return {&*it, path};
}

std::vector<Field> items(const Field& array) {
  if (!array.value->is_array()) refuse(array, "an array");
  std::vector<Field> fields;
  for (std::size_t i = 0; i < array.value->size(); ++i) {
    fields.push_back({&(*array.value)[i], fmt::format("{}[{}]", array.path, i)});
  }
  return fields;
}

// nlohmann converts a float, or an integer out of the target's range, with a
// plain cast, which is undefined behaviour: such a field must be refused.
template <typename Integer>
Integer integer(const Field& field) {
  const auto& value = *field.value;
  // nlohmann keeps every non-negative integer as unsigned, negative ones as signed.
  bool fits = value.is_number_unsigned();
  if constexpr (std::is_signed_v<Integer>) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<Integer>::max());
    fits = fits ? value.get<std::uint64_t>() <= kMax : value.is_number_integer();
  }
  if (!fits) refuse(field, std::is_signed_v<Integer> ? "an integer" : "a non-negative integer");
  return value.get<Integer>();
}

// Printed in the gate's report: held to the rule of --phase-names.
std::string phase_name_of(const Field& field) {
  if (!field.value->is_string()) refuse(field, "a phase name");
  auto name = field.value->get<std::string>();
  if (const auto valid = check_phase_name(name); !valid) {
    throw NotASummary("\"" + field.path + "\": " + valid.error());
  }
  return name;
}

MetricFigures figures_of(std::string name, const Field& stats) {
  const auto figure = [&stats](const char* key) { return integer<std::uint64_t>(member(stats, key)); };
  return {std::move(name), figure("avg_ns"), figure("p50_ns"), figure("p90_ns"), figure("p99_ns"), figure("max_ns")};
}

// "line 3, column 7" of the byte nlohmann's parse error points at (1-based).
std::string position_of(std::string_view text, std::size_t byte) {
  const auto before = text.substr(0, std::min(byte, text.size() + 1) - 1);
  const auto line_start = before.rfind('\n');
  const auto column = line_start == std::string_view::npos ? before.size() + 1 : before.size() - line_start;
  return fmt::format("line {}, column {}", std::count(before.begin(), before.end(), '\n') + 1, column);
}

}  // namespace

std::optional<GateStatistic> parse_gate_statistic(std::string_view text) {
  for (const auto& [name, statistic] : kStatistics) {
    if (iequals(name, text)) return statistic;
  }
  return std::nullopt;
}

const char* gate_statistic_name(GateStatistic statistic) {
  for (const auto& [name, candidate] : kStatistics) {
    if (candidate == statistic) return name.data();
  }
  return "?";
}

std::uint64_t MetricFigures::get(GateStatistic statistic) const {
  switch (statistic) {
    case GateStatistic::Avg: return avg_ns;
    case GateStatistic::P50: return p50_ns;
    case GateStatistic::P90: return p90_ns;
    case GateStatistic::P99: return p99_ns;
    case GateStatistic::Max: return max_ns;
  }
  return 0;
}

MetricTable parse_baseline(std::string_view json_text, const std::string& source) {
  const auto file = printable(source);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(
        fmt::format("{}: not JSON at {} (expected a --format json summary)", file, position_of(json_text, e.byte)));
  } catch (const nlohmann::json::out_of_range&) {
    // A number beyond a double (1e999): valid JSON, never a summary's.
    throw UsageError(file + ": a number too large for any figure (expected a --format json summary)");
  }
  if (!doc.is_object() || !doc.contains("schema")) {
    throw UsageError(file + ": no \"schema\": not a hacoboot-sampler --format json summary");
  }
  const auto& schema = doc.at("schema");
  if (!schema.is_number_integer() || schema < kOldestSchema || schema > kNewestSchema) {
    throw UsageError(fmt::format("{}: schema {} is not supported (this version reads schemas {} to {})", file,
                                 printable(schema.dump()), kOldestSchema, kNewestSchema));
  }
  try {
    const Field summary{&doc, ""};
    MetricTable table;
    for (const char* metric : {"execve", "listen"}) {
      const auto stats = member(member(summary, "metrics"), metric);
      if (integer<std::uint64_t>(member(stats, "count")) > 0) table.emplace(metric, figures_of(metric, stats));
    }
    for (const auto& phase : items(member(summary, "phases"))) {
      const auto number = integer<std::int64_t>(member(phase, "phase"));
      table.emplace(phase_key(number), figures_of(phase_name_of(member(phase, "name")), phase));
    }
    return table;
  } catch (const NotASummary& e) {
    throw UsageError(file + ": not a hacoboot-sampler summary: " + e.what());
  }
}

MetricTable metrics_of(const Summary& summary, const PhaseNames& names) {
  MetricTable table;
  for (const auto& [step, stats] : summary.steps()) {
    if (stats.since_start.empty()) continue;
    const auto name = step_name(step, names);
    table.emplace(step.kind == Step::Kind::Phase ? phase_key(step.phase) : name, figures_of(name, stats.since_start));
  }
  return table;
}

bool GateResult::regressed() const {
  return std::any_of(rows.begin(), rows.end(), [](const MetricComparison& row) {
    return row.gated && row.verdict == MetricComparison::Verdict::Regressed;
  });
}

GateResult compare_to_baseline(const MetricTable& baseline, const MetricTable& now, const GateConfig& config) {
  std::set<std::string> keys;
  for (const auto& [key, figures] : baseline) keys.insert(key);
  for (const auto& [key, figures] : now) keys.insert(key);

  GateResult result;
  for (const auto& key : keys) {
    MetricComparison row;
    row.key = key;
    row.gated = config.gated.empty() || config.gated.contains(key);
    if (const auto it = baseline.find(key); it != baseline.end()) row.baseline = it->second;
    if (const auto it = now.find(key); it != now.end()) row.now = it->second;
    row.name = row.now ? row.now->name : row.baseline->name;
    if (!row.baseline) {
      row.verdict = MetricComparison::Verdict::New;
    } else if (!row.now) {
      row.verdict = MetricComparison::Verdict::Missing;
    } else {
      const auto before = static_cast<double>(row.baseline->get(config.statistic));
      const auto after = static_cast<double>(row.now->get(config.statistic));
      row.change_pct = before > 0 ? (after - before) / before * 100.0 : 0.0;
      if (row.change_pct > config.max_regression_pct) {
        row.verdict = MetricComparison::Verdict::Regressed;
      } else if (row.change_pct < -config.max_regression_pct) {
        row.verdict = MetricComparison::Verdict::Improved;
      }
    }
    result.rows.push_back(std::move(row));
  }
  // Boot order, as the summary's breakdown.
  const auto time_of = [](const MetricComparison& row) { return (row.now ? *row.now : *row.baseline).avg_ns; };
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [&](const auto& a, const auto& b) { return time_of(a) < time_of(b); });
  return result;
}

void write_gate_report(const GateResult& result, const GateConfig& config, std::ostream& out) {
  static constexpr std::array<const char*, 5> kVerdicts{"ok", "improved", "REGRESSED", "new", "missing"};
  const char* statistic = gate_statistic_name(config.statistic);
  out << fmt::format("{:<34} {:>10} {:>10} {:>10} {:>8}  {}\n", "BASELINE COMPARISON", "BASE P50", "BASE P90",
                     fmt::format("NOW {}", statistic), "CHANGE", "VERDICT");
  for (const auto& row : result.rows) {
    const auto cell = [](const std::optional<MetricFigures>& f, auto get) {
      return f ? fmt::format("{:.3f}ms", static_cast<double>(get(*f)) / 1e6) : std::string("-");
    };
    const bool both = row.baseline && row.now;
    out << fmt::format("{:<34} {:>10} {:>10} {:>10} {:>8}  {}{}\n", row.name,
                       cell(row.baseline, [](const MetricFigures& f) { return f.p50_ns; }),
                       cell(row.baseline, [](const MetricFigures& f) { return f.p90_ns; }),
                       cell(row.now, [&](const MetricFigures& f) { return f.get(config.statistic); }),
                       both ? fmt::format("{:+.1f}%", row.change_pct) : std::string("-"),
                       kVerdicts.at(static_cast<std::size_t>(row.verdict)), row.gated ? "" : " (not gated)");
  }
  out << fmt::format("gate: {} on {}, at most +{}%: {}\n", result.regressed() ? "FAILED" : "passed", statistic,
                     config.max_regression_pct, result.regressed() ? "boot time regressed" : "no regression");
}

}  // namespace hacoboot
