#include "cli/gate_run.hpp"

#include <exception>
#include <functional>
#include <iostream>
#include <ostream>
#include <string>

#include "cli/output_paths.hpp"
#include "gate/gate_report.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/output_file.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

RunFigures load_summary(const std::string& path, const char* option) {
  return parse_baseline(read_input_file(path, option, kMaxBaselineBytes), path);
}

}  // namespace

std::optional<RunFigures> load_baseline(const Options& options) {
  if (options.baseline.empty()) return std::nullopt;
  auto baseline = load_summary(options.baseline, "--baseline");
  const RunOrigin now{.schema = kSummarySchema,
                      .tool_version = tool_version(),
                      .start_phase = options.start_phase,
                      .command = options.command};
  if (const auto usable = check_baseline(baseline, now, options.gate); !usable) {
    throw UsageError("--baseline " + printable(options.baseline) + ": " + usable.error());
  }
  return baseline;
}

int judge_run(const RunFigures& baseline, const RunFigures& now, const Options& options, std::ostream& report) {
  const auto& config = options.gate;
  const auto result = compare_runs(baseline, now, config);
  write_gate_report(result, config, report);
  if (!options.gate_junit.empty()) {
    write_output(options.gate_junit, [&](std::ostream& out) { write_gate_junit(result, config, out); });
  }
  if (!options.gate_markdown.empty()) {
    write_output(options.gate_markdown, [&](std::ostream& out) { write_gate_markdown(result, config, out); });
  }
  if (!options.gate_json.empty()) {
    write_output(options.gate_json, [&](std::ostream& out) { write_gate_json(result, config, out); });
  }
  return gate_exit_status(result.outcome());
}

void write_unjudged(const Options& options, std::string_view why) {
  if (!options.gate_junit.empty()) {
    write_output(options.gate_junit, [&](std::ostream& out) { write_unjudged_junit(why, out); });
  }
  if (!options.gate_markdown.empty()) {
    write_output(options.gate_markdown, [&](std::ostream& out) { write_unjudged_markdown(why, out); });
  }
  if (!options.gate_json.empty()) {
    write_output(options.gate_json, [&](std::ostream& out) { write_unjudged_json(why, out); });
  }
}

int unjudged_on_failure(const Options& options, std::ostream& diagnostics, const std::function<int()>& run) {
  try {
    return run();
  } catch (const std::exception& e) {
    try {
      write_unjudged(options, std::string("the run failed: ") + e.what());
    } catch (const std::exception& unwritten) {
      // The run's own failure stays the error (and its status); a gate file
      // that cannot be written either is one more symptom (a full disk).
      diagnostics << "hacoboot-sampler: warning: " << printable(unwritten.what(), kUncut) << '\n' << std::flush;
    }
    throw;
  }
}

std::vector<NamedOutput> gate_outputs(const Options& options) {
  return {{.option = "--gate-junit", .path = options.gate_junit},
          {.option = "--gate-markdown", .path = options.gate_markdown},
          {.option = "--gate-json", .path = options.gate_json}};
}

int compare_summaries(const Options& options, std::ostream& out) {
  check_output_paths(gate_outputs(options), {{.option = "compare BASE", .path = options.baseline},
                                             {.option = "compare NEW", .path = options.compared}});
  return unjudged_on_failure(options, std::cerr, [&] {
    const auto baseline = load_summary(options.baseline, "compare");
    const auto now = load_summary(options.compared, "compare");
    if (const auto comparable = check_comparable(baseline, now, options.gate); !comparable) {
      // The message says which of the two it is about.
      throw UsageError("compare " + printable(options.baseline) + " " + printable(options.compared) + ": " +
                       comparable.error());
    }
    const int status = judge_run(baseline, now, options, out);
    out.flush();
    if (!out) throw RuntimeError("writing the gate's report failed");
    return status;
  });
}

}  // namespace hacoboot
