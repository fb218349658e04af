#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "hacoboot/listen_address.hpp"

namespace httplib {
class Server;
}

namespace hacoboot {

// A Prometheus scrape endpoint on its own thread: GET /metrics answers with
// what `render` returns (text format 0.0.4), GET / with a link to it, anything
// else 404. `render` runs on the server's threads, one request at a time or
// several at once: it must lock whatever it reads.
//
// Listening when the constructor returns; the destructor stops the server and
// joins its threads. The server's threads block every signal, so that the
// stop signals keep reaching the thread that traces.
class MetricsServer {
 public:
  using Render = std::function<std::string()>;

  // Throws RuntimeError naming the address when it cannot listen there.
  MetricsServer(const ListenAddress& address, Render render);
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  MetricsServer(MetricsServer&&) = delete;
  MetricsServer& operator=(MetricsServer&&) = delete;
  ~MetricsServer();

  // The port listened on: the kernel's choice when asked for port 0.
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::uint16_t port_ = 0;
  std::atomic<bool> accept_loop_ended_ = false;
  std::thread thread_;
};

}  // namespace hacoboot
