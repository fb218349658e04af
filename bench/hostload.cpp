// hacoboot-bench-hostload: host work unrelated to any container boot, to see
// what a tracer costs everything else on the host (scripts/bench.sh).
//
//   forks N      N times: fork, exec this binary's `listen`, wait
//   listen       listen on 127.0.0.1, ephemeral port, and exit
//   syscalls N   N getppid() system calls
//   pingpong N   N round trips of a byte between two processes pinned to one
//                CPU through two pipes: two context switches and two wakeups each
//
// forks and syscalls print "iterations=N ns_per_iteration=X cpu_ns_per_iteration=Y":
// wall time per operation, and the median CPU time per operation (where a
// tracer's BPF programs run, without time lost to other tasks). pingpong
// prints the same keys with wall time per round trip for CPU time: on one
// CPU, the round trip's wall time is both processes' CPU and the switches.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "bench_util.hpp"

namespace {

using hacoboot::bench::monotonic_ns;

long parse_count(const char* text) {
  return hacoboot::bench::parse_positive(text, "hacoboot-bench-hostload");
}

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t ns_of(const timeval& tv) {
  return std::int64_t{tv.tv_sec} * 1'000'000'000 + std::int64_t{tv.tv_usec} * 1000;
}

// Prints wall time per operation and the median of the CPU time samples,
// each per operation: many short samples, so the ones disturbed by other
// tasks on a busy host do not move the figure.
void report(long n, std::int64_t wall_ns, std::vector<double> cpu_per_op) {
  std::sort(cpu_per_op.begin(), cpu_per_op.end());
  std::printf("iterations=%ld ns_per_iteration=%.1f cpu_ns_per_iteration=%.1f min_cpu_ns_per_iteration=%.1f\n", n,
              static_cast<double>(wall_ns) / static_cast<double>(n), cpu_per_op[cpu_per_op.size() / 2],
              cpu_per_op.front());
}

int listen_once() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return 1;
  if (listen(fd, 16) != 0) return 1;
  close(fd);
  return 0;
}

// One sample per iteration: this thread's CPU for fork and wait, plus the
// child's own (exec, listen, exit) from wait4.
int forks(long n) {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    std::perror("hacoboot-bench-hostload: /proc/self/exe");
    return 1;
  }
  self[len] = '\0';
  char listen_arg[] = "listen";
  char* const child_argv[] = {self, listen_arg, nullptr};
  char* const child_env[] = {nullptr};

  int failures = 0;
  std::vector<double> cpu;
  const auto begin = monotonic_ns();
  for (long i = 0; i < n; ++i) {
    const auto parent_cpu = thread_cpu_ns();
    const pid_t child = fork();
    if (child < 0) {
      std::perror("hacoboot-bench-hostload: fork");
      return 1;
    }
    if (child == 0) {
      execve(self, child_argv, child_env);
      _exit(127);
    }
    int status = 0;
    rusage usage{};
    while (wait4(child, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
    cpu.push_back(static_cast<double>(thread_cpu_ns() - parent_cpu + ns_of(usage.ru_utime) + ns_of(usage.ru_stime)));
  }
  report(n, monotonic_ns() - begin, std::move(cpu));
  if (failures > 0) std::fprintf(stderr, "hacoboot-bench-hostload: %d children failed\n", failures);
  return failures > 0 ? 1 : 0;
}

// One sample per block of 10,000 calls.
int syscalls(long n) {
  constexpr long kBlock = 10'000;
  std::vector<double> cpu;
  const auto begin = monotonic_ns();
  for (long done = 0; done < n;) {
    const long block = std::min(kBlock, n - done);
    const auto block_cpu = thread_cpu_ns();
    for (long i = 0; i < block; ++i) syscall(SYS_getppid);
    cpu.push_back(static_cast<double>(thread_cpu_ns() - block_cpu) / static_cast<double>(block));
    done += block;
  }
  report(n, monotonic_ns() - begin, std::move(cpu));
  return 0;
}

// Both processes on the CPU this one runs on now: every round trip switches it.
bool pin_to_this_cpu() {
  const int cpu = sched_getcpu();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return cpu >= 0 && sched_setaffinity(0, sizeof set, &set) == 0;
}

// The child echoes each byte back until its input closes.
[[noreturn]] void echo(int in, int out) {
  char byte = 0;
  while (read(in, &byte, 1) == 1) {
    if (write(out, &byte, 1) != 1) _exit(1);
  }
  _exit(0);
}

// One sample per block of 10,000 round trips: wall time per round trip.
int pingpong(long n) {
  constexpr long kBlock = 10'000;
  int to_child[2];
  int to_parent[2];
  if (!pin_to_this_cpu() || pipe(to_child) != 0 || pipe(to_parent) != 0) {
    std::perror("hacoboot-bench-hostload: pingpong set-up");
    return 1;
  }
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    echo(to_child[0], to_parent[1]);
  }
  close(to_child[0]);
  close(to_parent[1]);
  std::vector<double> per_round_trip;
  const auto begin = monotonic_ns();
  char byte = 'x';
  for (long done = 0; done < n;) {
    const long block = std::min(kBlock, n - done);
    const auto block_start = monotonic_ns();
    for (long i = 0; i < block; ++i) {
      if (write(to_child[1], &byte, 1) != 1 || read(to_parent[0], &byte, 1) != 1) return 1;
    }
    per_round_trip.push_back(static_cast<double>(monotonic_ns() - block_start) / static_cast<double>(block));
    done += block;
  }
  report(n, monotonic_ns() - begin, std::move(per_round_trip));
  close(to_child[1]);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "listen") return listen_once();
  if (mode == "forks") return forks(parse_count(argc > 2 ? argv[2] : nullptr));
  if (mode == "syscalls") return syscalls(parse_count(argc > 2 ? argv[2] : nullptr));
  if (mode == "pingpong") return pingpong(parse_count(argc > 2 ? argv[2] : nullptr));
  std::fputs("usage: hacoboot-bench-hostload forks N | listen | syscalls N | pingpong N\n", stderr);
  return 2;
}
