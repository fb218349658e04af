#pragma once

#include <cstdint>
#include <optional>

namespace hacoboot {

// A thread's cumulative nanoseconds in each scheduler state since the kernel
// side first saw it (hacoboot/contract.h). Every event a thread emits carries its
// totals at that instant: a stretch of its time is the difference of two
// readings, and its four states add up to the stretch's length exactly.
struct SchedTotals {
  std::uint64_t cpu = 0;        // running
  std::uint64_t run_queue = 0;  // runnable, waiting for a CPU
  std::uint64_t sleep = 0;      // blocked, not waiting for I/O: sleep, pipe, futex, lock...
  std::uint64_t io = 0;         // waiting for block I/O (the kernel's io_schedule)

  [[nodiscard]] std::uint64_t total() const { return cpu + run_queue + sleep + io; }
  // total(), or nullopt when the sum would wrap: no real reading's does, a
  // crafted input's may (a recording, a baseline).
  [[nodiscard]] std::optional<std::uint64_t> checked_total() const;
  // The stretch between an earlier reading and this one.
  SchedTotals operator-(const SchedTotals& earlier) const;
  SchedTotals& operator+=(const SchedTotals& other);
  bool operator==(const SchedTotals&) const = default;
};

}  // namespace hacoboot
