#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "util/subprocess.hpp"

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
//
// Its process group also holds a guard: a copy of the tool that does nothing
// until the kernel tells it the tool died (PR_SET_PDEATHSIG, so also on
// kill -9), then ends the group like the destructor would. The shell gets
// SIGTERM from the kernel itself when the tool dies. What leaves the group
// (setsid daemons, a double fork into another group) is not reached.
class ChildProcess {
 public:
  // Runs COMMAND through /bin/sh -c in a process group of its own, as
  // `run_as` when given: that user's uid, gid and groups, and HOME, USER and
  // LOGNAME set like `sudo -u` does. Throws RuntimeError when it cannot start.
  // Must be called from the thread that outlives the run (the main thread):
  // the kernel's parent-death signal follows the thread that forked.
  ChildProcess(const std::string& command, const std::optional<RunIdentity>& run_as);
  // Ends whatever is left of the process group, whether or not the shell
  // has exited: SIGTERM, then SIGKILL after a grace period if any process of
  // it is still there. Reaps the shell.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&&) = delete;
  ChildProcess& operator=(ChildProcess&&) = delete;

  // The shell's wait(2) status once it has exited; never blocks.
  std::optional<int> poll_exit() { return shell_.poll_exit(); }
  // The shell's pid, which is also the process group's id.
  [[nodiscard]] pid_t pid() const { return shell_.pid(); }

 private:
  Subprocess shell_;
  Subprocess guard_;
};

}  // namespace hacoboot
