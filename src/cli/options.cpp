#include "cli/options.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/byte_size.hpp"
#include "cli/duration.hpp"
#include "hacoboot/contract.h"
#include "model/boot.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"

#ifndef HACOBOOT_VERSION
#error "HACOBOOT_VERSION must be defined by the build"
#endif

namespace hacoboot {
namespace {

constexpr const char* kDescription =
    "Measures how long Haconiwa containers take to boot, phase by phase: from the\n"
    "supervisor's start to the container's execve of COMMAND and its first listen(2).\n"
    "Traces until Ctrl-C (or --run/--count/--duration), then prints the summary.";

constexpr const char* kExamples = R"(
EXAMPLES:
  hacoboot-sampler /u/app/bin/rails         # trace until Ctrl-C, print a table
  hacoboot-sampler -f bpftrace /u/app/bin/rails
                                            # the reference script's figures
  hacoboot-sampler --run ./boot-10-containers.sh --format json -o boot.json
                                            # trace while a script runs (CI)
  hacoboot-sampler --run ./boot-10.sh --baseline boot.json --max-regression 15
                                            # exit 3 when boot time regressed
  hacoboot-sampler compare base.json new.json
                                            # the same gate on two saved summaries
  hacoboot-sampler -n 20 --events boots.tsv --timeline boots.svg
                                            # 20 boots: raw rows and a waterfall
  hacoboot-sampler --haconiwa /opt/haconiwa/bin/haconiwa -d 30s --hist
  hacoboot-sampler --serve 127.0.0.1:9477 /u/app/bin/rails
                                            # exporter: Prometheus scrapes /metrics
  hacoboot-sampler list -p 4242            # the probes of a running haconiwa

EXIT STATUS:
  0 success, 1 runtime error (privileges, kernel, I/O), 2 bad usage or input
  (also a baseline that cannot be compared), 3 boot time regressed against
  --baseline, 4 the --run command failed, 5 the gate was inconclusive (too
  few boots to tell --max-regression from noise).
)";

constexpr const char* kRecordDescription =
    "Trace boots as `trace` does, into the recording -o FILE, its one output (docs/recording.md)";
constexpr const char* kReportDescription =
    "Make a recorded run's outputs (summary, rows, pictures, the gate's verdict) from its recording\n"
    "FILE, with the options of the run's outputs and gate: no root, no BPF. The start phase,\n"
    "COMMAND, warm-up and phase names are the recorded run's.";

// The commands that take the tool's options: one line each under --help.
constexpr const char* kTraceDescription = "Trace boots and report them: the default, with the options above";
constexpr const char* kListDescription = "Print the haconiwa binary's USDT probes and exit (also --list)";
constexpr const char* kCheckDescription = "Say whether this host can trace and exit: 0 ready, 1 not (also --check)";

constexpr const char* kCompareDescription =
    "Compares two saved --format json summaries as --baseline does: the gate's report\n"
    "on stdout, and its exit status (0 passed, 3 regressed, 5 inconclusive). No root.";

// A value of an option taking one of a few names (--format, --usdt-attach...).
template <typename Value>
struct Choice {
  std::string_view name;
  Value value;
};

template <typename Value, std::size_t N>
Value pick(const std::array<Choice<Value>, N>& choices, const std::string& text, const char* option) {
  for (const auto& choice : choices) {
    if (iequals(choice.name, text)) return choice.value;
  }
  std::string names;
  for (const auto& choice : choices) names += (names.empty() ? "" : ", ") + std::string(choice.name);
  throw UsageError(std::string(option) + ": unknown value '" + printable(text) + "' (" + names + ")");
}

constexpr auto kFormats = std::to_array<Choice<ReportFormat>>({{"table", ReportFormat::Table},
                                                               {"bpftrace", ReportFormat::Bpftrace},
                                                               {"json", ReportFormat::Json},
                                                               {"tsv", ReportFormat::Tsv}});
constexpr auto kEventsFormats =
    std::to_array<Choice<EventsFormat>>({{"tsv", EventsFormat::Tsv}, {"jsonl", EventsFormat::Jsonl}});
constexpr auto kSyscallHooks = std::to_array<Choice<SyscallHooks>>({{"auto", SyscallHooks::Auto},
                                                                    {"tracepoints", SyscallHooks::Tracepoints},
                                                                    {"raw_syscalls", SyscallHooks::RawSyscalls}});
constexpr auto kUsdtAttach = std::to_array<Choice<UsdtAttach>>(
    {{"auto", UsdtAttach::Auto}, {"uprobe_multi", UsdtAttach::UprobeMulti}, {"perf", UsdtAttach::Perf}});

// The largest process id Linux gives (PID_MAX_LIMIT on 64-bit machines).
constexpr std::uint64_t kMaxPid = 4'194'304;
// --max-regression: a 1000 % slowdown (11 times slower) is already no gate.
constexpr double kMaxRegressionPct = 1000;
// --alpha: beyond 0.5 a "significant" shift is more likely noise than not.
constexpr double kMaxAlpha = 0.5;

// A decimal integer from min to max. CLI11 would also read "0x10" (16),
// "010" (8) and saturate on overflow; a user typing digits means decimal.
std::uint64_t decimal_in_range(const std::string& text, const char* option, std::uint64_t min, std::uint64_t max) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  // Unsigned from_chars takes no sign, no prefix, no space: "+5", "-5", " 5" and "5x" are refused.
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, 10);
  if (ec != std::errc{} || ptr != end || value < min || value > max) {
    throw UsageError(fmt::format("{}: '{}' is not a decimal number from {} to {}", option, printable(text), min, max));
  }
  return value;
}

// A decimal number above 0 and at most max: "nan" would pass every
// comparison, "inf" every slowdown, and 0 would fail on any noise.
double positive_decimal(const std::string& text, const char* option, const char* what, double max) {
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
  if (ec != std::errc{} || ptr != end || !std::isfinite(value) || !(value > 0) || value > max) {
    throw UsageError(fmt::format("{}: '{}' is not {} above 0 and at most {}", option, printable(text), what, max));
  }
  return value;
}

// CLI11 keeps an empty value given as its own argument (--baseline "$UNSET")
// and the option then reads as unset, or as 0: refused for every option that
// takes a value, the positional COMMAND included.
void refuse_empty_values(const CLI::App& app) {
  for (const auto* command : app.get_subcommands({})) refuse_empty_values(*command);
  for (const auto* option : app.get_options()) {
    if (option->get_items_expected_min() == 0) continue;  // a flag
    const auto& values = option->results();
    if (std::any_of(values.begin(), values.end(), [](const std::string& value) { return value.empty(); })) {
      throw UsageError(option->get_name() + ": empty value");
    }
  }
}

// "execve,listen,CONTAINER_CHROOTED,16" -> baseline metric keys; "all" -> every metric.
std::set<std::string> gated_metrics(const std::string& list, const PhaseNames& names) {
  std::set<std::string> keys;
  std::istringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (iequals(item, "all")) return {};
    if (iequals(item, "execve") || iequals(item, "listen")) {
      std::transform(item.begin(), item.end(), item.begin(), [](unsigned char c) { return std::tolower(c); });
      keys.insert(item);
      continue;
    }
    const auto phase = names.find(item);
    if (!phase) throw UsageError("--gate: '" + printable(item) + "' is neither execve, listen, all nor a phase");
    keys.insert("phase:" + std::to_string(*phase));
  }
  return keys;
}

// The gate's options as typed: the same on a traced command line and after `compare`.
struct GateArguments {
  std::string max_regression;
  std::string statistic;
  std::string gated;
  std::string figure;
  std::string alpha;
  std::string junit;
  std::string markdown;
  std::string json;
};

// `record -o FILE [trace options]`.
struct RecordArguments {
  CLI::App* command = nullptr;
  std::string output;
};

// `report FILE [output and gate options]`.
struct ReportArguments {
  CLI::App* command = nullptr;
  std::string recording;
};

// The commands that take the tool's own options (trace, list, check): parsed
// as the tool's, the options given before or after the command word.
struct CommandArguments {
  CLI::App* trace = nullptr;
  CLI::App* list = nullptr;
  CLI::App* check = nullptr;
  bool list_flag = false;   // --list: list's older spelling
  bool check_flag = false;  // --check: check's
};

// `compare BASE NEW` and its gate options.
struct CompareArguments {
  CLI::App* command = nullptr;
  std::string baseline;
  std::string compared;
  GateArguments gate;
};

// The command line as typed: the options CLI11 stores straight into Options,
// and the text of the others, converted and checked once parsed (validated).
struct Arguments {
  Options options;
  std::string pid;
  std::string from;
  std::string run;
  std::string count;
  std::string duration;
  std::string warmup;
  std::string format;
  std::string events_format;
  std::string serve;
  std::string textfile_interval;
  GateArguments gate;
  CommandArguments commands;
  CompareArguments compare;
  RecordArguments record;
  ReportArguments report;
  std::string ring_buffer_size;
  bool kernel_profile = false;
  std::string kernel_profile_hz;
  std::string syscall_hooks;
  std::string usdt_attach;
};

// Adds options under one heading of --help (none: the first list, untitled).
class OptionGroup {
 public:
  explicit OptionGroup(CLI::App& app, const char* heading = nullptr) : app_(app), heading_(heading) {}

  // An option taking a value, shown as value_name in --help.
  template <typename Target>
  CLI::Option* value(const std::string& names, Target& target, const char* value_name, const std::string& help) const {
    return under_heading(app_.add_option(names, target, help)->type_name(value_name));
  }
  CLI::Option* flag(const std::string& names, bool& target, const std::string& help) const {
    return under_heading(app_.add_flag(names, target, help));
  }

 private:
  CLI::Option* under_heading(CLI::Option* option) const { return heading_ ? option->group(heading_) : option; }

  CLI::App& app_;
  const char* heading_;
};

// COMMAND, the haconiwa binary or process, the phases.
void add_what_to_trace(CLI::App& app, Arguments& args) {
  auto& opt = args.options;
  app.add_option("COMMAND", opt.command,
                 "Container init command: its execve (filename compared as given, like the "
                 "reference script) marks \"execve\". Default: the container's first execve.");
  const OptionGroup group(app);
  auto* haconiwa_option = group.value("--haconiwa", opt.haconiwa, "PATH",
                                      "Haconiwa binary holding the USDT probe (default: haconiwa in PATH)");
  group
      .value("-p,--pid", args.pid, "PID",
             "Only launches under this running haconiwa process (itself and its descendants); its binary "
             "through /proc/PID/exe")
      ->excludes(haconiwa_option);
  group.flag("--list", args.commands.list_flag, "The list command's older spelling");
  group.value("--from", args.from, "PHASE",
              fmt::format("Phase that starts the clock, by number or name (default {}, {})", kPhaseStartSupervisor,
                          phase_name(kPhaseStartSupervisor)));
  group.value("--phase-names", opt.phase_names_file, "FILE",
              "Name phases: lines of 'NUMBER NAME' (e.g. 123 APP_READY)");
}

void add_when_to_stop(CLI::App& app, Arguments& args) {
  const OptionGroup group(app, "When to stop");
  auto* run_option =
      group.value("-c,--run", args.run, "CMD", "Run CMD with /bin/sh -c once probes are live; stop when it exits");
  group
      .value("--run-as", args.options.run_as, "USER",
             "Run the --run command as USER (e.g. $SUDO_USER), with USER's groups")
      ->needs(run_option);
  group.value("-n,--count", args.count, "N", "Stop after N boots past --warmup reached listen (or ended)");
  group.value("-d,--duration", args.duration, "DUR", "Stop after DUR (500ms, 30s, 5m)");
  group.value("--warmup", args.warmup, "N", "Leave the first N boots out of every figure and of -n (cold caches)");
}

void add_outputs(CLI::App& app, Arguments& args) {
  auto& opt = args.options;
  const OptionGroup group(app, "Outputs");
  group.value("-f,--format", args.format, "FORMAT", "Summary: table (default), bpftrace, json, tsv");
  group.flag("--hist", opt.histograms, "Table: also log2 histograms of execve and listen");
  group.flag("--all-syscalls", opt.all_syscalls,
             "Table: every syscall of each step, not its top 3 (implies --syscalls)");
  group.value("-o,--output", opt.output, "FILE", "Summary to FILE instead of stdout");
  group.value("--events", opt.events, "FILE", "Stream one row per boot milestone to FILE, as boots end");
  group.value("--events-format", args.events_format, "FORMAT", "Rows as tsv (default) or jsonl");
  group.value("--timeline", opt.timeline, "FILE", "Draw a waterfall of the boots to FILE.svg");
  group.value("--trace-out", opt.trace_out, "FILE", "Chrome Trace Event JSON (Perfetto UI) to FILE");
  group.value("--stacks", opt.stacks, "FILE",
              "Folded stacks boot;lane;step;syscall in ns to FILE, for flame graphs (implies --syscalls)");
}

// A traced run's own output: not one `report` makes.
void add_recording(CLI::App& app, Arguments& args) {
  OptionGroup(app, "Outputs")
      .value("--record", args.options.record, "FILE",
             "Also record what the kernel side emitted to FILE, for `report FILE` (docs/recording.md)");
}

void add_exporter(CLI::App& app, Arguments& args) {
  const OptionGroup group(app, "Exporter");
  group.value("--serve", args.serve, "ADDR:PORT",
              "Exporter: trace until stopped, serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR "
              "default 127.0.0.1; [::1]:PORT for IPv6)");
  group.value("--textfile", args.options.textfile, "FILE",
              "Exporter: write the metrics to FILE.prom for node_exporter's textfile collector (atomically)");
  group.value("--textfile-interval", args.textfile_interval, "DUR", "How often --textfile is rewritten (default 15s)");
}

// The options that judge a comparison, for --baseline and `compare` alike.
void add_gate_options(const OptionGroup& group, GateArguments& args) {
  group.value("--max-regression", args.max_regression, "PCT",
              "Largest tolerated slowdown in %, above 0, at most 1000 (default 10)");
  group.value("--alpha", args.alpha, "LEVEL",
              "Chance of a false REGRESSED over all gated metrics, above 0, at most 0.5 (default 0.05)");
  group.value("--gate-on", args.figure, "FIGURE",
              "Figure of execve and listen compared: noise-free (default: without run-queue time), wall");
  group.value("--gate-stat", args.statistic, "STAT",
              "Statistic compared with a baseline without samples: p50 (default), p90, p99, avg, max");
  group.value("--gate", args.gated, "LIST", "Metrics that fail the gate: execve,listen (default), phases, or all");
  group.value("--gate-junit", args.junit, "FILE", "Also write the gate's verdict to FILE as JUnit XML (CI test view)");
  group.value("--gate-markdown", args.markdown, "FILE",
              "Also write the gate's verdict to FILE as a Markdown table (pull-request comment)");
  group.value("--gate-json", args.json, "FILE", "Also write the gate's verdict to FILE as JSON (for tools)");
}

void add_regression_gate(CLI::App& app, Arguments& args) {
  const OptionGroup group(app, "Regression gate");
  group.value("--baseline", args.options.baseline, "FILE",
              "Compare with a saved --format json summary; exit 3 on regression, 5 inconclusive");
  add_gate_options(group, args.gate);
}

// `hacoboot-sampler trace|list|check [options]`: the options and COMMAND
// fall through to the tool's own.
void add_commands(CLI::App& app, CommandArguments& args) {
  args.trace = app.add_subcommand("trace", kTraceDescription)->fallthrough();
  args.list = app.add_subcommand("list", kListDescription)->fallthrough();
  args.check = app.add_subcommand("check", kCheckDescription)->fallthrough();
}

// `hacoboot-sampler compare BASE NEW [gate options]`.
void add_compare(CLI::App& app, CompareArguments& args) {
  args.command = app.add_subcommand("compare", kCompareDescription);
  args.command->add_option("BASE", args.baseline, "The baseline: a saved --format json summary")->required();
  args.command->add_option("NEW", args.compared, "The summary judged against it")->required();
  add_gate_options(OptionGroup(*args.command, "Regression gate"), args.gate);
}

// `hacoboot-sampler record -o FILE [trace options]`: the trace options are
// the tool's own, given before or after `record`.
void add_record(CLI::App& app, RecordArguments& args) {
  args.command = app.add_subcommand("record", kRecordDescription);
  args.command->add_option("-o,--output", args.output, "The recording's file ('-': standard output)")->required();
  args.command->fallthrough();
}

// `hacoboot-sampler report FILE [output and gate options]`: the same options
// as a traced run's outputs and gate, stored in the same arguments.
void add_report(CLI::App& app, Arguments& args) {
  args.report.command = app.add_subcommand("report", kReportDescription);
  args.report.command->add_option("FILE", args.report.recording, "The recording")->required();
  add_outputs(*args.report.command, args);
  add_regression_gate(*args.report.command, args);
}

// The kernel side's knobs and the diagnostics.
void add_kernel_side(CLI::App& app, Arguments& args) {
  auto& opt = args.options;
  const OptionGroup group(app);
  group.value("--ringbuf-size", args.ring_buffer_size, "SIZE",
              fmt::format("BPF ring buffer size (default {}K; rounded up to a power of two)",
                          HACOBOOT_DEFAULT_RINGBUF_BYTES >> 10));
  group.value("--btf", opt.btf, "FILE",
              "Kernel types (BTF) from FILE, for a kernel without /sys/kernel/btf/vmlinux (e.g. BTFHub's "
              "file of it); no BTF cache then");
  group.value("--btf-cache", opt.btf_cache, "DIR",
              fmt::format("Where the kernel types the programs read are cached per kernel, for a fast start "
                          "(default {}; 'off': read the whole kernel BTF at every start)",
                          kDefaultBtfCacheDir));
  group.value("--syscall-hooks", args.syscall_hooks, "HOW",
              "How execve/listen are seen: auto (default: tracepoints when the kernel has them), tracepoints "
              "(syscalls:*), raw_syscalls (a program on every syscall)");
  group.flag("--syscalls", opt.syscalls,
             "Syscalls per step and lane (every syscall of the host runs a BPF program meanwhile)");
  group.flag("--kernel-profile", args.kernel_profile,
             fmt::format("Sample the traced threads' kernel stacks per step, at {} Hz while boots run "
                         "(implies --syscalls)",
                         kDefaultKernelProfileHz));
  group.value("--kernel-profile-hz", args.kernel_profile_hz, "HZ",
              fmt::format("--kernel-profile's frequency, 1 to {} (implies --kernel-profile)", kMaxKernelProfileHz));
  group.value("--usdt-attach", args.usdt_attach, "HOW",
              "How the probe is attached: auto (default: uprobe_multi when the kernel has it), uprobe_multi "
              "(one BPF link, Linux 6.6+), perf (libbpf's perf uprobes)");
  group.flag("--check", args.commands.check_flag, "The check command's older spelling");
  group.flag("-q,--quiet", opt.quiet, "No progress line on a terminal");
  group.flag("-v,--verbose", opt.verbose, "libbpf's log and the attach choices on stderr");
}

// Parses argv into app's options. Returns the text to print for --help and
// --version; throws UsageError on bad usage.
std::optional<std::string> parse_arguments(CLI::App& app, int argc, const char* const* argv) {
  // CLI11 reads "--opt=" as no value and takes the next argument instead.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 3 && arg.starts_with("--") && arg.ends_with("=")) {
      throw UsageError(std::string(arg.substr(0, arg.size() - 1)) + ": empty value");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    // `compare --help`, `report --help`: their own options; the other commands
    // take the tool's, which app.help() would leave out once a command is selected.
    const auto called = app.get_subcommands();
    if (!called.empty() && (called.front()->get_name() == "compare" || called.front()->get_name() == "report")) {
      return called.front()->help();
    }
    return app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
  } catch (const CLI::CallForVersion& version) {
    return std::string(version.what()) + "\n";
  } catch (const CLI::ParseError& e) {
    throw UsageError(printable(e.what()));
  }
  refuse_empty_values(app);
  return std::nullopt;
}

// The validation steps, one per option group. Only the options given are
// checked: the others keep Options' defaults.
bool given(const CLI::App& app, const char* option) {
  return app.count(option) > 0;
}

void check_what_to_trace(const CLI::App& app, const Arguments& args, Options& opt) {
  if (given(app, "--phase-names")) {
    opt.phase_names = PhaseNames::parse(read_input_file(opt.phase_names_file, "--phase-names", kMaxPhaseNamesBytes),
                                        opt.phase_names_file);
  }
  if (given(app, "--from")) {
    const auto phase = opt.phase_names.find(args.from);
    if (!phase) {
      throw UsageError("--from: unknown phase '" + printable(args.from) +
                       "' (a number 0-127 or a name such as START_SV)");
    }
    opt.start_phase = *phase;
  }
  if (given(app, "--pid")) opt.pid = static_cast<std::uint32_t>(decimal_in_range(args.pid, "--pid", 1, kMaxPid));
}

void check_when_to_stop(const CLI::App& app, const Arguments& args, Options& opt) {
  if (given(app, "--run")) opt.run = args.run;
  if (given(app, "--count")) opt.count = decimal_in_range(args.count, "--count", 1, kMaxBoots);
  if (given(app, "--duration")) {
    opt.duration = parse_duration(args.duration);
    if (!opt.duration) {
      throw UsageError("--duration: '" + printable(args.duration) + "' is not a duration such as 500ms, 30s or 5m");
    }
  }
  if (given(app, "--warmup")) opt.warmup = decimal_in_range(args.warmup, "--warmup", 0, kMaxBoots);
}

void check_outputs(const CLI::App& app, const Arguments& args, Options& opt) {
  if (given(app, "--format")) opt.format = pick(kFormats, args.format, "--format");
  if (given(app, "--events-format")) opt.events_format = pick(kEventsFormats, args.events_format, "--events-format");
}

void check_exporter(const CLI::App& app, const Arguments& args, Options& opt) {
  if (given(app, "--serve")) {
    auto serve = parse_listen_address(args.serve);
    if (!serve) throw UsageError("--serve: " + serve.error());
    opt.serve = *std::move(serve);
  }
  if (given(app, "--textfile-interval")) {
    const auto interval = parse_duration(args.textfile_interval);
    if (!interval || interval->count() <= 0) {
      throw UsageError("--textfile-interval: '" + printable(args.textfile_interval) +
                       "' is not a duration such as 15s or 1m");
    }
    opt.textfile_interval = *interval;
  }
}

// The gate options given to `app` (the tool or `compare`); --gate names
// phases as --phase-names does.
GateConfig checked_gate(const CLI::App& app, const GateArguments& args, const PhaseNames& names) {
  GateConfig gate;
  if (given(app, "--gate-stat")) {
    const auto statistic = parse_gate_statistic(args.statistic);
    if (!statistic) {
      throw UsageError("--gate-stat: unknown statistic '" + printable(args.statistic) + "' (p50, p90, p99, avg, max)");
    }
    gate.statistic = *statistic;
  }
  if (given(app, "--gate-on")) {
    const auto figure = parse_gate_figure(args.figure);
    if (!figure) throw UsageError("--gate-on: unknown figure '" + printable(args.figure) + "' (noise-free, wall)");
    gate.figure = *figure;
  }
  if (given(app, "--max-regression")) {
    gate.max_regression_pct =
        positive_decimal(args.max_regression, "--max-regression", "a percentage", kMaxRegressionPct);
  }
  if (given(app, "--alpha")) gate.alpha = positive_decimal(args.alpha, "--alpha", "a level", kMaxAlpha);
  if (given(app, "--gate")) gate.gated = gated_metrics(args.gated, names);
  return gate;
}

// The gate's files: a CI job that asks for one reads it, so one that would
// never be written is an error, not a warning.
void take_gate_files(const CLI::App& app, const GateArguments& args, Options& opt, bool judged) {
  for (const char* option : {"--gate-junit", "--gate-markdown", "--gate-json"}) {
    if (given(app, option) && !judged) throw UsageError(std::string(option) + ": written only with --baseline");
  }
  opt.gate_junit = args.junit;
  opt.gate_markdown = args.markdown;
  opt.gate_json = args.json;
}

// After check_what_to_trace.
void check_regression_gate(const CLI::App& app, const Arguments& args, CommandLine& result) {
  auto& opt = result.options;
  opt.gate = checked_gate(app, args.gate, opt.phase_names);
  take_gate_files(app, args.gate, opt, !opt.baseline.empty());
  const auto options = app.get_options();
  const bool any = std::any_of(options.begin(), options.end(), [](const CLI::Option* option) {
    return option->get_group() == "Regression gate" && option->get_name() != "--baseline" && option->count() > 0;
  });
  if (opt.baseline.empty() && any) {
    result.warnings.emplace_back(
        "--gate, --gate-on, --gate-stat, --alpha and --max-regression only matter with "
        "--baseline");
  }
}

// The options besides -o whose file is standard output ("-"), in the order
// of the help.
std::vector<const char*> on_standard_output(const Options& opt) {
  const std::array<std::pair<const char*, const std::string*>, 8> outputs{{{"--events", &opt.events},
                                                                           {"--timeline", &opt.timeline},
                                                                           {"--trace-out", &opt.trace_out},
                                                                           {"--stacks", &opt.stacks},
                                                                           {"--record", &opt.record},
                                                                           {"--gate-junit", &opt.gate_junit},
                                                                           {"--gate-markdown", &opt.gate_markdown},
                                                                           {"--gate-json", &opt.gate_json}}};
  std::vector<const char*> taken;
  for (const auto& [option, path] : outputs) {
    if (*path == "-") taken.push_back(option);
  }
  return taken;
}

// An option given before the word of `compare` or `report` (`command`),
// where the tool's options go: one of theirs belongs after the word.
[[noreturn]] void refuse_before_word(const CLI::Option& option, const CLI::App& command) {
  const auto& word = command.get_name();
  if (command.get_option_no_throw(option.get_name()) != nullptr) {
    throw UsageError(fmt::format("{0}: {1} is an option of {0}: give it after the word {0}", word, option.get_name()));
  }
  throw UsageError(fmt::format("{0}: {1} is not an option of {0}", word, option.get_name()));
}

// `compare` takes its two files and the gate's options, nothing else.
CommandLine validated_compare(const CLI::App& app, const CompareArguments& args) {
  for (const auto* option : app.get_options()) {
    if (option->count() > 0) refuse_before_word(*option, *args.command);
  }
  CommandLine result;
  result.options.subcommand = Command::Compare;
  result.options.baseline = args.baseline;
  result.options.compared = args.compared;
  result.options.gate = checked_gate(*args.command, args.gate, result.options.phase_names);
  take_gate_files(*args.command, args.gate, result.options, true);
  // compare's report is its standard output: a gate file there would be
  // interleaved with it, and neither read back.
  if (const auto taken = on_standard_output(result.options); !taken.empty()) {
    throw UsageError(
        fmt::format("compare: {} -: standard output carries the comparison; write it to a file", taken.front()));
  }
  return result;
}

// `record`: the tool's trace options, the recording as the one output.
void check_record(const CLI::App& app, const RecordArguments& args, CommandLine& result) {
  for (const auto* option : app.get_options()) {
    const auto& group = option->get_group();
    if (option->count() > 0 && option->get_name() == "--record") {
      throw UsageError("record: --record is for a traced run; record writes its recording to -o FILE");
    }
    if (option->count() > 0 && (group == "Outputs" || group == "Regression gate")) {
      throw UsageError("record: " + option->get_name() +
                       " is an output of a traced run or of `report`, not of record (the recording is its one output)");
    }
  }
  if (result.options.subcommand != Command::Trace) throw UsageError("record: list and check record nothing");
  result.options.record = args.output;
  result.options.subcommand = Command::Record;
}

// Standard output takes one output: two would interleave there (the
// recording's bytes in the summary's text, a trace's JSON after the table),
// and no reader could take either apart. The summary goes there unless -o
// sends it elsewhere.
void refuse_two_on_standard_output(const Options& opt) {
  const auto taken = on_standard_output(opt);
  if (taken.empty()) return;
  if (opt.output.empty() || opt.output == "-") {
    throw UsageError(fmt::format("{} -: standard output carries the summary; write the summary elsewhere with -o FILE",
                                 taken.front()));
  }
  if (taken.size() > 1) {
    throw UsageError(
        fmt::format("{} - and {} -: standard output takes one of them; write the other to a file", taken[0], taken[1]));
  }
}

// `report` takes its recording, the outputs' and the gate's options, nothing else.
CommandLine validated_report(const CLI::App& app, const Arguments& args) {
  for (const auto* option : app.get_options()) {
    if (option->count() > 0) refuse_before_word(*option, *args.report.command);
  }
  const auto& report = *args.report.command;
  CommandLine result{.options = args.options, .exit_message = std::nullopt, .warnings = {}};
  result.options.replayed = args.report.recording;
  result.options.subcommand = Command::Report;
  check_outputs(report, args, result.options);
  check_regression_gate(report, args, result);
  refuse_two_on_standard_output(result.options);
  return result;
}

void check_kernel_side(const CLI::App& app, const Arguments& args, Options& opt) {
  if (given(app, "--ringbuf-size")) {
    constexpr std::uint64_t kMaxRingBuffer = std::uint64_t{1} << 30;
    const auto bytes = parse_byte_size(args.ring_buffer_size);
    if (!bytes || *bytes > kMaxRingBuffer) {
      throw UsageError("--ringbuf-size: '" + printable(args.ring_buffer_size) +
                       "' is not a size up to 1G such as 256K or 4M");
    }
    opt.ring_buffer_bytes = *bytes;
  }
  if (given(app, "--syscall-hooks")) opt.syscall_hooks = pick(kSyscallHooks, args.syscall_hooks, "--syscall-hooks");
  if (given(app, "--usdt-attach")) opt.usdt_attach = pick(kUsdtAttach, args.usdt_attach, "--usdt-attach");
  if (args.kernel_profile || given(app, "--kernel-profile-hz")) opt.kernel_profile_hz = kDefaultKernelProfileHz;
  if (given(app, "--kernel-profile-hz")) {
    std::uint32_t hz = 0;
    const auto& text = args.kernel_profile_hz;
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), hz);
    if (parsed.ec != std::errc{} || parsed.ptr != text.data() + text.size() || hz == 0 || hz > kMaxKernelProfileHz) {
      throw UsageError(fmt::format("--kernel-profile-hz: '{}' is not a frequency from 1 to {} Hz", printable(text),
                                   kMaxKernelProfileHz));
    }
    opt.kernel_profile_hz = hz;
  }
  opt.syscalls = opt.syscalls || opt.all_syscalls || !opt.stacks.empty() || opt.kernel_profile_hz != 0;
}

// The command word, or its older spelling as a flag; `trace` when none.
Command chosen_command(const CommandArguments& args) {
  const bool list = args.list_flag || args.list->parsed();
  const bool check = args.check_flag || args.check->parsed();
  if (list && check) throw UsageError("list and check (--list, --check): one command at a time");
  if ((list || check) && args.trace->parsed()) throw UsageError("trace with list or check: one command at a time");
  if (list) return Command::List;
  return check ? Command::Check : Command::Trace;
}

void check_command(CommandLine& result) {
  const auto& command = result.options.command;
  // The kernel side keeps HACOBOOT_FILENAME_LEN bytes of an execve's file
  // name, its NUL included: a longer COMMAND could never match.
  if (command.size() >= HACOBOOT_FILENAME_LEN) {
    throw UsageError(fmt::format(
        "COMMAND is {} bytes long: the tool sees at most {} bytes of an execve's file name, so it could never match",
        command.size(), HACOBOOT_FILENAME_LEN - 1));
  }
  // The kernel side compares bytes, but the summary and a baseline carry
  // COMMAND as text, and every report shows it: one that no terminal or JSON
  // carries as it is (a TAB, an escape, invalid UTF-8) would be shown or
  // stored as something else. No init command worth tracing needs such bytes.
  if (!is_printable_utf8(command)) {
    throw UsageError("COMMAND '" + printable(command) +
                     "' is not printable UTF-8: control characters and invalid UTF-8 are refused, as reports and "
                     "baselines could not carry it as it is");
  }
  if (!command.empty() && command.front() != '/') {
    result.warnings.push_back("COMMAND '" + printable(command) +
                              "' is not an absolute path: it only matches an execve given exactly that string");
  }
}

// --format bpftrace alone prints what the reference script printed, of
// which no scheduler state is part: the tracer then leaves its scheduler
// hooks out (Tracer::Config::account_states). Any other output reads them.
bool outputs_read_states(const Options& opt) {
  return opt.format != ReportFormat::Bpftrace || opt.syscalls || !opt.events.empty() || !opt.timeline.empty() ||
         !opt.trace_out.empty() || !opt.record.empty() || opt.serve.has_value() || !opt.textfile.empty() ||
         !opt.baseline.empty();
}

// `list` and `check` trace nothing: an option of a traced run (when to stop,
// its outputs, the exporter, the gate) would be taken and do nothing, and a
// check in CI would pass where the run it prepares is refused.
void refuse_trace_options(const CLI::App& app, Command command) {
  const char* word = command == Command::List ? "list" : "check";
  for (const auto* option : app.get_options()) {
    const auto& group = option->get_group();
    if (option->count() > 0 &&
        (group == "When to stop" || group == "Outputs" || group == "Exporter" || group == "Regression gate")) {
      throw UsageError(fmt::format("{}: {} is an option of a traced run, not of {}", word, option->get_name(), word));
    }
  }
}

// The Options of the parsed arguments, with the warnings worth telling.
CommandLine validated(const CLI::App& app, const Arguments& args) {
  CommandLine result{.options = args.options, .exit_message = std::nullopt, .warnings = {}};
  check_what_to_trace(app, args, result.options);
  check_when_to_stop(app, args, result.options);
  check_outputs(app, args, result.options);
  check_exporter(app, args, result.options);
  check_regression_gate(app, args, result);
  check_kernel_side(app, args, result.options);
  result.options.subcommand = chosen_command(args.commands);
  if (result.options.subcommand != Command::Trace) refuse_trace_options(app, result.options.subcommand);
  check_command(result);
  if (args.record.command->parsed()) {
    check_record(app, args.record, result);
  } else if (result.options.subcommand == Command::Trace) {
    refuse_two_on_standard_output(result.options);
  }
  result.options.states = outputs_read_states(result.options);
  return result;
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CLI::App app(kDescription, "hacoboot-sampler");
  app.footer(kExamples);
  app.set_version_flag("--version", "hacoboot-sampler " HACOBOOT_VERSION);
  app.get_formatter()->column_width(36);

  Arguments args;
  add_what_to_trace(app, args);
  add_when_to_stop(app, args);
  add_outputs(app, args);
  add_exporter(app, args);
  add_regression_gate(app, args);
  add_kernel_side(app, args);
  add_recording(app, args);
  add_commands(app, args.commands);
  add_compare(app, args.compare);
  add_record(app, args.record);
  add_report(app, args);
  app.require_subcommand(0, 1);
  if (auto exit_message = parse_arguments(app, argc, argv)) {
    return {.options = {}, .exit_message = std::move(exit_message), .warnings = {}};
  }
  if (args.compare.command->parsed()) return validated_compare(app, args.compare);
  if (args.report.command->parsed()) return validated_report(app, args);
  return validated(app, args);
}

}  // namespace hacoboot
