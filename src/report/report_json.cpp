#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "model/phases.hpp"
#include "report/report_writers.hpp"
#include "report/sched_json.hpp"

namespace hacoboot {
namespace {

using Json = nlohmann::ordered_json;

Json stats_of(const SampleStats& s) {
  Json out{{"count", s.count()}, {"avg_ns", s.avg()},       {"min_ns", s.min()},
           {"max_ns", s.max()},  {"stddev_ns", s.stddev()}, {"exact", s.exact()}};
  for (const double q : kReportedPercentiles) out[fmt::format("p{}_ns", q)] = s.percentile(q);
  return out;
}

// A sample pair packed: its value then its boots, native byte order.
constexpr std::size_t kPackedPair = 2 * sizeof(std::uint64_t);

// A figure the regression gate compares: its statistics and the per-boot
// samples a rank test needs, as [value_ns, boots] pairs in ascending value
// (one pair per histogram bucket once the figure is no longer exact). The
// pairs are kept packed, 16 bytes each, and written out as JSON arrays by
// write_indented: as JSON values, 10,000 pairs per figure would hold ~100
// bytes each in memory while the summary is written.
Json gated_stats_of(const SampleStats& s) {
  Json out = stats_of(s);
  const auto counts = s.value_counts();
  Json::binary_t packed(std::vector<std::uint8_t>(counts.size() * kPackedPair));
  auto* at = packed.data();
  for (const auto& [value, boots] : counts) {
    std::memcpy(at, &value, sizeof value);
    std::memcpy(at + sizeof value, &boots, sizeof boots);
    at += kPackedPair;
  }
  out["samples"] = Json::binary(std::move(packed));
  return out;
}

// Packed samples (gated_stats_of) as write_indented writes an array of
// [value, boots] arrays: a pair a line.
void write_samples(const Json::binary_t& packed, std::ostream& out, int depth) {
  if (packed.empty()) {
    out << "[]";
    return;
  }
  const std::string indent(static_cast<std::size_t>(depth + 1) * 2, ' ');
  out << "[\n";
  for (std::size_t at = 0; at + kPackedPair <= packed.size(); at += kPackedPair) {
    std::uint64_t value = 0;
    std::uint64_t boots = 0;
    std::memcpy(&value, packed.data() + at, sizeof value);
    std::memcpy(&boots, packed.data() + at + sizeof value, sizeof boots);
    out << (at == 0 ? "" : ",\n") << indent << '[' << value << ',' << boots << ']';
  }
  out << '\n' << std::string(static_cast<std::size_t>(depth) * 2, ' ') << ']';
}

// Since-start figures at the top level (schema 1 readers), own time under "delta".
Json step_of(const StepStats& s) {
  Json out = gated_stats_of(s.since_start);
  out["delta"] = stats_of(s.delta);
  return out;
}

// As dump(2), but an array of numbers, strings or booleans on one line: a
// summary of 10,000 boots keeps 10,000 sample pairs per figure, which one
// line each (instead of four) keeps readable and within --baseline's size.
void write_indented(const Json& value, std::ostream& out, int depth) {
  if (value.is_binary()) {
    write_samples(value.get_binary(), out, depth);
    return;
  }
  const bool flat_array = value.is_array() && std::none_of(value.begin(), value.end(),
                                                           [](const Json& item) { return item.is_structured(); });
  if (!value.is_structured() || value.empty() || flat_array) {
    out << value.dump();
    return;
  }
  const std::string indent(static_cast<std::size_t>(depth + 1) * 2, ' ');
  out << (value.is_object() ? "{\n" : "[\n");
  bool first = true;
  for (auto it = value.begin(); it != value.end(); ++it) {
    out << (first ? "" : ",\n") << indent;
    first = false;
    if (value.is_object()) out << Json(it.key()).dump() << ": ";
    write_indented(*it, out, depth + 1);
  }
  out << '\n' << std::string(static_cast<std::size_t>(depth) * 2, ' ') << (value.is_object() ? '}' : ']');
}

// One row of the breakdown by lane: a step's times, its mean states and its
// part in the critical paths.
Json lane_step_of(const LaneStepKey& key, const LaneStepStats& row, const PathBreakdown& paths,
                  const PhaseNames& names) {
  Json out{{"lane", lane_name(key.lane)}};
  put_step(out, key.step, names);
  out["since_start"] = stats_of(row.since_start);
  out["own"] = gated_stats_of(row.own);
  out["own_noise_free"] = gated_stats_of(row.own_noise_free);
  put_states(out, row.mean_states());
  // Per boot (times), over all boots (calls).
  out["syscalls"] = syscalls_json(row.mean_syscalls());
  out["on_listen_path"] = row.ever_on_listen_path();
  out["listen_path_share"] = paths.listen_path_share(row);
  out["on_execve_path"] = row.on_execve_path_ns > 0;
  out["execve_path_share"] = paths.execve_path_share(row);
  // Per boot, what the gate compares step by step.
  out["listen_path_time"] = {{"wall", gated_stats_of(row.listen_path.wall)},
                             {"noise_free", gated_stats_of(row.listen_path.noise_free)}};
  out["execve_path_time"] = {{"wall", gated_stats_of(row.execve_path.wall)},
                             {"noise_free", gated_stats_of(row.execve_path.noise_free)}};
  return out;
}

// The paths' lengths, and the mean states of the path to listen over the
// boots that have them (those with a noise-free figure).
Json critical_path_of(const PathBreakdown& paths, std::uint64_t started) {
  Json listen{{"length", stats_of(paths.listen_path())}};
  const auto with_states = paths.noise_free_listen().count();
  const auto& sum = paths.listen_path_states();
  put_states(listen, with_states == 0 ? std::nullopt
                                      : std::optional<SchedTotals>({sum.cpu / with_states, sum.run_queue / with_states,
                                                                    sum.sleep / with_states, sum.io / with_states}));
  return {{"forks_only", started > 0 && paths.forks_only_boots() == started},
          {"forks_only_boots", paths.forks_only_boots()},
          {"execve", {{"length", stats_of(paths.execve_path())}}},
          {"listen", std::move(listen)}};
}

// One group of failed boots: where they failed, and how their dying process
// ended (an exit status or a signal; neither when its exit was not seen).
Json failure_of(const BootFailure& failure, std::uint64_t boots, const PhaseNames& names) {
  const auto& step = failure.last_step;
  Json out{{"boots", boots},
           {"last_phase", step.kind == Step::Kind::Phase ? Json(step.phase) : Json()},
           {"last_step", step_name(step, names)},
           {"process", failed_process_name(failure.process)},
           {"end", boot_end_name(failure.end)}};
  if (const auto status = failure.wait_status; status && WIFEXITED(*status)) {
    out["exit_status"] = WEXITSTATUS(*status);
  } else if (status && WIFSIGNALED(*status)) {
    out["signal"] = WTERMSIG(*status);
  }
  out["description"] = describe_failure(failure, names);
  return out;
}

Json boots_of(const BootCounts& boots, const PhaseNames& names) {
  auto failures = Json::array();
  for (const auto& [failure, count] : boots.failures_by_count()) failures.push_back(failure_of(failure, count, names));
  return {{"started", boots.started},       {"execve", boots.execve},       {"listen", boots.listen},
          {"incomplete", boots.incomplete}, {"unstarted", boots.unstarted}, {"in_flight", boots.in_flight},
          {"failures", std::move(failures)}};
}

class JsonWriter final : public ReportWriter {
 public:
  // 2: noise_free under metrics, critical_path and steps (by lane).
  // 3: samples of the gated figures, and the tool that wrote the summary.
  // 4: per step, samples of its own time and of its time on the paths.
  // 5: per step, its syscalls and user time; syscalls_dropped.
  // 6: per step, where its calls blocked; blocking_dropped, stacks_dropped.
  // 7: the role of a blocking point's waker; per step, its kernel CPU
  // samples (syscalls.kernel_cpu); samples_dropped.
  // 8: kernel_maps, how full the aggregation maps got.
  static constexpr int kSchema = kSummarySchema;

  void write(const Summary& summary, const RunFacts& facts, std::ostream& out) const override {
    const auto& boots = summary.boots();
    Json doc;
    doc["schema"] = kSchema;
    doc["tool"] = {{"name", "hacoboot-sampler"}, {"version", tool_version()}};
    doc["start_phase"] = {{"phase", facts.start_phase}, {"name", facts.names.name(facts.start_phase)}};
    doc["command"] = facts.command.empty() ? Json() : Json(facts.command);
    doc["boots"] = boots_of(boots, facts.names);
    doc["lost_events"] = facts.lost_events;
    doc["untracked_phase_events"] = facts.untracked_phases;
    doc["syscalls_dropped"] = facts.syscalls_dropped;
    doc["blocking_dropped"] = facts.blocking_dropped;
    doc["stacks_dropped"] = facts.stacks_dropped;
    doc["samples_dropped"] = facts.samples_dropped;
    doc["kernel_maps"] = Json::object();
    for (const auto& map : facts.kernel_maps) {
      doc["kernel_maps"][map.map] = {{"peak", map.peak}, {"capacity", map.capacity}};
    }
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
    const auto& paths = summary.paths();
    doc["metrics"]["execve"]["noise_free"] = gated_stats_of(paths.noise_free_execve());
    doc["metrics"]["listen"]["noise_free"] = gated_stats_of(paths.noise_free_listen());
    doc["phases"] = std::move(phases);
    doc["critical_path"] = critical_path_of(paths, boots.started);
    auto steps = Json::array();
    for (const auto& [key, row] : paths.steps_by_lane()) steps.push_back(lane_step_of(key, *row, paths, facts.names));
    doc["steps"] = std::move(steps);
    write_indented(doc, out, 0);
    out << '\n';
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_json_writer() {
  return std::make_unique<JsonWriter>();
}

}  // namespace hacoboot
