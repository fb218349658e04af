// The analysis of a boot by lane (model/boot_analysis.hpp) and its aggregate across
// boots (model/path_breakdown.hpp), on hand-built boots whose scheduler
// readings are exact, and on boots without any.
#include "model/boot_analysis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "event_builders.hpp"
#include "model/path_breakdown.hpp"
#include "simulated_thread.hpp"

namespace hacoboot {
namespace {

using test::DonePipeBoot;
using test::kExecve;
using test::kListen;
using test::phase;
using test::SimulatedThread;
using test::State;
using test::UidMapBoot;

const LaneStep& row(const BootAnalysis& analysis, Lane lane, std::optional<Step> step) {
  const auto found = std::find_if(analysis.steps.begin(), analysis.steps.end(),
                                  [&](const LaneStep& s) { return s.lane == lane && s.step == step; });
  if (found == analysis.steps.end()) throw std::runtime_error("no such row");
  return *found;
}

std::uint64_t on_listen_path(const BootAnalysis& analysis) {
  return std::accumulate(analysis.steps.begin(), analysis.steps.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const LaneStep& s) { return sum + s.on_listen_path_ns; });
}

std::uint64_t on_execve_path(const BootAnalysis& analysis) {
  return std::accumulate(analysis.steps.begin(), analysis.steps.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const LaneStep& s) { return sum + s.on_execve_path_ns; });
}

double listen_shares(const PathBreakdown& breakdown) {
  double sum = 0;
  for (const auto& [key, stats] : breakdown.steps()) sum += breakdown.listen_path_share(stats);
  return sum;
}

TEST(Lanes, StepsAreGroupedByTheThreadThatPassedThem) {
  const auto analysis = analyse_boot(DonePipeBoot{}.record());
  EXPECT_FALSE(analysis.forks_only);
  std::vector<std::pair<Lane, Step>> lanes;
  for (const auto& step : analysis.steps) lanes.emplace_back(step.lane, *step.step);
  const std::vector<std::pair<Lane, Step>> expected{
      {Lane::Supervisor, phase(2)}, {Lane::Container, phase(11)}, {Lane::Container, phase(20)},
      {Lane::Container, phase(21)}, {Lane::Container, kExecve},   {Lane::Supervisor, phase(3)},
      {Lane::Supervisor, phase(4)}, {Lane::Container, kListen},
  };
  EXPECT_EQ(lanes, expected);
}

TEST(Lanes, OwnTimeCountsFromThePreviousStepOfTheSameProcess) {
  const auto analysis = analyse_boot(DonePipeBoot{}.record());
  const auto& end_setup = row(analysis, Lane::Supervisor, phase(3));
  EXPECT_EQ(end_setup.begin_ns, 4'000U) << "from START_FORK, across the container's whole setup";
  EXPECT_EQ(end_setup.duration(), 4'100U);
  EXPECT_EQ(end_setup.since_start, 7'100U);
  const auto& container_start = row(analysis, Lane::Container, phase(11));
  EXPECT_EQ(container_start.begin_ns, 4'000U) << "the container's first step counts from START_FORK";
  EXPECT_EQ(container_start.tid, 200U);
  const auto& listen = row(analysis, Lane::Container, kListen);
  EXPECT_EQ(listen.begin_ns, 8'080U);
  EXPECT_EQ(listen.since_start, 8'000U);
}

// The supervisor blocks on the done pipe from START_FORK until the container
// closes it: its END_SETUP, the longest own time of the boot, is parallel to
// the container's setup and costs listen nothing.
TEST(Lanes, TheSupervisorsWaitOnTheDonePipeIsOffThePathToListen) {
  const auto analysis = analyse_boot(DonePipeBoot{}.record());
  ASSERT_TRUE(analysis.to_listen);
  const auto& end_setup = row(analysis, Lane::Supervisor, phase(3));
  EXPECT_FALSE(end_setup.on_listen_path());
  EXPECT_EQ(end_setup.on_execve_path_ns, 0U);
  // The fork itself goes to the container's first step, whose own time it is.
  EXPECT_EQ(row(analysis, Lane::Container, phase(11)).on_listen_path_ns, 500U);
  EXPECT_EQ(row(analysis, Lane::Supervisor, phase(2)).on_listen_path_ns, 3'000U);
  EXPECT_EQ(row(analysis, Lane::Container, kListen).on_listen_path_ns, 920U);
  EXPECT_EQ(on_listen_path(analysis), 8'000U);
  EXPECT_EQ(analysis.to_listen->duration(), 8'000U);
  EXPECT_EQ(on_execve_path(analysis), 7'080U);

  PathBreakdown breakdown;
  breakdown.add(analysis);
  EXPECT_DOUBLE_EQ(listen_shares(breakdown), 1.0);
}

TEST(Lanes, TheStatesOfEveryStepAddUpToItsDuration) {
  const auto analysis = analyse_boot(DonePipeBoot{}.record());
  for (const auto& step : analysis.steps) {
    ASSERT_TRUE(step.states) << lane_name(step.lane) << " " << step_name(*step.step);
    EXPECT_EQ(step.states->total(), step.duration()) << lane_name(step.lane) << " " << step_name(*step.step);
  }
  // Woken at 8'000, on a CPU at 8'020.
  EXPECT_EQ(row(analysis, Lane::Supervisor, phase(3)).states, (SchedTotals{280, 20, 3'800, 0}));
  // The supervisor's 100 ns to the fork, then the container's 50 ns to its first run.
  EXPECT_EQ(row(analysis, Lane::Container, phase(11)).states, (SchedTotals{450, 50, 0, 0}));
  EXPECT_EQ(row(analysis, Lane::Container, phase(20)).states, (SchedTotals{2'800, 0, 0, 600}));
}

// The supervisor's 20 ns in the run queue after the done pipe are off the
// path; the 300 ns it was preempted before START_FORK and the container's
// 50 ns before its first run are on it.
TEST(Lanes, TheNoiseFreeFigureDropsTheRunQueueTimeOnThePathExactly) {
  const auto analysis = analyse_boot(DonePipeBoot{}.record());
  EXPECT_EQ(analysis.noise_free_listen(), 8'000U - 300U - 50U);
  EXPECT_EQ(analysis.noise_free_execve(), 7'080U - 300U - 50U);
}

TEST(Lanes, AStepWhoseEndsAreReadOnDifferentThreadsWithoutTheForkHasNoStates) {
  auto boot = DonePipeBoot{}.record();
  auto& supervisor = boot.threads[0];
  std::erase_if(supervisor.samples, [](const ThreadSample& sample) { return sample.ts_ns == 4'100; });
  const auto analysis = analyse_boot(boot);
  EXPECT_FALSE(row(analysis, Lane::Container, phase(11)).states) << "the supervisor's fork reading is missing";
  EXPECT_TRUE(row(analysis, Lane::Container, phase(20)).states);
  EXPECT_EQ(on_listen_path(analysis), 8'000U);
}

// With user namespaces the container waits for the supervisor's uid/gid
// maps: the supervisor's work there is on the path, in its END_SETUP.
TEST(Lanes, TheUidMappingHandshakePutsTheSupervisorsMappingOnThePath) {
  const auto analysis = analyse_boot(UidMapBoot{}.record());
  const auto& end_setup = row(analysis, Lane::Supervisor, phase(3));
  EXPECT_EQ(end_setup.on_listen_path_ns, 2'200U) << "from \"unshared\" to \"mapped\"";
  EXPECT_EQ(row(analysis, Lane::Container, phase(17)).on_listen_path_ns, 500U + 300U);
  EXPECT_EQ(on_listen_path(analysis), 6'000U);
  ASSERT_TRUE(end_setup.states);
  EXPECT_EQ(end_setup.states->total(), end_setup.duration());
}

// The supervisor forks a helper that writes the maps and wakes the
// container: the path runs through the supervisor after its last step and
// through a thread that has no step at all.
TEST(Lanes, PathTimeAfterAThreadsLastStepHasARowOfItsOwn) {
  SimulatedThread supervisor{100, 0, State::Cpu};
  SimulatedThread container{200, 2'000, State::Cpu};
  SimulatedThread helper{300, 2'500, State::Cpu};
  container.forked_by(100);
  helper.forked_by(100);
  supervisor.emit(1'000, phase(1));
  supervisor.emit(2'000, phase(2));
  supervisor.emit(2'000);  // forks the container
  supervisor.emit(2'500);  // forks the helper
  supervisor.enter(2'600, State::Sleep);
  container.emit(3'000, phase(11));
  container.enter(3'100, State::Sleep);
  const std::vector<WakeupEdge> wakeups{test::wake(helper, container, 4'000)};
  container.enter(4'100, State::Cpu);
  container.emit(5'000, kListen);
  const auto analysis = analyse_boot(
      test::record_of(100, 200, {supervisor.timeline(), container.timeline(), helper.timeline()}, wakeups));

  const auto& after_start_fork = row(analysis, Lane::Supervisor, std::nullopt);
  EXPECT_EQ(after_start_fork.begin_ns, 2'000U);
  EXPECT_EQ(after_start_fork.end_ns, 2'500U);
  EXPECT_EQ(after_start_fork.on_listen_path_ns, 500U);
  EXPECT_EQ(after_start_fork.states, (SchedTotals{500, 0, 0, 0}));
  const auto& helper_row = row(analysis, Lane::Other, std::nullopt);
  EXPECT_EQ(helper_row.tid, 300U);
  EXPECT_EQ(helper_row.on_listen_path_ns, 1'500U);
  EXPECT_EQ(helper_row.since_start, 3'000U);
  EXPECT_EQ(helper_row.states, (SchedTotals{1'500, 0, 0, 0}));
  EXPECT_EQ(on_listen_path(analysis), 4'000U);
}

// The service forks a child that listens: the child is the listener lane,
// its listen counts from its creation, and the container's time from its
// execve to that fork is its time after its last step.
TEST(Lanes, AListenByADescendantIsTheListenersLane) {
  SimulatedThread supervisor{100, 0, State::Cpu};
  SimulatedThread container{200, 2'000, State::Cpu};
  SimulatedThread listener{300, 4'500, State::Cpu};
  container.forked_by(100);
  listener.forked_by(200);
  supervisor.emit(1'000, phase(1));
  supervisor.emit(2'000, phase(2));
  supervisor.emit(2'000);  // forks the container
  supervisor.enter(2'100, State::Sleep);
  container.emit(3'000, phase(11));
  container.emit(4'000, kExecve);
  container.emit(4'500);  // forks the listener
  container.enter(4'600, State::Sleep);
  listener.emit(6'000, kListen);
  const auto analysis =
      analyse_boot(test::record_of(100, 200, {supervisor.timeline(), container.timeline(), listener.timeline()}, {}));

  const auto& listen = row(analysis, Lane::Listener, kListen);
  EXPECT_EQ(listen.tid, 300U);
  EXPECT_EQ(listen.begin_ns, 4'500U);
  EXPECT_EQ(listen.states, (SchedTotals{1'500, 0, 0, 0}));
  EXPECT_EQ(listen.on_listen_path_ns, 1'500U);
  const auto& after_execve = row(analysis, Lane::Container, std::nullopt);
  EXPECT_EQ(after_execve.begin_ns, 4'000U);
  EXPECT_EQ(after_execve.end_ns, 4'500U);
  EXPECT_EQ(after_execve.on_listen_path_ns, 500U);
  EXPECT_EQ(on_listen_path(analysis), 5'000U);
}

TEST(Lanes, WithoutThreadReadingsThePathFollowsTheFork) {
  auto boot = DonePipeBoot{}.record();
  boot.threads.clear();
  boot.wakeups.clear();
  const auto analysis = analyse_boot(boot);
  EXPECT_TRUE(analysis.forks_only);
  ASSERT_TRUE(analysis.to_listen);
  ASSERT_TRUE(analysis.to_execve);
  EXPECT_EQ(analysis.to_listen->duration(), 8'000U);
  EXPECT_EQ(analysis.to_execve->duration(), 7'080U);
  EXPECT_EQ(row(analysis, Lane::Supervisor, phase(2)).on_listen_path_ns, 3'000U);
  EXPECT_EQ(row(analysis, Lane::Container, phase(11)).on_listen_path_ns, 500U);
  EXPECT_EQ(row(analysis, Lane::Container, kListen).on_listen_path_ns, 920U);
  EXPECT_FALSE(row(analysis, Lane::Supervisor, phase(3)).on_listen_path());
  EXPECT_EQ(on_listen_path(analysis), 8'000U);
  for (const auto& step : analysis.steps) EXPECT_FALSE(step.states);
  EXPECT_FALSE(analysis.noise_free_listen());
  EXPECT_FALSE(analysis.noise_free_execve());
}

TEST(Lanes, ABootThatNeverStartedHasNoSteps) {
  auto boot = DonePipeBoot{}.record();
  boot.start_ns.reset();
  const auto analysis = analyse_boot(boot);
  EXPECT_TRUE(analysis.steps.empty());
  EXPECT_FALSE(analysis.to_listen);
}

// Boots without scheduler readings (as on a kernel side that accounts no
// states): their paths follow the fork.
TEST(Lanes, WithoutSchedulerReadingsListenPathSharesAddUpTo100PercentWithoutEndSetup) {
  std::vector<std::vector<Event>> launches;
  for (std::uint32_t i = 0; i < 3; ++i) {
    test::Launch launch;
    launch.cli += i;
    launch.supervisor += 10 * i;
    launch.container += 10 * i;
    launch.t0 += std::uint64_t{100'000} * i;
    launches.push_back(launch.events());
  }
  test::RecordingTracker tracker({.start_phase = 1, .command = test::Launch{}.command});
  tracker.feed(test::merge_by_time(std::move(launches)));
  tracker.tracker().finish_all();
  ASSERT_EQ(tracker.done().size(), 3U);
  PathBreakdown breakdown;
  for (const auto& boot : tracker.done()) breakdown.add(analyse_boot(boot));
  EXPECT_EQ(breakdown.forks_only_boots(), 3U);
  EXPECT_EQ(breakdown.listen_path().count(), 3U);
  EXPECT_NEAR(listen_shares(breakdown), 1.0, 0.001);
  const auto& end_setup = breakdown.steps().at(LaneStepKey{Lane::Supervisor, phase(3)});
  EXPECT_EQ(end_setup.own.count(), 3U);
  EXPECT_FALSE(end_setup.ever_on_listen_path());
  EXPECT_EQ(breakdown.listen_path_share(end_setup), 0.0);
}

// A boot's analysis with one piece of path per row on it.
BootAnalysis analysed(std::vector<LaneStep> steps) {
  BootAnalysis analysis;
  CriticalPath path;
  std::uint64_t at = 0;
  for (const auto& step : steps) {
    if (step.on_listen_path_ns == 0) continue;
    path.pieces.push_back({step.tid, step.step, at, at + step.on_listen_path_ns, step.states});
    at += step.on_listen_path_ns;
  }
  analysis.to_listen = path;
  analysis.steps = std::move(steps);
  return analysis;
}

LaneStep lane_step(Lane lane, Step step, std::uint64_t since_start, std::uint64_t own, std::uint64_t on_path,
                   std::optional<SchedTotals> states = std::nullopt) {
  LaneStep row;
  row.lane = lane;
  row.step = step;
  row.begin_ns = since_start - own;
  row.end_ns = since_start;
  row.since_start = since_start;
  row.states = states;
  row.on_listen_path_ns = on_path;
  return row;
}

TEST(PathBreakdown, SharesArePartsOfThePathAcrossBoots) {
  PathBreakdown breakdown;
  breakdown.add(analysed({lane_step(Lane::Supervisor, phase(2), 600, 600, 600),
                          lane_step(Lane::Supervisor, phase(3), 900, 900, 0),
                          lane_step(Lane::Container, kListen, 1'000, 400, 400)}));
  breakdown.add(analysed({lane_step(Lane::Supervisor, phase(2), 1'000, 1'000, 1'000),
                          lane_step(Lane::Supervisor, phase(3), 2'900, 1'900, 0),
                          lane_step(Lane::Container, kListen, 3'000, 2'000, 2'000)}));
  const auto& rows = breakdown.steps();
  EXPECT_DOUBLE_EQ(breakdown.listen_path_share(rows.at({Lane::Supervisor, phase(2)})), 0.4);
  EXPECT_DOUBLE_EQ(breakdown.listen_path_share(rows.at({Lane::Container, kListen})), 0.6);
  EXPECT_EQ(breakdown.listen_path_share(rows.at({Lane::Supervisor, phase(3)})), 0.0);
  EXPECT_FALSE(rows.at({Lane::Supervisor, phase(3)}).ever_on_listen_path());
  EXPECT_DOUBLE_EQ(listen_shares(breakdown), 1.0);
  EXPECT_EQ(breakdown.listen_path().avg(), 2'000U);
  EXPECT_EQ(rows.at({Lane::Supervisor, phase(3)}).own.max(), 1'900U);
}

TEST(PathBreakdown, MeanStatesCountOnlyTheBootsThatHadThem) {
  PathBreakdown breakdown;
  breakdown.add(analysed({lane_step(Lane::Container, kListen, 1'000, 400, 400, SchedTotals{300, 100, 0, 0})}));
  breakdown.add(analysed({lane_step(Lane::Container, kListen, 1'000, 400, 400)}));
  breakdown.add(analysed({lane_step(Lane::Container, kListen, 1'000, 600, 600, SchedTotals{500, 0, 50, 50})}));
  const auto& listen = breakdown.steps().at({Lane::Container, kListen});
  EXPECT_EQ(listen.boots_with_states, 2U);
  EXPECT_EQ(listen.mean_states(), (SchedTotals{400, 50, 25, 25}));
  EXPECT_FALSE(breakdown.steps().empty());
  EXPECT_EQ(listen.boots_on_listen_path, 3U);
}

TEST(PathBreakdown, ABootCountsOnceForARowItHasTwice) {
  PathBreakdown breakdown;
  auto first = lane_step(Lane::Other, phase(40), 500, 500, 500);
  auto second = lane_step(Lane::Other, phase(40), 800, 300, 300);
  second.tid = 7;
  breakdown.add(analysed({first, second}));
  const auto& other = breakdown.steps().at({Lane::Other, phase(40)});
  EXPECT_EQ(other.boots_on_listen_path, 1U);
  EXPECT_DOUBLE_EQ(breakdown.listen_path_share(other), 1.0);
}

TEST(PathBreakdown, RowsAreGroupedByLaneInBootOrder) {
  PathBreakdown breakdown;
  breakdown.add(analysed(
      {lane_step(Lane::Container, phase(11), 3'000, 1'000, 0), lane_step(Lane::Supervisor, phase(3), 6'000, 4'000, 0),
       lane_step(Lane::Container, kListen, 5'000, 2'000, 0), lane_step(Lane::Supervisor, phase(2), 2'000, 2'000, 0)}));
  std::vector<LaneStepKey> keys;
  for (const auto& [key, stats] : breakdown.steps_by_lane()) keys.push_back(key);
  const std::vector<LaneStepKey> expected{{Lane::Supervisor, phase(2)},
                                          {Lane::Supervisor, phase(3)},
                                          {Lane::Container, phase(11)},
                                          {Lane::Container, kListen}};
  EXPECT_EQ(keys, expected);
}

TEST(PathBreakdown, ForksOnlyBootsHaveNoNoiseFreeFigure) {
  PathBreakdown breakdown;
  auto analysis = analysed({lane_step(Lane::Container, kListen, 1'000, 1'000, 1'000)});
  analysis.forks_only = true;
  breakdown.add(analysis);
  EXPECT_EQ(breakdown.forks_only_boots(), 1U);
  EXPECT_EQ(breakdown.listen_path().count(), 1U);
  EXPECT_TRUE(breakdown.noise_free_listen().empty());
}

}  // namespace
}  // namespace hacoboot
