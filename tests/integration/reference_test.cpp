// --format bpftrace: what it loads, and its figures against the reference
// bpftrace script itself (bench/reference.bt, shared with the benchmarks),
// both tracing the same boots at the same time.
//
// The comparison is optional: skipped, even with HACOBOOT_REQUIRE_BPF=1, when
// bpftrace is not installed.
#include <algorithm>
#include <array>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "support/build_paths.hpp"

namespace hacoboot::it {
namespace {

// How far the two averages may be apart. Both tools read the clock at the
// same USDT probe and syscall tracepoints, but each in its own program, one
// after the other: microseconds apart, the tolerance a few times that.
// The boots run SCHED_FIFO when allowed, so that other load on the machine
// does not preempt a boot between the two tools' observation points.
// A semantic difference is far beyond this: the launcher waits 5 ms after
// phases 0 and 1, so a clock started at another phase than START_SV is off by
// >= 5 ms for every boot, and a count mismatch fails on its own.
constexpr std::int64_t kAverageToleranceNs = 50'000;
constexpr int kBoots = 20;
// reference.bt's probes: the USDT probe twice, sys_exit_clone, sys_enter_execve, sys_exit_listen.
constexpr std::size_t kReferenceProbes = 5;

// Probes attached by pid, from `bpftool perf show` (BEGIN/END excluded:
// they are attached to bpftrace itself only around their single run).
std::size_t probes_attached_by(pid_t pid, const std::filesystem::path& output_dir) {
  std::size_t n = 0;
  for (const auto& entry : bpftool_list("perf", output_dir)) {
    const auto type = entry.value("fd_type", std::string());
    if (entry.value("pid", -1) == pid && (type == "uprobe" || type == "tracepoint")) ++n;
  }
  return n;
}

// "chrt -f 50 " when this process may run the boots SCHED_FIFO, else "".
std::string realtime_prefix(const std::filesystem::path& output_dir) {
  const auto chrt = find_in_path("chrt");
  if (!chrt) return "";
  const auto probe = run_process({chrt->string(), "-f", "50", "true"}, output_dir, 30s);
  return probe.status.exited && probe.status.code == 0 ? shell_quote(chrt->string()) + " -f 50 " : "";
}

// One of bpftrace's maps, keyed by a pid.
struct BpftraceMap {
  std::uint32_t id = 0;  // 0: none
  std::size_t key_bytes = 0;
};

// bpftrace's map @name (named AT_name) among the maps pid holds.
BpftraceMap bpftrace_map(pid_t pid, const std::string& name, const std::filesystem::path& output_dir) {
  const auto held = bpf_ids_held_by(pid).maps;
  for (const auto& map : bpftool_list("map", output_dir)) {
    const auto id = map.value("id", 0U);
    if (held.count(id) > 0 && map.value("name", std::string()) == "AT_" + name) {
      return {.id = id, .key_bytes = map.value("bytes_key", std::size_t{0})};
    }
  }
  return {};
}

// `bpftool map lookup|delete id ID key hex ...` with pid as the key, in this
// machine's byte order as bpftrace stores it; whether bpftool succeeded.
bool map_command(const char* command, const BpftraceMap& map, std::uint64_t pid,
                 const std::filesystem::path& output_dir) {
  std::array<unsigned char, sizeof(std::uint64_t)> bytes{};
  if (map.key_bytes == sizeof(std::uint64_t)) {
    std::memcpy(bytes.data(), &pid, sizeof pid);
  } else if (map.key_bytes == sizeof(std::uint32_t)) {
    const auto narrow = static_cast<std::uint32_t>(pid);
    std::memcpy(bytes.data(), &narrow, sizeof narrow);
  } else {
    ADD_FAILURE() << "map " << map.id << " has keys of " << map.key_bytes << " bytes, not a pid's";
    return false;
  }
  const auto bpftool = find_in_path("bpftool");
  if (!bpftool) {
    ADD_FAILURE() << "bpftool not found in PATH";
    return false;
  }
  std::vector<std::string> argv{bpftool->string(), "map", command, "id", std::to_string(map.id), "key", "hex"};
  for (std::size_t i = 0; i < map.key_bytes; ++i) {
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", bytes[i]);
    argv.emplace_back(hex.data());
  }
  const auto r = run_process(argv, output_dir, 30s);
  return r.status.exited && r.status.code == 0;
}

class ReferenceTest : public IntegrationTest {
 protected:
  // Whether bpftrace's programs run, once attached: a launch whose container
  // exits before its execve (it neither runs COMMAND nor listens, so neither
  // count moves) passes the USDT probe at START_SV and START_FORK, and its
  // supervisor returns from clone, which puts the container's pid in
  // @start. The entries the launch made are then taken out again, as if it
  // had never run.
  bool sees_a_launch(const BpftraceMap& start, const BpftraceMap& forking) {
    const auto truth_path = new_file("noop-truth.tsv");
    const auto r = run_process(
        {launcher().string(), "--truth", truth_path.string(), "--die-before-exec", "--", app().string()}, dir(), 60s);
    EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
    const auto truth = parse_truth(read_file(truth_path));
    if (truth.size() != 1 || !truth.begin()->second.contains("container_pid")) {
      ADD_FAILURE() << "no container in the truth:\n" << read_file(truth_path);
      return false;
    }
    const std::uint64_t supervisor = truth.begin()->first;
    const auto container = static_cast<std::uint64_t>(truth.begin()->second.at("container_pid"));
    const bool seen = map_command("lookup", start, container, dir());
    for (const auto& [map, pid] :
         {std::pair{start, supervisor}, std::pair{start, container}, std::pair{forking, supervisor}}) {
      if (map_command("lookup", map, pid, dir())) {
        EXPECT_TRUE(map_command("delete", map, pid, dir())) << "map " << map.id << " keeps pid " << pid;
      }
    }
    return seen;
  }
};

TEST_F(ReferenceTest, SameCountsAndAveragesAsTheReferenceScript) {
  const auto bpftrace = find_in_path("bpftrace");
  if (!bpftrace) GTEST_SKIP() << "bpftrace is not in PATH: the comparison with the reference script is optional";

  // reference.bt uses the syscalls:* tracepoints, which need tracefs.
  Process reference(with_tracefs(Tracefs::Mounted, {bpftrace->string(), test::reference_bt().string(),
                                                    launcher().string(), app().string()}),
                    dir());
  ASSERT_TRUE(reference.wait_for_text("Attaching", false, 120s)) << "bpftrace did not start\n--- stderr ---\n"
                                                                 << reference.err();
  // bpftrace prints "Attaching N probes..." before it attaches them.
  std::size_t attached = 0;
  for (int i = 0; i < 600 && reference.running(); ++i) {
    attached = probes_attached_by(reference.pid(), dir());
    if (attached >= kReferenceProbes) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_GE(attached, kReferenceProbes) << "bpftrace did not attach reference.bt\n--- stderr ---\n" << reference.err();
  const auto start = bpftrace_map(reference.pid(), "start", dir());
  const auto forking = bpftrace_map(reference.pid(), "forking", dir());
  ASSERT_TRUE(start.id != 0 && forking.id != 0) << "bpftrace holds no map @start or @forking";
  ASSERT_TRUE(wait_until([&] { return HasFailure() || sees_a_launch(start, forking); }, 60s, 100ms))
      << "bpftrace's programs never saw a launch\n--- stderr ---\n"
      << reference.err();
  ASSERT_FALSE(HasFailure());

  // 11:20: the container waits 20 ms after CONTAINER_START. The reference
  // hands the start time to the child when the supervisor *returns* from
  // clone; a child that execs first, which happens on 2 busy cores, would be
  // invisible to it (hacoboot-sampler sees the fork in the kernel instead).
  const auto realtime = realtime_prefix(dir());
  const auto run = realtime + launcher_command({"-n", std::to_string(kBoots), "--phase-delay", "0:5", "--phase-delay",
                                                "1:5", "--phase-delay", "11:20"});
  const auto ours = run_sampler({"--format", "bpftrace", "--run", run, app().string()});

  reference.send_signal(SIGINT);
  auto status = reference.wait_for(15s);
  if (!status) {  // bpftrace 0.17 was seen printing its maps, then waiting for a second Ctrl-C
    reference.send_signal(SIGINT);
    status = reference.wait_for(15s);
  }
  if (!status) status = reference.wait_or_kill(0ms);
  ASSERT_TRUE(ours.status.exited && ours.status.code == 0) << ours.status.describe() << '\n' << ours.err;
  ASSERT_FALSE(status->timed_out) << "bpftrace did not end on SIGINT\n" << reference.err();

  const auto theirs = map_values(parse_map_lines(reference.out()));
  const auto mine = map_values(parse_map_lines(ours.out));
  for (const std::string metric : {"execve", "listen"}) {
    SCOPED_TRACE(metric + (realtime.empty() ? " (boots not SCHED_FIFO)" : "") + "\n--- reference.bt ---\n" +
                 reference.out() + "--- hacoboot-sampler ---\n" + ours.out);
    ASSERT_EQ(theirs.count(metric + "__count"), 1U);
    ASSERT_EQ(mine.count(metric + "__count"), 1U);
    ASSERT_EQ(mine.count(metric + "_avg"), 1U);
    EXPECT_EQ(theirs.at(metric + "__count"), static_cast<std::uint64_t>(kBoots));
    EXPECT_EQ(mine.at(metric + "__count"), theirs.at(metric + "__count"));
    const auto difference =
        static_cast<std::int64_t>(mine.at(metric + "_avg")) - static_cast<std::int64_t>(theirs.at(metric + "_avg"));
    EXPECT_LE(std::llabs(difference), kAverageToleranceNs)
        << "averages differ by " << difference << " ns (hacoboot-sampler minus reference)";
    RecordProperty(metric + "_avg_difference_ns", std::to_string(difference));
  }
}

// Alone, --format bpftrace prints nothing the scheduler states feed: the
// tracer leaves their hooks out (a shorter start, no program on every
// context switch) and still times every boot.
TEST_F(ReferenceTest, AloneItLoadsNoSchedulerHookAndTimesEveryBoot) {
  Process tracer(sampler_argv({"--format", "bpftrace", "-d", "120s", app().string()}), dir());
  ASSERT_TRUE(tracer.wait_for_text("Hit Ctrl-C", true, 60s)) << tracer.err();
  std::set<std::string> names;
  const auto held = bpf_ids_held_by(tracer.pid()).programs;
  for (const auto& prog : bpftool_list("prog", dir())) {
    if (held.count(prog.value("id", 0U)) > 0) names.insert(prog.value("name", std::string()));
  }
  std::string seen;
  for (const auto& name : names) seen += name + " ";
  EXPECT_EQ(names.count("on_phase"), 1U) << "programs held: " << seen;
  EXPECT_EQ(names.count("on_sched_switch"), 0U) << "programs held: " << seen;
  EXPECT_EQ(names.count("on_sched_waking"), 0U) << "programs held: " << seen;

  constexpr int kLeanBoots = 3;
  const auto truth_path = new_file("truth.tsv");
  const auto boots = run_process(
      {launcher().string(), "-n", std::to_string(kLeanBoots), "--truth", truth_path.string(), "--", app().string()},
      dir(), 60s);
  ASSERT_TRUE(boots.status.exited && boots.status.code == 0) << boots.status.describe() << '\n' << boots.err;
  tracer.send_signal(SIGINT);
  const auto status = tracer.wait_or_kill(30s);
  ASSERT_TRUE(status.exited && status.code == 0) << status.describe() << '\n' << tracer.err();

  const auto mine = map_values(parse_map_lines(tracer.out()));
  SCOPED_TRACE("--- hacoboot-sampler ---\n" + tracer.out());
  ASSERT_EQ(mine.count("listen__count"), 1U);
  EXPECT_EQ(mine.at("execve__count"), static_cast<std::uint64_t>(kLeanBoots));
  EXPECT_EQ(mine.at("listen__count"), static_cast<std::uint64_t>(kLeanBoots));
  // Every boot's true start -> listen lies in its bracket, so the average
  // lies between the least low edge and the greatest high edge.
  std::int64_t lowest = INT64_MAX;
  std::int64_t highest = 0;
  for (const auto& [hpid, facts] : parse_truth(read_file(truth_path))) {
    lowest = std::min(lowest, facts.at("listen_lo") - facts.at("start_hi"));
    highest = std::max(highest, facts.at("listen_hi") - facts.at("start_lo"));
  }
  const auto average = static_cast<std::int64_t>(mine.at("listen_avg"));
  EXPECT_GE(average, lowest);
  EXPECT_LE(average, highest);
}

}  // namespace
}  // namespace hacoboot::it
