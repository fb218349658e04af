#include "report/baseline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/errors.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

// Schemas 2 and 3 added fields only: a baseline of any reads the same, but
// only schema 3 has the samples (and the tool's version).
constexpr int kOldestSchema = 1;
constexpr int kFirstSchemaWithSamples = 3;
// SampleStats keeps at most this many exact samples, and has fewer histogram
// buckets: a figure with more pairs was not written by the tool.
constexpr std::size_t kMaxSamplePairs = SampleStats::kExactSamples;

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
  fields.reserve(array.value->size());
  for (std::size_t i = 0; i < array.value->size(); ++i) {
    fields.push_back({&(*array.value)[i], fmt::format("{}[{}]", array.path, i)});
  }
  return fields;
}

// Whether `value` is an integer within Integer's range. nlohmann keeps every
// non-negative integer as unsigned, negative ones as signed.
template <typename Integer>
bool fits(const nlohmann::json& value) {
  if constexpr (std::is_signed_v<Integer>) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<Integer>::max());
    return value.is_number_unsigned() ? value.get<std::uint64_t>() <= kMax : value.is_number_integer();
  }
  return value.is_number_unsigned();
}

// nlohmann converts a float, or an integer out of the target's range, with a
// plain cast, which is undefined behaviour: such a field must be refused.
template <typename Integer>
Integer integer(const Field& field) {
  const auto& value = *field.value;
  if (!fits<Integer>(value)) refuse(field, std::is_signed_v<Integer> ? "an integer" : "a non-negative integer");
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

bool has(const Field& object, const char* key) {
  return object.value->is_object() && object.value->contains(key);
}

// [value_ns, boots] pairs in ascending value whose boots add up to `count`:
// anything else would feed the rank test figures no run had.
Distribution samples_of(const Field& stats, std::uint64_t count) {
  const auto pairs = items(member(stats, "samples"));
  if (pairs.size() > kMaxSamplePairs) {
    throw NotASummary(fmt::format("\"{}.samples\" holds {} pairs, more than the {} a summary has", stats.path,
                                  pairs.size(), kMaxSamplePairs));
  }
  Distribution samples;
  std::uint64_t boots = 0;
  for (const auto& pair : pairs) {
    const auto both = items(pair);
    if (both.size() != 2) refuse(pair, "a [value_ns, boots] pair");
    const auto value = integer<std::uint64_t>(both[0]);
    const auto times = integer<std::uint64_t>(both[1]);
    if (times == 0) refuse(both[1], "a number of boots (1 or more)");
    if (!samples.counts.empty() && value <= samples.counts.back().first) {
      throw NotASummary("\"" + pair.path + "\" is not above the pair before it: samples go in ascending value");
    }
    if (times > count - boots) {
      throw NotASummary(fmt::format("\"{}.samples\" hold more boots than its count, {}", stats.path, count));
    }
    boots += times;
    samples.counts.emplace_back(value, times);
  }
  if (boots != count) {
    throw NotASummary(fmt::format("\"{}.samples\" hold {} boots, its count says {}", stats.path, boots, count));
  }
  if (has(stats, "exact")) {
    const auto exact = member(stats, "exact");
    if (!exact.value->is_boolean()) refuse(exact, "true or false");
    samples.exact = exact.value->get<bool>();
  }
  return samples;
}

// Schemas 1 and 2 have no samples, and wrote no count for some figures.
FigureStats figure_of(const Field& stats, int schema) {
  const auto figure = [&stats](const char* key) { return integer<std::uint64_t>(member(stats, key)); };
  FigureStats out{.count = schema >= kFirstSchemaWithSamples || has(stats, "count") ? figure("count") : 0,
                  .avg_ns = figure("avg_ns"),
                  .p50_ns = figure("p50_ns"),
                  .p90_ns = figure("p90_ns"),
                  .p99_ns = figure("p99_ns"),
                  .max_ns = figure("max_ns"),
                  .samples = {}};
  if (schema >= kFirstSchemaWithSamples) out.samples = samples_of(stats, out.count);
  return out;
}

// execve or listen; nullopt when no boot reached it.
std::optional<MetricFigures> metric_of(const Field& metrics, const char* name, int schema) {
  const auto stats = member(metrics, name);
  if (integer<std::uint64_t>(member(stats, "count")) == 0) return std::nullopt;
  MetricFigures metric{.name = name, .wall = figure_of(stats, schema), .noise_free = std::nullopt};
  if (has(stats, "noise_free")) {
    const auto noise_free = member(stats, "noise_free");
    if (integer<std::uint64_t>(member(noise_free, "count")) > 0) metric.noise_free = figure_of(noise_free, schema);
  }
  return metric;
}

std::string text_of(const Field& field) {
  if (!field.value->is_string()) refuse(field, "a string");
  return printable(field.value->get<std::string>());
}

// Where the figures came from. Schema 3 has it all; older summaries may lack
// what they did not write yet (the tool), and are read as far as they go.
RunOrigin origin_of(const Field& summary, int schema) {
  RunOrigin origin{.schema = schema, .tool_version = {}, .start_phase = 1, .command = {}};
  const bool required = schema >= kFirstSchemaWithSamples;
  if (required || has(summary, "tool")) {
    const auto tool = member(summary, "tool");
    const auto name = member(tool, "name");
    if (text_of(name) != "hacoboot-sampler") {
      throw NotASummary(fmt::format(R"("{}" is '{}', not "hacoboot-sampler")", name.path, text_of(name)));
    }
    origin.tool_version = text_of(member(tool, "version"));
  }
  if (required || has(summary, "start_phase")) {
    origin.start_phase = integer<std::int64_t>(member(member(summary, "start_phase"), "phase"));
  }
  if (required || has(summary, "command")) {
    const auto command = member(summary, "command");
    if (!command.value->is_null()) origin.command = text_of(command);
  }
  return origin;
}

// boots.started; a summary without it (none the tool wrote) counts the most
// boots any of its figures has.
std::uint64_t boots_of(const Field& summary, const MetricTable& metrics) {
  if (has(summary, "boots")) return integer<std::uint64_t>(member(member(summary, "boots"), "started"));
  std::uint64_t most = 0;
  for (const auto& [key, metric] : metrics) most = std::max(most, metric.wall.count);
  return most;
}

RunFigures figures_of_summary(const Field& summary, int schema) {
  RunFigures run;
  run.origin = origin_of(summary, schema);
  for (const char* name : {"execve", "listen"}) {
    if (auto metric = metric_of(member(summary, "metrics"), name, schema))
      run.metrics.emplace(name, std::move(*metric));
  }
  for (const auto& phase : items(member(summary, "phases"))) {
    const auto number = integer<std::int64_t>(member(phase, "phase"));
    run.metrics.emplace(phase_key(number), MetricFigures{.name = phase_name_of(member(phase, "name")),
                                                         .wall = figure_of(phase, schema),
                                                         .noise_free = std::nullopt});
  }
  run.boots = boots_of(summary, run.metrics);
  return run;
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

std::uint64_t Distribution::boots() const {
  std::uint64_t boots = 0;
  for (const auto& [value, times] : counts) boots += times;
  return boots;
}

std::uint64_t FigureStats::get(GateStatistic statistic) const {
  switch (statistic) {
    case GateStatistic::Avg: return avg_ns;
    case GateStatistic::P50: return p50_ns;
    case GateStatistic::P90: return p90_ns;
    case GateStatistic::P99: return p99_ns;
    case GateStatistic::Max: return max_ns;
  }
  return 0;
}

RunFigures parse_baseline(std::string_view json_text, const std::string& source) {
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
  if (!schema.is_number_integer() || schema < kOldestSchema || schema > kSummarySchema) {
    throw UsageError(fmt::format("{}: schema {} is not supported (this version reads schemas {} to {})", file,
                                 printable(schema.dump()), kOldestSchema, kSummarySchema));
  }
  try {
    return figures_of_summary(Field{&doc, ""}, schema.get<int>());
  } catch (const NotASummary& e) {
    throw UsageError(file + ": not a hacoboot-sampler summary: " + e.what());
  }
}

FigureStats figure_of(const SampleStats& s) {
  return {.count = s.count(),
          .avg_ns = s.avg(),
          .p50_ns = s.percentile(50),
          .p90_ns = s.percentile(90),
          .p99_ns = s.percentile(99),
          .max_ns = s.max(),
          .samples = {.counts = s.value_counts(), .exact = s.exact()}};
}

RunFigures figures_of_run(const Summary& summary, const RunFacts& facts) {
  RunFigures run{.origin = {.schema = kSummarySchema,
                            .tool_version = tool_version(),
                            .start_phase = facts.start_phase,
                            .command = facts.command},
                 .boots = summary.boots().started,
                 .metrics = {}};
  for (const auto& [step, stats] : summary.steps()) {
    if (stats.since_start.empty()) continue;
    auto name = step_name(step, facts.names);
    const bool is_phase = step.kind == Step::Kind::Phase;
    const auto& noise_free =
        step.kind == Step::Kind::Execve ? summary.paths().noise_free_execve() : summary.paths().noise_free_listen();
    MetricFigures metric{
        .name = name,
        .wall = figure_of(stats.since_start),
        .noise_free = is_phase || noise_free.empty() ? std::nullopt : std::optional(figure_of(noise_free))};
    run.metrics.emplace(is_phase ? phase_key(step.phase) : std::move(name), std::move(metric));
  }
  return run;
}

}  // namespace hacoboot
