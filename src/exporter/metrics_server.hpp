#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exporter/listen_address.hpp"
#include "exporter/metrics_endpoint.hpp"

namespace hacoboot {

// A Prometheus scrape endpoint on its own threads: GET /metrics answers with
// what `render` returns (text format 0.0.4), GET / with a link to it, anything
// else 404. `render` runs on the server's threads, one request at a time or
// several at once: it must lock whatever it reads.
//
// The server comes from the HTTP module (metrics_endpoint.hpp), loaded by the
// constructor. Listening when the constructor returns, so that a port in use
// fails early, but answering only from serve(): until then connections wait
// in the kernel's listen queue. The destructor stops the server and joins its
// threads. The server's threads block every signal, so that the stop signals
// keep reaching the thread that traces.
class MetricsServer {
 public:
  using Render = RenderMetrics;

  // Throws RuntimeError naming the address when it cannot listen there, or
  // the places looked in when the module is missing.
  MetricsServer(const ListenAddress& address, Render render);
  // With the module at `module` (tests run from another directory).
  MetricsServer(const ListenAddress& address, Render render, const std::filesystem::path& module);
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  MetricsServer(MetricsServer&&) = delete;
  MetricsServer& operator=(MetricsServer&&) = delete;
  ~MetricsServer();

  // The port listened on: the kernel's choice when asked for port 0.
  [[nodiscard]] std::uint16_t port() const { return endpoint_->port(); }
  // Answers from now on, first the connections waiting.
  void serve() { endpoint_->serve(); }

 private:
  struct ModuleCloser {
    void operator()(void* handle) const;
  };
  std::unique_ptr<void, ModuleCloser> module_;
  std::unique_ptr<MetricsEndpoint> endpoint_;  // after module_: destroyed first
};

// Where the tool looks for the HTTP module: beside its executable, then in
// its library directory relative to it. Existing or not, in that order.
std::vector<std::filesystem::path> http_module_candidates();

}  // namespace hacoboot
