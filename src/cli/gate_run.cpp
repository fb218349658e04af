#include "cli/gate_run.hpp"

#include <ostream>
#include <string>

#include "util/errors.hpp"
#include "util/input_file.hpp"
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
  try {
    check_baseline(baseline, now, options.gate);
  } catch (const UsageError& e) {
    throw UsageError("--baseline " + printable(options.baseline) + ": " + e.what());
  }
  return baseline;
}

int judge_run(const RunFigures& baseline, const RunFigures& now, const GateConfig& config, std::ostream& report) {
  const auto result = compare_runs(baseline, now, config);
  write_gate_report(result, config, report);
  return gate_exit_status(result.outcome());
}

int compare_summaries(const Options& options, std::ostream& out) {
  const auto baseline = load_summary(options.baseline, "compare");
  const auto now = load_summary(options.compared, "compare");
  try {
    check_comparable(baseline, now, options.gate);
  } catch (const UsageError& e) {
    // The message says which of the two it is about.
    throw UsageError("compare " + printable(options.baseline) + " " + printable(options.compared) + ": " + e.what());
  }
  const int status = judge_run(baseline, now, options.gate, out);
  out.flush();
  if (!out) throw RuntimeError("writing the gate's report failed");
  return status;
}

}  // namespace hacoboot
