#include "hacoboot/cache_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace hacoboot {

bool owned_by_us_alone(const std::filesystem::path& path, mode_t type) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

void remove_superseded(const std::filesystem::path& directory, const std::string& prefix, const std::string& suffix,
                       const std::filesystem::path& keep) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(suffix) && entry.path().filename() != keep.filename()) {
      std::filesystem::remove(entry.path(), error);
    }
  }
}

std::optional<std::string> current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!std::getline(in, id) || id.empty()) return std::nullopt;
  return id;
}

}  // namespace hacoboot
