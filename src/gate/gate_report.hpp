#pragma once

#include <iosfwd>
#include <string_view>

#include "gate/regression_gate.hpp"

namespace hacoboot {

// The regression gate's verdict in the forms its readers take: a text report
// for the log, JUnit XML for the CI system's test view, a Markdown table
// for a pull-request comment. All three show the same rows, reasons and
// outcome line, from the same cells.

// One row per metric (its figure, both medians, the shift with its interval,
// the Holm-adjusted p-value, the verdict; a metric that is not gated in
// lower case and marked `*`), why each inconclusive metric is, the notes,
// and a last line "gate: passed|REGRESSED|INCONCLUSIVE: ..." with the terms.
void write_gate_report(const GateResult& result, const GateConfig& config, std::ostream& out);

// A test case per metric, in one suite: a gated metric that regressed is a
// failure, one inconclusive an error (the gate could not judge it: exit 5
// fails the job as well), the others pass; a metric that is not gated is
// skipped, its verdict in the message. The suite's properties hold the
// gate's terms; its system-out the text report.
void write_gate_junit(const GateResult& result, const GateConfig& config, std::ostream& out);

// The verdict for tools (--gate-json): the terms, every metric's figures,
// test and verdict, the notes, and the steps that moved per milestone, as
// docs/ci-gate.md documents it.
inline constexpr int kGateJsonSchema = 1;
void write_gate_json(const GateResult& result, const GateConfig& config, std::ostream& out);

// A heading with the outcome, the table, the reasons and notes as a list,
// and the outcome line.
void write_gate_markdown(const GateResult& result, const GateConfig& config, std::ostream& out);

// The same two files when the gate judged nothing, such as after a failed
// --run command whose figures are no verdict: one errored test case, a
// heading and the reason. A file of an earlier run left in place would read
// as that run's verdict.
void write_unjudged_junit(std::string_view why, std::ostream& out);
void write_unjudged_markdown(std::string_view why, std::ostream& out);
void write_unjudged_json(std::string_view why, std::ostream& out);

}  // namespace hacoboot
