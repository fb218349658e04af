#include "gate/baseline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gate/summary_json.hpp"
#include "model/log_linear_histogram.hpp"
#include "model/syscall_names.hpp"
#include "util/errors.hpp"
#include "util/json_integer.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

// Schemas 2 and 3 added fields only: a baseline of any reads the same, but
// only schema 3 has the samples (and the tool's version).
constexpr int kOldestSchema = 1;
constexpr int kFirstSchemaWithSamples = 3;
constexpr int kFirstSchemaWithStepSamples = 4;
constexpr int kFirstSchemaWithSyscalls = 5;
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
  // nlohmann keeps -0 as a signed 0, which it writes back as 0: say what the
  // file holds, since the sign is why it is refused.
  if (value.is_number_integer() && !value.is_number_unsigned() && value.get<std::int64_t>() == 0) return "-0";
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

// nlohmann converts a float, or an integer out of the target's range, with a
// plain cast, which is undefined behaviour: such a field must be refused.
template <typename Integer>
Integer integer(const Field& field) {
  const auto value = json_integer<Integer>(*field.value);
  if (!value) refuse(field, std::is_signed_v<Integer> ? "an integer" : "a non-negative integer");
  return *value;
}

// Printed in the gate's report and its key in --gate: held to the rules of
// --phase-names, so that a name leads to one phase only.
std::string phase_name_of(const Field& field, std::int64_t phase) {
  if (!field.value->is_string()) refuse(field, "a phase name");
  auto name = field.value->get<std::string>();
  if (const auto valid = check_name_of_phase(phase, name); !valid) {
    throw NotASummary("\"" + field.path + "\": " + valid.error());
  }
  return name;
}

// A number Haconiwa can pass as a phase: the only ones a summary has rows of.
std::int64_t phase_number_of(const Field& field) {
  const auto number = integer<std::int64_t>(field);
  if (number < 0 || number > kMaxPhase) refuse(field, "a phase number 0-127");
  return number;
}

bool has(const Field& object, const char* key) {
  return object.value->is_object() && object.value->contains(key);
}

// [value_ns, boots] pairs in ascending value whose boots add up to `count`:
// anything else would feed the rank test figures no run had.
Distribution samples_of(const Field& stats, std::uint64_t count) {
  // No more pairs than SampleStats keeps: bounded as the file was read
  // (SummaryJsonBounds::kMaxItems).
  const auto pairs = items(member(stats, "samples"));
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

// The statistic at nearest rank `percent` of the samples, as
// SampleStats::percentile reads its own.
std::uint64_t percentile_of(const Distribution& samples, std::uint64_t count, int percent) {
  const auto rank = std::clamp<std::uint64_t>(
      static_cast<std::uint64_t>(std::ceil(percent / 100.0 * static_cast<double>(count))), 1, count);
  std::uint64_t below = 0;
  for (const auto& [value, times] : samples.counts) {
    below += times;
    if (below >= rank) return value;
  }
  return samples.counts.back().first;
}

[[noreturn]] void contradicts(const Field& stats, const char* key, std::uint64_t stated, const std::string& samples) {
  throw NotASummary(fmt::format("\"{}.{}\" is {}, but its samples {}", stats.path, key, stated, samples));
}

// The gate judges by the samples, and shows and sorts by the figures beside
// them: a file whose figures are not its samples' (a forged p50, a shift
// told in % of a made-up median) is refused. Exact samples are every boot:
// avg and max are theirs exactly. Histogram buckets read within
// LogLinearHistogram::kMaxRelativeError of what was added, and never beyond
// the true max.
void check_against_samples(const Field& stats, const FigureStats& figure) {
  const auto& samples = figure.samples;
  if (samples.exact && figure.count > SampleStats::kExactSamples) {
    throw NotASummary(fmt::format("\"{}.exact\" is true for {} boots: beyond {} a summary keeps a histogram",
                                  stats.path, figure.count, SampleStats::kExactSamples));
  }
  for (const auto& [key, percent, stated] :
       {std::tuple{"p50_ns", 50, figure.p50_ns}, std::tuple{"p90_ns", 90, figure.p90_ns},
        std::tuple{"p99_ns", 99, figure.p99_ns}}) {
    if (const auto derived = percentile_of(samples, figure.count, percent); derived != stated) {
      contradicts(stats, key, stated, fmt::format("give {}", derived));
    }
  }
  const auto lowest = samples.counts.front().first;
  const auto highest = samples.counts.back().first;
  if (samples.exact) {
    __extension__ using Sum = unsigned __int128;  // as SampleStats sums
    Sum sum = 0;
    for (const auto& [value, times] : samples.counts) sum += Sum{value} * times;
    if (const auto avg = static_cast<std::uint64_t>(sum / figure.count); avg != figure.avg_ns) {
      contradicts(stats, "avg_ns", figure.avg_ns, fmt::format("give {}", avg));
    }
    if (figure.max_ns != highest) contradicts(stats, "max_ns", figure.max_ns, fmt::format("give {}", highest));
    return;
  }
  constexpr long double kError = LogLinearHistogram::kMaxRelativeError;
  const auto most = static_cast<long double>(highest) / (1 - kError) + 1;
  if (figure.max_ns < highest || static_cast<long double>(figure.max_ns) > most) {
    contradicts(stats, "max_ns", figure.max_ns, fmt::format("end in a bucket of {}", highest));
  }
  const auto least = static_cast<long double>(lowest) / (1 + kError) - 1;
  if (static_cast<long double>(figure.avg_ns) < least || figure.avg_ns > figure.max_ns) {
    contradicts(stats, "avg_ns", figure.avg_ns, fmt::format("lie between {} and {}", lowest, figure.max_ns));
  }
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
  if (schema >= kFirstSchemaWithSamples) {
    out.samples = samples_of(stats, out.count);
    if (out.count > 0) check_against_samples(stats, out);
  }
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

// As the file holds it: compared byte for byte (a COMMAND with a tab is
// this run's COMMAND with a tab), escaped only where it is shown.
std::string text_of(const Field& field) {
  if (!field.value->is_string()) refuse(field, "a string");
  return field.value->get<std::string>();
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
      throw NotASummary(fmt::format(R"("{}" is '{}', not "hacoboot-sampler")", name.path, printable(text_of(name))));
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

// One row per phase some boot passed, each with a name of its own: the first
// of two rows would otherwise win (a slow and a fast one: the fast one
// gated), and a name leading to two rows would show as one metric twice.
void add_phases(const std::vector<Field>& rows, int schema, MetricTable& metrics) {
  std::map<std::int64_t, std::string> row_of;  // the path of each phase's row
  for (const auto& row : rows) {
    const auto number = phase_number_of(member(row, "phase"));
    if (const auto first = row_of.find(number); first != row_of.end()) {
      throw NotASummary(fmt::format(R"("{}" and "{}" are both phase {}: a summary has one row per phase)",
                                    first->second, row.path, number));
    }
    auto name = phase_name_of(member(row, "name"), number);
    for (const auto& [other, other_path] : row_of) {
      if (iequals(metrics.at(phase_key(other)).name, name)) {
        throw NotASummary(fmt::format(R"("{}" and "{}" are both named '{}')", other_path, row.path, name));
      }
    }
    auto wall = figure_of(row, schema);
    if (wall.count == 0 && has(row, "count")) {
      throw NotASummary(fmt::format("\"{}.count\" is 0: a summary has rows only of phases some boot passed", row.path));
    }
    row_of.emplace(number, row.path);
    metrics.emplace(phase_key(number),
                    MetricFigures{.name = std::move(name), .wall = std::move(wall), .noise_free = std::nullopt});
  }
}

std::optional<SchedTotals> states_of(const Field& row) {
  const auto state = [&row](const char* key) { return member(row, key); };
  if (state("cpu_ns").value->is_null()) return std::nullopt;
  return SchedTotals{.cpu = integer<std::uint64_t>(state("cpu_ns")),
                     .run_queue = integer<std::uint64_t>(state("run_queue_ns")),
                     .sleep = integer<std::uint64_t>(state("sleep_ns")),
                     .io = integer<std::uint64_t>(state("io_ns"))};
}

// A step's "syscalls": nullopt where null (a run without --syscalls). Each
// call's states add up to its time, as the tool writes them, and a name comes
// once: the gate names the calls that moved.
std::optional<SyscallMeans> syscalls_of(const Field& row) {
  const auto syscalls = member(row, "syscalls");
  if (syscalls.value->is_null()) return std::nullopt;
  SyscallMeans means;
  for (const auto& call : items(member(syscalls, "calls"))) {
    auto name = text_of(member(call, "name"));
    const auto states = states_of(call);
    if (!states) refuse(member(call, "cpu_ns"), "a time in ns");
    const auto time = member(call, "time_ns");
    const auto total = states->checked_total();
    if (!total) throw NotASummary(fmt::format("\"{}\": its states add up to more than 2^64 ns", call.path));
    if (integer<std::uint64_t>(time) != *total) {
      throw NotASummary(
          fmt::format("\"{}\" is {}, but its states add up to {}", time.path, integer<std::uint64_t>(time), *total));
    }
    if (!means.emplace(name, *states).second) {
      throw NotASummary(fmt::format("\"{}.name\" is a second '{}' of the step", call.path, printable(name)));
    }
  }
  return means;
}

PathFigures path_of(const Field& row, const char* key, int schema) {
  const auto path = member(row, key);
  return {.wall = figure_of(member(path, "wall"), schema), .noise_free = figure_of(member(path, "noise_free"), schema)};
}

// "phase:15", "execve", "listen", "after", with the step's name.
std::pair<std::string, std::string> step_key_of(const Field& row) {
  const auto kind = member(row, "kind");
  if (kind.value->is_null()) return {"after", ""};
  const auto text = text_of(kind);
  if (text == "execve" || text == "listen") return {text, text};
  if (text != "phase") {
    throw NotASummary(
        fmt::format(R"("{}" is '{}', not "phase", "execve", "listen" or null)", kind.path, printable(text)));
  }
  const auto number = phase_number_of(member(row, "phase"));
  return {phase_key(number), phase_name_of(member(row, "name"), number)};
}

// One row per step of a lane; a lane of another tool's making is refused,
// since the gate names it in its report.
StepTable steps_of(const std::vector<Field>& rows, int schema) {
  StepTable steps;
  for (const auto& row : rows) {
    const auto lane_field = member(row, "lane");
    auto lane = text_of(lane_field);
    if (lane != "supervisor" && lane != "container" && lane != "listener" && lane != "other") {
      throw NotASummary(fmt::format(R"("{}" is '{}', not a lane: supervisor, container, listener or other)",
                                    lane_field.path, printable(lane)));
    }
    auto [step, name] = step_key_of(row);
    const auto key = fmt::format("{} {}", lane, step);
    StepFigures figures{.lane = std::move(lane),
                        .name = std::move(name),
                        .own = figure_of(member(row, "own"), schema),
                        .own_noise_free = figure_of(member(row, "own_noise_free"), schema),
                        .listen_path = path_of(row, "listen_path_time", schema),
                        .execve_path = path_of(row, "execve_path_time", schema),
                        .states = states_of(row),
                        .syscalls = schema >= kFirstSchemaWithSyscalls ? syscalls_of(row) : std::nullopt};
    if (!steps.emplace(key, std::move(figures)).second) {
      throw NotASummary(
          fmt::format("\"{}\" is a second row of {}: a summary has one row per step of a lane", row.path, key));
    }
  }
  return steps;
}

RunFigures figures_of_summary(const Field& summary, int schema) {
  RunFigures run;
  run.origin = origin_of(summary, schema);
  for (const char* name : {"execve", "listen"}) {
    if (auto metric = metric_of(member(summary, "metrics"), name, schema))
      run.metrics.emplace(name, std::move(*metric));
  }
  add_phases(items(member(summary, "phases")), schema, run.metrics);
  run.boots = boots_of(summary, run.metrics);
  if (schema >= kFirstSchemaWithStepSamples) run.steps = steps_of(items(member(summary, "steps")), schema);
  return run;
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

std::vector<double> Distribution::ranked_values() const {
  const auto all = boots();
  std::vector<double> values;
  if (all <= kMaxRankedBoots) {
    for (const auto& [value, times] : counts) values.insert(values.end(), times, static_cast<double>(value));
    return values;
  }
  values.reserve(kMaxRankedBoots);
  std::size_t pair = 0;
  std::uint64_t below = counts.front().second;  // boots up to and including `pair`
  for (std::size_t i = 0; i < kMaxRankedBoots; ++i) {
    const auto rank = static_cast<std::uint64_t>((static_cast<double>(i) + 0.5) / static_cast<double>(kMaxRankedBoots) *
                                                 static_cast<double>(all));
    while (rank >= below && pair + 1 < counts.size()) below += counts.at(++pair).second;
    values.push_back(static_cast<double>(counts.at(pair).first));
  }
  return values;
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
  const auto doc = read_summary_json(json_text);
  if (!doc) throw UsageError(fmt::format("{}: {} (expected a --format json summary)", file, doc.error()));
  if (!doc->is_object() || !doc->contains("schema")) {
    throw UsageError(file + ": no \"schema\": not a hacoboot-sampler --format json summary");
  }
  const auto& schema = doc->at("schema");
  if (!schema.is_number_integer() || schema < kOldestSchema || schema > kSummarySchema) {
    throw UsageError(fmt::format("{}: schema {} is not supported (this version reads schemas {} to {})", file,
                                 printable(schema.dump()), kOldestSchema, kSummarySchema));
  }
  try {
    return figures_of_summary(Field{&*doc, ""}, schema.get<int>());
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

namespace {

std::optional<SyscallMeans> syscall_means_of(const std::optional<StepSyscalls>& syscalls) {
  if (!syscalls) return std::nullopt;
  SyscallMeans means;
  for (const auto& call : syscalls->calls) means.emplace(syscall_name(call.nr), call.states);
  return means;
}

std::string step_key_of(const LaneStepKey& key) {
  std::string step = "after";
  if (key.step) step = key.step->kind == Step::Kind::Phase ? phase_key(key.step->phase) : step_name(*key.step, {});
  return std::string(lane_name(key.lane)) + " " + step;
}

StepTable steps_of_run(const PathBreakdown& paths, const PhaseNames& names) {
  StepTable steps;
  for (const auto& [key, row] : paths.steps()) {
    steps.emplace(step_key_of(key), StepFigures{.lane = std::string(lane_name(key.lane)),
                                                .name = key.step ? step_name(*key.step, names) : std::string(),
                                                .own = figure_of(row.own),
                                                .own_noise_free = figure_of(row.own_noise_free),
                                                .listen_path = {.wall = figure_of(row.listen_path.wall),
                                                                .noise_free = figure_of(row.listen_path.noise_free)},
                                                .execve_path = {.wall = figure_of(row.execve_path.wall),
                                                                .noise_free = figure_of(row.execve_path.noise_free)},
                                                .states = row.mean_states(),
                                                .syscalls = syscall_means_of(row.mean_syscalls())});
  }
  return steps;
}

}  // namespace

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
  run.steps = steps_of_run(summary.paths(), facts.names);
  return run;
}

}  // namespace hacoboot
