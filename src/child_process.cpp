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
#include <thread>
#include <vector>

#include "hacoboot/errors.hpp"

namespace hacoboot {
namespace {

constexpr auto kTerminateGrace = std::chrono::seconds(2);
constexpr auto kReapStep = std::chrono::milliseconds(10);
constexpr int kExecFailed = 127;

struct Identity {
  uid_t uid;
  gid_t gid;
  std::string name;
};

Identity identity_of(const std::string& user) {
  errno = 0;
  const passwd* entry = ::getpwnam(user.c_str());
  if (entry == nullptr) throw UsageError("--run-as: no user '" + user + "'");
  return {entry->pw_uid, entry->pw_gid, entry->pw_name};
}

// In the forked child: only what may run between fork and exec.
[[noreturn]] void become_and_exec(const std::optional<Identity>& identity, const char* command) {
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
  ::execl("/bin/sh", "sh", "-c", command, static_cast<char*>(nullptr));
  ::_exit(kExecFailed);
}

}  // namespace

ChildProcess::ChildProcess(const std::string& command, const std::optional<std::string>& run_as) {
  std::optional<Identity> identity;
  if (run_as) identity = identity_of(*run_as);
  pid_ = ::fork();
  if (pid_ < 0) throw RuntimeError("--run: cannot fork: " + std::string(std::strerror(errno)));
  if (pid_ == 0) become_and_exec(identity, command.c_str());
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
