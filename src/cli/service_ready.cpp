#include "cli/service_ready.hpp"

#include <fmt/format.h>
#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <cstring>

namespace hacoboot {

void notify_service_ready(std::ostream& diagnostics) {
  // NOTIFY_SOCKET stays set (unset_environment 0): unsetting it now would
  // race the HTTP server's threads, and the unit ignores what children send
  // (NotifyAccess=main).
  const int notified = ::sd_notify(0, "READY=1");
  if (notified >= 0) return;
  const char* socket = std::getenv("NOTIFY_SOCKET");
  diagnostics << fmt::format(
                     "hacoboot-sampler: warning: cannot tell the service manager at {} that tracing started: {}\n",
                     socket != nullptr ? socket : "(none)", std::strerror(-notified))
              << std::flush;
}

}  // namespace hacoboot
