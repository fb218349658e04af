#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "util/expected.hpp"
#include "util/interface.hpp"

// The boundary between the tool and its HTTP module. Debian's cpp-httplib is
// a shared library that brings libssl and libcrypto along, and OpenSSL reads
// its configuration as soon as it is loaded, on every start (BENCHMARKS.md).
// So the HTTP server lives in a module the tool loads only for --serve; this
// header is all the two share, plain C++ types and header-only helpers (the
// module links no other part of the tool).

namespace hacoboot {

// A listening scrape endpoint, answering once served; stopped, its threads
// joined, when destroyed.
class MetricsEndpoint : public Interface {
 public:
  [[nodiscard]] virtual std::uint16_t port() const = 0;
  // Answers from now on: connections made before waited in the kernel's
  // listen queue. Once; again does nothing.
  virtual void serve() = 0;
};

using RenderMetrics = std::function<std::string()>;

// The module's one exported function: an endpoint listening, not yet
// served. `host` is an IP literal; port 0 asks the kernel for one. Fails with
// why it cannot listen (errors, not exceptions, cross the boundary).
using OpenedEndpoint = Expected<std::unique_ptr<MetricsEndpoint>>;
using OpenMetricsEndpoint = OpenedEndpoint(const std::string& host, std::uint16_t port, RenderMetrics render);
inline constexpr const char* kOpenMetricsEndpointSymbol = "hacoboot_open_metrics_endpoint";

// The module's file name, looked for beside the tool (build tree) and in
// the tool's library directory (installed).
inline constexpr const char* kHttpModuleName = "hacoboot-sampler-http.so";

}  // namespace hacoboot
