#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hacoboot {

// What stat(2) says of a file: which one it is (device, inode) and what it
// holds now (size, modification time).
struct FileVersion {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::int64_t modified_ns = 0;
  bool operator==(const FileVersion&) const = default;
  [[nodiscard]] bool same_file(const FileVersion& other) const {
    return device == other.device && inode == other.inode;
  }
};

// The file at `path` now, its links followed; nullopt when there is none.
std::optional<FileVersion> file_version(const std::string& path);
// The same of what stat(2) said.
FileVersion file_version_of(const struct stat& status);

// A uprobe is attached to a file (an inode), not to a path: when a package
// upgrade writes a new haconiwa binary and renames it over the old one, a
// probe on the old file never sees the launches of the new one. This tells
// when the path holds a file the probe should be attached to as well. Pure:
// the caller observes the path (file_version) and attaches.
class BinaryWatch {
 public:
  explicit BinaryWatch(const FileVersion& attached) { attached_.push_back(attached); }

  // What the path holds now (nullopt: nothing, between an unlink and a
  // rename). Returns the file to attach to: another one than every file
  // attached or found unusable, seen unchanged since the previous
  // observation (a file still being written changes in between).
  std::optional<FileVersion> observe(const std::optional<FileVersion>& now);
  // The same for an observation known to be of a whole file (after a
  // rename into place, or a write ended): no need to see it twice.
  std::optional<FileVersion> offer(const std::optional<FileVersion>& now);
  // Its probe is attached now.
  void attached(const FileVersion& file) { attached_.push_back(file); }
  // It has no probe (or could not be read): not offered again unless it changes.
  void unusable(const FileVersion& file) { unusable_ = file; }

  // Files the probe is attached to, the first included.
  [[nodiscard]] std::size_t files_attached() const { return attached_.size(); }

 private:
  [[nodiscard]] bool known(const FileVersion& file) const;

  std::vector<FileVersion> attached_;
  std::optional<FileVersion> unusable_;
  std::optional<FileVersion> previous_;  // the last observation
};

}  // namespace hacoboot
