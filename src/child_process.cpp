#include "hacoboot/child_process.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "hacoboot/errors.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace hacoboot {
namespace {

constexpr auto kTerminateGrace = std::chrono::seconds(2);
constexpr auto kReapStep = std::chrono::milliseconds(10);

}  // namespace

ChildProcess::ChildProcess(const std::string& command) {
  // posix_spawn takes char* const[] for historical reasons; it does not write.
  std::array<char*, 4> argv{const_cast<char*>("/bin/sh"), const_cast<char*>("-c"),  // NOLINT(*-const-cast)
                            const_cast<char*>(command.c_str()), nullptr};           // NOLINT(*-const-cast)
  // A process group of its own: the shell may fork the real workload, and
  // ending the run must end all of it, not just the shell.
  posix_spawnattr_t attributes{};
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const int err = ::posix_spawn(&pid_, "/bin/sh", nullptr, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  if (err != 0) throw RuntimeError("--run: cannot start /bin/sh: " + std::string(std::strerror(err)));
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
