#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace hacoboot {

// The --run command: started once probes are live, never left running.
class ChildProcess {
 public:
  // Runs COMMAND through /bin/sh -c in a process group of its own, as
  // `run_as` (a user name, with that user's groups) when given. Throws
  // UsageError for an unknown user, RuntimeError when it cannot start.
  ChildProcess(const std::string& command, const std::optional<std::string>& run_as);
  // A child still running is terminated with its whole process group
  // (SIGTERM, then SIGKILL after a grace period) and reaped.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&&) = delete;
  ChildProcess& operator=(ChildProcess&&) = delete;

  // The wait(2) status once the child has exited; never blocks.
  std::optional<int> poll_exit();
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// "exited 3", "killed by SIGTERM".
std::string describe_wait_status(int status);

}  // namespace hacoboot
