#pragma once

#include "pipeline/pipeline.hpp"
#include "recording/recording.hpp"

namespace hacoboot {

// The cgroup paths a recording holds, as the pipeline's resolver.
CgroupResolver recorded_cgroup_paths(const Recording& recording);

// Feeds a recording's records through `pipeline` as the live run fed them,
// then its kernel counts, then ends every boot in flight.
// The syscall aggregates a recording holds, as the pipeline's source.
SyscallSource recorded_syscalls(const Recording& recording);
// And where they blocked.
BlockingSource recorded_blocking(const Recording& recording);
// And their CPU samples.
KernelProfileSource recorded_kernel_profiles(const Recording& recording);

void replay(const Recording& recording, Pipeline& pipeline);

}  // namespace hacoboot
