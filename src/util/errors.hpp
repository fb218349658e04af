#pragma once

#include <stdexcept>
#include <string>

namespace hacoboot {

// Exit statuses, documented in the man page and docs/usage.md. Plain ints, as main() returns
// them and exit() takes them: neither a scoped nor a narrower enum.
// NOLINTNEXTLINE(cppcoreguidelines-use-enum-class,performance-enum-size)
enum ExitStatus : int {
  kExitOk = 0,
  kExitRuntimeError = 1,
  kExitUsage = 2,
  kExitRegressed = 3,
  kExitRunCommandFailed = 4,
  kExitInconclusive = 5,  // the regression gate could not tell: too few boots
};

// The user asked for something impossible (bad option, missing file): exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Tracing could not start or go on (privileges, kernel, I/O): exit 1.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hacoboot
