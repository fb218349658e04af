#pragma once

#include <sys/types.h>

#include <array>
#include <csignal>

namespace hacoboot {

// While alive: SIGINT, SIGTERM and SIGHUP ask the run to stop and print its
// summary (SIGHUP instead asks a long-running exporter to reopen its files); a second one ends the process at once
// (status 128+signal, after sending SIGTERM to the --run child's process group and removing the temporary file of an
// output being written: the kernel detaches the probes when our fds close). "Second" is the order the tool handles them
// in: one at a time, on the thread that created this object, so that a signal arriving while the first one is handled
// waits its turn instead of overtaking it. SIGPIPE is ignored, so that a closed output pipe is a write error we report
// rather than a silent death. SIGCHLD is caught and does nothing but interrupt the event loop's wait (epoll_wait is
// never restarted; other calls are, SA_RESTART), so that the end of a --run command is noticed at once rather than at
// the next poll.
class StopSignals {
 public:
  explicit StopSignals(bool sighup_reopens = false);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  StopSignals(StopSignals&&) = delete;
  StopSignals& operator=(StopSignals&&) = delete;

  [[nodiscard]] static bool received();
  // Whether SIGHUP asked to reopen the output files since the last call.
  [[nodiscard]] static bool take_reopen_request();
  // The process group to terminate on a second signal; 0 for none.
  static void set_child_group(pid_t group);
  // In a forked child about to exec another program: the default disposition
  // of every signal handled or ignored here (an ignored one would stay
  // ignored across exec). Async-signal-safe.
  static void restore_defaults();

 private:
  static constexpr std::array<int, 5> kSignals{SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD};
  std::array<struct sigaction, kSignals.size()> previous_{};
};

}  // namespace hacoboot
