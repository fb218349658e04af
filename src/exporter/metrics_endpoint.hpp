#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

// The boundary between the tool and its HTTP module. Debian's cpp-httplib is
// a shared library that brings libssl and libcrypto along, and OpenSSL reads
// its configuration as soon as it is loaded, on every start (BENCHMARKS.md).
// So the HTTP server lives in a module the tool loads only for --serve; this
// header is all the two share, plain C++ types only (the module links no
// other part of the tool).

namespace hacoboot {

// A listening scrape endpoint; stopped, its threads joined, when destroyed.
class MetricsEndpoint {
 public:
  MetricsEndpoint() = default;
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;
  MetricsEndpoint(MetricsEndpoint&&) = delete;
  MetricsEndpoint& operator=(MetricsEndpoint&&) = delete;
  virtual ~MetricsEndpoint() = default;

  [[nodiscard]] virtual std::uint16_t port() const = 0;
};

using RenderMetrics = std::function<std::string()>;

// The module's one exported function. `host` is an IP literal; port 0 asks
// the kernel for one. On failure `endpoint` stays empty and `error` says why
// (errors, not exceptions, cross the boundary).
using OpenMetricsEndpoint = void(const std::string& host, std::uint16_t port, RenderMetrics render,
                                 std::unique_ptr<MetricsEndpoint>& endpoint, std::string& error);
inline constexpr const char* kOpenMetricsEndpointSymbol = "hacoboot_open_metrics_endpoint";

// The module's file name, looked for beside the tool (build tree) and in
// the tool's library directory (installed).
inline constexpr const char* kHttpModuleName = "hacoboot-sampler-http.so";

}  // namespace hacoboot
