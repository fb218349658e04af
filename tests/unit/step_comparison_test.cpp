// The gate's comparison step by step: which steps moved, their share of the
// milestone's shift, the states that moved, and never a step called on noise.
#include "gate/step_comparison.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gate/gate_report.hpp"
#include "gate/regression_gate.hpp"
#include "gate/step_report.hpp"
#include "gate_runs.hpp"

namespace hacoboot {
namespace {

using test::figure;

// What one step of a lane takes in each boot, in ms: on the path to listen
// (and execve), and in which state.
struct StepPlan {
  std::string lane = "container";
  std::int64_t phase = 0;  // 0: the listen milestone itself
  std::string name;
  std::vector<double> path_ms;
  const char* state = "cpu";  // where the time goes: cpu, sleep
  double io_share = 0;        // the share of it waiting for I/O instead
  double run_queue_ms = 0;    // mean time waiting for a CPU besides
  bool accounted = true;      // its scheduler states known (false: past the accounting)
  bool on_path = true;        // false: off the paths, own time only
  // Its syscalls' mean CPU time per boot in ms, by name; nullopt: not traced.
  std::optional<std::map<std::string, double>> syscall_ms{};  // NOLINT(readability-redundant-member-init)
};

std::vector<double> plus(std::vector<double> ms, double extra) {
  for (auto& v : ms) v += extra;
  return ms;
}

// Boots whose values scatter by +-2 % (a seeded draw: the same every run).
std::vector<double> noisy(double ms, std::uint32_t seed, std::size_t boots = 20, double scatter = 0.02) {
  std::mt19937 draw(seed);
  std::uniform_real_distribution<double> spread(1 - scatter, 1 + scatter);
  std::vector<double> values;
  for (std::size_t i = 0; i < boots; ++i) values.push_back(ms * spread(draw));
  return values;
}

double mean(const std::vector<double>& ms) {
  double sum = 0;
  for (const double v : ms) sum += v;
  return sum / static_cast<double>(ms.size());
}

std::optional<SyscallMeans> syscalls_of(const StepPlan& plan) {
  if (!plan.syscall_ms) return std::nullopt;
  SyscallMeans means;
  for (const auto& [name, ms] : *plan.syscall_ms) means[name].cpu = static_cast<std::uint64_t>(ms * 1e6);
  return means;
}

StepFigures step_of(const StepPlan& plan) {
  const auto own = figure(plan.path_ms);
  const auto off = figure(std::vector<double>(plan.path_ms.size(), 0.0));
  const auto path = plan.on_path ? own : off;
  const auto nanos = static_cast<std::uint64_t>(mean(plan.path_ms) * 1e6);
  SchedTotals states;
  states.io = static_cast<std::uint64_t>(plan.io_share * static_cast<double>(nanos));
  (std::string(plan.state) == "sleep" ? states.sleep : states.cpu) = nanos - states.io;
  states.run_queue = static_cast<std::uint64_t>(plan.run_queue_ms * 1e6);
  return {.lane = plan.lane,
          .name = plan.phase == 0 ? "listen" : plan.name,
          .own = own,
          .own_noise_free = own,
          .listen_path = {.wall = path, .noise_free = path},
          .execve_path = {.wall = off, .noise_free = off},
          .states = plan.accounted ? std::optional(states) : std::nullopt,
          .syscalls = syscalls_of(plan)};
}

// A run whose path to listen is these steps, one after another: listen
// is their sum in every boot.
RunFigures run_of_steps(const std::vector<StepPlan>& plans) {
  std::vector<double> listen(plans.front().path_ms.size(), 0.0);
  StepTable steps;
  for (const auto& plan : plans) {
    for (std::size_t i = 0; i < listen.size() && plan.on_path; ++i) listen[i] += plan.path_ms.at(i);
    const auto key =
        plan.lane + " " + (plan.phase == 0 ? std::string("listen") : "phase:" + std::to_string(plan.phase));
    steps.emplace(key, step_of(plan));
  }
  auto run = test::run_of({{"listen", {.name = "listen", .wall = figure(listen), .noise_free = figure(listen)}}});
  run.origin.schema = 4;
  run.steps = std::move(steps);
  return run;
}

// Five steps of a 6 ms boot, as the demo launcher's container passes them.
std::vector<StepPlan> demo_steps(std::uint32_t seed) {
  return {{.phase = 11, .name = "CONTAINER_START", .path_ms = noisy(1.0, seed)},
          {.phase = 13, .name = "CONTAINER_CHROOTED", .path_ms = noisy(0.5, seed + 1), .state = "sleep"},
          {.phase = 14, .name = "CONTAINER_RLIMIT_SETUP", .path_ms = noisy(0.5, seed + 2)},
          {.phase = 15, .name = "CONTAINER_CGROUP_SETUP", .path_ms = noisy(1.0, seed + 3)},
          {.phase = 0, .path_ms = noisy(3.0, seed + 4)}};
}

const StepShift& shift_of(const StepComparison& steps, std::size_t index) {
  return steps.shifts.at(index);
}

// The first measure compared of the step with this key: its path to listen.
const StepShift& step_keyed(const StepComparison& steps, const std::string& key) {
  for (const auto& shift : steps.shifts) {
    if (shift.key == key) return shift;
  }
  throw std::out_of_range("no step " + key);
}

Verdict listen_verdict(const GateResult& result) {
  for (const auto& row : result.rows) {
    if (row.key == "listen") return row.verdict;
  }
  return Verdict::Missing;
}

TEST(StepComparison, OneSlowStepIsNamedAloneWithItsShareAndState) {
  auto slower = demo_steps(100);
  slower[2].path_ms = plus(slower[2].path_ms, 1.0);  // 1 ms more CPU in step 14
  const auto result = compare_runs(run_of_steps(demo_steps(1)), run_of_steps(slower), {});
  const auto& steps = result.steps;
  ASSERT_TRUE(steps.unavailable.empty()) << steps.unavailable;
  ASSERT_EQ(steps.milestones.size(), 1U);
  const auto& listen = steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 1U) << "one step moved, not every later one";
  const auto& moved = shift_of(steps, listen.moved.front());
  EXPECT_EQ(moved.key, "container phase:14");
  EXPECT_NEAR(moved.shift_ns, 1e6, 0.1e6);
  EXPECT_GE(listen.share_of(moved), 0.8);
  EXPECT_LE(listen.share_of(moved), 1.2);
  ASSERT_EQ(moved.states.size(), 1U);
  EXPECT_STREQ(moved.states.front().state, "CPU");
  EXPECT_NEAR(moved.states.front().shift_ns, 1e6, 0.1e6);
  std::ostringstream report;
  write_gate_report(result, {}, report);
  EXPECT_NE(report.str().find("container 14 CONTAINER_RLIMIT_SETUP +1."), std::string::npos) << report.str();
  EXPECT_TRUE(report.str().find("% of the moved total), CPU +") != std::string::npos ||
              report.str().find("% of the shift), CPU +") != std::string::npos)
      << report.str();
  EXPECT_NE(report.str().find("in no moved step"), std::string::npos) << report.str();
}

TEST(StepComparison, ASlowerSleepIsTheStateThatMoved) {
  auto slower = demo_steps(200);
  slower[1].path_ms = plus(slower[1].path_ms, 2.0);
  const auto steps = compare_steps(run_of_steps(demo_steps(2)), run_of_steps(slower), {});
  const auto& listen = steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 1U);
  EXPECT_STREQ(shift_of(steps, listen.moved.front()).states.at(0).state, "sleep");
}

// An fsync spends about as long in the journal's CPU work as waiting for the
// disk: both states moved and both are named, the larger first. A sleep's
// state that moved by under a third of the largest (a tenth of a longer
// sleep spent in I/O) is no second cause: only the sleep is named.
TEST(StepComparison, EveryStateThatMovedMateriallyIsNamed) {
  const auto with_extra = [](std::uint32_t seed, double extra_ms, double io_share, const char* state) {
    auto steps = demo_steps(seed);
    steps[2].path_ms = plus(steps[2].path_ms, extra_ms);
    steps[2].io_share = io_share;
    steps[2].state = state;
    return run_of_steps(steps);
  };
  // Step 14: 0.5 ms of CPU, then 2.5 ms of which 45 % waits for I/O: I/O
  // +1.1 ms, CPU +0.9 ms.
  const auto fsync = compare_steps(run_of_steps(demo_steps(3)), with_extra(300, 2.0, 0.45, "cpu"), {});
  const auto& moved = shift_of(fsync, fsync.milestones.front().moved.at(0));
  ASSERT_EQ(moved.states.size(), 2U);
  EXPECT_STREQ(moved.states[0].state, "I/O");
  EXPECT_NEAR(moved.states[0].shift_ns, 0.45 * 2.5e6, 0.1e6);
  EXPECT_STREQ(moved.states[1].state, "CPU");
  EXPECT_NEAR(moved.states[1].shift_ns, 0.55 * 2.5e6 - 0.5e6, 0.1e6);
  EXPECT_NE(moved_step_line(moved, nullptr).find("], I/O +1.1"), std::string::npos) << moved_step_line(moved, nullptr);
  EXPECT_NE(moved_step_line(moved, nullptr).find(" and CPU +8"), std::string::npos) << moved_step_line(moved, nullptr);
  // Step 13 asleep 0.5 ms, then 2.5 ms of which a tenth is I/O: under a third of the sleep's shift.
  auto sleepier = demo_steps(400);
  sleepier[1].path_ms = plus(sleepier[1].path_ms, 2.0);
  sleepier[1].io_share = 0.1;
  const auto sleep = compare_steps(run_of_steps(demo_steps(4)), run_of_steps(sleepier), {});
  const auto& slept = shift_of(sleep, sleep.milestones.front().moved.at(0));
  ASSERT_EQ(slept.states.size(), 1U) << moved_states(slept);
  EXPECT_STREQ(slept.states[0].state, "sleep");
}

// A step that now spins where it slept: its time changed hands between
// states. The states named are those that moved the way the step did (CPU
// and I/O up), not the sleep that shrank, however large.
TEST(StepComparison, AStateThatMovedAgainstTheStepIsNotNamed) {
  auto before = demo_steps(5);
  before[1].path_ms = noisy(1.1, 6);  // step 13: 1.1 ms asleep
  auto after = demo_steps(500);
  after[1].path_ms = noisy(1.9, 501);  // 1.0 ms of CPU and 0.9 ms of I/O, no sleep
  after[1].state = "cpu";
  after[1].io_share = 0.9 / 1.9;
  const auto steps = compare_steps(run_of_steps(before), run_of_steps(after), {});
  const auto& moved = step_keyed(steps, "container phase:13");
  ASSERT_TRUE(moved.moved);
  EXPECT_GT(moved.shift_ns, 0);
  ASSERT_EQ(moved.states.size(), 2U) << moved_states(moved);
  EXPECT_STREQ(moved.states[0].state, "CPU");
  EXPECT_STREQ(moved.states[1].state, "I/O");
  EXPECT_EQ(moved_states(moved).find("sleep"), std::string::npos) << moved_states(moved);
}

// On a busy runner a step doing more work also waits longer for a CPU,
// often longer than the work: judged noise-free, the state named is the
// work's; judged on wall time, the wait's.
TEST(StepComparison, NoiseFreeNamesTheWorksStateNotTheRunQueue) {
  auto busier = demo_steps(900);
  busier[2].path_ms = plus(busier[2].path_ms, 1.0);
  busier[2].run_queue_ms = 2.0;
  const auto noise_free = compare_steps(run_of_steps(demo_steps(9)), run_of_steps(busier), {});
  ASSERT_EQ(noise_free.milestones.front().moved.size(), 1U);
  const auto& work = shift_of(noise_free, noise_free.milestones.front().moved.front());
  ASSERT_EQ(work.states.size(), 1U) << moved_states(work);
  EXPECT_STREQ(work.states.front().state, "CPU");
  const auto wall = compare_steps(run_of_steps(demo_steps(9)), run_of_steps(busier), {.figure = GateFigure::Wall});
  ASSERT_EQ(wall.milestones.front().moved.size(), 1U);
  const auto& waited = shift_of(wall, wall.milestones.front().moved.front());
  ASSERT_EQ(waited.states.size(), 2U) << moved_states(waited);
  EXPECT_STREQ(waited.states[0].state, "run queue");
  EXPECT_STREQ(waited.states[1].state, "CPU");
}

// Same code, other boots: with 3 x 5 tests (path, execve path, own time),
// noise alone must call no step moved, seed after seed.
TEST(StepComparison, SameCodeCallsNoStepMoved) {
  int runs_with_a_call = 0;
  for (std::uint32_t seed = 0; seed < 20; ++seed) {
    const auto steps = compare_steps(run_of_steps(demo_steps(seed * 10)), run_of_steps(demo_steps(seed * 10 + 5)), {});
    bool any = false;
    for (const auto& shift : steps.shifts) any = any || shift.moved;
    runs_with_a_call += any ? 1 : 0;
  }
  EXPECT_LE(runs_with_a_call, 1) << "at most 1 run in 20 with a step called moved";
}

// Work moved from step 15 to step 11: added ms more in the one, removed ms
// less in the other.
GateResult work_moved(double added, double removed) {
  auto moved = demo_steps(300);
  moved[0].path_ms = plus(moved[0].path_ms, added);
  moved[3].path_ms = plus(moved[3].path_ms, -removed);
  return compare_runs(run_of_steps(demo_steps(3)), run_of_steps(moved), {});
}

TEST(StepComparison, WorkMovedBetweenStepsNamesBothWithOppositeSigns) {
  const auto result = work_moved(0.8, 0.8);
  const auto& listen = result.steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 2U);
  const auto& a = shift_of(result.steps, listen.moved[0]);
  const auto& b = shift_of(result.steps, listen.moved[1]);
  EXPECT_LT(a.shift_ns * b.shift_ns, 0) << "opposite signs";
  EXPECT_LT(std::abs(listen.path_mean_shift_ns), 0.1e6) << "the path's mean did not move";
  EXPECT_FALSE(listen.has_shares()) << "no share of a shift that is not there";
  EXPECT_EQ(milestone_attribution(result.steps, "listen").find("of the shift"), std::string::npos)
      << milestone_attribution(result.steps, "listen");
  EXPECT_EQ(listen_verdict(result), Verdict::NoChange);
}

// The service's own start scatters by a millisecond from boot to boot, so
// listen's estimated shift misses the 1 ms of work in step 14 by up to about
// half of it either way, while the step's own shift is sharp. When the moved
// step's shift lies within listen's interval it explains the shift, and the
// share is of it: 100 %, not the 1 ms over a noisy estimate (70 % or 200 %).
TEST(StepComparison, AMovedStepThatExplainsTheShiftWithinItsNoiseHasItAll) {
  auto steps_of = [](std::uint32_t seed) {
    auto plans = demo_steps(seed);
    plans.back().path_ms = noisy(3.0, seed + 4, 20, 0.4);  // the service: +-1.2 ms
    return plans;
  };
  int sharper = 0;
  for (std::uint32_t run = 0; run < 10; ++run) {
    auto slower = steps_of(500 + 10 * run);
    slower[2].path_ms = plus(slower[2].path_ms, 1.0);
    const auto result = compare_runs(run_of_steps(steps_of(600 + 10 * run)), run_of_steps(slower), {});
    const auto& listen = result.steps.milestones.front();
    ASSERT_EQ(listen.moved.size(), 1U) << "run " << run;
    const auto& moved = shift_of(result.steps, listen.moved.front());
    ASSERT_EQ(moved.key, "container phase:14");
    EXPECT_EQ(listen.moved_total_ns, moved.shift_ns);
    const bool within = listen.low_ns <= moved.shift_ns && moved.shift_ns <= listen.high_ns;
    EXPECT_EQ(listen.moved_explain_shift(), within) << "run " << run;
    if (!listen.has_shares() || !within) continue;
    EXPECT_DOUBLE_EQ(listen.share_of(moved), 1.0) << "run " << run;
    EXPECT_DOUBLE_EQ(listen.shared_shift_ns(), moved.shift_ns);
    const auto text = milestone_attribution(result.steps, "listen");
    EXPECT_NE(text.find("(100% of the moved total)"), std::string::npos) << text;
    EXPECT_NE(text.find("in no moved step, not told from 0: shares are of the moved total, +"), std::string::npos)
        << text;
    sharper += std::abs(listen.shift_ns - moved.shift_ns) > 0.2e6 ? 1 : 0;
  }
  EXPECT_GE(sharper, 3) << "the service's scatter moved listen's estimate off the step's in some runs";
}

// Work moved between steps nearly evenly leaves a total of tens of us that
// the steps' sharp intervals tell from 0: under the floor of a step's move,
// it is no shift to share out (shares of thousands of %).
TEST(StepComparison, ANearlyEvenMoveGivesNoShares) {
  const auto result = work_moved(0.8, 0.75);
  const auto& listen = result.steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 2U);
  EXPECT_GT(listen.moved_low_ns, 0) << "the summed interval excludes 0";
  EXPECT_GE(listen.moved_total_ns, listen.low_ns);
  EXPECT_LE(listen.moved_total_ns, listen.high_ns);
  EXPECT_LT(std::abs(listen.moved_total_ns), listen.floor_ns);
  EXPECT_FALSE(listen.moved_explain_shift()) << "a total under the floor explains nothing";
  EXPECT_GT(listen.low_ns, 0) << "listen's own interval excludes 0 too: the boots scatter little";
  EXPECT_FALSE(listen.has_shares()) << "a shift under the floor is not shared out";
  EXPECT_EQ(milestone_attribution(result.steps, "listen").find("of the shift"), std::string::npos)
      << milestone_attribution(result.steps, "listen");
}

// An improvement is shared out as a slowdown is: step 14 1 ms faster is 100 %
// of the moved total, negative both.
TEST(StepComparison, AnImprovementIsSharedLikeASlowdown) {
  auto faster = demo_steps(900);
  faster[3].path_ms = plus(faster[3].path_ms, -0.9);
  const auto result = compare_runs(run_of_steps(demo_steps(9)), run_of_steps(faster), {});
  const auto& listen = result.steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 1U);
  EXPECT_LT(listen.moved_total_ns, 0);
  EXPECT_TRUE(listen.moved_explain_shift()) << listen.low_ns << " " << listen.high_ns;
  ASSERT_TRUE(listen.has_shares());
  EXPECT_DOUBLE_EQ(listen.share_of(shift_of(result.steps, listen.moved.front())), 1.0);
}

// A moved total of the other sign than the milestone's estimate explains
// nothing, even within a wide interval: no "100 % of the shift" beside a
// milestone that moved the other way, and no share of a shift not told from 0.
TEST(StepComparison, AMovedTotalAgainstTheShiftExplainsNothing) {
  MilestoneShift listen{.milestone = "listen", .shift_ns = -200e3, .low_ns = -900e3, .high_ns = 500e3};
  listen.moved = {0};
  listen.moved_total_ns = 300e3;
  listen.moved_low_ns = 280e3;
  listen.moved_high_ns = 320e3;
  listen.floor_ns = 100e3;
  EXPECT_FALSE(listen.moved_explain_shift());
  EXPECT_FALSE(listen.has_shares());
  listen.shift_ns = 200e3;  // the same, its estimate on the total's side
  EXPECT_TRUE(listen.moved_explain_shift());
  EXPECT_TRUE(listen.has_shares());
  EXPECT_DOUBLE_EQ(listen.shared_shift_ns(), 300e3);
  EXPECT_DOUBLE_EQ(listen.unattributed_low_ns(), -1200e3);
  EXPECT_DOUBLE_EQ(listen.unattributed_high_ns(), 200e3);
}

// A shift spread thinly over a step too scattered to be called moved is
// still in the milestone's shift: outside its interval the moved steps do
// not explain it, and shares are of the milestone's shift, as ever.
TEST(StepComparison, ShiftOutsideTheMovedStepsIsSharedAsBefore) {
  auto steps_of = [](std::uint32_t seed) {
    auto plans = demo_steps(seed);
    plans.back().path_ms = noisy(3.0, 77, 20, 0.4);  // the same scatter both runs
    return plans;
  };
  auto slower = steps_of(700);
  slower[2].path_ms = plus(slower[2].path_ms, 1.0);
  slower.back().path_ms = plus(slower.back().path_ms, 1.0);  // within 3 spreads of the service: not called
  const auto result = compare_runs(run_of_steps(steps_of(800)), run_of_steps(slower), {});
  const auto& listen = result.steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 1U);
  const auto& moved = shift_of(result.steps, listen.moved.front());
  EXPECT_EQ(moved.key, "container phase:14");
  EXPECT_FALSE(listen.moved_explain_shift()) << listen.low_ns << " " << listen.high_ns;
  ASSERT_TRUE(listen.has_shares());
  EXPECT_NEAR(listen.share_of(moved), 0.5, 0.1);
  EXPECT_NEAR(listen.unattributed_ns(), 1e6, 0.1e6);
  const auto text = milestone_attribution(result.steps, "listen");
  EXPECT_NE(text.find("in no moved step"), std::string::npos) << text;
  EXPECT_EQ(text.find("within the shift's interval"), std::string::npos) << text;
}

// A step whose boots scatter widely drifts between runs of the same code by
// up to about three times its spread: a shift within three times its
// interquartile range is not called, however many boots make it
// significant; one past it is.
TEST(StepComparison, AShiftWithinTheStepsSpreadIsNotCalled) {
  const auto run = [](std::uint32_t seed, double extra) {
    auto steps = demo_steps(seed);
    for (auto& plan : steps) plan.path_ms = noisy(plan.path_ms.front(), seed + plan.phase, 400);
    steps[0].path_ms = plus(noisy(1.0, seed, 400, 0.4), extra);  // kernel work: +-40 %
    return run_of_steps(steps);
  };
  const auto within = compare_steps(run(1, 0), run(2, 1.0), {});
  const auto& step = step_keyed(within, "container phase:11");
  EXPECT_LE(step.adjusted_p, 0.05) << "400 boots make 1 ms significant";
  EXPECT_GE(step.floor_ns, 1.1e6) << "three times the baseline's interquartile range, about 1.2 ms";
  EXPECT_FALSE(step.moved);
  const auto past = compare_steps(run(1, 0), run(2, 1.6), {});
  EXPECT_TRUE(step_keyed(past, "container phase:11").moved);
}

// Work that varies from boot to boot (a mount storm) widens the step's
// spread as it slows it: the floor is the baseline's spread, so a step that
// scatters wider for the work it gained is still called.
TEST(StepComparison, WorkThatScattersTheStepWideIsStillCalled) {
  const auto run = [](std::uint32_t seed, double ms, double scatter) {
    auto steps = demo_steps(seed);
    steps[3].path_ms = noisy(ms, seed, 20, scatter);  // step 15
    return run_of_steps(steps);
  };
  // Step 15: 1 ms +-2 %, then 5 ms +-75 %: an interquartile range of about 3.75 ms.
  const auto steps = compare_steps(run(1, 1.0, 0.02), run(2, 5.0, 0.75), {});
  const auto& step = step_keyed(steps, "container phase:15");
  EXPECT_LT(step.floor_ns, 0.5e6) << "three times the baseline's spread, not the new run's";
  EXPECT_TRUE(step.moved);
}

// Past the accounting a step's own time has no noise-free figure: a wait for
// the container's end lengthens with the load and is not called on it.
TEST(StepComparison, AWaitPastTheAccountingIsJudgedOnlyOnWall) {
  const auto run = [](std::uint32_t seed, double wait_ms) {
    auto steps = demo_steps(seed);
    steps.push_back({.lane = "supervisor",
                     .phase = 5,
                     .name = "END_WAIT",
                     .path_ms = noisy(wait_ms, seed + 9),
                     .state = "sleep",
                     .accounted = false,
                     .on_path = false});
    return run_of_steps(steps);
  };
  const auto is_end_wait = [](const StepShift& s) { return s.key == "supervisor phase:5"; };
  const auto noise_free = compare_steps(run(8, 50), run(9, 60), {});
  EXPECT_TRUE(noise_free.moved_off_path.empty());
  for (const auto& shift : noise_free.shifts) {
    if (is_end_wait(shift)) EXPECT_FALSE(shift.moved);
  }
  const auto wall = compare_steps(run(8, 50), run(9, 60), {.figure = GateFigure::Wall});
  ASSERT_EQ(wall.moved_off_path.size(), 1U);
  EXPECT_TRUE(is_end_wait(shift_of(wall, wall.moved_off_path.front())));
  EXPECT_TRUE(shift_of(wall, wall.moved_off_path.front()).states.empty()) << "its states were not accounted";
  std::ostringstream json;
  write_gate_json(compare_runs(run(8, 50), run(9, 60), {.figure = GateFigure::Wall}), {}, json);
  const auto doc = nlohmann::json::parse(json.str());
  const auto& waited = doc.at("steps").at("moved_off_path").at(0);
  EXPECT_TRUE(waited.at("state").is_null()) << waited.dump();
  EXPECT_TRUE(waited.at("states").is_array() && waited.at("states").empty()) << waited.dump();
}

TEST(StepComparison, ABaselineWithoutStepSamplesSaysTheStepsCannotBeCompared) {
  auto old = run_of_steps(demo_steps(4));
  old.steps.reset();
  old.origin.schema = 3;
  const auto result = compare_runs(old, run_of_steps(demo_steps(5)), {});
  EXPECT_EQ(result.steps.unavailable, "the baseline (schema 3) kept no per-step samples: steps not compared");
  std::ostringstream report;
  write_gate_report(result, {}, report);
  EXPECT_NE(report.str().find("note: the baseline (schema 3) kept no per-step samples"), std::string::npos)
      << report.str();
}

// Another launcher, or renamed phases: steps of one run only are not
// tested; one that was on the path says the path changed.
TEST(StepComparison, StepsThatDoNotMatchAreNotComparedAndThePathChangeIsTold) {
  auto other = demo_steps(600);
  other[2].phase = 16;
  other[2].name = "CONTAINER_NETWORK_SETUP";
  const auto steps = compare_steps(run_of_steps(demo_steps(6)), run_of_steps(other), {});
  const auto& listen = steps.milestones.front();
  EXPECT_FALSE(listen.path_same);
  EXPECT_NE(milestone_attribution(steps, "listen").find("the path changed"), std::string::npos)
      << milestone_attribution(steps, "listen");
  for (const auto& shift : steps.shifts) {
    if (shift.key == "container phase:16" || shift.key == "container phase:14") EXPECT_FALSE(shift.moved);
  }
}

TEST(StepComparison, MarkdownAndJunitNameTheMovedStep) {
  auto slower = demo_steps(700);
  slower[3].path_ms = plus(slower[3].path_ms, 3.0);
  const auto result = compare_runs(run_of_steps(demo_steps(7)), run_of_steps(slower), {});
  ASSERT_EQ(listen_verdict(result), Verdict::Regressed);
  std::ostringstream markdown;
  write_gate_markdown(result, {}, markdown);
  EXPECT_NE(markdown.str().find("| listen (+"), std::string::npos) << markdown.str();
  EXPECT_NE(markdown.str().find("container 15 CONTAINER\\_CGROUP\\_SETUP"), std::string::npos) << markdown.str();
  EXPECT_NE(markdown.str().find("| in no moved step | "), std::string::npos) << markdown.str();
  std::ostringstream json;
  write_gate_json(result, {}, json);
  const auto doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc.at("outcome"), "REGRESSED");
  const auto& listen = doc.at("steps").at("milestones").at(0);
  EXPECT_EQ(listen.at("milestone"), "listen");
  const auto& step = listen.at("moved").at(0);
  EXPECT_EQ(step.at("key"), "container phase:15");
  EXPECT_EQ(step.at("state").at("state"), "CPU");
  ASSERT_EQ(step.at("states").size(), 1U) << step.dump();
  EXPECT_EQ(step.at("states").at(0).at("state"), "CPU");
  EXPECT_NEAR(step.at("share").get<double>(), 1.0, 0.2);
  // What the share is of, and the rest with its interval, as the text says.
  const auto& shift = result.steps.milestones.front();
  EXPECT_EQ(listen.at("moved_explain_shift").get<bool>(), shift.moved_explain_shift());
  EXPECT_DOUBLE_EQ(listen.at("shares_of_ns").get<double>(), shift.shared_shift_ns());
  EXPECT_DOUBLE_EQ(step.at("share").get<double>() * listen.at("shares_of_ns").get<double>(),
                   step.at("shift_ns").get<double>());
  EXPECT_DOUBLE_EQ(listen.at("unattributed_low_ns").get<double>(),
                   listen.at("low_ns").get<double>() - listen.at("moved_total_ns").get<double>());
  EXPECT_DOUBLE_EQ(listen.at("unattributed_high_ns").get<double>(),
                   listen.at("high_ns").get<double>() - listen.at("moved_total_ns").get<double>());
  ASSERT_TRUE(shift.moved_explain_shift()) << "step 15's +3 ms lies within listen's interval";
  const auto rest_row = "| in no moved step | " + signed_duration(shift.unattributed_ns()) + " | [" +
                        signed_duration(shift.unattributed_low_ns()) + ", " +
                        signed_duration(shift.unattributed_high_ns()) + "] | not told from 0 |";
  EXPECT_NE(markdown.str().find(rest_row), std::string::npos) << rest_row << "\n" << markdown.str();
  EXPECT_NE(markdown.str().find("; moved total +3."), std::string::npos) << markdown.str();
  EXPECT_EQ(doc.at("metrics").at(0).at("verdict"), "regressed");
  std::ostringstream junit;
  write_gate_junit(result, {}, junit);
  EXPECT_NE(junit.str().find("moved: container 15 CONTAINER_CGROUP_SETUP +3."), std::string::npos) << junit.str();
}

// ---- the syscalls within a moved step ---------------------------------------

// The demo's steps, each traced with --syscalls: a little of mkdir, openat
// and read in every step.
std::vector<StepPlan> traced_steps(std::uint32_t seed) {
  auto steps = demo_steps(seed);
  for (auto& plan : steps)
    plan.syscall_ms = std::map<std::string, double>{{"mkdir", 0.1}, {"openat", 0.2}, {"read", 0.05}};
  return steps;
}

// 2 ms more in step 15, 1.9 ms of it in mkdir: the step names mkdir alone,
// not the calls whose means wandered by a few % of the shift.
RunFigures mkdir_in_step_15(std::uint32_t seed) {
  auto slower = traced_steps(seed);
  slower[3].path_ms = plus(slower[3].path_ms, 2.0);
  slower[3].syscall_ms = std::map<std::string, double>{{"mkdir", 2.0}, {"openat", 0.25}, {"read", 0.04}};
  return run_of_steps(slower);
}

TEST(StepComparison, AMovedStepNamesTheSyscallThatMoved) {
  const auto result = compare_runs(run_of_steps(traced_steps(11)), mkdir_in_step_15(110), {});
  ASSERT_TRUE(result.steps.syscalls_compared);
  EXPECT_EQ(result.steps.syscalls_unavailable, "");
  const auto& listen = result.steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 1U);
  const auto& moved = shift_of(result.steps, listen.moved.front());
  EXPECT_EQ(moved.key, "container phase:15");
  ASSERT_EQ(moved.syscalls.size(), 1U) << "openat's +0.05 ms is under 10 % of the step's shift";
  EXPECT_EQ(moved.syscalls.front().name, "mkdir");
  EXPECT_NEAR(moved.syscalls.front().shift_ns, 1.9e6, 1e3);
  EXPECT_EQ(moved_syscalls(moved), "mkdir +1.90 ms");
  for (const auto& shift : result.steps.shifts) {
    if (!shift.moved) EXPECT_TRUE(shift.syscalls.empty()) << shift.key << ": a step that did not move names none";
  }

  std::ostringstream text;
  write_gate_report(result, {}, text);
  EXPECT_NE(text.str().find("container 15 CONTAINER_CGROUP_SETUP +2."), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(", CPU +2.00 ms, syscalls mkdir +1.90 ms"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("the syscalls whose mean time moved by 10% of its shift"), std::string::npos) << text.str();
  std::ostringstream markdown;
  write_gate_markdown(result, {}, markdown);
  EXPECT_NE(markdown.str().find("| states | syscalls |"), std::string::npos) << markdown.str();
  EXPECT_NE(markdown.str().find("| CPU +2.00 ms | mkdir \\+1\\.90 ms |"), std::string::npos) << markdown.str();
  std::ostringstream junit;
  write_gate_junit(result, {}, junit);
  EXPECT_NE(junit.str().find("syscalls mkdir +1.90 ms"), std::string::npos) << junit.str();
  std::ostringstream json;
  write_gate_json(result, {}, json);
  const auto doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc.at("steps").at("syscalls_compared"), true);
  const auto& calls = doc.at("steps").at("milestones").at(0).at("moved").at(0).at("syscalls");
  ASSERT_EQ(calls.size(), 1U) << calls.dump();
  EXPECT_EQ(calls.at(0).at("name"), "mkdir");
  EXPECT_NEAR(calls.at(0).at("shift_ns").get<double>(), 1.9e6, 1e3);
}

// A call of one run only moved by all its time; no more than three are
// named, the largest shift first, whatever its sign.
TEST(StepComparison, AtMostThreeSyscallsAreNamedAndOneRunsCallsCount) {
  auto slower = traced_steps(120);
  slower[3].path_ms = plus(slower[3].path_ms, 2.0);
  slower[3].syscall_ms = std::map<std::string, double>{{"mkdir", 1.1}, {"fsync", 0.6}, {"openat", 0.5}, {"read", 0.05}};
  auto before = traced_steps(12);
  before[3].syscall_ms->emplace("close", 0.25);  // gone in the new run: -0.25 ms, the 4th largest
  const auto steps = compare_steps(run_of_steps(before), run_of_steps(slower), {});
  const auto& listen = steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 1U);
  const auto& moved = shift_of(steps, listen.moved.front());
  EXPECT_EQ(moved_syscalls(moved), "mkdir +1.00 ms, fsync +600 us, openat +300 us");
}

// Judged noise-free, a call that only waited longer for a CPU did not move.
TEST(StepComparison, NoiseFreeSyscallTimesLeaveTheRunQueueOut) {
  auto busier = traced_steps(130);
  busier[3].path_ms = plus(busier[3].path_ms, 2.0);
  busier[3].syscall_ms = std::map<std::string, double>{{"mkdir", 2.0}, {"openat", 0.2}, {"read", 0.05}};
  auto now = run_of_steps(busier);
  now.steps->at("container phase:15").syscalls->at("openat").run_queue = 1'000'000;
  const auto noise_free = compare_steps(run_of_steps(traced_steps(13)), now, {});
  EXPECT_EQ(moved_syscalls(shift_of(noise_free, noise_free.milestones.front().moved.front())), "mkdir +1.90 ms");
  const auto wall = compare_steps(run_of_steps(traced_steps(13)), now, {.figure = GateFigure::Wall});
  EXPECT_EQ(moved_syscalls(shift_of(wall, wall.milestones.front().moved.front())), "mkdir +1.90 ms, openat +1.00 ms");
}

// Syscalls traced in one run only: the steps are compared as without them,
// and the report says why no call is named.
TEST(StepComparison, SyscallsOfOneRunOnlyAreNotComparedAndTheReportSaysSo) {
  auto untraced = run_of_steps(demo_steps(14));
  const auto result = compare_runs(untraced, mkdir_in_step_15(140), {});
  EXPECT_FALSE(result.steps.syscalls_compared);
  EXPECT_EQ(result.steps.syscalls_unavailable,
            "syscalls were traced in the new run only (--syscalls): the moved steps' syscalls not compared");
  const auto& listen = result.steps.milestones.front();
  ASSERT_EQ(listen.moved.size(), 1U);
  EXPECT_TRUE(shift_of(result.steps, listen.moved.front()).syscalls.empty());
  std::ostringstream text;
  write_gate_report(result, {}, text);
  EXPECT_NE(text.str().find("  note: syscalls were traced in the new run only"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("the syscalls whose mean time moved"), std::string::npos) << text.str();
  std::ostringstream markdown;
  write_gate_markdown(result, {}, markdown);
  EXPECT_NE(markdown.str().find("note\\: syscalls were traced in the new run only"), std::string::npos)
      << markdown.str();

  const auto neither = compare_steps(untraced, run_of_steps(demo_steps(141)), {});
  EXPECT_FALSE(neither.syscalls_compared);
  EXPECT_EQ(neither.syscalls_unavailable, "") << "no run traced them: nothing to say";
}

}  // namespace
}  // namespace hacoboot
