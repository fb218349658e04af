#include "exporter/metrics_export.hpp"

#include <sstream>
#include <utility>

namespace hacoboot {

MetricsExport::MetricsExport(MetricsExportConfig config) : config_(std::move(config)) {
  if (!config_.textfile.empty()) textfile_.emplace(config_.textfile, config_.textfile_interval);
  if (config_.serve) server_.emplace(*config_.serve, [this] { return render(); });
}

void MetricsExport::add(const BootRecord& boot) {
  const std::scoped_lock lock(mutex_);
  metrics_.add(boot);
}

void MetricsExport::add_syscalls(const BootRecord& boot) {
  const std::scoped_lock lock(mutex_);
  metrics_.add_syscalls(boot);
}

void MetricsExport::set_haconiwa_files(std::uint64_t attached, std::uint64_t replacements) {
  const std::scoped_lock lock(mutex_);
  metrics_.set_haconiwa_files(attached, replacements);
}

void MetricsExport::update(std::uint64_t events_lost, const KernelDrops& drops, std::uint64_t untracked_phases,
                           std::uint64_t in_flight, bool write_now) {
  {
    const std::scoped_lock lock(mutex_);
    metrics_.set_lost_events(events_lost);
    metrics_.set_kernel_drops(drops);
    metrics_.set_untracked_phases(untracked_phases);
    metrics_.set_boots_in_flight(in_flight);
  }
  if (textfile_)
    textfile_->update(
        MetricsTextfile::Clock::now(), [this] { return render(); }, write_now);
}

std::string MetricsExport::render() {
  std::ostringstream text;
  const std::scoped_lock lock(mutex_);
  metrics_.write(text, config_.phase_names);
  return text.str();
}

}  // namespace hacoboot
