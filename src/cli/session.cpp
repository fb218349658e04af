#include "cli/session.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "capture/cgroup_paths.hpp"
#include "capture/core_btf_cache.hpp"
#include "capture/syscall_tracepoints.hpp"
#include "capture/system_checks.hpp"
#include "capture/tracer.hpp"
#include "capture/usdt_notes.hpp"
#include "cli/capture_hints.hpp"
#include "cli/child_process.hpp"
#include "cli/output_file.hpp"
#include "cli/output_paths.hpp"
#include "cli/probe_listing.hpp"
#include "cli/progress.hpp"
#include "cli/stop_signals.hpp"
#include "exporter/boot_metrics.hpp"
#include "exporter/metrics_server.hpp"
#include "model/boot_tracker.hpp"
#include "model/event.hpp"
#include "model/stats.hpp"
#include "report/baseline.hpp"
#include "report/boot_rows.hpp"
#include "report/chrome_trace.hpp"
#include "report/report.hpp"
#include "report/timeline_svg.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"

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

std::optional<MetricTable> load_baseline(const std::string& path) {
  if (path.empty()) return std::nullopt;
  return parse_baseline(read_input_file(path, "--baseline", kMaxBaselineBytes), path);
}

// The haconiwa binary: --pid's through /proc (whatever mount namespace it
// runs in), or --haconiwa's.
std::string haconiwa_binary(const Options& options) {
  if (!options.pid) return resolve_haconiwa(options.haconiwa);
  auto exe = "/proc/" + std::to_string(*options.pid) + "/exe";
  if (::access(exe.c_str(), R_OK) != 0) {
    throw UsageError("--pid " + std::to_string(*options.pid) + ": cannot read " + exe + ": " + std::strerror(errno));
  }
  return exe;
}

bool process_exists(std::uint32_t pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Events the figures miss: the kernel could not deliver them (ring buffer
// full) or the tool could not decode them. JSON's lost_events, the metric
// hacoboot_events_lost_total and the progress line all count these.
std::uint64_t events_lost(const TracerCounters& counters, std::uint64_t undecodable) {
  return counters.lost_events + undecodable;
}

// Prometheus metrics of the settled boots, shared with the HTTP server's
// threads; rewritten to --textfile every --textfile-interval.
class MetricsExport {
 public:
  explicit MetricsExport(const Options& options) : options_(options) {
    if (options.serve) server_.emplace(*options.serve, [this] { return render(); });
    next_textfile_ = std::chrono::steady_clock::now();
  }
  [[nodiscard]] bool enabled() const { return server_.has_value() || !options_.textfile.empty(); }
  [[nodiscard]] std::optional<std::uint16_t> port() const {
    return server_ ? std::optional(server_->port()) : std::nullopt;
  }

  void add(const BootRecord& boot) {
    const std::lock_guard lock(mutex_);
    metrics_.add(boot);
  }
  // Called from the event loop: fresh gauges, and the textfile when due (or `now`).
  void update(const TracerCounters& counters, std::uint64_t events_lost, std::uint64_t in_flight, bool write_now) {
    {
      const std::lock_guard lock(mutex_);
      metrics_.set_lost_events(events_lost);
      metrics_.set_untracked_phases(counters.untracked_phases);
      metrics_.set_boots_in_flight(in_flight);
    }
    const auto now = std::chrono::steady_clock::now();
    if (options_.textfile.empty() || (!write_now && now < next_textfile_)) return;
    write_file_atomically(options_.textfile, render());
    next_textfile_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.textfile_interval);
  }

 private:
  std::string render() {
    std::ostringstream text;
    const std::lock_guard lock(mutex_);
    metrics_.write(text, options_.phase_names);
    return text.str();
  }

  const Options& options_;
  std::mutex mutex_;
  BootMetrics metrics_;
  std::chrono::steady_clock::time_point next_textfile_;
  std::optional<MetricsServer> server_;  // last: stopped before what it reads goes
};

// Loads and attaches the BPF programs: kernel types from the BTF cache when
// it has them (or the whole kernel BTF, then filling the cache for the next
// runs), execve/listen through the per-syscall tracepoints when allowed.
std::unique_ptr<Tracer> start_tracer(const Options& options, const std::string& haconiwa,
                                     std::vector<UsdtProbe> phase_probe_sites, CoreBtfCache* btf_cache,
                                     std::ostream& diagnostics, const Tracer::RecordSink& sink) {
  std::optional<SyscallTracepointLookup> lookup;
  // The tracepoint ids are cached beside the kernel types, or not at all.
  if (options.syscall_hooks != SyscallHooks::RawSyscalls) lookup.emplace(btf_cache ? options.btf_cache : "");
  const auto say = [&](const std::string& what) {
    if (options.verbose) diagnostics << "hacoboot-sampler: " << what << '\n';
  };
  const auto warn = [&](const std::string& what) { diagnostics << "hacoboot-sampler: warning: " << what << '\n'; };
  Tracer::Config config{.haconiwa_path = haconiwa,
                        .ring_buffer_bytes = options.ring_buffer_bytes,
                        .syscall_tracepoints = lookup ? &*lookup : nullptr,
                        .raw_syscalls_fallback = options.syscall_hooks != SyscallHooks::Tracepoints,
                        .phase_probe_sites = std::move(phase_probe_sites),
                        .usdt_attach = options.usdt_attach,
                        .watched_pid = options.pid.value_or(0),
                        .wake_on_settle = options.count.has_value(),
                        .verbose = options.verbose};
  std::string why_raw_syscalls = lookup ? "" : "--syscall-hooks raw_syscalls";
  // Ids that prove wrong break no later start: cached ones are removed and
  // looked up again, once; after that, raw_syscalls if allowed.
  const auto attach = [&]() -> std::unique_ptr<Tracer> {
    for (;;) {
      try {
        auto tracer = std::make_unique<Tracer>(config, sink);
        if (tracer->per_syscall_tracepoints()) lookup->keep();
        say("execve/listen through " +
            (tracer->per_syscall_tracepoints()
                 ? "syscalls:* tracepoints (ids from " + lookup->source() + ")"
                 : "raw_syscalls (" + (why_raw_syscalls.empty() ? lookup->result().error() : why_raw_syscalls) + ")"));
        say("the probe through " + describe(tracer->usdt_attachment()));
        return tracer;
      } catch (const SyscallTracepointError& error) {
        if (lookup->from_cache()) {
          warn("the syscall tracepoint ids from " + lookup->source() + " are wrong (" + error.what() +
               "): removed; looking them up again");
          lookup->look_up_again();
        } else if (config.raw_syscalls_fallback) {
          warn(std::string("syscalls:* tracepoints unusable (") + error.what() +
               "): execve/listen through raw_syscalls");
          why_raw_syscalls = error.what();
          config.syscall_tracepoints = nullptr;
        } else {
          throw SyscallTracepointError(std::string("--syscall-hooks tracepoints: ") + error.what());
        }
      }
    }
  };

  if (const auto cached = btf_cache ? btf_cache->cached() : std::nullopt) {
    config.core_btf = cached->string();
    try {
      say("kernel types from " + config.core_btf + " (cached)");
      return attach();
    } catch (const SyscallTracepointError&) {
      throw;  // the kernel types are not at fault
    } catch (const RuntimeError& error) {
      // A damaged cache must not stop the tool: the kernel's BTF is still there.
      warn(config.core_btf + " is unusable (" + error.what() + "): removed; reading the kernel's BTF");
      btf_cache->discard();
      config.core_btf.clear();
    }
  }
  say("kernel types from /sys/kernel/btf/vmlinux");
  auto tracer = attach();
  if (btf_cache) say(describe_btf_filling(btf_cache->start_filling()));
  return tracer;
}

// Every file the run writes, checked before any is created (see check_output_paths).
void check_outputs(const Options& options, const std::string& haconiwa) {
  check_output_paths({{.option = "-o", .path = options.output},
                      {.option = "--events", .path = options.events},
                      {.option = "--timeline", .path = options.timeline},
                      {.option = "--trace-out", .path = options.trace_out},
                      {.option = "--textfile", .path = options.textfile, .regular_file_only = true}},
                     {{.option = "--baseline", .path = options.baseline}, {.option = "--haconiwa", .path = haconiwa}});
}

// A summary-type output, rendered whole at the end and put in place only once complete.
void write_output(const std::string& path, const std::function<void(std::ostream&)>& render) {
  OutputFile out(path, OutputFile::Kind::Replaced);
  render(out.stream());
  out.finish();
}

// Where each finished boot goes: the summary, the rows, the pictures.
class BootSinks {
 public:
  explicit BootSinks(const Options& options)
      : options_(options), keep_for_pictures_(!options.timeline.empty() || !options.trace_out.empty()) {}

  // Rows from here on go to events (a TSV header first; again after a reopen).
  void start_rows(OutputFile& events) {
    const auto format =
        options_.events_format == EventsFormat::Jsonl ? BootRowWriter::Format::Jsonl : BootRowWriter::Format::Tsv;
    rows_.emplace(events.stream(), format, options_.phase_names);
  }

  void on_boot(const BootRecord& finished, CgroupPaths& cgroups, ProgressLine& progress) {
    if (finished.sequence <= options_.warmup) return;
    BootRecord boot = finished;
    boot.cgroup_path = cgroups.path_of(boot.cgroup_id);
    summary_.add(boot);
    if (rows_) rows_->write(boot);
    if (keep_for_pictures_ && pictured_.size() < kMaxPictured) pictured_.push_back(boot);
    progress.boot_done(boot.listen_ns ? boot.since_start(*boot.listen_ns) : std::nullopt);
  }

  [[nodiscard]] const Summary& summary() const { return summary_; }
  [[nodiscard]] const std::vector<BootRecord>& pictured() const { return pictured_; }

 private:
  const Options& options_;
  Summary summary_;
  std::optional<BootRowWriter> rows_;
  bool keep_for_pictures_ = false;
  std::vector<BootRecord> pictured_;
};

}  // namespace

int list_probes(const Options& options, std::ostream& out) {
  const auto binary = haconiwa_binary(options);
  write_probe_list(binary, read_usdt_probes(binary), out);
  out.flush();
  if (!out) throw RuntimeError("writing the probe list failed");
  return kExitOk;
}

int run_session(const Options& options, std::ostream& diagnostics) {
  if (options.list) return list_probes(options, std::cout);
  // Every check first, before anything is loaded, and before any file is
  // created or truncated: a run refused for any reason leaves files as they were.
  const auto baseline = load_baseline(options.baseline);
  const auto run_as = options.run_as ? std::optional(resolve_run_as(*options.run_as)) : std::nullopt;

  require_kernel_btf();
  require_bpf_privileges();
  const std::string haconiwa = haconiwa_binary(options);
  auto phase_probe_sites = require_phase_probe(haconiwa);
  check_outputs(options, haconiwa);

  // Before loading: a Ctrl-C while attaching still ends with a summary.
  const StopSignals stop_signals(/*sighup_reopens=*/options.serve.has_value() || !options.textfile.empty());
  ProgressLine progress(!options.quiet);
  CgroupPaths cgroups;
  BootSinks sinks(options);
  BootTracker tracker({.start_phase = options.start_phase, .command = options.command},
                      [&](const BootRecord& boot) { sinks.on_boot(boot, cgroups, progress); });
  // Bound before anything is loaded: a port in use fails fast.
  MetricsExport metrics(options);
  if (metrics.enabled()) {
    tracker.on_settled([&](const BootRecord& boot) {
      if (boot.sequence > options.warmup) metrics.add(boot);
    });
  }
  std::uint64_t undecodable = 0;
  std::optional<CoreBtfCache> btf_cache;
  if (options.btf_cache != "off") btf_cache.emplace(options.btf_cache, Tracer::bpf_object());
  const auto tracer = start_tracer(options, haconiwa, std::move(phase_probe_sites), btf_cache ? &*btf_cache : nullptr,
                                   diagnostics, [&](std::span<const std::byte> record) {
                                     const auto event = decode_event(record);
                                     if (!event) {
                                       ++undecodable;
                                       return;
                                     }
                                     // Resolve while the container is alive: its cgroup may be gone when the boot ends.
                                     if (event->kind == EventKind::Exec) cgroups.path_of(event->cgroup_id);
                                     tracker.on_event(*event);
                                   });
  // The only output written as it goes, created once every check passed and the probes are attached.
  std::unique_ptr<OutputFile> events_out;
  if (!options.events.empty()) {
    events_out = std::make_unique<OutputFile>(options.events, OutputFile::Kind::Streamed);
    sinks.start_rows(*events_out);
  }

  std::optional<ChildProcess> child;
  if (options.run) {
    // Not when interrupted while attaching: the run is already over.
    if (!StopSignals::received()) {
      child.emplace(*options.run, run_as);
      StopSignals::set_child_group(child->pid());
    }
  } else if (!options.quiet) {
    // One write per line: scripts wait for these lines, and stderr is unbuffered.
    diagnostics << fmt::format("Tracing Haconiwa boots in {}... Hit Ctrl-C to end.\n", haconiwa) << std::flush;
  }
  if (const auto port = metrics.port(); port && !options.quiet) {
    diagnostics << fmt::format("Serving Prometheus metrics at http://{}/metrics\n",
                               to_string({options.serve->host, *port}))
                << std::flush;
  }
  const auto started = std::chrono::steady_clock::now();
  auto next_expiry = started + kExpiryInterval;

  std::optional<int> child_status;
  while (!StopSignals::received()) {
    auto wait = kPollInterval;
    if (options.duration) {
      const auto left = *options.duration - (std::chrono::steady_clock::now() - started);
      wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(left), std::chrono::milliseconds(0), wait);
    }
    tracer->poll(wait);
    const auto counters = tracer->counters();
    progress.update(tracker.live_boots(), events_lost(counters, undecodable));
    if (std::chrono::steady_clock::now() >= next_expiry) {
      tracker.expire_vanished(process_exists);
      next_expiry = std::chrono::steady_clock::now() + kExpiryInterval;
    }
    if (metrics.enabled()) metrics.update(counters, events_lost(counters, undecodable), tracker.live_boots(), false);
    if (StopSignals::take_reopen_request() && events_out) {
      events_out->reopen();
      sinks.start_rows(*events_out);
    }
    if (child && (child_status = child->poll_exit())) break;
    if (options.count && tracker.settled_boots() >= *options.count) break;
    if (options.duration && std::chrono::steady_clock::now() - started >= *options.duration) break;
  }
  tracer->poll(std::chrono::milliseconds(0));
  tracker.finish_all();
  progress.clear();
  const auto counters = tracer->counters();
  if (metrics.enabled()) metrics.update(counters, events_lost(counters, undecodable), 0, true);

  if (counters.lost_events > 0 || counters.tracked_full > 0 || undecodable > 0) {
    diagnostics << fmt::format(
        "hacoboot-sampler: warning: {} events lost (ring buffer full), {} processes untracked (map full), {} "
        "undecodable: "
        "figures may be incomplete\n",
        counters.lost_events, counters.tracked_full, undecodable);
  }
  if (counters.untracked_phases > 0) {
    diagnostics << fmt::format(
        "hacoboot-sampler: warning: {} phase events ignored: their hpid is no launch seen starting (launches begun "
        "before tracing, or a process passing made-up hpids)\n",
        counters.untracked_phases);
  }
  const RunFacts facts{.start_phase = options.start_phase,
                       .command = options.command,
                       .lost_events = events_lost(counters, undecodable),
                       .untracked_phases = counters.untracked_phases,
                       .tracked_at_exit = tracer->tracked_processes(),
                       .names = options.phase_names};
  write_output(options.output, [&](std::ostream& out) {
    make_report_writer(options.format, options.histograms)->write(sinks.summary(), facts, out);
  });
  if (events_out) events_out->finish();
  if (!options.timeline.empty()) {
    write_output(options.timeline,
                 [&](std::ostream& out) { write_timeline_svg(sinks.pictured(), out, options.phase_names); });
  }
  if (!options.trace_out.empty()) {
    write_output(options.trace_out,
                 [&](std::ostream& out) { write_chrome_trace(sinks.pictured(), out, options.phase_names); });
  }
  // After every output is written: only a first run on a new kernel waits.
  if (btf_cache) btf_cache->finish_filling(kBtfCachePatience);

  if (child_status && *child_status != 0) {
    diagnostics << "--run command " << describe_wait_status(*child_status) << '\n';
    return kExitRunCommandFailed;
  }
  if (baseline) {
    const auto gate = compare_to_baseline(*baseline, metrics_of(sinks.summary(), options.phase_names), options.gate);
    write_gate_report(gate, options.gate, diagnostics);
    if (gate.regressed()) return kExitRegressed;
  }
  return kExitOk;
}

}  // namespace hacoboot
