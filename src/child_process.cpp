#include "hacoboot/child_process.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <string_view>
#include <thread>
#include <vector>

#include "hacoboot/c_strings.hpp"
#include "hacoboot/errors.hpp"

namespace hacoboot {
namespace {

constexpr auto kTerminateGrace = std::chrono::seconds(2);
constexpr auto kReapStep = std::chrono::milliseconds(10);
constexpr int kExecFailed = 127;

// The tool's environment, with the identity's HOME, USER and LOGNAME. Built
// before fork: between fork and exec only async-signal-safe calls may run.
std::vector<std::string> environment_for(const std::optional<RunIdentity>& identity) {
  std::vector<std::string> env;
  const auto replaced = [&](std::string_view entry) {
    if (!identity) return false;
    return entry.starts_with("HOME=") || entry.starts_with("USER=") || entry.starts_with("LOGNAME=");
  };
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!replaced(*entry)) env.emplace_back(*entry);
  }
  if (identity) {
    env.push_back("HOME=" + identity->home);
    env.push_back("USER=" + identity->name);
    env.push_back("LOGNAME=" + identity->name);
  }
  return env;
}

// In the forked child: only what may run between fork and exec.
[[noreturn]] void become_and_exec(const std::optional<RunIdentity>& identity, char* const* argv, char* const* envp) {
  ::setpgid(0, 0);
  // An ignored signal stays ignored across exec: the tool ignores SIGPIPE,
  // the command's pipelines must not.
  (void)::signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (identity && (::initgroups(identity->name.c_str(), identity->gid) != 0 || ::setgid(identity->gid) != 0 ||
                   ::setuid(identity->uid) != 0)) {
    ::_exit(kExecFailed);
  }
  ::execve("/bin/sh", argv, envp);
  ::_exit(kExecFailed);
}

// Forks the shell that runs the --run command; returns its pid.
pid_t spawn_shell(const std::string& command, const std::optional<RunIdentity>& run_as) {
  std::vector<std::string> args{"sh", "-c", command};
  const auto argv = c_string_array(args);
  auto env = environment_for(run_as);
  const auto envp = c_string_array(env);
  const pid_t pid = ::fork();
  if (pid < 0) throw RuntimeError("--run: cannot fork: " + std::string(std::strerror(errno)));
  if (pid == 0) become_and_exec(run_as, argv.data(), envp.data());
  return pid;
}

}  // namespace

RunIdentity resolve_run_as(const std::string& user) {
  const passwd* entry = ::getpwnam(user.c_str());
  if (entry == nullptr) throw UsageError("--run-as: no user '" + user + "'");
  return {.uid = entry->pw_uid, .gid = entry->pw_gid, .name = entry->pw_name, .home = entry->pw_dir};
}

ChildProcess::ChildProcess(const std::string& command, const std::optional<RunIdentity>& run_as)
    : pid_(spawn_shell(command, run_as)) {
  // Also from the parent: the group must exist before anyone signals it.
  ::setpgid(pid_, pid_);
}

ChildProcess::~ChildProcess() {
  if (poll_exit()) return;
  ::kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kTerminateGrace;
  while (!poll_exit()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      return;
    }
    std::this_thread::sleep_for(kReapStep);
  }
}

std::optional<int> ChildProcess::poll_exit() {
  if (status_) return status_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
  return status_;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return name != nullptr ? "killed by SIG" + std::string(name)
                           : "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return "ended with status " + std::to_string(status);
}

}  // namespace hacoboot
