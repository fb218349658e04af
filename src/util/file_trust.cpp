#include "util/file_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace hacoboot {

Expected<void> check_trust(const struct stat& status, mode_t type, TrustedOwners owners) {
  if ((status.st_mode & S_IFMT) != type) {
    return Failure{type == S_IFDIR ? "not a directory" : "not a regular file"};
  }
  const uid_t us = ::geteuid();
  const bool root_may_own = owners == TrustedOwners::kEffectiveUserOrRoot;
  const bool trusted_owner = status.st_uid == us || (root_may_own && status.st_uid == 0);
  if (!trusted_owner) {
    const std::string allowed =
        root_may_own && us != 0 ? "root or uid " + std::to_string(us) : "uid " + std::to_string(us);
    return Failure{"owned by uid " + std::to_string(status.st_uid) + ", not by " + allowed};
  }
  switch (status.st_mode & (S_IWGRP | S_IWOTH)) {
    case S_IWGRP: return Failure{"writable by its group"};
    case S_IWOTH: return Failure{"writable by others"};
    case S_IWGRP | S_IWOTH: return Failure{"writable by its group and others"};
    default: return {};
  }
}

bool owned_by_us_alone(const std::filesystem::path& path, mode_t type) {
  struct stat status {};
  return ::lstat(path.c_str(), &status) == 0 && check_trust(status, type, TrustedOwners::kEffectiveUser).has_value();
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

}  // namespace hacoboot
