#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hacoboot {

// What the BPF side needs of the kernel, and the Linux release that brought
// each: the table docs/kernel-requirements.md gives and --check applies.

struct KernelVersion {
  int major = 0;
  int minor = 0;
  auto operator<=>(const KernelVersion&) const = default;
};

// "6.18.44-fc-v1045" -> 6.18; nullopt for what is no release.
std::optional<KernelVersion> parse_kernel_release(std::string_view release);
// uname's release of the running kernel.
std::string running_kernel_release();

struct KernelFeature {
  std::string_view name;
  KernelVersion since;
  std::string_view needed_for;
  // What the tool does without it; empty: it cannot trace.
  std::string_view without;
};

inline constexpr std::array<KernelFeature, 8> kKernelFeatures{{
    {"kernel BTF in /sys/kernel/btf", {5, 4}, "CO-RE: the kernel's type layout", "--btf FILE"},
    {"BPF ring buffer", {5, 8}, "every event", ""},
    {"CAP_BPF and CAP_PERFMON", {5, 8}, "tracing without root", "root (CAP_SYS_ADMIN)"},
    {"BPF atomic fetch-and-add", {5, 12}, "the threads each launch lists", ""},
    {"bpf_for_each_map_elem", {5, 13}, "ending a launch's accounting", ""},
    {"bpf_loop", {5, 17}, "ending a launch's accounting, the ancestry of --pid and --run", ""},
    {"sched_switch's prev_state", {5, 18}, "scheduler states", ""},
    {"uprobe_multi links", {6, 6}, "one link for the probe, a fast exit", "perf uprobes"},
}};

// The newest release a feature the tool cannot do without came with.
inline constexpr KernelVersion kOldestKernel{5, 18};

// Whether the kernel has a BPF ring buffer, by a map created and closed;
// nullopt when the probe itself failed. Without CAP_BPF the creation is
// refused, which reads as "no": ask only a process that may trace.
std::optional<bool> kernel_has_ring_buffer();

// The largest --btf file read. libbpf reads a raw BTF file whole into
// memory, and copies it while parsing: an unbounded file (a sparse one of
// gigabytes) would take that much memory and time before any message. A
// kernel's own BTF is a few MiB (all of its types, modules excluded); this
// leaves room for the biggest kernels, not for a vmlinux with its DWARF
// (its .BTF section is extracted with objcopy, see the man page).
inline constexpr std::uint64_t kMaxBtfFileBytes = std::uint64_t{64} << 20;

// What is wrong with `path` as the kernel types of the programs (--btf): its
// size, its format (raw BTF, as /sys/kernel/btf/vmlinux and BTFHub's files,
// or an ELF file with a .BTF section), parsed the way the load will parse
// it; a kernel's types have the task_struct the programs read. Nullopt when
// nothing is.
std::optional<std::string> btf_file_problem(const std::string& path);

}  // namespace hacoboot
