#include "exporter/metrics_server.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "util/errors.hpp"
#include "util/file_trust.hpp"
#include "util/unique_fd.hpp"

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

// The first candidate there is, whatever it is: one the tool must not load
// is refused, not passed over for the next.
std::filesystem::path find_http_module() {
  const auto candidates = http_module_candidates();
  std::string looked_in;
  for (const auto& candidate : candidates) {
    std::error_code error;
    if (std::filesystem::exists(std::filesystem::symlink_status(candidate, error))) return candidate;
    looked_in += (looked_in.empty() ? "" : ", ") + candidate.string();
  }
  throw RuntimeError(std::string("--serve needs the HTTP module ") + kHttpModuleName +
                     ", installed with the tool (looked in " +
                     (looked_in.empty() ? "nothing: /proc/self/exe is unreadable" : looked_in) + ")");
}

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& reason) {
  throw RuntimeError("refusing to load the HTTP module: " + path.string() + ": " + reason +
                     " (it runs as the tool: it must be a regular file, owned by root or the tool's user and "
                     "writable by its owner alone, in a directory of the same kind)");
}

void check_trusted(int fd, const std::filesystem::path& path, mode_t type) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) refuse(path, std::strerror(errno));
  if (const auto trusted = check_trust(status, type, TrustedOwners::kEffectiveUserOrRoot); !trusted) {
    refuse(path, trusted.error());
  }
}

// The module, opened for loading: a regular file, not a symbolic link, in a
// directory, both owned by root or the effective user and writable by their
// owner alone; checked on the descriptor, so that what was checked is what
// gets loaded. The directory's own path may go through symbolic links.
UniqueFd open_trusted_module(const std::filesystem::path& module) {
  const auto directory = module.parent_path().empty() ? std::filesystem::path(".") : module.parent_path();
  const UniqueFd directory_fd(::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!directory_fd.valid()) {
    throw RuntimeError("loading the HTTP module " + module.string() + ": " + std::strerror(errno));
  }
  check_trusted(directory_fd.get(), directory, S_IFDIR);
  // O_NONBLOCK: a FIFO planted there must not hang the open.
  UniqueFd fd(::openat(directory_fd.get(), module.filename().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP) refuse(module, "a symbolic link");
    throw RuntimeError("loading the HTTP module " + module.string() + ": " + std::strerror(errno));
  }
  check_trusted(fd.get(), module, S_IFREG);
  return fd;
}

}  // namespace

MetricsServer::MetricsServer(const ListenAddress& address, Render render)
    : MetricsServer(address, std::move(render), find_http_module()) {}

MetricsServer::MetricsServer(const ListenAddress& address, Render render, const std::filesystem::path& module) {
  const auto fd = open_trusted_module(module);
  // Kept loaded until exit (NODELETE): libstdc++ may hold thread-exit
  // handlers from the module's threads. Loaded through the descriptor
  // checked, not the path, which may have changed since.
  const auto opened = "/proc/self/fd/" + std::to_string(fd.get());
  module_.reset(::dlopen(opened.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (!module_) throw RuntimeError("loading the HTTP module " + module.string() + ": " + std::string(::dlerror()));
  auto* open = reinterpret_cast<OpenMetricsEndpoint*>(::dlsym(module_.get(), kOpenMetricsEndpointSymbol));
  if (open == nullptr) throw RuntimeError(module.string() + " is not hacoboot-sampler's HTTP module");
  auto endpoint = open(address.host, address.port, std::move(render));
  if (!endpoint) throw RuntimeError(to_string(address) + ": cannot listen: " + endpoint.error());
  endpoint_ = std::move(*endpoint);
}

MetricsServer::~MetricsServer() = default;

}  // namespace hacoboot
