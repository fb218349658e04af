#pragma once

#include <cstddef>
#include <vector>

#include "gate/baseline.hpp"

namespace hacoboot::test {

// Runs as the regression gate reads them, built from boot times in ms.

// One figure of boots taking these many ms, with its samples (a schema 3 summary's).
FigureStats figure(const std::vector<double>& ms);
// The same figure as a summary of schema 1 or 2 has it: no samples.
FigureStats without_samples(FigureStats f);
// `boots` values around `ms`, spread by +-1 %.
std::vector<double> around(double ms, std::size_t boots = 20);
// A run of this tool's version with these metrics; its boots, the most any metric has.
RunFigures run_of(MetricTable metrics);
// execve and listen by wall time only (no scheduler readings).
RunFigures wall_run(const std::vector<double>& execve_ms, const std::vector<double>& listen_ms);

}  // namespace hacoboot::test
