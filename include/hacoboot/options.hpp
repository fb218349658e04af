#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hacoboot/phases.hpp"
#include "hacoboot/report.hpp"

namespace hacoboot {

struct Options {
  std::string command;                // container init command; empty: first execve
  std::string haconiwa = "haconiwa";  // binary holding the probe (PATH lookup without '/')
  ReportFormat format = ReportFormat::Table;
  bool histograms = false;
  std::string output;  // empty: stdout
  std::string events;  // per-boot TSV rows; empty: none
  std::int64_t start_phase = kPhaseStartSupervisor;
  std::optional<std::string> run;  // shell command traced from start to exit
  std::optional<std::uint64_t> count;
  std::optional<std::chrono::nanoseconds> duration;
  bool verbose = false;
};

struct CommandLine {
  Options options;
  // Set for --help and --version: print it and exit 0 without tracing.
  std::optional<std::string> exit_message;
  std::vector<std::string> warnings;  // worth telling, not worth refusing
};

// The only place that reads argv. Throws UsageError on bad usage.
CommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace hacoboot
