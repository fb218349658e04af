#include "cli/stop_signals.hpp"

#include <unistd.h>

#include <cerrno>

#include "util/atomic_file.hpp"

namespace hacoboot {
namespace {

constexpr std::array<int, 3> kStopSignals{SIGINT, SIGTERM, SIGHUP};

volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_child_group = 0;
volatile std::sig_atomic_t g_sighup_reopens = 0;
volatile std::sig_atomic_t g_reopen_requested = 0;
volatile std::sig_atomic_t g_handling_thread = 0;

// Only async-signal-safe calls. Runs with every stop signal blocked (sa_mask),
// so a second one cannot nest in the first before it is recorded.
extern "C" void on_stop_signal(int signal) {
  const int saved_errno = errno;
  if (::gettid() != g_handling_thread) {
    // The kernel gives a process-wide signal to any thread that does not
    // block it, such as one it picked while the handling thread had it
    // blocked: handed over, it waits there for its turn.
    ::tgkill(::getpid(), g_handling_thread, signal);
  } else if (signal == SIGHUP && g_sighup_reopens != 0) {
    g_reopen_requested = 1;
  } else if (g_stop_signal == 0) {
    g_stop_signal = signal;
  } else {
    if (g_child_group > 0) ::kill(-static_cast<pid_t>(g_child_group), SIGTERM);
    remove_temporary_files();  // an output being written is left as it was
    ::_exit(128 + signal);
  }
  errno = saved_errno;
}

extern "C" void on_child_exit(int /*signal*/) {}

// The handler of each of kSignals (stop_signals.hpp says why).
using SignalHandler = void (*)(int);
SignalHandler handler_of(int signal) {
  if (signal == SIGPIPE) return SIG_IGN;
  if (signal == SIGCHLD) return on_child_exit;
  return on_stop_signal;
}

}  // namespace

StopSignals::StopSignals(bool sighup_reopens) {
  g_stop_signal = 0;
  g_reopen_requested = 0;
  g_sighup_reopens = sighup_reopens ? 1 : 0;
  g_handling_thread = ::gettid();
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (const int signal : kStopSignals) sigaddset(&stop_signals, signal);
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    const int signal = kSignals.at(i);
    struct sigaction action {};
    action.sa_handler = handler_of(signal);
    if (signal == SIGCHLD) action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    action.sa_mask = stop_signals;
    ::sigaction(signal, &action, &previous_.at(i));
  }
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals.at(i), &previous_.at(i), nullptr);
  g_child_group = 0;
}

bool StopSignals::received() {
  return g_stop_signal != 0;
}

bool StopSignals::take_reopen_request() {
  if (g_reopen_requested == 0) return false;
  g_reopen_requested = 0;
  return true;
}

void StopSignals::set_child_group(pid_t group) {
  g_child_group = group;
}

void StopSignals::restore_defaults() {
  for (const int signal : kSignals) (void)::signal(signal, SIG_DFL);
}

}  // namespace hacoboot
