#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/options.hpp"
#include "cli/output_paths.hpp"
#include "gate/regression_gate.hpp"

namespace hacoboot {

// The regression gate as the tool runs it: after a traced run with
// --baseline, and on two saved summaries with `compare`, with one report
// and one exit status for both.

// The --baseline summary (nullopt without one). Throws UsageError (exit 2)
// naming the file when it is not a summary, or when this run's figures
// could never be compared with it: checked before anything is traced.
std::optional<RunFigures> load_baseline(const Options& options);

// Writes the gate's report on `report` and the files the options name
// (--gate-junit, --gate-markdown); returns kExitOk, kExitRegressed or
// kExitInconclusive.
int judge_run(const RunFigures& baseline, const RunFigures& now, const Options& options, std::ostream& report);

// The gate's files when this run's figures are no verdict (its --run
// command failed): they say why, rather than an earlier run's verdict
// staying in place.
void write_unjudged(const Options& options, std::string_view why);

// run(), whose failure (an exception) first replaces the gate's files with
// ones saying the run was not judged and why: a failed run must not leave
// an earlier run's verdict for CI to read. Called once the files are known
// to be outputs (check_output_paths), so that no input is overwritten. A
// file that cannot be replaced either is a warning on `diagnostics`.
int unjudged_on_failure(const Options& options, std::ostream& diagnostics, const std::function<int()>& run);

// `compare BASE NEW`: the report on `out`; returns the exit status.
// The gate's files (--gate-junit, --gate-markdown, --gate-json), for
// check_output_paths beside the run's other outputs.
std::vector<NamedOutput> gate_outputs(const Options& options);

int compare_summaries(const Options& options, std::ostream& out);

}  // namespace hacoboot
