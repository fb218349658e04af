#pragma once

#include <string>

namespace hacoboot {

// A wait(2) status in words: "exited 3", "killed by signal 9 (SIGKILL)".
// The kernel's exit_code of a task is one too, so a traced container's end
// reads as a --run command's does.
std::string describe_wait_status(int status);

}  // namespace hacoboot
