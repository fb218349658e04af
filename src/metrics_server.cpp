#include "hacoboot/metrics_server.hpp"

#include <dlfcn.h>

#include <system_error>

#include "hacoboot/errors.hpp"

namespace hacoboot {

void MetricsServer::ModuleCloser::operator()(void* handle) const {
  ::dlclose(handle);
}

std::vector<std::filesystem::path> http_module_candidates() {
  std::error_code error;
  const auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  const auto directory = executable.parent_path();
  return {directory / kHttpModuleName, (directory / HACOBOOT_MODULE_DIR_FROM_BIN / kHttpModuleName).lexically_normal()};
}

namespace {

std::filesystem::path find_http_module() {
  const auto candidates = http_module_candidates();
  std::string looked_in;
  for (const auto& candidate : candidates) {
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error)) return candidate;
    looked_in += (looked_in.empty() ? "" : ", ") + candidate.string();
  }
  throw RuntimeError(std::string("--serve needs the HTTP module ") + kHttpModuleName +
                     ", installed with the tool (looked in " +
                     (looked_in.empty() ? "nothing: /proc/self/exe is unreadable" : looked_in) + ")");
}

}  // namespace

MetricsServer::MetricsServer(const ListenAddress& address, Render render)
    : MetricsServer(address, std::move(render), find_http_module()) {}

MetricsServer::MetricsServer(const ListenAddress& address, Render render, const std::filesystem::path& module) {
  // Kept loaded until exit (NODELETE): libstdc++ may hold thread-exit
  // handlers from the module's threads.
  module_.reset(::dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (!module_) throw RuntimeError("loading the HTTP module: " + std::string(::dlerror()));
  auto* open = reinterpret_cast<OpenMetricsEndpoint*>(::dlsym(module_.get(), kOpenMetricsEndpointSymbol));
  if (open == nullptr) throw RuntimeError(module.string() + " is not hacoboot-sampler's HTTP module");
  std::string error;
  open(address.host, address.port, std::move(render), endpoint_, error);
  if (!endpoint_) throw RuntimeError(to_string(address) + ": cannot listen: " + error);
}

MetricsServer::~MetricsServer() = default;

}  // namespace hacoboot
