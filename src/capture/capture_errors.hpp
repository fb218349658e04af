#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "util/errors.hpp"

namespace hacoboot {

// Errors of the capture stage about a choice its caller made. Their messages
// say what failed and name no command-line option: the command line knows
// which option made the choice and adds it (cli/capture_hints.hpp).

// The haconiwa binary, named without a '/', is nowhere in PATH.
struct HaconiwaMissing {
  std::string why;  // what was looked up where
  std::string name;
  // A file of that name is in the current directory, which the shell would
  // not run either.
  bool in_current_directory = false;
};

// The same where a run cannot start without it.
class HaconiwaNotFound : public UsageError {
 public:
  explicit HaconiwaNotFound(HaconiwaMissing missing) : UsageError(missing.why), missing_(std::move(missing)) {}
  [[nodiscard]] const HaconiwaMissing& missing() const { return missing_; }

 private:
  HaconiwaMissing missing_;
};

// The phase probe cannot take one uprobe_multi link: the link was asked for
// (UsdtAttach::UprobeMulti), or libbpf's perf uprobes would still work.
class UprobeMultiError : public RuntimeError {
 public:
  UprobeMultiError(const std::string& what, bool perf_uprobes_would_do)
      : RuntimeError(what), perf_uprobes_would_do_(perf_uprobes_would_do) {}
  [[nodiscard]] bool perf_uprobes_would_do() const { return perf_uprobes_would_do_; }

 private:
  bool perf_uprobes_would_do_;
};

// A start of the tracer that failed in a way its caller gets past
// (Tracer::start): which way, for it to branch on, and the words.
enum class StartFailureKind : std::uint8_t {
  // Loading the programs failed: the verifier refused them, or libbpf could
  // not relocate them (CO-RE) with the kernel types it was given. The one
  // step of a start that the kernel types can fail: the caller may discard a
  // cached file of them, or name the --btf file. A failure after the load
  // (attaching a probe or a tracepoint) throws, and says nothing of them.
  ProgramLoad,
  // The per-syscall tracepoints could not be used: no ids were found (and no
  // fallback was allowed), or an id no tracepoint has, or another
  // tracepoint's (refused at attach, or whose hook missed the tool's own
  // execve/listen). The kernel types are not at fault: the caller looks the
  // ids up again or falls back to raw_syscalls.
  SyscallTracepoints,
};
struct StartFailure {
  StartFailureKind kind;
  std::string why;
};

}  // namespace hacoboot
