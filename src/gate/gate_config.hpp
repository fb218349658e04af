#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "gate/baseline.hpp"

namespace hacoboot {

// Which figure of execve and listen the gate compares. Noise-free (the
// critical path without its run-queue time) does not move when a busy CI
// runner keeps the boot waiting for a CPU; wall is what the bpftrace script
// measured. Phases have no noise-free figure: they are compared by wall.
enum class GateFigure : std::uint8_t { NoiseFree, Wall };

std::optional<GateFigure> parse_gate_figure(std::string_view text);  // "noise-free", "wall"
const char* gate_figure_name(GateFigure figure);

struct GateConfig {
  GateFigure figure = GateFigure::NoiseFree;
  // The statistic of the percentile comparison, used only for a baseline
  // without samples.
  GateStatistic statistic = GateStatistic::P50;
  double max_regression_pct = 10.0;                    // finite, (0, 1000]
  double alpha = 0.05;                                 // family-wise over the gated metrics, (0, 0.5]
  std::set<std::string> gated = {"execve", "listen"};  // keys of MetricTable; empty: all
};

}  // namespace hacoboot
