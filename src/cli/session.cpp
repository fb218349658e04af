#include "cli/session.hpp"

#include <fmt/format.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "capture/binary_watch.hpp"
#include "capture/cgroup_paths.hpp"
#include "capture/core_btf_cache.hpp"
#include "capture/haconiwa_file.hpp"
#include "capture/preload_checks.hpp"
#include "capture/tracer.hpp"
#include "capture/usdt_notes.hpp"
#include "cli/check_report.hpp"
#include "cli/child_process.hpp"
#include "cli/gate_run.hpp"
#include "cli/haconiwa_upgrades.hpp"
#include "cli/output_file.hpp"
#include "cli/output_paths.hpp"
#include "cli/probe_listing.hpp"
#include "cli/progress.hpp"
#include "cli/service_ready.hpp"
#include "cli/stop_signals.hpp"
#include "cli/tracer_start.hpp"
#include "exporter/boot_metrics.hpp"
#include "exporter/metrics_server.hpp"
#include "model/boot_tracker.hpp"
#include "model/event.hpp"
#include "model/summary.hpp"
#include "report/boot_rows.hpp"
#include "report/chrome_trace.hpp"
#include "report/report.hpp"
#include "report/timeline_svg.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"
#include "util/wait_status.hpp"

namespace hacoboot {
namespace {

// Boots kept for --timeline / --trace-out: the pictures are for looking at,
// and memory must not grow with the length of the run.
constexpr std::size_t kMaxPictured = 10'000;
// bpftool extracts the kernel types in a fraction of this (BENCHMARKS.md,
// row 1b): a first run on a new kernel that ends sooner waits this long for
// it at exit, at most.
constexpr auto kBtfCachePatience = std::chrono::seconds(2);
// How often boots whose exit events were lost are looked for: they would
// otherwise stay in flight for ever in a long-running exporter.
constexpr auto kExpiryInterval = std::chrono::seconds(60);

bool process_exists(std::uint32_t pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// What MetricsExport uses of the options.
struct MetricsExportConfig {
  std::optional<ListenAddress> serve;
  std::string textfile;  // empty: none
  std::chrono::nanoseconds textfile_interval{};
  PhaseNames phase_names;
};

MetricsExportConfig metrics_export_config(const Options& options) {
  return {.serve = options.serve,
          .textfile = options.textfile,
          .textfile_interval = options.textfile_interval,
          .phase_names = options.phase_names};
}

// Prometheus metrics of the settled boots, shared with the HTTP server's
// threads; rewritten to --textfile every --textfile-interval.
class MetricsExport {
 public:
  explicit MetricsExport(MetricsExportConfig config) : config_(std::move(config)) {
    if (config_.serve) server_.emplace(*config_.serve, [this] { return render(); });
    next_textfile_ = std::chrono::steady_clock::now();
  }
  [[nodiscard]] bool enabled() const { return server_.has_value() || !config_.textfile.empty(); }
  void serve() {
    if (server_) server_->serve();
  }
  [[nodiscard]] std::optional<std::uint16_t> port() const {
    return server_ ? std::optional(server_->port()) : std::nullopt;
  }

  void add(const BootRecord& boot) {
    const std::scoped_lock lock(mutex_);
    metrics_.add(boot);
  }
  void set_haconiwa_files(std::uint64_t attached, std::uint64_t replacements) {
    const std::scoped_lock lock(mutex_);
    metrics_.set_haconiwa_files(attached, replacements);
  }
  // Called from the event loop: fresh gauges, and the textfile when due (or `now`).
  void update(const TracerCounters& counters, std::uint64_t events_lost, std::uint64_t in_flight, bool write_now) {
    {
      const std::scoped_lock lock(mutex_);
      metrics_.set_lost_events(events_lost);
      metrics_.set_untracked_phases(counters.untracked_phases);
      metrics_.set_boots_in_flight(in_flight);
    }
    const auto now = std::chrono::steady_clock::now();
    if (config_.textfile.empty() || (!write_now && now < next_textfile_)) return;
    write_file_atomically(config_.textfile, render());
    next_textfile_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(config_.textfile_interval);
  }

 private:
  std::string render() {
    std::ostringstream text;
    const std::scoped_lock lock(mutex_);
    metrics_.write(text, config_.phase_names);
    return text.str();
  }

  const MetricsExportConfig config_;
  std::mutex mutex_;
  BootMetrics metrics_;
  std::chrono::steady_clock::time_point next_textfile_;
  std::optional<MetricsServer> server_;  // last: stopped before what it reads goes
};

// What BootSinks uses of the options.
struct BootSinksConfig {
  std::string events;  // the rows' file; empty: none
  EventsFormat events_format = EventsFormat::Tsv;
  bool keep_for_pictures = false;  // --timeline or --trace-out
  PhaseNames phase_names;
};

BootSinksConfig boot_sinks_config(const Options& options) {
  return {.events = options.events,
          .events_format = options.events_format,
          .keep_for_pictures = !options.timeline.empty() || !options.trace_out.empty(),
          .phase_names = options.phase_names};
}

// Where each finished boot goes: the summary, the rows, the pictures.
class BootSinks {
 public:
  BootSinks(BootSinksConfig config, std::ostream& diagnostics)
      : config_(std::move(config)), diagnostics_(diagnostics) {}

  // The only output written as it goes: created once every check passed and
  // the probes are attached.
  void open_rows() {
    if (config_.events.empty()) return;
    events_ = std::make_unique<OutputFile>(config_.events, OutputFile::Kind::Streamed);
    start_rows();
  }
  // After logrotate moved the rows' file away (SIGHUP). What is at the path
  // then is the operator's doing, not the run's: a file that cannot be
  // opened there stops no tracing (an exporter serves on), its rows are
  // dropped and counted until a later SIGHUP opens one.
  void reopen_rows() {
    if (!events_) return;
    if (const auto reopened = events_->reopen(); !reopened) {
      rows_.reset();
      tell(fmt::format("warning: --events {}: cannot reopen it: {}; its rows are dropped until a SIGHUP reopens it",
                       config_.events, reopened.error()));
      return;
    }
    if (dropped_rows_ > 0) {
      tell(fmt::format("--events {} reopened; {} rows were dropped before", config_.events, dropped_rows_));
    }
    dropped_rows_ = 0;
    start_rows();
  }
  void finish_rows() {
    if (!events_) return;
    if (!events_->open()) {
      tell(fmt::format("warning: --events {}: {} rows dropped: it could not be reopened", config_.events,
                       dropped_rows_));
    }
    events_->finish();
  }

  void add(const BootRecord& boot) {
    // Once per boot: the summary and the rows read the same analysis.
    const auto analysis = analyse_boot(boot);
    summary_.add(boot, analysis);
    if (rows_) {
      rows_->write(boot, analysis);
    } else if (events_) {
      dropped_rows_ += boot.timeline().size();  // a row per milestone
    }
    if (config_.keep_for_pictures && pictured_.size() < kMaxPictured) pictured_.push_back(boot);
  }

  [[nodiscard]] const Summary& summary() const { return summary_; }
  [[nodiscard]] const std::vector<BootRecord>& pictured() const { return pictured_; }

 private:
  // Rows from here on go to events_ (a TSV header first; again after a reopen).
  void start_rows() {
    const auto format =
        config_.events_format == EventsFormat::Jsonl ? BootRowWriter::Format::Jsonl : BootRowWriter::Format::Tsv;
    rows_.emplace(events_->stream(), format, config_.phase_names);
  }

  // One line on stderr, whole, its paths escaped.
  void tell(const std::string& what) {
    diagnostics_ << "hacoboot-sampler: " << printable(what, kUncut) << '\n' << std::flush;
  }

  const BootSinksConfig config_;
  std::ostream& diagnostics_;
  Summary summary_;
  std::unique_ptr<OutputFile> events_;
  std::optional<BootRowWriter> rows_;  // none: the rows are dropped (a failed reopen)
  std::uint64_t dropped_rows_ = 0;
  std::vector<BootRecord> pictured_;
};

// What a ring-buffer record goes through, in order: decode, enrich (the
// container's cgroup path), BootTracker; then each finished boot past the
// warm-up to the sinks and to the progress line, each settled one to the
// metrics.
class Pipeline {
 public:
  Pipeline(const Options& options, std::ostream& diagnostics)
      : warmup_(options.warmup),
        progress_(!options.quiet),
        sinks_(boot_sinks_config(options), diagnostics),
        tracker_({.start_phase = options.start_phase, .command = options.command},
                 [this](const BootRecord& boot) { on_boot_done(boot); }),
        // Bound before anything is loaded: a port in use fails fast. Served
        // once the probes are live (serve_metrics).
        metrics_(metrics_export_config(options)) {
    tracker_.on_settled([this](const BootRecord& boot) { on_boot_settled(boot); });
  }

  // The ring buffer's record sink.
  void on_record(std::span<const std::byte> record) {
    auto event = decode_event(record);
    if (!event) {
      ++undecodable_;
      return;
    }
    enrich(*event);
    tracker_.on_event(*event);
  }

  // After each poll of the ring buffer; expire: look for boots whose exit
  // events were lost.
  void after_poll(const TracerCounters& counters, bool expire) {
    progress_.update(tracker_.live_boots(), events_lost(counters));
    if (expire) tracker_.expire_vanished(process_exists);
    if (metrics_.enabled()) metrics_.update(counters, events_lost(counters), tracker_.live_boots(), false);
  }
  // Tracing stopped and the ring buffer drained: every boot still in flight ends.
  void finish(const TracerCounters& counters) {
    tracker_.finish_all();
    progress_.clear();
    if (metrics_.enabled()) metrics_.update(counters, events_lost(counters), 0, true);
  }

  // Events the figures miss: the kernel could not deliver them (ring buffer
  // full) or the tool could not decode them. JSON's lost_events, the metric
  // hacoboot_events_lost_total and the progress line all count these.
  [[nodiscard]] std::uint64_t events_lost(const TracerCounters& counters) const {
    return counters.lost_events + undecodable_;
  }
  [[nodiscard]] std::uint64_t undecodable() const { return undecodable_; }
  // Boots past the warm-up that listened or ended: what --count counts.
  [[nodiscard]] std::uint64_t settled_boots() const { return settled_; }
  [[nodiscard]] std::optional<std::uint16_t> metrics_port() const { return metrics_.port(); }
  void serve_metrics() { metrics_.serve(); }
  BootSinks& sinks() { return sinks_; }
  // After the haconiwa binary's path was looked at (HaconiwaUpgrades).
  void haconiwa_files(const HaconiwaUpgrades& upgrades) {
    if (metrics_.enabled()) metrics_.set_haconiwa_files(upgrades.files_attached(), upgrades.replacements());
  }

 private:
  // Resolved while the container is alive: its cgroup may be gone when the boot ends.
  void enrich(Event& event) {
    if (event.kind == EventKind::Exec) event.cgroup_path = cgroups_.path_of(event.cgroup_id);
  }
  void on_boot_done(const BootRecord& boot) {
    if (boot.sequence <= warmup_) return;
    sinks_.add(boot);
    progress_.boot_done(boot);
  }
  // A warm-up boot is in no figure, so it is none of the N boots of -n N either.
  void on_boot_settled(const BootRecord& boot) {
    if (boot.sequence <= warmup_) return;
    ++settled_;
    if (metrics_.enabled()) metrics_.add(boot);
  }

  std::uint64_t warmup_;
  std::uint64_t settled_ = 0;
  std::uint64_t undecodable_ = 0;
  CgroupPaths cgroups_;
  ProgressLine progress_;
  BootSinks sinks_;
  BootTracker tracker_;
  MetricsExport metrics_;
};

// The tracer's configuration but for how execve/listen are seen
// (start_tracer): the probe through the descriptor its notes were read from.
// The kernel side holds a new file's first launch (HaconiwaUpgrades) only
// when this process can let it go on again (CAP_KILL).
Tracer::Config tracer_config(const Options& options, const HaconiwaFile& haconiwa,
                             const std::optional<WatchedHaconiwaPath>& watched) {
  return {.haconiwa_path = haconiwa.attach_path(),
          .haconiwa_name = haconiwa.name(),
          .watched_path = watched,
          .hold_unprobed_execs = watched.has_value() && Capabilities::effective().has(Capability::Kill),
          .ring_buffer_bytes = options.ring_buffer_bytes,
          .raw_syscalls_fallback = options.syscall_hooks != SyscallHooks::Tracepoints,
          .phase_probe_sites = haconiwa.phase_sites(),
          .usdt_attach = options.usdt_attach,
          .watched_pid = options.pid.value_or(0),
          .wake_on_settle = options.count.has_value(),
          .verbose = options.verbose};
}

// Every file the run writes, checked before any is created, against every
// file it reads (see check_output_paths).
void check_outputs(const Options& options, const std::string& haconiwa) {
  check_output_paths({{.option = "-o", .path = options.output},
                      {.option = "--events", .path = options.events},
                      {.option = "--timeline", .path = options.timeline},
                      {.option = "--trace-out", .path = options.trace_out},
                      {.option = "--textfile", .path = options.textfile, .regular_file_only = true},
                      {.option = "--gate-junit", .path = options.gate_junit},
                      {.option = "--gate-markdown", .path = options.gate_markdown}},
                     {{.option = "--baseline", .path = options.baseline},
                      {.option = "--haconiwa", .path = haconiwa},
                      {.option = "--btf", .path = options.btf},
                      {.option = "--phase-names", .path = options.phase_names_file}});
}

// What the run needs, checked before anything is loaded and before any file
// is created or truncated: a run refused for any reason leaves files as they were.
struct Preflight {
  std::optional<RunFigures> baseline;
  std::optional<RunIdentity> run_as;
  // The file the probe goes to, open: followed across upgrades (upgrades)
  // but for --pid, whose /proc/PID/exe is one process's file for good.
  std::optional<HaconiwaFile> pid_file;
  std::optional<HaconiwaUpgrades> upgrades;
  [[nodiscard]] const HaconiwaFile& haconiwa() const {
    if (upgrades) return upgrades->first();
    if (pid_file) return *pid_file;
    throw std::logic_error("preflight holds no haconiwa file");  // check_before_loading sets one
  }
};

Preflight check_before_loading(const Options& options, std::ostream& diagnostics) {
  Preflight checked{.baseline = load_baseline(options),
                    .run_as = options.run_as ? std::optional(resolve_run_as(*options.run_as)) : std::nullopt,
                    .pid_file = std::nullopt,
                    .upgrades = std::nullopt};
  require_kernel_btf(options.btf);
  require_bpf_privileges();
  if (options.pid) {
    checked.pid_file.emplace(HaconiwaFile::open_process_exe(*options.pid));
  } else {
    auto path = resolve_haconiwa(options.haconiwa);
    auto file = HaconiwaFile::open_path(path);
    checked.upgrades.emplace(std::move(path), std::move(file), options.quiet, diagnostics);
  }
  check_outputs(options, checked.haconiwa().name());
  return checked;
}

// The --run command, once the probes are live; none when interrupted while
// attaching: the run is already over.
std::unique_ptr<ChildProcess> start_run_command(const Options& options, const std::optional<RunIdentity>& run_as) {
  if (!options.run || StopSignals::received()) return nullptr;
  auto child = std::make_unique<ChildProcess>(*options.run, run_as);
  StopSignals::set_child_group(child->pid());
  return child;
}

// One write per line: scripts wait for these lines, and stderr is unbuffered.
void announce_start(const Options& options, const std::string& haconiwa, std::optional<std::uint16_t> metrics_port,
                    std::ostream& diagnostics) {
  if (options.quiet) return;
  if (!options.run) {
    diagnostics << fmt::format("Tracing Haconiwa boots in {}... Hit Ctrl-C to end.\n", printable(haconiwa, kUncut))
                << std::flush;
  }
  if (metrics_port && options.serve) {  // a port only with --serve
    diagnostics << fmt::format("Serving Prometheus metrics at http://{}/metrics\n",
                               printable(to_string({options.serve->host, *metrics_port}), kUncut))
                << std::flush;
  }
}

enum class StopReason : std::uint8_t { Signal, RunCommandExited, CountReached, DurationElapsed };

// Polls the ring buffer until a stop signal, the end of the --run command,
// -n N settled boots or the --duration; follows the haconiwa binary's
// upgrades meanwhile.
// Waits up to `wait` for records, or for the haconiwa binary's path or
// files to change, then reads what records there are.
void wait_for_records(Tracer& tracer, const HaconiwaUpgrades* upgrades, std::chrono::milliseconds wait) {
  if (upgrades == nullptr) {
    tracer.poll(wait);
    return;
  }
  std::array<pollfd, 2> ready{{{.fd = tracer.ready_fd(), .events = POLLIN, .revents = 0},
                               {.fd = upgrades->fd(), .events = POLLIN, .revents = 0}}};
  (void)::poll(ready.data(), ready.size(), static_cast<int>(wait.count()));
  tracer.poll(std::chrono::milliseconds(0));
}

StopReason run_event_loop(Tracer& tracer, Pipeline& pipeline, const Options& options, ChildProcess* child,
                          HaconiwaUpgrades* upgrades) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto next_expiry = started + kExpiryInterval;
  while (!StopSignals::received()) {
    auto wait = kPollInterval;
    if (options.duration) {
      const auto left = *options.duration - (Clock::now() - started);
      wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(left), std::chrono::milliseconds(0), wait);
    }
    wait_for_records(tracer, upgrades, wait);
    const bool expire = Clock::now() >= next_expiry;
    pipeline.after_poll(tracer.counters(), expire);
    if (expire) next_expiry = Clock::now() + kExpiryInterval;
    if (upgrades) {
      upgrades->check(tracer, Clock::now());
      pipeline.haconiwa_files(*upgrades);
    }
    if (StopSignals::take_reopen_request()) pipeline.sinks().reopen_rows();
    if (child && child->poll_exit()) return StopReason::RunCommandExited;
    if (options.count && pipeline.settled_boots() >= *options.count) return StopReason::CountReached;
    if (options.duration && Clock::now() - started >= *options.duration) return StopReason::DurationElapsed;
  }
  return StopReason::Signal;
}

void warn_of_missed_events(const TracerCounters& counters, std::uint64_t undecodable, std::ostream& diagnostics) {
  if (counters.lost_events > 0 || counters.tracked_full > 0 || undecodable > 0) {
    diagnostics << fmt::format(
        "hacoboot-sampler: warning: {} events lost (ring buffer full), {} processes untracked (map full), {} "
        "undecodable: "
        "figures may be incomplete\n",
        counters.lost_events, counters.tracked_full, undecodable);
  }
  if (counters.unaccounted_threads > 0) {
    diagnostics << fmt::format(
        "hacoboot-sampler: warning: {} threads unaccounted (scheduler map full): their CPU / run queue / sleep / I/O "
        "states are unknown, the critical paths through them incomplete\n",
        counters.unaccounted_threads);
  }
  if (counters.untracked_phases > 0) {
    diagnostics << fmt::format(
        "hacoboot-sampler: warning: {} phase events ignored: their hpid is no launch seen starting (launches begun "
        "before tracing, or a process passing made-up hpids)\n",
        counters.untracked_phases);
  }
}

void write_reports(const Options& options, BootSinks& sinks, const RunFacts& facts) {
  write_output(options.output, [&](std::ostream& out) {
    make_report_writer(options.format, options.histograms)->write(sinks.summary(), facts, out);
  });
  sinks.finish_rows();
  if (!options.timeline.empty()) {
    write_output(options.timeline,
                 [&](std::ostream& out) { write_timeline_svg(sinks.pictured(), out, options.phase_names); });
  }
  if (!options.trace_out.empty()) {
    write_output(options.trace_out,
                 [&](std::ostream& out) { write_chrome_trace(sinks.pictured(), out, options.phase_names); });
  }
}

// kExitRunCommandFailed when the --run command failed, the gate's status
// against --baseline (regressed, inconclusive), kExitOk otherwise.
int exit_status(StopReason stop, ChildProcess* child, const std::optional<RunFigures>& baseline, const Summary& summary,
                const RunFacts& facts, const Options& options, std::ostream& diagnostics) {
  if (stop == StopReason::RunCommandExited) {
    if (const int status = child->poll_exit().value_or(0); status != 0) {
      const auto failed = "--run command " + describe_wait_status(status);
      diagnostics << failed << '\n';
      if (baseline) write_unjudged(options, failed + ": the figures of a failed run are no verdict");
      return kExitRunCommandFailed;
    }
  }
  return baseline ? judge_run(*baseline, figures_of_run(summary, facts), options, diagnostics) : kExitOk;
}

int list_probes(const Options& options, std::ostream& out) {
  const auto binary = haconiwa_binary(options);
  write_probe_list(binary, read_usdt_probes(binary), out);
  out.flush();
  if (!out) throw RuntimeError("writing the probe list failed");
  return kExitOk;
}

// The run once every check passed: traced, reported, judged.
int trace(const Options& options, Preflight& checked, std::ostream& diagnostics) {
  // Before loading: a Ctrl-C while attaching still ends with a summary.
  const StopSignals stop_signals(/*sighup_reopens=*/options.serve.has_value() || !options.textfile.empty());
  Pipeline pipeline(options, diagnostics);
  std::optional<CoreBtfCache> btf_cache;
  // Kernel types from --btf are that file's, not this kernel's to cache.
  if (options.btf_cache != "off" && options.btf.empty()) btf_cache.emplace(options.btf_cache, Tracer::bpf_object());
  auto& upgrades = checked.upgrades;
  const auto tracer = start_tracer(
      options, tracer_config(options, checked.haconiwa(), upgrades ? upgrades->watched_path() : std::nullopt),
      btf_cache ? &*btf_cache : nullptr, diagnostics,
      [&pipeline](std::span<const std::byte> record) { pipeline.on_record(record); });
  if (upgrades) upgrades->started(*tracer);
  pipeline.sinks().open_rows();
  // Ready means tracing: whatever waits for /metrics or for systemd before
  // it starts containers must not start one the probes would miss.
  pipeline.serve_metrics();
  notify_service_ready(diagnostics);
  const auto child = start_run_command(options, checked.run_as);
  announce_start(options, checked.haconiwa().name(), pipeline.metrics_port(), diagnostics);

  const auto stop = run_event_loop(*tracer, pipeline, options, child.get(), upgrades ? &*upgrades : nullptr);
  tracer->poll(std::chrono::milliseconds(0));
  const auto counters = tracer->counters();
  pipeline.finish(counters);
  warn_of_missed_events(counters, pipeline.undecodable(), diagnostics);
  const RunFacts facts{.start_phase = options.start_phase,
                       .command = options.command,
                       .lost_events = pipeline.events_lost(counters),
                       .unaccounted_threads = counters.unaccounted_threads,
                       .untracked_phases = counters.untracked_phases,
                       .repaired_switch_ins = counters.repaired_switch_ins,
                       .tracked_at_exit = tracer->tracked_processes(),
                       .names = options.phase_names};
  write_reports(options, pipeline.sinks(), facts);
  // After every output is written: only a first run on a new kernel waits.
  if (btf_cache) btf_cache->finish_filling(kBtfCachePatience);
  return exit_status(stop, child.get(), checked.baseline, pipeline.sinks().summary(), facts, options, diagnostics);
}

}  // namespace

int run_session(const Options& options, std::ostream& diagnostics) {
  if (options.list) return list_probes(options, std::cout);
  if (options.check) return check_system(options, std::cout);
  if (!options.compared.empty()) return compare_summaries(options, std::cout);
  auto checked = check_before_loading(options, diagnostics);
  // The gate's files are known to be outputs from here on.
  return unjudged_on_failure(options, diagnostics, [&] { return trace(options, checked, diagnostics); });
}

}  // namespace hacoboot
