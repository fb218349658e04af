#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace hacoboot {

// The --run command: started once probes are live, never left running.
class ChildProcess {
 public:
  // Runs COMMAND through /bin/sh -c. Throws RuntimeError when it cannot start.
  explicit ChildProcess(const std::string& command);
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
