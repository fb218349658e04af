#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/boot.hpp"

namespace hacoboot {

// A point of one thread's timeline: the start of the boot, a milestone.
struct ThreadInstant {
  std::uint32_t tid = 0;
  std::uint64_t ts_ns = 0;
};

// A stretch of the path on one thread, inside one of its steps: `step` is
// the step that ends next on that thread at or after `end_ns` (nullopt when
// none does: time after its last step).
struct PathPiece {
  std::uint32_t tid = 0;
  std::optional<Step> step;
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
  // nullopt when the totals at one end are unknown (a thread's time before
  // the start of the boot that the path was cut at).
  std::optional<SchedTotals> states;

  [[nodiscard]] std::uint64_t duration() const { return end_ns - begin_ns; }
  bool operator==(const PathPiece&) const = default;
};

// The chain of work, across threads through forks and wakeups, that the
// target instant waited for: its pieces cover [start, target] without gap
// or overlap, so their durations add up to the time to the target exactly.
struct CriticalPath {
  std::vector<PathPiece> pieces;  // in time order

  [[nodiscard]] std::uint64_t duration() const;
  // Summed over the pieces whose states are known.
  [[nodiscard]] SchedTotals states() const;
  // What the boot would have taken with a CPU always free: the path without
  // its run-queue time.
  [[nodiscard]] std::uint64_t noise_free() const;
};

// Walks back from `target` to `start`: on the current thread, back to the
// latest wakeup by another traced process (then on the waker, from that
// instant) or to the thread's creation (then on its parent, from the fork),
// whichever is later; back to the start if neither comes after it. The
// pieces are then cut at every reading of their thread's totals, so each one
// lies inside one step and its states are exact.
CriticalPath critical_path(const std::vector<ThreadTimeline>& threads, const std::vector<WakeupEdge>& wakeups,
                           ThreadInstant start, ThreadInstant target);

// The boot's path from its start to its execve or its listen; nullopt when
// it lacks the milestone or the start, when the milestone came before the
// start (--from a later phase), or when the kernel side did not
// account the threads that passed them.
std::optional<CriticalPath> path_to_execve(const BootRecord& boot);
std::optional<CriticalPath> path_to_listen(const BootRecord& boot);

}  // namespace hacoboot
