#include "capture/start_retries.hpp"

namespace hacoboot {

StartRecovery recovery_from(const StartFailure& failure, const StartChoices& choices) {
  switch (failure.kind) {
    case StartFailureKind::SyscallTracepoints:
      // Cached ids are looked up again once: fresh ones that fail too are
      // the kernel's, not the cache's.
      if (choices.ids_from_cache) return StartRecovery::LookUpIdsAgain;
      if (choices.raw_syscalls_allowed && !choices.raw_syscalls) return StartRecovery::RawSyscalls;
      return StartRecovery::GiveUp;
    case StartFailureKind::ProgramLoad:
      // Only a load can be the kernel types' doing, and only a cache's are
      // replaced: a --btf file is the user's choice, the kernel's the last.
      return choices.kernel_types == KernelTypesFrom::Cache ? StartRecovery::DiscardCachedTypes : StartRecovery::GiveUp;
  }
  return StartRecovery::GiveUp;
}

StartChoices after(StartChoices choices, StartRecovery recovery) {
  switch (recovery) {
    case StartRecovery::LookUpIdsAgain: choices.ids_from_cache = false; break;
    case StartRecovery::RawSyscalls: choices.raw_syscalls = true; break;
    case StartRecovery::DiscardCachedTypes: choices.kernel_types = KernelTypesFrom::Kernel; break;
    case StartRecovery::GiveUp: break;
  }
  return choices;
}

}  // namespace hacoboot
