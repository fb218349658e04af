#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "model/phases.hpp"
#include "model/summary.hpp"
#include "util/interface.hpp"

namespace hacoboot {

enum class ReportFormat : std::uint8_t { Table, Bpftrace, Json, Tsv };

// How full one of the kernel side's aggregation maps got in a run (with
// --syscalls): the most entries seen in it at once, of what it holds. The
// loader sees a map's entries only when it takes a boot's, so `peak` is a
// floor: the map held at least that many at some instant.
struct KernelMapUse {
  std::string map;  // the BPF map's name
  std::uint64_t peak = 0;
  std::uint64_t capacity = 0;

  bool operator==(const KernelMapUse&) const = default;
};

// Why the kernel side takes no stack, for the warnings: the stack map holds
// one stack per bucket of its hash, so that a stack whose bucket holds
// another is not taken either (bpf_get_stackid's EEXIST), the map far from
// full (what a busy --kernel-profile meets first).
inline constexpr const char* kStacksNotTaken = "stack map full, or another stack in the same bucket of its hash";

// What the summary reports besides the statistics.
struct RunFacts {
  std::int64_t start_phase = 1;
  std::string command;  // empty: any first execve
  std::uint64_t lost_events = 0;
  // Threads whose scheduler states the kernel side could not account (map full).
  std::uint64_t unaccounted_threads = 0;
  std::uint64_t untracked_phases = 0;  // phase events of launches not seen starting, ignored
  // Switches onto a CPU the kernel side missed and repaired: not a loss.
  std::uint64_t repaired_switch_ins = 0;
  // Syscall or user time the kernel side could not aggregate (map full).
  std::uint64_t syscalls_dropped = 0;
  // Blocked stretches not aggregated (map full), and kernel stacks not taken.
  std::uint64_t blocking_dropped = 0;
  std::uint64_t stacks_dropped = 0;
  // CPU samples not aggregated (map full), with --kernel-profile.
  std::uint64_t samples_dropped = 0;
  std::uint64_t tracked_at_exit = 0;  // processes still tracked in the kernel maps
  // Empty without --syscalls, and in replays of recordings that predate it.
  std::vector<KernelMapUse> kernel_maps{};  // NOLINT(readability-redundant-member-init)
  PhaseNames names{};                       // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
};

// Turns a finished run's summary into one output format. The tracing core
// never formats; the CLI picks a writer once.
class ReportWriter : public Interface {
 public:
  virtual void write(const Summary& summary, const RunFacts& facts, std::ostream& out) const = 0;
};

// What the table shows besides its rows; the other formats show it all.
struct TableDetail {
  bool histograms = false;    // --hist: log2 histograms of execve and listen
  bool all_syscalls = false;  // --all-syscalls: every syscall of each step, not its top 3
};

std::unique_ptr<ReportWriter> make_report_writer(ReportFormat format, TableDetail table = {});

// The layout of `--format json` summaries (docs/outputs.md, "json"); the gate reads
// this one and the older ones.
inline constexpr int kSummarySchema = 8;

// The tool's version ("0.1.0"), as --version prints it.
const char* tool_version();

// The percentiles every format reports.
inline constexpr std::array<double, 3> kReportedPercentiles{50, 90, 99};

// Where and how a failed boot failed, in the words of every format:
// "container exited 1 after 17 CONTAINER_UID_MAPPING_SETUP", "container
// killed by signal 9 (SIGKILL) after execve", "supervisor ended unseen
// (vanished) after 1 START_SV".
std::string describe_failure(const BootFailure& failure, const PhaseNames& names);

// "812 ns", "12.3 us", "7.21 ms", "2.24 s": three significant digits.
std::string format_duration(std::uint64_t ns);
// "+12.3%", "-0.4%": a change in %, signed, one decimal.
std::string format_change(double pct);

}  // namespace hacoboot
