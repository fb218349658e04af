#include "recording/replay.hpp"

#include <span>

namespace hacoboot {

CgroupResolver recorded_cgroup_paths(const Recording& recording) {
  return [&paths = recording.cgroup_paths](std::uint64_t cgroup_id) {
    const auto found = paths.find(cgroup_id);
    return found == paths.end() ? std::string() : found->second;
  };
}

SyscallSource recorded_syscalls(const Recording& recording) {
  return [&syscalls = recording.syscalls](std::uint32_t launch) {
    const auto found = syscalls.find(launch);
    return found == syscalls.end() ? std::vector<std::byte>() : found->second;
  };
}

BlockingSource recorded_blocking(const Recording& recording) {
  return [&blocking = recording.blocking](std::uint32_t launch) {
    const auto found = blocking.find(launch);
    return found == blocking.end() ? std::vector<BlockingAggregate>() : found->second;
  };
}

KernelProfileSource recorded_kernel_profiles(const Recording& recording) {
  return [&profiles = recording.kernel_profiles](std::uint32_t launch, std::uint64_t /*at_ns*/) {
    const auto found = profiles.find(launch);
    return found == profiles.end() ? KernelProfile() : found->second;
  };
}

void replay(const Recording& recording, Pipeline& pipeline) {
  for (const auto& record : recording.records) pipeline.on_record(std::span(record));
  if (recording.end) pipeline.set_kernel_counters(recording.end->counters);
  pipeline.finish();
}

}  // namespace hacoboot
