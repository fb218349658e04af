#include "hacoboot/options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include "hacoboot/byte_size.hpp"
#include "hacoboot/duration.hpp"
#include "hacoboot/errors.hpp"
#include "hacoboot/text.hpp"

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
  throw UsageError(std::string(option) + ": unknown value '" + text + "' (" + names + ")");
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

std::string read_file(const std::string& path, const char* option) {
  std::ifstream in(path);
  if (!in) throw UsageError(std::string(option) + ": cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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
    if (!phase) throw UsageError("--gate: '" + item + "' is neither execve, listen, all nor a phase");
    keys.insert("phase:" + std::to_string(*phase));
  }
  return keys;
}

void require_positive(std::int64_t value, const char* option) {
  if (value < 1) throw UsageError(std::string(option) + ": must be at least 1, got " + std::to_string(value));
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
  std::int64_t pid = 0;
  app.add_option("-p,--pid", pid,
                 "Only launches under this running haconiwa process (itself and its descendants); its binary "
                 "through /proc/PID/exe")
      ->type_name("PID")
      ->excludes(haconiwa_option);
  app.add_flag("--list", opt.list, "Print the USDT probes of the haconiwa binary and exit (no root needed)");
  std::string from;
  app.add_option("--from", from, "Phase that starts the clock, by number or name (default 1, START_SV)")
      ->type_name("PHASE");
  std::string phase_names_file;
  app.add_option("--phase-names", phase_names_file, "Name phases: lines of 'NUMBER NAME' (e.g. 123 APP_READY)")
      ->type_name("FILE");

  std::string run;
  std::int64_t count = 0;
  std::string duration;
  std::int64_t warmup = 0;
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
  app.add_option("--max-regression", opt.gate.max_regression_pct, "Largest tolerated slowdown in % (default 10)")
      ->type_name("PCT")
      ->check(CLI::NonNegativeNumber)
      ->group("Regression gate");
  app.add_option("--gate-stat", gate_statistic, "Statistic compared: p50 (default), p90, p99, avg, max")
      ->type_name("STAT")
      ->group("Regression gate");
  app.add_option("--gate", gate_list, "Metrics that fail the gate: execve,listen (default), phases, or all")
      ->type_name("LIST")
      ->group("Regression gate");

  std::string ring_buffer_size;
  app.add_option("--ringbuf-size", ring_buffer_size, "BPF ring buffer size (default 1M; rounded up to a power of two)")
      ->type_name("SIZE");
  app.add_option("--btf-cache", opt.btf_cache,
                 "Where the kernel types the programs read are cached per kernel, for a fast start (default "
                 "/var/cache/hacoboot-sampler; 'off': read the whole kernel BTF at every start)")
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
    throw UsageError(e.what());
  }

  // An option given an empty value is an error, not "unset".
  const auto given = [&app](const char* option) { return app.count(option) > 0; };
  if (given("--phase-names")) {
    opt.phase_names = PhaseNames::parse(read_file(phase_names_file, "--phase-names"), phase_names_file);
  }
  if (given("--from")) {
    const auto phase = opt.phase_names.find(from);
    if (!phase) throw UsageError("--from: unknown phase '" + from + "' (a number 0-127 or a name such as START_SV)");
    opt.start_phase = *phase;
  }
  if (given("--run")) {
    if (run.empty()) throw UsageError("--run: the command is empty");
    opt.run = run;
  }
  if (given("--count")) {
    require_positive(count, "--count");
    opt.count = static_cast<std::uint64_t>(count);
  }
  if (given("--duration")) {
    opt.duration = parse_duration(duration);
    if (!opt.duration) throw UsageError("--duration: '" + duration + "' is not a duration such as 500ms, 30s or 5m");
  }
  if (given("--pid")) {
    if (pid <= 0 || pid > std::int64_t{0x3fffffff})
      throw UsageError("--pid: '" + std::to_string(pid) + "' is not a process id");
    opt.pid = static_cast<std::uint32_t>(pid);
  }
  if (given("--serve")) opt.serve = parse_listen_address(serve);
  if (given("--textfile-interval")) {
    const auto interval = parse_duration(textfile_interval);
    if (!interval || interval->count() <= 0) {
      throw UsageError("--textfile-interval: '" + textfile_interval + "' is not a duration such as 15s or 1m");
    }
    opt.textfile_interval = *interval;
  }
  if (given("--warmup")) {
    if (warmup < 0) throw UsageError("--warmup: must not be negative");
    opt.warmup = static_cast<std::uint64_t>(warmup);
  }
  if (given("--ringbuf-size")) {
    constexpr std::uint64_t kMaxRingBuffer = std::uint64_t{1} << 30;
    const auto bytes = parse_byte_size(ring_buffer_size);
    if (!bytes || *bytes > kMaxRingBuffer) {
      throw UsageError("--ringbuf-size: '" + ring_buffer_size + "' is not a size up to 1G such as 256K or 4M");
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
      throw UsageError("--gate-stat: unknown statistic '" + gate_statistic + "' (p50, p90, p99, avg, max)");
    opt.gate.statistic = *statistic;
  }
  if (given("--gate")) opt.gate.gated = gated_metrics(gate_list, opt.phase_names);
  if (opt.baseline.empty() && (app.count("--gate") + app.count("--gate-stat") + app.count("--max-regression")) > 0) {
    result.warnings.emplace_back("--gate, --gate-stat and --max-regression only matter with --baseline");
  }
  if (!opt.command.empty() && opt.command.front() != '/') {
    result.warnings.push_back("COMMAND '" + opt.command +
                              "' is not an absolute path: it only matches an execve given exactly that string");
  }
  return result;
}

}  // namespace hacoboot
