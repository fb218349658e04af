#include "hacoboot/stop_signals.hpp"

#include <unistd.h>

namespace hacoboot {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_child_group = 0;
volatile std::sig_atomic_t g_sighup_reopens = 0;
volatile std::sig_atomic_t g_reopen_requested = 0;

extern "C" void on_stop_signal(int signal) {
  if (signal == SIGHUP && g_sighup_reopens != 0) {
    g_reopen_requested = 1;
    return;
  }
  if (g_stop_signal == 0) {
    g_stop_signal = signal;
    return;
  }
  // Only async-signal-safe calls from here on.
  if (g_child_group > 0) ::kill(-static_cast<pid_t>(g_child_group), SIGTERM);
  ::_exit(128 + signal);
}

extern "C" void on_child_exit(int /*signal*/) {}

}  // namespace

StopSignals::StopSignals(bool sighup_reopens) {
  g_stop_signal = 0;
  g_reopen_requested = 0;
  g_sighup_reopens = sighup_reopens ? 1 : 0;
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    const int signal = kSignals.at(i);
    struct sigaction action {};
    action.sa_handler = signal == SIGPIPE ? SIG_IGN : signal == SIGCHLD ? on_child_exit : on_stop_signal;
    if (signal == SIGCHLD) action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&action.sa_mask);
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

}  // namespace hacoboot
