#pragma once

#include <iosfwd>

#include "hacoboot/options.hpp"

namespace hacoboot {

// One tracing run, start to summary: checks, load and attach, the --run
// child, the event loop, the report. Returns the process exit status; throws
// UsageError or RuntimeError when it cannot run.
int run_session(const Options& options, std::ostream& diagnostics);

}  // namespace hacoboot
