#pragma once

#include <cstdint>
#include <utility>

#include "capture/capture_errors.hpp"
#include "util/expected.hpp"

namespace hacoboot {

// How a start of the tracer gets past the failures it can (StartFailure),
// apart from the loader: which attempt comes next is decided here, in pure
// code, so that a fake start that fails in each way drives it in the unit
// tests; the CLI's start makes the attempts with the real Tracer and acts on
// each recovery (looks the ids up again, discards the cache, says why).

// Where an attempt's kernel types come from.
enum class KernelTypesFrom : std::uint8_t {
  BtfFile,  // --btf: a load they fail is the file's, named to the user
  Cache,    // the BTF cache: a load they fail discards them for the kernel's
  Kernel,   // the kernel's own BTF: nothing is left to try
};

// The inputs of the next attempt that a recovery changes.
struct StartChoices {
  KernelTypesFrom kernel_types = KernelTypesFrom::Kernel;
  bool ids_from_cache = false;        // the syscall tracepoint ids came from the cache file
  bool raw_syscalls_allowed = false;  // raw_syscalls may replace unusable tracepoints
  bool raw_syscalls = false;          // execve/listen through raw_syscalls already
};

// What to do after an attempt failed.
enum class StartRecovery : std::uint8_t {
  LookUpIdsAgain,      // the cached tracepoint ids proved wrong: look them up afresh
  RawSyscalls,         // fresh ids proved unusable: execve/listen through raw_syscalls
  DiscardCachedTypes,  // the cached kernel types failed the load: the kernel's instead
  GiveUp,              // nothing left to try: the failure is the start's
};

// The recovery from `failure` with `choices`.
StartRecovery recovery_from(const StartFailure& failure, const StartChoices& choices);

// `choices` once `recovery` is made: every recovery changes them for good,
// so that a start makes a few attempts at most.
StartChoices after(StartChoices choices, StartRecovery recovery);

// Attempts a start until one succeeds or no recovery is left: attempt(choices)
// tries once and returns Expected<Started, StartFailure>; recover(recovery,
// failure) makes a recovery before the next attempt. Returns the start, or
// the last failure (the caller says why in its words: the option, the file).
template <typename Attempt, typename Recover>
auto start_with_retries(StartChoices choices, Attempt attempt, Recover recover) {
  for (;;) {
    auto started = attempt(std::as_const(choices));
    if (started) return started;
    const auto recovery = recovery_from(started.error(), choices);
    if (recovery == StartRecovery::GiveUp) return started;
    recover(recovery, started.error());
    choices = after(choices, recovery);
  }
}

}  // namespace hacoboot
