#include "exporter/metrics_textfile.hpp"

#include <utility>

#include "util/atomic_file.hpp"

namespace hacoboot {

MetricsTextfile::MetricsTextfile(std::string path, std::chrono::nanoseconds interval)
    : path_(std::move(path)), interval_(std::chrono::duration_cast<Clock::duration>(interval)) {}

bool MetricsTextfile::update(Clock::time_point now, const std::function<std::string()>& render, bool now_anyway) {
  if (!now_anyway && now < next_) return false;
  write_file_atomically(path_, render());
  next_ = now + interval_;
  return true;
}

}  // namespace hacoboot
