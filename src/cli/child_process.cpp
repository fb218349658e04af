#include "cli/child_process.hpp"

#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <sys/prctl.h>
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

#include "cli/stop_signals.hpp"
#include "util/c_strings.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

constexpr auto kTerminateGrace = std::chrono::seconds(2);
constexpr auto kReapStep = std::chrono::milliseconds(10);
constexpr int kExecFailed = 127;
// What the kernel sends the guard when the tool dies. Any signal would do:
// the guard blocks them all and asks who its parent is.
constexpr int kToolGone = SIGHUP;

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

// fork(2), the child starting with every signal blocked: until it has
// exec'd or set up its own dispositions, it must not run the tool's
// handlers. The parent's mask is put back.
pid_t fork_with_signals_blocked() {
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::fork();
  if (pid != 0) ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return pid;
}

void wait_for(pid_t pid, int& status) {
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// Ends every process of `group`: SIGTERM (with SIGCONT, so that a stopped
// one acts on it), then SIGKILL if any is left once the grace period is over,
// whatever its head did. A zombie still counts as a member of its group:
// `reap` collects the caller's own before each look. Async-signal-safe (kill,
// clock_gettime, nanosleep): the guard runs it too.
template <typename Reap>
void end_group(pid_t group, Reap reap) {
  reap();
  if (::kill(-group, SIGTERM) != 0) return;  // nobody left
  ::kill(-group, SIGCONT);
  const auto deadline = std::chrono::steady_clock::now() + kTerminateGrace;
  for (;;) {
    std::this_thread::sleep_for(kReapStep);
    reap();
    if (::kill(-group, 0) != 0) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-group, SIGKILL);
      return;
    }
  }
}

// In the forked shell: only what may run between fork and exec.
[[noreturn]] void become_and_exec(const std::optional<RunIdentity>& identity, char* const* argv, char* const* envp,
                                  pid_t tool) {
  ::setpgid(0, 0);
  StopSignals::restore_defaults();
  if (identity && (::initgroups(identity->name.c_str(), identity->gid) != 0 || ::setgid(identity->gid) != 0 ||
                   ::setuid(identity->uid) != 0)) {
    ::_exit(kExecFailed);
  }
  // After the identity change, which clears it. SIGTERM like every other
  // end of the run; the guard sends SIGKILL after the grace period. Checked
  // after it is set: the tool may have died before.
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != tool) ::_exit(kExecFailed);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve("/bin/sh", argv, envp);
  ::_exit(kExecFailed);
}

// Forks the shell that runs the --run command, in a new process group;
// returns its pid.
pid_t spawn_shell(const std::string& command, const std::optional<RunIdentity>& run_as) {
  std::vector<std::string> args{"sh", "-c", command};
  const auto argv = c_string_array(args);
  auto env = environment_for(run_as);
  const auto envp = c_string_array(env);
  const pid_t tool = ::getpid();
  const pid_t pid = fork_with_signals_blocked();
  if (pid < 0) throw RuntimeError("--run: cannot fork: " + std::string(std::strerror(errno)));
  if (pid == 0) become_and_exec(run_as, argv.data(), envp.data(), tool);
  // Also from the parent: the group must exist before anyone signals it.
  ::setpgid(pid, pid);
  return pid;
}

// In the forked guard, every signal blocked since the fork: waits while the
// tool is its parent, then leaves the group, so that its members can be
// counted, and ends it. Only async-signal-safe calls: the tool may have
// other threads.
[[noreturn]] void guard(pid_t group, pid_t tool) {
  // None of the tool's descriptors: not its BPF links (the probes would stay
  // attached), sockets or pipes (a reader would wait for their end).
  ::close_range(0, ~0U, 0);
  ::prctl(PR_SET_NAME, "hacoboot-guard");
  ::prctl(PR_SET_PDEATHSIG, kToolGone);
  sigset_t gone;
  sigemptyset(&gone);
  sigaddset(&gone, kToolGone);
  // Asked first: the tool may have died before prctl. Then each kToolGone,
  // which the command may also send its group, is checked the same way.
  while (::getppid() == tool) ::sigwaitinfo(&gone, nullptr);
  ::setpgid(0, 0);
  end_group(group, [] {});
  ::_exit(0);
}

// Forks the guard of `group`; returns its pid, -1 (errno set) on failure.
pid_t spawn_guard(pid_t group) {
  const pid_t tool = ::getpid();
  const pid_t pid = fork_with_signals_blocked();
  if (pid == 0) guard(group, tool);
  // From the parent only: the guard must not rejoin once the destructor has
  // moved it out.
  if (pid > 0) ::setpgid(pid, group);
  return pid;
}

}  // namespace

RunIdentity resolve_run_as(const std::string& user) {
  const passwd* entry = ::getpwnam(user.c_str());
  if (entry == nullptr) throw UsageError("--run-as: no user '" + user + "'");
  return {.uid = entry->pw_uid, .gid = entry->pw_gid, .name = entry->pw_name, .home = entry->pw_dir};
}

ChildProcess::ChildProcess(const std::string& command, const std::optional<RunIdentity>& run_as)
    : pid_(spawn_shell(command, run_as)), guard_(spawn_guard(pid_)) {
  if (guard_ < 0) {
    const std::string why = std::strerror(errno);
    ::kill(-pid_, SIGKILL);
    int status = 0;
    wait_for(pid_, status);
    throw RuntimeError("--run: cannot fork: " + why);
  }
}

ChildProcess::~ChildProcess() {
  // Out of the group, so that kill(-group, 0) counts the command's processes
  // only; it guards on meanwhile, should the tool die now.
  ::setpgid(guard_, guard_);
  end_group(pid_, [this] { poll_exit(); });
  int status = 0;
  if (!status_) {
    ::kill(pid_, SIGKILL);  // also when the shell left its group
    wait_for(pid_, status);
  }
  ::kill(guard_, SIGKILL);
  wait_for(guard_, status);
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
