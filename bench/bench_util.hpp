// Small helpers shared by the benchmark programs.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace hacoboot::bench {

// CLOCK_MONOTONIC, as the kernel side's and the truth files' timestamps.
inline std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// A positive count from the command line; exits 2 naming the program otherwise.
inline long parse_positive(const char* text, const char* program) {
  char* end = nullptr;
  errno = 0;
  const long value = text != nullptr ? std::strtol(text, &end, 10) : -1;
  if (text == nullptr || errno != 0 || *end != '\0' || value <= 0) {
    std::fprintf(stderr, "%s: expected a positive count, got '%s'\n", program, text != nullptr ? text : "");
    std::exit(2);
  }
  return value;
}

}  // namespace hacoboot::bench
