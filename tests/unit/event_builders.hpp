#pragma once
// Small builders for the decoded kernel events the BootTracker consumes, so
// that a test reads like the launch it replays:
//   ev::phase(t, sv, sv, 1), ev::fork(t, sv, sv, child, Role::Container), ...

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/boot.hpp"
#include "model/boot_tracker.hpp"
#include "model/event.hpp"
#include "model/summary.hpp"

namespace hacoboot::ev {

// USDT bootstrap_phase_pass by pid with (phase n, hpid). The kernel sends
// phases untagged (role 0).
Event phase(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, std::int64_t n);
// sched_process_fork by a tracked parent; role is the child's.
Event fork(std::uint64_t ts, std::uint32_t parent, std::uint32_t hpid, std::uint32_t child, Role role);
Event exec(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, std::string filename, Role role = Role::Container,
           std::uint64_t cgroup_id = 0);
Event listen(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, Role role = Role::Container);
// wait_status: the process's wait(2) status (exit_code), 0 an exit(0).
Event exit(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, Role role, int wait_status = 0);

}  // namespace hacoboot::ev

namespace hacoboot::test {

// The pids and times of one synthetic launch, shaped like the real capture:
// CLI passes 0 and forks the supervisor; supervisor passes 1, 2 and forks the
// container; the container passes 11..21, execs, listens; supervisor passes
// 3, 4; the container dies; the supervisor passes 5, 6 and exits; the CLI exits.
struct Launch {
  std::uint32_t cli = 100;
  std::uint32_t supervisor = 200;
  std::uint32_t container = 201;
  std::uint64_t t0 = 1'000'000;  // the CLI's phase 0
  std::string command = "/bin/app";
  std::uint64_t cgroup_id = 4242;

  // Absolute times of the milestones (offsets from t0 fixed here, once).
  [[nodiscard]] std::uint64_t cli_start() const { return t0; }
  [[nodiscard]] std::uint64_t sv_start() const { return t0 + 1'000; }         // phase 1
  [[nodiscard]] std::uint64_t container_start() const { return t0 + 3'000; }  // phase 11
  [[nodiscard]] std::uint64_t execve() const { return t0 + 5'000; }
  [[nodiscard]] std::uint64_t listen() const { return t0 + 9'000; }
  [[nodiscard]] std::uint64_t container_exit() const { return t0 + 20'000; }
  [[nodiscard]] std::uint64_t sv_exit() const { return t0 + 20'300; }

  // Every event of the launch, in time order.
  [[nodiscard]] std::vector<Event> events() const;
  // The events up to and including the listen (a boot still running).
  [[nodiscard]] std::vector<Event> events_until_listen() const;
};

// The phases a full Launch passes, in time order.
std::vector<std::int64_t> full_launch_phases();

// Merges event lists by timestamp (stable: equal times keep list order).
std::vector<Event> merge_by_time(std::vector<std::vector<Event>> lists);

std::vector<std::int64_t> phase_numbers(const BootRecord& boot);

// A finished boot started by phase 1 at `start`, for the aggregates (times absolute).
BootRecord started_boot(std::uint64_t start, std::vector<PhaseMark> phases, std::optional<std::uint64_t> execve,
                        std::optional<std::uint64_t> listen);

// Time-since-start stats of phase n in a summary; nullptr when absent.
const SampleStats* phase_since_start(const Summary& summary, std::int64_t n);

// A BootTracker whose sink keeps every finished boot, in order.
class RecordingTracker {
 public:
  explicit RecordingTracker(BootTracker::Config config = {})
      : tracker_(std::move(config), [this](const BootRecord& boot) { done_.push_back(boot); }) {}

  void feed(const std::vector<Event>& events) {
    for (const auto& e : events) tracker_.on_event(e);
  }
  void feed(const Event& event) { tracker_.on_event(event); }

  BootTracker& tracker() { return tracker_; }
  [[nodiscard]] const std::vector<BootRecord>& done() const { return done_; }

 private:
  std::vector<BootRecord> done_;
  BootTracker tracker_;
};

}  // namespace hacoboot::test
