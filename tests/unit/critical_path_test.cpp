#include "model/critical_path.hpp"

#include "event_builders.hpp"
#include "model/boot_tracker.hpp"
#include "simulated_thread.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace hacoboot {
namespace {

using test::DonePipeBoot;
using test::kExecve;
using test::kListen;
using test::phase;
using test::SimulatedThread;
using test::State;
using test::UidMapBoot;
using test::wake;

void expect_exact(const CriticalPath& path, std::uint64_t start, std::uint64_t target) {
  ASSERT_FALSE(path.pieces.empty());
  EXPECT_EQ(path.pieces.front().begin_ns, start);
  EXPECT_EQ(path.pieces.back().end_ns, target);
  for (std::size_t i = 1; i < path.pieces.size(); ++i) {
    EXPECT_EQ(path.pieces[i].begin_ns, path.pieces[i - 1].end_ns) << "gap or overlap before piece " << i;
  }
  for (const auto& piece : path.pieces) {
    ASSERT_TRUE(piece.states) << "piece at " << piece.begin_ns;
    EXPECT_EQ(piece.states->total(), piece.duration()) << "piece at " << piece.begin_ns;
  }
  EXPECT_EQ(path.duration(), target - start);
}

std::uint64_t time_in(const CriticalPath& path, std::uint32_t tid) {
  return std::accumulate(
      path.pieces.begin(), path.pieces.end(), std::uint64_t{0},
      [tid](std::uint64_t sum, const PathPiece& p) { return p.tid == tid ? sum + p.duration() : sum; });
}

TEST(CriticalPath, TheSupervisorsWaitOnTheDonePipeIsOffThePathToListen) {
  DonePipeBoot boot;
  const auto path = critical_path(boot.threads(), boot.wakeups, {100, 1'000}, {200, 9'000});
  expect_exact(path, 1'000, 9'000);
  EXPECT_EQ(time_in(path, 100), 3'100U);  // start to the fork
  EXPECT_EQ(time_in(path, 200), 4'900U);  // the fork to listen
  for (const auto& piece : path.pieces) {
    if (piece.tid == 100) {
      EXPECT_LE(piece.end_ns, 4'100U) << "the supervisor after the fork is on the path";
    }
  }
  // The supervisor's only time on the path after START_FORK is the fork
  // itself, which belongs to its next step, END_SETUP.
  ASSERT_GE(path.pieces.size(), 3U);
  EXPECT_EQ(path.pieces[1], (PathPiece{100, phase(3), 4'000, 4'100, SchedTotals{100, 0, 0, 0}}));
}

TEST(CriticalPath, StatesOfThePathAddUpAndTheNoiseFreeFigureDropsTheRunQueue) {
  DonePipeBoot boot;
  const auto path = critical_path(boot.threads(), boot.wakeups, {100, 1'000}, {200, 9'000});
  const SchedTotals states = path.states();
  EXPECT_EQ(states.total(), 8'000U);
  // Preempted 300 ns in the supervisor's first step; the container's 50 ns
  // from its fork to its first run.
  EXPECT_EQ(states.run_queue, 350U);
  EXPECT_EQ(states.io, 600U);
  EXPECT_EQ(states.sleep, 100U);
  EXPECT_EQ(path.noise_free(), 8'000U - 350U);
}

TEST(CriticalPath, EachPieceIsNamedAfterTheStepItBelongsTo) {
  DonePipeBoot boot;
  const auto path = critical_path(boot.threads(), boot.wakeups, {100, 1'000}, {200, 9'000});
  std::vector<std::optional<Step>> steps;
  for (const auto& piece : path.pieces) steps.push_back(piece.step);
  const std::vector<std::optional<Step>> expected{phase(2),  phase(3),  phase(11), phase(20),
                                                  phase(21), phase(21), kExecve,   kListen};
  EXPECT_EQ(steps, expected);
}

TEST(CriticalPath, TheUidMappingHandshakeTakesThePathThroughTheSupervisor) {
  UidMapBoot boot;
  const auto path = critical_path(boot.threads(), boot.wakeups, {100, 1'000}, {200, 7'000});
  expect_exact(path, 1'000, 7'000);
  EXPECT_EQ(time_in(path, 100), 1'000U + 2'200U);  // start to the fork, then "unshared" to "mapped"
  EXPECT_EQ(time_in(path, 200), 1'500U + 1'300U);  // fork to "unshared", then "mapped" to listen
  EXPECT_EQ(path.states().cpu + path.states().run_queue, 6'000U);
}

TEST(CriticalPath, WakeupsBeforeTheStartAreNotFollowed) {
  SimulatedThread cli{50, 0, State::Cpu};
  SimulatedThread supervisor{100, 0, State::Sleep};
  const std::vector<WakeupEdge> wakeups{wake(cli, supervisor, 500)};
  supervisor.enter(600, State::Cpu);
  supervisor.emit(1'000, phase(1));
  supervisor.emit(3'000, kListen);
  const auto path = critical_path({cli.timeline(), supervisor.timeline()}, wakeups, {100, 1'000}, {100, 3'000});
  expect_exact(path, 1'000, 3'000);
  EXPECT_EQ(time_in(path, 100), 2'000U);
}

TEST(CriticalPath, AThreadWithoutReadingsAtTheCutHasNoStates) {
  SimulatedThread container{200, 0, State::Cpu};
  container.emit(5'000, kListen);
  const auto path = critical_path({container.timeline()}, {}, {100, 1'000}, {200, 5'000});
  ASSERT_EQ(path.pieces.size(), 1U);
  EXPECT_EQ(path.pieces[0].duration(), 4'000U);
  EXPECT_FALSE(path.pieces[0].states) << "no reading of thread 200 at the start";
  EXPECT_EQ(path.noise_free(), 4'000U);
}

TEST(CriticalPath, ATargetBeforeTheStartHasNoPath) {
  EXPECT_TRUE(critical_path({}, {}, {100, 2'000}, {200, 1'000}).pieces.empty());
}

// --from a phase after the milestones: they are not reached, so the boot has
// no path to them, rather than one of length 0 counted in the noise-free figures.
TEST(CriticalPath, AMilestoneBeforeTheBootsStartHasNoPath) {
  SimulatedThread supervisor{100, 0, State::Cpu};
  SimulatedThread container{200, 2'000, State::Cpu};
  container.forked_by(100);
  supervisor.emit(1'000, phase(1));
  container.emit(3'000, kExecve);
  container.emit(4'000, kListen);
  supervisor.emit(5'000, phase(5));
  auto boot = test::record_of(100, 200, {supervisor.timeline(), container.timeline()}, {});
  ASSERT_TRUE(path_to_listen(boot));
  boot.start_ns = 5'000;  // --from 5
  EXPECT_FALSE(path_to_execve(boot));
  EXPECT_FALSE(path_to_listen(boot));
}

TEST(CriticalPath, ACycleOfForksInCorruptInputEnds) {
  ThreadTimeline a{1, 2, 1'500, {}};
  ThreadTimeline b{2, 1, 1'500, {}};
  const auto path = critical_path({a, b}, {}, {1, 1'000}, {1, 2'000});
  EXPECT_EQ(path.duration(), 1'000U);
}

// An event as the kernel side stamps it: the emitting thread's totals then.
Event stamped(Event event, SimulatedThread& thread) {
  event.tid = thread.tid();
  event.sched = thread.read(event.ts_ns);
  return event;
}

Event wakeup_event(std::uint64_t ts, SimulatedThread& waker, std::uint32_t waker_pid, SimulatedThread& wakee,
                   std::uint32_t wakee_pid, std::uint32_t hpid) {
  const WakeupEdge edge = wake(waker, wakee, ts);
  Event event;
  event.kind = EventKind::Wakeup;
  event.ts_ns = ts;
  event.pid = waker_pid;
  event.hpid = hpid;
  event.tid = edge.waker_tid;
  event.sched = edge.waker_totals;
  event.wakee = Wakee{wakee_pid, edge.wakee_tid, hpid, 0, Role::Launcher, edge.wakee_totals};
  return event;
}

// The tracker keeps each accounted thread's readings and the wakeups of the
// launch, and the boot's path to listen follows the container, not the
// supervisor's wait on the done pipe.
TEST(BootTrackerPaths, ADonePipeBootsPathToListenLeavesTheSupervisorsWaitOut) {
  constexpr std::uint32_t kSv = 100;
  constexpr std::uint32_t kCt = 200;
  SimulatedThread supervisor{kSv, 0, State::Cpu};
  SimulatedThread container{kCt, 4'100, State::RunQueue};
  std::vector<Event> events;
  events.push_back(stamped(ev::phase(1'000, kSv, kSv, 1), supervisor));
  events.push_back(stamped(ev::phase(4'000, kSv, kSv, 2), supervisor));
  events.push_back(stamped(ev::fork(4'100, kSv, kSv, kCt, Role::Container), supervisor));
  supervisor.enter(4'200, State::Sleep);
  container.enter(4'300, State::Cpu);
  events.push_back(stamped(ev::phase(4'500, kCt, kSv, 11), container));
  events.push_back(stamped(ev::phase(7'900, kCt, kSv, 20), container));
  events.push_back(wakeup_event(8'000, container, kCt, supervisor, kSv, kSv));
  supervisor.enter(8'020, State::Cpu);
  events.push_back(stamped(ev::phase(8'050, kCt, kSv, 21), container));
  events.push_back(stamped(ev::phase(8'100, kSv, kSv, 3), supervisor));
  events.push_back(stamped(ev::exec(8'200, kCt, kSv, "/bin/app"), container));
  events.push_back(stamped(ev::listen(9'000, kCt, kSv), container));

  test::RecordingTracker tracker;
  tracker.feed(events);
  tracker.tracker().finish_all();
  ASSERT_EQ(tracker.done().size(), 1U);
  const BootRecord& boot = tracker.done()[0];
  EXPECT_EQ(boot.threads.size(), 2U);
  EXPECT_EQ(boot.wakeups.size(), 1U);
  EXPECT_EQ(boot.start_tid, kSv);
  EXPECT_EQ(boot.listen_tid, kCt);

  const auto path = path_to_listen(boot);
  ASSERT_TRUE(path);
  expect_exact(*path, 1'000, 9'000);
  EXPECT_EQ(time_in(*path, kSv), 3'100U);
  EXPECT_EQ(time_in(*path, kCt), 4'900U);
  const auto to_execve = path_to_execve(boot);
  ASSERT_TRUE(to_execve);
  EXPECT_EQ(to_execve->duration(), 7'200U);
}

TEST(BootTrackerPaths, ABootWithoutSchedulerTotalsHasNoPath) {
  test::RecordingTracker tracker;
  tracker.feed(test::Launch{}.events());
  ASSERT_EQ(tracker.done().size(), 1U);
  EXPECT_TRUE(tracker.done()[0].threads.empty());
  EXPECT_FALSE(path_to_listen(tracker.done()[0]));
}

}  // namespace
}  // namespace hacoboot
