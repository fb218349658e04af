#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace hacoboot {

// A one-line live status on stderr while tracing, redrawn a few times a
// second: only on a terminal, and never with --quiet.
class ProgressLine {
 public:
  explicit ProgressLine(bool wanted);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ProgressLine(ProgressLine&&) = delete;
  ProgressLine& operator=(ProgressLine&&) = delete;
  ~ProgressLine();

  void boot_done(std::optional<std::uint64_t> listen_ns);
  void update(std::uint64_t in_flight, std::uint64_t lost_events);
  void clear();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::uint64_t boots_ = 0;
  std::optional<std::uint64_t> last_listen_ns_;
  std::chrono::steady_clock::time_point next_draw_{};
};

}  // namespace hacoboot
