#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "capture/binary_watch.hpp"
#include "capture/file_events.hpp"
#include "capture/haconiwa_file.hpp"
#include "capture/tracer.hpp"

namespace hacoboot {

// Follows the haconiwa binary across upgrades for a tracer that runs for
// days. A uprobe is on a file, not a path:
// - an upgrade renames a new file over the old one: the new one gets the
//   probe as well, as soon as the rename is seen (inotify on the directory);
//   a launch of it that starts before is caught at its exec by the kernel
//   side and held until the probe is on (Tracer::take_unprobed_execs). The
//   old file's probe stays for the processes that still run it;
// - an upgrade rewrites the file in place (same inode): its sites move, so
//   its probe is detached at the first write, and attached again once the
//   file is closed, from its new notes.
// A check every kCheckInterval catches what inotify would have missed.
class HaconiwaUpgrades {
 public:
  static constexpr auto kCheckInterval = std::chrono::seconds(1);
  // More files than this attached means an upgrade loop, not upgrades.
  static constexpr std::size_t kMaxFiles = 16;

  // `path`: the binary as --haconiwa named it, resolved; `first`, the file
  // opened there, which the tracer attaches to first (PhaseProbeId 0). Says
  // what it does on `diagnostics` (warnings always, the rest unless quiet).
  HaconiwaUpgrades(std::string path, HaconiwaFile first, bool quiet, std::ostream& diagnostics);

  [[nodiscard]] const HaconiwaFile& first() const { return files_.front().file; }
  // Where the kernel side catches execs of a new file (Tracer::Config).
  [[nodiscard]] std::optional<WatchedHaconiwaPath> watched_path() const;
  // Once the tracer is live with the first file's probe.
  void started(Tracer& tracer) const;
  // Readable when the path or a file changed: wait on it with the tracer's.
  [[nodiscard]] int fd() const { return events_.fd(); }
  // Follows what changed since the last call, and the kernel side's catches.
  void check(Tracer& tracer, std::chrono::steady_clock::time_point now);
  // Tracing ends: the kernel side holds no more new files' execs, and those
  // it held are continued (no probe is attached: nothing is read any more).
  static void release_holds(Tracer& tracer);

  // Files the probe is attached to, the first included.
  [[nodiscard]] std::uint64_t files_attached() const;
  // New files seen at the path since the start, attached or not.
  [[nodiscard]] std::uint64_t replacements() const { return replacements_; }

 private:
  struct Attached {
    HaconiwaFile file;
    FileEvents::Watch watch = -1;
    std::optional<PhaseProbeId> probe;  // none while rewritten, or without the probe now
    bool rewriting = false;
  };

  void follow_changes(Tracer& tracer);
  void look_at_path(Tracer& tracer, bool complete);
  void on_unprobed_exec(Tracer& tracer, const UnprobedExec& exec);
  // The probe on a new file at the path, or why not (its launches are not
  // seen: the caller warns, in its words).
  Expected<void> attach_new(Tracer& tracer, HaconiwaFile file);
  void rewritten(Tracer& tracer, Attached& attached, std::uint32_t mask);
  void attach_again(Tracer& tracer, Attached& attached);
  static void detach(Tracer& tracer, Attached& attached);
  Attached* find(const FileVersion& version);
  void say(const std::string& what) const;
  void warn(const std::string& what) const;

  std::string path_;
  std::string shown_;  // path_ as printed
  WatchedHaconiwaPath watched_;
  FileEvents events_;
  std::vector<FileEvents::Watch> directories_;
  std::vector<std::string> names_;  // the binary's names in them: as given, and its links followed
  std::vector<Attached> files_;
  BinaryWatch watch_;
  bool quiet_;
  std::ostream& diagnostics_;
  std::uint64_t replacements_ = 0;
  bool told_full_ = false;
  std::chrono::steady_clock::time_point next_check_;
};

}  // namespace hacoboot
