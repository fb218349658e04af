#include "capture/tracer.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "capture/capture_errors.hpp"
#include "capture/cpu_sampling.hpp"
#include "capture/kernel_support.hpp"
#include "capture/records_clock.hpp"
#include "capture/usdt_multi_link.hpp"
#include "hacoboot/contract.h"  // the skeleton's .bss holds a struct hacoboot_counters
#include "util/errors.hpp"
#include "util/text.hpp"

// clang++ has no _Bool; the skeleton's kconfig struct (from usdt.bpf.h) uses it.
#ifdef __clang__
#define _Bool bool  // NOLINT
#endif
#include "hacoboot.skel.h"
#ifdef __clang__
#undef _Bool
#endif

namespace hacoboot {
namespace {

bool g_verbose = false;

// Quiet unless -v, warnings included: our own error message says what failed.
// The log quotes paths (the binary, --btf): escaped as every message is.
int print_libbpf(enum libbpf_print_level /*level*/, const char* format, va_list args) {
  if (!g_verbose) return 0;
  va_list measuring;
  va_copy(measuring, args);
  const int length = std::vsnprintf(nullptr, 0, format, measuring);
  va_end(measuring);
  if (length < 0) return length;
  std::string text(static_cast<std::size_t>(length) + 1, '\0');
  (void)std::vsnprintf(text.data(), text.size(), format, args);
  text.pop_back();
  return std::fputs(printable_lines(text).c_str(), stderr);
}

// libbpf's own codes (4000 and up: "Invalid format"...) included.
std::string errno_text(int error) {
  std::array<char, 128> text{};
  libbpf_strerror(error < 0 ? -error : error, text.data(), text.size());
  return text.data();
}

// What the kernel refused says why on a kernel older than the oldest the
// tool supports: its bare errno would not. "" on a kernel new enough.
std::string older_kernel_hint() {
  const auto release = running_kernel_release();
  const auto version = parse_kernel_release(release);
  if (!version || *version >= kOldestKernel) return "";
  return "; this kernel, Linux " + printable(release) + ", is older than " + std::to_string(kOldestKernel.major) + "." +
         std::to_string(kOldestKernel.minor) +
         ", the oldest this tool supports (hacoboot-sampler check says what it lacks)";
}

// What failed, why, and what to do.
std::string failure_text(const std::string& what, int error) {
  const int code = error < 0 ? -error : error;
  std::string message = what + ": " + errno_text(code);
  if (code == EPERM || code == EACCES) message += " (needs root or CAP_BPF+CAP_PERFMON: run it with sudo)";
  return message + " (-v shows libbpf's log)" + older_kernel_hint();
}

[[noreturn]] void fail(const std::string& what, int error) {
  throw RuntimeError(failure_text(what, error));
}

const std::string& name_of(const Tracer::Config& config) {
  return config.haconiwa_name.empty() ? config.haconiwa_path : config.haconiwa_name;
}

// The ring buffer's size must be a power of two multiple of the page size.
std::size_t ring_buffer_size(std::size_t wanted) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t size = page;
  while (size < wanted) size <<= 1U;
  return size;
}

// A BPF program on a tracepoint by its perf event id: what libbpf's own
// attach does, minus reading the id from tracefs (which may not be mounted).
// An id no tracepoint has fails to open; the kernel refuses the program on a
// tracepoint whose record is shorter than what the program reads.
Expected<bpf_link*, StartFailure> attach_to_tracepoint(bpf_program* program, int id, const char* name) {
  const auto refused = [&](const char* what, int error) {
    return StartFailure{.kind = StartFailureKind::SyscallTracepoints,
                        .why = std::string(what) + " tracepoint id " + std::to_string(id) + " as syscalls:" + name +
                               ": " + errno_text(error)};
  };
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.size = sizeof(attr);
  attr.config = static_cast<__u64>(id);
  attr.sample_period = 1;  // NOLINT(cppcoreguidelines-pro-type-union-access): perf_event_attr's C layout
  attr.wakeup_events = 1;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  // pid -1, cpu 0: a tracepoint's BPF program runs on every CPU for every task.
  const long fd = ::syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return refused("opening", errno);
  bpf_link* link = bpf_program__attach_perf_event(program, static_cast<int>(fd));
  if (link == nullptr) {
    const int err = errno;
    ::close(static_cast<int>(fd));
    return refused("attaching to", err);
  }
  return link;  // owns the perf event fd from now on
}

// The phase probe's sites planned for one uprobe_multi link, or why libbpf's
// perf uprobes must do: a kernel before 6.6, arguments only libbpf locates;
// "" when they were asked for. Throws UprobeMultiError when the link was.
Expected<UsdtMultiAttach> plan_phase_probe(const Tracer::Config& config) {
  if (config.usdt_attach == UsdtAttach::Perf) return Failure{""};
  auto plan = kernel_has_uprobe_multi()
                  ? plan_usdt_multi_attach(config.haconiwa_path, name_of(config), config.phase_probe_sites)
                  : Failure{"the kernel has no uprobe_multi links (Linux 6.6+)"};
  if (!plan && config.usdt_attach == UsdtAttach::UprobeMulti) throw UprobeMultiError(plan.error(), false);
  return plan;
}

}  // namespace

KernelFileId kernel_file_id(dev_t device, ino_t inode) {
  // The kernel's dev_t keeps the minor number in its low 20 bits.
  constexpr unsigned kMinorBits = 20;
  return {.device = (static_cast<std::uint64_t>(major(device)) << kMinorBits) | minor(device), .inode = inode};
}

std::span<const std::byte> Tracer::bpf_object() {
  std::size_t size = 0;
  const void* bytes = hacoboot_bpf::elf_bytes(&size);
  return {static_cast<const std::byte*>(bytes), size};
}

void Tracer::SkeletonDeleter::operator()(hacoboot_bpf* skeleton) const {
  hacoboot_bpf__destroy(skeleton);
}

void Tracer::RingBufferDeleter::operator()(ring_buffer* rb) const {
  ring_buffer__free(rb);
}

void Tracer::LinkDeleter::operator()(bpf_link* link) const {
  bpf_link__destroy(link);
}

Tracer::Tracer(RecordSink sink) : sink_(std::move(sink)) {}

Tracer::Tracer(const Config& config, RecordSink sink) : Tracer(std::move(sink)) {
  if (auto started = start_up(config); !started) throw RuntimeError(started.error().why);
}

Expected<std::unique_ptr<Tracer>, StartFailure> Tracer::start(const Config& config, RecordSink sink) {
  std::unique_ptr<Tracer> tracer(new Tracer(std::move(sink)));  // a private constructor: no make_unique
  if (auto started = tracer->start_up(config); !started) return started.error();
  return tracer;
}

Expected<void, StartFailure> Tracer::start_up(const Config& config) {
  g_verbose = config.verbose;
  libbpf_set_print(print_libbpf);

  LIBBPF_OPTS(bpf_object_open_opts, open_options);
  if (!config.core_btf.empty()) open_options.btf_custom_path = config.core_btf.c_str();
  skeleton_.reset(hacoboot_bpf__open_opts(&open_options));
  if (!skeleton_) fail("opening the BPF object", errno);

  choose_syscall_programs(config);
  choose_state_programs(config);
  const auto phase_probe = plan_phase_probe(config);
  if (phase_probe) {
    bpf_program__set_expected_attach_type(skeleton_->progs.on_phase,
                                          static_cast<bpf_attach_type>(kUprobeMultiAttachType));
  }
  const std::size_t rb_size = ring_buffer_size(config.ring_buffer_bytes);
  if (const int err = bpf_map__set_max_entries(skeleton_->maps.events, static_cast<__u32>(rb_size)); err != 0) {
    fail("sizing the ring buffer", err);
  }
  // Preallocated by the kernel: only the syscall accounting and the kernel
  // profile take stacks.
  const __u32 stacks = (config.account_syscalls ? HACOBOOT_MAX_STACKS : 0U) +
                       (config.kernel_profile_hz != 0 ? HACOBOOT_MAX_SAMPLED_STACKS : 0U);
  if (const int err = bpf_map__set_max_entries(skeleton_->maps.blocking_stacks, std::max(stacks, 1U)); err != 0) {
    fail("sizing the stack map", err);
  }
  // Wake the reader early once a quarter is used; it reads on a timer before that.
  skeleton_->rodata->wakeup_bytes = rb_size / 4;
  skeleton_->rodata->watched_tgid = config.watched_pid;
  skeleton_->rodata->wake_on_settle = config.wake_on_settle;
  skeleton_->rodata->wake_on_start = config.kernel_profile_hz != 0;
  watch_haconiwa_path(config);

  const int cpus = libbpf_num_possible_cpus();
  if (cpus < 0) fail("counting the possible CPUs", cpus);
  possible_cpus_ = static_cast<std::size_t>(cpus);

  if (const int err = hacoboot_bpf__load(skeleton_.get()); err != 0) {
    return StartFailure{.kind = StartFailureKind::ProgramLoad, .why = failure_text("loading the BPF programs", err)};
  }
  if (const int err = hacoboot_bpf__attach(skeleton_.get()); err != 0) {
    fail("attaching to the kernel's fork/exec/exit tracepoints", err);
  }
  if (auto hooked = attach_syscall_hooks(config); !hooked) return hooked;
  attach_first_phase_probe(config, phase_probe);
  if (config.kernel_profile_hz != 0) {
    sampling_ = std::make_unique<CpuSampling>(skeleton_->progs.on_cpu_sample, possible_cpus_, config.kernel_profile_hz);
  }

  ring_buffer_.reset(ring_buffer__new(bpf_map__fd(skeleton_->maps.events), on_record, this, nullptr));
  if (!ring_buffer_) fail("opening the ring buffer", errno);
  return {};
}

// Two ways of seeing execve and listen: the per-syscall tracepoints, or the
// raw_syscalls fallback. The tracepoint programs are loaded only while their
// ids are still being looked up (in parallel with the load) or known. The
// raw ones time every syscall of the accounted threads (--syscalls), and see
// execve and listen when the tracepoints are not (attach_syscall_hooks):
// loaded unless neither can be, which saves the verifier two of its longest
// programs at an everyday start (ids from the cache, no --syscalls). Ids that
// then prove wrong fail the start, whose next attempt loads them
// (start_retries).
void Tracer::choose_syscall_programs(const Config& config) {
  auto& progs = skeleton_->progs;
  auto* lookup = config.syscall_tracepoints;
  for (bpf_program* program : {progs.on_execve, progs.on_listen_exit}) {
    bpf_program__set_autoload(program, lookup != nullptr);
    bpf_program__set_autoattach(program, false);
  }
  const bool tracepoints_known = lookup != nullptr && lookup->ready() && lookup->result().has_value();
  for (bpf_program* program : {progs.on_sys_enter, progs.on_sys_exit}) {
    bpf_program__set_autoload(program, config.account_syscalls || !tracepoints_known);
    bpf_program__set_autoattach(program, false);
  }
  // A constant the verifier prunes by. Without --syscalls no aggregate is
  // ever made, of syscalls or of blocked time: a hash map's buckets cost its
  // creation time in proportion to its size.
  skeleton_->rodata->account_syscalls = config.account_syscalls;
  if (!config.account_syscalls) {
    for (bpf_map* map : {skeleton_->maps.syscall_aggregates, skeleton_->maps.blocking_aggregates}) {
      (void)bpf_map__set_max_entries(map, 1);
    }
  }
  // Attached by CpuSampling, only with --kernel-profile.
  bpf_program__set_autoload(progs.on_cpu_sample, config.kernel_profile_hz != 0);
  bpf_program__set_autoattach(progs.on_cpu_sample, false);
  if (config.kernel_profile_hz == 0) (void)bpf_map__set_max_entries(skeleton_->maps.kernel_samples, 1);
}

// Without the states, the scheduler hooks would only return, and the maps
// of accounted threads stay empty: neither is worth its start-up time.
void Tracer::choose_state_programs(const Config& config) {
  const bool states = config.account_states || config.account_syscalls;
  skeleton_->rodata->account_states = states;
  if (states) return;
  for (bpf_program* program : {skeleton_->progs.on_sched_switch, skeleton_->progs.on_sched_waking}) {
    bpf_program__set_autoload(program, false);
  }
  for (bpf_map* map : {skeleton_->maps.threads, skeleton_->maps.accounted_launches}) {
    (void)bpf_map__set_max_entries(map, 1);
  }
}

Expected<void, StartFailure> Tracer::attach_syscall_hooks(const Config& config) {
  bool tracepoints = false;
  if (auto* lookup = config.syscall_tracepoints) {
    const auto& ids = lookup->result();
    if (ids) {
      if (auto attached = attach_syscall_tracepoints(*ids); !attached) return attached;
      tracepoints = true;
    } else if (!config.raw_syscalls_fallback) {
      return StartFailure{.kind = StartFailureKind::SyscallTracepoints, .why = ids.error()};
    }
  }
  // Before the raw hooks run: they must not see execve and listen twice.
  __atomic_store_n(&skeleton_->bss->milestones_from_raw_syscalls, !tracepoints, __ATOMIC_SEQ_CST);
  syscalls_accounted_ = config.account_syscalls;
  if (tracepoints && !config.account_syscalls) return {};
  auto& links = skeleton_->links;
  links.on_sys_enter = bpf_program__attach(skeleton_->progs.on_sys_enter);
  if (links.on_sys_enter == nullptr) fail("attaching to raw_syscalls:sys_enter", errno);
  links.on_sys_exit = bpf_program__attach(skeleton_->progs.on_sys_exit);
  if (links.on_sys_exit == nullptr) fail("attaching to raw_syscalls:sys_exit", errno);
  return {};
}

// The kernel side catches execs of new files at the haconiwa binary's path
// (an upgrade's) only when told where it is.
void Tracer::watch_haconiwa_path(const Config& config) {
  if (!config.watched_path || config.watched_path->name.size() >= HACOBOOT_WATCHED_NAME_LEN) return;
  auto* rodata = skeleton_->rodata;
  rodata->watched_dir_device = config.watched_path->directory.device;
  rodata->watched_dir_inode = config.watched_path->directory.inode;
  std::copy(config.watched_path->name.begin(), config.watched_path->name.end(), std::begin(rodata->watched_name));
  rodata->hold_unprobed_execs = config.hold_unprobed_execs;
}

void Tracer::attach_first_phase_probe(const Config& config, const Expected<UsdtMultiAttach>& plan) {
  if (plan) {
    phase_probes_.push_back(value_or_throw<RuntimeError>(attach_multi(*plan)));
    usdt_attachment_ = {.uprobe_multi = true, .why_not_uprobe_multi = {}};
    return;
  }
  // pid -1: a per-process uprobe would miss the phases of forked children.
  PhaseProbe probe;
  probe.perf_link.reset(bpf_program__attach_usdt(skeleton_->progs.on_phase, -1, config.haconiwa_path.c_str(),
                                                 "haconiwa", "bootstrap_phase_pass", nullptr));
  if (!probe.perf_link) fail("attaching USDT haconiwa:bootstrap_phase_pass in " + name_of(config), errno);
  phase_probes_.push_back(std::move(probe));
  usdt_attachment_ = {.uprobe_multi = false, .why_not_uprobe_multi = plan.error()};
}

// The first free range of `wanted` spec ids below `capacity`: a detached
// probe's range is taken again.
Expected<std::uint32_t> Tracer::free_spec_ids(std::size_t wanted, std::uint32_t capacity) const {
  std::uint32_t first = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (const auto& probe : phase_probes_) {
      const bool overlaps = probe.multi_link.valid() && first < probe.first_spec_id + probe.spec_ids &&
                            probe.first_spec_id < first + wanted;
      if (overlaps) {
        first = probe.first_spec_id + probe.spec_ids;
        moved = true;
      }
    }
  }
  if (first + wanted > capacity) {
    return Failure{"no room left for the probe's sites (" + std::to_string(capacity) + " USDT specs at most)"};
  }
  return first;
}

Expected<Tracer::PhaseProbe> Tracer::attach_multi(const UsdtMultiAttach& plan) {
  // The object as built: without its spec map no probe could ever attach.
  const bpf_map* specs = bpf_object__find_map_by_name(skeleton_->obj, "__bpf_usdt_specs");
  if (specs == nullptr) throw RuntimeError("the BPF object has no USDT spec map");
  const auto first_spec_id = free_spec_ids(plan.sites.size(), bpf_map__max_entries(specs));
  if (!first_spec_id) return Failure{first_spec_id.error()};
  auto link = attach_usdt_multi(bpf_program__fd(skeleton_->progs.on_phase), bpf_map__fd(specs),
                                bpf_map__value_size(specs), plan, *first_spec_id);
  if (!link) return Failure{link.error()};
  PhaseProbe probe;
  probe.first_spec_id = *first_spec_id;
  probe.spec_ids = static_cast<std::uint32_t>(plan.sites.size());
  probe.multi_link = std::move(*link);
  return probe;
}

Expected<PhaseProbeId> Tracer::attach_phase_probe_to(const std::string& binary, const std::string& name,
                                                     const std::vector<UsdtProbe>& sites) {
  if (usdt_attachment_.uprobe_multi) {
    // libbpf's perf uprobes cannot join: its manager would hand out the spec
    // ids the links use.
    const auto plan = plan_usdt_multi_attach(binary, name, sites);
    if (!plan) return Failure{name + ": " + plan.error()};
    auto probe = attach_multi(*plan);
    if (!probe) return Failure{probe.error()};
    phase_probes_.push_back(std::move(*probe));
  } else {
    // libbpf's USDT manager gives these sites spec ids of their own.
    PhaseProbe probe;
    probe.perf_link.reset(bpf_program__attach_usdt(skeleton_->progs.on_phase, -1, binary.c_str(), "haconiwa",
                                                   "bootstrap_phase_pass", nullptr));
    if (!probe.perf_link)
      return Failure{failure_text("attaching USDT haconiwa:bootstrap_phase_pass in " + name, errno)};
    phase_probes_.push_back(std::move(probe));
  }
  return phase_probes_.size() - 1;
}

void Tracer::detach_phase_probe(PhaseProbeId probe) {
  phase_probes_.at(probe) = PhaseProbe{};
}

void Tracer::mark_probed(const KernelFileId& file) {
  const hacoboot_file_id key{.device = file.device, .inode = file.inode};
  const std::uint8_t probed = 1;
  if (bpf_map__update_elem(skeleton_->maps.probed_files, &key, sizeof key, &probed, sizeof probed, BPF_ANY) != 0) {
    fail("noting a file the probe is on", errno);
  }
}

int Tracer::ready_fd() const {
  return ring_buffer__epoll_fd(ring_buffer_.get());
}

Expected<void, StartFailure> Tracer::attach_syscall_tracepoints(const SyscallTracepointIds& ids) {
  auto& progs = skeleton_->progs;
  auto& links = skeleton_->links;
  const auto execve = attach_to_tracepoint(progs.on_execve, ids.execve_enter, "sys_enter_execve");
  if (!execve) return execve.error();
  links.on_execve = *execve;
  const auto listen = attach_to_tracepoint(progs.on_listen_exit, ids.listen_exit, "sys_exit_listen");
  if (!listen) return listen.error();
  links.on_listen_exit = *listen;
  if (auto proven = prove_syscall_tracepoints(ids); !proven) return proven;
  per_syscall_tracepoints_ = true;
  return {};
}

// Another tracepoint's id may attach fine: each hook must see the tool's own
// call. execve("") fails at once (ENOENT) and listen(-1, 0) too (EBADF):
// nothing runs, nothing listens, but both pass their tracepoints. The
// programs note a call of this thread with the right syscall number and
// arguments (so neither the other end of the syscall nor another one's
// tracepoint passes).
Expected<void, StartFailure> Tracer::prove_syscall_tracepoints(const SyscallTracepointIds& ids) {
  auto* bss = skeleton_->bss;
  constexpr const char* kNoProgram = "";
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the BPF side compares the pointer's value
  bss->self_check_filename = reinterpret_cast<std::uintptr_t>(kNoProgram);
  __atomic_store_n(&bss->self_check_tid, static_cast<__u32>(::gettid()), __ATOMIC_SEQ_CST);
  std::array<char*, 1> no_arguments{};
  (void)::execve(kNoProgram, no_arguments.data(), no_arguments.data());
  (void)::listen(-1, 0);  // NOLINT(clang-analyzer-unix.StdCLibraryFunctions): fails on purpose, see above
  __atomic_store_n(&bss->self_check_tid, 0, __ATOMIC_SEQ_CST);
  const auto missed = [](const char* name, int id, const char* call) {
    return StartFailure{.kind = StartFailureKind::SyscallTracepoints,
                        .why = "tracepoint id " + std::to_string(id) + " is not syscalls:" + name +
                               ": its hook missed the tool's own " + call};
  };
  if (__atomic_load_n(&bss->self_check_execve_seen, __ATOMIC_SEQ_CST) == 0) {
    return missed("sys_enter_execve", ids.execve_enter, "execve");
  }
  if (__atomic_load_n(&bss->self_check_listen_seen, __ATOMIC_SEQ_CST) == 0) {
    return missed("sys_exit_listen", ids.listen_exit, "listen");
  }
  return {};
}

Tracer::~Tracer() {
  if (!skeleton_) return;
  // Every detach waits for RCU grace periods (a perf event's two, one of
  // them under a kernel-wide mutex; BENCHMARKS.md): detached at once,
  // the links overlap what they can, and Ctrl-C -> exit stays short. The
  // skeleton then destroys what is left (maps, programs).
  auto& links = skeleton_->links;
  std::vector<std::thread> detaching;
  for (auto& probe : phase_probes_) {
    if (probe.attached()) detaching.emplace_back([gone = std::move(probe)]() mutable { gone = PhaseProbe{}; });
  }
  for (bpf_link** link : {&links.on_fork, &links.on_exec, &links.on_exit, &links.on_sys_enter, &links.on_sys_exit,
                          &links.on_execve, &links.on_listen_exit, &links.on_sched_switch, &links.on_sched_waking}) {
    if (*link != nullptr) detaching.emplace_back(bpf_link__destroy, std::exchange(*link, nullptr));
  }
  if (sampling_) {
    for (bpf_link* link : sampling_->release_links()) detaching.emplace_back(bpf_link__destroy, link);
  }
  for (auto& thread : detaching) thread.join();
}

int Tracer::on_record(void* self, void* data, std::size_t size) {
  auto* tracer = static_cast<Tracer*>(self);
  const std::span<const std::byte> record(static_cast<const std::byte*>(data), size);
  // Exceptions must not unwind through libbpf's C frames.
  try {
    if (size >= HACOBOOT_UNPROBED_EXEC_EVENT_SIZE &&
        static_cast<const hacoboot_event*>(data)->kind == HACOBOOT_EV_UNPROBED_EXEC) {
      tracer->on_unprobed_exec(record);
      return 0;
    }
    // A boot ended by this record is whole in a sweep begun after it.
    tracer->current_record_ns_ = size >= sizeof(std::uint64_t) ? static_cast<const hacoboot_event*>(data)->ts_ns : 0;
    tracer->sink_(record);
    tracer->current_record_ns_ = kNoRecord;
    return 0;
  } catch (...) {
    tracer->current_record_ns_ = kNoRecord;
    tracer->sink_error_ = std::current_exception();
    return -1;
  }
}

// The loader's, not a boot's: kept for take_unprobed_execs.
void Tracer::on_unprobed_exec(std::span<const std::byte> record) {
  hacoboot_event event{};
  std::memcpy(&event, record.data(), HACOBOOT_UNPROBED_EXEC_EVENT_SIZE);
  const auto& unprobed = event.unprobed;  // NOLINT(cppcoreguidelines-pro-type-union-access): the record's kind says
  unprobed_execs_.push_back(
      {.pid = event.pid, .file = {.device = unprobed.device, .inode = unprobed.inode}, .held = unprobed.held != 0});
}

void Tracer::poll(std::chrono::milliseconds timeout) {
  int err = ring_buffer__poll(ring_buffer_.get(), static_cast<int>(timeout.count()));
  // Producers skip the wakeup until the buffer fills: read what they left.
  if (err >= 0 || err == -EINTR) err = ring_buffer__consume(ring_buffer_.get());
  if (sink_error_) std::rethrow_exception(std::exchange(sink_error_, nullptr));
  if (err < 0 && err != -EINTR) fail("reading the ring buffer", err);
  // After the records: a boot begun since the last poll is sampled from now.
  if (sampling_) sampling_->follow(accounted_threads() > 0);
}

void Tracer::release_holds() {
  __atomic_store_n(&skeleton_->bss->holds_released, 1U, __ATOMIC_SEQ_CST);
  // A program that read the flag before it was set submits its record a
  // few microseconds later, with a wakeup: a short wait sees it, and adds
  // little to the exit.
  constexpr std::chrono::milliseconds kInFlight(1);
  poll(kInFlight);
}

std::uint64_t Tracer::tracked_processes() const {
  const int fd = bpf_map__fd(skeleton_->maps.tracked);
  std::uint64_t count = 0;
  __u32 key = 0;
  const void* previous = nullptr;
  while (bpf_map_get_next_key(fd, previous, &key) == 0) {
    ++count;
    previous = &key;
  }
  return count;
}

std::uint64_t Tracer::accounted_threads() const {
  return __atomic_load_n(&skeleton_->bss->threads_alive, __ATOMIC_RELAXED);
}

std::uint64_t Tracer::untracked_phases() const {
  std::vector<std::uint64_t> per_cpu(possible_cpus_);
  const __u32 key = 0;
  if (bpf_map__lookup_elem(skeleton_->maps.untracked_phases, &key, sizeof key, per_cpu.data(),
                           per_cpu.size() * sizeof(std::uint64_t), 0) != 0) {
    fail("reading the untracked phase count", errno);
  }
  return std::accumulate(per_cpu.begin(), per_cpu.end(), std::uint64_t{0});
}

TracerCounters Tracer::counters() const {
  const auto& counters = skeleton_->bss->counters;
  return TracerCounters{.lost_events = __atomic_load_n(&counters.lost_events, __ATOMIC_RELAXED),
                        .tracked_full = __atomic_load_n(&counters.tracked_full, __ATOMIC_RELAXED),
                        .unaccounted_threads = __atomic_load_n(&counters.unaccounted_threads, __ATOMIC_RELAXED),
                        .untracked_phases = untracked_phases(),
                        .repaired_switch_ins = __atomic_load_n(&counters.repaired_switch_ins, __ATOMIC_RELAXED),
                        .syscalls_dropped = __atomic_load_n(&counters.syscalls_dropped, __ATOMIC_RELAXED),
                        .blocking_dropped = __atomic_load_n(&counters.blocking_dropped, __ATOMIC_RELAXED),
                        .stacks_dropped = __atomic_load_n(&counters.stacks_dropped, __ATOMIC_RELAXED),
                        .samples_dropped = __atomic_load_n(&counters.samples_dropped, __ATOMIC_RELAXED)};
}

std::vector<MapFill> Tracer::map_use() const {
  if (!syscalls_accounted_) return {};
  const auto& maps = skeleton_->maps;
  std::vector<MapFill> fills{
      {"syscall_aggregates", map_peaks_.syscalls, bpf_map__max_entries(maps.syscall_aggregates)},
      {"blocking_aggregates", map_peaks_.blocking, bpf_map__max_entries(maps.blocking_aggregates)},
      {"blocking_stacks", map_peaks_.stacks, bpf_map__max_entries(maps.blocking_stacks)}};
  if (sampling_) fills.push_back({"kernel_samples", map_peaks_.samples, bpf_map__max_entries(maps.kernel_samples)});
  return fills;
}

namespace {

// Deletes `keys` from the syscall map: a boot's, taken, or left over.
void delete_syscall_keys(int fd, std::vector<hacoboot_syscall_key>& keys) {
  if (keys.empty()) return;
  auto count = static_cast<__u32>(keys.size());
  if (bpf_map_delete_batch(fd, keys.data(), &count, nullptr) != 0) fail("deleting syscall aggregates", errno);
}

}  // namespace

// The whole map in batches, grouped by launch. Entries of launches taken
// before (written after their sweep, in the instant between an exit's
// last charge and its record) are deleted here.
void Tracer::sweep_syscalls() {
  constexpr __u32 kBatch = 1024;
  const int fd = bpf_map__fd(skeleton_->maps.syscall_aggregates);
  // Kept from sweep to sweep: a busy host sweeps several times a second,
  // and the tool's heap must not fragment with the boots it saw.
  auto& keys = syscall_sweep_.keys;
  auto& values = syscall_sweep_.values;
  keys.resize(kBatch);
  values.resize(kBatch);
  std::vector<hacoboot_syscall_key> left_over;
  syscall_sweep_.started_ns = monotonic_ns();
  for (auto& [launch, entries] : syscall_sweep_.by_launch) entries.clear();
  // In and out: the kernel's position in the map.
  hacoboot_syscall_key in_token{};
  hacoboot_syscall_key out_token{};
  std::uint64_t entries = 0;
  for (bool first = true;; first = false) {
    __u32 count = kBatch;
    const int err =
        bpf_map_lookup_batch(fd, first ? nullptr : &in_token, &out_token, keys.data(), values.data(), &count, nullptr);
    const int error = errno;
    entries += std::min(count, kBatch);
    for (__u32 i = 0; i < count && i < kBatch; ++i) {
      if (taken_launches_.contains(keys[i].launch)) {
        left_over.push_back(keys[i]);
      } else {
        syscall_sweep_.by_launch[keys[i].launch].emplace_back(keys[i], values[i]);
      }
    }
    if (err != 0) {
      if (error == ENOENT) break;  // the end of the map
      fail("reading the syscall aggregates", error);
    }
    in_token = out_token;
  }
  map_peaks_.syscalls = std::max(map_peaks_.syscalls, entries);
  delete_syscall_keys(fd, left_over);
}

// One sweep serves every boot that ended before it began: under load, many
// boots end between two polls, and the map holds every boot in flight.
std::vector<std::byte> Tracer::take_syscalls(std::uint32_t launch) {
  if (current_record_ns_ == kNoRecord || syscall_sweep_.started_ns <= current_record_ns_) sweep_syscalls();
  std::vector<std::byte> taken;
  std::vector<hacoboot_syscall_key> keys;
  if (auto found = syscall_sweep_.by_launch.extract(launch)) {
    for (const auto& [key, totals] : found.mapped()) {
      keys.push_back(key);
      const auto* key_bytes = reinterpret_cast<const std::byte*>(&key);        // NOLINT: the contract's layout
      const auto* totals_bytes = reinterpret_cast<const std::byte*>(&totals);  // NOLINT
      taken.insert(taken.end(), key_bytes, key_bytes + sizeof key);
      taken.insert(taken.end(), totals_bytes, totals_bytes + sizeof totals);
    }
  }
  delete_syscall_keys(bpf_map__fd(skeleton_->maps.syscall_aggregates), keys);
  // Remembered for a while: what is written for it after this sweep goes at the next.
  constexpr std::size_t kRememberedLaunches = 4096;
  if (taken_launches_.insert(launch).second) taken_order_.push_back(launch);
  if (taken_order_.size() > kRememberedLaunches) {
    taken_launches_.erase(taken_order_.front());
    taken_order_.pop_front();
  }
  return taken;
}

namespace {

template <typename T>
void append_bytes(std::vector<std::byte>& out, const T& value) {
  const auto* bytes = reinterpret_cast<const std::byte*>(&value);  // NOLINT: the contract's layout
  out.insert(out.end(), bytes, bytes + sizeof value);
}

// A stack id the kernel side took, not one of the ids that stand for none.
bool is_stack(std::uint32_t id) {
  return id != HACOBOOT_NO_STACK && id != HACOBOOT_USER_MODE;
}

// The addresses of stack `id`, innermost first; none when it is no stack or
// was deleted meanwhile (a clash with another launch's take: rare, shown as
// a block without frames).
std::vector<std::uint64_t> stack_frames(int fd, std::uint32_t id) {
  std::vector<std::uint64_t> frames(HACOBOOT_STACK_DEPTH);
  if (!is_stack(id) || bpf_map_lookup_elem(fd, &id, frames.data()) != 0) {
    return {};
  }
  frames.erase(std::find(frames.begin(), frames.end(), 0U), frames.end());
  return frames;
}

// Adds the stack ids the entries of the other map that takes stacks (its
// key `Key`) refer to: a stack of the same path has one id in both.
template <typename Key>
void add_stacks_in_use(int fd, std::unordered_set<std::uint32_t>& in_use) {
  Key key{};
  const void* previous = nullptr;
  while (bpf_map_get_next_key(fd, previous, &key) == 0) {
    previous = &key;
    in_use.insert(key.stack_id);
    if constexpr (requires { key.waker_stack_id; }) in_use.insert(key.waker_stack_id);
  }
}

// The stacks read at the previous take (`deferred`) that no entry refers to
// now are deleted, and those read at this one (`read`) wait for the next: a
// thread of another boot blocked at one of them since before this take has
// no entry yet, and gets one once woken, before the next take. Returns how
// many stacks the map held (its fill).
std::uint64_t delete_unused_stacks(int stacks_fd, std::unordered_set<std::uint32_t>& deferred,
                                   std::unordered_set<std::uint32_t> read,
                                   const std::unordered_set<std::uint32_t>& in_use) {
  std::unordered_set<std::uint32_t> held(in_use);
  held.insert(read.begin(), read.end());
  held.insert(deferred.begin(), deferred.end());
  const auto fill = static_cast<std::uint64_t>(std::count_if(held.begin(), held.end(), is_stack));
  for (const auto id : deferred) {
    if (is_stack(id) && !in_use.contains(id) && !read.contains(id)) bpf_map_delete_elem(stacks_fd, &id);
  }
  deferred = std::move(read);
  return fill;
}

}  // namespace

// One walk of the map (a boot has some tens of entries, the boots in flight
// a few hundred): the launch's entries taken, those of launches taken before
// (written in the instant after their take) deleted, the stack ids of the
// rest kept in the stack map. A stack that a thread of a boot in flight is
// blocked at right now has no entry yet, and a stack map keyed by id has no
// reference count: the stacks read here are deleted at the next take, when
// such a block has ended and its entry refers to them (delete_unused_stacks).
std::vector<std::byte> Tracer::take_blocking(std::uint32_t launch) {
  const int fd = bpf_map__fd(skeleton_->maps.blocking_aggregates);
  const int stacks_fd = bpf_map__fd(skeleton_->maps.blocking_stacks);
  std::vector<std::pair<hacoboot_blocking_key, hacoboot_blocking_totals>> taken;
  std::vector<hacoboot_blocking_key> deleted;
  std::unordered_set<std::uint32_t> still_used;
  hacoboot_blocking_key key{};
  const void* previous = nullptr;
  std::uint64_t entries = 0;
  while (bpf_map_get_next_key(fd, previous, &key) == 0) {
    previous = &key;
    ++entries;
    if (key.launch == launch) {
      hacoboot_blocking_totals totals{};
      if (bpf_map_lookup_elem(fd, &key, &totals) == 0) taken.emplace_back(key, totals);
    } else if (taken_launches_.contains(key.launch)) {
      deleted.push_back(key);
    } else {
      still_used.insert({key.stack_id, key.waker_stack_id});
    }
  }
  // The samples' stacks share the map: theirs are freed as they are taken.
  add_stacks_in_use<hacoboot_sample_key>(bpf_map__fd(skeleton_->maps.kernel_samples), still_used);
  std::vector<std::byte> out;
  std::unordered_set<std::uint32_t> read;  // the stack ids of the deleted entries
  for (const auto& [entry, totals] : taken) {
    const auto frames = stack_frames(stacks_fd, entry.stack_id);
    const auto waker_frames = stack_frames(stacks_fd, entry.waker_stack_id);
    append_bytes(out, entry);
    append_bytes(out, totals);
    append_bytes(out, hacoboot_blocking_frames{.frames = static_cast<unsigned>(frames.size()),
                                               .waker_frames = static_cast<unsigned>(waker_frames.size())});
    for (const auto address : frames) append_bytes(out, address);
    for (const auto address : waker_frames) append_bytes(out, address);
    deleted.push_back(entry);
  }
  for (const auto& gone : deleted) {
    bpf_map_delete_elem(fd, &gone);
    read.insert({gone.stack_id, gone.waker_stack_id});
  }
  map_peaks_.blocking = std::max(map_peaks_.blocking, entries);
  map_peaks_.stacks =
      std::max(map_peaks_.stacks, delete_unused_stacks(stacks_fd, blocking_stacks_read_, std::move(read), still_used));
  return out;
}

// As take_blocking, for the sample entries of one launch.
std::vector<std::byte> Tracer::take_kernel_samples(std::uint32_t launch) {
  const int fd = bpf_map__fd(skeleton_->maps.kernel_samples);
  const int stacks_fd = bpf_map__fd(skeleton_->maps.blocking_stacks);
  std::vector<std::pair<hacoboot_sample_key, std::uint64_t>> taken;
  std::vector<hacoboot_sample_key> deleted;
  std::unordered_set<std::uint32_t> still_used;
  hacoboot_sample_key key{};
  const void* previous = nullptr;
  std::uint64_t entries = 0;
  while (bpf_map_get_next_key(fd, previous, &key) == 0) {
    previous = &key;
    ++entries;
    if (key.launch == launch) {
      std::uint64_t samples = 0;
      if (bpf_map_lookup_elem(fd, &key, &samples) == 0) taken.emplace_back(key, samples);
    } else if (taken_launches_.contains(key.launch)) {
      deleted.push_back(key);
    } else {
      still_used.insert(key.stack_id);
    }
  }
  add_stacks_in_use<hacoboot_blocking_key>(bpf_map__fd(skeleton_->maps.blocking_aggregates), still_used);
  std::vector<std::byte> out;
  std::unordered_set<std::uint32_t> read;
  for (const auto& [entry, samples] : taken) {
    const auto frames = stack_frames(stacks_fd, entry.stack_id);
    append_bytes(out, entry);
    append_bytes(
        out, hacoboot_sample_entry{.samples = samples, .frames = static_cast<unsigned>(frames.size()), .reserved = 0});
    for (const auto address : frames) append_bytes(out, address);
    deleted.push_back(entry);
  }
  for (const auto& gone : deleted) {
    bpf_map_delete_elem(fd, &gone);
    read.insert(gone.stack_id);
  }
  map_peaks_.samples = std::max(map_peaks_.samples, entries);
  map_peaks_.stacks =
      std::max(map_peaks_.stacks, delete_unused_stacks(stacks_fd, sample_stacks_read_, std::move(read), still_used));
  return out;
}

std::optional<std::uint64_t> Tracer::kernel_profile_since(std::uint64_t ns) const {
  return sampling_ ? sampling_->sampling_since(ns) : std::nullopt;
}

}  // namespace hacoboot
