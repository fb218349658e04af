// Scheduler states and wakeup edges, from the real BPF programs loaded
// through the Tracer: each event carries its thread's cumulative time on
// CPU, in the run queue, asleep and in I/O, and a wakeup across processes is
// recorded. Boots of the demo launcher and of sched-workload, a launch whose
// steps burn CPU and hand over through a pipe as Haconiwa's do. The
// launcher's known work (--burn, --sleep, --fsync before a phase) is checked
// against its own clocks in its ground truth: only ratios of two
// measurements of the same work, never a wall-clock threshold.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "capture/tracer.hpp"
#include "fixture.hpp"
#include "model/boot_analysis.hpp"
#include "model/event.hpp"
#include "model/path_breakdown.hpp"
#include "pipeline/pipeline.hpp"
#include "support/build_paths.hpp"
#include "support/process.hpp"

namespace hacoboot::it {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kNsPerMs = 1'000'000;

// The least CPU time a step holding a burn of `burn_ns` (by the thread's own
// clock) may read. A reading between switches knows its CPU's steal time only
// up to the runqueue clock's last update, a tick ago at most: on a VM whose
// host steals much, a step can miss up to a tick of steal time.
// CpuOfABurnsStepAgreesWithTheLaunchersThreadClock bounds
// that error at 5 %; the tests of where a burn falls allow the same.
constexpr std::uint64_t most_of_burn(std::uint64_t burn_ns) {
  return burn_ns - burn_ns / 20;
}

// A ring-buffer record, its bytes as the Tracer handed them over.
using Record = std::vector<std::byte>;

// Runs argv (whose phase probe is in `program`) under a Tracer and returns
// the records it read, all of them: the run's processes are gone by then.
std::vector<Record> trace_run(const std::filesystem::path& program, const std::vector<std::string>& argv,
                              const std::filesystem::path& output_dir, ProcessResult& result,
                              std::uint64_t& accounted_threads_after) {
  std::vector<Record> records;
  Tracer tracer(Tracer::Config{.haconiwa_path = program.string(), .usdt_attach = UsdtAttach::Perf},
                [&](std::span<const std::byte> record) { records.emplace_back(record.begin(), record.end()); });
  result = run_process(argv, output_dir, 60s);
  tracer.poll(0ms);
  accounted_threads_after = tracer.accounted_threads();
  EXPECT_EQ(tracer.counters().unaccounted_threads, 0U);
  return records;
}

// The events of the records, each of which must decode.
std::vector<Event> decoded(const std::vector<Record>& records) {
  std::vector<Event> events;
  for (const auto& record : records) {
    if (const auto event = decode_event(record)) {
      events.push_back(*event);
    } else {
      ADD_FAILURE() << "undecodable record of " << record.size() << " bytes";
    }
  }
  return events;
}

// The boots of the records, through the tool's own pipeline (no cgroup
// paths: the launcher runs in the test's cgroup).
std::vector<BootRecord> boots_of(const std::vector<Record>& records, const std::string& command) {
  std::vector<BootRecord> boots;
  Pipeline pipeline({.command = command}, nullptr);
  pipeline.on_boot_done([&boots](const BootRecord& boot) { boots.push_back(boot); });
  for (const auto& record : records) pipeline.on_record(record);
  pipeline.finish();
  EXPECT_EQ(pipeline.undecodable(), 0U);
  return boots;
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

// One step of one thread of a boot, from the thread's BootRecord readings:
// from its previous step (its creation, with zero totals, for its first when
// its fork was traced) to this one.
struct ThreadStep {
  std::uint32_t tid = 0;
  Step step;
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
  SchedTotals states;
};

std::vector<ThreadStep> thread_steps(const BootRecord& boot) {
  std::vector<ThreadStep> steps;
  for (const auto& thread : boot.threads) {
    std::optional<ThreadSample> previous;
    if (thread.parent_tid) previous = ThreadSample{thread.created_ns, {}, std::nullopt};
    for (const auto& sample : thread.samples) {
      if (!sample.step) continue;
      if (previous) {
        steps.push_back({thread.tid, *sample.step, previous->ts_ns, sample.ts_ns, sample.totals - previous->totals});
      }
      previous = sample;
    }
  }
  return steps;
}

// The step of phase `phase` (each is passed by one process); null if none.
const ThreadStep* find_step(const std::vector<ThreadStep>& steps, std::int64_t phase) {
  const auto it = std::find_if(steps.begin(), steps.end(), [&](const ThreadStep& s) {
    return s.step.kind == Step::Kind::Phase && s.step.phase == phase;
  });
  return it != steps.end() ? &*it : nullptr;
}

// A piece of the launcher's injected work by its own clocks (truth.hpp):
// CLOCK_MONOTONIC span and the thread's CPU time over it.
struct Piece {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t cpu = 0;

  [[nodiscard]] std::int64_t wall() const { return end - start; }
  // The time the thread did not run: blocked, or waiting for a CPU.
  [[nodiscard]] std::int64_t off_cpu() const { return wall() - cpu; }
};

std::optional<Piece> find_piece(const std::map<std::string, std::int64_t>& facts, const std::string& what) {
  const auto start = facts.find(what + "_start");
  const auto end = facts.find(what + "_end");
  const auto cpu = facts.find(what + "_cpu");
  if (start == facts.end() || end == facts.end() || cpu == facts.end()) return std::nullopt;
  return Piece{start->second, end->second, cpu->second};
}

// Boots of the demo launcher, reassembled as the tool does, each with the
// launcher's ground truth of it.
struct LauncherBoot {
  BootRecord record;
  std::map<std::string, std::int64_t> facts;
  std::vector<ThreadStep> steps;
};

// sched-workload's boot: its events (those of other launches left out),
// its hpid and the container's burn by its own CPU clock.
struct WorkloadRun {
  std::vector<Event> events;
  std::uint32_t hpid = 0;
  std::uint64_t burn_cpu_ns = 0;
};

// The launch the records describe, reassembled as the tool does.
BootRecord reassemble(const std::vector<Record>& records, const std::string& command) {
  const auto boots = boots_of(records, command);
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
  std::vector<Record> trace(const std::filesystem::path& program, const std::vector<std::string>& argv,
                            std::string* out = nullptr) {
    ProcessResult result;
    std::uint64_t accounted_after = 0;
    auto records = trace_run(program, argv, dir(), result, accounted_after);
    EXPECT_TRUE(result.status.exited && result.status.code == 0) << result.status.describe() << result.err;
    // Every thread accounted has exited: the scheduler hooks are back to one load.
    EXPECT_EQ(accounted_after, 0U);
    if (out != nullptr) *out = result.out;
    return records;
  }

  // The launcher with `args` runs boots of the demo app (listening ends a
  // boot's accounting), through taskset pinned to `cpu` when given.
  std::vector<LauncherBoot> trace_launcher(const std::vector<std::string>& args,
                                           std::optional<int> cpu = std::nullopt) {
    const auto truth_path = new_file("truth.tsv");
    std::vector<std::string> argv;
    if (cpu) argv = {taskset(), "-c", std::to_string(*cpu)};
    argv.insert(argv.end(), {launcher().string(), "--no-namespaces", "--truth", truth_path.string()});
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", app().string(), "--hold-ms", "0"});
    const auto traced = trace(launcher(), argv);
    expect_totals_add_up(decoded(traced));

    const auto records = boots_of(traced, "");
    std::vector<LauncherBoot> boots;
    for (const auto& launch : parse_truth_launches(read_file(truth_path))) {
      const auto record = std::find_if(records.begin(), records.end(),
                                       [&](const BootRecord& r) { return r.hpid == launch.hpid && r.complete(); });
      if (record == records.end()) {
        ADD_FAILURE() << "no complete boot traced for the launch of hpid " << launch.hpid;
        continue;
      }
      boots.push_back({*record, launch.facts, thread_steps(*record)});
    }
    return boots;
  }

  // A single boot of the launcher; fails the test (fatally) without one.
  LauncherBoot trace_one_boot(const std::vector<std::string>& args, std::optional<int> cpu = std::nullopt) {
    auto boots = trace_launcher(args, cpu);
    if (boots.size() != 1) {
      ADD_FAILURE() << boots.size() << " boots traced, 1 expected";
      return {};
    }
    return boots.front();
  }

  // Three boots with both of Haconiwa's pipes and known work in supervisor
  // and container steps, for the accuracy tests. The burns last 100 ms: a
  // reading in the middle of a stretch on a CPU knows that CPU's steal and
  // interrupt time only up to its runqueue clock's last update, a tick ago
  // at most (4 ms at HZ=250), which 5 % of 20 ms did not cover on a VM whose
  // host took more.
  std::vector<LauncherBoot> trace_accuracy_boots() {
    return trace_launcher({"-n", "3", "--uid-map-handshake", "--sleep", "uid-map:2", "--burn", "2:100", "--burn",
                           "13:100", "--sleep", "15:2", "--fsync", "16:2", "--io-dir", dir().string()});
  }

  static std::string taskset() {
    const auto path = find_in_path("taskset");
    return path ? path->string() : "taskset";
  }

  WorkloadRun trace_workload() {
    WorkloadRun run;
    std::string out;
    run.events = decoded(trace(test::sched_workload(), {test::sched_workload().string(), "20"}, &out));
    std::istringstream fields(out);
    std::string hpid_key;
    std::string burn_key;
    fields >> hpid_key >> run.hpid >> burn_key >> run.burn_cpu_ns;
    EXPECT_EQ(burn_key, "burn_cpu_ns") << out;
    std::erase_if(run.events, [&](const Event& e) { return e.hpid != run.hpid; });
    return run;
  }
};

// The tool names a step by the phase that ends it: a 20 ms burn the
// launcher does before passing phase 13 is CPU time of step 13, at least 90 %
// of what the launcher's own CPU clock says the burn took.
TEST_F(SchedStatesTest, CpuBurnBeforePhase13IsCpuTimeOfStep13) {
  const auto boot = trace_one_boot({"--burn", "13:20"});
  ASSERT_FALSE(HasFailure());
  const ThreadStep* step = find_step(boot.steps, 13);
  const auto burn = find_piece(boot.facts, "burn_13");
  ASSERT_TRUE(step != nullptr && burn) << "no step 13 or no burn_13 in the truth";
  EXPECT_EQ(step->tid, boot.record.container_pid);
  EXPECT_GE(static_cast<std::int64_t>(step->states.cpu), burn->cpu * 9 / 10)
      << "the burn used " << burn->cpu << " ns of CPU by the launcher's clock";
}

// The sleep's span, by the launcher's clock, is sleep and the wait for a CPU
// once woken (the machine's load): nearly all of the rest must be sleep,
// not I/O.
TEST_F(SchedStatesTest, SleepBeforePhase13IsInterruptibleSleepOfStep13) {
  const auto boot = trace_one_boot({"--sleep", "13:20"});
  ASSERT_FALSE(HasFailure());
  const ThreadStep* step = find_step(boot.steps, 13);
  const auto slept = find_piece(boot.facts, "sleep_13");
  ASSERT_TRUE(step != nullptr && slept) << "no step 13 or no sleep_13 in the truth";
  const SchedTotals& s = step->states;
  const auto blocked_in_span = slept->off_cpu() - static_cast<std::int64_t>(s.run_queue);
  EXPECT_GE(static_cast<std::int64_t>(s.sleep), blocked_in_span * 9 / 10)
      << "slept " << slept->wall() << " ns by the launcher's clock; step 13: sleep " << s.sleep << ", run queue "
      << s.run_queue << ", io " << s.io;
  EXPECT_GE(s.sleep, 9 * (s.sleep + s.io) / 10) << "blocked, but not asleep: io " << s.io;
}

// fsync waits for the device in io_schedule where the filesystem writes
// through; tmpfs, ramfs and overlayfs on such a filesystem return at once.
TEST_F(SchedStatesTest, FsyncBeforePhase13IsIoOfStep13) {
  skip_unless_device_waits();
  if (IsSkipped() || HasFatalFailure()) return;
  const auto boot = trace_one_boot({"--fsync", "13:10", "--io-dir", dir().string()});
  ASSERT_FALSE(HasFailure());
  const ThreadStep* step = find_step(boot.steps, 13);
  const auto fsynced = find_piece(boot.facts, "fsync_13");
  ASSERT_TRUE(step != nullptr && fsynced) << "no step 13 or no fsync_13 in the truth";
  const SchedTotals& s = step->states;
  const auto blocked_in_span = fsynced->off_cpu() - static_cast<std::int64_t>(s.run_queue);
  EXPECT_GT(s.io, 0U);
  EXPECT_GE(static_cast<std::int64_t>(s.io), blocked_in_span / 2)
      << "10 fsyncs took " << fsynced->wall() << " ns by the launcher's clock; step 13: io " << s.io << ", sleep "
      << s.sleep << ", run queue " << s.run_queue;
}

// A busy loop pinned to the CPU the launcher (and so its container) is
// pinned to takes its share of that CPU during the container's 20 ms burn:
// the time the burn spent off the CPU by the launcher's clocks is run queue.
TEST_F(SchedStatesTest, BusyLoopOnTheContainersCpuShowsAsRunQueueTime) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int cpu = CPU_SETSIZE - 1;
  while (cpu > 0 && !CPU_ISSET(cpu, &allowed)) --cpu;
  Process busy({taskset(), "-c", std::to_string(cpu), "/bin/sh", "-c", "while :; do :; done"}, dir());
  ASSERT_TRUE(wait_until(
      [&] {
        const auto stat = proc_stat(busy.pid());
        return stat && stat->comm == "sh";
      },
      10s))
      << "the busy loop did not start";

  const auto boot = trace_one_boot({"--burn", "13:20"}, cpu);
  ASSERT_FALSE(HasFailure());
  const ThreadStep* step = find_step(boot.steps, 13);
  const auto burn = find_piece(boot.facts, "burn_13");
  ASSERT_TRUE(step != nullptr && burn) << "no step 13 or no burn_13 in the truth";
  const SchedTotals& s = step->states;
  EXPECT_GE(burn->off_cpu(), burn->cpu / 4) << "the busy loop did not share the container's CPU";
  EXPECT_GE(static_cast<std::int64_t>(s.run_queue), burn->off_cpu() * 9 / 10)
      << "the burn was off the CPU " << burn->off_cpu() << " ns by the launcher's clocks; step 13: run queue "
      << s.run_queue << ", sleep " << s.sleep << ", io " << s.io;
}

// Accuracy, boot by boot: every step's four states add up to its wall time
// to the nanosecond, a forked process's first step (from its fork) included.
TEST_F(SchedStatesTest, StatesAddUpToTheWallTimeOfEveryStepOfEveryBoot) {
  const auto boots = trace_accuracy_boots();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(boots.size(), 3U);
  for (const auto& boot : boots) {
    SCOPED_TRACE("boot of hpid " + std::to_string(boot.record.hpid));
    for (const auto& step : boot.steps) {
      EXPECT_EQ(step.states.total(), step.end_ns - step.begin_ns) << step_name(step.step) << " of thread " << step.tid;
    }
    // END_SETUP may follow the listen that ends the accounting.
    EXPECT_GE(boot.steps.size(), 14U) << "START_FORK, the container's 11 to 21, execve and listen";
  }
}

// Accuracy, boot by boot: the CPU time of a step holding a 100 ms burn, in
// the supervisor (START_FORK) and in the container (13), agrees with the
// launcher's per-thread CPU clock of the burn within 5 %.
TEST_F(SchedStatesTest, CpuOfABurnsStepAgreesWithTheLaunchersThreadClock) {
  const auto boots = trace_accuracy_boots();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(boots.size(), 3U);
  for (const auto& boot : boots) {
    SCOPED_TRACE("boot of hpid " + std::to_string(boot.record.hpid));
    for (const auto& [phase, burn_key] : {std::pair{2, "burn_2"}, std::pair{13, "burn_13"}}) {
      const ThreadStep* step = find_step(boot.steps, phase);
      const auto burn = find_piece(boot.facts, burn_key);
      ASSERT_TRUE(step != nullptr && burn) << "no step " << phase << " or no " << burn_key << " in the truth";
      const auto cpu = static_cast<std::int64_t>(step->states.cpu);
      EXPECT_LE(std::abs(cpu - burn->cpu), burn->cpu / 20)
          << "step " << phase << ": " << cpu << " ns on CPU, the launcher's clock " << burn->cpu << " ns; run queue "
          << step->states.run_queue << ", sleep " << step->states.sleep << ", io " << step->states.io
          << "; the burn's wall time " << burn->wall() << " ns";
      RecordProperty("cpu_minus_thread_clock_ns_step_" + std::to_string(phase), std::to_string(cpu - burn->cpu));
    }
  }
}

// What follows a boot's listen delays no boot: a container that runs for
// hours must not keep the scheduler hooks on. Accounting ends at the
// launch's first listen, the listen event carrying the last totals.
// The threads of a launch past the few its entry lists (a worker pool
// started before listen) are found by a walk of the map: none is left
// accounted either way.
class AccountingEndsTest : public SchedStatesTest, public ::testing::WithParamInterface<int> {};

TEST_P(AccountingEndsTest, AtTheBootsListenWhileItsContainerRuns) {
  std::vector<Event> events;
  Tracer tracer(Tracer::Config{.haconiwa_path = launcher().string(), .usdt_attach = UsdtAttach::Perf},
                [&](std::span<const std::byte> record) {
                  if (const auto event = decode_event(record)) events.push_back(*event);
                });
  Process boot({launcher().string(), "--no-namespaces", "--", app().string(), "--hold-ms", "5000", "--workers",
                std::to_string(GetParam())},
               dir());
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

INSTANTIATE_TEST_SUITE_P(Workers, AccountingEndsTest, ::testing::Values(0, 20));

TEST_F(SchedStatesTest, CpuBurnIsCpuTimeOfItsStep) {
  const auto [events, hpid, burn_cpu_ns] = trace_workload();
  const std::uint32_t container = container_pid(events);
  const Event* start = find_phase(events, 11, container);
  const Event* burnt = find_phase(events, 12, container);
  ASSERT_TRUE(container != 0 && start != nullptr && burnt != nullptr);

  const SchedTotals step = step_between(*start, *burnt);
  // The burn lies within the step; what the machine's load adds is run queue time.
  EXPECT_GE(step.cpu, most_of_burn(burn_cpu_ns)) << "the container's own clock: " << burn_cpu_ns << " ns";
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
  const auto records =
      trace(launcher(), {launcher().string(), "--no-namespaces", "--burn", "13:20", "--", app().string()});
  const BootRecord boot = reassemble(records, app().string());
  const BootAnalysis analysis = analyse_boot(boot);
  expect_listen_path_covered(boot, analysis);

  const LaneStep* end_setup = find_step(analysis, Lane::Supervisor, 3);
  const LaneStep* burnt = find_step(analysis, Lane::Container, 13);
  ASSERT_TRUE(end_setup != nullptr && burnt != nullptr);
  EXPECT_GE(end_setup->duration(), 20 * kNsPerMs) << "it waited through the container's burn";
  EXPECT_EQ(end_setup->on_listen_path_ns, 0U);
  ASSERT_TRUE(burnt->states);
  EXPECT_GE(burnt->states->cpu, most_of_burn(20 * kNsPerMs)) << "the container's 20 ms burn";
  EXPECT_EQ(burnt->on_listen_path_ns, burnt->duration()) << "the container's burn is on the path";
  EXPECT_TRUE(analysis.noise_free_listen());
}

// With the uid-map handshake the container waits for the supervisor's
// mapping work (a 10 ms burn): the path to listen runs through the
// supervisor after the container started, inside its END_SETUP.
TEST_F(SchedStatesTest, WithTheUidMapHandshakeThePathToListenCrossesIntoTheSupervisor) {
  const auto records = trace(launcher(), {launcher().string(), "--no-namespaces", "--uid-map-handshake", "--burn",
                                          "uid-map:10", "--", app().string()});
  const BootRecord boot = reassemble(records, app().string());
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
