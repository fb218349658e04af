#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "model/boot.hpp"
#include "model/boot_analysis.hpp"

namespace hacoboot {

// Most boots drawn in one timeline: past a few hundred the picture is too
// tall to read and slow to open, so the rest are only counted in a note.
inline constexpr std::size_t kTimelineMaxBoots = 500;

// What the timeline draws of a boot: analyse_boot, or a test's own analysis.
using BootAnalyser = std::function<BootAnalysis(const BootRecord&)>;

// Writes a standalone SVG of the boots: per started boot (by sequence, at
// most kTimelineMaxBoots) a lane per process (supervisor, container,
// listener...), each of its steps a bar from its begin to its end split by
// scheduler state (CPU, run queue, sleep, I/O; grey when not accounted),
// the steps on the critical path to listen outlined with the path beneath
// them and an arrow where it passes to another process (a wakeup or a
// fork), markers for execve and listen, and a legend. The time axis spans
// the boots, from their start to the last listen: what goes on after it
// (the supervisor waiting for the container to stop) is clipped, with a
// torn edge and how much longer each lane lasts. Boots without a start
// (tracing began mid-launch) have no zero to draw from: they are counted
// in a note.
void write_timeline_svg(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names = {},
                        const BootAnalyser& analyse = analyse_boot);

}  // namespace hacoboot
