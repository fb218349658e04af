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

#include "cli/byte_size.hpp"
#include "cli/duration.hpp"
#include "hacoboot.h"
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
  hacoboot-sampler -n 20 --events boots.tsv --timeline boots.svg
                                            # 20 boots: raw rows and a waterfall
  hacoboot-sampler --haconiwa /opt/haconiwa/bin/haconiwa -d 30s --hist
  hacoboot-sampler --serve 127.0.0.1:9477 /u/app/bin/rails
                                            # exporter: Prometheus scrapes /metrics
  hacoboot-sampler -p 4242 --list          # the probes of a running haconiwa

EXIT STATUS:
  0 success, 1 runtime error (privileges, kernel, I/O), 2 bad usage or input,
  3 boot time regressed against --baseline, 4 the --run command failed.
)";

template <typename Value, std::size_t N>
Value pick(const std::array<std::pair<std::string_view, Value>, N>& choices, const std::string& text,
           const char* option) {
  for (const auto& [name, value] : choices) {
    if (iequals(name, text)) return value;
  }
  std::string names;
  for (const auto& [name, value] : choices) names += (names.empty() ? "" : ", ") + std::string(name);
  throw UsageError(std::string(option) + ": unknown value '" + printable(text) + "' (" + names + ")");
}

constexpr std::array<std::pair<std::string_view, ReportFormat>, 4> kFormats{{
    {"table", ReportFormat::Table},
    {"bpftrace", ReportFormat::Bpftrace},
    {"json", ReportFormat::Json},
    {"tsv", ReportFormat::Tsv},
}};

constexpr std::array<std::pair<std::string_view, EventsFormat>, 2> kEventsFormats{{
    {"tsv", EventsFormat::Tsv},
    {"jsonl", EventsFormat::Jsonl},
}};

constexpr std::array<std::pair<std::string_view, SyscallHooks>, 3> kSyscallHooks{{
    {"auto", SyscallHooks::Auto},
    {"tracepoints", SyscallHooks::Tracepoints},
    {"raw_syscalls", SyscallHooks::RawSyscalls},
}};

constexpr std::array<std::pair<std::string_view, UsdtAttach>, 3> kUsdtAttach{{
    {"auto", UsdtAttach::Auto},
    {"uprobe_multi", UsdtAttach::UprobeMulti},
    {"perf", UsdtAttach::Perf},
}};

// The most boots --count and --warmup take: far beyond any run, and a
// range the message can state.
constexpr std::uint64_t kMaxBoots = 1'000'000'000;
// The largest process id Linux gives (PID_MAX_LIMIT on 64-bit machines).
constexpr std::uint64_t kMaxPid = 4'194'304;
// --max-regression: a 1000 % slowdown (11 times slower) is already no gate.
constexpr double kMaxRegressionPct = 1000;

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

// A finite percentage from 0 to kMaxRegressionPct: "nan" would pass every
// comparison, "inf" every slowdown.
double percentage(const std::string& text, const char* option) {
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end || !std::isfinite(value) || std::signbit(value) || value > kMaxRegressionPct) {
    throw UsageError(
        fmt::format("{}: '{}' is not a percentage from 0 to {}", option, printable(text), kMaxRegressionPct));
  }
  return value;
}

// CLI11 keeps an empty value given as its own argument (--baseline "$UNSET")
// and the option then reads as unset, or as 0: refused for every option that
// takes a value, the positional COMMAND included.
void refuse_empty_values(const CLI::App& app) {
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

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine result;
  auto& opt = result.options;

  CLI::App app(kDescription, "hacoboot-sampler");
  app.footer(kExamples);
  app.set_version_flag("--version", "hacoboot-sampler " HACOBOOT_VERSION);
  app.get_formatter()->column_width(36);

  app.add_option("COMMAND", opt.command,
                 "Container init command: its execve (filename compared as given, like the "
                 "reference script) marks \"execve\". Default: the container's first execve.");
  auto* haconiwa_option =
      app.add_option("--haconiwa", opt.haconiwa, "Haconiwa binary holding the USDT probe (default: haconiwa in PATH)")
          ->type_name("PATH");
  std::string pid;
  app.add_option("-p,--pid", pid,
                 "Only launches under this running haconiwa process (itself and its descendants); its binary "
                 "through /proc/PID/exe")
      ->type_name("PID")
      ->excludes(haconiwa_option);
  app.add_flag("--list", opt.list, "Print the USDT probes of the haconiwa binary and exit (no root needed)");
  std::string from;
  app.add_option("--from", from,
                 fmt::format("Phase that starts the clock, by number or name (default {}, {})", kPhaseStartSupervisor,
                             phase_name(kPhaseStartSupervisor)))
      ->type_name("PHASE");
  std::string phase_names_file;
  app.add_option("--phase-names", phase_names_file, "Name phases: lines of 'NUMBER NAME' (e.g. 123 APP_READY)")
      ->type_name("FILE");

  std::string run;
  std::string count;
  std::string duration;
  std::string warmup;
  auto* run_option = app.add_option("-c,--run", run, "Run CMD with /bin/sh -c once probes are live; stop when it exits")
                         ->type_name("CMD")
                         ->group("When to stop");
  app.add_option("--run-as", opt.run_as, "Run the --run command as USER (e.g. $SUDO_USER), with USER's groups")
      ->type_name("USER")
      ->needs(run_option)
      ->group("When to stop");
  app.add_option("-n,--count", count, "Stop after N boots reached listen (or ended)")
      ->type_name("N")
      ->group("When to stop");
  app.add_option("-d,--duration", duration, "Stop after DUR (500ms, 30s, 5m)")->type_name("DUR")->group("When to stop");
  app.add_option("--warmup", warmup, "Leave the first N boots out of every figure (cold caches)")
      ->type_name("N")
      ->group("When to stop");

  std::string format;
  std::string events_format;
  std::string syscall_hooks;
  std::string usdt_attach;
  app.add_option("-f,--format", format, "Summary: table (default), bpftrace, json, tsv")
      ->type_name("FORMAT")
      ->group("Outputs");
  app.add_flag("--hist", opt.histograms, "Table: also log2 histograms of execve and listen")->group("Outputs");
  app.add_option("-o,--output", opt.output, "Summary to FILE instead of stdout")->type_name("FILE")->group("Outputs");
  app.add_option("--events", opt.events, "Stream one row per boot milestone to FILE, as boots end")
      ->type_name("FILE")
      ->group("Outputs");
  app.add_option("--events-format", events_format, "Rows as tsv (default) or jsonl")
      ->type_name("FORMAT")
      ->group("Outputs");
  app.add_option("--timeline", opt.timeline, "Draw a waterfall of the boots to FILE.svg")
      ->type_name("FILE")
      ->group("Outputs");
  app.add_option("--trace-out", opt.trace_out, "Chrome Trace Event JSON (Perfetto UI) to FILE")
      ->type_name("FILE")
      ->group("Outputs");

  std::string serve;
  std::string textfile_interval;
  app.add_option("--serve", serve,
                 "Exporter: trace until stopped, serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR "
                 "default 127.0.0.1; [::1]:PORT for IPv6)")
      ->type_name("ADDR:PORT")
      ->group("Exporter");
  app.add_option("--textfile", opt.textfile,
                 "Exporter: write the metrics to FILE.prom for node_exporter's textfile collector (atomically)")
      ->type_name("FILE")
      ->group("Exporter");
  app.add_option("--textfile-interval", textfile_interval, "How often --textfile is rewritten (default 15s)")
      ->type_name("DUR")
      ->group("Exporter");

  std::string gate_statistic;
  std::string gate_list;
  app.add_option("--baseline", opt.baseline, "Compare with a saved --format json summary; exit 3 on regression")
      ->type_name("FILE")
      ->group("Regression gate");
  std::string max_regression;
  app.add_option("--max-regression", max_regression, "Largest tolerated slowdown in %, 0 to 1000 (default 10)")
      ->type_name("PCT")
      ->group("Regression gate");
  app.add_option("--gate-stat", gate_statistic, "Statistic compared: p50 (default), p90, p99, avg, max")
      ->type_name("STAT")
      ->group("Regression gate");
  app.add_option("--gate", gate_list, "Metrics that fail the gate: execve,listen (default), phases, or all")
      ->type_name("LIST")
      ->group("Regression gate");

  std::string ring_buffer_size;
  app.add_option("--ringbuf-size", ring_buffer_size,
                 fmt::format("BPF ring buffer size (default {}M; rounded up to a power of two)",
                             HACOBOOT_DEFAULT_RINGBUF_BYTES >> 20))
      ->type_name("SIZE");
  app.add_option("--btf-cache", opt.btf_cache,
                 fmt::format("Where the kernel types the programs read are cached per kernel, for a fast start "
                             "(default {}; 'off': read the whole kernel BTF at every start)",
                             kDefaultBtfCacheDir))
      ->type_name("DIR");
  app.add_option("--syscall-hooks", syscall_hooks,
                 "How execve/listen are seen: auto (default: tracepoints when the kernel has them), tracepoints "
                 "(syscalls:*), raw_syscalls (a program on every syscall)")
      ->type_name("HOW");
  app.add_option("--usdt-attach", usdt_attach,
                 "How the probe is attached: auto (default: uprobe_multi when the kernel has it), uprobe_multi "
                 "(one BPF link, Linux 6.6+), perf (libbpf's perf uprobes)")
      ->type_name("HOW");
  app.add_flag("-q,--quiet", opt.quiet, "No progress line on a terminal");
  app.add_flag("-v,--verbose", opt.verbose, "libbpf's log and the attach choices on stderr");

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
    result.exit_message = app.help();
    return result;
  } catch (const CLI::CallForVersion& version) {
    result.exit_message = std::string(version.what()) + "\n";
    return result;
  } catch (const CLI::ParseError& e) {
    throw UsageError(printable(e.what()));
  }
  refuse_empty_values(app);

  // Only the options given are checked: the others keep Options' defaults.
  const auto given = [&app](const char* option) { return app.count(option) > 0; };
  if (given("--phase-names")) {
    opt.phase_names =
        PhaseNames::parse(read_input_file(phase_names_file, "--phase-names", kMaxPhaseNamesBytes), phase_names_file);
  }
  if (given("--from")) {
    const auto phase = opt.phase_names.find(from);
    if (!phase) {
      throw UsageError("--from: unknown phase '" + printable(from) + "' (a number 0-127 or a name such as START_SV)");
    }
    opt.start_phase = *phase;
  }
  if (given("--run")) opt.run = run;
  if (given("--count")) opt.count = decimal_in_range(count, "--count", 1, kMaxBoots);
  if (given("--duration")) {
    opt.duration = parse_duration(duration);
    if (!opt.duration) {
      throw UsageError("--duration: '" + printable(duration) + "' is not a duration such as 500ms, 30s or 5m");
    }
  }
  if (given("--pid")) opt.pid = static_cast<std::uint32_t>(decimal_in_range(pid, "--pid", 1, kMaxPid));
  if (given("--serve")) {
    try {
      opt.serve = parse_listen_address(serve);
    } catch (const UsageError& e) {
      throw UsageError(std::string("--serve: ") + e.what());
    }
  }
  if (given("--textfile-interval")) {
    const auto interval = parse_duration(textfile_interval);
    if (!interval || interval->count() <= 0) {
      throw UsageError("--textfile-interval: '" + printable(textfile_interval) +
                       "' is not a duration such as 15s or 1m");
    }
    opt.textfile_interval = *interval;
  }
  if (given("--warmup")) opt.warmup = decimal_in_range(warmup, "--warmup", 0, kMaxBoots);
  if (given("--ringbuf-size")) {
    constexpr std::uint64_t kMaxRingBuffer = std::uint64_t{1} << 30;
    const auto bytes = parse_byte_size(ring_buffer_size);
    if (!bytes || *bytes > kMaxRingBuffer) {
      throw UsageError("--ringbuf-size: '" + printable(ring_buffer_size) +
                       "' is not a size up to 1G such as 256K or 4M");
    }
    opt.ring_buffer_bytes = *bytes;
  }
  if (given("--format")) opt.format = pick(kFormats, format, "--format");
  if (given("--events-format")) opt.events_format = pick(kEventsFormats, events_format, "--events-format");
  if (given("--syscall-hooks")) opt.syscall_hooks = pick(kSyscallHooks, syscall_hooks, "--syscall-hooks");
  if (given("--usdt-attach")) opt.usdt_attach = pick(kUsdtAttach, usdt_attach, "--usdt-attach");
  if (given("--gate-stat")) {
    const auto statistic = parse_gate_statistic(gate_statistic);
    if (!statistic)
      throw UsageError("--gate-stat: unknown statistic '" + printable(gate_statistic) + "' (p50, p90, p99, avg, max)");
    opt.gate.statistic = *statistic;
  }
  if (given("--max-regression")) opt.gate.max_regression_pct = percentage(max_regression, "--max-regression");
  if (given("--gate")) opt.gate.gated = gated_metrics(gate_list, opt.phase_names);
  if (opt.baseline.empty() && (app.count("--gate") + app.count("--gate-stat") + app.count("--max-regression")) > 0) {
    result.warnings.emplace_back("--gate, --gate-stat and --max-regression only matter with --baseline");
  }
  // The kernel side keeps HACOBOOT_FILENAME_LEN bytes of an execve's file
  // name, its NUL included: a longer COMMAND could never match.
  if (opt.command.size() >= HACOBOOT_FILENAME_LEN) {
    throw UsageError(fmt::format(
        "COMMAND is {} bytes long: the tool sees at most {} bytes of an execve's file name, so it could never match",
        opt.command.size(), HACOBOOT_FILENAME_LEN - 1));
  }
  if (!opt.command.empty() && opt.command.front() != '/') {
    result.warnings.push_back("COMMAND '" + printable(opt.command) +
                              "' is not an absolute path: it only matches an execve given exactly that string");
  }
  return result;
}

}  // namespace hacoboot
