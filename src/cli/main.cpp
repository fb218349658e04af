#include <iostream>
#include <limits>
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
  std::cerr << "hacoboot-sampler: " << kind << ": "
            << hacoboot::printable(message, std::numeric_limits<std::size_t>::max()) << '\n';
}

}  // namespace

int main(int argc, char** argv) {
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
    tell("error", with_option_hint(e));
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
