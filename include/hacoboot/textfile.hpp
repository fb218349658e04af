#pragma once

#include <string>
#include <string_view>

#include "hacoboot/unique_fd.hpp"

namespace hacoboot {

// A temporary file, removed unless it was renamed into place. mkostemp
// creates it with O_CREAT | O_EXCL, so it never opens through a link planted
// at the random name.
class TemporaryFile {
 public:
  // name_template ends in XXXXXX; valid() tells whether it could be created.
  explicit TemporaryFile(std::string name_template);
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  TemporaryFile(TemporaryFile&&) = delete;
  TemporaryFile& operator=(TemporaryFile&&) = delete;
  ~TemporaryFile();

  [[nodiscard]] bool valid() const { return fd_.valid(); }
  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] bool write(std::string_view data) const;
  // Closes the file, reporting a failed close (NFS reports write errors there).
  bool close();
  // Renames it to `path`; from then on it is not removed.
  bool rename_to(const std::string& path);

 private:
  std::string name_;
  UniqueFd fd_;
};

// Replaces the file at `path` with `contents` so that a reader (node_exporter's
// textfile collector) sees the old file or the new one, never a torn one: the
// text goes to a temporary file in the same directory (`.NAME.XXXXXX`, which
// the collector ignores: it reads *.prom), is flushed to disk, then renamed
// over `path`. A symbolic link at `path` is replaced, never followed. The file
// is mode 0644: the collector runs as another user. Throws RuntimeError naming
// the path on failure, and leaves no temporary file behind.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace hacoboot
