#include "recording/recording_writer.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "recording/recording_json.hpp"

namespace hacoboot {
namespace {

void append_le(std::vector<std::byte>& out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xffU));
}

std::span<const std::byte> bytes_of(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

}  // namespace

RecordingWriter::RecordingWriter(const std::string& path, const RecordingHeader& header)
    : file_(std::make_unique<OutputFile>(path, OutputFile::Kind::Streamed)) {
  std::vector<std::byte> preamble;
  for (const char c : kRecordingMagic) preamble.push_back(static_cast<std::byte>(c));
  append_le(preamble, kRecordingFormat, 4);
  append_le(preamble, header.layout, 4);
  file_->stream().write(reinterpret_cast<const char*>(preamble.data()), static_cast<std::streamsize>(preamble.size()));
  frame(FrameKind::Header, bytes_of(header_json(header).dump()));
  flush();
}

void RecordingWriter::record(std::span<const std::byte> bytes) {
  frame(FrameKind::Record, bytes);
  ++records_;
}

void RecordingWriter::cgroup_path(std::uint64_t cgroup_id, const std::string& path) {
  if (!resolved_.insert(cgroup_id).second) return;
  std::vector<std::byte> payload;
  append_le(payload, cgroup_id, 8);
  const auto text = bytes_of(path);
  payload.insert(payload.end(), text.begin(), text.end());
  frame(FrameKind::CgroupPath, payload);
}

// In frames of whole pairs, each within kMaxFrameBytes.
void RecordingWriter::syscalls(std::uint32_t launch, std::span<const std::byte> pairs) {
  constexpr std::size_t kPerFrame = (kMaxFrameBytes - 4) / kSyscallPairBytes * kSyscallPairBytes;
  for (std::size_t at = 0; at < pairs.size(); at += kPerFrame) {
    std::vector<std::byte> payload;
    append_le(payload, launch, 4);
    const auto part = pairs.subspan(at, std::min(kPerFrame, pairs.size() - at));
    payload.insert(payload.end(), part.begin(), part.end());
    frame(FrameKind::Syscalls, payload);
  }
}

void RecordingWriter::blocking(std::uint32_t launch, const std::vector<BlockingAggregate>& aggregates) {
  for (const auto& aggregate : aggregates) {
    std::vector<std::byte> payload;
    append_le(payload, launch, 4);
    const auto json = blocking_aggregate_json(aggregate).dump();
    const auto text = bytes_of(json);
    payload.insert(payload.end(), text.begin(), text.end());
    frame(FrameKind::Blocking, payload);
  }
}

void RecordingWriter::kernel_profile(std::uint32_t launch, const KernelProfile& profile) {
  // Each entry's frames are some hundreds of bytes: a frame stays far below kMaxFrameBytes.
  constexpr std::size_t kEntriesPerFrame = 16;
  // One frame at least: a profile without samples still says it was taken.
  for (std::size_t first = 0; first == 0 || first < profile.samples.size(); first += kEntriesPerFrame) {
    const auto end = std::min(profile.samples.size(), first + kEntriesPerFrame);
    std::vector<std::byte> payload;
    append_le(payload, launch, 4);
    const auto json = kernel_profile_json(profile, first, end).dump();
    const auto text = bytes_of(json);
    payload.insert(payload.end(), text.begin(), text.end());
    frame(FrameKind::KernelProfile, payload);
  }
}

void RecordingWriter::flush() {
  file_->stream().flush();
}

void RecordingWriter::finish(const RecordedEnd& end) {
  frame(FrameKind::End, bytes_of(end_json(end).dump()));
  std::vector<std::byte> count;
  append_le(count, records_, 8);
  frame(FrameKind::Trailer, count);
  file_->finish();
}

void RecordingWriter::frame(FrameKind kind, std::span<const std::byte> payload) {
  std::vector<std::byte> head;
  append_le(head, static_cast<std::uint32_t>(kind), 4);
  append_le(head, payload.size(), 4);
  auto& out = file_->stream();
  out.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
  out.write(reinterpret_cast<const char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
}

}  // namespace hacoboot
