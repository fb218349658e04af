#include "recording/recording_reader.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <optional>

#include "hacoboot/contract.h"
#include "model/boot.hpp"
#include "recording/recording_json.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

constexpr std::size_t kPreambleBytes = kRecordingMagic.size() + 8;
constexpr std::size_t kFrameHeadBytes = 8;

std::uint64_t little_endian(std::string_view bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

struct Frame {
  FrameKind kind;
  std::string_view payload;
};

// The frames of a recording in order, each bounded by kMaxFrameBytes and by
// the bytes there are.
class FrameCursor {
 public:
  FrameCursor(std::string_view bytes, const std::string& source) : bytes_(bytes), source_(source) {}

  // The next frame; nullopt at the end of the bytes, with cut() set when a
  // frame was cut short there.
  std::optional<Frame> next() {
    frame_offset_ = offset_;
    const auto left = bytes_.size() - offset_;
    if (left == 0) return std::nullopt;
    if (left < kFrameHeadBytes) return cut_here(fmt::format("{} bytes of a frame's 8-byte head", left));
    const auto kind = little_endian(bytes_.substr(offset_, 4));
    const auto length = little_endian(bytes_.substr(offset_ + 4, 4));
    if (kind == 0 || kind > static_cast<std::uint32_t>(kLastFrameKind)) {
      throw error(fmt::format("a frame of unknown kind {}", kind));
    }
    if (length > kMaxFrameBytes) {
      throw error(fmt::format("a frame of {} bytes, more than the {} a frame may hold", length, kMaxFrameBytes));
    }
    if (length > left - kFrameHeadBytes) {
      return cut_here(fmt::format("{} of a frame's {} bytes", left - kFrameHeadBytes, length));
    }
    offset_ += kFrameHeadBytes + length;
    return Frame{static_cast<FrameKind>(kind), bytes_.substr(frame_offset_ + kFrameHeadBytes, length)};
  }

  void skip(std::size_t bytes) { offset_ += bytes; }
  // Malformed at the last frame read.
  [[nodiscard]] UsageError error(const std::string& why) const {
    return UsageError{fmt::format("{}: byte {}: {}", printable(source_, kUncut), frame_offset_, why)};
  }
  [[nodiscard]] const std::optional<std::string>& cut() const { return cut_; }

 private:
  std::optional<Frame> cut_here(const std::string& what) {
    cut_ = fmt::format("cut at byte {}: {}", offset_, what);
    offset_ = bytes_.size();
    return std::nullopt;
  }

  std::string_view bytes_;
  const std::string& source_;
  std::size_t offset_ = 0;
  std::size_t frame_offset_ = 0;
  std::optional<std::string> cut_;
};

nlohmann::json json_payload(const Frame& frame, const FrameCursor& cursor) {
  auto json = nlohmann::json::parse(frame.payload, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) throw cursor.error("a header or end frame that is no JSON object");
  return json;
}

// What a header says that its run's command line could not have said, if
// anything: a recording is a file from elsewhere, and what it holds reaches
// terminals and reports as the options would.
std::optional<std::string> implausible(const RecordingHeader& header) {
  if (header.start_phase < 0 || header.start_phase > kMaxPhase) {
    return fmt::format("start phase {} is no phase (0-{})", header.start_phase, kMaxPhase);
  }
  if (header.command.size() >= HACOBOOT_FILENAME_LEN || !is_printable_utf8(header.command)) {
    return "COMMAND '" + printable(header.command) + "' is no COMMAND the tool takes";
  }
  if (header.warmup > kMaxBoots) return fmt::format("warm-up of {} boots is more than --warmup takes", header.warmup);
  if (!is_printable_utf8(header.tool_version) || !is_printable_utf8(header.boot_id)) {
    return "tool version or boot id is not printable UTF-8";
  }
  if (header.layout == 0) return "record layout is 0";
  return std::nullopt;
}

// Kernel symbols, as a recording holds them: the names /proc/kallsyms gives.
void require_printable(const std::vector<std::string>& frames, const FrameCursor& cursor) {
  for (const auto& frame : frames) {
    if (!is_printable_utf8(frame)) throw cursor.error("a kernel frame '" + printable(frame) + "' that no symbol is");
  }
}

// The header, or why this build cannot read the recording: a newer format or
// record layout is refused naming the tool that wrote it.
RecordingHeader read_header(std::string_view bytes, FrameCursor& cursor, const std::string& source) {
  if (bytes.size() < kPreambleBytes || !bytes.starts_with(kRecordingMagic)) {
    throw UsageError(printable(source, kUncut) + ": not a hacoboot-sampler recording (no recording preamble)");
  }
  const auto format = little_endian(bytes.substr(kRecordingMagic.size(), 4));
  const auto layout = little_endian(bytes.substr(kRecordingMagic.size() + 4, 4));
  cursor.skip(kPreambleBytes);
  const auto frame = cursor.next();
  if (!frame) throw UsageError(printable(source, kUncut) + ": a recording cut before its header ends");
  if (frame->kind != FrameKind::Header) throw cursor.error("the first frame is not the header");
  const auto json = json_payload(*frame, cursor);
  if (format > kRecordingFormat || layout > HACOBOOT_RECORD_LAYOUT_VERSION) {
    // A newer tool's header is not this one's to read: only a string names it.
    const auto version = json.is_object() ? json.find("tool_version") : json.end();
    const auto tool = version != json.end() && version->is_string() ? version->get<std::string>() : std::string("?");
    throw UsageError(fmt::format(
        "{}: recorded by hacoboot-sampler {} with recording format {} and record layout {}; this build reads up "
        "to format {} and layout {}: report it with that version or a newer one",
        printable(source, kUncut), printable(tool), format, layout, kRecordingFormat, HACOBOOT_RECORD_LAYOUT_VERSION));
  }
  try {
    auto header = header_from_json(json, source);
    if (format == 0) throw cursor.error("recording format 0, which no build wrote");
    if (header.layout != layout) throw cursor.error("the header's layout differs from the preamble's");
    if (const auto why = implausible(header)) throw cursor.error("a header whose " + *why);
    return header;
  } catch (const nlohmann::json::exception& e) {
    throw cursor.error(std::string("a malformed header: ") + e.what());
  }
}

void read_cgroup_path(const Frame& frame, const FrameCursor& cursor, Recording& recording) {
  if (frame.payload.size() < 8) throw cursor.error("a cgroup path frame without its 8-byte id");
  recording.cgroup_paths[little_endian(frame.payload.substr(0, 8))] = std::string(frame.payload.substr(8));
}

void read_syscalls(const Frame& frame, const FrameCursor& cursor, Recording& recording) {
  if (frame.payload.size() < 4 || (frame.payload.size() - 4) % kSyscallPairBytes != 0) {
    throw cursor.error("a syscalls frame that is no launch id and whole aggregates");
  }
  const auto launch = static_cast<std::uint32_t>(little_endian(frame.payload.substr(0, 4)));
  const auto* data = reinterpret_cast<const std::byte*>(frame.payload.data());
  auto& pairs = recording.syscalls[launch];
  pairs.insert(pairs.end(), data + 4, data + frame.payload.size());
}

void read_blocking(const Frame& frame, const FrameCursor& cursor, Recording& recording) {
  if (frame.payload.size() < 4) throw cursor.error("a blocking frame without its launch id");
  const auto launch = static_cast<std::uint32_t>(little_endian(frame.payload.substr(0, 4)));
  auto json = nlohmann::json::parse(frame.payload.substr(4), nullptr, /*allow_exceptions=*/false);
  try {
    if (!json.is_object()) throw cursor.error("a blocking frame that is no JSON object");
    recording.blocking[launch].push_back(blocking_aggregate_from_json(json));
    require_printable(recording.blocking[launch].back().frames, cursor);
    require_printable(recording.blocking[launch].back().waker_frames, cursor);
  } catch (const nlohmann::json::exception& e) {
    throw cursor.error(std::string("a malformed blocking frame: ") + e.what());
  }
}

void read_kernel_profile(const Frame& frame, const FrameCursor& cursor, Recording& recording) {
  if (frame.payload.size() < 4) throw cursor.error("a kernel profile frame without its launch id");
  const auto launch = static_cast<std::uint32_t>(little_endian(frame.payload.substr(0, 4)));
  auto json = nlohmann::json::parse(frame.payload.substr(4), nullptr, /*allow_exceptions=*/false);
  try {
    if (!json.is_object()) throw cursor.error("a kernel profile frame that is no JSON object");
    const bool first = !recording.kernel_profiles.contains(launch);
    auto& profile = recording.kernel_profiles[launch];
    const auto before = profile.samples.size();
    add_kernel_profile_from_json(json, profile, first);
    for (auto sample = profile.samples.begin() + static_cast<std::ptrdiff_t>(before); sample != profile.samples.end();
         ++sample) {
      require_printable(sample->frames, cursor);
    }
  } catch (const nlohmann::json::exception& e) {
    throw cursor.error(std::string("a malformed kernel profile frame: ") + e.what());
  }
}

// One frame after the header; returns whether it was the trailer.
bool read_frame(const Frame& frame, const FrameCursor& cursor, Recording& recording) {
  switch (frame.kind) {
    case FrameKind::Record: {
      // Shorter than any record the kernel side writes, and no bound on how
      // many a file of a given size holds: refused.
      if (frame.payload.size() < HACOBOOT_EVENT_BASE_SIZE) {
        throw cursor.error(fmt::format("a record of {} bytes, fewer than the {} of the smallest", frame.payload.size(),
                                       HACOBOOT_EVENT_BASE_SIZE));
      }
      const auto* data = reinterpret_cast<const std::byte*>(frame.payload.data());
      recording.records.emplace_back(data, data + frame.payload.size());
      return false;
    }
    case FrameKind::CgroupPath: read_cgroup_path(frame, cursor, recording); return false;
    case FrameKind::Syscalls: read_syscalls(frame, cursor, recording); return false;
    case FrameKind::Blocking: read_blocking(frame, cursor, recording); return false;
    case FrameKind::KernelProfile: read_kernel_profile(frame, cursor, recording); return false;
    case FrameKind::End: try { recording.end = end_from_json(json_payload(frame, cursor));
      } catch (const nlohmann::json::exception& e) {
        throw cursor.error(std::string("a malformed end frame: ") + e.what());
      }
      return false;
    case FrameKind::Trailer:
      if (frame.payload.size() != 8 || little_endian(frame.payload) != recording.records.size()) {
        throw cursor.error(
            fmt::format("a trailer that does not count the {} records before it", recording.records.size()));
      }
      return true;
    case FrameKind::Header: break;
  }
  throw cursor.error("a second header");
}

}  // namespace

Recording parse_recording(std::string_view bytes, const std::string& source) {
  FrameCursor cursor(bytes, source);
  Recording recording{.header = read_header(bytes, cursor, source)};
  bool complete = false;
  while (const auto frame = cursor.next()) {
    if (complete) throw cursor.error("data after the trailer");
    complete = read_frame(*frame, cursor, recording);
  }
  if (cursor.cut()) {
    recording.cut = cursor.cut();
  } else if (!complete) {
    recording.cut = fmt::format("cut after {} bytes: no trailer (the recording run did not end)", bytes.size());
  }
  return recording;
}

Recording read_recording(const std::string& path) {
  return parse_recording(read_input_file(path, "report", kMaxRecordingBytes), path);
}

}  // namespace hacoboot
