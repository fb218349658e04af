#pragma once

#include <chrono>
#include <iosfwd>

#include "cli/options.hpp"

namespace hacoboot {

// The event loop's longest wait for records. Signals (a stop, the end of the
// --run command) interrupt the wait at once; producers wake it when the ring
// buffer fills up. 100 ms keeps an idle tool at 10 wake-ups a second, and is
// how late at most a boot's records are read, -n N or --duration noticed.
inline constexpr std::chrono::milliseconds kPollInterval{100};

// One tracing run, start to summary: checks, load and attach, the --run
// child, the event loop, the report. Returns the process exit status; throws
// UsageError or RuntimeError when it cannot run.
int run_session(const Options& options, std::ostream& diagnostics);

}  // namespace hacoboot
