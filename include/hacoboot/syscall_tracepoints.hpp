#pragma once

#include <optional>
#include <string>

namespace hacoboot {

// Perf event ids of the per-syscall tracepoints the kernel side attaches to.
struct SyscallTracepointIds {
  int execve_enter = -1;    // syscalls:sys_enter_execve
  int execveat_enter = -1;  // syscalls:sys_enter_execveat
  int listen_exit = -1;     // syscalls:sys_exit_listen
};

// Reads the ids from tracefs: the mounted one, or, when tracefs is not
// mounted, one mounted for a moment in the private mount namespace of a
// short-lived child, so the host's mounts are never touched. nullopt (and
// why in *reason) when the kernel has no syscall tracepoints
// (CONFIG_FTRACE_SYSCALLS) or no tracefs can be had.
std::optional<SyscallTracepointIds> find_syscall_tracepoints(std::string& reason);

}  // namespace hacoboot
