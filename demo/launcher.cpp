// hacoboot-launcher: boots "containers" with the same process tree and the
// same USDT probes as Haconiwa, so the tracer can be tested without Haconiwa.
//
//   driver ──fork──> CLI (phase 0) ──fork──> supervisor (phases 1-6, hpid)
//                                              └─clone(CLONE_NEW*)──> container
//                                                   (phases 11-21, then execve)
#include "truth.hpp"

#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/sdt.h>

#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

extern char** environ;

namespace {

using hacoboot::monotonic_ns;
using hacoboot::TruthFile;

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

struct Options {
  long boots = 1;
  long parallel = 1;
  std::string truth_path;
  bool die_before_exec = false;
  bool namespaces = true;
  bool execveat = false;  // exec COMMAND through execveat(2)
  long flood = 0;         // probe hits with made-up hpids instead of boots
  std::array<long, kMaxPhase + 1> delay_ms{};
  std::vector<char*> command;  // nullptr-terminated, for execve
};

struct Context {
  const Options& opt;
  const TruthFile& truth;
};

// A single probe site, as in Haconiwa's mruby extension: noinline keeps it to
// exactly one stapsdt note, so the tracer attaches one uprobe.
// clang (not g++ 12) flags sdt.h's internal variadic macro call under
// -Wpedantic (-Wgnu-zero-variadic-macro-arguments); the expansion is the
// header's business, so silence pedantic warnings for this function only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
__attribute__((noinline)) void fire_probe(long phase, long hpid) {
  DTRACE_PROBE2(haconiwa, bootstrap_phase_pass, (long)phase, (long)hpid);
}
#pragma GCC diagnostic pop

void sleep_ms(long ms) {
  timespec left{ms / 1000, (ms % 1000) * 1'000'000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

void pass(const Context& ctx, long phase, long hpid) {
  fire_probe(phase, hpid);
  if (const long ms = ctx.opt.delay_ms[static_cast<std::size_t>(phase)]; ms > 0) sleep_ms(ms);
}

int wait_status(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

[[noreturn]] void run_container(const Context& ctx, long hpid, char* const* envp) {
  const bool ns = ctx.opt.namespaces;
  pass(ctx, kContainerStart, hpid);
  // Without our own UTS/mount namespaces these would change the host.
  if (ns && sethostname("hacoboot-demo", std::strlen("hacoboot-demo")) != 0) {
    std::fprintf(stderr, "hacoboot-launcher: sethostname: %s\n", std::strerror(errno));
    _exit(kExitContainerFailed);
  }
  pass(ctx, kNamespaceGenerated, hpid);
  pass(ctx, kFilesystemSetup, hpid);
  pass(ctx, kRlimitSetup, hpid);
  pass(ctx, kCgroupSetup, hpid);
  if (ns && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    std::fprintf(stderr, "hacoboot-launcher: making / private: %s\n", std::strerror(errno));
    _exit(kExitContainerFailed);
  }
  pass(ctx, kRemounted, hpid);
  pass(ctx, kUidMappingSetup, hpid);
  pass(ctx, kChrooted, hpid);
  pass(ctx, kCapabilitySetup, hpid);
  pass(ctx, kSeccompSetup, hpid);
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

int run_supervisor(const Context& ctx) {
  const long hpid = getpid();
  const auto start_lo = monotonic_ns();
  fire_probe(kSupervisorStart, hpid);
  const auto start_hi = monotonic_ns();
  ctx.truth.record(hpid, "start_lo", start_lo);
  ctx.truth.record(hpid, "start_hi", start_hi);
  if (const long ms = ctx.opt.delay_ms[kSupervisorStart]; ms > 0) sleep_ms(ms);
  pass(ctx, kStartFork, hpid);

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
    return kExitSetupFailed;
  }
  if (child == 0) run_container(ctx, hpid, envp.data());

  ctx.truth.record(hpid, "container_pid", child);
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
    fire_probe(kPhases[static_cast<std::size_t>(i) % kPhases.size()], kFirstMadeUpHpid + i);
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
    "      --die-before-exec    container exits 1 after phase 20 instead of exec'ing\n"
    "      --phase-delay PHASE:MS  sleep MS ms after passing PHASE (repeatable)\n"
    "      --no-namespaces      do not create namespaces (for non-root use)\n"
    "      --execveat           the container runs COMMAND with execveat(2), not execve\n"
    "      --flood N            no boot: fire the probe N times, each with a new hpid\n"
    "                           that is no process's (COMMAND may be left out)\n"
    "  -h, --help               show this help\n"
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

void parse_phase_delay(const char* text, Options& opt) {
  const std::string spec = text;
  const auto colon = spec.find(':');
  long phase = 0;
  long ms = 0;
  if (colon == std::string::npos || !parse_long(spec.substr(0, colon).c_str(), 0, kMaxPhase, phase) ||
      !parse_long(spec.substr(colon + 1).c_str(), 0, 3'600'000, ms)) {
    usage_error("bad --phase-delay '" + spec + "', expected PHASE:MS with PHASE 0-21");
  }
  opt.delay_ms[static_cast<std::size_t>(phase)] = ms;
}

Options parse_options(int argc, char** argv) {
  enum : int { kTruth = 256, kDie, kDelay, kNoNs, kExecveat, kFlood };
  static const option long_options[] = {
      {"boots", required_argument, nullptr, 'n'},
      {"parallel", required_argument, nullptr, 'j'},
      {"truth", required_argument, nullptr, kTruth},
      {"die-before-exec", no_argument, nullptr, kDie},
      {"phase-delay", required_argument, nullptr, kDelay},
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
  while ((c = getopt_long(argc, argv, "+:n:j:h", long_options, nullptr)) != -1) {
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
      case kDelay: parse_phase_delay(optarg, opt); break;
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
  if (opt.flood > 0) return opt;
  if (optind >= argc) usage_error("missing COMMAND");
  opt.command.assign(argv + optind, argv + argc);
  opt.command.push_back(nullptr);
  return opt;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse_options(argc, argv);
  if (opt.flood > 0) return flood(opt.flood);
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
