// Kernel CPU, sampled (--kernel-profile): the loader's layout decoded, the
// samples attributed to a step's thread and segments, the short form the
// table names them by, the JSON a reader gets and what a recording keeps.
#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "capture/cpu_sampling.hpp"
#include "hacoboot/contract.h"
#include "model/kernel_profile.hpp"
#include "model/kernel_symbols.hpp"
#include "model/syscalls.hpp"
#include "recording/recording_json.hpp"
#include "report/sched_json.hpp"

namespace hacoboot {
namespace {

constexpr const char* kKallsyms =
    "ffffffff81000000 t perf_swevent_hrtimer\n"
    "ffffffff81100000 T memset_orig\n"
    "ffffffff81200000 T shmem_fill_super\n"
    "ffffffff81300000 T path_mount\n"
    "ffffffff81400000 T _raw_spin_lock\n";

template <typename T>
void append(std::vector<std::byte>& bytes, const T& value) {
  const auto* begin = reinterpret_cast<const std::byte*>(&value);
  bytes.insert(bytes.end(), begin, begin + sizeof value);
}

// perf_event_open says only EINVAL for a frequency above the kernel's
// limit, which the kernel lowers by itself on a busy host: the message names
// the limit and what to ask for.
TEST(KernelProfileRefusal, AFrequencyAboveTheKernelsLimitIsNamed) {
  const auto hint = sampling_refusal_hint(EINVAL, 10000, 5000);
  EXPECT_NE(hint.find("--kernel-profile-hz 10000 is above kernel.perf_event_max_sample_rate, 5000"), std::string::npos)
      << hint;
  EXPECT_NE(hint.find("ask for 5000 Hz or less"), std::string::npos) << hint;
  EXPECT_EQ(sampling_refusal_hint(EINVAL, 999, 5000), "") << "under the limit: the cause is another";
  EXPECT_EQ(sampling_refusal_hint(EINVAL, 10000, std::nullopt), "") << "the limit unknown";
  EXPECT_EQ(sampling_refusal_hint(EACCES, 10000, 5000), "");
}

TEST(KernelSamples, DecodeTheLoadersLayoutUserModeWithoutAStack) {
  std::vector<std::byte> bytes;
  append(bytes, hacoboot_sample_key{.segment_ns = 1'000, .launch = 7, .tid = 12, .nr = SYS_mount, .stack_id = 3});
  append(bytes, hacoboot_sample_entry{.samples = 4, .frames = 3, .reserved = 0});
  for (const std::uint64_t address : {0xffffffff81000010U, 0xffffffff81100008U, 0xffffffff81200004U}) {
    append(bytes, address);
  }
  append(bytes,
         hacoboot_sample_key{
             .segment_ns = 1'000, .launch = 7, .tid = 12, .nr = HACOBOOT_SYSCALL_USER, .stack_id = HACOBOOT_USER_MODE});
  append(bytes, hacoboot_sample_entry{.samples = 2, .frames = 0, .reserved = 0});
  const auto samples = decode_kernel_samples(bytes, KernelSymbols::parse(kKallsyms));
  ASSERT_TRUE(samples.has_value());
  ASSERT_EQ(samples->size(), 2U);
  // The perf event's own frame left out; in a stable order.
  EXPECT_EQ(samples->at(0), (CpuSampleAggregate{.tid = 12,
                                                .segment_ns = 1'000,
                                                .nr = SYS_mount,
                                                .user_mode = false,
                                                .samples = 4,
                                                .frames = {"memset_orig+0x8", "shmem_fill_super+0x4"}}));
  EXPECT_EQ(samples->at(1),
            (CpuSampleAggregate{
                .tid = 12, .segment_ns = 1'000, .nr = kUserTime, .user_mode = true, .samples = 2, .frames = {}}));
  // A cut entry is no entry.
  bytes.pop_back();
  EXPECT_FALSE(decode_kernel_samples(bytes, KernelSymbols::parse(kKallsyms)).has_value());
}

TEST(KernelCpuShortForm, TheInnermostFrameThatIsNoGenericCode) {
  EXPECT_EQ(cpu_frame({"memset_orig+0x8", "_raw_spin_lock+0x1", "shmem_fill_super+0x4", "path_mount+0x3"}),
            "shmem_fill_super");
  EXPECT_EQ(cpu_frame({"pvm_irq_enable+0x19", "_raw_spin_unlock_irqrestore+0x18", "free_percpu+0x2"}), "free_percpu");
  EXPECT_EQ(cpu_frame({"path_mount+0x5", "__x64_sys_mount+0x121"}), "path_mount");
  EXPECT_EQ(
      cpu_frame({"__schedule+0x628", "schedule+0x23", "synchronize_rcu_expedited+0x1ec", "namespace_unlock+0x291"}),
      "synchronize_rcu_expedited");
  // All generic: the innermost; none: empty.
  EXPECT_EQ(cpu_frame({"_raw_spin_lock+0x1", "do_syscall_64+0x71"}), "_raw_spin_lock");
  EXPECT_EQ(cpu_frame({}), "");
}

// As a flame graph draws a sample under its call: outermost first, past
// the syscall's entry, without offsets or modules; outside a syscall (a
// page fault) every frame.
TEST(KernelCpuPath, FromPastTheEntryToWhereTheSampleLanded) {
  EXPECT_EQ(cpu_path({"memset_orig+0x8", "shmem_fill_super+0x4 [shmem]", "path_mount+0x3", "__x64_sys_mount+0x121",
                      "do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"}),
            (std::vector<std::string>{"path_mount", "shmem_fill_super", "memset_orig"}));
  EXPECT_EQ(cpu_path({"clear_page_erms+0x7", "handle_mm_fault+0x3", "exc_page_fault+0x4", "asm_exc_page_fault+0x5"}),
            (std::vector<std::string>{"asm_exc_page_fault", "exc_page_fault", "handle_mm_fault", "clear_page_erms"}));
  EXPECT_EQ(cpu_path({"do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"}), std::vector<std::string>{})
      << "a sample in the entry itself: the call's frame says it";
  EXPECT_EQ(cpu_path({"0xffffffff81000010", "0xffffffff81000020"}),
            (std::vector<std::string>{"0xffffffff81000020", "0xffffffff81000010"}))
      << "raw addresses stay raw";
}

KernelProfile two_segments_profile() {
  return {.hz = 999,
          .sampled_since_ns = 500,
          .samples = {{.tid = 12, .segment_ns = 1'000, .nr = SYS_mount, .samples = 3, .frames = {"path_mount+0x5"}},
                      {.tid = 12, .segment_ns = 2'000, .nr = SYS_mount, .samples = 2, .frames = {"path_mount+0x5"}},
                      {.tid = 12, .segment_ns = 2'000, .nr = kUserTime, .user_mode = true, .samples = 4},
                      {.tid = 12, .segment_ns = 3'000, .nr = SYS_mount, .samples = 9, .frames = {"path_mount+0x5"}},
                      {.tid = 13, .segment_ns = 1'000, .nr = SYS_mount, .samples = 7, .frames = {"path_mount+0x5"}}}};
}

TEST(KernelCpu, AStepHasItsThreadsSamplesOfTheSegmentsBeginningInIt) {
  const auto step = kernel_cpu_between(two_segments_profile(), 12, 1'000, 3'000);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->hz, 999U);
  EXPECT_FALSE(step->partly_sampled);
  EXPECT_EQ(step->samples(), 9U);  // 3 + 2 mount, 4 user; not tid 13's, not the segment at 3000
  EXPECT_EQ(step->points, (std::vector<CpuSamplePoint>{
                              {.nr = SYS_mount, .user_mode = false, .frames = {"path_mount+0x5"}, .samples = 5},
                              {.nr = kUserTime, .user_mode = true, .frames = {}, .samples = 4}}));
}

TEST(KernelCpu, AStepBegunBeforeSamplingBeganIsPartlySampled) {
  auto profile = two_segments_profile();
  profile.sampled_since_ns = 1'500;
  EXPECT_TRUE(kernel_cpu_between(profile, 12, 1'000, 2'000)->partly_sampled);
  EXPECT_FALSE(kernel_cpu_between(profile, 12, 2'000, 3'000)->partly_sampled);
  // Sampling off at the boot's end: no step is known to be whole.
  profile.sampled_since_ns.reset();
  EXPECT_TRUE(kernel_cpu_between(profile, 12, 2'000, 3'000)->partly_sampled);
  // Not sampled at all: no figure, rather than zero samples.
  EXPECT_FALSE(kernel_cpu_between(KernelProfile{}, 12, 1'000, 3'000).has_value());
}

TEST(KernelCpu, StepsAddUpAndTheTableSumsByShortForm) {
  StepSyscalls first;
  first.kernel_cpu = kernel_cpu_between(two_segments_profile(), 12, 1'000, 3'000);
  StepSyscalls second;
  second.kernel_cpu =
      StepKernelCpu{.hz = 999,
                    .partly_sampled = true,
                    .points = {{.nr = SYS_mount, .frames = {"memset_orig+0x8", "shmem_fill_super+0x4"}, .samples = 6},
                               {.nr = SYS_mount, .frames = {"path_mount+0x9"}, .samples = 2}}};
  first += second;
  ASSERT_TRUE(first.kernel_cpu.has_value());
  EXPECT_TRUE(first.kernel_cpu->partly_sampled);
  EXPECT_EQ(first.kernel_cpu->samples(), 17U);
  EXPECT_EQ(
      summarize_kernel_cpu(first.kernel_cpu->points),
      (std::vector<KernelCpuSummary>{{.nr = SYS_mount, .user_mode = false, .where = "path_mount", .samples = 7},
                                     {.nr = SYS_mount, .user_mode = false, .where = "shmem_fill_super", .samples = 6},
                                     {.nr = kUserTime, .user_mode = true, .where = "", .samples = 4}}));
}

TEST(KernelCpuJson, TheStepsSamplesWithTheirFramesAndFrequency) {
  StepSyscalls step;
  EXPECT_TRUE(syscalls_json(step).at("kernel_cpu").is_null());
  step.kernel_cpu = kernel_cpu_between(two_segments_profile(), 12, 1'000, 3'000);
  const auto json = syscalls_json(step).at("kernel_cpu");
  EXPECT_EQ(json.at("hz"), 999);
  EXPECT_EQ(json.at("samples"), 9);
  EXPECT_EQ(json.at("partly_sampled"), false);
  ASSERT_EQ(json.at("stacks").size(), 2U);
  EXPECT_EQ(
      json.at("stacks")[0],
      (nlohmann::ordered_json{
          {"name", "mount"}, {"nr", SYS_mount}, {"user_mode", false}, {"samples", 5}, {"frames", {"path_mount+0x5"}}}));
  EXPECT_EQ(json.at("stacks")[1].at("name"), "user");
  EXPECT_EQ(json.at("stacks")[1].at("user_mode"), true);
}

TEST(KernelProfileRecording, FramesOfAProfileReadBackWhole) {
  auto profile = two_segments_profile();
  KernelProfile read;
  add_kernel_profile_from_json(kernel_profile_json(profile, 0, 2), read, true);
  add_kernel_profile_from_json(kernel_profile_json(profile, 2, profile.samples.size()), read, false);
  EXPECT_EQ(read, profile);
  // Sampling off at the boot's end survives as such.
  profile.sampled_since_ns.reset();
  KernelProfile off;
  add_kernel_profile_from_json(kernel_profile_json(profile, 0, 0), off, true);
  EXPECT_EQ(off.hz, 999U);
  EXPECT_FALSE(off.sampled_since_ns.has_value());
  EXPECT_TRUE(off.samples.empty());
}

}  // namespace
}  // namespace hacoboot
