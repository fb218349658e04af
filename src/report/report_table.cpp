#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>

#include "model/phases.hpp"
#include "report/report_writers.hpp"

namespace hacoboot {
namespace {

constexpr int kLabelWidth = 34;
constexpr int kBarWidth = 20;
constexpr int kHistogramBarWidth = 52;  // as bpftrace's hist()

std::string step_label(const Step& step, const PhaseNames& names) {
  if (step.kind != Step::Kind::Phase) return fmt::format("    {}", step_name(step, names));
  return fmt::format("{:>3} {}", step.phase, step_name(step, names));
}

std::string bar(double fraction, int width) {
  const auto cells = static_cast<std::size_t>(std::lround(std::clamp(fraction, 0.0, 1.0) * width));
  std::string drawn(cells, '@');
  return drawn;
}

class TableWriter final : public ReportWriter {
 public:
  explicit TableWriter(bool histograms) : histograms_(histograms) {}

  void write(const Summary& summary, const RunFacts& facts, std::ostream& out) const override {
    header(summary, facts, out);
    milestones(summary, facts, out);
    breakdown(summary, facts, out);
    if (histograms_) {
      histogram(out, "execve", summary.execve());
      histogram(out, "listen", summary.listen());
    }
  }

 private:
  static void header(const Summary& summary, const RunFacts& facts, std::ostream& out) {
    const auto& boots = summary.boots();
    out << fmt::format("Boots: {} started, {} reached execve, {} reached listen, {} incomplete", boots.started,
                       boots.execve, boots.listen, boots.incomplete);
    if (boots.unstarted > 0) out << fmt::format(", {} seen only after their start", boots.unstarted);
    out << "\nexecve of: " << (facts.command.empty() ? "the container's first execve" : facts.command) << '\n';
    if (facts.lost_events > 0) {
      out << fmt::format("WARNING: {} events lost (ring buffer full): figures may be incomplete\n", facts.lost_events);
    }
    if (facts.untracked_phases > 0) {
      out << fmt::format("Ignored: {} phase events of launches not seen starting\n", facts.untracked_phases);
    }
  }

  // The reference script's two metrics, with the distribution.
  static void milestones(const Summary& summary, const RunFacts& facts, std::ostream& out) {
    out << fmt::format("\n{:<{}} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
                       "TIME SINCE " + facts.names.name(facts.start_phase), kLabelWidth, "COUNT", "AVG", "P50", "P90",
                       "P99", "MIN", "MAX");
    for (const auto& [name, stats] : {std::pair{"execve", &summary.execve()}, std::pair{"listen", &summary.listen()}}) {
      out << fmt::format("{:<{}} {:>6}", name, kLabelWidth, stats->count());
      for (const auto value : {stats->avg(), stats->percentile(50), stats->percentile(90), stats->percentile(99),
                               stats->min(), stats->max()}) {
        out << fmt::format(" {:>9}", stats->empty() ? "-" : format_duration(value));
      }
      out << '\n';
    }
  }

  // Every step in boot order, with its own cost and its share of the time to
  // listen (to execve when nothing listened): where boot time goes, like
  // systemd-analyze blame. Steps after that (the container's lifetime) get no share.
  static void breakdown(const Summary& summary, const RunFacts& facts, std::ostream& out) {
    const auto steps = summary.steps_in_boot_order();
    if (steps.empty()) return;
    const auto& useful = summary.listen().empty() ? summary.execve() : summary.listen();
    const auto total = static_cast<double>(useful.avg());
    out << fmt::format("\n{:<{}} {:>6} {:>11} {:>9} {:>9} {:>9} {:>6}\n", "BREAKDOWN (boot order)", kLabelWidth,
                       "COUNT", "SINCE START", "MIN", "MAX", "OWN TIME", "SHARE");
    for (const auto& [step, stats] : steps) {
      const auto& since = stats->since_start;
      const auto own = stats->delta.avg();
      std::string share = "-";
      if (total > 0 && static_cast<double>(since.avg()) <= total && !stats->delta.empty()) {
        const double fraction = static_cast<double>(own) / total;
        share = fmt::format("{:5.1f}% {}", fraction * 100.0, bar(fraction, kBarWidth));
      }
      out << fmt::format("{:<{}} {:>6} {:>11} {:>9} {:>9} {:>9} {}\n", step_label(step, facts.names), kLabelWidth,
                         since.count(), format_duration(since.avg()), format_duration(since.min()),
                         format_duration(since.max()), stats->delta.empty() ? "-" : format_duration(own), share);
    }
  }

  // bpftrace hist() style: one row per power-of-two slot, empty edges trimmed.
  static void histogram(std::ostream& out, const char* name, const SampleStats& stats) {
    if (stats.empty()) return;
    const auto slots = stats.log2_counts();
    const auto used = [](std::uint64_t n) { return n > 0; };
    const auto first = static_cast<std::size_t>(std::find_if(slots.begin(), slots.end(), used) - slots.begin());
    const auto last = static_cast<std::size_t>(slots.rend() - std::find_if(slots.rbegin(), slots.rend(), used)) - 1;
    const auto peak = *std::max_element(slots.begin(), slots.end());
    out << fmt::format("\n@{} (time since start):\n", name);
    for (std::size_t slot = first; slot <= last; ++slot) {
      const auto low = slot == 0 ? 0 : std::uint64_t{1} << (slot - 1);
      const auto high = std::uint64_t{1} << slot;
      const auto count = slots.at(slot);
      const auto label = fmt::format("[{}, {})", format_duration(low), format_duration(high));
      out << fmt::format("{:<24} {:>8} |{:<{}}|\n", label, count,
                         bar(static_cast<double>(count) / static_cast<double>(peak), kHistogramBarWidth),
                         kHistogramBarWidth);
    }
  }

  bool histograms_;
};

}  // namespace

std::unique_ptr<ReportWriter> make_table_writer(bool histograms) {
  return std::make_unique<TableWriter>(histograms);
}

}  // namespace hacoboot
