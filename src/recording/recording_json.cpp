#include "recording/recording_json.hpp"

namespace hacoboot {
namespace {

// The user's phase names (those that are not Haconiwa's) as --phase-names
// reads them back: "NUMBER NAME" lines.
std::string user_phase_names(const PhaseNames& names) {
  std::string text;
  for (std::int64_t phase = 0; phase <= kMaxPhase; ++phase) {
    if (auto name = names.name(phase); name != phase_name(phase)) text += std::to_string(phase) + ' ' + name + '\n';
  }
  return text;
}

nlohmann::json kernel_maps_json(const std::vector<KernelMapUse>& maps) {
  auto json = nlohmann::json::array();
  for (const auto& map : maps) json.push_back({{"map", map.map}, {"peak", map.peak}, {"capacity", map.capacity}});
  return json;
}

// Recordings before the maps' use was recorded have none.
std::vector<KernelMapUse> kernel_maps_from_json(const nlohmann::json& json) {
  std::vector<KernelMapUse> maps;
  for (const auto& map : json) {
    maps.push_back({.map = map.at("map").get<std::string>(),
                    .peak = map.at("peak").get<std::uint64_t>(),
                    .capacity = map.at("capacity").get<std::uint64_t>()});
  }
  return maps;
}

}  // namespace

nlohmann::json header_json(const RecordingHeader& header) {
  return {{"tool_version", header.tool_version},
          {"layout", header.layout},
          {"boot_id", header.boot_id},
          {"clock", "CLOCK_MONOTONIC"},
          {"start_phase", header.start_phase},
          {"command", header.command},
          {"warmup", header.warmup},
          {"phase_names", user_phase_names(header.phase_names)}};
}

nlohmann::json end_json(const RecordedEnd& end) {
  const auto& counters = end.counters;
  return {{"lost_events", counters.lost_events},
          {"tracked_full", counters.tracked_full},
          {"unaccounted_threads", counters.unaccounted_threads},
          {"untracked_phases", counters.untracked_phases},
          {"repaired_switch_ins", counters.repaired_switch_ins},
          {"syscalls_dropped", counters.syscalls_dropped},
          {"blocking_dropped", counters.blocking_dropped},
          {"stacks_dropped", counters.stacks_dropped},
          {"samples_dropped", counters.samples_dropped},
          {"kernel_maps", kernel_maps_json(counters.kernel_maps)},
          {"tracked_at_exit", end.tracked_at_exit}};
}

RecordingHeader header_from_json(const nlohmann::json& json, const std::string& source) {
  return {.tool_version = json.at("tool_version").get<std::string>(),
          .layout = json.at("layout").get<std::uint32_t>(),
          .boot_id = json.at("boot_id").get<std::string>(),
          .start_phase = json.at("start_phase").get<std::int64_t>(),
          .command = json.at("command").get<std::string>(),
          .warmup = json.at("warmup").get<std::uint64_t>(),
          .phase_names = PhaseNames::parse(json.at("phase_names").get<std::string>(), source + " (phase names)")};
}

RecordedEnd end_from_json(const nlohmann::json& json) {
  return {.counters = {.lost_events = json.at("lost_events").get<std::uint64_t>(),
                       .tracked_full = json.at("tracked_full").get<std::uint64_t>(),
                       .unaccounted_threads = json.at("unaccounted_threads").get<std::uint64_t>(),
                       .untracked_phases = json.at("untracked_phases").get<std::uint64_t>(),
                       .repaired_switch_ins = json.at("repaired_switch_ins").get<std::uint64_t>(),
                       .syscalls_dropped = json.value("syscalls_dropped", std::uint64_t{0}),
                       .blocking_dropped = json.value("blocking_dropped", std::uint64_t{0}),
                       .stacks_dropped = json.value("stacks_dropped", std::uint64_t{0}),
                       .samples_dropped = json.value("samples_dropped", std::uint64_t{0}),
                       .kernel_maps = kernel_maps_from_json(json.value("kernel_maps", nlohmann::json::array()))},
          .tracked_at_exit = json.at("tracked_at_exit").get<std::uint64_t>()};
}

nlohmann::json blocking_aggregate_json(const BlockingAggregate& aggregate) {
  return {{"tid", aggregate.tid},
          {"segment_ns", aggregate.segment_ns},
          {"nr", aggregate.nr},
          {"count", aggregate.count},
          {"time_ns", aggregate.time_ns},
          {"frames", aggregate.frames},
          {"waker_tid", aggregate.waker_tid},
          {"waker_frames", aggregate.waker_frames}};
}

BlockingAggregate blocking_aggregate_from_json(const nlohmann::json& json) {
  return {.tid = json.at("tid").get<std::uint32_t>(),
          .segment_ns = json.at("segment_ns").get<std::uint64_t>(),
          .nr = json.at("nr").get<std::uint32_t>(),
          .count = json.at("count").get<std::uint64_t>(),
          .time_ns = json.at("time_ns").get<std::uint64_t>(),
          .frames = json.at("frames").get<std::vector<std::string>>(),
          .waker_tid = json.at("waker_tid").get<std::uint32_t>(),
          .waker_frames = json.at("waker_frames").get<std::vector<std::string>>()};
}

nlohmann::json kernel_profile_json(const KernelProfile& profile, std::size_t first, std::size_t end) {
  auto samples = nlohmann::json::array();
  for (std::size_t i = first; i < end; ++i) {
    const auto& sample = profile.samples[i];
    samples.push_back({{"tid", sample.tid},
                       {"segment_ns", sample.segment_ns},
                       {"nr", sample.nr},
                       {"user_mode", sample.user_mode},
                       {"samples", sample.samples},
                       {"frames", sample.frames}});
  }
  return {{"hz", profile.hz},
          {"sampled_since_ns", profile.sampled_since_ns ? nlohmann::json(*profile.sampled_since_ns) : nlohmann::json()},
          {"samples", std::move(samples)}};
}

void add_kernel_profile_from_json(const nlohmann::json& json, KernelProfile& into, bool first) {
  if (first) {
    into.hz = json.at("hz").get<std::uint32_t>();
    const auto& since = json.at("sampled_since_ns");
    into.sampled_since_ns = since.is_null() ? std::nullopt : std::optional(since.get<std::uint64_t>());
  }
  for (const auto& sample : json.at("samples")) {
    into.samples.push_back({.tid = sample.at("tid").get<std::uint32_t>(),
                            .segment_ns = sample.at("segment_ns").get<std::uint64_t>(),
                            .nr = sample.at("nr").get<std::uint32_t>(),
                            .user_mode = sample.at("user_mode").get<bool>(),
                            .samples = sample.at("samples").get<std::uint64_t>(),
                            .frames = sample.at("frames").get<std::vector<std::string>>()});
  }
}

}  // namespace hacoboot
