// hacoboot-demo-app: the "service" a demo container runs. It becomes ready by
// calling listen() exactly once, from the process or thread chosen with
// --listen-from, so the tracer can be tested on each way a real service may
// get there. Ground truth goes to $HACOBOOT_TRUTH under $HACOBOOT_HPID.
#include "truth.hpp"
#include "util/unique_fd.hpp"

#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>

namespace {

using hacoboot::monotonic_ns;
using hacoboot::TruthFile;
using hacoboot::UniqueFd;

enum class ListenFrom { kInit, kThread, kChild, kGrandchild };

struct Options {
  ListenFrom from = ListenFrom::kInit;
  long hold_ms = 50;
  long workers = 0;  // idle threads started before listening
};

struct Context {
  Options opt;
  TruthFile truth;
  long hpid = 0;
};

int fail(const char* what) {
  std::fprintf(stderr, "hacoboot-demo-app: %s: %s\n", what, std::strerror(errno));
  return 1;
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "hacoboot-demo-app: %s\n", message.c_str());
  std::exit(1);
}

bool parse_long(const char* text, long& out) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (*text == '\0' || errno != 0 || *end != '\0' || value < 0) return false;
  out = value;
  return true;
}

Options parse_options(int argc, char** argv) {
  static const option long_options[] = {
      {"listen-from", required_argument, nullptr, 'l'},
      {"hold-ms", required_argument, nullptr, 'm'},
      {"workers", required_argument, nullptr, 'w'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  Options opt;
  int c = 0;
  while ((c = getopt_long(argc, argv, ":h", long_options, nullptr)) != -1) {
    switch (c) {
      case 'l': {
        const std::string arg = optarg;
        if (arg == "init")
          opt.from = ListenFrom::kInit;
        else if (arg == "thread")
          opt.from = ListenFrom::kThread;
        else if (arg == "child")
          opt.from = ListenFrom::kChild;
        else if (arg == "grandchild")
          opt.from = ListenFrom::kGrandchild;
        else
          usage_error("--listen-from must be init, thread, child or grandchild");
        break;
      }
      case 'm':
        if (!parse_long(optarg, opt.hold_ms)) usage_error("bad --hold-ms value");
        break;
      case 'w':
        if (!parse_long(optarg, opt.workers) || opt.workers > 1000) usage_error("bad --workers value (0-1000)");
        break;
      case 'h':
        std::puts("usage: hacoboot-demo-app [--listen-from init|thread|child|grandchild] [--hold-ms MS] [--workers N]");
        std::exit(0);
      case ':': usage_error(std::string("option ") + argv[optind - 1] + " needs an argument");
      default:  // optopt is 0 for an unknown long option
        usage_error("unknown option " +
                    (optopt != 0 ? std::string("-") + static_cast<char>(optopt) : std::string(argv[optind - 1])));
    }
  }
  if (optind < argc) usage_error(std::string("unexpected argument ") + argv[optind]);
  return opt;
}

// The one successful listen() of the run, timed as tightly as possible.
int listen_and_hold(const Context& ctx) {
  const UniqueFd sock(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) return fail("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // ephemeral, so parallel boots never collide
  if (bind(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return fail("bind");

  const auto lo = monotonic_ns();
  const int rc = listen(sock.get(), SOMAXCONN);
  const auto hi = monotonic_ns();
  if (rc != 0) return fail("listen");
  ctx.truth.record(ctx.hpid, "listen_lo", lo);
  ctx.truth.record(ctx.hpid, "listen_hi", hi);
  ctx.truth.record(ctx.hpid, "listen_pid", getpid());

  const long ms = ctx.opt.hold_ms;
  timespec left{ms / 1000, (ms % 1000) * 1'000'000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  return 0;
}

// Parents outlive their children so the container's init exits last.
int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return fail("waitpid");
  }
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "hacoboot-demo-app: child killed by signal %d\n", WTERMSIG(status));
    return 1;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

// _exit in forked children: nothing of the parent's (stdio buffers, the truth
// fd's owner) must be flushed or closed twice.
int listen_in_child(const Context& ctx, int depth) {
  const pid_t pid = fork();
  if (pid < 0) return fail("fork");
  if (pid == 0) _exit(depth > 1 ? listen_in_child(ctx, depth - 1) : listen_and_hold(ctx));
  return wait_for(pid);
}

int listen_in_thread(const Context& ctx) {
  int rc = 1;
  try {
    std::thread listener([&] { rc = listen_and_hold(ctx); });
    listener.join();
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "hacoboot-demo-app: starting thread: %s\n", e.what());
    return 1;
  }
  return rc;
}

// A worker pool started before the service listens, as Puma's or a JVM's:
// threads of the boot that the tracer accounts until listen. They block
// until the process exits.
bool start_workers(long count) {
  try {
    for (long i = 0; i < count; ++i) std::thread([] { pause(); }).detach();
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "hacoboot-demo-app: starting worker: %s\n", e.what());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const auto exec_hi = monotonic_ns();  // must stay first: bounds the exec from above

  Context ctx;
  ctx.opt = parse_options(argc, argv);
  if (const char* truth_path = std::getenv("HACOBOOT_TRUTH"); truth_path != nullptr) {
    const char* hpid = std::getenv("HACOBOOT_HPID");
    if (hpid == nullptr || !parse_long(hpid, ctx.hpid) || ctx.hpid == 0) {
      std::fprintf(stderr, "hacoboot-demo-app: HACOBOOT_TRUTH is set but HACOBOOT_HPID is missing or invalid\n");
      return 1;
    }
    ctx.truth = TruthFile(truth_path);
    if (!ctx.truth.is_open()) return fail(truth_path);
    ctx.truth.record(ctx.hpid, "exec_hi", exec_hi);
  }

  if (!start_workers(ctx.opt.workers)) return 1;
  switch (ctx.opt.from) {
    case ListenFrom::kInit: return listen_and_hold(ctx);
    case ListenFrom::kThread: return listen_in_thread(ctx);
    case ListenFrom::kChild: return listen_in_child(ctx, 1);
    case ListenFrom::kGrandchild: return listen_in_child(ctx, 2);
  }
  return 1;
}
