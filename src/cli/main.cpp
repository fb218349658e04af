#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "cli/capture_hints.hpp"
#include "cli/options.hpp"
#include "cli/session.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

namespace {

// The last line of defence of "no raw bytes on the terminal": whatever a
// message quotes (a path, a user name, an address), its control bytes and
// invalid UTF-8 are shown escaped, and nothing of it is cut.
void tell(std::string_view kind, std::string_view message) {
  std::cerr << "hacoboot-sampler: " << kind << ": " << hacoboot::printable(message, hacoboot::kUncut) << '\n';
}

int run(int argc, char** argv) {
  using namespace hacoboot;
  try {
    const auto command_line = parse_command_line(argc, argv);
    if (command_line.exit_message) {
      std::cout << *command_line.exit_message;
      return kExitOk;
    }
    for (const auto& warning : command_line.warnings) tell("warning", warning);
    return run_session(command_line.options, std::cerr);
  } catch (const HaconiwaNotFound& e) {
    tell("error", with_option_hint(e.missing()));
    return kExitUsage;
  } catch (const UprobeMultiError& e) {
    tell("error", with_option_hint(e));
    return kExitRuntimeError;
  } catch (const UsageError& e) {
    tell("error", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    tell("error", e.what());
    return kExitRuntimeError;
  }
}

// Whether everything written to standard output reached it; why not otherwise.
std::string stdout_failure() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (flushed && std::ferror(stdout) == 0 && std::cout.good()) return {};
  return flushed || error == 0 ? std::string("an earlier write failed") : std::string(std::strerror(error));
}

}  // namespace

int main(int argc, char** argv) {
  // Output piped into a reader that quits (`| head`, `| true`) is a write
  // error reported with status 1, as a full disk is, for every command: not a
  // death by SIGPIPE that a script reads as a crash. Children get it back
  // (StopSignals::restore_defaults).
  (void)std::signal(SIGPIPE, SIG_IGN);
  const int status = run(argc, argv);
  const auto failure = stdout_failure();
  if (failure.empty()) return status;
  // A failing status was told already (a command that checks its own output
  // fails on it), or says more than this would: the gate's verdict.
  if (status != hacoboot::kExitOk) return status;
  tell("error", "writing standard output failed: " + failure);
  return hacoboot::kExitRuntimeError;
}
