#include "report/chrome_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/blocking.hpp"
#include "model/kernel_profile.hpp"
#include "model/lane.hpp"
#include "model/phases.hpp"
#include "model/syscall_names.hpp"
#include "model/syscalls.hpp"
#include "report/sched_json.hpp"

namespace hacoboot {
namespace {

using Json = nlohmann::ordered_json;

// Absolute monotonic ns, as µs in a double, would lose the ns past ~100 days
// of uptime: times are written from the earliest one instead.
std::uint64_t origin_of(std::span<const BootRecord> boots) {
  std::optional<std::uint64_t> origin;
  for (const auto& boot : boots) {
    if (const auto extent = boot.extent()) origin = std::min(origin.value_or(extent->first_ns), extent->first_ns);
  }
  return origin.value_or(0);
}

double micros(std::uint64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

// Where events are drawn: pid is the boot's sequence, tid a track of it.
struct Track {
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
};

struct TimedEvent {
  std::uint64_t ts_ns;
  Json event;
};

// The trace being written: its events and the ids it hands out. Perfetto
// names a thread by its tid alone and takes a tid equal to a pid for that
// process's main thread, so track ids start past the largest boot sequence.
class TraceBuilder {
 public:
  TraceBuilder(std::uint64_t origin_ns, std::uint64_t first_tid) : origin_ns_(origin_ns), next_tid_(first_tid) {}

  // Its metadata names the main thread (tid = pid), which draws nothing:
  // Perfetto files every event under a thread, and tid 0 is the idle task.
  void name_process(std::uint64_t pid, const std::string& name) {
    events_.push_back(metadata("process_name", {pid, pid}, {{"name", name}}));
    events_.push_back(metadata("process_sort_index", {pid, pid}, {{"sort_index", pid}}));
  }

  // A new track, shown in the order the tracks were made.
  Track track(std::uint64_t pid, const std::string& name) {
    const Track track{pid, next_tid_++};
    events_.push_back(metadata("thread_name", track, {{"name", name}}));
    events_.push_back(metadata("thread_sort_index", track, {{"sort_index", track.tid}}));
    return track;
  }

  [[nodiscard]] Json event(const Track& track, std::string_view name, std::string_view cat, std::string_view ph,
                           std::uint64_t ts_ns) const {
    return Json{{"name", name},     {"cat", cat},       {"ph", ph},
                {"pid", track.pid}, {"tid", track.tid}, {"ts", micros(ts_ns - origin_ns_)}};
  }

  // A complete event over [begin, end].
  [[nodiscard]] Json slice(const Track& track, std::string_view name, std::string_view cat, std::uint64_t begin_ns,
                           std::uint64_t end_ns) const {
    auto slice = event(track, name, cat, "X", begin_ns);
    slice["dur"] = micros(end_ns - begin_ns);
    return slice;
  }

  // Queued until flush(), which writes them in time order.
  void add(std::uint64_t ts_ns, Json event) { pending_.push_back({ts_ns, std::move(event)}); }

  void flush() {
    std::stable_sort(pending_.begin(), pending_.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
    for (auto& timed : pending_) events_.push_back(std::move(timed.event));
    pending_.clear();
  }

  std::uint64_t next_flow_id() { return next_flow_id_++; }

  Json take_events() { return std::move(events_); }

 private:
  static Json metadata(std::string_view name, const Track& track, Json args) {
    return Json{{"name", name}, {"ph", "M"}, {"pid", track.pid}, {"tid", track.tid}, {"args", std::move(args)}};
  }

  std::uint64_t origin_ns_;
  std::uint64_t next_tid_;
  std::uint64_t next_flow_id_ = 1;
  Json events_ = Json::array();
  std::vector<TimedEvent> pending_;
};

// The last phase lasts 0, so that it still shows.
void add_phases(const BootRecord& boot, const Track& track, const PhaseNames& names, TraceBuilder& trace) {
  for (const auto& span : boot.phase_spans()) {
    auto slice =
        trace.slice(track, names.name(span.phase), "phase", span.begin_ns, span.end_ns.value_or(span.begin_ns));
    slice["args"] = {{"phase", span.phase}};
    trace.add(span.begin_ns, std::move(slice));
  }
}

// A milestone, with the critical path that led to it.
void add_milestone(const BootRecord& boot, std::string_view name, std::optional<std::uint64_t> ts_ns,
                   const std::optional<CriticalPath>& path, bool forks_only, const Track& track, TraceBuilder& trace) {
  if (!ts_ns) return;
  auto args = Json::object();
  if (const auto since_start = boot.since_start(*ts_ns)) args["since_start_ns"] = *since_start;
  if (path) {
    args["critical_path_ns"] = path->duration();
    if (!forks_only) {
      args["critical_path_run_queue_ns"] = path->states().run_queue;
      args["noise_free_ns"] = path->noise_free();
    }
  }
  auto instant = trace.event(track, name, "milestone", "i", *ts_ns);
  instant["s"] = "t";
  instant["args"] = std::move(args);
  trace.add(*ts_ns, std::move(instant));
}

std::string step_label(const std::optional<Step>& step, const PhaseNames& names) {
  return step ? step_name(*step, names) : "after last step";
}

Json step_args(const LaneStep& step) {
  Json args{{"lane", lane_name(step.lane)}, {"tid", step.tid}};
  if (step.step && step.step->kind == Step::Kind::Phase) args["phase"] = step.step->phase;
  if (step.since_start) args["since_start_ns"] = *step.since_start;
  args["duration_ns"] = step.duration();
  if (step.states) {
    args["cpu_ns"] = step.states->cpu;
    args["run_queue_ns"] = step.states->run_queue;
    args["sleep_ns"] = step.states->sleep;
    args["io_ns"] = step.states->io;
  }
  args["on_listen_path_ns"] = step.on_listen_path_ns;
  args["on_execve_path_ns"] = step.on_execve_path_ns;
  // What its syscall slices' kernel_cpu shares are of.
  if (step.syscalls && step.syscalls->kernel_cpu) {
    const auto& cpu = *step.syscalls->kernel_cpu;
    args["kernel_cpu"] = {{"hz", cpu.hz}, {"samples", cpu.samples()}, {"partly_sampled", cpu.partly_sampled}};
  }
  return args;
}

// One state of a step, drawn as a slice; cname picks chrome://tracing's own
// colour for that thread state (Perfetto colours by name).
struct StateSlice {
  std::string_view name;
  std::string_view cname;
  std::uint64_t SchedTotals::*ns;
};
constexpr std::array<StateSlice, 4> kStateSlices{{
    {"CPU", "thread_state_running", &SchedTotals::cpu},
    {"run queue", "thread_state_runnable", &SchedTotals::run_queue},
    {"sleep", "thread_state_sleeping", &SchedTotals::sleep},
    {"I/O", "thread_state_iowait", &SchedTotals::io},
}};
constexpr std::string_view kStateOrder =
    "fixed (CPU, run queue, sleep, I/O): the readings give the step's totals, not when inside it each state occurred";

void add_states(const LaneStep& step, const std::string& label, const Track& track, TraceBuilder& trace) {
  if (!step.states) return;
  auto begin_ns = step.begin_ns;
  for (const auto& state : kStateSlices) {
    const auto ns = (*step.states).*state.ns;
    if (ns == 0) continue;
    auto slice = trace.slice(track, state.name, "sched", begin_ns, begin_ns + ns);
    slice["cname"] = state.cname;
    slice["args"] = {{"step", label}, {"order", kStateOrder}};
    trace.add(begin_ns, std::move(slice));
    begin_ns += ns;
  }
}

constexpr std::string_view kSyscallOrder =
    "the most time first, then user space: the kernel side sums a step's calls, it does not time each one, so "
    "a slice is a total, not when the calls ran";

// The blocking points of call `nr` (kUserTime: the user time's), the most
// time first: the first kTopPoints with their wait's short form (null
// without a stack), time, count and waker (null without a traced one; its
// tid, role and waking frame), the first kStackedPoints of them with both
// whole stacks too: a slice's args stay small.
Json blocking_args(const std::vector<BlockingPoint>& blocking, std::uint32_t nr) {
  constexpr std::size_t kTopPoints = 3;
  constexpr std::size_t kStackedPoints = 2;
  auto points = Json::array();
  for (const auto& point : blocking) {
    if (point.nr != nr) continue;
    if (points.size() == kTopPoints) break;
    Json row{{"wait", point.frames.empty() ? Json() : Json(wait_frame(point.frames))},
             {"time_ns", point.time_ns},
             {"count", point.count}};
    row["waker"] = Json();
    if (point.waker_tid != 0 || !point.waker_frames.empty()) {
      row["waker"] = {{"tid", point.waker_tid},
                      {"role", role_json(point.waker_lane)},
                      {"waking", waking_frame(point.waker_frames)}};
    }
    if (points.size() < kStackedPoints) {
      row["frames"] = point.frames;
      if (!point.waker_frames.empty()) row["waker_frames"] = point.waker_frames;
    }
    points.push_back(std::move(row));
  }
  return points;
}

// Where a sample landed: its stack's cpu_frame, "user mode" in user space,
// null where the stack was not taken.
Json sampled_where(const CpuSamplePoint& point) {
  if (point.user_mode) return "user mode";
  if (point.frames.empty()) return nullptr;
  return cpu_frame(point.frames);
}

// The CPU samples of call `nr` (kUserTime: outside any) at their places,
// the most first: the first kTopPlaces with where they landed, their
// samples and share of the step's, the first kStackedPlaces with the whole
// stack too.
Json kernel_cpu_args(const StepKernelCpu& cpu, std::uint32_t nr) {
  constexpr std::size_t kTopPlaces = 3;
  constexpr std::size_t kStackedPlaces = 2;
  constexpr double kShareDecimals = 1000.0;
  const auto total = cpu.samples();
  auto places = Json::array();
  for (const auto& point : cpu.points) {
    if (point.nr != nr || point.samples == 0) continue;
    if (places.size() == kTopPlaces) break;
    const auto share = static_cast<double>(point.samples) / static_cast<double>(total);
    Json row{{"where", sampled_where(point)},
             {"samples", point.samples},
             {"share", std::round(share * kShareDecimals) / kShareDecimals}};
    if (places.size() < kStackedPlaces && !point.frames.empty()) row["frames"] = point.frames;
    places.push_back(std::move(row));
  }
  return places;
}

// A step's syscalls as slices nested under its slice, each a total: the
// calls by time, then the time in user space, tiling the step.
void add_syscalls(const LaneStep& step, const std::string& label, const Track& track, TraceBuilder& trace) {
  if (!step.syscalls) return;
  auto begin_ns = step.begin_ns;
  const auto add_total = [&](const std::string& name, const SchedTotals& states, const SyscallTime* call) {
    const auto ns = states.total();
    if (ns == 0) return;
    Json args{{"step", label}};
    if (call) args["calls"] = call->count;
    args["total_ns"] = ns;
    if (call) args["max_ns"] = call->max_ns;
    put_states(args, states);
    if (auto blocked = blocking_args(step.syscalls->blocking, call ? call->nr : kUserTime); !blocked.empty()) {
      args["blocking"] = std::move(blocked);
    }
    if (const auto& cpu = step.syscalls->kernel_cpu) {
      if (auto sampled = kernel_cpu_args(*cpu, call ? call->nr : kUserTime); !sampled.empty()) {
        args["kernel_cpu"] = std::move(sampled);
      }
    }
    args["order"] = kSyscallOrder;
    auto slice = trace.slice(track, name + " (total)", "syscall", begin_ns, begin_ns + ns);
    slice["args"] = std::move(args);
    trace.add(begin_ns, std::move(slice));
    begin_ns += ns;
  };
  for (const auto& call : step.syscalls->calls) add_total(syscall_name(call.nr), call.states, &call);
  add_total("user space", step.syscalls->user, nullptr);
}

// The tracks of one process of a boot.
struct LaneTracks {
  Track steps;
  std::optional<Track> states;  // when a step of it has states
};
using LaneKey = std::pair<Lane, std::uint32_t>;  // lane, tid

std::map<LaneKey, LaneTracks> make_lane_tracks(const BootRecord& boot, const BootAnalysis& analysis,
                                               TraceBuilder& trace) {
  std::map<LaneKey, bool> has_states;
  for (const auto& step : analysis.steps) has_states[{step.lane, step.tid}] |= step.states.has_value();
  std::map<LaneKey, LaneTracks> tracks;
  for (const auto& [key, states] : has_states) {
    const auto name = fmt::format("boot {} {} (tid {})", boot.sequence, lane_name(key.first), key.second);
    const auto steps = trace.track(boot.sequence, name);
    tracks[key] = {steps, states ? std::optional(trace.track(boot.sequence, name + " states")) : std::nullopt};
  }
  return tracks;
}

void add_steps(const BootAnalysis& analysis, const std::map<LaneKey, LaneTracks>& tracks, const PhaseNames& names,
               TraceBuilder& trace) {
  for (const auto& step : analysis.steps) {
    const auto& lane = tracks.at({step.lane, step.tid});
    const auto label = step_label(step.step, names);
    auto slice =
        trace.slice(lane.steps, label, step.on_listen_path() ? "step,listen_path" : "step", step.begin_ns, step.end_ns);
    slice["args"] = step_args(step);
    trace.add(step.begin_ns, std::move(slice));
    add_syscalls(step, label, lane.steps, trace);
    if (lane.states) add_states(step, label, *lane.states, trace);
  }
}

// Where a critical path leaves one thread for another: the later one was
// woken by the earlier one, or forked by it.
struct Handoff {
  std::uint64_t ts_ns = 0;
  std::uint32_t from_tid = 0;
  std::uint32_t to_tid = 0;

  auto operator<=>(const Handoff&) const = default;
};

void collect_handoffs(const std::optional<CriticalPath>& path, std::set<Handoff>& handoffs) {
  if (!path) return;
  for (std::size_t i = 1; i < path->pieces.size(); ++i) {
    const auto& from = path->pieces[i - 1];
    const auto& to = path->pieces[i];
    if (from.tid != to.tid) handoffs.insert({to.begin_ns, from.tid, to.tid});
  }
}

bool is_wakeup(const BootRecord& boot, const Handoff& handoff) {
  return std::any_of(boot.wakeups.begin(), boot.wakeups.end(), [&](const WakeupEdge& edge) {
    return edge.ts_ns == handoff.ts_ns && edge.waker_tid == handoff.from_tid && edge.wakee_tid == handoff.to_tid;
  });
}

// An arrow per handoff of the paths to execve and listen, from the slice
// running on the waker (parent) to the one waiting on the wakee (child).
void add_flows(const BootRecord& boot, const BootAnalysis& analysis, const std::map<LaneKey, LaneTracks>& tracks,
               TraceBuilder& trace) {
  std::map<std::uint32_t, Track> steps_of_tid;
  for (const auto& [key, lane] : tracks) steps_of_tid.try_emplace(key.second, lane.steps);
  std::set<Handoff> handoffs;
  collect_handoffs(analysis.to_execve, handoffs);
  collect_handoffs(analysis.to_listen, handoffs);
  for (const auto& handoff : handoffs) {
    const auto from = steps_of_tid.find(handoff.from_tid);
    const auto to = steps_of_tid.find(handoff.to_tid);
    if (from == steps_of_tid.end() || to == steps_of_tid.end()) continue;
    const std::string_view name = is_wakeup(boot, handoff) ? "wakeup" : "fork";
    const auto id = trace.next_flow_id();
    auto start = trace.event(from->second, name, "critical_path", "s", handoff.ts_ns);
    start["id"] = id;
    auto finish = trace.event(to->second, name, "critical_path", "f", handoff.ts_ns);
    finish["id"] = id;
    finish["bp"] = "e";  // the wakee's step that was waiting, not the next one
    trace.add(handoff.ts_ns, std::move(start));
    trace.add(handoff.ts_ns, std::move(finish));
  }
}

void add_boot(const BootRecord& boot, const BootAnalysis& analysis, const PhaseNames& names, TraceBuilder& trace) {
  trace.name_process(boot.sequence, fmt::format("boot {} hpid {}", boot.sequence, boot.hpid));
  const auto phases = trace.track(boot.sequence, fmt::format("boot {} phases", boot.sequence));
  add_phases(boot, phases, names, trace);
  add_milestone(boot, "execve", boot.execve_ns, analysis.to_execve, analysis.forks_only, phases, trace);
  add_milestone(boot, "listen", boot.listen_ns, analysis.to_listen, analysis.forks_only, phases, trace);
  const auto lanes = make_lane_tracks(boot, analysis, trace);
  add_steps(analysis, lanes, names, trace);
  add_flows(boot, analysis, lanes, trace);
  trace.flush();
}

std::uint64_t first_track_id(std::span<const BootRecord> boots) {
  std::uint64_t largest = 0;
  for (const auto& boot : boots) largest = std::max(largest, boot.sequence);
  return largest + 1;
}

}  // namespace

void write_chrome_trace(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names) {
  std::vector<BootAnalysis> analyses;
  analyses.reserve(boots.size());
  for (const auto& boot : boots) analyses.push_back(boot.started() ? analyse_boot(boot) : BootAnalysis{});
  write_chrome_trace(boots, analyses, out, names);
}

void write_chrome_trace(std::span<const BootRecord> boots, std::span<const BootAnalysis> analyses, std::ostream& out,
                        const PhaseNames& names) {
  if (analyses.size() != boots.size()) throw std::invalid_argument("write_chrome_trace: one analysis per boot");
  const auto origin_ns = origin_of(boots);
  TraceBuilder trace(origin_ns, first_track_id(boots));
  for (std::size_t i = 0; i < boots.size(); ++i) add_boot(boots[i], analyses[i], names, trace);
  const Json doc{{"traceEvents", trace.take_events()},
                 {"displayTimeUnit", "ms"},
                 {"otherData", {{"clock", "CLOCK_MONOTONIC"}, {"clock_origin_ns", origin_ns}}}};
  out << doc.dump() << '\n';
}

}  // namespace hacoboot
