#include "cli/child_process.hpp"

#include <grp.h>
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
#include "util/subprocess.hpp"

namespace hacoboot {
namespace {

constexpr auto kTerminateGrace = std::chrono::seconds(2);
constexpr auto kReapStep = std::chrono::milliseconds(10);
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
  for (const char* const* entry = environ; *entry != nullptr; ++entry) {
    if (!replaced(*entry)) env.emplace_back(*entry);
  }
  if (identity) {
    env.push_back("HOME=" + identity->home);
    env.push_back("USER=" + identity->name);
    env.push_back("LOGNAME=" + identity->name);
  }
  return env;
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

// In the forked shell, before the exec: only what may run between fork and
// exec. False (errno set) when it cannot become `identity`.
bool prepare_shell(const std::optional<RunIdentity>& identity, pid_t tool) {
  ::setpgid(0, 0);
  StopSignals::restore_defaults();
  if (identity && (::initgroups(identity->name.c_str(), identity->gid) != 0 || ::setgid(identity->gid) != 0 ||
                   ::setuid(identity->uid) != 0)) {
    return false;
  }
  // After the identity change, which clears it. SIGTERM like every other
  // end of the run; the guard sends SIGKILL after the grace period. Checked
  // after it is set: the tool may have died before.
  return ::prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && ::getppid() == tool;
}

// Starts the shell that runs the --run command, in a new process group
// (which exists once this returns: the shell sets it up before its exec).
Subprocess spawn_shell(const std::string& command, const std::optional<RunIdentity>& run_as) {
  std::vector<std::string> args{"sh", "-c", command};
  const auto argv = c_string_array(args);
  auto env = environment_for(run_as);
  const auto envp = c_string_array(env);
  const pid_t tool = ::getpid();
  auto shell = Subprocess::exec({.path = "/bin/sh", .argv = argv.data(), .envp = envp.data(), .prepare = [&] {
                                   return prepare_shell(run_as, tool);
                                 }});
  if (!shell) throw RuntimeError("--run: cannot start /bin/sh: " + shell.error());
  return std::move(*shell);
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

// Forks the guard of `group`.
Expected<Subprocess> spawn_guard(pid_t group) {
  const pid_t tool = ::getpid();
  auto forked = Subprocess::fork([=] { guard(group, tool); });
  // From the parent only: the guard must not rejoin once the destructor has
  // moved it out.
  if (forked) ::setpgid(forked->pid(), group);
  return forked;
}

}  // namespace

RunIdentity resolve_run_as(const std::string& user) {
  const passwd* entry = ::getpwnam(user.c_str());
  if (entry == nullptr) throw UsageError("--run-as: no user '" + user + "'");
  return {.uid = entry->pw_uid, .gid = entry->pw_gid, .name = entry->pw_name, .home = entry->pw_dir};
}

ChildProcess::ChildProcess(const std::string& command, const std::optional<RunIdentity>& run_as)
    : shell_(spawn_shell(command, run_as)) {
  auto guard = spawn_guard(shell_.pid());
  if (!guard) {
    ::kill(-shell_.pid(), SIGKILL);
    throw RuntimeError("--run: cannot " + guard.error());
  }
  guard_ = std::move(*guard);
}

ChildProcess::~ChildProcess() {
  // Out of the group, so that kill(-group, 0) counts the command's processes
  // only; it guards on meanwhile, should the tool die now.
  ::setpgid(guard_.pid(), guard_.pid());
  end_group(shell_.pid(), [this] { shell_.poll_exit(); });
  shell_.kill_and_reap();  // also when the shell left its group
  guard_.kill_and_reap();
}

}  // namespace hacoboot
