// Syscalls per step, from the real BPF programs loaded through the Tracer:
// the kernel side times every syscall of a traced launch's accounted
// threads and their user time, per segment between their events; the boot
// model puts them under the steps. Boots of the demo launcher with known
// work before a phase (--sleep, --fsync, --nosys): which syscall it is, how
// many calls, and their scheduler states. Both sets of syscall hooks: execve
// and listen through the per-syscall tracepoints (the raw hooks then only
// time), or through the raw hooks alone.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "capture/syscall_tracepoints.hpp"
#include "capture/tracer.hpp"
#include "fixture.hpp"
#include "model/blocking.hpp"
#include "model/boot_analysis.hpp"
#include "model/kernel_symbols.hpp"
#include "model/syscall_names.hpp"
#include "pipeline/pipeline.hpp"
#include "support/process.hpp"

namespace hacoboot::it {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kNsPerMs = 1'000'000;

enum class Hooks : std::uint8_t { Tracepoints, RawSyscalls };

struct TracedRun {
  std::vector<BootRecord> boots;
  TracerCounters counters;
};

class SyscallsTest : public IntegrationTest, public ::testing::WithParamInterface<Hooks> {
 protected:
  // The launcher's boots (args, then the app) through the tool's own
  // pipeline, each boot's syscalls taken from the kernel when it ends.
  TracedRun trace_launcher(const std::vector<std::string>& args, const std::vector<std::string>& wrapper = {},
                           bool account_syscalls = true) {
    TracedRun run;
    std::unique_ptr<SyscallTracepointLookup> lookup;
    if (GetParam() == Hooks::Tracepoints) lookup = std::make_unique<SyscallTracepointLookup>();
    Pipeline pipeline({.command = app().string()}, nullptr);
    pipeline.on_boot_done([&run](const BootRecord& boot) { run.boots.push_back(boot); });
    Tracer tracer(Tracer::Config{.haconiwa_path = launcher().string(),
                                 .syscall_tracepoints = lookup.get(),
                                 .raw_syscalls_fallback = GetParam() == Hooks::RawSyscalls,
                                 .account_syscalls = account_syscalls,
                                 .usdt_attach = UsdtAttach::Perf},
                  [&pipeline](std::span<const std::byte> record) { pipeline.on_record(record); });
    EXPECT_EQ(tracer.per_syscall_tracepoints(), GetParam() == Hooks::Tracepoints);
    pipeline.take_syscalls_from([&tracer](std::uint32_t launch) { return tracer.take_syscalls(launch); });
    const auto symbols = kernel_symbols();
    pipeline.take_blocking_from([&tracer, &symbols](std::uint32_t launch) {
      auto blocking = decode_blocking(tracer.take_blocking(launch), symbols);
      EXPECT_TRUE(blocking.has_value()) << "blocking entries that do not decode";
      return blocking.value_or(std::vector<BlockingAggregate>());
    });
    std::vector<std::string> argv = wrapper;
    argv.push_back(launcher().string());
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", app().string(), "--hold-ms", "0"});
    const auto result = run_process(argv, dir(), 60s);
    EXPECT_TRUE(result.status.exited && result.status.code == 0) << result.status.describe() << ": " << result.err;
    tracer.poll(0ms);
    pipeline.finish();
    EXPECT_EQ(pipeline.undecodable(), 0U);
    run.counters = tracer.counters();
    EXPECT_EQ(run.counters.syscalls_dropped, 0U);
    EXPECT_TRUE(tracer.take_syscalls(0).empty());
    EXPECT_TRUE(tracer.take_blocking(0).empty());
    EXPECT_EQ(run.counters.blocking_dropped, 0U);
    return run;
  }

  static KernelSymbols kernel_symbols() {
    const std::ifstream file("/proc/kallsyms");
    std::ostringstream text;
    text << file.rdbuf();
    return KernelSymbols::parse(text.str());
  }

  // The blocking points of `syscalls` in call `name`.
  static std::vector<BlockingPoint> blocked_in(const StepSyscalls& syscalls, const std::string& name) {
    std::vector<BlockingPoint> points;
    std::copy_if(syscalls.blocking.begin(), syscalls.blocking.end(), std::back_inserter(points),
                 [&name](const BlockingPoint& point) { return syscall_name(point.nr) == name; });
    return points;
  }

  // Whether a frame of `frames` is of a function whose name matches `pattern`.
  static bool has_frame(const std::vector<std::string>& frames, const std::string& pattern) {
    const std::regex function(pattern);
    return std::any_of(frames.begin(), frames.end(), [&function](const std::string& frame) {
      return std::regex_search(frame.substr(0, frame.find('+')), function);
    });
  }

  // Step `phase` of the one boot traced, with its syscalls; nullptr (a
  // failure) without.
  static const LaneStep* phase_step(const BootAnalysis& analysis, std::int64_t phase) {
    for (const auto& step : analysis.steps) {
      if (step.step && step.step->kind == Step::Kind::Phase && step.step->phase == phase && step.syscalls) {
        return &step;
      }
    }
    ADD_FAILURE() << "no step " << phase << " with syscalls";
    return nullptr;
  }

  static const SyscallTime* call_named(const StepSyscalls& syscalls, const std::string& name) {
    const auto found = std::find_if(syscalls.calls.begin(), syscalls.calls.end(),
                                    [&name](const SyscallTime& call) { return syscall_name(call.nr) == name; });
    return found == syscalls.calls.end() ? nullptr : &*found;
  }

  // The single boot of a run; fails the test (fatally) without one.
  BootAnalysis one_boot(const std::vector<std::string>& args, const std::vector<std::string>& wrapper = {}) {
    const auto run = trace_launcher(args, wrapper);
    if (run.boots.size() != 1) {
      ADD_FAILURE() << run.boots.size() << " boots traced, 1 expected";
      return {};
    }
    return analyse_boot(run.boots.front());
  }
};

// What the table and JSON rest on: the kernel's user time and syscall time
// of each step add up to the step's time and to its states, to the
// nanosecond, in every step of every boot with states; the nameless
// syscall (--nosys) included.
TEST_P(SyscallsTest, SyscallAndUserTimeAddUpToEveryStepOfEveryBoot) {
  const auto run = trace_launcher({"-n", "3", "-j", "2", "--uid-map-handshake", "--sleep", "13:2", "--burn", "2:2",
                                   "--nosys", "14:5", "--fsync", "16:2", "--io-dir", dir().string()});
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(run.boots.size(), 3U);
  std::size_t checked = 0;
  for (const auto& boot : run.boots) {
    EXPECT_FALSE(boot.syscalls.empty()) << "boot " << boot.hpid << " has no syscall aggregates";
    for (const auto& step : analyse_boot(boot).steps) {
      if (!step.step || !step.states) continue;
      ASSERT_TRUE(step.syscalls) << "a step with states but no syscalls in boot " << boot.hpid;
      auto sum = step.syscalls->in_calls();
      sum += step.syscalls->user;
      EXPECT_EQ(sum, *step.states) << "boot " << boot.hpid << ", step ending at " << step.end_ns << ": calls "
                                   << step.syscalls->in_calls().total() << " + user " << step.syscalls->user.total()
                                   << " of " << step.duration();
      EXPECT_EQ(sum.total(), step.duration());
      ++checked;
    }
  }
  EXPECT_GE(checked, 3U * 15U);
}

// A 20 ms sleep the container makes before phase 13 is clock_nanosleep in
// step 13, asleep for at least 19 ms of it, once.
TEST_P(SyscallsTest, SleepBeforePhase13IsClockNanosleepOfStep13) {
  const auto analysis = one_boot({"--sleep", "13:20"});
  ASSERT_FALSE(HasFailure());
  const LaneStep* step = phase_step(analysis, 13);
  ASSERT_NE(step, nullptr);
  const SyscallTime* sleep = call_named(*step->syscalls, "clock_nanosleep");
  ASSERT_NE(sleep, nullptr) << "no clock_nanosleep in step 13";
  EXPECT_EQ(sleep->count, 1U);
  EXPECT_GE(sleep->states.sleep, 19 * kNsPerMs);
  EXPECT_EQ(step->syscalls->calls.front().nr, sleep->nr) << "the step's most time is not its sleep";
}

// fsync waits for the device in io_schedule where the filesystem writes
// through: fsync's time is I/O, and its count the launcher's.
TEST_P(SyscallsTest, FsyncsBeforePhase13AreFsyncsWithIoTime) {
  skip_unless_device_waits();
  if (IsSkipped() || HasFatalFailure()) return;
  const auto analysis = one_boot({"--fsync", "13:4", "--io-dir", dir().string()});
  ASSERT_FALSE(HasFailure());
  const LaneStep* step = phase_step(analysis, 13);
  ASSERT_NE(step, nullptr);
  const SyscallTime* fsync = call_named(*step->syscalls, "fsync");
  ASSERT_NE(fsync, nullptr) << "no fsync in step 13";
  EXPECT_EQ(fsync->count, 4U);
  EXPECT_GT(fsync->states.io, 0U);
  const SyscallTime* write = call_named(*step->syscalls, "write");
  ASSERT_NE(write, nullptr) << "no write in step 13";
  EXPECT_EQ(write->count, 4U);
}

// A mount storm (200 tmpfs mounts and unmounts, no disk) blocks umount2 in
// RCU grace periods (synchronize_rcu_expedited): uninterruptibly, but not
// for I/O. The storm's calls block as sleep. (The rmdir of the mount point,
// in the launcher's /tmp, may really wait for the disk: the step's I/O.)
TEST_P(SyscallsTest, MountStormBeforePhase17BlocksAsSleepNotIo) {
  const auto analysis = one_boot({"--mounts", "17:200"});
  ASSERT_FALSE(HasFailure());
  const LaneStep* step = phase_step(analysis, 17);
  ASSERT_NE(step, nullptr);
  SchedTotals storm;
  for (const char* name : {"mount", "umount2"}) {
    const SyscallTime* call = call_named(*step->syscalls, name);
    ASSERT_NE(call, nullptr) << "no " << name << " in step 17";
    EXPECT_EQ(call->count, 200U) << name;
    storm += call->states;
  }
  EXPECT_GT(storm.sleep + storm.io, 0U) << "the mount storm never blocked";
  EXPECT_LE(storm.io, (storm.sleep + storm.io) / 10)
      << "mount and umount2 blocked: sleep " << storm.sleep << " ns, io " << storm.io << " ns";
}

// The sleep blocked in a nanosleep frame of the kernel, for at least 19 ms
// in all, and no traced thread woke it (a timer did).
TEST_P(SyscallsTest, SleepBeforePhase13BlocksInANanosleepFrame) {
  if (KernelSymbols symbols = kernel_symbols(); symbols.hidden()) GTEST_SKIP() << "/proc/kallsyms hides addresses";
  const auto analysis = one_boot({"--sleep", "13:20"});
  ASSERT_FALSE(HasFailure());
  const LaneStep* step = phase_step(analysis, 13);
  ASSERT_NE(step, nullptr);
  const auto points = blocked_in(*step->syscalls, "clock_nanosleep");
  ASSERT_FALSE(points.empty()) << "clock_nanosleep never blocked in step 13";
  std::uint64_t blocked = 0;
  for (const auto& point : points) blocked += point.time_ns;
  EXPECT_GE(blocked, 19 * kNsPerMs);
  EXPECT_TRUE(has_frame(points.front().frames, "^(do_nanosleep|hrtimer_nanosleep)$"))
      << "no nanosleep frame in " << testing::PrintToString(points.front().frames);
  EXPECT_EQ(wait_frame(points.front().frames), "do_nanosleep");
}

// The supervisor waits for its container on the done pipe (END_SETUP):
// blocked in a pipe read, woken by the container's write, its tid the
// container's and its role the container. The container sleeps first, so that the wait comes before
// its listen, while the supervisor is accounted. (A --pipe-wait in the
// supervisor is woken by a child of it that is no traced thread.)
TEST_P(SyscallsTest, SupervisorBlocksInAPipeReadWokenByTheContainer) {
  if (KernelSymbols symbols = kernel_symbols(); symbols.hidden()) GTEST_SKIP() << "/proc/kallsyms hides addresses";
  const auto run = trace_launcher({"--sleep", "13:10"});
  ASSERT_EQ(run.boots.size(), 1U);
  const auto& boot = run.boots.front();
  const auto analysis = analyse_boot(boot);
  const LaneStep* step = phase_step(analysis, 3);
  ASSERT_NE(step, nullptr);
  const auto points = blocked_in(*step->syscalls, "read");
  const auto woken = std::find_if(points.begin(), points.end(), [&boot](const BlockingPoint& point) {
    return point.waker_tid == boot.container_pid;
  });
  ASSERT_NE(woken, points.end()) << "no read of step 3 woken by the container " << boot.container_pid;
  EXPECT_EQ(woken->waker_lane, Lane::Container) << "the waker's role is not the container's";
  EXPECT_TRUE(has_frame(woken->frames, "pipe_read$")) << testing::PrintToString(woken->frames);
  EXPECT_TRUE(has_frame(woken->waker_frames, "pipe_write$")) << testing::PrintToString(woken->waker_frames);
}

// fsync blocks in the filesystem or the block layer, waiting for the device.
TEST_P(SyscallsTest, FsyncBlocksInAFilesystemOrBlockFrame) {
  skip_unless_device_waits();
  if (IsSkipped() || HasFatalFailure()) return;
  if (KernelSymbols symbols = kernel_symbols(); symbols.hidden()) GTEST_SKIP() << "/proc/kallsyms hides addresses";
  const auto analysis = one_boot({"--fsync", "13:4", "--io-dir", dir().string()});
  ASSERT_FALSE(HasFailure());
  const LaneStep* step = phase_step(analysis, 13);
  ASSERT_NE(step, nullptr);
  const auto points = blocked_in(*step->syscalls, "fsync");
  ASSERT_FALSE(points.empty()) << "fsync never blocked in step 13";
  const std::string fs_or_block =
      "^(submit_bio_wait|blkdev_issue_flush|jbd2_.*|ext4_.*|xfs_.*|btrfs_.*|"
      "folio_wait_.*|__filemap_fdatawait_range|file_write_and_wait_range|blk_.*)$";
  EXPECT_TRUE(std::any_of(points.begin(), points.end(), [&](const BlockingPoint& point) {
    return has_frame(point.frames, fs_or_block);
  })) << testing::PrintToString(points.front().frames);
}

// A syscall the resolver cannot name (no kernel has 1023: ENOSYS) is
// counted by number, exactly as often as the launcher made it, and its
// step still adds up.
TEST_P(SyscallsTest, NamelessSyscallIsCountedByNumber) {
  const auto analysis = one_boot({"--nosys", "14:7"});
  ASSERT_FALSE(HasFailure());
  const LaneStep* step = phase_step(analysis, 14);
  ASSERT_NE(step, nullptr);
  const SyscallTime* nosys = call_named(*step->syscalls, "syscall_1023");
  ASSERT_NE(nosys, nullptr) << "no syscall_1023 in step 14";
  EXPECT_EQ(nosys->count, 7U);
  auto sum = step->syscalls->in_calls();
  sum += step->syscalls->user;
  EXPECT_EQ(sum, step->states);
}

// The syscalls strace -f saw the container make in step 14: its calls
// after the one marker call (syscall 1023) the launcher makes last before
// phase 13, up to the second of the two it makes last before phase 14.
// strace names 1023 syscall_0x3ff, and pads a pid of under 5 digits with
// more than one space.
std::map<std::string, std::uint64_t> strace_step_14(const std::string& log) {
  const std::regex call(R"(^(\d+) +([a-z0-9_]+)\()");
  std::vector<std::pair<std::string, std::string>> calls;  // pid, name
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, call)) calls.emplace_back(match[1], match[2]);
  }
  const auto marker =
      std::find_if(calls.begin(), calls.end(), [](const auto& c) { return c.second == "syscall_0x3ff"; });
  std::map<std::string, std::uint64_t> counts;
  if (marker == calls.end()) return counts;
  const auto pid = marker->first;
  std::size_t markers = 0;
  for (auto it = std::next(marker); it != calls.end() && markers < 2; ++it) {
    if (it->first != pid) continue;
    const auto name = it->second == "syscall_0x3ff" ? std::string("syscall_1023") : it->second;
    if (name == "syscall_1023") ++markers;
    ++counts[name];
  }
  return counts;
}

// The calls of one step, thread by thread, are what strace -f counts
// between the same two phase passes of the same boot: marked by calls of
// syscall 1023 before phases 13 and 14 (a phase pass makes no syscall).
TEST_P(SyscallsTest, CountsOfAStepAreStracesExactly) {
  const auto strace = find_in_path("strace");
  if (!strace) GTEST_SKIP() << "no strace (scripts/setup.sh installs it)";
  const auto log = new_file("strace.log");
  const auto analysis =
      one_boot({"--nosys", "13:1", "--nosys", "14:2", "--sleep", "14:1", "--fsync", "14:2", "--io-dir", dir().string()},
               // LeakSanitizer cannot run under ptrace: a sanitized launcher would
               // fail at its exit.
               {strace->string(), "-f", "-E", "ASAN_OPTIONS=detect_leaks=0", "-o", log.string()});
  ASSERT_FALSE(HasFailure());
  const LaneStep* step = phase_step(analysis, 14);
  ASSERT_NE(step, nullptr);
  std::map<std::string, std::uint64_t> ours;
  for (const auto& call : step->syscalls->calls) {
    if (call.count > 0) ours[syscall_name(call.nr)] = call.count;
  }
  const auto theirs = strace_step_14(read_file(log));
  EXPECT_EQ(theirs.at("syscall_1023"), 2U) << "the markers were not found in strace's log";
  EXPECT_EQ(ours, theirs);
}

// Syscalls per step are opt-in (--syscalls): without them no step carries
// any, and the kernel's map stays empty, whichever way execve and listen
// are seen (the raw hooks, attached then for those two, time nothing).
TEST_P(SyscallsTest, WithoutTheOptionNoStepHasSyscalls) {
  const auto run = trace_launcher({"-n", "2", "--sleep", "13:2"}, {}, false);
  ASSERT_EQ(run.boots.size(), 2U);
  for (const auto& boot : run.boots) {
    const auto analysis = analyse_boot(boot);
    EXPECT_FALSE(analysis.steps.empty());
    for (const auto& step : analysis.steps) EXPECT_FALSE(step.syscalls) << "a step with syscalls";
  }
}

INSTANTIATE_TEST_SUITE_P(BothHooks, SyscallsTest, ::testing::Values(Hooks::Tracepoints, Hooks::RawSyscalls),
                         [](const ::testing::TestParamInfo<Hooks>& info) {
                           return info.param == Hooks::Tracepoints ? std::string("Tracepoints")
                                                                   : std::string("RawSyscalls");
                         });

}  // namespace
}  // namespace hacoboot::it
