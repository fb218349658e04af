#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/core_btf_cache.hpp"
#include "capture/tracer.hpp"
#include "exporter/listen_address.hpp"
#include "gate/regression_gate.hpp"
#include "hacoboot/contract.h"
#include "model/phases.hpp"
#include "report/report.hpp"

namespace hacoboot {

// --kernel-profile's frequency: a sample per millisecond a traced thread
// runs, so that steps of a few milliseconds get some; odd, so as not to tick
// in step with the kernel's own timer (250 or 1000 Hz) and the work it
// triggers. docs/usage.md says what it costs.
inline constexpr std::uint32_t kDefaultKernelProfileHz = 999;
// The kernel lowers perf's sample rate on its own past what it can afford.
inline constexpr std::uint32_t kMaxKernelProfileHz = 10000;

// What the tool does: the first word of its command line (`trace` when it
// is none). A new command is a value here, its subcommand in options.cpp
// and its case in run_session.
enum class Command : std::uint8_t {
  Trace,    // trace boots and report them (the default)
  List,     // print the haconiwa binary's USDT probes (also --list)
  Check,    // say whether this host can trace (also --check)
  Compare,  // judge one saved summary against another
  Record,   // trace boots into a recording, its one output
  Report,   // a recorded run's outputs, from its recording
};

enum class EventsFormat : std::uint8_t { Tsv, Jsonl };
// How the kernel side sees execve and listen.
enum class SyscallHooks : std::uint8_t { Auto, Tracepoints, RawSyscalls };

struct Options {
  Command subcommand = Command::Trace;
  // What to trace
  std::string command;                // container init command; empty: first execve
  std::string haconiwa = "haconiwa";  // binary holding the probe (PATH lookup without '/')
  std::optional<std::uint32_t> pid;   // only launches under this running haconiwa process
  std::int64_t start_phase = kPhaseStartSupervisor;
  PhaseNames phase_names;
  std::string phase_names_file;  // where phase_names came from; empty: none
  // When to stop
  std::optional<std::string> run;     // shell command traced from start to exit
  std::optional<std::string> run_as;  // user the --run command runs as
  std::optional<std::uint64_t> count;
  std::optional<std::chrono::nanoseconds> duration;
  std::uint64_t warmup = 0;  // boots left out of every figure
  // Outputs
  ReportFormat format = ReportFormat::Table;
  bool histograms = false;
  bool syscalls = false;      // syscalls per step (the raw syscall hooks attached)
  bool all_syscalls = false;  // the table: every syscall of each step
  bool states = true;         // scheduler states per step: some output reads them
  // Kernel CPU sampled per step at this frequency (perf events); 0: not sampled.
  std::uint32_t kernel_profile_hz = 0;
  std::string output;  // empty: stdout
  std::string events;  // per-boot rows; empty: none
  EventsFormat events_format = EventsFormat::Tsv;
  std::string timeline;   // SVG waterfall
  std::string trace_out;  // Chrome Trace Event JSON
  std::string stacks;     // folded stacks of the steps' syscalls
  std::string record;     // the run's recording (--record, `record -o`); empty: none
  std::string replayed;   // `report FILE`: the outputs from this recording, no tracing
  // Exporter: Prometheus metrics over HTTP and/or in a node_exporter textfile
  std::optional<ListenAddress> serve;
  std::string textfile;
  std::chrono::nanoseconds textfile_interval = std::chrono::seconds(15);
  // Regression gate
  std::string baseline;  // a saved --format json summary (`compare`: BASE)
  std::string compared;  // `compare BASE NEW`: NEW
  GateConfig gate;
  std::string gate_junit;     // the gate's verdict as JUnit XML; empty: none
  std::string gate_markdown;  // ... as a Markdown table
  std::string gate_json;      // ... as JSON for tools
  // Kernel side
  std::uint64_t ring_buffer_bytes = HACOBOOT_DEFAULT_RINGBUF_BYTES;
  std::string btf;                              // kernel types from this file; empty: the kernel's own
  std::string btf_cache = kDefaultBtfCacheDir;  // "off": none
  SyscallHooks syscall_hooks = SyscallHooks::Auto;
  UsdtAttach usdt_attach = UsdtAttach::Auto;
  // Diagnostics
  bool quiet = false;
  bool verbose = false;
};

struct CommandLine {
  Options options;
  // Set for --help and --version: print it and exit 0 without tracing.
  std::optional<std::string> exit_message;
  std::vector<std::string> warnings;  // worth telling, not worth refusing
};

// The only place that reads argv (and the files it names for --phase-names).
// Throws UsageError on bad usage.
CommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace hacoboot
