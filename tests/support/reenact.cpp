// hacoboot-reenact: plays the process tree of a system-wide capture (such as
// tests/fixtures/real-haconiwa-3boots.tsv) again, for real, so that the BPF
// program tags and emits what it would have emitted then. The recordings of
// the replay tier are made from it (tests/fixtures/make-recordings.sh) and
// an integration test traces it live.
//
//   hacoboot-reenact [--scale F] [--hold-after TS] CAPTURE DIR
//   hacoboot-reenact --resume PID
//
// Every process of the capture becomes a real process: the same forks
// (parent -> child), the execs, the USDT phases (haconiwa:bootstrap_phase_pass
// with the re-enacted supervisor's real pid as hpid, as Haconiwa passes its
// own), a real listen(2) on loopback and the exits, one at a time in the
// capture's order (by time), with the capture's gaps times F (default 0.1).
// An exec runs this program again under the captured command's name, as a
// symlink DIR/NAME made at start (DIR/busybox for /bin/busybox): COMMAND for
// the tracer is DIR/busybox, and the probe fires from every name, since the
// uprobe sits on this file. What the tagging keys on is the process tree and
// the probe's arguments, not namespaces or the chroot: none are made.
//
// The capture's root is the process that forks most without having been
// forked in it (the shell that ran the boot script); rows of other processes
// that were not forked in the capture (a kernel thread, a process that ended
// as the capture began) are left out.
//
// --hold-after TS stops this program (SIGSTOP) once the rows up to time TS
// were played; `--resume PID` continues it and waits until it ended. A tracer
// started in between sees the launch in flight from there on.
//
// How the processes keep the order: a shared memory file (a memfd, inherited
// across fork and exec) holds the plan, the real pid of each process and the
// number of the step now due. The process a step belongs to waits on that
// number (a futex), plays its step and moves it on; an exec's new image moves
// it on once it runs (the kernel's exec event came first); an exit is
// followed by this program, which moves it on once the process is gone (its
// pidfd), so that the kernel's exit event came first too.
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "haconiwa_probe.hpp"
#include "support/capture_tsv.hpp"

namespace {

using hacoboot::test::CaptureRow;

constexpr std::uint32_t kMaxSteps = 4096;
constexpr std::uint32_t kMaxProcesses = 1024;
constexpr std::size_t kMaxName = 64;
constexpr std::size_t kMaxDir = 256;
// A step not played within this time: a process failed, the run is stopped.
constexpr int kStallSeconds = 60;
// How the shared memory file is named to an exec'd image.
constexpr const char* kEnvironment = "HACOBOOT_REENACT";

enum class Kind : std::uint8_t { Phase, Fork, Exec, Listen, Exit, Hold };

struct Step {
  Kind kind = Kind::Phase;
  std::uint32_t process = 0;  // who plays it (the director for Hold)
  std::uint32_t line = 0;     // in the capture, for messages
  std::int64_t phase = 0;
  std::uint32_t hpid_process = 0;     // Phase: the process whose real pid is the hpid
  std::uint32_t child = 0;            // Fork: the child process
  std::uint64_t at_ns = 0;            // since the start, scaled
  std::array<char, kMaxName> name{};  // Exec: the command's name in DIR
};

// The shared memory file's layout. Process 0 is the capture's root.
struct Shared {
  std::atomic<std::uint32_t> due;  // the step now due; a futex word
  std::uint32_t steps;
  std::atomic<std::int64_t> start_ns;  // CLOCK_MONOTONIC; moved on past a hold
  std::array<char, kMaxDir> dir;
  std::array<std::atomic<std::int32_t>, kMaxProcesses> real_pid;
  std::array<Step, kMaxSteps> plan;
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free && sizeof(std::atomic<std::uint32_t>) == 4);

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "hacoboot-reenact: %s\n", why.c_str());
  std::fflush(stderr);
  _exit(1);
}

std::string errno_text() {
  return std::strerror(errno);
}

std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr, 0);
}

void wait_until_due(Shared& shared, std::uint32_t step) {
  const timespec stall{kStallSeconds, 0};
  while (true) {
    const auto due = shared.due.load(std::memory_order_acquire);
    if (due == step) return;
    if (due > step) fail("step " + std::to_string(step) + " was passed over");
    if (futex(shared.due, FUTEX_WAIT, due, &stall) != 0 && errno == ETIMEDOUT) {
      fail(due < shared.steps ? "stalled before the step of capture line " + std::to_string(shared.plan[due].line)
                              : std::string("stalled before the end"));
    }
  }
}

void done(Shared& shared, std::uint32_t step) {
  shared.due.store(step + 1, std::memory_order_release);
  futex(shared.due, FUTEX_WAKE, INT_MAX, nullptr);
}

void sleep_until_time_of(const Shared& shared, const Step& step) {
  const auto at = shared.start_ns.load() + static_cast<std::int64_t>(step.at_ns);
  const timespec when{static_cast<time_t>(at / 1'000'000'000), static_cast<long>(at % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &when, nullptr) == EINTR) {
  }
}

// ---- the plan ---------------------------------------------------------------

struct Options {
  double scale = 0.1;
  std::optional<std::uint64_t> hold_after;
  std::string capture;
  std::string dir;
};

// The command an exec runs: the captured file's name, or when the capture
// could not read it, the name the process shows next.
std::string exec_name(const std::vector<CaptureRow>& rows, std::size_t at) {
  const auto& row = rows[at];
  if (!row.filename.empty()) return std::filesystem::path(row.filename).filename().string();
  for (auto next = at + 1; next < rows.size(); ++next) {
    if (rows[next].pid == row.pid) return rows[next].comm;
  }
  return "exec";
}

std::uint32_t root_pid(const std::vector<CaptureRow>& rows) {
  std::set<std::uint32_t> forked;
  std::map<std::uint32_t, int> forks;
  for (const auto& row : rows) {
    if (row.kind != "fork") continue;
    if (!forked.contains(row.pid)) ++forks[row.pid];
    forked.insert(row.child_pid.value_or(0));
  }
  if (forks.empty()) throw std::runtime_error("the capture has no fork to start from");
  return std::max_element(forks.begin(), forks.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
}

class Planner {
 public:
  Planner(const Options& options, const std::vector<CaptureRow>& rows)
      : options_(options), rows_(rows), first_ns_(rows.front().ts_ns) {
    processes_[root_pid(rows)] = next_process_++;
  }

  std::vector<Step> plan() {
    for (std::size_t at = 0; at < rows_.size(); ++at) {
      const auto& row = rows_[at];
      const auto process = processes_.find(row.pid);
      if (process == processes_.end()) continue;  // not forked in the capture
      Step step;
      step.process = process->second;
      step.line = static_cast<std::uint32_t>(row.line);
      step.at_ns = static_cast<std::uint64_t>(static_cast<double>(row.ts_ns - first_ns_) * options_.scale);
      if (!describe(at, step)) continue;
      steps_.push_back(step);
      if (options_.hold_after && row.ts_ns <= *options_.hold_after &&
          (at + 1 == rows_.size() || rows_[at + 1].ts_ns > *options_.hold_after)) {
        steps_.push_back(Step{.kind = Kind::Hold, .line = step.line, .at_ns = step.at_ns});
      }
    }
    if (steps_.size() > kMaxSteps) throw std::runtime_error("more steps than " + std::to_string(kMaxSteps));
    return steps_;
  }

 private:
  // Fills in what the row does; false: nothing to play.
  bool describe(std::size_t at, Step& step) {
    const auto& row = rows_[at];
    if (row.kind == "phase") {
      step.kind = Kind::Phase;
      step.phase = row.phase.value();
      const auto supervisor = processes_.find(row.hpid.value());
      if (supervisor == processes_.end()) throw std::runtime_error(where(row) + "hpid of no process played");
      step.hpid_process = supervisor->second;
    } else if (row.kind == "fork") {
      step.kind = Kind::Fork;
      if (next_process_ == kMaxProcesses) throw std::runtime_error(where(row) + "too many processes");
      step.child = next_process_++;
      processes_[row.child_pid.value()] = step.child;
    } else if (row.kind == "execve") {
      step.kind = Kind::Exec;
      const auto name = exec_name(rows_, at);
      if (name.size() >= kMaxName || name.find('/') != std::string::npos) {
        throw std::runtime_error(where(row) + "command name '" + name + "' not usable");
      }
      std::copy(name.begin(), name.end(), step.name.begin());
    } else if (row.kind == "listen") {
      if (row.ret.value_or(-1) != 0) return false;  // a failed listen is not played
      step.kind = Kind::Listen;
    } else if (row.kind == "exit") {
      step.kind = Kind::Exit;
    } else {
      throw std::runtime_error(where(row) + "unknown kind '" + row.kind + "'");
    }
    return true;
  }

  static std::string where(const CaptureRow& row) { return "capture line " + std::to_string(row.line) + ": "; }

  const Options& options_;
  const std::vector<CaptureRow>& rows_;
  const std::uint64_t first_ns_;
  std::map<std::uint32_t, std::uint32_t> processes_;  // captured pid -> process
  std::uint32_t next_process_ = 0;
  std::vector<Step> steps_;
};

// ---- a re-enacted process ---------------------------------------------------

void listen_on_loopback() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || listen(fd, 1) != 0) {
    fail("listen on 127.0.0.1: " + errno_text());
  }
  close(fd);
}

[[noreturn]] void exec_step(Shared& shared, int memfd, std::uint32_t process, std::uint32_t step) {
  const std::string path = std::string(shared.dir.data()) + "/" + shared.plan[step].name.data();
  const std::string state = std::to_string(memfd) + " " + std::to_string(process) + " " + std::to_string(step);
  setenv(kEnvironment, state.c_str(), 1);
  const std::string name = shared.plan[step].name.data();
  char* const argv[] = {const_cast<char*>(name.c_str()), nullptr};
  execv(path.c_str(), argv);
  fail("capture line " + std::to_string(shared.plan[step].line) + ": exec " + path + ": " + errno_text());
}

// Plays the steps of `process` from `from` on; a fork's child goes on as its
// own process. Once the plan is played, the processes still there end.
[[noreturn]] void play(Shared& shared, int memfd, std::uint32_t process, std::uint32_t from) {
  for (auto at = from; at < shared.steps; ++at) {
    const auto& step = shared.plan[at];
    if (step.process != process || step.kind == Kind::Hold) continue;
    wait_until_due(shared, at);
    sleep_until_time_of(shared, step);
    switch (step.kind) {
      case Kind::Phase: hacoboot::demo::fire_phase_probe(step.phase, shared.real_pid[step.hpid_process].load()); break;
      case Kind::Fork: {
        const pid_t child = fork();
        if (child < 0) fail("fork: " + errno_text());
        if (child == 0) {
          process = step.child;
          continue;  // the child's steps come later: not done()
        }
        shared.real_pid[step.child].store(child);
        break;
      }
      case Kind::Exec: exec_step(shared, memfd, process, at);
      case Kind::Listen: listen_on_loopback(); break;
      case Kind::Exit: _exit(0);  // the director moves on once it is gone
      case Kind::Hold: break;
    }
    done(shared, at);
  }
  wait_until_due(shared, shared.steps);
  _exit(0);
}

Shared& map_shared(int memfd) {
  void* memory = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (memory == MAP_FAILED) fail("mmap: " + errno_text());
  return *static_cast<Shared*>(memory);
}

// An exec'd image: the exec is done, its process plays on.
[[noreturn]] void resume_after_exec(const char* state) {
  int memfd = -1;
  std::uint32_t process = 0;
  std::uint32_t step = 0;
  if (std::sscanf(state, "%d %u %u", &memfd, &process, &step) != 3) fail(std::string("bad ") + kEnvironment);
  unsetenv(kEnvironment);
  auto& shared = map_shared(memfd);
  done(shared, step);
  play(shared, memfd, process, step + 1);
}

// ---- the director -------------------------------------------------------------

void make_commands(const std::string& dir, const std::vector<Step>& plan) {
  const auto self = std::filesystem::read_symlink("/proc/self/exe");
  std::filesystem::create_directories(dir);
  for (const auto& step : plan) {
    if (step.kind != Kind::Exec) continue;
    const auto link = std::filesystem::path(dir) / step.name.data();
    if (std::filesystem::is_symlink(link) && std::filesystem::read_symlink(link) == self) continue;
    std::filesystem::remove(link);
    std::filesystem::create_symlink(self, link);
  }
}

void wait_gone(pid_t pid, std::uint32_t line) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) fail("pidfd_open " + std::to_string(pid) + ": " + errno_text());
  pollfd gone{.fd = pidfd, .events = POLLIN, .revents = 0};
  const int ready = poll(&gone, 1, kStallSeconds * 1000);
  close(pidfd);
  if (ready != 1) fail("the exit of capture line " + std::to_string(line) + " did not happen");
}

void hold(Shared& shared) {
  const auto stopped_at = now_ns();
  raise(SIGSTOP);
  shared.start_ns.fetch_add(now_ns() - stopped_at);
}

// Starts the root, follows the exits and holds, then reaps every process
// (orphans come here: a subreaper). Returns the exit status.
int direct(Shared& shared, int memfd) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) fail("PR_SET_CHILD_SUBREAPER: " + errno_text());
  shared.start_ns.store(now_ns());
  const pid_t root = fork();
  if (root < 0) fail("fork: " + errno_text());
  if (root == 0) play(shared, memfd, 0, 0);
  shared.real_pid[0].store(root);
  for (std::uint32_t at = 0; at < shared.steps; ++at) {
    const auto& step = shared.plan[at];
    if (step.kind != Kind::Exit && step.kind != Kind::Hold) continue;
    wait_until_due(shared, at);
    if (step.kind == Kind::Exit) wait_gone(shared.real_pid[step.process].load(), step.line);
    if (step.kind == Kind::Hold) hold(shared);
    done(shared, at);
  }
  int status = 0;
  int failed = 0;
  while (wait(&status) > 0 || errno == EINTR) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  return failed;
}

Options parse(int argc, char** argv) {
  Options options;
  std::vector<std::string> operands;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--scale" || arg == "--hold-after") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--scale") options.scale = std::stod(value);
      if (arg == "--hold-after") options.hold_after = std::stoull(value);
    } else {
      operands.push_back(arg);
    }
  }
  if (operands.size() != 2 || !(options.scale > 0)) {
    fail("usage: hacoboot-reenact [--scale F] [--hold-after TS] CAPTURE DIR | --resume PID");
  }
  options.capture = operands[0];
  options.dir = std::filesystem::absolute(operands[1]).string();
  if (options.dir.size() >= kMaxDir - kMaxName - 1) fail("DIR: path too long");
  return options;
}

int reenact(const Options& options) {
  const auto rows = hacoboot::test::sorted_by_time(hacoboot::test::load_capture(options.capture));
  if (rows.empty()) throw std::runtime_error(options.capture + ": no rows");
  const auto plan = Planner(options, rows).plan();
  make_commands(options.dir, plan);

  const int memfd = static_cast<int>(syscall(SYS_memfd_create, "hacoboot-reenact", 0));  // kept across exec
  if (memfd < 0 || ftruncate(memfd, sizeof(Shared)) != 0) fail("memfd: " + errno_text());
  auto& shared = *new (&map_shared(memfd)) Shared();
  shared.steps = static_cast<std::uint32_t>(plan.size());
  std::copy(options.dir.begin(), options.dir.end(), shared.dir.begin());
  std::copy(plan.begin(), plan.end(), shared.plan.begin());
  return direct(shared, memfd);
}

// `--resume PID`: continues a held re-enactment and waits until it ended.
int resume(const char* pid_text) {
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0 || kill(pid, SIGCONT) != 0) fail(std::string("resume ") + pid_text + ": " + errno_text());
  pollfd gone{.fd = pidfd, .events = POLLIN, .revents = 0};
  while (poll(&gone, 1, -1) < 0 && errno == EINTR) {
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* state = std::getenv(kEnvironment)) resume_after_exec(state);
  try {
    if (argc == 3 && std::string(argv[1]) == "--resume") return resume(argv[2]);
    return reenact(parse(argc, argv));
  } catch (const std::exception& e) {
    fail(e.what());
  }
}
