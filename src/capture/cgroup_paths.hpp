#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "util/unique_fd.hpp"

namespace hacoboot {

// Resolves cgroup v2 ids (what bpf_get_current_cgroup_id returns: the
// inode of the cgroup's directory) to paths such as "/system.slice/app",
// through open_by_handle_at on the cgroup2 mount. Empty when there is no
// cgroup2 mount or the cgroup is gone.
class CgroupPaths {
 public:
  CgroupPaths();
  std::string path_of(std::uint64_t id);

 private:
  UniqueFd root_;
  std::string mount_point_;
  std::unordered_map<std::uint64_t, std::string> cache_;
};

}  // namespace hacoboot
