#include "model/syscall_names.hpp"

#include <seccomp.h>

#include <cstdlib>
#include <memory>

#include "model/syscalls.hpp"

namespace hacoboot {

std::string syscall_name(std::uint32_t nr) {
  if (nr == kUserTime) return "user";
  // libseccomp allocates the name; SCMP_ARCH_NATIVE: the numbers are this
  // architecture's, as the kernel side's syscall hooks see them.
  const std::unique_ptr<char, decltype(&std::free)> name(
      seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, static_cast<int>(nr)), &std::free);
  if (name != nullptr && *name != '\0') return name.get();
  return "syscall_" + std::to_string(nr);
}

}  // namespace hacoboot
