#include "report/timeline_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/svg_element.hpp"

namespace hacoboot {
namespace {

constexpr std::string_view kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

// Layout, in px. A file writer has no text metrics: character widths are
// estimates for the font above, erring wide, since they only decide whether
// a label fits.
constexpr double kMargin = 16;
constexpr double kLabelGap = 12;  // between the label columns, and before time zero
constexpr double kPlotWidth = 1000;
constexpr double kClipLabelWidth = 110;  // right of the plot: how long a clipped lane goes on
constexpr double kTitleY = 26;
constexpr double kLegendY = 52;  // centre line of the legend's first line
constexpr double kLegendLineHeight = 22;
constexpr double kTopAxisY = 104;  // baseline of the upper tick labels
constexpr double kRowsTop = 112;
constexpr double kRowHeight = 22;
constexpr double kBarHeight = 14;
constexpr double kBarTop = 3;  // from the row's top
constexpr double kPathBandHeight = 2.5;
constexpr double kMinBarWidth = 1;
constexpr double kTornDepth = 3;  // how far the zigzag of a clipped bar cuts into it
constexpr double kBottomAxisHeight = 22;
constexpr double kNoteHeight = 18;
constexpr double kLabelCharWidth = 7.2;  // 12px text
constexpr double kBarCharWidth = 6.8;    // 10px upper-case step names
constexpr double kBarTextPad = 3;
constexpr double kMarkerSize = 6;
constexpr std::int64_t kTargetTicks = 10;
constexpr std::int64_t kMinRangeNs = 1'000;  // an axis needs some width, even for one instant

constexpr std::string_view kExecveFill = "#d62728";
constexpr std::string_view kListenFill = "#1f2a6b";
constexpr std::string_view kPathColour = "#111111";

// How each scheduler state is drawn, in the order a step's bar shows them.
struct StateStyle {
  std::string_view name;
  std::string_view css;
  std::string_view fill;
  std::uint64_t SchedTotals::*ns;
};

constexpr std::array<StateStyle, 4> kStates{{
    {"CPU", "cpu", "#3f9b3f", &SchedTotals::cpu},
    {"run queue", "run-queue", "#e4572e", &SchedTotals::run_queue},
    {"sleep", "sleep", "#9cc3e8", &SchedTotals::sleep},
    {"I/O", "io", "#8c6bc0", &SchedTotals::io},
}};
constexpr std::string_view kUnknownFill = "#c4c4c4";

struct TimeUnit {
  std::string_view name;
  std::int64_t ns;
};

constexpr TimeUnit kMicros{"µs", 1'000};
constexpr TimeUnit kMillis{"ms", 1'000'000};
constexpr TimeUnit kSeconds{"s", 1'000'000'000};

// Ticks read best as small numbers: switch unit once the range passes 2000.
const TimeUnit& unit_for(std::int64_t range_ns) {
  if (range_ns >= 2 * kSeconds.ns) return kSeconds;
  if (range_ns >= 2 * kMillis.ns) return kMillis;
  return kMicros;
}

double in_unit(std::int64_t ns, const TimeUnit& unit) {
  return static_cast<double>(ns) / static_cast<double>(unit.ns);
}

// A time for a tooltip, to the ns, in the largest unit it has one of.
std::string format_time(std::int64_t ns) {
  const auto magnitude = ns < 0 ? -ns : ns;
  for (const auto* unit : {&kSeconds, &kMillis, &kMicros}) {
    if (magnitude >= unit->ns) return fmt::format("{:.3f} {}", in_unit(ns, *unit), unit->name);
  }
  return fmt::format("{} ns", ns);
}

std::string format_time(std::uint64_t ns) {
  return format_time(static_cast<std::int64_t>(ns));
}

std::string boot_label(const BootRecord& boot) {
  return fmt::format("boot {} (hpid {})", boot.sequence, boot.hpid);
}

// One process of a boot: its steps, by index in the analysis.
struct LaneRow {
  Lane lane = Lane::Other;
  std::uint32_t tid = 0;
  std::vector<std::size_t> steps;
};

std::string lane_label(const LaneRow& row) {
  return fmt::format("{} {}", lane_name(row.lane), row.tid);
}

// A boot as drawn: its lanes by role (then by first step), from `top`.
struct DrawnBoot {
  const BootRecord* record = nullptr;
  BootAnalysis analysis;
  std::vector<LaneRow> lanes;
  double top = 0;

  // A boot without steps still has a row, for its label and markers.
  [[nodiscard]] std::size_t rows() const { return std::max<std::size_t>(1, lanes.size()); }
  [[nodiscard]] double row_y(std::size_t row) const { return top + static_cast<double>(row) * kRowHeight; }
  [[nodiscard]] std::optional<std::size_t> row_of(std::uint32_t tid) const {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      if (lanes[i].tid == tid) return i;
    }
    return std::nullopt;
  }
  // Signed: a step the path crossed before the start begins before zero.
  // Only started boots are drawn: the 0 is never taken.
  [[nodiscard]] std::int64_t offset_ns(std::uint64_t ts_ns) const {
    return static_cast<std::int64_t>(ts_ns - record->start_ns.value_or(0));
  }
};

std::vector<LaneRow> lanes_of(const BootAnalysis& analysis) {
  std::vector<LaneRow> lanes;
  for (std::size_t i = 0; i < analysis.steps.size(); ++i) {
    const auto& step = analysis.steps[i];
    auto row = std::find_if(lanes.begin(), lanes.end(), [&step](const LaneRow& r) { return r.tid == step.tid; });
    if (row == lanes.end()) row = lanes.insert(lanes.end(), LaneRow{.lane = step.lane, .tid = step.tid, .steps = {}});
    row->steps.push_back(i);
  }
  std::stable_sort(lanes.begin(), lanes.end(), [](const LaneRow& a, const LaneRow& b) { return a.lane < b.lane; });
  return lanes;
}

struct Selection {
  std::vector<DrawnBoot> boots;  // started, by sequence, capped
  std::size_t not_started = 0;
  std::size_t over_cap = 0;
};

Selection select_boots(std::span<const BootRecord> records, const BootAnalyser& analyse) {
  std::vector<const BootRecord*> started;
  Selection selection;
  for (const auto& record : records) {
    if (record.started()) {
      started.push_back(&record);
    } else {
      ++selection.not_started;
    }
  }
  std::stable_sort(started.begin(), started.end(),
                   [](const auto* a, const auto* b) { return a->sequence < b->sequence; });
  if (started.size() > kTimelineMaxBoots) {
    selection.over_cap = started.size() - kTimelineMaxBoots;
    started.resize(kTimelineMaxBoots);
  }
  double top = kRowsTop;
  for (const auto* record : started) {
    DrawnBoot boot{.record = record, .analysis = analyse(*record), .lanes = {}, .top = top};
    boot.lanes = lanes_of(boot.analysis);
    top += static_cast<double>(boot.rows()) * kRowHeight;
    selection.boots.push_back(std::move(boot));
  }
  return selection;
}

// Maps times from a boot's start to x, the same for every boot.
struct Axis {
  std::int64_t lo_ns = 0;
  std::int64_t hi_ns = 0;
  double left_px = 0;

  [[nodiscard]] std::int64_t range_ns() const { return hi_ns - lo_ns; }
  [[nodiscard]] double right_px() const { return left_px + kPlotWidth; }
  [[nodiscard]] double x(std::int64_t ns) const {
    return left_px + kPlotWidth * static_cast<double>(ns - lo_ns) / static_cast<double>(range_ns());
  }
  [[nodiscard]] double clamped_x(std::int64_t ns) const { return x(std::clamp(ns, lo_ns, hi_ns)); }
};

// The boots' span: from their start to the last listen; to the last step
// when none listened. Earlier times (the CLI's, before it forked the
// supervisor) and later ones (the container's life after its boot) are
// clipped.
Axis axis_for(const std::vector<DrawnBoot>& boots, double left_px) {
  std::optional<std::int64_t> last_listen;
  std::int64_t last_step = 0;
  for (const auto& boot : boots) {
    if (const auto listen_ns = boot.record->listen_ns) {
      last_listen = std::max(last_listen.value_or(0), boot.offset_ns(*listen_ns));
    }
    if (const auto extent = boot.record->extent()) last_step = std::max(last_step, boot.offset_ns(extent->last_ns));
    for (const auto& step : boot.analysis.steps) last_step = std::max(last_step, boot.offset_ns(step.end_ns));
  }
  const auto hi_ns = std::max(last_listen.value_or(last_step), kMinRangeNs);
  return Axis{.lo_ns = 0, .hi_ns = hi_ns, .left_px = left_px};
}

// 1, 2 or 5 times a power of ten, giving about kTargetTicks ticks.
std::int64_t tick_step(std::int64_t range_ns) {
  const std::int64_t wanted = std::max<std::int64_t>(1, range_ns / kTargetTicks);
  std::int64_t decade = 1;
  while (decade <= wanted / 10) decade *= 10;
  for (const std::int64_t factor : {1, 2, 5}) {
    if (decade * factor >= wanted) return decade * factor;
  }
  return decade * 10;
}

std::vector<std::int64_t> ticks_of(const Axis& axis) {
  const auto step = tick_step(axis.range_ns());
  std::vector<std::int64_t> ticks;
  for (auto tick = axis.lo_ns; tick <= axis.hi_ns; tick += step) ticks.push_back(tick);
  return ticks;
}

// The document's root element: the caller closes it.
SvgElement svg_root(double width, double height) {
  return SvgElement("svg")
      .attr("xmlns", "http://www.w3.org/2000/svg")
      .attr("width", width, 0)
      .attr("height", height, 0)
      .attr("viewBox", fmt::format("0 0 {:.0f} {:.0f}", width, height))
      .attr("font-family", kFont)
      .attr("font-size", 12)
      .attr("fill", "#1b1b1b");
}

void write_open(std::ostream& out, const SvgElement& root) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << root.open() << '\n';
  out << SvgElement("rect").attr("width", "100%").attr("height", "100%").attr("fill", "#ffffff") << '\n';
  // The head of the arrows where the critical path passes to another process.
  const auto head = SvgElement("path").attr("d", "M0 0L8 4L0 8Z").attr("fill", kPathColour);
  const auto marker = SvgElement("marker")
                          .attr("id", "arrowhead")
                          .attr("viewBox", "0 0 8 8")
                          .attr("refX", 7)
                          .attr("refY", 4)
                          .attr("markerWidth", 7)
                          .attr("markerHeight", 7)
                          .attr("orient", "auto")
                          .child(head);
  out << SvgElement("defs").child(marker) << '\n';
}

void write_title(std::ostream& out, std::size_t boots, const Axis& axis) {
  out << SvgElement("text")
             .attr("x", kMargin)
             .attr("y", kTitleY)
             .attr("font-size", 16)
             .attr("font-weight", "bold")
             .text(fmt::format("Container boots: {} drawn, a lane per process, times from each boot's start to the "
                               "last listen ({})",
                               boots, format_time(axis.hi_ns)))
      << '\n';
}

// A legend's square of colour or outline, at its top left.
SvgElement swatch(double x, double top, double height) {
  return SvgElement("rect").attr("x", x, 1).attr("y", top, 1).attr("width", 14).attr("height", height);
}

// Places legend items left to right; returns the x after this one.
double write_legend_label(std::ostream& out, double x, double y, std::string_view text) {
  out << SvgElement("text").attr("x", x, 1).attr("y", y + 4, 1).text(text) << '\n';
  return x + static_cast<double>(text.size()) * kLabelCharWidth + 24;
}

double write_legend_swatch(std::ostream& out, double x, double y, std::string_view fill, std::string_view text) {
  out << swatch(x, y - kBarHeight / 2, kBarHeight).attr("fill", fill) << '\n';
  return write_legend_label(out, x + 20, y, text);
}

void write_diamond(std::ostream& out, double x, double y) {
  out << SvgElement("path")
             .attr("d", fmt::format("M{0:.1f} {1:.1f}L{2:.1f} {3:.1f}L{0:.1f} {4:.1f}L{5:.1f} {3:.1f}Z", x,
                                    y - kMarkerSize, x + kMarkerSize, y, y + kMarkerSize, x - kMarkerSize))
             .attr("fill", kExecveFill)
             .attr("stroke", "#ffffff")
             .attr("stroke-width", 1)
      << '\n';
}

void write_circle(std::ostream& out, double x, double y) {
  out << SvgElement("circle")
             .attr("cx", x, 1)
             .attr("cy", y, 1)
             .attr("r", kMarkerSize - 1, 1)
             .attr("fill", kListenFill)
             .attr("stroke", "#ffffff")
             .attr("stroke-width", 1)
      << '\n';
}

// The zigzag that cuts a clipped bar at x: its teeth point into the bar,
// towards `inwards` (+1: the bar lies right of x, -1: left).
void write_torn_edge(std::ostream& out, double x, double bar_y, double inwards) {
  std::string d = fmt::format("M{:.1f} {:.1f}", x, bar_y);
  constexpr int kTeeth = 4;
  for (int i = 1; i <= kTeeth; ++i) {
    const double tip = x + (i % 2 == 1 ? inwards * kTornDepth : 0);
    d += fmt::format("L{:.1f} {:.1f}", tip, bar_y + kBarHeight * i / kTeeth);
  }
  out << SvgElement("path")
             .attr("class", "torn")
             .attr("d", d)
             .attr("fill", "none")
             .attr("stroke", "#ffffff")
             .attr("stroke-width", 2)
      << '\n';
}

void write_arrow(std::ostream& out, double x1, double y1, double x2, double y2, bool dashed) {
  auto line = SvgElement("line")
                  .attr("x1", x1, 1)
                  .attr("y1", y1, 1)
                  .attr("x2", x2, 1)
                  .attr("y2", y2, 1)
                  .attr("stroke", kPathColour)
                  .attr("stroke-width", 1.5);
  if (dashed) line.attr("stroke-dasharray", "3 2");
  out << line.attr("marker-end", "url(#arrowhead)") << '\n';
}

void write_legend(std::ostream& out) {
  const auto group = SvgElement("g").attr("class", "legend");
  out << group.open() << '\n';
  double x = kMargin;
  for (const auto& state : kStates) x = write_legend_swatch(out, x, kLegendY, state.fill, state.name);
  x = write_legend_swatch(out, x, kLegendY, kUnknownFill, "not accounted");
  write_legend_label(out, x, kLegendY, "(a step's bar is split in proportion to its time in each state)");

  const double y = kLegendY + kLegendLineHeight;
  out << swatch(kMargin, y - kBarHeight / 2, kBarHeight)
             .attr("fill", "none")
             .attr("stroke", kPathColour)
             .attr("stroke-width", 1.5)
      << '\n';
  out << swatch(kMargin, y + kBarHeight / 2 + 1, kPathBandHeight).attr("fill", kPathColour) << '\n';
  x = write_legend_label(out, kMargin + 20, y, "step on the critical path to listen, the path beneath");
  write_arrow(out, x, y + kBarHeight / 2, x + 12, y - kBarHeight / 2, false);
  x = write_legend_label(out, x + 18, y, "wakeup");
  write_arrow(out, x, y + kBarHeight / 2, x + 12, y - kBarHeight / 2, true);
  x = write_legend_label(out, x + 18, y, "fork");
  write_diamond(out, x + kMarkerSize, y);
  x = write_legend_label(out, x + 2 * kMarkerSize + 6, y, "execve");
  write_circle(out, x + kMarkerSize, y);
  x = write_legend_label(out, x + 2 * kMarkerSize + 6, y, "listen");
  out << swatch(x, y - kBarHeight / 2, kBarHeight).attr("fill", kUnknownFill) << '\n';
  write_torn_edge(out, x + 14, y - kBarHeight / 2, -1);
  write_legend_label(out, x + 20, y, "clipped");
  out << group.close() << '\n';
}

void write_tick_labels(std::ostream& out, const Axis& axis, const std::vector<std::int64_t>& ticks, double y) {
  const auto& unit = unit_for(axis.range_ns());
  for (const auto tick : ticks) {
    out << SvgElement("text")
               .attr("class", "tick")
               .attr("x", axis.x(tick), 1)
               .attr("y", y, 1)
               .attr("text-anchor", "middle")
               .attr("fill", "#444444")
               .text(fmt::format("{:g} {}", in_unit(tick, unit), unit.name))
        << '\n';
  }
}

// Every other boot shaded and a rule above each, so that its lanes read as
// one; drawn first, under the grid.
void write_boot_shading(std::ostream& out, const std::vector<DrawnBoot>& boots, const Axis& axis) {
  const double width = axis.right_px() + kClipLabelWidth - kMargin;
  for (std::size_t i = 0; i < boots.size(); ++i) {
    const auto& boot = boots[i];
    if (i % 2 == 1) {
      out << SvgElement("rect")
                 .attr("x", kMargin)
                 .attr("y", boot.top, 1)
                 .attr("width", width, 1)
                 .attr("height", static_cast<double>(boot.rows()) * kRowHeight, 1)
                 .attr("fill", "#f3f5f8")
          << '\n';
    }
    if (i > 0) {
      out << SvgElement("line")
                 .attr("x1", kMargin)
                 .attr("y1", boot.top, 1)
                 .attr("x2", kMargin + width, 1)
                 .attr("y2", boot.top, 1)
                 .attr("stroke", "#c9ced6")
                 .attr("stroke-width", 1)
          << '\n';
    }
  }
}

// A line from (x, top) down to (x, bottom), to be stroked.
SvgElement vertical_line(double x, double top, double bottom) {
  return SvgElement("line").attr("x1", x, 1).attr("y1", top, 1).attr("x2", x, 1).attr("y2", bottom, 1);
}

void write_grid(std::ostream& out, const Axis& axis, const std::vector<std::int64_t>& ticks, double bottom) {
  for (const auto tick : ticks) {
    // Time zero is every boot's start: a darker line.
    out << vertical_line(axis.x(tick), kRowsTop - 4, bottom)
               .attr("stroke", tick == 0 ? "#888888" : "#dddddd")
               .attr("stroke-width", 1)
        << '\n';
  }
}

std::string states_text(const std::optional<SchedTotals>& states) {
  if (!states) return "states not accounted";
  std::string text;
  for (const auto& state : kStates) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {}", state.name, format_time((*states).*state.ns));
  }
  return text;
}

std::string step_title(const DrawnBoot& boot, const LaneRow& row, const LaneStep& step, const PhaseNames& names) {
  const auto name = step.step ? step_name(*step.step, names) : std::string("after its last step");
  const auto path = step.on_listen_path() ? fmt::format("on the path to listen {}", format_time(step.on_listen_path_ns))
                                          : std::string("off the path to listen");
  return fmt::format("{} ({}): {} to {}, own time {}; {}; {}", name, lane_label(row),
                     format_time(boot.offset_ns(step.begin_ns)), format_time(boot.offset_ns(step.end_ns)),
                     format_time(step.duration()), states_text(step.states), path);
}

// A bar of a lane (a state's part of a step, the path band beneath it):
// x and width to the hundredth of a px, so that thin parts keep their ratio.
SvgElement lane_bar(std::string_view css, double x, double y, double width, double height) {
  return SvgElement("rect")
      .attr("class", css)
      .attr("x", x, 2)
      .attr("y", y, 1)
      .attr("width", width, 2)
      .attr("height", height);
}

// The bar split by state, each part as wide as the state's share of the
// step; one grey part when the kernel side did not account it.
void write_state_parts(std::ostream& out, const std::optional<SchedTotals>& states, double x, double width,
                       double bar_y) {
  if (!states || states->total() == 0) {
    out << lane_bar("state unknown", x, bar_y, width, kBarHeight).attr("fill", kUnknownFill) << '\n';
    return;
  }
  const auto total = static_cast<double>(states->total());
  std::uint64_t before = 0;
  for (const auto& state : kStates) {
    const auto ns = (*states).*state.ns;
    if (ns == 0) continue;
    const double from = x + width * static_cast<double>(before) / total;
    before += ns;
    const double to = x + width * static_cast<double>(before) / total;
    out << lane_bar(fmt::format("state {}", state.css), from, bar_y, to - from, kBarHeight).attr("fill", state.fill)
        << '\n';
  }
}

void write_step(std::ostream& out, const DrawnBoot& boot, const LaneRow& row, const LaneStep& step, const Axis& axis,
                double row_y, const PhaseNames& names) {
  const auto begin_ns = boot.offset_ns(step.begin_ns);
  const auto end_ns = boot.offset_ns(step.end_ns);
  // Wholly outside the span: the lane's clip label accounts for it.
  if (end_ns < axis.lo_ns || begin_ns > axis.hi_ns || (begin_ns == axis.hi_ns && end_ns > axis.hi_ns)) return;
  const double x = axis.clamped_x(begin_ns);
  const double width = std::max(kMinBarWidth, axis.clamped_x(end_ns) - x);
  const double bar_y = row_y + kBarTop;
  auto group = SvgElement("g").attr("class", "step");
  if (step.on_listen_path()) group.attr("data-on-path", "listen");
  group.child(SvgElement("title").text(step_title(boot, row, step, names)));
  out << group.open() << '\n';
  write_state_parts(out, step.states, x, width, bar_y);
  if (step.on_listen_path()) {
    out << lane_bar("on-path", x, bar_y, width, kBarHeight)
               .attr("fill", "none")
               .attr("stroke", kPathColour)
               .attr("stroke-width", 1.5)
        << '\n';
  }
  if (begin_ns < axis.lo_ns) write_torn_edge(out, x, bar_y, 1);
  if (end_ns > axis.hi_ns) write_torn_edge(out, x + width, bar_y, -1);
  const auto name = step.step ? step_name(*step.step, names) : std::string();
  if (!name.empty() && width >= static_cast<double>(name.size()) * kBarCharWidth + 2 * kBarTextPad) {
    // A white halo keeps the name legible over every state's colour.
    out << SvgElement("text")
               .attr("x", x + width / 2, 1)
               .attr("y", bar_y + kBarHeight - 4, 1)
               .attr("font-size", 10)
               .attr("text-anchor", "middle")
               .attr("stroke", "#ffffff")
               .attr("stroke-width", 2.5)
               .attr("paint-order", "stroke")
               .text(name)
        << '\n';
  }
  out << group.close() << '\n';
}

// How long the lane goes on after the span drawn, and until what.
struct LaneTail {
  std::uint64_t end_ns = 0;
  std::string until;
};

LaneTail tail_of(const DrawnBoot& boot, const LaneRow& row, const PhaseNames& names) {
  LaneTail tail;
  for (const auto index : row.steps) {
    const auto& step = boot.analysis.steps[index];
    if (step.end_ns >= tail.end_ns) {
      tail.end_ns = step.end_ns;
      tail.until = step.step ? step_name(*step.step, names) : std::string("its last reading");
    }
  }
  const auto& record = *boot.record;
  if (row.tid == record.container_pid && record.container_exit_ns && *record.container_exit_ns >= tail.end_ns) {
    tail = {.end_ns = *record.container_exit_ns, .until = "its exit"};
  }
  return tail;
}

// Right of the plot: "+150 ms" for a lane clipped at the end of the span.
void write_clip_label(std::ostream& out, const DrawnBoot& boot, const LaneRow& row, const Axis& axis, double row_y,
                      const PhaseNames& names) {
  const auto tail = tail_of(boot, row, names);
  const auto beyond_ns = boot.offset_ns(tail.end_ns) - axis.hi_ns;
  if (beyond_ns <= 0) return;
  const auto title = SvgElement("title").text(
      fmt::format("{} goes on {} past the span drawn, until {}", lane_label(row), format_time(beyond_ns), tail.until));
  const auto label = SvgElement("text")
                         .attr("x", axis.right_px() + kTornDepth + 4, 1)
                         .attr("y", row_y + kRowHeight / 2 + 4, 1)
                         .attr("fill", "#555555")
                         .text(fmt::format("… +{}", format_time(beyond_ns)));
  out << SvgElement("g").attr("class", "clipped").child(title).child(label) << '\n';
}

// A group whose title is its tooltip: the caller writes its children.
SvgElement titled_group(std::string_view css, std::string_view title) {
  return SvgElement("g").attr("class", css).child(SvgElement("title").text(title));
}

enum class Marker : std::uint8_t { Execve, Listen };

void write_marker(std::ostream& out, Marker marker, std::int64_t at_ns, const Axis& axis, double row_y) {
  if (at_ns < axis.lo_ns || at_ns > axis.hi_ns) return;
  const bool execve = marker == Marker::Execve;
  const std::string_view kind = execve ? "execve" : "listen";
  const double x = axis.x(at_ns);
  const auto group = titled_group(kind, fmt::format("{} at {}", kind, format_time(at_ns)));
  out << group.open() << '\n';
  out << vertical_line(x, row_y + 1, row_y + kRowHeight - 1)
             .attr("stroke", execve ? kExecveFill : kListenFill)
             .attr("stroke-width", 1.5)
      << '\n';
  if (execve) {
    write_diamond(out, x, row_y + kRowHeight / 2);
  } else {
    write_circle(out, x, row_y + kRowHeight / 2);
  }
  out << group.close() << '\n';
}

std::string lane_of_tid(const DrawnBoot& boot, std::uint32_t tid) {
  const auto row = boot.row_of(tid);
  return row ? lane_label(boot.lanes[*row]) : fmt::format("thread {}", tid);
}

// Whether the path passes from `from` to `to` at ts_ns through a wakeup the
// boot recorded; else it is the fork of `to` (the path's only other hop).
bool is_wakeup(const BootRecord& record, std::uint32_t from, std::uint32_t to, std::uint64_t ts_ns) {
  return std::any_of(record.wakeups.begin(), record.wakeups.end(), [&](const WakeupEdge& edge) {
    return edge.waker_tid == from && edge.wakee_tid == to && edge.ts_ns == ts_ns;
  });
}

void write_handoff(std::ostream& out, const DrawnBoot& boot, const PathPiece& from, const PathPiece& to,
                   const Axis& axis) {
  const auto from_row = boot.row_of(from.tid);
  const auto to_row = boot.row_of(to.tid);
  if (!from_row || !to_row || *from_row == *to_row) return;
  const bool wakeup = is_wakeup(*boot.record, from.tid, to.tid, to.begin_ns);
  const auto title =
      fmt::format("{}: {} {} {} at {}", wakeup ? "wakeup" : "fork", lane_of_tid(boot, from.tid),
                  wakeup ? "woke" : "forked", lane_of_tid(boot, to.tid), format_time(boot.offset_ns(to.begin_ns)));
  // From the middle of the lane left to the edge of the bar taken up.
  const bool down = *from_row < *to_row;
  const double x = axis.clamped_x(boot.offset_ns(to.begin_ns));
  const double from_y = boot.row_y(*from_row) + kBarTop + kBarHeight / 2;
  const double to_y = boot.row_y(*to_row) + kBarTop + (down ? 0 : kBarHeight);
  const auto group = titled_group(wakeup ? "arrow wakeup" : "arrow fork", title);
  out << group.open() << '\n';
  write_arrow(out, x, from_y, x, to_y, !wakeup);
  out << group.close() << '\n';
}

// The critical path to listen: a band beneath each of its pieces, and an
// arrow where it passes from one process to another.
void write_listen_path(std::ostream& out, const DrawnBoot& boot, const Axis& axis) {
  if (!boot.analysis.to_listen) return;
  const auto& pieces = boot.analysis.to_listen->pieces;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const auto& piece = pieces[i];
    const auto row = boot.row_of(piece.tid);
    if (!row) continue;
    const double row_y = boot.row_y(*row);
    const double x = axis.clamped_x(boot.offset_ns(piece.begin_ns));
    out << lane_bar("path", x, row_y + kBarTop + kBarHeight + 1, axis.clamped_x(boot.offset_ns(piece.end_ns)) - x,
                    kPathBandHeight)
               .attr("fill", kPathColour)
        << '\n';
    if (i > 0 && pieces[i - 1].tid != piece.tid) write_handoff(out, boot, pieces[i - 1], piece, axis);
  }
}

struct Columns {
  double boot_label_right = 0;  // text-anchor end
  double lane_label_right = 0;
};

// Under the boot's label: what its path to listen would take with a CPU
// always free, the figure to compare boots by on a noisy host; the path's
// states in its title.
// A label right-aligned on x, left of the plot.
SvgElement label_text(double x, double y) {
  return SvgElement("text").attr("x", x, 1).attr("y", y, 1).attr("text-anchor", "end");
}

void write_path_summary(std::ostream& out, const DrawnBoot& boot, const Columns& columns) {
  const auto& to_listen = boot.analysis.to_listen;
  const auto noise_free = boot.analysis.noise_free_listen();  // set only with to_listen
  if (!to_listen || !noise_free || boot.rows() < 2) return;
  const auto& path = *to_listen;
  const auto label = label_text(columns.boot_label_right, boot.row_y(1) + kRowHeight / 2 + 4)
                         .attr("font-size", 10)
                         .attr("fill", "#555555")
                         .text(fmt::format("noise-free {}", format_time(*noise_free)));
  const auto title = fmt::format("critical path to listen {}: {}; without its run-queue time {}",
                                 format_time(path.duration()), states_text(path.states()), format_time(*noise_free));
  out << titled_group("noise-free", title).child(label) << '\n';
}

void write_boot(std::ostream& out, const DrawnBoot& boot, const Axis& axis, const Columns& columns,
                const PhaseNames& names) {
  const auto& record = *boot.record;
  const auto group = SvgElement("g").attr("class", "boot").attr("data-sequence", record.sequence);
  out << group.open() << '\n';
  out << label_text(columns.boot_label_right, boot.top + kRowHeight / 2 + 4).text(boot_label(record)) << '\n';
  write_path_summary(out, boot, columns);
  for (std::size_t i = 0; i < boot.lanes.size(); ++i) {
    const auto& row = boot.lanes[i];
    const double row_y = boot.row_y(i);
    const auto lane =
        SvgElement("g").attr("class", "lane").attr("data-lane", lane_name(row.lane)).attr("data-tid", row.tid);
    out << lane.open() << '\n';
    out << label_text(columns.lane_label_right, row_y + kRowHeight / 2 + 4)
               .attr("fill", "#444444")
               .text(lane_label(row))
        << '\n';
    for (const auto index : row.steps) write_step(out, boot, row, boot.analysis.steps[index], axis, row_y, names);
    write_clip_label(out, boot, row, axis, row_y, names);
    out << lane.close() << '\n';
  }
  write_listen_path(out, boot, axis);
  if (record.execve_ns) {
    write_marker(out, Marker::Execve, boot.offset_ns(*record.execve_ns), axis,
                 boot.row_y(boot.row_of(record.execve_tid).value_or(0)));
  }
  if (record.listen_ns) {
    write_marker(out, Marker::Listen, boot.offset_ns(*record.listen_ns), axis,
                 boot.row_y(boot.row_of(record.listen_tid).value_or(0)));
  }
  out << group.close() << '\n';
}

std::vector<std::string> notes_of(const Selection& selection) {
  std::vector<std::string> notes;
  if (selection.boots.empty()) notes.emplace_back("No boot with a start to draw.");
  if (selection.over_cap > 0) {
    notes.push_back(
        fmt::format("{} more boots not drawn (at most {} are, by sequence).", selection.over_cap, kTimelineMaxBoots));
  }
  if (selection.not_started > 0) {
    notes.push_back(fmt::format("{} boots not drawn: tracing began after their start.", selection.not_started));
  }
  return notes;
}

void write_notes(std::ostream& out, const std::vector<std::string>& notes, double top) {
  for (std::size_t i = 0; i < notes.size(); ++i) {
    out << SvgElement("text")
               .attr("class", "note")
               .attr("x", kMargin)
               .attr("y", top + static_cast<double>(i + 1) * kNoteHeight - 4, 1)
               .attr("fill", "#555555")
               .text(notes[i])
        << '\n';
  }
}

Columns columns_for(const std::vector<DrawnBoot>& boots) {
  std::size_t boot_label_chars = 0;
  std::size_t lane_label_chars = 0;
  for (const auto& boot : boots) {
    boot_label_chars = std::max(boot_label_chars, boot_label(*boot.record).size());
    for (const auto& row : boot.lanes) lane_label_chars = std::max(lane_label_chars, lane_label(row).size());
  }
  Columns columns;
  columns.boot_label_right = kMargin + static_cast<double>(boot_label_chars) * kLabelCharWidth;
  columns.lane_label_right =
      columns.boot_label_right + kLabelGap + static_cast<double>(lane_label_chars) * kLabelCharWidth;
  return columns;
}

}  // namespace

void write_timeline_svg(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names,
                        const BootAnalyser& analyse) {
  const auto selection = select_boots(boots, analyse);
  const auto columns = columns_for(selection.boots);
  const auto axis = axis_for(selection.boots, columns.lane_label_right + kLabelGap);
  const auto ticks = ticks_of(axis);
  const auto notes = notes_of(selection);
  const double rows_bottom =
      selection.boots.empty()
          ? kRowsTop
          : selection.boots.back().top + static_cast<double>(selection.boots.back().rows()) * kRowHeight;
  const double notes_top = rows_bottom + kBottomAxisHeight;
  const double width = std::ceil(axis.right_px() + kClipLabelWidth + kMargin);
  const double height = std::ceil(notes_top + static_cast<double>(notes.size()) * kNoteHeight + kMargin);

  const auto root = svg_root(width, height);
  write_open(out, root);
  write_title(out, selection.boots.size(), axis);
  write_legend(out);
  write_boot_shading(out, selection.boots, axis);
  write_grid(out, axis, ticks, rows_bottom);
  write_tick_labels(out, axis, ticks, kTopAxisY);
  for (const auto& boot : selection.boots) write_boot(out, boot, axis, columns, names);
  write_tick_labels(out, axis, ticks, rows_bottom + 16);
  write_notes(out, notes, notes_top);
  out << root.close() << '\n';
}

}  // namespace hacoboot
