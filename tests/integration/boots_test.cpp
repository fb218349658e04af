// End-to-end runs of hacoboot-sampler on demo boots, checked against the
// launcher's ground truth.
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <thread>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

using BootsTest = IntegrationTest;

TEST_F(BootsTest, SequentialBootsAreAllMeasuredWithinTheGroundTruth) {
  const auto traced = trace_boots({"-n", "10"});
  ASSERT_FALSE(HasFailure());
  expect_boot_counts(traced.summary, 10, 10, 10, 0);
  EXPECT_EQ(traced.summary.value("lost_events", ~0ULL), 0U);
  const auto metrics = traced.summary.value("metrics", nlohmann::json::object());
  for (const char* metric : {"execve", "listen"}) {
    EXPECT_EQ(metrics.value(metric, nlohmann::json::object()).value("count", ~0ULL), 10U) << metric;
  }
  expect_boots_match_truth(traced, 10);
}

TEST_F(BootsTest, ConcurrentBootsAreNotMixedUp) {
  const auto traced = trace_boots({"-n", "12", "-j", "4"});
  ASSERT_FALSE(HasFailure());
  expect_boot_counts(traced.summary, 12, 12, 12, 0);
  const auto hpids = expect_boots_match_truth(traced, 12);

  std::set<std::uint32_t> truth_hpids;
  for (const auto& [hpid, facts] : traced.truth) {
    if (facts.count("start_lo") > 0) truth_hpids.insert(hpid);
  }
  EXPECT_EQ(truth_hpids.size(), 12U);
  EXPECT_EQ(hpids, truth_hpids) << "the traced boots are not the launcher's supervisors";
}

// A container exec'ing its command with execveat(2) (fexecve) is measured
// like one calling execve, timed when the exec completes, with either set of
// syscall hooks; the figure stays inside the ground truth's bracket.
TEST_F(BootsTest, ExecveatIsMeasuredLikeExecve) {
  for (const char* hooks : {"tracepoints", "raw_syscalls"}) {
    SCOPED_TRACE(hooks);
    const auto traced = trace_boots({"-n", "3", "--execveat"}, {}, {"--syscall-hooks", hooks});
    ASSERT_FALSE(HasFailure());
    expect_boot_counts(traced.summary, 3, 3, 3, 0);
    expect_boots_match_truth(traced, 3);
  }
}

TEST_F(BootsTest, ContainerDyingBeforeExecIsIncomplete) {
  const auto traced = trace_boots({"-n", "5", "--die-before-exec"});
  ASSERT_FALSE(HasFailure());
  expect_boot_counts(traced.summary, 5, 0, 0, 5);
  // All five failed alike: one group, where a CI log reads why.
  const auto failures = traced.summary.value("boots", nlohmann::json::object()).value("failures", nlohmann::json());
  ASSERT_EQ(failures.size(), 1U) << traced.summary.dump(2);
  EXPECT_EQ(failures.at(0).value("boots", 0), 5);
  EXPECT_EQ(failures.at(0).value("description", ""), "container exited 1 after 20 CONTAINER_SECCOMP_SETUP");

  const auto boots = rows_by_boot(traced.rows);
  EXPECT_EQ(boots.size(), 5U);
  for (const auto& [sequence, rows] : boots) {
    SCOPED_TRACE("boot " + std::to_string(sequence) + ", hpid " + std::to_string(rows.front().hpid));
    EXPECT_EQ(traced.truth.count(rows.front().hpid), 1U) << "not a supervisor of the launcher";
    // The supervisor still passes 5 and 6 after its container died, so the
    // container's last phase is the last one in the container range 11-30.
    std::optional<std::int64_t> last_container_phase;
    for (const auto& row : rows) {
      EXPECT_EQ(row.kind, "phase") << "the container never exec'd or listened";
      if (row.phase && *row.phase >= 11 && *row.phase <= 30) last_container_phase = row.phase;
      EXPECT_NE(row.phase, std::optional<std::int64_t>(21)) << "CONTAINER_EXECING was never passed";
    }
    EXPECT_EQ(last_container_phase, std::optional<std::int64_t>(20)) << "CONTAINER_SECCOMP_SETUP";
  }
}

// Where cgroup v2 is mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
// host that also mounts cgroup v1.
std::optional<std::filesystem::path> cgroup2_mount() {
  constexpr auto kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC
  for (const char* path : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    struct statfs fs {};
    if (::statfs(path, &fs) == 0 && fs.f_type == kCgroup2Magic) return path;
  }
  return std::nullopt;
}

// A cgroup's name may hold a TAB, a carriage return or a backslash (the
// kernel refuses only '/' and newlines): escaped in the --events TSV, whose
// rows keep the header's columns.
TEST_F(BootsTest, CgroupNameWithTabAndCarriageReturnKeepsTheEventsColumns) {
  const auto mount = cgroup2_mount();
  if (!mount) GTEST_SKIP() << "no cgroup2 mount";
  const std::string name = "hacoboot-it-" + std::to_string(::getpid()) + "\ttab\rreturn\\";
  const auto cgroup = *mount / name;
  ASSERT_TRUE(std::filesystem::create_directory(cgroup)) << cgroup;
  // The --run shell moves itself into the cgroup before it becomes the launcher.
  ASSERT_EQ(::setenv("HACOBOOT_TEST_CGROUP", cgroup.c_str(), 1), 0);
  const auto rows_path = new_file("rows.tsv");
  const auto r =
      run_sampler({"--run", "echo 0 > \"$HACOBOOT_TEST_CGROUP/cgroup.procs\" && exec " + launcher_command({"-n", "2"}),
                   "--format", "json", "--events", rows_path.string(), app().string()});
  ::unsetenv("HACOBOOT_TEST_CGROUP");
  for (int i = 0; i < 100 && ::rmdir(cgroup.c_str()) != 0 && errno == EBUSY; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;

  const auto text = read_file(rows_path);
  std::vector<BootRow> rows;
  EXPECT_NO_THROW(rows = parse_boot_rows(text)) << text;  // it checks every row's column count
  EXPECT_EQ(rows_by_boot(rows).size(), 2U) << text;
  const auto escaped = "/hacoboot-it-" + std::to_string(::getpid()) + "\\ttab\\rreturn\\\\\t";
  EXPECT_NE(text.find(escaped), std::string::npos) << "no row with the escaped cgroup path:\n" << text;
}

class ListenFromTest : public IntegrationTest, public ::testing::WithParamInterface<std::string> {};

// Counted, and explained: the path to listen runs through the listener's
// creation (a fork, or a thread's clone) to the container, with the
// scheduler's states known all along, and the listen step is the listener's
// once per boot.
TEST_P(ListenFromTest, ListenIsCountedAndExplainedForEveryBoot) {
  const auto traced = trace_boots({"-n", "5"}, {"--listen-from", GetParam()});
  ASSERT_FALSE(HasFailure());
  expect_boot_counts(traced.summary, 5, 5, 5, 0);
  expect_boots_match_truth(traced, 5);

  const auto path = traced.summary["critical_path"]["listen"];
  EXPECT_EQ(path["length"].value("count", 0ULL), 5U) << path;
  // The states' means add up to the path's mean length (to the truncation
  // of each mean) only when every piece of every path has them.
  const auto states = path.value("cpu_ns", 0.0) + path.value("run_queue_ns", 0.0) + path.value("sleep_ns", 0.0) +
                      path.value("io_ns", 0.0);
  EXPECT_NEAR(states, path["length"].value("avg_ns", 0.0), 5.0) << path;
  double shares = 0;
  std::uint64_t listens = 0;
  for (const auto& step : traced.summary["steps"]) {
    shares += step.value("listen_path_share", 0.0);
    if (step.value("lane", "") == "listener" && step.value("kind", nlohmann::json()) == "listen") {
      listens += step["own"].value("count", 0ULL);
      EXPECT_FALSE(step["cpu_ns"].is_null()) << "the listener's own time has no states: " << step;
    }
  }
  EXPECT_EQ(listens, 5U) << "the listener's listen step, once per boot";
  EXPECT_NEAR(shares, 1.0, 1e-6) << "the path's shares";
}

// The reference script misses all of these: only the container's init is watched.
INSTANTIATE_TEST_SUITE_P(Descendants, ListenFromTest, ::testing::Values("thread", "child", "grandchild"));

using RunTest = IntegrationTest;

TEST_F(RunTest, CountStopsEarlyAndEndsTheRunCommand) {
  // 10 boots whose apps hold their socket for a second each: a launcher left
  // running would still be booting seconds after the tracer is done. The
  // trailing "; true" keeps the shell from exec'ing the launcher, so the
  // whole --run command must be ended, not just its shell.
  const auto truth_path = new_file("truth.tsv");
  const auto run = launcher_command({"-n", "10", "--truth", truth_path.string()}, {"--hold-ms", "1000"}) + "; true";
  const auto r = run_sampler({"-n", "3", "--format", "json", "--run", run, app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  const auto boots = summary.value("boots", nlohmann::json::object());
  EXPECT_GE(boots.value("listen", 0ULL), 3U) << r.out;
  EXPECT_LT(boots.value("started", ~0ULL), 10U) << "the tracer did not stop early\n" << r.out;

  // The launcher's processes (driver, CLIs, supervisors) carry the truth path,
  // unique to this test, in their command line, the apps in their
  // environment. Leave them a moment to handle their SIGTERM.
  const auto marker = truth_path.string();
  std::vector<pid_t> left = processes_mentioning(marker);
  for (int i = 0; i < 60 && !left.empty(); ++i) {
    std::this_thread::sleep_for(50ms);
    left = processes_mentioning(marker);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the --run command still running 3 s after the tracer "
                            << "exited, e.g. pid " << (left.empty() ? 0 : left.front());
}

// A COMMAND the containers never exec leaves every boot "exited 0 after
// listen": the warning says what is likelier wrong.
TEST_F(RunTest, ACommandNoContainerExecsIsSaid) {
  const auto r = run_sampler({"-f", "json", "--run", launcher_command({"-n", "2"}), "/nonexistent/app"});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
  EXPECT_NE(r.err.find("2 boots reached listen, none an execve of COMMAND '/nonexistent/app'"), std::string::npos)
      << r.err;
}

TEST_F(RunTest, FailingRunCommandExitsWith4) {
  const auto r = run_sampler({"--run", "exit 3"});
  EXPECT_TRUE(r.status.exited && r.status.code == 4) << r.status.describe() << '\n' << r.err;
  EXPECT_NE(r.err.find('3'), std::string::npos) << "stderr should say how the command ended: " << r.err;
}

TEST_F(RunTest, SucceedingRunCommandExitsWith0) {
  const auto r = run_sampler({"--run", "true"});
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
}

}  // namespace
}  // namespace hacoboot::it
