#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace hacoboot {

// Perf event ids of the per-syscall tracepoints the kernel side attaches to.
struct SyscallTracepointIds {
  int execve_enter = -1;  // syscalls:sys_enter_execve
  int listen_exit = -1;   // syscalls:sys_exit_listen
};

// Reads the ids from tracefs: the mounted one, or, when tracefs is not
// mounted, one mounted for a moment in the private mount namespace of a
// short-lived child, so the host's mounts are never touched. The child runs
// while the tool loads its BPF programs: started by the constructor, awaited
// by result(). What the child found is kept in `cache_dir` (the BTF cache's,
// same trust rules) for the rest of this boot: the ids never change until
// the next reboot, and the next runs neither fork nor mount.
class SyscallTracepointLookup {
 public:
  // Empty cache_dir: no cache.
  explicit SyscallTracepointLookup(const std::filesystem::path& cache_dir = {});
  ~SyscallTracepointLookup();  // reaps a child still running
  SyscallTracepointLookup(const SyscallTracepointLookup&) = delete;
  SyscallTracepointLookup& operator=(const SyscallTracepointLookup&) = delete;
  SyscallTracepointLookup(SyscallTracepointLookup&&) = delete;
  SyscallTracepointLookup& operator=(SyscallTracepointLookup&&) = delete;

  // The ids; nullopt when the kernel has no syscall tracepoints
  // (CONFIG_FTRACE_SYSCALLS) or no tracefs can be had, and reason() says why.
  std::optional<SyscallTracepointIds> result();
  [[nodiscard]] const std::string& reason() const { return reason_; }
  // Whether result() would not wait: the answer is there, or nothing is pending.
  [[nodiscard]] bool ready() const;
  // Where the ids came from, for -v: tracefs, the cache file, or the child.
  [[nodiscard]] const std::string& source() const { return source_; }

 private:
  std::optional<SyscallTracepointIds> ids_;
  std::optional<std::filesystem::path> cache_file_;
  std::string source_;
  std::string reason_;
  int reply_fd_ = -1;
  pid_t child_ = -1;
};

}  // namespace hacoboot
