// hacoboot-launcher: boots "containers" with the same process tree and the
// same USDT probes as Haconiwa, so the tracer can be tested without Haconiwa.
//
//   driver ──fork──> CLI (phase 0) ──fork──> supervisor (phases 1-6, hpid)
//                                              └─clone(CLONE_NEW*)──> container
//                                                   (phases 11-21, then execve)
//
// The supervisor and its container talk through Haconiwa's pipes (runner.rb):
// after its fork the supervisor blocks until the container, after its last
// setup step, writes "done" and closes its end; with --uid-map-handshake the
// container, in step 17, writes "unshared" and blocks until the supervisor
// has done its mapping work and answered "mapped". Tests inject known work
// (--burn, --fsync, --sleep) before any phase, so that it falls in the step
// the tracer names after that phase, and read what it cost in the ground
// truth (truth.hpp).
#include "haconiwa_probe.hpp"
#include "truth.hpp"
#include "util/unique_fd.hpp"

#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace {

using hacoboot::monotonic_ns;
using hacoboot::thread_cpu_ns;
using hacoboot::TruthFile;
using hacoboot::UniqueFd;

// Haconiwa's phase numbers (its PHASE_* constants) for the phases we pass.
enum Phase : long {
  kCliStart = 0,
  kSupervisorStart = 1,
  kStartFork = 2,
  kEndSetup = 3,
  kStartWait = 4,
  kEndWait = 5,
  kCleanup = 6,
  kContainerStart = 11,
  kNamespaceGenerated = 12,
  kFilesystemSetup = 13,
  kRlimitSetup = 14,
  kCgroupSetup = 15,
  kRemounted = 16,
  kUidMappingSetup = 17,
  kChrooted = 18,
  kCapabilitySetup = 19,
  kSeccompSetup = 20,
  kContainerExecing = 21,
  kMaxPhase = 21,
};

constexpr int kExitUsage = 2;
// Private CLI/supervisor -> driver status: the container cannot be created at
// all (e.g. EPERM), so launching the remaining boots would only repeat the error.
constexpr int kExitSetupFailed = 3;
// Like Haconiwa, whose container child exits 127 when setup or exec fails.
constexpr int kExitContainerFailed = 127;

// Known work a test injects into a boot, done in this order by the process
// that passes the phase, right before passing it: the tracer names a step by
// the phase that ends it, so work before phase 13 is step 13's.
struct Work {
  long burn_ms = 0;       // --burn: busy, for this much of the thread's CPU time
  long fsync_rounds = 0;  // --fsync: 4 KiB write + fsync, this many times
  long sleep_ms = 0;      // --sleep
  long mount_rounds = 0;  // --mounts: a tmpfs mounted and unmounted, this many times
  long nosys_calls = 0;   // --nosys: calls of a syscall number the kernel has none of
  long unshare_net = 0;   // --unshare-net: 1, a network namespace made and left
  long sysctl_write = 0;  // --sysctl-write: 1, a write under /proc/sys
  long pipe_wait_ms = 0;  // --pipe-wait: blocked reading a pipe a child writes after this

  bool any() const {
    return burn_ms > 0 || fsync_rounds > 0 || sleep_ms > 0 || mount_rounds > 0 || nosys_calls > 0 || unshare_net > 0 ||
           sysctl_write > 0 || pipe_wait_ms > 0;
  }
};

// --fail-at: how the process that would pass a phase dies instead.
struct Failure {
  int exit_status = 1;
  int signal = 0;  // 0: exits with exit_status
};

struct Options {
  long boots = 1;
  long parallel = 1;
  std::string truth_path;
  bool die_before_exec = false;
  bool namespaces = true;
  bool execveat = false;  // exec COMMAND through execveat(2)
  bool done_pipe = true;  // the supervisor waits for its container's "done"
  bool uid_map_handshake = false;
  long flood = 0;  // probe hits with made-up hpids instead of boots
  std::array<Work, kMaxPhase + 1> before_phase{};
  Work uid_mapping;  // the supervisor's, between "unshared" and "mapped"
  // --phase-delay: a sleep right after passing the phase, which holds the
  // process at a known point of its boot (tests stop or kill it there).
  std::array<long, kMaxPhase + 1> delay_after_ms{};
  std::array<std::optional<Failure>, kMaxPhase + 1> fail_before{};  // --fail-at
  std::string io_dir = ".";
  std::vector<char*> command;  // nullptr-terminated, for execve
};

struct Context {
  const Options& opt;
  const TruthFile& truth;
};

// ---- injected work --------------------------------------------------------

void sleep_ms(long ms) {
  timespec left{ms / 1000, (ms % 1000) * 1'000'000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

// Busy until the thread has had ms of CPU. The clock is read between runs of
// arithmetic, not in a tight loop: each read is a syscall, and a tracer that
// hooks syscalls would otherwise mostly be measuring itself.
void burn_cpu(long ms) {
  const std::int64_t until = thread_cpu_ns() + std::int64_t{ms} * 1'000'000;
  std::uint64_t x = 1;
  while (thread_cpu_ns() < until) {
    for (int i = 0; i < 20'000; ++i) x = x * 6364136223846793005U + 1442695040888963407U;
    __asm__ __volatile__("" : "+r"(x));  // keeps the arithmetic
  }
}

// Appends `rounds` 4 KiB blocks to a fresh, already unlinked file in dir,
// each followed by fsync: on a filesystem that writes through to a device
// (ext4, xfs...) every fsync waits for it; tmpfs returns at once.
bool write_and_fsync(const std::string& dir, long rounds) {
  std::string path = dir + "/.hacoboot-launcher-io-XXXXXX";
  const UniqueFd file(mkostemp(path.data(), O_CLOEXEC));
  if (!file.valid()) {
    std::fprintf(stderr, "hacoboot-launcher: creating a file in %s: %s\n", dir.c_str(), std::strerror(errno));
    return false;
  }
  unlink(path.c_str());
  static constexpr std::array<char, 4096> kBlock{};
  for (long i = 0; i < rounds; ++i) {
    if (write(file.get(), kBlock.data(), kBlock.size()) != static_cast<ssize_t>(kBlock.size()) ||
        fsync(file.get()) != 0) {
      std::fprintf(stderr, "hacoboot-launcher: write+fsync in %s: %s\n", dir.c_str(), std::strerror(errno));
      return false;
    }
  }
  return true;
}

// Mounts a small tmpfs on a fresh directory and unmounts it, `rounds`
// times: the kernel CPU and the waits of a container's mount set-up.
// Called only in the container once its mount namespace is private (see
// parse_options), so that no mount propagates to the host.
bool mount_and_unmount(long rounds) {
  std::string dir = "/tmp/.hacoboot-launcher-mnt-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::fprintf(stderr, "hacoboot-launcher: creating a mount point in /tmp: %s\n", std::strerror(errno));
    return false;
  }
  bool done = true;
  for (long i = 0; i < rounds && done; ++i) {
    done = mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") == 0 &&
           umount2(dir.c_str(), 0) == 0;
  }
  if (!done) std::fprintf(stderr, "hacoboot-launcher: mounting a tmpfs on %s: %s\n", dir.c_str(), std::strerror(errno));
  rmdir(dir.c_str());
  return done;
}

struct Span {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t cpu = 0;
};

// The CPU clock is read inside the wall-clock bracket: cpu <= end - start.
template <typename Piece>
Span measure(Piece&& piece) {
  Span span;
  span.start = monotonic_ns();
  const std::int64_t cpu_start = thread_cpu_ns();
  std::forward<Piece>(piece)();
  span.cpu = thread_cpu_ns() - cpu_start;
  span.end = monotonic_ns();
  return span;
}

// Keys <what>_start, <what>_end, <what>_cpu (see truth.hpp).
void record_span(const TruthFile& truth, long hpid, const std::string& what, const Span& span) {
  const std::array<std::pair<const char*, std::int64_t>, 3> fields{
      {{"start", span.start}, {"end", span.end}, {"cpu", span.cpu}}};
  for (const auto& [field, value] : fields) truth.record(hpid, (what + "_" + field).c_str(), value);
}

// Sleeps ms, recorded as <what>_start/_end/_cpu.
void timed_sleep(const Context& ctx, long hpid, const std::string& what, long ms) {
  record_span(ctx.truth, hpid, what, measure([&] { sleep_ms(ms); }));
}

// unshare(CLONE_NEWNET), then back to the namespace it left: a new network
// namespace's set-up (RCU grace periods) as a container runtime's clone of
// one, and no process left in it.
bool unshare_net_and_return() {
  const UniqueFd own(open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!own.valid() || unshare(CLONE_NEWNET) != 0 || setns(own.get(), CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "hacoboot-launcher: --unshare-net: %s\n", std::strerror(errno));
    return false;
  }
  return true;
}

// Writes the net namespace's default disable_ipv6 back with the value it
// has: a write under /proc/sys (as runtimes make per container) that
// changes nothing.
bool rewrite_sysctl() {
  constexpr const char* kKey = "/proc/sys/net/ipv6/conf/default/disable_ipv6";
  const UniqueFd file(open(kKey, O_RDWR | O_CLOEXEC));
  std::array<char, 16> value{};
  const ssize_t length = file.valid() ? read(file.get(), value.data(), value.size()) : -1;
  if (length <= 0 || pwrite(file.get(), value.data(), static_cast<std::size_t>(length), 0) != length) {
    std::fprintf(stderr, "hacoboot-launcher: --sysctl-write: %s: %s\n", kKey, std::strerror(errno));
    return false;
  }
  return true;
}

// Blocks reading a pipe that a forked child writes after `ms`: the wait on
// another process of a supervisor for its helper.
bool wait_on_pipe(long ms) {
  std::array<int, 2> ends{};
  if (pipe2(ends.data(), O_CLOEXEC) != 0) return false;
  const UniqueFd read_end(ends[0]);
  UniqueFd write_end(ends[1]);
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    sleep_ms(ms);
    _exit(write(write_end.get(), "x", 1) == 1 ? 0 : 1);
  }
  write_end = UniqueFd();
  char byte = 0;
  const bool got = read(read_end.get(), &byte, 1) == 1;
  return waitpid(child, nullptr, 0) == child && got;
}

// Past every architecture's table (and below the x32 bit): --nosys.
constexpr long kNoSuchSyscall = 1023;

// `slot` names the phase the work precedes (or "uidmap") in the truth keys.
void do_work(const Context& ctx, const Work& work, long hpid, const std::string& slot) {
  if (work.burn_ms > 0) record_span(ctx.truth, hpid, "burn_" + slot, measure([&] { burn_cpu(work.burn_ms); }));
  if (work.fsync_rounds > 0) {
    bool written = false;
    const Span span = measure([&] { written = write_and_fsync(ctx.opt.io_dir, work.fsync_rounds); });
    if (written) record_span(ctx.truth, hpid, "fsync_" + slot, span);
  }
  if (work.sleep_ms > 0) timed_sleep(ctx, hpid, "sleep_" + slot, work.sleep_ms);
  if (work.mount_rounds > 0) {
    bool mounted = false;
    const Span span = measure([&] { mounted = mount_and_unmount(work.mount_rounds); });
    if (mounted) record_span(ctx.truth, hpid, "mounts_" + slot, span);
  }
  // A number no kernel (and no syscall table) has: ENOSYS at once.
  for (long call = 0; call < work.nosys_calls; ++call) (void)syscall(kNoSuchSyscall);
  if (work.unshare_net > 0) {
    const Span span = measure(unshare_net_and_return);
    record_span(ctx.truth, hpid, "unshare_net_" + slot, span);
  }
  if (work.sysctl_write > 0) (void)rewrite_sysctl();
  if (work.pipe_wait_ms > 0) {
    const Span span = measure([&] { (void)wait_on_pipe(work.pipe_wait_ms); });
    record_span(ctx.truth, hpid, "pipe_wait_" + slot, span);
  }
}

void work_before(const Context& ctx, long phase, long hpid) {
  if (const Work& work = ctx.opt.before_phase[static_cast<std::size_t>(phase)]; work.any())
    do_work(ctx, work, hpid, std::to_string(phase));
}

void delay_after(const Context& ctx, long phase, long hpid) {
  if (const long ms = ctx.opt.delay_after_ms[static_cast<std::size_t>(phase)]; ms > 0)
    timed_sleep(ctx, hpid, "delay_" + std::to_string(phase), ms);
}

// --fail-at: dies right before passing the phase, as a Haconiwa process
// whose setup step failed. The signal's default action, unblocked, is what
// kills it.
void fail_before(const Context& ctx, long phase, long hpid) {
  const auto& failure = ctx.opt.fail_before[static_cast<std::size_t>(phase)];
  if (!failure) return;
  ctx.truth.record(hpid, "failed_before", phase);
  if (failure->signal == 0) _exit(failure->exit_status);
  std::signal(failure->signal, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, failure->signal);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  raise(failure->signal);
  std::fprintf(stderr, "hacoboot-launcher: --fail-at %ld: still alive after signal %d\n", phase, failure->signal);
  _exit(kExitContainerFailed);
}

void pass(const Context& ctx, long phase, long hpid) {
  work_before(ctx, phase, hpid);
  fail_before(ctx, phase, hpid);
  hacoboot::demo::fire_phase_probe(phase, hpid);
  delay_after(ctx, phase, hpid);
}

// ---- Haconiwa's pipes -----------------------------------------------------

// One pipe of runner.rb. Its message goes one way, once: the writer writes
// it and closes its end, the reader reads until EOF (as Ruby's IO#read does).
struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;

  bool open() {
    std::array<int, 2> fds{};
    if (pipe2(fds.data(), O_CLOEXEC) != 0) {
      std::fprintf(stderr, "hacoboot-launcher: pipe: %s\n", std::strerror(errno));
      return false;
    }
    read_end = UniqueFd(fds[0]);
    write_end = UniqueFd(fds[1]);
    return true;
  }
};

// The pipes of one boot; those the options leave out stay closed.
struct BootPipes {
  Pipe done;  // container -> supervisor, after its last setup step
  // In step 17, with user namespaces: the container asks to be mapped, the
  // supervisor answers once it has written the maps (here: done its uid-map
  // work; the launcher makes no user namespace).
  Pipe unshared;  // container -> supervisor
  Pipe mapped;    // supervisor -> container

  bool open(const Options& opt) {
    return (!opt.done_pipe || done.open()) && (!opt.uid_map_handshake || (unshared.open() && mapped.open()));
  }
  // After the fork each process keeps only the ends it uses: a write end left
  // open in the reader's own process would hold off the EOF it waits for.
  void keep_supervisor_ends() {
    done.write_end.reset();
    unshared.write_end.reset();
    mapped.read_end.reset();
  }
  void keep_container_ends() {
    done.read_end.reset();
    unshared.read_end.reset();
    mapped.write_end.reset();
  }
};

// Writes the message and closes the end, explicitly as runner.rb does
// (close-on-exec would only close it at the exec, after phase 21). A reader
// that died (a test killed it) must not take the writer with it: SIGPIPE is
// held off during the write and a pending one discarded.
void tell(const Context& ctx, long hpid, UniqueFd& write_end, const char* message) {
  const std::int64_t send_lo = monotonic_ns();
  sigset_t sigpipe;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  sigset_t before;
  sigprocmask(SIG_BLOCK, &sigpipe, &before);
  if (write(write_end.get(), message, std::strlen(message)) < 0 && errno == EPIPE) {
    const timespec no_wait{};
    sigtimedwait(&sigpipe, nullptr, &no_wait);
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  write_end.reset();
  const std::int64_t send_hi = monotonic_ns();
  ctx.truth.record(hpid, (std::string(message) + "_send_lo").c_str(), send_lo);
  ctx.truth.record(hpid, (std::string(message) + "_send_hi").c_str(), send_hi);
}

// Blocks until the writer has closed its end (or died), then closes this one.
void wait_for(const Context& ctx, long hpid, UniqueFd& read_end, const char* message) {
  const Span blocked = measure([&] {
    std::array<char, 64> buffer{};
    ssize_t n = 0;
    while ((n = read(read_end.get(), buffer.data(), buffer.size())) > 0 || (n < 0 && errno == EINTR)) {
    }
  });
  read_end.reset();
  record_span(ctx.truth, hpid, std::string(message) + "_wait", blocked);
}

// ---- the processes of a boot ----------------------------------------------

int wait_status(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

[[noreturn]] void container_failed(const char* what) {
  std::fprintf(stderr, "hacoboot-launcher: %s: %s\n", what, std::strerror(errno));
  _exit(kExitContainerFailed);
}

// Phases 11 to 20, Haconiwa's container setup.
void set_up_container(const Context& ctx, long hpid, BootPipes& pipes) {
  const bool ns = ctx.opt.namespaces;
  pass(ctx, kContainerStart, hpid);
  // Without our own UTS/mount namespaces these would change the host.
  if (ns && sethostname("hacoboot-demo", std::strlen("hacoboot-demo")) != 0) container_failed("sethostname");
  pass(ctx, kNamespaceGenerated, hpid);
  pass(ctx, kFilesystemSetup, hpid);
  pass(ctx, kRlimitSetup, hpid);
  pass(ctx, kCgroupSetup, hpid);
  if (ns && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) container_failed("making / private");
  pass(ctx, kRemounted, hpid);
  if (ctx.opt.uid_map_handshake) {
    tell(ctx, hpid, pipes.unshared.write_end, "unshared");
    wait_for(ctx, hpid, pipes.mapped.read_end, "mapped");
  }
  pass(ctx, kUidMappingSetup, hpid);
  pass(ctx, kChrooted, hpid);
  pass(ctx, kCapabilitySetup, hpid);
  pass(ctx, kSeccompSetup, hpid);
}

[[noreturn]] void run_container(const Context& ctx, long hpid, BootPipes& pipes, char* const* envp) {
  pipes.keep_container_ends();
  set_up_container(ctx, hpid, pipes);
  if (ctx.opt.done_pipe) tell(ctx, hpid, pipes.done.write_end, "done");
  if (ctx.opt.die_before_exec) {
    ctx.truth.record(hpid, "died", 1);
    _exit(1);
  }
  pass(ctx, kContainerExecing, hpid);
  ctx.truth.record(hpid, "exec_lo", monotonic_ns());
  // execve, not execvp: the tracer matches the exec filename against COMMAND.
  if (ctx.opt.execveat) {
    syscall(SYS_execveat, AT_FDCWD, ctx.opt.command[0], ctx.opt.command.data(), envp, 0);
  } else {
    execve(ctx.opt.command[0], ctx.opt.command.data(), envp);
  }
  std::fprintf(stderr, "hacoboot-launcher: cannot execute %s: %s\n", ctx.opt.command[0], std::strerror(errno));
  _exit(kExitContainerFailed);
}

std::vector<std::string> container_environment(const Options& opt, long hpid) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("HACOBOOT_HPID=", 0) == 0 || entry.rfind("HACOBOOT_TRUTH=", 0) == 0) continue;
    env.push_back(entry);
  }
  env.push_back("HACOBOOT_HPID=" + std::to_string(hpid));
  if (!opt.truth_path.empty()) env.push_back("HACOBOOT_TRUTH=" + opt.truth_path);
  return env;
}

// Forks the container: its pid, or -1 (said why).
long fork_container(const Context& ctx, long hpid, BootPipes& pipes) {
  // Built before clone so the child only has to exec.
  const std::vector<std::string> env = container_environment(ctx.opt, hpid);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // Raw clone with a null stack behaves like fork, but can create the new
  // pid namespace in the same step, making the child its pid 1.
  const unsigned long ns_flags = ctx.opt.namespaces ? CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNS | CLONE_NEWPID : 0;
  const long child = syscall(SYS_clone, ns_flags | SIGCHLD, 0, 0, 0, 0);
  if (child < 0) {
    if (errno == EPERM && ctx.opt.namespaces) {
      std::fprintf(stderr,
                   "hacoboot-launcher: creating namespaces is not permitted; "
                   "run as root or pass --no-namespaces\n");
    } else {
      std::fprintf(stderr, "hacoboot-launcher: clone: %s\n", std::strerror(errno));
    }
  }
  if (child == 0) run_container(ctx, hpid, pipes, envp.data());
  return child;
}

// What the supervisor waits for between its fork and END_SETUP, as in
// runner.rb: with user namespaces the container's request to map it, then
// the end of the container's setup. Its own work here is the mapping.
void wait_for_container_setup(const Context& ctx, long hpid, BootPipes& pipes) {
  pipes.keep_supervisor_ends();
  if (ctx.opt.uid_map_handshake) {
    wait_for(ctx, hpid, pipes.unshared.read_end, "unshared");
    do_work(ctx, ctx.opt.uid_mapping, hpid, "uidmap");
    tell(ctx, hpid, pipes.mapped.write_end, "mapped");
  }
  if (ctx.opt.done_pipe) wait_for(ctx, hpid, pipes.done.read_end, "done");
}

int run_supervisor(const Context& ctx) {
  const long hpid = getpid();
  work_before(ctx, kSupervisorStart, hpid);
  fail_before(ctx, kSupervisorStart, hpid);
  const auto start_lo = monotonic_ns();
  hacoboot::demo::fire_phase_probe(kSupervisorStart, hpid);
  const auto start_hi = monotonic_ns();
  ctx.truth.record(hpid, "start_lo", start_lo);
  ctx.truth.record(hpid, "start_hi", start_hi);
  ctx.truth.record(hpid, "cli_pid", getppid());
  delay_after(ctx, kSupervisorStart, hpid);
  pass(ctx, kStartFork, hpid);

  BootPipes pipes;
  if (!pipes.open(ctx.opt)) return kExitSetupFailed;
  const long child = fork_container(ctx, hpid, pipes);
  if (child < 0) return kExitSetupFailed;
  ctx.truth.record(hpid, "container_pid", child);
  wait_for_container_setup(ctx, hpid, pipes);
  pass(ctx, kEndSetup, hpid);
  pass(ctx, kStartWait, hpid);
  const int status = wait_status(static_cast<pid_t>(child));
  pass(ctx, kEndWait, hpid);
  pass(ctx, kCleanup, hpid);

  const bool exited = status >= 0 && WIFEXITED(status);
  const int code = exited ? WEXITSTATUS(status) : -1;
  return code == 0 || (ctx.opt.die_before_exec && code == 1) ? 0 : 1;
}

int run_cli(const Context& ctx) {
  pass(ctx, kCliStart, getpid());
  const pid_t supervisor = fork();
  if (supervisor < 0) {
    std::fprintf(stderr, "hacoboot-launcher: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (supervisor == 0) _exit(run_supervisor(ctx));
  const int status = wait_status(supervisor);
  return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// Above the largest pid Linux hands out (PID_MAX_LIMIT): no launch has these.
constexpr long kFirstMadeUpHpid = 4'194'304 + 1;

// --flood: what a process passing made-up hpids, or launches the tracer did
// not see start, look like to it: every hit a new hpid, with a launch's
// phase numbers in turn (1 and 2 included, under an hpid that is not the pid).
int flood(long hits) {
  static constexpr std::array<long, 17> kPhases{1, 2, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 3, 4, 5, 6};
  for (long i = 0; i < hits; ++i)
    hacoboot::demo::fire_phase_probe(kPhases[static_cast<std::size_t>(i) % kPhases.size()], kFirstMadeUpHpid + i);
  return 0;
}

int run_driver(const Context& ctx) {
  long launched = 0;
  long running = 0;
  bool failed = false;
  bool stop = false;
  const auto reap_one = [&] {
    const int status = wait_status(-1);
    --running;
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = true;
    if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == kExitSetupFailed) stop = true;
  };
  while (launched < ctx.opt.boots && !stop) {
    if (running >= ctx.opt.parallel) {
      reap_one();
      continue;
    }
    const pid_t cli = fork();
    if (cli < 0) {
      std::fprintf(stderr, "hacoboot-launcher: fork: %s\n", std::strerror(errno));
      failed = true;
      break;
    }
    if (cli == 0) _exit(run_cli(ctx));
    ++launched;
    ++running;
  }
  while (running > 0) reap_one();
  return failed ? 1 : 0;
}

// ---- command line -------------------------------------------------------

constexpr const char* kUsage =
    "usage: hacoboot-launcher [OPTIONS] -- COMMAND [ARGS...]\n"
    "       hacoboot-launcher --flood N\n"
    "Boots COMMAND like the Haconiwa container runtime, firing its USDT probe\n"
    "haconiwa:bootstrap_phase_pass(phase, hpid) at every bootstrap phase.\n"
    "\n"
    "  -n, --boots N            boots to launch (default 1)\n"
    "  -j, --parallel P         boots in flight at once (default 1)\n"
    "      --truth FILE         append ground-truth lines \"hpid\\tkey\\tvalue\" to FILE\n"
    "                           (the keys are listed in demo/truth.hpp)\n"
    "      --die-before-exec    container exits 1 after phase 20 instead of exec'ing\n"
    "      --no-namespaces      do not create namespaces (for non-root use)\n"
    "      --execveat           the container runs COMMAND with execveat(2), not execve\n"
    "      --flood N            no boot: fire the probe N times, each with a new hpid\n"
    "                           that is no process's (COMMAND may be left out)\n"
    "  -h, --help               show this help\n"
    "\n"
    "Haconiwa's pipes between the supervisor and its container:\n"
    "      --no-done-pipe       the supervisor does not wait, from its fork to\n"
    "                           END_SETUP, for the container to write \"done\" and\n"
    "                           close the pipe after phase 20 (it does by default)\n"
    "      --uid-map-handshake  between phases 16 and 17 the container writes\n"
    "                           \"unshared\" and waits until the supervisor has\n"
    "                           done its mapping work (uid-map below; no user\n"
    "                           namespace is made) and answered \"mapped\"\n"
    "\n"
    "Known work before passing PHASE, done by the process that passes it (0 the\n"
    "CLI, 1-6 the supervisor, 11-21 the container; uid-map: the supervisor's\n"
    "mapping work, with --uid-map-handshake), in this order; repeatable, the last\n"
    "value given for a PHASE counts. The tracer names a step by the phase that\n"
    "ends it: work before phase 13 is in step 13 (before 0 and 1, it precedes\n"
    "the boot's start; before 21, it follows the close of the done pipe):\n"
    "      --burn PHASE:MS      busy loop until the thread has used MS ms of CPU\n"
    "      --fsync PHASE:N      N times a 4 KiB write + fsync of a file in --io-dir;\n"
    "                           waits for the disk only on a filesystem that\n"
    "                           writes through (ext4, xfs...), not on tmpfs\n"
    "      --sleep PHASE:MS     sleep MS ms\n"
    "      --mounts PHASE:N     N times mount a tmpfs and unmount it (kernel CPU); PHASE\n"
    "                           16-21 only: the container's private mount namespace\n"
    "      --nosys PHASE:N      N calls of syscall 1023, which no kernel has (ENOSYS):\n"
    "                           a syscall without a name\n"
    "      --unshare-net PHASE  unshare(CLONE_NEWNET), then setns back: a network\n"
    "                           namespace made (RCU waits) and left\n"
    "      --sysctl-write PHASE write net/ipv6/conf/default/disable_ipv6 under\n"
    "                           /proc/sys back with its own value\n"
    "      --pipe-wait PHASE:MS block reading a pipe that a forked child writes\n"
    "                           after MS ms\n"
    "      --io-dir DIR         where --fsync writes (default: the current directory)\n"
    "      --phase-delay PHASE:MS\n"
    "                           sleep MS ms right AFTER passing PHASE, a point where\n"
    "                           the process is known to be past it (in step PHASE+1)\n"
    "      --fail-at PHASE[:STATUS|:SIGNAL]\n"
    "                           the process that would pass PHASE dies right before\n"
    "                           it (after PHASE's work): exits STATUS (0-255, default\n"
    "                           1) or kills itself with SIGNAL by name (KILL, SIGSEGV);\n"
    "                           --fail-at 18 leaves a container that failed after\n"
    "                           step 17. A container in its own pid namespace is its\n"
    "                           init, which ignores its own signals: SIGNAL at 11-21\n"
    "                           needs --no-namespaces\n"
    "\n"
    "COMMAND is executed as given (no PATH lookup) with HACOBOOT_HPID and, with\n"
    "--truth, HACOBOOT_TRUTH added to the environment.\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "hacoboot-launcher: %s (see --help)\n", message.c_str());
  std::exit(kExitUsage);
}

bool parse_long(const char* text, long min, long max, long& out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max) return false;
  out = value;
  return true;
}

// The index of PHASE among the phases the launcher passes; nullopt when it
// is not one.
std::optional<std::size_t> passed_phase(const std::string& phase_text) {
  long phase = 0;
  if (!parse_long(phase_text.c_str(), 0, kMaxPhase, phase) || (phase > kCleanup && phase < kContainerStart))
    return std::nullopt;
  return static_cast<std::size_t>(phase);
}

// PHASE:AMOUNT of --burn, --fsync, --sleep and --phase-delay: PHASE as
// given, AMOUNT within [0, max]; nullopt when malformed.
std::optional<std::pair<std::string, long>> split_phase_amount(const std::string& spec, long max) {
  const auto colon = spec.find(':');
  long amount = 0;
  if (colon == std::string::npos || !parse_long(spec.substr(colon + 1).c_str(), 0, max, amount)) return std::nullopt;
  return std::make_pair(spec.substr(0, colon), amount);
}

[[noreturn]] void bad_phase_amount(const char* option, const std::string& spec, const char* unit, const char* phases,
                                   long max) {
  usage_error(std::string("bad ") + option + " '" + spec + "', expected PHASE:" + unit + " with PHASE " + phases +
              " and at most " + std::to_string(max));
}

// The work slot PHASE names: a phase the launcher passes, or uid-map.
Work* work_slot(const std::string& phase_text, Options& opt) {
  if (phase_text == "uid-map") return &opt.uid_mapping;
  const auto phase = passed_phase(phase_text);
  return phase ? &opt.before_phase[*phase] : nullptr;
}

// --burn, --fsync and --sleep.
void parse_work(const char* option, const char* text, long Work::*amount, long max, Options& opt) {
  const auto spec = split_phase_amount(text, max);
  Work* slot = spec ? work_slot(spec->first, opt) : nullptr;
  if (slot == nullptr)
    bad_phase_amount(
        option, text,
        amount == &Work::fsync_rounds || amount == &Work::mount_rounds || amount == &Work::nosys_calls ? "N" : "MS",
        "0-6, 11-21 or uid-map", max);
  slot->*amount = spec->second;
}

// --unshare-net and --sysctl-write: once, before PHASE.
void parse_work_at(const char* option, const char* text, long Work::*once, Options& opt) {
  Work* slot = work_slot(text, opt);
  if (slot == nullptr)
    usage_error(std::string("bad ") + option + " '" + text + "', expected PHASE 0-6, 11-21 or uid-map");
  slot->*once = 1;
}

void parse_phase_delay(const char* text, long max, Options& opt) {
  const auto spec = split_phase_amount(text, max);
  const auto phase = spec ? passed_phase(spec->first) : std::nullopt;
  if (!phase) bad_phase_amount("--phase-delay", text, "MS", "0-6 or 11-21", max);
  opt.delay_after_ms[*phase] = spec->second;
}

// A signal by name, with or without "SIG" ("KILL", "SIGTERM"); 0 when none.
int signal_named(std::string name) {
  if (name.rfind("SIG", 0) == 0) name.erase(0, 3);
  for (int signal = 1; signal < NSIG; ++signal) {
    const char* abbrev = sigabbrev_np(signal);
    if (abbrev != nullptr && name == abbrev) return signal;
  }
  return 0;
}

// PHASE[:STATUS|:SIGNAL] of --fail-at.
void parse_fail_at(const char* text, Options& opt) {
  const std::string spec = text;
  const auto colon = spec.find(':');
  const auto phase = passed_phase(spec.substr(0, colon));
  Failure failure;
  long status = 1;
  const std::string how = colon == std::string::npos ? "1" : spec.substr(colon + 1);
  const bool exits = parse_long(how.c_str(), 0, 255, status);
  failure.exit_status = static_cast<int>(status);
  if (!exits) failure.signal = signal_named(how);
  if (!phase || (!exits && failure.signal == 0))
    usage_error("bad --fail-at '" + spec + "', expected PHASE[:STATUS|:SIGNAL] with PHASE 0-6 or 11-21, STATUS 0-255");
  opt.fail_before[*phase] = failure;
}

// --mounts anywhere but where the container's mounts stay its own: from
// CONTAINER_REMOUNTED on, in its private mount namespace.
bool mounts_outside_a_private_namespace(const Options& opt) {
  if (opt.uid_mapping.mount_rounds > 0) return true;
  for (std::size_t phase = 0; phase < opt.before_phase.size(); ++phase) {
    if (opt.before_phase[phase].mount_rounds == 0) continue;
    if (!opt.namespaces || phase < static_cast<std::size_t>(kRemounted)) return true;
  }
  return false;
}

// The container is the init of its pid namespace, which the kernel shields
// from signals sent from inside it, its own included.
bool container_signals_itself(const Options& opt) {
  return std::any_of(opt.fail_before.begin() + kContainerStart, opt.fail_before.end(),
                     [](const std::optional<Failure>& f) { return f && f->signal != 0; });
}

enum : int {
  kTruth = 256,
  kDie,
  kPhaseDelay,
  kSleep,
  kBurn,
  kFsync,
  kIoDir,
  kNoDonePipe,
  kUidMapHandshake,
  kNoNs,
  kExecveat,
  kFlood,
  kFailAt,
  kMounts,
  kNosys,
  kUnshareNet,
  kSysctlWrite,
  kPipeWait
};

constexpr long kMaxMs = 3'600'000;
constexpr long kMaxFsyncRounds = 1'000'000;
constexpr long kMaxMountRounds = 100'000;
constexpr long kMaxNosysCalls = 1'000'000;

// One option of getopt_long's, with its argument in optarg.
void apply_option(int c, char** argv, Options& opt) {
  switch (c) {
    case 'n':
      if (!parse_long(optarg, 1, LONG_MAX, opt.boots)) usage_error("bad --boots value");
      break;
    case 'j':
      if (!parse_long(optarg, 1, LONG_MAX, opt.parallel)) usage_error("bad --parallel value");
      break;
    case kTruth:
      if (*optarg == '\0') usage_error("empty --truth path");
      opt.truth_path = optarg;
      break;
    case kDie: opt.die_before_exec = true; break;
    case kPhaseDelay: parse_phase_delay(optarg, kMaxMs, opt); break;
    case kFailAt: parse_fail_at(optarg, opt); break;
    case kSleep: parse_work("--sleep", optarg, &Work::sleep_ms, kMaxMs, opt); break;
    case kBurn: parse_work("--burn", optarg, &Work::burn_ms, kMaxMs, opt); break;
    case kFsync: parse_work("--fsync", optarg, &Work::fsync_rounds, kMaxFsyncRounds, opt); break;
    case kMounts: parse_work("--mounts", optarg, &Work::mount_rounds, kMaxMountRounds, opt); break;
    case kNosys: parse_work("--nosys", optarg, &Work::nosys_calls, kMaxNosysCalls, opt); break;
    case kUnshareNet: parse_work_at("--unshare-net", optarg, &Work::unshare_net, opt); break;
    case kSysctlWrite: parse_work_at("--sysctl-write", optarg, &Work::sysctl_write, opt); break;
    case kPipeWait: parse_work("--pipe-wait", optarg, &Work::pipe_wait_ms, kMaxMs, opt); break;
    case kIoDir:
      if (*optarg == '\0') usage_error("empty --io-dir path");
      opt.io_dir = optarg;
      break;
    case kNoDonePipe: opt.done_pipe = false; break;
    case kUidMapHandshake: opt.uid_map_handshake = true; break;
    case kNoNs: opt.namespaces = false; break;
    case kExecveat: opt.execveat = true; break;
    case kFlood:
      if (!parse_long(optarg, 1, 1'000'000'000, opt.flood)) usage_error("bad --flood value");
      break;
    case 'h': std::fputs(kUsage, stdout); std::exit(0);
    case ':': usage_error(std::string("option ") + argv[optind - 1] + " needs an argument");
    default:  // optopt is 0 for an unknown long option
      usage_error("unknown option " +
                  (optopt != 0 ? std::string("-") + static_cast<char>(optopt) : std::string(argv[optind - 1])));
  }
}

Options parse_options(int argc, char** argv) {
  static const option long_options[] = {
      {"boots", required_argument, nullptr, 'n'},
      {"parallel", required_argument, nullptr, 'j'},
      {"truth", required_argument, nullptr, kTruth},
      {"die-before-exec", no_argument, nullptr, kDie},
      {"phase-delay", required_argument, nullptr, kPhaseDelay},
      {"fail-at", required_argument, nullptr, kFailAt},
      {"sleep", required_argument, nullptr, kSleep},
      {"burn", required_argument, nullptr, kBurn},
      {"fsync", required_argument, nullptr, kFsync},
      {"mounts", required_argument, nullptr, kMounts},
      {"nosys", required_argument, nullptr, kNosys},
      {"unshare-net", required_argument, nullptr, kUnshareNet},
      {"sysctl-write", required_argument, nullptr, kSysctlWrite},
      {"pipe-wait", required_argument, nullptr, kPipeWait},
      {"io-dir", required_argument, nullptr, kIoDir},
      {"no-done-pipe", no_argument, nullptr, kNoDonePipe},
      {"uid-map-handshake", no_argument, nullptr, kUidMapHandshake},
      {"no-namespaces", no_argument, nullptr, kNoNs},
      {"execveat", no_argument, nullptr, kExecveat},
      {"flood", required_argument, nullptr, kFlood},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  Options opt;
  // '+': stop at COMMAND so its own options are left alone;
  // ':': report errors ourselves, in one line.
  int c = 0;
  while ((c = getopt_long(argc, argv, "+:n:j:h", long_options, nullptr)) != -1) apply_option(c, argv, opt);
  if (opt.uid_mapping.any() && !opt.uid_map_handshake) usage_error("uid-map work needs --uid-map-handshake");
  if (mounts_outside_a_private_namespace(opt))
    usage_error(
        "--mounts PHASE:N needs PHASE 16-21, the container once its mount namespace is private, and namespaces");
  if (opt.namespaces && container_signals_itself(opt))
    usage_error(
        "--fail-at PHASE:SIGNAL at 11-21 needs --no-namespaces (a pid namespace's init ignores its own signals)");
  if (opt.flood > 0) return opt;
  if (optind >= argc) usage_error("missing COMMAND");
  opt.command.assign(argv + optind, argv + argc);
  opt.command.push_back(nullptr);
  return opt;
}

bool fsyncs(const Options& opt) {
  return opt.uid_mapping.fsync_rounds > 0 || std::any_of(opt.before_phase.begin(), opt.before_phase.end(),
                                                         [](const Work& w) { return w.fsync_rounds > 0; });
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse_options(argc, argv);
  if (opt.flood > 0) return flood(opt.flood);
  // A directory --fsync cannot write to fails here, not in the middle of boots.
  if (fsyncs(opt) && !write_and_fsync(opt.io_dir, 0)) return 1;
  TruthFile truth;
  if (!opt.truth_path.empty()) {
    truth = TruthFile(opt.truth_path.c_str());
    if (!truth.is_open()) {
      std::fprintf(stderr, "hacoboot-launcher: cannot open %s: %s\n", opt.truth_path.c_str(), std::strerror(errno));
      return 1;
    }
    // Absolute, so HACOBOOT_TRUTH stays valid if COMMAND changes directory.
    if (const std::unique_ptr<char, decltype(&std::free)> abs(realpath(opt.truth_path.c_str(), nullptr), &std::free);
        abs) {
      opt.truth_path = abs.get();
    }
  }
  return run_driver(Context{opt, truth});
}
