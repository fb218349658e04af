#include "report/report.hpp"

#include <fmt/format.h>

#include <array>

#include "report/report_writers.hpp"
#include "util/wait_status.hpp"

#ifndef HACOBOOT_VERSION
#error "HACOBOOT_VERSION must be defined by the build"
#endif

namespace hacoboot {
namespace {

// Decimals that leave three significant digits to a value in [1, 999.5).
int significant_decimals(double value) {
  if (value >= 99.95) return 0;
  if (value >= 9.995) return 1;
  return 2;
}

}  // namespace

const char* tool_version() {
  return HACOBOOT_VERSION;
}

std::unique_ptr<ReportWriter> make_report_writer(ReportFormat format, TableDetail table) {
  switch (format) {
    case ReportFormat::Table: return make_table_writer(table);
    case ReportFormat::Bpftrace: return make_bpftrace_writer();
    case ReportFormat::Json: return make_json_writer();
    case ReportFormat::Tsv: return make_tsv_writer();
  }
  return nullptr;
}

std::string describe_failure(const BootFailure& failure, const PhaseNames& names) {
  const auto how = failure.wait_status ? describe_wait_status(*failure.wait_status)
                                       : fmt::format("ended unseen ({})", boot_end_name(failure.end));
  const auto& step = failure.last_step;
  const auto where = step.kind == Step::Kind::Phase ? fmt::format("{} {}", step.phase, step_name(step, names))
                                                    : step_name(step, names);
  return fmt::format("{} {} after {}", failed_process_name(failure.process), how, where);
}

std::string format_duration(std::uint64_t ns) {
  struct Unit {
    double scale;
    const char* name;
  };
  static constexpr std::array<Unit, 3> kUnits{{{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}}};
  const auto value_ns = static_cast<double>(ns);
  for (std::size_t i = 0; i < kUnits.size(); ++i) {
    const auto& unit = kUnits.at(i);
    if (value_ns < unit.scale) continue;
    const double value = value_ns / unit.scale;
    // Three significant digits; 999.7 us would print as "1000 us": one unit up.
    if (i > 0 && value >= 999.5) return fmt::format("1.00 {}", kUnits.at(i - 1).name);
    return fmt::format("{:.{}f} {}", value, significant_decimals(value), unit.name);
  }
  return fmt::format("{} ns", ns);
}

std::string format_change(double pct) {
  return fmt::format("{:+.1f}%", pct);
}

}  // namespace hacoboot
