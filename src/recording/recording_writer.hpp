#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>

#include "recording/recording.hpp"
#include "util/output_file.hpp"

namespace hacoboot {

// Writes a recording as the records come (docs/recording.md). Flushed by the
// caller after each read of the ring buffer, so that a run killed outright
// leaves a recording of whole frames up to its last flush, readable.
class RecordingWriter {
 public:
  // Creates the file (its path checked beforehand, as every output's) and
  // writes the preamble and the header. Throws UsageError naming the path
  // when it cannot be opened.
  RecordingWriter(const std::string& path, const RecordingHeader& header);

  void record(std::span<const std::byte> bytes);
  // A cgroup id resolved live; each id is written once.
  void cgroup_path(std::uint64_t cgroup_id, const std::string& path);
  // A launch's syscall aggregates, taken when its boot ended.
  void syscalls(std::uint32_t launch, std::span<const std::byte> pairs);
  // And where they blocked: a frame each.
  void blocking(std::uint32_t launch, const std::vector<BlockingAggregate>& aggregates);
  // And its kernel CPU profile: a frame per few sample entries.
  void kernel_profile(std::uint32_t launch, const KernelProfile& profile);
  void flush();
  // The kernel's counts and the trailer; throws RuntimeError when anything
  // written was lost (a full disk).
  void finish(const RecordedEnd& end);

 private:
  void frame(FrameKind kind, std::span<const std::byte> payload);

  std::unique_ptr<OutputFile> file_;
  std::unordered_set<std::uint64_t> resolved_;
  std::uint64_t records_ = 0;
};

}  // namespace hacoboot
