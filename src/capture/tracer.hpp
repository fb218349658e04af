#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "capture/capture_errors.hpp"
#include "capture/syscall_tracepoints.hpp"
#include "capture/usdt_multi_link.hpp"
#include "capture/usdt_probe.hpp"
#include "hacoboot.h"
#include "util/errors.hpp"
#include "util/expected.hpp"
#include "util/unique_fd.hpp"

struct bpf_link;
struct hacoboot_bpf;
struct ring_buffer;

namespace hacoboot {

// How the phase probe is attached.
enum class UsdtAttach : std::uint8_t { Auto, UprobeMulti, Perf };

// How it was: one uprobe_multi link, or libbpf's perf uprobes, and why not
// the link ("" when perf uprobes were asked for).
struct UsdtAttachment {
  bool uprobe_multi = false;
  std::string why_not_uprobe_multi;
};

struct TracerCounters {
  std::uint64_t lost_events = 0;   // ring buffer was full
  std::uint64_t tracked_full = 0;  // a process could not be tracked
  // Threads whose scheduler states could not be accounted: map full.
  std::uint64_t unaccounted_threads = 0;
  // Phase events dropped in the kernel: their hpid is no launch seen starting.
  std::uint64_t untracked_phases = 0;
};

// Owns the BPF skeleton, its links and the ring buffer: the only code that
// touches libbpf. Probes are live once the constructor returns and detached
// when the Tracer is destroyed, on every path.
class Tracer {
 public:
  using RecordSink = std::function<void(std::span<const std::byte>)>;

  struct Config {
    std::string haconiwa_path;
    // Rounded up to a power of two pages. Its pages are mapped twice in
    // user space, so this size counts double in the tool's RSS.
    std::size_t ring_buffer_bytes = HACOBOOT_DEFAULT_RINGBUF_BYTES;
    // execve/listen through the per-syscall tracepoints this finds, asked
    // once the programs are loaded (the lookup runs meanwhile) and proven
    // once attached (SyscallTracepointError otherwise); without a lookup,
    // through raw_syscalls, a program run on every syscall of the host.
    SyscallTracepointLookup* syscall_tracepoints = nullptr;
    bool raw_syscalls_fallback = true;
    // A BTF file with the kernel types the programs read (CoreBtfCache);
    // empty: libbpf reads the kernel's whole BTF. The {} here and on the next
    // member keep -Wmissing-field-initializers quiet on the designated
    // initializers that leave them out.
    std::string core_btf{};  // NOLINT(readability-redundant-member-init)
    // The phase probe's sites in haconiwa_path (require_phase_probe), for
    // the uprobe_multi link; libbpf's perf uprobes read the notes themselves.
    std::vector<UsdtProbe> phase_probe_sites{};  // NOLINT(readability-redundant-member-init)
    // uprobe_multi, perf uprobes, or the first of them that works here.
    UsdtAttach usdt_attach = UsdtAttach::Auto;
    // Only launches by this process or its descendants (--pid); 0: any.
    std::uint32_t watched_pid = 0;
    // The events that settle a boot wake the reader at once (-n N) instead
    // of at its next poll.
    bool wake_on_settle = false;
    bool verbose = false;
  };

  // The BPF object (ELF) the skeleton embeds: what CoreBtfCache extracts for.
  static std::span<const std::byte> bpf_object();

  // Throws RuntimeError naming what failed, or one of capture_errors.hpp's.
  Tracer(const Config& config, RecordSink sink);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;
  Tracer(Tracer&&) = delete;
  Tracer& operator=(Tracer&&) = delete;

  // Waits up to `timeout` (less when the buffer fills up), then hands every
  // record available to the sink. An exception from the sink propagates.
  void poll(std::chrono::milliseconds timeout);

  // Attaches the phase probe to another file too, the way the first was:
  // the haconiwa binary replaced at its path by an upgrade (processes of the
  // old file still run, and keep its probe). Throws RuntimeError.
  void attach_phase_probe_to(const std::string& binary, const std::vector<UsdtProbe>& sites);

  [[nodiscard]] TracerCounters counters() const;
  // Whether execve/listen come from the per-syscall tracepoints.
  [[nodiscard]] bool per_syscall_tracepoints() const { return per_syscall_tracepoints_; }
  // How the probe was attached, for -v.
  [[nodiscard]] const UsdtAttachment& usdt_attachment() const { return usdt_attachment_; }
  // Processes the kernel side still tracks (live launchers and container
  // members): what a run leaves in its maps, 0 once every boot is over.
  [[nodiscard]] std::uint64_t tracked_processes() const;
  // Threads whose scheduler states the kernel side accounts: 0 once every
  // boot is over, when the scheduler hooks return on their first load.
  [[nodiscard]] std::uint64_t accounted_threads() const;

 private:
  struct SkeletonDeleter {
    void operator()(hacoboot_bpf* skeleton) const;
  };
  struct RingBufferDeleter {
    void operator()(ring_buffer* rb) const;
  };
  struct LinkDeleter {
    void operator()(bpf_link* link) const;
  };
  static int on_record(void* self, void* data, std::size_t size);
  void choose_syscall_programs(bool tracepoints, bool raw_syscalls);
  void attach_syscall_hooks(const Config& config);
  void attach_syscall_tracepoints(const SyscallTracepointIds& ids);
  void attach_phase_probe(const Config& config, const Expected<UsdtMultiAttach>& plan);
  void prove_syscall_tracepoints(const SyscallTracepointIds& ids);
  [[nodiscard]] std::uint64_t untracked_phases() const;  // summed over the CPUs

  RecordSink sink_;
  std::exception_ptr sink_error_;
  bool per_syscall_tracepoints_ = false;
  std::size_t possible_cpus_ = 0;  // values in a per-CPU map entry
  UsdtAttachment usdt_attachment_;
  std::unique_ptr<hacoboot_bpf, SkeletonDeleter> skeleton_;
  UniqueFd phase_link_;  // the uprobe_multi link; unset: the skeleton's on_phase link
  // The probe in the files that replaced the first (attach_phase_probe_to),
  // as uprobe_multi links or libbpf's perf uprobes.
  std::vector<UniqueFd> more_phase_links_;
  std::vector<std::unique_ptr<bpf_link, LinkDeleter>> more_perf_links_;
  std::uint32_t spec_ids_used_ = 0;  // entries of the USDT spec map the uprobe_multi links use
  std::unique_ptr<ring_buffer, RingBufferDeleter> ring_buffer_;
};

}  // namespace hacoboot
