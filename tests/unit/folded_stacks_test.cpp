// The folded-stacks file (--stacks): a boot's steps as boot;lane;step;syscall
// stacks valued in ns, which flame graph tools read.
#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "model/blocking.hpp"
#include "model/boot_analysis.hpp"
#include "model/kernel_profile.hpp"
#include "model/syscalls.hpp"
#include "report/folded_stacks.hpp"

namespace hacoboot {
namespace {

BootRecord boot_three() {
  BootRecord boot;
  boot.sequence = 3;
  boot.hpid = 300;
  boot.start_ns = 1'000;
  return boot;
}

LaneStep step_with(Lane lane, std::optional<Step> step, std::uint64_t begin, std::uint64_t end,
                   std::optional<StepSyscalls> syscalls) {
  LaneStep row;
  row.lane = lane;
  row.step = step;
  row.begin_ns = begin;
  row.end_ns = end;
  row.syscalls = std::move(syscalls);
  return row;
}

// A read's kernel stack where it blocked on a pipe, innermost first, as
// decode_blocking names it.
const std::vector<std::string> kPipeRead{"__schedule+0x628",
                                         "schedule+0x23",
                                         "anon_pipe_read+0x4fa",
                                         "vfs_read+0x397",
                                         "ksys_read+0xc3",
                                         "do_syscall_64+0x71",
                                         "entry_SYSCALL_64_after_hwframe+0x76"};

// START_FORK (phase 2) of the supervisor: an fsync and a read beside its user
// time, 1'500 ns in all; 250 ns of the read blocked on a pipe, 700 of the
// fsync where no stack was taken; execve of the container: user time alone;
// phase 13 of the container without figures; the container's time after its
// last step.
BootAnalysis analysis_of_boot_three() {
  BootAnalysis analysis;
  analysis.steps = {
      step_with(Lane::Supervisor, Step{Step::Kind::Phase, 2}, 1'000, 2'500,
                StepSyscalls{.calls = {{.nr = SYS_fsync, .count = 1, .max_ns = 900, .states = {.cpu = 100, .io = 800}},
                                       {.nr = SYS_read, .count = 3, .max_ns = 200, .states = {.sleep = 300}}},
                             .user = {.cpu = 250, .run_queue = 50},
                             .blocking = {{.nr = SYS_fsync, .count = 1, .time_ns = 700},
                                          {.nr = SYS_read,
                                           .frames = kPipeRead,
                                           .waker_tid = 301,
                                           .waker_lane = Lane::Container,
                                           .waker_frames = {"try_to_wake_up+0x3b6", "anon_pipe_write+0x3ad"},
                                           .count = 2,
                                           .time_ns = 250}}}),
      step_with(Lane::Container, Step{Step::Kind::Phase, 13}, 2'500, 3'000, std::nullopt),
      step_with(Lane::Container, Step{Step::Kind::Execve}, 3'000, 3'700,
                StepSyscalls{.calls = {}, .user = {.cpu = 700}}),
      step_with(
          Lane::Container, std::nullopt, 3'700, 3'800,
          StepSyscalls{.calls = {{.nr = SYS_write, .count = 1, .max_ns = 100, .states = {.cpu = 100}}}, .user = {}}),
  };
  return analysis;
}

std::string folded(const std::vector<FoldedStack>& stacks) {
  std::ostringstream out;
  write_folded_stacks(stacks, out);
  return out.str();
}

// A call's blocked time goes under it, below [blocked], as the path from
// its entry to the wait (the syscall entry and the scheduler's frames
// left out); the rest of its time stays on the call's own line.
TEST(FoldedStacks, EachSyscallAndTheUserTimeIsALeafUnderBootLaneAndStep) {
  const auto stacks = step_stacks(boot_three(), analysis_of_boot_three(), PhaseNames{});
  EXPECT_EQ(folded(stacks),
            "boot-3;container;after last step;write 100\n"
            "boot-3;container;execve;[user] 700\n"
            "boot-3;supervisor;02 START_FORK;[user] 300\n"
            "boot-3;supervisor;02 START_FORK;fsync 200\n"
            "boot-3;supervisor;02 START_FORK;fsync;[blocked] 700\n"
            "boot-3;supervisor;02 START_FORK;read 50\n"
            "boot-3;supervisor;02 START_FORK;read;[blocked];ksys_read;vfs_read;anon_pipe_read 250\n");
}

TEST(FoldedStacks, AStepsStacksAddUpToItsTime) {
  const auto analysis = analysis_of_boot_three();
  std::map<std::string, std::uint64_t> by_step;
  for (const auto& stack : step_stacks(boot_three(), analysis, PhaseNames{})) {
    ASSERT_GE(stack.frames.size(), 4U);
    by_step[stack.frames.at(2)] += stack.value;
  }
  EXPECT_EQ(by_step,
            (std::map<std::string, std::uint64_t>{{"02 START_FORK", 1'500}, {"execve", 700}, {"after last step", 100}}))
      << "phase 13 has no figures, so no stack";
}

// A wait outside any call (a page fault's) goes under the user time; a
// point's time beyond its call's (figures that disagree) never makes a
// step's lines add up to more than its time.
TEST(FoldedStacks, UserTimeWaitsGoUnderTheUserFrameAndBlockedTimeNeverExceedsItsCall) {
  auto analysis = analysis_of_boot_three();
  auto& syscalls = *analysis.steps.front().syscalls;
  syscalls.blocking = {{.nr = kUserTime,
                        .frames = {"schedule+0x23", "io_schedule+0x4", "folio_wait_bit+0x1", "filemap_fault+0x2",
                                   "handle_mm_fault+0x3", "exc_page_fault+0x4", "asm_exc_page_fault+0x5"},
                        .count = 1,
                        .time_ns = 40},
                       {.nr = SYS_read, .frames = kPipeRead, .count = 1, .time_ns = 5'000}};
  EXPECT_EQ(folded(step_stacks(boot_three(), analysis, PhaseNames{})),
            "boot-3;container;after last step;write 100\n"
            "boot-3;container;execve;[user] 700\n"
            "boot-3;supervisor;02 START_FORK;[user] 260\n"
            "boot-3;supervisor;02 START_FORK;[user];[blocked];asm_exc_page_fault;exc_page_fault;handle_mm_fault;"
            "filemap_fault;folio_wait_bit 40\n"
            "boot-3;supervisor;02 START_FORK;fsync 900\n"
            "boot-3;supervisor;02 START_FORK;read;[blocked];ksys_read;vfs_read;anon_pipe_read 300\n");
}

// A mount's stack where a CPU sample landed, innermost first, as
// decode_kernel_samples names it.
const std::vector<std::string> kMountSample{
    "memset_orig+0x33", "shmem_fill_super+0x1c4", "vfs_get_tree+0x29",  "do_new_mount+0x17a",
    "path_mount+0x1ab", "__x64_sys_mount+0x11d",  "do_syscall_64+0x82", "entry_SYSCALL_64_after_hwframe+0x76"};

// The container's step 17 with --kernel-profile at 1000 Hz (a sample is
// 1 ms): a mount of 3 ms, 0.4 ms of it blocked, its samples given; 1.2 ms
// of user time, one sample of it in user mode.
BootAnalysis sampled_mount(std::uint64_t mount_samples) {
  BootAnalysis analysis;
  const std::uint64_t begin = 10'000'000;
  analysis.steps = {step_with(
      Lane::Container, Step{Step::Kind::Phase, 17}, begin, begin + 4'200'000,
      StepSyscalls{
          .calls = {{.nr = SYS_mount, .count = 1, .max_ns = 3'000'000, .states = {.cpu = 2'600'000, .sleep = 400'000}}},
          .user = {.cpu = 1'200'000},
          .blocking = {{.nr = SYS_mount, .frames = kPipeRead, .count = 1, .time_ns = 400'000}},
          .kernel_cpu = StepKernelCpu{.hz = 1'000,
                                      .partly_sampled = true,
                                      .points = {{.nr = SYS_mount, .frames = kMountSample, .samples = mount_samples},
                                                 {.nr = kUserTime, .user_mode = true, .samples = 1}}}})};
  return analysis;
}

std::uint64_t total_of(const std::vector<FoldedStack>& stacks) {
  std::uint64_t total = 0;
  for (const auto& stack : stacks) total += stack.value;
  return total;
}

// With --kernel-profile a call's samples go under it, below [on CPU,
// sampled], as the path from its entry to where they landed, each worth a
// period of the sampling clock; a step whose first instants were not
// sampled is still drawn.
TEST(FoldedStacks, SampledKernelCpuGoesUnderItsCallWorthSamplesTimesThePeriod) {
  const auto stacks = step_stacks(boot_three(), sampled_mount(2), PhaseNames{});
  EXPECT_EQ(
      folded(stacks),
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;[user] 200000\n"
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;[user];[on CPU, sampled];[user mode] 1000000\n"
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;mount 600000\n"
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;mount;[blocked];ksys_read;vfs_read;anon_pipe_read 400000\n"
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;mount;[on CPU, sampled];path_mount;do_new_mount;vfs_get_tree;"
      "shmem_fill_super;memset_orig 2000000\n");
  EXPECT_EQ(total_of(stacks), 4'200'000U);
}

// Samples are an estimate: more of them than the call's time left after
// its blocked time are cut to it, and the step's lines still add up.
TEST(FoldedStacks, SampledTimeNeverMakesAStepAddUpToMoreThanItsTime) {
  const auto stacks = step_stacks(boot_three(), sampled_mount(5), PhaseNames{});
  EXPECT_EQ(total_of(stacks), 4'200'000U);
  EXPECT_EQ(
      folded(stacks),
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;[user] 200000\n"
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;[user];[on CPU, sampled];[user mode] 1000000\n"
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;mount;[blocked];ksys_read;vfs_read;anon_pipe_read 400000\n"
      "boot-3;container;17 CONTAINER_UID_MAPPING_SETUP;mount;[on CPU, sampled];path_mount;do_new_mount;vfs_get_tree;"
      "shmem_fill_super;memset_orig 2600000\n");
}

// A recording is read as written: a count whose width would wrap 2^64
// still fills the call, it does not wrap to a sliver.
TEST(FoldedStacks, ASampleCountBeyondAnyRunStillFillsItsCall) {
  const auto stacks =
      step_stacks(boot_three(), sampled_mount(std::numeric_limits<std::uint64_t>::max() / 1'000), PhaseNames{});
  EXPECT_EQ(total_of(stacks), 4'200'000U);
  EXPECT_NE(folded(stacks).find("memset_orig 2600000\n"), std::string::npos) << folded(stacks);
}

TEST(FoldedStacks, PhaseNamesComeFromTheGivenNames) {
  const auto names = PhaseNames::parse("2 MY_FORK\n", "names");
  const auto stacks = step_stacks(boot_three(), analysis_of_boot_three(), names);
  ASSERT_FALSE(stacks.empty());
  EXPECT_EQ(stacks.front().frames.at(2), "02 MY_FORK");
}

TEST(FoldedStacks, EqualStacksAreOneLineAndEmptyOnesNone) {
  const std::vector<FoldedStack> stacks{
      {{"boot-1", "supervisor", "read"}, 10},
      {{"boot-1", "supervisor", "read"}, 5},
      {{"boot-1", "supervisor", "write"}, 0},
  };
  std::ostringstream out;
  EXPECT_EQ(write_folded_stacks(stacks, out), 1U);
  EXPECT_EQ(out.str(), "boot-1;supervisor;read 15\n");
}

TEST(FoldedStacks, AFrameNeverSplitsIntoTwoFramesOrTwoLines) {
  EXPECT_EQ(folded({{{"boot-1", "a;b", "c\nd"}, 7}}), "boot-1;a_b;c_d 7\n");
}

// Kernel frames where a call blocked go under its syscall: the writer takes
// any depth.
TEST(FoldedStacks, DeeperFramesUnderASyscallAreKept) {
  EXPECT_EQ(folded({{{"boot-1", "container", "18 CONTAINER_CHROOTED", "umount2", "synchronize_rcu_expedited"}, 600},
                    {{"boot-1", "container", "18 CONTAINER_CHROOTED", "umount2"}, 40}}),
            "boot-1;container;18 CONTAINER_CHROOTED;umount2 40\n"
            "boot-1;container;18 CONTAINER_CHROOTED;umount2;synchronize_rcu_expedited 600\n");
}

}  // namespace
}  // namespace hacoboot
