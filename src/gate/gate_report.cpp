#include "gate/gate_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gate/step_report.hpp"
#include "report/report.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

constexpr std::string_view kSuiteName = "hacoboot-sampler regression gate";
constexpr std::string_view kCaseClass = "hacoboot-sampler.gate";

// Both runs have figures of the row's metric, and the baseline's is not 0.
bool compared(const MetricComparison& row) {
  return row.baseline_boots > 0 && row.boots > 0 && row.baseline_median_ns > 0;
}

// A row as every format shows it; "-" where a cell has no value.
struct RowCells {
  std::string name;
  std::string figure;
  std::string baseline;  // the baseline's median (Percentile: its statistic)
  std::string now;
  std::string change;
  std::string interval;
  std::string p;        // Holm-adjusted, of a gated row
  std::string verdict;  // lower case and marked " *" when not gated
};

RowCells cells_of(const MetricComparison& row, const GateConfig& config) {
  // A metric of one run only was compared by no figure: it has no medians.
  const bool both = row.baseline_boots > 0 && row.boots > 0;
  RowCells cells{.name = printable(row.name),
                 .figure = both ? gate_figure_name(row.figure) : "-",
                 .baseline = both ? format_duration(row.baseline_median_ns) : "-",
                 .now = both ? format_duration(row.median_ns) : "-",
                 .change = compared(row) ? format_change(row.change_pct) : "-",
                 .interval = "-",
                 .p = "-",
                 .verdict = verdict_name(row.verdict)};
  if (compared(row)) {
    cells.interval =
        row.method == GateMethod::Percentile
            ? fmt::format("({} only)", gate_statistic_name(config.statistic))
            : fmt::format("[{}, {}]", format_change(row.change_low_pct), format_change(row.change_high_pct));
  }
  if (row.ranked) cells.p = row.adjusted_p < 0.001 ? std::string("<0.001") : fmt::format("{:.3f}", row.adjusted_p);
  // A significant shift within the limit says which limit it is within.
  if (row.verdict == Verdict::Slower) cells.verdict += fmt::format(" +{}%", config.max_regression_pct);
  if (row.verdict == Verdict::Faster) cells.verdict += fmt::format(" -{}%", config.max_regression_pct);
  // A metric that is not gated reads in lower case: a slower phase beside
  // "gate: passed" is information, not an alarm.
  if (!row.gated) cells.verdict = lowercase(cells.verdict) + " *";
  return cells;
}

std::string confidence_heading(const GateConfig& config) {
  return fmt::format("CI {:.0f}%", (1 - config.alpha) * 100);
}

// "(alpha 0.05, Holm over 2 gated metrics, at most +10%)"
std::string terms_of(const GateResult& result, const GateConfig& config) {
  if (result.tested == 0) {
    const bool by_percentile = std::any_of(result.rows.begin(), result.rows.end(), [](const auto& row) {
      return row.gated && row.method == GateMethod::Percentile && row.baseline_boots > 0 && row.boots > 0;
    });
    if (!by_percentile) return fmt::format("(no gated metric tested, at most +{}%)", config.max_regression_pct);
    return fmt::format("({} compared, at most +{}%)", gate_statistic_name(config.statistic), config.max_regression_pct);
  }
  return fmt::format("(alpha {}, Holm over {} gated metric{}, at most +{}%)", config.alpha, result.tested,
                     result.tested == 1 ? "" : "s", config.max_regression_pct);
}

// "execve, listen"; "5 gated metrics" beyond three: the rows name them.
std::string names_of(const GateResult& result, Verdict verdict) {
  constexpr std::size_t kMostNamed = 3;
  std::vector<std::string> names;
  for (const auto& row : result.rows) {
    if (row.gated && row.verdict == verdict) names.push_back(printable(row.name));
  }
  if (names.size() > kMostNamed) return fmt::format("{} gated metrics", names.size());
  return fmt::format("{}", fmt::join(names, ", "));
}

// The last line: "gate: REGRESSED" and what follows it.
struct OutcomeLine {
  std::string head;
  std::string rest;
};

OutcomeLine outcome_of(const GateResult& result, const GateConfig& config) {
  const auto outcome = result.outcome();
  std::string why = "no gated metric slower by more than the limit";
  if (outcome == GateOutcome::Regressed) why = names_of(result, Verdict::Regressed) + " slower by more than the limit";
  if (outcome == GateOutcome::Inconclusive) why = names_of(result, Verdict::Inconclusive) + " could not be judged";
  return {.head = fmt::format("gate: {}", gate_outcome_name(outcome)),
          .rest = fmt::format("{} {}", why, terms_of(result, config))};
}

// The row's reason, and how many boots would do when it has too few.
std::string reason_of(const MetricComparison& row) {
  auto reason = row.reason;
  if (row.boots_needed) reason += fmt::format("; about {} boots per run would tell", *row.boots_needed);
  return reason;
}

// Why a gated row is inconclusive, in words; empty for any other row.
std::string why_inconclusive(const MetricComparison& row) {
  if (!row.gated || row.verdict != Verdict::Inconclusive) return {};
  return fmt::format("{}: {}", printable(row.name), reason_of(row));
}

// A passing row whose interval straddles the limit says so.
std::string why_straddling(const MetricComparison& row) {
  if (row.reason.empty() || (row.verdict != Verdict::Slower && row.verdict != Verdict::Faster)) return {};
  return fmt::format("{}: {}", printable(row.name), row.reason);
}

// The lines under the rows: why each inconclusive metric is, then the notes.
std::vector<std::string> explanations_of(const GateResult& result) {
  std::vector<std::string> lines;
  for (const auto& row : result.rows) {
    if (auto why = why_inconclusive(row); !why.empty()) lines.push_back(std::move(why));
    if (auto why = why_straddling(row); !why.empty()) lines.push_back(std::move(why));
  }
  for (const auto& note : result.notes) lines.push_back("note: " + note);
  return lines;
}

// The report's columns: 118 with the longest verdict.
constexpr const char* kRowFormat = "{:<29} {:<10} {:>9} {:>9} {:>7} {:<18} {:>6}  {}\n";

// --- JUnit XML ---

struct JunitSuite {
  std::size_t tests = 0;
  std::size_t failures = 0;
  std::size_t errors = 0;
  std::size_t skipped = 0;
  std::vector<std::pair<std::string, std::string>> properties;
  std::string cases;  // <testcase> elements
  std::string system_out;
};

// `what` is one of failure, error, skipped; the message an attribute (one
// line, as CI systems show it), the detail the element's text.
std::string junit_case(std::string_view name, std::string_view what, std::string_view type, std::string_view message,
                       std::string_view detail) {
  auto text = fmt::format(R"(    <testcase classname="{}" name="{}")", kCaseClass, xml_escape(name));
  if (what.empty()) return text + "/>\n";
  text += fmt::format(">\n      <{}", what);
  if (!type.empty()) text += fmt::format(R"( type="{}")", xml_escape(type));
  text += fmt::format(R"( message="{}")", xml_escape(message));
  text += detail.empty() ? "/>\n" : fmt::format(">{}</{}>\n", xml_escape(detail), what);
  return text + "    </testcase>\n";
}

void write_junit(const JunitSuite& suite, std::ostream& out) {
  const auto counts = fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="{}")", suite.tests, suite.failures,
                                  suite.errors, suite.skipped);
  out << R"(<?xml version="1.0" encoding="UTF-8"?>)" << '\n'
      << fmt::format(R"(<testsuites name="{}" {}>)", kSuiteName, counts) << '\n'
      << fmt::format(R"(  <testsuite name="{}" {}>)", kSuiteName, counts) << '\n';
  if (!suite.properties.empty()) {
    out << "    <properties>\n";
    for (const auto& [name, value] : suite.properties) {
      out << fmt::format(R"(      <property name="{}" value="{}"/>)", xml_escape(name), xml_escape(value)) << '\n';
    }
    out << "    </properties>\n";
  }
  out << suite.cases;
  if (!suite.system_out.empty()) out << "    <system-out>" << xml_escape(suite.system_out) << "</system-out>\n";
  out << "  </testsuite>\n</testsuites>\n";
}

// "listen, noise-free: median 1.52 ms -> 1.88 ms, +23.4% [+15.1%, +31.0%], p 0.001: REGRESSED",
// then the reason, if any.
std::string junit_message(const MetricComparison& row, const RowCells& cells) {
  std::string message;
  if (compared(row)) {
    message = fmt::format("{}, {}: median {} -> {}, {} {}", cells.name, cells.figure, cells.baseline, cells.now,
                          cells.change, cells.interval);
    if (row.ranked) message += fmt::format(", p {}", cells.p);
    message += ": ";
  }
  message += cells.verdict;
  if (const auto reason = reason_of(row); !reason.empty()) message += ": " + reason;
  return message;
}

std::string junit_case_of(const MetricComparison& row, const GateResult& result, const GateConfig& config) {
  const auto cells = cells_of(row, config);
  const auto message = junit_message(row, cells);
  if (!row.gated) return junit_case(cells.name, "skipped", "", "not gated (--gate): " + message, "");
  const auto detail = why_inconclusive(row);
  switch (row.verdict) {
    case Verdict::Regressed: {
      auto failure = fmt::format("{}; limit +{}%", message, config.max_regression_pct);
      if (const auto steps = milestone_attribution(result.steps, row.key); !steps.empty()) failure += "; " + steps;
      return junit_case(cells.name, "failure", "regressed", failure, detail);
    }
    case Verdict::Inconclusive: return junit_case(cells.name, "error", "inconclusive", message, detail);
    default: return junit_case(cells.name, "", "", "", "");
  }
}

// --- Markdown ---

// A zero-width space: between two characters it keeps the text as it
// reads, and breaks what GitHub would make of them side by side.
constexpr std::string_view kZeroWidthSpace = "\u200B";

// Whether GitHub would link or ping from what ends at text[at]: a mention
// or an e-mail address (@), an autolink (https://, www.).
bool links_after(std::string_view text, std::size_t at) {
  const auto rest = text.substr(at + 1);
  if (text[at] == '@') return true;
  if (text[at] == ':') return rest.starts_with("//");
  return rest.starts_with(".") && at >= 2 && iequals(text.substr(at - 2, 3), "www");
}

// User text in a table cell, as GitHub-flavoured Markdown shows it
// literally: every ASCII punctuation mark backslash-escaped (| ends a cell,
// * _ ~ ` [ ] mark text up), & < > as entities (&amp; would be an entity
// itself), and a zero-width space after what would make a mention
// (@everyone pings a team) or a link.
std::string markdown_text(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (std::ispunct(static_cast<unsigned char>(c)) != 0) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
    if (links_after(text, i)) out += kZeroWidthSpace;
  }
  return out;
}

constexpr std::string_view kMarkdownTitle = "### Boot time against the baseline";

// The moved steps as a compact table: a row per milestone's moved step, then
// those that moved off the paths.
void write_steps_markdown(const StepComparison& steps, const GateConfig& config, std::ostream& out) {
  if (!steps.unavailable.empty()) {
    out << "\n- " << markdown_text("note: " + steps.unavailable) << '\n';
    return;
  }
  out << "\n**Steps that moved** (" << markdown_text(steps_terms(steps, config)) << ")\n\n";
  out << "| milestone | step | shift | interval | share | states | syscalls |\n|:--|:--|--:|:--|--:|:--|:--|\n";
  const auto row = [&](const std::string& where, const StepShift& shift, const MilestoneShift* milestone) {
    const bool share = milestone != nullptr && milestone->has_shares();
    const auto calls = moved_syscalls(shift);
    out << fmt::format("| {} | {} | {} | [{}, {}] | {} | {} | {} |\n", where, markdown_text(step_shown(shift)),
                       signed_duration(shift.shift_ns), signed_duration(shift.low_ns), signed_duration(shift.high_ns),
                       share ? fmt::format("{:.0f}%", milestone->share_of(shift) * 100) : "-",
                       shift.states.empty() ? std::string("-") : moved_states(shift),
                       calls.empty() ? "-" : markdown_text(calls));
  };
  bool any = false;
  for (const auto& milestone : steps.milestones) {
    const auto where = fmt::format(
        "{} ({}{})", milestone.milestone, signed_duration(milestone.shift_ns),
        milestone.moved_explain_shift() ? "; moved total " + signed_duration(milestone.moved_total_ns) : "");
    for (const auto i : milestone.moved) {
      row(where, steps.shifts[i], &milestone);
      any = true;
    }
    if (!milestone.moved.empty() && milestone.has_shares()) {
      const double rest = milestone.unattributed_ns();
      out << fmt::format("| {} | in no moved step | {} | [{}, {}] | {} | | |\n", where, signed_duration(rest),
                         signed_duration(milestone.unattributed_low_ns()),
                         signed_duration(milestone.unattributed_high_ns()),
                         milestone.moved_explain_shift() ? std::string("not told from 0")
                                                         : fmt::format("{:.0f}%", rest / milestone.shift_ns * 100));
    }
  }
  for (const auto i : steps.moved_off_path) {
    row("off the paths (own time)", steps.shifts[i], nullptr);
    any = true;
  }
  if (!any) out << "| - | no step moved | | | | | |\n";
  if (!steps.syscalls_unavailable.empty())
    out << "\n- " << markdown_text("note: " + steps.syscalls_unavailable) << '\n';
}

}  // namespace

void write_gate_report(const GateResult& result, const GateConfig& config, std::ostream& out) {
  out << fmt::format(fmt::runtime(kRowFormat), "BASELINE COMPARISON", "FIGURE", "BASE P50", "THIS P50", "CHANGE",
                     confidence_heading(config), "P HOLM", "VERDICT");
  for (const auto& row : result.rows) {
    const auto c = cells_of(row, config);
    out << fmt::format(fmt::runtime(kRowFormat), c.name, c.figure, c.baseline, c.now, c.change, c.interval, c.p,
                       c.verdict);
  }
  for (const auto& line : explanations_of(result)) out << line << '\n';
  for (const auto& line : step_report_lines(result.steps, config)) out << line << '\n';
  const auto outcome = outcome_of(result, config);
  out << outcome.head << ": " << outcome.rest << '\n';
}

void write_gate_junit(const GateResult& result, const GateConfig& config, std::ostream& out) {
  JunitSuite suite;
  suite.properties = {{"outcome", gate_outcome_name(result.outcome())},
                      {"gate_on", gate_figure_name(config.figure)},
                      {"alpha", fmt::format("{}", config.alpha)},
                      {"max_regression_pct", fmt::format("{}", config.max_regression_pct)},
                      {"holm_metrics", std::to_string(result.tested)}};
  for (const auto& row : result.rows) {
    ++suite.tests;
    if (!row.gated) {
      ++suite.skipped;
    } else if (row.verdict == Verdict::Regressed) {
      ++suite.failures;
    } else if (row.verdict == Verdict::Inconclusive) {
      ++suite.errors;
    }
    suite.cases += junit_case_of(row, result, config);
  }
  std::ostringstream text;
  write_gate_report(result, config, text);
  suite.system_out = text.str();
  write_junit(suite, out);
}

void write_gate_markdown(const GateResult& result, const GateConfig& config, std::ostream& out) {
  const auto outcome = outcome_of(result, config);
  out << kMarkdownTitle << ": " << gate_outcome_name(result.outcome()) << "\n\n"
      << fmt::format("| metric | figure | baseline p50 | this p50 | change | {} | p (Holm) | verdict |\n",
                     confidence_heading(config))
      << "|:--|:--|--:|--:|--:|:--|--:|:--|\n";
  for (const auto& row : result.rows) {
    const auto c = cells_of(row, config);
    // What fails the gate stands out.
    const bool alarm = row.gated && (row.verdict == Verdict::Regressed || row.verdict == Verdict::Inconclusive);
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_text(c.name), c.figure, c.baseline,
                       c.now, c.change, c.interval, c.p, alarm ? "**" + c.verdict + "**" : markdown_text(c.verdict));
  }
  const auto explanations = explanations_of(result);
  if (!explanations.empty()) out << '\n';
  for (const auto& line : explanations) out << "- " << markdown_text(line) << '\n';
  write_steps_markdown(result.steps, config, out);
  out << "\n**" << outcome.head << "**: " << markdown_text(outcome.rest) << '\n';
}

void write_unjudged_junit(std::string_view why, std::ostream& out) {
  write_junit({.tests = 1,
               .failures = 0,
               .errors = 1,
               .skipped = 0,
               .properties = {{"outcome", "not judged"}},
               .cases = junit_case("gate", "error", "not judged", printable(why), ""),
               .system_out = std::string(why) + "\n"},
              out);
}

void write_unjudged_markdown(std::string_view why, std::ostream& out) {
  out << kMarkdownTitle << ": not judged\n\n" << markdown_text(printable(why)) << '\n';
}

}  // namespace hacoboot
