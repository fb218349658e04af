// The syscall aggregates the kernel side keeps per thread segment: decoded
// from the contract's layout, summed over a step's segments, and named.
#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "hacoboot/contract.h"
#include "model/boot_analysis.hpp"
#include "model/syscall_names.hpp"
#include "model/syscalls.hpp"

namespace hacoboot {
namespace {

// One aggregate as the loader takes it: the contract's key, then its totals.
void append(std::vector<std::byte>& bytes, std::uint32_t tid, std::uint64_t segment, std::uint32_t nr,
            std::uint64_t count, const hacoboot_sched_totals& sched) {
  hacoboot_syscall_key key{.segment_ns = segment, .launch = 7, .tid = tid, .nr = nr, .reserved = 0};
  hacoboot_syscall_totals totals{.count = count, .total_ns = 0, .max_ns = 0, .sched = sched};
  for (const auto ns : sched.ns) totals.total_ns += ns;
  totals.max_ns = totals.total_ns;
  const auto* key_bytes = reinterpret_cast<const std::byte*>(&key);
  const auto* totals_bytes = reinterpret_cast<const std::byte*>(&totals);
  bytes.insert(bytes.end(), key_bytes, key_bytes + sizeof key);
  bytes.insert(bytes.end(), totals_bytes, totals_bytes + sizeof totals);
}

TEST(SyscallAggregates, DecodeFromTheKernelsLayoutInAStableOrder) {
  std::vector<std::byte> bytes;
  append(bytes, 12, 2'000, SYS_fsync, 2, {{100, 0, 0, 900}});
  append(bytes, 11, 1'000, SYS_read, 1, {{10, 0, 500, 0}});
  const auto aggregates = decode_syscall_aggregates(bytes);
  ASSERT_TRUE(aggregates.has_value());
  ASSERT_EQ(aggregates->size(), 2U);
  EXPECT_EQ(aggregates->at(0), (SyscallAggregate{.tid = 11,
                                                 .segment_ns = 1'000,
                                                 .nr = SYS_read,
                                                 .count = 1,
                                                 .max_ns = 510,
                                                 .states = {.cpu = 10, .run_queue = 0, .sleep = 500, .io = 0}}));
  EXPECT_EQ(aggregates->at(1).states.io, 900U);
  EXPECT_EQ(aggregates->at(1).count, 2U);
}

TEST(SyscallAggregates, NoWholePairsOrStatesThatDoNotAddUpAreRefused) {
  std::vector<std::byte> bytes;
  append(bytes, 11, 1'000, SYS_read, 1, {{10, 0, 500, 0}});
  EXPECT_FALSE(decode_syscall_aggregates(std::span(bytes).first(bytes.size() - 1)).has_value());
  auto lying = bytes;
  const auto total_at = sizeof(hacoboot_syscall_key) + offsetof(hacoboot_syscall_totals, total_ns);
  const std::uint64_t more = 511;
  std::memcpy(lying.data() + total_at, &more, sizeof more);
  EXPECT_FALSE(decode_syscall_aggregates(lying).has_value());
  EXPECT_TRUE(decode_syscall_aggregates({})->empty());
}

// What a recording's repeated frame or crafted totals would hold: counted,
// they would break "calls + user = step".
TEST(SyscallAggregates, AKeyTwiceOrStatesWhoseSumWrapsAreRefused) {
  std::vector<std::byte> bytes;
  append(bytes, 11, 1'000, SYS_read, 1, {{10, 0, 500, 0}});
  append(bytes, 11, 2'000, SYS_read, 1, {{10, 0, 500, 0}});
  ASSERT_TRUE(decode_syscall_aggregates(bytes).has_value());
  append(bytes, 11, 1'000, SYS_read, 1, {{10, 0, 500, 0}});
  EXPECT_FALSE(decode_syscall_aggregates(bytes).has_value());

  std::vector<std::byte> wrapping;
  constexpr std::uint64_t kHalf = std::uint64_t{1} << 63;
  append(wrapping, 11, 1'000, SYS_read, 1, {{kHalf, kHalf, kHalf, 0}});  // its total: the sum wrapped, kHalf
  EXPECT_FALSE(decode_syscall_aggregates(wrapping).has_value());
}

// A step of a thread holds the segments that begin within it: those of
// other threads, and before or from its end, are another step's.
TEST(SyscallAggregates, AStepSumsTheSegmentsBeginningWithinIt) {
  const std::vector<SyscallAggregate> aggregates{
      {.tid = 11, .segment_ns = 900, .nr = SYS_read, .count = 1, .max_ns = 5, .states = {.sleep = 5}},
      {.tid = 11, .segment_ns = 1'000, .nr = SYS_read, .count = 2, .max_ns = 40, .states = {.cpu = 10, .sleep = 50}},
      {.tid = 11, .segment_ns = 1'000, .nr = kUserTime, .count = 0, .max_ns = 30, .states = {.cpu = 30}},
      {.tid = 11, .segment_ns = 1'100, .nr = SYS_read, .count = 1, .max_ns = 70, .states = {.sleep = 70}},
      {.tid = 11, .segment_ns = 1'100, .nr = SYS_fsync, .count = 1, .max_ns = 200, .states = {.io = 200}},
      {.tid = 11, .segment_ns = 1'100, .nr = kUserTime, .count = 0, .max_ns = 20, .states = {.cpu = 20}},
      {.tid = 12, .segment_ns = 1'000, .nr = SYS_write, .count = 1, .max_ns = 9, .states = {.cpu = 9}},
      {.tid = 11, .segment_ns = 2'000, .nr = SYS_write, .count = 1, .max_ns = 9, .states = {.cpu = 9}},
  };
  const auto step = syscalls_between(aggregates, 11, 1'000, 2'000);
  ASSERT_EQ(step.calls.size(), 2U);
  EXPECT_EQ(step.calls[0], (SyscallTime{.nr = SYS_fsync, .count = 1, .max_ns = 200, .states = {.io = 200}}));
  EXPECT_EQ(step.calls[1],
            (SyscallTime{.nr = SYS_read, .count = 3, .max_ns = 70, .states = {.cpu = 10, .sleep = 120}}));
  EXPECT_EQ(step.user, (SchedTotals{.cpu = 50}));
  EXPECT_EQ(step.in_calls(), (SchedTotals{.cpu = 10, .sleep = 120, .io = 200}));
  EXPECT_TRUE(syscalls_between(aggregates, 11, 3'000, 4'000).empty());
}

// The container's first step counts from START_FORK: its parent's syscalls
// from then to the fork are the step's too.
TEST(SyscallAggregates, TheContainersFirstStepHoldsItsParentsForkingTime) {
  BootRecord boot;
  boot.hpid = 100;
  boot.container_pid = 101;
  boot.start_tid = 100;
  boot.start_ns = 1'000;
  boot.phases = {{1, 1'000}, {2, 1'100}, {11, 1'500}};
  boot.threads = {{.tid = 100,
                   .parent_tid = std::nullopt,
                   .created_ns = 0,
                   .samples = {{1'000, {}, Step{Step::Kind::Phase, 1}},
                               {1'100, {.cpu = 100}, Step{Step::Kind::Phase, 2}},
                               {1'200, {.cpu = 200}, std::nullopt}}},
                  {.tid = 101,
                   .parent_tid = 100,
                   .created_ns = 1'200,
                   .samples = {{1'500, {.cpu = 250, .run_queue = 50}, Step{Step::Kind::Phase, 11}}}}};
  boot.syscalls = {
      {.tid = 100, .segment_ns = 1'100, .nr = SYS_clone, .count = 0, .max_ns = 60, .states = {.cpu = 60}},
      {.tid = 100, .segment_ns = 1'100, .nr = kUserTime, .count = 0, .max_ns = 40, .states = {.cpu = 40}},
      {.tid = 101, .segment_ns = 1'200, .nr = SYS_sethostname, .count = 1, .max_ns = 50, .states = {.cpu = 50}},
      {.tid = 101,
       .segment_ns = 1'200,
       .nr = kUserTime,
       .count = 0,
       .max_ns = 250,
       .states = {.cpu = 200, .run_queue = 50}},
  };
  const auto analysis = analyse_boot(boot);
  const auto first = std::find_if(analysis.steps.begin(), analysis.steps.end(), [](const LaneStep& step) {
    return step.step == Step{Step::Kind::Phase, 11};
  });
  ASSERT_NE(first, analysis.steps.end());
  ASSERT_TRUE(first->states && first->syscalls);
  ASSERT_EQ(first->syscalls->calls.size(), 2U);
  EXPECT_EQ(syscall_name(first->syscalls->calls[0].nr), "clone");
  auto sum = first->syscalls->in_calls();
  sum += first->syscalls->user;
  EXPECT_EQ(sum, *first->states);
}

TEST(SyscallNames, ByLibseccompsTableOrByNumber) {
  EXPECT_EQ(syscall_name(SYS_clock_nanosleep), "clock_nanosleep");
  EXPECT_EQ(syscall_name(SYS_fsync), "fsync");
  EXPECT_EQ(syscall_name(1023), "syscall_1023");
  EXPECT_EQ(syscall_name(kUserTime), "user");
}

}  // namespace
}  // namespace hacoboot
