// libFuzzer target: recordings (report FILE), read and replayed through the pipeline.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pipeline/pipeline.hpp"
#include "recording/recording_reader.hpp"
#include "recording/replay.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto recording = hacoboot::parse_recording(bytes, "fuzz");
    hacoboot::Pipeline pipeline(hacoboot::recorded_pipeline_config(recording.header, {}),
                                hacoboot::recorded_cgroup_paths(recording));
    hacoboot::replay(recording, pipeline);
    // A recording's records are all it replays: no boot comes from nothing.
    if (recording.records.empty() && pipeline.sinks().summary().boots().listen > 0) __builtin_trap();
  } catch (const hacoboot::UsageError&) {
  }
  return 0;
}
