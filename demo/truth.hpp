// Ground-truth recording shared by hacoboot-launcher and hacoboot-demo-app.
//
// Each fact is one line "<hpid>\t<key>\t<value>\n", emitted with a single
// write() on an O_APPEND descriptor: the kernel then places every line
// atomically at the end of the file, so the many processes of parallel boots
// can share one file without locking and without interleaving.
//
// The keys, all under the launch's hpid (the supervisor's pid) unless said
// otherwise; times are CLOCK_MONOTONIC ns, CPU times ns of the recording
// thread's CLOCK_THREAD_CPUTIME_ID:
//   start_lo, start_hi     supervisor: just before and after passing START_SV
//   cli_pid                supervisor: its parent, the CLI that passed phase 0
//   container_pid          supervisor: its container, as the host sees it
//   exec_lo                container: just before its execve
//   died                   container: 1 when it exited instead (--die-before-exec)
//   failed_before          the phase a process died right before (--fail-at)
//   exec_hi                demo app: first thing in main
//   listen_lo, listen_hi   demo app: just before and after its listen()
//   listen_pid             demo app: the process that listened (its own namespace's pid)
// Work injected with --burn, --fsync, --sleep and --mounts, one set per piece,
// recorded by the process that did it once it is done:
//   <kind>_<slot>_start, <kind>_<slot>_end  when the piece began and ended
//   <kind>_<slot>_cpu      the thread's CPU time over the piece
// with <kind> burn, fsync, sleep or mounts and <slot> the phase it preceded, so it
// lies in the step the tracer names after that phase (work before phase 0
// is the CLI's, under the CLI's pid, the hpid its probe passes), or "uidmap"
// (the supervisor's mapping work in the uid-mapping handshake, in its step
// END_SETUP). --phase-delay's sleep after passing a phase is
// delay_<phase>_start, _end and _cpu likewise.
// Haconiwa's pipes, by message ("done", and "unshared" and "mapped" with
// --uid-map-handshake):
//   <message>_send_lo, <message>_send_hi
//                          the writer (container for done and unshared,
//                          supervisor for mapped): just before it wrote and
//                          just after it closed its end
//   <message>_wait_start, <message>_wait_end, <message>_wait_cpu
//                          the reader: blocked reading from start to end (EOF)
// The reader's wait_end follows the writer's send_lo; it may precede send_hi,
// as the woken reader can run before the writer reads the clock again.
#pragma once

#include "util/unique_fd.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

namespace hacoboot {

inline std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// CLOCK_MONOTONIC is what bpf_ktime_get_ns() reads, so tracer timestamps and
// these values are directly comparable.
inline std::int64_t monotonic_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}

// The calling thread's CPU time, what the tracer's per-thread accounting of
// time on CPU is compared with. Not in the vDSO: every read is a syscall.
inline std::int64_t thread_cpu_ns() {
  return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

class TruthFile {
 public:
  TruthFile() = default;  // disabled: record() does nothing
  explicit TruthFile(const char* path) : fd_(::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) {}

  bool is_open() const { return fd_.valid(); }

  // Best effort: no allocation and one syscall, so it is fine between fork
  // and exec. A lost line shows up as a missing key in the tests, which is
  // more useful than aborting a boot over it.
  void record(long hpid, const char* key, long long value) const {
    if (!fd_.valid()) return;
    char line[128];
    const int n = std::snprintf(line, sizeof line, "%ld\t%s\t%lld\n", hpid, key, value);
    if (n > 0 && static_cast<std::size_t>(n) < sizeof line) {
      [[maybe_unused]] const ssize_t ignored = ::write(fd_.get(), line, static_cast<std::size_t>(n));
    }
  }

 private:
  UniqueFd fd_;
};

}  // namespace hacoboot
