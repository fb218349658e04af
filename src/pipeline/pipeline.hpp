#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "model/boot.hpp"
#include "model/boot_tracker.hpp"
#include "model/phases.hpp"
#include "pipeline/boot_sinks.hpp"
#include "report/report.hpp"

namespace hacoboot {

// The kernel side's cumulative counts that the figures need, whoever read
// them: the live Tracer after each poll, or a recording. The pipeline's own
// type, so that it needs no loader (the CLI converts the Tracer's counters).
struct KernelCounters {
  std::uint64_t lost_events = 0;            // the ring buffer was full
  std::uint64_t tracked_full = 0;           // processes that could not be tracked (map full)
  std::uint64_t unaccounted_threads = 0;    // threads whose scheduler states are unknown (map full)
  std::uint64_t untracked_phases = 0;       // phase events of launches not seen starting, dropped
  std::uint64_t repaired_switch_ins = 0;    // switch-ins the scheduler hooks missed, repaired: not a loss
  std::uint64_t syscalls_dropped = 0;       // syscall or user time not aggregated (map full)
  std::uint64_t blocking_dropped = 0;       // blocked stretches not aggregated (map full)
  std::uint64_t stacks_dropped = 0;         // kernel stacks not taken (stack map full)
  std::uint64_t samples_dropped = 0;        // CPU samples not aggregated (map full)
  std::vector<KernelMapUse> kernel_maps{};  // NOLINT(readability-redundant-member-init): how full they got
};

// The cgroup path of a cgroup id (an exec event's container), empty when
// unknown. Live: CgroupPaths, while the container is alive; a replay: the
// paths its recording holds. An empty one leaves every path empty.
using CgroupResolver = std::function<std::string(std::uint64_t cgroup_id)>;

// A launch's syscall aggregates, as the kernel side lays them out
// (decode_syscall_aggregates), taken away: each launch's once, when its boot
// ends. Live: the Tracer's map; a replay: what its recording holds.
using SyscallSource = std::function<std::vector<std::byte>(std::uint32_t launch)>;

// A launch's blocking aggregates (where its syscalls blocked), taken away
// as its syscalls, just after them. Live: the Tracer's map, named by
// /proc/kallsyms.
using BlockingSource = std::function<std::vector<BlockingAggregate>(std::uint32_t launch)>;

// A launch's kernel CPU profile (--kernel-profile), taken away as its
// syscalls, after them; `at_ns` is an instant of its boot (its listen, or
// its last phase) for the loader to tell since when it was sampled. Live:
// the Tracer's map, named by /proc/kallsyms.
using KernelProfileSource = std::function<KernelProfile(std::uint32_t launch, std::uint64_t at_ns)>;

// What the Pipeline uses of the options.
struct PipelineConfig {
  std::int64_t start_phase = kPhaseStartSupervisor;  // the phase that starts the clock
  // The container's init command; empty: its first execve.
  std::string command{};     // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
  std::uint64_t warmup = 0;  // boots left out of every figure
  BootSinksConfig sinks{};   // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
};

// Records in, boots and sinks out: the path of a ring-buffer record from
// any source (the live ring buffer, a recording) through decode, enrichment
// (the container's cgroup path) and BootTracker to the sinks (summary, rows,
// pictures). No clock, no terminal, no loader: the caller drives it and is
// told what happened through the observers.
//
// The two entry points a source uses: the constructor (with the source's
// CgroupResolver) and on_record(). Then, as the source goes on:
// set_kernel_counters() whenever it reads the kernel's counts, and finish()
// once no record is left.
class Pipeline {
 public:
  using BootObserver = std::function<void(const BootRecord&)>;

  Pipeline(PipelineConfig config, CgroupResolver cgroup_paths);
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  Pipeline(Pipeline&&) = delete;
  Pipeline& operator=(Pipeline&&) = delete;
  ~Pipeline() = default;

  // One ring-buffer record, its bytes as the BPF program wrote them
  // (include/hacoboot/contract.h). One that does not decode is counted as
  // lost (events_lost()), not thrown.
  void on_record(std::span<const std::byte> record);

  // Called with each boot past the warm-up once it ended, after the sinks
  // took it (the progress line).
  void on_boot_done(BootObserver observer) { done_observer_ = std::move(observer); }
  // Called with each boot past the warm-up once it settled: it listened or
  // ended (the metrics; what -n counts).
  void on_boot_settled(BootObserver observer) { settled_observer_ = std::move(observer); }

  // Where each boot's syscalls come from when it ends; none: no boot has any.
  void take_syscalls_from(SyscallSource source) { syscalls_ = std::move(source); }
  // And where they blocked; none: no boot has blocking points.
  void take_blocking_from(BlockingSource source) { blocking_ = std::move(source); }
  // And their CPU samples; none: no boot has a kernel profile.
  void take_kernel_profile_from(KernelProfileSource source) { kernel_profile_ = std::move(source); }

  // The kernel side's counts, cumulative, as last read.
  void set_kernel_counters(const KernelCounters& counters) { counters_ = counters; }
  // Ends every boot in flight whose processes are all gone by is_alive(pid):
  // their exit events were lost (a long-running exporter would keep them for ever).
  void expire_vanished(const std::function<bool(std::uint32_t pid)>& is_alive);
  // No record is left: every boot still in flight ends.
  void finish();

  // Events the figures miss: the kernel could not deliver them (ring buffer
  // full) or they did not decode. JSON's lost_events, the metric
  // hacoboot_events_lost_total and the progress line all count these.
  [[nodiscard]] std::uint64_t events_lost() const { return counters_.lost_events + undecodable_; }
  [[nodiscard]] std::uint64_t undecodable() const { return undecodable_; }
  [[nodiscard]] const KernelCounters& kernel_counters() const { return counters_; }
  // Boots past the warm-up that listened or ended: what --count counts.
  [[nodiscard]] std::uint64_t settled_boots() const { return settled_; }
  [[nodiscard]] std::size_t live_boots() const { return tracker_.live_boots(); }
  // The facts every summary states beside its figures; tracked_at_exit: the
  // processes the kernel maps still held when tracing stopped.
  [[nodiscard]] RunFacts run_facts(std::uint64_t tracked_at_exit) const;

  BootSinks& sinks() { return sinks_; }
  [[nodiscard]] const BootSinks& sinks() const { return sinks_; }

 private:
  void boot_done(BootRecord boot);
  void boot_settled(const BootRecord& boot);

  const PipelineConfig config_;
  CgroupResolver cgroup_paths_;
  SyscallSource syscalls_;
  BlockingSource blocking_;
  KernelProfileSource kernel_profile_;
  KernelCounters counters_;
  std::uint64_t settled_ = 0;
  std::uint64_t undecodable_ = 0;
  BootObserver done_observer_;
  BootObserver settled_observer_;
  BootSinks sinks_;
  BootTracker tracker_;  // last: its sinks call into the members above
};

}  // namespace hacoboot
