#include "util/subprocess.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "util/unique_fd.hpp"

namespace hacoboot {
namespace {

constexpr int kExecFailed = 127;  // the shell's status for a command it could not run
constexpr auto kWaitStep = std::chrono::milliseconds(5);

Failure failure(const char* step) {
  return Failure{std::string(step) + ": " + std::strerror(errno)};
}

}  // namespace

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(std::exchange(other.status_, std::nullopt)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

Expected<Subprocess> Subprocess::fork(const std::function<void()>& child_main) {
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::fork();
  if (pid == 0) {
    child_main();
    ::_exit(kExecFailed);
  }
  const int error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = error;
  if (pid < 0) return failure("fork");
  return Subprocess(pid);
}

Expected<Subprocess> Subprocess::exec(const ExecRequest& request) {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return failure("pipe");
  const UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  auto child = fork([&] {
    if (request.prepare()) {
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execve(request.path, request.argv, request.envp);
    }
    const int error = errno;
    (void)::write(write_end.get(), &error, sizeof(error));
  });
  if (!child) return child;
  write_end.reset();  // so that the exec (closing the child's copy) ends the read
  int error = 0;
  ssize_t got = 0;
  while ((got = ::read(read_end.get(), &error, sizeof(error))) < 0 && errno == EINTR) {
  }
  if (got != sizeof(error)) return child;
  child->wait();
  return Failure{std::strerror(error)};
}

std::optional<int> Subprocess::poll_exit() {
  if (status_ || pid_ < 0) return status_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
  return status_;
}

int Subprocess::wait() {
  if (!status_) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    status_ = status;
  }
  return *status_;
}

std::optional<int> Subprocess::wait_for(std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!poll_exit() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(kWaitStep);
  if (status_) return status_;
  kill_and_reap();
  return std::nullopt;
}

void Subprocess::kill_and_reap() {
  if (pid_ < 0 || status_) return;
  ::kill(pid_, SIGKILL);
  wait();
}

}  // namespace hacoboot
