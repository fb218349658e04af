#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/options.hpp"

namespace hacoboot {

// --check: like `bpftrace --info`, for the operator who wonders why the tool
// does not trace. Each line is one thing the tool needs of this host, what
// was found, and whether it will do; nothing is attached, nothing written.

enum class CheckState : std::uint8_t {
  Ok,
  Fallback,  // the tool works without it, less well (the detail says how)
  Missing,   // the tool cannot trace
};

struct CheckLine {
  std::string item;    // "kernel BTF", "capabilities"...
  std::string detail;  // what was found, and what it means
  CheckState state = CheckState::Ok;
};

// One line per item, then "ready to trace" (and the fallbacks it takes) or
// "not ready: ..." naming the missing items. Returns whether ready.
bool write_check_report(const std::vector<CheckLine>& lines, std::ostream& out);

// The lines for this host and these options (--haconiwa or --pid, --btf,
// --btf-cache, --syscall-hooks, --usdt-attach).
std::vector<CheckLine> check_host(const Options& options);

// The haconiwa binary: --pid's through /proc (whatever mount namespace it
// runs in), or --haconiwa's (resolve_haconiwa). Throws UsageError when
// there is none.
std::string haconiwa_binary(const Options& options);

// --check: the report on `out`; kExitOk when ready, kExitRuntimeError when not.
int check_system(const Options& options, std::ostream& out);

}  // namespace hacoboot
