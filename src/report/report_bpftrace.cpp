#include <fmt/format.h>

#include <ostream>

#include "report/report_writers.hpp"

namespace hacoboot {
namespace {

// The reference bpftrace script's lines, figure for figure. Like bpftrace, a
// metric with no sample prints nothing.
class BpftraceWriter final : public ReportWriter {
 public:
  void write(const Summary& summary, const RunFacts& /*facts*/, std::ostream& out) const override {
    metric(out, "execve", summary.execve());
    metric(out, "listen", summary.listen());
  }

 private:
  static void metric(std::ostream& out, const char* name, const SampleStats& s) {
    if (s.empty()) return;
    out << fmt::format("@{0}__count: {1}\n@{0}_avg: {2}\n@{0}_max: {3}\n@{0}_min: {4}\n", name, s.count(), s.avg(),
                       s.max(), s.min());
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_bpftrace_writer() {
  return std::make_unique<BpftraceWriter>();
}

}  // namespace hacoboot
