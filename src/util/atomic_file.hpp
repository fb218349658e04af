#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "util/expected.hpp"
#include "util/unique_fd.hpp"

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
  // The failures say why (strerror), the caller says what it was writing.
  [[nodiscard]] Expected<void> write(std::string_view data) const;
  // Closes the file, reporting a failed close (NFS reports write errors there).
  Expected<void> close();
  // Renames it to `path`; from then on it is not removed.
  Expected<void> rename_to(const std::string& path);

 private:
  std::string name_;
  UniqueFd fd_;
  int listed_ = -1;  // its entry among those remove_temporary_files() removes; -1: none
};

// Removes every TemporaryFile not yet renamed into place, for a process that
// ends with _exit (a second stop signal), which runs no destructor: an output
// half written must not stay beside the file it was to replace.
// Async-signal-safe.
void remove_temporary_files() noexcept;

// What a file of this type is, for messages: "a directory", "a FIFO"...; ""
// for a regular file.
std::string file_type_name(mode_t mode);

// The bytes the temporary file's name (`.NAME.XXXXXX`) adds to NAME's.
inline constexpr std::size_t kTemporaryNameExtra = 8;

// A new file that replaces the one at `path` only once complete, so that a
// reader sees the old file or the new one, never a torn one, and a full disk
// or a crash leaves the old file as it was: the text goes to a temporary file
// in the same directory (`.NAME.XXXXXX`), which is flushed to disk, then
// renamed over `path`. Only a regular file (or nothing) at `path` is replaced:
// a device, FIFO, socket, directory or symbolic link there is refused. The
// temporary file is removed unless committed.
class ReplacementFile {
 public:
  // Throws RuntimeError naming `path` when the temporary file cannot be created.
  explicit ReplacementFile(std::string path);

  [[nodiscard]] int fd() const { return temporary_.fd(); }
  // Throws RuntimeError naming `path`.
  void write(std::string_view data) const;
  // Flushes the file to disk and renames it over `path`. It takes the
  // permissions and owner of the file it replaces (who may read a file stays
  // as the user set it), or `mode` when there is none. Throws RuntimeError
  // naming `path`.
  void commit(mode_t mode);

 private:
  std::string path_;
  TemporaryFile temporary_;
};

// Replaces the file at `path` with `contents` (see ReplacementFile) so that a
// reader (node_exporter's textfile collector, which reads *.prom and so
// ignores the temporary file) never sees a torn one. A new file is mode 0644:
// the collector runs as another user. On failure, says why, naming the path,
// and leaves no temporary file behind.
Expected<void> replace_file(const std::string& path, std::string_view contents);

// replace_file() for a file whose failure ends the run: throws RuntimeError.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace hacoboot
