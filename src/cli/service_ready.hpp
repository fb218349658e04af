#pragma once

#include <ostream>

namespace hacoboot {

// Tells the service manager that the tool is ready (READY=1, sd_notify(3)),
// when one asked to be told: systemd's Type=notify sets NOTIFY_SOCKET, and
// `systemctl start` returns once it hears. Nothing without NOTIFY_SOCKET. A
// failure is a warning on `diagnostics`: tracing goes on, and systemd ends
// the start at its timeout.
void notify_service_ready(std::ostream& diagnostics);

}  // namespace hacoboot
