#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "util/expected.hpp"
#include "util/subprocess.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {

// Perf event ids of the per-syscall tracepoints the kernel side attaches to.
struct SyscallTracepointIds {
  int execve_enter = -1;  // syscalls:sys_enter_execve
  int listen_exit = -1;   // syscalls:sys_exit_listen
};

// The ids in a tracefs mounted on the host (at /sys/kernel/tracing, or
// debugfs's tracing/), for --check: where it is mounted, and the ids or why
// they cannot be read (its files are root's; no syscalls:* events). nullopt:
// tracefs is not mounted.
struct MountedTracefs {
  std::string root;
  Expected<SyscallTracepointIds> ids;
};
std::optional<MountedTracefs> mounted_tracefs();

// Reads the ids from tracefs: the mounted one, or, when tracefs is not
// mounted, one mounted for a moment in the private mount namespace of a
// short-lived child, so the host's mounts are never touched. The child runs
// while the tool loads its BPF programs: started by the constructor, awaited
// by result(). What the child found is kept in `cache_dir` (the BTF cache's,
// same trust rules) for the rest of this boot once the tracer proved it
// (keep()): the ids never change until the next reboot, and the next runs
// neither fork nor mount. Cached ids the tracer finds wrong are removed and
// looked up again (look_up_again()).
class SyscallTracepointLookup {
 public:
  // Empty cache_dir: no cache.
  explicit SyscallTracepointLookup(const std::filesystem::path& cache_dir = {});
  ~SyscallTracepointLookup();  // reaps a child still running
  SyscallTracepointLookup(const SyscallTracepointLookup&) = delete;
  SyscallTracepointLookup& operator=(const SyscallTracepointLookup&) = delete;
  SyscallTracepointLookup(SyscallTracepointLookup&&) = delete;
  SyscallTracepointLookup& operator=(SyscallTracepointLookup&&) = delete;

  // The ids, or why there are none: the kernel has no syscall tracepoints
  // (CONFIG_FTRACE_SYSCALLS) or no tracefs can be had.
  const Expected<SyscallTracepointIds>& result();
  // Whether result() would not wait: the answer is there, or nothing is pending.
  [[nodiscard]] bool ready() const;
  // Where the ids came from, for -v: tracefs, the cache file, or the child.
  [[nodiscard]] const std::string& source() const { return source_; }
  // Whether the ids came from the cache file.
  [[nodiscard]] bool from_cache() const { return from_cache_; }
  // The cached ids proved wrong: removes the cache file and starts a new
  // lookup through a private tracefs mount, which result() awaits.
  void look_up_again();
  // The ids proved right: keeps those found through a private mount for the
  // next runs of this boot.
  void keep() const;

 private:
  void start_child();

  Expected<SyscallTracepointIds> ids_ = Failure{"not looked up yet"};
  std::optional<std::filesystem::path> cache_file_;
  bool from_cache_ = false;
  bool unreadable_cache_ = false;  // the cache file held no ids: removed
  std::string source_;
  UniqueFd reply_;  // the read end of the pipe the child answers through
  std::optional<Subprocess> child_;
};

}  // namespace hacoboot
