#pragma once

#include <string>
#include <string_view>

#include "recording/recording.hpp"

namespace hacoboot {

// Reads a recording's bytes; `source` names it in errors. A recording cut
// short (no trailer, a last frame incomplete) is read up to where it was cut
// and says so (Recording::cut). Throws UsageError naming the source (and the
// byte offset) for what is no recording, of a newer format or record layout
// than this build reads, or malformed: a frame longer than kMaxFrameBytes, a
// frame that does not parse, data after the trailer.
Recording parse_recording(std::string_view bytes, const std::string& source);

// The recording at `path`, read whole (at most kMaxRecordingBytes).
Recording read_recording(const std::string& path);

}  // namespace hacoboot
