#pragma once

#include <iosfwd>
#include <span>

#include "model/boot.hpp"

namespace hacoboot {

// Writes the boots as Chrome Trace Event JSON, which Perfetto UI and
// chrome://tracing open: one track per boot (pid 1, tid = its sequence), each
// phase a complete event lasting until the next phase (the last one lasts 0),
// execve and listen instant events. Times are in microseconds from the
// earliest timestamp of all boots ("otherData.clock_origin_ns", monotonic),
// so concurrent boots overlap as they did and every timestamp keeps its ns.
void write_chrome_trace(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names = {});

}  // namespace hacoboot
