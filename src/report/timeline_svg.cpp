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

#include "model/phases.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

constexpr std::string_view kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

// Layout, in px. A file writer has no text metrics: character widths are
// estimates for the font above, erring wide, since they only decide whether
// a label fits.
constexpr double kMargin = 16;
constexpr double kLabelGap = 12;  // between the row labels and time zero
constexpr double kPlotWidth = 1000;
constexpr double kTitleY = 26;
constexpr double kLegendY = 54;   // centre line of the legend
constexpr double kTopAxisY = 88;  // baseline of the upper tick labels
constexpr double kRowsTop = 96;
constexpr double kRowHeight = 22;
constexpr double kBarHeight = 14;
constexpr double kMinBarWidth = 1;
constexpr double kLastPhaseWidth = 2;  // the last phase has no end: a tick
constexpr double kBottomAxisHeight = 22;
constexpr double kNoteHeight = 18;
constexpr double kLabelCharWidth = 7.2;  // 12px text
constexpr double kBarCharWidth = 6.8;    // 10px upper-case phase names
constexpr double kBarTextPad = 3;
constexpr double kMarkerSize = 6;
constexpr std::int64_t kTargetTicks = 10;
constexpr std::int64_t kMinRangeNs = 1'000;  // an axis needs some width, even for one instant

constexpr std::string_view kExecveFill = "#d62728";
constexpr std::string_view kListenFill = "#1f2a6b";
constexpr std::string_view kLastPhaseFill = "#555555";

struct PhaseGroup {
  std::int64_t first_phase;
  std::int64_t last_phase;
  std::string_view name;
  std::string_view fill;
};

constexpr std::array<PhaseGroup, 4> kGroups{{
    {0, kFirstContainerPhase - 1, "supervisor", "#6c9bd2"},
    {kFirstContainerPhase, kFirstNetworkPhase - 1, "container", "#f0a35e"},
    {kFirstNetworkPhase, kFirstUserPhase - 1, "network", "#7cc47a"},
    {kFirstUserPhase, kMaxPhase, "user", "#b48ad6"},
}};

// The last group whose first phase the phase reaches.
const PhaseGroup& group_of(std::int64_t phase) {
  const auto* group = kGroups.data();
  for (const auto& candidate : kGroups) {
    if (phase >= candidate.first_phase) group = &candidate;
  }
  return *group;
}

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

// Signed: the CLI's phase 0 comes before the boot's start at phase 1.
std::int64_t offset_ns(const BootRecord& boot, std::uint64_t ts_ns) {
  return static_cast<std::int64_t>(ts_ns - *boot.start_ns);
}

std::string boot_label(const BootRecord& boot) {
  return fmt::format("boot {} (hpid {})", boot.sequence, boot.hpid);
}

struct Selection {
  std::vector<const BootRecord*> rows;  // started, by sequence, capped
  std::size_t not_started = 0;
  std::size_t over_cap = 0;
};

Selection select_rows(std::span<const BootRecord> boots) {
  Selection selection;
  for (const auto& boot : boots) {
    if (boot.started()) {
      selection.rows.push_back(&boot);
    } else {
      ++selection.not_started;
    }
  }
  std::stable_sort(selection.rows.begin(), selection.rows.end(),
                   [](const auto* a, const auto* b) { return a->sequence < b->sequence; });
  if (selection.rows.size() > kTimelineMaxRows) {
    selection.over_cap = selection.rows.size() - kTimelineMaxRows;
    selection.rows.resize(kTimelineMaxRows);
  }
  return selection;
}

// Maps times from a boot's start to x, the same for every row.
struct Axis {
  std::int64_t lo_ns = 0;
  std::int64_t hi_ns = 0;
  double left_px = 0;

  [[nodiscard]] std::int64_t range_ns() const { return hi_ns - lo_ns; }
  [[nodiscard]] double x(std::int64_t ns) const {
    return left_px + kPlotWidth * static_cast<double>(ns - lo_ns) / static_cast<double>(range_ns());
  }
};

Axis axis_for(const std::vector<const BootRecord*>& rows, double left_px) {
  Axis axis{.lo_ns = 0, .hi_ns = 0, .left_px = left_px};
  const auto widen = [&axis](std::int64_t ns) {
    axis.lo_ns = std::min(axis.lo_ns, ns);
    axis.hi_ns = std::max(axis.hi_ns, ns);
  };
  for (const auto* boot : rows) {
    if (const auto extent = boot->extent()) {
      widen(offset_ns(*boot, extent->first_ns));
      widen(offset_ns(*boot, extent->last_ns));
    }
  }
  axis.hi_ns = std::max(axis.hi_ns, axis.lo_ns + kMinRangeNs);
  return axis;
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
  // lo_ns <= 0 and division truncates towards zero: the first multiple at or after lo_ns.
  for (auto tick = axis.lo_ns / step * step; tick <= axis.hi_ns; tick += step) ticks.push_back(tick);
  return ticks;
}

void write_open(std::ostream& out, double width, double height) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" )"
      R"(font-family="{2}" font-size="12" fill="#1b1b1b">)"
      "\n",
      width, height, kFont);
  out << R"(<rect width="100%" height="100%" fill="#ffffff"/>)" << '\n';
}

void write_title(std::ostream& out, std::size_t rows) {
  out << fmt::format(R"(<text x="{}" y="{}" font-size="16" font-weight="bold">{}</text>)"
                     "\n",
                     kMargin, kTitleY,
                     xml_escape(fmt::format("Container boots: {} drawn, times from each boot's start", rows)));
}

// Places legend items left to right; returns the x after this one.
double write_legend_label(std::ostream& out, double x, std::string_view text) {
  out << fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)"
                     "\n",
                     x, kLegendY + 4, xml_escape(text));
  return x + static_cast<double>(text.size()) * kLabelCharWidth + 24;
}

void write_diamond(std::ostream& out, double x, double y) {
  out << fmt::format(R"(<path d="M{0:.1f} {1:.1f}L{2:.1f} {3:.1f}L{0:.1f} {4:.1f}L{5:.1f} {3:.1f}Z" )"
                     R"(fill="{6}" stroke="#ffffff" stroke-width="1"/>)"
                     "\n",
                     x, y - kMarkerSize, x + kMarkerSize, y, y + kMarkerSize, x - kMarkerSize, kExecveFill);
}

void write_circle(std::ostream& out, double x, double y) {
  out << fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}" stroke="#ffffff" stroke-width="1"/>)"
                     "\n",
                     x, y, kMarkerSize - 1, kListenFill);
}

void write_legend(std::ostream& out) {
  out << "<g class=\"legend\">\n";
  double x = kMargin;
  for (const auto& group : kGroups) {
    out << fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="14" height="{}" fill="{}"/>)"
                       "\n",
                       x, kLegendY - kBarHeight / 2, kBarHeight, group.fill);
    x = write_legend_label(out, x + 20,
                           fmt::format("{} phases ({}-{})", group.name, group.first_phase, group.last_phase));
  }
  write_diamond(out, x + kMarkerSize, kLegendY);
  x = write_legend_label(out, x + 2 * kMarkerSize + 6, "execve");
  write_circle(out, x + kMarkerSize, kLegendY);
  x = write_legend_label(out, x + 2 * kMarkerSize + 6, "listen");
  out << fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{}" height="{}" fill="{}"/>)"
                     "\n",
                     x, kLegendY - kBarHeight / 2, kLastPhaseWidth, kBarHeight, kLastPhaseFill);
  write_legend_label(out, x + 8, "last phase seen");
  out << "</g>\n";
}

void write_tick_labels(std::ostream& out, const Axis& axis, const std::vector<std::int64_t>& ticks, double y) {
  const auto& unit = unit_for(axis.range_ns());
  for (const auto tick : ticks) {
    out << fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#444444">{}</text>)"
                       "\n",
                       axis.x(tick), y, xml_escape(fmt::format("{:g} {}", in_unit(tick, unit), unit.name)));
  }
}

// Every other row shaded, so that a long row can be followed by eye; drawn
// first, under the grid.
void write_row_shading(std::ostream& out, std::size_t rows, const Axis& axis) {
  for (std::size_t i = 1; i < rows; i += 2) {
    out << fmt::format(R"(<rect x="{}" y="{:.1f}" width="{:.1f}" height="{}" fill="#f3f5f8"/>)"
                       "\n",
                       kMargin, kRowsTop + static_cast<double>(i) * kRowHeight, axis.left_px + kPlotWidth - kMargin,
                       kRowHeight);
  }
}

void write_grid(std::ostream& out, const Axis& axis, const std::vector<std::int64_t>& ticks, double bottom) {
  for (const auto tick : ticks) {
    // Time zero is every boot's start: a darker line.
    out << fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="{3}" stroke-width="1"/>)"
                       "\n",
                       axis.x(tick), kRowsTop - 4, bottom, tick == 0 ? "#888888" : "#dddddd");
  }
}

void write_span(std::ostream& out, const BootRecord& boot, const PhaseSpan& span, const Axis& axis, double row_y,
                const PhaseNames& names) {
  const auto name = names.name(span.phase);
  const auto begin_ns = offset_ns(boot, span.begin_ns);
  const auto end_ns = span.end_ns ? std::optional(offset_ns(boot, *span.end_ns)) : std::nullopt;
  const double x = axis.x(begin_ns);
  const double width = end_ns ? std::max(kMinBarWidth, axis.x(*end_ns) - x) : kLastPhaseWidth;
  const auto title =
      end_ns ? fmt::format("{} (phase {}): {} to {}, {}", name, span.phase, format_time(begin_ns), format_time(*end_ns),
                           format_time(*end_ns - begin_ns))
             : fmt::format("{} (phase {}) at {}, the last phase seen", name, span.phase, format_time(begin_ns));
  const double bar_y = row_y + (kRowHeight - kBarHeight) / 2;
  // The white outline keeps neighbouring phases of one group apart.
  out << fmt::format(R"(<rect class="phase" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" fill="{}" )"
                     R"(stroke="#ffffff" stroke-width="0.5"><title>{}</title></rect>)"
                     "\n",
                     x, bar_y, width, kBarHeight, end_ns ? group_of(span.phase).fill : kLastPhaseFill,
                     xml_escape(title));
  if (!end_ns || width < static_cast<double>(name.size()) * kBarCharWidth + 2 * kBarTextPad) return;
  // Centred, clear of a marker at the phase's start (often execve or listen).
  // The bar's title already explains it: the label must not hide it from the pointer.
  out << fmt::format(
      R"(<text x="{:.1f}" y="{:.1f}" font-size="10" text-anchor="middle" pointer-events="none">{}</text>)"
      "\n",
      x + width / 2, bar_y + kBarHeight - 4, xml_escape(name));
}

enum class Marker { Execve, Listen };

void write_marker(std::ostream& out, Marker marker, std::int64_t at_ns, const Axis& axis, double row_y) {
  const bool execve = marker == Marker::Execve;
  const std::string_view kind = execve ? "execve" : "listen";
  const double x = axis.x(at_ns);
  out << fmt::format(R"(<g class="{}"><title>{}</title>)"
                     "\n",
                     kind, xml_escape(fmt::format("{} at {}", kind, format_time(at_ns))));
  out << fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="{3}" stroke-width="1.5"/>)"
                     "\n",
                     x, row_y + 1, row_y + kRowHeight - 1, execve ? kExecveFill : kListenFill);
  if (execve) {
    write_diamond(out, x, row_y + kRowHeight / 2);
  } else {
    write_circle(out, x, row_y + kRowHeight / 2);
  }
  out << "</g>\n";
}

void write_row(std::ostream& out, const BootRecord& boot, std::size_t index, const Axis& axis,
               const PhaseNames& names) {
  const double row_y = kRowsTop + static_cast<double>(index) * kRowHeight;
  out << fmt::format(R"(<g class="boot" data-sequence="{}">)"
                     "\n",
                     boot.sequence);
  out << fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)"
                     "\n",
                     axis.left_px - kLabelGap, row_y + kRowHeight / 2 + 4, xml_escape(boot_label(boot)));
  for (const auto& span : boot.phase_spans()) write_span(out, boot, span, axis, row_y, names);
  if (boot.execve_ns) write_marker(out, Marker::Execve, offset_ns(boot, *boot.execve_ns), axis, row_y);
  if (boot.listen_ns) write_marker(out, Marker::Listen, offset_ns(boot, *boot.listen_ns), axis, row_y);
  out << "</g>\n";
}

std::vector<std::string> notes_of(const Selection& selection) {
  std::vector<std::string> notes;
  if (selection.rows.empty()) notes.emplace_back("No boot with a start to draw.");
  if (selection.over_cap > 0) {
    notes.push_back(
        fmt::format("{} more boots not drawn (at most {} are, by sequence).", selection.over_cap, kTimelineMaxRows));
  }
  if (selection.not_started > 0) {
    notes.push_back(fmt::format("{} boots not drawn: tracing began after their start.", selection.not_started));
  }
  return notes;
}

void write_notes(std::ostream& out, const std::vector<std::string>& notes, double top) {
  for (std::size_t i = 0; i < notes.size(); ++i) {
    out << fmt::format(R"(<text class="note" x="{}" y="{:.1f}" fill="#555555">{}</text>)"
                       "\n",
                       kMargin, top + static_cast<double>(i + 1) * kNoteHeight - 4, xml_escape(notes[i]));
  }
}

double label_column_width(const std::vector<const BootRecord*>& rows) {
  std::size_t longest = 0;
  for (const auto* boot : rows) longest = std::max(longest, boot_label(*boot).size());
  return static_cast<double>(longest) * kLabelCharWidth;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  static constexpr std::array<CharEscape, 5> kXml{
      {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&apos;"}}};
  return escape_chars(text, kXml);
}

void write_timeline_svg(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names) {
  const auto selection = select_rows(boots);
  const auto axis = axis_for(selection.rows, kMargin + label_column_width(selection.rows) + kLabelGap);
  const auto ticks = ticks_of(axis);
  const auto notes = notes_of(selection);
  const double rows_bottom = kRowsTop + static_cast<double>(selection.rows.size()) * kRowHeight;
  const double notes_top = rows_bottom + kBottomAxisHeight;
  // Room on the right for a marker drawn at the very end of the axis.
  const double width = std::ceil(axis.left_px + kPlotWidth + kMarkerSize + kMargin);
  const double height = std::ceil(notes_top + static_cast<double>(notes.size()) * kNoteHeight + kMargin);

  write_open(out, width, height);
  write_title(out, selection.rows.size());
  write_legend(out);
  write_row_shading(out, selection.rows.size(), axis);
  write_grid(out, axis, ticks, rows_bottom);
  write_tick_labels(out, axis, ticks, kTopAxisY);
  for (std::size_t i = 0; i < selection.rows.size(); ++i) write_row(out, *selection.rows[i], i, axis, names);
  write_tick_labels(out, axis, ticks, rows_bottom + 16);
  write_notes(out, notes, notes_top);
  out << "</svg>\n";
}

}  // namespace hacoboot
