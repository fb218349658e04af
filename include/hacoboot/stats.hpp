#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "hacoboot/boot.hpp"

namespace hacoboot {

// count / avg / min / max of durations in ns, in exact integer arithmetic.
class SampleStats {
 public:
  void add(std::uint64_t value_ns);

  [[nodiscard]] std::uint64_t count() const { return count_; }
  [[nodiscard]] bool empty() const { return count_ == 0; }
  // Truncated like bpftrace's avg(); 0 when empty, as are min and max.
  [[nodiscard]] std::uint64_t avg() const;
  [[nodiscard]] std::uint64_t min() const { return empty() ? 0 : min_; }
  [[nodiscard]] std::uint64_t max() const { return max_; }

 private:
  std::uint64_t count_ = 0;
  __extension__ using Sum = unsigned __int128;  // cannot overflow: 2^64 samples of 2^64 ns
  Sum sum_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
};

struct BootCounts {
  std::uint64_t started = 0;     // passed the start phase while traced
  std::uint64_t execve = 0;      // ... and then exec'd the command
  std::uint64_t listen = 0;      // ... and then listened
  std::uint64_t incomplete = 0;  // started, but missed execve or listen
  std::uint64_t unstarted = 0;   // seen only after their start (tracing began mid-launch)
};

// Aggregate of finished boots. Times are measured from each boot's start.
class Summary {
 public:
  void add(const BootRecord& boot);

  [[nodiscard]] const BootCounts& boots() const { return boots_; }
  [[nodiscard]] const SampleStats& execve() const { return execve_; }
  [[nodiscard]] const SampleStats& listen() const { return listen_; }
  // Every phase passed after the start, by phase number.
  [[nodiscard]] const std::map<std::int64_t, SampleStats>& phases() const { return phases_; }

 private:
  BootCounts boots_;
  SampleStats execve_;
  SampleStats listen_;
  std::map<std::int64_t, SampleStats> phases_;
};

}  // namespace hacoboot
