#include "capture/binary_watch.hpp"

#include <sys/stat.h>

#include <algorithm>

namespace hacoboot {

std::optional<FileVersion> file_version(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return file_version_of(st);
}

FileVersion file_version_of(const struct stat& st) {
  constexpr std::int64_t kNsPerSecond = 1'000'000'000;
  return FileVersion{.device = st.st_dev,
                     .inode = st.st_ino,
                     .size = st.st_size,
                     .modified_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * kNsPerSecond + st.st_mtim.tv_nsec};
}

bool BinaryWatch::known(const FileVersion& file) const {
  // An attached file is one inode whatever it holds; an unusable one is
  // offered again once rewritten in place (its upgrade finished).
  return std::any_of(attached_.begin(), attached_.end(), [&](const FileVersion& f) { return f.same_file(file); }) ||
         unusable_ == file;
}

std::optional<FileVersion> BinaryWatch::offer(const std::optional<FileVersion>& now) {
  previous_ = now;
  if (!now || known(*now)) return std::nullopt;
  return now;
}

std::optional<FileVersion> BinaryWatch::observe(const std::optional<FileVersion>& now) {
  const bool settled = now && previous_ == now;
  previous_ = now;
  if (!settled || known(*now)) return std::nullopt;
  return now;
}

}  // namespace hacoboot
