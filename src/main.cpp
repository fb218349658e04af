#include <iostream>

#include "hacoboot/errors.hpp"
#include "hacoboot/options.hpp"
#include "hacoboot/session.hpp"

int main(int argc, char** argv) {
  using namespace hacoboot;
  try {
    const auto command_line = parse_command_line(argc, argv);
    if (command_line.exit_message) {
      std::cout << *command_line.exit_message;
      return kExitOk;
    }
    for (const auto& warning : command_line.warnings) std::cerr << "hacoboot-sampler: warning: " << warning << '\n';
    return run_session(command_line.options, std::cerr);
  } catch (const UsageError& e) {
    std::cerr << "hacoboot-sampler: error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "hacoboot-sampler: error: " << e.what() << '\n';
    return kExitRuntimeError;
  }
}
