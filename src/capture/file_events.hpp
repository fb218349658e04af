#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/expected.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {

// Changes to files and directories as they happen (inotify), for a reader
// that waits on fd() with its other descriptors: the haconiwa binary's
// directory (a new file renamed or written under its name) and each file
// the probe is on (written in place).
class FileEvents {
 public:
  // A watch's identity; also what changes name it by.
  using Watch = int;
  struct Change {
    Watch watch = -1;        // -1: the queue overflowed (changes were lost: look at everything)
    std::uint32_t mask = 0;  // IN_* of <sys/inotify.h>
    std::string name;        // the entry's name, for a directory's change
  };

  FileEvents();  // throws RuntimeError
  // Entries renamed into `directory`, written and closed, or changed in mode.
  Watch watch_directory(const std::string& directory);
  // The open file `fd` written to, closed after writing, changed in mode; or
  // why not (inotify's watches used up): the first file's is fatal, a new
  // one's a warning.
  Expected<Watch> watch_file(int fd);

  // Readable when changes wait.
  [[nodiscard]] int fd() const { return fd_.get(); }
  // The changes since the last call, without waiting.
  std::vector<Change> read();

 private:
  UniqueFd fd_;
};

}  // namespace hacoboot
