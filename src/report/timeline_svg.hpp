#pragma once

#include <cstddef>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "model/boot.hpp"

namespace hacoboot {

// Most boots drawn in one timeline: past a few hundred rows the picture is
// too tall to read and slow to open, so the rest are only counted in a note.
inline constexpr std::size_t kTimelineMaxRows = 500;

// Writes a standalone SVG waterfall of the boots, like `systemd-analyze plot`:
// one row per started boot (by sequence, at most kTimelineMaxRows), each on a
// time axis from its own start, with a bar per phase (until the next phase),
// markers for execve and listen, and a legend. Boots without a start (tracing
// began mid-launch) have no zero to draw from: they are counted in a note.
void write_timeline_svg(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names = {});

// The text with & < > " ' replaced by entities, for XML text and attributes.
std::string xml_escape(std::string_view text);

}  // namespace hacoboot
