#pragma once

#include <cstdint>
#include <string>

namespace hacoboot {

// The name of syscall `nr` of the architecture the tool was built for, by
// libseccomp's table ("clock_nanosleep"); "syscall_<nr>" where it has none,
// "user" for kUserTime. A table lookup: no system call.
std::string syscall_name(std::uint32_t nr);

}  // namespace hacoboot
