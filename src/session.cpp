#include "hacoboot/session.hpp"

#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "hacoboot/baseline.hpp"
#include "hacoboot/boot_rows.hpp"
#include "hacoboot/boot_tracker.hpp"
#include "hacoboot/cgroup_paths.hpp"
#include "hacoboot/child_process.hpp"
#include "hacoboot/core_btf_cache.hpp"
#include "hacoboot/errors.hpp"
#include "hacoboot/event.hpp"
#include "hacoboot/output_file.hpp"
#include "hacoboot/progress.hpp"
#include "hacoboot/report.hpp"
#include "hacoboot/stats.hpp"
#include "hacoboot/stop_signals.hpp"
#include "hacoboot/syscall_tracepoints.hpp"
#include "hacoboot/system_checks.hpp"
#include "hacoboot/timeline.hpp"
#include "hacoboot/trace_event.hpp"
#include "hacoboot/tracer.hpp"

namespace hacoboot {
namespace {

// Signals interrupt the wait at once; producers wake it when the ring buffer
// fills up. 50 ms keeps an idle tool at 20 wake-ups a second.
constexpr auto kPollInterval = std::chrono::milliseconds(50);
// Boots kept for --timeline / --trace-out: the pictures are for looking at,
// and memory must not grow with the length of the run.
constexpr std::size_t kMaxPictured = 10'000;
// bpftool extracts the kernel types in ~0.1 s: a first run on a new kernel
// that ends sooner waits this long for it at exit, at most.
constexpr auto kBtfCachePatience = std::chrono::seconds(2);

std::optional<MetricTable> load_baseline(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) throw UsageError("--baseline: cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_baseline(text.str(), path);
}

std::unique_ptr<OutputFile> open_if_named(const std::string& path) {
  if (path.empty()) return nullptr;
  return std::make_unique<OutputFile>(path);
}

// Where each finished boot goes: the summary, the rows, the pictures.
class BootSinks {
 public:
  BootSinks(const Options& options, OutputFile* events) : options_(options) {
    if (events) {
      const auto format =
          options.events_format == EventsFormat::Jsonl ? BootRowWriter::Format::Jsonl : BootRowWriter::Format::Tsv;
      rows_.emplace(events->stream(), format, options.phase_names);
    }
    keep_for_pictures_ = !options.timeline.empty() || !options.trace_out.empty();
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

int run_session(const Options& options, std::ostream& diagnostics) {
  // Every input and output first: a typo fails before anything is loaded.
  const auto baseline = load_baseline(options.baseline);
  OutputFile summary_out(options.output);
  auto events_out = open_if_named(options.events);
  auto timeline_out = open_if_named(options.timeline);
  auto trace_out = open_if_named(options.trace_out);
  const auto run_as = options.run_as ? std::optional(resolve_run_as(*options.run_as)) : std::nullopt;

  require_kernel_btf();
  require_bpf_privileges();
  const std::string haconiwa = resolve_haconiwa(options.haconiwa);
  require_phase_probe(haconiwa);

  // Before loading: a Ctrl-C while attaching still ends with a summary.
  const StopSignals stop_signals;
  ProgressLine progress(!options.quiet);
  CgroupPaths cgroups;
  BootSinks sinks(options, events_out.get());
  BootTracker tracker({.start_phase = options.start_phase, .command = options.command},
                      [&](const BootRecord& boot) { sinks.on_boot(boot, cgroups, progress); });
  std::uint64_t undecodable = 0;
  std::optional<CoreBtfCache> btf_cache;
  if (options.btf_cache != "off") btf_cache.emplace(options.btf_cache, Tracer::bpf_object());
  const auto core_btf = btf_cache ? btf_cache->cached() : std::nullopt;
  std::string no_tracepoints = "--syscall-hooks raw_syscalls";
  const auto syscall_tracepoints = options.syscall_hooks == SyscallHooks::RawSyscalls
                                       ? std::nullopt
                                       : find_syscall_tracepoints(no_tracepoints);
  if (!syscall_tracepoints && options.syscall_hooks == SyscallHooks::Tracepoints) {
    throw RuntimeError("--syscall-hooks tracepoints: " + no_tracepoints);
  }
  if (options.verbose) {
    diagnostics << "hacoboot-sampler: kernel types from "
                << (core_btf ? core_btf->string() + " (cached)" : std::string("/sys/kernel/btf/vmlinux")) << '\n'
                << "hacoboot-sampler: execve/listen through "
                << (syscall_tracepoints ? std::string("syscalls:* tracepoints")
                                        : "raw_syscalls (" + no_tracepoints + ")")
                << '\n';
  }
  Tracer tracer({.haconiwa_path = haconiwa,
                 .ring_buffer_bytes = options.ring_buffer_bytes,
                 .syscall_tracepoints = syscall_tracepoints,
                 .core_btf = core_btf ? core_btf->string() : std::string(),
                 .verbose = options.verbose},
                [&](std::span<const std::byte> record) {
                  const auto event = decode_event(record);
                  if (!event) {
                    ++undecodable;
                    return;
                  }
                  // Resolve while the container is alive: its cgroup may be gone when the boot ends.
                  if (event->kind == EventKind::Exec) cgroups.path_of(event->cgroup_id);
                  tracker.on_event(*event);
                });

  if (btf_cache && !core_btf) {
    const auto what = btf_cache->start_filling();
    if (options.verbose) diagnostics << "hacoboot-sampler: " << what << '\n';
  }

  std::optional<ChildProcess> child;
  if (options.run) {
    // Not when interrupted while attaching: the run is already over.
    if (!StopSignals::received()) {
      child.emplace(*options.run, run_as);
      StopSignals::set_child_group(child->pid());
    }
  } else {
    diagnostics << "Tracing Haconiwa boots in " << haconiwa << "... Hit Ctrl-C to end." << std::endl;
  }
  const auto started = std::chrono::steady_clock::now();

  std::optional<int> child_status;
  while (!StopSignals::received()) {
    tracer.poll(kPollInterval);
    progress.update(tracker.live_boots(), tracer.counters().lost_events);
    if (child && (child_status = child->poll_exit())) break;
    if (options.count && tracker.settled_boots() >= *options.count) break;
    if (options.duration && std::chrono::steady_clock::now() - started >= *options.duration) break;
  }
  tracer.poll(std::chrono::milliseconds(0));
  tracker.finish_all();
  progress.clear();

  const auto counters = tracer.counters();
  if (counters.lost_events > 0 || counters.tracked_full > 0 || undecodable > 0) {
    diagnostics << fmt::format(
        "hacoboot-sampler: warning: {} events lost (ring buffer full), {} processes untracked (map full), {} "
        "undecodable: "
        "figures may be incomplete\n",
        counters.lost_events, counters.tracked_full, undecodable);
  }
  const RunFacts facts{.start_phase = options.start_phase,
                       .command = options.command,
                       .lost_events = counters.lost_events + undecodable,
                       .tracked_at_exit = tracer.tracked_processes(),
                       .names = options.phase_names};
  make_report_writer(options.format, options.histograms)->write(sinks.summary(), facts, summary_out.stream());
  summary_out.finish();
  if (events_out) events_out->finish();
  if (timeline_out) {
    write_timeline_svg(sinks.pictured(), timeline_out->stream(), options.phase_names);
    timeline_out->finish();
  }
  if (trace_out) {
    write_chrome_trace(sinks.pictured(), trace_out->stream(), options.phase_names);
    trace_out->finish();
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
