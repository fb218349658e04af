#include "util/file_trust.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

namespace hacoboot {
namespace {

// The kernel's own bound on the symbolic links one path may go through.
constexpr int kMaxSymbolicLinks = 40;

// A directory on the way, and the path it was reached by, for messages.
struct WalkedDirectory {
  UniqueFd fd;
  struct stat status {};
  std::string shown;
};

std::string joined(const std::string& directory, const std::string& name) {
  return directory == "/" ? "/" + name : directory + "/" + name;
}

// The names of `path`, in order, "." and empty ones (from "//") left out.
void push_components(const std::filesystem::path& path, std::deque<std::string>& names) {
  std::vector<std::string> ahead;
  for (const auto& part : path.relative_path()) {
    if (!part.empty() && part != ".") ahead.push_back(part.string());
  }
  names.insert(names.begin(), ahead.begin(), ahead.end());
}

// A directory others may write to is trusted only when sticky: then only
// an entry's owner (or the directory's) can rename or remove it.
Expected<void> check_directory_trust(struct stat status, TrustedOwners owners) {
  if ((status.st_mode & S_ISVTX) != 0) status.st_mode &= ~static_cast<mode_t>(S_IWGRP | S_IWOTH);
  return check_trust(status, S_IFDIR, owners);
}

// Whether `entry` (its lstat) may be taken from `directory`: from a sticky
// one that others may write to, only an entry that `owners` own.
Expected<void> check_entry_of(const struct stat& directory, const struct stat& entry, TrustedOwners owners) {
  if ((directory.st_mode & (S_IWGRP | S_IWOTH)) == 0) return {};
  struct stat as_file = entry;
  as_file.st_mode = (entry.st_mode & ~S_IFMT) | S_IFREG;
  as_file.st_mode &= ~static_cast<mode_t>(S_IWGRP | S_IWOTH);
  return check_trust(as_file, S_IFREG, owners);
}

Expected<WalkedDirectory> open_directory(int at, const std::string& name, const std::string& shown,
                                         TrustedOwners owners) {
  WalkedDirectory directory{.fd = UniqueFd(::openat(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)),
                            .shown = shown};
  if (!directory.fd.valid() || ::fstat(directory.fd.get(), &directory.status) != 0) {
    return Failure{shown + ": " + std::strerror(errno)};
  }
  if (auto trusted = check_directory_trust(directory.status, owners); !trusted) {
    return Failure{shown + ": " + trusted.error()};
  }
  return directory;
}

Expected<UniqueFd> open_final_file(const WalkedDirectory& directory, const std::string& name, const std::string& shown,
                                   TrustedOwners owners) {
  // O_NONBLOCK: a FIFO at the path must not hang the open (then refused).
  UniqueFd fd(::openat(directory.fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat status {};
  if (!fd.valid() || ::fstat(fd.get(), &status) != 0) return Failure{shown + ": " + std::strerror(errno)};
  if (auto trusted = check_trust(status, S_IFREG, owners); !trusted) return Failure{shown + ": " + trusted.error()};
  return fd;
}

}  // namespace

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

Expected<UniqueFd> open_trusted_file(const std::filesystem::path& path, TrustedOwners owners) {
  std::deque<std::string> names;
  // From the root, a relative path from the working directory's: its ".."
  // may lead above it.
  push_components(path.is_absolute() ? path : std::filesystem::current_path() / path, names);
  std::vector<WalkedDirectory> walked;
  const auto from_root = [&]() -> Expected<void> {
    auto root = open_directory(AT_FDCWD, "/", "/", owners);
    if (!root) return Failure{root.error()};
    walked.clear();
    walked.push_back(std::move(*root));
    return {};
  };
  if (auto started = from_root(); !started) return Failure{started.error()};
  for (int links = 0; !names.empty();) {
    const auto name = std::move(names.front());
    names.pop_front();
    if (name == "..") {
      if (walked.size() > 1) walked.pop_back();
      continue;
    }
    const auto& directory = walked.back();
    const auto shown = joined(directory.shown, name);
    struct stat entry {};
    if (::fstatat(directory.fd.get(), name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0) {
      return Failure{shown + ": " + std::strerror(errno)};
    }
    if (auto taken = check_entry_of(directory.status, entry, owners); !taken) {
      return Failure{shown + ": in " + directory.shown + ", which others may write to, and " + taken.error()};
    }
    if (S_ISLNK(entry.st_mode)) {
      if (++links > kMaxSymbolicLinks) return Failure{shown + ": " + std::strerror(ELOOP)};
      std::vector<char> target(static_cast<std::size_t>(entry.st_size) + 1);
      const auto length = ::readlinkat(directory.fd.get(), name.c_str(), target.data(), target.size());
      if (length < 0 || static_cast<std::size_t>(length) >= target.size()) {
        return Failure{shown + ": unreadable symbolic link"};
      }
      const std::filesystem::path followed(std::string(target.data(), static_cast<std::size_t>(length)));
      if (followed.is_absolute()) {
        if (auto restarted = from_root(); !restarted) return Failure{restarted.error()};
      }
      push_components(followed, names);
      continue;
    }
    if (names.empty()) return open_final_file(directory, name, shown, owners);
    auto next = open_directory(directory.fd.get(), name, shown, owners);
    if (!next) return Failure{next.error()};
    walked.push_back(std::move(*next));
  }
  return Failure{path.string() + ": not a regular file"};
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
