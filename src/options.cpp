#include "hacoboot/options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

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
  hacoboot-sampler -n 20 --events boots.tsv # 20 boots, one TSV row per milestone
  hacoboot-sampler --haconiwa /opt/haconiwa/bin/haconiwa -d 30s

EXIT STATUS:
  0 success, 1 runtime error (privileges, kernel), 2 bad usage or input,
  4 the --run command failed.
)";

constexpr std::array<std::pair<std::string_view, ReportFormat>, 4> kFormats{{
    {"table", ReportFormat::Table},
    {"bpftrace", ReportFormat::Bpftrace},
    {"json", ReportFormat::Json},
    {"tsv", ReportFormat::Tsv},
}};

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine result;
  auto& opt = result.options;

  CLI::App app(kDescription, "hacoboot-sampler");
  app.footer(kExamples);
  app.set_version_flag("--version", "hacoboot-sampler " HACOBOOT_VERSION);
  app.get_formatter()->column_width(34);

  app.add_option("COMMAND", opt.command,
                 "Container init command: its execve (filename compared as given, like the "
                 "reference script) marks \"execve\". Default: the container's first execve.");
  app.add_option("--haconiwa", opt.haconiwa, "Haconiwa binary holding the USDT probe (default: haconiwa in PATH)")
      ->type_name("PATH");
  std::string format;
  app.add_option("-f,--format", format, "Summary format: table (default), bpftrace, json, tsv")->type_name("FORMAT");
  app.add_option("-o,--output", opt.output, "Write the summary to FILE instead of stdout")->type_name("FILE");
  app.add_option("--events", opt.events, "Stream one TSV row per boot milestone to FILE")->type_name("FILE");

  std::string from;
  app.add_option("--from", from, "Phase that starts the clock, by number or name (default 1, START_SV)")
      ->type_name("PHASE");
  std::string run;
  app.add_option("-c,--run", run, "Run CMD with /bin/sh -c once probes are live; stop when it exits")->type_name("CMD");
  std::int64_t count = 0;
  app.add_option("-n,--count", count, "Stop after N boots reached listen (or ended)")->type_name("N");
  std::string duration;
  app.add_option("-d,--duration", duration, "Stop after DUR (500ms, 30s, 5m)")->type_name("DUR");
  app.add_flag("--hist", opt.histograms, "Table: also log2 histograms of execve and listen times");
  app.add_flag("-v,--verbose", opt.verbose, "libbpf and debug messages on stderr");

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

  if (!format.empty()) {
    const auto chosen =
        std::find_if(kFormats.begin(), kFormats.end(), [&](const auto& named) { return iequals(named.first, format); });
    if (chosen == kFormats.end())
      throw UsageError("--format: unknown format '" + format + "' (table, bpftrace, json or tsv)");
    opt.format = chosen->second;
  }
  if (!from.empty()) {
    const auto phase = parse_phase(from);
    if (!phase) throw UsageError("--from: unknown phase '" + from + "' (a number 0-127 or a name such as START_SV)");
    opt.start_phase = *phase;
  }
  if (!run.empty()) opt.run = run;
  if (app.count("--count") > 0) {
    if (count < 1) throw UsageError("--count: must be at least 1, got " + std::to_string(count));
    opt.count = static_cast<std::uint64_t>(count);
  }
  if (!duration.empty()) {
    opt.duration = parse_duration(duration);
    if (!opt.duration) throw UsageError("--duration: '" + duration + "' is not a duration such as 500ms, 30s or 5m");
  }
  if (!opt.command.empty() && opt.command.front() != '/') {
    result.warnings.push_back("COMMAND '" + opt.command +
                              "' is not an absolute path: it only matches an execve given exactly that string");
  }
  return result;
}

}  // namespace hacoboot
