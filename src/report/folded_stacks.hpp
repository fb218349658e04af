#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/boot.hpp"
#include "model/boot_analysis.hpp"
#include "model/phases.hpp"

namespace hacoboot {

// One stack of a folded-stacks file: its frames from the root, and its value.
struct FoldedStack {
  std::vector<std::string> frames;
  std::uint64_t value = 0;

  bool operator==(const FoldedStack&) const = default;
};

// The user time leaf, beside the syscalls under a step.
inline constexpr std::string_view kUserFrame = "[user]";
// Under a syscall (or kUserFrame), the frame its time blocked goes under.
inline constexpr std::string_view kBlockedFrame = "[blocked]";
// Under a syscall (or kUserFrame), the frame its sampled CPU goes under
// (--kernel-profile), and below it a sample taken in user space.
inline constexpr std::string_view kSampledFrame = "[on CPU, sampled]";
inline constexpr std::string_view kUserModeFrame = "[user mode]";

// A boot's steps that have syscall figures as stacks of
// `boot-N;LANE;STEP;SYSCALL` (STEP: "03 START_UNSHARE" with the phase
// number zero-padded so that steps sort in phase order, "execve", "listen",
// "after last step"; SYSCALL: its name, or kUserFrame for the time in user
// space) valued in ns, and under a syscall its time blocked at each of its
// blocking points, `...;SYSCALL;[blocked];ksys_read;vfs_read;anon_pipe_read`
// (wait_path of the point's kernel stack), then with --kernel-profile its
// sampled CPU, `...;SYSCALL;[on CPU, sampled];path_mount;...;shmem_fill_super`
// (cpu_path of the sample's stack; kUserModeFrame in user space), valued
// samples x the sampling period: an estimate, cut to what the call's time
// leaves. The rest of its time is on `...;SYSCALL` alone. A step's stacks
// add up to its time exactly.
std::vector<FoldedStack> step_stacks(const BootRecord& boot, const BootAnalysis& analysis, const PhaseNames& names);

// Writes stacks as folded-stacks lines, `frame;frame;frame value`, the format
// flamegraph.pl, inferno and speedscope read: one line per distinct stack
// (equal ones added), in order of their frames, without those of value 0.
// A ';' or a control character inside a frame would split it or the line:
// each is written as '_'. Returns the lines written.
std::size_t write_folded_stacks(std::span<const FoldedStack> stacks, std::ostream& out);

// The steps of every started boot (step_stacks of analyse_boot()), written
// as above.
std::size_t write_folded_stacks(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names = {});

}  // namespace hacoboot
