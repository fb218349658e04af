#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/binary_watch.hpp"
#include "capture/usdt_probe.hpp"
#include "util/expected.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {

// The haconiwa binary the probe goes to, opened once. Its notes are read
// from this descriptor and the probe is attached through it
// (/proc/self/fd/N): both concern the one file opened, whatever its path
// names a moment later (an upgrade renaming another file there, a symbolic
// link swapped). A root tool writes breakpoints into every process that
// maps the file: only a file that no one but root or the tool's user can
// change is taken (docs/security.md).
class HaconiwaFile {
 public:
  // The file at `path` (--haconiwa, resolved), refused (why, in words)
  // unless it and every directory on the way are trusted (open_trusted_file)
  // and it has the phase probe. A run cannot start without it (the caller
  // throws UsageError); a new file found mid-run is a warning.
  static Expected<HaconiwaFile> open_path(const std::string& path);
  // The file process `pid` runs (/proc/PID/exe, --pid): the file itself is
  // checked, its path being the process's, maybe in another mount namespace.
  static Expected<HaconiwaFile> open_process_exe(std::uint32_t pid);

  // The path the kernel resolves to this file: /proc/self/fd/N.
  [[nodiscard]] std::string attach_path() const;
  // The file as the user named it, for messages (not escaped).
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const FileVersion& version() const { return version_; }
  [[nodiscard]] const std::vector<UsdtProbe>& phase_sites() const { return phase_sites_; }
  [[nodiscard]] int fd() const { return fd_.get(); }

  // The file as it is now, after writes to it (same inode): its trust and
  // notes checked again as at the open, or why it is refused now (its
  // phase sites are then those read before).
  Expected<void> read_again();
  // Whether its size or modification time changed since it was read.
  [[nodiscard]] bool changed() const;
  // Whether it is still trusted (its owner or mode may have changed), or why not.
  [[nodiscard]] Expected<void> still_trusted() const;

 private:
  HaconiwaFile(UniqueFd fd, std::string name);
  static Expected<HaconiwaFile> read(UniqueFd fd, std::string name);

  UniqueFd fd_;
  std::string name_;
  FileVersion version_;
  std::vector<UsdtProbe> phase_sites_;
};

}  // namespace hacoboot
