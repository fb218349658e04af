#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "capture/usdt_probe.hpp"

namespace hacoboot {

// `hacoboot-sampler --list`: the probes of `binary` as a table of provider,
// name, location, semaphore ("none" when 0) and argument specs, each spec
// decoded on a line of its own; '*' marks haconiwa:bootstrap_phase_pass, the
// probe the tool attaches to, and a last line says when it is missing.
void write_probe_list(const std::string& binary, const std::vector<UsdtProbe>& probes, std::ostream& out);

}  // namespace hacoboot
