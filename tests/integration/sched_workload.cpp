// sched-workload: a launch shaped like Haconiwa's whose steps do known work,
// for the scheduler-state tests. This process is the supervisor: it passes
// START_SV and START_FORK, forks the container and blocks reading a "done"
// pipe, as Haconiwa's runner does, then passes END_SETUP. The container
// passes CONTAINER_START, burns BURN_MS of its own CPU time, passes
// CONTAINER_NAMESPACE_GENERATED, starts a thread that sleeps 5 ms and passes
// CONTAINER_FILESYSTEM_SETUP, joins it and closes the pipe, which wakes the
// supervisor. Prints "hpid H burn_cpu_ns N": the launch's hpid and the
// container's thread CPU time across the burn, by its own clock.
#include <sys/sdt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

namespace {

// Haconiwa's phase numbers.
constexpr long kStartSupervisor = 1;
constexpr long kStartFork = 2;
constexpr long kEndSetup = 3;
constexpr long kContainerStart = 11;
constexpr long kNamespaceGenerated = 12;
constexpr long kFilesystemSetup = 13;
constexpr long kNsPerMs = 1'000'000;

void pass(long phase, long hpid) {
  DTRACE_PROBE2(haconiwa, bootstrap_phase_pass, phase, hpid);
}

long long thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
}

// Spins until this thread has run for `ms` of CPU time; returns how much it ran.
long long burn_cpu(long ms) {
  const long long start = thread_cpu_ns();
  long long now = start;
  while (now - start < ms * kNsPerMs) now = thread_cpu_ns();
  return now - start;
}

// Prints the burn's CPU time, then closes the done pipe: the supervisor's wakeup.
[[noreturn]] void container(long hpid, long burn_ms, int done) {
  pass(kContainerStart, hpid);
  const long long burned = burn_cpu(burn_ms);
  pass(kNamespaceGenerated, hpid);
  std::thread([hpid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pass(kFilesystemSetup, hpid);
  }).join();
  std::printf("hpid %ld burn_cpu_ns %lld\n", hpid, burned);
  std::fflush(stdout);
  close(done);
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  const long burn_ms = argc > 1 ? std::atol(argv[1]) : 20;
  const long hpid = getpid();
  int done[2];
  if (pipe(done) != 0) return 1;
  pass(kStartSupervisor, hpid);
  pass(kStartFork, hpid);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(done[0]);
    container(hpid, burn_ms, done[1]);
  }
  close(done[1]);
  char byte = 0;
  while (read(done[0], &byte, 1) > 0) {
  }
  pass(kEndSetup, hpid);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
