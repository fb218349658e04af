// parse_command_line: the only reader of argv. Each test passes the argv a
// user would type.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"

namespace hacoboot {
namespace {

using namespace std::chrono_literals;

// parse("-f", "json") parses `hacoboot-sampler -f json`.
template <typename... Args>
CommandLine parse(Args... args) {
  const std::vector<const char*> argv{"hacoboot-sampler", args...};
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

TEST(Options, Defaults) {
  const auto cl = parse();
  const auto& o = cl.options;
  EXPECT_EQ(o.command, "");
  EXPECT_EQ(o.haconiwa, "haconiwa");
  EXPECT_EQ(o.format, ReportFormat::Table);
  EXPECT_EQ(o.output, "");
  EXPECT_EQ(o.events, "");
  EXPECT_EQ(o.start_phase, 1);
  EXPECT_EQ(o.run, std::nullopt);
  EXPECT_EQ(o.count, std::nullopt);
  EXPECT_EQ(o.duration, std::nullopt);
  EXPECT_FALSE(o.verbose);
  EXPECT_FALSE(o.quiet);
  EXPECT_FALSE(o.histograms);
  EXPECT_EQ(o.warmup, 0u);
  EXPECT_EQ(o.events_format, EventsFormat::Tsv);
  EXPECT_EQ(o.timeline, "");
  EXPECT_EQ(o.trace_out, "");
  EXPECT_EQ(o.baseline, "");
  EXPECT_EQ(o.gate.statistic, GateStatistic::P50);
  EXPECT_EQ(o.gate.max_regression_pct, 10.0);
  EXPECT_EQ(o.gate.gated, (std::set<std::string>{"execve", "listen"}));
  EXPECT_EQ(o.phase_names.name(123), "USR1");
  EXPECT_EQ(o.btf_cache, "/var/cache/hacoboot-sampler");
  EXPECT_EQ(o.syscall_hooks, SyscallHooks::Auto);
  EXPECT_EQ(o.usdt_attach, UsdtAttach::Auto);
  EXPECT_EQ(cl.exit_message, std::nullopt);
  EXPECT_TRUE(cl.warnings.empty());
}

TEST(Options, EveryOptionInShortForm) {
  const auto cl = parse("-f", "bpftrace", "-o", "sum.txt", "-c", "./boot.sh 3", "-n", "20", "-d", "500ms", "-v", "-q",
                        "/u/app/bin/rails");
  const auto& o = cl.options;
  EXPECT_EQ(o.command, "/u/app/bin/rails");
  EXPECT_EQ(o.format, ReportFormat::Bpftrace);
  EXPECT_EQ(o.output, "sum.txt");
  EXPECT_EQ(o.run, "./boot.sh 3");
  EXPECT_EQ(o.count, 20u);
  EXPECT_EQ(o.duration, std::chrono::nanoseconds(500ms));
  EXPECT_TRUE(o.verbose);
  EXPECT_TRUE(o.quiet);
  EXPECT_EQ(cl.exit_message, std::nullopt);
  EXPECT_TRUE(cl.warnings.empty());
}

TEST(Options, EveryOptionInLongForm) {
  const auto cl = parse("--haconiwa", "/opt/haconiwa/bin/haconiwa", "--format", "json", "--output", "boot.json",
                        "--events", "boots.jsonl", "--events-format", "jsonl", "--from", "START_FORK", "--run",
                        "make boot", "--count", "3", "--duration", "5m", "--warmup", "2", "--hist", "--timeline",
                        "boots.svg", "--trace-out", "boots.trace.json", "--baseline", "base.json", "--max-regression",
                        "15.5", "--gate-stat", "p90", "--gate", "execve,CONTAINER_CHROOTED,16", "--gate-junit",
                        "gate.xml", "--gate-markdown", "gate.md", "--btf-cache", "/tmp/btf", "--syscall-hooks",
                        "raw_syscalls", "--usdt-attach", "perf", "--quiet", "--verbose", "/bin/busybox");
  const auto& o = cl.options;
  EXPECT_EQ(o.command, "/bin/busybox");
  EXPECT_EQ(o.haconiwa, "/opt/haconiwa/bin/haconiwa");
  EXPECT_EQ(o.format, ReportFormat::Json);
  EXPECT_EQ(o.output, "boot.json");
  EXPECT_EQ(o.events, "boots.jsonl");
  EXPECT_EQ(o.events_format, EventsFormat::Jsonl);
  EXPECT_EQ(o.start_phase, 2);
  EXPECT_EQ(o.run, "make boot");
  EXPECT_EQ(o.count, 3u);
  EXPECT_EQ(o.duration, std::chrono::nanoseconds(5min));
  EXPECT_EQ(o.warmup, 2u);
  EXPECT_TRUE(o.histograms);
  EXPECT_EQ(o.timeline, "boots.svg");
  EXPECT_EQ(o.trace_out, "boots.trace.json");
  EXPECT_EQ(o.baseline, "base.json");
  EXPECT_EQ(o.gate.max_regression_pct, 15.5);
  EXPECT_EQ(o.gate.statistic, GateStatistic::P90);
  EXPECT_EQ(o.gate.gated, (std::set<std::string>{"execve", "phase:18", "phase:16"}));
  EXPECT_EQ(o.gate_junit, "gate.xml");
  EXPECT_EQ(o.gate_markdown, "gate.md");
  EXPECT_EQ(o.btf_cache, "/tmp/btf");
  EXPECT_EQ(o.syscall_hooks, SyscallHooks::RawSyscalls);
  EXPECT_EQ(o.usdt_attach, UsdtAttach::Perf);
  EXPECT_TRUE(o.quiet);
  EXPECT_TRUE(o.verbose);
  EXPECT_TRUE(cl.warnings.empty());
}

TEST(Options, FormatValuesIgnoreCase) {
  EXPECT_EQ(parse("-f", "table").options.format, ReportFormat::Table);
  EXPECT_EQ(parse("-f", "bpftrace").options.format, ReportFormat::Bpftrace);
  EXPECT_EQ(parse("-f", "json").options.format, ReportFormat::Json);
  EXPECT_EQ(parse("--format", "JSON").options.format, ReportFormat::Json);
  EXPECT_EQ(parse("--format", "BpfTrace").options.format, ReportFormat::Bpftrace);
  EXPECT_EQ(parse("--format=Table").options.format, ReportFormat::Table);
  EXPECT_EQ(parse("-f", "TSV").options.format, ReportFormat::Tsv);
  EXPECT_EQ(parse("--events-format", "JSONL").options.events_format, EventsFormat::Jsonl);
  EXPECT_EQ(parse("--events-format", "tsv").options.events_format, EventsFormat::Tsv);
}

// A CI job that asks for the gate's files reads them: one that would never
// be written is refused, not warned about.
TEST(Options, CheckAndBtf) {
  const auto cl = parse("--check", "--btf", "/boot/vmlinux.btf");
  EXPECT_EQ(cl.options.subcommand, Command::Check);
  EXPECT_EQ(cl.options.btf, "/boot/vmlinux.btf");
  EXPECT_EQ(parse().options.subcommand, Command::Trace);
  EXPECT_TRUE(parse().options.btf.empty());
  EXPECT_THROW(parse("--btf", ""), UsageError);
  EXPECT_THROW(parse("--check", "--list"), UsageError);
}

TEST(Options, GateFilesNeedABaselineOrCompare) {
  EXPECT_THROW(parse("--gate-junit", "gate.xml"), UsageError);
  EXPECT_THROW(parse("--gate-markdown", "gate.md"), UsageError);
  EXPECT_THROW(parse("--baseline", "base.json", "--gate-junit", ""), UsageError);
  const auto cl = parse("compare", "base.json", "new.json", "--gate-junit", "gate.xml", "--gate-markdown", "gate.md");
  EXPECT_EQ(cl.options.gate_junit, "gate.xml");
  EXPECT_EQ(cl.options.gate_markdown, "gate.md");
}

TEST(Options, UnknownFormatIsAUsageError) {
  EXPECT_THROW(parse("-f", "xml"), UsageError);
  EXPECT_THROW(parse("-f", "jsonl"), UsageError);
  EXPECT_THROW(parse("--events-format", "csv"), UsageError);
  EXPECT_THROW(parse("--syscall-hooks", "fentry"), UsageError);
  EXPECT_THROW(parse("--usdt-attach", "kprobe"), UsageError);
  EXPECT_EQ(parse("--usdt-attach", "uprobe_multi").options.usdt_attach, UsdtAttach::UprobeMulti);
}

// `-f "$FORMAT"` with FORMAT unset: an empty value is no format, and must be
// refused like any unknown one (exit 2), not silently taken as the default.
TEST(Options, EmptyValueIsAUsageError) {
  EXPECT_THROW(parse("-f", ""), UsageError) << "BUG: -f '' silently gives the table";
  EXPECT_THROW(parse("--from", ""), UsageError) << "BUG: --from '' silently gives START_SV";
  EXPECT_THROW(parse("-d", ""), UsageError) << "BUG: -d '' silently traces until Ctrl-C";
}

// The message of the UsageError parse throws for args.
template <typename... Args>
std::string refusal(Args... args) {
  try {
    parse(args...);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

// The options taking a value, as --help lists them ("  -o,--output FILE"):
// an option added later is covered without being named here.
std::vector<std::string> options_taking_a_value() {
  const auto help = parse("--help").exit_message.value_or("");
  static const std::regex kValueOption(R"(^ +(?:-[a-z],)?(--[a-z-]+) [A-Z:]+)");
  std::vector<std::string> options;
  std::istringstream lines(help);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, kValueOption)) options.push_back(match[1]);
  }
  return options;
}

// `--baseline "$BASELINE"` with BASELINE unset turned the gate off and
// passed; `-n ''` read as 0. An empty value is refused whatever the option.
TEST(Options, EveryOptionRefusesAnEmptyValue) {
  const auto options = options_taking_a_value();
  EXPECT_GE(options.size(), 20U) << "--help lists the options";
  for (const auto& option : options) {
    // --run-as needs --run; --run itself is the one under test there.
    const auto message = option == "--run" ? refusal(option.c_str(), "") : refusal(option.c_str(), "", "--run", "true");
    EXPECT_EQ(message, option + ": empty value") << option;
  }
  EXPECT_EQ(refusal("-o", ""), "--output: empty value");
  EXPECT_EQ(refusal("-n", ""), "--count: empty value");
  EXPECT_EQ(refusal(""), "COMMAND: empty value");
  EXPECT_EQ(refusal("--baseline="), "--baseline: empty value");
}

// CLI11 read "0x10" as 16, "010" as 8 (and `-p 025041` traced another
// process), and saturated on overflow.
TEST(Options, IntegersAreDecimalAndInRange) {
  EXPECT_EQ(parse("--warmup", "010").options.warmup, 10U);
  EXPECT_EQ(parse("-p", "025041").options.pid, 25041U);
  EXPECT_EQ(parse("-n", "1000000000").options.count, 1'000'000'000U);
  EXPECT_EQ(parse("-p", "4194304").options.pid, 4'194'304U);
  for (const char* bad : {"0x10", "+5", " 5", "5 ", "5x", "1e3", "-1", "0", "99999999999999999999", "1000000001"}) {
    EXPECT_EQ(refusal("-n", bad), std::string("--count: '") + bad + "' is not a decimal number from 1 to 1000000000");
  }
  EXPECT_EQ(refusal("--warmup", "0x10"), "--warmup: '0x10' is not a decimal number from 0 to 1000000000");
  EXPECT_EQ(refusal("-p", "4194305"), "--pid: '4194305' is not a decimal number from 1 to 4194304");
  EXPECT_EQ(refusal("--pid", "0"), "--pid: '0' is not a decimal number from 1 to 4194304");
}

// "nan" passed every comparison (the gate could never fail); -5 printed a
// 300-digit bound.
TEST(Options, MaxRegressionIsAFinitePercentageAbove0UpTo1000) {
  EXPECT_EQ(parse("--max-regression", "0.5").options.gate.max_regression_pct, 0.5);
  EXPECT_EQ(parse("--max-regression", "12.5").options.gate.max_regression_pct, 12.5);
  EXPECT_EQ(parse("--max-regression", "1000").options.gate.max_regression_pct, 1000.0);
  for (const char* bad :
       {"0", "0.0", "nan", "NaN", "inf", "-inf", "-5", "-0", "1000.5", "1e9", "1e1", "0x10", "+5", "5%", "ten"}) {
    EXPECT_EQ(refusal("--max-regression", bad),
              std::string("--max-regression: '") + bad + "' is not a percentage above 0 and at most 1000");
  }
}

// A level of significance: 0 could never reject, above 0.5 a "regression"
// would more likely be noise than not.
TEST(Options, AlphaIsALevelAbove0UpToOneHalf) {
  EXPECT_EQ(parse().options.gate.alpha, 0.05);
  EXPECT_EQ(parse("--alpha", "0.01").options.gate.alpha, 0.01);
  EXPECT_EQ(parse("--alpha", "0.5").options.gate.alpha, 0.5);
  for (const char* bad : {"0", "0.51", "1", "nan", "inf", "-0.05", "5e-2", ".05x", "+0.05", "five"}) {
    EXPECT_EQ(refusal("--alpha", bad), std::string("--alpha: '") + bad + "' is not a level above 0 and at most 0.5");
  }
}

TEST(Options, GateOnTakesNoiseFreeOrWall) {
  EXPECT_EQ(parse().options.gate.figure, GateFigure::NoiseFree);
  EXPECT_EQ(parse("--gate-on", "wall").options.gate.figure, GateFigure::Wall);
  EXPECT_EQ(parse("--gate-on", "Noise-Free").options.gate.figure, GateFigure::NoiseFree);
  EXPECT_EQ(refusal("--gate-on", "cpu"), "--gate-on: unknown figure 'cpu' (noise-free, wall)");
}

// `compare` takes the same gate options as a traced run, checked the same way.
TEST(Options, CompareTakesTwoSummariesAndTheGateOptions) {
  const auto o = parse("compare", "base.json", "new.json", "--alpha", "0.01", "--gate-on", "wall", "--gate", "listen",
                       "--max-regression", "20", "--gate-stat", "p90")
                     .options;
  EXPECT_EQ(o.baseline, "base.json");
  EXPECT_EQ(o.compared, "new.json");
  EXPECT_EQ(o.gate.alpha, 0.01);
  EXPECT_EQ(o.gate.figure, GateFigure::Wall);
  EXPECT_EQ(o.gate.gated, std::set<std::string>{"listen"});
  EXPECT_EQ(o.gate.max_regression_pct, 20.0);
  EXPECT_EQ(o.gate.statistic, GateStatistic::P90);
  EXPECT_EQ(refusal("compare", "a.json", "b.json", "--alpha", "0"),
            "--alpha: '0' is not a level above 0 and at most 0.5");
  EXPECT_EQ(refusal("compare", "a.json", "b.json", "--max-regression", ""), "--max-regression: empty value");
  EXPECT_EQ(refusal("compare", "a.json", ""), "NEW: empty value");
  EXPECT_NE(refusal("compare", "a.json").find("NEW is required"), std::string::npos);
  EXPECT_EQ(refusal("-q", "compare", "a.json", "b.json"), "compare: --quiet is not an option of compare");
  EXPECT_EQ(refusal("--max-regression", "5", "compare", "a.json", "b.json"),
            "compare: --max-regression is an option of compare: give it after the word compare");
  // The comparison is printed: a gate file on standard output would be mixed into it.
  for (const char* option : {"--gate-junit", "--gate-markdown", "--gate-json"}) {
    EXPECT_EQ(refusal("compare", "a.json", "b.json", option, "-"),
              std::string("compare: ") + option + " -: standard output carries the comparison; write it to a file");
  }
  EXPECT_EQ(o.subcommand, Command::Compare);
  EXPECT_EQ(parse("/bin/app").options.subcommand, Command::Trace) << "a traced run";
}

// The first word is the command; trace when there is none. The tool's
// options go before or after trace, list and check alike, and --list and
// --check, their older spellings, still work.
TEST(Options, CommandsTakeTheToolsOptionsBeforeOrAfterTheirWord) {
  const auto traced = parse("-f", "json", "trace", "-n", "3", "/bin/app").options;
  EXPECT_EQ(traced.subcommand, Command::Trace);
  EXPECT_EQ(traced.format, ReportFormat::Json);
  EXPECT_EQ(traced.count, 3U);
  EXPECT_EQ(traced.command, "/bin/app");
  const auto unnamed = parse("-f", "json", "-n", "3", "/bin/app").options;
  EXPECT_EQ(unnamed.subcommand, Command::Trace);
  EXPECT_EQ(unnamed.command, "/bin/app");

  const auto listed = parse("list", "-p", "4242").options;
  EXPECT_EQ(listed.subcommand, Command::List);
  EXPECT_EQ(listed.pid, 4242U);
  EXPECT_EQ(parse("--haconiwa", "/opt/h", "list").options.haconiwa, "/opt/h");
  const auto checked = parse("check", "--btf", "/boot/vmlinux.btf").options;
  EXPECT_EQ(checked.subcommand, Command::Check);
  EXPECT_EQ(checked.btf, "/boot/vmlinux.btf");

  EXPECT_THROW(parse("list", "--check"), UsageError);
  EXPECT_THROW(parse("trace", "--list"), UsageError);
  EXPECT_THROW(parse("list", "--max-regression", "x"), UsageError) << "the tool's options checked as ever";
}

// `record -o FILE`: the trace options, given before or after it, COMMAND
// included; the recording is its one output.
TEST(Options, RecordTakesTheTraceOptionsAndNoOtherOutput) {
  const auto o = parse("-q", "record", "-o", "run.hbrec", "-n", "3", "--from", "START_FORK", "/bin/app").options;
  EXPECT_EQ(o.record, "run.hbrec");
  EXPECT_EQ(o.subcommand, Command::Record);
  EXPECT_EQ(o.count, 3U);
  EXPECT_EQ(o.start_phase, 2);
  EXPECT_EQ(o.command, "/bin/app");
  EXPECT_TRUE(o.quiet);
  EXPECT_NE(refusal("record", "-o", "run.hbrec", "--timeline", "b.svg").find("record: --timeline is an output"),
            std::string::npos);
  EXPECT_NE(refusal("record", "-o", "run.hbrec", "--record", "b").find("record: --record"), std::string::npos);
  EXPECT_NE(refusal("record", "/bin/app").find("--output is required"), std::string::npos);
  const auto traced = parse("--record", "run.hbrec", "-o", "summary.txt", "/bin/app").options;
  EXPECT_EQ(traced.record, "run.hbrec");
  EXPECT_EQ(traced.subcommand, Command::Trace) << "a traced run's --record comes beside its outputs";
  EXPECT_NE(refusal("--record", "-", "/bin/app").find("standard output carries the summary"), std::string::npos);
  EXPECT_EQ(parse("--record", "-", "-o", "s.txt", "/bin/app").options.record, "-");
  EXPECT_EQ(parse("record", "-o", "-", "/bin/app").options.record, "-") << "record writes nothing else there";
}

// Standard output takes one output: the summary's table followed by a
// trace's JSON or a flame graph's lines is neither.
TEST(Options, StandardOutputTakesOneOutput) {
  for (const char* option : {"--stacks", "--trace-out", "--events", "--timeline"}) {
    EXPECT_NE(refusal(option, "-", "/bin/app").find(std::string(option) + " -: standard output carries the summary"),
              std::string::npos)
        << option;
    EXPECT_EQ(parse(option, "-", "-o", "s.txt", "/bin/app").options.output, "s.txt") << option;
  }
  EXPECT_NE(refusal("--stacks", "-", "-o", "-", "/bin/app").find("carries the summary"), std::string::npos);
  EXPECT_NE(refusal("-o", "s.txt", "--stacks", "-", "--trace-out", "-", "/bin/app")
                .find("--trace-out - and --stacks -: standard output takes one of them"),
            std::string::npos);
  EXPECT_NE(refusal("report", "run.hbrec", "--stacks", "-").find("--stacks -: standard output carries the summary"),
            std::string::npos)
      << "report writes the same outputs";
  EXPECT_EQ(parse("report", "run.hbrec", "--stacks", "-", "-o", "s.txt").options.stacks, "-");
}

// The stacks are the syscalls': asking for them attaches the syscall hooks,
// as --all-syscalls does.
TEST(Options, StacksImplySyscalls) {
  const auto o = parse("--stacks", "boots.folded", "/bin/app").options;
  EXPECT_EQ(o.stacks, "boots.folded");
  EXPECT_TRUE(o.syscalls);
  EXPECT_TRUE(parse("--stacks", "-", "-o", "s.txt", "/bin/app").options.syscalls);
  EXPECT_FALSE(parse("/bin/app").options.syscalls);
}

// Only --format bpftrace, alone, reads no scheduler state: every other
// output, beside it or instead of it, needs the states' hooks.
TEST(Options, OnlyBpftraceFormatAloneGoesWithoutTheStates) {
  EXPECT_TRUE(parse("/bin/app").options.states);
  EXPECT_FALSE(parse("-f", "bpftrace", "/bin/app").options.states);
  EXPECT_FALSE(parse("-f", "bpftrace", "-o", "sum.txt", "-n", "3", "/bin/app").options.states);
  for (const auto& beside : std::vector<std::vector<std::string>>{{"-f", "json"},
                                                                  {"-f", "tsv"},
                                                                  {"--events", "rows.tsv"},
                                                                  {"--timeline", "b.svg"},
                                                                  {"--trace-out", "t.json"},
                                                                  {"--stacks", "s.folded"},
                                                                  {"--syscalls"},
                                                                  {"--record", "run.hbrec"},
                                                                  {"--serve", "127.0.0.1:0"},
                                                                  {"--textfile", "m.prom"},
                                                                  {"--baseline", "base.json"}}) {
    std::vector<std::string> args{"-f", "bpftrace"};
    if (beside.front() == "-f") args.clear();
    args.insert(args.end(), beside.begin(), beside.end());
    args.emplace_back("/bin/app");
    std::vector<const char*> argv{"hacoboot-sampler"};
    for (const auto& arg : args) argv.push_back(arg.c_str());
    EXPECT_TRUE(parse_command_line(static_cast<int>(argv.size()), argv.data()).options.states) << beside.front();
  }
}

// The kernel profile is per step and syscall: it implies --syscalls, at
// 999 Hz unless --kernel-profile-hz (which implies it) says otherwise.
TEST(Options, KernelProfileImpliesSyscallsAtItsFrequency) {
  const auto o = parse("--kernel-profile", "/bin/app").options;
  EXPECT_EQ(o.kernel_profile_hz, 999U);
  EXPECT_TRUE(o.syscalls);
  EXPECT_EQ(o.command, "/bin/app") << "the flag takes no value";
  const auto given = parse("--kernel-profile-hz", "99", "/bin/app").options;
  EXPECT_EQ(given.kernel_profile_hz, 99U);
  EXPECT_TRUE(given.syscalls);
  EXPECT_EQ(parse("/bin/app").options.kernel_profile_hz, 0U);
  for (const char* wrong : {"0", "10001", "99x", "-5"}) {
    EXPECT_NE(refusal("--kernel-profile-hz", wrong, "/bin/app").find("is not a frequency from 1 to 10000 Hz"),
              std::string::npos)
        << wrong;
  }
}

// `report FILE`: the outputs' and the gate's options, nothing that traces.
TEST(Options, ReportTakesTheOutputAndGateOptionsOnly) {
  const auto o = parse("report", "run.hbrec", "-f", "json", "-o", "s.json", "--events", "rows.jsonl", "--events-format",
                       "jsonl", "--timeline", "b.svg", "--trace-out", "t.json", "--stacks", "s.folded", "--baseline",
                       "base.json", "--alpha", "0.01")
                     .options;
  EXPECT_EQ(o.replayed, "run.hbrec");
  EXPECT_EQ(o.format, ReportFormat::Json);
  EXPECT_EQ(o.output, "s.json");
  EXPECT_EQ(o.events, "rows.jsonl");
  EXPECT_EQ(o.events_format, EventsFormat::Jsonl);
  EXPECT_EQ(o.timeline, "b.svg");
  EXPECT_EQ(o.trace_out, "t.json");
  EXPECT_EQ(o.stacks, "s.folded");
  EXPECT_EQ(o.baseline, "base.json");
  EXPECT_DOUBLE_EQ(o.gate.alpha, 0.01);
  EXPECT_EQ(refusal("-q", "report", "run.hbrec"), "report: --quiet is not an option of report");
  EXPECT_EQ(refusal("-f", "json", "report", "run.hbrec"),
            "report: --format is an option of report: give it after the word report");
  EXPECT_EQ(refusal("--record", "r.hbrec", "report", "run.hbrec"), "report: --record is not an option of report");
  EXPECT_NE(refusal("report", "run.hbrec", "-n", "3").find("not expected"), std::string::npos);
  EXPECT_NE(refusal("report", "run.hbrec", "--gate-junit", "g.xml").find("written only with --baseline"),
            std::string::npos);
  EXPECT_TRUE(parse("/bin/app").options.replayed.empty()) << "a traced run";
}

// The kernel side keeps 255 bytes of an execve's file name (and its NUL): a
// longer COMMAND could never match, and the run would end without a boot.
TEST(Options, ACommandTheKernelCannotMatchIsRefused) {
  const std::string longest = "/" + std::string(254, 'a');
  EXPECT_EQ(parse(longest.c_str()).options.command, longest);
  const std::string too_long = longest + "a";
  EXPECT_EQ(refusal(too_long.c_str()),
            "COMMAND is 256 bytes long: the tool sees at most 255 bytes of an execve's file name, so it could never "
            "match");
}

// A COMMAND the summary could not carry as it is: invalid UTF-8 failed the
// JSON summary after the whole run, a TAB made the baseline of the run
// refuse the run itself.
TEST(Options, ACommandThatIsNotPrintableUtf8IsRefused) {
  EXPECT_EQ(refusal("/app/\xFF\xFEinit"),
            "COMMAND '/app/\\xFF\\xFEinit' is not printable UTF-8: control characters and invalid UTF-8 are "
            "refused, as reports and baselines could not carry it as it is");
  for (const char* command : {"/app/my\tinit", "/app/\x1B[31minit", "/app/init\n"}) {
    EXPECT_THROW(parse(command), UsageError) << command;
  }
  EXPECT_EQ(parse("/app/起動").options.command, "/app/起動");
}

// Values typed by a user are echoed escaped: a terminal never gets raw bytes.
TEST(Options, UnknownValuesAreEchoedEscaped) {
  EXPECT_EQ(refusal("-f", "\x1B]0;owned\x07"),
            "--format: unknown value '\\x1B]0;owned\\x07' (table, bpftrace, json, tsv)");
  EXPECT_EQ(refusal("--from", "\xFF"), "--from: unknown phase '\\xFF' (a number 0-127 or a name such as START_SV)");
}

TEST(Options, FromByNumberOrName) {
  EXPECT_EQ(parse("--from", "0").options.start_phase, 0);
  EXPECT_EQ(parse("--from", "cli_start").options.start_phase, 0);
  EXPECT_EQ(parse("--from", "11").options.start_phase, 11);
  EXPECT_EQ(parse("--from", "CONTAINER_EXECING").options.start_phase, 21);
}

TEST(Options, BadFromIsAUsageError) {
  EXPECT_THROW(parse("--from", "128"), UsageError);
  EXPECT_THROW(parse("--from", "-1"), UsageError);
  EXPECT_THROW(parse("--from", "FOO"), UsageError);
}

TEST(Options, CountMustBeAPositiveInteger) {
  EXPECT_EQ(parse("-n", "1").options.count, 1u);
  EXPECT_THROW(parse("-n", "0"), UsageError);
  EXPECT_THROW(parse("--count", "0"), UsageError);
  EXPECT_THROW(parse("-n", "-1"), UsageError);
  EXPECT_THROW(parse("-n", "ten"), UsageError);
  EXPECT_THROW(parse("-n"), UsageError);
}

TEST(Options, BadDurationIsAUsageError) {
  for (const char* bad : {"0", "5x", "-5s", "ms", "99999999999999999999"}) {
    EXPECT_THROW(parse("-d", bad), UsageError) << bad;
  }
}

TEST(Options, RunAsNeedsRun) {
  EXPECT_THROW(parse("--run-as", "nobody"), UsageError) << "BUG: --run-as without --run is silently ignored";
  EXPECT_EQ(parse("--run-as", "nobody", "--run", "true").options.run_as, "nobody");
}

TEST(Options, ExporterOptions) {
  const auto o =
      parse("--serve", ":9477", "--textfile", "/var/lib/node/hacoboot.prom", "--textfile-interval", "1m").options;
  ASSERT_TRUE(o.serve.has_value());
  EXPECT_EQ(o.serve->host, "127.0.0.1") << "metrics stay on loopback unless asked";
  EXPECT_EQ(o.serve->port, 9477);
  EXPECT_EQ(o.textfile, "/var/lib/node/hacoboot.prom");
  EXPECT_EQ(o.textfile_interval, std::chrono::nanoseconds(std::chrono::minutes(1)));
  EXPECT_EQ(parse().options.textfile_interval, std::chrono::nanoseconds(std::chrono::seconds(15)));
  EXPECT_THROW(parse("--serve", "9477"), UsageError);
  EXPECT_THROW(parse("--serve", "localhost:9477"), UsageError);
  EXPECT_THROW(parse("--textfile-interval", "0s"), UsageError);
  EXPECT_THROW(parse("--textfile-interval", "soon"), UsageError);
}

TEST(Options, PidAndList) {
  const auto o = parse("-p", "4242", "--list").options;
  EXPECT_EQ(o.pid, 4242U);
  EXPECT_EQ(o.subcommand, Command::List);
  EXPECT_THROW(parse("-p", "0"), UsageError);
  EXPECT_THROW(parse("--pid", "-5"), UsageError);
  EXPECT_THROW(parse("--pid", "x"), UsageError);
  EXPECT_THROW(parse("--pid", "42", "--haconiwa", "/usr/bin/haconiwa"), UsageError) << "which binary?";
}

// list and check trace nothing: a traced run's option would do nothing, and
// a pre-flight check would pass where the run is refused.
TEST(Options, ListAndCheckRefuseTheOptionsOfATracedRun) {
  EXPECT_EQ(refusal("check", "--baseline", "base.json"),
            "check: --baseline is an option of a traced run, not of check");
  EXPECT_EQ(refusal("list", "-o", "probes.txt"), "list: --output is an option of a traced run, not of list");
  EXPECT_EQ(refusal("--check", "--run", "true"), "check: --run is an option of a traced run, not of check");
  EXPECT_EQ(refusal("check", "--serve", "127.0.0.1:9477"), "check: --serve is an option of a traced run, not of check");
  EXPECT_EQ(parse("check", "--syscalls", "--usdt-attach", "perf").options.subcommand, Command::Check)
      << "what the check is about stays";
  EXPECT_EQ(parse("list", "-v").options.subcommand, Command::List);
}

TEST(Options, WarmupMayBeZeroButNotNegative) {
  EXPECT_EQ(parse("--warmup", "0").options.warmup, 0u);
  EXPECT_THROW(parse("--warmup", "-1"), UsageError);
  EXPECT_THROW(parse("--warmup", "x"), UsageError);
}

TEST(Options, GateOptions) {
  EXPECT_EQ(parse("--baseline", "b.json", "--gate", "all").options.gate.gated, std::set<std::string>{});
  EXPECT_EQ(parse("--baseline", "b.json", "--gate", "LISTEN").options.gate.gated, std::set<std::string>{"listen"});
  EXPECT_EQ(parse("--baseline", "b.json", "--gate-stat", "MAX").options.gate.statistic, GateStatistic::Max);
  EXPECT_THROW(parse("--baseline", "b.json", "--gate", "execve,NOPE"), UsageError);
  EXPECT_THROW(parse("--baseline", "b.json", "--gate-stat", "p42"), UsageError);
  EXPECT_THROW(parse("--baseline", "b.json", "--max-regression", "-1"), UsageError);
}

TEST(Options, GateOptionsWithoutBaselineGiveAWarning) {
  for (const char* option : {"--max-regression", "--alpha", "--gate-on", "--gate-stat", "--gate"}) {
    const std::string value = option == std::string("--gate-on")     ? "wall"
                              : option == std::string("--gate-stat") ? "p90"
                              : option == std::string("--gate")      ? "listen"
                                                                     : "0.1";
    const auto cl = parse(option, value.c_str());
    ASSERT_EQ(cl.warnings.size(), 1u) << option;
    EXPECT_NE(cl.warnings[0].find("only matter with --baseline"), std::string::npos) << cl.warnings[0];
  }
}

// A file removed when the test ends. Named uniquely: ctest runs each test
// as a process of its own, in parallel, and a shared name let one test's
// file be replaced or removed under another's.
class TempFile {
 public:
  explicit TempFile(const std::string& text) : path_(::testing::TempDir() + "hacoboot-phase-names.XXXXXX") {
    const int fd = ::mkstemp(path_.data());
    if (fd < 0) throw std::runtime_error("mkstemp " + path_ + ": " + std::strerror(errno));
    ::close(fd);
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Options, PhaseNamesFileNamesPhasesAndFromUsesThem) {
  const TempFile names("# our markers\n123 APP_READY\n124 DB_MIGRATED\n");
  const auto cl = parse("--phase-names", names.path().c_str(), "--from", "app_ready");
  EXPECT_EQ(cl.options.start_phase, 123);
  EXPECT_EQ(cl.options.phase_names.name(124), "DB_MIGRATED");
  EXPECT_EQ(cl.options.phase_names.name(21), "CONTAINER_EXECING");
  EXPECT_EQ(cl.options.phase_names_file, names.path()) << "an input outputs must not replace";
}

TEST(Options, PhaseNamesFileMissingOrMalformedIsAUsageError) {
  EXPECT_THROW(parse("--phase-names", "/nonexistent/hacoboot-names.txt"), UsageError);
  const TempFile bad("123\n");
  EXPECT_THROW(parse("--phase-names", bad.path().c_str()), UsageError);
}

// /dev/zero grew memory without end, a FIFO blocked, a directory read as empty.
TEST(Options, PhaseNamesFileMustBeARegularFileOfAtMost1MiB) {
  EXPECT_EQ(refusal("--phase-names", "/dev/zero"), "--phase-names: /dev/zero: a character device, not a regular file");
  EXPECT_EQ(refusal("--phase-names", "/"), "--phase-names: /: a directory, not a regular file");
  const TempFile big(std::string(kMaxPhaseNamesBytes - 13, '#') + "\n123 APP_READY\n");
  EXPECT_EQ(refusal("--phase-names", big.path().c_str()),
            "--phase-names: " + big.path() + ": larger than 1 MiB, the most this option reads");
}

TEST(Options, BareDurationIsSeconds) {
  EXPECT_EQ(parse("--duration", "30").options.duration, std::chrono::nanoseconds(30s));
}

TEST(Options, HelpSetsTheExitMessage) {
  for (const char* flag : {"--help", "-h"}) {
    const auto cl = parse(flag);
    ASSERT_TRUE(cl.exit_message.has_value()) << flag;
    EXPECT_NE(cl.exit_message->find("COMMAND"), std::string::npos) << *cl.exit_message;
    EXPECT_NE(cl.exit_message->find("--from"), std::string::npos) << *cl.exit_message;
    EXPECT_NE(cl.exit_message->find("EXIT STATUS"), std::string::npos) << *cl.exit_message;
  }
}

TEST(Options, HelpWinsOverOtherOptions) {
  const auto cl = parse("-f", "json", "--help");
  EXPECT_TRUE(cl.exit_message.has_value());
}

TEST(Options, VersionSetsTheExitMessage) {
  const auto cl = parse("--version");
  EXPECT_EQ(cl.exit_message, std::string("hacoboot-sampler " HACOBOOT_EXPECTED_VERSION "\n"));
}

TEST(Options, RelativeCommandGivesAWarning) {
  const auto cl = parse("busybox");
  EXPECT_EQ(cl.options.command, "busybox");  // still accepted, compared as given
  ASSERT_EQ(cl.warnings.size(), 1u);
  EXPECT_NE(cl.warnings[0].find("'busybox'"), std::string::npos) << cl.warnings[0];
  EXPECT_NE(cl.warnings[0].find("absolute"), std::string::npos) << cl.warnings[0];
}

TEST(Options, AbsoluteCommandGivesNoWarning) {
  EXPECT_TRUE(parse("/bin/busybox").warnings.empty());
}

TEST(Options, UnknownOptionIsAUsageError) {
  EXPECT_THROW(parse("--frobnicate"), UsageError);
  EXPECT_THROW(parse("-x"), UsageError);
}

TEST(Options, SecondCommandIsAUsageError) {
  EXPECT_THROW(parse("/bin/a", "/bin/b"), UsageError);
}

}  // namespace
}  // namespace hacoboot
