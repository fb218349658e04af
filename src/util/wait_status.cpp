#include "util/wait_status.hpp"

#include <sys/wait.h>

#include <cstring>

namespace hacoboot {

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = sigabbrev_np(signal);
    auto text = "killed by signal " + std::to_string(signal);
    return name != nullptr ? text + " (SIG" + name + ")" : text;
  }
  return "ended with status " + std::to_string(status);
}

}  // namespace hacoboot
