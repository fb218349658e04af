#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "capture/capture_errors.hpp"
#include "capture/cpu_sampling.hpp"
#include "capture/syscall_tracepoints.hpp"
#include "capture/usdt_multi_link.hpp"
#include "capture/usdt_probe.hpp"
#include "hacoboot/contract.h"
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

// A file as the kernel names it: its filesystem's dev_t (the kernel's
// encoding, not stat(2)'s) and its inode.
struct KernelFileId {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  bool operator==(const KernelFileId&) const = default;
};
KernelFileId kernel_file_id(dev_t device, ino_t inode);

// Where the haconiwa binary is: its directory (the kernel's ids) and its
// file name, for the kernel side to catch execs of a file there that the
// probe is not on yet.
struct WatchedHaconiwaPath {
  KernelFileId directory;
  std::string name;  // at most HACOBOOT_WATCHED_NAME_LEN - 1 bytes, else not watched
};

// Such an exec (HACOBOOT_EV_UNPROBED_EXEC): process `pid` runs file `file`,
// stopped until continued when `held`.
struct UnprobedExec {
  std::uint32_t pid = 0;
  KernelFileId file;
  bool held = false;
};

// How full one of the aggregation maps got (Tracer::map_use): the most
// entries seen in it at once, of its max_entries.
struct MapFill {
  const char* map = "";
  std::uint64_t peak = 0;
  std::uint64_t capacity = 0;
};

// Which attachment of the phase probe: the constructor's is 0.
using PhaseProbeId = std::size_t;

struct TracerCounters {
  std::uint64_t lost_events = 0;   // ring buffer was full
  std::uint64_t tracked_full = 0;  // a process could not be tracked
  // Threads whose scheduler states could not be accounted: map full.
  std::uint64_t unaccounted_threads = 0;
  // Phase events dropped in the kernel: their hpid is no launch seen starting.
  std::uint64_t untracked_phases = 0;
  // Not a loss: switches onto a CPU the scheduler hooks missed, whose
  // thread's states the kernel side repaired.
  std::uint64_t repaired_switch_ins = 0;
  // Syscall or user time the kernel side could not aggregate: its map was full.
  std::uint64_t syscalls_dropped = 0;
  // Blocked stretches not aggregated (map full), and kernel stacks not taken.
  std::uint64_t blocking_dropped = 0;
  std::uint64_t stacks_dropped = 0;
  // CPU samples not aggregated: the sample map was full.
  std::uint64_t samples_dropped = 0;
};

// Owns the BPF skeleton, its links and the ring buffer: the only code that
// touches libbpf. Probes are live once the constructor returns and detached
// when the Tracer is destroyed, on every path.
class Tracer {
 public:
  using RecordSink = std::function<void(std::span<const std::byte>)>;

  struct Config {
    // The file the probe goes to: /proc/self/fd/N of a descriptor the
    // caller keeps open (HaconiwaFile), so that the notes read and the
    // probe attached are of one file; a plain path in tests and benchmarks.
    std::string haconiwa_path;
    // In messages; empty: haconiwa_path. The {} on the members here that
    // designated initializers may leave out keep -Wmissing-field-initializers
    // quiet.
    std::string haconiwa_name{};  // NOLINT(readability-redundant-member-init)
    // Execs of new files at the haconiwa binary's path are reported
    // (take_unprobed_execs), and held until continued when hold_unprobed_execs.
    std::optional<WatchedHaconiwaPath> watched_path{};  // NOLINT(readability-redundant-member-init)
    bool hold_unprobed_execs = false;
    // Rounded up to a power of two pages. Its pages are mapped twice in
    // user space, so this size counts double in the tool's RSS.
    std::size_t ring_buffer_bytes = HACOBOOT_DEFAULT_RINGBUF_BYTES;
    // execve/listen through the per-syscall tracepoints this finds, asked
    // once the programs are loaded (the lookup runs meanwhile) and proven
    // once attached (StartFailureKind::SyscallTracepoints otherwise); without a lookup,
    // through raw_syscalls, a program run on every syscall of the host.
    SyscallTracepointLookup* syscall_tracepoints = nullptr;
    bool raw_syscalls_fallback = true;
    // Syscalls per step (take_syscalls): the raw syscall hooks attached
    // whatever the tracepoints, so every syscall of the host pays a program
    // run while the tool runs; off, they stay detached unless execve and
    // listen need them.
    bool account_syscalls = false;
    // Each step's time in CPU, run queue, sleep and I/O: the scheduler
    // hooks, on every context switch and wakeup of the host. Off (no output
    // reads them: --format bpftrace alone), they are not even loaded, and
    // the events carry no states. account_syscalls needs them.
    bool account_states = true;
    // Kernel CPU sampled at this frequency (take_kernel_samples), with
    // account_syscalls; 0: no perf event is opened.
    std::uint32_t kernel_profile_hz = 0;
    // A BTF file with the kernel types the programs read (CoreBtfCache);
    // empty: libbpf reads the kernel's whole BTF.
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

  // Loads the programs and attaches the probes. A failure the caller gets
  // past is returned (capture_errors.hpp's StartFailure); any other throws
  // RuntimeError naming what failed, or UprobeMultiError.
  static Expected<std::unique_ptr<Tracer>, StartFailure> start(const Config& config, RecordSink sink);
  // The same for a caller to whom every failure is fatal (tests, benchmarks):
  // throws RuntimeError naming what failed, or UprobeMultiError.
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
  // old file still run, and keep its probe), or rewritten in place and read
  // again. `binary` as haconiwa_path, `name` for messages. Or why not: that
  // file's launches are then not seen, a warning, not the end of the run.
  Expected<PhaseProbeId> attach_phase_probe_to(const std::string& binary, const std::string& name,
                                               const std::vector<UsdtProbe>& sites);
  // Detaches one at once: its file is being rewritten, and its sites are
  // no longer where its notes said.
  void detach_phase_probe(PhaseProbeId probe);
  // The kernel side no longer reports execs of `file` (the probe is on it,
  // or it has none).
  void mark_probed(const KernelFileId& file);
  // The execs of unprobed files at the watched path since the last call.
  [[nodiscard]] std::vector<UnprobedExec> take_unprobed_execs() { return std::exchange(unprobed_execs_, {}); }
  // Tracing ends: the kernel side holds no more execs, and the records of
  // those it held until now are read, for take_unprobed_execs to hand over
  // (each held one must be continued). Waits a millisecond at most.
  void release_holds();
  // Readable when records wait: to wait on it with other descriptors, then poll(0).
  [[nodiscard]] int ready_fd() const;

  [[nodiscard]] TracerCounters counters() const;
  // How full the maps that take_syscalls, take_blocking and
  // take_kernel_samples read got so far; a map's entries are counted at
  // those walks only, so each peak is a floor. Empty without account_syscalls.
  [[nodiscard]] std::vector<MapFill> map_use() const;
  // A launch's syscall aggregates, deleted from the kernel's map, as the
  // contract lays them out (each hacoboot_syscall_key, then its
  // hacoboot_syscall_totals): once its boot ended (no thread of it is
  // accounted any more), or tracing stopped.
  std::vector<std::byte> take_syscalls(std::uint32_t launch);
  // A launch's blocking entries, deleted from the kernel's map, each as its
  // hacoboot_blocking_key, hacoboot_blocking_totals, hacoboot_blocking_frames
  // and the addresses of its stack and its waker's, as take_syscalls
  // takes the syscalls (in either order). The stacks no entry left in the map
  // refers to are deleted too, so that the stack map holds only the boots
  // in flight.
  std::vector<std::byte> take_blocking(std::uint32_t launch);
  // A launch's CPU samples (kernel_profile_hz), deleted from the kernel's
  // map, each as its hacoboot_sample_key, hacoboot_sample_entry and the
  // addresses of its stack, as take_blocking takes the blocking entries
  // (the two share the stack map, in either order).
  std::vector<std::byte> take_kernel_samples(std::uint32_t launch);
  // Since when the CPU samples were taken without a break up to the
  // instant `ns` (a record's time) of a boot; nullopt when they were not
  // taken then, or without kernel_profile_hz.
  [[nodiscard]] std::optional<std::uint64_t> kernel_profile_since(std::uint64_t ns) const;
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
  explicit Tracer(RecordSink sink);
  Expected<void, StartFailure> start_up(const Config& config);
  static int on_record(void* self, void* data, std::size_t size);
  void choose_syscall_programs(const Config& config);
  void choose_state_programs(const Config& config);
  Expected<void, StartFailure> attach_syscall_hooks(const Config& config);
  Expected<void, StartFailure> attach_syscall_tracepoints(const SyscallTracepointIds& ids);
  // One attachment of the phase probe: a uprobe_multi link with its
  // range of USDT spec ids, or libbpf's perf uprobes.
  struct PhaseProbe {
    UniqueFd multi_link;
    std::uint32_t first_spec_id = 0;
    std::uint32_t spec_ids = 0;
    std::unique_ptr<bpf_link, LinkDeleter> perf_link;
    [[nodiscard]] bool attached() const { return multi_link.valid() || perf_link != nullptr; }
  };
  void attach_first_phase_probe(const Config& config, const Expected<UsdtMultiAttach>& plan);
  void watch_haconiwa_path(const Config& config);
  Expected<PhaseProbe> attach_multi(const UsdtMultiAttach& plan);
  [[nodiscard]] Expected<std::uint32_t> free_spec_ids(std::size_t wanted, std::uint32_t capacity) const;
  void on_unprobed_exec(std::span<const std::byte> record);
  Expected<void, StartFailure> prove_syscall_tracepoints(const SyscallTracepointIds& ids);
  [[nodiscard]] std::uint64_t untracked_phases() const;  // summed over the CPUs
  void sweep_syscalls();

  RecordSink sink_;
  std::exception_ptr sink_error_;
  bool per_syscall_tracepoints_ = false;
  std::size_t possible_cpus_ = 0;  // values in a per-CPU map entry
  UsdtAttachment usdt_attachment_;
  std::unique_ptr<hacoboot_bpf, SkeletonDeleter> skeleton_;
  // Index: PhaseProbeId. A detached one stays, empty.
  std::vector<PhaseProbe> phase_probes_;
  std::vector<UnprobedExec> unprobed_execs_;
  std::unique_ptr<ring_buffer, RingBufferDeleter> ring_buffer_;
  std::unique_ptr<CpuSampling> sampling_;  // with kernel_profile_hz
  // The syscall map as last read whole (take_syscalls), by launch.
  struct SyscallSweep {
    std::uint64_t started_ns = 0;  // CLOCK_MONOTONIC, the records' clock
    // An empty entry is a launch of an earlier sweep still in flight: its vector is reused.
    std::unordered_map<std::uint32_t, std::vector<std::pair<hacoboot_syscall_key, hacoboot_syscall_totals>>> by_launch;
    std::vector<hacoboot_syscall_key> keys;  // the batches' buffers
    std::vector<hacoboot_syscall_totals> values;
  };
  static constexpr std::uint64_t kNoRecord = ~std::uint64_t{0};
  SyscallSweep syscall_sweep_;
  // The time of the record the sink is handed; kNoRecord outside (finish()).
  std::uint64_t current_record_ns_ = kNoRecord;
  std::unordered_set<std::uint32_t> taken_launches_;
  std::deque<std::uint32_t> taken_order_;
  // The stack ids the last take of each kind read, deleted at the next one
  // if no entry refers to them then (delete_unused_stacks).
  std::unordered_set<std::uint32_t> blocking_stacks_read_;
  std::unordered_set<std::uint32_t> sample_stacks_read_;
  // The most entries the walks of the aggregation maps met (map_use).
  struct MapPeaks {
    std::uint64_t syscalls = 0;
    std::uint64_t blocking = 0;
    std::uint64_t samples = 0;
    std::uint64_t stacks = 0;  // distinct stack ids the entries referred to
  };
  MapPeaks map_peaks_;
  bool syscalls_accounted_ = false;
};

}  // namespace hacoboot
