#include "exporter/metrics_textfile.hpp"

#include <utility>

#include "util/atomic_file.hpp"

namespace hacoboot {

MetricsTextfile::MetricsTextfile(std::string path, std::chrono::nanoseconds interval)
    : path_(std::move(path)), interval_(std::chrono::duration_cast<Clock::duration>(interval)) {}

bool MetricsTextfile::update(Clock::time_point now, const std::function<std::string()>& render, bool now_anyway) {
  if (!now_anyway && now < next_) return false;
  write_file_atomically(path_, render());
  // Saturated: an interval of centuries (the largest --textfile-interval
  // takes) would overflow the clock and rewrite the file at every poll.
  next_ = interval_ < Clock::time_point::max() - now ? now + interval_ : Clock::time_point::max();
  return true;
}

}  // namespace hacoboot
