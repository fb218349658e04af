#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace hacoboot {

// Who the --run command runs as (--run-as USER).
struct RunIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;
  std::string home;
};

// Looks USER up before anything is loaded; throws UsageError for an unknown user.
RunIdentity resolve_run_as(const std::string& user);

// The --run command: started once probes are live, never left running.
class ChildProcess {
 public:
  // Runs COMMAND through /bin/sh -c in a process group of its own, as
  // `run_as` when given: that user's uid, gid and groups, and HOME, USER and
  // LOGNAME set like `sudo -u` does. Throws RuntimeError when it cannot start.
  ChildProcess(const std::string& command, const std::optional<RunIdentity>& run_as);
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
