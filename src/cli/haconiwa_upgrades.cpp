#include "cli/haconiwa_upgrades.hpp"

#include <fmt/format.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <ostream>
#include <utility>

#include "util/errors.hpp"
#include "util/text.hpp"

namespace hacoboot {

HaconiwaUpgrades::HaconiwaUpgrades(std::string path, HaconiwaFile first, bool quiet, std::ostream& diagnostics)
    : path_(std::move(path)),
      shown_(printable(path_)),
      watch_(first.version()),
      quiet_(quiet),
      diagnostics_(diagnostics) {
  // The kernel side sees the exec of the file the path leads to, its
  // symbolic links followed: that file's directory and name.
  std::error_code error;
  const auto given = std::filesystem::absolute(path_);
  auto final = std::filesystem::canonical(path_, error);
  if (error) final = given;
  struct stat directory {};
  if (::stat(final.parent_path().c_str(), &directory) == 0) {
    watched_ = {.directory = kernel_file_id(directory.st_dev, directory.st_ino), .name = final.filename().string()};
  }
  // An upgrade may replace the link or what it leads to.
  directories_.push_back(events_.watch_directory(given.parent_path().string()));
  if (final.parent_path() != given.parent_path()) {
    directories_.push_back(events_.watch_directory(final.parent_path().string()));
  }
  names_ = {given.filename().string(), final.filename().string()};
  Attached attached{.file = std::move(first), .watch = -1, .probe = PhaseProbeId{0}, .rewriting = false};
  attached.watch = value_or_throw<RuntimeError>(events_.watch_file(attached.file.fd()));
  files_.push_back(std::move(attached));
}

std::optional<WatchedHaconiwaPath> HaconiwaUpgrades::watched_path() const {
  if (watched_.name.empty()) return std::nullopt;
  return watched_;
}

void HaconiwaUpgrades::started(Tracer& tracer) const {
  const auto& version = first().version();
  tracer.mark_probed(kernel_file_id(version.device, version.inode));
}

void HaconiwaUpgrades::check(Tracer& tracer, std::chrono::steady_clock::time_point now) {
  follow_changes(tracer);
  for (const auto& exec : tracer.take_unprobed_execs()) on_unprobed_exec(tracer, exec);
  if (now < next_check_) return;
  next_check_ = now + kCheckInterval;
  look_at_path(tracer, false);
  for (auto& attached : files_) {
    if (!attached.rewriting && attached.file.changed()) attach_again(tracer, attached);
  }
}

std::uint64_t HaconiwaUpgrades::files_attached() const {
  return static_cast<std::uint64_t>(
      std::count_if(files_.begin(), files_.end(), [](const Attached& attached) { return attached.probe.has_value(); }));
}

void HaconiwaUpgrades::follow_changes(Tracer& tracer) {
  bool look = false;
  for (const auto& change : events_.read()) {
    if (change.watch < 0) {  // changes were lost: the periodic check looks at everything next
      next_check_ = {};
      continue;
    }
    if (std::find(directories_.begin(), directories_.end(), change.watch) != directories_.end()) {
      look = look || std::find(names_.begin(), names_.end(), change.name) != names_.end();
      continue;
    }
    const auto attached =
        std::find_if(files_.begin(), files_.end(), [&](const Attached& file) { return file.watch == change.watch; });
    if (attached != files_.end()) rewritten(tracer, *attached, change.mask);
  }
  if (look) look_at_path(tracer, true);
}

// A file the probe is on, written in place: its sites are no longer where
// its notes said, and a breakpoint there would land in its new code.
void HaconiwaUpgrades::rewritten(Tracer& tracer, Attached& attached, std::uint32_t mask) {
  if ((mask & IN_MODIFY) != 0 && !attached.rewriting) {
    attached.rewriting = true;
    detach(tracer, attached);
    warn(fmt::format("{} (inode {}) is being written in place: its probe is detached until the writing ends", shown_,
                     attached.file.version().inode));
  }
  if ((mask & IN_CLOSE_WRITE) != 0 && attached.rewriting) attach_again(tracer, attached);
  // Its owner, mode or links changed (an upgrade renaming a new file over
  // it, too): the probe stays unless someone else may now write to it.
  if ((mask & IN_ATTRIB) != 0 && attached.probe) {
    if (const auto trusted = attached.file.still_trusted(); !trusted) {
      detach(tracer, attached);
      warn(fmt::format("{} (inode {}) is no longer trusted ({}): its probe is detached, its launches are not seen",
                       shown_, attached.file.version().inode, trusted.error()));
    }
  }
}

void HaconiwaUpgrades::detach(Tracer& tracer, Attached& attached) {
  if (!attached.probe) return;
  tracer.detach_phase_probe(*attached.probe);
  attached.probe.reset();
}

void HaconiwaUpgrades::attach_again(Tracer& tracer, Attached& attached) {
  const bool was_rewritten = std::exchange(attached.rewriting, false) || attached.file.changed();
  detach(tracer, attached);
  const auto inode = attached.file.version().inode;
  auto probe = [&]() -> Expected<PhaseProbeId> {
    if (auto read = attached.file.read_again(); !read) return Failure{read.error()};
    return tracer.attach_phase_probe_to(attached.file.attach_path(), path_, attached.file.phase_sites());
  }();
  if (!probe) {
    warn(fmt::format("{} (inode {}) changed: {}: its launches are not seen", shown_, inode,
                     printable(probe.error(), kUncut)));
    return;
  }
  attached.probe = *probe;
  if (was_rewritten) {
    say(fmt::format("{} (inode {}) was written in place: its probe is attached again, at its new sites", shown_,
                    inode));
  }
}

// A new file at the path: `complete` when a rename or a closed write said
// so, else it must be seen unchanged twice (BinaryWatch).
void HaconiwaUpgrades::look_at_path(Tracer& tracer, bool complete) {
  const auto now = file_version(path_);
  const auto offered = complete ? watch_.offer(now) : watch_.observe(now);
  if (!offered || find(*offered) != nullptr) return;
  ++replacements_;
  auto file = HaconiwaFile::open_path(path_);
  const auto attached = file ? attach_new(tracer, std::move(*file)) : Expected<void>(Failure{file.error()});
  if (!attached) {
    watch_.unusable(*offered);
    warn(fmt::format("{} is a new file (inode {}), {}: its launches are not seen", shown_, offered->inode,
                     printable(attached.error(), kUncut)));
  }
}

// The kernel side caught a new file's exec: whatever comes of it, the
// process goes on, and that file is not caught again.
void HaconiwaUpgrades::on_unprobed_exec(Tracer& tracer, const UnprobedExec& exec) {
  auto file = HaconiwaFile::open_process_exe(exec.pid);
  Expected<void> attached = file ? Expected<void>() : Expected<void>(Failure{file.error()});
  if (file && find(file->version()) == nullptr) {
    ++replacements_;
    attached = attach_new(tracer, std::move(*file));
  }
  if (!attached) {
    warn(fmt::format("{}: process {} runs a new file (inode {}) that {}: its launch is not seen", shown_, exec.pid,
                     exec.file.inode, printable(attached.error(), kUncut)));
  }
  if (exec.held) {
    ::kill(static_cast<pid_t>(exec.pid), SIGCONT);
    say(fmt::format("{}: process {} started a new file (inode {}) before its probe was attached: held until then",
                    shown_, exec.pid, exec.file.inode));
  }
  tracer.mark_probed(exec.file);
}

void HaconiwaUpgrades::release_holds(Tracer& tracer) {
  tracer.release_holds();
  for (const auto& exec : tracer.take_unprobed_execs()) {
    if (exec.held) ::kill(static_cast<pid_t>(exec.pid), SIGCONT);
  }
}

Expected<void> HaconiwaUpgrades::attach_new(Tracer& tracer, HaconiwaFile file) {
  if (files_.size() >= kMaxFiles) {
    if (!std::exchange(told_full_, true)) {
      warn(fmt::format("{}: the probe is in {} files already (restart the tool): new files' launches are not seen",
                       shown_, kMaxFiles));
    }
    watch_.unusable(file.version());
    return {};
  }
  const auto version = file.version();
  const auto probe = tracer.attach_phase_probe_to(file.attach_path(), path_, file.phase_sites());
  if (!probe) return Failure{probe.error()};
  tracer.mark_probed(kernel_file_id(version.device, version.inode));
  watch_.attached(version);
  const auto watch = events_.watch_file(file.fd());
  if (!watch) return Failure{watch.error()};
  files_.push_back({.file = std::move(file), .watch = *watch, .probe = *probe, .rewriting = false});
  say(
      fmt::format("{} is a new file (inode {}), as after an upgrade: the probe is attached to it too, and stays on the "
                  "old one while its processes run",
                  shown_, version.inode));
  return {};
}

HaconiwaUpgrades::Attached* HaconiwaUpgrades::find(const FileVersion& version) {
  const auto found = std::find_if(files_.begin(), files_.end(),
                                  [&](const Attached& attached) { return attached.file.version().same_file(version); });
  return found == files_.end() ? nullptr : &*found;
}

void HaconiwaUpgrades::say(const std::string& what) const {
  if (!quiet_) diagnostics_ << "hacoboot-sampler: " << what << '\n' << std::flush;
}

void HaconiwaUpgrades::warn(const std::string& what) const {
  diagnostics_ << "hacoboot-sampler: warning: " << what << '\n' << std::flush;
}

}  // namespace hacoboot
