#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "exporter/boot_metrics.hpp"
#include "exporter/listen_address.hpp"
#include "exporter/metrics_server.hpp"
#include "exporter/metrics_textfile.hpp"
#include "model/boot.hpp"
#include "model/phases.hpp"

namespace hacoboot {

// What MetricsExport uses of the options.
struct MetricsExportConfig {
  std::optional<ListenAddress> serve;
  std::string textfile;  // empty: none
  std::chrono::nanoseconds textfile_interval{};
  PhaseNames phase_names;
};

// The Prometheus metrics of the settled boots, shared with the HTTP server's
// threads (--serve) and rewritten to --textfile every --textfile-interval.
class MetricsExport {
 public:
  // Binds the --serve address at once, so that a port in use fails before
  // anything is loaded; answers only from serve().
  explicit MetricsExport(MetricsExportConfig config);

  // Whether any output was asked for: without one, nothing needs feeding.
  [[nodiscard]] bool enabled() const { return server_.has_value() || textfile_.has_value(); }
  void serve() {
    if (server_) server_->serve();
  }
  [[nodiscard]] std::optional<std::uint16_t> port() const {
    return server_ ? std::optional(server_->port()) : std::nullopt;
  }

  void add(const BootRecord& boot);
  // A boot that ended, for its syscalls (BootMetrics::add_syscalls).
  void add_syscalls(const BootRecord& boot);
  void set_haconiwa_files(std::uint64_t attached, std::uint64_t replacements);
  // From the event loop: fresh gauges, and the textfile when due (or when
  // `write_now`, at the run's end).
  void update(std::uint64_t events_lost, const KernelDrops& drops, std::uint64_t untracked_phases,
              std::uint64_t in_flight, bool write_now);

 private:
  std::string render();

  const MetricsExportConfig config_;
  std::mutex mutex_;
  BootMetrics metrics_;
  std::optional<MetricsTextfile> textfile_;
  std::optional<MetricsServer> server_;  // last: stopped before what it reads goes
};

}  // namespace hacoboot
