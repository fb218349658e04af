#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/kernel_symbols.hpp"

namespace hacoboot {

// One entry of a boot's kernel CPU profile (--kernel-profile): the samples
// of one thread within one segment of its time, in one call (kUserTime:
// outside any), at one kernel stack, or in user mode.
struct CpuSampleAggregate {
  std::uint32_t tid = 0;
  std::uint64_t segment_ns = 0;
  std::uint32_t nr = 0;
  bool user_mode = false;  // taken in user space: no kernel stack
  std::uint64_t samples = 0;
  // Innermost first, named by KernelSymbols::stack; empty in user mode or
  // when the stack was not taken.
  std::vector<std::string> frames;

  bool operator==(const CpuSampleAggregate&) const = default;
};

// A boot's profile, taken when it ended.
struct KernelProfile {
  std::uint32_t hz = 0;  // the sampling frequency; 0: not sampled
  // Since when the samples were taken without a break up to the boot's
  // end: the perf events are enabled only once the loader sees a boot begin,
  // so a boot's first instants may go unsampled. nullopt: they were off.
  std::optional<std::uint64_t> sampled_since_ns;
  std::vector<CpuSampleAggregate> samples;

  bool operator==(const KernelProfile&) const = default;
};

// A launch's sample entries as the loader takes them (Tracer::take_kernel_samples:
// hacoboot_sample_key, hacoboot_sample_entry, addresses), named by
// `symbols`; nullopt when the bytes are not whole entries.
std::optional<std::vector<CpuSampleAggregate>> decode_kernel_samples(std::span<const std::byte> bytes,
                                                                     const KernelSymbols& symbols);

// Where a step's CPU samples landed: one call at one stack, or user mode.
struct CpuSamplePoint {
  std::uint32_t nr = 0;
  bool user_mode = false;
  std::vector<std::string> frames;
  std::uint64_t samples = 0;

  bool operator==(const CpuSamplePoint&) const = default;
  [[nodiscard]] bool same_place(const CpuSamplePoint& other) const {
    return nr == other.nr && user_mode == other.user_mode && frames == other.frames;
  }
};

// A step's kernel CPU profile: its samples by place, the most first.
struct StepKernelCpu {
  std::uint32_t hz = 0;
  // Sampling began after the step did (in a boot of those summed): its
  // first instants have no sample, and its shares are of what was sampled.
  bool partly_sampled = false;
  std::vector<CpuSamplePoint> points;

  bool operator==(const StepKernelCpu&) const = default;
  [[nodiscard]] std::uint64_t samples() const;
  // Adds another stretch's or boot's (a different frequency keeps the first).
  StepKernelCpu& operator+=(const StepKernelCpu& other);
};

// The samples of thread `tid` in the segments beginning in [begin, end);
// nullopt when the boot was not sampled.
std::optional<StepKernelCpu> kernel_cpu_between(const KernelProfile& profile, std::uint32_t tid, std::uint64_t begin_ns,
                                                std::uint64_t end_ns);

// A step's samples as the table shows them: those of one call whose stacks
// name the same place (cpu_frame) added up, the most first.
struct KernelCpuSummary {
  std::uint32_t nr = 0;
  bool user_mode = false;
  std::string where;  // cpu_frame; empty in user mode
  std::uint64_t samples = 0;

  bool operator==(const KernelCpuSummary&) const = default;
};
std::vector<KernelCpuSummary> summarize_kernel_cpu(const std::vector<CpuSamplePoint>& points);

// The short form of a sampled stack: its innermost frame that is not
// generic code any path runs through (locks, copies and clears of memory,
// allocators, RCU, the syscall entry), without its offset: "shmem_fill_super"
// rather than "memset_orig"; the innermost when all are generic; empty
// without frames.
std::string cpu_frame(const std::vector<std::string>& frames);

// A sampled stack as a flame graph draws it under its call: outermost
// first, function names without their offsets and modules, from the first
// frame past the syscall's entry (the call's own frame says it) down to the
// innermost, where the sample landed: "path_mount", "do_new_mount",
// "vfs_get_tree", "shmem_fill_super". Every frame, reversed, outside a
// syscall (a page fault); empty when the sample landed in the entry itself.
std::vector<std::string> cpu_path(const std::vector<std::string>& frames);

}  // namespace hacoboot
