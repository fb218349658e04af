// Boots killed half-way: a supervisor or a container SIGKILLed before or
// after its fork, or exiting before it listens.
#include <signal.h>

#include <ctime>
#include <iostream>
#include <set>

#include "faults.hpp"

namespace hacoboot::it {
namespace {

// CLOCK_MONOTONIC, as the truth file and the tracer's t_ns.
std::int64_t monotonic_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Rows of the one boot in rows (fails when there is not exactly one).
std::vector<BootRow> single_boot(const std::vector<BootRow>& rows) {
  const auto boots = rows_by_boot(rows);
  EXPECT_EQ(boots.size(), 1U) << "boots in the --events rows";
  return boots.empty() ? std::vector<BootRow>{} : boots.begin()->second;
}

std::set<std::int64_t> phases_of(const std::vector<BootRow>& rows) {
  std::set<std::int64_t> phases;
  for (const auto& r : rows) {
    if (r.phase) phases.insert(*r.phase);
  }
  return phases;
}

// One launch traced with --events, a process of it SIGKILLed while asleep in
// a --phase-delay, the launch left to end, the tracer stopped.
class FaultKillTest : public FaultTest {
 protected:
  enum class Victim : std::uint8_t { Supervisor, Container };

  struct KilledLaunch {
    std::uint32_t hpid = 0;
    std::int64_t container = 0;  // 0: killed before its fork
    std::int64_t killed_at_ns = 0;
    nlohmann::json summary;
    std::vector<BootRow> rows;
    Truth truth;
  };

  // `ready_key`: the truth key the supervisor writes once the victim's delay
  // is near (start_hi before the fork, container_pid after it).
  void kill_mid_boot(const std::vector<std::string>& launcher_args, const char* ready_key, Victim victim,
                     KilledLaunch& out) {
    const auto truth_path = new_file("truth.tsv");
    const auto rows_path = new_file("rows.tsv");
    auto tracer = start_tracer({"--format", "json", "--events", rows_path.string(), app().string()});
    ASSERT_FALSE(HasFailure());
    Process boot(launcher_argv(truth_path, launcher_args), dir());
    pid_t target = 0;
    ASSERT_TRUE(wait_until(
        [&] {
          const auto truth = read_truth(truth_path);
          const auto hpid = only_hpid_with(truth, ready_key);
          if (!hpid) return false;
          out.hpid = *hpid;
          const auto& facts = truth.at(*hpid);
          out.container = facts.count("container_pid") > 0 ? facts.at("container_pid") : 0;
          target = static_cast<pid_t>(victim == Victim::Supervisor ? out.hpid : out.container);
          return target > 0 && asleep_in_nanosleep(target);
        },
        60s))
        << "the " << (victim == Victim::Supervisor ? "supervisor" : "container") << " never reached its delay";
    out.killed_at_ns = monotonic_now_ns();
    ASSERT_NO_FATAL_FAILURE(signal_ours(target, SIGKILL, launcher().string()));
    boot.wait_or_kill(60s);
    expect_all_gone(truth_path.string());
    // An orphaned container is looked for by pid too: in the middle of its
    // execve its /proc cmdline and environ read empty for a moment.
    if (out.container > 0) {
      EXPECT_TRUE(wait_until([&] { return has_exited(static_cast<pid_t>(out.container)); }, 30s))
          << "container " << out.container << " still running";
    }
    out.summary = stop_tracer(*tracer);
    out.rows = parse_boot_rows(read_file(rows_path));
    out.truth = parse_truth(read_file(truth_path));
  }
};

TEST_F(FaultKillTest, SupervisorKilledBeforeForkIsIncomplete) {
  // The supervisor sleeps right after START_SV (the truth's start lines), before its fork.
  KilledLaunch killed;
  ASSERT_NO_FATAL_FAILURE(kill_mid_boot({"--phase-delay", "1:600000"}, "start_hi", Victim::Supervisor, killed));

  expect_boot_counts(killed.summary, 1, 0, 0, 1);
  expect_nothing_left_tracked(killed.summary);
  const auto rows = single_boot(killed.rows);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().hpid, killed.hpid);
  EXPECT_EQ(rows.front().container_pid, 0U) << "there never was a container";
  EXPECT_FALSE(has_kind(rows, "execve") || has_kind(rows, "listen"));
  EXPECT_EQ(phases_of(rows), (std::set<std::int64_t>{0, 1})) << "CLI_START and START_SV only";
}

TEST_F(FaultKillTest, ContainerKilledBeforeExecveIsIncomplete) {
  // The container sleeps after CONTAINER_CGROUP_SETUP (15), long before its
  // execve; the supervisor then reports the dead container and exits 1.
  KilledLaunch killed;
  ASSERT_NO_FATAL_FAILURE(kill_mid_boot({"--phase-delay", "15:600000"}, "container_pid", Victim::Container, killed));

  expect_boot_counts(killed.summary, 1, 0, 0, 1);
  expect_nothing_left_tracked(killed.summary);
  const auto rows = single_boot(killed.rows);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().hpid, killed.hpid);
  EXPECT_EQ(static_cast<std::int64_t>(rows.front().container_pid), killed.container);
  EXPECT_FALSE(has_kind(rows, "execve") || has_kind(rows, "listen"));
  const auto phases = phases_of(rows);
  EXPECT_EQ(phases.count(15), 1U) << "CONTAINER_CGROUP_SETUP was passed";
  for (std::int64_t later = 16; later <= 21; ++later) EXPECT_EQ(phases.count(later), 0U) << "phase " << later;
  EXPECT_EQ(phases.count(5), 1U) << "the supervisor's END_WAIT after its container died";
}

// Killing the supervisor does not kill its container: that boot goes on and
// is counted once the container is done, not cut short.
TEST_F(FaultKillTest, SupervisorKilledAfterForkLeavesItsContainerBooting) {
  // Supervisor asleep after END_SETUP (3, after its fork); the container
  // pauses at 15, then runs on, orphaned, to listen and exits. With the
  // "done" pipe the supervisor would reach END_SETUP only after the
  // container's setup: --no-done-pipe.
  KilledLaunch killed;
  ASSERT_NO_FATAL_FAILURE(kill_mid_boot({"--no-done-pipe", "--phase-delay", "3:600000", "--phase-delay", "15:1000"},
                                        "container_pid", Victim::Supervisor, killed));

  TracedBoots traced;
  traced.summary = killed.summary;
  traced.rows = killed.rows;
  traced.truth = killed.truth;
  const auto& fact = traced.truth[killed.hpid];
  if (fact.count("exec_lo") > 0 && fact.at("exec_lo") < killed.killed_at_ns) {
    std::cout << "[   NOTE   ] the container had already exec'd when its supervisor was killed\n";
  }
  expect_boot_counts(traced.summary, 1, 1, 1, 0);
  expect_nothing_left_tracked(traced.summary);
  expect_boots_match_truth(traced, 1);
  const auto phases = phases_of(traced.rows);
  EXPECT_EQ(phases.count(3), 1U);
  EXPECT_EQ(phases.count(4), 0U) << "the supervisor died before START_WAIT";
}

TEST_F(FaultKillTest, ContainerExitingAfterExecveBeforeListenIsIncomplete) {
  const auto truth_path = new_file("truth.tsv");
  const auto rows_path = new_file("rows.tsv");
  const auto run = shell_command({launcher().string(), "--truth", truth_path.string(), "--", "/bin/true"});
  const auto r = run_sampler({"--format", "json", "--events", rows_path.string(), "--run", run, "/bin/true"});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  expect_boot_counts(summary, 1, 1, 0, 1);
  expect_nothing_left_tracked(summary);
  const auto metrics = summary.value("metrics", nlohmann::json::object());
  EXPECT_EQ(metrics.value("execve", nlohmann::json::object()).value("count", kAbsent), 1U) << summary.dump(2);
  EXPECT_EQ(metrics.value("listen", nlohmann::json::object()).value("count", kAbsent), 0U) << summary.dump(2);

  const auto truth = parse_truth(read_file(truth_path));
  const auto rows = single_boot(parse_boot_rows(read_file(rows_path)));
  ASSERT_FALSE(rows.empty());
  ASSERT_EQ(truth.count(rows.front().hpid), 1U);
  EXPECT_EQ(static_cast<std::int64_t>(rows.front().container_pid), truth.at(rows.front().hpid).at("container_pid"));
  EXPECT_TRUE(has_kind(rows, "execve"));
  EXPECT_FALSE(has_kind(rows, "listen"));
}

}  // namespace
}  // namespace hacoboot::it
