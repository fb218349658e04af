#include "recording/recording_json.hpp"

#include <string>

#include "util/json_integer.hpp"

namespace hacoboot {
namespace {

// An integer field of a recording, which may come from anywhere: a float or
// a value out of Integer's range is a malformed recording, not a cast.
template <typename Integer>
Integer integer_at(const nlohmann::json& json, const char* key) {
  const auto& field = json.at(key);
  const auto value = json_integer<Integer>(field);
  if (!value) throw nlohmann::json::type_error::create(302, std::string(key) + " is no integer in its range", &field);
  return *value;
}

// The same for a field older recordings lack.
template <typename Integer>
Integer integer_or(const nlohmann::json& json, const char* key, Integer absent) {
  return json.contains(key) ? integer_at<Integer>(json, key) : absent;
}

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
                    .peak = integer_at<std::uint64_t>(map, "peak"),
                    .capacity = integer_at<std::uint64_t>(map, "capacity")});
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
          .layout = integer_at<std::uint32_t>(json, "layout"),
          .boot_id = json.at("boot_id").get<std::string>(),
          .start_phase = integer_at<std::int64_t>(json, "start_phase"),
          .command = json.at("command").get<std::string>(),
          .warmup = integer_at<std::uint64_t>(json, "warmup"),
          .phase_names = PhaseNames::parse(json.at("phase_names").get<std::string>(), source + " (phase names)")};
}

RecordedEnd end_from_json(const nlohmann::json& json) {
  return {.counters = {.lost_events = integer_at<std::uint64_t>(json, "lost_events"),
                       .tracked_full = integer_at<std::uint64_t>(json, "tracked_full"),
                       .unaccounted_threads = integer_at<std::uint64_t>(json, "unaccounted_threads"),
                       .untracked_phases = integer_at<std::uint64_t>(json, "untracked_phases"),
                       .repaired_switch_ins = integer_at<std::uint64_t>(json, "repaired_switch_ins"),
                       .syscalls_dropped = integer_or<std::uint64_t>(json, "syscalls_dropped", 0),
                       .blocking_dropped = integer_or<std::uint64_t>(json, "blocking_dropped", 0),
                       .stacks_dropped = integer_or<std::uint64_t>(json, "stacks_dropped", 0),
                       .samples_dropped = integer_or<std::uint64_t>(json, "samples_dropped", 0),
                       .kernel_maps = kernel_maps_from_json(json.value("kernel_maps", nlohmann::json::array()))},
          .tracked_at_exit = integer_at<std::uint64_t>(json, "tracked_at_exit")};
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
  return {.tid = integer_at<std::uint32_t>(json, "tid"),
          .segment_ns = integer_at<std::uint64_t>(json, "segment_ns"),
          .nr = integer_at<std::uint32_t>(json, "nr"),
          .count = integer_at<std::uint64_t>(json, "count"),
          .time_ns = integer_at<std::uint64_t>(json, "time_ns"),
          .frames = json.at("frames").get<std::vector<std::string>>(),
          .waker_tid = integer_at<std::uint32_t>(json, "waker_tid"),
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
    into.hz = integer_at<std::uint32_t>(json, "hz");
    into.sampled_since_ns = json.at("sampled_since_ns").is_null()
                                ? std::nullopt
                                : std::optional(integer_at<std::uint64_t>(json, "sampled_since_ns"));
  }
  for (const auto& sample : json.at("samples")) {
    into.samples.push_back({.tid = integer_at<std::uint32_t>(sample, "tid"),
                            .segment_ns = integer_at<std::uint64_t>(sample, "segment_ns"),
                            .nr = integer_at<std::uint32_t>(sample, "nr"),
                            .user_mode = sample.at("user_mode").get<bool>(),
                            .samples = integer_at<std::uint64_t>(sample, "samples"),
                            .frames = sample.at("frames").get<std::vector<std::string>>()});
  }
}

}  // namespace hacoboot
