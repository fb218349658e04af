#include "report/chrome_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/phases.hpp"

namespace hacoboot {
namespace {

using Json = nlohmann::ordered_json;

// All boots are threads of one process, so that Perfetto shows them together.
constexpr int kPid = 1;

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

Json metadata(std::string_view name, std::uint64_t tid, Json args) {
  return Json{{"name", name}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

struct TimedEvent {
  std::uint64_t ts_ns;
  Json event;
};

// The last phase lasts 0, so that it still shows.
void add_phases(const BootRecord& boot, std::uint64_t origin_ns, const PhaseNames& names,
                std::vector<TimedEvent>& events) {
  for (const auto& span : boot.phase_spans()) {
    events.push_back({span.begin_ns, Json{{"name", names.name(span.phase)},
                                          {"cat", "phase"},
                                          {"ph", "X"},
                                          {"pid", kPid},
                                          {"tid", boot.sequence},
                                          {"ts", micros(span.begin_ns - origin_ns)},
                                          {"dur", micros(span.end_ns.value_or(span.begin_ns) - span.begin_ns)},
                                          {"args", {{"phase", span.phase}}}}});
  }
}

void add_instant(const BootRecord& boot, std::string_view name, std::optional<std::uint64_t> ts_ns,
                 std::uint64_t origin_ns, std::vector<TimedEvent>& events) {
  if (!ts_ns) return;
  auto args = Json::object();
  if (const auto since_start = boot.since_start(*ts_ns)) args["since_start_ns"] = *since_start;
  events.push_back({*ts_ns, Json{{"name", name},
                                 {"cat", "milestone"},
                                 {"ph", "i"},
                                 {"s", "t"},
                                 {"pid", kPid},
                                 {"tid", boot.sequence},
                                 {"ts", micros(*ts_ns - origin_ns)},
                                 {"args", std::move(args)}}});
}

// The boot's track: its name, then its events in time order.
void add_boot(const BootRecord& boot, std::uint64_t origin_ns, const PhaseNames& names, Json& trace_events) {
  trace_events.push_back(
      metadata("thread_name", boot.sequence, {{"name", fmt::format("boot {} hpid {}", boot.sequence, boot.hpid)}}));
  trace_events.push_back(metadata("thread_sort_index", boot.sequence, {{"sort_index", boot.sequence}}));
  std::vector<TimedEvent> events;
  add_phases(boot, origin_ns, names, events);
  add_instant(boot, "execve", boot.execve_ns, origin_ns, events);
  add_instant(boot, "listen", boot.listen_ns, origin_ns, events);
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  for (auto& timed : events) trace_events.push_back(std::move(timed.event));
}

}  // namespace

void write_chrome_trace(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names) {
  const auto origin_ns = origin_of(boots);
  auto trace_events = Json::array();
  trace_events.push_back(metadata("process_name", 0, {{"name", "hacoboot-sampler boots"}}));
  for (const auto& boot : boots) add_boot(boot, origin_ns, names, trace_events);
  const Json doc{{"traceEvents", std::move(trace_events)},
                 {"displayTimeUnit", "ms"},
                 {"otherData", {{"clock", "CLOCK_MONOTONIC"}, {"clock_origin_ns", origin_ns}}}};
  out << doc.dump() << '\n';
}

}  // namespace hacoboot
