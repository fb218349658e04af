// The recoveries of a tracer start (capture/start_retries.hpp), driven by a
// fake start that fails in each way a real one can, without BPF.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "capture/start_retries.hpp"

namespace hacoboot {
namespace {

// A start that fails as scripted, then succeeds (its value: the attempt's
// number); it keeps the choices of every attempt and the recoveries made.
class FakeStart {
 public:
  explicit FakeStart(std::deque<StartFailureKind> failures) : failures_(std::move(failures)) {}

  Expected<int, StartFailure> run(const StartChoices& first) {
    return start_with_retries(
        first,
        [this](const StartChoices& choices) -> Expected<int, StartFailure> {
          attempts.push_back(choices);
          if (failures_.empty()) return static_cast<int>(attempts.size());
          const auto kind = failures_.front();
          failures_.pop_front();
          return StartFailure{.kind = kind, .why = "failure " + std::to_string(attempts.size())};
        },
        [this](StartRecovery recovery, const StartFailure& failure) {
          recoveries.push_back(recovery);
          whys.push_back(failure.why);
        });
  }

  std::vector<StartChoices> attempts;
  std::vector<StartRecovery> recoveries;
  std::vector<std::string> whys;  // of the failures recovered from

 private:
  std::deque<StartFailureKind> failures_;
};

constexpr auto kTracepoints = StartFailureKind::SyscallTracepoints;
constexpr auto kLoad = StartFailureKind::ProgramLoad;

// The default start: kernel types cached, ids cached, raw_syscalls allowed.
StartChoices cached_everything() {
  return {.kernel_types = KernelTypesFrom::Cache,
          .ids_from_cache = true,
          .raw_syscalls_allowed = true,
          .raw_syscalls = false};
}

TEST(StartRetries, AStartThatWorksIsAttemptedOnce) {
  FakeStart start({});
  const auto started = start.run(cached_everything());
  ASSERT_TRUE(started);
  EXPECT_EQ(*started, 1);
  EXPECT_TRUE(start.recoveries.empty());
}

TEST(StartRetries, WrongCachedIdsAreLookedUpAgainThenUsed) {
  FakeStart start({kTracepoints});
  const auto started = start.run(cached_everything());
  ASSERT_TRUE(started);
  EXPECT_EQ(start.recoveries, std::vector{StartRecovery::LookUpIdsAgain});
  EXPECT_EQ(start.whys, std::vector<std::string>{"failure 1"});
  ASSERT_EQ(start.attempts.size(), 2U);
  EXPECT_FALSE(start.attempts[1].ids_from_cache);
  EXPECT_FALSE(start.attempts[1].raw_syscalls) << "fresh ids are tried before raw_syscalls";
}

TEST(StartRetries, FreshIdsThatFailTooGiveWayToRawSyscalls) {
  FakeStart start({kTracepoints, kTracepoints});
  ASSERT_TRUE(start.run(cached_everything()));
  EXPECT_EQ(start.recoveries, (std::vector{StartRecovery::LookUpIdsAgain, StartRecovery::RawSyscalls}));
  ASSERT_EQ(start.attempts.size(), 3U);
  EXPECT_TRUE(start.attempts[2].raw_syscalls);
}

TEST(StartRetries, UnusableTracepointsWithoutTheFallbackAreTheStartsFailure) {
  FakeStart start({kTracepoints});
  const auto started = start.run({.kernel_types = KernelTypesFrom::Kernel,
                                  .ids_from_cache = false,
                                  .raw_syscalls_allowed = false,
                                  .raw_syscalls = false});
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().kind, kTracepoints);
  EXPECT_EQ(started.error().why, "failure 1");
  EXPECT_TRUE(start.recoveries.empty());
}

TEST(StartRetries, CachedIdsAreLookedUpAgainEvenWithoutTheFallback) {
  FakeStart start({kTracepoints, kTracepoints});
  const auto started = start.run({.kernel_types = KernelTypesFrom::Kernel,
                                  .ids_from_cache = true,
                                  .raw_syscalls_allowed = false,
                                  .raw_syscalls = false});
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().why, "failure 2") << "the fresh ids' failure is the one told";
  EXPECT_EQ(start.recoveries, std::vector{StartRecovery::LookUpIdsAgain});
}

TEST(StartRetries, CachedKernelTypesThatFailTheLoadAreDiscardedForTheKernels) {
  FakeStart start({kLoad});
  ASSERT_TRUE(start.run(cached_everything()));
  EXPECT_EQ(start.recoveries, std::vector{StartRecovery::DiscardCachedTypes});
  ASSERT_EQ(start.attempts.size(), 2U);
  EXPECT_EQ(start.attempts[1].kernel_types, KernelTypesFrom::Kernel);
  EXPECT_TRUE(start.attempts[1].ids_from_cache) << "the ids were not at fault";
}

TEST(StartRetries, ALoadThatFailsWithTheKernelsOrTheBtfFilesTypesIsTheStartsFailure) {
  for (const auto from : {KernelTypesFrom::Kernel, KernelTypesFrom::BtfFile}) {
    SCOPED_TRACE(static_cast<int>(from));
    FakeStart start({kLoad});
    const auto started =
        start.run({.kernel_types = from, .ids_from_cache = true, .raw_syscalls_allowed = true, .raw_syscalls = false});
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().kind, kLoad);
    EXPECT_TRUE(start.recoveries.empty());
  }
}

// Every way at once, in the order a real start meets them: each recovery is
// made once, what an earlier one chose stays, and the start ends.
TEST(StartRetries, EveryRecoveryOnceThenTheLastFailureIsTheStarts) {
  FakeStart start({kTracepoints, kTracepoints, kLoad, kLoad, kTracepoints});
  const auto started = start.run(cached_everything());
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().kind, kLoad);
  EXPECT_EQ(start.recoveries, (std::vector{StartRecovery::LookUpIdsAgain, StartRecovery::RawSyscalls,
                                           StartRecovery::DiscardCachedTypes}));
  ASSERT_EQ(start.attempts.size(), 4U);
  EXPECT_TRUE(start.attempts[3].raw_syscalls) << "raw_syscalls stays chosen once the kernel types change";
}

TEST(StartRetries, ThroughRawSyscallsAlreadyNoTracepointFailureIsGotPast) {
  EXPECT_EQ(recovery_from({.kind = kTracepoints, .why = "?"}, {.kernel_types = KernelTypesFrom::Kernel,
                                                               .ids_from_cache = false,
                                                               .raw_syscalls_allowed = true,
                                                               .raw_syscalls = true}),
            StartRecovery::GiveUp);
}

}  // namespace
}  // namespace hacoboot
