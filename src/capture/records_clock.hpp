#pragma once

#include <time.h>

#include <cstdint>

namespace hacoboot {

// Now, on the records' clock: CLOCK_MONOTONIC, the one bpf_ktime_get_ns() reads.
inline std::uint64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000U + static_cast<std::uint64_t>(now.tv_nsec);
}

}  // namespace hacoboot
