#include "hacoboot/session.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>

#include "hacoboot/boot_rows.hpp"
#include "hacoboot/boot_tracker.hpp"
#include "hacoboot/child_process.hpp"
#include "hacoboot/errors.hpp"
#include "hacoboot/event.hpp"
#include "hacoboot/report.hpp"
#include "hacoboot/stats.hpp"
#include "hacoboot/system_checks.hpp"
#include "hacoboot/tracer.hpp"

namespace hacoboot {
namespace {

// Bounds both how stale a reading can be and how long Ctrl-C takes to act.
constexpr auto kPollInterval = std::chrono::milliseconds(20);

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) {
  g_stop_signal = signal;
}

// SIGINT/SIGTERM/SIGHUP end the run with a summary while installed.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals.at(i), &action, &previous_.at(i));
  }
  ~StopSignals() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals.at(i), &previous_.at(i), nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  StopSignals(StopSignals&&) = delete;
  StopSignals& operator=(StopSignals&&) = delete;

  [[nodiscard]] static bool received() { return g_stop_signal != 0; }

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};
};

// An output file, opened before tracing starts so a bad path fails fast.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path) : path_(path) {
    if (path.empty()) return;
    file_.open(path, std::ios::out | std::ios::trunc);
    if (!file_) throw UsageError("cannot write " + path + ": " + std::strerror(errno));
  }

  std::ostream& stream() { return path_.empty() ? std::cout : file_; }

  // Throws RuntimeError if anything written was lost (full disk, closed pipe).
  void finish() {
    stream().flush();
    if (path_.empty() ? !std::cout : (file_.close(), !file_)) {
      throw RuntimeError("writing " + (path_.empty() ? std::string("standard output") : path_) + " failed");
    }
  }

 private:
  std::string path_;
  std::ofstream file_;
};

}  // namespace

int run_session(const Options& options, std::ostream& diagnostics) {
  OutputFile summary_out(options.output);
  std::optional<OutputFile> events_out;
  std::optional<BootRowWriter> boot_rows;
  if (!options.events.empty()) {
    events_out.emplace(options.events);
    boot_rows.emplace(events_out->stream());
  }

  require_kernel_btf();
  require_bpf_privileges();
  const std::string haconiwa = resolve_haconiwa(options.haconiwa);
  require_phase_probe(haconiwa);

  Summary summary;
  BootTracker tracker({.start_phase = options.start_phase, .command = options.command}, [&](const BootRecord& boot) {
    summary.add(boot);
    if (boot_rows) boot_rows->write(boot);
  });
  std::uint64_t undecodable = 0;
  Tracer tracer({.haconiwa_path = haconiwa, .verbose = options.verbose}, [&](std::span<const std::byte> record) {
    if (auto event = decode_event(record)) {
      tracker.on_event(*event);
    } else {
      ++undecodable;
    }
  });

  const StopSignals stop_signals;
  std::optional<ChildProcess> child;
  if (options.run) {
    child.emplace(*options.run);
  } else {
    diagnostics << "Tracing Haconiwa boots in " << haconiwa << "... Hit Ctrl-C to end.\n";
  }
  const auto started = std::chrono::steady_clock::now();

  std::optional<int> child_status;
  while (true) {
    tracer.poll(kPollInterval);
    if (StopSignals::received()) break;
    if (child && (child_status = child->poll_exit())) break;
    if (options.count && tracker.settled_boots() >= *options.count) break;
    if (options.duration && std::chrono::steady_clock::now() - started >= *options.duration) break;
  }
  tracer.poll(std::chrono::milliseconds(0));
  tracker.finish_all();

  const auto counters = tracer.counters();
  if (counters.lost_events > 0 || counters.tracked_full > 0 || undecodable > 0) {
    diagnostics << fmt::format(
        "warning: {} events lost (ring buffer full), {} processes untracked (map full), {} undecodable: "
        "figures may be incomplete\n",
        counters.lost_events, counters.tracked_full, undecodable);
  }
  const RunFacts facts{.start_phase = options.start_phase,
                       .command = options.command,
                       .lost_events = counters.lost_events + undecodable};
  make_report_writer(options.format, options.histograms)->write(summary, facts, summary_out.stream());
  summary_out.finish();
  if (events_out) events_out->finish();

  if (child_status && *child_status != 0) {
    diagnostics << "--run command " << describe_wait_status(*child_status) << '\n';
    return kExitRunCommandFailed;
  }
  return kExitOk;
}

}  // namespace hacoboot
