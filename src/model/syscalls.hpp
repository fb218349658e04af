#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/blocking.hpp"
#include "model/kernel_profile.hpp"
#include "model/sched_totals.hpp"

namespace hacoboot {

// The number of a segment's time in user space (HACOBOOT_SYSCALL_USER).
inline constexpr std::uint32_t kUserTime = 0xffffffffU;

// One aggregate the kernel side kept for a boot: the calls of one syscall
// (or the user time) of one thread within one segment of its time, from its
// event at segment_ns to its next one (hacoboot/contract.h).
struct SyscallAggregate {
  std::uint32_t tid = 0;
  std::uint64_t segment_ns = 0;
  std::uint32_t nr = 0;  // kUserTime: user time
  std::uint64_t count = 0;
  std::uint64_t max_ns = 0;
  SchedTotals states;  // their time, by state: total() is the time

  bool operator==(const SyscallAggregate&) const = default;
};

// A launch's aggregates as the loader takes them from the kernel (its
// hacoboot_syscall_key and hacoboot_syscall_totals, one pair after another)
// into `into`; nullopt when the bytes are no whole pairs, a pair's states
// do not add up to its time (it is no such pair), or a key comes twice.
std::optional<std::vector<SyscallAggregate>> decode_syscall_aggregates(std::span<const std::byte> bytes);

// One syscall's figures within a stretch of a thread (a step).
struct SyscallTime {
  std::uint32_t nr = 0;
  std::uint64_t count = 0;
  std::uint64_t max_ns = 0;
  SchedTotals states;

  bool operator==(const SyscallTime&) const = default;
};

// What a step's thread did in [begin, end): its syscalls by time (the most
// first, then by number) and its user time, from the aggregates of the
// segments beginning there. Empty without any.
struct StepSyscalls {
  std::vector<SyscallTime> calls;
  SchedTotals user;
  // Where its calls blocked, the most time first.
  std::vector<BlockingPoint> blocking;
  // Its CPU samples (--kernel-profile); nullopt: not sampled.
  std::optional<StepKernelCpu> kernel_cpu;

  [[nodiscard]] bool empty() const { return calls.empty() && user.total() == 0; }
  // The calls' time by state, all of them.
  [[nodiscard]] SchedTotals in_calls() const;
  // Adds another stretch's (the container's first step: its parent's time
  // from START_FORK to the fork).
  StepSyscalls& operator+=(const StepSyscalls& other);
};

StepSyscalls syscalls_between(const std::vector<SyscallAggregate>& aggregates, std::uint32_t tid,
                              std::uint64_t begin_ns, std::uint64_t end_ns);

// The calls in order: the most time first, then by number.
void sort_by_time(std::vector<SyscallTime>& calls);

}  // namespace hacoboot
