// Kernel CPU, sampled (--kernel-profile), from the real BPF programs loaded
// through the Tracer: a software CPU clock per online CPU samples the
// accounted threads' kernel stacks while boots run, and the model puts the
// samples under the steps. Boots of the demo launcher with a tmpfs mount
// storm before a phase: its samples are in that step, with mount frames.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/tracer.hpp"
#include "fixture.hpp"
#include "model/boot_analysis.hpp"
#include "model/kernel_profile.hpp"
#include "model/kernel_symbols.hpp"
#include "model/syscall_names.hpp"
#include "pipeline/pipeline.hpp"
#include "support/process.hpp"

namespace hacoboot::it {
namespace {

using namespace std::chrono_literals;

std::uint64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000U + static_cast<std::uint64_t>(now.tv_nsec);
}

// The perf events this process holds open.
std::size_t open_perf_events() {
  std::size_t count = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    if (std::filesystem::read_symlink(fd.path(), error).string() == "anon_inode:[perf_event]") ++count;
  }
  return count;
}

KernelSymbols kernel_symbols() {
  const std::ifstream file("/proc/kallsyms");
  std::ostringstream text;
  text << file.rdbuf();
  return KernelSymbols::parse(text.str());
}

class KernelProfileTest : public IntegrationTest {
 protected:
  // A tracer with syscalls per step (or not), sampling at `hz` (0: not),
  // execve and listen through the raw syscall hooks.
  std::unique_ptr<Tracer> start_tracer(Pipeline& pipeline, std::uint32_t hz, bool account_syscalls = true) {
    return std::make_unique<Tracer>(Tracer::Config{.haconiwa_path = launcher().string(),
                                                   .account_syscalls = account_syscalls,
                                                   .kernel_profile_hz = hz,
                                                   .usdt_attach = UsdtAttach::Auto},
                                    [&pipeline](std::span<const std::byte> record) { pipeline.on_record(record); });
  }

  // The launcher's boots (args, then the app), each with its syscalls and
  // kernel profile taken when it ends.
  std::vector<BootRecord> trace_launcher(const std::vector<std::string>& args) {
    std::vector<BootRecord> boots;
    Pipeline pipeline({.command = app().string()}, nullptr);
    pipeline.on_boot_done([&boots](const BootRecord& boot) { boots.push_back(boot); });
    const auto tracer = start_tracer(pipeline, 999);
    pipeline.take_syscalls_from([&tracer](std::uint32_t launch) { return tracer->take_syscalls(launch); });
    const auto symbols = kernel_symbols();
    pipeline.take_kernel_profile_from([&tracer, &symbols](std::uint32_t launch, std::uint64_t at_ns) {
      auto samples = decode_kernel_samples(tracer->take_kernel_samples(launch), symbols);
      EXPECT_TRUE(samples.has_value()) << "sample entries that do not decode";
      return KernelProfile{.hz = 999,
                           .sampled_since_ns = tracer->kernel_profile_since(at_ns),
                           .samples = samples.value_or(std::vector<CpuSampleAggregate>())};
    });
    std::vector<std::string> argv{launcher().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", app().string(), "--hold-ms", "0"});
    // Polled while the launcher runs, as the CLI does: each poll enables or
    // disables the sampling.
    Process child(argv, dir());
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (child.running() && std::chrono::steady_clock::now() < deadline) tracer->poll(10ms);
    const auto status = child.wait_or_kill(1s);
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << ": " << child.err();
    tracer->poll(0ms);
    pipeline.finish();
    EXPECT_EQ(pipeline.undecodable(), 0U);
    EXPECT_EQ(tracer->counters().samples_dropped, 0U);
    // The boots filled the maps taken from here some (not the blocking
    // map: its entries are not taken here), and none beyond its size.
    const auto maps = tracer->map_use();
    EXPECT_EQ(maps.size(), 4U);
    for (const auto& map : maps) {
      if (std::string_view(map.map) != "blocking_aggregates") EXPECT_GT(map.peak, 0U) << map.map;
      EXPECT_LE(map.peak, map.capacity) << map.map;
    }
    // No boot runs any more: the sampling is off.
    EXPECT_FALSE(tracer->kernel_profile_since(monotonic_ns()).has_value());
    return boots;
  }
};

// Whether a frame of `frames` is of a function whose name matches `pattern`.
bool has_frame(const std::vector<std::string>& frames, const std::string& pattern) {
  const std::regex function(pattern);
  return std::any_of(frames.begin(), frames.end(), [&function](const std::string& frame) {
    return std::regex_search(frame.substr(0, frame.find('+')), function);
  });
}

// 400 tmpfs mounts and unmounts before phase 17: step 17's kernel CPU is
// sampled, in mount and umount2, at stacks through the mount code.
TEST_F(KernelProfileTest, MountStormIsKernelCpuOfItsStepInMountFrames) {
  const auto boots = trace_launcher({"-n", "2", "--mounts", "17:400"});
  ASSERT_EQ(boots.size(), 2U);
  std::uint64_t in_mounts = 0;
  std::uint64_t mount_framed = 0;
  for (const auto& boot : boots) {
    for (const auto& step : analyse_boot(boot).steps) {
      if (!step.step || step.step->kind != Step::Kind::Phase || step.step->phase != 17 || !step.syscalls) continue;
      ASSERT_TRUE(step.syscalls->kernel_cpu) << "step 17 without a kernel profile";
      EXPECT_EQ(step.syscalls->kernel_cpu->hz, 999U);
      for (const auto& point : step.syscalls->kernel_cpu->points) {
        const auto call = syscall_name(point.nr);
        if (point.user_mode || (call != "mount" && call != "umount2")) continue;
        in_mounts += point.samples;
        if (has_frame(point.frames, "mount|tmpfs|shmem|super")) mount_framed += point.samples;
      }
    }
  }
  EXPECT_GT(in_mounts, 0U) << "no sample of step 17 in mount or umount2";
  EXPECT_GT(mount_framed, 0U) << "no sample of mount or umount2 at a mount, tmpfs or superblock frame";
}

// What the table and JSON rest on holds with the sampling on: a step's
// syscall and user time add up to its time and states exactly.
TEST_F(KernelProfileTest, SyscallAndUserTimeStillAddUpToEveryStep) {
  const auto boots = trace_launcher({"-n", "2", "--mounts", "16:50", "--burn", "13:5", "--sleep", "14:2"});
  ASSERT_EQ(boots.size(), 2U);
  std::size_t checked = 0;
  for (const auto& boot : boots) {
    EXPECT_EQ(boot.kernel_profile.hz, 999U);
    for (const auto& step : analyse_boot(boot).steps) {
      if (!step.step || !step.states) continue;
      ASSERT_TRUE(step.syscalls) << "a step with states but no syscalls in boot " << boot.hpid;
      auto sum = step.syscalls->in_calls();
      sum += step.syscalls->user;
      EXPECT_EQ(sum, *step.states) << "boot " << boot.hpid << ", step ending at " << step.end_ns;
      EXPECT_EQ(sum.total(), step.duration());
      ++checked;
    }
  }
  EXPECT_GE(checked, 2U * 15U);
}

// Through the command line: the JSON summary's step 17 carries the mount
// storm's samples, and so does the report of the run's recording.
TEST_F(KernelProfileTest, TheSummaryAndTheRecordingCarryTheSamples) {
  const auto recording = new_file("run.hbrec");
  const auto r = run_sampler({"--kernel-profile", "-n", "2", "--format", "json", "--record", recording.string(),
                              "--run", launcher_command({"-n", "2", "--mounts", "17:400"}), app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
  const auto kernel_cpu_of_step_17 = [](const std::string& json) {
    const auto summary = nlohmann::json::parse(json);
    for (const auto& step : summary.at("steps")) {
      if (step.value("phase", nlohmann::json()) == 17 && step.at("lane") == "container") {
        return step.at("syscalls").at("kernel_cpu");
      }
    }
    return nlohmann::json();
  };
  const auto live = kernel_cpu_of_step_17(r.out);
  ASSERT_TRUE(live.is_object()) << "no kernel_cpu in step 17 of the container";
  EXPECT_EQ(live.at("hz"), 999);
  EXPECT_GT(live.at("samples").get<std::uint64_t>(), 0U);
  const auto replayed = run_process({sampler().string(), "report", recording.string(), "--format", "json"}, dir());
  ASSERT_TRUE(replayed.status.exited && replayed.status.code == 0) << replayed.err;
  EXPECT_EQ(kernel_cpu_of_step_17(replayed.out), live);
}

// Each boot's supervisor blocks at the same kernel stack before the previous
// boot's blocking points are taken: the stack is the previous boot's too, and
// taking those deleted it under the block in flight, which then had no
// frames. A point is without frames only for a stack the kernel side could
// not take (stacks_dropped: the stack map full, or another stack in the same
// bucket of its hash, which a busy machine meets now and then).
TEST_F(KernelProfileTest, ABlockInFlightKeepsTheStackAnEndedBootShared) {
  const auto r = run_sampler({"--kernel-profile", "--format", "json", "--run",
                              launcher_command({"-n", "10", "--sleep", "2:3"}), app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  std::size_t points = 0;
  std::uint64_t without_frames = 0;
  for (const auto& step : summary.at("steps")) {
    if (!step.at("syscalls").is_object()) continue;
    for (const auto& point : step.at("syscalls").at("blocking")) {
      if (point.at("frames").empty()) ++without_frames;
      ++points;
    }
  }
  EXPECT_GT(points, 0U);
  EXPECT_LE(without_frames, summary.value("stacks_dropped", 0ULL))
      << "blocking points without frames beyond the stacks not taken:\n"
      << summary.at("steps").dump(1);
}

// Through the command line, the other outputs: the folded stacks have step
// 17's sampled CPU under its calls, and the trace its syscall slices' sample
// places and the step's frequency. 400 mounts, as the tests above: with 50,
// step 17 had a few samples at 999 Hz, and on a busy machine sometimes none.
TEST_F(KernelProfileTest, TheStacksAndTheTraceCarryTheSamples) {
  const auto stacks = new_file("boots.folded");
  const auto trace = new_file("boots.trace.json");
  const auto r =
      run_sampler({"--kernel-profile", "-n", "2", "-q", "--stacks", stacks.string(), "--trace-out", trace.string(),
                   "--run", launcher_command({"-n", "2", "--mounts", "17:400"}), app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
  std::ifstream folded(stacks);
  std::string line;
  std::size_t sampled_in_17 = 0;
  while (std::getline(folded, line)) {
    if (line.find(";container;17 ") != std::string::npos && line.find(";[on CPU, sampled]") != std::string::npos) {
      ++sampled_in_17;
    }
  }
  EXPECT_GT(sampled_in_17, 0U) << "no [on CPU, sampled] line under the container's step 17 in " << stacks;
  std::ifstream trace_file(trace);
  const auto events = nlohmann::json::parse(trace_file).at("traceEvents");
  std::size_t sampled_slices = 0;
  std::size_t sampled_steps = 0;
  for (const auto& event : events) {
    if (!event.contains("args") || !event.at("args").contains("kernel_cpu")) continue;
    const auto& cpu = event.at("args").at("kernel_cpu");
    if (event.value("cat", "") == "syscall") {
      EXPECT_TRUE(cpu.is_array() && !cpu.empty()) << event;
      ++sampled_slices;
    } else if (event.at("args").value("phase", -1) == 17 && event.at("args").value("lane", "") == "container") {
      EXPECT_EQ(cpu.at("hz"), 999) << event;
      ++sampled_steps;
    }
  }
  EXPECT_GT(sampled_slices, 0U) << "no syscall slice with kernel_cpu in " << trace;
  EXPECT_EQ(sampled_steps, 2U) << "step 17 of each boot says its frequency";
}

// Without --kernel-profile no perf event is opened for it (as many as a
// tracer without syscalls per step holds: the phase probe's, when it is no
// uprobe_multi link); with it, one more per online CPU.
TEST_F(KernelProfileTest, PerfEventsOnlyWithTheOption) {
  Pipeline pipeline({.command = app().string()}, nullptr);
  const auto before = open_perf_events();
  std::size_t plain = 0;
  {
    const auto tracer = start_tracer(pipeline, 0, /*account_syscalls=*/false);
    plain = open_perf_events();
  }
  {
    const auto tracer = start_tracer(pipeline, 0);
    EXPECT_EQ(open_perf_events(), plain);
  }
  const auto tracer = start_tracer(pipeline, 999);
  EXPECT_EQ(open_perf_events(), plain + static_cast<std::size_t>(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GE(plain, before);
}

}  // namespace
}  // namespace hacoboot::it
