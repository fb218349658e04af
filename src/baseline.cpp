#include "hacoboot/baseline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "hacoboot/errors.hpp"
#include "hacoboot/text.hpp"

namespace hacoboot {
namespace {

constexpr int kSupportedSchema = 1;

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

// nlohmann converts a float, or an integer out of the target's range, with a
// plain cast, which is undefined behaviour: such a field must be refused.
template <typename Integer>
Integer integer_field(const nlohmann::json& object, const char* key) {
  const auto& value = object.at(key);
  // nlohmann keeps every non-negative integer as unsigned, negative ones as signed.
  bool fits = value.is_number_unsigned();
  if constexpr (std::is_signed_v<Integer>) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<Integer>::max());
    fits = fits ? value.get<std::uint64_t>() <= kMax : value.is_number_integer();
  }
  if (!fits) {
    throw NotASummary(fmt::format("\"{}\" is {}, not {} integer", key,
                                  value.is_number() ? value.dump() : value.type_name(),
                                  std::is_signed_v<Integer> ? "an" : "a non-negative"));
  }
  return value.get<Integer>();
}

MetricFigures figures_of(std::string name, const nlohmann::json& stats) {
  const auto field = [&stats](const char* key) { return integer_field<std::uint64_t>(stats, key); };
  return {std::move(name), field("avg_ns"), field("p50_ns"), field("p90_ns"), field("p99_ns"), field("max_ns")};
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
  const auto doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw UsageError(source + ": not JSON (expected a --format json summary)");
  try {
    if (!doc.is_object() || !doc.contains("schema")) {
      throw UsageError(source + ": no \"schema\": not a hacoboot-sampler --format json summary");
    }
    if (doc.at("schema") != kSupportedSchema) {
      throw UsageError(fmt::format("{}: schema {} is not supported (this version reads schema {})", source,
                                   doc.at("schema").dump(), kSupportedSchema));
    }
    MetricTable table;
    for (const char* metric : {"execve", "listen"}) {
      const auto& stats = doc.at("metrics").at(metric);
      if (integer_field<std::uint64_t>(stats, "count") > 0) table.emplace(metric, figures_of(metric, stats));
    }
    for (const auto& phase : doc.at("phases")) {
      const auto number = integer_field<std::int64_t>(phase, "phase");
      table.emplace(phase_key(number), figures_of(phase.at("name").get<std::string>(), phase));
    }
    return table;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(source + ": not a hacoboot-sampler summary: " + e.what());
  } catch (const NotASummary& e) {
    throw UsageError(source + ": not a hacoboot-sampler summary: " + e.what());
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
