#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>

#include "util/expected.hpp"

namespace hacoboot {

// What a child runs between fork and exec, and what it execs. Built before
// the fork: between fork and exec only async-signal-safe calls may run.
struct ExecRequest {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  // Runs in the child before the exec (its group, identity, standard
  // descriptors...); false, errno set, stops it there.
  std::function<bool()> prepare = [] { return true; };
};

// A child process this one forked, reaped on every path: the destructor
// kills (SIGKILL) and reaps one still running.
class Subprocess {
 public:
  Subprocess() = default;  // no process
  ~Subprocess() { kill_and_reap(); }
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Forks a child that runs `child_main`, which must not return: it execs
  // or _exits. The child starts with every signal blocked (until it has
  // exec'd or set its own dispositions it must not run this process's
  // handlers); this thread's mask is put back. Only async-signal-safe calls
  // in the child: this process may have other threads.
  static Expected<Subprocess> fork(const std::function<void()>& child_main);

  // Forks a child that runs `request.prepare`, then execs with every signal
  // unblocked. Returns once the exec has happened, or why the child could
  // not get there (its errno, sent back through a close-on-exec pipe); that
  // child is reaped.
  static Expected<Subprocess> exec(const ExecRequest& request);

  [[nodiscard]] pid_t pid() const { return pid_; }
  // The wait(2) status once it has exited; never blocks.
  std::optional<int> poll_exit();
  // Blocks until it exits; its wait(2) status.
  int wait();
  // Waits up to `patience` for it to exit; its status, or nullopt when it
  // was still running then (it is killed and reaped).
  std::optional<int> wait_for(std::chrono::milliseconds patience);
  // SIGKILL unless it has exited, then reaped.
  void kill_and_reap();

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}

  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace hacoboot
