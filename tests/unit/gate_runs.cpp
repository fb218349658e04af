#include "gate_runs.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "model/sample_stats.hpp"
#include "report/report.hpp"

namespace hacoboot::test {

FigureStats figure(const std::vector<double>& ms) {
  SampleStats s;
  for (const double v : ms) s.add(static_cast<std::uint64_t>(v * 1e6));
  return figure_of(s);
}

FigureStats without_samples(FigureStats f) {
  f.samples = {};
  return f;
}

std::vector<double> around(double ms, std::size_t boots) {
  std::vector<double> values;
  for (std::size_t i = 0; i < boots; ++i) {
    values.push_back(ms * (0.99 + 0.02 * static_cast<double>(i) / static_cast<double>(boots)));
  }
  return values;
}

RunFigures run_of(MetricTable metrics) {
  std::uint64_t boots = 0;
  for (const auto& [key, metric] : metrics) boots = std::max(boots, metric.wall.count);
  return {.origin = {.schema = 3, .tool_version = tool_version(), .start_phase = 1, .command = ""},
          .boots = boots,
          .metrics = std::move(metrics)};
}

RunFigures wall_run(const std::vector<double>& execve_ms, const std::vector<double>& listen_ms) {
  return run_of({{"execve", {.name = "execve", .wall = figure(execve_ms), .noise_free = std::nullopt}},
                 {"listen", {.name = "listen", .wall = figure(listen_ms), .noise_free = std::nullopt}}});
}

}  // namespace hacoboot::test
