// Scheduler states and wakeup edges, from the real BPF programs loaded
// through the Tracer: each event carries its thread's cumulative time on
// CPU, in the run queue, asleep and in I/O, and a wakeup across processes is
// recorded. Boots of the demo launcher and of sched-workload, a launch whose
// steps burn CPU and hand over through a pipe as Haconiwa's do.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "capture/tracer.hpp"
#include "fixture.hpp"
#include "model/boot_tracker.hpp"
#include "model/event.hpp"
#include "model/lanes.hpp"
#include "model/path_breakdown.hpp"
#include "support/process.hpp"

namespace hacoboot::it {
namespace {

#ifndef HACOBOOT_SCHED_WORKLOAD_PATH
#error "the build must define HACOBOOT_SCHED_WORKLOAD_PATH"
#endif

using namespace std::chrono_literals;

constexpr std::uint64_t kNsPerMs = 1'000'000;

// Runs argv (whose phase probe is in `program`) under a Tracer and returns
// the events it decoded, all of them: the run's processes are gone by then.
std::vector<Event> trace_run(const std::filesystem::path& program, const std::vector<std::string>& argv,
                             const std::filesystem::path& output_dir, ProcessResult& result,
                             std::uint64_t& accounted_threads_after) {
  std::vector<Event> events;
  Tracer tracer(Tracer::Config{.haconiwa_path = program.string(), .usdt_attach = UsdtAttach::Perf},
                [&](std::span<const std::byte> record) {
                  const auto event = decode_event(record);
                  if (event) {
                    events.push_back(*event);
                  } else {
                    ADD_FAILURE() << "undecodable record of " << record.size() << " bytes";
                  }
                });
  result = run_process(argv, output_dir, 60s);
  tracer.poll(0ms);
  accounted_threads_after = tracer.accounted_threads();
  EXPECT_EQ(tracer.counters().unaccounted_threads, 0U);
  return events;
}

struct Sample {
  std::uint64_t ts_ns = 0;
  SchedTotals sched;
};

// Every sample of a thread's totals, events and wakees alike, by tid.
std::map<std::uint32_t, std::vector<Sample>> samples_by_thread(const std::vector<Event>& events) {
  std::map<std::uint32_t, std::vector<Sample>> samples;
  for (const auto& e : events) {
    if (e.sched) samples[e.tid].push_back({e.ts_ns, *e.sched});
    if (e.wakee) samples[e.wakee->tid].push_back({e.ts_ns, e.wakee->sched});
  }
  for (auto& [tid, list] : samples) {
    std::stable_sort(list.begin(), list.end(), [](const Sample& a, const Sample& b) { return a.ts_ns < b.ts_ns; });
  }
  return samples;
}

// The invariant the breakdowns rest on: between two samples of one thread,
// the four states add up to the time between them, to the nanosecond.
void expect_totals_add_up(const std::vector<Event>& events) {
  std::size_t steps = 0;
  for (const auto& [tid, samples] : samples_by_thread(events)) {
    for (std::size_t i = 1; i < samples.size(); ++i, ++steps) {
      const SchedTotals step = samples[i].sched - samples[i - 1].sched;
      EXPECT_EQ(step.total(), samples[i].ts_ns - samples[i - 1].ts_ns)
          << "thread " << tid << ", samples at " << samples[i - 1].ts_ns << " and " << samples[i].ts_ns;
    }
  }
  EXPECT_GE(steps, 5U) << "too few samples of one thread to check";
}

const Event* find_event(const std::vector<Event>& events, EventKind kind, Role role, std::int64_t phase = 0) {
  for (const auto& e : events) {
    if (e.kind == kind && e.role == role && e.phase == phase) return &e;
  }
  return nullptr;
}

// A phase event of one role in a launch: phase events carry no role, so the
// emitting process is the one of that role forked in the launch.
const Event* find_phase(const std::vector<Event>& events, std::int64_t phase, std::uint32_t pid) {
  for (const auto& e : events) {
    if (e.kind == EventKind::Phase && e.phase == phase && e.pid == pid) return &e;
  }
  return nullptr;
}

// The container's pid: the child of the launch's Fork event that made it one.
std::uint32_t container_pid(const std::vector<Event>& events) {
  const Event* fork = find_event(events, EventKind::Fork, Role::Container);
  return fork != nullptr ? fork->child_pid : 0;
}

// The step between two events of one thread, both accounted.
SchedTotals step_between(const Event& from, const Event& to) {
  EXPECT_EQ(from.tid, to.tid);
  EXPECT_TRUE(from.sched && to.sched) << "an event without scheduler totals";
  if (!from.sched || !to.sched) return {};
  return *to.sched - *from.sched;
}

// sched-workload's boot: its events (those of other launches left out),
// its hpid and the container's burn by its own CPU clock.
struct WorkloadRun {
  std::vector<Event> events;
  std::uint32_t hpid = 0;
  std::uint64_t burn_cpu_ns = 0;
};

// The launch the events describe, reassembled as the tool does.
BootRecord reassemble(const std::vector<Event>& events, const std::string& command) {
  std::vector<BootRecord> boots;
  BootTracker tracker({.command = command}, [&boots](const BootRecord& boot) { boots.push_back(boot); });
  for (const auto& event : events) tracker.on_event(event);
  tracker.finish_all();
  EXPECT_EQ(boots.size(), 1U) << "one launch traced";
  return boots.empty() ? BootRecord{} : boots.front();
}

const LaneStep* find_step(const BootAnalysis& analysis, Lane lane, std::int64_t phase) {
  const auto found = std::find_if(analysis.steps.begin(), analysis.steps.end(), [&](const LaneStep& step) {
    return step.lane == lane && step.step == Step{Step::Kind::Phase, phase};
  });
  return found == analysis.steps.end() ? nullptr : &*found;
}

// The rows' shares of the path to listen cover it exactly.
void expect_listen_path_covered(const BootRecord& boot, const BootAnalysis& analysis) {
  ASSERT_TRUE(boot.complete() && analysis.to_listen);
  EXPECT_FALSE(analysis.forks_only);
  std::uint64_t on_path = 0;
  for (const auto& step : analysis.steps) {
    on_path += step.on_listen_path_ns;
    if (step.states) {
      EXPECT_EQ(step.states->total(), step.duration()) << step_name(*step.step);
    }
  }
  EXPECT_EQ(on_path, *boot.listen_ns - *boot.start_ns);
  EXPECT_EQ(analysis.to_listen->duration(), *boot.listen_ns - *boot.start_ns);
  PathBreakdown breakdown;
  breakdown.add(analysis);
  double shares = 0;
  for (const auto& [key, row] : breakdown.steps()) shares += breakdown.listen_path_share(row);
  EXPECT_NEAR(shares, 1.0, 1e-9);
}

class SchedStatesTest : public IntegrationTest {
 protected:
  std::vector<Event> trace(const std::filesystem::path& program, const std::vector<std::string>& argv,
                           std::string* out = nullptr) {
    ProcessResult result;
    std::uint64_t accounted_after = 0;
    auto events = trace_run(program, argv, dir(), result, accounted_after);
    EXPECT_TRUE(result.status.exited && result.status.code == 0) << result.status.describe() << result.err;
    // Every thread accounted has exited: the scheduler hooks are back to one load.
    EXPECT_EQ(accounted_after, 0U);
    if (out != nullptr) *out = result.out;
    return events;
  }

  WorkloadRun trace_workload() {
    WorkloadRun run;
    std::string out;
    run.events = trace(HACOBOOT_SCHED_WORKLOAD_PATH, {HACOBOOT_SCHED_WORKLOAD_PATH, "20"}, &out);
    std::istringstream fields(out);
    std::string hpid_key;
    std::string burn_key;
    fields >> hpid_key >> run.hpid >> burn_key >> run.burn_cpu_ns;
    EXPECT_EQ(burn_key, "burn_cpu_ns") << out;
    std::erase_if(run.events, [&](const Event& e) { return e.hpid != run.hpid; });
    return run;
  }
};

TEST_F(SchedStatesTest, SleepAfterAPhaseIsInterruptibleSleepOfTheNextStep) {
  const auto events =
      trace(launcher(), {launcher().string(), "--no-namespaces", "--phase-delay", "13:20", "--", "/bin/true"});
  const std::uint32_t container = container_pid(events);
  const Event* filesystem_setup = find_phase(events, 13, container);
  const Event* rlimit_setup = find_phase(events, 14, container);
  ASSERT_TRUE(container != 0 && filesystem_setup != nullptr && rlimit_setup != nullptr);

  const SchedTotals step = step_between(*filesystem_setup, *rlimit_setup);
  EXPECT_GE(step.sleep, 18 * kNsPerMs) << "the launcher sleeps 20 ms after phase 13";
  expect_totals_add_up(events);
}

// What follows a boot's listen delays no boot: a container that runs for
// hours must not keep the scheduler hooks on. Accounting ends at the
// launch's first listen, the listen event carrying the last totals.
TEST_F(SchedStatesTest, AccountingEndsAtTheBootsListenWhileItsContainerRuns) {
  std::vector<Event> events;
  Tracer tracer(Tracer::Config{.haconiwa_path = launcher().string(), .usdt_attach = UsdtAttach::Perf},
                [&](std::span<const std::byte> record) {
                  if (const auto event = decode_event(record)) events.push_back(*event);
                });
  Process boot({launcher().string(), "--no-namespaces", "--", app().string(), "--hold-ms", "5000"}, dir());
  const auto listened = [&] {
    tracer.poll(10ms);
    return std::any_of(events.begin(), events.end(), [](const Event& e) { return e.kind == EventKind::Listen; });
  };
  ASSERT_TRUE(wait_until(listened, 20s)) << "no listen within 20 s";
  ASSERT_TRUE(boot.running()) << "the container holds its socket for 5 s";
  EXPECT_EQ(tracer.accounted_threads(), 0U) << "threads still accounted after the boot's listen";
  const auto listen =
      std::find_if(events.begin(), events.end(), [](const Event& e) { return e.kind == EventKind::Listen; });
  EXPECT_TRUE(listen->sched) << "the listen event carries the listener's totals";
  const auto accounted_before = std::count_if(events.begin(), events.end(), [](const Event& e) { return e.sched; });
  EXPECT_GE(accounted_before, 10) << "the boot's steps before listen carry totals";
}

TEST_F(SchedStatesTest, CpuBurnIsCpuTimeOfItsStep) {
  const auto [events, hpid, burn_cpu_ns] = trace_workload();
  const std::uint32_t container = container_pid(events);
  const Event* start = find_phase(events, 11, container);
  const Event* burnt = find_phase(events, 12, container);
  ASSERT_TRUE(container != 0 && start != nullptr && burnt != nullptr);

  const SchedTotals step = step_between(*start, *burnt);
  // The burn lies within the step; what the machine's load adds is run queue time.
  EXPECT_GE(step.cpu, burn_cpu_ns - burn_cpu_ns / 100) << "the container's own clock: " << burn_cpu_ns << " ns";
  EXPECT_GE(step.cpu, (step.cpu + step.sleep + step.io) * 9 / 10) << "sleep " << step.sleep << ", io " << step.io;
  const auto excess = static_cast<std::int64_t>(step.cpu) - static_cast<std::int64_t>(burn_cpu_ns);
  RecordProperty("cpu_minus_thread_clock_ns", std::to_string(excess));
  expect_totals_add_up(events);
}

TEST_F(SchedStatesTest, ThreadIsAccountedFromItsClone) {
  const auto [events, hpid, burn_cpu_ns] = trace_workload();
  const std::uint32_t container = container_pid(events);
  const Event* from_thread = find_phase(events, 13, container);
  ASSERT_TRUE(container != 0 && from_thread != nullptr);
  EXPECT_NE(from_thread->tid, container) << "phase 13 is passed by a thread of the container";
  ASSERT_TRUE(from_thread->sched.has_value());
  EXPECT_GE(from_thread->sched->sleep, 5 * kNsPerMs) << "the thread sleeps 5 ms first";
  expect_totals_add_up(events);
}

TEST_F(SchedStatesTest, ContainerClosingTheDonePipeWakesTheSupervisor) {
  const auto [events, hpid, burn_cpu_ns] = trace_workload();
  const std::uint32_t container = container_pid(events);
  const Event* fork = find_event(events, EventKind::Fork, Role::Container);
  const Event* burnt = find_phase(events, 12, container);
  const Event* end_setup = find_phase(events, 3, hpid);
  ASSERT_TRUE(fork != nullptr && burnt != nullptr && end_setup != nullptr);

  std::vector<const Event*> wakeups;
  for (const auto& e : events) {
    if (e.kind != EventKind::Wakeup) continue;
    ASSERT_TRUE(e.wakee.has_value());
    EXPECT_NE(e.pid, e.wakee->pid) << "a wakeup within a process is no edge";
    if (e.pid == container && e.wakee->pid == hpid) wakeups.push_back(&e);
  }
  ASSERT_EQ(wakeups.size(), 1U) << "the container wakes the supervisor once, closing the pipe";
  const Event& wakeup = *wakeups.front();
  EXPECT_EQ(wakeup.role, Role::Container);
  EXPECT_EQ(wakeup.tid, container);
  EXPECT_EQ(wakeup.wakee->role, Role::Launcher);
  EXPECT_EQ(wakeup.wakee->tid, hpid);
  EXPECT_EQ(wakeup.wakee->hpid, hpid);
  EXPECT_EQ(wakeup.wakee->launch, wakeup.launch);
  EXPECT_LT(burnt->ts_ns, wakeup.ts_ns);
  EXPECT_LT(wakeup.ts_ns, end_setup->ts_ns);

  // From its fork of the container to the wakeup the supervisor was blocked
  // on the pipe, through most of the container's burn at least.
  ASSERT_TRUE(fork->sched.has_value());
  const SchedTotals waited = wakeup.wakee->sched - *fork->sched;
  EXPECT_GE(waited.sleep, burn_cpu_ns / 2);
  expect_totals_add_up(events);
}

// The supervisor waits on the done pipe from its fork until the container
// has burnt 20 ms of CPU in its setup: its END_SETUP lasts that long, and
// none of it is on the path to listen.
TEST_F(SchedStatesTest, WithTheDonePipeTheSupervisorsEndSetupIsOffThePathToListen) {
  const auto events =
      trace(launcher(), {launcher().string(), "--no-namespaces", "--burn", "13:20", "--", app().string()});
  const BootRecord boot = reassemble(events, app().string());
  const BootAnalysis analysis = analyse_boot(boot);
  expect_listen_path_covered(boot, analysis);

  const LaneStep* end_setup = find_step(analysis, Lane::Supervisor, 3);
  const LaneStep* burnt = find_step(analysis, Lane::Container, 14);
  ASSERT_TRUE(end_setup != nullptr && burnt != nullptr);
  EXPECT_GE(end_setup->duration(), 20 * kNsPerMs) << "it waited through the container's burn";
  EXPECT_EQ(end_setup->on_listen_path_ns, 0U);
  ASSERT_TRUE(burnt->states);
  EXPECT_GE(burnt->states->cpu, 20 * kNsPerMs);
  EXPECT_EQ(burnt->on_listen_path_ns, burnt->duration()) << "the container's burn is on the path";
  EXPECT_TRUE(analysis.noise_free_listen());
}

// With the uid-map handshake the container waits for the supervisor's
// mapping work (a 10 ms burn): the path to listen runs through the
// supervisor after the container started, inside its END_SETUP.
TEST_F(SchedStatesTest, WithTheUidMapHandshakeThePathToListenCrossesIntoTheSupervisor) {
  const auto events = trace(launcher(), {launcher().string(), "--no-namespaces", "--uid-map-handshake", "--burn",
                                         "uid-map:10", "--", app().string()});
  const BootRecord boot = reassemble(events, app().string());
  const BootAnalysis analysis = analyse_boot(boot);
  expect_listen_path_covered(boot, analysis);

  const LaneStep* end_setup = find_step(analysis, Lane::Supervisor, 3);
  const LaneStep* container_start = find_step(analysis, Lane::Container, 11);
  ASSERT_TRUE(end_setup != nullptr && container_start != nullptr);
  EXPECT_GE(end_setup->on_listen_path_ns, 10 * kNsPerMs) << "the mapping work is on the path";
  EXPECT_GT(end_setup->end_ns, container_start->end_ns);
}

}  // namespace
}  // namespace hacoboot::it
