#include "capture/cgroup_paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hacoboot {
namespace {

constexpr std::size_t kMaxCached = 4096;
constexpr int kFileIdKernfs = 0xfe;  // kernfs file handles carry the cgroup id

// The first cgroup2 mount, from /proc/self/mountinfo (field 5 is the mount
// point; the filesystem type follows the " - " separator).
std::string cgroup2_mount_point() {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    const auto separator = line.find(" - ");
    if (separator == std::string::npos) continue;
    std::istringstream after(line.substr(separator + 3));
    std::string type;
    after >> type;
    if (type != "cgroup2") continue;
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 5 && fields >> field; ++i) {
    }
    return field;
  }
  return {};
}

}  // namespace

CgroupPaths::CgroupPaths() : mount_point_(cgroup2_mount_point()) {
  if (!mount_point_.empty()) root_.reset(::open(mount_point_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

std::string CgroupPaths::path_of(std::uint64_t id) {
  if (!root_.valid() || id == 0) return {};
  if (const auto it = cache_.find(id); it != cache_.end()) return it->second;

  // file_handle ends in a flexible array: give it room for the 8-byte id.
  alignas(file_handle) std::array<unsigned char, sizeof(file_handle) + sizeof(id)> storage{};
  auto* handle = reinterpret_cast<file_handle*>(storage.data());
  handle->handle_bytes = sizeof(id);
  handle->handle_type = kFileIdKernfs;
  std::memcpy(storage.data() + sizeof(file_handle), &id, sizeof(id));
  const UniqueFd dir(::open_by_handle_at(root_.get(), handle, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return {};

  std::array<char, 4096> target{};
  const std::string link = "/proc/self/fd/" + std::to_string(dir.get());
  const auto length = ::readlink(link.c_str(), target.data(), target.size() - 1);
  if (length <= 0) return {};
  std::string path(target.data(), static_cast<std::size_t>(length));
  if (path.starts_with(mount_point_)) path.erase(0, mount_point_.size());
  if (path.empty()) path = "/";

  if (cache_.size() >= kMaxCached) cache_.clear();
  cache_.emplace(id, path);
  return path;
}

}  // namespace hacoboot
