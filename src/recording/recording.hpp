#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hacoboot/contract.h"
#include "model/phases.hpp"
#include "pipeline/pipeline.hpp"

namespace hacoboot {

// A recording (docs/recording.md): what a live run read from the kernel,
// kept so that every output can be made again elsewhere, without root or BPF.
// Little-endian throughout: a preamble (kRecordingMagic, the format's and the
// record layout's versions as u32), then frames of a u32 kind, a u32 length
// and that many bytes.
inline constexpr std::string_view kRecordingMagic{"HCBOOTRC", 8};
// The version of the framing and of the frames' payloads. The preamble and
// the header frame that follows it keep their layout in every version, so
// that a build can name the tool that wrote a recording it refuses.
inline constexpr std::uint32_t kRecordingFormat = 4;
// Frames longer than this are refused: a record is a few hundred bytes, a
// cgroup path at most PATH_MAX, a header a few KiB with --phase-names.
inline constexpr std::uint32_t kMaxFrameBytes = std::uint32_t{1} << 16;
// The largest recording read whole into memory (report).
inline constexpr std::size_t kMaxRecordingBytes = std::size_t{1} << 30;

enum class FrameKind : std::uint8_t {  // a u32 in the file
  Header = 1,                          // JSON: RecordingHeader
  Record = 2,                          // a ring-buffer record's bytes as the BPF program wrote them
  CgroupPath = 3,                      // u64 cgroup id, then its path: resolved live
  End = 4,                             // JSON: RecordedEnd, once the ring buffer is drained
  Trailer = 5,                         // u64 count of Record frames: the recording is complete
  // u32 launch id, then some of its syscall aggregates as the loader took
  // them when its boot ended (format 2 on): (hacoboot_syscall_key,
  // hacoboot_syscall_totals) pairs; a launch's may span several frames.
  Syscalls = 6,
  // u32 launch id, then JSON: one of its blocking aggregates (format 3 on),
  // its frames named when it was taken, so that a report elsewhere names
  // them too.
  Blocking = 7,
  // u32 launch id, then JSON: its kernel CPU profile (format 4 on): "hz",
  // "sampled_since_ns" and some of its "samples", named when taken; a
  // launch's may span several frames, the first setting hz and since.
  KernelProfile = 8,
};
inline constexpr FrameKind kLastFrameKind = FrameKind::KernelProfile;
inline constexpr std::size_t kSyscallPairBytes = sizeof(hacoboot_syscall_key) + sizeof(hacoboot_syscall_totals);

// What is needed to read the records later, and the run's settings that
// shape the figures.
struct RecordingHeader {
  std::string tool_version;
  std::uint32_t layout = HACOBOOT_RECORD_LAYOUT_VERSION;
  std::string boot_id;  // the kernel's boot the timestamps belong to; empty: unknown
  std::int64_t start_phase = kPhaseStartSupervisor;
  std::string command;  // the container's init command; empty: its first execve
  std::uint64_t warmup = 0;
  PhaseNames phase_names{};  // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
};

// The kernel side's counts once tracing stopped.
struct RecordedEnd {
  KernelCounters counters{};          // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
  std::uint64_t tracked_at_exit = 0;  // processes the kernel maps still held
};

// A recording read back.
struct Recording {
  RecordingHeader header{};  // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
  std::vector<std::vector<std::byte>> records{};        // NOLINT(readability-redundant-member-init)
  std::map<std::uint64_t, std::string> cgroup_paths{};  // NOLINT(readability-redundant-member-init)
  // Each launch's syscall aggregates, as SyscallSource gives them.
  std::map<std::uint32_t, std::vector<std::byte>> syscalls{};  // NOLINT(readability-redundant-member-init)
  // Each launch's blocking aggregates, as BlockingSource gives them.
  std::map<std::uint32_t, std::vector<BlockingAggregate>> blocking{};  // NOLINT(readability-redundant-member-init)
  // Each launch's kernel CPU profile, as KernelProfileSource gives it.
  std::map<std::uint32_t, KernelProfile> kernel_profiles{};  // NOLINT(readability-redundant-member-init)
  std::optional<RecordedEnd> end{};                          // NOLINT(readability-redundant-member-init)
  // Why the recording is incomplete (no trailer, a frame cut short): what it
  // holds is read, and the report says so. nullopt: complete.
  std::optional<std::string> cut{};  // NOLINT(readability-redundant-member-init)
};

// The header's settings as the pipeline takes them, the outputs' own (sinks) added.
PipelineConfig recorded_pipeline_config(const RecordingHeader& header, BootSinksConfig sinks);

}  // namespace hacoboot
