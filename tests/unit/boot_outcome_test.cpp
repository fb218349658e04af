// What a boot came to (complete, failed, cut off by the end of tracing), and
// where failed boots failed: the counts and failure groups of every summary.
#include <gtest/gtest.h>

#include <csignal>
#include <vector>

#include "event_builders.hpp"
#include "model/summary.hpp"
#include "report/report.hpp"
#include "util/wait_status.hpp"

namespace hacoboot {
namespace {

using test::RecordingTracker;
using test::started_boot;

constexpr int kExited1 = 1 << 8;  // wait(2) statuses, as the kernel's exit_code
constexpr int kKilled = SIGKILL;

// One launch: CLI-less supervisor sv, container sv + 1, up to container
// phase `last_phase` (11..20), then what `then` adds.
std::vector<Event> launch_to(std::uint64_t t0, std::uint32_t sv, std::int64_t last_phase) {
  const std::uint32_t child = sv + 1;
  std::vector<Event> events{ev::phase(t0, sv, sv, 1), ev::phase(t0 + 100, sv, sv, 2),
                            ev::fork(t0 + 110, sv, sv, child, Role::Container)};
  for (std::int64_t phase = 11; phase <= last_phase; ++phase) {
    events.push_back(ev::phase(t0 + 200 + static_cast<std::uint64_t>(phase), child, sv, phase));
  }
  return events;
}

// The container dies with `status`; the supervisor goes on with its own
// phases (END_SETUP...CLEANUP) and exits 1, as Haconiwa's does.
std::vector<Event> failing_launch(std::uint64_t t0, std::uint32_t sv, std::int64_t last_phase, int status) {
  auto events = launch_to(t0, sv, last_phase);
  events.push_back(ev::exit(t0 + 300, sv + 1, sv, Role::Container, status));
  for (const std::int64_t phase : {3, 4, 5, 6}) {
    events.push_back(ev::phase(t0 + 400 + static_cast<std::uint64_t>(phase), sv, sv, phase));
  }
  events.push_back(ev::exit(t0 + 500, sv, sv, Role::Launcher, kExited1));
  return events;
}

Summary summary_of(const std::vector<BootRecord>& boots) {
  Summary summary;
  for (const auto& boot : boots) summary.add(boot);
  return summary;
}

TEST(WaitStatus, InWords) {
  EXPECT_EQ(describe_wait_status(0), "exited 0");
  EXPECT_EQ(describe_wait_status(kExited1), "exited 1");
  EXPECT_EQ(describe_wait_status(127 << 8), "exited 127");
  EXPECT_EQ(describe_wait_status(kKilled), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(describe_wait_status(SIGSEGV | 0x80), "killed by signal 11 (SIGSEGV)") << "core dumped";
}

TEST(BootOutcome, CutOffByTheStopOfTracingIsInFlightNotIncomplete) {
  RecordingTracker rt;
  rt.feed(launch_to(1'000, 200, 15));
  rt.feed(launch_to(2'000, 300, 20));
  rt.tracker().finish_all();
  ASSERT_EQ(rt.done().size(), 2u);
  EXPECT_EQ(rt.done()[0].outcome(), BootOutcome::InFlight);
  EXPECT_EQ(rt.done()[0].failure(), std::nullopt);

  const auto s = summary_of(rt.done());
  EXPECT_EQ(s.boots().started, 2u);
  EXPECT_EQ(s.boots().in_flight, 2u);
  EXPECT_EQ(s.boots().incomplete, 0u);
  EXPECT_TRUE(s.boots().failures.empty());
}

TEST(BootOutcome, ASupervisorStillWaitingForItsDeadContainerAtTheStopFailed) {
  RecordingTracker rt;
  auto events = launch_to(1'000, 200, 17);
  events.push_back(ev::exit(1'300, 201, 200, Role::Container, kExited1));
  rt.feed(events);
  rt.tracker().finish_all();
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].end, BootEnd::TracingStopped);
  EXPECT_EQ(rt.done()[0].outcome(), BootOutcome::Failed);
  EXPECT_EQ(summary_of(rt.done()).boots().incomplete, 1u);
}

TEST(BootOutcome, AFailedContainersLastStepIsItsOwnNotTheSupervisorsAfterIt) {
  RecordingTracker rt;
  rt.feed(failing_launch(1'000, 200, 17, kExited1));
  ASSERT_EQ(rt.done().size(), 1u);
  const auto failure = rt.done()[0].failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->last_step, (Step{Step::Kind::Phase, 17})) << "not the supervisor's CLEANUP after it";
  EXPECT_EQ(failure->process, FailedProcess::Container);
  EXPECT_EQ(failure->wait_status, kExited1);
  EXPECT_EQ(failure->end, BootEnd::Exited);
  EXPECT_EQ(describe_failure(*failure, {}), "container exited 1 after 17 CONTAINER_UID_MAPPING_SETUP");
}

TEST(BootOutcome, AContainerDeadBeforeItsFirstPhaseFailedAfterTheFork) {
  RecordingTracker rt;
  rt.feed(failing_launch(1'000, 200, 10, kKilled));
  const auto failure = rt.done().at(0).failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(describe_failure(*failure, {}), "container killed by signal 9 (SIGKILL) after 2 START_FORK");
}

TEST(BootOutcome, ASupervisorDeadBeforeItsForkIsTheFailedProcess) {
  RecordingTracker rt;
  rt.feed({ev::phase(1'000, 200, 200, 1), ev::exit(1'500, 200, 200, Role::Launcher, kKilled)});
  ASSERT_EQ(rt.done().size(), 1u);
  const auto failure = rt.done()[0].failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->process, FailedProcess::Supervisor);
  EXPECT_EQ(describe_failure(*failure, {}), "supervisor killed by signal 9 (SIGKILL) after 1 START_SV");
}

TEST(BootOutcome, AContainerThatExitedAfterExecveWithoutListeningFailedAfterExecve) {
  RecordingTracker rt;
  auto events = launch_to(1'000, 200, 21);
  events.push_back(ev::exec(1'250, 201, 200, "/app"));
  events.push_back(ev::exit(1'300, 201, 200, Role::Container, 0));
  events.push_back(ev::exit(1'400, 200, 200, Role::Launcher, 0));
  rt.feed(events);
  const auto failure = rt.done().at(0).failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(describe_failure(*failure, {}), "container exited 0 after execve");
}

TEST(BootOutcome, AnExitNeverSeenSaysWhyTrackingEnded) {
  RecordingTracker rt;
  rt.feed(launch_to(1'000, 200, 13));
  rt.tracker().expire_vanished([](std::uint32_t) { return false; });
  const auto failure = rt.done().at(0).failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->wait_status, std::nullopt);
  EXPECT_EQ(describe_failure(*failure, {}), "container ended unseen (vanished) after 13 CONTAINER_FILESYSTEM_SETUP");
}

TEST(BootCounts, FailedBootsGroupByLastStepAndEndMostBootsFirst) {
  RecordingTracker rt;
  rt.feed(failing_launch(1'000, 200, 17, kExited1));
  rt.feed(failing_launch(2'000, 300, 13, kKilled));
  rt.feed(failing_launch(3'000, 400, 17, kExited1));
  rt.feed(failing_launch(4'000, 500, 17, kKilled));
  const auto boots = summary_of(rt.done()).boots();
  EXPECT_EQ(boots.incomplete, 4u);
  const auto groups = boots.failures_by_count();
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(describe_failure(groups[0].first, {}), "container exited 1 after 17 CONTAINER_UID_MAPPING_SETUP");
  EXPECT_EQ(groups[0].second, 2u);
  EXPECT_EQ(groups[1].second, 1u);
  EXPECT_EQ(groups[2].second, 1u);
}

TEST(BootCounts, FailureGroupsStayBoundedButEveryFailedBootCounts) {
  BootCounts counts;
  const auto groups = BootCounts::kMaxFailureGroups + 10;
  for (std::size_t i = 0; i < groups; ++i) {
    auto boot = started_boot(1'000, {{1, 1'000}, {2, 1'100}, {11, 1'200}}, std::nullopt, std::nullopt);
    boot.container_pid = 7;
    boot.container_exit_ns = 1'300;
    boot.container_exit_status = static_cast<int>(i) << 8;  // a group per status
    counts.add(boot);
  }
  EXPECT_EQ(counts.incomplete, groups);
  EXPECT_EQ(counts.failures.size(), BootCounts::kMaxFailureGroups);
}

}  // namespace
}  // namespace hacoboot
