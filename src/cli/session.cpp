#include "cli/session.hpp"

#include <fmt/format.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
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
#include "cli/output_paths.hpp"
#include "cli/probe_listing.hpp"
#include "cli/progress.hpp"
#include "cli/service_ready.hpp"
#include "cli/stop_signals.hpp"
#include "cli/tracer_start.hpp"
#include "exporter/metrics_export.hpp"
#include "model/blocking.hpp"
#include "model/kernel_profile.hpp"
#include "model/kernel_symbols.hpp"
#include "model/summary.hpp"
#include "pipeline/pipeline.hpp"
#include "recording/recording_reader.hpp"
#include "recording/recording_writer.hpp"
#include "recording/replay.hpp"
#include "report/chrome_trace.hpp"
#include "report/folded_stacks.hpp"
#include "report/report.hpp"
#include "report/timeline_svg.hpp"
#include "util/boot_id.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"
#include "util/wait_status.hpp"

namespace hacoboot {
namespace {

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

// One line on stderr, whole, its paths escaped.
void tell(std::ostream& diagnostics, const std::optional<std::string>& what) {
  if (what) diagnostics << "hacoboot-sampler: " << printable(*what, kUncut) << '\n' << std::flush;
}

// Options' run settings, those of the recording for `report`.
PipelineConfig pipeline_config(const Options& options) {
  const bool pictures = !options.timeline.empty() || !options.trace_out.empty() || !options.stacks.empty();
  return {.start_phase = options.start_phase,
          .command = options.command,
          .warmup = options.warmup,
          .sinks = {.events = options.events,
                    .events_format = options.events_format == EventsFormat::Jsonl ? BootRowWriter::Format::Jsonl
                                                                                  : BootRowWriter::Format::Tsv,
                    .keep_for_pictures = pictures,
                    .phase_names = options.phase_names}};
}

MetricsExportConfig metrics_export_config(const Options& options) {
  return {.serve = options.serve,
          .textfile = options.textfile,
          .textfile_interval = options.textfile_interval,
          .phase_names = options.phase_names};
}

// `maps`: how full the aggregation maps got, at the end of the run.
KernelCounters kernel_counters(const TracerCounters& counters, const std::vector<MapFill>& maps = {}) {
  std::vector<KernelMapUse> kernel_maps;
  kernel_maps.reserve(maps.size());
  for (const auto& fill : maps) kernel_maps.push_back({.map = fill.map, .peak = fill.peak, .capacity = fill.capacity});
  return {.lost_events = counters.lost_events,
          .tracked_full = counters.tracked_full,
          .unaccounted_threads = counters.unaccounted_threads,
          .untracked_phases = counters.untracked_phases,
          .repaired_switch_ins = counters.repaired_switch_ins,
          .syscalls_dropped = counters.syscalls_dropped,
          .blocking_dropped = counters.blocking_dropped,
          .stacks_dropped = counters.stacks_dropped,
          .samples_dropped = counters.samples_dropped,
          .kernel_maps = std::move(kernel_maps)};
}

// The kernel's symbols, to name the kernel stacks' addresses; hidden
// (kptr_restrict, or unreadable): said once, the addresses stay raw.
KernelSymbols read_kernel_symbols(std::ostream& diagnostics) {
  const std::ifstream file("/proc/kallsyms");
  std::ostringstream text;
  text << file.rdbuf();
  auto symbols = KernelSymbols::parse(text.str());
  if (symbols.hidden()) {
    diagnostics << "hacoboot-sampler: warning: /proc/kallsyms hides the kernel's addresses (kptr_restrict): "
                   "kernel stacks are shown as raw addresses\n";
  }
  return symbols;
}

// The recording of a live run (--record, `record`): the records as they
// come, the cgroup paths resolved live, the kernel's counts at the end.
class LiveRecording {
 public:
  // Creates the file: once every check passed and the probes are attached.
  void open(const Options& options) {
    if (options.record.empty()) return;
    writer_.emplace(options.record, RecordingHeader{.tool_version = tool_version(),
                                                    .layout = HACOBOOT_RECORD_LAYOUT_VERSION,
                                                    .boot_id = current_boot_id().value_or(""),
                                                    .start_phase = options.start_phase,
                                                    .command = options.command,
                                                    .warmup = options.warmup,
                                                    .phase_names = options.phase_names});
  }
  void record(std::span<const std::byte> bytes) {
    if (writer_) writer_->record(bytes);
  }
  std::string resolved(std::uint64_t cgroup_id, std::string path) {
    if (writer_) writer_->cgroup_path(cgroup_id, path);
    return path;
  }
  std::vector<BlockingAggregate> blocking(std::uint32_t launch, std::vector<BlockingAggregate> aggregates) {
    if (writer_) writer_->blocking(launch, aggregates);
    return aggregates;
  }
  KernelProfile kernel_profile(std::uint32_t launch, KernelProfile profile) {
    if (writer_) writer_->kernel_profile(launch, profile);
    return profile;
  }
  std::vector<std::byte> syscalls(std::uint32_t launch, std::vector<std::byte> pairs) {
    if (writer_ && !pairs.empty()) writer_->syscalls(launch, pairs);
    return pairs;
  }
  // After each read of the ring buffer: a run killed outright leaves whole frames.
  void flush() {
    if (writer_) writer_->flush();
  }
  void finish(const KernelCounters& counters, std::uint64_t tracked_at_exit) {
    if (writer_) writer_->finish({.counters = counters, .tracked_at_exit = tracked_at_exit});
  }

 private:
  std::optional<RecordingWriter> writer_;
};

// What watches the pipeline while tracing live: the progress line on the
// terminal and the metrics (--serve, --textfile), both fed after each poll
// of the ring buffer.
class LiveView {
 public:
  // The metrics' port is bound here, before anything is loaded: a port in
  // use fails fast. Served once the probes are live (serve_metrics).
  LiveView(const Options& options, Pipeline& pipeline)
      : pipeline_(pipeline), progress_(!options.quiet), metrics_(metrics_export_config(options)) {
    pipeline_.on_boot_done([this](const BootRecord& boot) {
      progress_.boot_done(boot);
      // Its syscalls: the loader takes them when the boot ends, after it settled.
      if (metrics_.enabled()) metrics_.add_syscalls(boot);
    });
    if (metrics_.enabled()) pipeline_.on_boot_settled([this](const BootRecord& boot) { metrics_.add(boot); });
  }

  // After each poll; expire: look for boots whose exit events were lost.
  void after_poll(const TracerCounters& counters, bool expire) {
    pipeline_.set_kernel_counters(kernel_counters(counters));
    progress_.update(pipeline_.live_boots(), pipeline_.events_lost());
    if (expire) pipeline_.expire_vanished(process_exists);
    update_metrics(false);
  }
  // Tracing stopped and the ring buffer drained: every boot still in flight ends.
  void finish(const TracerCounters& counters, const std::vector<MapFill>& maps) {
    pipeline_.set_kernel_counters(kernel_counters(counters, maps));
    pipeline_.finish();
    progress_.clear();
    update_metrics(true);
  }
  // After the haconiwa binary's path was looked at (HaconiwaUpgrades).
  void haconiwa_files(const HaconiwaUpgrades& upgrades) {
    if (metrics_.enabled()) metrics_.set_haconiwa_files(upgrades.files_attached(), upgrades.replacements());
  }
  void serve_metrics() { metrics_.serve(); }
  [[nodiscard]] std::optional<std::uint16_t> metrics_port() const { return metrics_.port(); }

 private:
  void update_metrics(bool write_now) {
    if (!metrics_.enabled()) return;
    const auto& counters = pipeline_.kernel_counters();
    metrics_.update(pipeline_.events_lost(),
                    {.syscall_aggregates = counters.syscalls_dropped,
                     .blocked_stretches = counters.blocking_dropped,
                     .kernel_stacks = counters.stacks_dropped,
                     .cpu_samples = counters.samples_dropped},
                    counters.untracked_phases, pipeline_.live_boots(), write_now);
  }

  Pipeline& pipeline_;
  ProgressLine progress_;
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
          .account_syscalls = options.syscalls,
          .account_states = options.states,
          .kernel_profile_hz = options.kernel_profile_hz,
          .phase_probe_sites = haconiwa.phase_sites(),
          .usdt_attach = options.usdt_attach,
          .watched_pid = options.pid.value_or(0),
          .wake_on_settle = options.count.has_value(),
          .verbose = options.verbose};
}

// Every file the run writes, checked before any is created, against every
// file it reads (see check_output_paths).
std::vector<UniqueFd> check_outputs(const Options& options, const std::string& haconiwa) {
  std::vector<NamedOutput> outputs{{.option = "-o", .path = options.output},
                                   {.option = "--events", .path = options.events, .streamed = true},
                                   {.option = "--timeline", .path = options.timeline},
                                   {.option = "--trace-out", .path = options.trace_out},
                                   {.option = "--stacks", .path = options.stacks},
                                   {.option = "--textfile", .path = options.textfile, .regular_file_only = true},
                                   {.option = options.subcommand == Command::Record ? "record -o" : "--record",
                                    .path = options.record,
                                    .streamed = true}};
  for (auto& gate_file : gate_outputs(options)) outputs.push_back(std::move(gate_file));
  return check_output_paths(outputs, {{.option = "--baseline", .path = options.baseline},
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
  // The streamed outputs' FIFOs, held from their check on (see check_output_paths).
  std::vector<UniqueFd> fifos;
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
                    .upgrades = std::nullopt,
                    .fifos = {}};
  require_kernel_btf(options.btf);
  require_bpf_privileges();
  if (options.pid) {
    checked.pid_file.emplace(value_or_throw<UsageError>(HaconiwaFile::open_process_exe(*options.pid)));
  } else {
    auto path = resolve_haconiwa(options.haconiwa);
    auto file = value_or_throw<UsageError>(HaconiwaFile::open_path(path));
    checked.upgrades.emplace(std::move(path), std::move(file), options.quiet, diagnostics);
  }
  checked.fifos = check_outputs(options, checked.haconiwa().name());
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

// Polls the ring buffer until a stop signal, the end of the --run command,
// -n N settled boots or the --duration; follows the haconiwa binary's
// upgrades meanwhile.
StopReason run_event_loop(Tracer& tracer, Pipeline& pipeline, LiveView& view, LiveRecording& recording,
                          const Options& options, ChildProcess* child, HaconiwaUpgrades* upgrades,
                          std::ostream& diagnostics) {
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
    view.after_poll(tracer.counters(), expire);
    recording.flush();
    if (expire) next_expiry = Clock::now() + kExpiryInterval;
    if (upgrades) {
      upgrades->check(tracer, Clock::now());
      view.haconiwa_files(*upgrades);
    }
    if (StopSignals::take_reopen_request()) tell(diagnostics, pipeline.sinks().reopen_rows());
    if (child && child->poll_exit()) return StopReason::RunCommandExited;
    if (options.count && pipeline.settled_boots() >= *options.count) return StopReason::CountReached;
    if (options.duration && Clock::now() - started >= *options.duration) return StopReason::DurationElapsed;
  }
  return StopReason::Signal;
}

void warn_of_missed_events(const KernelCounters& counters, std::uint64_t undecodable, std::ostream& diagnostics) {
  if (counters.lost_events > 0 || counters.tracked_full > 0 || undecodable > 0) {
    diagnostics << fmt::format(
        "hacoboot-sampler: warning: {} events lost (ring buffer full), {} processes untracked (map full), {} "
        "undecodable: "
        "figures may be incomplete\n",
        counters.lost_events, counters.tracked_full, undecodable);
  }
  // One line per other count that is not 0: what it cost the figures.
  const std::string stacks_not_taken =
      fmt::format("kernel stacks not taken ({}): their blocking points and samples have no frames", kStacksNotTaken);
  const std::array<std::pair<std::uint64_t, std::string_view>, 6> losses{{
      {counters.unaccounted_threads,
       "threads unaccounted (scheduler map full): their CPU / run queue / sleep / I/O states are unknown, the "
       "critical paths through them incomplete"},
      {counters.syscalls_dropped,
       "syscall aggregates dropped (syscall map full): the steps' syscall figures are incomplete"},
      {counters.blocking_dropped,
       "blocked stretches dropped (blocking map full): the steps' blocking points are incomplete"},
      {counters.stacks_dropped, stacks_not_taken},
      {counters.samples_dropped, "CPU samples dropped (sample map full): the steps' kernel CPU is incomplete"},
      {counters.untracked_phases,
       "phase events ignored: their hpid is no launch seen starting (launches begun before tracing, or a process "
       "passing made-up hpids)"},
  }};
  for (const auto& [count, what] : losses) {
    if (count > 0) diagnostics << fmt::format("hacoboot-sampler: warning: {} {}\n", count, what);
  }
}

// Boots that listened without an execve of COMMAND read as failures ("exited
// 0 after listen"): the likelier cause, a COMMAND that is not the
// container's command, is said once.
void warn_of_unmatched_command(const Options& options, const BootCounts& boots, std::ostream& diagnostics) {
  if (options.command.empty() || boots.execve > 0 || boots.listen == 0) return;
  diagnostics << fmt::format(
      "hacoboot-sampler: warning: {} boots reached listen, none an execve of COMMAND '{}': is it the container's "
      "command, as the container gives it to execve (compared as given, as the reference script did)? Without "
      "COMMAND, the container's first execve counts\n",
      boots.listen, printable(options.command));
}

void write_reports(const Options& options, BootSinks& sinks, const RunFacts& facts, std::ostream& diagnostics) {
  warn_of_unmatched_command(options, sinks.summary().boots(), diagnostics);
  if (options.subcommand != Command::Record) {
    write_output(options.output, [&](std::ostream& out) {
      make_report_writer(options.format, {.histograms = options.histograms, .all_syscalls = options.all_syscalls})
          ->write(sinks.summary(), facts, out);
    });
  }
  tell(diagnostics, sinks.finish_rows());
  if (!options.timeline.empty()) {
    write_output(options.timeline,
                 [&](std::ostream& out) { write_timeline_svg(sinks.pictured(), out, options.phase_names); });
  }
  if (!options.trace_out.empty()) {
    write_output(options.trace_out,
                 [&](std::ostream& out) { write_chrome_trace(sinks.pictured(), out, options.phase_names); });
  }
  if (!options.stacks.empty()) {
    std::size_t lines = 0;
    write_output(options.stacks,
                 [&](std::ostream& out) { lines = write_folded_stacks(sinks.pictured(), out, options.phase_names); });
    if (lines == 0 && !sinks.pictured().empty()) {
      diagnostics << "hacoboot-sampler: warning: --stacks: no step has syscall figures (a recording made without "
                     "--syscalls?)\n";
    }
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

// Each boot's syscalls, blocking points and kernel CPU samples, as asked,
// taken from the tracer when it ends, and recorded. The kernel's symbols
// are read at the first boot's end, not before the probes are live.
void take_kernel_figures(const Options& options, Tracer& tracer, Pipeline& pipeline, LiveRecording& recording,
                         std::ostream& diagnostics) {
  auto symbols = std::make_shared<std::optional<KernelSymbols>>();
  const auto kernel_symbols = [symbols, &diagnostics]() -> const KernelSymbols& {
    if (!*symbols) *symbols = read_kernel_symbols(diagnostics);
    return **symbols;
  };
  if (options.syscalls) {
    pipeline.take_syscalls_from([&tracer, &recording](std::uint32_t launch) {
      return recording.syscalls(launch, tracer.take_syscalls(launch));
    });
    pipeline.take_blocking_from([&tracer, &recording, kernel_symbols](std::uint32_t launch) {
      auto blocking = decode_blocking(tracer.take_blocking(launch), kernel_symbols());
      return recording.blocking(launch, blocking.value_or(std::vector<BlockingAggregate>()));
    });
  }
  if (options.kernel_profile_hz != 0) {
    pipeline.take_kernel_profile_from([&tracer, &recording, kernel_symbols, hz = options.kernel_profile_hz](
                                          std::uint32_t launch, std::uint64_t at_ns) {
      auto samples = decode_kernel_samples(tracer.take_kernel_samples(launch), kernel_symbols());
      return recording.kernel_profile(launch, {.hz = hz,
                                               .sampled_since_ns = tracer.kernel_profile_since(at_ns),
                                               .samples = samples.value_or(std::vector<CpuSampleAggregate>())});
    });
  }
}

// The run once every check passed: traced, reported, judged.
int trace(const Options& options, Preflight& checked, std::ostream& diagnostics) {
  // Before loading: a Ctrl-C while attaching still ends with a summary.
  const StopSignals stop_signals(/*sighup_reopens=*/options.serve.has_value() || !options.textfile.empty());
  CgroupPaths cgroups;
  LiveRecording recording;
  Pipeline pipeline(pipeline_config(options),
                    [&cgroups, &recording](std::uint64_t id) { return recording.resolved(id, cgroups.path_of(id)); });
  LiveView view(options, pipeline);
  std::optional<CoreBtfCache> btf_cache;
  // Kernel types from --btf are that file's, not this kernel's to cache.
  if (options.btf_cache != "off" && options.btf.empty()) btf_cache.emplace(options.btf_cache, Tracer::bpf_object());
  auto& upgrades = checked.upgrades;
  const auto tracer = start_tracer(
      options, tracer_config(options, checked.haconiwa(), upgrades ? upgrades->watched_path() : std::nullopt),
      btf_cache ? &*btf_cache : nullptr, diagnostics, [&pipeline, &recording](std::span<const std::byte> record) {
        recording.record(record);
        pipeline.on_record(record);
      });
  if (upgrades) upgrades->started(*tracer);
  take_kernel_figures(options, *tracer, pipeline, recording, diagnostics);
  pipeline.sinks().open_rows();
  recording.open(options);
  // Ready means tracing: whatever waits for /metrics or for systemd before
  // it starts containers must not start one the probes would miss.
  view.serve_metrics();
  notify_service_ready(diagnostics);
  const auto child = start_run_command(options, checked.run_as);
  announce_start(options, checked.haconiwa().name(), view.metrics_port(), diagnostics);

  const auto stop = run_event_loop(*tracer, pipeline, view, recording, options, child.get(),
                                   upgrades ? &*upgrades : nullptr, diagnostics);
  tracer->poll(std::chrono::milliseconds(0));
  // No launch stays stopped after the last read.
  if (upgrades) HaconiwaUpgrades::release_holds(*tracer);
  view.finish(tracer->counters(), tracer->map_use());
  recording.finish(pipeline.kernel_counters(), tracer->tracked_processes());
  warn_of_missed_events(pipeline.kernel_counters(), pipeline.undecodable(), diagnostics);
  const auto facts = pipeline.run_facts(tracer->tracked_processes());
  write_reports(options, pipeline.sinks(), facts, diagnostics);
  // After every output is written: only a first run on a new kernel waits.
  if (btf_cache) btf_cache->finish_filling(kBtfCachePatience);
  return exit_status(stop, child.get(), checked.baseline, pipeline.sinks().summary(), facts, options, diagnostics);
}

// `report FILE`: the outputs of the recorded run, made from its recording.
int report_recording(const Options& given, std::ostream& diagnostics) {
  std::vector<NamedOutput> outputs{{.option = "-o", .path = given.output},
                                   {.option = "--events", .path = given.events, .streamed = true},
                                   {.option = "--timeline", .path = given.timeline},
                                   {.option = "--trace-out", .path = given.trace_out},
                                   {.option = "--stacks", .path = given.stacks}};
  for (auto& gate_file : gate_outputs(given)) outputs.push_back(std::move(gate_file));
  const auto fifos = check_output_paths(
      outputs, {{.option = "--baseline", .path = given.baseline}, {.option = "report", .path = given.replayed}});
  const auto recording = read_recording(given.replayed);
  if (recording.cut) {
    diagnostics << "hacoboot-sampler: warning: " << printable(given.replayed, kUncut) << ": " << *recording.cut
                << ": the outputs hold the boots recorded before\n";
  }
  auto options = given;  // the recorded run's settings, for the pipeline and the gate alike
  options.start_phase = recording.header.start_phase;
  options.command = recording.header.command;
  options.warmup = recording.header.warmup;
  options.phase_names = recording.header.phase_names;
  const auto baseline = load_baseline(options);
  return unjudged_on_failure(options, diagnostics, [&] {
    Pipeline pipeline(pipeline_config(options), recorded_cgroup_paths(recording));
    pipeline.take_syscalls_from(recorded_syscalls(recording));
    pipeline.take_blocking_from(recorded_blocking(recording));
    pipeline.take_kernel_profile_from(recorded_kernel_profiles(recording));
    pipeline.sinks().open_rows();
    replay(recording, pipeline);
    warn_of_missed_events(pipeline.kernel_counters(), pipeline.undecodable(), diagnostics);
    const auto facts = pipeline.run_facts(recording.end ? recording.end->tracked_at_exit : 0);
    write_reports(options, pipeline.sinks(), facts, diagnostics);
    return baseline ? judge_run(*baseline, figures_of_run(pipeline.sinks().summary(), facts), options, diagnostics)
                    : kExitOk;
  });
}

}  // namespace

int run_session(const Options& options, std::ostream& diagnostics) {
  switch (options.subcommand) {
    case Command::List: return list_probes(options, std::cout);
    case Command::Check: return check_system(options, std::cout);
    case Command::Compare: return compare_summaries(options, std::cout);
    case Command::Report: return report_recording(options, diagnostics);
    case Command::Trace:
    case Command::Record: {
      auto checked = check_before_loading(options, diagnostics);
      // The gate's files are known to be outputs from here on.
      return unjudged_on_failure(options, diagnostics, [&] { return trace(options, checked, diagnostics); });
    }
  }
  throw std::logic_error("run_session: a command without a case");
}

}  // namespace hacoboot
