#include "cli/service_ready.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace hacoboot {
namespace {

// libsystemd's sd_notify(3).
using SdNotify = int(int unset_environment, const char* state);

void warn(std::ostream& diagnostics, const char* socket, const std::string& why) {
  diagnostics << fmt::format(
                     "hacoboot-sampler: warning: cannot tell the service manager at {} that tracing started: {}\n",
                     socket, why)
              << std::flush;
}

}  // namespace

void notify_service_ready(std::ostream& diagnostics) {
  // Loaded only when a service manager asked: libsystemd and what it links
  // would otherwise cost every start (BENCHMARKS.md, launch -> probes live).
  const char* socket = std::getenv("NOTIFY_SOCKET");
  if (socket == nullptr) return;
  // Kept loaded: the process ends long before it would matter.
  void* libsystemd = ::dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (libsystemd == nullptr) {
    warn(diagnostics, socket, ::dlerror());
    return;
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): dlsym's void* is the function
  auto* sd_notify = reinterpret_cast<SdNotify*>(::dlsym(libsystemd, "sd_notify"));
  if (sd_notify == nullptr) {
    warn(diagnostics, socket, "libsystemd.so.0 has no sd_notify");
    return;
  }
  // NOTIFY_SOCKET stays set (unset_environment 0): unsetting it now would
  // race the HTTP server's threads, and the unit ignores what children send
  // (NotifyAccess=main).
  const int notified = sd_notify(0, "READY=1");
  if (notified < 0) warn(diagnostics, socket, std::strerror(-notified));
}

}  // namespace hacoboot
