#pragma once

#include <nlohmann/json.hpp>

#include "recording/recording.hpp"

namespace hacoboot {

// The JSON payloads of the header and end frames, written and read by one
// definition of their keys.
nlohmann::json header_json(const RecordingHeader& header);
nlohmann::json end_json(const RecordedEnd& end);
// Throw nlohmann::json::exception or UsageError (phase names) when malformed.
RecordingHeader header_from_json(const nlohmann::json& json, const std::string& source);
RecordedEnd end_from_json(const nlohmann::json& json);
// A blocking frame's JSON (after its launch id).
nlohmann::json blocking_aggregate_json(const BlockingAggregate& aggregate);
BlockingAggregate blocking_aggregate_from_json(const nlohmann::json& json);
// A kernel profile frame's JSON: the profile's hz and since, and its
// samples [first, end).
nlohmann::json kernel_profile_json(const KernelProfile& profile, std::size_t first, std::size_t end);
// Adds such a frame to `into`: the first of a launch sets its hz and since.
void add_kernel_profile_from_json(const nlohmann::json& json, KernelProfile& into, bool first);

}  // namespace hacoboot
