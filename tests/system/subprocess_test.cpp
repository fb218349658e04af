// Subprocess: the one way the tool forks (the --run shell and its guard,
// bpftool filling the BTF cache, the tracepoint lookup's child), and how it
// ends and reaps them.
#include "util/subprocess.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <vector>

#include "util/c_strings.hpp"

namespace hacoboot {
namespace {

// A process of that pid is still there (running or a zombie).
bool exists(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

class SubprocessExec : public ::testing::Test {
 protected:
  // /bin/sh -c SCRIPT.
  Expected<Subprocess> shell(
      const std::string& script, const std::function<bool()>& prepare = [] { return true; }) {
    args_ = {"sh", "-c", script};
    argv_ = c_string_array(args_);
    return Subprocess::exec({.path = "/bin/sh", .argv = argv_.data(), .envp = environ, .prepare = prepare});
  }

 private:
  std::vector<std::string> args_;
  std::vector<char*> argv_;
};

TEST_F(SubprocessExec, ReturnsTheStatusOfWhatItRan) {
  auto child = shell("exit 3");
  ASSERT_TRUE(child) << child.error();
  const int status = child->wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

TEST_F(SubprocessExec, SaysWhyTheExecFailed) {
  std::vector<std::string> args{"no-such-program"};
  const auto argv = c_string_array(args);
  const auto child = Subprocess::exec({.path = "/nonexistent/no-such-program", .argv = argv.data(), .envp = environ});
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error(), "No such file or directory");
}

TEST_F(SubprocessExec, SaysWhyThePreparationFailed) {
  const auto child = shell("exit 0", [] {
    errno = EPERM;
    return false;
  });
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error(), "Operation not permitted");
}

TEST_F(SubprocessExec, RunsWithSignalsUnblocked) {
  // A blocked SIGTERM would leave the shell running.
  auto child = shell("kill -TERM $$; exit 0");
  ASSERT_TRUE(child) << child.error();
  const int status = child->wait();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST_F(SubprocessExec, WaitForKillsAndReapsWhatOutlivesThePatience) {
  auto child = shell("exec sleep 30");
  ASSERT_TRUE(child) << child.error();
  const pid_t pid = child->pid();
  EXPECT_EQ(child->wait_for(std::chrono::milliseconds(20)), std::nullopt);
  EXPECT_FALSE(exists(pid));
}

TEST_F(SubprocessExec, WaitForGivesTheStatusOfWhatEndsInTime) {
  auto child = shell("exit 5");
  ASSERT_TRUE(child) << child.error();
  const auto status = child->wait_for(std::chrono::seconds(30));
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 5);
}

TEST_F(SubprocessExec, TheDestructorKillsAndReapsAChildStillRunning) {
  pid_t pid = -1;
  {
    auto child = shell("exec sleep 30");
    ASSERT_TRUE(child) << child.error();
    pid = child->pid();
    EXPECT_EQ(child->poll_exit(), std::nullopt);
  }
  EXPECT_FALSE(exists(pid));
}

TEST(SubprocessFork, TheChildStartsWithEverySignalBlocked) {
  auto child = Subprocess::fork([] {
    sigset_t mask;
    ::sigprocmask(SIG_SETMASK, nullptr, &mask);
    ::_exit(sigismember(&mask, SIGTERM) == 1 && sigismember(&mask, SIGINT) == 1 ? 0 : 1);
  });
  ASSERT_TRUE(child) << child.error();
  EXPECT_EQ(child->wait(), 0);
  // The parent's mask is put back.
  sigset_t mask;
  ::sigprocmask(SIG_SETMASK, nullptr, &mask);
  EXPECT_EQ(sigismember(&mask, SIGTERM), 0);
}

}  // namespace
}  // namespace hacoboot
