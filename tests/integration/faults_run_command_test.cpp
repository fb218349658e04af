// The --run command: run as another user (--run-as), and nothing of its
// process group outliving the tool.
#include <signal.h>

#include <optional>

#include "faults.hpp"

namespace hacoboot::it {
namespace {

// Live (not zombie) processes of process group `group`.
std::vector<pid_t> live_members_of(pid_t group) {
  std::vector<pid_t> members;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    const auto stat = proc_stat(pid);
    if (stat && stat->pgrp == group && !has_exited(pid)) members.push_back(pid);
  }
  return members;
}

// ---------------------------------------------------------------------------
// --run-as: the traced command without root's privileges
// ---------------------------------------------------------------------------
using RunAsTest = FaultTest;

TEST_F(RunAsTest, RunCommandHasTheUsersIdentityAndNoCapabilities) {
  const auto r =
      run_sampler({"--run-as", "nobody", "--run",
                   "test \"$(id -un)\" = nobody && test \"$(id -G)\" = \"$(id -g nobody)\" && "
                   "test \"$USER\" = nobody && test \"$HOME\" = \"$(getent passwd nobody | cut -d: -f6)\" && "
                   "grep -Eq '^CapEff:[[:space:]]+0+$' /proc/self/status"});
  EXPECT_TRUE(r.status.exited && r.status.code == 0)
      << "the command did not run as nobody (uid, groups, USER, HOME, no capabilities): " << r.status.describe()
      << "\nstderr: " << r.err;
}

// Boots launched by an unprivileged --run command are traced like any other
// (the launcher without namespaces: nobody may not create them).
TEST_F(RunAsTest, BootsOfTheUnprivilegedCommandAreTraced) {
  open_to_other_users();
  const auto r = run_sampler({"--format", "json", "--run-as", "nobody", "--run",
                              launcher_command({"-n", "2", "--no-namespaces"}), app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  expect_boot_counts(nlohmann::json::parse(r.out), 2, 2, 2, 0);
}

// ---------------------------------------------------------------------------
// The --run command's process group: nothing of it outlives the tool
// ---------------------------------------------------------------------------
// The command's shell starts a sleep that ignores SIGTERM, in its process
// group, and ends on the first SIGTERM itself: however the run ends, the
// whole group is gone after the tool, the sleep SIGKILLed once the grace
// period is over.
class RunGroupTest : public FaultTest {
 protected:
  void TearDown() override {
    // Nothing left behind by a failed test: everything carrying the marker.
    for (const pid_t pid : processes_mentioning(marker())) ::kill(pid, SIGKILL);
    FaultTest::TearDown();
  }

  // Starts the sleep, records its pid once it ignores SIGTERM, then the
  // group's, then runs `rest`.
  [[nodiscard]] std::string command(const std::string& rest) const {
    const auto sleep = shell_quote(sleep_file().string());
    const std::string ignoring =
        "trap '' TERM; echo $$ > " + sleep + "; exec env HACOBOOT_IT_MARKER=" + shell_quote(marker()) + " sleep 600";
    return "sh -c " + shell_quote(ignoring) + " & until [ -s " + sleep + " ]; do sleep 0.01; done; echo $$ > " +
           shell_quote(group_file().string()) + "; " + rest;
  }

  // Waits until the command has recorded both pids.
  bool command_started(Process& tracer) const {
    return wait_until([&] { return (recorded(group_file()) && recorded(sleep_file())) || !tracer.running(); }, 60s) &&
           recorded(group_file()) && recorded(sleep_file());
  }

  // Waits until the sleep and every other process of the group have exited,
  // and nothing mentions the marker any more (the tool's guard does).
  void expect_group_gone() const {
    const auto group = recorded(group_file());
    const auto sleep = recorded(sleep_file());
    ASSERT_TRUE(group && sleep) << "the --run command never recorded its pids";
    std::vector<pid_t> left;
    EXPECT_TRUE(wait_until(
        [&] {
          left = live_members_of(*group);
          return has_exited(*sleep) && left.empty();
        },
        30s))
        << "the sleep (" << *sleep << ") " << (has_exited(*sleep) ? "exited" : "still runs") << "; " << left.size()
        << " processes left in the command's group " << *group;
    expect_all_gone(marker());
  }

 private:
  [[nodiscard]] std::string marker() const { return (dir() / "run-group").string(); }
  [[nodiscard]] std::filesystem::path group_file() const { return dir() / "group.pid"; }
  [[nodiscard]] std::filesystem::path sleep_file() const { return dir() / "sleep.pid"; }

  // The pid in file once written in full.
  static std::optional<pid_t> recorded(const std::filesystem::path& file) {
    const auto text = read_file(file);
    if (text.empty() || text.back() != '\n') return std::nullopt;
    return std::stoi(text);
  }
};

TEST_F(RunGroupTest, CtrlCEndsACommandThatIgnoresSigterm) {
  Process tracer(sampler_argv({"--format", "json", "--run", command("wait")}), dir());
  ASSERT_TRUE(command_started(tracer)) << tracer.err();
  tracer.send_signal(SIGINT);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
  expect_group_gone();
}

TEST_F(RunGroupTest, ReachingTheCountEndsACommandThatIgnoresSigterm) {
  const auto r = run_sampler(
      {"-n", "1", "--format", "json", "--run", command(launcher_command({"-n", "1"}) + "; wait"), app().string()});
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  expect_group_gone();
}

// The second Ctrl-C comes while the summary is being written (held up by a
// full stdout pipe): the tool exits at once, and its guard ends the group.
TEST_F(RunGroupTest, SecondCtrlCEndsACommandThatIgnoresSigterm) {
  Process tracer(sampler_argv({"--format", "json", "--run", command("wait")}), dir(), StdoutTo::FullPipe);
  ASSERT_TRUE(command_started(tracer)) << tracer.err();
  tracer.send_signal(SIGINT);
  ASSERT_TRUE(wait_until([&] { return blocked_writing_stdout(tracer.pid()) || !tracer.running(); }, 60s))
      << "the tracer never blocked writing its summary";
  tracer.send_signal(SIGINT);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 128 + SIGINT) << status.describe() << "\nstderr: " << tracer.err();
  expect_group_gone();
}

// The shell exits at once, the sleep still running in its group.
TEST_F(RunGroupTest, WhatTheCommandLeftRunningEndsWithIt) {
  const auto r = run_sampler({"--format", "json", "--run", command("true")});
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  expect_group_gone();
}

// kill -9 leaves the tool no say: the kernel signals the shell and the
// tool's guard, which ends the rest of the group.
TEST_F(RunGroupTest, KillingTheToolEndsTheCommand) {
  Process tracer(sampler_argv({"--format", "json", "--run", command("wait")}), dir());
  ASSERT_TRUE(command_started(tracer)) << tracer.err();
  tracer.send_signal(SIGKILL);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_EQ(status.signal, SIGKILL) << status.describe();
  expect_group_gone();
}

}  // namespace
}  // namespace hacoboot::it
