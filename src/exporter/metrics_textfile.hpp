#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace hacoboot {

// The --textfile output: node_exporter's textfile collector reads FILE
// whenever it is scraped, so the file is replaced whole (write_file_atomically)
// and at most once an interval, never written in place. The clock is the
// caller's: the event loop passes its own, a test any time it likes.
class MetricsTextfile {
 public:
  using Clock = std::chrono::steady_clock;

  // The first update() writes the file.
  MetricsTextfile(std::string path, std::chrono::nanoseconds interval);

  // Writes what render() returns when the interval passed since the last
  // write, or when `now_anyway` (the run's end); returns whether it wrote.
  // Throws RuntimeError naming the file when it cannot be replaced.
  bool update(Clock::time_point now, const std::function<std::string()>& render, bool now_anyway = false);

 private:
  std::string path_;
  Clock::duration interval_;
  Clock::time_point next_ = Clock::time_point::min();
};

}  // namespace hacoboot
