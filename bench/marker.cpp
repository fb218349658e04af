// hacoboot-bench-marker: fires Haconiwa's USDT probe for the benchmarks
// (scripts/bench.sh). Point a tracer's Haconiwa binary at this file.
//
//   spawn [INTERVAL_US [COUNT]]  every INTERVAL_US (default 1000) start a child
//                                that passes phase 1 (START_SV) with its own
//                                pid as hpid and exits at once: a complete
//                                one-phase boot, so `hacoboot-sampler -n 1`
//                                stops on the first one it sees. Runs until
//                                killed, or COUNT children. The children share
//                                this process's memory (as posix_spawn's do):
//                                a fork every millisecond would load the host
//                                and slow the start it helps time.
//   hits N                       fire the probe N times in this process with
//                                a launch's phase sequence and hpid = own pid,
//                                then print "hits=N ns_per_hit=X cpu_ns_per_hit=Y":
//                                wall time, and CPU time per hit (median over
//                                blocks of 10,000), which includes the uprobe
//                                trap and BPF programs but not time lost to
//                                other tasks on a busy host.
//   flood N                      as hits, but each hit with a new hpid that
//                                is no process's: a process passing made-up
//                                hpids, or launches not seen starting.
//   listens N                    a one-container launch whose container calls
//                                listen(2) N times on a bound socket (each
//                                call succeeds, and each is an event of the
//                                tool), then exits: a producer whose own cost
//                                per event is a syscall, not a uprobe trap.
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/sdt.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace {

// One probe site, like Haconiwa: one stapsdt note, one uprobe.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
__attribute__((noinline)) void pass_phase(long phase, long hpid) {
  DTRACE_PROBE2(haconiwa, bootstrap_phase_pass, phase, hpid);
}
#pragma GCC diagnostic pop

std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

long parse_count(const char* text, long fallback) {
  if (text == nullptr) return fallback;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0) {
    std::fprintf(stderr, "hacoboot-bench-marker: bad number '%s'\n", text);
    std::exit(2);
  }
  return value;
}

// A child of clone(CLONE_VM | CLONE_VFORK): this process is suspended until it
// exits, and it touches nothing of this process's memory but its own stack.
int pass_start(void* /*unused*/) {
  pass_phase(1, static_cast<long>(getpid()));
  _exit(0);
}

int spawn(long interval_us, long count) {
  const timespec pause{interval_us / 1'000'000, (interval_us % 1'000'000) * 1000};
  // A fork copies the page tables and an exit tears them down: on two vCPUs,
  // one a millisecond made the tool's start 4-9 ms slower (benchmarks
  // history). A child sharing the memory costs neither.
  alignas(16) static std::array<std::byte, std::size_t{64} * 1024> child_stack;
  for (long i = 0; count == 0 || i < count; ++i) {
    const pid_t child = clone(pass_start, child_stack.data() + child_stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD,
                              nullptr);
    if (child < 0) {
      std::perror("hacoboot-bench-marker: clone");
      return 1;
    }
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    nanosleep(&pause, nullptr);
  }
  return 0;
}

// Median of the per-hit CPU time of each block of kBlock hits: the middle of
// many short samples, so a block disturbed by other tasks on a busy host
// (cache misses, interrupts) does not move it.
constexpr long kBlock = 10'000;

// Above the largest pid Linux hands out (PID_MAX_LIMIT): no launch has these.
constexpr long kFirstMadeUpHpid = 4'194'304 + 1;

int hits(long n, bool made_up_hpids) {
  // What one launch passes, supervisor and container phases interleaved as
  // the probe sees them; realistic argument values for the BPF programs.
  static constexpr std::array<long, 19> kPhases{1, 2, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 3, 4, 5, 6, 31, 32};
  const long hpid = getpid();
  std::vector<double> per_hit;
  const auto begin = clock_ns(CLOCK_MONOTONIC);
  std::size_t next = 0;
  for (long done = 0; done < n;) {
    const long block = std::min(kBlock, n - done);
    const auto block_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < block; ++i) {
      pass_phase(kPhases[next], made_up_hpids ? kFirstMadeUpHpid + done + i : hpid);
      if (++next == kPhases.size()) next = 0;
    }
    per_hit.push_back(static_cast<double>(clock_ns(CLOCK_THREAD_CPUTIME_ID) - block_cpu) / static_cast<double>(block));
    done += block;
  }
  const auto elapsed = clock_ns(CLOCK_MONOTONIC) - begin;
  std::sort(per_hit.begin(), per_hit.end());
  const double median = per_hit.empty() ? 0.0 : per_hit[per_hit.size() / 2];
  const double least = per_hit.empty() ? 0.0 : per_hit.front();
  std::printf("hits=%ld ns_per_hit=%.1f cpu_ns_per_hit=%.1f min_cpu_ns_per_hit=%.1f\n", n,
              n > 0 ? static_cast<double>(elapsed) / static_cast<double>(n) : 0.0, median, least);
  return 0;
}

int listens(long n) {
  const long hpid = getpid();
  pass_phase(1, hpid);  // START_SV: this process is the supervisor
  pass_phase(2, hpid);  // START_FORK: its next fork is the container
  const pid_t child = fork();
  if (child < 0) {
    std::perror("hacoboot-bench-marker: fork");
    return 1;
  }
  if (child == 0) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      std::perror("hacoboot-bench-marker: socket");
      _exit(1);
    }
    for (long i = 0; i < n; ++i) {
      if (listen(fd, 1) != 0) {
        std::perror("hacoboot-bench-marker: listen");
        _exit(1);
      }
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "spawn")
    return spawn(parse_count(argc > 2 ? argv[2] : nullptr, 1000), parse_count(argc > 3 ? argv[3] : nullptr, 0));
  if (mode == "hits") return hits(parse_count(argc > 2 ? argv[2] : nullptr, 1'000'000), false);
  if (mode == "flood") return hits(parse_count(argc > 2 ? argv[2] : nullptr, 1'000'000), true);
  if (mode == "listens") return listens(parse_count(argc > 2 ? argv[2] : nullptr, 1'000'000));
  std::fputs("usage: hacoboot-bench-marker spawn [INTERVAL_US [COUNT]] | hits N | flood N | listens N\n", stderr);
  return 2;
}
