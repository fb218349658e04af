#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>

#include "model/boot.hpp"

namespace hacoboot {

// A one-line live status on stderr while tracing, redrawn a few times a
// second: only on a terminal, and never with --quiet. Erased when cleared or
// destroyed, so that what ends the run (the summary, an error) starts on a
// clean line.
class ProgressLine {
 public:
  explicit ProgressLine(bool wanted);

  // An observer of the boots past the warm-up, and of the event loop's polls.
  void boot_done(const BootRecord& boot);
  void update(std::uint64_t in_flight, std::uint64_t lost_events);
  void clear() { drawn_.reset(); }

 private:
  struct EraseLine {
    void operator()(std::FILE* terminal) const;
  };

  bool enabled_;
  std::uint64_t boots_ = 0;
  std::optional<std::uint64_t> last_listen_ns_;
  std::chrono::steady_clock::time_point next_draw_;
  std::unique_ptr<std::FILE, EraseLine> drawn_;  // the terminal while a line is drawn on it
};

}  // namespace hacoboot
