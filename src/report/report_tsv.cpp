#include <fmt/format.h>

#include <ostream>

#include "report/report_writers.hpp"

namespace hacoboot {
namespace {

// Tidy rows for pandas and friends: one per step and timing.
class TsvWriter final : public ReportWriter {
 public:
  void write(const Summary& summary, const RunFacts& facts, std::ostream& out) const override {
    out << "kind\tphase\tname\ttiming\tcount\tavg_ns\tmin_ns\tmax_ns\tstddev_ns";
    for (const double q : kReportedPercentiles) out << fmt::format("\tp{}_ns", q);
    out << '\n';
    for (const auto& [step, stats] : summary.steps_in_boot_order()) {
      row(out, step_name(step, facts.names), step, "since_start", stats->since_start);
      row(out, step_name(step, facts.names), step, "delta", stats->delta);
      if (const auto* noise_free = noise_free_of(step, summary.paths()); noise_free && !noise_free->empty()) {
        row(out, step_name(step, facts.names), step, "noise_free", *noise_free);
      }
    }
  }

 private:
  // Beside execve's and listen's time since start: their critical path
  // without its run-queue time.
  static const SampleStats* noise_free_of(const Step& step, const PathBreakdown& paths) {
    if (step.kind == Step::Kind::Execve) return &paths.noise_free_execve();
    if (step.kind == Step::Kind::Listen) return &paths.noise_free_listen();
    return nullptr;
  }

  static void row(std::ostream& out, const std::string& name, const Step& step, const char* timing,
                  const SampleStats& s) {
    const bool is_phase = step.kind == Step::Kind::Phase;
    out << fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}", is_phase ? "phase" : name,
                       is_phase ? std::to_string(step.phase) : std::string(), name, timing, s.count(), s.avg(), s.min(),
                       s.max(), s.stddev());
    for (const double q : kReportedPercentiles) out << '\t' << s.percentile(q);
    out << '\n';
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_tsv_writer() {
  return std::make_unique<TsvWriter>();
}

}  // namespace hacoboot
